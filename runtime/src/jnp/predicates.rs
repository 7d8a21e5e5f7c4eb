//! Elementwise and whole-array tests, as in `jax.numpy`: [`isinf`], [`isposinf`],
//! [`isneginf`], [`isclose`], [`allclose`], [`array_equal`], and [`heaviside`].

use super::{
    abs, add, all, equal, greater, isnan, less, less_equal, logical_and, logical_not, logical_or,
    multiply, promote_all, subtract, where_, ArrayLike,
};
use crate::Array;

/// Whether each element is `+inf` or `-inf` (always false for integers and bools).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]);
/// assert_eq!(jnp::isinf(&x).to_vec::<bool>().unwrap(), vec![false, true, true, false]);
/// ```
#[track_caller]
pub fn isinf(x: &Array) -> Array {
    infinite(x, Some(f64::INFINITY), Some(f64::NEG_INFINITY))
}

/// Whether each element is `+inf` (`jnp.isposinf`).
#[track_caller]
pub fn isposinf(x: &Array) -> Array {
    infinite(x, Some(f64::INFINITY), None)
}

/// Whether each element is `-inf` (`jnp.isneginf`).
#[track_caller]
pub fn isneginf(x: &Array) -> Array {
    infinite(x, None, Some(f64::NEG_INFINITY))
}

/// Whether elements equal one of the infinities given; a non-float array has none.
fn infinite(x: &Array, pos: Option<f64>, neg: Option<f64>) -> Array {
    if !x.dtype().is_inexact() {
        return super::zeros_dtype(x.shape(), crate::DType::Bool);
    }
    let magnitude = if x.dtype().is_complex() { abs(x) } else { x.clone() };
    let test = |inf: Option<f64>| inf.map(|v| equal(&magnitude, v));
    match (test(pos), test(neg)) {
        (Some(p), Some(n)) => logical_or(&p, &n),
        (Some(t), None) | (None, Some(t)) => t,
        (None, None) => unreachable!("at least one infinity is asked for"),
    }
}

/// Whether `a` and `b` are equal within `atol + rtol * |b|`, elementwise, broadcasting
/// (`jnp.isclose(a, b, rtol, atol, equal_nan)`; JAX's defaults are `rtol = 1e-5`,
/// `atol = 1e-8`). Infinities are close only to the same infinity; NaN is close to nothing,
/// or to NaN when `equal_nan`. Integers compare exactly.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::array(&[1.0f32, 1.0, f32::NAN]);
/// let b = jnp::array(&[1.000001f32, 1.1, f32::NAN]);
/// assert_eq!(jnp::isclose(&a, &b, 1e-5, 1e-8, false).to_vec::<bool>().unwrap(), vec![true, false, false]);
/// ```
#[track_caller]
pub fn isclose(
    a: impl ArrayLike,
    b: impl ArrayLike,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> Array {
    let ops = promote_all(&[a.into_operand("isclose"), b.into_operand("isclose")]);
    let (a, b) = (&ops[0], &ops[1]);
    if !a.dtype().is_inexact() {
        return equal(a, b);
    }
    let tolerance = add(atol, multiply(rtol, abs(b)));
    let within = less_equal(abs(&subtract(a, b)), &tolerance);
    let (a_inf, b_inf) = (isinf(a), isinf(b));
    let finite_close = logical_and(&within, logical_not(&logical_or(&a_inf, &b_inf)));
    let same_inf = logical_and(logical_and(&a_inf, &b_inf), equal(a, b));
    let close = logical_or(&finite_close, &same_inf);
    let (a_nan, b_nan) = (isnan(a), isnan(b));
    let close = logical_and(&close, logical_not(&logical_or(&a_nan, &b_nan)));
    if equal_nan {
        logical_or(&close, logical_and(&a_nan, &b_nan))
    } else {
        close
    }
}

/// Whether every element pair is [`isclose`] (`jnp.allclose`), as a 0-d bool array.
#[track_caller]
pub fn allclose(
    a: impl ArrayLike,
    b: impl ArrayLike,
    rtol: f64,
    atol: f64,
    equal_nan: bool,
) -> Array {
    all(&isclose(a, b, rtol, atol, equal_nan))
}

/// Whether `a` and `b` have the same shape and elements (`jnp.array_equal`), as a 0-d bool
/// array; NaNs count as equal when `equal_nan`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(3);
/// assert!(jnp::array_equal(&x, &x, false).item::<bool>().unwrap());
/// assert!(!jnp::array_equal(&x, &jnp::arange(2), false).item::<bool>().unwrap());
/// ```
#[track_caller]
pub fn array_equal(a: &Array, b: &Array, equal_nan: bool) -> Array {
    if a.shape() != b.shape() {
        return Array::from(false);
    }
    let same = equal(a, b);
    let same = if equal_nan && a.dtype().is_inexact() {
        logical_or(&same, logical_and(isnan(a), isnan(b)))
    } else {
        same
    };
    all(&same)
}

/// The Heaviside step function: `0` where `x1 < 0`, `1` where `x1 > 0`, `x2` where `x1` is
/// zero, and NaN where it is NaN (`jnp.heaviside`).
#[track_caller]
pub fn heaviside(x1: impl ArrayLike, x2: impl ArrayLike) -> Array {
    let ops = super::promote_inexact(&[x1.into_operand("heaviside"), x2.into_operand("heaviside")]);
    let (x1, x2) = (&ops[0], &ops[1]);
    let zero = super::zeros_dtype([], x1.dtype());
    let one = super::ones_dtype([], x1.dtype());
    let at_zero = where_(equal(x1, &zero), x2, x1);
    where_(less(x1, &zero), &zero, where_(greater(x1, &zero), &one, &at_zero))
}
