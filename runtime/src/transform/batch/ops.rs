//! What batching rules are written with: moving, inserting and materializing batch axes, and
//! the shared rules of elementwise primitives and of primitives batched lane by lane.

use super::{BatchAxis, BatchDim};
use crate::array::Array;
use crate::primitives::{bind, bind1, BroadcastInDim, Concatenate, Primitive, Slice, Transpose};
use crate::transform::ad::ops::reshape;

/// What a batching rule returns: the outputs and their batch axes.
pub(crate) type Batched = Result<(Vec<Array>, Vec<BatchDim>), String>;

/// A one-output rule's result.
pub(crate) fn one(x: Array, dim: BatchDim) -> Batched {
    Ok((vec![x], vec![dim]))
}

/// `x` with axis `from` moved to position `to` (the others keep their order).
pub(crate) fn move_axis(x: &Array, from: usize, to: usize) -> Array {
    if from == to {
        return x.clone();
    }
    let mut permutation: Vec<usize> = (0..x.ndim()).filter(|&a| a != from).collect();
    permutation.insert(to, from);
    // Moving an axis of extent 1, or past only extent-1 axes, keeps the element order.
    let (lo, hi) = (from.min(to), from.max(to));
    if x.shape()[from] == 1 || x.shape()[lo..=hi].iter().filter(|&&n| n != 1).count() <= 1 {
        let shape: Vec<usize> = permutation.iter().map(|&a| x.shape()[a]).collect();
        return reshape(x, &shape);
    }
    bind1(&Transpose { permutation }, &[x])
}

/// `x` with a new axis of extent 1 at `at` (free: arrays are contiguous).
pub(crate) fn insert_axis(x: &Array, at: usize) -> Array {
    let mut shape = x.shape().to_vec();
    shape.insert(at, 1);
    reshape(x, &shape)
}

/// `x` with its batch axis (at `dim`, or none) at `to`: moved, or broadcast to `size` copies
/// when `x` is unbatched.
pub(crate) fn to_dim(x: &Array, dim: BatchDim, to: usize, size: usize) -> Array {
    match dim {
        Some(d) => move_axis(x, d, to),
        None => {
            let mut shape = x.shape().to_vec();
            shape.insert(to, size);
            let broadcast_dimensions =
                (0..x.ndim()).map(|a| if a < to { a } else { a + 1 }).collect();
            bind1(&BroadcastInDim { shape, broadcast_dimensions }, &[x])
        }
    }
}

/// The position in a batched array (batch axis at `dim`) of the per-example axis `axis`.
pub(crate) fn batched_axis(axis: usize, dim: usize) -> usize {
    if axis < dim {
        axis
    } else {
        axis + 1
    }
}

/// The per-example rank of an operand.
fn example_rank(x: &Array, dim: BatchDim) -> usize {
    x.ndim() - usize::from(dim.is_some())
}

/// The rule of an elementwise primitive whose operands broadcast by NumPy's rules: when the
/// batched operands agree on their batch axis and have the full rank, they are used as they
/// are (unbatched operands get an extent-1 axis where needed, which is free); otherwise batch
/// axes go to the front, with extent-1 axes after them so per-example axes still align.
pub(crate) fn elementwise(prim: &dyn Primitive, args: &[Array], dims: &[BatchDim]) -> Batched {
    let rank = args.iter().zip(dims).map(|(x, d)| example_rank(x, *d)).max().unwrap_or(0);
    let batched: Vec<usize> = dims.iter().flatten().copied().collect();
    let shared = batched.first().copied().filter(|&d| {
        batched.iter().all(|&e| e == d)
            && args.iter().zip(dims).all(|(x, e)| e.is_none() || example_rank(x, *e) == rank)
    });
    let out_dim = shared.unwrap_or(0);
    let aligned: Vec<Array> = args
        .iter()
        .zip(dims)
        .map(|(x, d)| match (d, shared) {
            (Some(_), Some(_)) => x.clone(),
            (Some(d), None) => {
                let front = move_axis(x, *d, 0);
                let mut shape = front.shape().to_vec();
                let missing = rank - example_rank(x, Some(*d));
                shape.splice(1..1, std::iter::repeat_n(1, missing));
                reshape(&front, &shape)
            }
            (None, _) => {
                // Right-aligned against the batched output (rank + 1): it needs an extent-1
                // axis for the batch axis when that falls among its own axes.
                let lead = rank - x.ndim();
                if out_dim > lead {
                    insert_axis(x, out_dim - lead)
                } else {
                    x.clone()
                }
            }
        })
        .collect();
    let refs: Vec<&Array> = aligned.iter().collect();
    let outs = bind(prim, &refs);
    let n = outs.len();
    Ok((outs, vec![Some(out_dim); n]))
}

/// Per example, `on_true` where `pred` (a `[size]` bool, one per example) holds, else
/// `on_false`; both batched in front.
pub(crate) fn select_examples(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    let mut shape = vec![1; on_true.ndim()];
    shape[0] = pred.shape()[0];
    crate::transform::ad::ops::select(&reshape(pred, &shape), on_true, on_false)
}

/// Lane `i` of a batched operand (the operand itself when unbatched).
pub(crate) fn lane(x: &Array, dim: BatchDim, i: usize) -> Array {
    let Some(d) = dim else { return x.clone() };
    let mut start_indices = vec![0; x.ndim()];
    let mut limit_indices = x.shape().to_vec();
    start_indices[d] = i;
    limit_indices[d] = i + 1;
    let strides = vec![1; x.ndim()];
    let sliced = bind1(&Slice { start_indices, limit_indices, strides }, &[x]);
    let mut shape = x.shape().to_vec();
    shape.remove(d);
    reshape(&sliced, &shape)
}

/// Stacks per-example arrays along a new leading axis.
pub(crate) fn stack(parts: &[Array]) -> Array {
    let expanded: Vec<Array> = parts.iter().map(|p| insert_axis(p, 0)).collect();
    let refs: Vec<&Array> = expanded.iter().collect();
    bind1(&Concatenate { dimension: 0 }, &refs)
}

/// The rule of a primitive that has no batched form: apply it to each example and stack the
/// results (used for the PRNG primitives, whose kernels take one key).
pub(crate) fn per_lane(
    prim: &dyn Primitive,
    args: &[Array],
    dims: &[BatchDim],
    axis: &BatchAxis,
) -> Batched {
    let example: Vec<_> = args.iter().zip(dims).map(|(x, d)| lane_aval(x, *d)).collect();
    let out_avals = prim.abstract_eval(&example)?;
    if axis.size == 0 {
        let outs = out_avals
            .iter()
            .map(|a| crate::transform::ad::ops::zeros(&super::batched_aval(a, Some(0), 0)))
            .collect();
        return Ok((outs, vec![Some(0); out_avals.len()]));
    }
    let mut lanes: Vec<Vec<Array>> = Vec::new();
    for i in 0..axis.size {
        let ins: Vec<Array> = args.iter().zip(dims).map(|(x, d)| lane(x, *d, i)).collect();
        let refs: Vec<&Array> = ins.iter().collect();
        lanes.push(bind(prim, &refs));
    }
    let num_outputs = out_avals.len();
    let outs: Vec<Array> = (0..num_outputs)
        .map(|k| {
            let parts: Vec<Array> = lanes.iter().map(|l| l[k].clone()).collect();
            stack(&parts)
        })
        .collect();
    Ok((outs, vec![Some(0); num_outputs]))
}

fn lane_aval(x: &Array, dim: BatchDim) -> crate::primitives::Aval {
    let mut aval = x.aval();
    if let Some(d) = dim {
        aval.shape.remove(d);
    }
    aval
}
