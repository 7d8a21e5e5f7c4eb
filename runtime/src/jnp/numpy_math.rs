//! More of NumPy's elementwise math, composed of the primitives as `jax.numpy` composes it
//! ([`fmax`], [`fmin`], [`hypot`], [`log2`], [`log10`], [`logaddexp2`], [`deg2rad`],
//! [`rad2deg`], [`rint`], [`trunc`], [`sinc`], [`fabs`], [`positive`], [`divmod`]), and NumPy's other names for functions `jnp` already has ([`absolute`],
//! [`arccos`], [`power`], [`true_divide`], [`bitwise_and`], ...).
//!
//! Each runs eagerly, under `#[jit]` and `#[vmap]`, and differentiates as JAX's does.

use super::{
    abs, acos, acosh, asin, asinh, atan, atan2, atanh, ceil, concatenate, convert, divide, equal,
    floor, floor_divide, greater, isnan, isposinf, less, log, logaddexp, logical_and, logical_not,
    logical_or, logical_xor, max, maximum, min, minimum, multiply, pow, promote_all,
    promote_inexact, remainder, round, sin, sqrt, square, where_, ArrayLike,
};
use crate::shape::ShapeDisplay;
use crate::Array;

/// The two operands promoted to a common inexact dtype, refusing complex ones for `op`.
#[track_caller]
fn real_pair(op: &str, a: impl ArrayLike, b: impl ArrayLike) -> (Array, Array) {
    let mut both = promote_inexact(&[a.into_operand(op), b.into_operand(op)]);
    let b = both.pop().expect("two operands");
    let a = both.pop().expect("two operands");
    if a.dtype().is_complex() {
        panic!("{op}: complex operands are not supported, got {}", a.aval());
    }
    (a, b)
}

/// The elementwise maximum ignoring NaNs (`jnp.fmax`): where one operand is NaN, the other.
#[track_caller]
pub fn fmax(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_all(&[a.into_operand("fmax"), b.into_operand("fmax")]);
    let keep_a = logical_or(greater(&ops[0], &ops[1]), isnan(&ops[1]));
    where_(&keep_a, &ops[0], &ops[1])
}

/// The elementwise minimum ignoring NaNs (`jnp.fmin`): where one operand is NaN, the other.
#[track_caller]
pub fn fmin(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_all(&[a.into_operand("fmin"), b.into_operand("fmin")]);
    let keep_a = logical_or(less(&ops[0], &ops[1]), isnan(&ops[1]));
    where_(&keep_a, &ops[0], &ops[1])
}

/// `sqrt(a² + b²)` without overflow (`jnp.hypot`); `inf` if either is infinite.
#[track_caller]
pub fn hypot(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let (a, b) = real_pair("hypot", a, b);
    let (a, b) = (abs(&a), abs(&b));
    let infinite = logical_or(isposinf(&a), isposinf(&b));
    let (big, small) = (maximum(&a, &b), minimum(&a, &b));
    let zero = equal(&big, 0.0);
    let ratio = divide(&small, where_(&zero, 1.0, &big));
    let scaled = multiply(&big, sqrt(&super::add(1.0, square(&ratio))));
    where_(&infinite, f64::INFINITY, where_(&zero, &big, &scaled))
}

/// The base-2 logarithm (`jnp.log2`), as `log(x) / log(2)`.
#[track_caller]
pub fn log2(x: &Array) -> Array {
    log_base(x, 2.0)
}

/// The base-10 logarithm (`jnp.log10`), as `log(x) / log(10)`.
#[track_caller]
pub fn log10(x: &Array) -> Array {
    log_base(x, 10.0)
}

#[track_caller]
fn log_base(x: &Array, base: f64) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    if x.dtype().is_complex() {
        let r = log(&x);
        let ln_base = log(&convert(&Array::weak_scalar(base), r.dtype().to_real(), false));
        return super::complex(
            divide(super::real(&r), &ln_base),
            divide(super::imag(&r), &ln_base),
        );
    }
    let ln_base = log(&convert(&Array::weak_scalar(base), x.dtype(), false));
    divide(log(&x), &ln_base)
}

/// `log2(2^a + 2^b)` without overflow (`jnp.logaddexp2`).
#[track_caller]
pub fn logaddexp2(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let (a, b) = real_pair("logaddexp2", a, b);
    let ln2 = std::f64::consts::LN_2;
    divide(logaddexp(multiply(&a, ln2), multiply(&b, ln2)), ln2)
}

/// Degrees to radians (`jnp.deg2rad`, also `jnp.radians`).
#[track_caller]
pub fn deg2rad(x: &Array) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    multiply(&x, std::f64::consts::PI / 180.0)
}

/// Degrees to radians: [`deg2rad`].
#[track_caller]
pub fn radians(x: &Array) -> Array {
    deg2rad(x)
}

/// Radians to degrees (`jnp.rad2deg`, also `jnp.degrees`).
#[track_caller]
pub fn rad2deg(x: &Array) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    multiply(&x, 180.0 / std::f64::consts::PI)
}

/// Radians to degrees: [`rad2deg`].
#[track_caller]
pub fn degrees(x: &Array) -> Array {
    rad2deg(x)
}

/// Rounds to the nearest integer, halves to even (`jnp.rint`); integers and bools become the
/// default float, as in JAX.
#[track_caller]
pub fn rint(x: &Array) -> Array {
    if x.dtype().is_complex() {
        return super::complex(rint(&super::real(x)), rint(&super::imag(x)));
    }
    if !x.dtype().is_float() {
        return convert(x, crate::dtype::to_inexact(x.dtype(), x.is_weak()), false);
    }
    round(x)
}

/// Rounds toward zero (`jnp.trunc`); integers and bools are returned as they are.
#[track_caller]
pub fn trunc(x: &Array) -> Array {
    if !x.dtype().is_inexact() {
        return x.clone();
    }
    where_(less(x, 0.0), ceil(x), floor(x))
}

/// `sin(pi x) / (pi x)`, 1 at 0 (`jnp.sinc`). At 0 the value comes from the Maclaurin series
/// of `sin(z) / z` (to `z^8`), so derivatives at 0 are the series' coefficients, as JAX's are
/// (exact to the eighth order).
#[track_caller]
pub fn sinc(x: &Array) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    let at_zero = equal(&x, 0.0);
    let pi_x = multiply(&x, std::f64::consts::PI);
    let safe = where_(&at_zero, 1.0, &pi_x);
    where_(&at_zero, sinc_series(&pi_x), divide(sin(&safe), &safe))
}

/// `1 - z^2/3! + z^4/5! - z^6/7! + z^8/9!`, by Horner's rule in `z^2`.
fn sinc_series(z: &Array) -> Array {
    let z2 = square(z);
    let coefficients = [1.0 / 362_880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0, 1.0];
    let mut acc = super::add(multiply(&z2, 0.0), coefficients[0]);
    for c in &coefficients[1..] {
        acc = super::add(multiply(&acc, &z2), *c);
    }
    acc
}

/// `|x|` as a float (`jnp.fabs`): integers are promoted first; complex numbers are refused.
#[track_caller]
pub fn fabs(x: &Array) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    if x.dtype().is_complex() {
        panic!("fabs: complex operands are not supported, got {}", x.aval());
    }
    abs(&x)
}

/// `+x` (`jnp.positive`): the array itself (bools refused, as NumPy refuses them).
#[track_caller]
pub fn positive(x: &Array) -> Array {
    if x.dtype().is_bool() {
        panic!("positive: not defined for bool arrays, got shape {}", ShapeDisplay(x.shape()));
    }
    x.clone()
}

/// The quotient and remainder of floor division (`jnp.divmod`).
#[track_caller]
pub fn divmod(a: impl ArrayLike, b: impl ArrayLike) -> (Array, Array) {
    let (a, b) = (a.into_operand("divmod"), b.into_operand("divmod"));
    (floor_divide(&a, &b), remainder(&a, &b))
}

macro_rules! numpy_names {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty = $target:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name($($arg: $ty),*) -> $ret {
            $target($($arg),*)
        }
    )*};
}

numpy_names! {
    /// NumPy's name for [`abs`](super::abs).
    absolute(x: &Array) -> Array = abs;
    /// NumPy's name for [`acos`](super::acos).
    arccos(x: &Array) -> Array = acos;
    /// NumPy's name for [`acosh`](super::acosh).
    arccosh(x: &Array) -> Array = acosh;
    /// NumPy's name for [`asin`](super::asin).
    arcsin(x: &Array) -> Array = asin;
    /// NumPy's name for [`asinh`](super::asinh).
    arcsinh(x: &Array) -> Array = asinh;
    /// NumPy's name for [`atan`](super::atan).
    arctan(x: &Array) -> Array = atan;
    /// NumPy's name for [`atanh`](super::atanh).
    arctanh(x: &Array) -> Array = atanh;
    /// NumPy's name for [`round`](super::round).
    around(x: &Array) -> Array = round;
    /// NumPy's name for the maximum over all elements, [`max`](super::max).
    amax(x: &Array) -> Array = max;
    /// NumPy's name for the minimum over all elements, [`min`](super::min).
    amin(x: &Array) -> Array = min;
    /// Bitwise not of integers, logical not of bools ([`logical_not`](super::logical_not)).
    bitwise_not(x: &Array) -> Array = logical_not;
    /// NumPy's other name for [`bitwise_not`].
    bitwise_invert(x: &Array) -> Array = logical_not;
    /// NumPy's other name for [`bitwise_not`].
    invert(x: &Array) -> Array = logical_not;
}

/// NumPy's name for [`atan2`](super::atan2).
#[track_caller]
pub fn arctan2(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    atan2(a, b)
}

/// NumPy's name for [`pow`](super::pow).
#[track_caller]
pub fn power(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    pow(a, b)
}

/// NumPy's name for [`divide`](super::divide).
#[track_caller]
pub fn true_divide(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    divide(a, b)
}

/// `jnp.mod` (a Rust keyword, hence the underscore): [`remainder`](super::remainder).
#[track_caller]
pub fn mod_(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    remainder(a, b)
}

/// Bitwise and of integers, logical and of bools ([`logical_and`](super::logical_and)).
#[track_caller]
pub fn bitwise_and(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    logical_and(a, b)
}

/// Bitwise or of integers, logical or of bools ([`logical_or`](super::logical_or)).
#[track_caller]
pub fn bitwise_or(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    logical_or(a, b)
}

/// Bitwise xor of integers, logical xor of bools ([`logical_xor`](super::logical_xor)).
#[track_caller]
pub fn bitwise_xor(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    logical_xor(a, b)
}

/// The array API's name for [`concatenate`](super::concatenate).
#[track_caller]
pub fn concat<A: std::borrow::Borrow<Array>>(arrays: &[A], axis: isize) -> Array {
    concatenate(arrays, axis)
}
