//! Reductions over sliding windows (`lax.reduce_window`), the pooling layers of
//! convolutional networks: [`reduce_window`] with [`WindowOp::Sum`], [`WindowOp::Max`] or
//! [`WindowOp::Min`], and the shortcuts [`max_pool`], [`avg_pool`] and [`sum_pool`].
//!
//! A window reduction is the elementwise reduction of one strided slice of the padded operand
//! per position inside the window (four slices for a 2x2 window), so it runs under every
//! transform and differentiates through the slices: the gradient of a maximum goes to the
//! element that was largest, as in JAX when the window has no ties.

use super::conv::Padding;
use crate::jnp;
use crate::shape::ShapeDisplay;
use crate::{Array, DType};

/// The reduction [`reduce_window`] applies to each window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowOp {
    /// The sum (padding counts as 0).
    Sum,
    /// The maximum (padding counts as `-inf`, or the dtype's least value).
    Max,
    /// The minimum (padding counts as `+inf`, or the dtype's greatest value).
    Min,
}

impl WindowOp {
    fn combine(self, a: &Array, b: &Array) -> Array {
        match self {
            WindowOp::Sum => jnp::add(a, b),
            WindowOp::Max => jnp::maximum(a, b),
            WindowOp::Min => jnp::minimum(a, b),
        }
    }

    /// The reduction's identity in `x`'s dtype, which padding takes.
    fn identity(self, x: &Array) -> Array {
        let dtype = x.dtype();
        match self {
            WindowOp::Sum => jnp::zeros_dtype([0usize; 0], dtype),
            WindowOp::Max if dtype.is_inexact() => {
                jnp::full_dtype([0usize; 0], f64::NEG_INFINITY, dtype)
            }
            WindowOp::Min if dtype.is_inexact() => {
                jnp::full_dtype([0usize; 0], f64::INFINITY, dtype)
            }
            WindowOp::Max => integer_extreme(dtype, true),
            WindowOp::Min => integer_extreme(dtype, false),
        }
    }
}

/// The least (`lowest`) or greatest value of an integer or bool dtype, 0-d.
fn integer_extreme(dtype: DType, lowest: bool) -> Array {
    let bits = 8 * dtype.size_of() as u32;
    let value = if dtype == DType::Bool {
        Array::from(!lowest)
    } else if dtype.is_unsigned_int() {
        Array::from(if lowest { 0 } else { u64::MAX >> (64 - bits) })
    } else {
        let max = (1i64 << (bits - 1)).wrapping_sub(1);
        Array::from(if lowest { -max - 1 } else { max })
    };
    value.astype(dtype)
}

/// Reduces every `window_dimensions` window of `x`, moved by `window_strides` over `x` padded
/// by `padding` (`lax.reduce_window` with `lax.add`, `lax.max` or `lax.min` and their
/// identities as the initial value). The output has one element per window position.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// use rjax_runtime::lax::WindowOp;
/// let x = jnp::arange(16.0).reshape([4, 4]);
/// let pooled = lax::reduce_window(&x, WindowOp::Max, [2, 2], [2, 2], "VALID");
/// assert_eq!(pooled.to_vec::<f32>().unwrap(), vec![5.0, 7.0, 13.0, 15.0]);
/// ```
#[track_caller]
pub fn reduce_window(
    x: &Array,
    op: WindowOp,
    window_dimensions: impl AsRef<[usize]>,
    window_strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
) -> Array {
    let (window, strides) = (window_dimensions.as_ref(), window_strides.as_ref());
    let rank = x.ndim();
    if window.len() != rank || strides.len() != rank || window.contains(&0) || strides.contains(&0)
    {
        panic!(
            "reduce_window: an operand of shape {} needs {rank} positive window dimensions and \
             strides, got {} and {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(window),
            ShapeDisplay(strides)
        );
    }
    let pads = padding.into().pairs(x.shape(), window, strides);
    if pads.len() != rank {
        panic!("reduce_window: {rank} (low, high) padding pairs needed, got {}", pads.len());
    }
    let config: Vec<(i64, i64, usize)> = pads.iter().map(|&(lo, hi)| (lo, hi, 0)).collect();
    let padded = super::pad(x, op.identity(x), &config);
    let out: Vec<usize> = (0..rank)
        .map(|d| {
            let extent = padded.shape()[d];
            if extent < window[d] {
                panic!(
                    "reduce_window: the window {} is larger than the padded operand {}",
                    ShapeDisplay(window),
                    ShapeDisplay(padded.shape())
                );
            }
            (extent - window[d]) / strides[d] + 1
        })
        .collect();
    window_offsets(window)
        .map(|offset| strided_window(&padded, &offset, &out, strides))
        .reduce(|acc, part| op.combine(&acc, &part))
        .expect("a window has at least one position")
}

/// Every position inside a window, in row-major order.
fn window_offsets(window: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let count: usize = window.iter().product();
    (0..count).map(move |mut flat| {
        let mut offset = vec![0; window.len()];
        for d in (0..window.len()).rev() {
            offset[d] = flat % window[d];
            flat /= window[d];
        }
        offset
    })
}

/// The element at `offset` inside every window: a strided slice of `out` elements per axis.
fn strided_window(x: &Array, offset: &[usize], out: &[usize], strides: &[usize]) -> Array {
    let limit: Vec<usize> =
        (0..out.len()).map(|d| offset[d] + (out[d] - 1) * strides[d] + 1).collect();
    super::slice(x, offset, limit, Some(strides))
}

/// The window shape and strides of a pooling over the trailing spatial axes of `x`, batch
/// and feature axes left alone: `window` and `strides` name the spatial axes only, which are
/// the last `window.len()` axes (`NCHW`-style; JAX's `stax` pools `NHWC`, so move the
/// feature axis first).
#[track_caller]
fn pooling(op: &str, x: &Array, window: &[usize], strides: &[usize]) -> (Vec<usize>, Vec<usize>) {
    if window.len() > x.ndim() || strides.len() != window.len() {
        panic!(
            "{op}: window {} and strides {} must name the trailing axes of an operand of shape {}",
            ShapeDisplay(window),
            ShapeDisplay(strides),
            ShapeDisplay(x.shape())
        );
    }
    let lead = x.ndim() - window.len();
    let full = |spatial: &[usize]| [vec![1; lead], spatial.to_vec()].concat();
    (full(window), full(strides))
}

/// Max pooling over the trailing axes of `x` (`flax.linen.max_pool`/`stax.MaxPool` over
/// `NCHW`): [`reduce_window`] with [`WindowOp::Max`].
#[track_caller]
pub fn max_pool(
    x: &Array,
    window: impl AsRef<[usize]>,
    strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
) -> Array {
    let (w, s) = pooling("max_pool", x, window.as_ref(), strides.as_ref());
    let padding = spatial_padding(padding.into(), x.ndim() - window.as_ref().len());
    reduce_window(x, WindowOp::Max, w, s, padding)
}

/// Sum pooling over the trailing axes of `x`: [`reduce_window`] with [`WindowOp::Sum`].
#[track_caller]
pub fn sum_pool(
    x: &Array,
    window: impl AsRef<[usize]>,
    strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
) -> Array {
    let (w, s) = pooling("sum_pool", x, window.as_ref(), strides.as_ref());
    let padding = spatial_padding(padding.into(), x.ndim() - window.as_ref().len());
    reduce_window(x, WindowOp::Sum, w, s, padding)
}

/// Average pooling over the trailing axes of `x`: the window sums divided by the window's
/// size, padding included in the count (`stax.AvgPool`'s and `flax.linen.avg_pool`'s
/// default).
#[track_caller]
pub fn avg_pool(
    x: &Array,
    window: impl AsRef<[usize]>,
    strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
) -> Array {
    let size: usize = window.as_ref().iter().product();
    jnp::divide(sum_pool(x, window, strides, padding), size as f64)
}

/// Explicit padding pairs for the spatial axes, with `(0, 0)` for the `lead` leading axes.
fn spatial_padding(padding: Padding, lead: usize) -> Padding {
    match padding {
        Padding::Explicit(pairs) => Padding::Explicit([vec![(0, 0); lead], pairs].concat()),
        other => other,
    }
}
