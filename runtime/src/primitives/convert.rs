//! `convert_element_type`: changes an array's dtype (and weak flag) elementwise.

use super::{expect_arity, Aval, Primitive};
use crate::array::Array;
use crate::dtype::DType;

/// Converts to `dtype` with NumPy's `astype` semantics: floats truncate toward zero into
/// integers, integers wrap, anything nonzero is `true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Convert {
    pub dtype: DType,
    pub weak: bool,
}

impl Primitive for Convert {
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
        vec![Array::from_buffer(out.shape.clone(), x.buffer().cast(self.dtype), out.weak)]
    }
}
