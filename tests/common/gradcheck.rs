//! Finite-difference checks of derivative rules in f64, in the manner of
//! `jax.test_util.check_grads` (a compact form of `tests/ad_numerical.rs`'s checker): `jvp`
//! against central differences, `vjp` against `jvp` through `<vjp(u), v> == <u, jvp(v)>`, and
//! the same for the first derivative (`x -> jvp(f, x, v)`) to check second derivatives.

use rjax::prelude::*;
use rjax::transform::ad::api::{jvp_of, vjp_of};

/// Central-difference step.
const EPS: f64 = 1e-5;

fn vals(a: &Array) -> Vec<f64> {
    assert_eq!(a.dtype(), DType::F64, "expected an f64 array, got {:?}", a.aval());
    a.to_vec::<f64>().unwrap()
}

/// A fixed direction of `x`'s shape with entries in `[-1, 1]`, different for each `salt`.
fn direction(x: &Array, salt: usize) -> Array {
    let n = x.size();
    let data: Vec<f64> = (0..n).map(|i| (((i + salt) * 7919 % 23) as f64) / 11.0 - 1.0).collect();
    Array::from_shape_vec(x.shape(), data)
}

fn numerical_jvp(f: &dyn Fn(&Array) -> Array, x: &Array, v: &Array) -> Array {
    (f(&(x + &(v * EPS))) - f(&(x - &(v * EPS)))) / (2.0 * EPS)
}

#[track_caller]
fn assert_close(label: &str, got: &Array, want: &Array, tol: f64) {
    let (g, w) = (vals(got), vals(want));
    assert_eq!(g.len(), w.len(), "{label}: sizes differ");
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{label}: element {i} is {a}, numerically {b}\n got {g:?}\nwant {w:?}"
        );
    }
}

/// First-order checks of `f` at `x` (f64): forward mode against central differences, and
/// reverse mode against forward mode.
#[track_caller]
pub fn check_first(label: &str, f: &dyn Fn(&Array) -> Array, x: &Array, tol: f64) {
    for salt in 0..2 {
        let v = direction(x, salt);
        let (_, t) = jvp_of(f, x, &v);
        assert_close(&format!("{label}: jvp"), &t, &numerical_jvp(f, x, &v), tol);
        let u = direction(&t, salt + 5);
        let ct = vjp_of(f, x, &u);
        let lhs: f64 = vals(&ct).iter().zip(vals(&v)).map(|(a, b)| a * b).sum();
        let rhs: f64 = vals(&u).iter().zip(vals(&t)).map(|(a, b)| a * b).sum();
        assert!((lhs - rhs).abs() <= 1e-9 * lhs.abs().max(1.0), "{label}: vjp {lhs} vs jvp {rhs}");
    }
}

/// [`check_first`] on `f` and on its directional derivative, so second derivatives too.
#[track_caller]
pub fn check_grads(label: &str, f: &dyn Fn(&Array) -> Array, x: &Array, tol: f64) {
    check_first(label, f, x, tol);
    let v = direction(x, 3);
    let derivative = |y: &Array| jvp_of(f, y, &v).1;
    check_first(&format!("{label} [d jvp]"), &derivative, x, tol);
}
