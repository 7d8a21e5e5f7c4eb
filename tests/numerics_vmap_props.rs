//! Property test over the batching rules of the factorizations (`cholesky`,
//! `triangular_solve`, `lu`, `eigh`, `qr`, `svd`), the Fourier transforms (`fft` of each kind)
//! and the complex parts (`real`, `imag`, `conj`, `complex`): `vmap(f)(xs)` equals stacking
//! `f(x)` over the examples, for every output of the primitive, random extents, batch sizes,
//! data, in_axes and out_axes (positive and negative), some operands unmapped, and operands
//! that are themselves stacks of matrices. The primitives are bound directly, so each rule is
//! exercised with the batch axis wherever `vmap` put it.

mod common;

use common::assert_close;
use proptest::prelude::*;
use rjax::ad::api::Flat;
use rjax::prelude::*;
use rjax::primitives::{
    bind, Cholesky, ComplexPart, Eigh, Fft, FftType, Lu, MakeComplex, Qr, Svd, TriangularSolve,
};
use rjax::transform::batch::api::{vmap, BatchAxes, Vmap};

/// What an operand holds, so each example is a valid input of the primitive.
#[derive(Clone, Copy)]
enum Kind {
    /// Standard normal values.
    Float,
    /// Symmetric positive-definite matrices (`M M^T + n I`).
    Spd,
    /// Symmetric matrices.
    Sym,
    /// Matrices with a dominant diagonal (well conditioned as triangles).
    Diagonal,
    /// Complex values with standard normal parts.
    Complex,
}

/// Each operand's per-example shape and kind, for extents `d`.
type Args = Vec<(Vec<usize>, Kind)>;

/// One primitive under test: its operands and the primitive applied to one example.
struct Case {
    name: &'static str,
    args: fn(&[usize; 3]) -> Args,
    f: fn(&[Array]) -> Vec<Array>,
}

fn square(d: &[usize; 3], kind: Kind) -> Args {
    vec![(vec![d[0], d[0]], kind)]
}

fn rect(d: &[usize; 3]) -> Args {
    vec![(vec![d[0], d[1]], Kind::Float)]
}

/// A stack of two `d[0] x d[1]` matrices per example: the batch axis joins leading axes.
fn stacked_rect(d: &[usize; 3]) -> Args {
    vec![(vec![2, d[0], d[1]], Kind::Float)]
}

fn solve(prim: TriangularSolve, a: &[Array]) -> Vec<Array> {
    bind(&prim, &[&a[0], &a[1]])
}

fn transform(fft_type: FftType, fft_lengths: Vec<usize>, a: &[Array]) -> Vec<Array> {
    bind(&Fft { fft_type, fft_lengths }, &[&a[0]])
}

fn solve_args(d: &[usize; 3], left: bool) -> Args {
    let b = if left { vec![d[0], d[1]] } else { vec![d[1], d[0]] };
    vec![(vec![d[0], d[0]], Kind::Diagonal), (b, Kind::Float)]
}

fn factor_cases() -> Vec<Case> {
    vec![
        Case { name: "cholesky", args: |d| square(d, Kind::Spd), f: |a| bind(&Cholesky, &[&a[0]]) },
        Case {
            name: "cholesky_stack",
            args: |d| vec![(vec![2, d[0], d[0]], Kind::Spd)],
            f: |a| bind(&Cholesky, &[&a[0]]),
        },
        Case {
            name: "triangular_solve_left_lower",
            args: |d| solve_args(d, true),
            f: |a| {
                let p = TriangularSolve {
                    left_side: true,
                    lower: true,
                    transpose_a: false,
                    unit_diagonal: false,
                };
                solve(p, a)
            },
        },
        Case {
            name: "triangular_solve_left_upper_transposed",
            args: |d| solve_args(d, true),
            f: |a| {
                let p = TriangularSolve {
                    left_side: true,
                    lower: false,
                    transpose_a: true,
                    unit_diagonal: false,
                };
                solve(p, a)
            },
        },
        Case {
            name: "triangular_solve_right_upper_unit",
            args: |d| solve_args(d, false),
            f: |a| {
                let p = TriangularSolve {
                    left_side: false,
                    lower: false,
                    transpose_a: false,
                    unit_diagonal: true,
                };
                solve(p, a)
            },
        },
        Case {
            name: "triangular_solve_right_lower_transposed_unit",
            args: |d| solve_args(d, false),
            f: |a| {
                let p = TriangularSolve {
                    left_side: false,
                    lower: true,
                    transpose_a: true,
                    unit_diagonal: true,
                };
                solve(p, a)
            },
        },
        Case { name: "lu", args: rect, f: |a| bind(&Lu, &[&a[0]]) },
        Case { name: "lu_stack", args: stacked_rect, f: |a| bind(&Lu, &[&a[0]]) },
        Case { name: "eigh", args: |d| square(d, Kind::Sym), f: |a| bind(&Eigh, &[&a[0]]) },
        Case { name: "qr_thin", args: rect, f: |a| bind(&Qr { full_matrices: false }, &[&a[0]]) },
        Case {
            name: "qr_full_stack",
            args: stacked_rect,
            f: |a| bind(&Qr { full_matrices: true }, &[&a[0]]),
        },
        Case {
            name: "svd_values",
            args: stacked_rect,
            f: |a| bind(&Svd { full_matrices: false, compute_uv: false }, &[&a[0]]),
        },
        Case {
            name: "svd_thin",
            args: rect,
            f: |a| bind(&Svd { full_matrices: false, compute_uv: true }, &[&a[0]]),
        },
        Case {
            name: "svd_full",
            args: rect,
            f: |a| bind(&Svd { full_matrices: true, compute_uv: true }, &[&a[0]]),
        },
    ]
}

fn fft_cases() -> Vec<Case> {
    vec![
        Case {
            name: "fft",
            args: |d| vec![(vec![d[0], d[1]], Kind::Complex)],
            f: |a| transform(FftType::Fft, vec![a[0].shape()[1]], a),
        },
        Case {
            name: "ifft_2d",
            args: |d| vec![(d.to_vec(), Kind::Complex)],
            f: |a| transform(FftType::Ifft, a[0].shape()[1..].to_vec(), a),
        },
        Case {
            name: "rfft",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float)],
            f: |a| transform(FftType::Rfft, vec![a[0].shape()[1]], a),
        },
        Case {
            name: "rfft_2d",
            args: |d| vec![(d.to_vec(), Kind::Float)],
            f: |a| transform(FftType::Rfft, a[0].shape()[1..].to_vec(), a),
        },
        Case {
            name: "irfft_even",
            args: |d| vec![(vec![d[0], 3], Kind::Complex)],
            f: |a| transform(FftType::Irfft, vec![4], a),
        },
        Case {
            name: "irfft_odd_2d",
            args: |d| vec![(vec![d[0], d[1], 3], Kind::Complex)],
            f: |a| transform(FftType::Irfft, vec![a[0].shape()[1], 5], a),
        },
    ]
}

fn complex_cases() -> Vec<Case> {
    vec![
        Case {
            name: "real",
            args: |d| vec![(vec![d[0], d[1]], Kind::Complex)],
            f: |a| bind(&ComplexPart::Real, &[&a[0]]),
        },
        Case {
            name: "imag",
            args: |d| vec![(vec![d[0]], Kind::Complex)],
            f: |a| bind(&ComplexPart::Imag, &[&a[0]]),
        },
        Case {
            name: "conj",
            args: |d| vec![(d.to_vec(), Kind::Complex)],
            f: |a| bind(&ComplexPart::Conj, &[&a[0]]),
        },
        Case {
            name: "complex",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![d[0], d[1]], Kind::Float)],
            f: |a| bind(&MakeComplex, &[&a[0], &a[1]]),
        },
    ]
}

/// Standard normal f64 values of `shape` from `key`.
fn normal(key: &random::Key, shape: &[usize]) -> Array {
    random::normal(key, shape).astype(DType::F64)
}

/// One example's value of an operand: random data from a key for `(operand, example)`.
fn example(kind: Kind, shape: &[usize], seed: u32, arg: usize, b: usize) -> Array {
    let key = random::fold_in(&random::key(i64::from(seed)), (arg * 16 + b) as u32);
    let x = normal(&key, shape);
    let r = shape.len();
    match kind {
        Kind::Float => x,
        Kind::Spd => jnp::matmul(&x, &x.swapaxes(-1, -2)) + jnp::eye(shape[r - 1]) * r as f64,
        Kind::Sym => &x + &x.swapaxes(-1, -2),
        Kind::Diagonal => x + jnp::eye(shape[r - 1]) * 4.0,
        Kind::Complex => {
            let im = normal(&random::fold_in(&key, 1), shape);
            jnp::complex(&x, &im)
        }
    }
}

/// An axis of a value of `rank` as a position, from a random choice (sometimes negative).
fn axis_of(choice: u8, rank: usize) -> (usize, isize) {
    let pos = usize::from(choice) % (rank + 1);
    let spelled = if choice % 2 == 1 { pos as isize - (rank as isize + 1) } else { pos as isize };
    (pos, spelled)
}

/// The test's random choices.
struct Draw<'a> {
    d: [usize; 3],
    size: usize,
    maps: &'a [u8],
    out: u8,
    seed: u32,
}

/// Which operands are mapped (`Some(axis choice)`); at least one is.
fn mapped_operands(count: usize, maps: &[u8]) -> Vec<Option<u8>> {
    let mut mapped: Vec<Option<u8>> =
        (0..count).map(|i| (!maps[i].is_multiple_of(3)).then_some(maps[i] / 3)).collect();
    if mapped.iter().all(Option::is_none) {
        mapped[0] = Some(maps[0]);
    }
    mapped
}

fn check(case: &Case, draw: &Draw) {
    let specs = (case.args)(&draw.d);
    let mapped = mapped_operands(specs.len(), draw.maps);
    let examples: Vec<Vec<Array>> = (0..draw.size)
        .map(|b| {
            let operand = |(i, (shape, kind)): (usize, &(Vec<usize>, Kind))| {
                let b = if mapped[i].is_some() { b } else { 0 };
                example(*kind, shape, draw.seed, i, b)
            };
            specs.iter().enumerate().map(operand).collect()
        })
        .collect();
    let mut in_axes = Vec::new();
    let mut batched = Vec::new();
    for (i, m) in mapped.iter().enumerate() {
        let Some(choice) = m else {
            in_axes.push(BatchAxes::None);
            batched.push(examples[0][i].clone());
            continue;
        };
        let (pos, spelled) = axis_of(*choice, specs[i].0.len());
        in_axes.push(BatchAxes::Axis(spelled));
        let lanes: Vec<&Array> = examples.iter().map(|e| &e[i]).collect();
        batched.push(jnp::stack(&lanes, pos as isize));
    }
    let results: Vec<Vec<Array>> = examples.iter().map(|e| (case.f)(e)).collect();
    for k in 0..results[0].len() {
        let lanes: Vec<&Array> = results.iter().map(|r| &r[k]).collect();
        let (out_pos, out_spelled) = axis_of(draw.out.wrapping_add(k as u8), lanes[0].ndim());
        let want = jnp::stack(&lanes, out_pos as isize);
        let names = vec!["arg"; specs.len()];
        let spec = Vmap {
            names: &names,
            in_axes: &in_axes,
            out_axes: &BatchAxes::Axis(out_spelled),
            axis_name: None,
        };
        let params: Vec<Flat> = batched.iter().map(Flat::of).collect();
        let f = case.f;
        let got: Array = vmap(spec, params, |ps| {
            let args: Vec<Array> = ps.into_iter().map(|p| p.into_tree()).collect();
            f(&args).swap_remove(k)
        })
        .into_tree();
        assert_close(&got, &want, 1e-10, 1e-10);
    }
}

/// Runs every case, naming the one that failed.
fn check_all(cases: Vec<Case>, draw: &Draw) {
    for case in cases {
        let run = std::panic::catch_unwind(|| check(&case, draw));
        if let Err(e) = run {
            let text = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("case {}: {text}", case.name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn vmap_of_factorizations_equals_stacking(
        d in [1usize..5, 1usize..5, 1usize..4],
        size in 1usize..4,
        maps in prop::collection::vec(0u8..12, 2),
        out in 0u8..8,
        seed in 0u32..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        check_all(factor_cases(), &Draw { d, size, maps: &maps, out, seed });
    }

    #[test]
    fn vmap_of_fourier_transforms_and_complex_parts_equals_stacking(
        d in [1usize..5, 1usize..5, 1usize..4],
        size in 1usize..4,
        maps in prop::collection::vec(0u8..12, 2),
        out in 0u8..8,
        seed in 0u32..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        let draw = Draw { d, size, maps: &maps, out, seed };
        check_all(fft_cases(), &draw);
        check_all(complex_cases(), &draw);
    }
}
