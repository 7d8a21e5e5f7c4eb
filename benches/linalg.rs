//! Dense factorizations of 512x512 f32 matrices under `#[jit]`: `cholesky` of a symmetric
//! positive-definite matrix, `solve` against one right-hand side, `eigh` of a symmetric matrix
//! and the `svd` (with `U` and `V^T`) of a square one, against JAX CPU on the same machine
//! (which calls LAPACK).

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use rjax::prelude::*;

const N: usize = 512;

#[jit]
fn cholesky(a: &Array) -> Array {
    jnp::linalg::cholesky(a)
}

#[jit]
fn solve(a: &Array, b: &Array) -> Array {
    jnp::linalg::solve(a, b)
}

#[jit]
fn eigh(a: &Array) -> (Array, Array) {
    jnp::linalg::eigh(a)
}

#[jit]
fn svd(a: &Array) -> (Array, Array, Array) {
    jnp::linalg::svd(a, true)
}

/// The matrices JAX builds alike (`benches/jax/bench.py linalg`): a standard normal `A`,
/// `A A^T / n + I` (positive definite), `(A + A^T) / 2` (symmetric) and a vector of ones.
struct Operands {
    a: Array,
    spd: Array,
    sym: Array,
    b: Array,
}

fn operands() -> Operands {
    let a = random::normal(&random::key(0), [N, N]);
    let spd = a.matmul(&a.transpose(None)) / N as f32 + jnp::eye(N);
    let sym = (&a + &a.transpose(None)) * 0.5;
    Operands { a, spd, sym, b: jnp::ones([N]) }
}

fn bench(c: &mut Criterion) {
    let x = operands();
    let mut group = c.benchmark_group("linalg");
    group.sample_size(10);
    group.bench_function("jit cholesky 512x512 f32", |b| b.iter(|| black_box(cholesky(&x.spd))));
    group.bench_function("jit solve 512x512 f32, one vector", |b| {
        b.iter(|| black_box(solve(&x.a, &x.b)))
    });
    group.bench_function("jit eigh 512x512 f32", |b| b.iter(|| black_box(eigh(&x.sym))));
    group.bench_function("jit svd 512x512 f32", |b| b.iter(|| black_box(svd(&x.a))));
    group.finish();
}

/// Rounds of the interleaved summary (see `common::Rounds`).
const ROUNDS: usize = 9;

fn summary() {
    let x = operands();
    let threads = rayon::current_num_threads();
    let jax = common::Jax::start("linalg");
    let samples = common::Rounds::default()
        .time("cholesky", 9, || drop(black_box(cholesky(&x.spd))))
        .jax(jax.as_ref(), "jax_linalg_cholesky", 9)
        .time("solve", 9, || drop(black_box(solve(&x.a, &x.b))))
        .jax(jax.as_ref(), "jax_linalg_solve", 9)
        .time("eigh", 5, || drop(black_box(eigh(&x.sym))))
        .jax(jax.as_ref(), "jax_linalg_eigh", 5)
        .time("svd", 3, || drop(black_box(svd(&x.a))))
        .jax(jax.as_ref(), "jax_linalg_svd", 3)
        .run(ROUNDS);
    println!("\nlinalg summary ({N}x{N} f32, {threads} threads)");
    for op in ["cholesky", "solve", "eigh", "svd"] {
        common::report(&format!("rjax jit {op}"), samples.median(op), "");
        common::report_against_jax(&samples, &format!("jax_linalg_{op}"), op);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
