//! `jax.lax` and `jax.numpy` functions under JAX's names, against JAX
//! (`tests/data/lax_numpy_names.json`, made by `tests/data/gen/lax_numpy_names.py`): `lax`'s
//! elementwise operations (no promotion), reductions, shape operations, constructors and
//! products, and `jnp`'s compositions. Every case runs eagerly, under `jit` (which must agree
//! bit for bit) and under `vmap` (a batch of two equals the two calls); the differentiable
//! ones also against JAX's gradient of `sum(output * weights)`.

mod common;

use std::sync::OnceLock;

use common::{assert_close_as, leaf_to_array, panic_text};
use rjax::lax::RoundingMethod;
use rjax::prelude::*;
use serde_json::Value;

fn cases() -> &'static serde_json::Map<String, Value> {
    static DATA: OnceLock<Value> = OnceLock::new();
    let data = DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/lax_numpy_names.json")).expect("parses")
    });
    data["cases"].as_object().expect("a table of cases")
}

type Program = fn(&[Array]) -> Vec<Array>;

/// The rjax program of each golden case, by the case's name without its dtype suffix.
fn program(base: &str) -> Option<Program> {
    let p: Program = match base {
        "lax_abs" | "lax_abs_int32" => |x| vec![lax::abs(&x[0])],
        "lax_neg" | "lax_neg_int32" => |x| vec![lax::neg(&x[0])],
        "lax_sign" | "lax_sign_int32" => |x| vec![lax::sign(&x[0])],
        "lax_square" | "lax_square_int32" => |x| vec![lax::square(&x[0])],
        "lax_reciprocal" => |x| vec![lax::reciprocal(&x[0])],
        "lax_exp" => |x| vec![lax::exp(&x[0])],
        "lax_exp2" => |x| vec![lax::exp2(&x[0])],
        "lax_expm1" => |x| vec![lax::expm1(&x[0])],
        "lax_log" => |x| vec![lax::log(&x[0])],
        "lax_log1p" => |x| vec![lax::log1p(&x[0])],
        "lax_logistic" => |x| vec![lax::logistic(&x[0])],
        "lax_sqrt" => |x| vec![lax::sqrt(&x[0])],
        "lax_rsqrt" => |x| vec![lax::rsqrt(&x[0])],
        "lax_cbrt" => |x| vec![lax::cbrt(&x[0])],
        "lax_sin" => |x| vec![lax::sin(&x[0])],
        "lax_cos" => |x| vec![lax::cos(&x[0])],
        "lax_tan" => |x| vec![lax::tan(&x[0])],
        "lax_asin" => |x| vec![lax::asin(&x[0])],
        "lax_acos" => |x| vec![lax::acos(&x[0])],
        "lax_atan" => |x| vec![lax::atan(&x[0])],
        "lax_sinh" => |x| vec![lax::sinh(&x[0])],
        "lax_cosh" => |x| vec![lax::cosh(&x[0])],
        "lax_tanh" => |x| vec![lax::tanh(&x[0])],
        "lax_asinh" => |x| vec![lax::asinh(&x[0])],
        "lax_acosh" => |x| vec![lax::acosh(&x[0])],
        "lax_atanh" => |x| vec![lax::atanh(&x[0])],
        "lax_erf" => |x| vec![lax::erf(&x[0])],
        "lax_erfc" => |x| vec![lax::erfc(&x[0])],
        "lax_erf_inv" => |x| vec![lax::erf_inv(&x[0])],
        "lax_bessel_i0e" => |x| vec![lax::bessel_i0e(&x[0])],
        "lax_bessel_i1e" => |x| vec![lax::bessel_i1e(&x[0])],
        "lax_integer_pow3" | "lax_integer_pow3_int32" => |x| vec![lax::integer_pow(&x[0], 3)],
        "lax_integer_pow_m2" => |x| vec![lax::integer_pow(&x[0], -2)],
        "lax_floor" => |x| vec![lax::floor(&x[0])],
        "lax_ceil" => |x| vec![lax::ceil(&x[0])],
        "lax_is_finite" => |x| vec![lax::is_finite(&x[0])],
        "lax_round" => |x| vec![lax::round(&x[0], RoundingMethod::AwayFromZero)],
        "lax_round_even" => |x| vec![lax::round(&x[0], RoundingMethod::ToNearestEven)],
        "lax_add" | "lax_add_int32" | "lax_add_bcast" | "lax_add_scalar" => {
            |x| vec![lax::add(&x[0], &x[1])]
        }
        "lax_sub" => |x| vec![lax::sub(&x[0], &x[1])],
        "lax_mul" | "lax_mul_int32" => |x| vec![lax::mul(&x[0], &x[1])],
        "lax_max" | "lax_max_int32" => |x| vec![lax::max(&x[0], &x[1])],
        "lax_min" => |x| vec![lax::min(&x[0], &x[1])],
        "lax_atan2" => |x| vec![lax::atan2(&x[0], &x[1])],
        "lax_pow" | "lax_pow_int" => |x| vec![lax::pow(&x[0], &x[1])],
        "lax_nextafter" => |x| vec![lax::nextafter(&x[0], &x[1])],
        "lax_eq" => |x| vec![lax::eq(&x[0], &x[1])],
        "lax_ne" => |x| vec![lax::ne(&x[0], &x[1])],
        "lax_lt" | "lax_lt_int32" => |x| vec![lax::lt(&x[0], &x[1])],
        "lax_le" => |x| vec![lax::le(&x[0], &x[1])],
        "lax_gt" => |x| vec![lax::gt(&x[0], &x[1])],
        "lax_ge" => |x| vec![lax::ge(&x[0], &x[1])],
        "lax_bitwise_and_int32" | "lax_bitwise_and_bool" => {
            |x| vec![lax::bitwise_and(&x[0], &x[1])]
        }
        "lax_bitwise_or_int32" => |x| vec![lax::bitwise_or(&x[0], &x[1])],
        "lax_bitwise_xor_int32" => |x| vec![lax::bitwise_xor(&x[0], &x[1])],
        "lax_bitwise_not_int32" | "lax_bitwise_not_bool" => |x| vec![lax::bitwise_not(&x[0])],
        "lax_complex_parts" => |x| {
            let z = lax::complex(&x[0], &x[1]);
            vec![lax::real(&z), lax::imag(lax::conj(&z))]
        },
        "lax_complex" => |x| vec![lax::complex(&x[0], &x[1])],
        "lax_conj_real" => |x| vec![lax::conj(&x[0])],
        "lax_convert_element_type" => |x| vec![lax::convert_element_type(&x[0] * 3.0, DType::I32)],
        "lax_convert_element_type_int32" => |x| vec![lax::convert_element_type(&x[0], DType::F32)],
        "lax_reduce_sum" => |x| vec![lax::reduce_sum(&x[0], [1])],
        "lax_reduce_sum_all" => |x| vec![lax::reduce_sum(&x[0], [0, 1])],
        "lax_reduce_sum_int32" => |x| vec![lax::reduce_sum(&x[0], [0])],
        "lax_reduce_prod" => |x| vec![lax::reduce_prod(&x[0], [0])],
        "lax_reduce_max" | "lax_reduce_max_int32" => |x| vec![lax::reduce_max(&x[0], [1])],
        "lax_reduce_min" => |x| vec![lax::reduce_min(&x[0], [0])],
        "lax_reduce_and_bool" => |x| vec![lax::reduce_and(&x[0], [1])],
        "lax_reduce_or_bool" => |x| vec![lax::reduce_or(&x[0], [0])],
        "lax_reduce_xor_bool" => |x| vec![lax::reduce_xor(&x[0], [1])],
        "lax_reduce_xor_bool_all" => |x| vec![lax::reduce_xor(&x[0], [0, 1])],
        "lax_argmax" => |x| vec![lax::argmax(&x[0], 1, DType::I32)],
        "lax_argmin" => |x| vec![lax::argmin(&x[0], 0, DType::I32)],
        "lax_broadcast" => |x| vec![lax::broadcast(&x[0], [2])],
        "lax_broadcast_in_dim" => |x| vec![lax::broadcast_in_dim(&x[0], [3, 2, 4], [0, 2])],
        "lax_broadcast_to_rank" => |x| vec![lax::broadcast_to_rank(&x[0], 3)],
        "lax_expand_dims" => |x| vec![lax::expand_dims(&x[0], [-1, 0])],
        "lax_squeeze" => |x| vec![lax::squeeze(&x[0], [-1])],
        "lax_reshape" => |x| vec![lax::reshape(&x[0], [2, 6], None)],
        "lax_reshape_dims" => |x| vec![lax::reshape(&x[0], [6, 2], Some(&[1, 0][..]))],
        "lax_rev" => |x| vec![lax::rev(&x[0], [0, 1])],
        "lax_transpose" => |x| vec![lax::transpose(&x[0], [1, 0])],
        "lax_concatenate" => |x| vec![lax::concatenate(&x[0..2], 1)],
        "lax_stack" => |x| vec![lax::stack(&x[0..2], -1)],
        "lax_unstack" => |x| lax::unstack(&x[0], 1),
        "lax_full_like" => |x| vec![lax::full_like(&x[0], 2.5, None)],
        "lax_full_like_int32" => |x| vec![lax::full_like(&x[0], 7, Some(DType::F32))],
        "lax_iota" => |_| vec![lax::iota(DType::F32, 5)],
        "lax_broadcasted_iota" => |_| vec![lax::broadcasted_iota(DType::I32, [2, 3], 1)],
        "lax_full" => |_| vec![lax::full([2, 3], 1.5, Some(DType::I32))],
        "lax_dot_mv" | "lax_dot_mm" => |x| vec![lax::dot(&x[0], &x[1])],
        "lax_dot_general" => |x| vec![lax::dot_general(&x[0], &x[1], ((&[2], &[1]), (&[0], &[0])))],
        "lax_index_in_dim" => |x| vec![lax::index_in_dim(&x[0], -1, 1, false)],
        "lax_index_in_dim_keep" => |x| vec![lax::index_in_dim(&x[0], 1, 0, true)],
        "lax_slice_in_dim" => |x| vec![lax::slice_in_dim(&x[0], Some(-3), None, 2, 1)],
        "lax_dynamic_update_slice_in_dim" => {
            |x| vec![lax::dynamic_update_slice_in_dim(&x[0], &x[1], &x[2], 1)]
        }
        "lax_split" => |x| lax::split(&x[0], [1, 3], 1),
        "lax_tile" => |x| vec![lax::tile(&x[0], [2, 1])],
        "lax_tile_int32" => |x| vec![lax::tile(&x[0], [1, 2])],
        "lax_collapse" => |x| vec![lax::collapse(&x[0], 0, Some(2))],
        "lax_collapse_neg" => |x| vec![lax::collapse(&x[0], -2, None)],
        "float_power" | "float_power_int32" => |x| vec![jnp::float_power(&x[0], &x[1])],
        "nan_to_num" => |x| vec![jnp::nan_to_num(&x[0], 0.0, None, Some(-9.0))],
        "nan_to_num_default" => |x| vec![jnp::nan_to_num(&x[0], 2.5, None, None)],
        "nan_to_num_complex64" => |x| vec![jnp::nan_to_num(&x[0], 1.0, None, None)],
        "nan_to_num_int32" => |x| vec![jnp::nan_to_num(&x[0], 0.0, None, None)],
        "append" => |x| vec![jnp::append(&x[0], &x[1], None)],
        "append_axis0" => |x| vec![jnp::append(&x[0], &x[1], Some(0))],
        "diagflat" => |x| vec![jnp::diagflat(&x[0], 1)],
        "diag_indices_from" => |x| jnp::diag_indices_from(&x[0]),
        "tril_indices_from" => |x| pair(jnp::tril_indices_from(&x[0], 1)),
        "triu_indices_from" => |x| pair(jnp::triu_indices_from(&x[0], -1)),
        "ediff1d" => |x| vec![jnp::ediff1d(&x[0], Some(&x[1]), Some(&x[2]))],
        "ediff1d_plain" => |x| vec![jnp::ediff1d(&x[0], None, None)],
        "ediff1d_int32" => |x| vec![jnp::ediff1d(&x[0], None, Some(&jnp::array([7.9f32])))],
        "broadcast_arrays" => |x| jnp::broadcast_arrays(&x[0..2]),
        "matrix_transpose" => |x| vec![jnp::matrix_transpose(&x[0])],
        "matvec" => |x| vec![jnp::matvec(&x[0], &x[1])],
        "vecmat" => |x| vec![jnp::vecmat(&x[0], &x[1])],
        "vecdot" => |x| vec![jnp::vecdot(&x[0], &x[1], -1)],
        "vecdot_axis0" => |x| vec![jnp::vecdot(&x[0], &x[1], 0)],
        "rollaxis" => |x| vec![jnp::rollaxis(&x[0], 2, 0)],
        "rollaxis_end" => |x| vec![jnp::rollaxis(&x[0], 0, 3)],
        "select" => |x| {
            let conds = [jnp::greater(&x[0], 0.5), jnp::less(&x[0], -1.0)];
            vec![jnp::select(&conds, &x[0..2], 0.25)]
        },
        "select_int32" => |x| {
            let conds = [jnp::greater(&x[0], 2), jnp::greater(&x[1], 4)];
            vec![jnp::select(&conds, &x[0..2], -1)]
        },
        "trapezoid" => |x| vec![jnp::trapezoid(&x[0], None, 0.5, -1)],
        "trapezoid_x" => |x| vec![jnp::trapezoid(&x[0], Some(&x[1]), 1.0, 0)],
        "trapezoid_xfull" => |x| vec![jnp::trapezoid(&x[0], Some(&x[1]), 1.0, 1)],
        "vander" => |x| vec![jnp::vander(&x[0], None, false)],
        "vander_increasing" => |x| vec![jnp::vander(&x[0], Some(3), true)],
        "vander_int32" => |x| vec![jnp::vander(&x[0], Some(3), false)],
        "copy" => |x| vec![jnp::copy(&x[0])],
        "iscomplex" | "iscomplex_complex64" => |x| vec![jnp::iscomplex(&x[0])],
        "isreal_complex64" => |x| vec![jnp::isreal(&x[0])],
        "fftshift" => |x| vec![jnp::fft::fftshift(&x[0], None)],
        "ifftshift" => |x| vec![jnp::fft::ifftshift(&x[0], Some(&[1]))],
        "rfft2" => |x| vec![jnp::fft::rfft2(&x[0], None, &[-2, -1], None)],
        "rfftn" => |x| vec![jnp::fft::rfftn(&x[0], None, None, None)],
        "rfftn_axes" => |x| vec![jnp::fft::rfftn(&x[0], None, Some(&[0, 2]), None)],
        "irfft2" => |x| {
            let y = jnp::fft::rfft2(&x[0], None, &[-2, -1], None);
            vec![jnp::fft::irfft2(&y, None, &[-2, -1], None)]
        },
        "irfftn" => |x| {
            let y = jnp::fft::rfftn(&x[0], None, None, None);
            vec![jnp::fft::irfftn(&y, Some(&[2, 3, 4]), None, None)]
        },
        "indices" => |_| vec![jnp::indices(&[2, 3], Some(DType::I32))],
        "logspace" => |_| vec![jnp::logspace(0.5, 2.5, 5, true, 10.0, None)],
        "logspace_base2" => |_| vec![jnp::logspace(-1.0, 3.0, 4, false, 2.0, Some(DType::F32))],
        "bartlett_1" => |_| vec![jnp::bartlett(1)],
        "bartlett_5" => |_| vec![jnp::bartlett(5)],
        "bartlett_6" => |_| vec![jnp::bartlett(6)],
        "blackman_1" => |_| vec![jnp::blackman(1)],
        "blackman_5" => |_| vec![jnp::blackman(5)],
        "blackman_6" => |_| vec![jnp::blackman(6)],
        "hamming_1" => |_| vec![jnp::hamming(1)],
        "hamming_5" => |_| vec![jnp::hamming(5)],
        "hamming_6" => |_| vec![jnp::hamming(6)],
        "hanning_1" => |_| vec![jnp::hanning(1)],
        "hanning_5" => |_| vec![jnp::hanning(5)],
        "hanning_6" => |_| vec![jnp::hanning(6)],
        _ => return None,
    };
    Some(p)
}

/// The two index arrays of a triangle as a list.
fn pair((i, j): (Array, Array)) -> Vec<Array> {
    vec![i, j]
}

/// A case's name without its dtype suffix.
fn base(name: &str) -> &str {
    name.strip_suffix("_float32").or_else(|| name.strip_suffix("_float64")).unwrap_or(name)
}

fn leaves(case: &Value, key: &str) -> Vec<Array> {
    case[key].as_array().map_or_else(Vec::new, |l| l.iter().map(leaf_to_array).collect())
}

/// Tolerances for a few roundings (XLA's special functions may differ in the last bits).
fn tolerance(x: &Array) -> (f64, f64) {
    match x.dtype() {
        DType::F32 | DType::C64 => (2e-6, 1e-6),
        _ => (1e-13, 1e-14),
    }
}

/// The values of an array as `f64`s (complex numbers as their two parts).
fn bits(x: &Array) -> Vec<f64> {
    if x.dtype().is_complex() {
        let (re, im) = (jnp::real(x), jnp::imag(x));
        [bits(&re), bits(&im)].concat()
    } else {
        x.astype(DType::F64).to_vec::<f64>().unwrap()
    }
}

/// Bit-for-bit equality, NaNs equal to NaNs.
#[track_caller]
fn assert_identical(what: &str, got: &Array, want: &Array) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let (g, w) = (bits(got), bits(want));
    let same =
        g.iter().zip(&w).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    assert!(same, "{what}: got {g:?}, want {w:?}");
}

/// Closeness to JAX's values, with signed zeros and NaNs in the same places.
#[track_caller]
fn assert_matches(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = tolerance(want);
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    if got.dtype().is_complex() {
        assert_close_as(what, &jnp::real(got), &jnp::real(want), rtol, atol);
        assert_close_as(what, &jnp::imag(got), &jnp::imag(want), rtol, atol);
        return;
    }
    assert_close_as(what, got, want, rtol, atol);
    let (g, w) = (bits(got), bits(want));
    for (a, b) in g.iter().zip(&w) {
        assert_eq!(a.is_nan(), b.is_nan(), "{what}: got {g:?}, want {w:?}");
        if *b == 0.0 {
            assert_eq!(a.to_bits(), b.to_bits(), "{what}: signed zero, got {g:?}, want {w:?}");
        }
    }
}

#[test]
fn every_golden_case_has_a_program() {
    let missing: Vec<&String> = cases().keys().filter(|n| program(base(n)).is_none()).collect();
    assert!(missing.is_empty(), "golden cases without a program: {missing:?}");
    assert!(cases().len() > 200, "{} cases", cases().len());
}

#[test]
fn values_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, case) in cases() {
        let f = program(base(name)).expect("checked above");
        let inputs = leaves(case, "inputs");
        let want = leaves(case, "outputs");
        let got = f(&inputs);
        assert_eq!(got.len(), want.len(), "{name}: output count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_matches(&format!("{name}[{i}]"), g, w);
        }
        let jitted = rjax::jit(move |xs: &Vec<Array>| f(xs))(&inputs);
        for (i, (j, g)) in jitted.iter().zip(&got).enumerate() {
            assert_identical(&format!("{name}[{i}] under jit"), j, g);
        }
    }
}

#[test]
fn gradients_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
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
    let _x64 = rjax::config::x64_scope(true);
    for (name, case) in cases() {
        let first = leaves(case, "inputs");
        if first.is_empty() {
            continue;
        }
        let f = program(base(name)).expect("checked above");
        let second: Vec<Array> = first.iter().map(second_example).collect();
        let batch: Vec<Array> =
            first.iter().zip(&second).map(|(a, b)| jnp::stack(&[a, b], 0)).collect();
        let batched = rjax::vmap(move |xs: &Vec<Array>| f(xs), 0, 0)(&batch);
        let (one, two) = (f(&first), f(&second));
        for (i, b) in batched.iter().enumerate() {
            let want = jnp::stack(&[&one[i], &two[i]], 0);
            let (rtol, atol) = tolerance(&want);
            if want.dtype().is_complex() {
                assert_identical(&format!("{name}[{i}] under vmap"), b, &want);
            } else {
                assert_close_as(&format!("{name}[{i}] under vmap"), b, &want, rtol, atol);
            }
        }
    }
}

/// A call that must panic.
type Refusal<'a> = Box<dyn Fn() + 'a>;

#[test]
fn bad_input_is_refused_naming_the_function() {
    let f = jnp::ones([2, 3]);
    let i = jnp::ones_dtype([2, 3], DType::I32);
    let b = jnp::ones_dtype([2, 3], DType::Bool);
    let cases: Vec<(&str, Refusal<'_>)> = vec![
        (
            "lax.add requires arguments to have the same dtypes, got float32, int32",
            Box::new(|| drop(lax::add(&f, &i))),
        ),
        (
            "lax.add requires arguments to have the same dtypes, got float32, int32",
            Box::new(|| drop(lax::add(&f, 1))),
        ),
        (
            "lax.mul: arrays must have the same number of dimensions, got shapes (2, 3) and (3,)",
            Box::new(|| drop(lax::mul(&f, jnp::ones([3])))),
        ),
        ("lax.exp does not accept dtype int32", Box::new(|| drop(lax::exp(&i)))),
        ("lax.floor does not accept dtype int32", Box::new(|| drop(lax::floor(&i)))),
        ("lax.neg does not accept dtype bool", Box::new(|| drop(lax::neg(&b)))),
        ("lax.bitwise_not does not accept dtype float32", Box::new(|| drop(lax::bitwise_not(&f)))),
        ("lax.real does not accept dtype float32", Box::new(|| drop(lax::real(&f)))),
        (
            "lax.round does not accept dtype int32",
            Box::new(|| drop(lax::round(&i, RoundingMethod::AwayFromZero))),
        ),
        ("lax.pow does not accept dtype int32", Box::new(|| drop(lax::pow(&i, &i)))),
        (
            "integers cannot be raised to the negative power -1",
            Box::new(|| drop(lax::integer_pow(&i, -1))),
        ),
        (
            "lax.reduce_and: rjax reduces bool operands only",
            Box::new(|| drop(lax::reduce_and(&i, [0]))),
        ),
        ("reduce_sum: axes [2] must be distinct axes", Box::new(|| drop(lax::reduce_sum(&f, [2])))),
        (
            "reduce_max: axes [0, 0] must be distinct axes",
            Box::new(|| drop(lax::reduce_max(&f, [0, 0]))),
        ),
        ("argmax: invalid axis 2", Box::new(|| drop(lax::argmax(&f, 2, DType::I32)))),
        (
            "argmin: index_dtype must be an integer type",
            Box::new(|| drop(lax::argmin(&f, 0, DType::F32))),
        ),
        (
            "lax.concatenate requires arguments to have the same dtypes, got float32, int32",
            Box::new(|| drop(lax::concatenate(&[f.clone(), i.clone()], 0))),
        ),
        (
            "index_in_dim: index 3 is out of bounds for axis 1 with size 3",
            Box::new(|| drop(lax::index_in_dim(&f, 3, 1, true))),
        ),
        (
            "slice_in_dim: start Some(0), limit Some(9)",
            Box::new(|| drop(lax::slice_in_dim(&f, Some(0), Some(9), 1, -1))),
        ),
        (
            "split: the sizes [2, 3] must add up to axis 1",
            Box::new(|| drop(lax::split(&f, [2, 3], 1))),
        ),
        (
            "tile: reps length must equal the rank of the operand",
            Box::new(|| drop(lax::tile(&f, [2]))),
        ),
        (
            "lax.dot: dimension_numbers must be given",
            Box::new(|| drop(lax::dot(&jnp::ones([2, 2, 2]), &f))),
        ),
        (
            "full must be called with a scalar fill_value",
            Box::new(|| drop(lax::full([2], &f, None))),
        ),
        (
            "broadcasted_iota: dimension 2 is not an axis",
            Box::new(|| drop(lax::broadcasted_iota(DType::F32, [2, 3], 2))),
        ),
        ("collapse: dimensions 2..Some(1)", Box::new(|| drop(lax::collapse(&f, 2, Some(1))))),
        ("lax.complex does not accept dtype int32", Box::new(|| drop(lax::complex(&i, &i)))),
        (
            "diag_indices_from: the input must have at least 2 axes, all of one length, got shape (2, 3)",
            Box::new(|| drop(jnp::diag_indices_from(&f))),
        ),
        ("tril_indices_from: the input must be 2-D", Box::new(|| drop(jnp::tril_indices_from(&jnp::ones([3]), 0)))),
        (
            "broadcast_shapes: incompatible shapes for broadcasting: (2, 3), (4,)",
            Box::new(|| drop(jnp::broadcast_shapes(&[&[2, 3], &[4]]))),
        ),
        ("matrix_transpose: x must have at least 2 axes", Box::new(|| drop(jnp::matrix_transpose(&jnp::ones([3]))))),
        ("matvec: x1 must have at least 2 axes", Box::new(|| drop(jnp::matvec(&jnp::ones([3]), &f)))),
        ("vecdot: x1 and x2 must have one length along axis 0", Box::new(|| drop(jnp::vecdot(&f, &jnp::ones([1, 3]), 0)))),
        ("rollaxis: start 4 is out of bounds", Box::new(|| drop(jnp::rollaxis(&f, 0, 4)))),
        (
            "select: condlist and choicelist must have one nonzero length, got 1 and 0",
            Box::new(|| drop(jnp::select(std::slice::from_ref(&b), &[] as &[Array], 0.0))),
        ),
        ("select: condlist must hold bool arrays", Box::new(|| drop(jnp::select(std::slice::from_ref(&i), std::slice::from_ref(&f), 0.0)))),
        ("vander: x must be 1-D", Box::new(|| drop(jnp::vander(&f, None, false)))),
        ("trapezoid: x must be 1-D or have y's rank", Box::new(|| drop(jnp::trapezoid(&f, Some(&jnp::ones([1, 2, 3])), 1.0, 0)))),
    ];
    for (expected, f) in cases {
        let text = panic_text(f);
        assert!(text.contains(expected), "expected {expected:?}, got {text:?}");
    }
}

#[test]
fn lax_scalars_take_their_default_dtype() {
    // A Rust float is a weakly typed float32 without x64, as a Python float in jax.lax (with
    // x64 on it is a float64, which lax refuses to add to a float32, as JAX does).
    let _x64 = rjax::config::x64_scope(false);
    let x = jnp::array([1.0f32, 2.0]);
    let y = lax::add(&x, 1.0);
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 3.0]);
    let n = lax::mul(jnp::array([2i32, 3]), 4);
    assert_eq!(n.to_vec::<i32>().unwrap(), vec![8, 12]);
    let full = lax::full([2], 1.5, None);
    assert!(full.is_weak());
    assert_eq!(full.dtype(), DType::F32);
}

#[test]
fn shape_and_dtype_questions() {
    assert_eq!(jnp::broadcast_shapes(&[&[3, 1], &[4], &[1, 1, 1]]), vec![1, 3, 4]);
    assert_eq!(lax::broadcast_shapes(&[&[2, 1], &[2, 5]]), vec![2, 5]);
    assert_eq!(jnp::broadcast_shapes(&[]), Vec::<usize>::new());
    let z = jnp::complex(jnp::array([1.0f32]), 0.0);
    assert!(jnp::iscomplexobj(&z) && !jnp::isrealobj(&z));
    assert!(jnp::isrealobj(&jnp::array([1i32])) && !jnp::iscomplexobj(&jnp::array([1i32])));
    // Empty windows and an empty logspace, as NumPy gives them.
    assert_eq!(jnp::hanning(0).shape(), &[0]);
    assert_eq!(jnp::bartlett(0).shape(), &[0]);
    assert_eq!(jnp::logspace(0.0, 1.0, 0, false, 10.0, None).shape(), &[0]);
    assert_eq!(jnp::indices(&[], None).shape(), &[0]);
}
