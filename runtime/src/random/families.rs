//! Samplers that transform one or two basic draws (uniform, normal, exponential, bernoulli)
//! with elementwise arithmetic, in JAX's order of operations so the bits match:
//! `laplace`, `logistic`, `cauchy`, `lognormal`, `pareto`, `rademacher`, `rayleigh`,
//! `weibull_min`, `maxwell`, `double_sided_maxwell`, `triangular`, `wald` and `geometric`.
//!
//! They are built from array operations only, so they trace under `#[jit]`, `vmap` and
//! `lax::scan`. Parameters are scalars or arrays that broadcast to the sample shape, converted
//! to the sample dtype as JAX converts them.

use super::continuous::{bernoulli, bound, check_float, unit_uniform};
use super::{exponential_dtype, normal_dtype, split, uniform_range_dtype, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::shape::{broadcast_shapes, ShapeDisplay};

/// `2^-k` as an `f64` (exact).
fn pow2(k: i32) -> f64 {
    2f64.powi(k)
}

/// The spacing of `dtype` just below 1 (`finfo(dtype).epsneg`).
fn epsneg(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        pow2(-24)
    } else {
        pow2(-53)
    }
}

/// The spacing of `dtype` just above 1 (`finfo(dtype).eps`).
fn eps(dtype: DType) -> f64 {
    2.0 * epsneg(dtype)
}

/// The smallest normal number of `dtype` (`finfo(dtype).tiny`).
fn tiny(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        f32::MIN_POSITIVE as f64
    } else {
        f64::MIN_POSITIVE
    }
}

/// A float constant of `dtype` (0-d), as JAX's `lax._const`.
fn constant(v: f64, dtype: DType) -> Array {
    Array::from(v).astype(dtype)
}

/// Standard Laplace `float32` values, density `e^-|x| / 2` (`jax.random.laplace`).
///
/// ```
/// use rjax_runtime::random;
/// let x = random::laplace(&random::key(0), [3]);
/// assert_eq!(x.shape(), &[3]);
/// ```
#[track_caller]
pub fn laplace(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    laplace_dtype(key, shape, crate::dtype::default_float())
}

/// Standard Laplace values of `dtype`: `sign(u) * log1p(-|u|)`, `u` uniform on
/// `[-1 + epsneg, 1)`.
#[track_caller]
pub fn laplace_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("laplace", dtype);
    let u = uniform_range_dtype(key, shape, dtype, -1.0 + epsneg(dtype), 1.0);
    jnp::multiply(jnp::sign(&u), jnp::log1p(&jnp::negative(&jnp::abs(&u))))
}

/// Standard logistic `float32` values, density `e^-x / (1 + e^-x)^2`
/// (`jax.random.logistic`).
#[track_caller]
pub fn logistic(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    logistic_dtype(key, shape, crate::dtype::default_float())
}

/// Standard logistic values of `dtype`: `log(u) - log1p(-u)`, `u` uniform on `[tiny, 1)`.
#[track_caller]
pub fn logistic_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("logistic", dtype);
    let u = uniform_range_dtype(key, shape, dtype, tiny(dtype), 1.0);
    jnp::subtract(jnp::log(&u), jnp::log1p(&jnp::negative(&u)))
}

/// Standard Cauchy `float32` values, density `1 / (pi (1 + x^2))` (`jax.random.cauchy`).
#[track_caller]
pub fn cauchy(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    cauchy_dtype(key, shape, crate::dtype::default_float())
}

/// Standard Cauchy values of `dtype`: `tan(pi * (u - 0.5))`, `u` uniform on `[eps, 1)`.
#[track_caller]
pub fn cauchy_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("cauchy", dtype);
    let u = uniform_range_dtype(key, shape, dtype, eps(dtype), 1.0);
    let centered = jnp::subtract(&u, constant(0.5, dtype));
    jnp::tan(&jnp::multiply(constant(std::f64::consts::PI, dtype), &centered))
}

/// Log-normal `float32` values: `exp(sigma * z)` for standard normal `z`
/// (`jax.random.lognormal(key, sigma, shape)`); `sigma` broadcasts to `shape`.
#[track_caller]
pub fn lognormal(key: &Key, sigma: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    lognormal_dtype(key, sigma, shape, crate::dtype::default_float())
}

/// Log-normal values of `dtype`.
#[track_caller]
pub fn lognormal_dtype(
    key: &Key,
    sigma: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("lognormal", dtype);
    let sigma = bound("lognormal", "sigma", sigma, dtype, shape);
    jnp::exp(&jnp::multiply(normal_dtype(key, shape, dtype), &sigma))
}

/// Pareto `float32` values with shape parameter `b`, density `b / x^(b + 1)` on `x >= 1`
/// (`jax.random.pareto(key, b, shape)`): `exp(e / b)` for standard exponential `e`.
#[track_caller]
pub fn pareto(key: &Key, b: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    pareto_dtype(key, b, shape, crate::dtype::default_float())
}

/// Pareto values of `dtype`.
#[track_caller]
pub fn pareto_dtype(
    key: &Key,
    b: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("pareto", dtype);
    let b = bound("pareto", "b", b, dtype, shape);
    jnp::exp(&jnp::divide(exponential_dtype(key, shape, dtype), &b))
}

/// `int32` values of -1 and 1 with equal probability (`jax.random.rademacher`).
///
/// ```
/// use rjax_runtime::random;
/// let s = random::rademacher(&random::key(0), [8]).to_vec::<i32>().unwrap();
/// assert!(s.iter().all(|&v| v == 1 || v == -1));
/// ```
#[track_caller]
pub fn rademacher(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    rademacher_dtype(key, shape, crate::dtype::default_int())
}

/// -1 and 1 as `dtype` (any integer or float type): `2 * bernoulli(key, 0.5) - 1`.
#[track_caller]
pub fn rademacher_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    if !(dtype.is_int() || matches!(dtype, DType::F32 | DType::F64)) {
        panic!("rademacher: dtype must be an integer type, float32 or float64, got {dtype}");
    }
    let dtype = crate::dtype::canonicalize(dtype);
    let b = bernoulli(key, 0.5, shape).astype(dtype);
    jnp::subtract(jnp::multiply(2, &b), 1).astype(dtype)
}

/// Rayleigh `float32` values with `scale` (`jax.random.rayleigh(key, scale, shape)`):
/// `scale * sqrt(-2 log u)`.
#[track_caller]
pub fn rayleigh(key: &Key, scale: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    rayleigh_dtype(key, scale, shape, crate::dtype::default_float())
}

/// Rayleigh values of `dtype`.
#[track_caller]
pub fn rayleigh_dtype(
    key: &Key,
    scale: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("rayleigh", dtype);
    let scale = bound("rayleigh", "scale", scale, dtype, shape);
    let u = unit_uniform("rayleigh", key, shape, dtype);
    let root = jnp::sqrt(&jnp::multiply(jnp::log(&u), constant(-2.0, dtype)));
    jnp::multiply(&scale, &root)
}

/// Weibull `float32` values (`jax.random.weibull_min(key, scale, concentration, shape)`):
/// `(-log1p(-u))^(1 / concentration) * scale`.
#[track_caller]
pub fn weibull_min(
    key: &Key,
    scale: impl ArrayLike,
    concentration: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    weibull_min_dtype(key, scale, concentration, shape, crate::dtype::default_float())
}

/// Weibull values of `dtype`. The reciprocal of `concentration` is taken before conversion,
/// as JAX computes `1.0 / concentration` on its argument: in `dtype` for a Rust scalar (a
/// weakly typed argument), in the array's own type otherwise.
#[track_caller]
pub fn weibull_min_dtype(
    key: &Key,
    scale: impl ArrayLike,
    concentration: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("weibull_min", dtype);
    let scale = bound("weibull_min", "scale", scale, dtype, shape);
    let inverse = reciprocal_of_argument(concentration, dtype);
    let inverse = bound("weibull_min", "concentration", inverse, dtype, shape);
    let u = unit_uniform("weibull_min", key, shape, dtype);
    let e = jnp::negative(&jnp::log1p(&jnp::negative(&u)));
    jnp::multiply(jnp::pow(&e, &inverse), &scale)
}

/// One-sided Maxwell `float32` values, the length of a standard normal 3-vector
/// (`jax.random.maxwell`).
#[track_caller]
pub fn maxwell(key: &Key, shape: impl AsRef<[usize]>) -> Array {
    maxwell_dtype(key, shape, crate::dtype::default_float())
}

/// Maxwell values of `dtype`: `sqrt(sum(z * z, -1))` for normal `z` of shape `shape + (3,)`.
#[track_caller]
pub fn maxwell_dtype(key: &Key, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    let dtype = check_float("maxwell", dtype);
    let mut shape3 = shape.as_ref().to_vec();
    shape3.push(3);
    let z = normal_dtype(key, &shape3, dtype);
    jnp::sqrt(&jnp::sum_axes(&jnp::multiply(&z, &z), [-1], false))
}

/// Double-sided Maxwell `float32` values: a Maxwell value with a random sign, scaled and
/// shifted (`jax.random.double_sided_maxwell(key, loc, scale, shape)`).
///
/// As in JAX, the result has shape `shape + broadcast(loc.shape, scale.shape)` (or that
/// broadcast shape alone when `shape` is empty).
#[track_caller]
pub fn double_sided_maxwell(
    key: &Key,
    loc: impl ArrayLike,
    scale: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    double_sided_maxwell_dtype(key, loc, scale, shape, crate::dtype::default_float())
}

/// Double-sided Maxwell values of `dtype`: `sign * maxwell * scale + loc`.
#[track_caller]
pub fn double_sided_maxwell_dtype(
    key: &Key,
    loc: impl ArrayLike,
    scale: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    const OP: &str = "double_sided_maxwell";
    let dtype = check_float(OP, dtype);
    let (loc, scale) = (loc.into_array(), scale.into_array());
    let Some(params) = broadcast_shapes(loc.shape(), scale.shape()) else {
        panic!(
            "{OP}: loc of shape {} and scale of shape {} do not broadcast together",
            ShapeDisplay(loc.shape()),
            ShapeDisplay(scale.shape())
        );
    };
    let mut full = shape.as_ref().to_vec();
    if full.is_empty() {
        full = params.clone();
    }
    full.extend_from_slice(&params);
    let keys = split(key, 2);
    let magnitude = maxwell_dtype(&keys.get(0), &full, dtype);
    let sign = rademacher_dtype(&keys.get(1), &full, dtype);
    let (loc, scale) =
        (bound(OP, "loc", loc, dtype, &full), bound(OP, "scale", scale, dtype, &full));
    jnp::add(jnp::multiply(jnp::multiply(&sign, &magnitude), &scale), &loc)
}

/// Triangular `float32` values on `[left, right]` peaking at `mode`
/// (`jax.random.triangular(key, left, mode, right, shape)`), by inverting the CDF.
#[track_caller]
pub fn triangular(
    key: &Key,
    left: impl ArrayLike,
    mode: impl ArrayLike,
    right: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    triangular_dtype(key, left, mode, right, shape, crate::dtype::default_float())
}

/// Triangular values of `dtype`.
#[track_caller]
pub fn triangular_dtype(
    key: &Key,
    left: impl ArrayLike,
    mode: impl ArrayLike,
    right: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    const OP: &str = "triangular";
    let shape = shape.as_ref();
    let dtype = check_float(OP, dtype);
    let full = |name, x: Array| jnp::broadcast_to(&bound(OP, name, x, dtype, shape), shape);
    let (left, mode, right) = (
        full("left", left.into_array()),
        full("mode", mode.into_array()),
        full("right", right.into_array()),
    );
    let width = jnp::subtract(&right, &left);
    let fc = jnp::divide(jnp::subtract(&mode, &left), &width);
    let u = unit_uniform(OP, key, shape, dtype);
    let rise = jnp::multiply(jnp::multiply(&u, &width), jnp::subtract(&mode, &left));
    let low = jnp::add(&left, jnp::sqrt(&rise));
    let fall =
        jnp::multiply(jnp::multiply(jnp::subtract(1.0, &u), &width), jnp::subtract(&right, &mode));
    let high = jnp::subtract(&right, jnp::sqrt(&fall));
    jnp::where_(jnp::less(&u, &fc), &low, &high)
}

/// Wald (inverse Gaussian) `float32` values with `mean` and unit shape
/// (`jax.random.wald(key, mean, shape)`), by Michael, Schucany and Haas' transformation.
#[track_caller]
pub fn wald(key: &Key, mean: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    wald_dtype(key, mean, shape, crate::dtype::default_float())
}

/// Wald values of `dtype`.
#[track_caller]
pub fn wald_dtype(
    key: &Key,
    mean: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    let dtype = check_float("wald", dtype);
    let mean = jnp::broadcast_to(&bound("wald", "mean", mean, dtype, shape), shape);
    let keys = split(key, 2);
    let v = normal_dtype(&keys.get(0), shape, dtype);
    let z = unit_uniform("wald", &keys.get(1), shape, dtype);
    let c = |x: f64| constant(x, dtype);
    let y = jnp::multiply(&v, &v);
    let y_sq = jnp::multiply(&y, &y);
    let mean_sq = jnp::multiply(&mean, &mean);
    let radicand =
        jnp::add(jnp::multiply(jnp::multiply(c(4.0), &mean), &y), jnp::multiply(&mean_sq, &y_sq));
    let root = jnp::sqrt(&radicand);
    let x = jnp::subtract(
        jnp::add(&mean, jnp::divide(jnp::multiply(&mean_sq, &y), c(2.0))),
        jnp::multiply(jnp::divide(&mean, c(2.0)), &root),
    );
    let accept = jnp::less_equal(&z, jnp::divide(&mean, jnp::add(&mean, &x)));
    jnp::where_(&accept, &x, jnp::divide(&mean_sq, &x))
}

/// Geometric `int32` values, the number of Bernoulli(`p`) trials up to the first success
/// (`jax.random.geometric(key, p, shape)`): `floor(log(u) / log1p(-p)) + 1`.
#[track_caller]
pub fn geometric(key: &Key, p: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    geometric_dtype(key, p, shape, crate::dtype::default_int())
}

/// Geometric values of the integer `dtype`, drawn in the float type of `p` (`float32` for a
/// Rust scalar or an integer array).
#[track_caller]
pub fn geometric_dtype(
    key: &Key,
    p: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    if !dtype.is_int() {
        panic!("geometric: dtype must be an integer type, got {dtype}");
    }
    let dtype = crate::dtype::canonicalize(dtype);
    let p = p.into_array();
    let float = if p.dtype().is_float() && !p.is_weak() {
        p.dtype()
    } else {
        crate::dtype::default_float()
    };
    let float = check_float("geometric", float);
    let p = bound("geometric", "p", p, float, shape);
    let u = unit_uniform("geometric", key, shape, float);
    // JAX maps u = 0 to 1, so that log(u) stays finite.
    let u = jnp::where_(jnp::equal(&u, 0.0), constant(1.0, float), &u);
    let log_q = jnp::broadcast_to(&jnp::log1p(&jnp::negative(&p)), shape);
    let g = jnp::add(jnp::floor(&jnp::divide(jnp::log(&u), &log_q)), 1.0);
    g.astype(dtype)
}

/// `1 / x` as JAX computes it on a sampler's argument inside its `jit`: a weakly typed
/// scalar has become a value of the sample `dtype` first.
pub(super) fn reciprocal_of_argument(x: impl ArrayLike, dtype: DType) -> Array {
    let x = x.into_array();
    let x = if x.is_weak() { x.astype(dtype) } else { x };
    jnp::divide(1.0, &x)
}
