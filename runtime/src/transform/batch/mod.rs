//! Vectorization (`vmap`), as JAX does it: an interpreter that runs a program traced for one
//! example on operands carrying an extra batch axis, applying each equation's batching rule
//! ([`Primitive::batch`](crate::primitives::Primitive::batch)). A value is an array and where
//! its batch axis is ([`BatchDim`]; `None` for values that are the same for every example,
//! which stay unbatched, so closed-over parameters are never copied per example).
//!
//! Rules bind ordinary primitives, so batched programs can be differentiated, batched again
//! (`vmap(vmap(f))`), or recorded into an enclosing trace (`jit(vmap(f))`). The pytree-level
//! transform is in [`api`]; named axes for collectives are in [`crate::transform::axes`].

pub mod api;
pub(crate) mod ops;

use crate::array::Array;
use crate::ir::{trace, Atom, Program};
use crate::primitives::{bind_at, Aval};
use crate::shape::ShapeDisplay;

/// Where a value's batch axis is, or `None` when it is not batched.
pub type BatchDim = Option<usize>;

/// The axis being mapped: its size and, when the `vmap` names it, its name (what collectives
/// such as `lax::psum(x, "i")` refer to).
#[derive(Clone, Debug)]
pub struct BatchAxis {
    pub size: usize,
    pub name: Option<String>,
}

impl BatchAxis {
    /// Whether this is the axis named `name`.
    pub fn is(&self, name: &str) -> bool {
        self.name.as_deref() == Some(name)
    }
}

/// Runs `program` on `args` whose batch axes are at `dims`, returning its outputs and their
/// batch axes. Equations whose operands are all unbatched are simply bound (unless they refer
/// to the mapped axis by name); the others run their primitive's batching rule.
pub fn batch_eval(
    program: &Program,
    args: &[Array],
    dims: &[BatchDim],
    axis: &BatchAxis,
) -> (Vec<Array>, Vec<BatchDim>) {
    assert_eq!(args.len(), program.inputs.len(), "vmap: one operand per program input");
    assert_eq!(dims.len(), args.len(), "vmap: one batch axis per operand");
    let mut env: Vec<Option<(Array, BatchDim)>> = vec![None; program.avals.len()];
    for ((var, a), d) in program.inputs.iter().zip(args).zip(dims) {
        env[var.index()] = Some((a.clone(), *d));
    }
    let read = |env: &[Option<(Array, BatchDim)>], atom: &Atom| match atom {
        Atom::Var(v) => env[v.index()].clone().expect("programs define variables before use"),
        Atom::Const(a) => (a.clone(), None),
    };
    for eqn in &program.equations {
        let (inputs, in_dims): (Vec<Array>, Vec<BatchDim>) =
            eqn.inputs.iter().map(|a| read(&env, a)).unzip();
        let named = axis.name.as_deref().is_some_and(|n| eqn.prim.uses_axis(n));
        let (outs, out_dims) = if in_dims.iter().all(Option::is_none) && !named {
            let refs: Vec<&Array> = inputs.iter().collect();
            let outs = bind_at(eqn.prim.as_ref(), &refs, eqn.span);
            let n = outs.len();
            (outs, vec![None; n])
        } else {
            let result = trace::with_span(eqn.span, || eqn.prim.batch(&inputs, &in_dims, axis));
            match result {
                Ok(r) => r,
                Err(msg) => {
                    let at =
                        eqn.span.map(|s| format!("\n  in vmapped code at {s}")).unwrap_or_default();
                    panic!("vmap of {}: {msg}{at}", eqn.prim.name())
                }
            }
        };
        for ((var, out), d) in eqn.outputs.iter().zip(outs).zip(out_dims) {
            check_rule_output(eqn.prim.name(), program.aval(*var), &out, d, axis.size);
            env[var.index()] = Some((out, d));
        }
    }
    program.outputs.iter().map(|a| read(&env, a)).unzip()
}

/// A batching rule must give each output the per-example aval with the batch axis inserted;
/// anything else is a bug in the rule, caught here rather than as a wrong answer later.
fn check_rule_output(prim: String, want: &Aval, got: &Array, dim: BatchDim, size: usize) {
    let expected = match dim {
        Some(d) => batched_shape(&want.shape, d, size),
        None => want.shape.clone(),
    };
    assert!(
        got.shape() == expected.as_slice() && got.dtype() == want.dtype,
        "internal error: the batching rule of {prim} produced {} at batch axis {dim:?} for a \
         per-example {want} (expected shape {})",
        got.aval(),
        ShapeDisplay(&expected)
    );
}

/// `shape` with an axis of `size` inserted at `dim`.
pub(crate) fn batched_shape(shape: &[usize], dim: usize, size: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.insert(dim, size);
    s
}

/// `aval` with an axis of `size` at `dim` (unchanged when `dim` is `None`): the aval of a
/// batched value.
pub(crate) fn batched_aval(aval: &Aval, dim: BatchDim, size: usize) -> Aval {
    match dim {
        Some(d) => Aval { shape: batched_shape(&aval.shape, d, size), ..aval.clone() },
        None => aval.clone(),
    }
}

/// The avals of `avals` batched at `dims`.
pub(crate) fn batched_avals(avals: &[Aval], dims: &[BatchDim], size: usize) -> Vec<Aval> {
    avals.iter().zip(dims).map(|(a, d)| batched_aval(a, *d, size)).collect()
}

/// The batched version of `program` for inputs batched at `dims`, as a program: its inputs
/// are the batched avals, and every batched output has its batch axis moved to 0. Outputs
/// marked in `force` are batched even when they come out unbatched (broadcast), so programs
/// that must agree (the branches of a `cond`, a loop body and its carry) can be made to.
/// Returns the program and its outputs' batch axes (`Some(0)` or `None`).
pub fn batch_program(
    program: &Program,
    dims: &[BatchDim],
    axis: &BatchAxis,
    force: &[bool],
) -> (Program, Vec<BatchDim>) {
    let avals = batched_avals(&program.input_avals(), dims, axis.size);
    let traced = trace::trace_with(&avals, |ins| {
        let (outs, out_dims) = batch_eval(program, &ins, dims, axis);
        let mut result_dims = Vec::with_capacity(outs.len());
        let outs = outs
            .iter()
            .zip(&out_dims)
            .enumerate()
            .map(|(i, (x, d))| {
                if d.is_none() && !force.get(i).copied().unwrap_or(false) {
                    result_dims.push(None);
                    return x.clone();
                }
                result_dims.push(Some(0));
                ops::to_dim(x, *d, 0, axis.size)
            })
            .collect();
        (outs, result_dims)
    });
    assert!(traced.captured.is_empty(), "a batched sub-program captured outer values");
    (traced.program, traced.extra)
}

/// Which outputs of `program` come out batched for inputs batched at `dims`.
pub fn batched_outputs(program: &Program, dims: &[BatchDim], axis: &BatchAxis) -> Vec<bool> {
    batch_program(program, dims, axis, &[]).1.iter().map(Option::is_some).collect()
}
