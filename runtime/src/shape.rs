//! Shape arithmetic shared by every op: broadcasting, strides, axis normalization, and the
//! one check that keeps every element count, stride and byte size in range.
//!
//! # The shape invariant
//! A shape is *valid* for a dtype when the product of its extents, counting an extent of 0 as
//! 1, times the element size, is at most `isize::MAX` bytes (Rust's limit on one allocation).
//! Counting 0 as 1 makes every partial product (the strides, the rows of a reduction, a
//! window's size) fit in a `usize` too, even for an empty array such as `(0, 2^62)`. Every
//! array rjax makes has a valid shape: creation functions, `from_shape_vec`, and every
//! primitive's result shape ([`crate::primitives::bind`]) are checked with [`check`] or
//! [`validate`], so kernels may compute sizes and offsets with plain arithmetic.

use std::fmt;

/// Formats a shape as NumPy does: `(2, 3)`, `(5,)`, `()`.
pub struct ShapeDisplay<'a>(pub &'a [usize]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            [] => f.write_str("()"),
            [n] => write!(f, "({n},)"),
            dims => {
                f.write_str("(")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{d}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Number of elements of a shape (valid shapes only: see [the invariant](self)).
pub fn size(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// The most bytes one array may hold.
pub const MAX_BYTES: usize = isize::MAX as usize;

/// The element count of `shape`, if the shape is valid for elements of `element_bytes` bytes
/// (see [the invariant](self)); `None` when it is not.
pub fn checked_size(shape: &[usize], element_bytes: usize) -> Option<usize> {
    let mut bound = element_bytes.max(1);
    let mut count: usize = 1;
    for &d in shape {
        bound = bound.checked_mul(d.max(1)).filter(|&b| b <= MAX_BYTES)?;
        count *= d;
    }
    Some(count)
}

/// What the shape check needs of an element type (a `DType`): its size, and a name for
/// messages. A trait, so that shape arithmetic sits below the dtypes and arrays.
pub trait ElementKind: fmt::Display + Copy {
    /// Bytes per element.
    fn element_bytes(self) -> usize;
}

/// The element count of `shape` for `dtype`, or a message saying why no array can have it
/// (without the operation's name: callers prefix it).
pub fn validate(shape: &[usize], dtype: impl ElementKind) -> Result<usize, String> {
    checked_size(shape, dtype.element_bytes()).ok_or_else(|| too_large(shape, dtype))
}

/// The element count of `shape` for `dtype`, panicking with `op`'s name when no array can
/// have the shape (its bytes would exceed `isize::MAX`).
#[track_caller]
pub fn check(op: &str, shape: &[usize], dtype: impl ElementKind) -> usize {
    match validate(shape, dtype) {
        Ok(n) => n,
        Err(msg) => panic!("{op}: {msg}"),
    }
}

/// Why `shape` is not valid for `dtype`.
pub fn too_large(shape: &[usize], dtype: impl ElementKind) -> String {
    format!(
        "an array of shape {} and dtype {dtype} would hold more than isize::MAX bytes \
         (the product of its extents overflows), so no such array can exist",
        ShapeDisplay(shape)
    )
}

/// The product of `dims` if it fits in a `usize` (for extents that do not form an array's
/// shape yet, such as a reshape's known extents).
pub fn checked_product(dims: impl IntoIterator<Item = usize>) -> Option<usize> {
    dims.into_iter().try_fold(1usize, |acc, d| acc.checked_mul(d))
}

/// Row-major strides (in elements) of a contiguous array of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut acc = 1;
    for ax in (0..shape.len()).rev() {
        strides[ax] = acc;
        acc *= shape[ax];
    }
    strides
}

/// NumPy's broadcast of two shapes, or `None` when they are incompatible.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let da = if i < rank - a.len() { 1 } else { a[i - (rank - a.len())] };
        let db = if i < rank - b.len() { 1 } else { b[i - (rank - b.len())] };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Strides for reading a contiguous array of `shape` as if broadcast to `out` (0 on broadcast
/// axes). `shape` must broadcast to `out`.
pub fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let own = contiguous_strides(shape);
    let lead = out.len() - shape.len();
    (0..out.len())
        .map(|ax| if ax < lead || shape[ax - lead] == 1 { 0 } else { own[ax - lead] })
        .collect()
}

/// Resolves a possibly negative `axis` against `rank`, panicking with the op's name when it is
/// out of range, as NumPy's `AxisError` does.
#[track_caller]
pub fn normalize_axis(op: &str, axis: isize, rank: usize) -> usize {
    let r = rank as isize;
    if axis < -r || axis >= r {
        panic!("{op}: axis {axis} is out of bounds for an array of rank {rank}");
    }
    if axis < 0 {
        (axis + r) as usize
    } else {
        axis as usize
    }
}

/// [`normalize_axis`] for each of `axes`, in order. A loop rather than a closure, so that a
/// panic points at the caller's line (closures do not carry `#[track_caller]`).
#[track_caller]
pub fn normalize_axes(op: &str, axes: &[isize], rank: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(axes.len());
    for &axis in axes {
        out.push(normalize_axis(op, axis, rank));
    }
    out
}

/// Axes for reductions and other multi-axis operations: all of them, or a list (negative
/// values count from the end).
///
/// Anything that converts into `Axes` can be passed where an op takes axes: `1`, `-1`,
/// `[0, 2]`, `&[0, 1][..]`, `vec![..]`, or [`Axes::All`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Axes {
    All,
    Some(Vec<isize>),
}

impl Axes {
    /// The sorted, de-duplicated, non-negative axes for an array of `rank`.
    #[track_caller]
    pub fn resolve(&self, op: &str, rank: usize) -> Vec<usize> {
        match self {
            Axes::All => (0..rank).collect(),
            Axes::Some(list) => {
                let mut out = normalize_axes(op, list, rank);
                out.sort_unstable();
                let before = out.len();
                out.dedup();
                if out.len() != before {
                    panic!("{op}: repeated axis in {list:?}");
                }
                out
            }
        }
    }
}

/// `a` as an axis number. A `usize` past `isize::MAX` saturates there, so that it is refused as
/// out of bounds instead of wrapping to a negative axis that counts from the end.
fn axis_number<T>(a: T) -> isize
where
    isize: TryFrom<T>,
{
    isize::try_from(a).unwrap_or(isize::MAX)
}

macro_rules! axes_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Axes {
            fn from(a: $t) -> Axes { Axes::Some(vec![axis_number(a)]) }
        }
        impl<const N: usize> From<[$t; N]> for Axes {
            fn from(a: [$t; N]) -> Axes { Axes::Some(a.iter().map(|&x| axis_number(x)).collect()) }
        }
        impl From<&[$t]> for Axes {
            fn from(a: &[$t]) -> Axes { Axes::Some(a.iter().map(|&x| axis_number(x)).collect()) }
        }
        impl From<Vec<$t>> for Axes {
            fn from(a: Vec<$t>) -> Axes { Axes::Some(a.iter().map(|&x| axis_number(x)).collect()) }
        }
    )*};
}
axes_from_int!(i32, i64, isize, usize);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes(&[3, 1], &[1, 4]), Some(vec![3, 4]));
        assert_eq!(broadcast_shapes(&[5], &[2, 1]), Some(vec![2, 5]));
        assert_eq!(broadcast_shapes(&[], &[2]), Some(vec![2]));
        assert_eq!(broadcast_shapes(&[3], &[4]), None);
        assert_eq!(broadcast_strides(&[3, 1], &[2, 3, 4]), vec![0, 1, 0]);
    }

    #[test]
    fn shapes_whose_bytes_overflow_are_invalid_even_when_empty() {
        assert_eq!(checked_size(&[2, 3], 4), Some(6));
        assert_eq!(checked_size(&[], 8), Some(1));
        assert_eq!(checked_size(&[0, 5], 4), Some(0));
        // 2^62 + 1 rows of 4: the element count wraps to 4 in a plain product.
        assert_eq!(checked_size(&[(1 << 62) + 1, 4], 4), None);
        assert_eq!(checked_size(&[1 << 32, 1 << 32], 1), None);
        // Empty, but its rows would not fit: a stride would overflow.
        assert_eq!(checked_size(&[0, 1 << 62, 1 << 62], 4), None);
        // The bound is in bytes: 2^61 f32 elements are 2^63 bytes.
        assert_eq!(checked_size(&[1 << 61], 1), Some(1 << 61));
        assert_eq!(checked_size(&[1 << 61], 4), None);
    }

    #[test]
    fn shapes_print_like_numpy() {
        assert_eq!(ShapeDisplay(&[5]).to_string(), "(5,)");
        assert_eq!(ShapeDisplay(&[2, 3]).to_string(), "(2, 3)");
    }
}
