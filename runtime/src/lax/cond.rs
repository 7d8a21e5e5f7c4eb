//! `lax::cond`: a branch on a traced 0-d bool, with both branches traced as sub-programs.

use std::sync::Arc;

use crate::array::Array;
use crate::dtype::{promote, DType};
use crate::ir::trace::{self, Traced};
use crate::ir::{Atom, Equation, Program};
use crate::jnp::ArrayLike;
use crate::primitives::{bind, Aval, Cond, Convert};
use crate::tree::{self, Tree, TreeDef, Unflatten};

/// `lax.cond(pred, on_true, on_false, operands)`: `on_true(operands)` if `pred` holds, else
/// `on_false(operands)`.
///
/// With a concrete `pred` only the chosen branch runs. With a traced one, both branches are
/// traced and the program gets one `cond` equation that picks at run time; the branches must
/// then return trees of the same structure, shapes and dtypes (weakly typed Rust scalars
/// adopt the other branch's dtype, as in JAX). A traced `if` in an annotated function becomes
/// this call.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = jnp::array([1.0f32, -2.0]);
/// let y = lax::cond(x.sum().lt(0.0), |x: Array| -x, |x: Array| x, x.clone());
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, 2.0]);
/// ```
#[track_caller]
pub fn cond<T, R>(
    pred: impl ArrayLike,
    on_true: impl FnOnce(T) -> R,
    on_false: impl FnOnce(T) -> R,
    operands: T,
) -> R
where
    T: Unflatten,
    R: Unflatten,
{
    let pred = pred.into_array();
    let aval = pred.aval();
    if !aval.shape.is_empty() || aval.dtype != DType::Bool {
        panic!(
            "cond: the predicate must be a 0-d bool, got {aval}; for elementwise choices use \
             jnp::where_"
        );
    }
    if !pred.is_traced() {
        let holds = pred.item::<bool>().expect("a concrete 0-d bool");
        return if holds { on_true(operands) } else { on_false(operands) };
    }
    let (leaves, def) = tree::flatten(&operands);
    let avals: Vec<Aval> = leaves.iter().map(Array::aval).collect();
    let on_true = trace_branch(&avals, &def, on_true);
    let on_false = trace_branch(&avals, &def, on_false);
    if on_true.extra != on_false.extra {
        panic!(
            "cond: the branches must return the same structure, but the true branch returns {} \
             and the false branch {}",
            on_true.extra, on_false.extra
        );
    }
    let out_def = on_true.extra.clone();
    let [on_false, on_true] = unify_outputs([on_false, on_true]);
    let (branches, captured) = share_captures(leaves.len(), [on_false, on_true]);
    let mut inputs: Vec<&Array> = vec![&pred];
    inputs.extend(leaves.iter());
    inputs.extend(captured.iter());
    let outs = bind(&Cond { branches: branches.into_iter().map(Arc::new).collect() }, &inputs);
    tree::unflatten(&out_def, outs)
}

fn trace_branch<T: Unflatten, R: Tree>(
    avals: &[Aval],
    def: &TreeDef,
    branch: impl FnOnce(T) -> R,
) -> Traced<TreeDef> {
    trace::trace_with(avals, |inputs| {
        let result = branch(tree::unflatten(def, inputs));
        tree::flatten(&result)
    })
}

/// Where the branches' outputs differ only because one is a weakly typed scalar (a Rust
/// literal), converts it to the other's dtype inside its branch, as JAX does.
fn unify_outputs<const N: usize>(mut branches: [Traced<TreeDef>; N]) -> [Traced<TreeDef>; N] {
    let n_out = branches[0].program.outputs.len();
    for i in 0..n_out {
        let avals: Vec<Aval> =
            branches.iter().map(|b| b.program.atom_aval(&b.program.outputs[i])).collect();
        if avals.iter().all(|a| a.dtype == avals[0].dtype) {
            continue;
        }
        let kinds: Vec<(DType, bool)> = avals.iter().map(|a| (a.dtype, a.weak)).collect();
        let (dtype, weak) = promote(&kinds);
        for (branch, aval) in branches.iter_mut().zip(&avals) {
            if aval.weak && aval.dtype != dtype {
                convert_output(&mut branch.program, i, dtype, weak);
            }
        }
    }
    branches
}

fn convert_output(program: &mut Program, i: usize, dtype: DType, weak: bool) {
    let source = program.outputs[i].clone();
    let aval = program.atom_aval(&source);
    let var = program.new_var(Aval { dtype, weak, ..aval });
    program.equations.push(Equation {
        prim: Arc::new(Convert { dtype, weak }),
        inputs: vec![source],
        outputs: vec![var],
        span: None,
    });
    program.outputs[i] = Atom::Var(var);
}

/// Makes every branch take the same operands: the `n_explicit` operands, then every value
/// any branch captured from the enclosing trace (each branch ignores the ones it does not use).
fn share_captures<const N: usize>(
    n_explicit: usize,
    branches: [Traced<TreeDef>; N],
) -> (Vec<Program>, Vec<Array>) {
    let mut shared: Vec<Array> = Vec::new();
    for b in &branches {
        for c in &b.captured {
            if !shared.iter().any(|s| s.shares_buffer_with(c)) {
                shared.push(c.clone());
            }
        }
    }
    let programs = branches
        .into_iter()
        .map(|b| {
            let mut program = b.program;
            let own: Vec<_> = program.inputs.split_off(n_explicit);
            for value in &shared {
                let var = match b.captured.iter().position(|c| c.shares_buffer_with(value)) {
                    Some(k) => own[k],
                    None => program.new_var(value.aval()),
                };
                program.inputs.push(var);
            }
            program
        })
        .collect();
    (programs, shared)
}
