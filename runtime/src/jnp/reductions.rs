//! Reductions: sums, means, extrema, logical folds, cumulative scans and softmax.
//!
//! One convention for axes everywhere: `f(&x)` reduces every axis, `f_axes(&x, axes, keepdims)`
//! reduces the given axes (anything that converts into [`Axes`]: `1`, `-1`, `[0, 2]`,
//! [`Axes::All`]) and keeps them as length-1 axes when `keepdims` is true. Functions that work
//! along a single axis (`argmax_axis`, `cumsum`) take an `isize`. The same functions are
//! methods on [`Array`] (`x.sum()`, `x.sum_axes(1, true)`).
//!
//! dtypes follow JAX: sums and products of bools and of integers narrower than 32 bits are
//! computed in `int32` (`uint32` for unsigned); means, variances and standard deviations of
//! integers are `float32`; `f16`/`bf16` are accumulated in `f32` and rounded once.

use super::{add, divide, multiply, subtract};
use super::{convert, exp, isfinite, log, not_equal, promote_inexact, sqrt, square, where_};
use crate::dtype::DType;
use crate::primitives::{bind1, ArgOp, ArgReduce, CumOp, Cumulative, Reduce, ReduceOp};
use crate::shape::{normalize_axis, Axes, ShapeDisplay};
use crate::Array;

/// Binds a fold over resolved `axes`, keeping them as length-1 axes when `keepdims`.
#[track_caller]
fn fold(op: ReduceOp, x: &Array, axes: &[usize], keepdims: bool) -> Array {
    let out = bind1(&Reduce { op, axes: axes.to_vec() }, &[x]);
    if keepdims {
        out.with_shape(kept_shape(x.shape(), axes))
    } else {
        out
    }
}

/// `shape` with the extents of `axes` set to 1.
fn kept_shape(shape: &[usize], axes: &[usize]) -> Vec<usize> {
    shape.iter().enumerate().map(|(ax, &d)| if axes.contains(&ax) { 1 } else { d }).collect()
}

/// Number of elements folded into each output.
fn count(shape: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&ax| shape[ax]).product()
}

/// JAX sums and multiplies bools and narrow integers in the default integer width.
#[track_caller]
fn widen_int(x: &Array) -> Array {
    let dtype = match x.dtype() {
        DType::Bool | DType::I8 | DType::I16 => DType::I32,
        DType::U8 | DType::U16 => DType::U32,
        d => d,
    };
    convert(x, dtype, x.is_weak())
}

/// `x` in the float type statistics are computed in (`f32` for integers and half floats), and
/// the dtype of the result (`f32` for integers, the input's type for floats).
#[track_caller]
fn statistics_dtype(x: &Array) -> (Array, DType) {
    let out = crate::dtype::to_inexact(x.dtype(), x.is_weak());
    let compute = if matches!(out, DType::F16 | DType::BF16) { DType::F32 } else { out };
    (convert(x, compute, x.is_weak()), out)
}

/// Integers and bools become the default float; floats stay.
#[track_caller]
fn inexact(x: &Array) -> Array {
    promote_inexact(std::slice::from_ref(x)).pop().expect("one operand in, one out")
}

/// Sum of all elements.
///
/// Bools and integers narrower than 32 bits are summed as `int32` (`uint32` when unsigned);
/// integer sums wrap on overflow. `f32` sums are pairwise, accurate to a few ulps for any length,
/// and the same on every run.
///
/// ```
/// use rjax_runtime::{jnp, Array, DType};
/// let x = Array::from_shape_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(jnp::sum(&x).item::<f32>().unwrap(), 21.0);
/// assert_eq!(jnp::sum(&jnp::array(&[true, true, false])).dtype(), DType::I32);
/// ```
#[track_caller]
pub fn sum(x: &Array) -> Array {
    sum_axes(x, Axes::All, false)
}

/// Sum over `axes`, keeping them as length-1 axes when `keepdims`.
///
/// ```
/// use rjax_runtime::{jnp, Array};
/// let x = Array::from_shape_vec([2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(jnp::sum_axes(&x, 0, false).to_vec::<f32>().unwrap(), vec![5.0, 7.0, 9.0]);
/// assert_eq!(jnp::sum_axes(&x, -1, true).shape(), &[2, 1]);
/// assert_eq!(jnp::sum_axes(&x, [0, 1], false).item::<f32>().unwrap(), 21.0);
/// ```
#[track_caller]
pub fn sum_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("sum", x.ndim());
    fold(ReduceOp::Sum, &widen_int(x), &axes, keepdims)
}

/// Product of all elements (bools and narrow integers as `int32`/`uint32`, like [`sum`]).
///
/// ```
/// use rjax_runtime::jnp;
/// assert_eq!(jnp::prod(&jnp::array(&[2i8, 3, 4])).item::<i32>().unwrap(), 24);
/// ```
#[track_caller]
pub fn prod(x: &Array) -> Array {
    prod_axes(x, Axes::All, false)
}

/// Product over `axes`.
#[track_caller]
pub fn prod_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("prod", x.ndim());
    fold(ReduceOp::Prod, &widen_int(x), &axes, keepdims)
}

/// Largest element; NaN propagates.
///
/// Panics if the array is empty, as JAX raises: `max` has no identity, so there is no value
/// to give.
///
/// ```
/// use rjax_runtime::jnp;
/// assert_eq!(jnp::max(&jnp::array(&[1.0f32, 5.0, -2.0])).item::<f32>().unwrap(), 5.0);
/// assert!(jnp::max(&jnp::array(&[1.0f32, f32::NAN])).item::<f32>().unwrap().is_nan());
/// ```
#[track_caller]
pub fn max(x: &Array) -> Array {
    max_axes(x, Axes::All, false)
}

/// Largest element over `axes`.
///
/// Panics if any of `axes` has length 0. Reducing non-empty axes of an array that is empty
/// elsewhere is fine: `max_axes` of shape `(0, 3)` over axis 1 has shape `(0,)`.
#[track_caller]
pub fn max_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("max", x.ndim());
    check_identityless("max", x.shape(), &axes);
    fold(ReduceOp::Max, x, &axes, keepdims)
}

/// Smallest element; NaN propagates. Panics if the array is empty, like [`max`].
#[track_caller]
pub fn min(x: &Array) -> Array {
    min_axes(x, Axes::All, false)
}

/// Smallest element over `axes`; panics if any of them has length 0, like [`max_axes`].
#[track_caller]
pub fn min_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("min", x.ndim());
    check_identityless("min", x.shape(), &axes);
    fold(ReduceOp::Min, x, &axes, keepdims)
}

/// JAX's check for reductions without an identity: an output element folded from no inputs
/// would have no value, so reducing an axis of length 0 is an error. The check is on shapes,
/// which traced arrays know too, so `#[jit]` code fails the same way. (The `Reduce` primitive
/// itself gives the fold's start value there, which `softmax` and `logsumexp` rely on.)
#[track_caller]
fn check_identityless(name: &str, shape: &[usize], axes: &[usize]) {
    if axes.iter().any(|&ax| shape[ax] == 0) {
        // Axes print as a tuple, like shapes.
        panic!(
            "{name}: zero-size array to reduction operation {name} which has no identity \
             (shape {}, axes {})",
            ShapeDisplay(shape),
            ShapeDisplay(axes)
        );
    }
}

/// Arithmetic mean of all elements. Integers give `float32`; `f16`/`bf16` are summed in `f32`
/// and keep their type. The mean of an empty array is NaN.
///
/// ```
/// use rjax_runtime::{jnp, DType};
/// let m = jnp::mean(&jnp::array(&[1i32, 2, 3, 4]));
/// assert_eq!((m.dtype(), m.item::<f32>().unwrap()), (DType::F32, 2.5));
/// ```
#[track_caller]
pub fn mean(x: &Array) -> Array {
    mean_axes(x, Axes::All, false)
}

/// Mean over `axes`.
#[track_caller]
pub fn mean_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("mean", x.ndim());
    let (xc, out) = statistics_dtype(x);
    let total = fold(ReduceOp::Sum, &xc, &axes, keepdims);
    convert(&divide(&total, count(x.shape(), &axes) as f64), out, x.is_weak())
}

/// Variance of all elements (the mean squared deviation from the mean, dividing by `n`).
/// Use [`var_ddof`] for the sample variance (`ddof = 1`).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, 2.0, 3.0, 4.0]);
/// assert_eq!(jnp::var(&x).item::<f32>().unwrap(), 1.25);
/// ```
#[track_caller]
pub fn var(x: &Array) -> Array {
    var_ddof(x, Axes::All, false, 0)
}

/// Variance over `axes`, dividing by `n`.
#[track_caller]
pub fn var_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    var_ddof(x, axes, keepdims, 0)
}

/// Variance over `axes` dividing by `n - ddof` (NumPy's `ddof`, "delta degrees of freedom":
/// `ddof = 1` gives the unbiased sample variance). When `ddof >= n` the divisor is 0 and the
/// result is NaN or infinite, as in NumPy.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, 2.0, 3.0, 4.0]);
/// let sample = jnp::var_ddof(&x, 0, false, 1).item::<f32>().unwrap();
/// assert!((sample - 5.0 / 3.0).abs() < 1e-6);
/// ```
#[track_caller]
pub fn var_ddof(x: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: usize) -> Array {
    let (v, out) = variance("var", x, axes.into(), keepdims, ddof);
    convert(&v, out, x.is_weak())
}

/// Standard deviation of all elements (the square root of [`var`]).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[2.0f32, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
/// assert_eq!(jnp::std(&x).item::<f32>().unwrap(), 2.0);
/// ```
#[track_caller]
pub fn std(x: &Array) -> Array {
    std_ddof(x, Axes::All, false, 0)
}

/// Standard deviation over `axes`, dividing by `n`.
#[track_caller]
pub fn std_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    std_ddof(x, axes, keepdims, 0)
}

/// Standard deviation over `axes`, from the variance dividing by `n - ddof` (see [`var_ddof`]).
#[track_caller]
pub fn std_ddof(x: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: usize) -> Array {
    let (v, out) = variance("std", x, axes.into(), keepdims, ddof);
    convert(&sqrt(&v), out, x.is_weak())
}

/// The variance in the computation dtype (two passes: the mean, then squared deviations, which
/// is accurate where `E[x^2] - E[x]^2` cancels), and the dtype of the result.
#[track_caller]
fn variance(name: &str, x: &Array, axes: Axes, keepdims: bool, ddof: usize) -> (Array, DType) {
    let axes = axes.resolve(name, x.ndim());
    let (xc, out) = statistics_dtype(x);
    let n = count(x.shape(), &axes);
    let mean = divide(fold(ReduceOp::Sum, &xc, &axes, true), n as f64);
    let centered = subtract(&xc, &mean);
    // Complex deviations count by their squared magnitude, and the variance is real (as JAX).
    let deviations = if centered.dtype().is_complex() {
        super::real(&multiply(&centered, super::conj(&centered)))
    } else {
        square(&centered)
    };
    let total = fold(ReduceOp::Sum, &deviations, &axes, keepdims);
    (divide(&total, n.saturating_sub(ddof) as f64), out.to_real())
}

/// Index of the largest element of the flattened array, as a 0-d `int32` array: the first one
/// among ties; a NaN counts as the largest (the first NaN wins).
///
/// Panics if the array is empty.
///
/// ```
/// use rjax_runtime::{jnp, Array};
/// let x = Array::from_shape_vec([2, 2], vec![1.0f32, 7.0, 7.0, 3.0]);
/// assert_eq!(jnp::argmax(&x).item::<i32>().unwrap(), 1);
/// ```
#[track_caller]
pub fn argmax(x: &Array) -> Array {
    arg_flat(ArgOp::Max, x)
}

/// Indices of the largest elements along `axis` (negative counts from the end), with
/// `keepdims` keeping the axis with length 1.
///
/// ```
/// use rjax_runtime::{jnp, Array};
/// let x = Array::from_shape_vec([2, 3], vec![1.0f32, 9.0, 3.0, 8.0, 2.0, 8.0]);
/// assert_eq!(jnp::argmax_axis(&x, -1, false).to_vec::<i32>().unwrap(), vec![1, 0]);
/// ```
#[track_caller]
pub fn argmax_axis(x: &Array, axis: isize, keepdims: bool) -> Array {
    arg_along(ArgOp::Max, x, axis, keepdims)
}

/// Index of the smallest element of the flattened array (first among ties; NaN counts as the
/// smallest). Panics if the array is empty.
#[track_caller]
pub fn argmin(x: &Array) -> Array {
    arg_flat(ArgOp::Min, x)
}

/// Indices of the smallest elements along `axis`.
#[track_caller]
pub fn argmin_axis(x: &Array, axis: isize, keepdims: bool) -> Array {
    arg_along(ArgOp::Min, x, axis, keepdims)
}

fn arg_name(op: ArgOp) -> &'static str {
    match op {
        ArgOp::Max => "argmax",
        ArgOp::Min => "argmin",
    }
}

#[track_caller]
fn arg_flat(op: ArgOp, x: &Array) -> Array {
    if x.size() == 0 {
        let name = arg_name(op);
        panic!(
            "{name}: attempt to get {name} of an empty array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    bind1(&ArgReduce { op, axis: 0 }, &[&x.with_shape(vec![x.size()])])
}

#[track_caller]
fn arg_along(op: ArgOp, x: &Array, axis: isize, keepdims: bool) -> Array {
    let axis = normalize_axis(arg_name(op), axis, x.ndim());
    let out = bind1(&ArgReduce { op, axis }, &[x]);
    if keepdims {
        out.with_shape(kept_shape(x.shape(), &[axis]))
    } else {
        out
    }
}

/// `log(sum(exp(x)))` over all elements, computed without overflow by shifting by the maximum.
/// Integers are promoted to `float32`. All `-inf` (or an empty array) gives `-inf`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1000.0f32, 1000.0]);
/// let want = 1000.0 + 2f32.ln();
/// assert!((jnp::logsumexp(&x).item::<f32>().unwrap() - want).abs() < 1e-3);
/// ```
#[track_caller]
pub fn logsumexp(x: &Array) -> Array {
    logsumexp_axes(x, Axes::All, false)
}

/// `log(sum(exp(x)))` over `axes`.
#[track_caller]
pub fn logsumexp_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("logsumexp", x.ndim());
    let x = inexact(x);
    let peak = fold(ReduceOp::Max, &x, &axes, true);
    // An infinite (or empty) slice would turn the shift into inf - inf: shift by 0 instead.
    let shift = where_(isfinite(&peak), &peak, 0.0);
    let total = fold(ReduceOp::Sum, &exp(&subtract(&x, &shift)), &axes, keepdims);
    let shift = if keepdims { shift } else { shift.with_shape(total.shape().to_vec()) };
    add(log(&total), &shift)
}

/// Whether every element is true (nonzero); `true` for an empty array.
///
/// ```
/// use rjax_runtime::jnp;
/// assert!(!jnp::all(&jnp::array(&[1.0f32, 0.0])).item::<bool>().unwrap());
/// assert!(jnp::any(&jnp::array(&[0i32, 3])).item::<bool>().unwrap());
/// ```
#[track_caller]
pub fn all(x: &Array) -> Array {
    all_axes(x, Axes::All, false)
}

/// Whether every element over `axes` is true (nonzero).
#[track_caller]
pub fn all_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("all", x.ndim());
    fold(ReduceOp::And, &truth(x), &axes, keepdims)
}

/// Whether any element is true (nonzero); `false` for an empty array.
#[track_caller]
pub fn any(x: &Array) -> Array {
    any_axes(x, Axes::All, false)
}

/// Whether any element over `axes` is true (nonzero).
#[track_caller]
pub fn any_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into().resolve("any", x.ndim());
    fold(ReduceOp::Or, &truth(x), &axes, keepdims)
}

/// `x != 0` for numbers (NaN is true, as in NumPy); bools as they are.
#[track_caller]
fn truth(x: &Array) -> Array {
    if x.dtype().is_bool() {
        x.clone()
    } else {
        not_equal(x, 0)
    }
}

/// Running sum along `axis`, or over the flattened array when `axis` is `None` (as NumPy and
/// JAX do). Bools and narrow integers are summed as `int32`/`uint32`, like [`sum`].
///
/// ```
/// use rjax_runtime::{jnp, Array};
/// let x = Array::from_shape_vec([2, 2], vec![1i32, 2, 3, 4]);
/// assert_eq!(jnp::cumsum(&x, None).to_vec::<i32>().unwrap(), vec![1, 3, 6, 10]);
/// assert_eq!(jnp::cumsum(&x, Some(0)).to_vec::<i32>().unwrap(), vec![1, 2, 4, 6]);
/// ```
#[track_caller]
pub fn cumsum(x: &Array, axis: Option<isize>) -> Array {
    scan_along(CumOp::Sum, "cumsum", &widen_int(x), axis)
}

/// Running product along `axis` (`None`: over the flattened array).
#[track_caller]
pub fn cumprod(x: &Array, axis: Option<isize>) -> Array {
    scan_along(CumOp::Prod, "cumprod", &widen_int(x), axis)
}

/// Running maximum along `axis` (`None`: over the flattened array), like `lax.cummax` or
/// NumPy's `maximum.accumulate`; NaN propagates. The dtype is kept.
#[track_caller]
pub fn cummax(x: &Array, axis: Option<isize>) -> Array {
    scan_along(CumOp::Max, "cummax", x, axis)
}

/// Running minimum along `axis` (`None`: over the flattened array).
#[track_caller]
pub fn cummin(x: &Array, axis: Option<isize>) -> Array {
    scan_along(CumOp::Min, "cummin", x, axis)
}

#[track_caller]
fn scan_along(op: CumOp, name: &str, x: &Array, axis: Option<isize>) -> Array {
    let (x, axis) = match axis {
        None => (x.with_shape(vec![x.size()]), 0),
        Some(a) => (x.clone(), normalize_axis(name, a, x.ndim())),
    };
    bind1(&Cumulative { op, axis, reverse: false }, &[&x])
}

/// `exp(x) / sum(exp(x))` over `axes` (`jax.nn.softmax`; pass `-1` for the usual last axis),
/// computed stably by subtracting the maximum first. Integers are promoted to `float32`. As in
/// JAX, a slice whose maximum is infinite gives NaN.
///
/// ```
/// use rjax_runtime::jnp;
/// let p = jnp::softmax(&jnp::array(&[1000.0f32, 1000.0]), -1);
/// assert_eq!(p.to_vec::<f32>().unwrap(), vec![0.5, 0.5]);
/// ```
#[track_caller]
pub fn softmax(x: &Array, axes: impl Into<Axes>) -> Array {
    let axes = axes.into().resolve("softmax", x.ndim());
    let x = inexact(x);
    let e = exp(&subtract(&x, fold(ReduceOp::Max, &x, &axes, true)));
    divide(&e, fold(ReduceOp::Sum, &e, &axes, true))
}

/// `log(softmax(x))` over `axes` (`jax.nn.log_softmax`), computed as `x - max - log(sum(exp(x -
/// max)))` so large and very negative inputs stay finite.
///
/// ```
/// use rjax_runtime::jnp;
/// let l = jnp::log_softmax(&jnp::array(&[0.0f32, -200.0]), -1);
/// assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, -200.0]);
/// ```
#[track_caller]
pub fn log_softmax(x: &Array, axes: impl Into<Axes>) -> Array {
    let axes = axes.into().resolve("log_softmax", x.ndim());
    let x = inexact(x);
    let shifted = subtract(&x, fold(ReduceOp::Max, &x, &axes, true));
    let total = fold(ReduceOp::Sum, &exp(&shifted), &axes, true);
    subtract(&shifted, log(&total))
}

macro_rules! reduction_methods {
    ($($all:ident, $axes:ident;)*) => {$(
        #[doc = concat!("[`jnp::", stringify!($all), "`](crate::jnp::", stringify!($all), ") as a method: reduces every axis.")]
        #[track_caller]
        pub fn $all(&self) -> Array { super::$all(self) }

        #[doc = concat!("[`jnp::", stringify!($axes), "`](crate::jnp::", stringify!($axes), ") as a method.")]
        #[track_caller]
        pub fn $axes(&self, axes: impl Into<Axes>, keepdims: bool) -> Array {
            super::$axes(self, axes, keepdims)
        }
    )*};
}

impl Array {
    reduction_methods! {
        sum, sum_axes;
        prod, prod_axes;
        max, max_axes;
        min, min_axes;
        mean, mean_axes;
        var, var_axes;
        std, std_axes;
        all, all_axes;
        any, any_axes;
    }

    /// [`jnp::argmax`](crate::jnp::argmax) as a method: the index into the flattened array.
    #[track_caller]
    pub fn argmax(&self) -> Array {
        argmax(self)
    }

    /// [`jnp::argmax_axis`](crate::jnp::argmax_axis) as a method.
    #[track_caller]
    pub fn argmax_axis(&self, axis: isize, keepdims: bool) -> Array {
        argmax_axis(self, axis, keepdims)
    }

    /// [`jnp::argmin`](crate::jnp::argmin) as a method.
    #[track_caller]
    pub fn argmin(&self) -> Array {
        argmin(self)
    }

    /// [`jnp::argmin_axis`](crate::jnp::argmin_axis) as a method.
    #[track_caller]
    pub fn argmin_axis(&self, axis: isize, keepdims: bool) -> Array {
        argmin_axis(self, axis, keepdims)
    }

    /// [`jnp::cumsum`](crate::jnp::cumsum) as a method.
    #[track_caller]
    pub fn cumsum(&self, axis: Option<isize>) -> Array {
        cumsum(self, axis)
    }

    /// [`jnp::cumprod`](crate::jnp::cumprod) as a method.
    #[track_caller]
    pub fn cumprod(&self, axis: Option<isize>) -> Array {
        cumprod(self, axis)
    }
}
