//! `jnp::linalg` and `scipy::linalg` against JAX (`tests/data/linalg_decompositions.json`, made
//! by `tests/data/gen/linalg_decompositions.py`): values, gradients of scalar functions of the
//! outputs, `#[vmap]` and `#[jit]` forms in float32 and float64; f64 finite-difference checks
//! (first and second order) of the factorizations' derivative rules; and the errors for bad
//! input. Eigenvectors, QR factors and singular vectors are defined up to sign, so they are
//! compared through sign-invariant quantities: magnitudes, squares and reconstructions.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, golden_field, panic_text, Weights};
use rjax::jnp::linalg::NormOrd;
use rjax::prelude::*;
use rjax::scipy;
use rjax::scipy::linalg::Trans;
use rjax::transform::ad::api::grad_of;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/linalg_decompositions.json")).unwrap()
    })
}

fn field(case: &str, key: &str) -> Array {
    golden_field(&data()["cases"], case, key)
}

const DTYPES: [&str; 2] = ["float32", "float64"];

/// Factorizations in float32 round differently from LAPACK's; float64 agrees closely.
#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = match want.dtype() {
        DType::F32 => (2e-3, 2e-4),
        _ => (1e-8, 1e-10),
    };
    assert_close_as(what, got, want, rtol, atol);
}

/// `x * W` summed, `W` the generator's fixed weights.
#[traceable]
fn wsum(x: &Array) -> Array {
    (x * &Weights::like(x)).sum()
}

#[traceable]
fn sq(x: &Array) -> Array {
    x * x
}

/// `u diag(s) vh` for a stack of matrices.
fn rebuild(u: &Array, s: &Array, vh: &Array) -> Array {
    jnp::matmul(&(u * &s.expand_dims(-2)), vh)
}

#[jit]
fn cholesky_jit(a: &Array) -> Array {
    jnp::linalg::cholesky(a)
}

#[vmap(in_axes = 0)]
fn cholesky_vmap(a: &Array) -> Array {
    jnp::linalg::cholesky(a)
}

#[test]
fn cholesky_matches_jax_with_gradient_vmap_and_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("cholesky_{dt}");
        let a = field(&case, "a");
        check("cholesky", &jnp::linalg::cholesky(&a), &field(&case, "l"));
        check("cholesky jit", &cholesky_jit(&a), &field(&case, "l"));
        check(
            "cholesky grad",
            &grad_of(|a| wsum(&jnp::linalg::cholesky(a)), &a),
            &field(&case, "grad"),
        );
        check("cholesky vmap", &cholesky_vmap(&field(&case, "batch")), &field(&case, "vmap"));
        // Not positive definite: NaNs in the lower triangle, as JAX.
        let not_pd = field(&format!("eigh_{dt}"), "a");
        check("cholesky not pd", &jnp::linalg::cholesky(&not_pd), &field(&case, "notpd"));
    }
}

#[jit]
fn solve_jit(a: &Array, b: &Array) -> Array {
    jnp::linalg::solve(a, b)
}

#[vmap(in_axes = (0, None))]
fn solve_vmap(a: &Array, b: &Array) -> Array {
    jnp::linalg::solve(a, b)
}

#[test]
fn solve_and_inv_match_jax_with_gradients_vmap_and_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("solve_{dt}");
        let (a, b, bv) = (field(&case, "a"), field(&case, "b"), field(&case, "bv"));
        check("solve", &jnp::linalg::solve(&a, &b), &field(&case, "x"));
        check("solve vector", &jnp::linalg::solve(&a, &bv), &field(&case, "xv"));
        check("solve jit", &solve_jit(&a, &b), &field(&case, "x"));
        let ga = grad_of(|a| wsum(&jnp::linalg::solve(a, &b)), &a);
        check("solve grad a", &ga, &field(&case, "grad_a"));
        let gb = grad_of(|b| wsum(&jnp::linalg::solve(&a, b)), &b);
        check("solve grad b", &gb, &field(&case, "grad_b"));
        let b3 = b.slice(s![..3]);
        check("solve vmap", &solve_vmap(&field(&case, "batch"), &b3), &field(&case, "vmap"));
        // A singular matrix gives infinities or NaNs, as in JAX, and no panic.
        let singular = jnp::array([[1.0, 2.0], [2.0, 4.0]]).astype(a.dtype());
        let x = jnp::linalg::solve(&singular, &jnp::array([1.0, 1.0]).astype(a.dtype()));
        let finite = x.astype(DType::F64).to_vec::<f64>().unwrap().iter().all(|v| v.is_finite());
        let jax = field(&case, "singular").to_vec::<f64>().ok();
        assert!(!finite, "solve of a singular matrix gave finite {x:?} (JAX: {jax:?})");

        let case = format!("inv_{dt}");
        let a = field(&case, "a");
        check("inv", &jnp::linalg::inv(&a), &field(&case, "inv"));
        check("inv grad", &grad_of(|a| wsum(&jnp::linalg::inv(a)), &a), &field(&case, "grad"));
        let v = inv_vmap(&field(&case, "batch"));
        check("inv vmap", &v, &field(&case, "vmap"));
    }
}

#[vmap(in_axes = 0)]
fn inv_vmap(a: &Array) -> Array {
    jnp::linalg::inv(a)
}

#[vmap(in_axes = 0)]
fn logdet_vmap(a: &Array) -> Array {
    jnp::linalg::slogdet(a).1
}

#[jit]
fn det_jit(a: &Array) -> Array {
    jnp::linalg::det(a)
}

#[test]
fn det_and_slogdet_match_jax_with_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("det_{dt}");
        let (a, a5) = (field(&case, "a"), field(&case, "a5"));
        check("det 4", &jnp::linalg::det(&a), &field(&case, "det"));
        check("det 4 jit", &det_jit(&a), &field(&case, "det"));
        check("det 5", &jnp::linalg::det(&a5), &field(&case, "det5"));
        let batch = field(&format!("inv_{dt}"), "batch");
        check("det 3 batch", &jnp::linalg::det(&batch), &field(&case, "det3"));
        check("det 2", &jnp::linalg::det(&a.slice(s![..2, ..2])), &field(&case, "det2"));
        check("det grad", &grad_of(|a| jnp::linalg::det(a), &a), &field(&case, "grad"));
        check("det grad 5", &grad_of(|a| jnp::linalg::det(a), &a5), &field(&case, "grad5"));
        let (sign, logdet) = jnp::linalg::slogdet(&a5);
        check("slogdet sign", &sign, &field(&case, "sign"));
        check("slogdet logdet", &logdet, &field(&case, "logdet"));
        check("slogdet sign of -a", &jnp::linalg::slogdet(&-&a5).0, &field(&case, "sign_neg"));
        let g = grad_of(|a| jnp::linalg::slogdet(a).1, &a5);
        check("slogdet grad", &g, &field(&case, "grad_logdet"));
        check("slogdet vmap", &logdet_vmap(&batch), &field(&case, "vmap_logdet"));
        let (sign, logdet) = jnp::linalg::slogdet(&jnp::zeros_dtype([4, 4], a.dtype()));
        check("singular sign", &sign, &field(&case, "singular_sign"));
        check("singular logdet", &logdet, &field(&case, "singular_logdet"));
    }
}

#[jit]
fn eigh_jit(a: &Array) -> (Array, Array) {
    jnp::linalg::eigh(a)
}

#[vmap(in_axes = 0)]
fn eigvals_vmap(a: &Array) -> Array {
    jnp::linalg::eigvalsh(a)
}

#[test]
fn eigh_matches_jax_up_to_eigenvector_signs() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("eigh_{dt}");
        let a = field(&case, "a");
        for (how, (w, v)) in [("eager", jnp::linalg::eigh(&a)), ("jit", eigh_jit(&a))] {
            check(&format!("eigh {how} w"), &w, &field(&case, "w"));
            check(&format!("eigh {how} |v|"), &jnp::abs(&v), &field(&case, "vabs"));
            check(&format!("eigh {how} rebuilt"), &rebuild(&v, &w, &v.swapaxes(-1, -2)), &a);
        }
        let f = |a: &Array| {
            let (w, v) = jnp::linalg::eigh(a);
            wsum(&w) + wsum(&sq(&v))
        };
        check("eigh grad", &grad_of(f, &a), &field(&case, "grad"));
        let batch = field(&case, "batch");
        check("eigh vmap", &eigvals_vmap(&batch), &field(&case, "vmap_w"));
    }
}

#[test]
fn qr_matches_jax_up_to_signs() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("qr_{dt}");
        let a = field(&case, "a");
        let (q, r) = jnp::linalg::qr(&a);
        check("qr |q|", &jnp::abs(&q), &field(&case, "qabs"));
        check("qr |r|", &jnp::abs(&r), &field(&case, "rabs"));
        check("qr rebuilt", &jnp::matmul(&q, &r), &a);
        let f = |a: &Array| {
            let (q, r) = jnp::linalg::qr(a);
            wsum(&sq(&q)) + wsum(&sq(&r))
        };
        check("qr grad", &grad_of(f, &a), &field(&case, "grad"));
        let g = field(&format!("inv_{dt}"), "a");
        check("qr grad square", &grad_of(f, &g), &field(&case, "grad_square"));
        let (qc, rc) = jnp::linalg::qr_complete(&a);
        assert_eq!(qc.shape(), field(&case, "qcshape").shape());
        check("qr complete |r|", &jnp::abs(&rc), &field(&case, "rcabs"));
        check("qr complete rebuilt", &jnp::matmul(&qc, &rc), &a);
        let eye = jnp::eye(5).astype(a.dtype());
        check("qr complete orthogonal", &jnp::matmul(&qc.swapaxes(-1, -2), &qc), &eye);
    }
}

#[jit]
fn svd_jit(a: &Array) -> (Array, Array, Array) {
    jnp::linalg::svd(a, false)
}

#[vmap(in_axes = 0)]
fn svdvals_vmap(a: &Array) -> Array {
    jnp::linalg::svdvals(a)
}

#[test]
fn svd_matches_jax_up_to_signs() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("svd_{dt}");
        let (a, wide) = (field(&case, "a"), field(&case, "wide"));
        for (how, (u, s, vh)) in [("eager", jnp::linalg::svd(&a, false)), ("jit", svd_jit(&a))] {
            check(&format!("svd {how} s"), &s, &field(&case, "s"));
            check(&format!("svd {how} |u|"), &jnp::abs(&u), &field(&case, "uabs"));
            check(&format!("svd {how} |vh|"), &jnp::abs(&vh), &field(&case, "vhabs"));
            check(&format!("svd {how} rebuilt"), &rebuild(&u, &s, &vh), &a);
        }
        let (uf, sf, vhf) = jnp::linalg::svd(&wide, true);
        assert_eq!(uf.shape(), field(&case, "ufshape").shape());
        assert_eq!(vhf.shape(), field(&case, "vhfshape").shape());
        check("svd full s", &sf, &field(&case, "s_wide"));
        let k = sf.shape()[0] as isize;
        check("svd full rebuilt", &rebuild(&uf, &sf, &vhf.slice(s![..k])), &wide);
        let f = |a: &Array| {
            let (u, s, vh) = jnp::linalg::svd(a, false);
            wsum(&sq(&u)) + wsum(&s) + wsum(&sq(&vh))
        };
        check("svd grad tall", &grad_of(f, &a), &field(&case, "grad"));
        check("svd grad wide", &grad_of(f, &wide), &field(&case, "grad_wide"));
        let g = field(&format!("inv_{dt}"), "a");
        check("svd grad square", &grad_of(f, &g), &field(&case, "grad_square"));
        let gv = grad_of(|a| wsum(&jnp::linalg::svdvals(a)), &wide);
        check("svdvals grad", &gv, &field(&case, "svdvals_grad"));
        check("svd vmap", &svdvals_vmap(&field(&case, "batch")), &field(&case, "vmap_s"));
    }
}

#[vmap(in_axes = 0)]
fn norm2_vmap(x: &Array) -> Array {
    jnp::linalg::norm_with(x, Some(NormOrd::P(2.0)), None, false)
}

#[test]
fn norms_match_jax_for_every_order_axis_and_keepdims() {
    let _x64 = rjax::config::x64_scope(true);
    let inf = f64::INFINITY;
    for dt in DTYPES {
        let case = format!("norm_{dt}");
        let (v, wide, x3) = (field(&case, "v"), field(&case, "wide"), field(&case, "x3"));
        let vector = [
            ("none", None),
            ("inf", Some(inf)),
            ("ninf", Some(-inf)),
            ("0", Some(0.0)),
            ("1", Some(1.0)),
            ("2", Some(2.0)),
            ("3", Some(3.0)),
            ("0.5", Some(0.5)),
            ("n1", Some(-1.0)),
        ];
        for (name, p) in vector {
            let got = jnp::linalg::norm_with(&v, p.map(NormOrd::P), None, false);
            check(&format!("vector norm {name}"), &got, &field(&case, &format!("vec_{name}")));
        }
        let matrix = [
            ("none", None),
            ("fro", Some(NormOrd::Fro)),
            ("nuc", Some(NormOrd::Nuc)),
            ("1", Some(NormOrd::P(1.0))),
            ("n1", Some(NormOrd::P(-1.0))),
            ("2", Some(NormOrd::P(2.0))),
            ("n2", Some(NormOrd::P(-2.0))),
            ("inf", Some(NormOrd::P(inf))),
            ("ninf", Some(NormOrd::P(-inf))),
        ];
        for (name, ord) in matrix {
            let m = jnp::linalg::norm_with(&wide, ord, None, false);
            check(&format!("matrix norm {name}"), &m, &field(&case, &format!("mat_{name}")));
            let axes = jnp::linalg::norm_with(&x3, ord, Some(&[2, 0]), false);
            check(
                &format!("norm {name} axes (2, 0)"),
                &axes,
                &field(&case, &format!("axes_{name}")),
            );
            let keep = jnp::linalg::norm_with(&x3, ord, Some(&[0, 2]), true);
            check(&format!("norm {name} keepdims"), &keep, &field(&case, &format!("keep_{name}")));
        }
        check("norm flat", &jnp::linalg::norm(&x3), &field(&case, "flat"));
        let keep = jnp::linalg::norm_with(&x3, Some(NormOrd::P(3.0)), Some(&[1]), true);
        check("norm axis 1 keepdims", &keep, &field(&case, "axis1_keep"));
        let grad =
            |x: &Array, ord| grad_of(|x| jnp::linalg::norm_with(x, Some(ord), None, false), x);
        check("norm grad vec 3", &grad(&v, NormOrd::P(3.0)), &field(&case, "grad_vec3"));
        check("norm grad fro", &grad(&wide, NormOrd::Fro), &field(&case, "grad_fro"));
        check("norm grad nuc", &grad(&wide, NormOrd::Nuc), &field(&case, "grad_nuc"));
        check("norm grad 2", &grad(&wide, NormOrd::P(2.0)), &field(&case, "grad_2"));
        check("norm grad 1", &grad(&wide, NormOrd::P(1.0)), &field(&case, "grad_1"));
        check("norm vmap", &norm2_vmap(&x3), &field(&case, "vmap_2"));
    }
}

#[test]
fn lstsq_pinv_and_matrix_power_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("lstsq_{dt}");
        let (a, b) = (field(&case, "a"), field(&case, "b"));
        let r = jnp::linalg::lstsq(&a, &b, None);
        check("lstsq x", &r.x, &field(&case, "x"));
        check("lstsq residuals", &r.residuals, &field(&case, "resid"));
        check("lstsq rank", &r.rank, &field(&case, "rank"));
        check("lstsq s", &r.s, &field(&case, "s"));
        let b0 = b.slice(s![.., 0]);
        let rv = jnp::linalg::lstsq(&a, &b0, None);
        check("lstsq vector x", &rv.x, &field(&case, "xv"));
        check("lstsq vector residuals", &rv.residuals, &field(&case, "residv"));
        let g = grad_of(|a| wsum(&jnp::linalg::lstsq(a, &b, None).x), &a);
        check("lstsq grad", &g, &field(&case, "grad"));
        let wide = field(&format!("pinv_{dt}"), "wide");
        let xw = jnp::linalg::lstsq(&wide, &b.slice(s![..3]), None).x;
        check("lstsq wide", &xw, &field(&case, "x_wide"));
        let col = a.slice(s![.., ..1]);
        let rank1 = jnp::matmul(&col, &jnp::array([[1.0, 2.0, 3.0]]).astype(a.dtype()));
        check("lstsq rank", &jnp::linalg::lstsq(&rank1, &b, None).rank, &field(&case, "rank_def"));

        let case = format!("pinv_{dt}");
        check("pinv", &jnp::linalg::pinv(&a, None), &field(&case, "pinv"));
        check("pinv wide", &jnp::linalg::pinv(&wide, None), &field(&case, "pinv_wide"));
        let g = grad_of(|a| wsum(&jnp::linalg::pinv(a, None)), &a);
        check("pinv grad", &g, &field(&case, "grad"));
        check("pinv vmap", &pinv_vmap(&field(&case, "batch")), &field(&case, "vmap"));

        let case = format!("matrix_power_{dt}");
        let g = field(&case, "a");
        for n in [0i64, 1, 2, 3, 5, 6, -2] {
            let key = format!("p{n}").replace('-', "m");
            check(
                &format!("matrix_power {n}"),
                &jnp::linalg::matrix_power(&g, n),
                &field(&case, &key),
            );
        }
        let g5 = grad_of(|a| wsum(&jnp::linalg::matrix_power(a, 5)), &g);
        check("matrix_power grad", &g5, &field(&case, "grad5"));
    }
}

#[vmap(in_axes = 0)]
fn pinv_vmap(a: &Array) -> Array {
    jnp::linalg::pinv(a, None)
}

#[vmap(in_axes = 1, out_axes = 1)]
fn solve_lower_vmap(b: &Array) -> Array {
    let low = field("solve_triangular_float64", "low");
    scipy::linalg::solve_triangular(&low.astype(b.dtype()), b, Trans::N, true, false)
}

#[test]
fn solve_triangular_matches_jax_for_every_flag() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("solve_triangular_{dt}");
        let (low, b, bv) = (field(&case, "low"), field(&case, "b"), field(&case, "bv"));
        for (trans, t) in [(Trans::N, 0), (Trans::T, 1)] {
            for lower in [true, false] {
                for unit in [false, true] {
                    let a = if lower { low.clone() } else { low.swapaxes(0, 1) };
                    let key = format!("t{t}_{}_{}", if lower { 'l' } else { 'u' }, unit as u8);
                    let f = |a: &Array, b: &Array| {
                        scipy::linalg::solve_triangular(a, b, trans, lower, unit)
                    };
                    check(&key, &f(&a, &b), &field(&case, &key));
                    check(
                        &format!("{key} vector"),
                        &f(&a, &bv),
                        &field(&case, &format!("{key}_v")),
                    );
                    let ga = grad_of(|a| wsum(&f(a, &b)), &a);
                    check(&format!("{key} grad a"), &ga, &field(&case, &format!("{key}_ga")));
                    let gb = grad_of(|b| wsum(&f(&a, b)), &b);
                    check(&format!("{key} grad b"), &gb, &field(&case, &format!("{key}_gb")));
                }
            }
        }
        check("solve_triangular vmap", &solve_lower_vmap(&b), &field(&case, "vmap"));
    }
}

#[jit]
fn lu_jit(a: &Array) -> (Array, Array, Array) {
    scipy::linalg::lu(a)
}

#[vmap(in_axes = 0)]
fn lu_u_vmap(a: &Array) -> Array {
    scipy::linalg::lu(a).2
}

#[test]
fn lu_matches_jax_for_square_tall_and_wide_matrices() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = format!("lu_{dt}");
        for name in ["square", "tall", "wide"] {
            let a = field(&case, name);
            for (how, (p, l, u)) in [("eager", scipy::linalg::lu(&a)), ("jit", lu_jit(&a))] {
                check(&format!("lu {name} {how} p"), &p, &field(&case, &format!("{name}_p")));
                check(&format!("lu {name} {how} l"), &l, &field(&case, &format!("{name}_l")));
                check(&format!("lu {name} {how} u"), &u, &field(&case, &format!("{name}_u")));
            }
            let g = grad_of(
                |a| {
                    let (_, l, u) = scipy::linalg::lu(a);
                    wsum(&l) + wsum(&u)
                },
                &a,
            );
            check(&format!("lu {name} grad"), &g, &field(&case, &format!("{name}_grad")));
        }
        check("lu vmap", &lu_u_vmap(&field(&case, "batch")), &field(&case, "vmap_u"));
    }
}

/// f64 matrices for the finite-difference checks.
fn f64_field(case: &str, key: &str) -> Array {
    field(case, key).astype(DType::F64)
}

#[test]
fn factorization_derivatives_match_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let spd = f64_field("cholesky_float64", "a");
    check_grads("cholesky", &|a| jnp::linalg::cholesky(a), &spd, 1e-6);
    let sym = f64_field("eigh_float64", "a");
    check_grads("eigh w", &|a| jnp::linalg::eigh(a).0, &sym, 1e-6);
    check_grads("eigh v^2", &|a| sq(&jnp::linalg::eigh(a).1), &sym, 1e-6);
    let tall = f64_field("qr_float64", "a");
    check_grads("qr q", &|a| jnp::linalg::qr(a).0, &tall, 1e-6);
    check_grads("qr r", &|a| jnp::linalg::qr(a).1, &tall, 1e-6);
    check_grads("svd s", &|a| jnp::linalg::svd(a, false).1, &tall, 1e-6);
    check_grads("svd u^2", &|a| sq(&jnp::linalg::svd(a, false).0), &tall, 1e-6);
    let wide = f64_field("svd_float64", "wide");
    check_grads("svd vh^2 wide", &|a| sq(&jnp::linalg::svd(a, false).2), &wide, 1e-6);
    check_grads("svdvals", &|a| jnp::linalg::svdvals(a), &wide, 1e-6);
    for name in ["square", "tall", "wide"] {
        let a = f64_field("lu_float64", name);
        check_grads(&format!("lu {name} l"), &|a| scipy::linalg::lu(a).1, &a, 1e-6);
        check_grads(&format!("lu {name} u"), &|a| scipy::linalg::lu(a).2, &a, 1e-6);
    }
    let low = f64_field("solve_triangular_float64", "low");
    let b = f64_field("solve_triangular_float64", "b");
    for lower in [true, false] {
        let a = if lower { low.clone() } else { low.swapaxes(0, 1) };
        for (trans, unit) in [(Trans::N, false), (Trans::T, true)] {
            let label = format!("solve_triangular lower={lower} {trans:?} unit={unit}");
            check_grads(
                &label,
                &|a| scipy::linalg::solve_triangular(a, &b, trans, lower, unit),
                &a,
                1e-6,
            );
            check_grads(
                &label,
                &|b| scipy::linalg::solve_triangular(&a, b, trans, lower, unit),
                &b,
                1e-6,
            );
        }
    }
    let g = f64_field("det_float64", "a5");
    check_grads("det", &|a| jnp::linalg::det(a), &g, 1e-6);
    check_grads("solve", &|a| jnp::linalg::solve(a, &b), &f64_field("solve_float64", "a"), 1e-6);
    check_grads("pinv", &|a| jnp::linalg::pinv(a, None), &tall, 1e-6);
}

#[test]
fn bad_input_errors_name_the_operation_and_shapes() {
    let rect = jnp::ones([3, 4]);
    let msg = panic_text(|| {
        jnp::linalg::cholesky(&rect);
    });
    assert!(msg.contains("cholesky") && msg.contains("(3, 4)"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::cholesky(&jnp::ones([3]));
    });
    assert!(msg.contains("cholesky") && msg.contains("(3,)"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::solve(&jnp::eye(3), &jnp::ones([4]));
    });
    assert!(msg.contains("solve") && msg.contains("(3, 3)") && msg.contains("(4,)"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::solve(&jnp::ones([2, 3, 3]), &jnp::ones([4, 3, 1]));
    });
    assert!(msg.contains("solve") && msg.contains("(4, 3, 1)"), "{msg}");
    let msg = panic_text(|| {
        scipy::linalg::solve_triangular(&jnp::eye(3), &jnp::ones([2, 2]), Trans::N, true, false);
    });
    assert!(msg.contains("solve_triangular") && msg.contains("(2, 2)"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::inv(&jnp::ones([2, 3]));
    });
    assert!(msg.contains("inv") && msg.contains("(2, 3)"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::eigh(&jnp::ones([2, 2]).astype(DType::F16));
    });
    assert!(msg.contains("eigh") && msg.contains("float16"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::norm_with(&jnp::ones([4]), Some(NormOrd::Nuc), None, false);
    });
    assert!(msg.contains("norm") && msg.contains("Nuc"), "{msg}");
    let msg = panic_text(|| {
        jnp::linalg::norm_with(&jnp::ones([2, 2]), Some(NormOrd::P(3.0)), None, false);
    });
    assert!(msg.contains("norm") && msg.contains('3'), "{msg}");
    // Derivatives JAX does not define either.
    let wide = jnp::ones([2, 3]);
    let msg = panic_text(|| {
        grad_of(|a| jnp::linalg::qr(a).1.sum(), &wide);
    });
    assert!(msg.contains("qr"), "{msg}");
    let msg = panic_text(|| {
        grad_of(|a| jnp::linalg::svd(a, true).1.sum(), &wide);
    });
    assert!(msg.contains("svd") && msg.contains("full_matrices"), "{msg}");
}

#[test]
fn integer_matrices_are_factored_as_floats() {
    let a = jnp::array([[4i32, 2], [2, 5]]);
    let l = jnp::linalg::cholesky(&a);
    assert_eq!(l.dtype(), DType::F32);
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![2.0, 0.0, 1.0, 2.0]);
}

#[test]
#[should_panic(
    expected = "cholesky: expected square matrices (last two axes equal), got float32(3, 4)"
)]
fn cholesky_of_a_non_square_matrix_panics() {
    jnp::linalg::cholesky(&jnp::ones([3, 4]));
}

#[test]
#[should_panic(
    expected = "solve: the right-hand side must be a vector of 3 or a stack of matrices \
                           with 3 rows to match the 3 x 3 matrices, got shapes (3, 3) and (4, 2)"
)]
fn solve_with_mismatched_shapes_panics() {
    jnp::linalg::solve(&jnp::eye(3), &jnp::ones([4, 2]));
}

#[test]
#[should_panic(
    expected = "solve: the right-hand side must be a vector of 3 or a stack of matrices \
                           with 3 rows to match the 3 x 3 matrices, got shapes (2, 3, 3) and (4, 3, 1)"
)]
fn solve_with_batches_that_do_not_broadcast_panics() {
    jnp::linalg::solve(&jnp::ones([2, 3, 3]), &jnp::ones([4, 3, 1]));
}

/// Not positive definite (a negative eigenvalue, or a zero pivot): NaNs in the whole lower
/// triangle of the factor and zeros above it, in float32 and float64, eagerly, under `#[jit]`
/// and per matrix of a batch, as JAX gives.
#[test]
fn cholesky_of_a_matrix_that_is_not_positive_definite_is_nan() {
    let _x64 = rjax::config::x64_scope(true);
    let nan_lower = |l: &Array| {
        let v = l.astype(DType::F64).to_vec::<f64>().unwrap();
        assert!(v[0].is_nan() && v[2].is_nan() && v[3].is_nan() && v[1] == 0.0, "{v:?}");
    };
    for dtype in [DType::F32, DType::F64] {
        let indefinite = jnp::array([[1.0, 2.0], [2.0, 1.0]]).astype(dtype);
        let singular = jnp::zeros([2, 2]).astype(dtype);
        for a in [&indefinite, &singular] {
            for l in [jnp::linalg::cholesky(a), cholesky_jit(a)] {
                assert_eq!(l.dtype(), dtype);
                nan_lower(&l);
            }
        }
        // One bad matrix in a batch leaves the others' factors as they are.
        let batch = jnp::stack(&[&indefinite, &jnp::eye(2).astype(dtype)], 0);
        let l = cholesky_vmap(&batch);
        nan_lower(&l.slice(s![0]));
        assert_eq!(
            l.slice(s![1]).astype(DType::F64).to_vec::<f64>().unwrap(),
            [1.0, 0.0, 0.0, 1.0]
        );
    }
}

/// `vmap` goldens (`tests/data/linalg_fft_vmap.json`, made by
/// `tests/data/gen/linalg_fft_vmap.py`): every function and the gradient of a scalar function
/// of it, mapped over stacks of three matrices, the batch on other axes than the first where
/// the function allows it.
fn mapped() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/linalg_fft_vmap.json")).unwrap())
}

fn mapped_field(case: &str, key: &str) -> Array {
    golden_field(&mapped()["cases"], case, key)
}

#[vmap(in_axes = 1)]
fn cholesky_axis1(a: &Array) -> Array {
    jnp::linalg::cholesky(a)
}

#[vmap(in_axes = 0)]
fn cholesky_grads(a: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::cholesky(a)), a)
}

#[vmap(in_axes = (None, 2), out_axes = 2)]
fn solve_rhs_axis2(a: &Array, b: &Array) -> Array {
    jnp::linalg::solve(a, b)
}

#[vmap(in_axes = (0, 0))]
fn solve_both(a: &Array, b: &Array) -> Array {
    jnp::linalg::solve(a, b)
}

#[vmap(in_axes = (0, None))]
fn solve_grads(a: &Array, b: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::solve(a, b)), a)
}

#[vmap(in_axes = 2)]
fn inv_axis2(a: &Array) -> Array {
    jnp::linalg::inv(a)
}

#[vmap(in_axes = 0)]
fn inv_grads(a: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::inv(a)), a)
}

#[vmap(in_axes = 0)]
fn det_parts(a: &Array) -> (Array, Array, Array, Array, Array) {
    let (sign, logdet) = jnp::linalg::slogdet(a);
    let grad_det = rjax::transform::ad::api::grad_of(|a| jnp::linalg::det(a), a);
    let grad_logdet = rjax::transform::ad::api::grad_of(|a| jnp::linalg::slogdet(a).1, a);
    (jnp::linalg::det(a), sign, logdet, grad_det, grad_logdet)
}

#[vmap(in_axes = 0)]
fn eigh_parts(a: &Array) -> (Array, Array, Array) {
    let (w, v) = jnp::linalg::eigh(a);
    let grad = rjax::transform::ad::api::grad_of(
        |a| {
            let (w, v) = jnp::linalg::eigh(a);
            wsum(&w) + wsum(&sq(&v))
        },
        a,
    );
    (w, jnp::abs(&v), grad)
}

/// `wsum(Q^2) + wsum(R^2)`, sign-invariant.
#[traceable]
fn qr_loss(a: &Array, complete: bool) -> Array {
    let (q, r) = if complete { jnp::linalg::qr_complete(a) } else { jnp::linalg::qr(a) };
    wsum(&sq(&q)) + wsum(&sq(&r))
}

#[vmap(in_axes = 0)]
fn qr_parts(a: &Array) -> (Array, Array, Array, Array) {
    let (q, r) = jnp::linalg::qr(a);
    let rc = jnp::linalg::qr_complete(a).1;
    (
        jnp::abs(&q),
        jnp::abs(&r),
        jnp::abs(&rc),
        rjax::transform::ad::api::grad_of(|a| qr_loss(a, false), a),
    )
}

#[vmap(in_axes = 0)]
fn qr_complete_grads(a: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| qr_loss(a, true), a)
}

#[vmap(in_axes = 0)]
fn svd_parts(a: &Array) -> (Array, Array, Array, Array, Array, Array) {
    let (u, s, vh) = jnp::linalg::svd(a, false);
    let u_full = jnp::linalg::svd(a, true).0;
    let row_sums = jnp::sum_axes(&sq(&u_full), -1, false);
    let grad = rjax::transform::ad::api::grad_of(
        |a| {
            let (u, s, vh) = jnp::linalg::svd(a, false);
            wsum(&sq(&u)) + wsum(&s) + wsum(&sq(&vh))
        },
        a,
    );
    let grad_values = rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::svdvals(a)), a);
    (s, jnp::abs(&u), jnp::abs(&vh), row_sums, grad, grad_values)
}

#[vmap(in_axes = 0)]
fn matrix_norms(a: &Array) -> (Array, Array, Array) {
    let two = rjax::transform::ad::api::grad_of(
        |a| jnp::linalg::norm_with(a, Some(NormOrd::P(2.0)), None, false),
        a,
    );
    let fro = jnp::linalg::norm_with(a, Some(NormOrd::Fro), None, false);
    (fro, jnp::linalg::norm_with(a, Some(NormOrd::Nuc), None, false), two)
}

#[vmap(in_axes = 2)]
fn inf_norm_axis2(a: &Array) -> Array {
    jnp::linalg::norm_with(a, Some(NormOrd::P(f64::INFINITY)), None, false)
}

#[vmap(in_axes = 1)]
fn column_norms_axis1(a: &Array) -> Array {
    jnp::linalg::norm_with(a, Some(NormOrd::P(3.0)), Some(&[0]), false)
}

#[vmap(in_axes = (0, 0))]
fn lstsq_mapped(a: &Array, b: &Array) -> Array {
    jnp::linalg::lstsq(a, b, None).x
}

#[vmap(in_axes = (0, None))]
fn lstsq_grads(a: &Array, b: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::lstsq(a, b, None).x), a)
}

#[vmap(in_axes = 2)]
fn pinv_axis2(a: &Array) -> Array {
    jnp::linalg::pinv(a, None)
}

#[vmap(in_axes = 0)]
fn pinv_grads(a: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::pinv(a, None)), a)
}

#[vmap(in_axes = 0)]
fn matrix_powers(a: &Array) -> (Array, Array, Array) {
    let grad = rjax::transform::ad::api::grad_of(|a| wsum(&jnp::linalg::matrix_power(a, 3)), a);
    (jnp::linalg::matrix_power(a, 3), jnp::linalg::matrix_power(a, -2), grad)
}

#[traceable]
fn lower_solve(a: &Array, b: &Array) -> Array {
    scipy::linalg::solve_triangular(a, b, Trans::N, true, false)
}

#[traceable]
fn upper_unit_solve_transposed(a: &Array, b: &Array) -> Array {
    scipy::linalg::solve_triangular(a, b, Trans::T, false, true)
}

#[vmap(in_axes = (0, None))]
fn lower_solve_mapped(a: &Array, b: &Array) -> (Array, Array) {
    (lower_solve(a, b), rjax::transform::ad::api::grad_of(|a| wsum(&lower_solve(a, b)), a))
}

#[vmap(in_axes = (0, 0))]
fn upper_solve_mapped(a: &Array, b: &Array) -> Array {
    upper_unit_solve_transposed(a, b)
}

#[vmap(in_axes = (None, 0))]
fn upper_solve_grads(a: &Array, b: &Array) -> Array {
    rjax::transform::ad::api::grad_of(|b| wsum(&upper_unit_solve_transposed(a, b)), b)
}

#[vmap(in_axes = 0)]
fn lu_square(a: &Array) -> (Array, Array) {
    let grad = rjax::transform::ad::api::grad_of(
        |a| {
            let (_, l, u) = scipy::linalg::lu(a);
            wsum(&l) + wsum(&u)
        },
        a,
    );
    (scipy::linalg::lu(a).0, grad)
}

#[vmap(in_axes = 0)]
fn lu_tall(a: &Array) -> (Array, Array) {
    let (_, l, u) = scipy::linalg::lu(a);
    (l, u)
}

#[test]
fn vmap_of_every_function_and_its_gradient_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in DTYPES {
        let case = |name: &str| format!("{name}_{dt}");
        let want = |name: &str, key: &str| mapped_field(&case(name), key);
        let (g, tall) = (want("solve", "g"), want("qr", "tall"));
        let low = want("solve_triangular", "low");
        check("cholesky", &cholesky_axis1(&want("cholesky", "spd_mid")), &want("cholesky", "vmap"));
        let spd = want("cholesky", "spd_mid").swapaxes(0, 1);
        check("cholesky grad", &cholesky_grads(&spd), &want("cholesky", "vmap_grad"));
        let (b, bb) = (want("solve", "b"), want("solve", "bb"));
        let a0 = g.slice(s![0]);
        check(
            "solve b",
            &solve_rhs_axis2(&a0, &want("solve", "bb_last")),
            &want("solve", "vmap_b"),
        );
        check("solve both", &solve_both(&g, &bb), &want("solve", "vmap_both"));
        check("solve grad", &solve_grads(&g, &b), &want("solve", "vmap_grad"));
        check("inv", &inv_axis2(&want("inv", "g_last")), &want("inv", "vmap"));
        check("inv grad", &inv_grads(&g), &want("inv", "vmap_grad"));
        let (det, sign, logdet, grad_det, grad_logdet) = det_parts(&g);
        check("det", &det, &want("det", "vmap"));
        check("slogdet sign", &sign, &want("det", "vmap_sign"));
        check("slogdet logdet", &logdet, &want("det", "vmap_logdet"));
        check("det grad", &grad_det, &want("det", "vmap_grad"));
        check("slogdet grad", &grad_logdet, &want("det", "vmap_grad_logdet"));
        let (w, vabs, grad) = eigh_parts(&want("eigh", "sym"));
        check("eigh w", &w, &want("eigh", "vmap_w"));
        check("eigh |v|", &vabs, &want("eigh", "vmap_vabs"));
        check("eigh grad", &grad, &want("eigh", "vmap_grad"));
        let (qabs, rabs, rcabs, grad) = qr_parts(&tall);
        check("qr |q|", &qabs, &want("qr", "vmap_qabs"));
        check("qr |r|", &rabs, &want("qr", "vmap_rabs"));
        check("qr complete |r|", &rcabs, &want("qr", "vmap_rcabs"));
        check("qr grad", &grad, &want("qr", "vmap_grad"));
        check("qr complete grad", &qr_complete_grads(&g), &want("qr", "vmap_grad_complete"));
        let (s, uabs, vhabs, row_sums, grad, grad_values) = svd_parts(&tall);
        check("svd s", &s, &want("svd", "vmap_s"));
        check("svd |u|", &uabs, &want("svd", "vmap_uabs"));
        check("svd |vh|", &vhabs, &want("svd", "vmap_vhabs"));
        check("svd full u", &row_sums, &want("svd", "vmap_ufull_sq"));
        check("svd grad", &grad, &want("svd", "vmap_grad"));
        check("svdvals grad", &grad_values, &want("svd", "vmap_grad_svdvals"));
        let (fro, nuc, two) = matrix_norms(&tall);
        check("norm fro", &fro, &want("norm", "vmap_fro"));
        check("norm nuc", &nuc, &want("norm", "vmap_nuc"));
        check("norm 2 grad", &two, &want("norm", "vmap_grad_2"));
        check("norm inf", &inf_norm_axis2(&tall), &want("norm", "vmap_inf"));
        check("norm 3 axis 0", &column_norms_axis1(&tall), &want("norm", "vmap_vec3"));
        let b5 = want("lstsq", "b5");
        check("lstsq", &lstsq_mapped(&tall, &b5), &want("lstsq", "vmap"));
        check("lstsq grad", &lstsq_grads(&tall, &b5.slice(s![0])), &want("lstsq", "vmap_grad"));
        check("pinv", &pinv_axis2(&tall.moveaxis(0, 2)), &want("pinv", "vmap"));
        check("pinv grad", &pinv_grads(&tall), &want("pinv", "vmap_grad"));
        let (p3, pm2, grad) = matrix_powers(&g);
        check("matrix_power 3", &p3, &want("matrix_power", "vmap_p3"));
        check("matrix_power -2", &pm2, &want("matrix_power", "vmap_pm2"));
        check("matrix_power grad", &grad, &want("matrix_power", "vmap_grad"));
        let (x, grad) = lower_solve_mapped(&low, &b);
        check("solve_triangular", &x, &want("solve_triangular", "vmap_a"));
        check("solve_triangular grad a", &grad, &want("solve_triangular", "vmap_grad_a"));
        let x = upper_solve_mapped(&low.swapaxes(-1, -2), &bb);
        check("solve_triangular both", &x, &want("solve_triangular", "vmap_both"));
        let grad = upper_solve_grads(&low.slice(s![0]).swapaxes(0, 1), &bb);
        check("solve_triangular grad b", &grad, &want("solve_triangular", "vmap_grad_b"));
        let (p, grad) = lu_square(&g);
        check("lu p", &p, &want("lu", "vmap_p"));
        check("lu grad", &grad, &want("lu", "vmap_grad"));
        let (l, u) = lu_tall(&tall);
        check("lu l", &l, &want("lu", "vmap_l"));
        check("lu u", &u, &want("lu", "vmap_u"));
    }
}

/// The rules the first finite-difference test leaves out: `triangular_solve` from the right
/// (which the QR and LU rules use), the complete QR and the SVD of square matrices, and the
/// functions composed from `lu` (`inv`, `slogdet`, `matrix_power` with a negative power).
#[test]
fn remaining_derivative_rules_match_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::primitives::{bind1, TriangularSolve};
    let low = f64_field("solve_triangular_float64", "low");
    let b = f64_field("solve_triangular_float64", "b").swapaxes(0, 1);
    for (lower, transpose_a, unit_diagonal) in [(true, false, false), (false, true, true)] {
        let prim = TriangularSolve { left_side: false, lower, transpose_a, unit_diagonal };
        let a = if lower { low.clone() } else { low.swapaxes(0, 1) };
        let label = format!("triangular_solve right lower={lower} transpose_a={transpose_a}");
        check_grads(&label, &|a| bind1(&prim, &[a, &b]), &a, 1e-6);
        check_grads(&label, &|b| bind1(&prim, &[&a, b]), &b, 1e-6);
    }
    let g = f64_field("solve_float64", "a");
    check_grads("qr complete q", &|a| jnp::linalg::qr_complete(a).0, &g, 1e-6);
    check_grads("qr complete r", &|a| jnp::linalg::qr_complete(a).1, &g, 1e-6);
    check_grads("svd square u^2", &|a| sq(&jnp::linalg::svd(a, false).0), &g, 1e-6);
    check_grads("svd square s", &|a| jnp::linalg::svd(a, false).1, &g, 1e-6);
    check_grads("inv", &|a| jnp::linalg::inv(a), &g, 1e-6);
    check_grads("slogdet", &|a| jnp::linalg::slogdet(a).1, &g, 1e-6);
    check_grads("matrix_power -2", &|a| jnp::linalg::matrix_power(a, -2), &g, 1e-6);
    let spd = f64_field("cholesky_float64", "a");
    check_grads("eigvalsh", &|a| jnp::linalg::eigvalsh(a), &spd, 1e-6);
}
