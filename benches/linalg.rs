//! Dense factorizations of 512x512 f32 matrices under `#[jit]`: `cholesky` of a symmetric
//! positive-definite matrix, `solve` against one right-hand side, `eigh` of a symmetric matrix
//! and the `svd` (with `U` and `V^T`) of a square one, against JAX CPU on the same machine
//! (which calls LAPACK), and against faer alone (which rjax calls) on the same matrices: the
//! ratio to faer is rjax's own overhead.

mod common;

use std::hint::black_box;

use criterion::{criterion_group, Criterion};
use faer::linalg::solvers::Solve;
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

/// The same matrices as faer's row-major `f32` matrices, for faer alone.
struct FaerOperands {
    a: faer::Mat<f32>,
    spd: faer::Mat<f32>,
    sym: faer::Mat<f32>,
    b: faer::Mat<f32>,
}

fn faer_operands(x: &Operands) -> FaerOperands {
    let matrix = |a: &Array| {
        let v = a.to_vec::<f32>().expect("f32 operands");
        faer::MatRef::from_row_major_slice(&v, N, N).to_owned()
    };
    let b = faer::Mat::from_fn(N, 1, |_, _| 1.0f32);
    FaerOperands { a: matrix(&x.a), spd: matrix(&x.spd), sym: matrix(&x.sym), b }
}

/// faer's factorizations through its own API (a copy in, its own column-major outputs),
/// on the same thread pool as rjax's.
fn faer_cholesky(x: &FaerOperands) -> impl Sized {
    x.spd.llt(faer::Side::Lower).expect("positive definite")
}

fn faer_solve(x: &FaerOperands) -> faer::Mat<f32> {
    x.a.partial_piv_lu().solve(&x.b)
}

fn faer_eigh(x: &FaerOperands) -> impl Sized {
    x.sym.self_adjoint_eigen(faer::Side::Lower).expect("converges")
}

fn faer_svd(x: &FaerOperands) -> impl Sized {
    x.a.svd().expect("converges")
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
    let f = faer_operands(&x);
    let threads = rayon::current_num_threads();
    let jax = common::Jax::start("linalg");
    let samples = common::Rounds::default()
        .time("cholesky", 9, || drop(black_box(cholesky(&x.spd))))
        .time("faer_cholesky", 9, || drop(black_box(faer_cholesky(&f))))
        .jax(jax.as_ref(), "jax_linalg_cholesky", 9)
        .time("solve", 9, || drop(black_box(solve(&x.a, &x.b))))
        .time("faer_solve", 9, || drop(black_box(faer_solve(&f))))
        .jax(jax.as_ref(), "jax_linalg_solve", 9)
        .time("eigh", 5, || drop(black_box(eigh(&x.sym))))
        .time("faer_eigh", 5, || drop(black_box(faer_eigh(&f))))
        .jax(jax.as_ref(), "jax_linalg_eigh", 5)
        .time("svd", 3, || drop(black_box(svd(&x.a))))
        .time("faer_svd", 3, || drop(black_box(faer_svd(&f))))
        .jax(jax.as_ref(), "jax_linalg_svd", 3)
        .run(ROUNDS);
    println!("\nlinalg summary ({N}x{N} f32, {threads} threads)");
    for op in ["cholesky", "solve", "eigh", "svd"] {
        common::report(&format!("rjax jit {op}"), samples.median(op), "");
        let faer = format!("faer_{op}");
        let overhead = samples.ratio(op, &faer);
        common::report(&faer, samples.median(&faer), &format!("rjax / faer = {overhead}"));
        common::report_against_jax(&samples, &format!("jax_linalg_{op}"), op);
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    summary();
    criterion::Criterion::default().configure_from_args().final_summary();
}
