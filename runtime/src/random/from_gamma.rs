//! Samplers built on [`gamma`](super::gamma()) and [`loggamma`](super::loggamma()), in JAX's
//! order of operations: `beta`, `dirichlet`, `t`, `chisquare`, `f`, `generalized_normal` and
//! `ball`.

use super::continuous::{bound, check_float};
use super::families::{rademacher_dtype, reciprocal_of_argument};
use super::gamma::sample_gamma;
use super::{exponential_dtype, normal_dtype, split, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::shape::ShapeDisplay;

/// A 0-d constant of `dtype`.
fn constant(v: f64, dtype: DType) -> Array {
    Array::from(v).astype(dtype)
}

/// Beta `float32` values with parameters `a` and `b` (`jax.random.beta(key, a, b, shape)`):
/// `Ga / (Ga + Gb)` for gamma draws, computed from their logarithms so that small
/// parameters do not underflow.
#[track_caller]
pub fn beta(key: &Key, a: impl ArrayLike, b: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    beta_dtype(key, a, b, shape, crate::dtype::default_float())
}

/// Beta values of `dtype`.
#[track_caller]
pub fn beta_dtype(
    key: &Key,
    a: impl ArrayLike,
    b: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("beta", dtype);
    let a = bound("beta", "a", a, dtype, shape);
    let b = bound("beta", "b", b, dtype, shape);
    let keys = split(key, 2);
    let log_a = sample_gamma("beta", &keys.get(0), a, shape, dtype, true);
    let log_b = sample_gamma("beta", &keys.get(1), b, shape, dtype, true);
    let log_max = jnp::maximum(&log_a, &log_b);
    let ga = jnp::exp(&jnp::subtract(&log_a, &log_max));
    let gb = jnp::exp(&jnp::subtract(&log_b, &log_max));
    jnp::divide(&ga, jnp::add(&ga, &gb))
}

/// Dirichlet `float32` values with concentrations `alpha` along its last axis
/// (`jax.random.dirichlet(key, alpha, shape)`): `shape` is the batch shape, which must end
/// with `alpha`'s (broadcasting), and the result has shape `shape + alpha.shape[-1:]`.
#[track_caller]
pub fn dirichlet(key: &Key, alpha: &Array, shape: impl AsRef<[usize]>) -> Array {
    dirichlet_dtype(key, alpha, shape, crate::dtype::default_float())
}

/// Dirichlet values of `dtype`: the softmax of log-gamma draws along the last axis.
#[track_caller]
pub fn dirichlet_dtype(
    key: &Key,
    alpha: &Array,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let dtype = check_float("dirichlet", dtype);
    let Some(&k) = alpha.shape().last() else {
        panic!(
            "dirichlet: alpha must be at least 1-D (one concentration per category), got a scalar"
        );
    };
    let mut full = shape.as_ref().to_vec();
    full.push(k);
    let batch = &alpha.shape()[..alpha.ndim() - 1];
    if crate::shape::broadcast_shapes(batch, shape.as_ref()).as_deref() != Some(shape.as_ref()) {
        panic!(
            "dirichlet: the batch shape {} of alpha does not broadcast to the sample shape {}",
            ShapeDisplay(batch),
            ShapeDisplay(shape.as_ref())
        );
    }
    let logs = sample_gamma("dirichlet", key, alpha, &full, dtype, true);
    let max = jnp::max_axes(&logs, [-1], true);
    let e = jnp::exp(&jnp::subtract(&logs, &max));
    jnp::divide(&e, jnp::sum_axes(&e, [-1], true))
}

/// Student's t `float32` values with `df` degrees of freedom (`jax.random.t(key, df, shape)`):
/// `z * sqrt((df / 2) / g)` for standard normal `z` and gamma `g` with `a = df / 2`.
#[track_caller]
pub fn t(key: &Key, df: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    t_dtype(key, df, shape, crate::dtype::default_float())
}

/// Student's t values of `dtype`.
#[track_caller]
pub fn t_dtype(key: &Key, df: impl ArrayLike, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("t", dtype);
    let df = bound("t", "df", df, dtype, shape);
    let keys = split(key, 2);
    let z = normal_dtype(&keys.get(0), shape, dtype);
    let half_df = jnp::divide(&df, constant(2.0, dtype));
    let g = sample_gamma("t", &keys.get(1), &half_df, shape, dtype, false);
    jnp::multiply(&z, jnp::sqrt(&jnp::divide(&half_df, &g)))
}

/// Chi-square `float32` values with `df` degrees of freedom
/// (`jax.random.chisquare(key, df, shape)`): `2 exp(loggamma(df / 2))`.
#[track_caller]
pub fn chisquare(key: &Key, df: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    chisquare_dtype(key, df, shape, crate::dtype::default_float())
}

/// Chi-square values of `dtype`.
#[track_caller]
pub fn chisquare_dtype(
    key: &Key,
    df: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("chisquare", dtype);
    let df = bound("chisquare", "df", df, dtype, shape);
    let two = constant(2.0, dtype);
    let half_df = jnp::divide(&df, &two);
    let log_g = sample_gamma("chisquare", key, half_df, shape, dtype, true);
    jnp::multiply(jnp::exp(&log_g), &two)
}

/// F-distributed `float32` values with `dfnum` and `dfden` degrees of freedom
/// (`jax.random.f(key, dfnum, dfden, shape)`): the ratio of two scaled chi-square draws.
#[track_caller]
pub fn f(
    key: &Key,
    dfnum: impl ArrayLike,
    dfden: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    f_dtype(key, dfnum, dfden, shape, crate::dtype::default_float())
}

/// F-distributed values of `dtype`.
#[track_caller]
pub fn f_dtype(
    key: &Key,
    dfnum: impl ArrayLike,
    dfden: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("f", dtype);
    let dfnum = bound("f", "dfnum", dfnum, dtype, shape);
    let dfden = bound("f", "dfden", dfden, dtype, shape);
    // JAX draws the denominator from the first key.
    let keys = split(key, 2);
    let chi_num = chisquare_dtype(&keys.get(1), &dfnum, shape, dtype);
    let chi_den = chisquare_dtype(&keys.get(0), &dfden, shape, dtype);
    jnp::divide(jnp::divide(&chi_num, &dfnum), jnp::divide(&chi_den, &dfden))
}

/// Generalized normal `float32` values with shape parameter `p`, density proportional to
/// `exp(-|x|^p)` (`jax.random.generalized_normal(key, p, shape)`): `sign * g^(1/p)` for
/// gamma `g` with `a = 1/p`.
#[track_caller]
pub fn generalized_normal(key: &Key, p: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    generalized_normal_dtype(key, p, shape, crate::dtype::default_float())
}

/// Generalized normal values of `dtype`; `p` is a scalar.
#[track_caller]
pub fn generalized_normal_dtype(
    key: &Key,
    p: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("generalized_normal", dtype);
    let p = scalar_param("generalized_normal", p, dtype);
    let inverse = reciprocal_of_argument(&p, dtype).astype(dtype);
    let keys = split(key, 2);
    let g = sample_gamma("generalized_normal", &keys.get(0), &inverse, shape, dtype, false);
    let sign = rademacher_dtype(&keys.get(1), shape, dtype);
    jnp::multiply(&sign, jnp::pow(&g, &inverse))
}

/// Points drawn uniformly from the unit `p`-norm ball in `d` dimensions
/// (`jax.random.ball(key, d, p, shape)`): `float32` of shape `shape + (d,)`.
#[track_caller]
pub fn ball(key: &Key, d: usize, p: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    ball_dtype(key, d, p, shape, crate::dtype::default_float())
}

/// Points of the unit `p`-ball as `dtype`: generalized normal draws divided by the `p`-th
/// root of their `p`-norm to the `p` plus an exponential draw.
#[track_caller]
pub fn ball_dtype(
    key: &Key,
    d: usize,
    p: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("ball", dtype);
    let p = scalar_param("ball", p, dtype);
    let keys = split(key, 2);
    let mut full = shape.to_vec();
    full.push(d);
    let g = generalized_normal_dtype(&keys.get(0), &p, &full, dtype);
    let e = exponential_dtype(&keys.get(1), shape, dtype);
    let total = jnp::add(jnp::sum_axes(&jnp::pow(jnp::abs(&g), &p), [-1], false), &e);
    let radius = jnp::pow(&total, reciprocal_of_argument(&p, dtype));
    jnp::divide(&g, jnp::expand_dims(&radius, -1))
}

/// A scalar parameter as JAX's jitted samplers take it: a Rust scalar becomes a value of
/// `dtype`, an array keeps its type.
#[track_caller]
fn scalar_param(op: &str, p: impl ArrayLike, dtype: DType) -> Array {
    let p = p.into_array();
    if p.ndim() != 0 {
        panic!("{op}: p must be a scalar, got shape {}", ShapeDisplay(p.shape()));
    }
    if p.is_weak() {
        p.astype(dtype)
    } else {
        p
    }
}
