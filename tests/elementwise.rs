//! Elementwise ops, broadcasting and type promotion against values computed with JAX
//! (`tests/data/elementwise.json`, made by `tests/data/gen/elementwise.py`).

mod common;

use std::sync::OnceLock;

use common::*;
use rjax::prelude::*;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/elementwise.json")).unwrap())
}

fn unary_fn(name: &str) -> fn(&Array) -> Array {
    match name {
        "negative" => jnp::negative,
        "abs" => jnp::abs,
        "sign" => jnp::sign,
        "square" => jnp::square,
        "exp" => jnp::exp,
        "exp2" => jnp::exp2,
        "log" => jnp::log,
        "log1p" => jnp::log1p,
        "expm1" => jnp::expm1,
        "sqrt" => jnp::sqrt,
        "rsqrt" => jnp::rsqrt,
        "cbrt" => jnp::cbrt,
        "reciprocal" => jnp::reciprocal,
        "sin" => jnp::sin,
        "cos" => jnp::cos,
        "tan" => jnp::tan,
        "asin" => jnp::asin,
        "acos" => jnp::acos,
        "atan" => jnp::atan,
        "sinh" => jnp::sinh,
        "cosh" => jnp::cosh,
        "tanh" => jnp::tanh,
        "asinh" => jnp::asinh,
        "acosh" => jnp::acosh,
        "atanh" => jnp::atanh,
        "sigmoid" => jnp::sigmoid,
        "softplus" => jnp::softplus,
        "erf" => jnp::erf,
        "erfinv" => jnp::erfinv,
        "floor" => jnp::floor,
        "ceil" => jnp::ceil,
        "round" => jnp::round,
        other => panic!("no unary op {other}"),
    }
}

fn binary_fn(name: &str) -> fn(&Array, &Array) -> Array {
    match name {
        "add" => |a, b| jnp::add(a, b),
        "subtract" => |a, b| jnp::subtract(a, b),
        "multiply" => |a, b| jnp::multiply(a, b),
        "divide" => |a, b| jnp::divide(a, b),
        "maximum" => |a, b| jnp::maximum(a, b),
        "minimum" => |a, b| jnp::minimum(a, b),
        "atan2" => |a, b| jnp::atan2(a, b),
        "floor_divide" => |a, b| jnp::floor_divide(a, b),
        "remainder" => |a, b| jnp::remainder(a, b),
        "fmod" => |a, b| jnp::fmod(a, b),
        "trunc_divide" => |a, b| jnp::trunc_divide(a, b),
        "pow" => |a, b| jnp::pow(a, b),
        "equal" => |a, b| jnp::equal(a, b),
        "not_equal" => |a, b| jnp::not_equal(a, b),
        "less" => |a, b| jnp::less(a, b),
        "less_equal" => |a, b| jnp::less_equal(a, b),
        "greater" => |a, b| jnp::greater(a, b),
        "greater_equal" => |a, b| jnp::greater_equal(a, b),
        "logaddexp" => |a, b| jnp::logaddexp(a, b),
        "logical_and" => |a, b| jnp::logical_and(a, b),
        "logical_or" => |a, b| jnp::logical_or(a, b),
        "logical_xor" => |a, b| jnp::logical_xor(a, b),
        other => panic!("no binary op {other}"),
    }
}

/// f32 transcendental functions differ from XLA's by a few ulps.
fn tolerance(dtype: DType) -> (f64, f64) {
    if dtype == DType::F64 {
        (1e-12, 1e-14)
    } else {
        (4e-6, 1e-6)
    }
}

#[test]
fn unary_ops_match_jax_in_f32_and_f64() {
    let _x64 = rjax::config::x64_scope(true);
    let cases = data()["unary"].as_object().unwrap();
    assert_eq!(cases.len(), 64);
    for (key, case) in cases {
        let name = key.rsplit_once('_').unwrap().0;
        let x = leaf_to_array(&case["x"]);
        let want = leaf_to_array(&case["out"]);
        let got = unary_fn(name)(&x);
        let (rtol, atol) = tolerance(x.dtype());
        println!("{key}");
        assert_close(&got, &want, rtol, atol);
    }
}

#[test]
fn binary_ops_broadcast_and_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let cases = data()["binary"].as_object().unwrap();
    for (key, case) in cases {
        let name = key.rsplit_once('_').unwrap().0;
        let (a, b) = (leaf_to_array(&case["a"]), leaf_to_array(&case["b"]));
        let want = leaf_to_array(&case["out"]);
        let got = if name == "pow" { jnp::pow(a.abs(), &b) } else { binary_fn(name)(&a, &b) };
        let (rtol, atol) = tolerance(a.dtype());
        println!("{key}");
        assert_close(&got, &want, rtol, atol);
    }
}

#[test]
fn integer_ops_match_jax_exactly() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, case) in data()["int"].as_object().unwrap() {
        let (a, b) = (leaf_to_array(&case["a"]), leaf_to_array(&case["b"]));
        let want = leaf_to_array(&case["out"]);
        let got = if name == "pow" { jnp::pow(&a, b.abs()) } else { binary_fn(name)(&a, &b) };
        println!("{name}");
        // Integer results must match exactly; true division gives floats (XLA's f32 division
        // may differ in the last bit).
        let (rtol, atol) =
            if want.dtype().is_float() { tolerance(want.dtype()) } else { (0.0, 0.0) };
        assert_close(&got, &want, rtol, atol);
    }
}

/// JAX's table computed with 64-bit types enabled: identical to rjax's for every pair of
/// concrete dtypes. Where JAX's result is weak, rjax gives the default type of that kind
/// (f32/i32) instead of x64 mode's f64/i64, as JAX does with its default 32-bit types.
#[test]
fn promotion_table_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let table = data()["promotion"].as_object().unwrap();
    let mut checked = 0;
    for (key, want) in table {
        let (a, b) = key.split_once(',').unwrap();
        let a = DType::from_name(a).unwrap();
        let (b, weak_b) = match b {
            "weak_int" => (DType::I32, true),
            "weak_float" => (DType::F32, true),
            name => (DType::from_name(name).unwrap(), false),
        };
        let got = rjax::promote(&[(a, false), (b, weak_b)]);
        let d = DType::from_name(want[0].as_str().unwrap()).unwrap();
        let weak = want[1].as_bool().unwrap();
        let want = match (weak, d) {
            (true, d) if d.is_float() => (DType::F32, true),
            (true, d) if d.is_int() => (DType::I32, true),
            (_, d) => (d, weak),
        };
        assert_eq!(got, want, "promote({key})");
        checked += 1;
    }
    assert_eq!(checked, 13 * 13 + 13 * 2);
}

#[test]
fn weak_types_follow_jax() {
    let _x64 = rjax::config::x64_scope(true);
    // jnp.add(1, f32[1]) is a strong f32
    assert_golden("weak_int_plus_float32", 0, &jnp::add(1, jnp::array([2.0f32])));
    let c = "weak_type_of_python_scalars";
    assert_golden(c, 0, &jnp::asarray(1.0f32));
    assert_golden(c, 1, &jnp::asarray(2i32));
    assert_golden(c, 2, &(Array::from(1.0f32) + 1));
    assert_golden(c, 3, &(jnp::asarray(1.0f32) + jnp::asarray(2i32)));
    let c = "int_array_plus_python_float";
    let a = jnp::array([1i32, 2]);
    assert_golden(c, 0, &(&a + 1.5));
    assert_golden(c, 1, &(&a * 2));
    assert_golden(c, 2, &(jnp::array([1.0f32]).astype(DType::F16) + 1.0));
    assert_golden(c, 3, &(jnp::array([1u8]) + 300));
}

#[test]
fn integer_division_semantics() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "integer_division_semantics";
    let (a, b) = (input(c, "a"), input(c, "b"));
    assert_golden(c, 0, &(&a / &b));
    assert_golden(c, 1, &jnp::floor_divide(&a, &b));
    assert_golden(c, 2, &jnp::remainder(&a, &b));
    assert_golden(c, 3, &jnp::trunc_divide(&a, &b));
    assert_golden(c, 4, &jnp::fmod(&a, &b));
}

#[test]
fn casts_and_overflow() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "casts_and_overflow";
    let x = input(c, "x");
    assert_golden(c, 0, &x.astype(DType::I32));
    assert_golden(c, 1, &(jnp::array([250u8]) + jnp::array([10u8])));
    assert_golden(c, 2, &jnp::round(&jnp::array([0.5f32, 1.5, 2.5, -0.5])));
    assert_golden(c, 3, &(jnp::array([3.0e38f32]) * 10));
}

#[test]
fn default_dtypes() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "default_float32_int32";
    assert_golden(c, 0, &jnp::arange(3.0));
    assert_golden(c, 1, &jnp::array([1.0f32, 2.0]));
    assert_golden(c, 2, &jnp::zeros([2]));
    assert_golden(c, 3, &jnp::linspace(0.0, 1.0, 3));
    assert_golden(c, 4, &jnp::arange(3));
    assert_golden(c, 5, &jnp::array([1i32, 2]));
    assert_golden(c, 6, &Array::from(true));
    assert_golden(c, 7, &(jnp::ones([2]) / 3));
}

#[test]
fn operators_accept_arrays_references_and_scalars_on_either_side() {
    let x = jnp::array([1.0f32, 2.0, 3.0]);
    let expected = vec![3.0f32, 8.0, 15.0];
    assert_eq!((&x * &x + &x * 2.0).to_vec::<f32>().unwrap(), expected);
    assert_eq!((x.clone() * x.clone() + 2.0 * &x).to_vec::<f32>().unwrap(), expected);
    assert_eq!((1.0 - &x).to_vec::<f32>().unwrap(), vec![0.0, -1.0, -2.0]);
    assert_eq!((-&x).to_vec::<f32>().unwrap(), vec![-1.0, -2.0, -3.0]);
    assert_eq!((2 / &x).to_vec::<f32>().unwrap(), vec![2.0, 1.0, 2.0 / 3.0]);
    assert_eq!((&x % 2.0).to_vec::<f32>().unwrap(), vec![1.0, 0.0, 1.0]);
    let mask = x.gt(1.5);
    assert_eq!((!&mask).to_vec::<bool>().unwrap(), vec![true, false, false]);
    assert_eq!((&mask & &x.lt(2.5)).to_vec::<bool>().unwrap(), vec![false, true, false]);
}

#[test]
fn where_clip_and_predicates() {
    let x = jnp::array([-2.0f32, f32::NAN, 0.5, f32::INFINITY]);
    let got = jnp::where_(x.gt(0.0), &x, 0.0);
    assert_eq!(got.to_vec::<f32>().unwrap()[..3], [0.0, 0.0, 0.5]);
    assert_eq!(jnp::isnan(&x).to_vec::<bool>().unwrap(), vec![false, true, false, false]);
    assert_eq!(jnp::isfinite(&x).to_vec::<bool>().unwrap(), vec![true, false, true, false]);
    let c = jnp::clip(&jnp::array([-2.0f32, 0.5, 3.0]), -1.0, 1.0);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![-1.0, 0.5, 1.0]);
    // an integer condition selects where nonzero
    let w = jnp::where_(jnp::array([0i32, 3]), 1.0f32, 2.0f32);
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![2.0, 1.0]);
}

#[test]
fn maximum_and_minimum_propagate_nan_and_order_minus_zero_below_zero() {
    // Every pair of special values, in both orders, against XLA's definition on CPU (IEEE's
    // `maximum` and `minimum`): NaN wins, otherwise the larger (smaller), with -0 below +0
    // (JAX's `min` of +0 and -0 is -0 in either order, `tests/data/subnormals.json`).
    let specials = [f32::NAN, f32::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f32::INFINITY];
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in &specials {
        for &y in &specials {
            a.push(x);
            b.push(y);
        }
    }
    let pick = |x: f32, y: f32, first_wins: bool, equal: fn(u32, u32) -> u32| {
        if x.is_nan() {
            x
        } else if y.is_nan() {
            y
        } else if x == y {
            f32::from_bits(equal(x.to_bits(), y.to_bits()))
        } else if first_wins {
            x
        } else {
            y
        }
    };
    let want_max: Vec<u32> =
        a.iter().zip(&b).map(|(&x, &y)| pick(x, y, x > y, |p, q| p & q).to_bits()).collect();
    let want_min: Vec<u32> =
        a.iter().zip(&b).map(|(&x, &y)| pick(x, y, x < y, |p, q| p | q).to_bits()).collect();
    let (xa, xb) = (jnp::array(a.clone()), jnp::array(b.clone()));
    let bits =
        |v: Array| v.to_vec::<f32>().unwrap().iter().map(|f| f.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(jnp::maximum(&xa, &xb)), want_max);
    assert_eq!(bits(jnp::minimum(&xa, &xb)), want_min);
    // Reductions fold with the same rule: a NaN anywhere wins, and rows long enough for the
    // vectorized leaves (8 lanes) agree with the sequential fold.
    let row: Vec<f32> = (0..100).map(|i| ((i * 37) % 23) as f32 - 11.0).collect();
    let x = jnp::array(row.clone());
    assert_eq!(x.max().item::<f32>().unwrap(), 11.0);
    assert_eq!(x.min().item::<f32>().unwrap(), -11.0);
    let mut with_nan = row;
    with_nan[61] = f32::NAN;
    assert!(jnp::array(with_nan.clone()).max().item::<f32>().unwrap().is_nan());
    assert!(jnp::array(with_nan).min().item::<f32>().unwrap().is_nan());
}

#[test]
fn powi_is_exact_and_handles_negative_bases() {
    let x = jnp::array([-2.0f32, 3.0]);
    assert_eq!(x.powi(3).to_vec::<f32>().unwrap(), vec![-8.0, 27.0]);
    assert_eq!(x.powi(-1).to_vec::<f32>().unwrap(), vec![-0.5, 1.0 / 3.0]);
    assert_eq!(jnp::arange(4).powi(2).to_vec::<i32>().unwrap(), vec![0, 1, 4, 9]);
}

#[test]
fn large_integer_powers_wrap_like_rust() {
    let bases = [3i32, -2, 0, 1, -1, 7, i32::MIN, i32::MAX];
    for n in [2, 5, 31, 32, 1000, i32::MAX] {
        let want: Vec<i32> = bases.iter().map(|b| b.wrapping_pow(n as u32)).collect();
        let got = jnp::array(bases).powi(n).to_vec::<i32>().unwrap();
        assert_eq!(got, want, "powi({n})");
        let want: Vec<u32> = bases.iter().map(|&b| (b as u32).wrapping_pow(n as u32)).collect();
        let got = jnp::array(bases).astype(DType::U32).powi(n).to_vec::<u32>().unwrap();
        assert_eq!(got, want, "powi({n}) of uint32");
    }
}

#[test]
fn large_arrays_run_in_parallel_and_match_small_ones() {
    let n = 1 << 20;
    let x = jnp::arange_step(0.0, n as f64, 1.0, DType::F32);
    let y = (&x * 0.5).sin() + &x;
    let v = y.to_vec::<f32>().unwrap();
    for i in [0usize, 1, 65535, 65536, n - 1] {
        assert_eq!(v[i], (i as f32 * 0.5).sin() + i as f32);
    }
}

#[test]
#[should_panic(expected = "add: shapes do not broadcast together: float32(3,) and float32(4,)")]
fn mismatched_shapes_name_the_op_and_shapes() {
    let _ = jnp::zeros([3]) + jnp::zeros([4]);
}

#[test]
#[should_panic(expected = "add: expected numeric operands (arithmetic on bool is not defined")]
fn arithmetic_on_bool_is_refused() {
    let b = jnp::array([true, false]);
    let _ = &b + &b;
}

#[test]
#[should_panic(
    expected = "neg: expected a numeric operand (bool arithmetic is not defined), got bool(2,)"
)]
fn negating_bool_is_refused() {
    let _ = -jnp::array([true, false]);
}

#[test]
#[should_panic(expected = "integer_pow[y=-1]: integers cannot be raised to the negative power -1")]
fn negative_integer_powers_are_refused() {
    let _ = jnp::arange(3).powi(-1);
}

#[test]
#[should_panic(expected = "Array::from_shape_vec: shape (2, 3) needs 6 elements but 5 were given")]
fn from_shape_vec_checks_the_length() {
    let _ = Array::from_shape_vec([2, 3], vec![0.0f32; 5]);
}

#[test]
fn fallible_reads_return_errors() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::arange(3);
    let e = x.to_vec::<f32>().unwrap_err();
    assert_eq!(
        e.to_string(),
        "to_vec: the array holds int32, not float32; convert it first with .astype(DType::F32)"
    );
    let e = x.item::<i32>().unwrap_err();
    assert!(e.to_string().contains("item: an array of shape (3,) has 3 elements"), "{e}");
    assert_eq!(Array::from(2.5f64).item::<f64>().unwrap(), 2.5);
}

// Each function as a fused group's op (multiplying by one leaves every bit, NaN aside).
#[jit]
fn fused_exp(x: &Array) -> Array {
    x.exp() * 1.0
}
#[jit]
fn fused_log(x: &Array) -> Array {
    x.log() * 1.0
}
#[jit]
fn fused_log1p(x: &Array) -> Array {
    x.log1p() * 1.0
}
#[jit]
fn fused_tanh(x: &Array) -> Array {
    x.tanh() * 1.0
}
#[jit]
fn fused_sigmoid(x: &Array) -> Array {
    x.sigmoid() * 1.0
}

/// f32 `exp`, `log`, `log1p` and `tanh` are XLA CPU's own approximations, and `sigmoid` is
/// `1 / (1 + exp(-x))` with that `exp`, so they give JAX's bits, not just its values within a
/// tolerance (`tests/data/transcendental.json`, made by `tests/data/gen/transcendental.py`): op
/// by op and fused, on the cases themselves and on a million elements repeating them (a group
/// that large runs as a compiled loop where the CPU allows, see `tests/fusion.rs`).
#[test]
fn f32_exp_log_log1p_tanh_sigmoid_match_jax_bit_for_bit() {
    let data: Value = serde_json::from_str(include_str!("data/transcendental.json")).unwrap();
    let bits = |v: &Value| -> Vec<u32> {
        v.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u32).collect()
    };
    for name in ["exp", "log", "log1p", "tanh", "sigmoid"] {
        let fused_fn = match name {
            "exp" => fused_exp,
            "log" => fused_log,
            "log1p" => fused_log1p,
            "tanh" => fused_tanh,
            _ => fused_sigmoid,
        };
        let case = &data[name];
        let x: Vec<f32> = bits(&case["x"]).into_iter().map(f32::from_bits).collect();
        let want = bits(&case["out"]);
        let repeated: Vec<f32> = x.iter().copied().cycle().take(x.len() * 500).collect();
        let x = Array::from_shape_vec([x.len()], x);
        let repeated = Array::from_shape_vec([repeated.len()], repeated);
        let runs = [
            ("op by op", unary_fn(name)(&x)),
            ("fused", fused_fn(&x)),
            ("fused, repeated", fused_fn(&repeated)),
        ];
        for (how, got) in runs {
            let got = got.to_vec::<f32>().unwrap();
            for (k, (g, w)) in got.iter().zip(want.iter().cycle()).enumerate() {
                let same = g.to_bits() == *w || (g.is_nan() && f32::from_bits(*w).is_nan());
                assert!(same, "{name} {how} of x[{k}]: {g:e}, JAX {:e}", f32::from_bits(*w));
            }
        }
    }
}
