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

fn summary() {
    let (params, x, y) = inputs();
    let (xs, ys) = (rows(&x), rows(&y));
    drop(per_example_grads(&params, &x, &y));
    drop(looped(&params, &xs, &ys));
    let vmapped = common::median_time(7, || drop(per_example_grads(&params, &x, &y))).as_secs_f64();
    let loop_secs = common::median_time(5, || drop(looped(&params, &xs, &ys))).as_secs_f64();
    let bytes = gradient_bytes();
    let bandwidth = common::copy_bandwidth_gbs(bytes);
    let floor = bytes as f64 / (bandwidth * 1e9);
    println!("\nW4 summary: per-example gradients, MLP [784, 512, 512, 10], batch 128");
    common::report(
        "rjax jit(vmap(grad))",
        vmapped,
        &format!(
            "{:.1}x faster than the loop; writing the {:.0} MB of gradients alone takes {:.1} ms \
             at {bandwidth:.1} GB/s (ratio {:.2})",
            loop_secs / vmapped,
            bytes as f64 / 1e6,
            floor * 1e3,
            vmapped / floor
        ),
    );
    common::report("rjax loop of 128 jit(grad)", loop_secs, "");
    common::report_jax("w4", |_, secs| format!("rjax / JAX = {:.2}", vmapped / secs));
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
