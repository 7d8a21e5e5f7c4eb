//! Neural-network functions, like `jax.nn`: activations ([`relu`], [`gelu`], [`silu`], ...),
//! [`softmax`], [`log_softmax`] and [`logsumexp`] over chosen axes, [`one_hot`],
//! [`standardize`], weight [`initializers`], and the layers and combinators of [`stax`]
//! (`jax.example_libraries.stax`).
//!
//! Each is composed of `jnp` and `lax` operations as JAX composes it, so `jit`, `grad` and
//! `vmap` apply without rules of their own, and the values, derivatives and edge cases are
//! JAX's: [`relu`] and [`relu6`] have JAX's custom derivative (0 at the kinks), the softmax
//! family shifts by a maximum that differentiation does not see, and [`logsumexp`] of a slice
//! of `-inf` is `-inf`.
//!
//! ```
//! use rjax_runtime::{jnp, nn};
//! let x = jnp::array(&[-1.0f32, 0.0, 2.0]);
//! assert_eq!(nn::relu(&x).to_vec::<f32>().unwrap(), vec![0.0, 0.0, 2.0]);
//! let p = nn::softmax(&x, -1);
//! assert!((p.sum().item::<f32>().unwrap() - 1.0).abs() < 1e-6);
//! ```

pub mod initializers;
pub mod stax;

use crate::ir::trace::is_tracing;
use crate::jnp::{self, ArrayLike};
use crate::lax::stop_gradient;
use crate::shape::{Axes, ShapeDisplay};
use crate::transform::ad::custom::custom_jvp;
use crate::Array;

/// SELU's `alpha` and `scale` (`jax.nn.selu`), from the self-normalizing networks paper.
const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

/// `f(x)`, differentiated as `t` where `passes(x)` holds and 0 elsewhere, instead of by
/// differentiating `f` (JAX's `defjvps` rule for `relu` and `relu6`, whose kinks get slope 0).
#[track_caller]
fn with_gated_slope(x: &Array, f: fn(&Array) -> Array, passes: fn(&Array) -> Array) -> Array {
    if !is_tracing() {
        // Only traced values are differentiated; eager ones need no rule.
        return f(x);
    }
    custom_jvp(x, |x: Array| f(&x), |x: Array, t: Array| (f(&x), jnp::where_(passes(&x), &t, 0.0)))
}

/// Rectified linear unit, `max(x, 0)` (`jax.nn.relu`). Its derivative at 0 is 0, as in JAX.
///
/// ```
/// use rjax_runtime::{jnp, nn, transform::ad::api::grad_of};
/// let g = grad_of(|x| nn::relu(x).sum(), &jnp::array(&[-1.0f32, 0.0, 1.0]));
/// assert_eq!(g.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 1.0]);
/// ```
#[track_caller]
pub fn relu(x: &Array) -> Array {
    with_gated_slope(x, |x| jnp::maximum(x, 0), |x| x.gt(0))
}

/// `min(max(x, 0), 6)` (`jax.nn.relu6`); its derivative is 0 at both kinks, as in JAX.
#[track_caller]
pub fn relu6(x: &Array) -> Array {
    with_gated_slope(
        x,
        |x| jnp::minimum(jnp::maximum(x, 0), 6.0),
        |x| jnp::logical_and(x.gt(0), x.lt(6.0)),
    )
}

/// `relu6(x + 3) / 6` (`jax.nn.hard_sigmoid`).
#[track_caller]
pub fn hard_sigmoid(x: &Array) -> Array {
    relu6(&(x + 3.0)) / 6.0
}

/// `x * hard_sigmoid(x)` (`jax.nn.hard_silu`, also `hard_swish`).
#[track_caller]
pub fn hard_silu(x: &Array) -> Array {
    x * hard_sigmoid(x)
}

/// `1 / (1 + e^-x)` (`jax.nn.sigmoid`). Floating-point arrays only, as in JAX.
#[track_caller]
pub fn sigmoid(x: &Array) -> Array {
    jnp::sigmoid(x)
}

/// `x * sigmoid(x)` (`jax.nn.silu`).
#[track_caller]
pub fn silu(x: &Array) -> Array {
    x * sigmoid(x)
}

/// The same function as [`silu`] (`jax.nn.swish`).
#[track_caller]
pub fn swish(x: &Array) -> Array {
    silu(x)
}

/// `log(1 + e^x)` without overflow (`jax.nn.softplus`); its slope is `sigmoid(x)`.
#[track_caller]
pub fn softplus(x: &Array) -> Array {
    jnp::softplus(x)
}

/// `log(sigmoid(x))`, as `-softplus(-x)` so that it stays finite for large `|x|`
/// (`jax.nn.log_sigmoid`).
#[track_caller]
pub fn log_sigmoid(x: &Array) -> Array {
    -softplus(&-x)
}

/// Gaussian error linear unit (`jax.nn.gelu`): with `approximate`, JAX's default,
/// `x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`; without, the exact `x/2 erfc(-x/sqrt 2)`.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let x = jnp::array(&[1.0f32]);
/// let exact = nn::gelu(&x, false).item::<f32>().unwrap();
/// assert!((exact - 0.8413447).abs() < 1e-6);
/// assert!((nn::gelu(&x, true).item::<f32>().unwrap() - exact).abs() < 1e-3);
/// ```
#[track_caller]
pub fn gelu(x: &Array, approximate: bool) -> Array {
    let x = &inexact(x);
    if approximate {
        let inner = (x + jnp::powi(x, 3) * 0.044715) * (2.0 / std::f64::consts::PI).sqrt();
        x * ((jnp::tanh(&inner) + 1.0) * 0.5)
    } else {
        let tail = jnp::unary(crate::primitives::UnaryOp::Erfc, &(-x * 0.5f64.sqrt()));
        x * tail * 0.5
    }
}

/// Exponential linear unit (`jax.nn.elu`): `x` above 0, `alpha (e^x - 1)` at or below it.
#[track_caller]
pub fn elu(x: &Array, alpha: impl ArrayLike) -> Array {
    let positive = x.gt(0);
    // The exponential only sees the non-positive side, so large `x` cannot overflow it (which
    // would make the unused branch's derivative NaN).
    let safe = jnp::where_(&positive, 0.0, x);
    jnp::where_(&positive, x, jnp::multiply(alpha, jnp::expm1(&safe)))
}

/// Continuously differentiable ELU (`jax.nn.celu`):
/// `max(x, 0) + alpha (e^(min(x, 0) / alpha) - 1)`.
#[track_caller]
pub fn celu(x: &Array, alpha: impl ArrayLike) -> Array {
    let alpha = alpha.into_array();
    let below = jnp::divide(jnp::minimum(x, 0.0), &alpha);
    jnp::add(jnp::maximum(x, 0.0), jnp::multiply(&alpha, jnp::expm1(&below)))
}

/// Scaled ELU (`jax.nn.selu`): `scale * elu(x, alpha)` with the self-normalizing constants.
#[track_caller]
pub fn selu(x: &Array) -> Array {
    elu(x, SELU_ALPHA) * SELU_SCALE
}

/// `x` where `x >= 0`, else `negative_slope * x` (`jax.nn.leaky_relu`; JAX's default slope is
/// 0.01). The slope at 0 is 1.
#[track_caller]
pub fn leaky_relu(x: &Array, negative_slope: impl ArrayLike) -> Array {
    jnp::where_(x.ge(0), x, jnp::multiply(negative_slope, x))
}

/// `x` clipped to `[-1, 1]` (`jax.nn.hard_tanh`); the slope at +-1 is 1, as in JAX.
#[track_caller]
pub fn hard_tanh(x: &Array) -> Array {
    jnp::where_(x.gt(1), 1, jnp::where_(x.lt(-1), -1, x))
}

/// The operand as a float array (`promote_args_inexact`): integers become `float32`.
#[track_caller]
fn inexact(x: &Array) -> Array {
    if x.dtype().is_float() {
        x.clone()
    } else {
        jnp::astype(x, crate::dtype::to_inexact(x.dtype(), x.is_weak())).with_weak_type(x.is_weak())
    }
}

/// Resolves `axes` for `op` on `x`, refusing an axis out of range with a message that names
/// the operation and `x`'s shape.
#[track_caller]
pub(crate) fn reduction_axes(op: &str, x: &Array, axes: Axes) -> Vec<isize> {
    let rank = x.ndim() as isize;
    if let Axes::Some(list) = &axes {
        if let Some(bad) = list.iter().find(|&&a| a < -rank || a >= rank) {
            panic!(
                "{op}: axis {bad} is out of bounds for an array of shape {}",
                ShapeDisplay(x.shape())
            );
        }
    }
    axes.resolve(op, x.ndim()).into_iter().map(|a| a as isize).collect()
}

/// `exp(x) / sum(exp(x))` over `axes` (`jax.nn.softmax`; `-1` for the last axis), shifted by
/// the maximum, which differentiation treats as a constant, as JAX does. A slice whose
/// maximum is infinite gives NaN, as in JAX. Integers are promoted to `float32`.
///
/// Panics naming `softmax` and the shape when an axis is out of range.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let p = nn::softmax(&jnp::array(&[1000.0f32, 1000.0]), -1);
/// assert_eq!(p.to_vec::<f32>().unwrap(), vec![0.5, 0.5]);
/// ```
#[track_caller]
pub fn softmax(x: &Array, axes: impl Into<Axes>) -> Array {
    let axes = reduction_axes("softmax", x, axes.into());
    let x = inexact(x);
    let peak = stop_gradient(&jnp::max_axes(&x, axes.clone(), true));
    let unnormalized = jnp::exp(&(&x - &peak));
    jnp::divide(&unnormalized, jnp::sum_axes(&unnormalized, axes, true))
}

/// `log(softmax(x))` over `axes` (`jax.nn.log_softmax`), as `x - max - log(sum(exp(x - max)))`
/// with the maximum held constant under differentiation, so it stays finite where `softmax`
/// underflows.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let l = nn::log_softmax(&jnp::array(&[0.0f32, -200.0]), -1);
/// assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, -200.0]);
/// ```
#[track_caller]
pub fn log_softmax(x: &Array, axes: impl Into<Axes>) -> Array {
    let axes = reduction_axes("log_softmax", x, axes.into());
    let x = inexact(x);
    let shifted = &x - stop_gradient(&jnp::max_axes(&x, axes.clone(), true));
    let total = jnp::sum_axes(&jnp::exp(&shifted), axes, true);
    shifted - jnp::log(&total)
}

/// `log(sum(exp(x)))` over `axes` (`jax.nn.logsumexp`, the same function as
/// `jax.scipy.special.logsumexp` without weights), keeping the reduced axes as length 1 when
/// `keepdims`. A slice that is all `-inf` gives `-inf`; one holding `+inf` gives `+inf`.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let x = jnp::array(&[f32::NEG_INFINITY, f32::NEG_INFINITY]);
/// assert_eq!(nn::logsumexp(&x, -1, false).item::<f32>().unwrap(), f32::NEG_INFINITY);
/// ```
#[track_caller]
pub fn logsumexp(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    logsumexp_weighted("logsumexp", x, axes.into(), None, keepdims)
}

/// JAX's `logsumexp(a, axis, b, keepdims)`: `log |sum(b exp(a))|`, NaN where the weighted sum
/// is negative. The shift by the maximum is held constant under differentiation and replaced
/// by 0 where the maximum is not finite, so `-inf` slices give `-inf` rather than NaN.
#[track_caller]
pub(crate) fn logsumexp_weighted(
    op: &str,
    x: &Array,
    axes: Axes,
    b: Option<&Array>,
    keepdims: bool,
) -> Array {
    let (a, b) = match b {
        Some(b) => {
            let ops = crate::jnp::promote_inexact(&[x.clone(), b.clone()]);
            let a = jnp::where_(jnp::not_equal(&ops[1], 0), &ops[0], f64::NEG_INFINITY);
            (a, Some(ops[1].clone()))
        }
        None => (inexact(x), None),
    };
    let axes = reduction_axes(op, &a, axes);
    let peak = jnp::max_axes(&a, axes.clone(), true);
    let peak = stop_gradient(&jnp::where_(jnp::isfinite(&peak), &peak, 0.0));
    let mut terms = jnp::exp(&(&a - &peak));
    if let Some(b) = &b {
        terms *= b;
    }
    let total = jnp::sum_axes(&terms, axes.clone(), keepdims);
    let peak = if keepdims { peak } else { jnp::squeeze(&peak, axes) };
    let out = jnp::log(&jnp::abs(&total)) + peak;
    match b {
        Some(_) => jnp::where_(total.lt(0), f64::NAN, &out),
        None => out,
    }
}

/// One-hot encoding along a new last axis of `num_classes` (`jax.nn.one_hot` with its default
/// `float32`): 1 where the class equals the index; out-of-range indices give rows of zeros.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let y = nn::one_hot(&jnp::array(&[2, 0]), 3);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
/// ```
#[track_caller]
pub fn one_hot(x: &Array, num_classes: usize) -> Array {
    jnp::one_hot(x, num_classes)
}

/// `(x - mean) / sqrt(var + epsilon)` over `axes` (`jax.nn.standardize`; JAX's defaults are
/// the last axis and `epsilon = 1e-5`), with JAX's fast variance `mean(x^2) - mean(x)^2`,
/// clipped at 0.
///
/// ```
/// use rjax_runtime::{jnp, nn};
/// let z = nn::standardize(&jnp::array(&[1.0f32, 3.0]), -1, 0.0);
/// assert_eq!(z.to_vec::<f32>().unwrap(), vec![-1.0, 1.0]);
/// ```
#[track_caller]
pub fn standardize(x: &Array, axes: impl Into<Axes>, epsilon: f64) -> Array {
    let axes = reduction_axes("standardize", x, axes.into());
    let mean = jnp::mean_axes(x, axes.clone(), true);
    let variance = jnp::mean_axes(&jnp::square(x), axes, true) - jnp::square(&mean);
    let variance = jnp::maximum(&variance, 0);
    jnp::subtract(x, &mean) * jnp::rsqrt(&(variance + epsilon))
}
