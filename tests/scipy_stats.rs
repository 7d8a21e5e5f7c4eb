//! `rjax::scipy::stats` against JAX (`tests/data/scipy_stats.json`, made by
//! `tests/data/gen/scipy_stats.py`): every distribution function eagerly, under `#[jit]`, the
//! gradient of its sum with respect to the point and every parameter under `#[grad]`, and
//! `#[vmap]` over all operands, in f32 and f64; values at the edges of the supports and for
//! invalid parameters; f64 finite-difference checks of the derivatives; and the messages for
//! operands that do not fit.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use common::gradcheck::{check_first, check_grads};
use common::{assert_close, leaf_to_array, panic_text};
use rjax::prelude::*;
use rjax::scipy::stats::{gamma, multivariate_normal};
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/scipy_stats.json")).unwrap())
}

fn case(name: &str) -> &'static Value {
    let c = &data()["cases"][name];
    assert!(!c.is_null(), "no golden case {name}");
    c
}

fn leaves(name: &str, key: &str) -> Vec<Array> {
    case(name)[key].as_array().unwrap().iter().map(leaf_to_array).collect()
}

fn field(name: &str, key: &str) -> Array {
    leaf_to_array(&case(name)[key])
}

/// The compositions are JAX's, on kernels (`lgamma`, `log1p`, Cholesky) that agree with XLA's
/// to a few ulps in f64 and within f32 rounding in f32. `beta` goes through `betaln`, which
/// JAX computes by an algorithm accurate to about 1e-7 (see `tests/scipy_special.rs`).
fn tolerance(what: &str, dtype: DType) -> (f64, f64) {
    match dtype {
        _ if what.starts_with("beta_") => (2e-6, 1e-6),
        DType::F32 => (3e-5, 1e-6),
        _ => (1e-10, 1e-13),
    }
}

#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = tolerance(what, want.dtype());
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    // The comparison's own message (printed above this one) has the elements.
    let compared = catch_unwind(AssertUnwindSafe(|| assert_close(got, want, rtol, atol)));
    assert!(compared.is_ok(), "{what} differs from JAX");
}

/// One distribution function of its operands (point first): eagerly, under `#[jit]`, the
/// gradient of its sum with respect to every operand, and mapped over all of them.
struct Dist {
    eager: fn(&[Array]) -> Array,
    jit: fn(&[Array]) -> Array,
    grad: fn(&[Array]) -> Vec<Array>,
    vmap: fn(&[Array]) -> Array,
}

macro_rules! dists {
    ($($name:ident: |$a:ident| $body:expr;)*) => {
        $(
            mod $name {
                use rjax::prelude::*;

                pub fn eager($a: &[Array]) -> Array { $body }

                #[jit]
                pub fn jit($a: &[Array]) -> Array { $body }

                #[grad]
                pub fn grad($a: &[Array]) -> Vec<Array> { ($body).sum() }

                #[vmap]
                pub fn vmap($a: &[Array]) -> Array { $body }
            }
        )*

        fn dists() -> Vec<(&'static str, Dist)> {
            vec![$((stringify!($name), Dist {
                eager: $name::eager,
                jit: $name::jit,
                grad: $name::grad,
                vmap: $name::vmap,
            })),*]
        }
    };
}

dists! {
    gamma_logpdf: |a| scipy::stats::gamma::logpdf(&a[0], &a[1], &a[2], &a[3]);
    gamma_pdf: |a| scipy::stats::gamma::pdf(&a[0], &a[1], &a[2], &a[3]);
    beta_logpdf: |a| scipy::stats::beta::logpdf(&a[0], &a[1], &a[2], &a[3], &a[4]);
    beta_pdf: |a| scipy::stats::beta::pdf(&a[0], &a[1], &a[2], &a[3], &a[4]);
    poisson_logpmf: |a| scipy::stats::poisson::logpmf(&a[0], &a[1], &a[2]);
    poisson_pmf: |a| scipy::stats::poisson::pmf(&a[0], &a[1], &a[2]);
    bernoulli_logpmf: |a| scipy::stats::bernoulli::logpmf(&a[0], &a[1], &a[2]);
    bernoulli_pmf: |a| scipy::stats::bernoulli::pmf(&a[0], &a[1], &a[2]);
    bernoulli_cdf: |a| scipy::stats::bernoulli::cdf(&a[0], &a[1]);
    bernoulli_ppf: |a| scipy::stats::bernoulli::ppf(&a[0], &a[1]);
    t_logpdf: |a| scipy::stats::t::logpdf(&a[0], &a[1], &a[2], &a[3]);
    t_pdf: |a| scipy::stats::t::pdf(&a[0], &a[1], &a[2], &a[3]);
    uniform_logpdf: |a| scipy::stats::uniform::logpdf(&a[0], &a[1], &a[2]);
    uniform_pdf: |a| scipy::stats::uniform::pdf(&a[0], &a[1], &a[2]);
    uniform_cdf: |a| scipy::stats::uniform::cdf(&a[0], &a[1], &a[2]);
    uniform_ppf: |a| scipy::stats::uniform::ppf(&a[0], &a[1], &a[2]);
    laplace_logpdf: |a| scipy::stats::laplace::logpdf(&a[0], &a[1], &a[2]);
    laplace_pdf: |a| scipy::stats::laplace::pdf(&a[0], &a[1], &a[2]);
    laplace_cdf: |a| scipy::stats::laplace::cdf(&a[0], &a[1], &a[2]);
    logistic_logpdf: |a| scipy::stats::logistic::logpdf(&a[0], &a[1], &a[2]);
    logistic_pdf: |a| scipy::stats::logistic::pdf(&a[0], &a[1], &a[2]);
    logistic_cdf: |a| scipy::stats::logistic::cdf(&a[0], &a[1], &a[2]);
    logistic_sf: |a| scipy::stats::logistic::sf(&a[0], &a[1], &a[2]);
    logistic_ppf: |a| scipy::stats::logistic::ppf(&a[0], &a[1], &a[2]);
    logistic_isf: |a| scipy::stats::logistic::isf(&a[0], &a[1], &a[2]);
    norm_sf: |a| scipy::stats::norm::sf(&a[0], &a[1], &a[2]);
    multivariate_normal_logpdf: |a| scipy::stats::multivariate_normal::logpdf(&a[0], &a[1], &a[2]);
    multivariate_normal_pdf: |a| scipy::stats::multivariate_normal::pdf(&a[0], &a[1], &a[2]);
}

const DTYPES: [&str; 2] = ["float32", "float64"];

#[test]
fn distributions_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in dists() {
        for dt in DTYPES {
            let c = format!("{name}_{dt}");
            let (args, want) = (leaves(&c, "args"), field(&c, "out"));
            check(&format!("{c} eager"), &(f.eager)(&args), &want);
            check(&format!("{c} jit"), &(f.jit)(&args), &want);
        }
    }
}

#[test]
fn gradients_with_respect_to_every_operand_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in dists() {
        for dt in DTYPES {
            let c = format!("{name}_{dt}");
            let args = leaves(&c, "args");
            let (got, want) = ((f.grad)(&args), leaves(&c, "grads"));
            assert_eq!(got.len(), want.len(), "{c}: one gradient per operand");
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                check(&format!("{c} grad of operand {i}"), g, w);
            }
        }
    }
}

#[test]
fn vmap_over_all_operands_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in dists() {
        for dt in DTYPES {
            let c = format!("{name}_{dt}");
            check(&format!("{c} vmap"), &(f.vmap)(&leaves(&c, "args")), &field(&c, "vmap"));
        }
    }
}

#[test]
fn edges_of_the_supports_and_invalid_parameters_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let mut seen = 0;
    for (name, f) in dists() {
        for dt in DTYPES {
            let c = format!("{name}_edges_{dt}");
            if data()["cases"][&c].is_null() {
                continue;
            }
            let (args, want) = (leaves(&c, "args"), field(&c, "out"));
            check(&format!("{c} eager"), &(f.eager)(&args), &want);
            check(&format!("{c} jit"), &(f.jit)(&args), &want);
            seen += 1;
        }
    }
    assert_eq!(seen, 38, "edge cases checked");
}

#[grad]
fn multivariate_normal_grads(a: &[Array]) -> Vec<Array> {
    scipy::stats::multivariate_normal::logpdf(&a[0], &a[1], &a[2]).sum()
}

#[test]
fn multivariate_normal_broadcasts_and_takes_scalar_mean_or_covariance() {
    let _x64 = rjax::config::x64_scope(true);
    for label in ["broadcast", "scalar_cov", "scalar_mean"] {
        for dt in DTYPES {
            let c = format!("multivariate_normal_{label}_{dt}");
            let args = leaves(&c, "args");
            let got = multivariate_normal::logpdf(&args[0], &args[1], &args[2]);
            check(&c, &got, &field(&c, "out"));
            let grads = multivariate_normal_grads(&args);
            for (i, (g, w)) in grads.iter().zip(&leaves(&c, "grads")).enumerate() {
                check(&format!("{c} grad of operand {i}"), g, w);
            }
        }
    }
}

/// `f` with operand `i` replaced by `v`, the others as in `args`.
fn vary(f: fn(&[Array]) -> Array, args: &[Array], i: usize) -> impl Fn(&Array) -> Array + '_ {
    move |v: &Array| {
        let mut a = args.to_vec();
        a[i] = v.clone();
        f(&a)
    }
}

/// Distributions checked to first order only: their golden points put 0 in the first operand
/// of `xlogy`/`xlog1py` (`a - 1` at `a = 1`, `k - loc` at 0), where rjax's second derivatives
/// of those functions are wrong (their custom rule computes its primal without the rule, so
/// the primal's own derivative loses `log y` at `x = 0`).
const FIRST_ORDER_ONLY: [&str; 4] = ["gamma_", "beta_", "poisson_", "bernoulli_"];

#[test]
fn derivatives_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    // Operands whose derivatives finite differences cannot check at the golden points: the
    // integer `k` of `poisson` (any step leaves the integers: -inf), `k` and `loc` where
    // `k - loc` is at the end of the support (a step past it is -inf), and the point of
    // `bernoulli`'s `cdf` and `ppf` (steps).
    let skip: &[(&str, usize)] = &[
        ("poisson_logpmf", 0),
        ("poisson_pmf", 0),
        ("poisson_logpmf", 2),
        ("poisson_pmf", 2),
        ("bernoulli_logpmf", 0),
        ("bernoulli_pmf", 0),
        ("bernoulli_logpmf", 2),
        ("bernoulli_pmf", 2),
        ("bernoulli_cdf", 0),
        ("bernoulli_ppf", 0),
    ];
    let mut checked = 0;
    for (name, f) in dists() {
        let args = leaves(&format!("{name}_float64"), "args");
        // A point outside the support (-inf) has no finite difference.
        let out = (f.eager)(&args).to_vec::<f64>().unwrap();
        if out.iter().any(|v| !v.is_finite()) {
            continue;
        }
        for i in 0..args.len() {
            if skip.contains(&(name, i)) {
                continue;
            }
            let g = vary(f.eager, &args, i);
            let label = format!("{name} operand {i}");
            // logit's curvature at q = 0.999 puts central differences about 1e-5 off.
            let tol = if name.ends_with("ppf") || name.ends_with("isf") { 1e-4 } else { 1e-6 };
            if FIRST_ORDER_ONLY.iter().any(|p| name.starts_with(p)) {
                check_first(&label, &g, &args[i], tol);
            } else {
                check_grads(&label, &g, &args[i], tol);
            }
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked} operands checked");
}

#[test]
fn the_density_integrates_to_one() {
    let _x64 = rjax::config::x64_scope(true);
    // Midpoint sums over the support: a check of the normalizations independent of JAX.
    let n = 20000;
    let mid = |lo: f64, hi: f64| {
        let h = (hi - lo) / n as f64;
        (jnp::arange(n as i64).astype(DType::F64) + 0.5) * h + lo
    };
    let total = |x: &Array, p: Array, lo: f64, hi: f64| {
        (p.sum() * ((hi - lo) / x.size() as f64)).item::<f64>().unwrap()
    };
    let x = mid(0.0, 60.0);
    assert!((total(&x, gamma::pdf(&x, 2.5, 0.0, 1.5), 0.0, 60.0) - 1.0).abs() < 1e-6);
    let x = mid(0.0, 1.0);
    let b = scipy::stats::beta::pdf(&x, 2.0, 3.5, 0.0, 1.0);
    assert!((total(&x, b, 0.0, 1.0) - 1.0).abs() < 1e-6);
    let x = mid(-400.0, 400.0);
    let t = scipy::stats::t::pdf(&x, 4.0, 0.5, 2.0);
    assert!((total(&x, t, -400.0, 400.0) - 1.0).abs() < 1e-5);
    let k = jnp::arange(60).astype(DType::F64);
    let p = scipy::stats::poisson::pmf(&k, 7.0, 0.0).sum().item::<f64>().unwrap();
    assert!((p - 1.0).abs() < 1e-12, "{p}");
}

#[test]
fn operands_that_do_not_fit_name_the_function_and_the_shapes() {
    let text = panic_text(|| {
        gamma::logpdf(jnp::zeros([3]), jnp::ones([2]), 0.0, 1.0);
    });
    assert!(
        text.contains("gamma.logpdf") && text.contains("(3,)") && text.contains("(2,)"),
        "{text}"
    );
    let text = panic_text(|| {
        multivariate_normal::logpdf(jnp::zeros([3]), jnp::zeros([3]), jnp::eye(2));
    });
    assert!(
        text.contains("multivariate_normal.logpdf")
            && text.contains("(2, 2)")
            && text.contains("(3,)"),
        "{text}"
    );
}
