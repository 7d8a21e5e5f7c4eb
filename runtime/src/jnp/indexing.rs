//! Indexing: NumPy-style index expressions written with [`s!`](crate::s), functional updates
//! (`x.at(s![..]).set(v)`, like JAX's `x.at[...].set(v)`), `take`, `take_along_axis` and
//! `one_hot`.
//!
//! Out-of-bounds integer indices never panic, following JAX: reading (`x.slice`, `.get()`)
//! clamps them into range, and updates (`.set`, `.add`, ...) drop them. Negative indices count
//! from the end once first, so on an axis of 5, `-1` is 4, `10` reads 4, and `-7` reads 0.
//! Ranges clamp their bounds like Python slices.

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use super::shape_ops::{broadcast_to, expand_dims, ravel, reshape};
use super::{astype, clip, convert, equal, less, logical_and, where_, ArrayLike};
use crate::dtype::DType;
use crate::primitives::{
    bind1, Gather, IndexMode, Iota, Rev, Scatter, ScatterOp, Slice, Transpose,
};
use crate::shape::{broadcast_shapes, normalize_axis, ShapeDisplay};
use crate::Array;

/// Selects an extent-1 axis inserted into the result (NumPy's `np.newaxis` / `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewAxis;

/// One entry of an index expression; build them with [`s!`](crate::s).
#[derive(Clone, Debug)]
pub enum SliceElem {
    /// One position (drops the axis); negative counts from the end.
    Index(isize),
    /// Python's `start:end:step`; missing bounds mean the whole axis. A negative step walks
    /// from the end of the range backwards, as in `ndarray`'s `s!`.
    Range {
        /// First position (`None`: the start of the axis).
        start: Option<isize>,
        /// End, exclusive (`None`: the end of the axis).
        end: Option<isize>,
        /// Nonzero step.
        step: isize,
    },
    /// An inserted extent-1 axis.
    NewAxis,
    /// `...`: as many whole axes as the other entries leave.
    Ellipsis,
    /// An integer index array (NumPy's advanced indexing, a gather).
    Array(Array),
}

impl SliceElem {
    /// This range with a step (what `a..b;step` means in [`s!`](crate::s)); the step may be
    /// of any integer type.
    #[track_caller]
    pub fn with_step(self, step: impl SliceStep) -> SliceElem {
        let step = step.to_step();
        if step == 0 {
            panic!("s!: a slice step cannot be zero");
        }
        match self {
            SliceElem::Range { start, end, .. } => SliceElem::Range { start, end, step },
            other => panic!("s!: a step (`;`) applies only to ranges, not to {other:?}"),
        }
    }
}

/// An integer usable as a slice step in [`s!`](crate::s) (`s![0..n; k]`).
pub trait SliceStep {
    /// The step as an `isize`, saturating: a step past `isize`'s range takes one element
    /// either way, as it is longer than any axis.
    fn to_step(self) -> isize;
}

macro_rules! slice_step {
    ($($t:ty),*) => {$(
        impl SliceStep for $t {
            fn to_step(self) -> isize { saturate(self as i128) }
        }
    )*};
}
slice_step!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, usize);

impl SliceStep for u128 {
    fn to_step(self) -> isize {
        saturate(self.min(i128::MAX as u128) as i128)
    }
}

macro_rules! slice_elem_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for SliceElem {
            fn from(i: $t) -> SliceElem { SliceElem::Index(saturate(i as i128)) }
        }
        impl From<Range<$t>> for SliceElem {
            fn from(r: Range<$t>) -> SliceElem {
                SliceElem::Range { start: Some(saturate(r.start as i128)), end: Some(saturate(r.end as i128)), step: 1 }
            }
        }
        impl From<RangeFrom<$t>> for SliceElem {
            fn from(r: RangeFrom<$t>) -> SliceElem {
                SliceElem::Range { start: Some(saturate(r.start as i128)), end: None, step: 1 }
            }
        }
        impl From<RangeTo<$t>> for SliceElem {
            fn from(r: RangeTo<$t>) -> SliceElem {
                SliceElem::Range { start: None, end: Some(saturate(r.end as i128)), step: 1 }
            }
        }
        impl From<RangeInclusive<$t>> for SliceElem {
            fn from(r: RangeInclusive<$t>) -> SliceElem {
                SliceElem::Range { start: Some(saturate(*r.start() as i128)), end: inclusive_end(saturate(*r.end() as i128)), step: 1 }
            }
        }
        impl From<RangeToInclusive<$t>> for SliceElem {
            fn from(r: RangeToInclusive<$t>) -> SliceElem {
                SliceElem::Range { start: None, end: inclusive_end(saturate(r.end as i128)), step: 1 }
            }
        }
    )*};
}
slice_elem_from_int!(i32, i64, isize, usize);

/// An integer position as an `isize`: one past `isize`'s range (a `usize` above
/// `isize::MAX`) saturates, since it is past the end of every axis either way.
fn saturate(i: i128) -> isize {
    i.clamp(isize::MIN as i128, isize::MAX as i128) as isize
}

/// The exclusive end after inclusive end `e`: `..=-1` runs to the end of the axis, and so does
/// `..=isize::MAX`.
#[track_caller]
fn inclusive_end(e: isize) -> Option<isize> {
    if e == -1 || e == isize::MAX {
        None
    } else {
        Some(e + 1)
    }
}

impl From<RangeFull> for SliceElem {
    fn from(_: RangeFull) -> SliceElem {
        SliceElem::Range { start: None, end: None, step: 1 }
    }
}

impl From<NewAxis> for SliceElem {
    fn from(_: NewAxis) -> SliceElem {
        SliceElem::NewAxis
    }
}

impl From<Array> for SliceElem {
    fn from(a: Array) -> SliceElem {
        SliceElem::Array(a)
    }
}

impl From<&Array> for SliceElem {
    fn from(a: &Array) -> SliceElem {
        SliceElem::Array(a.clone())
    }
}

/// Builds an index expression (a `Vec<`[`SliceElem`]`>`) for [`Array::slice`] and
/// [`Array::at`], in the syntax of `ndarray`'s `s!`. Entries, separated by commas:
///
/// | `s!`            | NumPy / JAX      | meaning                                      |
/// |-----------------|------------------|----------------------------------------------|
/// | `2`, `-1`       | `2`, `-1`        | one position; the axis is dropped            |
/// | `1..3`, `..`    | `1:3`, `:`       | a range; bounds clamp like Python's          |
/// | `1..=3`         | `1:4`            | an inclusive range                           |
/// | `..;2`          | `::2`            | every second element                         |
/// | `..;-1`         | `::-1`           | reversed                                     |
/// | `1..4;-1`       | `3:0:-1`         | elements 3, 2, 1: the range, walked backwards |
/// | `NewAxis`       | `None`           | a new extent-1 axis                          |
/// | `...`           | `...`            | all remaining axes                           |
/// | `&idx`          | `idx`            | an integer array: gathers (advanced indexing) |
///
/// A range always names the positions it covers and a negative step only walks them from the
/// end, so `-1..;-1` is just the last element (Python's `x[-1::-1]` is all of them reversed,
/// which is `..;-1` here).
///
/// ```
/// use rjax_runtime::{jnp, s, NewAxis};
/// let x = jnp::arange(12).reshape([3, 4]);
/// assert_eq!(x.slice(s![1, ..;2]).to_vec::<i32>().unwrap(), vec![4, 6]);
/// assert_eq!(x.slice(s![.., -1]).to_vec::<i32>().unwrap(), vec![3, 7, 11]);
/// assert_eq!(x.slice(s![..;-1, NewAxis, 0]).shape(), &[3, 1]);
/// assert_eq!(x.slice(s![..., 1..3]).shape(), &[3, 2]);
/// let rows = jnp::array(&[2, 0]);
/// assert_eq!(x.slice(s![&rows, 0]).to_vec::<i32>().unwrap(), vec![8, 0]);
/// ```
#[macro_export]
macro_rules! s {
    (@acc [$($done:expr,)*]) => {{
        let index: ::std::vec::Vec<$crate::jnp::SliceElem> = ::std::vec![$($done),*];
        index
    }};
    (@acc [$($done:expr,)*] ... $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($done,)* $crate::jnp::SliceElem::Ellipsis,] $($($rest)*)?)
    };
    (@acc [$($done:expr,)*] $e:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($done,)* $crate::jnp::SliceElem::from($e).with_step($step),] $($($rest)*)?)
    };
    (@acc [$($done:expr,)*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@acc [$($done,)* $crate::jnp::SliceElem::from($e),] $($($rest)*)?)
    };
    ($($t:tt)*) => {
        $crate::s!(@acc [] $($t)*)
    };
}

/// How one axis of the source is indexed, with ranges resolved against the axis.
#[derive(Clone, Debug)]
enum AxisIndex {
    /// `count` elements from `first`, `step` apart (a negative step walks backwards).
    Range { first: usize, step: isize, count: usize },
    /// One position, not yet normalized.
    Int(isize),
    /// An integer index array.
    Array(Array),
}

/// An entry of the result's layout before advanced indexing: a source axis or a new axis.
#[derive(Clone, Copy, Debug)]
enum Item {
    Axis(usize),
    NewAxis,
}

/// An index expression resolved against a shape.
struct Resolved {
    /// How each source axis is indexed.
    axes: Vec<AxisIndex>,
    /// Source axes and new axes in the order they appear in the expression.
    items: Vec<Item>,
}

/// Resolves Python-style bounds and a step against an axis of extent `n`.
#[track_caller]
fn resolve_range(
    op: &str,
    start: Option<isize>,
    end: Option<isize>,
    step: isize,
    n: usize,
) -> AxisIndex {
    if step == 0 {
        panic!("{op}: a slice step cannot be zero");
    }
    let n = n as isize;
    let bound = |b: isize| (if b < 0 { b + n } else { b }).clamp(0, n);
    let (s, e) = (start.map_or(0, bound), end.map_or(n, bound));
    let count = (e - s).max(0).unsigned_abs().div_ceil(step.unsigned_abs());
    let first = if step > 0 { s } else { (e - 1).max(0) };
    // A step past the axis reaches one element at most, as a step of 1 (or -1) would; so
    // every step kept is below the extent and its products with it cannot overflow.
    let step = if count <= 1 { step.signum() } else { step };
    AxisIndex::Range { first: first as usize, step, count }
}

#[track_caller]
fn check_index_array(op: &str, a: &Array) {
    if a.dtype() == DType::Bool {
        panic!(
            "{op}: boolean mask indices are not supported (the result's shape would depend on the data); use jnp::where_ instead"
        );
    }
    if !a.dtype().is_int() {
        panic!("{op}: index arrays must hold integers, got {}", a.dtype());
    }
}

#[track_caller]
fn resolve(op: &str, shape: &[usize], index: &[SliceElem]) -> Resolved {
    let rank = shape.len();
    let consumes = |e: &SliceElem| !matches!(e, SliceElem::NewAxis | SliceElem::Ellipsis);
    let consumed = index.iter().filter(|e| consumes(e)).count();
    if consumed > rank {
        panic!(
            "{op}: too many indices for an array of shape {} (rank {rank}): {consumed} were given",
            ShapeDisplay(shape)
        );
    }
    if index.iter().filter(|e| matches!(e, SliceElem::Ellipsis)).count() > 1 {
        panic!("{op}: an index can only have a single ellipsis (...)");
    }
    let mut axes = Vec::with_capacity(rank);
    let mut items = Vec::new();
    #[track_caller]
    fn take_axis(a: AxisIndex, axes: &mut Vec<AxisIndex>, items: &mut Vec<Item>) {
        items.push(Item::Axis(axes.len()));
        axes.push(a);
    }
    for e in index {
        let n = shape.get(axes.len()).copied().unwrap_or(0);
        match e {
            SliceElem::Index(i) => take_axis(AxisIndex::Int(*i), &mut axes, &mut items),
            SliceElem::Range { start, end, step } => {
                take_axis(resolve_range(op, *start, *end, *step, n), &mut axes, &mut items)
            }
            SliceElem::Array(a) => {
                check_index_array(op, a);
                take_axis(AxisIndex::Array(a.clone()), &mut axes, &mut items)
            }
            SliceElem::NewAxis => items.push(Item::NewAxis),
            SliceElem::Ellipsis => {
                for _ in 0..rank - consumed {
                    let n = shape[axes.len()];
                    take_axis(resolve_range(op, None, None, 1, n), &mut axes, &mut items);
                }
            }
        }
    }
    while axes.len() < rank {
        let n = shape[axes.len()];
        take_axis(resolve_range(op, None, None, 1, n), &mut axes, &mut items);
    }
    Resolved { axes, items }
}

/// The position a static index reads on an axis of extent `n`: wrapped once, then clamped.
#[track_caller]
fn clamp_static(op: &str, i: isize, axis: usize, n: usize) -> usize {
    if n == 0 {
        panic!("{op}: index {i} is out of bounds for axis {axis}, which has extent 0");
    }
    let n = n as isize;
    (if i < 0 { i + n } else { i }).clamp(0, n - 1) as usize
}

/// Applies the ranges (and, when `ints_basic`, the integer positions as length-1 ranges) with
/// `slice` and `rev`. Index-array axes are kept whole.
#[track_caller]
fn basic_slice(op: &str, x: &Array, axes: &[AxisIndex], ints_basic: bool) -> Array {
    let rank = x.ndim();
    let mut s = Slice {
        start_indices: vec![0; rank],
        limit_indices: x.shape().to_vec(),
        strides: vec![1; rank],
    };
    let mut reversed = Vec::new();
    for (ax, a) in axes.iter().enumerate() {
        let (start, limit, stride) = match *a {
            AxisIndex::Range { first, step, count: 0 } => (first, first, step.unsigned_abs()),
            AxisIndex::Range { first, step, count } if step > 0 => {
                (first, first + (count - 1) * step as usize + 1, step as usize)
            }
            AxisIndex::Range { first, step, count } => {
                // Walk backwards: slice forwards from the last element reached, then reverse.
                reversed.push(ax);
                let k = step.unsigned_abs();
                (first - (count - 1) * k, first + 1, k)
            }
            AxisIndex::Int(i) if ints_basic => {
                let c = clamp_static(op, i, ax, x.shape()[ax]);
                (c, c + 1, 1)
            }
            _ => continue,
        };
        s.start_indices[ax] = start;
        s.limit_indices[ax] = limit;
        s.strides[ax] = stride;
    }
    let identity = s.start_indices.iter().all(|&v| v == 0)
        && s.limit_indices == x.shape()
        && s.strides.iter().all(|&v| v == 1);
    let y = if identity { x.clone() } else { bind1(&s, &[x]) };
    if reversed.is_empty() {
        y
    } else {
        bind1(&Rev { dimensions: reversed }, &[&y])
    }
}

/// Indexes `x` by `index`. In [`IndexMode::Clip`] (reads), out-of-bounds integers clamp; in
/// [`IndexMode::FillOrDrop`] they produce the gather's fill value instead.
///
/// Ranges are applied with `slice`/`rev`; then new axes are inserted and integer positions
/// dropped with a free reshape; then any index arrays gather (NumPy's advanced indexing:
/// with one index array, or several on neighbouring axes, the indexed dimensions replace
/// them in place; otherwise they go first).
#[track_caller]
fn index_with(op: &str, x: &Array, index: &[SliceElem], mode: IndexMode) -> Array {
    let r = resolve(op, x.shape(), index);
    let has_arrays = r.axes.iter().any(|a| matches!(a, AxisIndex::Array(_)));
    // Integers are basic indices unless index arrays are present (NumPy) or out-of-bounds
    // positions must be detected rather than clamped.
    let ints_basic = !has_arrays && mode == IndexMode::Clip;
    let y = basic_slice(op, x, &r.axes, ints_basic);
    let mut shape = Vec::new();
    let mut advanced: Vec<(usize, Array)> = Vec::new();
    for item in &r.items {
        match *item {
            Item::NewAxis => shape.push(1),
            Item::Axis(ax) => match &r.axes[ax] {
                AxisIndex::Int(_) if ints_basic => {}
                AxisIndex::Int(i) => {
                    advanced.push((shape.len(), Array::from(*i as i64)));
                    shape.push(y.shape()[ax]);
                }
                AxisIndex::Array(a) => {
                    advanced.push((shape.len(), a.clone()));
                    shape.push(y.shape()[ax]);
                }
                AxisIndex::Range { .. } => shape.push(y.shape()[ax]),
            },
        }
    }
    let y = reshape(&y, shape);
    if advanced.is_empty() {
        y
    } else {
        gather_advanced(op, &y, &advanced, mode)
    }
}

/// Gathers with index arrays at the given axes of `y`.
#[track_caller]
fn gather_advanced(op: &str, y: &Array, advanced: &[(usize, Array)], mode: IndexMode) -> Array {
    if let [(axis, idx)] = advanced {
        return bind1(&Gather { axis: *axis, mode }, &[y, idx]);
    }
    let positions: Vec<usize> = advanced.iter().map(|a| a.0).collect();
    let adjacent = positions.windows(2).all(|w| w[1] == w[0] + 1);
    // Bring the indexed axes together (in front unless they already are) and merge them into
    // one, which a combined index then gathers from.
    let (z, at) = if adjacent {
        (y.clone(), positions[0])
    } else {
        let rest = (0..y.ndim()).filter(|a| !positions.contains(a));
        let perm: Vec<usize> = positions.iter().copied().chain(rest).collect();
        (bind1(&Transpose { permutation: perm }, &[y]), 0)
    };
    let k = positions.len();
    let extents: Vec<usize> = z.shape()[at..at + k].to_vec();
    let merged: Vec<usize> =
        [&z.shape()[..at], &[extents.iter().product()], &z.shape()[at + k..]].concat();
    let z = reshape(&z, merged);
    let arrays: Vec<&Array> = advanced.iter().map(|a| &a.1).collect();
    let combined = combine_indices(op, &arrays, &extents, mode);
    bind1(&Gather { axis: at, mode }, &[&z, &combined])
}

/// The integer dtype flat positions are computed in: `int32` (JAX's default, and what a GPU
/// computes in) when every index dtype converts to it exactly and every position, `size` (the
/// out-of-bounds marker) included, fits it; `int64` otherwise.
fn position_dtype(indices: impl IntoIterator<Item = DType>, size: usize) -> DType {
    let narrow = [DType::Bool, DType::I8, DType::I16, DType::I32, DType::U8, DType::U16];
    let exact = indices.into_iter().all(|d| narrow.contains(&d));
    if exact && size <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// The flat index into axes of `extents` (row-major) that several index arrays select together,
/// broadcast to their common shape. In [`IndexMode::Clip`] each index is clamped into its
/// axis first; otherwise a position with any index out of bounds becomes out of bounds.
#[track_caller]
fn combine_indices(op: &str, arrays: &[&Array], extents: &[usize], mode: IndexMode) -> Array {
    let mut shape: Vec<usize> = Vec::new();
    for a in arrays {
        let Some(joint) = broadcast_shapes(&shape, a.shape()) else {
            let shapes: Vec<String> =
                arrays.iter().map(|a| ShapeDisplay(a.shape()).to_string()).collect();
            panic!("{op}: index arrays of shapes {} do not broadcast together", shapes.join(", "))
        };
        shape = joint;
    }
    let total: usize = extents.iter().product();
    let dtype = position_dtype(arrays.iter().map(|a| a.dtype()), total);
    let mut flat = astype(&Array::from(0i32), dtype);
    let mut valid = Array::from(true);
    let mut stride = total;
    for (a, &n) in arrays.iter().zip(extents) {
        stride /= n.max(1);
        let i = astype(a, dtype);
        let i = where_(less(&i, 0), i.add(n as i64), &i);
        let i = match mode {
            IndexMode::Clip => clip(&i, 0, (n as i64 - 1).max(0)),
            IndexMode::FillOrDrop => {
                valid = logical_and(&valid, logical_and(i.ge(0), i.lt(n as i64)));
                i
            }
        };
        flat = flat.add(i.mul(stride as i64));
    }
    if mode == IndexMode::FillOrDrop {
        flat = where_(&valid, &flat, total as i64);
    }
    broadcast_to(&flat, shape)
}

/// The flat positions in `x` that `index` selects, in the shape the selection has. Positions
/// out of bounds hold `i64::MIN`, which stays out of bounds for a scatter.
#[track_caller]
fn selected_positions(x: &Array, index: &[SliceElem]) -> Array {
    let dtype = position_dtype(std::iter::empty(), x.size());
    let positions = bind1(&Iota { dtype, shape: vec![x.size()], dimension: 0 }, &[]);
    let positions = reshape(&positions, x.shape());
    index_with("at", &positions, index, IndexMode::FillOrDrop)
}

/// A pending functional update of the elements of an array that an index selects, made by
/// [`Array::at`] (JAX's `x.at[...]`). Every method returns a new array.
///
/// Values are converted to the array's dtype and broadcast to the selected shape. Updates at
/// out-of-bounds positions are dropped; with repeated positions, `add`, `mul`, `min` and `max`
/// accumulate and `set` keeps the last.
///
/// ```
/// use rjax_runtime::{jnp, s};
/// let x = jnp::arange(5.0);
/// assert_eq!(x.at(s![1..3]).set(-1.0).to_vec::<f32>().unwrap(), vec![0.0, -1.0, -1.0, 3.0, 4.0]);
/// let idx = jnp::array(&[0, 0, 9]);
/// assert_eq!(x.at(s![&idx]).add(1.0).to_vec::<f32>().unwrap(), vec![2.0, 1.0, 2.0, 3.0, 4.0]);
/// ```
#[derive(Clone, Debug)]
pub struct At<'a> {
    array: &'a Array,
    index: Vec<SliceElem>,
}

impl At<'_> {
    /// The selected elements (as [`Array::slice`]: out-of-bounds integers clamp).
    #[track_caller]
    pub fn get(&self) -> Array {
        self.array.slice(&self.index)
    }

    /// Replaces the selected elements with `values`.
    #[track_caller]
    pub fn set(&self, values: impl ArrayLike) -> Array {
        self.scatter(ScatterOp::Set, values)
    }

    /// Adds `values` to the selected elements.
    #[track_caller]
    pub fn add(&self, values: impl ArrayLike) -> Array {
        self.scatter(ScatterOp::Add, values)
    }

    /// Multiplies the selected elements by `values`.
    #[track_caller]
    pub fn mul(&self, values: impl ArrayLike) -> Array {
        self.scatter(ScatterOp::Mul, values)
    }

    /// The elementwise minimum of the selected elements and `values`.
    #[track_caller]
    pub fn min(&self, values: impl ArrayLike) -> Array {
        self.scatter(ScatterOp::Min, values)
    }

    /// The elementwise maximum of the selected elements and `values`.
    #[track_caller]
    pub fn max(&self, values: impl ArrayLike) -> Array {
        self.scatter(ScatterOp::Max, values)
    }

    #[track_caller]
    fn scatter(&self, op: ScatterOp, values: impl ArrayLike) -> Array {
        let x = self.array;
        let positions = selected_positions(x, &self.index);
        let values = convert(&values.into_array(), x.dtype(), false);
        let fits = broadcast_shapes(values.shape(), positions.shape())
            .is_some_and(|s| s == positions.shape());
        if !fits {
            panic!(
                "at: cannot broadcast values of shape {} to the indexed shape {}",
                ShapeDisplay(values.shape()),
                ShapeDisplay(positions.shape())
            );
        }
        let values = broadcast_to(&values, positions.shape());
        let s = Scatter { axis: 0, op, mode: IndexMode::FillOrDrop };
        let out = bind1(&s, &[&ravel(x), &ravel(&positions), &ravel(&values)]);
        reshape(&out, x.shape())
    }
}

/// Elements of `x` at `indices` along `axis` (`None`: of the flattened array), shaped as `x`
/// with that axis replaced by the indices' shape (`jnp.take`). As in JAX, out-of-bounds
/// indices read the dtype's fill value (NaN for floats); see [`take_mode`] to clamp instead.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[10.0f32, 20.0, 30.0]);
/// let got = jnp::take(&x, &jnp::array(&[2, -1, 5]), None).to_vec::<f32>().unwrap();
/// assert_eq!(&got[..2], &[30.0, 30.0]);
/// assert!(got[2].is_nan());
/// ```
#[track_caller]
pub fn take(x: &Array, indices: impl ArrayLike, axis: Option<isize>) -> Array {
    take_mode(x, indices, axis, IndexMode::FillOrDrop)
}

/// [`take`] with a chosen out-of-bounds behavior: [`IndexMode::Clip`] clamps.
#[track_caller]
pub fn take_mode(
    x: &Array,
    indices: impl ArrayLike,
    axis: Option<isize>,
    mode: IndexMode,
) -> Array {
    let indices = indices.into_array();
    check_index_array("take", &indices);
    let (x, axis) = match axis {
        None => (ravel(x), 0),
        Some(a) => (x.clone(), normalize_axis("take", a, x.ndim())),
    };
    bind1(&Gather { axis, mode }, &[&x, &indices])
}

/// `out[.., j, ..] = x[.., indices[.., j, ..], ..]` along `axis`: `indices` has `x`'s rank and
/// broadcasts with `x` on the other axes (`jnp.take_along_axis`, e.g. with `argsort` results).
/// Out-of-bounds indices read the fill value, as in [`take`].
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape([2, 3]);
/// let idx = jnp::array(&[0, 2, 1, 0]).reshape([2, 2]);
/// let got = jnp::take_along_axis(&x, &idx, 1);
/// assert_eq!(got.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 5.0, 4.0]);
/// ```
#[track_caller]
pub fn take_along_axis(x: &Array, indices: &Array, axis: isize) -> Array {
    check_index_array("take_along_axis", indices);
    if indices.ndim() != x.ndim() {
        panic!(
            "take_along_axis: indices of shape {} must have the rank of the array of shape {}",
            ShapeDisplay(indices.shape()),
            ShapeDisplay(x.shape())
        );
    }
    let ax = normalize_axis("take_along_axis", axis, x.ndim());
    let mut shape = Vec::with_capacity(x.ndim());
    for d in 0..x.ndim() {
        let (n, m) = (x.shape()[d], indices.shape()[d]);
        shape.push(match (d == ax, n, m) {
            (true, _, m) => m,
            (false, n, m) if n == m || m == 1 => n,
            (false, 1, m) => m,
            _ => panic!(
                "take_along_axis: indices of shape {} do not broadcast with the array of shape {} outside axis {ax}",
                ShapeDisplay(indices.shape()),
                ShapeDisplay(x.shape())
            ),
        });
    }
    // Flat positions in x: each axis contributes its coordinate (0 where x has extent 1)
    // times x's stride, and the index axis contributes the normalized index.
    let strides = crate::shape::contiguous_strides(x.shape());
    let n = x.shape()[ax] as i64;
    let dtype = position_dtype([indices.dtype()], x.size());
    let i = astype(&broadcast_to(indices, &shape), dtype);
    let i = where_(less(&i, 0), i.add(n), &i);
    let valid = logical_and(i.ge(0), i.lt(n));
    let mut flat = i.mul(strides[ax] as i64);
    for d in (0..x.ndim()).filter(|&d| d != ax && x.shape()[d] != 1) {
        let coord = bind1(&Iota { dtype, shape: shape.clone(), dimension: d }, &[]);
        flat = flat.add(coord.mul(strides[d] as i64));
    }
    let flat = where_(&valid, &flat, x.size() as i64);
    bind1(&Gather { axis: 0, mode: IndexMode::FillOrDrop }, &[&ravel(x), &flat])
}

/// One-hot encoding: `indices` with a new last axis of `num_classes`, `1.0` where the class
/// equals the index (`f32`; `jax.nn.one_hot`). Out-of-range indices, negative ones included,
/// give rows of zeros.
///
/// ```
/// use rjax_runtime::jnp;
/// let y = jnp::one_hot(&jnp::array(&[1, 3]), 3);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
/// ```
#[track_caller]
pub fn one_hot(indices: &Array, num_classes: usize) -> Array {
    let classes = bind1(&Iota { dtype: DType::I32, shape: vec![num_classes], dimension: 0 }, &[]);
    astype(&equal(expand_dims(indices, -1), &classes), crate::dtype::default_float())
}

impl Array {
    /// The elements an index expression selects (JAX's `x[...]`); build the expression with
    /// [`s!`](crate::s). Integer positions out of bounds clamp, as in JAX.
    ///
    /// ```
    /// use rjax_runtime::{jnp, s};
    /// let x = jnp::arange(5);
    /// assert_eq!(x.slice(s![1..;2]).to_vec::<i32>().unwrap(), vec![1, 3]);
    /// assert_eq!(x.slice(s![..;-1]).to_vec::<i32>().unwrap(), vec![4, 3, 2, 1, 0]);
    /// assert_eq!(x.slice(s![10]).item::<i32>().unwrap(), 4);
    /// ```
    #[track_caller]
    pub fn slice(&self, index: impl AsRef<[SliceElem]>) -> Array {
        index_with("slice", self, index.as_ref(), IndexMode::Clip)
    }

    /// A functional update of the elements `index` selects (JAX's `x.at[...]`); see [`At`].
    #[track_caller]
    pub fn at(&self, index: impl AsRef<[SliceElem]>) -> At<'_> {
        At { array: self, index: index.as_ref().to_vec() }
    }

    /// [`jnp::take`](take) as a method.
    #[track_caller]
    pub fn take(&self, indices: impl ArrayLike, axis: Option<isize>) -> Array {
        take(self, indices, axis)
    }
}
