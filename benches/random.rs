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

fn summary() {
    let key = random::key(0);
    let time = |f: &dyn Fn() -> Array| {
        common::median_time(7, || drop(std::hint::black_box(f()))).as_secs_f64()
    };
    let normal = time(&|| random::normal(&key, [N]));
    let uniform = time(&|| random::uniform(&key, [N]));
    println!("\nrandom summary (10M f32 values, {} threads)", rayon::current_num_threads());
    common::report("rjax normal", normal, &format!("{:.0} Melem/s", melem(normal)));
    common::report("rjax uniform", uniform, &format!("{:.0} Melem/s", melem(uniform)));
    common::report_jax("random", |name, secs| {
        let ours = if name.contains("normal") { normal } else { uniform };
        format!("{:.0} Melem/s; rjax / this = {:.2}", melem(secs), ours / secs)
    });
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
