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

fn summary() {
    let (a, b) = operands();
    let flops = 2.0 * (N * N * N) as f64;
    let secs = common::median_time(7, || drop(std::hint::black_box(a.matmul(&b)))).as_secs_f64();
    let threads = rayon::current_num_threads();
    let peak = common::peak::peak_fma_gflops(threads);
    let rate = flops / secs / 1e9;
    println!("\nW2 summary (2048^3 f32, {threads} threads)");
    common::report("machine peak (FMA loop)", flops / (peak * 1e9), &format!("{peak:.1} GFLOP/s"));
    common::report(
        "rjax matmul",
        secs,
        &format!("{rate:.1} GFLOP/s = {:.1}% of peak", 100.0 * rate / peak),
    );
    common::report_jax("w2", |_, jax| {
        let jax_rate = flops / jax / 1e9;
        format!("{jax_rate:.1} GFLOP/s; rjax time / JAX time = {:.2}", secs / jax)
    });
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
