//! Sorting, searching and order statistics, as in `jax.numpy`: [`sort`], [`argsort`],
//! [`searchsorted`], [`diff`], [`unique_size`], [`median`], [`quantile`] and [`percentile`],
//! and their NaN-skipping forms [`nanmedian`], [`nanquantile`] and [`nanpercentile`].
//!
//! Everything orders floats as JAX does: NaNs after `+inf`, `-0.0` equal to `0.0`, and sorts
//! are stable (equal elements keep their order, also under `descending`). Each function is
//! made of primitives (`sort`, `searchsorted`, gathers and arithmetic), so it runs eagerly,
//! under `#[jit]` and `#[vmap]`, and differentiates like JAX's: the gradient of a sort sends
//! each output's cotangent to the element that landed there.

use super::{
    any_axes, astype, ceil, clip, concatenate, convert, cumsum, divide, floor, isnan, logical_and,
    logical_not, moveaxis, multiply, not_equal, promote_inexact, ravel, reshape, subtract, where_,
    ArrayLike,
};
use crate::dtype::DType;
use crate::primitives::sort::index_dtype;
use crate::primitives::{bind, bind1, Gather, IndexMode, Iota, Rev, SearchSorted, Sort};
use crate::shape::{Axes, ShapeDisplay};
use crate::Array;

pub use crate::primitives::Side;

/// `axis` of an array of `shape` as a non-negative axis, or a panic naming `op` and the shape.
#[track_caller]
fn axis_of(op: &str, axis: isize, shape: &[usize]) -> usize {
    let rank = shape.len() as isize;
    if axis < -rank || axis >= rank {
        panic!("{op}: axis {axis} is out of bounds for an array of shape {}", ShapeDisplay(shape));
    }
    if axis < 0 {
        (axis + rank) as usize
    } else {
        axis as usize
    }
}

/// The array to work along and the axis: `None` flattens (JAX's `axis=None`).
#[track_caller]
fn along(op: &str, x: &Array, axis: Option<isize>) -> (Array, usize) {
    match axis {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), axis_of(op, a, x.shape())),
    }
}

/// `x` reversed along `axis`.
#[track_caller]
fn rev(x: &Array, axis: usize) -> Array {
    bind1(&Rev { dimensions: vec![axis] }, &[x])
}

/// Positions `0, 1, ..` along `axis` of an array of `shape`, in the index dtype.
#[track_caller]
fn positions(shape: &[usize], axis: usize) -> Array {
    let dtype = index_dtype(shape[axis]);
    bind1(&Iota { dtype, shape: shape.to_vec(), dimension: axis }, &[])
}

/// A sorted copy of `x` along its last axis (`jnp.sort`); NaNs go last, equal elements keep
/// their order.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([[3.0f32, f32::NAN, 1.0], [2.0, -0.0, 0.0]]);
/// let s = jnp::sort(&x).to_vec::<f32>().unwrap();
/// assert_eq!(&s[..2], &[1.0, 3.0]);
/// assert!(s[2].is_nan());
/// ```
#[track_caller]
pub fn sort(x: &Array) -> Array {
    sort_axis(x, Some(-1), false)
}

/// [`sort`] along `axis` (`None`: the flattened array), in descending order when
/// `descending` (JAX's `jnp.sort(x, axis, descending=...)`: the ascending sort reversed, so
/// NaNs come first).
#[track_caller]
pub fn sort_axis(x: &Array, axis: Option<isize>, descending: bool) -> Array {
    let (x, axis) = along("sort", x, axis);
    let sorted = bind1(&Sort { dimension: axis, num_keys: 1 }, &[&x]);
    if descending {
        rev(&sorted, axis)
    } else {
        sorted
    }
}

/// The indices that sort `x` along its last axis (`jnp.argsort`), stably, as `int32`.
///
/// ```
/// use rjax_runtime::jnp;
/// let idx = jnp::argsort(&jnp::array([1, 3, 5, 4, 2, 1]));
/// assert_eq!(idx.to_vec::<i32>().unwrap(), vec![0, 5, 4, 1, 3, 2]);
/// ```
#[track_caller]
pub fn argsort(x: &Array) -> Array {
    argsort_axis(x, Some(-1), false)
}

/// [`argsort`] along `axis` (`None`: the flattened array); `descending` orders largest first
/// with equal elements still in index order, as JAX's stable descending argsort does.
#[track_caller]
pub fn argsort_axis(x: &Array, axis: Option<isize>, descending: bool) -> Array {
    let (x, axis) = along("argsort", x, axis);
    let iota = positions(x.shape(), axis);
    // Reversing both before the ascending sort and the result after it keeps equal
    // elements in index order (JAX's construction).
    let (keys, iota) = if descending { (rev(&x, axis), rev(&iota, axis)) } else { (x, iota) };
    let sort = Sort { dimension: axis, num_keys: 1 };
    let idx = bind(&sort, &[&keys, &iota]).pop().expect("sort returns its operands");
    if descending {
        rev(&idx, axis)
    } else {
        idx
    }
}

/// Where each element of `v` would be inserted into the sorted 1-D array `a` to keep it
/// sorted, before equal elements (`jnp.searchsorted(a, v)`); `int32`, of `v`'s shape.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::array([1.0f32, 2.0, 2.0, 3.0]);
/// let i = jnp::searchsorted(&a, &jnp::array([2.0f32, 0.5, 9.0]));
/// assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, 0, 4]);
/// let r = jnp::searchsorted_side(&a, 2.0, jnp::Side::Right);
/// assert_eq!(r.item::<i32>().unwrap(), 3);
/// ```
#[track_caller]
pub fn searchsorted(a: &Array, v: impl ArrayLike) -> Array {
    searchsorted_side(a, v, Side::Left)
}

/// [`searchsorted`] with JAX's `side`: [`Side::Right`] inserts after equal elements. `a` and
/// `v` are promoted to a common dtype first; NaNs count as larger than every number.
#[track_caller]
pub fn searchsorted_side(a: &Array, v: impl ArrayLike, side: Side) -> Array {
    if a.ndim() != 1 {
        panic!("searchsorted: a must be 1-D, got shape {}", ShapeDisplay(a.shape()));
    }
    let p = super::promote_all(&[a.clone(), v.into_array()]);
    bind1(&SearchSorted { side, batch_dims: 0 }, &[&p[0], &p[1]])
}

/// The `n`-th discrete difference along `axis` (`jnp.diff(x, n, axis)`): `x[1:] - x[:-1]`
/// applied `n` times; bools give `x[1:] != x[:-1]`. `n = 0` returns `x`.
///
/// ```
/// use rjax_runtime::jnp;
/// let d = jnp::diff(&jnp::array([1, 4, 9, 16]), 2, -1);
/// assert_eq!(d.to_vec::<i32>().unwrap(), vec![2, 2]);
/// ```
#[track_caller]
pub fn diff(x: &Array, n: usize, axis: isize) -> Array {
    if n == 0 {
        return x.clone();
    }
    if x.ndim() == 0 {
        panic!("diff: requires an array with at least one axis, got shape ()");
    }
    let axis = axis_of("diff", axis, x.shape());
    let mut out = x.clone();
    for _ in 0..n {
        let len = out.shape()[axis];
        // An empty axis stays empty: further differences change nothing (and a huge `n`
        // must not loop).
        if len == 0 {
            break;
        }
        let later = super::slice_axis(&out, axis, len.min(1), len);
        let earlier = super::slice_axis(&out, axis, 0, len.saturating_sub(1));
        out = if out.dtype() == DType::Bool {
            not_equal(&later, &earlier)
        } else {
            subtract(&later, &earlier)
        };
    }
    out
}

/// For sorted 1-D `aux`, whether each element starts a run of equal ones (NaNs equal each
/// other, as with JAX's `equal_nan=True`).
#[track_caller]
fn run_starts(aux: &Array) -> Array {
    let n = aux.shape()[0];
    let (later, earlier) = (super::slice_axis(aux, 0, 1, n), super::slice_axis(aux, 0, 0, n - 1));
    let mut differs = not_equal(&later, &earlier);
    if aux.dtype().is_float() {
        let both_nan = logical_and(isnan(&later), isnan(&earlier));
        differs = logical_and(&differs, logical_not(&both_nan));
    }
    concatenate(&[Array::from(true).reshape([1]), differs], 0)
}

/// The sorted unique elements of the flattened `x` (`jnp.unique(x)`), only for concrete
/// arrays: their number depends on the values. In traced code use [`unique_size`].
///
/// ```
/// use rjax_runtime::jnp;
/// let u = jnp::unique(&jnp::array([3, 1, 3, 2, 1]));
/// assert_eq!(u.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
/// ```
#[track_caller]
pub fn unique(x: &Array) -> Array {
    if x.is_traced() {
        panic!(
            "unique: the number of unique elements depends on the values of the array, which \
             are not known while tracing (under #[jit], grad or vmap); give a static size with \
             jnp::unique_size(&x, size) or jnp::unique_size_fill(&x, size, fill_value)"
        );
    }
    if x.size() == 0 {
        return ravel(x);
    }
    let aux = bind1(&Sort { dimension: 0, num_keys: 1 }, &[&ravel(x)]);
    let count = super::sum(&super::convert(&run_starts(&aux), DType::I64, false));
    let count =
        super::convert(&count, DType::I64, false).item::<i64>().expect("a concrete count") as usize;
    unique_impl(x, count, None)
}

/// The first `size` sorted unique elements of the flattened `x`, as JAX's
/// `jnp.unique(x, size=size)`: with fewer unique elements the rest repeat the smallest one.
/// `size` is static, so this works in traced code.
///
/// ```
/// use rjax_runtime::jnp;
/// let u = jnp::unique_size(&jnp::array([3.0f32, 1.0, 3.0]), 4);
/// assert_eq!(u.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 1.0, 1.0]);
/// let f = jnp::unique_size_fill(&jnp::array([3.0f32, 1.0, 3.0]), 4, -1.0);
/// assert_eq!(f.to_vec::<f32>().unwrap(), vec![1.0, 3.0, -1.0, -1.0]);
/// ```
#[track_caller]
pub fn unique_size(x: &Array, size: usize) -> Array {
    unique_impl(x, size, None)
}

/// [`unique_size`] padding with `fill_value` (converted to `x`'s dtype) instead of the
/// smallest element (`jnp.unique(x, size=size, fill_value=fill_value)`).
#[track_caller]
pub fn unique_size_fill(x: &Array, size: usize, fill_value: impl ArrayLike) -> Array {
    unique_impl(x, size, Some(fill_value.into_array()))
}

#[track_caller]
fn unique_impl(x: &Array, size: usize, fill: Option<Array>) -> Array {
    // The result and the index arrays have `size` elements of up to 8 bytes.
    crate::shape::check("unique", &[size], DType::I64);
    let fill = fill.map(|f| {
        if f.ndim() != 0 {
            panic!("unique: fill_value must be a scalar, got shape {}", ShapeDisplay(f.shape()));
        }
        convert(&f, x.dtype(), false)
    });
    let n = x.size();
    if n == 0 {
        return match fill {
            Some(f) => super::broadcast_to(&f, [size]),
            None if size > 0 => panic!(
                "unique: for an empty array and size {size} > 0 there is no element to pad \
                 with; give a fill_value (jnp::unique_size_fill)"
            ),
            None => ravel(x),
        };
    }
    let aux = bind1(&Sort { dimension: 0, num_keys: 1 }, &[&ravel(x)]);
    let dtype = index_dtype(n.max(size));
    let starts = cumsum(&astype(&run_starts(&aux), dtype), Some(0));
    // The j-th unique element starts where the running count of starts first reaches j + 1.
    let slot = bind1(&Iota { dtype, shape: vec![size], dimension: 0 }, &[]);
    let first =
        bind1(&SearchSorted { side: Side::Left, batch_dims: 0 }, &[&starts, &super::add(&slot, 1)]);
    let total = super::slice_axis(&starts, 0, n - 1, n).reshape(Vec::<usize>::new());
    let valid = super::less(&slot, &total);
    // Slots past the last unique element read element 0, as JAX's `nonzero(size=)` pads.
    let first = where_(&valid, &first, 0);
    let values = bind1(&Gather { axis: 0, mode: IndexMode::Clip }, &[&aux, &first]);
    match fill {
        Some(f) => where_(&valid, &values, &f),
        None => values,
    }
}

/// How a quantile between two sorted elements is read (NumPy's `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    /// Linear interpolation (the default).
    Linear,
    /// The mean of the two (what `median` uses).
    Midpoint,
}

/// The median of all elements (`jnp.median`); NaN if any element is NaN. Integers give
/// `float32`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([[10.0f32, 7.0, 4.0], [3.0, 2.0, 1.0]]);
/// assert_eq!(jnp::median(&x).item::<f32>().unwrap(), 3.5);
/// assert_eq!(jnp::median_axes(&x, 1, false).to_vec::<f32>().unwrap(), vec![7.0, 2.0]);
/// ```
#[track_caller]
pub fn median(x: &Array) -> Array {
    median_axes(x, Axes::All, false)
}

/// The median over `axes`, keeping them as length-1 axes when `keepdims`.
#[track_caller]
pub fn median_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    quantile_impl("median", x, Array::weak_scalar(0.5f64), axes.into(), keepdims, Method::Midpoint)
}

/// The `q`-th quantile of all elements (`jnp.quantile(x, q)`, `method='linear'`): `q` is a
/// scalar or a 1-D array of values in `[0, 1]`, whose axis comes first in the result. NaN
/// where the data holds a NaN.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
/// assert_eq!(jnp::quantile(&x, 0.25).item::<f32>().unwrap(), 1.75);
/// let qs = jnp::quantile(&x, &jnp::array([0.0f32, 1.0]));
/// assert_eq!(qs.to_vec::<f32>().unwrap(), vec![1.0, 4.0]);
/// ```
#[track_caller]
pub fn quantile(x: &Array, q: impl ArrayLike) -> Array {
    quantile_axes(x, q, Axes::All, false)
}

/// [`quantile`] over `axes`, keeping them as length-1 axes when `keepdims`.
#[track_caller]
pub fn quantile_axes(x: &Array, q: impl ArrayLike, axes: impl Into<Axes>, keepdims: bool) -> Array {
    quantile_impl("quantile", x, q.into_array(), axes.into(), keepdims, Method::Linear)
}

/// The `q`-th percentile of all elements (`jnp.percentile`): [`quantile`] at `q / 100`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
/// assert_eq!(jnp::percentile(&x, 50.0).item::<f32>().unwrap(), 2.5);
/// ```
#[track_caller]
pub fn percentile(x: &Array, q: impl ArrayLike) -> Array {
    percentile_axes(x, q, Axes::All, false)
}

/// [`percentile`] over `axes`, keeping them as length-1 axes when `keepdims`.
#[track_caller]
pub fn percentile_axes(
    x: &Array,
    q: impl ArrayLike,
    axes: impl Into<Axes>,
    keepdims: bool,
) -> Array {
    // JAX promotes the data and q together here (not in `quantile`).
    let p = promote_inexact(&[x.clone(), q.into_array()]);
    let q = divide(&p[1], 100.0);
    quantile_impl("percentile", &p[0], q, axes.into(), keepdims, Method::Linear)
}

/// `x` with the reduced `axes` merged into one axis, where it is, and the shape a `keepdims`
/// result takes when it is not simply the per-axis one (`None`), as JAX's `_quantile` does.
#[track_caller]
fn quantile_layout(
    op: &str,
    x: &Array,
    axes: Axes,
    keepdims: bool,
) -> (Array, usize, Option<Vec<usize>>) {
    let rank = x.ndim();
    let axes = match axes {
        Axes::All => {
            let keep = keepdims.then(|| vec![1; rank]);
            return (ravel(x), 0, keep);
        }
        Axes::Some(list) if list.len() == 1 => {
            return (x.clone(), axis_of(op, list[0], x.shape()), None)
        }
        axes => axes.resolve(op, rank),
    };
    // Kept axes first, in order, then the reduced ones, flattened into one (JAX's
    // permutation, so equal elements meet the stable sort in JAX's order).
    let keep: Vec<usize> = (0..rank).filter(|a| !axes.contains(a)).collect();
    let mut perm: Vec<usize> = (0..rank).collect();
    for (i, &k) in keep.iter().enumerate() {
        perm.swap(i, k);
    }
    let moved = super::permute_dims(x, perm.iter().map(|&a| a as isize).collect::<Vec<_>>());
    let mut shape: Vec<usize> = keep.iter().map(|&a| x.shape()[a]).collect();
    shape.push(axes.iter().map(|&a| x.shape()[a]).product());
    let kept_shape = (0..rank).map(|a| if axes.contains(&a) { 1 } else { x.shape()[a] }).collect();
    (reshape(&moved, shape), keep.len(), Some(kept_shape))
}

/// JAX's `_quantile` (without NaN squashing): sort along the axis, read the elements at
/// `floor` and `ceil` of `q (n - 1)`, and interpolate.
#[track_caller]
fn quantile_impl(
    op: &str,
    x: &Array,
    q: Array,
    axes: Axes,
    keepdims: bool,
    method: Method,
) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    if q.ndim() > 1 {
        panic!("{op}: q must be a scalar or 1-D, got shape {}", ShapeDisplay(q.shape()));
    }
    // JAX computes in q's dtype; a Rust scalar q takes the data's.
    let qd = if q.is_weak() || !q.dtype().is_float() { x.dtype() } else { q.dtype() };
    let q = convert(&q, qd, false);
    let (a, axis, keep_shape) = quantile_layout(op, &x, axes, keepdims);
    let n = a.shape()[axis];
    if n == 0 {
        panic!(
            "{op}: cannot take a quantile over an empty axis of an array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let has_nan = any_axes(&isnan(&a), axis as isize, true);
    let a = where_(&has_nan, f64::NAN, &a);
    let a = bind1(&Sort { dimension: axis, num_keys: 1 }, &[&a]);
    let last = (n - 1) as f64;
    let pos = multiply(&q, last);
    let (low, high) = (floor(&pos), ceil(&pos));
    let high_weight = subtract(&pos, &low);
    let low_weight = subtract(1.0, &high_weight);
    let index = |p: &Array| astype(&clip(p, 0.0, last), index_dtype(n));
    let read = |p: &Array| {
        let v = bind1(&Gather { axis, mode: IndexMode::Clip }, &[&a, &index(p)]);
        // q's axis (if any) goes first, then the kept axis when keepdims.
        let v = if q.ndim() == 1 { moveaxis(&v, axis as isize, 0) } else { v };
        if keepdims {
            v.expand_dims((q.ndim() + axis) as isize)
        } else {
            v
        }
    };
    let (low_value, high_value) = (read(&low), read(&high));
    // A 1-D q's weights run along the result's first axis.
    let weight = |w: &Array| {
        let mut shape = w.shape().to_vec();
        if q.ndim() == 1 {
            shape.resize(low_value.ndim(), 1);
        }
        w.reshape(shape)
    };
    let out = match method {
        Method::Linear => super::add(
            multiply(astype(&low_value, qd), weight(&low_weight)),
            multiply(astype(&high_value, qd), weight(&high_weight)),
        ),
        Method::Midpoint => multiply(super::add(&low_value, &high_value), 0.5),
    };
    let out = match keep_shape {
        Some(shape) if keepdims => out.reshape([q.shape(), &shape[..]].concat()),
        _ => out,
    };
    astype(&out, x.dtype())
}

impl Array {
    /// [`jnp::sort`](crate::jnp::sort) as a method: sorted along the last axis.
    #[track_caller]
    pub fn sort(&self) -> Array {
        sort(self)
    }

    /// [`jnp::argsort`](crate::jnp::argsort) as a method.
    #[track_caller]
    pub fn argsort(&self) -> Array {
        argsort(self)
    }
}

/// The median of the elements that are not NaN (`jnp.nanmedian`); NaN where all are.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([1.0f32, f32::NAN, 3.0, 10.0]);
/// assert_eq!(jnp::nanmedian(&x).item::<f32>().unwrap(), 3.0);
/// ```
#[track_caller]
pub fn nanmedian(x: &Array) -> Array {
    nanmedian_axes(x, Axes::All, false)
}

/// [`nanmedian`] over `axes`.
#[track_caller]
pub fn nanmedian_axes(x: &Array, axes: impl Into<Axes>, keepdims: bool) -> Array {
    nan_quantile_impl(
        "nanmedian",
        x,
        Array::weak_scalar(0.5f64),
        axes.into(),
        keepdims,
        Method::Midpoint,
    )
}

/// The `q`-th quantile of the elements that are not NaN (`jnp.nanquantile`, linear method):
/// `q` is a scalar or 1-D, its axis first in the result; NaN where all elements are NaN.
#[track_caller]
pub fn nanquantile(x: &Array, q: impl ArrayLike) -> Array {
    nanquantile_axes(x, q, Axes::All, false)
}

/// [`nanquantile`] over `axes`.
#[track_caller]
pub fn nanquantile_axes(
    x: &Array,
    q: impl ArrayLike,
    axes: impl Into<Axes>,
    keepdims: bool,
) -> Array {
    nan_quantile_impl("nanquantile", x, q.into_array(), axes.into(), keepdims, Method::Linear)
}

/// The `q`-th percentile of the elements that are not NaN (`jnp.nanpercentile`):
/// [`nanquantile`] at `q / 100`.
#[track_caller]
pub fn nanpercentile(x: &Array, q: impl ArrayLike) -> Array {
    nanpercentile_axes(x, q, Axes::All, false)
}

/// [`nanpercentile`] over `axes`.
#[track_caller]
pub fn nanpercentile_axes(
    x: &Array,
    q: impl ArrayLike,
    axes: impl Into<Axes>,
    keepdims: bool,
) -> Array {
    let p = promote_inexact(&[x.clone(), q.into_array()]);
    let q = divide(&p[1], 100.0);
    nan_quantile_impl("nanpercentile", &p[0], q, axes.into(), keepdims, Method::Linear)
}

/// JAX's quantile with NaNs squashed: each row's position runs over its own count of non-NaN
/// elements, which sort before the NaNs.
#[track_caller]
fn nan_quantile_impl(
    op: &str,
    x: &Array,
    q: Array,
    axes: Axes,
    keepdims: bool,
    method: Method,
) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand");
    if q.ndim() > 1 {
        panic!("{op}: q must be a scalar or 1-D, got shape {}", ShapeDisplay(q.shape()));
    }
    let qd = if q.is_weak() || !q.dtype().is_float() { x.dtype() } else { q.dtype() };
    let q = convert(&q, qd, false);
    let (a, axis, keep_shape) = quantile_layout(op, &x, axes, keepdims);
    let n = a.shape()[axis];
    if n == 0 {
        panic!(
            "{op}: cannot take a quantile over an empty axis of an array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let a = bind1(&Sort { dimension: axis, num_keys: 1 }, &[&a]);
    let counts =
        super::sum_axes(&convert(&super::logical_not(&isnan(&a)), qd, false), axis as isize, true);
    let last = subtract(&counts, 1.0);
    let one = |q: &Array| {
        let pos = multiply(q, &last);
        let (low, high) = (floor(&pos), ceil(&pos));
        let high_weight = subtract(&pos, &low);
        let low_weight = subtract(1.0, &high_weight);
        let index =
            |p: &Array| astype(&super::maximum(super::minimum(p, &last), 0.0), index_dtype(n));
        let read = |p: &Array| super::take_along_axis(&a, &index(p), axis as isize);
        let (low_value, high_value) = (read(&low), read(&high));
        let out = match method {
            Method::Linear => super::add(
                multiply(astype(&low_value, qd), &low_weight),
                multiply(astype(&high_value, qd), &high_weight),
            ),
            Method::Midpoint => multiply(super::add(&low_value, &high_value), 0.5),
        };
        match &keep_shape {
            Some(shape) if keepdims => out.reshape(shape.clone()),
            _ if keepdims => out,
            _ => super::squeeze(&out, axis as isize),
        }
    };
    let out = if q.ndim() == 1 {
        let each: Vec<Array> = (0..q.shape()[0])
            .map(|k| one(&q.slice(&[super::SliceElem::Index(k as isize)])))
            .collect();
        super::stack(&each, 0)
    } else {
        one(&q)
    };
    astype(&out, x.dtype())
}
