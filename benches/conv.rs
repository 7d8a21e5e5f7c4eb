//! A 2-D convolution, batch 32, 3 -> 32 channels, 32x32 images, 3x3 kernel, SAME padding, f32
//! (NCHW / OIHW): the forward pass, and forward + backward (`value_and_grad` of the sum of the
//! convolution with respect to the input and the kernel), both under `#[jit]`, against the
//! machine's peak FMA rate (measured in the same run) and JAX CPU on the same machine.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const BATCH: usize = 32;
const IN: usize = 3;
const OUT: usize = 32;
const SIDE: usize = 32;
const WINDOW: usize = 3;

#[jit]
fn forward(x: &Array, k: &Array) -> Array {
    lax::conv(x, k, [1, 1], "SAME")
}

#[jit]
#[value_and_grad(argnums = (0, 1))]
fn forward_backward(x: &Array, k: &Array) -> (Array, (Array, Array)) {
    lax::conv(x, k, [1, 1], "SAME").sum()
}

fn operands() -> (Array, Array) {
    let keys = random::split(&random::key(0), 2);
    let x = random::normal(&keys.get(0), [BATCH, IN, SIDE, SIDE]);
    let k = random::normal(&keys.get(1), [OUT, IN, WINDOW, WINDOW]) * 0.1;
    (x, k)
}

/// Floating-point operations of the forward convolution (a multiply and an add per tap).
fn forward_flops() -> f64 {
    2.0 * (BATCH * OUT * SIDE * SIDE * IN * WINDOW * WINDOW) as f64
}

fn bench(c: &mut Criterion) {
    let (x, k) = operands();
    let mut group = c.benchmark_group("conv");
    group.sample_size(20);
    group.bench_function("jit conv 32x3x32x32 * 32x3x3x3 SAME", |b| {
        b.iter(|| drop(black_box(forward(&x, &k))))
    });
    group.bench_function("jit value_and_grad(sum(conv)) wrt input and kernel", |b| {
        b.iter(|| drop(black_box(forward_backward(&x, &k))))
    });
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let (x, k) = operands();
    let threads = rayon::current_num_threads();
    let jax = common::Jax::start("conv");
    let peak = common::peak::FmaPeak::new(threads);
    let samples = common::Rounds::default()
        .probe("peak", || peak.gflops(2))
        .time("forward", 21, || drop(forward(&x, &k)))
        .time("both", 21, || drop(forward_backward(&x, &k)))
        .jax(jax.as_ref(), "jax_conv_forward", 21)
        .jax(jax.as_ref(), "jax_conv_forward_backward", 21)
        .run(ROUNDS);
    let peak = samples.median("peak");
    // The backward pass is two convolutions of the forward's size (input and kernel
    // gradients).
    let flops = [forward_flops(), 3.0 * forward_flops()];
    let floors = flops.map(|f| f / (peak * 1e9));
    println!("\nconv summary ({BATCH}x{IN}x{SIDE}x{SIDE} * {OUT}x{IN}x{WINDOW}x{WINDOW}, SAME, f32, {threads} threads)");
    common::report(
        "machine peak (FMA loop)",
        floors[0],
        &format!("{peak:.1} GFLOP/s; forward at peak"),
    );
    common::report("forward + backward at peak", floors[1], "");
    for (name, ours, flops) in [
        ("rjax jit forward", "forward", flops[0]),
        ("rjax jit forward + backward", "both", flops[1]),
    ] {
        let secs = samples.median(ours);
        let percent = samples.per_round(ours, "peak", |t, p| 100.0 * flops / t / 1e9 / p);
        let note =
            format!("{:.1} GFLOP/s; % of peak: {}", flops / secs / 1e9, percent.show(1.0, 1));
        common::report(name, secs, &note);
    }
    common::report_against_jax(&samples, "jax_conv_forward", "forward");
    common::report_against_jax(&samples, "jax_conv_forward_backward", "both");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
