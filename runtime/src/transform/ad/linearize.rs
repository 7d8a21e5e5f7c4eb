//! Linearization: the jvp of a program split into its primal part, evaluated now, and a
//! program linear in the tangents, kept for transposition (JAX's partial evaluation).

use super::{backward_pass, differentiable, jvp_eval, ops, transpose_program, LinearArg, Tangent};
use crate::array::Array;
use crate::ir::{eval_program, trace, Atom, Program, Var};
use crate::transform::batch::{self, batch_eval, BatchAxis, BatchDim};

/// A linearized program: its outputs at the primal point, and the linear map from input
/// tangents to output tangents, with the primal values that map needs (the residuals).
pub struct Linearized {
    /// The program's outputs at the primal point.
    pub outputs: Vec<Array>,
    /// Inputs: the residuals, then the tangents of the differentiated inputs; outputs: a
    /// tangent per output of the original program.
    linear: Program,
    residuals: Vec<Array>,
    /// The avals of the differentiated inputs, in order.
    wrt: Vec<crate::primitives::Aval>,
}

/// Linearizes `program` at `primals` with respect to the inputs marked in `wrt`.
///
/// The jvp is traced once with abstract primals; equations that depend only on primals form
/// the primal program, which runs on `primals` (op by op, or into an enclosing trace); those
/// that touch a tangent form the linear program. Only primal values the linear program
/// reads are kept as residuals.
pub fn linearize(program: &Program, primals: &[Array], wrt: &[bool]) -> Linearized {
    let in_avals = program.input_avals();
    let wrt_avals: Vec<_> =
        in_avals.iter().zip(wrt).filter(|(_, w)| **w).map(|(a, _)| a.clone()).collect();
    let mut avals = in_avals.clone();
    avals.extend(wrt_avals.iter().cloned());
    let out_avals = program.output_avals();
    let joint = trace::trace_with(&avals, |ins| {
        let (ps, ts) = ins.split_at(in_avals.len());
        let mut ts = ts.iter();
        let tangents: Vec<Tangent> =
            wrt.iter().map(|&w| if w { ts.next().cloned() } else { None }).collect();
        let (outs, out_tangents) = jvp_eval(program, ps, &tangents);
        let mut result = outs;
        result.extend(out_tangents.iter().zip(&out_avals).map(|(t, a)| ops::instantiate(t, a)));
        (result, ())
    });
    assert!(joint.captured.is_empty(), "a linearized program captured outer values");
    let (primal_program, linear, num_outputs) = split(&joint.program, in_avals.len());
    let mut values = eval_program(&primal_program, primals);
    let residuals = values.split_off(num_outputs);
    Linearized { outputs: values, linear, residuals, wrt: wrt_avals }
}

/// Splits a traced jvp (inputs: `num_primals` primals then tangents; outputs: primal outputs
/// then tangents) into a primal program (outputs: primal outputs then residuals) and a linear
/// program (inputs: residuals then tangents). Returns them and the number of primal outputs.
fn split(joint: &Program, num_primals: usize) -> (Program, Program, usize) {
    let n = joint.avals.len();
    let mut unknown = vec![false; n];
    for v in &joint.inputs[num_primals..] {
        unknown[v.index()] = true;
    }
    let is_unknown = |unknown: &[bool], a: &Atom| matches!(a, Atom::Var(v) if unknown[v.index()]);
    let (mut known_eqns, mut linear_eqns) = (Vec::new(), Vec::new());
    for eqn in &joint.equations {
        if eqn.inputs.iter().any(|a| is_unknown(&unknown, a)) {
            for v in &eqn.outputs {
                unknown[v.index()] = true;
            }
            linear_eqns.push(eqn.clone());
        } else {
            known_eqns.push(eqn.clone());
        }
    }
    let num_outputs = joint.outputs.len() / 2;
    let (primal_outs, tangent_outs) = joint.outputs.split_at(num_outputs);
    assert!(
        !primal_outs.iter().any(|a| is_unknown(&unknown, a)),
        "a jvp rule made a primal output depend on a tangent"
    );
    // Residuals: known variables the linear part reads, each once, in order of first use.
    let mut residuals: Vec<Var> = Vec::new();
    let mut seen = vec![false; n];
    let reads = linear_eqns.iter().flat_map(|e| e.inputs.iter()).chain(tangent_outs);
    for atom in reads {
        if let Atom::Var(v) = atom {
            if !unknown[v.index()] && !std::mem::replace(&mut seen[v.index()], true) {
                residuals.push(*v);
            }
        }
    }
    let mut primal_outputs = primal_outs.to_vec();
    primal_outputs.extend(residuals.iter().map(|v| Atom::Var(*v)));
    let primal = Program {
        avals: joint.avals.clone(),
        inputs: joint.inputs[..num_primals].to_vec(),
        equations: known_eqns,
        outputs: primal_outputs,
    };
    let mut linear_inputs = residuals;
    linear_inputs.extend_from_slice(&joint.inputs[num_primals..]);
    let linear = Program {
        avals: joint.avals.clone(),
        inputs: linear_inputs,
        equations: linear_eqns,
        outputs: tangent_outs.to_vec(),
    };
    (primal, linear, num_outputs)
}

impl Linearized {
    /// The output tangents for these tangents of the differentiated inputs (the linear map
    /// applied forwards, as `jax.linearize`'s function does).
    pub fn apply(&self, tangents: &[Array]) -> Vec<Array> {
        let mut args = self.residuals.clone();
        args.extend(tangents.iter().cloned());
        eval_program(&self.linear, &args)
    }

    /// The cotangents of the differentiated inputs (zeros instantiated) for these output
    /// cotangents (`None` = zero). Can be called repeatedly (one call per jacobian row).
    pub fn transpose(&self, cts: &[Tangent]) -> Vec<Array> {
        let mut args: Vec<LinearArg> =
            self.residuals.iter().map(|r| LinearArg::Known(r.clone())).collect();
        args.extend(self.wrt.iter().map(|a| LinearArg::Linear(a.clone())));
        let cts: Vec<Tangent> = cts
            .iter()
            .zip(&self.linear.outputs)
            .map(|(ct, atom)| ct.clone().filter(|_| differentiable(&self.linear.atom_aval(atom))))
            .collect();
        let in_cts = backward_pass(&self.linear, &args, &cts);
        let num_residuals = self.residuals.len();
        in_cts[num_residuals..]
            .iter()
            .zip(&self.wrt)
            .map(|(ct, aval)| ops::instantiate(ct, aval))
            .collect()
    }

    /// [`Linearized::apply`] to `size` tangents at once: each tangent carries the batch at
    /// `dims` (`None`: the same for all), and the output tangents carry it in front. One
    /// batched run of the linear program (JAX's `vmap(jvp)`), as dense jacobians use.
    pub fn apply_batched(&self, tangents: &[Array], dims: &[BatchDim], size: usize) -> Vec<Array> {
        let mut args = self.residuals.clone();
        args.extend(tangents.iter().cloned());
        self.run_batched(&self.linear, args, dims, size)
    }

    /// [`Linearized::transpose`] of `size` cotangents at once (one per output, batched at
    /// `dims`): the input cotangents with the batch in front (JAX's `vmap(vjp)`).
    pub fn transpose_batched(&self, cts: &[Array], dims: &[BatchDim], size: usize) -> Vec<Array> {
        let mut linear = vec![false; self.residuals.len()];
        linear.extend(self.wrt.iter().map(|_| true));
        let program = transpose_program(&self.linear, &linear);
        let mut args = self.residuals.clone();
        args.extend(cts.iter().cloned());
        self.run_batched(&program, args, dims, size)
    }

    fn run_batched(
        &self,
        program: &Program,
        args: Vec<Array>,
        dims: &[BatchDim],
        size: usize,
    ) -> Vec<Array> {
        let mut all: Vec<BatchDim> = vec![None; self.residuals.len()];
        all.extend_from_slice(dims);
        let axis = BatchAxis { size, name: None };
        let (outs, out_dims) = batch_eval(program, &args, &all, &axis);
        outs.iter().zip(out_dims).map(|(x, d)| batch::ops::to_dim(x, d, 0, size)).collect()
    }
}
