//! `pmap`: a program run once per device, on the shards of its mapped operands, with
//! collectives between the devices (JAX's `xla_pmap`).
//!
//! Its rules transform the per-device program and keep the mapping: the jvp is the pmap of
//! the program's tangent program, the transpose the pmap of its transpose (so the backward
//! pass runs on the devices too), and batching maps the batched program. Collectives inside
//! take care of themselves: each has its own rules (`psum`'s transpose is `psum`,
//! `ppermute`'s the inverse permutation).

use std::sync::Arc;

use super::collective::{Collective, CollectiveOp};
use super::{bind, Aval, Primitive};
use crate::array::Array;
use crate::device::{self, spmd};
use crate::ir::{eval_program, Atom, Equation, Program};
use crate::transform::ad::ops;
use crate::transform::ad::{
    differentiable, tangent_program, transpose_program, LinearArg, Tangent,
};
use crate::transform::batch::ops::{lane, stack, Batched};
use crate::transform::batch::{batch_program, BatchAxis, BatchDim};

/// `program` with each output `k` where `summed[k]` replaced by its `psum` over `axis`.
fn psum_outputs(mut program: Program, axis: &str, summed: &[bool]) -> Program {
    let psum: Arc<dyn Primitive> =
        Arc::new(Collective { op: CollectiveOp::Sum, axes: vec![axis.to_string()] });
    for (k, _) in summed.iter().enumerate().filter(|(_, s)| **s) {
        let output = program.outputs[k].clone();
        let var = program.new_var(program.atom_aval(&output));
        program.equations.push(Equation {
            prim: psum.clone(),
            inputs: vec![output],
            outputs: vec![var],
            span: None,
        });
        program.outputs[k] = Atom::Var(var);
    }
    program
}

/// `program` run on `size` devices along axis `axis_name`: operand `i` is split along
/// `in_axes[i]` (or given whole to every device when `None`), and output `k` is the devices'
/// results stacked along `out_axes[k]` (or device 0's when `None`, for values the devices
/// agree on).
#[derive(Clone, Debug)]
pub struct Pmap {
    pub program: Arc<Program>,
    pub axis_name: String,
    pub size: usize,
    pub in_axes: Vec<Option<usize>>,
    pub out_axes: Vec<Option<usize>>,
}

impl Pmap {
    fn with(
        &self,
        program: Program,
        in_axes: Vec<Option<usize>>,
        out_axes: Vec<Option<usize>>,
    ) -> Pmap {
        Pmap { program: Arc::new(program), in_axes, out_axes, ..self.clone() }
    }

    /// Runs every shard on its own device thread. Mapped operands that are already another
    /// pmap's pieces along the same axis are taken as they are; mapped outputs stay in
    /// pieces on their devices (gathered when read).
    fn run(&self, inputs: &[&Array]) -> Vec<Array> {
        let platform = spmd::Platform::of(inputs);
        let shards = spmd::run_shards(&self.axis_name, self.size, platform, |d| {
            let here = spmd::current_device();
            let args: Vec<Array> = inputs
                .iter()
                .zip(&self.in_axes)
                .map(|(x, axis)| {
                    let piece =
                        axis.and_then(|a| x.shards_along(a)).filter(|p| p.len() == self.size);
                    let shard = match piece {
                        Some(pieces) => pieces[d].clone(),
                        None => lane(x, *axis, d),
                    };
                    device::device_put(&shard, here)
                })
                .collect();
            let outs = eval_program(&self.program, &args);
            outs.iter().map(|o| device::device_put(o, here)).collect::<Vec<_>>()
        });
        (0..self.out_axes.len())
            .map(|k| match self.out_axes[k] {
                Some(axis) => {
                    Array::from_shards(shards.iter().map(|s| s[k].clone()).collect(), axis)
                }
                None => shards[0][k].clone(),
            })
            .collect()
    }

    /// The full (all devices) avals of the outputs.
    fn output_avals(&self) -> Vec<Aval> {
        self.program
            .output_avals()
            .into_iter()
            .zip(&self.out_axes)
            .map(|(mut aval, axis)| {
                if let Some(a) = axis {
                    aval.shape.insert(*a, self.size);
                }
                aval
            })
            .collect()
    }
}

impl Primitive for Pmap {
    /// On GPUs each shard runs on its own GPU (see `run`), binding its primitives there.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        "pmap".to_string()
    }

    fn params(&self) -> String {
        let show = |axes: &[Option<usize>]| {
            let parts: Vec<String> =
                axes.iter().map(|a| a.map_or("None".to_string(), |a| a.to_string())).collect();
            format!("({})", parts.join(", "))
        };
        format!(
            "axis_name={} axis_size={} in_axes={} out_axes={}",
            self.axis_name,
            self.size,
            show(&self.in_axes),
            show(&self.out_axes)
        )
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let takes = self.program.input_avals();
        if inputs.len() != takes.len() || inputs.len() != self.in_axes.len() {
            return Err(format!("expected {} operands, got {}", takes.len(), inputs.len()));
        }
        for (i, ((aval, axis), want)) in inputs.iter().zip(&self.in_axes).zip(&takes).enumerate() {
            let mut shard = aval.clone();
            if let Some(a) = *axis {
                if shard.shape.get(a) != Some(&self.size) {
                    return Err(format!(
                        "operand {i} ({aval}) must have size {} at its mapped axis {a}",
                        self.size
                    ));
                }
                shard.shape.remove(a);
            }
            if shard.shape != want.shape || shard.dtype != want.dtype {
                return Err(format!("operand {i}'s shard is {shard}, the program takes {want}"));
            }
        }
        Ok(self.output_avals())
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        self.run(inputs)
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("body".to_string(), self.program.as_ref())]
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [program]: [Program; 1] = programs.try_into().ok()?;
        Some(Arc::new(Pmap { program: Arc::new(program), ..self.clone() }))
    }

    fn has_effect(&self) -> bool {
        self.program.equations.iter().any(|e| e.prim.has_effect())
    }

    /// The axis it binds is its own: collectives over that name inside refer to it.
    fn uses_axis(&self, name: &str) -> bool {
        name != self.axis_name && self.program.equations.iter().any(|e| e.prim.uses_axis(name))
    }

    /// The pmap of the tangent program: tangents are split like their primals.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind(self, &refs);
        let nonzero: Vec<bool> = tangents.iter().map(Option::is_some).collect();
        let mut in_axes = self.in_axes.clone();
        in_axes.extend(self.in_axes.iter().zip(&nonzero).filter(|(_, n)| **n).map(|(a, _)| *a));
        let out_axes = self.float_outputs();
        let tangent = self.with(tangent_program(&self.program, &nonzero), in_axes, out_axes);
        let mut inputs = refs;
        inputs.extend(tangents.iter().flatten());
        Ok((outs.clone(), ops::float_tangents(&outs, bind(&tangent, &inputs))))
    }

    /// The pmap of the transposed program. An output that came from device 0 alone sends
    /// its cotangent to device 0 alone; a linear operand given whole to every device gets
    /// the sum of the devices' cotangents.
    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let linear: Vec<bool> = args.iter().map(LinearArg::is_linear).collect();
        let full_outs = self.output_avals();
        let float_outs: Vec<usize> =
            (0..full_outs.len()).filter(|&k| differentiable(&full_outs[k])).collect();
        let cts = ops::float_cts(cts, &full_outs);
        let mut inputs: Vec<Array> = args.iter().filter_map(LinearArg::known).cloned().collect();
        let mut in_axes: Vec<Option<usize>> =
            self.in_axes.iter().zip(&linear).filter(|(_, l)| !**l).map(|(a, _)| *a).collect();
        for (ct, &k) in cts.iter().zip(&float_outs) {
            match self.out_axes[k] {
                Some(axis) => {
                    inputs.push(ct.clone());
                    in_axes.push(Some(axis));
                }
                None => {
                    let zero = ops::zeros(&ct.aval());
                    let mut parts = vec![ct.clone()];
                    parts.resize(self.size, zero);
                    inputs.push(stack(&parts));
                    in_axes.push(Some(0));
                }
            }
        }
        let linear_axes: Vec<Option<usize>> =
            self.in_axes.iter().zip(&linear).filter(|(_, l)| **l).map(|(a, _)| *a).collect();
        // A replicated operand's cotangent is the sum of every device's: after the launch in
        // one process; across processes, where the launch returns only this process's
        // devices, inside it (a psum over the axis, as JAX does), taking device 0's.
        let across = crate::device::spans_processes();
        let mut program = transpose_program(&self.program, &linear);
        let out_axes = if across {
            let replicated: Vec<bool> = linear_axes.iter().map(Option::is_none).collect();
            program = psum_outputs(program, &self.axis_name, &replicated);
            linear_axes.clone()
        } else {
            linear_axes.iter().map(|a| Some(a.unwrap_or(0))).collect()
        };
        let transposed = self.with(program, in_axes, out_axes);
        let refs: Vec<&Array> = inputs.iter().collect();
        let results = bind(&transposed, &refs)
            .into_iter()
            .zip(&linear_axes)
            .map(
                |(ct, axis)| {
                    if axis.is_some() || across {
                        ct
                    } else {
                        ops::sum_axes(&ct, vec![0])
                    }
                },
            )
            .collect();
        Ok(ops::linear_cts(args, results))
    }

    /// The pmap of the batched program; each shard carries the batch axis in front.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let mut shard_dims = Vec::with_capacity(dims.len());
        let mut in_axes = Vec::with_capacity(dims.len());
        for (d, a) in dims.iter().zip(&self.in_axes) {
            // Positions in the shard (without the device axis), and of the device axis in
            // the batched operand.
            shard_dims.push(d.map(|d| match a {
                Some(a) if d > *a => d - 1,
                _ => d,
            }));
            in_axes.push(a.map(|a| match d {
                Some(d) if *d <= a => a + 1,
                _ => a,
            }));
        }
        let (program, out_dims) = batch_program(&self.program, &shard_dims, axis, &[]);
        let out_axes = self
            .out_axes
            .iter()
            .zip(&out_dims)
            .map(|(a, d)| match (a, d) {
                (Some(a), Some(_)) => Some(a + 1),
                (a, _) => *a,
            })
            .collect();
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&self.with(program, in_axes, out_axes), &refs), out_dims))
    }
}

impl Pmap {
    /// The out axes of the floating-point outputs (those with tangents).
    fn float_outputs(&self) -> Vec<Option<usize>> {
        self.program
            .output_avals()
            .iter()
            .zip(&self.out_axes)
            .filter(|(a, _)| differentiable(a))
            .map(|(_, axis)| *axis)
            .collect()
    }
}
