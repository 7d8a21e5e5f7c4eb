//! `jax.numpy` and `jax.lax` functions composed of other operations, against JAX
//! (`tests/data/jnp_functions.json`, made by `tests/data/gen/jnp_functions.py`): diagonals,
//! traces, triangles, rolls, rotations, stacking, `atleast_*d`, `array_split`, `meshgrid`,
//! predicates, NaN-skipping reductions, statistics, products, convolutions, `polyval`,
//! `interp`, `digitize` and `bincount`; `lax`'s slices at traced positions, `slice`, `pad`,
//! `clamp`, `select_n` and window reductions. Every case runs eagerly, under `jit` (which must
//! agree bit for bit) and under `vmap` (a batch of two equals the two calls); the
//! differentiable ones also against JAX's gradient of `sum(output * weights)`, and a few
//! rules against f64 finite differences.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, leaf_to_array, panic_text};
use rjax::jnp::{ConvMode, Indexing};
use rjax::lax::WindowOp;
use rjax::prelude::*;
use serde_json::Value;

fn cases() -> &'static serde_json::Map<String, Value> {
    static DATA: OnceLock<Value> = OnceLock::new();
    let data = DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/jnp_functions.json")).expect("parses")
    });
    data["cases"].as_object().expect("a table of cases")
}

type Program = fn(&[Array]) -> Vec<Array>;

/// The rjax program of each golden case, by the case's name without its dtype suffix.
fn program(base: &str) -> Option<Program> {
    let p: Program = match base {
        "diag_vec_k-1" => |x| vec![jnp::diag(&x[0], -1)],
        "diag_vec_k0" => |x| vec![jnp::diag(&x[0], 0)],
        "diag_vec_k2" => |x| vec![jnp::diag(&x[0], 2)],
        "diag_mat_k-2" => |x| vec![jnp::diag(&x[0], -2)],
        "diag_mat_k0" | "diag_int32" => |x| vec![jnp::diag(&x[0], 0)],
        "diag_mat_k1" => |x| vec![jnp::diag(&x[0], 1)],
        "diag_mat_k5" => |x| vec![jnp::diag(&x[0], 5)],
        "diagonal" => |x| vec![jnp::diagonal(&x[0], 0, 0, 1)],
        "diagonal_m1" => |x| vec![jnp::diagonal(&x[0], -1, 0, 1)],
        "diagonal_3d" => |x| vec![jnp::diagonal(&x[0], 1, 0, 2)],
        "trace" | "trace_int32" => |x| vec![jnp::trace(&x[0], 0, 0, 1)],
        "trace_k1" => |x| vec![jnp::trace(&x[0], 1, 0, 1)],
        "trace_3d" => |x| vec![jnp::trace(&x[0], 0, 1, 2)],
        "tril" | "tril_int32" => |x| vec![jnp::tril(&x[0], 0)],
        "tril_m1" => |x| vec![jnp::tril(&x[0], -1)],
        "triu_1" => |x| vec![jnp::triu(&x[0], 1)],
        "tril_3d" => |x| vec![jnp::tril(&x[0], 1)],
        "roll_flat" => |x| vec![jnp::roll(&x[0], 2, None)],
        "roll_axis0" => |x| vec![jnp::roll(&x[0], -1, Some(0))],
        "roll_axis1" => |x| vec![jnp::roll(&x[0], 5, Some(1))],
        "roll_int32" => |x| vec![jnp::roll(&x[0], 1, Some(1))],
        "rot90_1" => |x| vec![jnp::rot90(&x[0], 1, (0, 1))],
        "rot90_2" => |x| vec![jnp::rot90(&x[0], 2, (0, 1))],
        "rot90_3" => |x| vec![jnp::rot90(&x[0], 3, (0, 1))],
        "rot90_-1" => |x| vec![jnp::rot90(&x[0], -1, (0, 1))],
        "rot90_axes12" => |x| vec![jnp::rot90(&x[0], 1, (1, 2))],
        "hstack_vec" | "hstack_mat" => |x| vec![jnp::hstack(x)],
        "vstack_vec" | "vstack_mat" => |x| vec![jnp::vstack(x)],
        "column_stack_vec" | "column_stack_mat" => |x| vec![jnp::column_stack(x)],
        "atleast_1d_scalar" | "atleast_1d_vec" | "atleast_1d_mat" => {
            |x| vec![jnp::atleast_1d(&x[0])]
        }
        "atleast_2d_scalar" | "atleast_2d_vec" | "atleast_2d_mat" => {
            |x| vec![jnp::atleast_2d(&x[0])]
        }
        "atleast_3d_scalar" | "atleast_3d_vec" | "atleast_3d_mat" => {
            |x| vec![jnp::atleast_3d(&x[0])]
        }
        "array_split" => |x| jnp::array_split(&x[0], 3, 0),
        "array_split_axis1" => |x| jnp::array_split(&x[0], 3, 1),
        "meshgrid_xy" => |x| jnp::meshgrid(&[&x[0], &x[1]], Indexing::Xy),
        "meshgrid_ij" => |x| jnp::meshgrid(&[&x[0], &x[1]], Indexing::Ij),
        "isinf" | "isinf_int32" => |x| vec![jnp::isinf(&x[0])],
        "isneginf" => |x| vec![jnp::isneginf(&x[0])],
        "isposinf" => |x| vec![jnp::isposinf(&x[0])],
        "heaviside" => |x| vec![jnp::heaviside(&x[0], 0.5)],
        "isclose" => |x| vec![jnp::isclose(&x[0], &x[1], 1e-5, 1e-8, false)],
        "isclose_nan" => |x| vec![jnp::isclose(&x[0], &x[1], 1e-3, 1e-6, true)],
        "allclose_false" => |x| vec![jnp::allclose(&x[0], &x[1], 1e-5, 1e-8, false)],
        "allclose_true" => |x| vec![jnp::allclose(&x[0], &x[1], 1e-2, 1e-8, false)],
        "array_equal_true" | "array_equal_false" | "array_equal_shapes" => {
            |x| vec![jnp::array_equal(&x[0], &x[1], false)]
        }
        "nansum_all" | "nansum_allnan" => |x| vec![jnp::nansum(&x[0])],
        "nansum_axis0" | "nansum_int32" => |x| vec![jnp::nansum_axes(&x[0], 0, false)],
        "nansum_axis1_keep" => |x| vec![jnp::nansum_axes(&x[0], 1, true)],
        "nanprod_all" => |x| vec![jnp::nanprod(&x[0])],
        "nanprod_axis0" => |x| vec![jnp::nanprod_axes(&x[0], 0, false)],
        "nanprod_axis1_keep" => |x| vec![jnp::nanprod_axes(&x[0], 1, true)],
        "nanmax_all" | "nanmax_allnan" => |x| vec![jnp::nanmax(&x[0])],
        "nanmax_axis0" => |x| vec![jnp::nanmax_axes(&x[0], 0, false)],
        "nanmax_axis1_keep" => |x| vec![jnp::nanmax_axes(&x[0], 1, true)],
        "nanmin_all" => |x| vec![jnp::nanmin(&x[0])],
        "nanmin_axis0" => |x| vec![jnp::nanmin_axes(&x[0], 0, false)],
        "nanmin_axis1_keep" => |x| vec![jnp::nanmin_axes(&x[0], 1, true)],
        "nanmean_all" | "nanmean_allnan" => |x| vec![jnp::nanmean(&x[0])],
        "nanmean_axis0" => |x| vec![jnp::nanmean_axes(&x[0], 0, false)],
        "nanmean_axis1_keep" => |x| vec![jnp::nanmean_axes(&x[0], 1, true)],
        "average" => |x| vec![jnp::average(&x[0], Axes::All, None, false)],
        "average_axis1" => |x| vec![jnp::average(&x[0], 1, None, false)],
        "average_int32" => |x| vec![jnp::average(&x[0], 0, None, false)],
        "average_weights" => |x| vec![jnp::average(&x[0], 1, Some(&x[1]), false)],
        "average_weights_all" => |x| vec![jnp::average(&x[0], Axes::All, Some(&x[1]), false)],
        "ptp" => |x| vec![jnp::ptp(&x[0], Axes::All, false)],
        "ptp_axis0" => |x| vec![jnp::ptp(&x[0], 0, false)],
        "ptp_int32" => |x| vec![jnp::ptp(&x[0], 1, false)],
        "cov" | "cov_vec" => |x| vec![jnp::cov(&x[0], true)],
        "cov_cols" => |x| vec![jnp::cov(&x[0], false)],
        "corrcoef" => |x| vec![jnp::corrcoef(&x[0], true)],
        "corrcoef_cols" => |x| vec![jnp::corrcoef(&x[0], false)],
        "inner_vec" | "inner_mat" => |x| vec![jnp::inner(&x[0], &x[1])],
        "vdot" => |x| vec![jnp::vdot(&x[0], &x[1])],
        "kron" | "kron_vec_mat" | "kron_int32" => |x| vec![jnp::kron(&x[0], &x[1])],
        "cross" | "cross_bcast" | "cross_int32" => |x| vec![jnp::cross(&x[0], &x[1])],
        "polyval" => |x| vec![jnp::polyval(&x[0], &x[1])],
        "convolve_full" => |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Full)],
        "convolve_same" | "convolve_long_kernel" => {
            |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Same)]
        }
        "convolve_valid" => |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Valid)],
        "correlate_full" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Full)],
        "correlate_same" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Same)],
        "correlate_valid" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Valid)],
        "digitize" | "digitize_desc" => |x| vec![jnp::digitize(&x[0], &x[1], false)],
        "digitize_right" => |x| vec![jnp::digitize(&x[0], &x[1], true)],
        "interp" => |x| vec![jnp::interp(&x[0], &x[1], &x[2], None, None)],
        "interp_left_right" => |x| vec![jnp::interp(&x[0], &x[1], &x[2], Some(-7.0), Some(9.0))],
        "bincount" => |x| vec![jnp::bincount(&x[0], None, 7)],
        "bincount_short" => |x| vec![jnp::bincount(&x[0], None, 3)],
        "bincount_weights" => |x| vec![jnp::bincount(&x[0], Some(&x[1]), 6)],
        "lax_dynamic_slice" => |x| vec![lax::dynamic_slice(&x[0], &x[1..3], [2, 2])],
        "lax_dynamic_slice_clamped" => |x| vec![lax::dynamic_slice(&x[0], &x[1..3], [2, 3])],
        "lax_dynamic_slice_int32" => {
            |x| vec![lax::dynamic_slice(&x[0], &[x[1].clone(), x[1].clone()], [2, 3])]
        }
        "lax_dynamic_update_slice" | "lax_dynamic_update_slice_neg" => {
            |x| vec![lax::dynamic_update_slice(&x[0], &x[1], &x[2..4])]
        }
        "lax_dynamic_index_in_dim" => |x| vec![lax::dynamic_index_in_dim(&x[0], &x[1], 1, false)],
        "lax_dynamic_slice_in_dim" => |x| vec![lax::dynamic_slice_in_dim(&x[0], &x[1], 2, 0)],
        "lax_dynamic_update_index_in_dim" => {
            |x| vec![lax::dynamic_update_index_in_dim(&x[0], &x[1], &x[2], 0)]
        }
        "lax_slice" => |x| vec![lax::slice(&x[0], [0, 1], [3, 4], Some(&[2, 2][..]))],
        "lax_pad" => |x| vec![lax::pad(&x[0], 0.5, &[(1, -1, 1), (0, 2, 0)])],
        "lax_pad_interior" => |x| vec![lax::pad(&x[0], -1.0, &[(-1, 2, 2), (2, -2, 1)])],
        "lax_clamp" => |x| vec![lax::clamp(-0.5, &x[0], 0.7)],
        "lax_select_n" => |x| vec![lax::select_n(&x[0], &x[1..4])],
        "lax_reduce_window_sum" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Sum, [1, 1, 2, 2], [1, 1, 2, 2], "VALID")]
        }
        "lax_reduce_window_max_same" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Max, [1, 1, 3, 3], [1, 1, 2, 2], "SAME")]
        }
        "lax_reduce_window_min_explicit" => |x| {
            let pads = [(0, 0), (0, 0), (1, 0), (0, 1)];
            vec![lax::reduce_window(&x[0], WindowOp::Min, [1, 1, 2, 3], [1, 1, 1, 2], pads)]
        },
        "lax_max_pool" => |x| vec![lax::max_pool(&x[0], [2, 2], [2, 2], "VALID")],
        "lax_avg_pool" => |x| vec![lax::avg_pool(&x[0], [3, 3], [1, 1], "SAME")],
        "lax_reduce_window_max_int32" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Max, [2, 2], [1, 2], "SAME")]
        }
        "lax_reduce_window_min_uint8" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Min, [3, 2], [2, 2], "SAME")]
        }
        _ => return None,
    };
    Some(p)
}

/// A case's name without its dtype suffix.
fn base(name: &str) -> &str {
    name.strip_suffix("_float32").or_else(|| name.strip_suffix("_float64")).unwrap_or(name)
}

fn leaves(case: &Value, key: &str) -> Vec<Array> {
    case[key].as_array().map_or_else(Vec::new, |l| l.iter().map(leaf_to_array).collect())
}

/// Tolerances for compositions of a few roundings (XLA may order them differently).
fn tolerance(x: &Array) -> (f64, f64) {
    match x.dtype() {
        DType::F32 => (1e-5, 1e-6),
        _ => (1e-12, 1e-13),
    }
}

/// Bit-for-bit equality, NaNs equal to NaNs.
#[track_caller]
fn assert_identical(what: &str, got: &Array, want: &Array) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let g = got.astype(DType::F64).to_vec::<f64>().unwrap();
    let w = want.astype(DType::F64).to_vec::<f64>().unwrap();
    let same =
        g.iter().zip(&w).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    assert!(same, "{what}: got {g:?}, want {w:?}");
}

#[test]
fn every_golden_case_has_a_program() {
    let missing: Vec<&String> = cases().keys().filter(|n| program(base(n)).is_none()).collect();
    assert!(missing.is_empty(), "golden cases without a program: {missing:?}");
    assert!(cases().len() > 250, "{} cases", cases().len());
}

#[test]
fn values_match_jax_eagerly_and_under_jit() {
    for (name, case) in cases() {
        let f = program(base(name)).expect("checked above");
        let inputs = leaves(case, "inputs");
        let want = leaves(case, "outputs");
        let got = f(&inputs);
        assert_eq!(got.len(), want.len(), "{name}: output count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let (rtol, atol) = tolerance(w);
            assert_close_as(&format!("{name}[{i}]"), g, w, rtol, atol);
        }
        let jitted = rjax::jit(move |xs: &Vec<Array>| f(xs))(&inputs);
        for (i, (j, g)) in jitted.iter().zip(&got).enumerate() {
            assert_identical(&format!("{name}[{i}] under jit"), j, g);
        }
    }
}

#[test]
fn gradients_match_jax() {
    let mut checked = 0;
    for (name, case) in cases() {
        if case["grads"].is_null() {
            continue;
        }
        let f = program(base(name)).expect("checked above");
        let inputs = leaves(case, "inputs");
        let weights = leaves(case, "weights");
        let floats: Vec<usize> =
            (0..inputs.len()).filter(|&i| inputs[i].dtype().is_float()).collect();
        let at: Vec<Array> = floats.iter().map(|&i| inputs[i].clone()).collect();
        let (all, positions, ws) = (inputs.clone(), floats.clone(), weights.clone());
        let loss = move |fl: &Vec<Array>| {
            let mut args = all.clone();
            for (&i, v) in positions.iter().zip(fl) {
                args[i] = v.clone();
            }
            let outs = f(&args);
            let terms: Vec<Array> = outs.iter().zip(&ws).map(|(o, w)| (o * w).sum()).collect();
            terms.iter().skip(1).fold(terms[0].clone(), |acc, t| acc + t)
        };
        let grads = rjax::grad(loss)(&at);
        let want = leaves(case, "grads");
        assert_eq!(grads.len(), want.len(), "{name}: gradient count");
        for (i, (g, w)) in grads.iter().zip(&want).enumerate() {
            let (rtol, atol) = tolerance(w);
            assert_close_as(&format!("{name}: gradient {i}"), g, w, rtol, atol);
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} gradients checked");
}

/// A second example for a batch: floats scaled by 1.5 (exact, keeping order, NaNs and
/// infinities), integers and bools as they are.
fn second_example(x: &Array) -> Array {
    if x.dtype().is_float() {
        x * 1.5
    } else {
        x.clone()
    }
}

#[test]
fn vmap_equals_each_example() {
    for (name, case) in cases() {
        let f = program(base(name)).expect("checked above");
        let first = leaves(case, "inputs");
        let second: Vec<Array> = first.iter().map(second_example).collect();
        let batch: Vec<Array> =
            first.iter().zip(&second).map(|(a, b)| jnp::stack(&[a, b], 0)).collect();
        let batched = rjax::vmap(move |xs: &Vec<Array>| f(xs), 0, 0)(&batch);
        let (one, two) = (f(&first), f(&second));
        for (i, b) in batched.iter().enumerate() {
            let want = jnp::stack(&[&one[i], &two[i]], 0);
            let (rtol, atol) = tolerance(&want);
            assert_close_as(&format!("{name}[{i}] under vmap"), b, &want, rtol, atol);
        }
    }
}

#[test]
fn derivative_rules_pass_finite_differences_in_f64() {
    let x = jnp::array([[0.3f64, -1.2, 0.7, 2.0], [1.1, 0.4, -0.6, 0.9], [-0.2, 1.7, 0.5, -1.4]]);
    let v = jnp::array([0.8f64, -0.3, 1.2]);
    let kernel = jnp::array([1.0f64, -2.0, 0.5]);
    let third = jnp::array([0.2f64, 0.9, -0.4]);
    let block = jnp::array([[1.0f64, 2.0], [-1.0, 0.5]]);
    let (xp, xi) = (jnp::array([-1.0f64, 0.0, 1.5]), jnp::array([-0.5f64, 0.7]));
    let tol = 1e-6;
    check_grads("corrcoef", &|x| jnp::corrcoef(x, true), &x, tol);
    check_grads("cov", &|x| jnp::cov(x, false), &x, tol);
    check_grads("diag of diagonal", &|x| jnp::diag(&jnp::diagonal(x, 1, 0, 1), -1), &x, tol);
    check_grads("convolve", &|x| jnp::convolve(&x.ravel(), &kernel, ConvMode::Same), &x, tol);
    check_grads("cross", &|x| jnp::cross(&x.slice(s![.., 0..3]), &third), &x, tol);
    check_grads("nanmean", &|x| jnp::nanmean_axes(x, 1, false), &x, tol);
    check_grads("kron", &|v| jnp::kron(v, &block), &v, tol);
    check_grads("polyval", &|v| jnp::polyval(&jnp::array([0.5f64, -1.0, 2.0]), v), &v, tol);
    check_grads("interp", &|v| jnp::interp(&xi, &xp, v, None, None), &v, tol);
    let at = [Array::from(1i32), Array::from(2i32)];
    check_grads("dynamic_slice", &|x| lax::dynamic_slice(x, &at, [2, 2]), &x, tol);
    let patch = jnp::array([[0.5f64, -1.0], [2.0, 0.25]]);
    check_grads("dynamic_update_slice", &|x| lax::dynamic_update_slice(x, &patch, &at), &x, tol);
    check_grads(
        "reduce_window",
        &|x| lax::reduce_window(x, WindowOp::Max, [2, 2], [1, 2], "SAME"),
        &x,
        tol,
    );
    check_grads("pad", &|x| lax::pad(x, 0.0, &[(1, -1, 1), (0, 1, 2)]), &x, tol);
}

/// A call that must panic.
type Refusal<'a> = Box<dyn Fn() + 'a>;

#[test]
fn bad_input_is_refused_naming_the_function() {
    let m = jnp::ones([2, 3]);
    let cases: [(&str, Refusal<'_>); 12] = [
        (
            "dynamic_slice: an operand of shape (2, 3) needs 2 start indices",
            Box::new(|| drop(lax::dynamic_slice(&m, &[Array::from(0i32)], [1, 1]))),
        ),
        (
            "reduce_window: an operand of shape (2, 3) needs 2 positive window dimensions",
            Box::new(|| drop(lax::reduce_window(&m, WindowOp::Max, [0, 1], [1, 1], "VALID"))),
        ),
        (
            "select_n: every case must have one shape and dtype",
            Box::new(|| drop(lax::select_n(&Array::from(0i32), &[m.clone(), jnp::ones([3])]))),
        ),
        ("diagonal: axis1 and axis2 must differ", Box::new(|| drop(jnp::diagonal(&m, 0, 1, -1)))),
        (
            "diag: the input must be 1-D or 2-D",
            Box::new(|| drop(jnp::diag(&jnp::ones([2, 2, 2]), 0))),
        ),
        (
            "trace: requires an array of at least 2 axes",
            Box::new(|| drop(jnp::trace(&jnp::ones([3]), 0, 0, 1))),
        ),
        ("roll: axis 2 is out of bounds", Box::new(|| drop(jnp::roll(&m, 1, Some(2))))),
        (
            "array_split: the number of sections must be positive",
            Box::new(|| drop(jnp::array_split(&m, 0, 0))),
        ),
        ("convolve: only 1-D inputs", Box::new(|| drop(jnp::convolve(&m, &m, ConvMode::Full)))),
        (
            "cross: the last axes must have 2 or 3 components",
            Box::new(|| drop(jnp::cross(&m, &jnp::ones([4])))),
        ),
        (
            "bincount: x must be a 1-D array of integers",
            Box::new(|| drop(jnp::bincount(&m, None, 3))),
        ),
        (
            "average: weights of shape (2,)",
            Box::new(|| drop(jnp::average(&m, 1, Some(&jnp::ones([2])), false))),
        ),
    ];
    for (expected, f) in cases {
        let text = panic_text(f);
        assert!(text.contains(expected), "expected {expected:?}, got {text:?}");
    }
}
