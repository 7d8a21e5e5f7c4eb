//! Special functions, like `jax.scipy.special`, with JAX's values, derivatives and conventions
//! (`xlogy(0, 0) = 0`, `digamma` NaN at its poles, `i1e` odd). Integer operands are promoted
//! to `float32`, as JAX promotes them.
//!
//! `erfc`, `gammaln`, `digamma`, `i0e` and `i1e` are primitives with derivative rules of their
//! own (`lgamma` differentiates to `digamma`, `digamma` to the trigamma function); the rest are
//! composed of them and `jnp` operations, so `jit`, `grad` and `vmap` apply to all.

use crate::ir::trace::is_tracing;
use crate::jnp::{self, promote_inexact, unary, ArrayLike};
use crate::primitives::UnaryOp;
use crate::shape::Axes;
use crate::transform::ad::custom::custom_jvp;
use crate::Array;

/// The operand promoted as JAX's `promote_args_inexact` promotes one.
#[track_caller]
fn inexact(x: impl ArrayLike) -> Array {
    promote_inexact(&[x.into_array()]).remove(0)
}

/// Both operands promoted to one float type (`promote_args_inexact`).
#[track_caller]
fn inexact_pair(a: impl ArrayLike, b: impl ArrayLike) -> (Array, Array) {
    let mut ops = promote_inexact(&[a.into_array(), b.into_array()]);
    let b = ops.pop().expect("two operands");
    (ops.pop().expect("two operands"), b)
}

/// The error function `2/sqrt(pi) * integral of e^-t^2 from 0 to x`.
#[track_caller]
pub fn erf(x: impl ArrayLike) -> Array {
    jnp::erf(&inexact(x))
}

/// `1 - erf(x)`, accurate where `erf(x)` is close to 1 (`erfc(10)` is about `2e-45`, not 0).
///
/// ```
/// use rjax_runtime::{jnp, scipy::special};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let y = special::erfc(jnp::array(&[5.0f64])).item::<f64>().unwrap();
/// assert!((y / 1.5374597944280349e-12 - 1.0).abs() < 1e-14);
/// ```
#[track_caller]
pub fn erfc(x: impl ArrayLike) -> Array {
    unary(UnaryOp::Erfc, &inexact(x))
}

/// The inverse of [`erf`] on `(-1, 1)`; `+-inf` at `+-1`.
#[track_caller]
pub fn erfinv(x: impl ArrayLike) -> Array {
    jnp::erfinv(&inexact(x))
}

/// `log(p / (1 - p))`, the inverse of [`expit`], with JAX's derivative `1 / (p (1 - p))`.
#[track_caller]
pub fn logit(x: impl ArrayLike) -> Array {
    let x = inexact(x);
    let value = |x: &Array| jnp::log(&jnp::divide(x, jnp::subtract(1.0, x)));
    if !is_tracing() {
        return value(&x);
    }
    custom_jvp(
        &x,
        |x: Array| value(&x),
        |x: Array, t: Array| (value(&x), jnp::divide(&t, &x * jnp::subtract(1.0, &x))),
    )
}

/// The logistic sigmoid `1 / (1 + e^-x)`; unlike [`jnp::sigmoid`], integers are promoted.
#[track_caller]
pub fn expit(x: impl ArrayLike) -> Array {
    jnp::sigmoid(&inexact(x))
}

/// `x * log(y)`, 0 where `x` is 0 (unless `y` is NaN), with JAX's derivative
/// `(log y, x / y)`.
///
/// ```
/// use rjax_runtime::{jnp, scipy::special};
/// assert_eq!(special::xlogy(0.0f32, jnp::array(&[0.0f32])).to_vec::<f32>().unwrap(), vec![0.0]);
/// ```
#[track_caller]
pub fn xlogy(x: impl ArrayLike, y: impl ArrayLike) -> Array {
    x_times(x, y, jnp::log, |y| y.clone())
}

/// `x * log(1 + y)`, 0 where `x` is 0 (unless `y` is NaN), with JAX's derivative
/// `(log1p y, x / (1 + y))`.
#[track_caller]
pub fn xlog1py(x: impl ArrayLike, y: impl ArrayLike) -> Array {
    x_times(x, y, jnp::log1p, |y| y + 1.0)
}

/// `x * g(y)` with 0 where `x` is 0, differentiated as `(g(y), x / dg(y))` by a custom rule
/// (`xlogy` and `xlog1py`, where `g` is a logarithm and `dg` the argument it divides by).
#[track_caller]
fn x_times(
    x: impl ArrayLike,
    y: impl ArrayLike,
    g: fn(&Array) -> Array,
    dg: fn(&Array) -> Array,
) -> Array {
    let value = move |x: &Array, y: &Array| {
        let use_product = jnp::logical_or(jnp::not_equal(x, 0.0), jnp::isnan(y));
        jnp::where_(&use_product, x * g(y), jnp::zeros_like(x))
    };
    let (x, y) = inexact_pair(x, y);
    if !is_tracing() {
        return value(&x, &y);
    }
    custom_jvp(
        &(x, y),
        |(x, y): (Array, Array)| value(&x, &y),
        |(x, y): (Array, Array), (tx, ty): (Array, Array)| {
            (value(&x, &y), tx * g(&y) + ty * &x / dg(&y))
        },
    )
}

/// The standard normal CDF, `(1 + erf(x / sqrt 2)) / 2`, using `erfc` in the tails as JAX
/// does, so `ndtr(-20)` is about `2.8e-89` rather than 0.
#[track_caller]
pub fn ndtr(x: impl ArrayLike) -> Array {
    let x = inexact(x);
    let half_sqrt_2 = 0.5 * std::f64::consts::SQRT_2;
    let w = &x * half_sqrt_2;
    let z = jnp::abs(&w);
    let tail = jnp::where_(w.gt(0.0), jnp::subtract(2.0, erfc(&z)), erfc(&z));
    jnp::where_(z.lt(half_sqrt_2), jnp::erf(&w) + 1.0, tail) * 0.5
}

/// The inverse of [`ndtr`], as `sqrt 2 * erfinv(2p - 1)`: `-inf` at 0, `inf` at 1.
///
/// Unlike JAX's rational approximations, `2p - 1` rounds to -1 for `p` below the dtype's
/// epsilon / 2, so the far lower tail (`p` < 6e-8 in `float32`, 1.1e-16 in `float64`) gives
/// `-inf` where JAX gives a finite value; between there and 1e-3 the result loses relative
/// accuracy like `eps / p`.
#[track_caller]
pub fn ndtri(p: impl ArrayLike) -> Array {
    let p = inexact(p);
    jnp::erfinv(&(&p * 2.0 - 1.0)) * std::f64::consts::SQRT_2
}

/// `log(|sum(b * exp(x))|)` over `axes`, computed without overflow (`jax.scipy.special.logsumexp`).
/// With weights `b` (broadcast against `x`), terms where `b` is 0 are dropped and a negative
/// weighted sum gives NaN, as in JAX; without them it is [`nn::logsumexp`](crate::nn::logsumexp).
///
/// ```
/// use rjax_runtime::{jnp, scipy::special};
/// let x = jnp::array(&[0.0f32, 0.0]);
/// let b = jnp::array(&[2.0f32, 2.0]);
/// let y = special::logsumexp(&x, -1, Some(&b), false).item::<f32>().unwrap();
/// assert!((y - 4f32.ln()).abs() < 1e-6);
/// ```
#[track_caller]
pub fn logsumexp(x: &Array, axes: impl Into<Axes>, b: Option<&Array>, keepdims: bool) -> Array {
    crate::nn::logsumexp_weighted("logsumexp", x, axes.into(), b, keepdims)
}

/// `ln |Gamma(x)|`; `inf` at 0 and the negative integers. Its derivative is [`digamma`].
#[track_caller]
pub fn gammaln(x: impl ArrayLike) -> Array {
    crate::lax::lgamma(x)
}

/// `d/dx ln Gamma(x)`; NaN at 0 and the negative integers, as in JAX. Its derivative is the
/// trigamma function.
#[track_caller]
pub fn digamma(x: impl ArrayLike) -> Array {
    crate::lax::digamma(x)
}

/// `ln |B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)`.
///
/// Composed directly, unlike JAX's large-argument algorithm: for `a + b` in the thousands the
/// difference of large logarithms loses digits (relative error about `eps * ln Gamma(a + b)`).
#[track_caller]
pub fn betaln(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let (a, b) = inexact_pair(a, b);
    gammaln(&a) + gammaln(&b) - gammaln(&(&a + &b))
}

/// `e^-|x| I_0(x)`, the exponentially scaled modified Bessel function of order 0.
#[track_caller]
pub fn i0e(x: impl ArrayLike) -> Array {
    unary(UnaryOp::BesselI0e, &inexact(x))
}

/// `e^-|x| I_1(x)`, the exponentially scaled modified Bessel function of order 1; its
/// derivative at 0 is 1/2.
#[track_caller]
pub fn i1e(x: impl ArrayLike) -> Array {
    unary(UnaryOp::BesselI1e, &inexact(x))
}
