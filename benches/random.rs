//! `random::normal` and `random::uniform` of 10 million f32 values: throughput in Melem/s, with
//! JAX's on the same machine in the same run when it is installed.

mod common;

use criterion::{criterion_group, Criterion, Throughput};
use rjax::prelude::*;

const N: usize = 10_000_000;

fn bench(c: &mut Criterion) {
    let key = random::key(0);
    let mut group = c.benchmark_group("random");
    group.sample_size(10);
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("normal(key, [10_000_000])", |b| b.iter(|| random::normal(&key, [N])));
    group.bench_function("uniform(key, [10_000_000])", |b| b.iter(|| random::uniform(&key, [N])));
    group.finish();
}

/// Melem/s for `seconds` per 10-million-element call.
fn melem(seconds: f64) -> f64 {
    N as f64 / seconds / 1e6
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 7;

fn summary() {
    let key = random::key(0);
    let jax = common::Jax::start("random");
    let samples = common::Rounds::default()
        .time("normal", 7, || drop(std::hint::black_box(random::normal(&key, [N]))))
        .time("uniform", 7, || drop(std::hint::black_box(random::uniform(&key, [N]))))
        .jax(jax.as_ref(), "jax_random_normal_10M", 7)
        .jax(jax.as_ref(), "jax_random_uniform_10M", 7)
        .run(ROUNDS);
    println!("\nrandom summary (10M f32 values, {} threads)", rayon::current_num_threads());
    for (name, ours) in [("jax_random_normal_10M", "normal"), ("jax_random_uniform_10M", "uniform")]
    {
        let secs = samples.median(ours);
        common::report(&format!("rjax {ours}"), secs, &format!("{:.0} Melem/s", melem(secs)));
        common::report_against_jax(&samples, name, ours);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
