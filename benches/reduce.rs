//! Fused reductions on 5000x5000 f32: a loss that reduces in the same pass as its elementwise
//! work (`sum((p - t)**2)`, reading two arrays), row sums of squares, and a plain `sum`, against
//! the time to read the inputs at the machine's copy rate and JAX on the same machine.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const SHAPE: [usize; 2] = [5000, 5000];

#[jit]
fn squared_error(p: &Array, t: &Array) -> Array {
    let d = p - t;
    jnp::sum(&(&d * &d))
}

#[jit]
fn row_sums_of_squares(x: &Array) -> Array {
    jnp::sum_axes(&(x * x), 1, false)
}

#[jit]
fn total(x: &Array) -> Array {
    jnp::sum(x)
}

/// The inputs JAX builds too (`benches/jax/bench.py reduce`).
fn inputs() -> (Array, Array) {
    (jnp::ones(SHAPE) * 0.5, jnp::ones(SHAPE) * 0.25)
}

fn bench(c: &mut Criterion) {
    let (p, t) = inputs();
    let mut group = c.benchmark_group("reduce");
    group.sample_size(10);
    group
        .bench_function("sum((p - t)**2) jit, 5000x5000 f32", |b| b.iter(|| squared_error(&p, &t)));
    group.bench_function("sum(x*x, axis=1) jit, 5000x5000 f32", |b| {
        b.iter(|| row_sums_of_squares(&p))
    });
    group.bench_function("sum(x) jit, 5000x5000 f32", |b| b.iter(|| total(&p)));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let (p, t) = inputs();
    let bytes = p.size() * 4;
    let jax = common::Jax::start("reduce");
    let mut copy = common::CopyRate::new(bytes);
    // Reading one array at the copy rate (which counts bytes read and written).
    let samples = common::Rounds::default()
        .probe("read", || bytes as f64 / (copy.gbs() * 1e9))
        .time("loss", 7, || drop(black_box(squared_error(&p, &t))))
        .time("rows", 7, || drop(black_box(row_sums_of_squares(&p))))
        .time("sum", 7, || drop(black_box(total(&p))))
        .jax(jax.as_ref(), "jax_reduce_loss", 7)
        .jax(jax.as_ref(), "jax_reduce_rows", 7)
        .jax(jax.as_ref(), "jax_reduce_sum", 7)
        .run(ROUNDS);
    println!("\nreduce summary (5000x5000 f32, {} threads)", rayon::current_num_threads());
    let read = samples.median("read");
    let rate = bytes as f64 / read / 1e9;
    common::report("reading one input at the copy rate", read, &format!("{rate:.1} GB/s"));
    let cases = [
        ("loss", "sum((p - t)**2), reads two inputs", 2.0, "jax_reduce_loss"),
        ("rows", "sum(x*x, axis=1)", 1.0, "jax_reduce_rows"),
        ("sum", "sum(x)", 1.0, "jax_reduce_sum"),
    ];
    for (name, what, inputs, jax_name) in cases {
        let to_read = samples.per_round(name, "read", |x, r| x / (inputs * r));
        let note = format!("{to_read} x the read time");
        common::report(&format!("rjax {what}"), samples.median(name), &note);
        common::report_against_jax(&samples, jax_name, name);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
