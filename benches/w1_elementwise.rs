//! W1: `x*x + x*2.0` on a 5000x5000 f32 array, op by op (three materialized passes) and
//! under `#[jit]` (one fused pass), against the machine's copy bandwidth and JAX on the same
//! machine.

mod common;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

fn slow_f(x: &Array) -> Array {
    x * x + x * 2.0
}

/// The same function compiled: traced once, then run from the cached plan.
#[jit]
fn fast_f(x: &Array) -> Array {
    x * x + x * 2.0
}

fn bench(c: &mut Criterion) {
    let x = jnp::ones([5000, 5000]);
    let mut group = c.benchmark_group("w1");
    group.sample_size(10);
    group.bench_function("x*x + x*2.0 op by op, 5000x5000 f32", |b| b.iter(|| slow_f(&x)));
    group.bench_function("x*x + x*2.0 jit, 5000x5000 f32", |b| b.iter(|| fast_f(&x)));
    group.finish();
}

fn summary() {
    let x = jnp::ones([5000, 5000]);
    let bytes = x.size() * 4;
    let rjax = common::median_time(7, || drop(std::hint::black_box(slow_f(&x)))).as_secs_f64();
    let jit = common::median_time(7, || drop(std::hint::black_box(fast_f(&x)))).as_secs_f64();
    let bandwidth = common::copy_bandwidth_gbs(bytes);
    // A fused kernel reads x once and writes y once: the limit for this workload.
    let limit = 2.0 * bytes as f64 / (bandwidth * 1e9);
    println!("\nW1 summary (5000x5000 f32, {} threads)", rayon::current_num_threads());
    common::report(
        "machine limit (read x + write y at copy speed)",
        limit,
        &format!("{bandwidth:.1} GB/s copy"),
    );
    common::report("rjax op by op", rjax, &format!("{:.2}x the limit", rjax / limit));
    common::report(
        "rjax jit (one fused pass)",
        jit,
        &format!("{:.2}x the limit; {:.1}x faster than op by op", jit / limit, rjax / jit),
    );
    common::report_jax("w1", |name, secs| {
        let ours = if name.ends_with("jit") { jit } else { rjax };
        format!("rjax / JAX = {:.2}", ours / secs)
    });
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
