//! Float samplers: `uniform`, `normal`, `truncated_normal`, `exponential`, `gumbel`, and
//! `bernoulli` (a comparison against `uniform`).

use super::Key;
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::primitives::bind1;
use crate::primitives::random::{broadcast_to, RandomSample, Sampler};
use crate::shape::{broadcast_shapes, ShapeDisplay};

/// Uniform `float32` values in `[0, 1)` (`jax.random.uniform(key, shape)`).
///
/// ```
/// use rjax_runtime::random;
/// let u = random::uniform(&random::key(0), [4]);
/// assert_eq!(u.to_vec::<f32>().unwrap()[0], 0.947667);
/// ```
#[track_caller]
pub fn uniform(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    uniform_dtype(key, shape, crate::dtype::default_float())
}

/// Uniform values of `dtype` (`F32` or `F64`) in `[0, 1)`.
#[track_caller]
pub fn uniform_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    uniform_range_dtype(key, shape, dtype, 0.0, 1.0)
}

/// Uniform `float32` values in `[minval, maxval)`; the bounds are scalars or arrays that
/// broadcast to `shape` (`jax.random.uniform(key, shape, minval=.., maxval=..)`).
///
/// Panics if any `minval > maxval`.
///
/// ```
/// use rjax_runtime::random;
/// let u = random::uniform_range(&random::key(42), [2, 3], -2.0, 3.0);
/// assert!(u.to_vec::<f32>().unwrap().iter().all(|&v| (-2.0..3.0).contains(&v)));
/// ```
#[track_caller]
pub fn uniform_range(
    key: &Key,
    shape: impl AsRef<[usize]>,
    minval: impl ArrayLike,
    maxval: impl ArrayLike,
) -> Array {
    uniform_range_dtype(key, shape, DType::F32, minval, maxval)
}

/// Uniform values of `dtype` in `[minval, maxval)`, as JAX computes them: the top mantissa bits
/// of the random bits give `u` in `[0, 1)`, then `max(minval, u * (maxval - minval) + minval)`.
#[track_caller]
pub fn uniform_range_dtype(
    key: &Key,
    shape: impl AsRef<[usize]>,
    dtype: DType,
    minval: impl ArrayLike,
    maxval: impl ArrayLike,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("uniform", dtype);
    let lo = bound("uniform", "minval", minval, dtype, shape);
    let hi = bound("uniform", "maxval", maxval, dtype, shape);
    check_ordered("uniform", ("minval", &lo), ("maxval", &hi));
    sample("uniform", Sampler::Uniform, key, shape, dtype, &[&lo, &hi])
}

/// Standard normal `float32` values (`jax.random.normal(key, shape)`).
///
/// ```
/// use rjax_runtime::random;
/// let x = random::normal(&random::key(0), [4]);
/// assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.6226422, 2.0252647, -0.43359444, -0.07861735]);
/// ```
#[track_caller]
pub fn normal(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    normal_dtype(key, shape, crate::dtype::default_float())
}

/// Standard normal values of `dtype`: `sqrt(2) * erf_inv(u)` with `u` uniform on
/// `[nextafter(-1, 0), 1)`, as JAX computes them.
#[track_caller]
pub fn normal_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("normal", dtype);
    sample("normal", Sampler::Normal, key, shape.as_ref(), dtype, &[])
}

/// Standard normal `float32` values truncated to the open interval `(lower, upper)`
/// (`jax.random.truncated_normal`); the bounds broadcast to `shape`.
///
/// Panics if any `lower > upper`.
///
/// ```
/// use rjax_runtime::random;
/// let x = random::truncated_normal(&random::key(1), -2.0, 2.0, [100]);
/// assert!(x.to_vec::<f32>().unwrap().iter().all(|v| v.abs() < 2.0));
/// ```
#[track_caller]
pub fn truncated_normal(
    key: &Key,
    lower: impl ArrayLike,
    upper: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    truncated_normal_dtype(key, lower, upper, shape, crate::dtype::default_float())
}

/// Truncated standard normal values of `dtype`: `sqrt(2) * erf_inv(u)` with `u` uniform between
/// `erf(lower / sqrt 2)` and `erf(upper / sqrt 2)`, clipped into `(lower, upper)`.
#[track_caller]
pub fn truncated_normal_dtype(
    key: &Key,
    lower: impl ArrayLike,
    upper: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("truncated_normal", dtype);
    let lo = bound("truncated_normal", "lower", lower, dtype, shape);
    let hi = bound("truncated_normal", "upper", upper, dtype, shape);
    check_ordered("truncated_normal", ("lower", &lo), ("upper", &hi));
    sample("truncated_normal", Sampler::TruncatedNormal, key, shape, dtype, &[&lo, &hi])
}

/// Standard exponential `float32` values, density `e^-x` on `x >= 0`
/// (`jax.random.exponential`).
#[track_caller]
pub fn exponential(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    exponential_dtype(key, shape, crate::dtype::default_float())
}

/// Standard exponential values of `dtype`: `-log1p(-u)`, `u` uniform on `[0, 1)`.
#[track_caller]
pub fn exponential_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("exponential", dtype);
    sample("exponential", Sampler::Exponential, key, shape.as_ref(), dtype, &[])
}

/// Standard Gumbel `float32` values, density `e^-(x + e^-x)` (`jax.random.gumbel`).
#[track_caller]
pub fn gumbel(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    gumbel_dtype(key, shape, crate::dtype::default_float())
}

/// Standard Gumbel values of `dtype`: `-log(-log(u))`, `u` uniform on `[tiny, 1)` (JAX's
/// default mode, `"low"`).
#[track_caller]
pub fn gumbel_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("gumbel", dtype);
    sample("gumbel", Sampler::Gumbel, key, shape.as_ref(), dtype, &[])
}

/// `bool` values that are `true` with probability `p` (`jax.random.bernoulli(key, p, shape)`):
/// `uniform(key, shape, dtype) < p`, where `dtype` is `p`'s float type (`float32` for a Rust
/// scalar). `p` is a scalar or an array that broadcasts to `shape`.
///
/// ```
/// use rjax_runtime::random;
/// let coin = random::bernoulli(&random::key(0), 0.5, [4]);
/// assert_eq!(coin.to_vec::<bool>().unwrap(), vec![false, false, true, true]);
/// ```
#[track_caller]
pub fn bernoulli(key: &Key, p: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    let shape = shape.as_ref();
    let p = p.into_array();
    if !p.dtype().is_float() {
        panic!("bernoulli: the probability p must have a floating dtype, got {}", p.dtype());
    }
    // A Rust scalar is weakly typed and takes the default float type, as a Python float does.
    let dtype = if p.is_weak() { crate::dtype::default_float() } else { p.dtype() };
    let p = bound("bernoulli", "p", p, dtype, shape);
    jnp::less(unit_uniform("bernoulli", key, shape, dtype), &p)
}

/// Binds the `random_sample` primitive for `sampler` on a single key and its bounds.
#[track_caller]
pub(super) fn sample(
    op: &str,
    sampler: Sampler,
    key: &Key,
    shape: &[usize],
    dtype: DType,
    params: &[&Array],
) -> Array {
    let data = key.single(op);
    crate::shape::check(op, shape, dtype);
    let prim = RandomSample { sampler, shape: shape.to_vec(), dtype };
    let mut operands = vec![data];
    operands.extend_from_slice(params);
    bind1(&prim, &operands)
}

/// [`uniform_dtype`] for a sampler built on it, which its refusals name.
#[track_caller]
pub(super) fn unit_uniform(op: &str, key: &Key, shape: &[usize], dtype: DType) -> Array {
    let (lo, hi) = (Array::from(0.0f64).astype(dtype), Array::from(1.0f64).astype(dtype));
    sample(op, Sampler::Uniform, key, shape, dtype, &[&lo, &hi])
}

/// Checks that a sampler's `dtype` is a float type and returns it as the current mode has it
/// (`float64` is `float32` unless x64 is on, so the sampler draws JAX's 32-bit numbers).
#[track_caller]
pub(super) fn check_float(op: &str, dtype: DType) -> DType {
    if !matches!(dtype, DType::F32 | DType::F64) {
        panic!("{op}: dtype must be float32 or float64, got {dtype}");
    }
    crate::dtype::canonicalize(dtype)
}

/// A bound or parameter converted to `dtype`, after checking it broadcasts to the sample shape.
#[track_caller]
pub(super) fn bound(
    op: &str,
    name: &str,
    x: impl ArrayLike,
    dtype: DType,
    shape: &[usize],
) -> Array {
    let x = x.into_array();
    if broadcast_shapes(x.shape(), shape).as_deref() != Some(shape) {
        panic!(
            "{op}: {name} of shape {} does not broadcast to the sample shape {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(shape)
        );
    }
    x.astype(dtype)
}

/// Panics unless `lo <= hi` everywhere (NaN bounds pass, as they compare false). Bounds
/// whose values are not on the host (traced, or on a device, where reading them would be a
/// hidden copy) are not checked, as JAX checks none.
#[track_caller]
fn check_ordered(op: &str, lo: (&str, &Array), hi: (&str, &Array)) {
    let known = |x: &Array| !x.is_traced() && x.device().is_host();
    if !known(lo.1) || !known(hi.1) {
        return;
    }
    let above = jnp::greater(lo.1, hi.1);
    let flags = above.as_slice::<bool>().expect("comparisons give bool");
    if let Some(i) = flags.iter().position(|&b| b) {
        let value = |x: &Array| {
            broadcast_to::<f64>(&crate::jnp::convert(x, DType::F64, false), above.shape())[i]
        };
        let (l, h) = (value(lo.1), value(hi.1));
        panic!("{op}: {} > {} ({l} > {h} at flat index {i})", lo.0, hi.0);
    }
}
