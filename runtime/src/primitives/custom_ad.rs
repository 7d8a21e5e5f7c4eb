//! Primitives that change how a computation is differentiated: `stop_gradient`,
//! `checkpoint` (rematerialization) and functions with user-given derivatives
//! (`custom_jvp`, `custom_vjp`). Their user-facing forms are in
//! [`crate::transform::ad::custom`].

use std::sync::Arc;

use super::bind1;
use super::{bind, describe, expect_arity, Aval, Primitive};
use crate::array::Array;
use crate::ir::trace;
use crate::ir::{eval_program, Program};
use crate::transform::ad::ops;
use crate::transform::ad::{tangent_program, transpose_program, LinearArg, Tangent};
use crate::transform::batch::ops::{move_axis, one, to_dim, Batched};
use crate::transform::batch::{
    batch_eval, batch_program, batched_aval, batched_avals, BatchAxis, BatchDim,
};

/// `stop_gradient`: the identity, with a zero derivative.
#[derive(Clone, Copy, Debug)]
pub struct StopGradient;

impl Primitive for StopGradient {
    /// Its value is its operand, wherever that is.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// Elementwise in its one operand: the batch axis stays where it is.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        one(bind1(self, &[&args[0]]), dims[0])
    }

    fn name(&self) -> String {
        "stop_gradient".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        vec![inputs[0].clone()]
    }

    fn jvp(
        &self,
        primals: &[Array],
        _tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        Ok((vec![super::bind1(self, &[&primals[0]])], vec![None]))
    }
}

/// Checks that operands fit a sub-program's inputs.
fn check_inputs(program: &Program, inputs: &[Aval], what: &str) -> Result<(), String> {
    let takes = program.input_avals();
    let fits = takes.len() == inputs.len()
        && takes.iter().zip(inputs).all(|(a, b)| a.shape == b.shape && a.dtype == b.dtype);
    if fits {
        Ok(())
    } else {
        Err(format!("the {what} takes {} but got {}", describe(&takes), describe(inputs)))
    }
}

fn run(program: &Program, inputs: &[&Array]) -> Vec<Array> {
    let args: Vec<Array> = inputs.iter().map(|a| (*a).clone()).collect();
    eval_program(program, &args)
}

/// `checkpoint`: runs a sub-program. Differentiated, its tangents come from a second
/// `checkpoint` whose program recomputes the primal values it needs, so reverse mode keeps
/// only the inputs as residuals and recomputes the rest in the backward pass.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    pub program: Arc<Program>,
}

impl Primitive for Checkpoint {
    /// The primitives of its program run where their operands are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let (program, out_dims) = batch_program(&self.program, dims, axis, &[]);
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&Checkpoint { program: Arc::new(program) }, &refs), out_dims))
    }

    fn name(&self) -> String {
        "checkpoint".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        check_inputs(&self.program, inputs, "checkpointed function")?;
        Ok(self.program.output_avals())
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        run(&self.program, inputs)
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("body".to_string(), self.program.as_ref())]
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [program]: [Program; 1] = programs.try_into().ok()?;
        Some(Arc::new(Checkpoint { program: Arc::new(program) }))
    }

    fn has_effect(&self) -> bool {
        self.program.equations.iter().any(|e| e.prim.has_effect())
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind(self, &refs);
        let nonzero: Vec<bool> = tangents.iter().map(Option::is_some).collect();
        let tangent = Checkpoint { program: Arc::new(tangent_program(&self.program, &nonzero)) };
        let mut inputs = refs;
        inputs.extend(tangents.iter().flatten());
        let tangents = ops::float_tangents(&outs, bind(&tangent, &inputs));
        Ok((outs, tangents))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let linear: Vec<bool> = args.iter().map(LinearArg::is_linear).collect();
        let transposed =
            Checkpoint { program: Arc::new(transpose_program(&self.program, &linear)) };
        let cts = ops::float_cts(cts, &self.program.output_avals());
        let mut inputs: Vec<&Array> = args.iter().filter_map(LinearArg::known).collect();
        inputs.extend(cts.iter());
        Ok(ops::linear_cts(args, bind(&transposed, &inputs)))
    }
}

/// A function with a user-given jvp rule. Operands: the `num_args` arguments, then the
/// values `fun` captured, then those `rule` captured. `fun` takes the arguments and its
/// captures; `rule` takes the arguments, one tangent per argument, and its captures, and
/// returns the outputs followed by their tangents.
#[derive(Clone, Debug)]
pub struct CustomJvp {
    pub fun: Arc<Program>,
    pub rule: Arc<Program>,
    pub num_args: usize,
}

impl CustomJvp {
    fn fun_captures(&self) -> usize {
        self.fun.inputs.len() - self.num_args
    }
}

impl Primitive for CustomJvp {
    /// The primitives of its program run where their operands are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// The function and its rule are batched alike (a tangent is batched where its primal
    /// is), with every output batched so the two agree.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let n = self.num_args;
        let split = n + self.fun_captures();
        let all = vec![true; self.fun.outputs.len()];
        let (fun, _) = batch_program(&self.fun, &dims[..split], axis, &all);
        let mut rule_dims = dims[..n].to_vec();
        rule_dims.extend_from_slice(&dims[..n]);
        rule_dims.extend_from_slice(&dims[split..]);
        let (rule, _) =
            batch_program(&self.rule, &rule_dims, axis, &vec![true; self.rule.outputs.len()]);
        let prim = CustomJvp { fun: Arc::new(fun), rule: Arc::new(rule), num_args: n };
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&prim, &refs), vec![Some(0); all.len()]))
    }

    fn name(&self) -> String {
        "custom_jvp_call".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let split = self.num_args + self.fun_captures();
        if inputs.len() < split {
            return Err(format!("expected at least {split} operands"));
        }
        let fun_inputs = &inputs[..split];
        check_inputs(&self.fun, fun_inputs, "function")?;
        Ok(self.fun.output_avals())
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        run(&self.fun, &inputs[..self.num_args + self.fun_captures()])
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("fun".to_string(), self.fun.as_ref()), ("jvp".to_string(), self.rule.as_ref())]
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [fun, rule]: [Program; 2] = programs.try_into().ok()?;
        Some(Arc::new(CustomJvp { fun: Arc::new(fun), rule: Arc::new(rule), ..*self }))
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let n = self.num_args;
        let mut args: Vec<Array> = primals[..n].to_vec();
        args.extend(primals[..n].iter().zip(tangents).map(|(p, t)| ops::instantiate(t, &p.aval())));
        args.extend_from_slice(&primals[n + self.fun_captures()..]);
        let mut results = eval_program(&self.rule, &args);
        let out_tangents = results.split_off(results.len() / 2).into_iter().map(Some).collect();
        Ok((results, out_tangents))
    }
}

/// A function with user-given forward and backward passes. Operands: the `num_args`
/// arguments, the values `fun` captured, then those `fwd` and `bwd` captured (`fwd_captures`
/// and the rest). `fwd` returns the outputs and `num_residuals` residuals; `bwd` takes the
/// residuals, one cotangent per output and its captures, and returns one cotangent per
/// argument.
#[derive(Clone, Debug)]
pub struct CustomVjp {
    pub fun: Arc<Program>,
    pub fwd: Arc<Program>,
    pub bwd: Arc<Program>,
    pub num_args: usize,
    pub num_residuals: usize,
}

impl CustomVjp {
    fn fun_captures(&self) -> usize {
        self.fun.inputs.len() - self.num_args
    }

    fn fwd_captures(&self) -> usize {
        self.fwd.inputs.len() - self.num_args
    }
}

impl Primitive for CustomVjp {
    /// The primitives of its program run where their operands are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// `fun` and `fwd` are batched with every output (and residual) batched; `bwd` is batched
    /// so that each argument's cotangent has that argument's layout, summed over the examples
    /// for an argument shared by all of them (as JAX does).
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let n = self.num_args;
        let fwd_start = n + self.fun_captures();
        let bwd_start = fwd_start + self.fwd_captures();
        let mut fun_dims = dims[..n].to_vec();
        fun_dims.extend_from_slice(&dims[n..fwd_start]);
        let (fun, _) =
            batch_program(&self.fun, &fun_dims, axis, &vec![true; self.fun.outputs.len()]);
        let mut fwd_dims = dims[..n].to_vec();
        fwd_dims.extend_from_slice(&dims[fwd_start..bwd_start]);
        let (fwd, _) =
            batch_program(&self.fwd, &fwd_dims, axis, &vec![true; self.fwd.outputs.len()]);
        let known = self.num_residuals + self.fun.outputs.len();
        let bwd = batch_bwd(&self.bwd, known, &dims[bwd_start..], &dims[..n], axis);
        let prim =
            CustomVjp { fun: Arc::new(fun), fwd: Arc::new(fwd), bwd: Arc::new(bwd), ..*self };
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&prim, &refs), vec![Some(0); self.fun.outputs.len()]))
    }

    fn name(&self) -> String {
        "custom_vjp_call".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let split = self.num_args + self.fun_captures();
        if inputs.len() < split + self.fwd_captures() {
            return Err(format!("expected at least {} operands", split + self.fwd_captures()));
        }
        check_inputs(&self.fun, &inputs[..split], "function")?;
        Ok(self.fun.output_avals())
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        run(&self.fun, &inputs[..self.num_args + self.fun_captures()])
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![
            ("fun".to_string(), self.fun.as_ref()),
            ("fwd".to_string(), self.fwd.as_ref()),
            ("bwd".to_string(), self.bwd.as_ref()),
        ]
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [fun, fwd, bwd]: [Program; 3] = programs.try_into().ok()?;
        Some(Arc::new(CustomVjp {
            fun: Arc::new(fun),
            fwd: Arc::new(fwd),
            bwd: Arc::new(bwd),
            ..*self
        }))
    }

    /// The outputs and residuals come from `fwd`; the tangents from an equation that is linear
    /// in the arguments' tangents and whose transpose is `bwd` (it has no forward meaning).
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let n = self.num_args;
        let fwd_start = n + self.fun_captures();
        let bwd_start = fwd_start + self.fwd_captures();
        let mut fwd_args: Vec<Array> = primals[..n].to_vec();
        fwd_args.extend_from_slice(&primals[fwd_start..bwd_start]);
        let mut outs = eval_program(&self.fwd, &fwd_args);
        let residuals = outs.split_off(outs.len() - self.num_residuals);
        let linear = CustomVjpLinear {
            bwd: self.bwd.clone(),
            num_residuals: residuals.len(),
            num_captures: primals.len() - bwd_start,
            outputs: outs.iter().map(Array::aval).collect(),
        };
        let arg_tangents: Vec<Array> = primals[..n]
            .iter()
            .zip(tangents)
            .map(|(p, t)| ops::instantiate(t, &p.aval()))
            .collect();
        let mut inputs: Vec<&Array> = residuals.iter().collect();
        inputs.extend(primals[bwd_start..].iter());
        inputs.extend(arg_tangents.iter());
        let out_tangents = bind(&linear, &inputs).into_iter().map(Some).collect();
        Ok((outs, out_tangents))
    }
}

/// The linear map a `custom_vjp` function's tangents go through: known operands (residuals,
/// then the values `bwd` captured), then the arguments' tangents. Only its transpose — the
/// user's `bwd` — is defined.
#[derive(Clone, Debug)]
pub struct CustomVjpLinear {
    pub bwd: Arc<Program>,
    pub num_residuals: usize,
    pub num_captures: usize,
    pub outputs: Vec<Aval>,
}

const NO_FORWARD: &str = "a custom_vjp function cannot be differentiated in forward mode \
    (jvp, jacfwd, hessian); differentiate it in reverse mode (grad, vjp, jacrev), or give it \
    a custom_jvp rule instead";

impl Primitive for CustomVjpLinear {
    /// Evaluating it anywhere is forward-mode differentiation, refused by `eval` alike.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let (residual_dims, rest) = dims.split_at(self.num_residuals);
        let (capture_dims, tangent_dims) = rest.split_at(self.num_captures);
        let mut bwd_dims = residual_dims.to_vec();
        bwd_dims.extend(self.outputs.iter().map(|_| Some(0)));
        bwd_dims.extend_from_slice(capture_dims);
        let bwd = batch_bwd_with(&self.bwd, &bwd_dims, tangent_dims, axis);
        let outputs = self.outputs.iter().map(|a| batched_aval(a, Some(0), axis.size)).collect();
        let prim = CustomVjpLinear { bwd: Arc::new(bwd), outputs, ..self.clone() };
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&prim, &refs), vec![Some(0); self.outputs.len()]))
    }

    fn name(&self) -> String {
        "custom_lin".to_string()
    }

    fn abstract_eval(&self, _inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        Ok(self.outputs.clone())
    }

    fn eval(&self, _inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        panic!("{NO_FORWARD}")
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("bwd".to_string(), self.bwd.as_ref())]
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [bwd]: [Program; 1] = programs.try_into().ok()?;
        Some(Arc::new(CustomVjpLinear { bwd: Arc::new(bwd), ..self.clone() }))
    }

    fn jvp(
        &self,
        _primals: &[Array],
        _tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        Err(NO_FORWARD.to_string())
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let num_known = self.num_residuals + self.num_captures;
        let known: Vec<Array> = args[..num_known]
            .iter()
            .map(|a| a.known().cloned().ok_or(NO_FORWARD))
            .collect::<Result<_, _>>()?;
        let mut bwd_args: Vec<Array> = known[..self.num_residuals].to_vec();
        bwd_args.extend(cts.iter().zip(&self.outputs).map(|(ct, a)| ops::instantiate(ct, a)));
        bwd_args.extend_from_slice(&known[self.num_residuals..]);
        let in_cts = eval_program(&self.bwd, &bwd_args);
        let mut result = vec![None; num_known];
        for (ct, arg) in in_cts.into_iter().zip(&args[num_known..]) {
            let want = arg.aval();
            if ct.shape() != want.shape.as_slice() {
                return Err(format!(
                    "custom_vjp: bwd returned a cotangent {} for an argument {want}",
                    ct.aval()
                ));
            }
            result.push(Some(if ct.dtype() == want.dtype { ct } else { ct.astype(want.dtype) }));
        }
        Ok(result)
    }
}

/// A `custom_vjp`'s batched `bwd`: its first `known` inputs (residuals, then output
/// cotangents) batched in front, then its captures at `capture_dims`.
fn batch_bwd(
    bwd: &Program,
    known: usize,
    capture_dims: &[BatchDim],
    arg_dims: &[BatchDim],
    axis: &BatchAxis,
) -> Program {
    let mut dims = vec![Some(0); known];
    dims.extend_from_slice(capture_dims);
    batch_bwd_with(bwd, &dims, arg_dims, axis)
}

/// `bwd` batched for inputs at `dims`, returning each argument's cotangent with the
/// argument's batch axis (`arg_dims`), or summed over the examples for an unbatched one.
fn batch_bwd_with(
    bwd: &Program,
    dims: &[BatchDim],
    arg_dims: &[BatchDim],
    axis: &BatchAxis,
) -> Program {
    let avals = batched_avals(&bwd.input_avals(), dims, axis.size);
    let traced = trace::trace_with(&avals, |ins| {
        let (cts, ct_dims) = batch_eval(bwd, &ins, dims, axis);
        let outs = cts
            .iter()
            .zip(ct_dims)
            .zip(arg_dims)
            .map(|((ct, d), want)| match (d, want) {
                (Some(d), Some(w)) => move_axis(ct, d, *w),
                (Some(d), None) => ops::sum_axes(ct, vec![d]),
                (None, Some(w)) => to_dim(ct, None, *w, axis.size),
                (None, None) => ct.clone(),
            })
            .collect();
        (outs, ())
    });
    assert!(traced.captured.is_empty(), "a batched bwd captured outer values");
    traced.program
}
