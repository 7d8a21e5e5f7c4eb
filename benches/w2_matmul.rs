//! W2: a 2048x2048 f32 matrix product, against the machine's peak FMA rate (measured in the same
//! run by a register-blocked FMA loop) and JAX on the same machine.

mod common;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const N: usize = 2048;

fn operands() -> (Array, Array) {
    let a = jnp::ones([N, N]) * 0.5;
    let b = jnp::ones([N, N]) * 0.25;
    (a, b)
}

fn bench(c: &mut Criterion) {
    let (a, b) = operands();
    let mut group = c.benchmark_group("w2");
    group.sample_size(10);
    group.bench_function("matmul 2048x2048 f32", |bench| bench.iter(|| a.matmul(&b)));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 11;

fn summary() {
    let (a, b) = operands();
    let flops = 2.0 * (N * N * N) as f64;
    let threads = rayon::current_num_threads();
    let jax = common::Jax::start("w2");
    let peak = common::peak::FmaPeak::new(threads);
    // The peak as the time the product would take at it, so that ratios read alike.
    let samples = common::Rounds::default()
        .probe("peak", || flops / (peak.gflops(2) * 1e9))
        .time("rjax", 5, || drop(std::hint::black_box(a.matmul(&b))))
        .jax(jax.as_ref(), "jax_w2_matmul", 5)
        .run(ROUNDS);
    let gflops = |secs: f64| flops / secs / 1e9;
    let percent_of_peak = |name| samples.per_round("peak", name, |p, t| 100.0 * p / t).show(1.0, 1);
    println!("\nW2 summary (2048^3 f32, {threads} threads)");
    let at_peak = samples.median("peak");
    common::report("machine peak (FMA loop)", at_peak, &format!("{:.1} GFLOP/s", gflops(at_peak)));
    let secs = samples.median("rjax");
    let note = format!("{:.1} GFLOP/s; % of peak: {}", gflops(secs), percent_of_peak("rjax"));
    common::report("rjax matmul", secs, &note);
    if samples.has("jax_w2_matmul") {
        let jax_secs = samples.median("jax_w2_matmul");
        let note = format!(
            "{:.1} GFLOP/s; % of peak: {}; rjax time / JAX time = {}",
            gflops(jax_secs),
            percent_of_peak("jax_w2_matmul"),
            samples.ratio("rjax", "jax_w2_matmul")
        );
        common::report("jax_w2_matmul", jax_secs, &note);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
