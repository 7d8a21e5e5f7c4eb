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

/// Seconds per call over many calls (the best of several rounds).
fn per_call(mut f: impl FnMut()) -> f64 {
    let calls = 200_000;
    (0..5)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..calls {
                f();
            }
            t.elapsed().as_secs_f64() / calls as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn summary() {
    let x = Array::from(3.0f32);
    let scalar = per_call(|| {
        black_box(g(black_box(3.0)));
    });
    let array = per_call(|| drop(black_box(g_array(black_box(&x)))));
    let rust = per_call(|| {
        black_box(plain(black_box(3.0)));
    });
    println!("\nW6 summary: cached jitted x*x + 1.0, per call (target <= 1 us)");
    let us = |s: f64| format!("{:.3} us", s * 1e6);
    common::report("rjax jit g(f32) -> f32", scalar, &us(scalar));
    common::report("rjax jit g(&Array) -> Array", array, &us(array));
    common::report("plain Rust", rust, &us(rust));
    common::report_jax("w6", |_, secs| {
        format!("{} per call; rjax f32 / this = {:.3}", us(secs), scalar / secs)
    });
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
