//! W7: the seed's pmap example on 8 virtual CPU devices: per-device random normal matrices
//! (500 x 600), `x @ x.T` on each device, and each device's mean, next to the same in JAX
//! with 8 host devices.
//!
//! `cargo bench --bench w7_pmap`

mod common;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;
use rjax::random::Key;

const ROWS: usize = 500;
const COLS: usize = 600;

#[pmap]
fn draw(key: &Key) -> Array {
    random::normal(key, [ROWS, COLS])
}

#[pmap]
fn gram(x: &Array) -> Array {
    x.dot(&x.t())
}

#[pmap]
fn mean(x: &Array) -> Array {
    x.mean()
}

fn w7(keys: &Key) -> Array {
    mean(&gram(&draw(keys)))
}

fn keys() -> Key {
    random::split(&random::key(0), 8)
}

fn bench(c: &mut Criterion) {
    rjax::device::set_cpu_device_count(8).expect("W7 runs on 8 virtual CPU devices");
    let keys = keys();
    let mut group = c.benchmark_group("w7");
    group.sample_size(10);
    group.bench_function("pmap normal, x @ x.T, mean on 8 devices", |b| b.iter(|| w7(&keys)));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let keys = keys();
    let jax = common::Jax::start("w7");
    let samples = common::Rounds::default()
        .time("rjax", 7, || drop(w7(&keys)))
        .jax(jax.as_ref(), "jax_w7_pmap", 7)
        .run(ROUNDS);
    let secs = samples.median("rjax");
    let flops = 8.0 * 2.0 * (ROWS * ROWS * COLS) as f64;
    println!("\nW7 summary: 8 devices, normal({ROWS}x{COLS}) -> x @ x.T -> mean");
    let note = format!("{:.1} GFLOP/s in the products", flops / secs / 1e9);
    common::report("rjax pmap x3", secs, &note);
    common::report_against_jax(&samples, "jax_w7_pmap", "rjax");
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
