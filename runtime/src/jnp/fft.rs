//! Discrete Fourier transforms (`jnp.fft`): `fft`, `ifft`, `rfft`, `irfft`, their 2-d and n-d
//! forms, the sample frequencies `fftfreq` and `rfftfreq`, and `fftshift` / `ifftshift`.
//!
//! The arguments are JAX's: `n` (or `s` per axis) crops or zero-pads the input along the
//! transformed axes first; `axis` (or `axes`) picks them; `norm` is `"backward"` (the
//! default: the inverse transforms divide by the number of points), `"ortho"` (both divide by
//! its square root) or `"forward"` (the forward transforms divide). Real inputs of `fft` become
//! complex, integers `complex64`; `rfft` takes real arrays only.
//!
//! ```
//! use rjax_runtime::{jnp, Complex};
//! let x = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
//! let y = jnp::fft::rfft(&x, None, -1, None);
//! assert_eq!(y.to_vec::<Complex<f32>>().unwrap()[0], Complex::new(10.0, 0.0));
//! let back = jnp::fft::irfft(&y, Some(4), -1, None);
//! assert_eq!(back.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
//! ```

use super::{convert, moveaxis, multiply, pad};
use crate::primitives::{bind1, Fft, FftType, Slice};
use crate::shape::{normalize_axes, ShapeDisplay};
use crate::{Array, DType};

/// The complex-to-complex transform along `axis` (`jnp.fft.fft`), of `n` points (the input is
/// cropped or zero-padded to `n` first; by default its length along `axis`).
#[track_caller]
pub fn fft(a: &Array, n: Option<usize>, axis: isize, norm: Option<&str>) -> Array {
    transform("fft", FftType::Fft, a, n.map(|n| vec![n]), Some(&[axis]), norm)
}

/// The inverse of [`fft`] (`jnp.fft.ifft`).
#[track_caller]
pub fn ifft(a: &Array, n: Option<usize>, axis: isize, norm: Option<&str>) -> Array {
    transform("ifft", FftType::Ifft, a, n.map(|n| vec![n]), Some(&[axis]), norm)
}

/// The transform of a real array along `axis`, keeping the `n / 2 + 1` non-negative
/// frequencies (`jnp.fft.rfft`). Panics for complex input.
#[track_caller]
pub fn rfft(a: &Array, n: Option<usize>, axis: isize, norm: Option<&str>) -> Array {
    transform("rfft", FftType::Rfft, a, n.map(|n| vec![n]), Some(&[axis]), norm)
}

/// The inverse of [`rfft`] (`jnp.fft.irfft`): a real array of `n` points along `axis`
/// (by default `2 (m - 1)` for an input of length `m` there).
#[track_caller]
pub fn irfft(a: &Array, n: Option<usize>, axis: isize, norm: Option<&str>) -> Array {
    transform("irfft", FftType::Irfft, a, n.map(|n| vec![n]), Some(&[axis]), norm)
}

/// The 2-d transform over `axes` (`jnp.fft.fft2`; JAX's default axes are `[-2, -1]`).
#[track_caller]
pub fn fft2(a: &Array, s: Option<&[usize]>, axes: &[isize], norm: Option<&str>) -> Array {
    transform("fft2", FftType::Fft, a, s.map(<[usize]>::to_vec), Some(axes), norm)
}

/// The inverse of [`fft2`] (`jnp.fft.ifft2`).
#[track_caller]
pub fn ifft2(a: &Array, s: Option<&[usize]>, axes: &[isize], norm: Option<&str>) -> Array {
    transform("ifft2", FftType::Ifft, a, s.map(<[usize]>::to_vec), Some(axes), norm)
}

/// The n-d transform (`jnp.fft.fftn`) over `axes` (by default the last `s.len()` axes, or all
/// axes without `s`); at most 3 axes.
#[track_caller]
pub fn fftn(a: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Option<&str>) -> Array {
    transform("fftn", FftType::Fft, a, s.map(<[usize]>::to_vec), axes, norm)
}

/// The inverse of [`fftn`] (`jnp.fft.ifftn`).
#[track_caller]
pub fn ifftn(a: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Option<&str>) -> Array {
    transform("ifftn", FftType::Ifft, a, s.map(<[usize]>::to_vec), axes, norm)
}

/// The 2-d transform of a real array over `axes` (`jnp.fft.rfft2`; JAX's default axes are
/// `[-2, -1]`), keeping the non-negative frequencies along the last of them.
#[track_caller]
pub fn rfft2(a: &Array, s: Option<&[usize]>, axes: &[isize], norm: Option<&str>) -> Array {
    transform("rfft2", FftType::Rfft, a, s.map(<[usize]>::to_vec), Some(axes), norm)
}

/// The inverse of [`rfft2`] (`jnp.fft.irfft2`): a real array, of `2 (m - 1)` points along the
/// last axis unless `s` says otherwise.
#[track_caller]
pub fn irfft2(a: &Array, s: Option<&[usize]>, axes: &[isize], norm: Option<&str>) -> Array {
    transform("irfft2", FftType::Irfft, a, s.map(<[usize]>::to_vec), Some(axes), norm)
}

/// The n-d transform of a real array (`jnp.fft.rfftn`) over `axes` (by default the last
/// `s.len()` axes, or all axes without `s`; at most 3), keeping the non-negative frequencies
/// along the last of them.
///
/// ```
/// use rjax_runtime::jnp;
/// let y = jnp::fft::rfftn(&jnp::ones([2, 4]), None, None, None);
/// assert_eq!(y.shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn rfftn(a: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Option<&str>) -> Array {
    transform("rfftn", FftType::Rfft, a, s.map(<[usize]>::to_vec), axes, norm)
}

/// The inverse of [`rfftn`] (`jnp.fft.irfftn`): a real array.
#[track_caller]
pub fn irfftn(a: &Array, s: Option<&[usize]>, axes: Option<&[isize]>, norm: Option<&str>) -> Array {
    transform("irfftn", FftType::Irfft, a, s.map(<[usize]>::to_vec), axes, norm)
}

/// `x` rolled so that the zero frequency is in the middle of each of `axes` (all axes for
/// `None`): by `n / 2` along an axis of length `n` (`jnp.fft.fftshift`).
///
/// ```
/// use rjax_runtime::jnp;
/// let f = jnp::fft::fftshift(&jnp::arange(5), None);
/// assert_eq!(f.to_vec::<i32>().unwrap(), vec![3, 4, 0, 1, 2]);
/// ```
#[track_caller]
pub fn fftshift(x: &Array, axes: Option<&[isize]>) -> Array {
    shift("fftshift", x, axes, |n| (n / 2) as isize)
}

/// The inverse of [`fftshift`] (`jnp.fft.ifftshift`): rolls by `-(n / 2)`.
#[track_caller]
pub fn ifftshift(x: &Array, axes: Option<&[isize]>) -> Array {
    shift("ifftshift", x, axes, |n| -((n / 2) as isize))
}

#[track_caller]
fn shift(op: &str, x: &Array, axes: Option<&[isize]>, by: fn(usize) -> isize) -> Array {
    let axes = match axes {
        Some(axes) => normalize_axes(op, axes, x.ndim()),
        None => (0..x.ndim()).collect(),
    };
    axes.iter().fold(x.clone(), |y, &ax| super::roll(&y, by(x.shape()[ax]), Some(ax as isize)))
}

/// The sample frequencies of an `n`-point transform with sample spacing `d`
/// (`jnp.fft.fftfreq`): `[0, 1, ..., (n - 1) / 2, -(n / 2), ..., -1] / (d n)`, in `dtype`
/// (a float type; JAX's default is `float32`).
#[track_caller]
pub fn fftfreq(n: usize, d: f64, dtype: DType) -> Array {
    let k = (0..n).map(|i| if i < n.div_ceil(2) { i as f64 } else { i as f64 - n as f64 });
    frequencies("fftfreq", k.collect(), n, d, dtype)
}

/// The non-negative sample frequencies of an `n`-point [`rfft`] with sample spacing `d`
/// (`jnp.fft.rfftfreq`): `[0, 1, ..., n / 2] / (d n)`.
#[track_caller]
pub fn rfftfreq(n: usize, d: f64, dtype: DType) -> Array {
    frequencies("rfftfreq", (0..n / 2 + 1).map(|i| i as f64).collect(), n, d, dtype)
}

/// `k / (d n)` computed in `dtype`, as JAX divides.
#[track_caller]
fn frequencies(op: &str, k: Vec<f64>, n: usize, d: f64, dtype: DType) -> Array {
    if !dtype.is_float() {
        panic!("{op}: dtype must be a float type, got {dtype}");
    }
    let len = k.len();
    let k = convert(&Array::from_shape_vec([len], k), dtype, false);
    let scale = convert(&Array::from(d * n as f64), dtype, false);
    super::divide(&k, &scale)
}

/// JAX's `_fft_core`: moves the transformed axes last, crops or pads them to `s`, binds the
/// primitive, applies `norm`, and moves the axes back.
#[track_caller]
fn transform(
    op: &str,
    fft_type: FftType,
    a: &Array,
    s: Option<Vec<usize>>,
    axes: Option<&[isize]>,
    norm: Option<&str>,
) -> Array {
    let rank = a.ndim();
    let axes: Vec<usize> = match axes {
        Some(axes) => normalize_axes(op, axes, rank),
        None => {
            let k = s.as_ref().map_or(rank, Vec::len);
            if k > rank {
                panic!("{op}: s has {k} entries but the array has shape {}", shape(a));
            }
            (rank - k..rank).collect()
        }
    };
    check_axes(op, &axes, s.as_deref(), a);
    let x = prepare(op, fft_type, a);
    let trailing: Vec<usize> = (rank - axes.len()..rank).collect();
    let to_isize = |v: &[usize]| v.iter().map(|&a| a as isize).collect::<Vec<_>>();
    let x = moveaxis(&x, to_isize(&axes), to_isize(&trailing));
    let (x, lengths) = fit(op, fft_type, &x, s, axes.len());
    let y = bind1(&Fft { fft_type, fft_lengths: lengths.clone() }, &[&x]);
    let y = normalize(op, &y, &lengths, norm, matches!(fft_type, FftType::Ifft | FftType::Irfft));
    moveaxis(&y, to_isize(&trailing), to_isize(&axes))
}

fn shape(a: &Array) -> ShapeDisplay<'_> {
    ShapeDisplay(a.shape())
}

#[track_caller]
fn check_axes(op: &str, axes: &[usize], s: Option<&[usize]>, a: &Array) {
    if axes.is_empty() || axes.len() > 3 {
        panic!("{op}: transforms over 1 to 3 axes are supported, got axes {axes:?} of an array of shape {}", shape(a));
    }
    if (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        panic!("{op}: repeated axes are not supported, got {axes:?}");
    }
    if let Some(s) = s {
        if s.len() != axes.len() {
            panic!("{op}: s {s:?} and axes {axes:?} must have the same length");
        }
        if let Some(n) = s.iter().find(|&&n| n < 1) {
            panic!("{op}: invalid number of FFT data points ({n}) specified in {s:?}");
        }
    }
}

/// `a` converted as `lax.fft` converts it: to a float type for `rfft` (which refuses complex
/// input), to a complex type for the others.
#[track_caller]
fn prepare(op: &str, fft_type: FftType, a: &Array) -> Array {
    let d = a.dtype();
    let want = match fft_type {
        FftType::Rfft if d.is_complex() => {
            panic!("{op}: only real valued inputs are supported, got {}", a.aval())
        }
        FftType::Rfft => {
            if d == DType::F64 {
                DType::F64
            } else {
                DType::F32
            }
        }
        _ if d == DType::F64 || d == DType::C128 => DType::C128,
        _ => DType::C64,
    };
    convert(a, want, false)
}

/// `x` (transformed axes last) cropped or zero-padded to `s`, and the transform's lengths.
#[track_caller]
fn fit(
    op: &str,
    fft_type: FftType,
    x: &Array,
    s: Option<Vec<usize>>,
    k: usize,
) -> (Array, Vec<usize>) {
    let rank = x.ndim();
    let minor = &x.shape()[rank - k..];
    let irfft = fft_type == FftType::Irfft;
    let lengths = match s {
        Some(s) => s,
        None if irfft => {
            let mut s = minor.to_vec();
            s[k - 1] = 2 * minor[k - 1].saturating_sub(1);
            s
        }
        None => minor.to_vec(),
    };
    if let Some(n) = lengths.iter().find(|&&n| n < 1) {
        panic!(
            "{op}: invalid number of FFT data points ({n}); an input of length {} along the last axis gives none",
            minor[k - 1]
        );
    }
    let mut want = x.shape().to_vec();
    want[rank - k..].copy_from_slice(&lengths);
    if irfft {
        want[rank - 1] = lengths[k - 1] / 2 + 1;
    }
    (resize(x, &want), lengths)
}

/// `x` cropped and then zero-padded to `want`.
fn resize(x: &Array, want: &[usize]) -> Array {
    let limits: Vec<usize> = x.shape().iter().zip(want).map(|(&a, &b)| a.min(b)).collect();
    let x = if limits == x.shape() {
        x.clone()
    } else {
        let slice = Slice {
            start_indices: vec![0; limits.len()],
            limit_indices: limits.clone(),
            strides: vec![1; limits.len()],
        };
        bind1(&slice, &[x])
    };
    if limits == want {
        return x;
    }
    let widths: Vec<(usize, usize)> = limits.iter().zip(want).map(|(&a, &b)| (0, b - a)).collect();
    pad(&x, widths, 0.0)
}

/// JAX's `_fft_norm`: the factor `norm` asks for, applied in `y`'s dtype.
#[track_caller]
fn normalize(op: &str, y: &Array, lengths: &[usize], norm: Option<&str>, inverse: bool) -> Array {
    let points = lengths.iter().product::<usize>() as f64;
    let factor = match norm.unwrap_or("backward") {
        "backward" => return y.clone(),
        "ortho" if inverse => points.sqrt(),
        "ortho" => 1.0 / points.sqrt(),
        "forward" if inverse => points,
        "forward" => 1.0 / points,
        other => panic!(
            "{op}: invalid norm value {other:?}; should be \"backward\", \"ortho\" or \"forward\""
        ),
    };
    multiply(y, convert(&Array::from(factor), y.dtype().to_real(), true))
}
