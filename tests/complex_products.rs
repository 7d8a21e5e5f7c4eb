//! Complex matrix products against JAX (`tests/data/complex_products.json`, made by
//! `tests/data/gen/complex_products.py`): `matmul`, `dot`, `einsum`, `tensordot` and
//! `dot_general` on complex64 and complex128 operands, eagerly and under `#[jit]`, including
//! products large enough to run on several threads; gradients of real-valued losses through
//! complex products (JAX's convention), `vjp`/`jvp` with complex tangents, a second derivative
//! and `#[vmap]`; and f64 finite-difference checks of the product's rules through real-valued
//! wrappers.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, golden_field, panic_text};
use rjax::prelude::*;
use rjax::primitives::{bind1, DotGeneral};
use rjax::transform::ad::api::{grad_of, jvp_of, vjp_of};
use rjax::Complex;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/complex_products.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    golden_field(data(), case, key)
}

/// Products accumulate in another order than XLA's: a few ulps per term apart.
#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = match want.dtype() {
        DType::F32 | DType::C64 => (2e-5, 2e-5),
        _ => (1e-11, 1e-11),
    };
    assert_close_as(what, got, want, rtol, atol);
}

/// The generator's `wave`: `sin(0.37 i + 0.11 j + salt) + i cos(0.23 i - 0.19 j + salt)` for
/// row `i` and column `j` of the row-major index, complex128.
fn wave(shape: &[usize], salt: f64) -> Array {
    let cols = shape[shape.len() - 1];
    let n: usize = shape.iter().product();
    let data: Vec<Complex<f64>> = (0..n)
        .map(|idx| {
            let (i, j) = ((idx / cols) as f64, (idx % cols) as f64);
            Complex::new((0.37 * i + 0.11 * j + salt).sin(), (0.23 * i - 0.19 * j + salt).cos())
        })
        .collect();
    Array::from_shape_vec(shape, data)
}

/// The stored part of a large product: every 9th row and 7th column of its last two axes.
fn sample(x: &Array) -> Array {
    match x.ndim() {
        2 => x.slice(s![..;9, ..;7]),
        _ => x.slice(s![.., ..;9, ..;7]),
    }
}

/// A batched `dot_general` contracting axis 2 of both operands over the batch axis 0.
fn batch_dot(x: &Array, y: &Array) -> Array {
    let prim = DotGeneral {
        lhs_contract: vec![2],
        rhs_contract: vec![2],
        lhs_batch: vec![0],
        rhs_batch: vec![0],
    };
    bind1(&prim, &[x, y])
}

type Product = fn(&Array, &Array, &Array, &Array, &Array) -> Array;

/// The small products of the golden table, as functions of `(a, b, v, batch, r)`.
fn products() -> Vec<(&'static str, Product)> {
    vec![
        ("matmul", |a, b, _, _, _| jnp::matmul(a, b)),
        ("matmul_vec", |a, _, v, _, _| jnp::matmul(a, v)),
        ("vec_matmul", |_, b, v, _, _| jnp::matmul(v, b)),
        ("dot_vv", |_, _, v, _, _| jnp::dot(v, v)),
        ("matmul_batch", |_, b, _, batch, _| jnp::matmul(batch, b)),
        ("at_a", |a, _, _, _, _| jnp::matmul(&a.t(), a)),
        ("a_bt", |a, _, _, _, _| jnp::matmul(a, &jnp::conj(a).t())),
        ("einsum_bij_jk", |_, b, _, batch, _| jnp::einsum("bij,jk->bik", &[batch, b])),
        ("einsum_ij_ij", |a, _, _, _, _| jnp::einsum("ij,ij->", &[a, a])),
        ("einsum_outer", |_, _, v, _, _| jnp::einsum("i,j->ij", &[v, v])),
        ("tensordot", |_, b, _, batch, _| jnp::tensordot(batch, b, 1)),
        ("real_matmul", |_, b, _, _, r| jnp::matmul(r, b)),
        ("dot_general_batch", |_, _, _, batch, _| batch_dot(batch, batch)),
    ]
}

#[jit]
fn matmul_jit(a: &Array, b: &Array) -> Array {
    jnp::matmul(a, b)
}

#[jit]
fn einsum_jit(batch: &Array, b: &Array) -> Array {
    jnp::einsum("bij,jk->bik", &[batch, b])
}

#[test]
fn small_products_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["complex64", "complex128"] {
        let [a, b, v, batch, r] = ["a", "b", "v", "batch", "r"].map(|k| field(dt, k));
        for (name, f) in products() {
            let got = f(&a, &b, &v, &batch, &r);
            check(&format!("{dt} {name}"), &got, &field(dt, name));
        }
        check(&format!("{dt} #[jit] matmul"), &matmul_jit(&a, &b), &field(dt, "matmul"));
        let got = einsum_jit(&batch, &b);
        check(&format!("{dt} #[jit] einsum"), &got, &field(dt, "einsum_bij_jk"));
    }
}

#[test]
fn large_products_on_several_threads_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (dt, dtype) in [("complex64", DType::C64), ("complex128", DType::C128)] {
        let big =
            jnp::matmul(&wave(&[128, 64], 0.0).astype(dtype), &wave(&[64, 128], 1.0).astype(dtype));
        check(&format!("{dt} 128x64x128 sample"), &sample(&big), &field(dt, "big_sample"));
        check(&format!("{dt} 128x64x128 sum"), &big.sum(), &field(dt, "big_sum"));
        let batched = matmul_jit(
            &wave(&[8, 48, 64], 2.0).astype(dtype),
            &wave(&[8, 64, 48], 3.0).astype(dtype),
        );
        check(&format!("{dt} batch sample"), &sample(&batched), &field(dt, "batched_sample"));
        check(&format!("{dt} batch sum"), &batched.sum(), &field(dt, "batched_sum"));
    }
}

type Loss = fn(&Array, &Array, &Array) -> Array;

/// Real-valued losses of complex `a`, `b` (and weights `w`), as in the generator.
fn losses() -> Vec<(&'static str, Loss)> {
    vec![
        ("real_sum", |a, b, _| jnp::real(&jnp::matmul(a, b).sum())),
        ("abs_sq", |a, b, _| jnp::square(&jnp::abs(&jnp::matmul(a, b))).sum()),
        ("imag_weighted", |a, b, w| jnp::imag(&(w * jnp::matmul(a, b)).sum())),
        ("einsum_abs", |a, b, _| jnp::abs(&jnp::einsum("ij,jk->ik", &[a, b])).sum()),
        ("dot_conj", |a, b, w| jnp::real(&(jnp::dot(&jnp::conj(a), b) * w).sum())),
    ]
}

#[test]
fn gradients_follow_jax_convention() {
    let _x64 = rjax::config::x64_scope(true);
    let [a, b, w] = ["a", "b", "w"].map(|k| field("grad", k));
    for (name, f) in losses() {
        let what = |k: &str| format!("{name}_{k}");
        check(&what("value"), &f(&a, &b, &w), &field("grad", &what("value")));
        let da = grad_of(|a| f(a, &b, &w), &a);
        assert_eq!(da.dtype(), DType::C128, "{name}: the gradient of a complex input is complex");
        check(&what("da"), &da, &field("grad", &what("da")));
        check(&what("db"), &grad_of(|b| f(&a, b, &w), &b), &field("grad", &what("db")));
    }
    let hvp = jvp_of(|a| grad_of(|a| losses()[1].1(a, &b, &w), a), &a, &jnp::conj(&a)).1;
    check("abs_sq hvp", &hvp, &field("grad", "abs_sq_hvp"));
}

#[traceable]
fn real_in(x: &Array, y: &Array, b: &Array) -> Array {
    jnp::square(&jnp::abs(&jnp::matmul(&jnp::complex(x, y), b))).sum()
}

#[jit]
#[grad]
fn real_in_grad_jit(x: &Array, y: &Array, b: &Array) -> Array {
    real_in(x, y, b)
}

#[test]
fn real_inputs_vjp_and_jvp_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let [x, y, b, a, w] = ["x", "y", "b", "a", "w"].map(|k| field("grad", k));
    check("real_in value", &real_in(&x, &y, &b), &field("grad", "real_in_value"));
    check("real_in dx", &grad_of(|x| real_in(x, &y, &b), &x), &field("grad", "real_in_dx"));
    check("real_in dy", &grad_of(|y| real_in(&x, y, &b), &y), &field("grad", "real_in_dy"));
    check("#[jit] #[grad] real_in", &real_in_grad_jit(&x, &y, &b), &field("grad", "real_in_dx"));
    check("vjp da", &vjp_of(|a| jnp::matmul(a, &b), &a, &w), &field("grad", "vjp_da"));
    check("vjp db", &vjp_of(|b| jnp::matmul(&a, b), &b, &w), &field("grad", "vjp_db"));
    let i = Array::from(Complex::new(0.0, 1.0));
    let tangent = jvp_of(|a| jnp::matmul(a, &b), &a, &jnp::conj(&a)).1
        + jvp_of(|b| jnp::matmul(&a, b), &b, &(&b * &i)).1;
    check("jvp", &tangent, &field("grad", "jvp"));
}

#[vmap(in_axes = (0, 0))]
fn matmul_both(x: &Array, y: &Array) -> Array {
    jnp::matmul(x, y)
}

#[jit]
#[vmap(in_axes = (0, None))]
fn matmul_lhs_jit(x: &Array, y: &Array) -> Array {
    jnp::matmul(x, y)
}

#[vmap(in_axes = (None, 0))]
fn matmul_rhs(x: &Array, y: &Array) -> Array {
    jnp::matmul(x, y)
}

#[vmap(in_axes = (1, None))]
fn dot_axis1(x: &Array, y: &Array) -> Array {
    jnp::dot(x, y)
}

#[vmap(in_axes = (0, None))]
#[grad]
fn abs_sq_grad(a: &Array, b: &Array) -> Array {
    jnp::square(&jnp::abs(&jnp::matmul(a, b))).sum()
}

#[test]
fn vmap_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let [batch, other, b, v] = ["batch", "other", "b", "v"].map(|k| field("vmap", k));
    check("#[vmap] both", &matmul_both(&batch, &other), &field("vmap", "both"));
    check("#[jit] #[vmap] lhs", &matmul_lhs_jit(&batch, &b), &field("vmap", "lhs_only"));
    check("#[vmap] rhs", &matmul_rhs(&v, &other), &field("vmap", "rhs_only"));
    check("#[vmap] axis 1", &dot_axis1(&batch, &v), &field("vmap", "axis1"));
    check("#[vmap] #[grad]", &abs_sq_grad(&batch, &b), &field("vmap", "grad"));
}

/// `v`'s first half as real parts and second half as imaginary parts, in a `rows x cols`
/// complex matrix.
fn split(v: &Array, rows: usize, cols: usize) -> Array {
    let n = rows * cols;
    let re = v.slice(s![..n]).reshape([rows as isize, cols as isize]);
    let im = v.slice(s![n..2 * n]).reshape([rows as isize, cols as isize]);
    jnp::complex(re, im)
}

#[test]
fn product_rules_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let v =
        Array::from_shape_vec([24], (0..24).map(|i| ((i * 7 % 11) as f64 - 5.0) / 4.0).collect());
    let c = wave(&[3, 2], 0.7);
    // First half of `v` is a 2x3 complex matrix, the second a 3x2 one.
    let lhs = |v: &Array| split(&v.slice(s![..12]), 2, 3);
    let rhs = |v: &Array| split(&v.slice(s![12..]), 3, 2);
    type Case = (&'static str, Box<dyn Fn(&Array) -> Array>);
    let cases: Vec<Case> = vec![
        ("matmul", Box::new(move |v| jnp::real(&jnp::matmul(&lhs(v), &rhs(v))))),
        ("matmul const", Box::new(move |v| jnp::imag(&jnp::matmul(&lhs(v), &c)))),
        ("abs dot", Box::new(move |v| jnp::abs(&jnp::dot(&rhs(v), &lhs(v))))),
        ("einsum", Box::new(move |v| jnp::real(&jnp::einsum("ij,jk->k", &[&lhs(v), &rhs(v)])))),
    ];
    for (name, f) in &cases {
        check_grads(name, f.as_ref(), &v, 1e-6);
    }
}

#[test]
fn mismatched_complex_products_are_refused() {
    let a = field("complex64", "a");
    let msg = panic_text(|| drop(jnp::matmul(&a, &a)));
    assert!(msg.contains("matmul") && msg.contains("(2, 3)"), "{msg}");
}
