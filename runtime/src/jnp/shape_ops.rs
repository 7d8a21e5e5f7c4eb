//! Shape functions: reshaping, transposing, broadcasting, joining, splitting, flipping,
//! tiling, repeating and padding, with the matching methods on [`Array`].

use std::borrow::Borrow;
use std::fmt::Write;

use super::{convert, promote_all, ArrayLike};
use crate::primitives::{bind1, BroadcastInDim, Concatenate, Pad, Reshape, Rev, Slice, Transpose};
use crate::shape::{normalize_axes, normalize_axis, Axes, ShapeDisplay};
use crate::Array;

/// A shape argument that may contain one `-1`, inferred from the element count: `[2, -1]`,
/// `[6]`, `6`, `&[2, 3][..]`, `vec![2, 3]` or another array's `shape()`.
pub trait NewShape {
    /// The requested extents, `-1` for the one to infer.
    fn dims(&self) -> Vec<isize>;
}

/// `d` as a requested extent. A `usize` past `isize::MAX` saturates there, so that it is
/// refused as too large instead of wrapping to `-1` (the extent to infer).
fn extent<T>(d: T) -> isize
where
    isize: TryFrom<T>,
{
    isize::try_from(d).unwrap_or(isize::MAX)
}

macro_rules! new_shape {
    ($($t:ty),*) => {$(
        impl NewShape for $t {
            fn dims(&self) -> Vec<isize> { vec![extent(*self)] }
        }
        impl<const N: usize> NewShape for [$t; N] {
            fn dims(&self) -> Vec<isize> { self.iter().map(|&d| extent(d)).collect() }
        }
        impl<const N: usize> NewShape for &[$t; N] {
            fn dims(&self) -> Vec<isize> { self.iter().map(|&d| extent(d)).collect() }
        }
        impl NewShape for &[$t] {
            fn dims(&self) -> Vec<isize> { self.iter().map(|&d| extent(d)).collect() }
        }
        impl NewShape for Vec<$t> {
            fn dims(&self) -> Vec<isize> { self.iter().map(|&d| extent(d)).collect() }
        }
    )*};
}
new_shape!(i32, i64, isize, usize);

/// `(4, -1)`, `(5,)`: a requested shape as NumPy prints it.
fn show_dims(dims: &[isize]) -> String {
    let mut s = String::from("(");
    for (i, d) in dims.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        write!(s, "{sep}{d}").expect("writing to a String");
    }
    s + if dims.len() == 1 { ",)" } else { ")" }
}

/// The extents `dims` asks for, with a `-1` resolved against `x`'s element count.
#[track_caller]
fn resolve_shape(x: &Array, dims: &[isize]) -> Vec<usize> {
    let wanted = show_dims(dims);
    if dims.iter().filter(|&&d| d == -1).count() > 1 {
        panic!("reshape: can only infer one dimension (-1), got shape {wanted}");
    }
    if let Some(bad) = dims.iter().find(|&&d| d < -1) {
        panic!("reshape: invalid extent {bad} in shape {wanted}");
    }
    let known_dims = dims.iter().filter(|&&d| d >= 0).map(|&d| d as usize);
    let Some(known) = crate::shape::checked_product(known_dims) else {
        panic!(
            "reshape: an array of shape {wanted} would hold more than isize::MAX bytes (the \
             product of its extents overflows), so no such array can exist"
        )
    };
    let n = x.size();
    let infer = dims.contains(&-1);
    let fits = if infer { known != 0 && n.is_multiple_of(known) } else { known == n };
    if !fits {
        panic!(
            "reshape: cannot reshape an array of shape {} ({n} elements) into shape {wanted}",
            ShapeDisplay(x.shape())
        );
    }
    dims.iter().map(|&d| if d == -1 { n / known } else { d as usize }).collect()
}

/// The same elements in row-major order under a new shape; one extent may be `-1`. Free: the
/// result shares `x`'s buffer.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(6);
/// assert_eq!(jnp::reshape(&x, [2, -1]).shape(), &[2, 3]);
/// assert_eq!(x.reshape([3, 2]).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn reshape(x: &Array, shape: impl NewShape) -> Array {
    let new_sizes = resolve_shape(x, &shape.dims());
    if new_sizes == x.shape() {
        return x.clone();
    }
    bind1(&Reshape { new_sizes }, &[x])
}

/// The elements as a 1-D array, in row-major order (free, like [`reshape`]).
#[track_caller]
pub fn ravel(x: &Array) -> Array {
    reshape(x, [x.size()])
}

/// Resolves a list of possibly negative axes in order, panicking on out-of-range or repeated
/// axes (unlike [`Axes::resolve`], the order is kept).
#[track_caller]
fn ordered_axes(op: &str, axes: &[isize], rank: usize) -> Vec<usize> {
    let out = normalize_axes(op, axes, rank);
    let mut seen = vec![false; rank];
    if out.iter().any(|&a| std::mem::replace(&mut seen[a], true)) {
        panic!("{op}: repeated axis in {axes:?}");
    }
    out
}

/// The listed axes of an [`Axes`] argument that must not be [`Axes::All`].
#[track_caller]
fn axis_list(op: &str, axes: Axes) -> Vec<isize> {
    match axes {
        Axes::Some(list) => list,
        Axes::All => panic!("{op}: expected a list of axes, got Axes::All"),
    }
}

#[track_caller]
fn permute(x: &Array, perm: Vec<usize>) -> Array {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return x.clone();
    }
    bind1(&Transpose { permutation: perm }, &[x])
}

/// Reorders the axes: output axis `i` is `x`'s axis `axes[i]` (negative values count from the
/// end); `None` reverses them, like `x.T`.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::zeros([2, 3, 4]);
/// assert_eq!(jnp::transpose(&x, None).shape(), &[4, 3, 2]);
/// assert_eq!(jnp::transpose(&x, Some(&[1, -1, 0])).shape(), &[3, 4, 2]);
/// ```
#[track_caller]
pub fn transpose(x: &Array, axes: Option<&[isize]>) -> Array {
    match axes {
        None => permute(x, (0..x.ndim()).rev().collect()),
        Some(axes) => permute_dims_as("transpose", x, axes),
    }
}

/// Reorders the axes: output axis `i` is `x`'s axis `axes[i]` (the array API's name for
/// [`transpose`] with explicit axes).
#[track_caller]
pub fn permute_dims(x: &Array, axes: impl AsRef<[isize]>) -> Array {
    permute_dims_as("permute_dims", x, axes.as_ref())
}

#[track_caller]
fn permute_dims_as(op: &str, x: &Array, axes: &[isize]) -> Array {
    if axes.len() != x.ndim() {
        panic!(
            "{op}: axes {axes:?} must list each of the {} axes of an array of shape {} once",
            x.ndim(),
            ShapeDisplay(x.shape())
        );
    }
    permute(x, ordered_axes(op, axes, x.ndim()))
}

/// Exchanges two axes.
#[track_caller]
pub fn swapaxes(x: &Array, axis1: isize, axis2: isize) -> Array {
    let (a, b) =
        (normalize_axis("swapaxes", axis1, x.ndim()), normalize_axis("swapaxes", axis2, x.ndim()));
    let mut perm: Vec<usize> = (0..x.ndim()).collect();
    perm.swap(a, b);
    permute(x, perm)
}

/// Moves axes `source` to positions `destination`, keeping the others in order.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::zeros([2, 3, 4]);
/// assert_eq!(jnp::moveaxis(&x, 0, -1).shape(), &[3, 4, 2]);
/// assert_eq!(jnp::moveaxis(&x, [0, 1], [2, 0]).shape(), &[3, 4, 2]);
/// ```
#[track_caller]
pub fn moveaxis(x: &Array, source: impl Into<Axes>, destination: impl Into<Axes>) -> Array {
    let rank = x.ndim();
    let src = ordered_axes("moveaxis", &axis_list("moveaxis", source.into()), rank);
    let dst = ordered_axes("moveaxis", &axis_list("moveaxis", destination.into()), rank);
    if src.len() != dst.len() {
        panic!(
            "moveaxis: source {src:?} and destination {dst:?} must name the same number of axes"
        );
    }
    let mut perm: Vec<usize> = (0..rank).filter(|a| !src.contains(a)).collect();
    let mut moves: Vec<(usize, usize)> = dst.into_iter().zip(src).collect();
    moves.sort_unstable();
    for (d, s) in moves {
        perm.insert(d, s);
    }
    permute(x, perm)
}

/// Inserts extent-1 axes so that they sit at positions `axis` of the result.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::zeros([3]);
/// assert_eq!(jnp::expand_dims(&x, 0).shape(), &[1, 3]);
/// assert_eq!(jnp::expand_dims(&x, [0, -1]).shape(), &[1, 3, 1]);
/// ```
#[track_caller]
pub fn expand_dims(x: &Array, axis: impl Into<Axes>) -> Array {
    let list = axis_list("expand_dims", axis.into());
    let rank = x.ndim() + list.len();
    let new = ordered_axes("expand_dims", &list, rank);
    let mut dims = x.shape().iter();
    let shape: Vec<usize> =
        (0..rank).map(|a| if new.contains(&a) { 1 } else { *dims.next().unwrap() }).collect();
    reshape(x, shape)
}

/// Removes extent-1 axes: all of them ([`Axes::All`]) or the listed ones, which must have
/// extent 1.
///
/// ```
/// use rjax_runtime::{jnp, Axes};
/// let x = jnp::zeros([1, 3, 1]);
/// assert_eq!(jnp::squeeze(&x, Axes::All).shape(), &[3]);
/// assert_eq!(jnp::squeeze(&x, -1).shape(), &[1, 3]);
/// ```
#[track_caller]
pub fn squeeze(x: &Array, axes: impl Into<Axes>) -> Array {
    let shape = x.shape();
    let drop: Vec<usize> = match axes.into() {
        Axes::All => (0..x.ndim()).filter(|&a| shape[a] == 1).collect(),
        axes => axes.resolve("squeeze", x.ndim()),
    };
    if let Some(&a) = drop.iter().find(|&&a| shape[a] != 1) {
        panic!(
            "squeeze: cannot squeeze axis {a} of an array of shape {}: its extent is {}, not 1",
            ShapeDisplay(shape),
            shape[a]
        );
    }
    let kept: Vec<usize> = (0..x.ndim()).filter(|a| !drop.contains(a)).map(|a| shape[a]).collect();
    reshape(x, kept)
}

/// `x` broadcast to `shape` by NumPy's rules (axes aligned at the end; extent-1 axes repeat).
///
/// ```
/// use rjax_runtime::jnp;
/// let row = jnp::array(&[1, 2, 3]);
/// assert_eq!(jnp::broadcast_to(&row, [2, 3]).to_vec::<i32>().unwrap(), vec![1, 2, 3, 1, 2, 3]);
/// ```
#[track_caller]
pub fn broadcast_to(x: &Array, shape: impl AsRef<[usize]>) -> Array {
    let target = shape.as_ref();
    let lead = target.len().wrapping_sub(x.ndim());
    let fits = target.len() >= x.ndim()
        && x.shape().iter().zip(&target[lead..]).all(|(&n, &t)| n == t || n == 1);
    if !fits {
        panic!(
            "broadcast_to: cannot broadcast an array of shape {} to shape {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(target)
        );
    }
    if x.shape() == target {
        return x.clone();
    }
    let broadcast = BroadcastInDim {
        shape: target.to_vec(),
        broadcast_dimensions: (lead..target.len()).collect(),
    };
    bind1(&broadcast, &[x])
}

/// `"(2, 2), (1, 3)"`: shapes listed for error messages.
fn shapes_of(arrays: &[Array]) -> String {
    arrays.iter().map(|a| ShapeDisplay(a.shape()).to_string()).collect::<Vec<_>>().join(", ")
}

/// Joins arrays along an existing axis, promoting them to a common dtype first. The arrays must
/// have equal shapes except along `axis`.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::ones([2, 2]);
/// let b = jnp::zeros([1, 2]);
/// assert_eq!(jnp::concatenate(&[&a, &b], 0).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn concatenate<A: Borrow<Array>>(arrays: &[A], axis: isize) -> Array {
    if arrays.is_empty() {
        panic!("concatenate: need at least one array to concatenate");
    }
    let arrays = promote_all(&arrays.iter().map(|a| a.borrow().clone()).collect::<Vec<_>>());
    let rank = arrays[0].ndim();
    if arrays.iter().any(|a| a.ndim() != rank) {
        panic!(
            "concatenate: all arrays must have the same rank, got shapes {}",
            shapes_of(&arrays)
        );
    }
    if rank == 0 {
        panic!("concatenate: zero-dimensional arrays cannot be concatenated");
    }
    let ax = normalize_axis("concatenate", axis, rank);
    let first = arrays[0].shape();
    let differ = |a: &Array| (0..rank).any(|d| d != ax && a.shape()[d] != first[d]);
    if arrays.iter().any(differ) {
        panic!(
            "concatenate: arrays must have the same shape except along axis {ax}, got shapes {}",
            shapes_of(&arrays)
        );
    }
    if arrays.len() == 1 {
        return arrays[0].clone();
    }
    let refs: Vec<&Array> = arrays.iter().collect();
    bind1(&Concatenate { dimension: ax }, &refs)
}

/// Joins arrays of equal shape along a new axis at position `axis` of the result.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::zeros([2, 3]);
/// assert_eq!(jnp::stack(&[&a, &a], 1).shape(), &[2, 2, 3]);
/// ```
#[track_caller]
pub fn stack<A: Borrow<Array>>(arrays: &[A], axis: isize) -> Array {
    if arrays.is_empty() {
        panic!("stack: need at least one array to stack");
    }
    let arrays: Vec<Array> = arrays.iter().map(|a| a.borrow().clone()).collect();
    if arrays.iter().any(|a| a.shape() != arrays[0].shape()) {
        panic!("stack: all arrays must have the same shape, got shapes {}", shapes_of(&arrays));
    }
    let ax = normalize_axis("stack", axis, arrays[0].ndim() + 1) as isize;
    let expanded: Vec<Array> = arrays.iter().map(|a| expand_dims(a, ax)).collect();
    concatenate(&expanded, ax)
}

/// Elements `start..stop` of `x` along `axis` (bounds already in range).
#[track_caller]
pub(crate) fn slice_axis(x: &Array, axis: usize, start: usize, stop: usize) -> Array {
    let mut s = Slice {
        start_indices: vec![0; x.ndim()],
        limit_indices: x.shape().to_vec(),
        strides: vec![1; x.ndim()],
    };
    s.start_indices[axis] = start;
    s.limit_indices[axis] = stop;
    bind1(&s, &[x])
}

/// How [`split`] divides an axis: into `n` equal sections (`3`), or at the given indices
/// (`[2, 5]`, which gives `x[:2]`, `x[2:5]` and `x[5:]`; negative indices count from the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sections {
    /// This many sections of equal length.
    Equal(usize),
    /// Split before each of these positions.
    At(Vec<isize>),
}

macro_rules! sections_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Sections {
            fn from(n: $t) -> Sections {
                Sections::Equal(usize::try_from(n).unwrap_or(0))
            }
        }
        impl<const N: usize> From<[$t; N]> for Sections {
            fn from(at: [$t; N]) -> Sections { Sections::At(at.iter().map(|&i| i as isize).collect()) }
        }
        impl From<&[$t]> for Sections {
            fn from(at: &[$t]) -> Sections { Sections::At(at.iter().map(|&i| i as isize).collect()) }
        }
        impl From<Vec<$t>> for Sections {
            fn from(at: Vec<$t>) -> Sections { Sections::At(at.iter().map(|&i| i as isize).collect()) }
        }
    )*};
}
sections_from!(i32, i64, isize, usize);

/// Splits `x` along `axis` into equal sections or at indices (see [`Sections`]).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(6);
/// let parts = jnp::split(&x, 3, 0);
/// assert_eq!(parts[1].to_vec::<i32>().unwrap(), vec![2, 3]);
/// let parts = jnp::split(&x, [1, 4], 0);
/// assert_eq!(parts.iter().map(|p| p.size()).collect::<Vec<_>>(), vec![1, 3, 2]);
/// ```
#[track_caller]
pub fn split(x: &Array, sections: impl Into<Sections>, axis: isize) -> Vec<Array> {
    let ax = normalize_axis("split", axis, x.ndim());
    let n = x.shape()[ax];
    let bounds: Vec<usize> = match sections.into() {
        Sections::Equal(0) => panic!("split: the number of sections must be positive"),
        Sections::Equal(k) if !n.is_multiple_of(k) => panic!(
            "split: array split does not result in an equal division: axis {ax} of an array of shape {} has extent {n}, which {k} sections cannot divide",
            ShapeDisplay(x.shape())
        ),
        Sections::Equal(k) => (1..k).map(|i| i * n / k).collect(),
        // Split points behave like slice bounds: clamped into the axis.
        Sections::At(at) => at
            .iter()
            .map(|&i| (if i < 0 { i + n as isize } else { i }).clamp(0, n as isize) as usize)
            .collect(),
    };
    let starts = std::iter::once(0).chain(bounds.iter().copied());
    let stops = bounds.iter().copied().chain(std::iter::once(n));
    starts.zip(stops).map(|(a, b)| slice_axis(x, ax, a, b.max(a))).collect()
}

/// Reverses the order of elements along `axes` ([`Axes::All`] for every axis).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(3);
/// assert_eq!(jnp::flip(&x, 0).to_vec::<i32>().unwrap(), vec![2, 1, 0]);
/// ```
#[track_caller]
pub fn flip(x: &Array, axes: impl Into<Axes>) -> Array {
    let dimensions = axes.into().resolve("flip", x.ndim());
    if dimensions.is_empty() {
        return x.clone();
    }
    bind1(&Rev { dimensions }, &[x])
}

/// `x` repeated `reps[i]` times along each axis (`np.tile`); a shorter `x` or `reps` is
/// padded with leading 1s.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1, 2]);
/// assert_eq!(jnp::tile(&x, [2]).to_vec::<i32>().unwrap(), vec![1, 2, 1, 2]);
/// assert_eq!(jnp::tile(&x, [2, 1]).shape(), &[2, 2]);
/// ```
#[track_caller]
pub fn tile(x: &Array, reps: impl AsRef<[usize]>) -> Array {
    let reps = reps.as_ref();
    let d = x.ndim().max(reps.len());
    let pad_front = |v: &[usize]| [vec![1; d - v.len()], v.to_vec()].concat();
    let (shape, reps) = (pad_front(x.shape()), pad_front(reps));
    let x = reshape(x, shape.clone());
    // Broadcast to (r0, s0, r1, s1, ...), then merge each pair.
    let pairs: Vec<usize> = reps.iter().zip(&shape).flat_map(|(&r, &s)| [r, s]).collect();
    let b =
        BroadcastInDim { shape: pairs, broadcast_dimensions: (0..d).map(|i| 2 * i + 1).collect() };
    let tiled = bind1(&b, &[&x]);
    reshape(&tiled, reps.iter().zip(&shape).map(|(r, s)| r * s).collect::<Vec<_>>())
}

/// Each element repeated `repeats` times along `axis` (`None`: over the flattened array).
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1, 2]);
/// assert_eq!(jnp::repeat(&x, 2, None).to_vec::<i32>().unwrap(), vec![1, 1, 2, 2]);
/// ```
#[track_caller]
pub fn repeat(x: &Array, repeats: usize, axis: Option<isize>) -> Array {
    let (x, ax) = match axis {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), normalize_axis("repeat", a, x.ndim())),
    };
    let shape = x.shape();
    // Broadcast to (.., n, repeats, ..), then merge the pair.
    let mut wide = shape.to_vec();
    wide.insert(ax + 1, repeats);
    let dims: Vec<usize> = (0..x.ndim()).map(|d| if d > ax { d + 1 } else { d }).collect();
    let b = bind1(&BroadcastInDim { shape: wide, broadcast_dimensions: dims }, &[&x]);
    let mut out = shape.to_vec();
    out[ax] *= repeats;
    reshape(&b, out)
}

/// Per-axis `(before, after)` padding widths for [`pad`]: one pair for every axis
/// (`(1, 2)`), a pair per axis (`[(1, 2), (0, 0)]`), or a single width `n` for `(n, n)`.
pub trait PadWidths {
    /// The pairs for an array of `rank` axes, or `None` when the count does not fit.
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>>;
}

impl PadWidths for usize {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        Some(vec![(*self, *self); rank])
    }
}

impl PadWidths for (usize, usize) {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        Some(vec![*self; rank])
    }
}

impl PadWidths for &[(usize, usize)] {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        match self.len() {
            1 => Some(vec![self[0]; rank]),
            n if n == rank => Some(self.to_vec()),
            _ => None,
        }
    }
}

impl<const N: usize> PadWidths for [(usize, usize); N] {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        self.as_slice().widths(rank)
    }
}

impl<const N: usize> PadWidths for &[(usize, usize); N] {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        self.as_slice().widths(rank)
    }
}

impl PadWidths for Vec<(usize, usize)> {
    fn widths(&self, rank: usize) -> Option<Vec<(usize, usize)>> {
        self.as_slice().widths(rank)
    }
}

/// Pads with a constant (`np.pad(x, widths, constant_values=value)`); `value` is converted
/// to `x`'s dtype.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1, 2]);
/// assert_eq!(jnp::pad(&x, (1, 2), 0).to_vec::<i32>().unwrap(), vec![0, 1, 2, 0, 0]);
/// ```
#[track_caller]
pub fn pad(x: &Array, widths: impl PadWidths, value: impl ArrayLike) -> Array {
    let Some(widths) = widths.widths(x.ndim()) else {
        panic!(
            "pad: expected one (before, after) pair, or one per axis of an array of shape {}",
            ShapeDisplay(x.shape())
        );
    };
    let value = value.into_array();
    if value.ndim() != 0 {
        panic!(
            "pad: the padding value must be a scalar, got shape {}",
            ShapeDisplay(value.shape())
        );
    }
    let value = convert(&value, x.dtype(), false);
    // A width past i64::MAX cannot be a padding (the primitive's widths are signed, negative
    // ones cropping); no array is that long anyway.
    let (mut low, mut high) = (Vec::new(), Vec::new());
    for &(before, after) in &widths {
        match (i64::try_from(before), i64::try_from(after)) {
            (Ok(b), Ok(a)) => {
                low.push(b);
                high.push(a);
            }
            _ => panic!(
                "pad: widths ({before}, {after}) on an array of shape {} make it longer than \
                 any array can be",
                ShapeDisplay(x.shape())
            ),
        }
    }
    let p = Pad { low, high, interior: vec![0; x.ndim()] };
    bind1(&p, &[x, &value])
}

impl Array {
    /// [`jnp::reshape`](reshape) as a method: `x.reshape([2, -1])`.
    #[track_caller]
    pub fn reshape(&self, shape: impl NewShape) -> Array {
        reshape(self, shape)
    }

    /// The elements as a 1-D array ([`jnp::ravel`](ravel)).
    #[track_caller]
    pub fn ravel(&self) -> Array {
        ravel(self)
    }

    /// The elements as a 1-D array (JAX's `x.flatten()`; free, like [`Array::ravel`]).
    #[track_caller]
    pub fn flatten(&self) -> Array {
        ravel(self)
    }

    /// The axes reversed, like JAX's `x.T`.
    #[track_caller]
    pub fn t(&self) -> Array {
        transpose(self, None)
    }

    /// [`jnp::transpose`](transpose) as a method.
    #[track_caller]
    pub fn transpose(&self, axes: Option<&[isize]>) -> Array {
        transpose(self, axes)
    }

    /// [`jnp::permute_dims`](permute_dims) as a method: `x.permute_dims([1, 0])`.
    #[track_caller]
    pub fn permute_dims(&self, axes: impl AsRef<[isize]>) -> Array {
        permute_dims(self, axes)
    }

    /// [`jnp::swapaxes`](swapaxes) as a method.
    #[track_caller]
    pub fn swapaxes(&self, axis1: isize, axis2: isize) -> Array {
        swapaxes(self, axis1, axis2)
    }

    /// [`jnp::moveaxis`](moveaxis) as a method.
    #[track_caller]
    pub fn moveaxis(&self, source: impl Into<Axes>, destination: impl Into<Axes>) -> Array {
        moveaxis(self, source, destination)
    }

    /// [`jnp::expand_dims`](expand_dims) as a method.
    #[track_caller]
    pub fn expand_dims(&self, axis: impl Into<Axes>) -> Array {
        expand_dims(self, axis)
    }

    /// [`jnp::squeeze`](squeeze) as a method.
    #[track_caller]
    pub fn squeeze(&self, axes: impl Into<Axes>) -> Array {
        squeeze(self, axes)
    }

    /// [`jnp::broadcast_to`](broadcast_to) as a method.
    #[track_caller]
    pub fn broadcast_to(&self, shape: impl AsRef<[usize]>) -> Array {
        broadcast_to(self, shape)
    }

    /// [`jnp::flip`](flip) as a method.
    #[track_caller]
    pub fn flip(&self, axes: impl Into<Axes>) -> Array {
        flip(self, axes)
    }

    /// [`jnp::tile`](tile) as a method.
    #[track_caller]
    pub fn tile(&self, reps: impl AsRef<[usize]>) -> Array {
        tile(self, reps)
    }

    /// [`jnp::repeat`](repeat) as a method.
    #[track_caller]
    pub fn repeat(&self, repeats: usize, axis: Option<isize>) -> Array {
        repeat(self, repeats, axis)
    }
}
