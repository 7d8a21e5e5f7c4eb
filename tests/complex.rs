//! Complex dtypes against JAX (`tests/data/complex.json`, made by `tests/data/gen/complex.py`):
//! type promotion with `complex64`/`complex128` and weak Rust scalars, complex arithmetic and
//! functions, reductions, `real`/`imag`/`conj`/`abs`/`angle`, `jnp::complex`, `astype`, eagerly
//! and under `#[jit]`; gradients of real-valued functions through complex values (JAX's
//! convention) and `#[vmap]`; f64 finite-difference checks of the new derivative rules through
//! real-valued wrappers; creation, reading back and printing; and the errors for operations
//! complex numbers do not have (ordering comparisons, `max`, sorting).

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, golden_field, panic_text};
use rjax::prelude::*;
use rjax::transform::ad::api::{grad_of, jvp_of, vjp_of};
use rjax::{promote, Complex};
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/complex.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    golden_field(data(), case, key)
}

/// Complex functions are computed with other formulas than XLA's: a few ulps apart.
#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = match want.dtype() {
        DType::F32 | DType::C64 => (1e-5, 1e-6),
        _ => (1e-12, 1e-13),
    };
    assert_close_as(what, got, want, rtol, atol);
}

/// The dtype and weak flag an operand of the promotion table stands for.
fn operand(name: &str) -> (DType, bool) {
    match name.strip_prefix("weak_") {
        Some("int") => (DType::I32, true),
        Some("float") => (DType::F64, true),
        Some("complex") => (DType::C128, true),
        _ => (DType::from_name(name).unwrap(), false),
    }
}

#[test]
fn promotion_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let table = data()["promotion"].as_array().unwrap();
    for row in table {
        let (a, b) = (row["a"].as_str().unwrap(), row["b"].as_str().unwrap());
        let mut want = DType::from_name(row["dtype"].as_str().unwrap()).unwrap();
        let weak = row["weak"].as_bool().unwrap();
        // The table was made with 64-bit defaults; rjax's defaults (what weak results take)
        // are float32 and complex64, as JAX's without `jax_enable_x64`.
        if weak {
            want = match want {
                DType::I64 => DType::I32,
                DType::F64 => DType::F32,
                DType::C128 => DType::C64,
                d => d,
            };
        }
        let got = promote(&[operand(a), operand(b)]);
        assert_eq!(got, (want, weak), "promote({a}, {b})");
        // And through arithmetic on arrays and Rust scalars.
        if a != "bool" || b != "bool" {
            let x = jnp::zeros_dtype([2], operand(a).0);
            let y = match b {
                "weak_int" => jnp::add(&x, 1),
                "weak_float" => jnp::add(&x, 1.5),
                "weak_complex" => jnp::add(&x, Complex::new(1.5f64, 0.5)),
                _ => jnp::add(&x, jnp::zeros_dtype([2], operand(b).0)),
            };
            if !a.starts_with("weak") {
                assert_eq!((y.dtype(), y.is_weak()), (want, weak), "{a} + {b}");
            }
        }
    }
    assert_eq!(table.len(), 9 * 12 + 3);
}

const UNARY: [&str; 20] = [
    "neg",
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "sinh",
    "cosh",
    "tanh",
    "square",
    "reciprocal",
    "abs",
    "sign",
    "angle",
    "real",
    "imag",
    "conj",
    "cube",
    "rsqrt",
];

#[traceable]
fn unary(name: &str, z: &Array) -> Array {
    match name {
        "neg" => -z,
        "exp" => jnp::exp(z),
        "log" => jnp::log(z),
        "sqrt" => jnp::sqrt(z),
        "sin" => jnp::sin(z),
        "cos" => jnp::cos(z),
        "tan" => jnp::tan(z),
        "sinh" => jnp::sinh(z),
        "cosh" => jnp::cosh(z),
        "tanh" => jnp::tanh(z),
        "square" => jnp::square(z),
        "reciprocal" => jnp::reciprocal(z),
        "abs" => jnp::abs(z),
        "sign" => jnp::sign(z),
        "angle" => jnp::angle(z),
        "real" => jnp::real(z),
        "imag" => jnp::imag(z),
        "conj" => jnp::conj(z),
        "cube" => jnp::powi(z, 3),
        "rsqrt" => jnp::rsqrt(z),
        _ => unreachable!(),
    }
}

const BINARY: [&str; 7] = ["add", "sub", "mul", "div", "pow", "eq", "ne"];

#[traceable]
fn binary(name: &str, z: &Array, w: &Array) -> Array {
    match name {
        "add" => z + w,
        "sub" => z - w,
        "mul" => z * w,
        "div" => z / w,
        "pow" => jnp::pow(z, w),
        "eq" => jnp::equal(z, w),
        "ne" => jnp::not_equal(z, w),
        _ => unreachable!(),
    }
}

const REDUCE: [&str; 8] =
    ["sum", "prod", "mean", "var", "sum_axis0", "prod_axis1", "mean_axis1", "cumsum"];

#[traceable]
fn reduce(name: &str, z: &Array) -> Array {
    match name {
        "sum" => jnp::sum(z),
        "prod" => jnp::prod(z),
        "mean" => jnp::mean(z),
        "var" => jnp::var(z),
        "sum_axis0" => jnp::sum_axes(z, 0, false),
        "prod_axis1" => jnp::prod_axes(z, 1, false),
        "mean_axis1" => jnp::mean_axes(z, 1, false),
        "cumsum" => jnp::cumsum(z, Some(1)),
        _ => unreachable!(),
    }
}

#[jit]
fn unary_jit(z: &Array, k: usize) -> Array {
    // A chain, so that fusion sees complex elementwise ops next to each other.
    unary(UNARY[k], &(z * 2.0)) * 1.0
}

#[jit]
fn binary_jit(z: &Array, w: &Array, k: usize) -> Array {
    binary(BINARY[k], z, w)
}

#[jit]
fn reduce_jit(z: &Array, k: usize) -> Array {
    // Scaling by 2 and by 1/2 is exact: the reduction sees the operand's values.
    reduce(REDUCE[k], &((z * 2.0) * 0.5))
}

#[test]
fn functions_arithmetic_and_reductions_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["complex64", "complex128"] {
        let (z, w) = (field(dt, "z"), field(dt, "w"));
        for (k, name) in UNARY.into_iter().enumerate() {
            let want = field(dt, name);
            check(&format!("{dt} {name}"), &unary(name, &z), &want);
            let half = &z * 0.5;
            check(&format!("{dt} {name} jit"), &unary_jit(&half, k), &want);
        }
        for (k, name) in BINARY.into_iter().enumerate() {
            let want = field(dt, name);
            check(&format!("{dt} {name}"), &binary(name, &z, &w), &want);
            check(&format!("{dt} {name} jit"), &binary_jit(&z, &w, k), &want);
        }
        for (k, name) in REDUCE.into_iter().enumerate() {
            let want = field(dt, name);
            check(&format!("{dt} {name}"), &reduce(name, &z), &want);
            check(&format!("{dt} {name} jit"), &reduce_jit(&z, k), &want);
        }
        let x = field(dt, "x");
        check(&format!("{dt} z + x"), &(&z + &x), &field(dt, "add_real"));
        check(&format!("{dt} x * z"), &(&x * &z), &field(dt, "mul_real"));
        check(&format!("{dt} z + 2.5"), &(&z + 2.5), &field(dt, "add_weak_float"));
        let c = Complex::new(0.5f64, -2.0);
        check(&format!("{dt} z * (0.5-2j)"), &(&z * c), &field(dt, "mul_weak_complex"));
        check(&format!("{dt} z ** 0.5"), &jnp::pow(&z, 0.5), &field(dt, "real_pow_weak"));
        let y = field(dt, "complex_xy");
        check(&format!("{dt} complex"), &jnp::complex(&x, jnp::imag(&y)), &y);
        check(&format!("{dt} astype real"), &z.astype(x.dtype()), &field(dt, "astype_real"));
        check(&format!("{dt} astype complex"), &x.astype(z.dtype()), &field(dt, "astype_complex"));
        check(&format!("{dt} angle of real"), &jnp::angle(&x), &field(dt, "angle_real"));
    }
    let (z, x, i) = (field("mixed", "z64"), field("mixed", "x64"), field("mixed", "i32"));
    check("float64 + complex64", &(&x + &z), &field("mixed", "f64_plus_c64"));
    check("int32 * complex64", &(&i * &z), &field("mixed", "i32_times_c64"));
}

type RealFn = fn(&Array, &Array) -> Array;

#[traceable]
fn cx(x: &Array, y: &Array) -> Array {
    jnp::complex(x, y)
}

/// Real-valued functions of real inputs through complex intermediates (the golden names).
fn real_fns() -> Vec<(&'static str, RealFn)> {
    vec![
        ("abs_sq_exp", |x, y| (jnp::abs(&(jnp::square(&cx(x, y)) * jnp::exp(&cx(x, y))))).sum()),
        ("real_sin_conj", |x, y| jnp::real(&(jnp::sin(&cx(x, y)) * jnp::conj(&cx(x, y)))).sum()),
        ("angle_log", |x, y| (jnp::angle(&cx(x, y)) + jnp::imag(&jnp::log(&cx(x, y)))).sum()),
        ("sqrt_tanh_div", |x, y| {
            let a = jnp::real(&jnp::sqrt(&cx(x, y)));
            let b = jnp::tanh(&cx(y, x)) / cx(x, &(y * y + 1.0));
            (a + jnp::imag(&b)).sum()
        }),
        ("astype_cos", |x, y| {
            jnp::cos(&(x.astype(DType::C128) * cx(y, x))).astype(DType::F64).sum()
        }),
        ("mean_prod", |x, y| {
            jnp::abs(&jnp::mean(&cx(x, y))) + jnp::real(&jnp::prod(&cx(&(x + 1.0), y)))
        }),
    ]
}

#[test]
fn gradients_through_complex_values_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, y) = (field("grad", "x"), field("grad", "y"));
    for (name, f) in real_fns() {
        let what = |k: &str| format!("{name}_{k}");
        check(&what("value"), &f(&x, &y), &field("grad", &what("value")));
        check(&what("dx"), &grad_of(|x| f(x, &y), &x), &field("grad", &what("dx")));
        check(&what("dy"), &grad_of(|y| f(&x, y), &y), &field("grad", &what("dy")));
    }
}

type ComplexFn = fn(&Array, &Array) -> Array;

/// Real-valued functions of a complex input `z` (and the constant `w`).
fn complex_fns() -> Vec<(&'static str, ComplexFn)> {
    vec![
        ("abs_sq", |z, _| jnp::square(&jnp::abs(z)).sum()),
        ("real_mul_w", |z, w| jnp::real(&(z * w)).sum()),
        ("imag_exp", |z, _| jnp::imag(&jnp::exp(z)).sum()),
        ("abs_div", |z, w| jnp::abs(&(z / w)).sum()),
        ("real_pow", |z, w| jnp::real(&jnp::pow(z, w)).sum()),
        ("conj_sq", |z, _| jnp::real(&(jnp::conj(z) * jnp::square(z))).sum()),
    ]
}

#[test]
fn gradients_with_respect_to_complex_inputs_follow_jax_convention() {
    let _x64 = rjax::config::x64_scope(true);
    let (z, w) = (field("grad", "z"), field("grad", "w"));
    for (name, f) in complex_fns() {
        let g = grad_of(|z| f(z, &w), &z);
        assert_eq!(g.dtype(), DType::C128, "{name}: grad of a complex input is complex");
        check(&format!("{name} dz"), &g, &field("grad", &format!("{name}_dz")));
    }
    let ct = jnp::conj(&w);
    check("vjp sin*w", &vjp_of(|z| jnp::sin(z) * &w, &z, &ct), &field("grad", "vjp_sin_mul"));
    check("jvp log*z", &jvp_of(|z| jnp::log(z) * z, &z, &w).1, &field("grad", "jvp_log_mul"));
}

#[jit]
#[grad]
fn abs_sq_exp_grad_jit(x: &Array, y: &Array) -> Array {
    (jnp::abs(&(jnp::square(&cx(x, y)) * jnp::exp(&cx(x, y))))).sum()
}

#[vmap(in_axes = (0, 0))]
fn angle_log_vmap(x: &Array, y: &Array) -> Array {
    (jnp::angle(&cx(x, y)) + jnp::imag(&jnp::log(&cx(x, y)))).sum()
}

#[jit]
#[vmap(in_axes = (0, 0))]
fn mean_prod_vmap_jit(x: &Array, y: &Array) -> Array {
    jnp::abs(&jnp::mean(&cx(x, y))) + jnp::real(&jnp::prod(&cx(&(x + 1.0), y)))
}

#[vmap(in_axes = (0, None))]
fn sqrt_tanh_div_vmap(x: &Array, y: &Array) -> Array {
    let a = jnp::real(&jnp::sqrt(&cx(x, y)));
    let b = jnp::tanh(&cx(y, x)) / cx(x, &(y * y + 1.0));
    (a + jnp::imag(&b)).sum()
}

#[test]
fn jit_grad_and_vmap_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, y) = (field("grad", "x"), field("grad", "y"));
    check("#[jit] #[grad]", &abs_sq_exp_grad_jit(&x, &y), &field("grad", "abs_sq_exp_dx"));
    check("#[vmap] angle_log", &angle_log_vmap(&x, &y), &field("grad", "angle_log_vmap"));
    check(
        "#[jit] #[vmap] mean_prod",
        &mean_prod_vmap_jit(&x, &y),
        &field("grad", "mean_prod_vmap"),
    );
    // An unbatched operand: each row of x against the same (broadcast) y row.
    let y0 = y.slice(s![0, ..]);
    let got = sqrt_tanh_div_vmap(&x, &y0);
    for r in 0..2 {
        let want = real_fns()[3].1(&x.slice(s![r, ..]), &y0);
        check("#[vmap] unbatched operand", &got.slice(s![r]), &want);
    }
}

/// A real-valued wrapper: `v` holds the real parts, then the imaginary parts.
fn split(v: &Array) -> Array {
    let n = v.shape()[0] / 2;
    jnp::complex(v.slice(s![..n]), v.slice(s![n..]))
}

/// A named real-valued function of an f64 array, for the finite-difference checks.
type Case = (&'static str, Box<dyn Fn(&Array) -> Array>);

#[test]
fn new_derivative_rules_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let v = Array::from_shape_vec([8], vec![0.3, -1.2, 2.0, 0.7, 1.5, 0.25, -0.6, -2.0]);
    let w = jnp::complex(jnp::array([1.1, 0.5, -0.8, 0.2]), jnp::array([-0.3, 0.7, 0.4, 1.2]));
    let cases: Vec<Case> = vec![
        ("real/imag/complex", Box::new(|v| jnp::real(&split(v)) * jnp::imag(&split(v)))),
        ("conj", Box::new(move |v| jnp::imag(&(jnp::conj(&split(v)) * &w)))),
        ("abs", Box::new(|v| jnp::abs(&split(v)))),
        ("angle", Box::new(|v| jnp::angle(&split(v)))),
        ("exp/log", Box::new(|v| jnp::real(&(jnp::exp(&split(v)) + jnp::log(&split(v)))))),
        ("sqrt/rsqrt", Box::new(|v| jnp::imag(&(jnp::sqrt(&split(v)) * jnp::rsqrt(&split(v)))))),
        ("sin/cos", Box::new(|v| jnp::real(&(jnp::sin(&split(v)) / jnp::cos(&split(v)))))),
        ("tanh/tan", Box::new(|v| jnp::imag(&(jnp::tanh(&split(v)) - jnp::tan(&split(v)))))),
        ("sinh/cosh", Box::new(|v| jnp::abs(&(jnp::sinh(&split(v)) * jnp::cosh(&split(v)))))),
        ("pow", Box::new(|v| jnp::real(&jnp::pow(split(v), jnp::conj(&split(v)))))),
        (
            "astype",
            Box::new(|v| (v.astype(DType::C128) * Complex::new(0.5, 2.0)).astype(DType::F64)),
        ),
        ("sum/prod", Box::new(|v| jnp::abs(&(jnp::sum(&split(v)) * jnp::prod(&split(v)))))),
        ("var", Box::new(|v| jnp::var(&split(v)))),
    ];
    for (name, f) in &cases {
        check_grads(name, f.as_ref(), &v, 1e-6);
    }
}

#[test]
fn creation_reading_back_and_printing() {
    let _x64 = rjax::config::x64_scope(true);
    let z = jnp::array([[Complex::new(1.0f32, 2.0), Complex::new(3.0, -4.0)]]);
    assert_eq!((z.shape(), z.dtype()), (&[1, 2][..], DType::C64));
    assert_eq!(
        z.to_vec::<Complex<f32>>().unwrap(),
        vec![Complex::new(1.0, 2.0), Complex::new(3.0, -4.0)]
    );
    assert!(z.to_vec::<f32>().is_err(), "reading complex as f32 is a dtype error");
    let v = Array::from_shape_vec([2], vec![Complex::new(0.5f64, -1.0), Complex::new(0.0, 0.0)]);
    assert_eq!(v.dtype(), DType::C128);
    assert!(v.item::<Complex<f64>>().is_err());
    assert_eq!(format!("{z}"), "[[1.+2.j 3.-4.j]] dtype=complex64");
    assert_eq!(format!("{v:?}"), "Array([0.5-1.j,  0.+0.j], dtype=complex128)");
    // A weak complex scalar keeps a float32 array's precision.
    let x = jnp::array([1.0f32, 2.0]);
    let y = &x * Complex::new(0.0f64, 1.0);
    assert_eq!((y.dtype(), y.is_weak()), (DType::C64, false));
    assert_eq!(y.to_vec::<Complex<f32>>().unwrap()[1], Complex::new(0.0, 2.0));
}

#[test]
fn operations_complex_numbers_lack_are_refused() {
    let z = jnp::array([Complex::new(1.0f32, 2.0), Complex::new(3.0, -4.0)]);
    let msg = panic_text(|| drop(jnp::less(&z, &z)));
    assert!(msg.contains("lt") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::greater_equal(&z, 1.0)));
    assert!(msg.contains("ge") && msg.contains("complex"), "{msg}");
    let msg = panic_text(|| drop(jnp::maximum(&z, &z)));
    assert!(msg.contains("max") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::max(&z)));
    assert!(msg.contains("reduce_max") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::argmax(&z)));
    assert!(msg.contains("argmax") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::sort(&z)));
    assert!(msg.contains("sort") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::floor(&z)));
    assert!(msg.contains("floor") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::complex(&z, &z)));
    assert!(msg.contains("complex") && msg.contains("must be real"), "{msg}");
    let msg = panic_text(|| drop(grad_of(|z| jnp::sum(z), &z)));
    assert!(msg.contains("grad") && msg.contains("complex64"), "{msg}");
    let dir = std::env::temp_dir().join(format!("rjax-complex-{}", std::process::id()));
    let err = rjax::checkpoint::save(&dir, &z).unwrap_err().to_string();
    assert!(err.contains("complex64"), "{err}");
}
