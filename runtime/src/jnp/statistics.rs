//! Reductions that skip NaNs, and statistics, as in `jax.numpy`: [`nansum`], [`nanprod`],
//! [`nanmax`], [`nanmin`], [`nanmean`] (each with an `_axes` form), [`average`], [`ptp`],
//! [`cov`] and [`corrcoef`].
//!
//! Each is made of `where`, reductions and products, so it runs under every transform; the
//! gradient of a NaN-skipping reduction is zero at the skipped elements, as in JAX.

use super::{
    all_axes, clip, convert, diag, divide, isnan, logical_not, matmul, max_axes, mean_axes,
    min_axes, moveaxis, multiply, prod_axes, promote_inexact, sqrt, subtract, sum_axes, where_,
};
use crate::shape::{Axes, ShapeDisplay};
use crate::Array;

/// `x` with NaNs replaced by `fill` (integers and bools have none).
fn without_nans(x: &Array, fill: f64) -> Array {
    if x.dtype().is_inexact() {
        where_(isnan(x), fill, x)
    } else {
        x.clone()
    }
}

/// The sum over all elements, NaNs counting as zero (`jnp.nansum`).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, f32::NAN, 2.0]);
/// assert_eq!(jnp::nansum(&x).item::<f32>().unwrap(), 3.0);
/// ```
#[track_caller]
pub fn nansum(x: &Array) -> Array {
    nansum_axes(x, Axes::All, false)
}

/// [`nansum`] over `axes`.
#[track_caller]
pub fn nansum_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    sum_axes(&without_nans(x, 0.0), axes, keepdims)
}

/// The product over all elements, NaNs counting as one (`jnp.nanprod`).
#[track_caller]
pub fn nanprod(x: &Array) -> Array {
    nanprod_axes(x, Axes::All, false)
}

/// [`nanprod`] over `axes`.
#[track_caller]
pub fn nanprod_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    prod_axes(&without_nans(x, 1.0), axes, keepdims)
}

/// The maximum over all elements ignoring NaNs; NaN where every element is NaN
/// (`jnp.nanmax`).
#[track_caller]
pub fn nanmax(x: &Array) -> Array {
    nanmax_axes(x, Axes::All, false)
}

/// [`nanmax`] over `axes`.
#[track_caller]
pub fn nanmax_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    nan_extreme(x, axes.into(), keepdims, true)
}

/// The minimum over all elements ignoring NaNs; NaN where every element is NaN
/// (`jnp.nanmin`).
#[track_caller]
pub fn nanmin(x: &Array) -> Array {
    nanmin_axes(x, Axes::All, false)
}

/// [`nanmin`] over `axes`.
#[track_caller]
pub fn nanmin_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    nan_extreme(x, axes.into(), keepdims, false)
}

#[track_caller]
fn nan_extreme(x: &Array, axes: Axes, keepdims: bool, max: bool) -> Array {
    let fold = |x: &Array, axes: Axes| {
        if max {
            max_axes(x, axes, keepdims)
        } else {
            min_axes(x, axes, keepdims)
        }
    };
    if !x.dtype().is_inexact() {
        return fold(x, axes);
    }
    let fill = if max { f64::NEG_INFINITY } else { f64::INFINITY };
    let nans = isnan(x);
    let extreme = fold(&where_(&nans, fill, x), axes.clone());
    where_(all_axes(&nans, axes, keepdims), f64::NAN, &extreme)
}

/// The mean over all elements that are not NaN; NaN if there are none (`jnp.nanmean`).
/// Integers give `float32`.
#[track_caller]
pub fn nanmean(x: &Array) -> Array {
    nanmean_axes(x, Axes::All, false)
}

/// [`nanmean`] over `axes`.
#[track_caller]
pub fn nanmean_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into();
    if !x.dtype().is_inexact() {
        return mean_axes(x, axes, keepdims);
    }
    let present = convert(&logical_not(&isnan(x)), x.dtype(), false);
    let count = sum_axes(&present, axes.clone(), keepdims);
    divide(nansum_axes(x, axes, keepdims), &count)
}

/// The mean over `axes`, each element weighted by `weights` (`jnp.average`): `weights` has
/// `x`'s shape, or is 1-D along the single axis averaged over; `None` gives [`mean_axes`].
/// Integers give `float32`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, 2.0, 4.0]);
/// let w = jnp::array(&[1.0f32, 1.0, 2.0]);
/// assert_eq!(jnp::average(&x, 0, Some(&w), false).item::<f32>().unwrap(), 2.75);
/// ```
#[track_caller]
pub fn average(x: &Array, axes: impl Into<Axes>, weights: Option<&Array>, keepdims: bool) -> Array {
    let axes = axes.into();
    let Some(weights) = weights else {
        return mean_axes(x, axes, keepdims);
    };
    let ops = promote_inexact(&[x.clone(), weights.clone()]);
    let (x, mut w) = (&ops[0], ops[1].clone());
    if w.shape() != x.shape() {
        w = weights_along_axis(x, &w, &axes);
    }
    let total = sum_axes(&multiply(x, &w), axes.clone(), keepdims);
    divide(&total, sum_axes(&w, axes, keepdims))
}

/// 1-D `weights` shaped to broadcast along the one axis of `x` that `axes` names.
#[track_caller]
fn weights_along_axis(x: &Array, weights: &Array, axes: &Axes) -> Array {
    let resolved = axes.clone().resolve("average", x.ndim());
    let fits =
        resolved.len() == 1 && weights.ndim() == 1 && weights.shape()[0] == x.shape()[resolved[0]];
    if !fits {
        panic!(
            "average: weights of shape {} must have the shape of the array, {}, or be 1-D \
             along the one axis averaged over (axes {})",
            ShapeDisplay(weights.shape()),
            ShapeDisplay(x.shape()),
            ShapeDisplay(&resolved)
        );
    }
    let mut shape = vec![1; x.ndim()];
    shape[resolved[0]] = weights.shape()[0];
    weights.reshape(shape.as_slice())
}

/// The range, maximum minus minimum, over `axes` (`jnp.ptp`, "peak to peak").
#[track_caller]
pub fn ptp(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let axes = axes.into();
    subtract(max_axes(x, axes.clone(), keepdims), min_axes(x, axes, keepdims))
}

/// The covariance matrix of the variables in `m` (`jnp.cov(m, rowvar=rowvar)`): each row is
/// a variable and each column an observation (the other way round when `rowvar` is false),
/// normalized by `N - 1`. A single variable gives a 0-d array.
///
/// ```
/// use rjax_runtime::jnp;
/// let m = jnp::array(&[[0.0f32, 1.0, 2.0], [2.0, 1.0, 0.0]]);
/// assert_eq!(jnp::cov(&m, true).to_vec::<f32>().unwrap(), vec![1.0, -1.0, -1.0, 1.0]);
/// ```
#[track_caller]
pub fn cov(m: &Array, rowvar: bool) -> Array {
    if m.ndim() > 2 {
        panic!("cov: m has more than 2 axes, shape {}", ShapeDisplay(m.shape()));
    }
    let x = super::atleast_2d(&promote_inexact(std::slice::from_ref(m)).remove(0));
    let x = if !rowvar && x.shape()[0] != 1 { moveaxis(&x, 0, 1) } else { x };
    let observations = x.shape()[1];
    let centered = subtract(&x, mean_axes(&x, 1, true));
    let products = matmul(&centered, &moveaxis(&centered, 0, 1));
    let c = divide(&products, observations as f64 - 1.0);
    if c.shape() == [1, 1] {
        c.reshape([0usize; 0])
    } else {
        c
    }
}

/// Pearson correlation coefficients of the variables in `x` (`jnp.corrcoef`): [`cov`]
/// normalized by the variables' standard deviations and clipped to `[-1, 1]`.
#[track_caller]
pub fn corrcoef(x: &Array, rowvar: bool) -> Array {
    let c = cov(x, rowvar);
    if c.ndim() == 0 {
        return divide(&c, &c);
    }
    let stddev = sqrt(&diag(&c, 0));
    let n = stddev.shape()[0];
    let c = divide(divide(&c, stddev.reshape([n, 1])), stddev.reshape([1, n]));
    clip(&c, -1.0, 1.0)
}
