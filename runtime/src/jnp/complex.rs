//! Complex numbers: their parts (`real`, `imag`, `conj`, `angle`) and `complex`, which builds
//! them from real and imaginary parts.

use super::{atan2, broadcast_to, convert, promote_inexact, zeros_like, ArrayLike};
use crate::primitives::{bind1, ComplexPart, MakeComplex};
use crate::shape::{broadcast_shapes, ShapeDisplay};
use crate::{Array, DType};

/// The real part of each element (`jnp.real`): a real array of the parts' precision for a
/// complex one (`complex64` gives `float32`); a real array is returned as it is.
///
/// ```
/// use rjax_runtime::{jnp, Complex, DType};
/// let z = jnp::array([Complex::new(1.0f32, 2.0), Complex::new(3.0, -4.0)]);
/// assert_eq!(jnp::real(&z).to_vec::<f32>().unwrap(), vec![1.0, 3.0]);
/// assert_eq!(jnp::real(&z).dtype(), DType::F32);
/// ```
#[track_caller]
pub fn real(x: &Array) -> Array {
    if x.dtype().is_complex() {
        bind1(&ComplexPart::Real, &[x])
    } else {
        x.clone()
    }
}

/// The imaginary part of each element (`jnp.imag`): zeros of the same dtype for a real array.
#[track_caller]
pub fn imag(x: &Array) -> Array {
    if x.dtype().is_complex() {
        bind1(&ComplexPart::Imag, &[x])
    } else {
        zeros_like(x)
    }
}

/// The complex conjugate of each element (`jnp.conj`); a real array is returned as it is.
#[track_caller]
pub fn conj(x: &Array) -> Array {
    if x.dtype().is_complex() {
        bind1(&ComplexPart::Conj, &[x])
    } else {
        x.clone()
    }
}

/// The complex conjugate (`jnp.conjugate`, another name of [`conj`]).
#[track_caller]
pub fn conjugate(x: &Array) -> Array {
    conj(x)
}

/// The argument of each element in radians, in `[-pi, pi]` (`jnp.angle`):
/// `atan2(imag(x), real(x))`. Integers and bools become `float32` first; the result is real.
#[track_caller]
pub fn angle(x: &Array) -> Array {
    let x = promote_inexact(std::slice::from_ref(x)).pop().expect("one operand in, one out");
    atan2(imag(&x), real(&x))
}

/// `re + i im` (`lax.complex`): both operands are promoted to a common float type (integers
/// and bools to `float32`, half precision to `float32`) and broadcast together; `float32`
/// parts give `complex64`, `float64` parts `complex128`. Panics for complex operands.
///
/// ```
/// use rjax_runtime::{jnp, Complex, DType};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let z = jnp::complex(&jnp::array([1.0f64, 2.0]), 0.5);
/// assert_eq!(z.dtype(), DType::C128);
/// assert_eq!(z.to_vec::<Complex<f64>>().unwrap()[1], Complex::new(2.0, 0.5));
/// ```
#[track_caller]
pub fn complex(re: impl ArrayLike, im: impl ArrayLike) -> Array {
    let operands = [re.into_operand("complex"), im.into_operand("complex")];
    let promoted = promote_inexact(&operands);
    let dtype = promoted[0].dtype();
    if dtype.is_complex() {
        panic!(
            "complex: the real and imaginary parts must be real, got {} and {}",
            operands[0].aval(),
            operands[1].aval()
        );
    }
    let part = if dtype == DType::F64 { DType::F64 } else { DType::F32 };
    let weak = promoted[0].is_weak();
    let (x, y) = (&promoted[0], &promoted[1]);
    let shape = broadcast_shapes(x.shape(), y.shape()).unwrap_or_else(|| {
        panic!(
            "complex: shapes {} and {} do not broadcast together",
            ShapeDisplay(x.shape()),
            ShapeDisplay(y.shape())
        )
    });
    let x = broadcast_to(&convert(x, part, weak), &shape);
    let y = broadcast_to(&convert(y, part, weak), &shape);
    bind1(&MakeComplex, &[&x, &y])
}
