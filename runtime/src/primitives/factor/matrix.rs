//! Matrix operations on stacks of matrices (`[..., m, n]`, the leading axes a batch) that the
//! factorizations' derivative rules are written with. They bind primitives directly, so the
//! rules differentiate and batch like any other program.

use crate::array::Array;
use crate::dtype::DType;
use crate::primitives::{bind1, BinaryOp, BroadcastInDim, DotGeneral, Iota, Transpose};
use crate::transform::ad::ops;

/// `x` with its last two axes swapped.
pub(crate) fn mt(x: &Array) -> Array {
    let r = x.ndim();
    let mut permutation: Vec<usize> = (0..r).collect();
    permutation.swap(r - 2, r - 1);
    bind1(&Transpose { permutation }, &[x])
}

/// The matrix products `a @ b` of two stacks with the same leading axes.
pub(crate) fn mm(a: &Array, b: &Array) -> Array {
    let r = a.ndim();
    let batch: Vec<usize> = (0..r - 2).collect();
    let dot = DotGeneral {
        lhs_contract: vec![r - 1],
        rhs_contract: vec![r - 2],
        lhs_batch: batch.clone(),
        rhs_batch: batch,
    };
    bind1(&dot, &[a, b])
}

/// Whether each position of matrices of `shape` lies on or below diagonal `k` (`lower`), or
/// on or above it.
fn triangle_mask(shape: &[usize], k: i64, lower: bool) -> Array {
    let r = shape.len();
    let iota =
        |d: usize| bind1(&Iota { dtype: DType::I64, shape: shape.to_vec(), dimension: d }, &[]);
    let (row, col) = (iota(r - 2), iota(r - 1));
    let offset = ops::sub(&col, &row);
    let k = ops::scalar(&offset, k as f64);
    let op = if lower { BinaryOp::Le } else { BinaryOp::Ge };
    bind1(&op, &[&offset, &k])
}

/// `x` with the elements above diagonal `k` zeroed (`jnp.tril`).
pub(crate) fn tril(x: &Array, k: i64) -> Array {
    let zero = ops::zeros(&x.aval());
    ops::select(&triangle_mask(x.shape(), k, true), x, &zero)
}

/// `x` with the elements below diagonal `k` zeroed (`jnp.triu`).
pub(crate) fn triu(x: &Array, k: i64) -> Array {
    let zero = ops::zeros(&x.aval());
    ops::select(&triangle_mask(x.shape(), k, false), x, &zero)
}

/// Identity matrices of `shape` (`[..., m, n]`, ones where row equals column) and `dtype`.
pub(crate) fn eye(shape: &[usize], dtype: DType) -> Array {
    let r = shape.len();
    let iota =
        |d: usize| bind1(&Iota { dtype: DType::I64, shape: shape.to_vec(), dimension: d }, &[]);
    ops::convert(&ops::eq(&iota(r - 2), &iota(r - 1)), dtype)
}

/// The diagonals of square matrices: `[..., n, n]` to `[..., n]`.
pub(crate) fn diagonal(x: &Array) -> Array {
    let masked = ops::mul(x, &eye(x.shape(), x.dtype()));
    ops::sum_axes(&masked, vec![x.ndim() - 1])
}

/// Square matrices with `v` (`[..., n]`) on their diagonals.
pub(crate) fn diag_embed(v: &Array) -> Array {
    let r = v.ndim();
    let n = v.shape()[r - 1];
    let mut shape = v.shape().to_vec();
    shape.push(n);
    let broadcast_dimensions = (0..r).collect();
    let rows = bind1(&BroadcastInDim { shape: shape.clone(), broadcast_dimensions }, &[v]);
    ops::mul(&rows, &eye(&shape, v.dtype()))
}

/// `v` (`[..., k]`) as one row per stack: `[..., 1, k]`.
pub(crate) fn as_row(v: &Array) -> Array {
    let mut shape = v.shape().to_vec();
    shape.insert(v.ndim() - 1, 1);
    ops::reshape(v, &shape)
}

/// `v` (`[..., k]`) as one column per stack: `[..., k, 1]`.
pub(crate) fn as_col(v: &Array) -> Array {
    let mut shape = v.shape().to_vec();
    shape.push(1);
    ops::reshape(v, &shape)
}

/// `(x + x^T) / 2`.
pub(crate) fn symmetrize(x: &Array) -> Array {
    ops::scale(&ops::add(x, &mt(x)), 0.5)
}

/// `x` with axis `axis` cut or zero-padded at its end to `len` elements.
pub(crate) fn resize(x: &Array, axis: usize, len: usize) -> Array {
    if x.shape()[axis] == len {
        return x.clone();
    }
    let r = x.ndim();
    let mut high = vec![0i64; r];
    high[axis] = len as i64 - x.shape()[axis] as i64;
    let pad = crate::primitives::Pad { low: vec![0; r], high, interior: vec![0; r] };
    bind1(&pad, &[x, &ops::scalar(x, 0.0)])
}

/// `1 / x`.
pub(crate) fn recip(x: &Array) -> Array {
    ops::unary(crate::primitives::UnaryOp::Reciprocal, x)
}
