//! NumPy functions that are short compositions of others: `float_power`, `nan_to_num`,
//! `append`, `diagflat`, the `*_indices_from` family, `ediff1d`, `logspace`, `indices`,
//! broadcasting helpers, vector and matrix products (`matvec`, `vecmat`, `vecdot`,
//! `matrix_transpose`), `iscomplex` and `isreal`, `rollaxis`, `select`, `trapezoid`,
//! `vander`, the window functions (`bartlett`, `blackman`, `hamming`, `hanning`) and `copy`.

use std::borrow::Borrow;

use super::{
    add, broadcast_to, concatenate, conj, convert, cos, diag, diag_indices, diff, equal, imag,
    isnan, isneginf, isposinf, matmul, moveaxis, multiply, not_equal, pow, promote_inexact, ravel,
    subtract, sum_axes, swapaxes, tril_indices, triu_indices, where_, ArrayLike,
};
use crate::primitives::{bind1, Iota};
use crate::shape::{normalize_axis, ShapeDisplay};
use crate::{Array, DType};

/// `a ** b` computed in floating point (`jnp.float_power`): integer and bool operands are
/// promoted to the default float type first, so negative integer exponents are defined.
///
/// ```
/// use rjax_runtime::jnp;
/// let y = jnp::float_power(&jnp::array([2i32, 4]), -1);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.5, 0.25]);
/// ```
#[track_caller]
pub fn float_power(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_inexact(&[a.into_operand("float_power"), b.into_operand("float_power")]);
    pow(&ops[0], &ops[1])
}

/// The largest finite value of a floating-point dtype.
fn finite_max(dtype: DType) -> f64 {
    match dtype {
        DType::F16 => half::f16::MAX.to_f64(),
        DType::BF16 => half::bf16::MAX.to_f64(),
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

/// `x` with NaN replaced by `nan`, positive infinity by `posinf` and negative infinity by
/// `neginf` (`jnp.nan_to_num`); the infinities default to the dtype's largest finite values.
/// Integer and bool arrays are returned as they are; complex ones are treated part by part.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::array([f32::NAN, f32::INFINITY, -1.0]);
/// let y = jnp::nan_to_num(&x, 0.0, None, Some(-9.0));
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, f32::MAX, -1.0]);
/// ```
#[track_caller]
pub fn nan_to_num(x: &Array, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Array {
    let d = x.dtype();
    if d.is_complex() {
        let part = |p: &Array| nan_to_num(p, nan, posinf, neginf);
        return super::complex(part(&super::real(x)), part(&imag(x)));
    }
    if !d.is_float() {
        return x.clone();
    }
    let big = finite_max(d);
    let out = where_(isnan(x), nan, x);
    let out = where_(isposinf(&out), posinf.unwrap_or(big), &out);
    convert(&where_(isneginf(&out), neginf.unwrap_or(-big), &out), d, x.is_weak())
}

/// `values` appended to `arr` along `axis` (`jnp.append`); with `None`, both are flattened
/// first. The result has the promoted dtype.
#[track_caller]
pub fn append(arr: &Array, values: &Array, axis: Option<isize>) -> Array {
    match axis {
        None => concatenate(&[ravel(arr), ravel(values)], 0),
        Some(axis) => concatenate(&[arr, values], axis),
    }
}

/// The 2-D array with the flattened `v` on its `k`-th diagonal (`jnp.diagflat`).
#[track_caller]
pub fn diagflat(v: &Array, k: isize) -> Array {
    diag(&ravel(v), k)
}

/// The indices of the main diagonal of `a` (`jnp.diag_indices_from`), whose axes must all
/// have one length.
#[track_caller]
pub fn diag_indices_from(a: &Array) -> Vec<Array> {
    let s = a.shape();
    if a.ndim() < 2 || s.iter().any(|&n| n != s[0]) {
        panic!(
            "diag_indices_from: the input must have at least 2 axes, all of one length, got \
             shape {}",
            ShapeDisplay(s)
        );
    }
    diag_indices(s[0], a.ndim())
}

#[track_caller]
fn matrix_shape(op: &str, a: &Array) -> (usize, usize) {
    if a.ndim() != 2 {
        panic!("{op}: the input must be 2-D, got shape {}", ShapeDisplay(a.shape()));
    }
    (a.shape()[0], a.shape()[1])
}

/// The indices of the lower triangle of the 2-D `a`, on and below its `k`-th diagonal
/// (`jnp.tril_indices_from`).
#[track_caller]
pub fn tril_indices_from(a: &Array, k: isize) -> (Array, Array) {
    let (n, m) = matrix_shape("tril_indices_from", a);
    tril_indices(n, k, Some(m))
}

/// The indices of the upper triangle of the 2-D `a`, on and above its `k`-th diagonal
/// (`jnp.triu_indices_from`).
#[track_caller]
pub fn triu_indices_from(a: &Array, k: isize) -> (Array, Array) {
    let (n, m) = matrix_shape("triu_indices_from", a);
    triu_indices(n, k, Some(m))
}

/// The differences of consecutive elements of the flattened `ary` (`jnp.ediff1d`), with
/// `to_begin` and `to_end` (flattened, converted to `ary`'s dtype) around them.
///
/// ```
/// use rjax_runtime::jnp;
/// let d = jnp::ediff1d(&jnp::array([1, 4, 9]), Some(&jnp::array([7])), None);
/// assert_eq!(d.to_vec::<i32>().unwrap(), vec![3, 5, 7]);
/// ```
#[track_caller]
pub fn ediff1d(ary: &Array, to_end: Option<&Array>, to_begin: Option<&Array>) -> Array {
    let flat = ravel(ary);
    let mut parts = Vec::new();
    let as_ary = |a: &Array| ravel(&convert(a, flat.dtype(), flat.is_weak()));
    if let Some(b) = to_begin {
        parts.push(as_ary(b));
    }
    parts.push(diff(&flat, 1, 0));
    if let Some(e) = to_end {
        parts.push(as_ary(e));
    }
    concatenate(&parts, 0)
}

/// `num` values spaced evenly on a log scale (`jnp.logspace`): `base ** t` for `t` from
/// `start` to `stop` (included when `endpoint`), in `dtype` or the default float type.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::logspace(0.0, 2.0, 3, true, 10.0, None);
/// assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 10.0, 100.0]);
/// ```
#[track_caller]
pub fn logspace(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    base: f64,
    dtype: Option<DType>,
) -> Array {
    let dtype = crate::dtype::canonicalize(dtype.unwrap_or_else(crate::dtype::default_float));
    let compute = crate::dtype::to_inexact(dtype, false);
    let t = if endpoint || num == 0 {
        super::linspace_dtype(start, stop, num, compute)
    } else {
        let t = super::linspace_dtype(start, stop, num + 1, compute);
        super::slice_axis(&t, 0, 0, num)
    };
    let b = convert(&Array::weak_scalar(base), compute, false);
    super::astype(&pow(&b, &t), dtype)
}

/// An array of shape `(dimensions.len(), *dimensions)` whose `i`-th slice holds each
/// element's index along axis `i` (`jnp.indices`), in `dtype` or the default integer type.
///
/// ```
/// use rjax_runtime::jnp;
/// let ij = jnp::indices(&[2, 3], None);
/// assert_eq!(ij.shape(), &[2, 2, 3]);
/// assert_eq!(ij.to_vec::<i32>().unwrap(), vec![0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2]);
/// ```
#[track_caller]
pub fn indices(dimensions: &[usize], dtype: Option<DType>) -> Array {
    let dtype = dtype.unwrap_or_else(crate::dtype::default_int);
    let dtype = crate::dtype::canonicalize(dtype);
    if dtype.is_bool() {
        panic!("indices: dtype bool is not numeric");
    }
    let iota = |i| bind1(&Iota { dtype, shape: dimensions.to_vec(), dimension: i }, &[]);
    let grids: Vec<Array> = (0..dimensions.len()).map(iota).collect();
    if grids.is_empty() {
        return super::zeros_dtype([0usize], dtype);
    }
    super::stack(&grids, 0)
}

/// The shape that `shapes` broadcast to by NumPy's rules (`jnp.broadcast_shapes`); panics
/// naming them when they do not broadcast together.
///
/// ```
/// use rjax_runtime::jnp;
/// assert_eq!(jnp::broadcast_shapes(&[&[3, 1], &[4]]), vec![3, 4]);
/// ```
#[track_caller]
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for s in shapes {
        out = crate::shape::broadcast_shapes(&out, s).unwrap_or_else(|| {
            let all: Vec<String> = shapes.iter().map(|s| ShapeDisplay(s).to_string()).collect();
            panic!("broadcast_shapes: incompatible shapes for broadcasting: {}", all.join(", "))
        });
    }
    out
}

/// The arrays broadcast to their common shape (`jnp.broadcast_arrays`), each keeping its
/// dtype.
#[track_caller]
pub fn broadcast_arrays<A: Borrow<Array>>(arrays: &[A]) -> Vec<Array> {
    let shapes: Vec<&[usize]> = arrays.iter().map(|a| a.borrow().shape()).collect();
    let shape = broadcast_shapes(&shapes);
    arrays.iter().map(|a| broadcast_to(a.borrow(), &shape)).collect()
}

/// `x` with its last two axes swapped (`jnp.matrix_transpose`); `x` has at least 2 axes.
#[track_caller]
pub fn matrix_transpose(x: &Array) -> Array {
    if x.ndim() < 2 {
        panic!(
            "matrix_transpose: x must have at least 2 axes, got shape {}",
            ShapeDisplay(x.shape())
        );
    }
    swapaxes(x, -1, -2)
}

/// The matrix-vector product over the last axes (`jnp.matvec`): `x1` of shape
/// `(..., n, m)` times `x2` of shape `(..., m)`, with the leading axes broadcast.
#[track_caller]
pub fn matvec(x1: &Array, x2: &Array) -> Array {
    if x1.ndim() < 2 || x2.ndim() < 1 {
        panic!(
            "matvec: x1 must have at least 2 axes and x2 at least 1, got shapes {} and {}",
            ShapeDisplay(x1.shape()),
            ShapeDisplay(x2.shape())
        );
    }
    matmul(x1, &x2.expand_dims(-1)).squeeze(-1)
}

/// The vector-matrix product over the last axes (`jnp.vecmat`): the conjugate of `x1` of
/// shape `(..., m)` times `x2` of shape `(..., m, n)`, with the leading axes broadcast.
#[track_caller]
pub fn vecmat(x1: &Array, x2: &Array) -> Array {
    if x1.ndim() < 1 || x2.ndim() < 2 {
        panic!(
            "vecmat: x1 must have at least 1 axis and x2 at least 2, got shapes {} and {}",
            ShapeDisplay(x1.shape()),
            ShapeDisplay(x2.shape())
        );
    }
    matmul(&conj(x1).expand_dims(-2), x2).squeeze(-2)
}

/// The dot product of the conjugate of `x1` with `x2` along `axis` (`jnp.vecdot`), the other
/// axes broadcast.
///
/// ```
/// use rjax_runtime::jnp;
/// let v = jnp::vecdot(&jnp::array([[1.0f32, 2.0], [3.0, 4.0]]), &jnp::array([1.0f32, -1.0]), -1);
/// assert_eq!(v.to_vec::<f32>().unwrap(), vec![-1.0, -1.0]);
/// ```
#[track_caller]
pub fn vecdot(x1: &Array, x2: &Array, axis: isize) -> Array {
    let shape = broadcast_shapes(&[x1.shape(), x2.shape()]);
    let ax = normalize_axis("vecdot", axis, shape.len());
    let len = |x: &Array| {
        let at = ax as isize - shape.len() as isize + x.ndim() as isize;
        usize::try_from(at).ok().map(|a| x.shape()[a])
    };
    if len(x1) != len(x2) {
        panic!(
            "vecdot: x1 and x2 must have one length along axis {axis}, got shapes {} and {}",
            ShapeDisplay(x1.shape()),
            ShapeDisplay(x2.shape())
        );
    }
    sum_axes(&multiply(conj(x1), x2), ax as isize, false)
}

/// Whether each element has a nonzero imaginary part (`jnp.iscomplex`), as `bool`.
#[track_caller]
pub fn iscomplex(x: &Array) -> Array {
    not_equal(imag(x), 0)
}

/// Whether each element has a zero imaginary part (`jnp.isreal`), as `bool`.
#[track_caller]
pub fn isreal(x: &Array) -> Array {
    equal(imag(x), 0)
}

/// Whether `x` has a complex dtype (`jnp.iscomplexobj`).
pub fn iscomplexobj(x: &Array) -> bool {
    x.dtype().is_complex()
}

/// Whether `x` has a real (not complex) dtype (`jnp.isrealobj`).
pub fn isrealobj(x: &Array) -> bool {
    !x.dtype().is_complex()
}

/// `a` with axis `axis` moved to sit before position `start` (`jnp.rollaxis`, NumPy's older
/// form of [`moveaxis`]).
#[track_caller]
pub fn rollaxis(a: &Array, axis: isize, start: isize) -> Array {
    let n = a.ndim() as isize;
    let axis = normalize_axis("rollaxis", axis, a.ndim()) as isize;
    let start = if start < 0 { start + n } else { start };
    if !(0..=n).contains(&start) {
        panic!("rollaxis: start {start} is out of bounds for an array of rank {n}");
    }
    let start = if axis < start { start - 1 } else { start };
    if axis == start {
        return a.clone();
    }
    moveaxis(a, axis, start)
}

/// The element of the first of `choicelist` whose condition in `condlist` holds, `default`
/// where none does (`jnp.select`); conditions and choices broadcast together and the choices
/// are promoted to a common dtype.
///
/// ```
/// use rjax_runtime::jnp;
/// let x = jnp::arange(5);
/// let conds = [jnp::less(&x, 2), jnp::greater(&x, 3)];
/// let y = jnp::select(&conds, &[&x, &jnp::multiply(&x, 10)], -1);
/// assert_eq!(y.to_vec::<i32>().unwrap(), vec![0, 1, -1, -1, 40]);
/// ```
#[track_caller]
pub fn select<C: Borrow<Array>, V: Borrow<Array>>(
    condlist: &[C],
    choicelist: &[V],
    default: impl ArrayLike,
) -> Array {
    if condlist.len() != choicelist.len() || condlist.is_empty() {
        panic!(
            "select: condlist and choicelist must have one nonzero length, got {} and {}",
            condlist.len(),
            choicelist.len()
        );
    }
    let mut out = default.into_operand("select");
    for (c, v) in condlist.iter().zip(choicelist).rev() {
        let c = c.borrow();
        if !c.dtype().is_bool() {
            panic!("select: condlist must hold bool arrays, got {}", c.aval());
        }
        out = where_(c, v.borrow(), &out);
    }
    out
}

/// The integral of `y` along `axis` by the trapezoidal rule (`jnp.trapezoid`), at sample
/// points `x` (1-D along that axis, or of `y`'s rank) or `dx` apart.
///
/// ```
/// use rjax_runtime::jnp;
/// let y = jnp::array([1.0f32, 2.0, 3.0]);
/// assert_eq!(jnp::trapezoid(&y, None, 0.5, -1).item::<f32>().unwrap(), 2.0);
/// ```
#[track_caller]
pub fn trapezoid(y: &Array, x: Option<&Array>, dx: f64, axis: isize) -> Array {
    let ax = normalize_axis("trapezoid", axis, y.ndim()) as isize;
    let y = moveaxis(y, ax, -1);
    let n = y.shape()[y.ndim() - 1];
    let y = promote_inexact(std::slice::from_ref(&y)).pop().expect("one operand");
    let pairs = add(
        super::slice_axis(&y, y.ndim() - 1, 1, n.max(1)),
        super::slice_axis(&y, y.ndim() - 1, 0, n.saturating_sub(1)),
    );
    let weighted = match x {
        None => multiply(&pairs, dx),
        Some(x) if x.ndim() == 1 => multiply(diff(x, 1, 0), &pairs),
        Some(x) if x.ndim() == y.ndim() => multiply(diff(&moveaxis(x, ax, -1), 1, -1), &pairs),
        Some(x) => panic!(
            "trapezoid: x must be 1-D or have y's rank, got shapes {} and {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(y.shape())
        ),
    };
    multiply(sum_axes(&weighted, -1, false), 0.5)
}

/// The Vandermonde matrix of the 1-D `x` (`jnp.vander`): its columns are powers of `x`,
/// decreasing from `n - 1` to 0 (increasing with `increasing`); `n` defaults to `x`'s length.
///
/// ```
/// use rjax_runtime::jnp;
/// let v = jnp::vander(&jnp::array([2, 3]), Some(3), false);
/// assert_eq!(v.to_vec::<i32>().unwrap(), vec![4, 2, 1, 9, 3, 1]);
/// ```
#[track_caller]
pub fn vander(x: &Array, n: Option<usize>, increasing: bool) -> Array {
    if x.ndim() != 1 {
        panic!("vander: x must be 1-D, got shape {}", ShapeDisplay(x.shape()));
    }
    let n = n.unwrap_or(x.shape()[0]);
    if x.dtype().is_bool() {
        panic!("vander: x must be numeric, got bool");
    }
    let iota = bind1(&Iota { dtype: x.dtype(), shape: vec![n], dimension: 0 }, &[]);
    let powers = if increasing { iota } else { super::flip(&iota, 0) };
    pow(x.expand_dims(-1), powers.expand_dims(0))
}

/// `0..m` in the default float type, and `m - 1` (at least 1).
#[track_caller]
fn window_points(m: usize) -> (Array, f64) {
    let dtype = crate::dtype::default_float();
    (super::arange_step(0.0, m as f64, 1.0, dtype), m.saturating_sub(1).max(1) as f64)
}

/// A sum of cosines `sum_k a_k cos(2 pi k n / (m - 1))` over `n` in `0..m`.
#[track_caller]
fn cosine_window(m: usize, coefficients: &[f64]) -> Array {
    let (n, span) = window_points(m);
    if m == 1 {
        return super::ones_dtype([1], n.dtype());
    }
    let mut out = super::zeros_dtype([m], n.dtype());
    for (k, &a) in coefficients.iter().enumerate() {
        let phase = multiply(&n, 2.0 * std::f64::consts::PI * k as f64 / span);
        out = add(&out, multiply(cos(&phase), a));
    }
    out
}

/// The Bartlett (triangular) window of `m` points (`jnp.bartlett`), in the default float type.
#[track_caller]
pub fn bartlett(m: usize) -> Array {
    let (n, span) = window_points(m);
    if m == 1 {
        return super::ones_dtype([1], n.dtype());
    }
    let t = subtract(multiply(&n, 2.0 / span), 1.0);
    subtract(1.0, super::abs(&t))
}

/// The Blackman window of `m` points (`jnp.blackman`), in the default float type.
#[track_caller]
pub fn blackman(m: usize) -> Array {
    cosine_window(m, &[0.42, -0.5, 0.08])
}

/// The Hamming window of `m` points (`jnp.hamming`), in the default float type.
#[track_caller]
pub fn hamming(m: usize) -> Array {
    cosine_window(m, &[0.54, -0.46])
}

/// The Hann window of `m` points (`jnp.hanning`), in the default float type.
#[track_caller]
pub fn hanning(m: usize) -> Array {
    cosine_window(m, &[0.5, -0.5])
}

/// A copy of `x` (`jnp.copy`). Arrays are immutable, so this is `x` itself, sharing its
/// buffer.
pub fn copy(x: &Array) -> Array {
    x.clone()
}
