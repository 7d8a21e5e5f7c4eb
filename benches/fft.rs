//! Fourier transforms under `#[jit]`: the FFT of 2^20 complex64 points, and a batch of 1024
//! real FFTs of 1024 points each (`rfft` of a 1024x1024 f32 array along its last axis),
//! against JAX CPU on the same machine.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const POINTS: usize = 1 << 20;
const ROWS: usize = 1024;
const ROW: usize = 1024;

#[jit]
fn fft(z: &Array) -> Array {
    jnp::fft::fft(z, None, -1, None)
}

#[jit]
fn rfft(x: &Array) -> Array {
    jnp::fft::rfft(x, None, -1, None)
}

/// The signals JAX builds alike (`benches/jax/bench.py fft`): standard normal values, complex
/// with independent real and imaginary parts.
fn operands() -> (Array, Array) {
    let keys = random::split(&random::key(0), 3);
    let re = random::normal(&keys.get(0), [POINTS]);
    let im = random::normal(&keys.get(1), [POINTS]);
    (jnp::complex(&re, &im), random::normal(&keys.get(2), [ROWS, ROW]))
}

fn bench(c: &mut Criterion) {
    let (z, x) = operands();
    let mut group = c.benchmark_group("fft");
    group.sample_size(20);
    group.bench_function("jit fft 2^20 complex64", |b| b.iter(|| black_box(fft(&z))));
    group.bench_function("jit rfft 1024 rows of 1024 f32", |b| b.iter(|| black_box(rfft(&x))));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let (z, x) = operands();
    let threads = rayon::current_num_threads();
    let jax = common::Jax::start("fft");
    let samples = common::Rounds::default()
        .time("fft", 11, || drop(black_box(fft(&z))))
        .jax(jax.as_ref(), "jax_fft_1m", 11)
        .time("rfft", 21, || drop(black_box(rfft(&x))))
        .jax(jax.as_ref(), "jax_rfft_batch", 21)
        .run(ROUNDS);
    println!("\nfft summary (2^20 complex64; {ROWS} x rfft of {ROW} f32; {threads} threads)");
    common::report("rjax jit fft 2^20", samples.median("fft"), "");
    common::report_against_jax(&samples, "jax_fft_1m", "fft");
    common::report("rjax jit rfft 1024 x 1024", samples.median("rfft"), "");
    common::report_against_jax(&samples, "jax_rfft_batch", "rfft");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
