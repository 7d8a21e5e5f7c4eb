//! A 1000-step `lax::scan` of a small tanh RNN cell (batch 16, input 32, hidden 64): the
//! loss (mean squared hidden state) alone and with its gradient w.r.t. the cell's
//! parameters, both under `#[jit]`, printed beside JAX CPU's `jit(value_and_grad)` of the
//! same scan measured in the same run.
//!
//! `cargo bench --bench scan_rnn`

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const STEPS: usize = 1000;
const BATCH: usize = 16;
const INPUT: usize = 32;
const HIDDEN: usize = 64;

/// `(wh [HIDDEN, HIDDEN], wx [INPUT, HIDDEN], b [HIDDEN])`.
type Cell = (Array, Array, Array);

#[traceable]
fn rnn_loss(cell: &Cell, h0: &Array, xs: &Array) -> Array {
    let (wh, wx, b) = cell;
    let step = |h: Array, x: Array| {
        let h = (h.dot(wh) + x.dot(wx) + b).tanh();
        (h.clone(), h)
    };
    let (_, hs) = lax::scan(step, h0.clone(), xs.clone());
    hs.square().mean()
}

#[jit]
fn rnn_value(cell: &Cell, h0: &Array, xs: &Array) -> Array {
    rnn_loss(cell, h0, xs)
}

#[jit]
#[value_and_grad]
fn rnn_value_and_grad(cell: &Cell, h0: &Array, xs: &Array) -> (Array, Cell) {
    rnn_loss(cell, h0, xs)
}

/// The inputs JAX builds too (`benches/jax/bench.py scan`): smooth deterministic values.
fn inputs() -> (Cell, Array, Array) {
    let wave = |n: usize, scale: f64| jnp::sin(&(jnp::arange(n as f64) * 0.37)) * scale;
    let wh = wave(HIDDEN * HIDDEN, 0.1).reshape([HIDDEN, HIDDEN]);
    let wx = wave(INPUT * HIDDEN, 0.2).reshape([INPUT, HIDDEN]);
    let b = jnp::zeros([HIDDEN]);
    let h0 = jnp::zeros([BATCH, HIDDEN]);
    let xs = wave(STEPS * BATCH * INPUT, 1.0).reshape([STEPS, BATCH, INPUT]);
    ((wh, wx, b), h0, xs)
}

fn bench(c: &mut Criterion) {
    let (cell, h0, xs) = inputs();
    let mut group = c.benchmark_group("scan_rnn");
    group.sample_size(10);
    group.bench_function("jit(scan) 1000 steps", |b| {
        b.iter(|| drop(black_box(rnn_value(&cell, &h0, &xs))))
    });
    group.bench_function("jit(value_and_grad(scan)) 1000 steps", |b| {
        b.iter(|| drop(black_box(rnn_value_and_grad(&cell, &h0, &xs))))
    });
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let (cell, h0, xs) = inputs();
    let jax = common::Jax::start("scan");
    let samples = common::Rounds::default()
        .time("forward", 7, || drop(rnn_value(&cell, &h0, &xs)))
        .jax(jax.as_ref(), "jax_scan_rnn_value", 7)
        .time("both", 7, || drop(rnn_value_and_grad(&cell, &h0, &xs)))
        .jax(jax.as_ref(), "jax_scan_rnn_value_and_grad", 7)
        .run(ROUNDS);
    let per_step = |name| {
        let secs = samples.median(name);
        (secs, format!("{:.1} us per step", secs / STEPS as f64 * 1e6))
    };
    println!("\nscan summary: {STEPS} steps of tanh(h @ wh + x @ wx + b), batch {BATCH}, {INPUT} -> {HIDDEN}");
    let (forward, note) = per_step("forward");
    common::report("rjax jit(scan)", forward, &note);
    let (both, note) = per_step("both");
    common::report("rjax jit(value_and_grad(scan))", both, &note);
    common::report_against_jax(&samples, "jax_scan_rnn_value", "forward");
    common::report_against_jax(&samples, "jax_scan_rnn_value_and_grad", "both");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
