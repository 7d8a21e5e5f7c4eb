//! `lax.sort`, `lax.sort_key_val` and `lax.top_k`.

use crate::primitives::{bind, Sort, TopK};
use crate::shape::ShapeDisplay;
use crate::Array;

/// `axis` of an array of `shape` as a non-negative axis, or a panic naming `op` and the shape.
#[track_caller]
fn axis_of(op: &str, axis: isize, shape: &[usize]) -> usize {
    let rank = shape.len() as isize;
    if axis < -rank || axis >= rank {
        panic!("{op}: axis {axis} is out of bounds for an array of shape {}", ShapeDisplay(shape));
    }
    (if axis < 0 { axis + rank } else { axis }) as usize
}

/// Sorts `operands` (all of one shape) along `dimension` by the first `num_keys` of them,
/// compared lexicographically, carrying the others along (`lax.sort`). The sort is stable;
/// floats order with NaNs last and `-0.0` equal to `0.0`.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let keys = jnp::array([2, 1, 2, 1]);
/// let vals = jnp::array([0.5f32, 1.5, 2.5, 3.5]);
/// let out = lax::sort(&[&keys, &vals], 0, 1);
/// assert_eq!(out[1].to_vec::<f32>().unwrap(), vec![1.5, 3.5, 0.5, 2.5]);
/// ```
#[track_caller]
pub fn sort(operands: &[&Array], dimension: isize, num_keys: usize) -> Vec<Array> {
    let Some(first) = operands.first() else {
        panic!("sort: expected at least one operand");
    };
    let dimension = axis_of("sort", dimension, first.shape());
    bind(&Sort { dimension, num_keys }, operands)
}

/// `values` reordered as `keys` sort along `dimension`, with the sorted keys
/// (`lax.sort_key_val`).
#[track_caller]
pub fn sort_key_val(keys: &Array, values: &Array, dimension: isize) -> (Array, Array) {
    let mut out = sort(&[keys, values], dimension, 1);
    let values = out.pop().expect("sort returns its operands");
    (out.pop().expect("sort returns its operands"), values)
}

/// The `k` largest elements along the last axis, largest first, and their `int32` indices
/// (`lax.top_k`). Equal elements come in index order; floats rank by IEEE 754's total
/// order, as in JAX on CPU (a NaN is larger than `+inf`, `0.0` larger than `-0.0`). The
/// values differentiate: their gradient flows to the elements picked.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let (values, indices) = lax::top_k(&jnp::array([9.0f32, 3.0, 6.0, 4.0, 10.0]), 3);
/// assert_eq!(values.to_vec::<f32>().unwrap(), vec![10.0, 9.0, 6.0]);
/// assert_eq!(indices.to_vec::<i32>().unwrap(), vec![4, 0, 2]);
/// ```
#[track_caller]
pub fn top_k(x: &Array, k: usize) -> (Array, Array) {
    top_k_axis(x, k, -1)
}

/// [`top_k`] along `axis` (JAX's `top_k(x, k, axis=axis)`).
#[track_caller]
pub fn top_k_axis(x: &Array, k: usize, axis: isize) -> (Array, Array) {
    if x.ndim() == 0 {
        panic!("top_k: the operand must have at least one axis, got shape ()");
    }
    let axis = axis_of("top_k", axis, x.shape());
    let mut out = bind(&TopK { k, axis }, &[x]);
    let indices = out.pop().expect("top_k has two outputs");
    (out.pop().expect("top_k has two outputs"), indices)
}
