//! Reductions on the GPU backend (feature `gpu`) against the CPU: every fold (`reduce_*`),
//! `argmax`/`argmin` and cumulative scan, for every dtype the GPU computes (`float32`,
//! `int32`, `uint32`, `bool`), on random shapes of rank 0 to 4 and on chosen ones (empty and
//! length-1 axes, reduced lengths over 1024, all axes, none, axes apart and out of order).
//!
//! Integers and bools must match bit for bit, and so must every float result whose value
//! does not depend on the order of combination (max, min, arg, and the scans, which fold in
//! order on both backends). Float sums and products may round differently: the host sums
//! pairwise in lanes, the GPU per lane then as a tree, so they agree within [`FLOAT_SUM`]
//! (relative to the largest output, at least 1). The GPU's own order is fixed: the same sum
//! twice gives the same bits.
//!
//! Without a GPU adapter each test prints why and passes, unless `RJAX_REQUIRE_GPU=1`.
#![cfg(feature = "gpu")]

use rjax::device::{device_put, Device};
use rjax::prelude::*;
use rjax::primitives::{bind1, ArgOp, ArgReduce, CumOp, Cumulative, Reduce, ReduceOp};
use rjax::{jnp, Array, DType};

mod common;
use common::gpu::{assert_matches_cpu, gpu, panic_of, Rng};

/// Tolerance of float sums and products, relative to the largest output magnitude (at least
/// 1). Both backends' orders are trees of depth about log2(n), so their errors are a few
/// ulps of the row's magnitude; 1e-5 (about 80 ulps of the largest output) leaves room for
/// that on rows of thousands of elements while a missing or doubled element (values are
/// mostly above 0.1 in magnitude) would exceed it.
const FLOAT_SUM: f32 = 1e-5;

/// The dtypes each fold is defined for on the GPU.
fn reduce_dtypes(op: ReduceOp) -> &'static [DType] {
    match op {
        ReduceOp::Sum | ReduceOp::Prod => &[DType::F32, DType::I32, DType::U32],
        ReduceOp::Max | ReduceOp::Min => &[DType::F32, DType::I32, DType::U32, DType::Bool],
        ReduceOp::And | ReduceOp::Or => &[DType::Bool],
    }
}

const ALL: [DType; 4] = [DType::F32, DType::I32, DType::U32, DType::Bool];

/// Chosen `(shape, axes)` cases: scalars, empty and length-1 axes, long reductions (loop and
/// tree kernels), every axis, none, axes apart and out of order.
fn chosen_cases() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![], vec![]),
        (vec![0], vec![0]),
        (vec![0, 3], vec![0]),
        (vec![3, 0], vec![1]),
        (vec![3, 0], vec![0]),
        (vec![2, 0, 3], vec![0, 2]),
        (vec![1, 1, 1], vec![0, 1, 2]),
        (vec![1, 5, 1], vec![1]),
        (vec![4, 3, 5], vec![]),
        (vec![4, 3, 5], vec![2, 0]),
        (vec![4, 3, 5, 2], vec![0, 2]),
        (vec![4, 3, 5, 2], vec![3, 1, 0, 2]),
        (vec![255], vec![0]),
        (vec![256], vec![0]),
        (vec![1030], vec![0]),
        (vec![3, 1500], vec![1]),
        (vec![3, 1100, 2], vec![1]),
        (vec![16, 40, 3], vec![0, 1, 2]),
        (vec![5, 7, 33], vec![0, 2]),
    ]
}

/// A random shape of rank 0 to 4, extents mostly 1 to 6, sometimes 0 or long (at most one
/// long axis, so arrays stay small).
fn random_shape(rng: &mut Rng) -> Vec<usize> {
    let rank = rng.below(5);
    let mut long = false;
    let mut shape = Vec::new();
    for _ in 0..rank {
        let d = match rng.below(20) {
            0 => 0,
            1 if !long => {
                long = true;
                300 + rng.below(900)
            }
            _ => 1 + rng.below(6),
        };
        shape.push(d);
    }
    shape
}

/// A random subset of `0..rank` in random order.
fn random_axes(rng: &mut Rng, rank: usize) -> Vec<usize> {
    let mut axes: Vec<usize> = (0..rank).filter(|_| rng.below(2) == 0).collect();
    for i in (1..axes.len()).rev() {
        axes.swap(i, rng.below(i + 1));
    }
    axes
}

/// Random data for `op`: floats on a grid of halves sometimes (so maxima tie), with NaNs
/// when `nans`; products of floats near 1 so long rows neither overflow nor vanish.
fn data(rng: &mut Rng, dtype: DType, shape: &[usize], nans: bool, near_one: bool) -> Array {
    if dtype != DType::F32 {
        return rng.array(dtype, shape);
    }
    let n = shape.iter().product();
    let grid = rng.below(2) == 0;
    let values = (0..n)
        .map(|_| {
            let v = rng.unit() * 8.0 - 4.0;
            let v = if grid { (v * 2.0).round() / 2.0 } else { v };
            let v = if near_one { 1.0 + v / 8.0 } else { v };
            if nans && rng.below(8) == 0 {
                f32::NAN
            } else {
                v as f32
            }
        })
        .collect();
    Array::from_shape_vec(shape, values)
}

/// Whether `op` folds floats in an order-dependent way.
fn rounds(op: ReduceOp, dtype: DType) -> f32 {
    match (op, dtype) {
        (ReduceOp::Sum | ReduceOp::Prod, DType::F32) => FLOAT_SUM,
        _ => 0.0,
    }
}

fn check_reduce(
    gpu: Device,
    rng: &mut Rng,
    op: ReduceOp,
    dtype: DType,
    shape: &[usize],
    axes: &[usize],
) {
    let nans = matches!(op, ReduceOp::Max | ReduceOp::Min) && rng.below(2) == 0;
    let x = data(rng, dtype, shape, nans, op == ReduceOp::Prod);
    let what = format!("{op:?} {dtype} {shape:?} axes {axes:?} nans {nans}");
    let prim = Reduce { op, axes: axes.to_vec() };
    assert_matches_cpu(&what, gpu, &[x], rounds(op, dtype), |a| vec![bind1(&prim, &[&a[0]])]);
}

const REDUCE_OPS: [ReduceOp; 6] =
    [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min, ReduceOp::And, ReduceOp::Or];

#[test]
fn every_fold_matches_the_cpu_on_chosen_shapes() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0001);
    let mut cases = 0;
    for op in REDUCE_OPS {
        for &dtype in reduce_dtypes(op) {
            for (shape, axes) in chosen_cases() {
                check_reduce(gpu, &mut rng, op, dtype, &shape, &axes);
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 19 * 16);
}

#[test]
fn every_fold_matches_the_cpu_on_random_shapes() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0002);
    for op in REDUCE_OPS {
        for &dtype in reduce_dtypes(op) {
            for _ in 0..12 {
                let shape = random_shape(&mut rng);
                let axes = random_axes(&mut rng, shape.len());
                check_reduce(gpu, &mut rng, op, dtype, &shape, &axes);
            }
        }
    }
}

#[test]
fn max_and_min_propagate_nan_and_integers_wrap() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut with_nan = vec![1.0f32; 2000];
    with_nan[1700] = f32::NAN;
    let x = Array::from_shape_vec([2, 1000], with_nan);
    for op in [ReduceOp::Max, ReduceOp::Min] {
        for axes in [vec![1], vec![0], vec![0, 1]] {
            let prim = Reduce { op, axes: axes.clone() };
            let what = format!("{op:?} of one NaN over {axes:?}");
            assert_matches_cpu(&what, gpu, std::slice::from_ref(&x), 0.0, |a| {
                vec![bind1(&prim, &[&a[0]])]
            });
        }
    }
    let big = Array::from_shape_vec([300], vec![i32::MAX - 7; 300]);
    let sum = Reduce { op: ReduceOp::Sum, axes: vec![0] };
    let wrapped = bind1(&sum, &[&device_put(&big, gpu)]).item::<i32>().unwrap();
    assert_eq!(wrapped, (i32::MAX - 7).wrapping_mul(300));
}

fn check_arg(gpu: Device, rng: &mut Rng, op: ArgOp, dtype: DType, shape: &[usize], axis: usize) {
    let nans = rng.below(2) == 0;
    let x = data(rng, dtype, shape, nans, false);
    let what = format!("arg {op:?} {dtype} {shape:?} axis {axis} nans {nans}");
    let prim = ArgReduce { op, axis };
    assert_matches_cpu(&what, gpu, &[x], 0.0, |a| vec![bind1(&prim, &[&a[0]])]);
}

#[test]
fn argmax_and_argmin_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0003);
    let chosen: [(&[usize], usize); 9] = [
        (&[1], 0),
        (&[7], 0),
        (&[3, 0], 0),
        (&[2, 1, 3], 1),
        (&[4, 3, 5], 0),
        (&[4, 3, 5], 2),
        (&[1500], 0),
        (&[3, 1100, 2], 1),
        (&[2, 300, 3, 2], 1),
    ];
    for op in [ArgOp::Max, ArgOp::Min] {
        for dtype in ALL {
            for (shape, axis) in chosen {
                check_arg(gpu, &mut rng, op, dtype, shape, axis);
            }
            for _ in 0..10 {
                let mut shape = random_shape(&mut rng);
                if shape.is_empty() {
                    shape.push(1 + rng.below(9));
                }
                let axis = rng.below(shape.len());
                shape[axis] = shape[axis].max(1);
                check_arg(gpu, &mut rng, op, dtype, &shape, axis);
            }
        }
    }
}

#[test]
fn the_first_nan_and_the_first_tie_win() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut v = vec![0.0f32; 3000];
    for at in [10, 600, 2500] {
        v[at] = 5.0;
    }
    let ties = Array::from_shape_vec([3000], v.clone());
    for at in [900, 1200] {
        v[at] = f32::NAN;
    }
    let nans = Array::from_shape_vec([3000], v);
    let on = |x: &Array, op| bind1(&ArgReduce { op, axis: 0 }, &[&device_put(x, gpu)]);
    assert_eq!(on(&ties, ArgOp::Max).item::<i32>().unwrap(), 10);
    assert_eq!(on(&ties, ArgOp::Min).item::<i32>().unwrap(), 0);
    assert_eq!(on(&nans, ArgOp::Max).item::<i32>().unwrap(), 900);
    assert_eq!(on(&nans, ArgOp::Min).item::<i32>().unwrap(), 900);
}

/// The dtypes each scan is defined for.
fn scan_dtypes(op: CumOp) -> &'static [DType] {
    match op {
        CumOp::Sum | CumOp::Prod => &[DType::F32, DType::I32, DType::U32],
        CumOp::Max | CumOp::Min => &ALL,
    }
}

#[test]
fn cumulative_scans_match_the_cpu_both_ways() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0004);
    let chosen: [(&[usize], usize); 7] = [
        (&[0], 0),
        (&[1], 0),
        (&[3, 0], 1),
        (&[0, 3], 1),
        (&[4, 3, 5], 1),
        (&[1300], 0),
        (&[3, 700, 2], 1),
    ];
    for op in [CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Min] {
        for &dtype in scan_dtypes(op) {
            let mut cases: Vec<(Vec<usize>, usize)> =
                chosen.iter().map(|(s, a)| (s.to_vec(), *a)).collect();
            for _ in 0..8 {
                let mut shape = random_shape(&mut rng);
                if shape.is_empty() {
                    shape.push(rng.below(9));
                }
                let axis = rng.below(shape.len());
                cases.push((shape, axis));
            }
            for (shape, axis) in cases {
                for reverse in [false, true] {
                    let nans = matches!(op, CumOp::Max | CumOp::Min) && rng.below(2) == 0;
                    let x = data(&mut rng, dtype, &shape, nans, op == CumOp::Prod);
                    let what = format!("{op:?} {dtype} {shape:?} axis {axis} rev {reverse}");
                    let prim = Cumulative { op, axis, reverse };
                    // Both backends fold each row in order from the identity: the same bits.
                    assert_matches_cpu(&what, gpu, &[x], 0.0, |a| vec![bind1(&prim, &[&a[0]])]);
                }
            }
        }
    }
}

#[test]
fn jnp_reductions_run_on_the_gpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0005);
    let x = data(&mut rng, DType::F32, &[6, 1200, 3], false, false);
    let f = |a: &[Array]| {
        let x = &a[0];
        vec![
            x.sum(),
            jnp::sum_axes(x, [0, 2], false),
            jnp::mean_axes(x, 1, true),
            jnp::max_axes(x, [2, 0], false),
            jnp::min(x),
            jnp::prod_axes(&(x / 16.0 + 1.0), 2, false),
            jnp::argmax(x),
            jnp::argmin_axis(x, 1, false),
            x.argmax_axis(-1, true),
            jnp::cumsum(x, Some(1)),
            jnp::cummax(x, None),
            jnp::cummin(x, Some(-1)),
            x.cumprod(Some(2)),
        ]
    };
    assert_matches_cpu("jnp floats", gpu, &[x], FLOAT_SUM, f);
    let i = rng.array(DType::I32, &[5, 400]);
    let g = |a: &[Array]| {
        let x = &a[0];
        vec![x.sum(), jnp::prod_axes(x, 0, false), jnp::max(x), jnp::cumsum(x, None)]
    };
    assert_matches_cpu("jnp ints", gpu, &[i], 0.0, g);
    let b = rng.array(DType::Bool, &[7, 300]);
    let h = |a: &[Array]| {
        let x = &a[0];
        vec![jnp::all(x), jnp::any_axes(x, 1, false), jnp::all_axes(x, 0, true), x.sum()]
    };
    assert_matches_cpu("jnp bools", gpu, &[b], 0.0, h);
}

#[test]
fn a_float_sum_gives_the_same_bits_every_run() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0006);
    let x = device_put(&data(&mut rng, DType::F32, &[1 << 20], false, false), gpu);
    let rows = device_put(&data(&mut rng, DType::F32, &[300, 200], false, false), gpu);
    let bits =
        |a: &Array| a.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let runs: Vec<(Vec<u32>, Vec<u32>)> =
        (0..2).map(|_| (bits(&x.sum()), bits(&jnp::sum_axes(&rows, 1, false)))).collect();
    assert_eq!(runs[0], runs[1]);
}

// Polynomial losses, so the comparison tests the reductions' rules rather than the
// elementwise approximations of transcendental functions.
#[grad]
fn sum_loss(x: &Array) -> Array {
    (x * x * x - x * 2.0).sum()
}

#[grad]
fn max_loss(x: &Array) -> Array {
    (jnp::max_axes(x, 1, false) * 3.0).sum() + jnp::cumsum(x, Some(0)).sum()
}

#[test]
fn gradients_of_sums_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0007);
    let x = data(&mut rng, DType::F32, &[4, 300], false, false);
    assert_matches_cpu("grad of a sum", gpu, std::slice::from_ref(&x), 1e-6, |a| {
        vec![sum_loss(&a[0])]
    });
    assert_matches_cpu("grad of a max", gpu, &[x], 1e-6, |a| vec![max_loss(&a[0])]);
}

#[test]
fn a_reduction_of_an_unsupported_dtype_says_so() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let x = device_put(&Array::from_shape_vec([3], vec![1i64, 2, 3]), gpu);
    let message = panic_of(|| bind1(&Reduce { op: ReduceOp::Sum, axes: vec![0] }, &[&x]));
    assert!(message.contains("reduce_sum") && message.contains("int64"), "{message}");
}

// Groups of `#[jit]` closed by a reduction: on the GPU each runs as one kernel that folds
// the group's values as it computes them (see `DevicePlan`), in the order of the reduction
// on its own.
#[jit]
fn sum_of_exp_times(x: &Array, y: &Array, axis: usize) -> Array {
    jnp::sum_axes(&(x.exp() * y), axis, false)
}

#[jit]
fn max_and_values(x: &Array, axis: usize) -> (Array, Array) {
    let e = ((x - 0.5).tanh() * 2.0).exp();
    (jnp::max_axes(&e, axis, true), e)
}

#[jit]
fn integer_folds(i: &Array, j: &Array) -> (Array, Array) {
    let v = i * 3 + j;
    (jnp::sum_axes(&v, 0, false), jnp::prod_axes(&(&v - j), 0, false))
}

#[jit]
fn any_above(x: &Array, axis: usize) -> Array {
    jnp::any_axes(&x.gt(0.25), axis, false)
}

/// The fused reductions' cases: shapes and the axis folded, with empty and length-1 axes,
/// folds along the last axis, the first and one between, short (one loop per output) and
/// long (a workgroup tree per output).
const FUSED_CASES: [(&[usize], usize); 11] = [
    (&[0, 5], 1),
    (&[5, 0], 1),
    (&[5, 0], 0),
    (&[1, 1], 0),
    (&[1, 7], 1),
    (&[7, 1], 1),
    (&[3, 300], 1),
    (&[300, 3], 0),
    (&[4, 5, 6], 1),
    (&[2, 600, 3], 1),
    (&[5, 3, 2], 0),
];

/// The bits of a float array.
fn bits(a: &Array) -> Vec<u32> {
    a.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn fused_reductions_match_the_cpu_and_the_unfused_ops() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0008);
    for (shape, axis) in FUSED_CASES {
        let x = data(&mut rng, DType::F32, shape, false, false);
        let y = data(&mut rng, DType::F32, shape, false, false);
        let what = format!("{shape:?} over axis {axis}");
        let args = [x, y];
        // A max over no elements has no value.
        let has_max = shape[axis] > 0;
        assert_matches_cpu(&what, gpu, &args, FLOAT_SUM, |a| {
            let mut out = vec![sum_of_exp_times(&a[0], &a[1], axis), any_above(&a[1], axis)];
            if has_max {
                let (m, e) = max_and_values(&a[0], axis);
                out.extend([m, e]);
            }
            out
        });
        // The fused kernel folds the same values in the same order as the ops one by one.
        let (x, y) = (device_put(&args[0], gpu), device_put(&args[1], gpu));
        let fused = sum_of_exp_times(&x, &y, axis);
        let unfused = jnp::sum_axes(&(x.exp() * &y), axis, false);
        assert_eq!(bits(&fused), bits(&unfused), "{what}");
        if has_max {
            let (m, e) = max_and_values(&x, axis);
            let e1 = ((&x - 0.5).tanh() * 2.0).exp();
            assert_eq!(bits(&e), bits(&e1), "{what}");
            assert_eq!(bits(&m), bits(&jnp::max_axes(&e1, axis, true)), "{what}");
        }
        // And gives the same bits every run.
        assert_eq!(bits(&sum_of_exp_times(&x, &y, axis)), bits(&fused), "{what}");
    }
}

#[test]
fn fused_integer_reductions_match_the_cpu_bit_for_bit() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(0x5eed_0009);
    for shape in [&[0, 4][..], &[1, 1], &[9, 4], &[700, 3], &[3, 400, 2]] {
        let i = rng.array(DType::I32, shape);
        let j = rng.array(DType::I32, shape);
        assert_matches_cpu(&format!("{shape:?}"), gpu, &[i, j], 0.0, |a| {
            let (s, m) = integer_folds(&a[0], &a[1]);
            vec![s, m]
        });
    }
}

#[test]
fn reductions_of_arrays_larger_than_one_binding() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    // 300 MB of f32, more than lavapipe's 128 MiB per binding: the kernels bind it in
    // chunks. Small integers keep every sum exact in f32, so any order gives the same bits.
    let rows = 25_000_000;
    let values: Vec<f32> = (0..rows * 3).map(|i| ((i * 7) % 5) as f32).collect();
    let host = Array::from_shape_vec([rows, 3], values);
    let x = device_put(&host, gpu);
    let want = jnp::sum_axes(&host, 1, false).to_vec::<f32>().unwrap();
    assert!(jnp::sum_axes(&x, 1, false).to_vec::<f32>().unwrap() == want, "sum of rows");
    let columns = jnp::max_axes(&x, 0, false);
    assert_eq!(columns.to_vec::<f32>().unwrap(), vec![4.0, 4.0, 4.0]);
    let want = jnp::argmax_axis(&host, 1, false).to_vec::<i32>().unwrap();
    assert!(jnp::argmax_axis(&x, 1, false).to_vec::<i32>().unwrap() == want, "argmax of rows");
}
