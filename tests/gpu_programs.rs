//! Programs on the GPU backend (feature `gpu`) against the CPU: every shape operation
//! (reshape, transpose, broadcast, slice, rev, concatenate, pad) on random shapes and every
//! kernel dtype, and the transforms over GPU arrays — `#[jit]`, `#[grad]`, `#[vmap]`,
//! `lax::cond` and `lax::while_loop` — whose programs run where their operands are.
#![cfg(feature = "gpu")]

use rjax::device::device_put;
use rjax::lax;
use rjax::prelude::*;
use rjax::primitives::{bind1, BroadcastInDim, Concatenate, Pad, Rev, Slice, Transpose};
use rjax::transform::ad::api::jvp_of;

mod common;
use common::gpu::{assert_matches_cpu, gpu, Rng};

const DTYPES: [DType; 4] = [DType::F32, DType::I32, DType::U32, DType::Bool];

/// A random shape of rank `rank` with extents 0 to 5 (0 one time in eight).
fn shape(rng: &mut Rng, rank: usize) -> Vec<usize> {
    (0..rank).map(|_| if rng.below(8) == 0 { 0 } else { 1 + rng.below(5) }).collect()
}

/// A random permutation of `0..n`.
fn permutation(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        p.swap(i, rng.below(i + 1));
    }
    p
}

#[test]
fn transpose_reshape_and_rev_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(11);
    for case in 0..120 {
        let dtype = DTYPES[case % 4];
        let rank = rng.below(5);
        let s = shape(&mut rng, rank);
        let x = rng.array(dtype, &s);
        let perm = permutation(&mut rng, rank);
        let flipped: Vec<usize> = (0..rank).filter(|_| rng.below(2) == 0).collect();
        let what = format!("case {case}: {dtype}{:?} perm {perm:?} rev {flipped:?}", x.shape());
        assert_matches_cpu(&what, gpu, &[x], 0.0, |a| {
            let t = bind1(&Transpose { permutation: perm.clone() }, &[&a[0]]);
            let r = bind1(&Rev { dimensions: flipped.clone() }, &[&t]);
            vec![t.clone(), r.reshape([-1]), r]
        });
    }
}

#[test]
fn broadcast_and_slice_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(12);
    for case in 0..120 {
        let dtype = DTYPES[case % 4];
        let rank = rng.below(4);
        let extra = rng.below(2);
        let out = shape(&mut rng, rank + extra);
        // Operand axes map to increasing output axes; each is the output's extent or 1.
        let mut dims: Vec<usize> = (0..out.len()).filter(|_| rng.below(3) != 0).collect();
        dims.truncate(rank);
        let x_shape: Vec<usize> =
            dims.iter().map(|&d| if rng.below(3) == 0 { 1 } else { out[d] }).collect();
        let x = rng.array(dtype, &x_shape);
        let start: Vec<usize> = out.iter().map(|&n| rng.below(n + 1)).collect();
        let limit: Vec<usize> =
            start.iter().zip(&out).map(|(&s, &n)| s + rng.below(n - s + 1)).collect();
        let strides: Vec<usize> = out.iter().map(|_| 1 + rng.below(3)).collect();
        let what = format!("case {case}: {dtype}{x_shape:?} to {out:?} at {dims:?}, slice {start:?}..{limit:?} by {strides:?}");
        assert_matches_cpu(&what, gpu, &[x], 0.0, |a| {
            let b = BroadcastInDim { shape: out.clone(), broadcast_dimensions: dims.clone() };
            let b = bind1(&b, &[&a[0]]);
            let s = Slice {
                start_indices: start.clone(),
                limit_indices: limit.clone(),
                strides: strides.clone(),
            };
            vec![bind1(&s, &[&b]), b]
        });
    }
}

#[test]
fn concatenate_and_pad_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(13);
    for case in 0..120 {
        let dtype = DTYPES[case % 4];
        let rank = 1 + rng.below(3);
        let base = shape(&mut rng, rank);
        let axis = rng.below(rank);
        let parts: Vec<Array> = (0..1 + rng.below(3))
            .map(|_| {
                let mut s = base.clone();
                s[axis] = rng.below(4);
                rng.array(dtype, &s)
            })
            .collect();
        let value = rng.array(dtype, &[]);
        let mut joined = base.clone();
        joined[axis] = parts.iter().map(|p| p.shape()[axis]).sum();
        let low: Vec<i64> = (0..rank).map(|_| rng.below(5) as i64 - 2).collect();
        let interior: Vec<usize> = (0..rank).map(|_| rng.below(3)).collect();
        // High padding crops at most what the rest leaves, so every output extent is >= 0.
        let high: Vec<i64> = (0..rank)
            .map(|d| {
                let n = joined[d] as i64;
                let rest = low[d] + n + (n - 1).max(0) * interior[d] as i64;
                (rng.below(5) as i64 - 2).max(-rest)
            })
            .collect();
        let pad = Pad { low, high, interior };
        let mut args = parts.clone();
        args.push(value);
        let what = format!(
            "case {case}: {dtype}, {} parts of {base:?} along {axis}, {pad:?}",
            parts.len()
        );
        assert_matches_cpu(&what, gpu, &args, 0.0, |a| {
            let (parts, value) = a.split_at(a.len() - 1);
            let refs: Vec<&Array> = parts.iter().collect();
            let joined = bind1(&Concatenate { dimension: axis }, &refs);
            vec![bind1(&pad, &[&joined, &value[0]]), joined]
        });
    }
}

#[jit]
fn layer(w: &Array, x: &Array) -> Array {
    let y = (x * w).tanh() + 1.0;
    jnp::concatenate(&[&y, &y.flip(0)], 0).reshape([2, -1]).transpose(None)
}

#[test]
fn jit_runs_on_gpu_arguments() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(14);
    let (w, x) = (rng.array(DType::F32, &[6]), rng.array(DType::F32, &[6]));
    assert_matches_cpu("jit layer", gpu, &[w, x], 1e-6, |a| vec![layer(&a[0], &a[1])]);
}

#[vmap(in_axes = 0)]
fn flip_rows(r: &Array) -> Array {
    r.flip(0).expand_dims(0).transpose(None)
}

#[test]
fn vmap_and_jvp_run_on_gpu_arguments() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(15);
    let m = rng.array(DType::F32, &[3, 4]);
    assert_matches_cpu("vmap", gpu, &[m], 0.0, |a| vec![flip_rows(&a[0])]);
    let x = rng.array(DType::F32, &[6]);
    assert_matches_cpu("jvp", gpu, &[x.clone(), jnp::ones_like(&x)], 1e-6, |a| {
        let (y, t) = jvp_of(|v| (v * v).sin().flip(0), &a[0], &a[1]);
        vec![y, t]
    });
}

#[test]
fn cond_and_while_loop_run_on_gpu_arguments() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let x = jnp::arange(5.0);
    assert_matches_cpu("cond", gpu, std::slice::from_ref(&x), 0.0, |a| {
        let pick =
            |p: bool| lax::cond(p, |v: Array| v.flip(0) * 2.0, |v: Array| v + 1.0, a[0].clone());
        vec![pick(true), pick(false)]
    });
    assert_matches_cpu("while_loop", gpu, &[x, Array::from(0i32)], 0.0, |a| {
        let start = (a[0].clone(), a[1].clone());
        let (v, i) = lax::while_loop(
            |(_, i): &(Array, Array)| i.lt(4),
            |(v, i): (Array, Array)| (v.flip(0) * 2.0 + 1.0, i + 1),
            start,
        );
        vec![v, i]
    });
}

#[test]
fn gather_and_scatter_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::primitives::{Gather, IndexMode, Scatter, ScatterOp};
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(16);
    let ops = [ScatterOp::Set, ScatterOp::Add, ScatterOp::Mul, ScatterOp::Min, ScatterOp::Max];
    for case in 0..160 {
        let dtype = DTYPES[case % 4];
        let rank = 1 + rng.below(3);
        let s = shape(&mut rng, rank);
        let x = rng.array(dtype, &s);
        let axis = rng.below(rank);
        let n = s[axis] as i64;
        let index_rank = rng.below(3);
        let idx_shape: Vec<usize> = (0..index_rank).map(|_| rng.below(4)).collect();
        let count: usize = idx_shape.iter().product();
        // In bounds, negative, and out of bounds on both sides; repeats are likely.
        let raw: Vec<i64> =
            (0..count).map(|_| rng.below((2 * n + 5) as usize) as i64 - n - 2).collect();
        let unsigned = case % 3 == 0;
        let idx = if unsigned {
            Array::from_shape_vec(
                &idx_shape[..],
                raw.iter().map(|&i| i.unsigned_abs() as u32).collect(),
            )
        } else {
            Array::from_shape_vec(&idx_shape[..], raw.iter().map(|&i| i as i32).collect())
        };
        let mut upd_shape = s.clone();
        upd_shape.splice(axis..=axis, idx_shape.iter().copied());
        let updates = rng.array(dtype, &upd_shape);
        // Clamping into an empty axis is refused by the shape rule.
        let mode = if case % 2 == 0 && n > 0 { IndexMode::Clip } else { IndexMode::FillOrDrop };
        let op = ops[(case / 2) % 5];
        let what = format!(
            "case {case}: {dtype}{s:?} axis {axis} indices {idx_shape:?} {raw:?} {mode:?} {op:?}"
        );
        assert_matches_cpu(&what, gpu, &[x, idx, updates], 0.0, |a| {
            let g = bind1(&Gather { axis, mode }, &[&a[0], &a[1]]);
            let sc = bind1(&Scatter { axis, op, mode }, &[&a[0], &a[1], &a[2]]);
            vec![g, sc]
        });
    }
}

#[test]
fn jnp_indexing_runs_on_the_gpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let x = jnp::arange(12.0).reshape([3, 4]);
    let idx = jnp::array([2, -1, 0, 7]);
    assert_matches_cpu("take", gpu, &[x.clone(), idx.clone()], 0.0, |a| {
        vec![
            a[0].take(&a[1], Some(1)),
            a[0].take(&a[1], None),
            a[0].at(s![.., &a[1]]).add(1.5),
            a[0].at(s![1]).set(-2.0),
            a[0].slice(s![&a[1]]),
            jnp::take_along_axis(&a[0], &a[1].reshape([1, 4]), 0),
        ]
    });
}

#[test]
fn convolutions_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::primitives::{ConvDimensionNumbers, ConvGeneralDilated};
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(17);
    let layouts = [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NHWC", "OIHW", "NCHW")];
    for case in 0..60 {
        let (groups, batch_groups) = match case % 5 {
            3 => (2, 1),
            4 => (1, 2),
            _ => (1, 1),
        };
        let batch = batch_groups * (1 + rng.below(2));
        let in_features = groups * (1 + rng.below(3));
        let out_features = groups * batch_groups * (1 + rng.below(3));
        let window = [1 + rng.below(3), 1 + rng.below(3)];
        let input = [window[0] + rng.below(5), window[1] + rng.below(5)];
        let (l, r, o) = layouts[case % 3];
        let numbers = ConvDimensionNumbers::parse(l, r, o).unwrap();
        let conv = ConvGeneralDilated {
            window_strides: vec![1 + rng.below(2), 1 + rng.below(2)],
            padding: (0..2).map(|_| (rng.below(3) as i64 - 1, rng.below(3) as i64)).collect(),
            lhs_dilation: vec![1 + rng.below(2), 1],
            rhs_dilation: vec![1, 1 + rng.below(2)],
            dimension_numbers: numbers.clone(),
            feature_group_count: groups,
            batch_group_count: batch_groups,
        };
        // Operands laid out as their specs say: spec[j] is the axis holding dimension j.
        let laid_out = |canonical: [usize; 4], spec: &[usize]| {
            let mut shape = [0; 4];
            for (j, &axis) in spec.iter().enumerate() {
                shape[axis] = canonical[j];
            }
            shape
        };
        let lhs_shape = laid_out([batch, in_features, input[0], input[1]], &numbers.lhs_spec);
        let rhs_shape =
            laid_out([out_features, in_features / groups, window[0], window[1]], &numbers.rhs_spec);
        // Convolutions are defined for floats (the shape rule refuses integers).
        let (lhs, rhs) = (rng.array(DType::F32, &lhs_shape), rng.array(DType::F32, &rhs_shape));
        let what = format!("case {case}: {lhs_shape:?} * {rhs_shape:?} {conv:?}");
        assert_matches_cpu(&what, gpu, &[lhs, rhs], 1e-5, |a| vec![bind1(&conv, &[&a[0], &a[1]])]);
    }
}

#[test]
fn scan_runs_on_gpu_arguments() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(18);
    let xs = rng.array(DType::F32, &[5, 3]);
    let init = rng.array(DType::F32, &[3]);
    assert_matches_cpu("scan", gpu, &[init, xs], 1e-6, |a| {
        let (carry, ys) = lax::scan(
            |c: Array, x: Array| {
                let next = (&c * 0.5 + x).tanh();
                (next.clone(), next.flip(0) * 2.0)
            },
            a[0].clone(),
            a[1].clone(),
        );
        vec![carry, ys]
    });
}

#[jit]
fn fused_chain(x: &Array, row: &Array, flags: &Array) -> (Array, Array) {
    let y = (x * row).tanh() + 1.0;
    let z = jnp::where_(flags, y.exp(), -&y);
    ((&z * &z + 1.0).sqrt() / (&y + 2.0), y.lt(1.5))
}

#[test]
fn fused_kernels_equal_unfused_and_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(19);
    let x = rng.array(DType::F32, &[64, 33]);
    let row = rng.array(DType::F32, &[33]);
    let flags = rng.array(DType::Bool, &[64, 1]);
    let args = [x, row, flags];
    assert_matches_cpu("fused", gpu, &args, 1e-6, |a| {
        let (p, q) = fused_chain(&a[0], &a[1], &a[2]);
        vec![p, q]
    });
    // Fused and one kernel per operation agree bit for bit on the device: the fused kernel
    // calls the same expressions.
    let placed: Vec<Array> = args.iter().map(|a| device_put(a, gpu)).collect();
    let (fused, _) = fused_chain(&placed[0], &placed[1], &placed[2]);
    let y = (&placed[0] * &placed[1]).tanh() + 1.0;
    let z = jnp::where_(&placed[2], y.exp(), -&y);
    let eager = (&z * &z + 1.0).sqrt() / (&y + 2.0);
    let bits =
        |a: &Array| a.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&fused), bits(&eager));
    // IEEE's square root of -0 is -0.
    let zero = device_put(&jnp::array([-0.0f32, 0.0]), gpu).sqrt();
    assert_eq!(bits(&zero), vec![(-0.0f32).to_bits(), 0]);
}

#[test]
fn fused_wgsl_snapshot() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::backend::{ElementwiseGroup, ElementwiseOp, GroupOp, GroupValue};
    use rjax::primitives::{BinaryOp, UnaryOp};
    let group = ElementwiseGroup {
        ops: vec![
            GroupOp {
                op: ElementwiseOp::Binary(BinaryOp::Mul),
                args: vec![GroupValue::Operand(0), GroupValue::Operand(1)],
                dtype: DType::F32,
            },
            GroupOp {
                op: ElementwiseOp::Unary(UnaryOp::Tanh),
                args: vec![GroupValue::Op(0)],
                dtype: DType::F32,
            },
            GroupOp {
                op: ElementwiseOp::Binary(BinaryOp::Lt),
                args: vec![GroupValue::Op(1), GroupValue::Operand(1)],
                dtype: DType::Bool,
            },
        ],
        outputs: vec![GroupValue::Op(1), GroupValue::Op(2)],
        reduction: None,
    };
    let wgsl =
        rjax::backend::fused_wgsl(&group, &[(DType::F32, &[4, 3]), (DType::F32, &[3])], &[4, 3]);
    snapshot("gpu_fused_tanh.wgsl", &wgsl);
}

/// Checks `wgsl` against `tests/data/{name}` (written instead with `RJAX_UPDATE_SNAPSHOTS=1`).
fn snapshot(name: &str, wgsl: &str) {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("RJAX_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(&path, wgsl).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        wgsl, want,
        "the generated shader changed; rerun with RJAX_UPDATE_SNAPSHOTS=1 to accept it"
    );
}

#[test]
fn fused_reduction_wgsl_snapshots() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::backend::{ElementwiseGroup, ElementwiseOp, GroupOp, GroupReduction, GroupValue};
    use rjax::primitives::{BinaryOp, ReduceOp, UnaryOp};
    let op = |op, args: &[GroupValue], dtype| GroupOp { op, args: args.to_vec(), dtype };
    // sum(exp(x) * y, axis=1) over [4, 300]: a workgroup tree per row.
    let sum_exp = ElementwiseGroup {
        ops: vec![
            op(ElementwiseOp::Unary(UnaryOp::Exp), &[GroupValue::Operand(0)], DType::F32),
            op(
                ElementwiseOp::Binary(BinaryOp::Mul),
                &[GroupValue::Op(0), GroupValue::Operand(1)],
                DType::F32,
            ),
        ],
        outputs: vec![],
        reduction: Some(GroupReduction {
            op: ReduceOp::Sum,
            axes: vec![1],
            input: GroupValue::Op(1),
            shape: vec![4, 300],
        }),
    };
    let shape = [4, 300];
    let wgsl =
        rjax::backend::fused_wgsl(&sum_exp, &[(DType::F32, &shape), (DType::F32, &shape)], &shape);
    snapshot("gpu_fused_sum_exp.wgsl", &wgsl);
    // max(x - row, axis=0) over [5, 3], also writing x - row: one loop per column.
    let max_cols = ElementwiseGroup {
        ops: vec![op(
            ElementwiseOp::Binary(BinaryOp::Sub),
            &[GroupValue::Operand(0), GroupValue::Operand(1)],
            DType::F32,
        )],
        outputs: vec![GroupValue::Op(0)],
        reduction: Some(GroupReduction {
            op: ReduceOp::Max,
            axes: vec![0],
            input: GroupValue::Op(0),
            shape: vec![5, 3],
        }),
    };
    let wgsl =
        rjax::backend::fused_wgsl(&max_cols, &[(DType::F32, &[5, 3]), (DType::F32, &[3])], &[5, 3]);
    snapshot("gpu_fused_max_columns.wgsl", &wgsl);
}

#[test]
fn key_operations_run_on_a_gpu_key() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::random;
    let Some((gpu, _lock)) = gpu() else { return };
    let data = random::key_data(&random::key(42));
    assert_matches_cpu("key operations", gpu, &[data], 0.0, |a| {
        let key = random::wrap_key_data(&a[0]);
        let keys = random::split(&key, 3);
        vec![
            random::key_data(&keys),
            random::key_data(&random::fold_in(&key, 7)),
            random::bits(&keys.get(1), [4, 5]),
        ]
    });
}

/// The float samplers on a key placed on a GPU, against the host's draws: the standard
/// samplers within a few ulps (the GPU's `erf_inv`, `log` and `log1p` are XLA's polynomials,
/// as the host's, but lavapipe does not fuse their multiply-adds), `uniform` exactly, and the
/// samples stay on the GPU.
#[test]
fn float_samplers_run_on_a_gpu_key() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::random;
    let Some((gpu, _lock)) = gpu() else { return };
    let data = random::key_data(&random::key(7));
    let draws = |a: &[Array]| {
        let key = random::wrap_key_data(&a[0]);
        let keys = random::split(&key, 6);
        vec![
            random::uniform(&keys.get(0), [3, 1000]),
            random::normal(&keys.get(1), [4099]),
            random::exponential(&keys.get(2), [4099]),
            random::gumbel(&keys.get(3), [4099]),
            random::truncated_normal(&keys.get(4), -1.5, 2.0, [4099]),
            random::bernoulli(&keys.get(5), 0.3, [257]),
        ]
    };
    assert_matches_cpu("float samplers", gpu, std::slice::from_ref(&data), 4e-7, draws);
    let key_on_gpu = random::wrap_key_data(&device_put(&data, gpu));
    let exact = random::uniform(&key_on_gpu, [3, 1000]).to_vec::<f32>().unwrap();
    let host = random::uniform(&random::wrap_key_data(&data), [3, 1000]);
    assert_eq!(exact, host.to_vec::<f32>().unwrap(), "uniform is exact on a GPU");
}

/// Bounds placed on the GPU with a key on the host: the draw meets them there.
#[test]
fn uniform_bounds_on_a_gpu_draw_there() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::random;
    let Some((gpu, _lock)) = gpu() else { return };
    let key = random::key(3);
    let lo = Array::from_shape_vec([4], vec![-2f32, 0.0, 1.0, 5.0]);
    let hi = Array::from_shape_vec([4], vec![-1f32, 0.5, 4.0, 9.0]);
    let want = random::uniform_range(&key, [2, 4], &lo, &hi).to_vec::<f32>().unwrap();
    let got = random::uniform_range(&key, [2, 4], device_put(&lo, gpu), device_put(&hi, gpu));
    assert_eq!(got.device(), gpu);
    for (w, g) in want.iter().zip(got.to_vec::<f32>().unwrap()) {
        assert!((w - g).abs() <= 1e-6 * w.abs().max(1.0), "cpu {w}, gpu {g}");
    }
}

#[jit]
fn layer_and_norms(w: &Array, x: &Array, b: &Array) -> (Array, Array) {
    let h = (jnp::matmul(x, w) + b).tanh();
    let norms = jnp::sum_axes(&(&h * &h), 1, false).sqrt();
    (h.transpose(None), norms)
}

#[jit]
fn doubled_five_times(x: &Array, i: &Array) -> Array {
    let (v, _) = lax::while_loop(
        |c: &(Array, Array)| c.1.lt(5),
        |c: (Array, Array)| (&c.0 * 2.0, &c.1 + 1),
        (x * 3.0, i.clone()),
    );
    v + 1.0
}

#[test]
fn a_jit_call_is_one_submission_and_makes_no_buffers_once_warm() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::device::{memory_stats, submissions};
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(23);
    let args = [
        rng.array(DType::F32, &[8, 5]),
        rng.array(DType::F32, &[16, 8]),
        rng.array(DType::F32, &[5]),
    ];
    assert_matches_cpu("layer and norms", gpu, &args, 1e-5, |a| {
        let (h, n) = layer_and_norms(&a[0], &a[1], &a[2]);
        vec![h, n]
    });
    let placed: Vec<Array> = args.iter().map(|a| device_put(a, gpu)).collect();
    let call = || layer_and_norms(&placed[0], &placed[1], &placed[2]);
    // The first calls compile the kernels and fill the allocator's cache.
    drop(call());
    drop(call());
    let (before, stats) = (submissions(gpu).unwrap(), memory_stats(gpu).unwrap());
    let outputs = call();
    assert_eq!(submissions(gpu).unwrap() - before, 1, "a call's steps are one submission");
    let created = memory_stats(gpu).unwrap().buffers_created - stats.buffers_created;
    assert_eq!(created, 0, "a warm call takes every buffer from the cache");
    drop(outputs);

    // Control flow reads its predicate back: one submission per read (the work before
    // it included), and one for the work after the loop.
    let (x, i) = (device_put(&jnp::arange(4.0), gpu), device_put(&Array::from(0i32), gpu));
    drop(doubled_five_times(&x, &i));
    let before = submissions(gpu).unwrap();
    let v = doubled_five_times(&x, &i);
    assert_eq!(submissions(gpu).unwrap() - before, 6 + 1);
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![1.0, 97.0, 193.0, 289.0]);
}
