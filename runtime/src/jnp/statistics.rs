//! Reductions that skip NaNs, and statistics, as in `jax.numpy`: [`nansum`], [`nanprod`],
//! [`nanmax`], [`nanmin`], [`nanmean`], [`nanvar`], [`nanstd`] (each with an `_axes` form),
//! [`average`], [`ptp`], [`cov`], [`corrcoef`] and [`histogram`].
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

/// The variance over all elements that are not NaN (`jnp.nanvar`); NaN where fewer than one
/// (`ddof + 1`) remain. Integers give `float32`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, f32::NAN, 3.0]);
/// assert_eq!(jnp::nanvar(&x).item::<f32>().unwrap(), 1.0);
/// ```
#[track_caller]
pub fn nanvar(x: &Array) -> Array {
    nanvar_ddof(x, Axes::All, false, 0)
}

/// [`nanvar`] over `axes`.
#[track_caller]
pub fn nanvar_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    nanvar_ddof(x, axes, keepdims, 0)
}

/// [`nanvar`] over `axes`, dividing by the count of non-NaN elements less `ddof`.
#[track_caller]
pub fn nanvar_ddof(x: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: usize) -> Array {
    let axes = axes.into();
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    let nans = isnan(&x);
    let mean = nanmean_axes(&x, axes.clone(), true);
    let centered = where_(&nans, 0.0, subtract(&x, &mean));
    let squares = if x.dtype().is_complex() {
        super::real(&multiply(&centered, super::conj(&centered)))
    } else {
        multiply(&centered, &centered)
    };
    let present = convert(&logical_not(&nans), squares.dtype(), false);
    let normalizer = subtract(sum_axes(&present, axes.clone(), keepdims), ddof as f64);
    let too_few = super::less_equal(&normalizer, 0.0);
    let total = where_(&too_few, f64::NAN, sum_axes(&squares, axes, keepdims));
    divide(total, where_(&too_few, 1.0, &normalizer))
}

/// The standard deviation over all elements that are not NaN (`jnp.nanstd`): the square root
/// of [`nanvar`].
#[track_caller]
pub fn nanstd(x: &Array) -> Array {
    sqrt(&nanvar(x))
}

/// [`nanstd`] over `axes`.
#[track_caller]
pub fn nanstd_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    sqrt(&nanvar_axes(x, axes, keepdims))
}

/// [`nanstd`] over `axes` with `ddof` (see [`nanvar_ddof`]).
#[track_caller]
pub fn nanstd_ddof(x: &Array, axes: impl Into<Axes>, keepdims: bool, ddof: usize) -> Array {
    sqrt(&nanvar_ddof(x, axes, keepdims, ddof))
}

/// How [`histogram`] forms its bins: a count of equal bins over a range, or the edges.
#[derive(Clone, Debug)]
pub enum Bins {
    /// This many equal bins.
    Count(usize),
    /// These edges, increasing (one more than the bins).
    Edges(Array),
}

impl From<usize> for Bins {
    fn from(n: usize) -> Bins {
        Bins::Count(n)
    }
}

impl From<&Array> for Bins {
    fn from(edges: &Array) -> Bins {
        Bins::Edges(edges.clone())
    }
}

/// The edges [`histogram`] uses (`jnp.histogram_bin_edges`): `bins + 1` evenly spaced edges
/// over `range` (default: the data's minimum and maximum, widened by 0.5 each way when they
/// are equal), or the given edges as floats.
#[track_caller]
pub fn histogram_bin_edges(a: &Array, bins: impl Into<Bins>, range: Option<(f64, f64)>) -> Array {
    let dtype = crate::dtype::to_inexact(a.dtype(), a.is_weak());
    let count = match bins.into() {
        Bins::Edges(edges) => {
            if edges.ndim() != 1 {
                panic!(
                    "histogram: bin edges must be 1-D, got shape {}",
                    ShapeDisplay(edges.shape())
                );
            }
            return convert(&edges, dtype, false);
        }
        Bins::Count(0) => panic!("histogram: needs at least one bin"),
        Bins::Count(n) => n,
    };
    let (lo, hi) = match range {
        Some((lo, hi)) => (
            convert(&Array::weak_scalar(lo), dtype, false),
            convert(&Array::weak_scalar(hi), dtype, false),
        ),
        None => (convert(&super::min(a), dtype, false), convert(&super::max(a), dtype, false)),
    };
    let flat = super::equal(&lo, &hi);
    let (lo, hi) =
        (where_(&flat, subtract(&lo, 0.5), &lo), where_(&flat, super::add(&hi, 0.5), &hi));
    // JAX's linspace: start * (1 - t) + stop * t for t = i / bins, then the stop itself.
    let t = divide(convert(&super::arange(count), dtype, false), count as f64);
    let inner = super::add(multiply(&lo, subtract(1.0, &t)), multiply(&hi, &t));
    super::concatenate(&[inner, hi.reshape([1])], 0)
}

/// A histogram of the elements of `a` (`jnp.histogram`): the (weighted) count in each bin and
/// the bins' edges. Bins are closed on the left, and the last one also on the right; elements
/// outside the edges are not counted. With `density`, the counts are divided by the total
/// and the bin widths, so that they integrate to one.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[0.0f32, 0.5, 1.0, 1.5, 2.0]);
/// let (counts, edges) = jnp::histogram(&x, 2, None, None, false);
/// assert_eq!(counts.to_vec::<f32>().unwrap(), vec![2.0, 3.0]);
/// assert_eq!(edges.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0]);
/// ```
#[track_caller]
pub fn histogram(
    a: &Array,
    bins: impl Into<Bins>,
    range: Option<(f64, f64)>,
    weights: Option<&Array>,
    density: bool,
) -> (Array, Array) {
    let (a, weights) = match weights {
        None => {
            let a = promote_inexact(std::slice::from_ref(a)).pop().expect("one operand");
            let ones = super::ones_like(&a);
            (a, ones)
        }
        Some(w) => {
            if w.shape() != a.shape() {
                panic!(
                    "histogram: weights of shape {} for data of shape {}",
                    ShapeDisplay(w.shape()),
                    ShapeDisplay(a.shape())
                );
            }
            let mut both = promote_inexact(&[a.clone(), w.clone()]);
            let w = both.pop().expect("two operands");
            (both.pop().expect("two operands"), w)
        }
    };
    let (a, weights) = (super::ravel(&a), super::ravel(&weights));
    let edges = histogram_bin_edges(&a, bins, range);
    let n_edges = edges.shape()[0];
    let last = edges.slice(&[crate::jnp::SliceElem::Index(-1)]);
    let index = super::searchsorted_side(&edges, &a, super::Side::Right);
    let index = where_(super::equal(&a, &last), (n_edges - 1) as i64, &index);
    let totals = super::zeros_dtype([n_edges], weights.dtype())
        .at([crate::jnp::SliceElem::from(&index)])
        .add(&weights);
    // Position 0 holds what lies below the first edge.
    let counts =
        totals.slice(&[crate::jnp::SliceElem::Range { start: Some(1), end: None, step: 1 }]);
    let counts = if density {
        let widths = super::diff(&edges, 1, 0);
        divide(divide(&counts, &widths), super::sum(&counts))
    } else {
        counts
    };
    (counts, edges)
}

/// The number of nonzero (or `true`) elements over `axes`, as `int32` (`jnp.count_nonzero`).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([[1.0f32, 0.0], [2.0, 3.0]]);
/// assert_eq!(jnp::count_nonzero(&x, 1, false).to_vec::<i32>().unwrap(), vec![1, 2]);
/// ```
#[track_caller]
pub fn count_nonzero(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    let nonzero = super::not_equal(x, 0);
    sum_axes(&convert(&nonzero, crate::dtype::default_int(), false), axes, keepdims)
}

/// Running sums along `axis` (`None`: over the flattened array) with NaNs counted as zero
/// (`jnp.nancumsum`).
#[track_caller]
pub fn nancumsum(x: &Array, axis: Option<isize>) -> Array {
    super::cumsum(&without_nans(x, 0.0), axis)
}

/// Running products along `axis` (`None`: over the flattened array) with NaNs counted as one
/// (`jnp.nancumprod`).
#[track_caller]
pub fn nancumprod(x: &Array, axis: Option<isize>) -> Array {
    super::cumprod(&without_nans(x, 1.0), axis)
}

/// The flat index of the largest element that is not NaN (`jnp.nanargmax`); -1 when all
/// are NaN.
#[track_caller]
pub fn nanargmax(x: &Array) -> Array {
    nan_arg_extreme(x, None, false, true)
}

/// [`nanargmax`] along `axis`.
#[track_caller]
pub fn nanargmax_axis(x: &Array, axis: isize, keepdims: bool) -> Array {
    nan_arg_extreme(x, Some(axis), keepdims, true)
}

/// The flat index of the smallest element that is not NaN (`jnp.nanargmin`); -1 when all
/// are NaN.
#[track_caller]
pub fn nanargmin(x: &Array) -> Array {
    nan_arg_extreme(x, None, false, false)
}

/// [`nanargmin`] along `axis`.
#[track_caller]
pub fn nanargmin_axis(x: &Array, axis: isize, keepdims: bool) -> Array {
    nan_arg_extreme(x, Some(axis), keepdims, false)
}

#[track_caller]
fn nan_arg_extreme(x: &Array, axis: Option<isize>, keepdims: bool, max: bool) -> Array {
    let arg = |x: &Array| match (axis, max) {
        (None, true) => super::argmax(x),
        (None, false) => super::argmin(x),
        (Some(a), true) => super::argmax_axis(x, a, keepdims),
        (Some(a), false) => super::argmin_axis(x, a, keepdims),
    };
    if !x.dtype().is_inexact() {
        return arg(x);
    }
    let nans = isnan(x);
    let fill = if max { f64::NEG_INFINITY } else { f64::INFINITY };
    let found = arg(&where_(&nans, fill, x));
    let all_nan = match axis {
        None => all_axes(&nans, Axes::All, false),
        Some(a) => all_axes(&nans, a, keepdims),
    };
    where_(&all_nan, -1, &found)
}

/// Running sums along `axis` (`jnp.cumulative_sum`; `axis` may be left out for 1-D arrays),
/// with a leading zero when `include_initial`.
#[track_caller]
pub fn cumulative_sum(x: &Array, axis: Option<isize>, include_initial: bool) -> Array {
    cumulative("cumulative_sum", x, axis, include_initial, super::cumsum, 0.0)
}

/// Running products along `axis` (`jnp.cumulative_prod`), with a leading one when
/// `include_initial`.
#[track_caller]
pub fn cumulative_prod(x: &Array, axis: Option<isize>, include_initial: bool) -> Array {
    cumulative("cumulative_prod", x, axis, include_initial, super::cumprod, 1.0)
}

#[track_caller]
fn cumulative(
    op: &str,
    x: &Array,
    axis: Option<isize>,
    include_initial: bool,
    scan: fn(&Array, Option<isize>) -> Array,
    initial: f64,
) -> Array {
    if x.ndim() == 0 {
        panic!("{op}: the input must have at least one axis, got a 0-d array");
    }
    let axis = match axis {
        Some(a) => crate::shape::normalize_axis(op, a, x.ndim()),
        None if x.ndim() == 1 => 0,
        None => panic!(
            "{op}: an array of shape {} needs an explicit axis (it is optional for 1-D arrays only)",
            ShapeDisplay(x.shape())
        ),
    };
    let out = scan(x, Some(axis as isize));
    if !include_initial {
        return out;
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = 1;
    let first = super::full_dtype(&shape, initial, out.dtype());
    super::concatenate(&[first, out], axis as isize)
}
