//! One-dimensional signals, polynomials and binning, as in `jax.numpy`: [`convolve`],
//! [`correlate`], [`polyval`], [`interp`], [`digitize`] and [`bincount`].

use super::{
    abs, add, conj, convert, divide, flip, greater, less, less_equal, multiply, promote_all,
    promote_inexact, searchsorted_side, subtract, take, where_, Side,
};
use crate::dtype::DType;
use crate::primitives::{bind1, ConvDimensionNumbers, ConvGeneralDilated};
use crate::shape::ShapeDisplay;
use crate::Array;

/// Which part of a full discrete convolution [`convolve`] and [`correlate`] return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvMode {
    /// Every output where the signals overlap at all: `len(a) + len(v) - 1` elements.
    Full,
    /// The middle `max(len(a), len(v))` elements of the full output.
    Same,
    /// Only outputs where one signal lies wholly inside the other:
    /// `max(len(a), len(v)) - min(len(a), len(v)) + 1` elements.
    Valid,
}

/// The discrete linear convolution of two 1-D arrays (`jnp.convolve(a, v, mode)`; NumPy's
/// default mode is [`ConvMode::Full`]). Runs as one convolution primitive.
///
/// ```
/// use rjax_runtime::jnp::{self, ConvMode};
/// let (a, v) = (jnp::array(&[1.0f32, 2.0, 3.0]), jnp::array(&[0.0f32, 1.0, 0.5]));
/// let y = jnp::convolve(&a, &v, ConvMode::Full);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.5, 4.0, 1.5]);
/// ```
#[track_caller]
pub fn convolve(a: &Array, v: &Array, mode: ConvMode) -> Array {
    let (a, v) = signal_operands("convolve", a, v);
    // The longer signal slides under the shorter one, reversed.
    let (x, y) = if a.shape()[0] < v.shape()[0] { (v, a) } else { (a, v) };
    windowed_products(&x, &flip(&y, 0), mode)
}

/// The cross-correlation of two 1-D arrays, `c[k] = sum_n a[n + k] * conj(v[n])`
/// (`jnp.correlate(a, v, mode)`; NumPy's default mode is [`ConvMode::Valid`]).
#[track_caller]
pub fn correlate(a: &Array, v: &Array, mode: ConvMode) -> Array {
    let (a, v) = signal_operands("correlate", a, v);
    let v = if v.dtype().is_complex() { conj(&v) } else { v };
    if a.shape()[0] < v.shape()[0] {
        flip(&windowed_products(&v, &a, mode), 0)
    } else {
        windowed_products(&a, &v, mode)
    }
}

/// Checks that both operands are non-empty 1-D arrays and promotes them to a common float
/// type (the convolution primitive computes in floats).
#[track_caller]
fn signal_operands(op: &str, a: &Array, v: &Array) -> (Array, Array) {
    if a.ndim() != 1 || v.ndim() != 1 {
        panic!(
            "{op}: only 1-D inputs are supported, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(v.shape())
        );
    }
    if a.shape()[0] == 0 || v.shape()[0] == 0 {
        panic!(
            "{op}: inputs cannot be empty, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(v.shape())
        );
    }
    let mut ops = promote_inexact(&[a.clone(), v.clone()]);
    let v = ops.pop().expect("two operands");
    (ops.pop().expect("two operands"), v)
}

/// `out[k] = sum_n x[n + k - low] * y[n]` over the padding `mode` asks for (`y` no longer
/// than `x`): XLA's convolution, which is a correlation.
fn windowed_products(x: &Array, y: &Array, mode: ConvMode) -> Array {
    let k = y.shape()[0] as i64;
    let padding = match mode {
        ConvMode::Valid => (0, 0),
        ConvMode::Same => (k / 2, k - k / 2 - 1),
        ConvMode::Full => (k - 1, k - 1),
    };
    let conv = ConvGeneralDilated {
        window_strides: vec![1],
        padding: vec![padding],
        lhs_dilation: vec![1],
        rhs_dilation: vec![1],
        dimension_numbers: ConvDimensionNumbers::canonical(3),
        feature_group_count: 1,
        batch_group_count: 1,
    };
    let n = x.shape()[0];
    let out = bind1(&conv, &[&x.reshape([1, 1, n]), &y.reshape([1, 1, k as usize])]);
    out.reshape([-1])
}

/// The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule
/// (`jnp.polyval`).
///
/// ```
/// use rjax_runtime::jnp;
/// let p = jnp::array(&[1.0f32, 0.0, -2.0]); // x^2 - 2
/// assert_eq!(jnp::polyval(&p, &jnp::array(&[3.0f32])).to_vec::<f32>().unwrap(), vec![7.0]);
/// ```
#[track_caller]
pub fn polyval(p: &Array, x: &Array) -> Array {
    if p.ndim() != 1 {
        panic!("polyval: p must be 1-D (the coefficients), got shape {}", ShapeDisplay(p.shape()));
    }
    let ops = promote_all(&[p.clone(), x.clone()]);
    let (p, x) = (&ops[0], &ops[1]);
    let mut y = super::zeros_dtype(x.shape(), x.dtype());
    for i in 0..p.shape()[0] {
        let coefficient = element(p, i);
        y = add(multiply(&y, x), &coefficient);
    }
    y
}

/// Piecewise-linear interpolation of the points `(xp, fp)` at `x` (`jnp.interp`); `xp` must
/// increase. Left of `xp[0]` gives `left` (default `fp[0]`), right of `xp[-1]` gives `right`
/// (default `fp[-1]`).
///
/// ```
/// use rjax_runtime::jnp;
/// let (xp, fp) = (jnp::array(&[0.0f32, 1.0]), jnp::array(&[10.0f32, 20.0]));
/// let y = jnp::interp(&jnp::array(&[0.25f32, 2.0]), &xp, &fp, None, None);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![12.5, 20.0]);
/// ```
#[track_caller]
pub fn interp(x: &Array, xp: &Array, fp: &Array, left: Option<f64>, right: Option<f64>) -> Array {
    if xp.ndim() != 1 || fp.ndim() != 1 || xp.shape() != fp.shape() || xp.shape()[0] == 0 {
        panic!(
            "interp: xp and fp must be 1-D arrays of one non-zero length, got shapes {} and {}",
            ShapeDisplay(xp.shape()),
            ShapeDisplay(fp.shape())
        );
    }
    let ops = promote_inexact(&[x.clone(), xp.clone(), fp.clone()]);
    let (x, xp, fp) = (&ops[0], &ops[1], &ops[2]);
    let n = xp.shape()[0];
    let last = n.saturating_sub(1).max(1) as i64;
    let i = super::clip(&searchsorted_side(xp, x, Side::Right), 1, last);
    let below = subtract(&i, 1);
    let at = |a: &Array, idx: &Array| take(a, idx, Some(0));
    let (x0, f0) = (at(xp, &below), at(fp, &below));
    let df = subtract(at(fp, &i), &f0);
    let dx = subtract(at(xp, &i), &x0);
    // A zero-width interval (repeated xp) takes its left value, with a finite gradient.
    let epsilon = match xp.dtype() {
        DType::F64 => f64::EPSILON * f64::EPSILON,
        _ => f64::from(f32::EPSILON) * f64::from(f32::EPSILON),
    };
    let flat = less_equal(abs(&dx), epsilon);
    let slope = divide(subtract(x, &x0), where_(&flat, 1.0, &dx));
    let f = where_(&flat, &f0, add(&f0, multiply(&slope, &df)));
    let left = left.map_or_else(|| element(fp, 0), |v| convert(&Array::from(v), fp.dtype(), false));
    let right =
        right.map_or_else(|| element(fp, n - 1), |v| convert(&Array::from(v), fp.dtype(), false));
    let f = where_(less(x, element(xp, 0)), &left, &f);
    where_(greater(x, element(xp, n - 1)), &right, &f)
}

/// The index of the bin of `bins` (increasing or decreasing) each element of `x` falls in
/// (`jnp.digitize`): `i` with `bins[i - 1] <= x < bins[i]` for increasing bins, or
/// `bins[i - 1] < x <= bins[i]` when `right`. `int32`.
///
/// ```
/// use rjax_runtime::jnp;
/// let bins = jnp::array(&[0.0f32, 1.0, 2.0]);
/// let i = jnp::digitize(&jnp::array(&[-1.0f32, 0.5, 2.0]), &bins, false);
/// assert_eq!(i.to_vec::<i32>().unwrap(), vec![0, 1, 3]);
/// ```
#[track_caller]
pub fn digitize(x: &Array, bins: &Array, right: bool) -> Array {
    if bins.ndim() != 1 {
        panic!("digitize: bins must be 1-D, got shape {}", ShapeDisplay(bins.shape()));
    }
    let n = bins.shape()[0];
    if n == 0 {
        return super::zeros_dtype(x.shape(), DType::I32);
    }
    // A value equal to an edge belongs to the bin that starts there (ends there when
    // `right`), so the search goes past equal edges unless `right`.
    let side = if right { Side::Left } else { Side::Right };
    let ascending = searchsorted_side(bins, x, side);
    let descending = subtract(n as i64, searchsorted_side(&flip(bins, 0), x, side));
    let increasing = super::greater_equal(element(bins, n - 1), element(bins, 0));
    convert(&where_(&increasing, &ascending, &descending), DType::I32, false)
}

/// How many times each value `0..length` occurs in the non-negative integers `x`, or the sum
/// of `weights` at those places (`jnp.bincount(x, weights, length=length)`). Negative values
/// count as 0 and values past `length` are dropped, as in JAX; `length` is static.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[0, 2, 2, 5]);
/// assert_eq!(jnp::bincount(&x, None, 4).to_vec::<i32>().unwrap(), vec![1, 0, 2, 0]);
/// ```
#[track_caller]
pub fn bincount(x: &Array, weights: Option<&Array>, length: usize) -> Array {
    if x.ndim() != 1 || !x.dtype().is_int() {
        panic!(
            "bincount: x must be a 1-D array of integers, got {} of shape {}",
            x.dtype(),
            ShapeDisplay(x.shape())
        );
    }
    let weights = match weights {
        Some(w) if w.shape() != x.shape() => panic!(
            "bincount: the shape of weights, {}, must match the shape of x, {}",
            ShapeDisplay(w.shape()),
            ShapeDisplay(x.shape())
        ),
        Some(w) => w.clone(),
        None => super::ones_dtype(x.shape(), DType::I32),
    };
    let places = super::maximum(x, 0);
    super::zeros_dtype([length], weights.dtype()).at(crate::s![&places]).add(&weights)
}

/// Element `i` of the 1-D array `a`, as a 0-d array (a static slice, so it traces and
/// differentiates like one).
fn element(a: &Array, i: usize) -> Array {
    super::slice_axis(a, 0, i, i + 1).reshape([0usize; 0])
}
