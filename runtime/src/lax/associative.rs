//! `lax.associative_scan` and the cumulative reductions built on it (`lax.cumsum`,
//! `lax.cumprod`, `lax.cummax`, `lax.cummin`, `lax.cumlogsumexp`).
//!
//! The scan is JAX's parallel prefix (Blelloch's odd/even recursion): it combines adjacent
//! pairs, scans the half-length result recursively and fills in the even positions, so a scan
//! of `n` elements is `O(log n)` calls of the combining function on whole arrays. Built only
//! from slices, pads, concatenation and the user's function, it is traced, differentiated and
//! batched like any composition of those.

use crate::array::Array;
use crate::dtype::DType;
use crate::jnp;
use crate::shape::ShapeDisplay;
use crate::tree::{self, Unflatten};

/// An inclusive scan of `elems` along `axis` with the associative function `f`, as
/// `jax.lax.associative_scan`: element `i` of the result is `f(..f(f(e0, e1), e2).., ei)`.
///
/// `elems` is a pytree whose leaves share the length of `axis`; `f` combines two pytrees of that
/// structure whose leaves are slices of the leaves along `axis` (it must work on whole arrays
/// elementwise, and be associative). With `reverse` the scan runs from the end, as JAX's does:
/// the elements are reversed, scanned and the result reversed back. Negative axes count from
/// the end.
///
/// ```
/// use rjax_runtime::{lax, Array};
/// let x = Array::from_shape_vec([4], vec![1.0f32, 2.0, 3.0, 4.0]);
/// let sums = lax::associative_scan(|a: Array, b: Array| a + b, x, false, 0);
/// assert_eq!(sums.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 6.0, 10.0]);
/// ```
#[track_caller]
pub fn associative_scan<T: Unflatten>(
    f: impl Fn(T, T) -> T,
    elems: T,
    reverse: bool,
    axis: isize,
) -> T {
    let (mut leaves, def) = tree::flatten(&elems);
    let Some(first) = leaves.first() else {
        panic!("associative_scan: `elems` has no arrays to scan");
    };
    let axis = resolve_axis(axis, first.ndim());
    let length = first.shape()[axis];
    for leaf in &leaves {
        if leaf.ndim() <= axis || leaf.shape()[axis] != length {
            panic!(
                "associative_scan: every leaf of `elems` needs axis {axis} of length {length} (the \
                 first leaf's), got shape {}",
                ShapeDisplay(leaf.shape())
            );
        }
    }
    if reverse {
        leaves = leaves.iter().map(|x| jnp::flip(x, axis as isize)).collect();
    }
    let combine = |a: Vec<Array>, b: Vec<Array>| -> Vec<Array> {
        let out = f(tree::unflatten(&def, a), tree::unflatten(&def, b));
        let (leaves, out_def) = tree::flatten(&out);
        if out_def != def {
            panic!("associative_scan: the function must return the structure of `elems`");
        }
        leaves
    };
    let mut scanned = scan_leaves(&combine, &leaves, axis);
    if reverse {
        scanned = scanned.iter().map(|x| jnp::flip(x, axis as isize)).collect();
    }
    tree::unflatten(&def, scanned)
}

#[track_caller]
fn resolve_axis(axis: isize, ndim: usize) -> usize {
    let resolved = if axis < 0 { axis + ndim as isize } else { axis };
    if resolved < 0 || resolved >= ndim as isize {
        panic!("associative_scan: axis {axis} is out of range for an array of {ndim} dimensions");
    }
    resolved as usize
}

/// The odd/even recursion on flat lists of leaves.
fn scan_leaves(
    combine: &dyn Fn(Vec<Array>, Vec<Array>) -> Vec<Array>,
    elems: &[Array],
    axis: usize,
) -> Vec<Array> {
    let n = elems[0].shape()[axis];
    if n < 2 {
        return elems.to_vec();
    }
    let every = |xs: &[Array], start: usize, stop: usize, stride: usize| -> Vec<Array> {
        xs.iter().map(|x| slice_in_dim(x, start, stop, stride, axis)).collect()
    };
    // Pairs (e0 e1), (e2 e3), ... combined, then scanned: the results at odd positions.
    let pairs = combine(every(elems, 0, n - 1, 2), every(elems, 1, n, 2));
    let odd = scan_leaves(combine, &pairs, axis);
    // The even positions after the first: an odd result combined with the next element.
    let even_rest = if n.is_multiple_of(2) {
        let m = odd[0].shape()[axis];
        combine(every(&odd, 0, m - 1, 1), every(elems, 2, n, 2))
    } else {
        combine(odd.clone(), every(elems, 2, n, 2))
    };
    elems
        .iter()
        .zip(even_rest)
        .zip(&odd)
        .map(|((elem, rest), odd)| {
            let even = jnp::concatenate(&[slice_in_dim(elem, 0, 1, 1, axis), rest], axis as isize);
            interleave(&even, odd, axis)
        })
        .collect()
}

fn slice_in_dim(x: &Array, start: usize, stop: usize, stride: usize, axis: usize) -> Array {
    let mut starts = vec![0; x.ndim()];
    let mut limits = x.shape().to_vec();
    let mut strides = vec![1; x.ndim()];
    starts[axis] = start;
    limits[axis] = stop.max(start);
    strides[axis] = stride;
    super::slice(x, starts, limits, Some(&strides))
}

/// `a0 b0 a1 b1 ..` along `axis`, where `a` is as long as `b` or one longer: each is spread
/// out by interior padding and the two are added (or-ed for booleans), as JAX does.
fn interleave(a: &Array, b: &Array, axis: usize) -> Array {
    let same = a.shape()[axis] == b.shape()[axis];
    let mut a_pad = vec![(0i64, 0i64, 0usize); a.ndim()];
    let mut b_pad = a_pad.clone();
    a_pad[axis] = (0, if same { 1 } else { 0 }, 1);
    b_pad[axis] = (1, if same { 0 } else { 1 }, 1);
    let zero = |x: &Array| jnp::zeros_dtype([], x.dtype());
    let a = super::pad(a, zero(a), &a_pad);
    let b = super::pad(b, zero(b), &b_pad);
    if a.dtype() == DType::Bool {
        jnp::logical_or(&a, &b)
    } else {
        &a + &b
    }
}

/// The cumulative reduction `op` along `axis`, from the end with `reverse`.
fn cumulative(
    x: &Array,
    axis: isize,
    reverse: bool,
    op: fn(&Array, Option<isize>) -> Array,
) -> Array {
    let axis = resolve_axis(axis, x.ndim()) as isize;
    if reverse {
        jnp::flip(&op(&jnp::flip(x, axis), Some(axis)), axis)
    } else {
        op(x, Some(axis))
    }
}

/// `jax.lax.cumsum`: running sums along `axis`, from the end with `reverse`.
#[track_caller]
pub fn cumsum(x: &Array, axis: isize, reverse: bool) -> Array {
    cumulative(x, axis, reverse, jnp::cumsum)
}

/// `jax.lax.cumprod`: running products along `axis`, from the end with `reverse`.
#[track_caller]
pub fn cumprod(x: &Array, axis: isize, reverse: bool) -> Array {
    cumulative(x, axis, reverse, jnp::cumprod)
}

/// `jax.lax.cummax`: running maxima along `axis`, from the end with `reverse`.
#[track_caller]
pub fn cummax(x: &Array, axis: isize, reverse: bool) -> Array {
    cumulative(x, axis, reverse, jnp::cummax)
}

/// `jax.lax.cummin`: running minima along `axis`, from the end with `reverse`.
#[track_caller]
pub fn cummin(x: &Array, axis: isize, reverse: bool) -> Array {
    cumulative(x, axis, reverse, jnp::cummin)
}

/// `jax.lax.cumlogsumexp`: `log(cumsum(exp(x)))` along `axis` without overflow, from the end
/// with `reverse`; an [`associative_scan`] of `jnp::logaddexp`, whose derivative it takes.
///
/// ```
/// use rjax_runtime::{lax, Array};
/// let x = Array::from_shape_vec([3], vec![0.0f32, 0.0, 1000.0]);
/// let y = lax::cumlogsumexp(&x, 0, false).to_vec::<f32>().unwrap();
/// assert!((y[1] - 2f32.ln()).abs() < 1e-6 && y[2] == 1000.0);
/// ```
#[track_caller]
pub fn cumlogsumexp(x: &Array, axis: isize, reverse: bool) -> Array {
    if !x.dtype().is_float() {
        panic!("cumlogsumexp: needs a float operand, got {}", x.aval());
    }
    associative_scan(|a: Array, b: Array| jnp::logaddexp(&a, &b), x.clone(), reverse, axis)
}
