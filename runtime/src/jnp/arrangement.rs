//! Rearranging and joining, as in `jax.numpy`: [`roll`], [`rot90`], [`hstack`], [`vstack`],
//! [`column_stack`], [`atleast_1d`]/[`atleast_2d`]/[`atleast_3d`] and [`array_split`].
//!
//! All are slices, reversals, transposes and concatenations, so they differentiate, batch
//! and trace like those.

use std::borrow::Borrow;

use super::{concatenate, flip, reshape, slice_axis, swapaxes};
use crate::shape::{normalize_axis, ShapeDisplay};
use crate::Array;

/// Shifts elements by `shift` positions along `axis`, those pushed off the end coming back
/// at the start (`jnp.roll`); `axis` `None` rolls the flattened array and keeps the shape.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(5);
/// assert_eq!(jnp::roll(&x, 2, None).to_vec::<i32>().unwrap(), vec![3, 4, 0, 1, 2]);
/// assert_eq!(jnp::roll(&x, -1, Some(0)).to_vec::<i32>().unwrap(), vec![1, 2, 3, 4, 0]);
/// ```
#[track_caller]
pub fn roll(x: &Array, shift: isize, axis: Option<isize>) -> Array {
    let Some(axis) = axis else {
        return reshape(&roll(&x.ravel(), shift, Some(0)), x.shape());
    };
    if x.ndim() == 0 {
        panic!("roll: cannot roll along an axis of a 0-d array");
    }
    let ax = normalize_axis("roll", axis, x.ndim());
    let n = x.shape()[ax];
    if n == 0 {
        return x.clone();
    }
    let split = n - shift.rem_euclid(n as isize) as usize;
    if split == n {
        return x.clone();
    }
    concatenate(&[slice_axis(x, ax, split, n), slice_axis(x, ax, 0, split)], ax as isize)
}

/// Rotates by 90 degrees `k` times in the plane of `axes`, from the first axis towards the
/// second (`jnp.rot90(x, k, axes)`; `(0, 1)` is JAX's default).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(4).reshape([2, 2]);
/// assert_eq!(jnp::rot90(&x, 1, (0, 1)).to_vec::<i32>().unwrap(), vec![1, 3, 0, 2]);
/// ```
#[track_caller]
pub fn rot90(x: &Array, k: isize, axes: (isize, isize)) -> Array {
    if x.ndim() < 2 {
        panic!(
            "rot90: requires an array of at least 2 axes, got shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let a = normalize_axis("rot90", axes.0, x.ndim());
    let b = normalize_axis("rot90", axes.1, x.ndim());
    if a == b {
        panic!("rot90: the two axes must differ, got axis {a} twice");
    }
    let (a, b) = (a as isize, b as isize);
    match k.rem_euclid(4) {
        0 => x.clone(),
        1 => swapaxes(&flip(x, b), a, b),
        2 => flip(x, vec![a, b]),
        _ => flip(&swapaxes(x, a, b), b),
    }
}

/// `x` with at least one axis: a 0-d array becomes shape `[1]` (`jnp.atleast_1d`).
pub fn atleast_1d(x: &Array) -> Array {
    match x.ndim() {
        0 => x.reshape([1]),
        _ => x.clone(),
    }
}

/// `x` with at least two axes: shape `[]` becomes `[1, 1]`, `[n]` becomes `[1, n]`
/// (`jnp.atleast_2d`).
pub fn atleast_2d(x: &Array) -> Array {
    match x.ndim() {
        0 => x.reshape([1, 1]),
        1 => x.reshape([1, x.shape()[0]]),
        _ => x.clone(),
    }
}

/// `x` with at least three axes: `[]` becomes `[1, 1, 1]`, `[n]` becomes `[1, n, 1]` and
/// `[m, n]` becomes `[m, n, 1]` (`jnp.atleast_3d`).
pub fn atleast_3d(x: &Array) -> Array {
    match x.ndim() {
        0 => x.reshape([1, 1, 1]),
        1 => x.reshape([1, x.shape()[0], 1]),
        2 => x.reshape([x.shape()[0], x.shape()[1], 1]),
        _ => x.clone(),
    }
}

/// Joins arrays along their second axis, or their only axis for 1-D ones (`jnp.hstack`).
///
/// ```
/// use rjax_runtime::jnp;
/// let (a, b) = (jnp::arange(2), jnp::arange(3));
/// assert_eq!(jnp::hstack(&[&a, &b]).to_vec::<i32>().unwrap(), vec![0, 1, 0, 1, 2]);
/// ```
#[track_caller]
pub fn hstack<A: Borrow<Array>>(arrays: &[A]) -> Array {
    let arrays: Vec<Array> = arrays.iter().map(|a| atleast_1d(a.borrow())).collect();
    let axis = if arrays.first().is_some_and(|a| a.ndim() == 1) { 0 } else { 1 };
    concatenate(&arrays, axis)
}

/// Joins arrays along their first axis, 1-D ones becoming rows (`jnp.vstack`).
#[track_caller]
pub fn vstack<A: Borrow<Array>>(arrays: &[A]) -> Array {
    let arrays: Vec<Array> = arrays.iter().map(|a| atleast_2d(a.borrow())).collect();
    concatenate(&arrays, 0)
}

/// Joins arrays as columns: 1-D ones become columns, 2-D ones join along their second axis
/// (`jnp.column_stack`).
#[track_caller]
pub fn column_stack<A: Borrow<Array>>(arrays: &[A]) -> Array {
    let arrays: Vec<Array> = arrays
        .iter()
        .map(|a| {
            let a = a.borrow();
            if a.ndim() < 2 {
                atleast_1d(a).reshape([-1, 1])
            } else {
                a.clone()
            }
        })
        .collect();
    concatenate(&arrays, 1)
}

/// Splits `x` along `axis` into `sections` parts whose lengths differ by at most one, the
/// longer ones first (`jnp.array_split`; [`split`](super::split) requires equal parts).
///
/// ```
/// use rjax_runtime::jnp;
/// let parts = jnp::array_split(&jnp::arange(7), 3, 0);
/// assert_eq!(parts.iter().map(|p| p.size()).collect::<Vec<_>>(), vec![3, 2, 2]);
/// ```
#[track_caller]
pub fn array_split(x: &Array, sections: usize, axis: isize) -> Vec<Array> {
    if sections == 0 {
        panic!("array_split: the number of sections must be positive");
    }
    if x.ndim() == 0 {
        panic!("array_split: cannot split a 0-d array");
    }
    let ax = normalize_axis("array_split", axis, x.ndim());
    let n = x.shape()[ax];
    let (base, extra) = (n / sections, n % sections);
    let mut start = 0;
    (0..sections)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let part = slice_axis(x, ax, start, start + len);
            start += len;
            part
        })
        .collect()
}

/// `x` reversed along its second axis (`jnp.fliplr`); needs at least 2 axes.
#[track_caller]
pub fn fliplr(x: &Array) -> Array {
    if x.ndim() < 2 {
        panic!("fliplr: needs an array of at least 2 axes, got shape {}", ShapeDisplay(x.shape()));
    }
    super::flip(x, 1)
}

/// `x` reversed along its first axis (`jnp.flipud`); needs at least 1 axis.
#[track_caller]
pub fn flipud(x: &Array) -> Array {
    if x.ndim() < 1 {
        panic!("flipud: needs an array of at least 1 axis, got a 0-d array");
    }
    super::flip(x, 0)
}

/// The arrays joined along the third axis after [`atleast_3d`] (`jnp.dstack`).
#[track_caller]
pub fn dstack<A: Borrow<Array>>(arrays: &[A]) -> Array {
    let parts: Vec<Array> = arrays.iter().map(|a| atleast_3d(a.borrow())).collect();
    super::concatenate(&parts, 2)
}

/// [`split`](super::split) along the second axis (the first for 1-D arrays), as
/// `jnp.hsplit`.
#[track_caller]
pub fn hsplit(x: &Array, sections: impl Into<super::Sections>) -> Vec<Array> {
    if x.ndim() == 0 {
        panic!("hsplit: needs an array of at least 1 axis, got a 0-d array");
    }
    super::split(x, sections, if x.ndim() == 1 { 0 } else { 1 })
}

/// [`split`](super::split) along the first axis of an array of at least 2 axes (`jnp.vsplit`).
#[track_caller]
pub fn vsplit(x: &Array, sections: impl Into<super::Sections>) -> Vec<Array> {
    if x.ndim() < 2 {
        panic!("vsplit: needs an array of at least 2 axes, got shape {}", ShapeDisplay(x.shape()));
    }
    super::split(x, sections, 0)
}

/// [`split`](super::split) along the third axis of an array of at least 3 axes (`jnp.dsplit`).
#[track_caller]
pub fn dsplit(x: &Array, sections: impl Into<super::Sections>) -> Vec<Array> {
    if x.ndim() < 3 {
        panic!("dsplit: needs an array of at least 3 axes, got shape {}", ShapeDisplay(x.shape()));
    }
    super::split(x, sections, 2)
}

/// The slices of `x` along `axis`, each without that axis (`jnp.unstack`).
#[track_caller]
pub fn unstack(x: &Array, axis: isize) -> Vec<Array> {
    if x.ndim() == 0 {
        panic!("unstack: needs an array of at least 1 axis, got a 0-d array");
    }
    let axis = crate::shape::normalize_axis("unstack", axis, x.ndim());
    let n = x.shape()[axis];
    super::split(x, n.max(1), axis as isize)
        .into_iter()
        .take(n)
        .map(|part| super::squeeze(&part, axis as isize))
        .collect()
}

/// The number of axes of `x` (`jnp.ndim`).
pub fn ndim(x: &Array) -> usize {
    x.ndim()
}

/// The shape of `x` (`jnp.shape`).
pub fn shape(x: &Array) -> Vec<usize> {
    x.shape().to_vec()
}

/// The number of elements of `x` (`jnp.size`).
pub fn size(x: &Array) -> usize {
    x.size()
}
