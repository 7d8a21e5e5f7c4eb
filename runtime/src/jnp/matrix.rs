//! Diagonals, traces, triangles and coordinate grids, as in `jax.numpy`: [`diag`],
//! [`diagonal`], [`trace`], [`tril`], [`triu`] and [`meshgrid`].
//!
//! Each is made of slicing, padding, selection and broadcasting, so it runs eagerly, under
//! `#[jit]` and `#[vmap]`, and differentiates as those do (a diagonal's cotangent lands back on
//! the diagonal, a triangle's on the triangle).

use super::{
    arange, broadcast_to, greater_equal, less_equal, moveaxis, promote_all, reshape, sum_axes,
    where_,
};
use crate::primitives::{bind1, Pad, Slice};
use crate::shape::{normalize_axis, ShapeDisplay};
use crate::Array;

/// The diagonal of the last two axes of `x` at `offset` (above the main diagonal when
/// positive): `x[..., i, i + offset]`, as a new last axis. It is a strided slice of the
/// flattened matrices, so no gather is needed.
fn trailing_diagonal(x: &Array, offset: isize) -> Array {
    let rank = x.ndim();
    let (n, m) = (x.shape()[rank - 2], x.shape()[rank - 1]);
    let (len, start) = if offset >= 0 {
        (n.min(m.saturating_sub(offset as usize)), offset as usize)
    } else {
        (m.min(n.saturating_sub(offset.unsigned_abs())), offset.unsigned_abs() * m)
    };
    let mut flat_shape = x.shape()[..rank - 2].to_vec();
    flat_shape.push(n * m);
    let flat = reshape(x, flat_shape.as_slice());
    let (start, limit) = if len == 0 { (0, 0) } else { (start, start + (len - 1) * (m + 1) + 1) };
    let mut slice = Slice {
        start_indices: vec![0; rank - 1],
        limit_indices: flat_shape,
        strides: vec![1; rank - 1],
    };
    slice.start_indices[rank - 2] = start;
    slice.limit_indices[rank - 2] = limit;
    slice.strides[rank - 2] = m + 1;
    bind1(&slice, &[&flat])
}

/// The diagonal at `offset` of the matrices spanned by `axis1` and `axis2` (`jnp.diagonal`):
/// those two axes are removed and the diagonal becomes the last axis.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(6).reshape([2, 3]);
/// assert_eq!(jnp::diagonal(&x, 0, 0, 1).to_vec::<i32>().unwrap(), vec![0, 4]);
/// assert_eq!(jnp::diagonal(&x, 1, 0, 1).to_vec::<i32>().unwrap(), vec![1, 5]);
/// ```
#[track_caller]
pub fn diagonal(x: &Array, offset: isize, axis1: isize, axis2: isize) -> Array {
    if x.ndim() < 2 {
        panic!(
            "diagonal: requires an array of at least 2 axes, got shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let a = normalize_axis("diagonal", axis1, x.ndim());
    let b = normalize_axis("diagonal", axis2, x.ndim());
    if a == b {
        panic!(
            "diagonal: axis1 and axis2 must differ, got axis {a} twice for an array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let rank = x.ndim() as isize;
    let moved = moveaxis(x, vec![a as isize, b as isize], vec![rank - 2, rank - 1]);
    trailing_diagonal(&moved, offset)
}

/// `jnp.diag`: for a 1-D `v`, the square matrix with `v` on the diagonal at offset `k` (above
/// the main one when positive) and zeros elsewhere; for a 2-D `v`, its diagonal at `k`.
///
/// ```
/// use rjax_runtime::jnp;
/// let m = jnp::diag(&jnp::array(&[1, 2]), 1);
/// assert_eq!(m.shape(), &[3, 3]);
/// assert_eq!(m.to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 2, 0, 0, 0]);
/// ```
#[track_caller]
pub fn diag(v: &Array, k: isize) -> Array {
    match v.ndim() {
        1 => diag_matrix(v, k),
        2 => trailing_diagonal(v, k),
        _ => panic!("diag: the input must be 1-D or 2-D, got shape {}", ShapeDisplay(v.shape())),
    }
}

/// The `N x N` matrix (`N = len(v) + |k|`) with `v` on diagonal `k`: `v` with `N` zeros padded
/// between neighbours lands on every `(N + 1)`-th element of the flattened matrix.
fn diag_matrix(v: &Array, k: isize) -> Array {
    let n = v.shape()[0];
    let side = n + k.unsigned_abs();
    let start = if k >= 0 { k as usize } else { k.unsigned_abs() * side };
    if n == 0 {
        return super::zeros_dtype([side, side], v.dtype());
    }
    // Elements from `start` to the last diagonal one, then zeros to the end.
    let high = side * side - start - 1 - (n - 1) * (side + 1);
    let pad = Pad { low: vec![start as i64], high: vec![high as i64], interior: vec![side] };
    let zero = super::convert(&Array::from(0i32), v.dtype(), false);
    bind1(&pad, &[v, &zero]).reshape([side, side])
}

/// The sum along the diagonal at `offset` of the matrices spanned by `axis1` and `axis2`
/// (`jnp.trace`).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(9).reshape([3, 3]);
/// assert_eq!(jnp::trace(&x, 0, 0, 1).item::<i32>().unwrap(), 12);
/// ```
#[track_caller]
pub fn trace(x: &Array, offset: isize, axis1: isize, axis2: isize) -> Array {
    if x.ndim() < 2 {
        panic!(
            "trace: requires an array of at least 2 axes, got shape {}",
            ShapeDisplay(x.shape())
        );
    }
    sum_axes(&diagonal(x, offset, axis1, axis2), -1, false)
}

/// Whether element `(i, j)` of the last two axes lies on or below diagonal `k` (`below`) or
/// on or above it: a boolean mask of the trailing matrix shape.
fn triangle_mask(rows: usize, cols: usize, k: isize, below: bool) -> Array {
    let i = arange(rows).reshape([rows, 1]);
    let j = arange(cols).reshape([1, cols]);
    let diff = &j - &i;
    let k = k.clamp(-(rows as isize) - 1, cols as isize + 1);
    if below {
        less_equal(&diff, k)
    } else {
        greater_equal(&diff, k)
    }
}

#[track_caller]
fn triangle(op: &str, x: &Array, k: isize, below: bool) -> Array {
    if x.ndim() < 2 {
        panic!("{op}: requires an array of at least 2 axes, got shape {}", ShapeDisplay(x.shape()));
    }
    let rank = x.ndim();
    let mask = triangle_mask(x.shape()[rank - 2], x.shape()[rank - 1], k, below);
    where_(&mask, x, super::zeros_dtype([], x.dtype()))
}

/// The lower triangle of the last two axes, on and below diagonal `k`; zeros above
/// (`jnp.tril`).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::ones_dtype([2, 2], rjax_runtime::DType::I32);
/// assert_eq!(jnp::tril(&x, 0).to_vec::<i32>().unwrap(), vec![1, 0, 1, 1]);
/// ```
#[track_caller]
pub fn tril(x: &Array, k: isize) -> Array {
    triangle("tril", x, k, true)
}

/// The upper triangle of the last two axes, on and above diagonal `k`; zeros below
/// (`jnp.triu`).
#[track_caller]
pub fn triu(x: &Array, k: isize) -> Array {
    triangle("triu", x, k, false)
}

/// How [`meshgrid`] orders its outputs' axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Indexing {
    /// Cartesian (`indexing="xy"`, JAX's default): the first two axes are swapped, so for
    /// inputs of lengths `m` and `n` the outputs are `n x m`.
    Xy,
    /// Matrix (`indexing="ij"`): output axis `i` runs along input `i`.
    Ij,
}

/// Coordinate grids from 1-D coordinate vectors (`jnp.meshgrid(*xs, indexing=..)`): output
/// `i` repeats `xs[i]` along its own axis. The inputs are promoted to a common dtype.
///
/// ```
/// use rjax_runtime::jnp::{self, Indexing};
/// let g = jnp::meshgrid(&[&jnp::arange(3), &jnp::arange(2)], Indexing::Xy);
/// assert_eq!(g[0].shape(), &[2, 3]);
/// assert_eq!(g[1].to_vec::<i32>().unwrap(), vec![0, 0, 0, 1, 1, 1]);
/// ```
#[track_caller]
pub fn meshgrid(xs: &[&Array], indexing: Indexing) -> Vec<Array> {
    for x in xs {
        if x.ndim() != 1 {
            panic!("meshgrid: every input must be 1-D, got shape {}", ShapeDisplay(x.shape()));
        }
    }
    let xs = promote_all(&xs.iter().map(|&x| x.clone()).collect::<Vec<_>>());
    let mut shape: Vec<usize> = xs.iter().map(|x| x.shape()[0]).collect();
    // Which output axis input `i` runs along.
    let mut axis_of: Vec<usize> = (0..xs.len()).collect();
    if indexing == Indexing::Xy && xs.len() >= 2 {
        shape.swap(0, 1);
        axis_of.swap(0, 1);
    }
    xs.iter()
        .zip(axis_of)
        .map(|(x, axis)| {
            let mut along = vec![1; shape.len()];
            along[axis] = x.shape()[0];
            broadcast_to(&reshape(x, along.as_slice()), shape.as_slice())
        })
        .collect()
}

/// An `n x m` array (`m` defaults to `n`) with ones on and below the `k`-th diagonal and zeros
/// above (`jnp.tri`), of `dtype` (the default float when `None`).
#[track_caller]
pub fn tri(n: usize, m: Option<usize>, k: isize, dtype: Option<crate::DType>) -> Array {
    let m = m.unwrap_or(n);
    let rows = super::arange(n).reshape([n, 1]);
    let cols = super::arange(m).reshape([1, m]);
    let below = super::less_equal(&cols, super::add(&rows, k as i64));
    super::astype(&below, dtype.unwrap_or(crate::dtype::default_float()))
}

/// The row and column indices of the lower triangle of an `n x m` matrix, on and below the
/// `k`-th diagonal, in row-major order (`jnp.tril_indices`).
#[track_caller]
pub fn tril_indices(n: usize, k: isize, m: Option<usize>) -> (Array, Array) {
    let mut ij = super::nonzero(&tri(n, m, k, Some(crate::DType::Bool)), None, None);
    let j = ij.pop().expect("two axes");
    (ij.pop().expect("two axes"), j)
}

/// The row and column indices of the upper triangle of an `n x m` matrix, on and above the
/// `k`-th diagonal, in row-major order (`jnp.triu_indices`).
#[track_caller]
pub fn triu_indices(n: usize, k: isize, m: Option<usize>) -> (Array, Array) {
    let above = super::logical_not(&tri(n, m, k - 1, Some(crate::DType::Bool)));
    let mut ij = super::nonzero(&above, None, None);
    let j = ij.pop().expect("two axes");
    (ij.pop().expect("two axes"), j)
}

/// The indices of the main diagonal of an `n x n x ..` array of `ndim` axes
/// (`jnp.diag_indices`): `ndim` copies of `0..n`.
pub fn diag_indices(n: usize, ndim: usize) -> Vec<Array> {
    (0..ndim).map(|_| super::arange(n)).collect()
}

/// The `n x n` identity matrix of `dtype` (`jnp.identity`).
#[track_caller]
pub fn identity(n: usize, dtype: crate::DType) -> Array {
    super::eye_dtype(n, n, 0, dtype)
}
