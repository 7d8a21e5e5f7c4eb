//! `norm`: vector and matrix norms, as `jnp.linalg.norm`.

use super::svdvals;
use crate::jnp;
use crate::shape::ShapeDisplay;
use crate::Array;

/// The order of a [`norm`] (NumPy's `ord`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    /// A number: for vectors `sum(|x|^p)^(1/p)` (with `inf`, `-inf` the largest and smallest
    /// `|x|`, and `0` the count of nonzeros); for matrices `1`, `-1`, `2`, `-2`, `inf` and
    /// `-inf` (largest/smallest column sum, singular value, row sum).
    P(f64),
    /// The Frobenius norm of a matrix.
    Fro,
    /// The nuclear norm of a matrix (the sum of its singular values).
    Nuc,
}

/// The 2-norm of all of `x`'s elements, as `jnp.linalg.norm(x)`.
#[track_caller]
pub fn norm(x: &Array) -> Array {
    norm_with(x, None, None, false)
}

/// `jnp.linalg.norm(x, ord, axis, keepdims)`: a vector norm over one axis, a matrix norm over
/// two (rows then columns), with `ord` as [`NormOrd`] (`None`: the 2-norm of vectors, the
/// Frobenius norm of matrices). Without `axis`, `ord = None` takes the 2-norm of all
/// elements; with an `ord`, `x` must be a vector or a matrix. Orders that do not fit the
/// number of axes panic, naming them.
#[track_caller]
pub fn norm_with(x: &Array, ord: Option<NormOrd>, axis: Option<&[isize]>, keepdims: bool) -> Array {
    let x = jnp::promote_inexact(std::slice::from_ref(x)).remove(0);
    let all: Vec<usize> = (0..x.ndim()).collect();
    let axes: Vec<usize> = match axis {
        None if ord.is_none() => return frobenius(&x, &all, keepdims),
        None => all,
        Some(axes) => axes.iter().map(|&a| canonical_axis(&x, a)).collect(),
    };
    match axes[..] {
        [a] => vector_norm(&x, ord, a, keepdims),
        [r, c] if r != c => matrix_norm(&x, ord, (r, c), keepdims),
        _ => panic!(
            "norm: pass one axis for a vector norm or two distinct axes for a matrix norm, got \
             axes {axes:?} of an array of shape {}",
            ShapeDisplay(x.shape())
        ),
    }
}

#[track_caller]
fn canonical_axis(x: &Array, axis: isize) -> usize {
    let r = x.ndim() as isize;
    if axis < -r || axis >= r {
        panic!(
            "norm: axis {axis} is out of bounds for an array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    axis.rem_euclid(r.max(1)) as usize
}

fn axes_of(axes: &[usize]) -> Vec<isize> {
    axes.iter().map(|&a| a as isize).collect()
}

/// `sqrt(sum(x^2))` over `axes`.
fn frobenius(x: &Array, axes: &[usize], keepdims: bool) -> Array {
    jnp::sqrt(&jnp::sum_axes(&jnp::multiply(x, x), axes_of(axes), keepdims))
}

#[track_caller]
fn vector_norm(x: &Array, ord: Option<NormOrd>, axis: usize, keepdims: bool) -> Array {
    let p = match ord {
        None => 2.0,
        Some(NormOrd::P(p)) => p,
        Some(other) => {
            panic!("norm: order {other:?} is a matrix norm; a vector norm needs a number")
        }
    };
    let ax = axis as isize;
    let abs = jnp::abs(x);
    if p == 2.0 {
        frobenius(x, &[axis], keepdims)
    } else if p == f64::INFINITY {
        jnp::max_axes(&abs, ax, keepdims)
    } else if p == f64::NEG_INFINITY {
        jnp::min_axes(&abs, ax, keepdims)
    } else if p == 0.0 {
        jnp::sum_axes(&jnp::not_equal(x, 0).astype(x.dtype()), ax, keepdims)
    } else if p == 1.0 {
        jnp::sum_axes(&abs, ax, keepdims)
    } else {
        let full = |v: f64| jnp::full_dtype([], v, x.dtype());
        let sum = jnp::sum_axes(&jnp::pow(&abs, full(p)), ax, keepdims);
        jnp::pow(&sum, full(1.0 / p))
    }
}

#[track_caller]
fn matrix_norm(
    x: &Array,
    ord: Option<NormOrd>,
    (row, col): (usize, usize),
    keepdims: bool,
) -> Array {
    let abs = jnp::abs(x);
    // The largest or smallest over `outer` of the sums over `inner`.
    let sums = |inner: usize, outer: usize, largest: bool| {
        let s = jnp::sum_axes(&abs, inner as isize, keepdims);
        let outer = if !keepdims && outer > inner { outer - 1 } else { outer } as isize;
        if largest {
            jnp::max_axes(&s, outer, keepdims)
        } else {
            jnp::min_axes(&s, outer, keepdims)
        }
    };
    let singular = |reduce: fn(&Array) -> Array| {
        let moved = jnp::moveaxis(x, [row as isize, col as isize], [-2, -1]);
        let y = reduce(&svdvals(&moved));
        if keepdims {
            let mut axes = [row as isize, col as isize];
            axes.sort_unstable();
            jnp::expand_dims(&y, axes.to_vec())
        } else {
            y
        }
    };
    match ord {
        None | Some(NormOrd::Fro) => frobenius(x, &[row, col], keepdims),
        Some(NormOrd::Nuc) => singular(|s| jnp::sum_axes(s, -1, false)),
        Some(NormOrd::P(1.0)) => sums(row, col, true),
        Some(NormOrd::P(-1.0)) => sums(row, col, false),
        Some(NormOrd::P(p)) if p == f64::INFINITY => sums(col, row, true),
        Some(NormOrd::P(p)) if p == f64::NEG_INFINITY => sums(col, row, false),
        Some(NormOrd::P(2.0)) => singular(|s| jnp::max_axes(s, -1, false)),
        Some(NormOrd::P(-2.0)) => singular(|s| jnp::min_axes(s, -1, false)),
        Some(NormOrd::P(p)) => panic!(
            "norm: invalid order {p} for a matrix norm (1, -1, 2, -2, inf, -inf, Fro or Nuc)"
        ),
    }
}
