//! `rjax::scipy` against JAX (`tests/data/scipy_special.json`, made by
//! `tests/data/gen/scipy_special.py`): every special function eagerly, under `#[jit]`, its
//! first and second derivatives and `#[vmap]`, in f32 and f64, with their poles and tails;
//! f64 finite-difference checks of every new derivative rule; the weighted `logsumexp`; and
//! `stats::norm`.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close, leaf_to_array, panic_text};
use rjax::prelude::*;
use rjax::scipy::{special, stats::norm};
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/scipy_special.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    let c = &data()["cases"][case];
    assert!(!c.is_null(), "no golden case {case}");
    leaf_to_array(&c[key])
}

/// rjax's kernels for these functions (series, `libm`) are not XLA's: they agree to a few
/// ulps in f64 and within f32 rounding of an f64 evaluation in f32.
fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F32 => (3e-5, 1e-6),
        _ => (1e-10, 1e-13),
    }
}

#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = if what.starts_with("i1e_float32 second") {
        // i1e'' = (i0e - i1e (sign + 1/x))' cancels badly in f32 near 0 and for large |x|:
        // JAX's and rjax's f32 values are both up to 1e-4 (relative) from the f64 value.
        (5e-4, 1e-6)
    } else if what.starts_with("betaln") {
        // JAX's betaln (its large-argument algorithm, whose coefficients are f32-accurate) is
        // about 1e-7 from the true value, in f64 too; `betaln_is_exact_for_small_integers`
        // checks rjax's against the exact value.
        (2e-6, 1e-6)
    } else {
        tolerance(want.dtype())
    };
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    // The comparison's own message (printed above this one) has the elements.
    let compared = catch_unwind(AssertUnwindSafe(|| assert_close(got, want, rtol, atol)));
    assert!(compared.is_ok(), "{what} differs from JAX");
}

/// One unary function: eagerly, under `#[jit]`, the gradient of its sum, and its first and
/// second derivatives mapped over the inputs.
struct Unary {
    eager: fn(&Array) -> Array,
    jit: fn(&Array) -> Array,
    grad: fn(&Array) -> Array,
    vmap_grad: fn(&Array) -> Array,
    vmap_grad2: fn(&Array) -> Array,
}

macro_rules! unary {
    ($($name:ident: |$x:ident| $body:expr;)*) => {
        $(
            mod $name {
                use rjax::prelude::*;

                pub fn eager($x: &Array) -> Array { $body }

                #[jit]
                pub fn jit($x: &Array) -> Array { $body }

                #[grad]
                pub fn grad($x: &Array) -> Array { ($body).sum() }

                #[vmap]
                #[grad]
                pub fn vmap_grad($x: &Array) -> Array { $body }

                #[vmap]
                #[grad]
                #[grad]
                pub fn vmap_grad2($x: &Array) -> Array { $body }
            }
        )*

        fn unary_cases() -> Vec<(&'static str, Unary)> {
            vec![$((stringify!($name), Unary {
                eager: $name::eager,
                jit: $name::jit,
                grad: $name::grad,
                vmap_grad: $name::vmap_grad,
                vmap_grad2: $name::vmap_grad2,
            })),*]
        }
    };
}

unary! {
    erf: |x| scipy::special::erf(x);
    erfc: |x| scipy::special::erfc(x);
    erfinv: |x| scipy::special::erfinv(x);
    logit: |x| scipy::special::logit(x);
    expit: |x| scipy::special::expit(x);
    ndtr: |x| scipy::special::ndtr(x);
    ndtri: |x| scipy::special::ndtri(x);
    gammaln: |x| scipy::special::gammaln(x);
    digamma: |x| scipy::special::digamma(x);
    i0e: |x| scipy::special::i0e(x);
    i1e: |x| scipy::special::i1e(x);
}

#[test]
fn unary_functions_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in unary_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let (x, want) = (field(&case, "x"), field(&case, "out"));
            check(&format!("{case} eager"), &(f.eager)(&x), &want);
            check(&format!("{case} jit"), &(f.jit)(&x), &want);
        }
    }
}

#[test]
fn unary_derivatives_match_jax_under_grad_and_vmap() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in unary_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let x = field(&case, "x");
            check(&format!("{case} grad"), &(f.grad)(&x), &field(&case, "grad"));
            check(&format!("{case} vmap grad"), &(f.vmap_grad)(&x), &field(&case, "vmap_grad"));
            check(&format!("{case} second"), &(f.vmap_grad2)(&x), &field(&case, "grad2"));
        }
    }
}

#[test]
fn poles_and_domain_ends_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    type F = fn(&Array) -> Array;
    let functions: [(&str, F); 7] = [
        ("gammaln", |x| scipy::special::gammaln(x)),
        ("digamma", |x| scipy::special::digamma(x)),
        ("erfinv", |x| scipy::special::erfinv(x)),
        ("ndtri", |x| scipy::special::ndtri(x)),
        ("logit", |x| scipy::special::logit(x)),
        ("i0e", |x| scipy::special::i0e(x)),
        ("i1e", |x| scipy::special::i1e(x)),
    ];
    for (name, f) in functions {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_edges_{dt}");
            check(&case, &f(&field(&case, "x")), &field(&case, "out"));
        }
    }
}

type Binary = fn(&Array, &Array) -> Array;

#[jit]
fn xlogy_jit(x: &Array, y: &Array) -> Array {
    scipy::special::xlogy(x, y)
}

#[grad(argnums = (0, 1))]
fn xlogy_grad(x: &Array, y: &Array) -> (Array, Array) {
    scipy::special::xlogy(x, y).sum()
}

#[vmap]
fn xlogy_vmap(x: &Array, y: &Array) -> Array {
    scipy::special::xlogy(x, y)
}

#[jit]
fn xlog1py_jit(x: &Array, y: &Array) -> Array {
    scipy::special::xlog1py(x, y)
}

#[grad(argnums = (0, 1))]
fn xlog1py_grad(x: &Array, y: &Array) -> (Array, Array) {
    scipy::special::xlog1py(x, y).sum()
}

#[vmap]
fn xlog1py_vmap(x: &Array, y: &Array) -> Array {
    scipy::special::xlog1py(x, y)
}

#[jit]
fn betaln_jit(a: &Array, b: &Array) -> Array {
    scipy::special::betaln(a, b)
}

#[grad(argnums = (0, 1))]
fn betaln_grad(a: &Array, b: &Array) -> (Array, Array) {
    scipy::special::betaln(a, b).sum()
}

#[vmap]
fn betaln_vmap(a: &Array, b: &Array) -> Array {
    scipy::special::betaln(a, b)
}

#[test]
fn binary_functions_match_jax_with_their_derivatives() {
    let _x64 = rjax::config::x64_scope(true);
    type Grads = fn(&Array, &Array) -> (Array, Array);
    let cases: [(&str, Binary, Binary, Grads, Binary); 3] = [
        ("xlogy", |x, y| special::xlogy(x, y), xlogy_jit, xlogy_grad, xlogy_vmap),
        ("xlog1py", |x, y| special::xlog1py(x, y), xlog1py_jit, xlog1py_grad, xlog1py_vmap),
        ("betaln", |x, y| special::betaln(x, y), betaln_jit, betaln_grad, betaln_vmap),
    ];
    for (name, eager, jit, grad, vmap) in cases {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let (x, y, want) = (field(&case, "x"), field(&case, "y"), field(&case, "out"));
            check(&format!("{case} eager"), &eager(&x, &y), &want);
            check(&format!("{case} jit"), &jit(&x, &y), &want);
            let (gx, gy) = grad(&x, &y);
            check(&format!("{case} grad x"), &gx, &field(&case, "grad_x"));
            check(&format!("{case} grad y"), &gy, &field(&case, "grad_y"));
            check(&format!("{case} vmap"), &vmap(&x, &y), &field(&case, "vmap"));
        }
    }
}

#[test]
fn betaln_is_exact_for_small_integers() {
    let _x64 = rjax::config::x64_scope(true);
    // B(10, 3) = 9! 2! / 12! = 1/660.
    let got = special::betaln(jnp::array([10.0f64]), jnp::array([3.0f64]));
    assert!((got.item::<f64>().unwrap() + 660f64.ln()).abs() < 1e-14, "{got:?}");
}

#[test]
fn xlogy_is_zero_at_zero_zero() {
    let zero = jnp::array([0.0f32]);
    assert_eq!(special::xlogy(&zero, &zero).to_vec::<f32>().unwrap(), vec![0.0]);
    assert_eq!(special::xlog1py(&zero, jnp::array([-1.0f32])).to_vec::<f32>().unwrap(), vec![0.0]);
}

#[grad]
fn logsumexp_b_grad(x: &Array, b: &Array, w: &Array) -> Array {
    let rows = scipy::special::logsumexp(x, -1, Some(b), false);
    (rows.take(jnp::array([0, 3]), Some(0)) * w.take(jnp::array([0, 3]), Some(0))).sum()
}

#[vmap]
fn logsumexp_b_rows(x: &Array, b: &Array) -> Array {
    scipy::special::logsumexp(x, Axes::All, Some(b), false)
}

#[grad]
fn logsumexp_axis0_grad(x: &Array) -> Array {
    scipy::special::logsumexp(x, 0, None, false).sum()
}

#[test]
fn weighted_logsumexp_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let case = format!("logsumexp_b_{dt}");
        let (x, b) = (field(&case, "x"), field(&case, "b"));
        check(&case, &special::logsumexp(&x, -1, Some(&b), false), &field(&case, "out"));
        let w = field(&case, "weights");
        check(&format!("{case} grad"), &logsumexp_b_grad(&x, &b, &w), &field(&case, "grad"));
        check(&format!("{case} vmap"), &logsumexp_b_rows(&x, &b), &field(&case, "vmap"));
        let case = format!("logsumexp_axis0_{dt}");
        let x = field(&case, "x");
        check(&case, &special::logsumexp(&x, 0, None, false), &field(&case, "out"));
        check(&format!("{case} grad"), &logsumexp_axis0_grad(&x), &field(&case, "grad"));
    }
}

macro_rules! norm_case {
    ($($name:ident: $f:path;)*) => {$(
        mod $name {
            use rjax::prelude::*;

            #[grad]
            pub fn grad(x: &Array) -> Array { $f(x, 0.5, 2.0).sum() }

            #[vmap]
            pub fn vmap(x: &Array) -> Array { $f(x, 0.5, 2.0) }
        }
    )*};
}

norm_case! {
    norm_pdf: scipy::stats::norm::pdf;
    norm_logpdf: scipy::stats::norm::logpdf;
    norm_cdf: scipy::stats::norm::cdf;
}

#[test]
fn normal_distribution_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    type F = fn(&Array) -> Array;
    let cases: [(&str, Binary, F, F); 3] = [
        ("norm_pdf", |x, _| norm::pdf(x, 0.5, 2.0), norm_pdf::grad, norm_pdf::vmap),
        ("norm_logpdf", |x, _| norm::logpdf(x, 0.5, 2.0), norm_logpdf::grad, norm_logpdf::vmap),
        ("norm_cdf", |x, _| norm::cdf(x, 0.5, 2.0), norm_cdf::grad, norm_cdf::vmap),
    ];
    for (name, f, grad, vmap) in cases {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let x = field(&case, "x");
            check(&case, &f(&x, &x), &field(&case, "out"));
            check(&format!("{case} grad"), &grad(&x), &field(&case, "grad"));
            check(&format!("{case} vmap"), &vmap(&x), &field(&case, "vmap"));
        }
    }
}

#[test]
fn derivative_rules_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let positive = jnp::array([0.07, 0.6, 1.3, 2.9, 7.5, 23.0]);
    let any = jnp::array([-31.0, -7.7, -0.9, -0.01, 0.4, 2.2, 8.3, 35.0]);
    let unit = jnp::array([0.03, 0.2, 0.45, 0.7, 0.96]);
    check_grads("erfc", &|x: &Array| special::erfc(x), &(&any / 10.0), 1e-6);
    check_grads("gammaln", &|x: &Array| special::gammaln(x), &positive, 1e-6);
    check_grads("gammaln < 0", &|x: &Array| special::gammaln(x), &(-&unit - 1.0), 1e-6);
    check_grads("digamma", &|x: &Array| special::digamma(x), &positive, 1e-6);
    check_grads("digamma < 0", &|x: &Array| special::digamma(x), &(-&unit - 2.0), 1e-6);
    check_grads("i0e", &|x: &Array| special::i0e(x), &any, 1e-6);
    check_grads("i1e", &|x: &Array| special::i1e(x), &any, 1e-6);
    check_grads("logit", &|x: &Array| special::logit(x), &unit, 1e-6);
    check_grads("ndtr", &|x: &Array| special::ndtr(x), &(&any / 4.0), 1e-6);
    check_grads("ndtri", &|x: &Array| special::ndtri(x), &unit, 1e-6);
    check_grads("xlogy x", &|x: &Array| special::xlogy(x, &positive), &(&positive - 1.0), 1e-6);
    check_grads("xlogy y", &|y: &Array| special::xlogy(any.slice(s![..6]), y), &positive, 1e-6);
    let five = positive.slice(s![..5]);
    check_grads("xlog1py y", &|y: &Array| special::xlog1py(&five, y), &unit, 1e-6);
    check_grads("xlog1py x", &|x: &Array| special::xlog1py(x, &unit), &five, 1e-6);
    check_grads("betaln", &|a: &Array| special::betaln(a, &positive), &(&positive + 0.5), 1e-6);
}

#[test]
fn logsumexp_out_of_range_axis_names_the_function_and_the_shape() {
    let x = jnp::zeros([2, 3]);
    let text = panic_text(|| {
        special::logsumexp(&x, 3, None, false);
    });
    assert!(text.contains("logsumexp") && text.contains("(2, 3)"), "{text}");
}
