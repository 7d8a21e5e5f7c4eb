//! `select`: picks elementwise between two arrays by a boolean predicate (`jnp.where`).

use super::{bind1, describe, expect_arity, Aval, Fusion, Primitive};
use crate::array::Array;
use crate::dtype::DType;
use crate::exec::cpu::elementwise::zip3;
use crate::shape::broadcast_shapes;
use crate::transform::ad::ops::{self, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{elementwise, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// `select(pred, on_true, on_false)`; the three operands broadcast together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Select;

impl Primitive for Select {
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Elementwise
    }

    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Elementwise(crate::backend::ElementwiseOp::Select))
    }
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        elementwise(self, args, dims)
    }

    fn name(&self) -> String {
        "select".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 3)?;
        let (p, t, f) = (&inputs[0], &inputs[1], &inputs[2]);
        if p.dtype != DType::Bool {
            return Err(format!("the predicate must be bool, got {p}"));
        }
        if t.dtype != f.dtype {
            return Err(format!(
                "both branches must have the same dtype, got {}",
                describe(&inputs[1..])
            ));
        }
        let shape = broadcast_shapes(&p.shape, &t.shape)
            .and_then(|s| broadcast_shapes(&s, &f.shape))
            .ok_or_else(|| format!("shapes do not broadcast together: {}", describe(inputs)))?;
        Ok(vec![Aval { shape, dtype: t.dtype, weak: t.weak && f.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (p, t, f) = (inputs[0], inputs[1], inputs[2]);
        let out = &outputs[0];
        let pv = p.as_slice::<bool>().expect("checked by the shape rule");
        let buffer = crate::with_buffer!(t.buffer(), |tv: T| {
            let fv = f.as_slice::<T>().expect("checked by the shape rule");
            <T as crate::dtype::Element>::wrap(zip3(
                (pv, p.shape()),
                (tv, t.shape()),
                (fv, f.shape()),
                &out.shape,
                |c, x, y| if c { x } else { y },
            ))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (p, a, b) = (&primals[0], &primals[1], &primals[2]);
        let out = bind1(self, &[p, a, b]);
        let ta = ops::instantiate(&tangents[1], &a.aval());
        let tb = ops::instantiate(&tangents[2], &b.aval());
        let t = ops::broadcast_to(&bind1(self, &[p, &ta, &tb]), out.shape());
        Ok((vec![out], vec![Some(t)]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None; 3]) };
        let Some(p) = args[0].known() else {
            return Err("the predicate cannot be differentiated".to_string());
        };
        let zeros = ops::zeros(&ct.aval());
        let branch = |arg: &LinearArg, on_true: bool| {
            arg.is_linear().then(|| {
                let picked = if on_true {
                    bind1(self, &[p, ct, &zeros])
                } else {
                    bind1(self, &[p, &zeros, ct])
                };
                ops::unbroadcast(&picked, &arg.aval().shape)
            })
        };
        Ok(vec![None, branch(&args[1], true), branch(&args[2], false)])
    }
}
