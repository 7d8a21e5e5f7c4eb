//! The positions of nonzero elements, as in `jax.numpy`: [`nonzero`], [`argwhere`] and
//! [`flatnonzero`].
//!
//! Their length depends on the data, so under `#[jit]` (or any transform) they need JAX's
//! `size`: the result then has exactly `size` entries, the first ones the positions found and
//! the rest `fill_value` (default 0). Eagerly, `size` may be left out. They are built from
//! cumulative sums and `bincount` as JAX builds them, so they trace and batch like those.

use super::{bincount, cumsum, floor_divide, not_equal, remainder, where_};
use crate::dtype::{default_int, DType};
use crate::shape::ShapeDisplay;
use crate::Array;

/// The indices of the nonzero (or `true`) elements of `x`, one `int32` array per axis
/// (`jnp.nonzero(x, size=.., fill_value=..)`), in row-major order.
///
/// `size` fixes the number of entries (needed when `x` is traced): extra positions are
/// dropped and missing ones filled with `fill_value` (or 0).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([[0.0f32, 2.0], [3.0, 0.0]]);
/// let ij = jnp::nonzero(&x, None, None);
/// assert_eq!(ij[0].to_vec::<i32>().unwrap(), vec![0, 1]);
/// assert_eq!(ij[1].to_vec::<i32>().unwrap(), vec![1, 0]);
/// let padded = jnp::nonzero(&x, Some(3), Some(-1));
/// assert_eq!(padded[0].to_vec::<i32>().unwrap(), vec![0, 1, -1]);
/// ```
#[track_caller]
pub fn nonzero(x: &Array, size: Option<usize>, fill_value: Option<i64>) -> Vec<Array> {
    if x.ndim() == 0 {
        panic!("nonzero: a 0-d array has no positions; use `jnp::atleast_1d` first");
    }
    let mask = if x.dtype() == DType::Bool { x.clone() } else { not_equal(x, 0) };
    let found = || super::sum(&super::astype(&mask, default_int()));
    let size = match size {
        Some(size) => size,
        None if x.is_traced() => panic!(
            "nonzero: the number of nonzero elements of a traced array of shape {} is not known \
             while tracing; pass `size` (and `fill_value`) as JAX requires under jit",
            ShapeDisplay(x.shape())
        ),
        None => found().item::<i32>().expect("a concrete count") as usize,
    };
    if x.size() == 0 || size == 0 {
        return x.shape().iter().map(|_| super::zeros_dtype([size], default_int())).collect();
    }
    // The k-th position is the number of elements whose running count is at most k.
    let flat = cumsum(&bincount(&cumsum(&mask, None), None, size), None);
    let flat = super::astype(&flat, default_int());
    let mut stride = x.size();
    let mut out: Vec<Array> = x
        .shape()
        .iter()
        .map(|&len| {
            stride /= len;
            remainder(floor_divide(&flat, stride as i64), len as i64)
        })
        .collect();
    if let Some(fill) = fill_value {
        let past_end = super::greater_equal(super::arange(size as i64), found());
        out = out.iter().map(|axis| where_(&past_end, fill, axis)).collect();
    }
    out
}

/// The indices of the nonzero elements of `x` as the rows of an `(n, x.ndim())` `int32` array
/// (`jnp.argwhere`); `size` and `fill_value` as in [`nonzero`]. A 0-d `x` gives a `(n, 0)`
/// array.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([[0.0f32, 2.0], [3.0, 0.0]]);
/// assert_eq!(jnp::argwhere(&x, None, None).to_vec::<i32>().unwrap(), vec![0, 1, 1, 0]);
/// ```
#[track_caller]
pub fn argwhere(x: &Array, size: Option<usize>, fill_value: Option<i64>) -> Array {
    let positions = nonzero(&super::atleast_1d(x), size, fill_value);
    let rows = super::stack(&positions, 1);
    if x.ndim() == 0 {
        super::zeros_dtype([rows.shape()[0], 0], default_int())
    } else {
        rows
    }
}

/// The flat (row-major) indices of the nonzero elements of `x` (`jnp.flatnonzero`); `size` and
/// `fill_value` as in [`nonzero`].
#[track_caller]
pub fn flatnonzero(x: &Array, size: Option<usize>, fill_value: Option<i64>) -> Array {
    nonzero(&super::ravel(x), size, fill_value).remove(0)
}
