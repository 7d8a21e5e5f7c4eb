//! Property test over every primitive's batching rule: `vmap(f)(xs)` equals stacking `f(x)`
//! over the examples, for random extents, batch sizes, data, and every in_axes/out_axes
//! placement (positive and negative), with some arguments unmapped.

mod common;

use common::assert_close;
use proptest::prelude::*;
use rjax::ad::api::{grad_of, Flat};
use rjax::prelude::*;
use rjax::transform::ad::custom::{custom_vjp, stop_gradient};
use rjax::transform::batch::api::{vmap, BatchAxes, Vmap};

/// What an argument holds, so the generated data is valid for the operation.
#[derive(Clone, Copy)]
enum Kind {
    Float,
    Positive,
    /// Integers in `lo..hi` (indices include out-of-bounds and negative ones).
    Int(i32, i32),
    Bool,
    /// A PRNG key (`uint32[2]`).
    Key,
}

/// One operation under test: its per-example argument shapes for extents `d`, and the
/// function of one example.
/// Each argument's per-example shape and kind.
type Args = Vec<(Vec<usize>, Kind)>;

struct Case {
    name: &'static str,
    args: fn(&[usize; 3]) -> Args,
    f: fn(&[Array]) -> Array,
}

fn vector(d: &[usize; 3]) -> Args {
    vec![(vec![d[0]], Kind::Float)]
}

fn matrix(d: &[usize; 3]) -> Args {
    vec![(vec![d[0], d[1]], Kind::Float)]
}

fn cube(d: &[usize; 3]) -> Args {
    vec![(d.to_vec(), Kind::Float)]
}

fn cases() -> Vec<Case> {
    vec![
        Case { name: "tanh", args: cube, f: |a| a[0].tanh() },
        Case { name: "exp", args: matrix, f: |a| a[0].exp() },
        Case { name: "integer_pow", args: matrix, f: |a| a[0].powi(3) },
        Case {
            name: "sqrt",
            args: |d| vec![(vec![d[0], d[1]], Kind::Positive)],
            f: |a| a[0].sqrt(),
        },
        Case {
            name: "not",
            args: |d| vec![(vec![d[0]], Kind::Bool)],
            f: |a| jnp::logical_not(&a[0]),
        },
        Case {
            name: "add_same_shape",
            args: |d| [matrix(d), matrix(d)].concat(),
            f: |a| &a[0] + &a[1],
        },
        Case {
            name: "mul_broadcast_ranks",
            args: |d| vec![(vec![d[1]], Kind::Float), (vec![d[0], d[1]], Kind::Float)],
            f: |a| &a[0] * &a[1],
        },
        Case {
            name: "sub_broadcast_ones",
            args: |d| vec![(vec![d[0], 1], Kind::Float), (vec![1, d[1]], Kind::Float)],
            f: |a| &a[0] - &a[1],
        },
        Case {
            name: "pow",
            args: |d| vec![(vec![d[0]], Kind::Positive), (vec![d[0]], Kind::Float)],
            f: |a| jnp::pow(&a[0], &a[1]),
        },
        Case {
            name: "max_scalar_and_matrix",
            args: |d| vec![(vec![], Kind::Float), (vec![d[0], d[1]], Kind::Float)],
            f: |a| jnp::maximum(&a[0], &a[1]),
        },
        Case { name: "lt", args: |d| [matrix(d), matrix(d)].concat(), f: |a| a[0].lt(&a[1]) },
        Case {
            name: "and",
            args: |d| vec![(vec![d[0]], Kind::Bool), (vec![d[0]], Kind::Bool)],
            f: |a| jnp::logical_and(&a[0], &a[1]),
        },
        Case {
            name: "select",
            args: |d| {
                vec![
                    (vec![d[0], d[1]], Kind::Bool),
                    (vec![d[1]], Kind::Float),
                    (vec![], Kind::Float),
                ]
            },
            f: |a| jnp::where_(&a[0], &a[1], &a[2]),
        },
        Case { name: "convert", args: matrix, f: |a| a[0].astype(DType::I32) },
        Case { name: "sum_axis", args: cube, f: |a| jnp::sum_axes(&a[0], 1, false) },
        Case { name: "sum_all", args: cube, f: |a| a[0].sum() },
        Case { name: "max_axes_keepdims", args: cube, f: |a| jnp::max_axes(&a[0], [0, 2], true) },
        Case { name: "prod", args: matrix, f: |a| jnp::prod_axes(&a[0], 0, false) },
        Case {
            name: "any",
            args: |d| vec![(vec![d[0], d[1]], Kind::Bool)],
            f: |a| jnp::any_axes(&a[0], 1, false),
        },
        Case { name: "argmax", args: matrix, f: |a| jnp::argmax_axis(&a[0], 1, false) },
        Case { name: "cumsum", args: matrix, f: |a| jnp::cumsum(&a[0], Some(1)) },
        Case { name: "cumprod", args: matrix, f: |a| jnp::cumprod(&a[0], Some(0)) },
        Case {
            name: "cummax_reverse",
            args: vector,
            f: |a| jnp::flip(&jnp::cummax(&jnp::flip(&a[0], 0), Some(0)), 0),
        },
        Case { name: "reshape", args: cube, f: |a| a[0].reshape([-1]) },
        Case { name: "transpose", args: cube, f: |a| jnp::permute_dims(&a[0], [2, 0, 1]) },
        Case {
            name: "broadcast_to",
            args: |d| vec![(vec![d[1], 1], Kind::Float)],
            f: |a| jnp::broadcast_to(&a[0], [3, a[0].shape()[0], 2]),
        },
        Case {
            name: "concatenate",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![d[2], d[1]], Kind::Float)],
            f: |a| jnp::concatenate(&[&a[0], &a[1]], 0),
        },
        Case { name: "slice", args: matrix, f: |a| a[0].slice(s![.., 0..1]) },
        Case { name: "strided_slice", args: cube, f: |a| a[0].slice(s![..;2, .., 1..]) },
        Case { name: "rev", args: matrix, f: |a| jnp::flip(&a[0], 1) },
        Case {
            name: "pad",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![], Kind::Float)],
            f: |a| jnp::pad(&a[0], [(1, 0), (0, 2)], &a[1]),
        },
        Case {
            name: "iota",
            args: vector,
            f: |a| &a[0] * jnp::arange(a[0].shape()[0] as i32).astype(DType::F32),
        },
        Case {
            name: "gather",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![d[2]], Kind::Int(-4, 5))],
            f: |a| jnp::take(&a[0], &a[1], Some(1)),
        },
        Case {
            name: "gather_2d_indices",
            args: |d| vec![(vec![d[0] + 1], Kind::Float), (vec![2, d[1]], Kind::Int(-2, 4))],
            f: |a| a[0].slice(s![&a[1]]),
        },
        Case {
            name: "scatter_set",
            args: |d| {
                vec![
                    (vec![d[0], d[1]], Kind::Float),
                    (vec![d[2]], Kind::Int(-3, 4)),
                    (vec![d[2], d[1]], Kind::Float),
                ]
            },
            f: |a| a[0].at(s![&a[1]]).set(&a[2]),
        },
        Case {
            name: "scatter_add_columns",
            args: |d| {
                vec![
                    (vec![d[0], d[1]], Kind::Float),
                    (vec![d[2]], Kind::Int(-2, 3)),
                    (vec![], Kind::Float),
                ]
            },
            f: |a| a[0].at(s![.., &a[1]]).add(&a[2]),
        },
        Case {
            name: "dot_matvec",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![d[1]], Kind::Float)],
            f: |a| a[0].dot(&a[1]),
        },
        Case {
            name: "matmul",
            args: |d| vec![(vec![d[0], d[1]], Kind::Float), (vec![d[1], d[2]], Kind::Float)],
            f: |a| a[0].matmul(&a[1]),
        },
        Case {
            name: "einsum_batched",
            args: |d| vec![(vec![2, d[0], d[1]], Kind::Float), (vec![2, d[1]], Kind::Float)],
            f: |a| jnp::einsum("bij,bj->bi", &[&a[0], &a[1]]),
        },
        Case {
            name: "cond",
            args: |d| vec![(vec![], Kind::Float), (vec![d[0]], Kind::Float)],
            f: |a| lax::cond(a[0].gt(0.0), |x: Array| x.sin(), |x: Array| x * 2.0, a[1].clone()),
        },
        Case {
            name: "switch",
            args: |d| vec![(vec![], Kind::Int(-1, 4)), (vec![d[0]], Kind::Float)],
            f: |a| {
                let b0 = |x: Array| x.exp();
                let b1 = |x: Array| -x;
                let b2 = |x: Array| x.square();
                lax::switch(&a[0], &[&b0, &b1, &b2], a[1].clone())
            },
        },
        Case {
            name: "while_loop",
            args: |d| vec![(vec![], Kind::Int(0, 4)), (vec![d[0]], Kind::Float)],
            f: |a| {
                let n = a[0].clone();
                let (_, x) = lax::while_loop(
                    |(i, _): &(Array, Array)| i.lt(&n),
                    |(i, x): (Array, Array)| (i + 1, x * 1.5 + 1.0),
                    (Array::from(0i32), a[1].clone()),
                );
                x
            },
        },
        Case {
            name: "scan_carry_xs_consts",
            args: |d| {
                let (n, t) = (d[0], d[1]);
                vec![(vec![n], Kind::Float), (vec![t, n], Kind::Float), (vec![n, n], Kind::Float)]
            },
            f: |a| {
                let w = &a[2];
                let (h, hs) = lax::scan(
                    |h: Array, x: Array| {
                        let h = (w.dot(&h) * 0.5 + x).tanh();
                        (h.clone(), h.square())
                    },
                    a[0].clone(),
                    a[1].clone(),
                );
                hs + h
            },
        },
        Case {
            name: "scan_reverse_integer_carry",
            args: |d| vec![(vec![d[1], d[0]], Kind::Float)],
            f: |a| {
                let options = lax::ScanOptions::default().reverse(true);
                let step = |(i, c): (Array, Array), x: Array| {
                    let c = &c * 0.5 + &x * i.astype(DType::F32);
                    ((i + 1, c.clone()), c)
                };
                let init = (Array::from(1i32), a[0].slice(s![0]) * 0.0);
                lax::scan_with(step, init, a[0].clone(), options).1
            },
        },
        Case {
            name: "map",
            args: matrix,
            f: |a| lax::map(|row: Array| row.sin().sum() * &row, a[0].clone()),
        },
        Case {
            name: "fori_loop_static",
            args: vector,
            f: |a| lax::fori_loop(0, 3, |i, x: Array| x.cos() + i.astype(DType::F32), a[0].clone()),
        },
        Case {
            name: "grad_of_scan",
            args: |d| vec![(vec![d[0]], Kind::Float), (vec![d[1], d[0]], Kind::Float)],
            f: |a| {
                let xs = a[1].clone();
                grad_of(
                    |h0| {
                        let step = |h: Array, x: Array| ((&h * &x).sin(), h.sum());
                        lax::scan(step, h0.clone(), xs.clone()).1.sum()
                    },
                    &a[0],
                )
            },
        },
        Case {
            name: "random_normal",
            args: |_| vec![(vec![2], Kind::Key)],
            f: |a| random::normal(&random::wrap_key_data(&a[0]), [3]),
        },
        Case {
            name: "random_split_uniform",
            args: |_| vec![(vec![2], Kind::Key)],
            f: |a| {
                let keys = random::split(&random::wrap_key_data(&a[0]), 2);
                random::uniform(&keys.get(1), [2])
            },
        },
        Case { name: "stop_gradient", args: vector, f: |a| stop_gradient(&a[0]) * 2.0 },
        Case {
            name: "custom_jvp_logaddexp",
            args: |d| [vector(d), vector(d)].concat(),
            f: |a| jnp::logaddexp(&a[0], &a[1]),
        },
        Case {
            name: "custom_vjp",
            args: vector,
            f: |a| {
                custom_vjp(
                    &a[0],
                    |x: Array| x.sin(),
                    |x: Array| (x.sin(), x.cos()),
                    |c: Array, g: Array| c * g,
                )
            },
        },
        Case {
            name: "grad_of_tanh_sum",
            args: matrix,
            f: |a| grad_of(|x| x.tanh().square().sum(), &a[0]),
        },
    ]
}

/// One example's value of an argument: random data from a key for `(arg, example)`.
fn example(kind: Kind, shape: &[usize], seed: u32, arg: usize, b: usize) -> Array {
    let key = random::fold_in(&random::key(i64::from(seed)), (arg * 16 + b) as u32);
    match kind {
        Kind::Float => random::normal(&key, shape),
        Kind::Positive => random::uniform_range(&key, shape, 0.5, 2.0),
        Kind::Int(lo, hi) => random::randint(&key, shape, lo, hi),
        Kind::Bool => random::uniform(&key, shape).lt(0.5),
        Kind::Key => random::key_data(&key),
    }
}

/// An axis of a value of `rank` as a position, from a random choice (sometimes negative).
fn axis_of(choice: u8, rank: usize) -> (usize, isize) {
    let pos = usize::from(choice) % (rank + 1);
    let spelled = if choice % 2 == 1 { pos as isize - (rank as isize + 1) } else { pos as isize };
    (pos, spelled)
}

fn check(case: &Case, d: [usize; 3], size: usize, maps: &[u8], out: u8, seed: u32) {
    let specs = (case.args)(&d);
    let mut mapped: Vec<Option<u8>> = specs
        .iter()
        .enumerate()
        .map(|(i, _)| (!maps[i].is_multiple_of(3)).then_some(maps[i] / 3))
        .collect();
    if mapped.iter().all(Option::is_none) {
        mapped[0] = Some(maps[0]);
    }
    let examples: Vec<Vec<Array>> = (0..size)
        .map(|b| {
            specs
                .iter()
                .enumerate()
                .map(|(i, (shape, kind))| {
                    let b = if mapped[i].is_some() { b } else { 0 };
                    example(*kind, shape, seed, i, b)
                })
                .collect()
        })
        .collect();
    let mut in_axes = Vec::new();
    let mut batched = Vec::new();
    for (i, m) in mapped.iter().enumerate() {
        match m {
            None => {
                in_axes.push(BatchAxes::None);
                batched.push(examples[0][i].clone());
            }
            Some(choice) => {
                let (pos, spelled) = axis_of(*choice, specs[i].0.len());
                in_axes.push(BatchAxes::Axis(spelled));
                let lanes: Vec<&Array> = examples.iter().map(|e| &e[i]).collect();
                batched.push(jnp::stack(&lanes, pos as isize));
            }
        }
    }
    let results: Vec<Array> = examples.iter().map(|e| (case.f)(e)).collect();
    let (out_pos, out_spelled) = axis_of(out, results[0].ndim());
    let want = jnp::stack(&results, out_pos as isize);
    let names: Vec<&'static str> = vec!["arg"; specs.len()];
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
        f(&args)
    })
    .into_tree();
    assert_close(&got, &want, 1e-5, 1e-5);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn vmap_equals_stacking_every_primitive(
        d in [1usize..4, 1usize..4, 1usize..4],
        size in 1usize..4,
        maps in prop::collection::vec(0u8..12, 3),
        out in 0u8..8,
        seed in 0u32..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        for case in cases() {
            let run = std::panic::catch_unwind(|| check(&case, d, size, &maps, out, seed));
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
}

#[test]
fn a_batch_of_size_zero_keeps_its_shape() {
    let x = jnp::zeros([0, 3]);
    let spec = Vmap {
        names: &["x"],
        in_axes: &[BatchAxes::Axis(0)],
        out_axes: &BatchAxes::Axis(0),
        axis_name: None,
    };
    let got: Array = vmap(spec, vec![Flat::of(&x)], |p| {
        let x: Array = p.into_iter().next().unwrap().into_tree();
        x.tanh().sum()
    })
    .into_tree();
    assert_eq!(got.shape(), &[0]);
}
