//! W4: per-example gradients of the MLP [784, 512, 512, 10] for a batch of 128,
//! `jit(vmap(grad(loss)))`, next to a Rust loop of 128 single-example `jit(grad(loss))` calls
//! (what vmap replaces), the machine's copy bandwidth (the result alone is 343 MB of
//! gradients), and JAX CPU's `jit(vmap(grad(loss)))` measured in the same run.

mod common;

use std::hint::black_box;

use common::mlp::{inputs, loss, BATCH, SIZES};
use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

#[jit]
#[vmap(in_axes = (None, 0, 0))]
#[grad]
fn per_example_grads(params: &[(Array, Array)], x: &Array, y: &Array) -> Vec<(Array, Array)> {
    loss(params, x, y)
}

#[jit]
#[grad]
fn one_example_grad(params: &[(Array, Array)], x: &Array, y: &Array) -> Vec<(Array, Array)> {
    loss(params, x, y)
}

fn rows(a: &Array) -> Vec<Array> {
    (0..a.shape()[0]).map(|i| a.slice(s![i])).collect()
}

fn looped(params: &[(Array, Array)], xs: &[Array], ys: &[Array]) -> Vec<Vec<(Array, Array)>> {
    xs.iter().zip(ys).map(|(x, y)| one_example_grad(params, x, y)).collect()
}

/// Bytes of the per-example gradients the step returns.
fn gradient_bytes() -> usize {
    (0..3).map(|l| BATCH * (SIZES[l] * SIZES[l + 1] + SIZES[l + 1]) * 4).sum()
}

fn bench(c: &mut Criterion) {
    let (params, x, y) = inputs();
    let (xs, ys) = (rows(&x), rows(&y));
    let mut group = c.benchmark_group("w4");
    group.sample_size(10);
    group.bench_function("jit(vmap(grad(mlp loss))) batch 128", |b| {
        b.iter(|| drop(black_box(per_example_grads(&params, &x, &y))))
    });
    group.bench_function("loop of 128 jit(grad(mlp loss))", |b| {
        b.iter(|| drop(black_box(looped(&params, &xs, &ys))))
    });
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 7;

fn summary() {
    let (params, x, y) = inputs();
    let (xs, ys) = (rows(&x), rows(&y));
    let bytes = gradient_bytes();
    let jax = common::Jax::start("w4");
    let mut copy = common::CopyRate::new(bytes);
    let samples = common::Rounds::default()
        .time("vmap", 7, || drop(per_example_grads(&params, &x, &y)))
        .time("loop", 5, || drop(looped(&params, &xs, &ys)))
        .probe("floor", || bytes as f64 / (copy.gbs() * 1e9))
        .jax(jax.as_ref(), "jax_w4_jit_vmap_grad", 5)
        .run(ROUNDS);
    let vmapped = samples.median("vmap");
    let floor = samples.median("floor");
    println!("\nW4 summary: per-example gradients, MLP [784, 512, 512, 10], batch 128");
    common::report(
        "rjax jit(vmap(grad))",
        vmapped,
        &format!(
            "{} x faster than the loop; writing the {:.0} MB of gradients alone takes {:.1} ms \
             at {:.1} GB/s (ratio {})",
            samples.ratio("loop", "vmap"),
            bytes as f64 / 1e6,
            floor * 1e3,
            bytes as f64 / floor / 1e9,
            samples.ratio("vmap", "floor")
        ),
    );
    common::report("rjax loop of 128 jit(grad)", samples.median("loop"), "");
    common::report_against_jax(&samples, "jax_w4_jit_vmap_grad", "vmap");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
