//! The parts of complex numbers: `real`, `imag` and `conj` of a complex operand, and
//! `complex`, which builds complex numbers from real and imaginary parts (JAX's `lax.real`,
//! `lax.imag`, `lax.conj` and `lax.complex`).
//!
//! All four are linear over the reals. Their transposes are JAX's, which treat a complex value
//! as the pair of its parts: the cotangent of `real(z)` goes back as `ct + 0i`, that of
//! `imag(z)` as `-i ct`, that of `conj(z)` as `conj(ct)`, and `complex(x, y)` sends
//! `(real(ct), -imag(ct))` back to its operands. So `grad` of a real-valued function of a
//! complex input is the conjugate of the direction of steepest ascent, as in JAX.

use num_complex::Complex;

use super::{bind1, describe, expect_arity, Aval, Primitive};
use crate::array::{Array, Buffer};
use crate::dtype::Element;
use crate::exec::cpu::elementwise::{map, zip};
use crate::transform::ad::ops::{linear_jvp, neg, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{one, to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// A part of a complex operand, elementwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComplexPart {
    /// The real part (a real result).
    Real,
    /// The imaginary part (a real result).
    Imag,
    /// The complex conjugate.
    Conj,
}

impl ComplexPart {
    fn op_name(self) -> &'static str {
        match self {
            ComplexPart::Real => "real",
            ComplexPart::Imag => "imag",
            ComplexPart::Conj => "conj",
        }
    }
}

/// `real(x)`: the real part of a complex array.
pub(crate) fn real(x: &Array) -> Array {
    bind1(&ComplexPart::Real, &[x])
}

/// `imag(x)`: the imaginary part of a complex array.
pub(crate) fn imag(x: &Array) -> Array {
    bind1(&ComplexPart::Imag, &[x])
}

/// `conj(x)`: the complex conjugate of a complex array.
pub(crate) fn conj(x: &Array) -> Array {
    bind1(&ComplexPart::Conj, &[x])
}

/// `re + i im` from real arrays of the same float dtype and shape.
pub(crate) fn complex(re: &Array, im: &Array) -> Array {
    bind1(&MakeComplex, &[re, im])
}

impl Primitive for ComplexPart {
    fn name(&self) -> String {
        self.op_name().to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        if !x.dtype.is_complex() {
            return Err(format!("expected a complex operand, got {x}"));
        }
        let dtype = match self {
            ComplexPart::Conj => x.dtype,
            _ => x.dtype.to_real(),
        };
        Ok(vec![Aval { shape: x.shape.clone(), dtype, weak: x.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let buffer = match inputs[0].buffer() {
            Buffer::C64(v) => part(*self, v),
            Buffer::C128(v) => part(*self, v),
            _ => unreachable!("the shape rule admits only complex operands"),
        };
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None]) };
        let zeros = crate::transform::ad::ops::zeros(&ct.aval());
        let back = match self {
            ComplexPart::Real => complex(ct, &zeros),
            ComplexPart::Imag => complex(&zeros, &neg(ct)),
            ComplexPart::Conj => conj(ct),
        };
        Ok(vec![Some(back)])
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        one(bind1(self, &[&args[0]]), dims[0])
    }
}

/// The part `op` of each element of `v`.
fn part<F: Element + std::ops::Neg<Output = F>>(op: ComplexPart, v: &[Complex<F>]) -> Buffer
where
    Complex<F>: Element,
{
    match op {
        ComplexPart::Real => F::wrap(map(v, |z: Complex<F>| z.re)),
        ComplexPart::Imag => F::wrap(map(v, |z: Complex<F>| z.im)),
        ComplexPart::Conj => Complex::<F>::wrap(map(v, |z: Complex<F>| Complex::new(z.re, -z.im))),
    }
}

/// `lax.complex(x, y)`: `x + i y` from two real operands of the same dtype (`float32` gives
/// `complex64`, `float64` gives `complex128`) and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MakeComplex;

impl Primitive for MakeComplex {
    fn name(&self) -> String {
        "complex".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (x, y) = (&inputs[0], &inputs[1]);
        let d = x.dtype;
        if d != y.dtype || !matches!(d, crate::DType::F32 | crate::DType::F64) {
            return Err(format!(
                "expected two float32 or two float64 operands, got {}",
                describe(inputs)
            ));
        }
        if x.shape != y.shape {
            return Err(format!("operands must have the same shape, got {}", describe(inputs)));
        }
        Ok(vec![Aval { shape: x.shape.clone(), dtype: d.to_complex(), weak: x.weak && y.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (x, y) = (inputs[0], inputs[1]);
        let shape = &outputs[0].shape;
        let buffer = match (x.buffer(), y.buffer()) {
            (Buffer::F32(a), Buffer::F32(b)) => {
                Buffer::C64(zip((a, shape), (b, shape), shape, Complex::new))
            }
            (Buffer::F64(a), Buffer::F64(b)) => {
                Buffer::C128(zip((a, shape), (b, shape), shape, Complex::new))
            }
            _ => unreachable!("the shape rule admits two float32 or two float64 operands"),
        };
        vec![Array::from_buffer(shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None, None]) };
        Ok(vec![args[0].is_linear().then(|| real(ct)), args[1].is_linear().then(|| neg(&imag(ct)))])
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        // Both operands need the batch axis in the same place and at full size.
        let size = axis.size;
        let x = to_dim(&args[0], dims[0], 0, size);
        let y = to_dim(&args[1], dims[1], 0, size);
        one(bind1(self, &[&x, &y]), Some(0))
    }
}
