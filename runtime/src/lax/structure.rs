//! `lax`'s reductions, shape operations, constructors and products under JAX's names: the
//! primitives `jnp` builds on, with `jax.lax`'s explicit arguments (non-negative axes where
//! JAX requires them, no `-1` extents, no promotion across operands).

use std::borrow::Borrow;

use crate::jnp::{self, ArrayLike};
use crate::primitives::{bind1, ArgOp, ArgReduce, BroadcastInDim, Iota, Reduce, ReduceOp};
use crate::primitives::{DotGeneral, Transpose};
use crate::shape::{normalize_axis, ShapeDisplay};
use crate::{Array, DType};

/// Panics unless `axes` are distinct axes of `x`, as JAX requires of a reduction's.
#[track_caller]
fn check_axes(op: &str, x: &Array, axes: &[usize]) {
    let distinct = axes.iter().enumerate().all(|(i, a)| !axes[..i].contains(a));
    if !distinct || axes.iter().any(|&a| a >= x.ndim()) {
        panic!(
            "{op}: axes {axes:?} must be distinct axes of an operand of shape {} (non-negative, \
             below its rank)",
            ShapeDisplay(x.shape())
        );
    }
}

#[track_caller]
fn reduce(op: ReduceOp, name: &str, x: &Array, axes: &[usize]) -> Array {
    check_axes(name, x, axes);
    bind1(&Reduce { op, axes: axes.to_vec() }, &[x])
}

/// The sum over `axes` (`lax.reduce_sum`), in the operand's dtype (integers wrap; bools are
/// refused, as in JAX).
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::arange(6).reshape([2, 3]);
/// assert_eq!(lax::reduce_sum(&x, [1]).to_vec::<i32>().unwrap(), vec![3, 12]);
/// ```
#[track_caller]
pub fn reduce_sum(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    reduce(ReduceOp::Sum, "reduce_sum", x, axes.as_ref())
}

/// The product over `axes` (`lax.reduce_prod`), in the operand's dtype.
#[track_caller]
pub fn reduce_prod(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    reduce(ReduceOp::Prod, "reduce_prod", x, axes.as_ref())
}

/// The maximum over `axes` (`lax.reduce_max`); NaN propagates, and for bools it is `any`.
#[track_caller]
pub fn reduce_max(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    reduce(ReduceOp::Max, "reduce_max", x, axes.as_ref())
}

/// The minimum over `axes` (`lax.reduce_min`); NaN propagates, and for bools it is `all`.
#[track_caller]
pub fn reduce_min(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    reduce(ReduceOp::Min, "reduce_min", x, axes.as_ref())
}

/// Panics unless `x` is a bool array: rjax's logical folds take bools only.
#[track_caller]
fn check_bool(op: &str, x: &Array) {
    if !x.dtype().is_bool() {
        panic!(
            "lax.{op}: rjax reduces bool operands only, got {} (for integers, reduce the \
             comparison you need, or use reduce_max / reduce_min)",
            x.aval()
        );
    }
}

/// Whether every element over `axes` is true (`lax.reduce_and`), for bool arrays.
#[track_caller]
pub fn reduce_and(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    check_bool("reduce_and", x);
    reduce(ReduceOp::And, "reduce_and", x, axes.as_ref())
}

/// Whether any element over `axes` is true (`lax.reduce_or`), for bool arrays.
#[track_caller]
pub fn reduce_or(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    check_bool("reduce_or", x);
    reduce(ReduceOp::Or, "reduce_or", x, axes.as_ref())
}

/// Whether an odd number of elements over `axes` is true (`lax.reduce_xor`), for bool arrays.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = Array::from_shape_vec([2, 2], vec![true, true, true, false]);
/// assert_eq!(lax::reduce_xor(&x, [1]).to_vec::<bool>().unwrap(), vec![false, true]);
/// ```
#[track_caller]
pub fn reduce_xor(x: &Array, axes: impl AsRef<[usize]>) -> Array {
    check_bool("reduce_xor", x);
    let count = reduce(ReduceOp::Sum, "reduce_xor", &jnp::astype(x, DType::I32), axes.as_ref());
    jnp::not_equal(jnp::bitwise_and(&count, 1), 0)
}

#[track_caller]
fn arg(op: ArgOp, name: &str, x: &Array, axis: usize, index_dtype: DType) -> Array {
    if axis >= x.ndim() {
        panic!("{name}: invalid axis {axis} for an operand of shape {}", ShapeDisplay(x.shape()));
    }
    if !index_dtype.is_int() {
        panic!("{name}: index_dtype must be an integer type, got {index_dtype}");
    }
    if x.shape()[axis] == 0 {
        panic!(
            "{name}: the axis {axis} of an operand of shape {} is empty",
            ShapeDisplay(x.shape())
        );
    }
    jnp::astype(&bind1(&ArgReduce { op, axis }, &[x]), index_dtype)
}

/// The index of the largest element along `axis` (`lax.argmax`), as `index_dtype`: the first
/// among ties, and a NaN counts as the largest.
///
/// ```
/// use rjax_runtime::{jnp, lax, DType};
/// let x = jnp::array([[1.0f32, 9.0, 3.0], [8.0, 2.0, 8.0]]);
/// assert_eq!(lax::argmax(&x, 1, DType::I32).to_vec::<i32>().unwrap(), vec![1, 0]);
/// ```
#[track_caller]
pub fn argmax(x: &Array, axis: usize, index_dtype: DType) -> Array {
    arg(ArgOp::Max, "argmax", x, axis, index_dtype)
}

/// The index of the smallest element along `axis` (`lax.argmin`), as `index_dtype`: the
/// first among ties, and a NaN counts as the smallest.
#[track_caller]
pub fn argmin(x: &Array, axis: usize, index_dtype: DType) -> Array {
    arg(ArgOp::Min, "argmin", x, axis, index_dtype)
}

/// `x` with new leading axes of extents `sizes` (`lax.broadcast`).
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// assert_eq!(lax::broadcast(&jnp::ones([3]), [2, 4]).shape(), &[2, 4, 3]);
/// ```
#[track_caller]
pub fn broadcast(x: &Array, sizes: impl AsRef<[usize]>) -> Array {
    let sizes = sizes.as_ref();
    let shape = [sizes, x.shape()].concat();
    broadcast_in_dim(x, shape, (sizes.len()..sizes.len() + x.ndim()).collect::<Vec<_>>())
}

/// `x` broadcast to `shape`, its axis `i` becoming output axis `broadcast_dimensions[i]`
/// (`lax.broadcast_in_dim`): the operand's axes keep their order, and each has the output's
/// extent or extent 1.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let y = lax::broadcast_in_dim(&jnp::arange(3), [3, 2], [0]);
/// assert_eq!(y.to_vec::<i32>().unwrap(), vec![0, 0, 1, 1, 2, 2]);
/// ```
#[track_caller]
pub fn broadcast_in_dim(
    x: &Array,
    shape: impl AsRef<[usize]>,
    broadcast_dimensions: impl AsRef<[usize]>,
) -> Array {
    let prim = BroadcastInDim {
        shape: shape.as_ref().to_vec(),
        broadcast_dimensions: broadcast_dimensions.as_ref().to_vec(),
    };
    if prim.shape == x.shape() && prim.broadcast_dimensions.iter().copied().eq(0..x.ndim()) {
        return x.clone();
    }
    bind1(&prim, &[x])
}

/// `x` with leading axes of length 1 added up to `rank` axes (`lax.broadcast_to_rank`); an
/// array of that rank or more is returned as it is.
#[track_caller]
pub fn broadcast_to_rank(x: &Array, rank: usize) -> Array {
    if x.ndim() >= rank {
        return x.clone();
    }
    broadcast(x, vec![1; rank - x.ndim()])
}

/// `x` with axes of length 1 inserted at `dimensions` of the result (`lax.expand_dims`;
/// negative positions count from the result's end).
#[track_caller]
pub fn expand_dims(x: &Array, dimensions: impl AsRef<[isize]>) -> Array {
    jnp::expand_dims(x, dimensions.as_ref())
}

/// `x` without its axes `dimensions`, which must have length 1 (`lax.squeeze`; negative
/// axes count from the end).
#[track_caller]
pub fn squeeze(x: &Array, dimensions: impl AsRef<[isize]>) -> Array {
    jnp::squeeze(x, dimensions.as_ref())
}

/// The elements of `x` in row-major order under the shape `new_sizes` (`lax.reshape`), after
/// transposing `x` by `dimensions` when given. Every extent is explicit (no `-1`).
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::arange(6).reshape([2, 3]);
/// let y = lax::reshape(&x, [3, 2], Some(&[1, 0][..]));
/// assert_eq!(y.to_vec::<i32>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
/// ```
#[track_caller]
pub fn reshape(x: &Array, new_sizes: impl AsRef<[usize]>, dimensions: Option<&[usize]>) -> Array {
    let x = match dimensions {
        Some(perm) => transpose(x, perm),
        None => x.clone(),
    };
    jnp::reshape(&x, new_sizes.as_ref().to_vec())
}

/// `x` with the order of its elements reversed along each of `dimensions` (`lax.rev`).
#[track_caller]
pub fn rev(x: &Array, dimensions: impl AsRef<[usize]>) -> Array {
    let dims = dimensions.as_ref();
    check_axes("rev", x, dims);
    jnp::flip(x, dims)
}

/// `x` with its axes permuted: output axis `i` is axis `permutation[i]` of `x`
/// (`lax.transpose`).
#[track_caller]
pub fn transpose(x: &Array, permutation: impl AsRef<[usize]>) -> Array {
    let permutation = permutation.as_ref().to_vec();
    if permutation.iter().copied().eq(0..x.ndim()) {
        return x.clone();
    }
    bind1(&Transpose { permutation }, &[x])
}

/// Panics unless every operand has the first one's dtype, as `jax.lax` requires.
#[track_caller]
fn same_dtypes<A: Borrow<Array>>(op: &str, tip: &str, operands: &[A]) {
    if let Some(first) = operands.first() {
        let d = first.borrow().dtype();
        if let Some(other) = operands.iter().map(|a| a.borrow().dtype()).find(|&e| e != d) {
            panic!(
                "lax.{op} requires arguments to have the same dtypes, got {d}, {other} \
                 (jnp.{tip} is a similar function that promotes its operands)"
            );
        }
    }
}

/// The operands joined along the existing axis `dimension` (`lax.concatenate`); they share a
/// dtype and agree on every other axis.
#[track_caller]
pub fn concatenate<A: Borrow<Array>>(operands: &[A], dimension: usize) -> Array {
    same_dtypes("concatenate", "concatenate", operands);
    jnp::concatenate(operands, axis_isize("concatenate", dimension))
}

/// The operands, of one shape and dtype, stacked along a new axis `axis` (`lax.stack`;
/// negative counts from the result's end).
#[track_caller]
pub fn stack<A: Borrow<Array>>(operands: &[A], axis: isize) -> Array {
    same_dtypes("stack", "stack", operands);
    jnp::stack(operands, axis)
}

/// The slices of `x` along `axis`, which is removed from each (`lax.unstack`).
#[track_caller]
pub fn unstack(x: &Array, axis: isize) -> Vec<Array> {
    jnp::unstack(x, axis)
}

/// An axis number as the signed type `jnp` takes.
#[track_caller]
fn axis_isize(op: &str, axis: usize) -> isize {
    isize::try_from(axis).unwrap_or_else(|_| panic!("{op}: axis {axis} is out of range"))
}

/// `0, 1, ..., size - 1` as a 1-D array of `dtype` (`lax.iota`).
///
/// ```
/// use rjax_runtime::{lax, DType};
/// assert_eq!(lax::iota(DType::F32, 3).to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0]);
/// ```
#[track_caller]
pub fn iota(dtype: DType, size: usize) -> Array {
    broadcasted_iota(dtype, [size], 0)
}

/// An array of `shape` and `dtype` whose elements are their index along `dimension`
/// (`lax.broadcasted_iota`).
#[track_caller]
pub fn broadcasted_iota(dtype: DType, shape: impl AsRef<[usize]>, dimension: usize) -> Array {
    let shape = shape.as_ref().to_vec();
    if dimension >= shape.len() {
        panic!(
            "broadcasted_iota: dimension {dimension} is not an axis of the shape {}",
            ShapeDisplay(&shape)
        );
    }
    if dtype.is_bool() {
        panic!("broadcasted_iota: dtype bool is not numeric");
    }
    bind1(&Iota { dtype: crate::dtype::canonicalize(dtype), shape, dimension }, &[])
}

/// An array of `shape` filled with the scalar `fill_value` (`lax.full`), of `dtype`, or of
/// the value's own dtype (weakly typed for a Rust scalar) when `dtype` is `None`.
///
/// ```
/// use rjax_runtime::{lax, DType};
/// let x = lax::full([2], 1.5, Some(DType::I32));
/// assert_eq!(x.to_vec::<i32>().unwrap(), vec![1, 1]);
/// ```
#[track_caller]
pub fn full(shape: impl AsRef<[usize]>, fill_value: impl ArrayLike, dtype: Option<DType>) -> Array {
    let v = fill_value.into_operand("full");
    filled("full", shape.as_ref(), v, dtype, None)
}

/// An array of `x`'s shape filled with the scalar `fill_value` (`lax.full_like`), of `dtype`
/// or else of `x`'s dtype.
#[track_caller]
pub fn full_like(x: &Array, fill_value: impl ArrayLike, dtype: Option<DType>) -> Array {
    let v = fill_value.into_operand("full_like");
    let weak = dtype.is_none() && x.is_weak();
    filled("full_like", x.shape(), v, Some(dtype.unwrap_or(x.dtype())), Some(weak))
}

#[track_caller]
fn filled(op: &str, shape: &[usize], v: Array, dtype: Option<DType>, weak: Option<bool>) -> Array {
    if v.ndim() != 0 {
        panic!("{op} must be called with a scalar fill_value, got an array of shape {}", v.aval());
    }
    let v = match dtype {
        Some(d) => jnp::convert(&v, crate::dtype::canonicalize(d), weak.unwrap_or(false)),
        None => v,
    };
    crate::shape::check(op, shape, v.dtype());
    broadcast(&v, shape)
}

/// Pairs of axes to contract and pairs of batch axes for [`dot_general`]:
/// `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`, as JAX's
/// `dimension_numbers`.
pub type DotDimensionNumbers<'a> = ((&'a [usize], &'a [usize]), (&'a [usize], &'a [usize]));

/// The general tensor contraction (`lax.dot_general`): `lhs` and `rhs` are contracted over
/// the paired contracting axes, with the paired batch axes kept in front; the output holds
/// the batch axes, then `lhs`'s other axes, then `rhs`'s. Operands of different dtypes are
/// promoted, as JAX does here.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let (a, b) = (jnp::ones([5, 2, 3]), jnp::ones([5, 3, 4]));
/// let c = lax::dot_general(&a, &b, ((&[2], &[1]), (&[0], &[0])));
/// assert_eq!(c.shape(), &[5, 2, 4]);
/// ```
#[track_caller]
pub fn dot_general(lhs: &Array, rhs: &Array, dimension_numbers: DotDimensionNumbers<'_>) -> Array {
    let ((lc, rc), (lb, rb)) = dimension_numbers;
    let ops = jnp::promote_all_for("dot_general", &[lhs.clone(), rhs.clone()]);
    let prim = DotGeneral {
        lhs_contract: lc.to_vec(),
        rhs_contract: rc.to_vec(),
        lhs_batch: lb.to_vec(),
        rhs_batch: rb.to_vec(),
    };
    bind1(&prim, &[&ops[0], &ops[1]])
}

/// The vector-vector, matrix-vector, vector-matrix or matrix-matrix product (`lax.dot`): the
/// last axis of `lhs` contracted with the first of `rhs`, both of rank 1 or 2 (use
/// [`dot_general`] for others).
#[track_caller]
pub fn dot(lhs: &Array, rhs: &Array) -> Array {
    if !(1..=2).contains(&lhs.ndim()) || !(1..=2).contains(&rhs.ndim()) {
        panic!(
            "lax.dot: dimension_numbers must be given (use lax::dot_general) when the product is \
             not a simple matrix-matrix, matrix-vector or vector-vector one; got shapes {} and {}",
            ShapeDisplay(lhs.shape()),
            ShapeDisplay(rhs.shape())
        );
    }
    dot_general(lhs, rhs, ((&[lhs.ndim() - 1], &[0]), (&[], &[])))
}

/// The element at `index` along `axis` (`lax.index_in_dim`; a negative index counts from the
/// end), that axis kept with length 1 when `keepdims`.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::arange(6).reshape([2, 3]);
/// assert_eq!(lax::index_in_dim(&x, -1, 1, false).to_vec::<i32>().unwrap(), vec![2, 5]);
/// ```
#[track_caller]
pub fn index_in_dim(x: &Array, index: isize, axis: isize, keepdims: bool) -> Array {
    let ax = normalize_axis("index_in_dim", axis, x.ndim());
    let n = x.shape()[ax];
    let at = if index < 0 { index + n as isize } else { index };
    if at < 0 || at >= n as isize {
        panic!("index_in_dim: index {index} is out of bounds for axis {axis} with size {n}");
    }
    let block = slice_in_dim(x, Some(at), Some(at + 1), 1, axis);
    if keepdims {
        block
    } else {
        jnp::squeeze(&block, axis)
    }
}

/// The elements `start..limit` with step `stride` along `axis` (`lax.slice_in_dim`), the
/// other axes whole. Negative bounds count from the end; `None` is the start or the end.
#[track_caller]
pub fn slice_in_dim(
    x: &Array,
    start_index: Option<isize>,
    limit_index: Option<isize>,
    stride: usize,
    axis: isize,
) -> Array {
    let ax = normalize_axis("slice_in_dim", axis, x.ndim());
    let n = x.shape()[ax] as isize;
    let bound = |i: Option<isize>, default: isize| match i {
        None => default,
        Some(i) if i < 0 => i + n,
        Some(i) => i,
    };
    let (start, limit) = (bound(start_index, 0), bound(limit_index, n));
    if start < 0 || limit < start || limit > n || stride == 0 {
        panic!(
            "slice_in_dim: start {start_index:?}, limit {limit_index:?} and stride {stride} do \
             not describe a slice of axis {axis} (size {n}) of an operand of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let mut starts = vec![0; x.ndim()];
    let mut limits = x.shape().to_vec();
    let mut strides = vec![1; x.ndim()];
    (starts[ax], limits[ax], strides[ax]) = (start as usize, limit as usize, stride);
    super::slice(x, starts, limits, Some(&strides))
}

/// `x` cut at `sizes` along `axis` (`lax.split`; negative counts from the end): consecutive
/// pieces whose extents along `axis` are `sizes`, which add up to that axis's length.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let parts = lax::split(&jnp::arange(6), [2, 4], 0);
/// assert_eq!(parts[1].to_vec::<i32>().unwrap(), vec![2, 3, 4, 5]);
/// ```
#[track_caller]
pub fn split(x: &Array, sizes: impl AsRef<[usize]>, axis: isize) -> Vec<Array> {
    let ax = normalize_axis("split", axis, x.ndim());
    let sizes = sizes.as_ref();
    let total = sizes.iter().try_fold(0usize, |a, &s| a.checked_add(s));
    if total != Some(x.shape()[ax]) {
        panic!(
            "split: the sizes {sizes:?} must add up to axis {axis} of the operand shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let mut at = 0;
    sizes
        .iter()
        .map(|&s| {
            at += s;
            jnp::slice_axis(x, ax, at - s, at)
        })
        .collect()
}

/// `x` repeated `reps[i]` times along each axis `i` (`lax.tile`); `reps` has one entry per
/// axis.
#[track_caller]
pub fn tile(x: &Array, reps: impl AsRef<[usize]>) -> Array {
    let reps = reps.as_ref();
    if reps.len() != x.ndim() {
        panic!(
            "tile: reps length must equal the rank of the operand, got {} reps for shape {}",
            reps.len(),
            ShapeDisplay(x.shape())
        );
    }
    jnp::tile(x, reps)
}

/// `x` with the axes `start_dimension..stop_dimension` merged into one (`lax.collapse`;
/// negative positions count from the end, `None` stops at the end).
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// assert_eq!(lax::collapse(&jnp::ones([2, 3, 4]), 1, None).shape(), &[2, 12]);
/// ```
#[track_caller]
pub fn collapse(x: &Array, start_dimension: isize, stop_dimension: Option<isize>) -> Array {
    let r = x.ndim() as isize;
    let at = |d: isize| if d < 0 { d + r } else { d };
    let (lo, hi) = (at(start_dimension), stop_dimension.map_or(r, at));
    if lo < 0 || hi > r || lo > hi {
        panic!(
            "collapse: dimensions {start_dimension}..{stop_dimension:?} are not a range of the \
             axes of an operand of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let (lo, hi) = (lo as usize, hi as usize);
    let merged: usize = x.shape()[lo..hi].iter().product();
    let shape = [&x.shape()[..lo], &[merged], &x.shape()[hi..]].concat();
    jnp::reshape(x, shape)
}
