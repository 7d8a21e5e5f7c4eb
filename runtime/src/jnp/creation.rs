//! Creating arrays: from Rust data, filled, ranges, identity.

use crate::dtype::{default_float, default_int, Element};
use crate::exec::cpu::{alloc, pool};
use crate::shape::ShapeDisplay;
use crate::{with_dtype, Array, DType};

/// Rust data that becomes an array: a slice, a `Vec` or a fixed-size array (or a reference to
/// one) of elements is 1-D; fixed-size arrays nested up to four deep (`[[T; M]; N]`, ...), and
/// `Vec`s and slices of fixed-size rows, give their nesting as the shape.
pub trait ArrayData<T> {
    /// The extents of the data's axes, outermost first.
    fn shape(&self) -> Vec<usize>;
    /// The elements in row-major order.
    fn into_vec(self) -> Vec<T>;
}

impl<T: Element> ArrayData<T> for &[T] {
    fn shape(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn into_vec(self) -> Vec<T> {
        self.to_vec()
    }
}

impl<T: Element, const N: usize> ArrayData<T> for &[T; N] {
    fn shape(&self) -> Vec<usize> {
        vec![N]
    }
    fn into_vec(self) -> Vec<T> {
        self.to_vec()
    }
}

impl<T: Element, const N: usize> ArrayData<T> for [T; N] {
    fn shape(&self) -> Vec<usize> {
        vec![N]
    }
    fn into_vec(self) -> Vec<T> {
        self.to_vec()
    }
}

impl<T: Element> ArrayData<T> for Vec<T> {
    fn shape(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn into_vec(self) -> Vec<T> {
        self
    }
}

impl<T: Element> ArrayData<T> for &Vec<T> {
    fn shape(&self) -> Vec<usize> {
        vec![self.len()]
    }
    fn into_vec(self) -> Vec<T> {
        self.clone()
    }
}

/// `ArrayData` for nested data: `$ty` (with the generic extents `$n..`) is a sequence of
/// `$len` rows of extents `$rows..`, flattened by `$flat` (`as_flattened` per nesting level).
macro_rules! nested_data {
    ($([$($n:ident),*] $ty:ty, $len:expr, [$($rows:ident),*], |$s:ident| $flat:expr;)*) => {$(
        impl<T: Element, $(const $n: usize),*> ArrayData<T> for $ty {
            fn shape(&self) -> Vec<usize> {
                #[allow(unused_variables)]
                let $s = self;
                vec![$len, $($rows),*]
            }
            fn into_vec(self) -> Vec<T> {
                let $s = &self;
                $flat.to_vec()
            }
        }
    )*};
}

nested_data! {
    [N, M] [[T; M]; N], N, [M], |s| s.as_flattened();
    [N, M] &[[T; M]; N], N, [M], |s| s.as_flattened();
    [M] Vec<[T; M]>, s.len(), [M], |s| s.as_flattened();
    [M] &Vec<[T; M]>, s.len(), [M], |s| s.as_flattened();
    [M] &[[T; M]], s.len(), [M], |s| s.as_flattened();
    [N, M, L] [[[T; L]; M]; N], N, [M, L], |s| s.as_flattened().as_flattened();
    [N, M, L] &[[[T; L]; M]; N], N, [M, L], |s| s.as_flattened().as_flattened();
    [M, L] Vec<[[T; L]; M]>, s.len(), [M, L], |s| s.as_flattened().as_flattened();
    [N, M, L, K] [[[[T; K]; L]; M]; N], N, [M, L, K],
        |s| s.as_flattened().as_flattened().as_flattened();
    [N, M, L, K] &[[[[T; K]; L]; M]; N], N, [M, L, K],
        |s| s.as_flattened().as_flattened().as_flattened();
}

/// An array from Rust data, with the element type's dtype: 1-D from a slice, `Vec` or
/// fixed-size array; nested fixed-size arrays (up to four deep) give their nesting as the
/// shape, as nested lists do in `jnp.array`. In a traced function the result is a constant.
///
/// ```
/// use rjax_runtime::{jnp, DType};
/// let x = jnp::array(&[1.0f32, 2.0]);
/// assert_eq!((x.shape(), x.dtype()), (&[2][..], DType::F32));
/// assert_eq!(jnp::array(vec![1i32, 2, 3]).dtype(), DType::I32);
/// let m = jnp::array([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
/// assert_eq!(m.shape(), &[2, 3]);
/// assert_eq!(m.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
/// assert_eq!(jnp::array([[[true], [false]]]).shape(), &[1, 2, 1]);
/// ```
#[track_caller]
pub fn array<T: Element>(data: impl ArrayData<T>) -> Array {
    let shape = data.shape();
    Array::from_shape_vec(shape, data.into_vec())
}

/// An array of `shape` filled with `value` converted to `dtype`.
#[track_caller]
pub fn full_dtype(shape: impl AsRef<[usize]>, value: f64, dtype: DType) -> Array {
    full_dtype_named("full", shape.as_ref(), value, dtype)
}

/// An array of `shape` filled with `value`, with `value`'s dtype.
#[track_caller]
pub fn full<T: Element>(shape: impl AsRef<[usize]>, value: T) -> Array {
    full_named("full", shape.as_ref(), value)
}

/// [`full`] for the function `op` the user called (`zeros`, `ones`, ...), which its errors name.
#[track_caller]
fn full_named<T: Element>(op: &str, shape: &[usize], value: T) -> Array {
    let n = crate::shape::check(op, shape, T::DTYPE);
    Array::from_shape_vec(shape, filled(op, shape, n, value))
}

/// [`full_dtype`] named `op` in its errors.
#[track_caller]
fn full_dtype_named(op: &str, shape: &[usize], value: f64, dtype: DType) -> Array {
    let dtype = crate::dtype::canonicalize(dtype);
    with_dtype!(dtype, |T| full_named(op, shape, T::from_f64(value)))
}

/// An array of `shape` filled with `value` in exactly `dtype`, whatever the dtype mode: for the
/// internal computations that keep 64-bit values in the 32-bit mode (derivative and batching
/// rules building constants of their operands' dtypes).
#[track_caller]
pub(crate) fn full_exact(shape: &[usize], value: f64, dtype: DType) -> Array {
    let n = crate::shape::check("full", shape, dtype);
    with_dtype!(dtype, |T| Array::from_buffer(
        shape,
        T::wrap(filled("full", shape, n, T::from_f64(value))),
        false
    ))
}

/// `n` copies of `value` in a buffer the kernels' outputs would get: a pooled one, or fresh
/// memory marked for huge pages when large (see `exec::cpu::alloc`). An allocation failure
/// names `op` and `shape`.
#[track_caller]
fn filled<T: Element>(op: &str, shape: &[usize], n: usize, value: T) -> Vec<T> {
    alloc::named(
        || format!("{op} (shape {}, {})", ShapeDisplay(shape), T::DTYPE),
        || {
            let mut v = pool::take(n);
            v.resize(n, value);
            v
        },
    )
}

/// `n` values `f(0), f(1), ...` in a fallibly allocated buffer (see [`filled`]).
#[track_caller]
fn generated<T: Element>(op: &str, n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    alloc::named(
        || format!("{op} (shape ({n},), {})", T::DTYPE),
        || {
            let mut v = pool::take(n);
            v.extend((0..n).map(f));
            v
        },
    )
}

/// An `f32` array of zeros.
#[track_caller]
pub fn zeros(shape: impl AsRef<[usize]>) -> Array {
    full_dtype_named("zeros", shape.as_ref(), 0.0, default_float())
}

/// An `f32` array of ones.
#[track_caller]
pub fn ones(shape: impl AsRef<[usize]>) -> Array {
    full_dtype_named("ones", shape.as_ref(), 1.0, default_float())
}

/// Zeros of `dtype`.
#[track_caller]
pub fn zeros_dtype(shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    full_dtype_named("zeros", shape.as_ref(), 0.0, dtype)
}

/// Ones of `dtype`.
#[track_caller]
pub fn ones_dtype(shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    full_dtype_named("ones", shape.as_ref(), 1.0, dtype)
}

/// Zeros with `x`'s shape and dtype.
#[track_caller]
pub fn zeros_like(x: &Array) -> Array {
    full_dtype_named("zeros_like", x.shape(), 0.0, x.dtype())
}

/// Ones with `x`'s shape and dtype.
#[track_caller]
pub fn ones_like(x: &Array) -> Array {
    full_dtype_named("ones_like", x.shape(), 1.0, x.dtype())
}

/// `value` (converted) with `x`'s shape and dtype.
#[track_caller]
pub fn full_like(x: &Array, value: f64) -> Array {
    full_dtype_named("full_like", x.shape(), value, x.dtype())
}

/// A number that can bound a range: integers give ranges of the default integer type, floats
/// of the default float type (`int32`/`float32`, 64-bit with x64 on).
pub trait RangeBound: Copy {
    /// The range's dtype in the current mode.
    fn dtype() -> DType;
    fn to_f64(self) -> f64;
}

macro_rules! range_bound {
    ($($t:ty => $d:expr),*) => {$(
        impl RangeBound for $t {
            fn dtype() -> DType { $d }
            fn to_f64(self) -> f64 { self as f64 }
        }
    )*};
}
range_bound!(i32 => default_int(), i64 => default_int(), usize => default_int(), f32 => default_float(), f64 => default_float());

/// `[0, 1, ..., stop)`: `jnp::arange(4)` is `i32`, `jnp::arange(4.0)` is `f32`.
#[track_caller]
pub fn arange<T: RangeBound>(stop: T) -> Array {
    arange_step(0.0, stop.to_f64(), 1.0, T::dtype())
}

/// `[start, start + step, ...)` up to but excluding `stop`, in `dtype`.
#[track_caller]
pub fn arange_step(start: f64, stop: f64, step: f64, dtype: DType) -> Array {
    let dtype = crate::dtype::canonicalize(dtype);
    if step == 0.0 || !step.is_finite() {
        panic!("arange: step must be finite and nonzero, got {step}");
    }
    let count = ((stop - start) / step).ceil().max(0.0);
    // A count past the largest array (or NaN from infinite bounds) is refused, not saturated.
    if count.is_nan() || count >= crate::shape::MAX_BYTES as f64 {
        panic!("arange: start={start}, stop={stop}, step={step} would give {count} elements, more than any array can hold");
    }
    let n = count as usize;
    crate::shape::check("arange", &[n], dtype);
    with_dtype!(dtype, |T| {
        let data = generated("arange", n, |i| T::from_f64(start + i as f64 * step));
        Array::from_shape_vec([n], data)
    })
}

/// `num` evenly spaced values of the default float type from `start` to `stop` inclusive.
#[track_caller]
pub fn linspace(start: f64, stop: f64, num: usize) -> Array {
    linspace_dtype(start, stop, num, default_float())
}

/// [`linspace`] in a chosen dtype. Values are computed in f64 and rounded once.
#[track_caller]
pub fn linspace_dtype(start: f64, stop: f64, num: usize, dtype: DType) -> Array {
    let dtype = crate::dtype::canonicalize(dtype);
    let step = if num > 1 { (stop - start) / (num - 1) as f64 } else { 0.0 };
    crate::shape::check("linspace", &[num], dtype);
    with_dtype!(dtype, |T| {
        let data = generated("linspace", num, |i| {
            T::from_f64(if i + 1 == num && num > 1 { stop } else { start + i as f64 * step })
        });
        Array::from_shape_vec([num], data)
    })
}

/// The `n x n` identity matrix in the default float type.
#[track_caller]
pub fn eye(n: usize) -> Array {
    eye_dtype(n, n, 0, default_float())
}

/// An `n x m` matrix with ones on diagonal `k` (above the main one for `k > 0`).
#[track_caller]
pub fn eye_dtype(n: usize, m: usize, k: isize, dtype: DType) -> Array {
    let dtype = crate::dtype::canonicalize(dtype);
    let len = crate::shape::check("eye", &[n, m], dtype);
    with_dtype!(dtype, |T| {
        let mut data = filled("eye", &[n, m], len, T::from_f64(0.0));
        for i in 0..n {
            let j = i as isize + k;
            if j >= 0 && (j as usize) < m {
                data[i * m + j as usize] = T::from_f64(1.0);
            }
        }
        Array::from_shape_vec([n, m], data)
    })
}

/// A weakly typed 0-d array, as `jnp.asarray(1.0)` makes from a Python scalar.
pub fn asarray<T: Element>(value: T) -> Array {
    Array::weak_scalar(value)
}

/// `jnp.empty`: JAX has no uninitialized memory, so this is [`zeros`] (default float).
#[track_caller]
pub fn empty(shape: impl AsRef<[usize]>) -> Array {
    zeros(shape)
}

/// `jnp.empty_like`: [`zeros_like`].
#[track_caller]
pub fn empty_like(x: &Array) -> Array {
    zeros_like(x)
}
