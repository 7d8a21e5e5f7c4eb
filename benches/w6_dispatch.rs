//! W6: the per-call cost of a cached `#[jit]` scalar function `g(x) = x*x + 1.0`: the
//! signature hash, the cache lookup and the plan (one fused group of two ops). Printed beside
//! the same computation in plain Rust and JAX's jitted dispatch on the same machine.

mod common;

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

#[jit]
fn g(x: f32) -> f32 {
    x * x + 1.0
}

#[jit]
fn g_array(x: &Array) -> Array {
    x * x + 1.0
}

fn plain(x: f32) -> f32 {
    x * x + 1.0
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("w6");
    group.bench_function("jit g(x: f32) -> f32, cached", |b| b.iter(|| g(black_box(3.0))));
    let x = Array::from(3.0f32);
    group.bench_function("jit g(&Array) -> Array, cached", |b| b.iter(|| g_array(black_box(&x))));
    group.bench_function("plain Rust x*x + 1.0", |b| b.iter(|| plain(black_box(3.0))));
    group.finish();
}

/// Seconds per call over many calls (the best of three loops).
fn per_call(mut f: impl FnMut()) -> f64 {
    let calls = 100_000;
    (0..3)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 7;

fn summary() {
    let x = Array::from(3.0f32);
    let jax = common::Jax::start("w6");
    let samples = common::Rounds::default()
        .probe("scalar", || {
            per_call(|| {
                black_box(g(black_box(3.0)));
            })
        })
        .probe("array", || per_call(|| drop(black_box(g_array(black_box(&x))))))
        .probe("rust", || {
            per_call(|| {
                black_box(plain(black_box(3.0)));
            })
        })
        .jax(jax.as_ref(), "jax_w6_jit_scalar_per_call", 3)
        .run(ROUNDS);
    println!("\nW6 summary: cached jitted x*x + 1.0, per call (target <= 1 us)");
    let us = |name| format!("{} us", samples.spread(name).show(1e6, 3));
    common::report("rjax jit g(f32) -> f32", samples.median("scalar"), &us("scalar"));
    common::report("rjax jit g(&Array) -> Array", samples.median("array"), &us("array"));
    common::report("plain Rust", samples.median("rust"), &us("rust"));
    common::report_against_jax(&samples, "jax_w6_jit_scalar_per_call", "scalar");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
