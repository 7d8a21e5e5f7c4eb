//! `convert_element_type`: changes an array's dtype (and weak flag) elementwise.

use super::{bind1, expect_arity, Aval, Fusion, Primitive};
use crate::array::Array;
use crate::dtype::DType;
use crate::transform::ad::ops::single_ct;
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// Converts to `dtype` with NumPy's `astype` semantics: floats truncate toward zero into
/// integers, integers wrap, anything nonzero is `true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Convert {
    pub dtype: DType,
    pub weak: bool,
}

impl Primitive for Convert {
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Elementwise
    }

    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Elementwise(crate::backend::ElementwiseOp::Convert))
    }
    /// Elementwise in its one operand: the batch axis stays where it is.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        one(bind1(self, &[&args[0]]), dims[0])
    }

    fn params(&self) -> String {
        format!("new_dtype={} weak_type={}", self.dtype.short_name(), self.weak)
    }

    fn name(&self) -> String {
        "convert_element_type".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        Ok(vec![Aval { shape: inputs[0].shape.clone(), dtype: self.dtype, weak: self.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        if x.dtype() == self.dtype {
            return vec![x.with_weak_type(out.weak)];
        }
        let cast = || x.buffer().cast(self.dtype);
        // XLA converts to and from 16-bit floats with integer operations, which its float
        // modes do not reach: subnormals keep their bits (`float_mode`).
        let half = |d: DType| matches!(d, DType::F16 | DType::BF16);
        let buffer = if half(x.dtype()) || half(self.dtype) {
            crate::exec::cpu::float_mode::ieee(cast)
        } else {
            cast()
        };
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let out = bind1(self, &[&primals[0]]);
        let t = tangents[0].as_ref().filter(|_| self.dtype.is_inexact()).map(|t| bind1(self, &[t]));
        Ok((vec![out], vec![t]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let x = args[0].aval();
        let back = Convert { dtype: x.dtype, weak: x.weak };
        Ok(vec![single_ct(cts).map(|ct| {
            if ct.dtype() == x.dtype {
                ct.clone()
            } else {
                bind1(&back, &[ct])
            }
        })])
    }
}
