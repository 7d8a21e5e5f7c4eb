//! `scan`: a loop over the leading axis of its `xs`, threading a carry through a body traced
//! once (`lax.scan`). Its trip count is static, so unlike `while` it can be reversed: the
//! jvp rule stacks, step by step, the primal values the tangents need (see `residuals.rs`)
//! and runs a second scan linear in the tangents, which the transpose rule runs backwards.

mod residuals;

use std::sync::Arc;

use super::{bind, describe, Aval, Primitive};
use crate::array::buffer::Buffer;
use crate::array::Array;
use crate::dtype::Element;
use crate::exec::cpu::{copy, pool};
use crate::exec::plan::Plan;
use crate::ir::{eval_program, trace, Program};
use crate::transform::ad::ops;
use crate::transform::ad::{differentiable, jvp_program, transpose_program, LinearArg, Tangent};
use crate::transform::batch::ops::{to_dim, Batched};
use crate::transform::batch::{batch_program, batched_outputs, BatchAxis, BatchDim};
use crate::transform::simplify::simplify;
use residuals::SplitBody;

/// `scan`: `length` steps of `body`. Inputs are the carry (`carry` of them), the stacked
/// `xs` (`xs` of them, each with a leading axis of `length`), then constants the body
/// captured. The body takes `carry ++ one slice of each xs ++ consts` and returns
/// `next carry ++ y`; the outputs are the final carry, then each `y` stacked along a new
/// leading axis. With `reverse`, step `i` reads and writes index `length - 1 - i`.
#[derive(Clone, Debug)]
pub struct Scan {
    pub body: Arc<Program>,
    pub length: usize,
    pub reverse: bool,
    pub carry: usize,
    pub xs: usize,
}

impl Primitive for Scan {
    /// On a device each step's primitives run there (see `Scan::eval_on_device`).
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        "scan".to_string()
    }

    fn params(&self) -> String {
        format!("length={} reverse={}", self.length, self.reverse)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let body_in = self.body.input_avals();
        if inputs.len() != body_in.len() || inputs.len() < self.carry + self.xs {
            return Err(format!(
                "expected {} operands for the body's inputs {}, got {}",
                body_in.len(),
                describe(&body_in),
                describe(inputs)
            ));
        }
        let (carry, rest) = inputs.split_at(self.carry);
        let (xs, consts) = rest.split_at(self.xs);
        let slices: Vec<Aval> = xs.iter().map(|x| self.slice_aval(x)).collect::<Result<_, _>>()?;
        let wanted: Vec<Aval> = carry.iter().chain(&slices).chain(consts).cloned().collect();
        if !same_types(&wanted, &body_in) {
            return Err(format!(
                "the body takes {} but is given {}",
                describe(&body_in),
                describe(&wanted)
            ));
        }
        let body_out = self.body.output_avals();
        if body_out.len() < self.carry || !same_types(carry, &body_out[..self.carry]) {
            return Err(format!(
                "the body must return the carry's types first: the carry is {} but the body \
                 returns {}",
                describe(carry),
                describe(&body_out)
            ));
        }
        let ys = body_out[self.carry..].iter().map(|y| self.stacked_aval(y));
        Ok(carry.iter().cloned().chain(ys).collect())
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        if self.length > 0 && inputs.iter().any(|x| !x.device().is_host()) {
            return self.eval_on_device(inputs, outputs);
        }
        let (carry, rest) = inputs.split_at(self.carry);
        let (xs, consts) = rest.split_at(self.xs);
        // Planned once per run, so each step runs the kernels without re-checking shapes.
        let plan = Plan::new(simplify(&self.body));
        let mut carry: Vec<Array> = carry.iter().map(|c| (*c).clone()).collect();
        let mut ys: Vec<Stacked> = outputs[self.carry..].iter().map(Stacked::new).collect();
        // The step's arguments and results, in vectors reused from step to step.
        let mut args = Vec::with_capacity(self.body.inputs.len());
        let mut outs = Vec::with_capacity(self.body.outputs.len());
        for step in 0..self.length {
            let i = self.index(step);
            let next = (step + 1 < self.length).then(|| self.index(step + 1));
            args.append(&mut carry);
            args.extend(xs.iter().map(|x| row(x, i, next)));
            args.extend(consts.iter().map(|c| (*c).clone()));
            plan.run_into(args.drain(..), &mut outs);
            for (stacked, y) in ys.iter_mut().zip(&outs[self.carry..]) {
                stacked.write(i, y);
            }
            outs.truncate(self.carry);
            carry.append(&mut outs);
        }
        let stacked = ys.into_iter().map(Stacked::finish);
        let results = carry.into_iter().chain(stacked);
        results.zip(outputs).map(|(r, aval)| r.with_weak_type(aval.weak)).collect()
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("body".to_string(), self.body.as_ref())]
    }

    fn has_effect(&self) -> bool {
        self.body.equations.iter().any(|e| e.prim.has_effect())
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [body]: [Program; 1] = programs.try_into().ok()?;
        Some(Arc::new(Scan { body: Arc::new(body), ..self.clone() }))
    }

    /// JAX's partial evaluation of the body's jvp: a primal scan computes the results and
    /// stacks, step by step, the primal values the tangents need (the residuals); a second
    /// scan, whose carry is the carry's tangent, reads them as xs and is linear in the
    /// tangents (so it transposes). Residuals that depend only on the constants are
    /// recomputed in the tangent scan instead of being stacked `length` times.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let n = self.carry;
        let float: Vec<bool> = primals[..n].iter().map(|c| differentiable(&c.aval())).collect();
        // Every float carry gets a tangent: a zero one may turn nonzero after a step.
        let mut nonzero = float.clone();
        nonzero.extend(tangents[n..].iter().map(Option::is_some));
        let joint = jvp_program(&self.body, &nonzero);
        let split = SplitBody::new(&joint, self, &nonzero);
        let refs: Vec<&Array> = primals.iter().collect();
        let primal_scan = Scan { body: Arc::new(split.primal), ..self.clone() };
        let mut outs = bind(&primal_scan, &refs);
        let residuals = outs.split_off(outs.len() - split.stacked);
        let carry_tangents: Vec<Array> = tangents[..n]
            .iter()
            .zip(&primals[..n])
            .zip(&float)
            .filter(|(_, &f)| f)
            .map(|((t, c), _)| ops::instantiate(t, &c.aval()))
            .collect();
        let (xs, consts) = primals[n..].split_at(self.xs);
        let (x_tangents, const_tangents) = tangents[n..].split_at(self.xs);
        let mut inputs: Vec<&Array> = carry_tangents.iter().collect();
        inputs.extend(&residuals);
        inputs.extend(split.used_xs.iter().map(|&i| &xs[i]));
        inputs.extend(x_tangents.iter().flatten());
        let xs_count = inputs.len() - carry_tangents.len();
        inputs.extend(split.used_consts.iter().map(|&i| &consts[i]));
        inputs.extend(const_tangents.iter().flatten());
        let tangent_scan = Scan {
            body: Arc::new(split.linear),
            carry: carry_tangents.len(),
            xs: xs_count,
            ..*self
        };
        let results = bind(&tangent_scan, &inputs);
        Ok((outs.clone(), ops::float_tangents(&outs, results)))
    }

    /// Transposes a scan linear in its carry and its linear xs and constants: a scan the
    /// other way whose carry is the carry's cotangent plus the constants' cotangents summed
    /// so far, and whose ys are the linear xs' cotangents.
    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let (n, m) = (self.carry, self.xs);
        let (carry_args, rest) = args.split_at(n);
        let (x_args, const_args) = rest.split_at(m);
        if carry_args.iter().any(|a| !differentiable(&a.aval())) {
            return Err("scan: only a scan whose carry is all tangents can be transposed".into());
        }
        // A known carry slot still holds a tangent (an instantiated zero): its cotangent is
        // computed and dropped, since the body is linear in it.
        let mut linear: Vec<bool> = vec![true; n];
        linear.extend(x_args.iter().chain(const_args).map(LinearArg::is_linear));
        let transposed = transpose_program(&self.body, &linear);
        let outputs = self.abstract_eval(&args.iter().map(LinearArg::aval).collect::<Vec<_>>())?;
        let cts = ops::float_cts(cts, &outputs);
        let (carry_cts, y_cts) = cts.split_at(n);
        let linear_consts: Vec<Aval> =
            const_args.iter().filter(|a| a.is_linear()).map(LinearArg::aval).collect();
        let zero_sums: Vec<Array> = linear_consts.iter().map(ops::zeros).collect();
        let known_xs: Vec<&Array> = x_args.iter().filter_map(LinearArg::known).collect();
        let known_consts: Vec<&Array> = const_args.iter().filter_map(LinearArg::known).collect();
        let body = self.transposed_body(&transposed, n + linear_consts.len(), known_xs.len());
        let backwards = Scan {
            body: Arc::new(body),
            length: self.length,
            reverse: !self.reverse,
            carry: n + linear_consts.len(),
            xs: known_xs.len() + y_cts.len(),
        };
        let mut inputs: Vec<&Array> = carry_cts.iter().chain(&zero_sums).collect();
        inputs.extend(known_xs);
        inputs.extend(y_cts);
        inputs.extend(known_consts);
        let mut results = bind(&backwards, &inputs).into_iter();
        let carry_cts: Vec<Tangent> =
            carry_args.iter().map(|a| results.next().filter(|_| a.is_linear())).collect();
        let const_sums: Vec<Array> = results.by_ref().take(linear_consts.len()).collect();
        let mut result = carry_cts;
        result.extend(ops::linear_cts(x_args, results.collect()));
        result.extend(ops::linear_cts(const_args, const_sums));
        Ok(result)
    }

    /// Carry elements are batched where they enter batched or the body makes them so (a
    /// fixed point); batched xs have their batch axis moved to 1, so each slice has it at 0.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let (n, m) = (self.carry, self.xs);
        let (carry_dims, rest) = dims.split_at(n);
        let (x_dims, const_dims) = rest.split_at(m);
        let slice_dims: Vec<BatchDim> = x_dims.iter().map(|d| d.map(|_| 0)).collect();
        let body_dims = |batched: &[bool]| -> Vec<BatchDim> {
            let carry = batched.iter().map(|&b| b.then_some(0));
            carry.chain(slice_dims.iter().copied()).chain(const_dims.iter().copied()).collect()
        };
        let mut batched: Vec<bool> = carry_dims.iter().map(Option::is_some).collect();
        loop {
            let outs = batched_outputs(&self.body, &body_dims(&batched), axis);
            let next: Vec<bool> = batched.iter().zip(&outs).map(|(a, b)| *a || *b).collect();
            if next == batched {
                break;
            }
            batched = next;
        }
        let num_ys = self.body.outputs.len() - n;
        let force: Vec<bool> = batched.iter().copied().chain(vec![false; num_ys]).collect();
        let (body, out_dims) = batch_program(&self.body, &body_dims(&batched), axis, &force);
        let carry = args[..n].iter().zip(carry_dims).zip(&batched).map(|((c, d), &b)| {
            if b {
                to_dim(c, *d, 0, axis.size)
            } else {
                c.clone()
            }
        });
        let xs = args[n..n + m].iter().zip(x_dims).map(|(x, d)| match d {
            Some(_) => to_dim(x, *d, 1, axis.size),
            None => x.clone(),
        });
        let inputs: Vec<Array> = carry.chain(xs).chain(args[n + m..].iter().cloned()).collect();
        let refs: Vec<&Array> = inputs.iter().collect();
        let outs = bind(&Scan { body: Arc::new(body), ..*self }, &refs);
        let mut result_dims: Vec<BatchDim> = batched.iter().map(|&b| b.then_some(0)).collect();
        result_dims.extend(out_dims[n..].iter().map(|d| d.map(|_| 1)));
        Ok((outs, result_dims))
    }
}

impl Scan {
    /// The step that reads and writes index `i` at iteration `step`.
    /// The loop over operands on a device: each step's slices, body and stacking are bound
    /// as primitives, so they run where the operands are and nothing is read on the host.
    fn eval_on_device(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (carry, rest) = inputs.split_at(self.carry);
        let (xs, consts) = rest.split_at(self.xs);
        let mut carry: Vec<Array> = carry.iter().map(|c| (*c).clone()).collect();
        let mut rows: Vec<Vec<Option<Array>>> =
            vec![vec![None; self.length]; outputs.len() - self.carry];
        for step in 0..self.length {
            let i = self.index(step);
            let mut args = std::mem::take(&mut carry);
            args.extend(xs.iter().map(|x| {
                let mut start = vec![0; x.ndim()];
                let mut limit = x.shape().to_vec();
                (start[0], limit[0]) = (i, i + 1);
                let strides = vec![1; x.ndim()];
                let row = super::bind1(
                    &super::Slice { start_indices: start, limit_indices: limit, strides },
                    &[x],
                );
                ops::reshape(&row, &x.shape()[1..])
            }));
            args.extend(consts.iter().map(|c| (*c).clone()));
            let mut outs = eval_program(&self.body, &args);
            for (stacked, y) in rows.iter_mut().zip(outs.drain(self.carry..)) {
                let mut shape = vec![1];
                shape.extend_from_slice(y.shape());
                stacked[i] = Some(ops::reshape(&y, &shape));
            }
            carry = outs;
        }
        let stacked = rows.into_iter().map(|r| {
            let r: Vec<Array> =
                r.into_iter().map(|y| y.expect("every step writes its row")).collect();
            let refs: Vec<&Array> = r.iter().collect();
            super::bind1(&super::Concatenate { dimension: 0 }, &refs)
        });
        let results = carry.into_iter().chain(stacked);
        results.zip(outputs).map(|(r, aval)| r.with_weak_type(aval.weak)).collect()
    }

    fn index(&self, step: usize) -> usize {
        if self.reverse {
            self.length - 1 - step
        } else {
            step
        }
    }

    fn slice_aval(&self, x: &Aval) -> Result<Aval, String> {
        match x.shape.split_first() {
            Some((&len, rest)) if len == self.length => {
                Ok(Aval { shape: rest.to_vec(), dtype: x.dtype, weak: x.weak })
            }
            _ => Err(format!(
                "every xs operand needs a leading axis of the scan's length {}, got {x}",
                self.length
            )),
        }
    }

    fn stacked_aval(&self, y: &Aval) -> Aval {
        let mut shape = vec![self.length];
        shape.extend_from_slice(&y.shape);
        Aval { shape, ..y.clone() }
    }

    /// The body of the backwards scan: it takes the carry's cotangent and the constants'
    /// running cotangent sums (`carry` of them), one slice of the known xs (`known_xs` of them)
    /// and of the ys' cotangents, then the known constants; it runs the transposed body and
    /// returns the previous carry's cotangent, the updated sums, and the linear xs' cotangents.
    fn transposed_body(&self, transposed: &Program, carry: usize, known_xs: usize) -> Program {
        let n = self.carry;
        let t_in = transposed.input_avals();
        let float_outs = self.body.output_avals().iter().filter(|a| differentiable(a)).count();
        let num_known = t_in.len() - float_outs;
        let known_consts = num_known - known_xs;
        let mut avals: Vec<Aval> = t_in[num_known..num_known + n].to_vec();
        let sums: Vec<Aval> =
            transposed.output_avals()[transposed.outputs.len() - (carry - n)..].to_vec();
        avals.extend(sums);
        avals.extend(t_in[..known_xs].iter().cloned());
        avals.extend(t_in[num_known + n..].iter().cloned());
        avals.extend(t_in[known_xs..num_known].iter().cloned());
        trace::trace_with(&avals, |ins| {
            let (carry_ct, rest) = ins.split_at(n);
            let (sums, rest) = rest.split_at(carry - n);
            let (known_x, rest) = rest.split_at(known_xs);
            let (y_ct, known_c) = rest.split_at(rest.len() - known_consts);
            let args: Vec<Array> =
                known_x.iter().chain(known_c).chain(carry_ct).chain(y_ct).cloned().collect();
            let mut cts = eval_program(transposed, &args);
            let const_cts = cts.split_off(cts.len() - sums.len());
            let x_cts = cts.split_off(n);
            let mut result = cts;
            result.extend(sums.iter().zip(&const_cts).map(|(s, c)| ops::add(s, c)));
            result.extend(x_cts);
            (result, ())
        })
        .program
    }
}

/// Row `i` of `x` along its leading axis, copied into a buffer of its own (a step's slice of
/// an `xs`; cheaper per step than binding a slice and a reshape). Row `next`, the next step's,
/// is prefetched: rows of a few KiB each start a new page, where the hardware prefetchers
/// stop, so a row read cold waits on memory for each of its lines.
fn row(x: &Array, i: usize, next: Option<usize>) -> Array {
    let shape = &x.shape()[1..];
    let len: usize = shape.iter().product();
    let buffer = crate::with_buffer!(x.buffer(), |src: T| {
        let mut values = pool::take::<T>(len);
        values.extend_from_slice(&src[i * len..][..len]);
        if let Some(next) = next {
            copy::prefetch(&src[next * len..][..len]);
        }
        T::wrap(values)
    });
    Array::from_buffer(shape, buffer, x.is_weak())
}

/// One stacked output of a scan, filled a step at a time: each step's `y` is copied into its
/// row as soon as the step ends, so the steps' buffers are recycled for the next step instead
/// of all being kept for one concatenation at the end.
struct Stacked {
    aval: Aval,
    buffer: Buffer,
}

impl Stacked {
    /// Room for the output `aval` (the leading axis is the scan's length).
    fn new(aval: &Aval) -> Stacked {
        let len: usize = aval.shape.iter().product();
        let buffer = crate::with_dtype!(aval.dtype, |T| {
            T::wrap(pool::take_for_overwrite::<T>(len, T::from_i64(0)))
        });
        Stacked { aval: aval.clone(), buffer }
    }

    /// Copies `y` (of the body's output type) into row `i`.
    fn write(&mut self, i: usize, y: &Array) {
        let len: usize = self.aval.shape[1..].iter().product();
        crate::with_buffer!(&mut self.buffer, |dst: T| {
            let src = T::slice(y.buffer()).expect("a scan body's output has the declared dtype");
            dst[i * len..][..len].copy_from_slice(src);
        });
    }

    /// The stacked output, once every row is written.
    fn finish(self) -> Array {
        Array::from_buffer(&self.aval.shape, self.buffer, self.aval.weak)
    }
}

fn same_types(a: &[Aval], b: &[Aval]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.shape == y.shape && x.dtype == y.dtype)
}
