//! `lax::cond` and `lax::switch`: branches on a traced predicate or index, every branch
//! traced as a sub-program of one `cond` equation.

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
    let branches: Vec<Branch<'_, T, R>> = vec![Box::new(on_false), Box::new(on_true)];
    traced_branches("cond", &pred, branches, &operands)
}

/// `lax.select(pred, on_true, on_false)`: `on_true` where `pred` holds, else `on_false`,
/// elementwise. Unlike [`jnp::where_`](crate::jnp::where_) nothing is broadcast or promoted:
/// `pred` is a bool array of the branches' shape (or 0-d), and the branches share one shape
/// and dtype.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::array([-1.0f32, 2.0]);
/// let y = lax::select(&x.gt(0.0), &x, &(&x * 0.1));
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-0.1, 2.0]);
/// ```
#[track_caller]
pub fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    let (p, t, f) = (pred.aval(), on_true.aval(), on_false.aval());
    if t.shape != f.shape || t.dtype != f.dtype {
        panic!("select: the branches must have one shape and dtype, got {t} and {f}");
    }
    if p.dtype != DType::Bool || !(p.shape.is_empty() || p.shape == t.shape) {
        panic!(
            "select: the predicate must be bool, 0-d or of the branches' shape {}, got {p}; \
             jnp::where_ broadcasts",
            crate::shape::ShapeDisplay(&t.shape)
        );
    }
    crate::primitives::bind1(&crate::primitives::Select, &[pred, on_true, on_false])
}

/// `lax.switch(index, branches, operands)`: `branches[index](operands)`, with `index` (a 0-d
/// integer) clamped into range, as JAX does.
///
/// With a concrete index only the chosen branch runs; with a traced one every branch is traced
/// and must return the same structure, shapes and dtypes.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = jnp::array([1.0f32, 2.0]);
/// let double = |x: Array| &x * 2.0;
/// let negate = |x: Array| -x;
/// let y = lax::switch(Array::from(7), &[&double, &negate], x);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![-1.0, -2.0]);
/// ```
#[track_caller]
pub fn switch<T, R>(index: impl ArrayLike, branches: &[&dyn Fn(T) -> R], operands: T) -> R
where
    T: Unflatten,
    R: Unflatten,
{
    let index = index.into_array();
    let aval = index.aval();
    if !aval.shape.is_empty() || !aval.dtype.is_int() {
        panic!("switch: the index must be a 0-d integer, got {aval}");
    }
    if branches.is_empty() {
        panic!("switch: needs at least one branch");
    }
    if !index.is_traced() {
        let i = crate::jnp::convert(&index, DType::I64, false)
            .item::<i64>()
            .expect("a concrete 0-d integer");
        let i = i.clamp(0, branches.len() as i64 - 1) as usize;
        return branches[i](operands);
    }
    let boxed: Vec<Branch<'_, T, R>> =
        branches.iter().map(|b| Box::new(*b) as Branch<'_, T, R>).collect();
    traced_branches("switch", &index, boxed, &operands)
}

type Branch<'a, T, R> = Box<dyn FnOnce(T) -> R + 'a>;

/// Traces every branch on the operands' avals and binds one `cond` equation.
#[track_caller]
fn traced_branches<T: Unflatten, R: Unflatten>(
    op: &str,
    index: &Array,
    branches: Vec<Branch<'_, T, R>>,
    operands: &T,
) -> R {
    let (leaves, def) = tree::flatten(operands);
    let avals: Vec<Aval> = leaves.iter().map(Array::aval).collect();
    let traced: Vec<Traced<TreeDef>> =
        branches.into_iter().map(|b| trace_branch(&avals, &def, b)).collect();
    for t in &traced[1..] {
        if t.extra != traced[0].extra {
            panic!(
                "{op}: the branches must return the same structure, but one returns {} and \
                 another {}",
                t.extra, traced[0].extra
            );
        }
    }
    let out_def = traced[0].extra.clone();
    let traced = unify_outputs(traced);
    let (branches, captured) = share_captures(leaves.len(), traced);
    let mut inputs: Vec<&Array> = vec![index];
    inputs.extend(leaves.iter());
    inputs.extend(captured.iter());
    let outs = bind(&Cond { branches: branches.into_iter().map(Arc::new).collect() }, &inputs);
    tree::unflatten(&out_def, outs)
}

#[track_caller]
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
#[track_caller]
pub(super) fn unify_outputs(mut branches: Vec<Traced<TreeDef>>) -> Vec<Traced<TreeDef>> {
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

#[track_caller]
pub(super) fn convert_output(program: &mut Program, i: usize, dtype: DType, weak: bool) {
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
#[track_caller]
pub(super) fn share_captures(
    n_explicit: usize,
    branches: Vec<Traced<TreeDef>>,
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
