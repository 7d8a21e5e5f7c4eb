//! W3: one `grad(loss)` step of the MLP [784, 512, 512, 10] on a batch of 128, and W5: the
//! hessian of `sum(tanh(x) * x**2)` for a 256-vector. Both run under `#[jit]` (fused), printed
//! as achieved GFLOP/s and beside JAX CPU's `jit(grad(loss))` / `jit(hessian(f))` measured in
//! the same run.

mod common;

use std::hint::black_box;

use common::mlp::{inputs as w3_inputs, loss, BATCH, SIZES};
use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

#[jit]
#[grad]
fn grad_step(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

#[jit]
#[hessian]
fn hessian_w5(x: &Array) -> Array {
    (x.tanh() * x.square()).sum()
}

/// Floating-point operations of the step's products: each layer's forward product, and in
/// the backward pass its weights' gradient and (for all but the first layer, whose input is
/// not differentiated) its input's gradient, each as many as the forward product.
fn w3_flops() -> f64 {
    let product = |l: usize| 2 * BATCH * SIZES[l] * SIZES[l + 1];
    let flops: usize = (0..3).map(|l| if l == 0 { 2 * product(l) } else { 3 * product(l) }).sum();
    flops as f64
}

/// Bytes the step's equations would write if each materialized (op by op).
fn w3_allocated_bytes(params: &[(Array, Array)], x: &Array, y: &Array) -> usize {
    let program = grad_step::jaxpr(params, x, y).simplified;
    program
        .equations
        .iter()
        .flat_map(|e| e.outputs.iter())
        .map(|v| {
            let aval = program.aval(*v);
            aval.shape.iter().product::<usize>() * aval.dtype.size_of()
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    let (params, x, y) = w3_inputs();
    let mut group = c.benchmark_group("autodiff");
    group.sample_size(10);
    group.bench_function("w3 jit(grad(mlp loss)) step", |b| {
        b.iter(|| drop(black_box(grad_step(&params, &x, &y))))
    });
    let v = jnp::linspace(-1.0, 1.0, 256);
    group.bench_function("w5 jit(hessian) 256", |b| b.iter(|| drop(black_box(hessian_w5(&v)))));
    group.finish();
}

/// Calls per median, and rounds of the interleaved summary (see `common::Rounds`): these
/// millisecond steps swing from call to call on a shared machine.
const RUNS: usize = 21;
const ROUNDS: usize = 15;

fn summary() {
    let (params, x, y) = w3_inputs();
    let v = jnp::linspace(-1.0, 1.0, 256);
    let jax = common::Jax::start("w3w5");
    let samples = common::Rounds::default()
        .time("w3", RUNS, || drop(grad_step(&params, &x, &y)))
        .jax(jax.as_ref(), "jax_w3_jit_grad_step", RUNS)
        .time("w5", RUNS, || drop(hessian_w5(&v)))
        .jax(jax.as_ref(), "jax_w5_jit_hessian_256", RUNS)
        .run(ROUNDS);
    let w3 = samples.median("w3");
    let gflops = w3_flops() / w3 / 1e9;
    let mib = w3_allocated_bytes(&params, &x, &y) as f64 / (1 << 20) as f64;
    println!("\nW3 summary: MLP [784, 512, 512, 10], batch 128, one jit(grad(loss)) step");
    common::report("rjax", w3, &format!("{gflops:.1} GFLOP/s; {mib:.1} MiB op by op"));
    common::report_against_jax(&samples, "jax_w3_jit_grad_step", "w3");
    println!("W5 summary: hessian of sum(tanh(x) * x**2), x of 256");
    common::report("rjax", samples.median("w5"), "");
    common::report_against_jax(&samples, "jax_w5_jit_hessian_256", "w5");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
