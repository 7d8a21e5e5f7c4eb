//! W1: `x*x + x*2.0` on a 5000x5000 f32 array, op by op (three materialized passes) and
//! under `#[jit]` (one fused pass), against the machine's copy bandwidth and JAX on the same
//! machine. Beside it, `max(x + b, 0)` with a bias `b` of 5000 added to every row (the
//! epilogue of a dense layer), which reads and writes as much, and two of transcendental
//! functions: the tanh form of GELU (as much memory traffic, about 30 vector operations per
//! element) and a softmax over rows (three reads and two writes of the array).

mod common;

use std::hint::black_box;

use common::w1::{fast_f, slow_f};
use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

/// A bias added to every row, then a ReLU.
#[jit]
fn bias_relu(x: &Array, b: &Array) -> Array {
    jnp::maximum(&(x + b), 0.0)
}

/// GELU in its tanh form, as `jax.nn.gelu(x, approximate=True)` computes it.
#[jit]
fn gelu(x: &Array) -> Array {
    let cubic = x + &(x * x * x) * 0.044715;
    let cdf = (jnp::tanh(&(cubic * (2.0 / std::f64::consts::PI).sqrt())) + 1.0) * 0.5;
    x * &cdf
}

#[jit]
fn softmax_rows(x: &Array) -> Array {
    jnp::softmax(x, -1)
}

/// The bias: 5000 values, one per column.
fn bias() -> Array {
    jnp::arange(5000.0) * 1e-4 - 0.25
}

fn bench(c: &mut Criterion) {
    let x = jnp::ones([5000, 5000]);
    let mut group = c.benchmark_group("w1");
    group.sample_size(10);
    group.bench_function("x*x + x*2.0 op by op, 5000x5000 f32", |b| b.iter(|| slow_f(&x)));
    group.bench_function("x*x + x*2.0 jit, 5000x5000 f32", |b| b.iter(|| fast_f(&x)));
    let bias = bias();
    group.bench_function("max(x + b, 0) jit, 5000x5000 f32", |b| b.iter(|| bias_relu(&x, &bias)));
    group.bench_function("gelu (tanh) jit, 5000x5000 f32", |b| b.iter(|| gelu(&x)));
    group.bench_function("softmax rows jit, 5000x5000 f32", |b| b.iter(|| softmax_rows(&x)));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let x = jnp::ones([5000, 5000]);
    let bias = bias();
    let bytes = x.size() * 4;
    let jax = common::Jax::start("w1");
    let mut copy = common::CopyRate::new(bytes);
    // A fused kernel reads x once and writes y once: the limit for this workload.
    let samples = common::Rounds::default()
        .probe("limit", || 2.0 * bytes as f64 / (copy.gbs() * 1e9))
        .time("op by op", 7, || drop(black_box(slow_f(&x))))
        .time("jit", 7, || drop(black_box(fast_f(&x))))
        .jax(jax.as_ref(), "jax_w1_op_by_op", 7)
        .jax(jax.as_ref(), "jax_w1_jit", 7)
        .time("bias", 7, || drop(black_box(bias_relu(&x, &bias))))
        .jax(jax.as_ref(), "jax_w1_bias_relu", 7)
        .time("gelu", 7, || drop(black_box(gelu(&x))))
        .jax(jax.as_ref(), "jax_w1_gelu", 7)
        .time("softmax", 7, || drop(black_box(softmax_rows(&x))))
        .jax(jax.as_ref(), "jax_w1_softmax", 7)
        .run(ROUNDS);
    let limit = samples.median("limit");
    println!("\nW1 summary (5000x5000 f32, {} threads)", rayon::current_num_threads());
    let bandwidth = 2.0 * bytes as f64 / limit / 1e9;
    let copy_note = format!("{bandwidth:.1} GB/s copy");
    common::report("machine limit (read x + write y at copy speed)", limit, &copy_note);
    let to_limit = |name| samples.ratio(name, "limit");
    let op_by_op = samples.median("op by op");
    common::report("rjax op by op", op_by_op, &format!("{} x the limit", to_limit("op by op")));
    let jit_note = format!(
        "{} x the limit; {} x faster than op by op",
        to_limit("jit"),
        samples.ratio("op by op", "jit")
    );
    common::report("rjax jit (one fused pass)", samples.median("jit"), &jit_note);
    common::report_against_jax(&samples, "jax_w1_op_by_op", "op by op");
    common::report_against_jax(&samples, "jax_w1_jit", "jit");
    let bias_note = format!("{} x the limit", to_limit("bias"));
    common::report("rjax jit max(x + b, 0), b per row", samples.median("bias"), &bias_note);
    common::report_against_jax(&samples, "jax_w1_bias_relu", "bias");
    let gelu_note = format!("{} x the limit", to_limit("gelu"));
    common::report("rjax jit gelu (tanh form)", samples.median("gelu"), &gelu_note);
    common::report_against_jax(&samples, "jax_w1_gelu", "gelu");
    // Softmax reads x twice (the maximum, then exp and its sum) and exp(x - max) once, and
    // writes exp(x - max) and the result: 2.5 times the traffic of the limit.
    let softmax_note = format!("{} x the limit", to_limit("softmax"));
    common::report("rjax jit softmax over rows", samples.median("softmax"), &softmax_note);
    common::report_against_jax(&samples, "jax_w1_softmax", "softmax");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
