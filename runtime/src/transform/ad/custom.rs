//! Controlling differentiation: [`stop_gradient`], [`checkpoint`], and functions with
//! user-given derivatives ([`custom_jvp`], [`custom_vjp`]).

use std::sync::Arc;

use super::api::{trace_body, Flat};
use crate::array::Array;
use crate::primitives::{bind, bind1, Aval, Checkpoint, CustomJvp, CustomVjp, StopGradient};
use crate::tree::{Node, Tree, Unflatten};

/// `lax.stop_gradient`: `x` itself, but differentiation treats it as a constant.
///
/// ```
/// use rjax_runtime::{lax, transform::ad::api::grad_of, Array};
/// let g = grad_of(|x| x * lax::stop_gradient(x), &Array::from(3.0f32));
/// assert_eq!(g.item::<f32>().unwrap(), 3.0);
/// ```
#[track_caller]
pub fn stop_gradient(x: &Array) -> Array {
    bind1(&StopGradient, &[x])
}

/// `jax.checkpoint` over flattened parameters (what `#[checkpoint]` calls): the same outputs
/// as `body`, but reverse-mode differentiation recomputes its intermediates from the inputs
/// instead of keeping them.
#[track_caller]
pub fn checkpoint<R: Tree>(params: Vec<Flat>, body: impl FnOnce(Vec<Flat>) -> R) -> Flat {
    let body = trace_body(&params, body);
    let refs: Vec<&Array> = body.primals.iter().collect();
    let leaves = bind(&Checkpoint { program: Arc::new(body.program) }, &refs);
    Flat { leaves, def: body.out_def }
}

fn one_param<A: Unflatten>(args: &A) -> Vec<Flat> {
    vec![Flat::of(args)]
}

fn rebuild<A: Unflatten>(mut params: Vec<Flat>) -> A {
    params.remove(0).into_tree()
}

/// `jax.custom_jvp`: `f(args)`, whose derivative is given by `rule(primals, tangents) ->
/// (outputs, output tangents)` instead of by differentiating `f`. The rule must be linear in
/// the tangents (reverse mode transposes it). A numerically stable `log1pexp`:
///
/// ```
/// use rjax_runtime::{transform::ad::{api::grad_of, custom::custom_jvp}, Array};
/// let log1pexp = |x: &Array| {
///     custom_jvp(
///         x,
///         |x: Array| (x.exp() + 1.0).log(),
///         |x: Array, t: Array| ((x.exp() + 1.0).log(), t * x.sigmoid()),
///     )
/// };
/// let g = grad_of(log1pexp, &Array::from(100.0f32));
/// assert_eq!(g.item::<f32>().unwrap(), 1.0);
/// ```
#[track_caller]
pub fn custom_jvp<A: Unflatten, R: Unflatten>(
    args: &A,
    f: impl FnOnce(A) -> R,
    rule: impl FnOnce(A, A) -> (R, R),
) -> R {
    custom_jvp_call(one_param(args), |p| f(rebuild(p)), |p, t| rule(rebuild(p), rebuild(t)))
        .into_tree()
}

/// [`custom_jvp`] over flattened parameters (what `#[custom_jvp(jvp = rule)]` calls): `rule`
/// gets the primals and one tangent tree per parameter, and returns `(outputs, tangents)`.
#[track_caller]
pub fn custom_jvp_call<R: Tree, T: Tree>(
    params: Vec<Flat>,
    f: impl FnOnce(Vec<Flat>) -> R,
    rule: impl FnOnce(Vec<Flat>, Vec<Flat>) -> T,
) -> Flat {
    let num_params = params.len();
    let num_args: usize = params.iter().map(|p| p.leaves.len()).sum();
    let fun = trace_body(&params, f);
    let mut doubled = params.clone();
    doubled.extend(params.iter().cloned());
    let rule = trace_body(&doubled, |mut p| {
        let t = p.split_off(num_params);
        rule(p, t)
    });
    let fun_outs = fun.program.output_avals();
    let rule_outs = rule.program.output_avals();
    let fits = rule_outs.len() == 2 * fun_outs.len()
        && fun_outs
            .iter()
            .chain(&fun_outs)
            .zip(&rule_outs)
            .all(|(a, b)| a.shape == b.shape && a.dtype == b.dtype);
    if !fits {
        panic!(
            "custom_jvp: the rule must return (outputs, tangents) shaped like the function's \
             output {}, but it returns {}",
            fun.out_def, rule.out_def
        );
    }
    let prim = CustomJvp { fun: Arc::new(fun.program), rule: Arc::new(rule.program), num_args };
    let mut inputs: Vec<&Array> = fun.primals.iter().collect();
    inputs.extend(rule.primals[2 * num_args..].iter());
    Flat { leaves: bind(&prim, &inputs), def: fun.out_def }
}

/// `jax.custom_vjp`: `f(args)`, differentiated in reverse mode by `fwd(args) -> (outputs,
/// residuals)` and `bwd(residuals, output cotangents) -> argument cotangents` instead of by
/// differentiating `f` (gradient clipping, implicit derivatives). Forward mode is refused,
/// as in JAX.
///
/// ```
/// use rjax_runtime::{transform::ad::{api::grad_of, custom::custom_vjp}, Array};
/// // Clips the gradient flowing back through `x` to [-1, 1].
/// let clip_grad = |x: &Array| {
///     custom_vjp(x, |x: Array| x, |x: Array| (x, ()), |(), g: Array| g.clip(-1.0, 1.0))
/// };
/// let g = grad_of(|x| clip_grad(&(x * 5.0)), &Array::from(1.0f32));
/// assert_eq!(g.item::<f32>().unwrap(), 5.0);
/// ```
#[track_caller]
pub fn custom_vjp<A: Unflatten, R: Unflatten, Res: Unflatten>(
    args: &A,
    f: impl FnOnce(A) -> R,
    fwd: impl FnOnce(A) -> (R, Res),
    bwd: impl FnOnce(Res, R) -> A,
) -> R {
    custom_vjp_call(
        one_param(args),
        |p| f(rebuild(p)),
        |p| fwd(rebuild(p)),
        |res, ct| bwd(res.into_tree(), ct.into_tree()),
    )
    .into_tree()
}

/// `bwd`'s cotangents with each parameter's `None` (JAX's zero cotangent, for an argument
/// that is not differentiated) replaced by zeros of that parameter's leaves, and each
/// `Some(ct)` by `ct`. Left as they are when they are not one entry per parameter (the caller
/// reports that).
fn zero_for_none(cts: Flat, params: &[Vec<Aval>]) -> Flat {
    let parts = if params.len() == 1 {
        vec![cts.clone()]
    } else {
        match cts.clone().into_elements() {
            Some(parts) if parts.len() == params.len() => parts,
            _ => return cts,
        }
    };
    let mut leaves = Vec::new();
    for (part, avals) in parts.into_iter().zip(params) {
        match part.def.nodes().first() {
            Some(Node::Option(false)) if part.def.nodes().len() == 1 => {
                leaves.extend(avals.iter().map(super::ops::zeros));
            }
            _ => leaves.extend(part.leaves),
        }
    }
    Flat { leaves, def: cts.def }
}

/// [`custom_vjp`] over flattened parameters (what `#[custom_vjp(fwd = .., bwd = ..)]`
/// calls): `fwd` returns `(outputs, residuals)`; `bwd` gets the residuals and the outputs'
/// cotangent and returns one cotangent tree per parameter (a tuple of them when there are
/// several).
#[track_caller]
pub fn custom_vjp_call<R: Tree, F: Tree, B: Tree>(
    params: Vec<Flat>,
    f: impl FnOnce(Vec<Flat>) -> R,
    fwd: impl FnOnce(Vec<Flat>) -> F,
    bwd: impl FnOnce(Flat, Flat) -> B,
) -> Flat {
    let num_args: usize = params.iter().map(|p| p.leaves.len()).sum();
    let fun = trace_body(&params, f);
    let fwd = trace_body(&params, fwd);
    let out_def = fun.out_def.clone();
    let num_outputs = out_def.num_leaves();
    let parts = fwd.out_def.tuple_elements().filter(|p| p.len() == 2 && p[0] == out_def);
    let Some(parts) = parts else {
        panic!(
            "custom_vjp: fwd must return (outputs, residuals) with the function's output \
             structure {out_def}, but it returns {}",
            fwd.out_def
        );
    };
    let num_residuals = fwd.program.outputs.len() - num_outputs;
    let outs = fwd.program.output_avals();
    let residuals = Flat {
        leaves: outs[num_outputs..].iter().map(super::ops::zeros).collect(),
        def: parts[1].clone(),
    };
    let ct =
        Flat { leaves: outs[..num_outputs].iter().map(super::ops::zeros).collect(), def: out_def };
    let param_avals: Vec<Vec<Aval>> =
        params.iter().map(|p| p.leaves.iter().map(Array::aval).collect()).collect();
    let bwd = trace_body(&[residuals, ct], |mut p| {
        let ct = p.pop().expect("two parameters");
        let cts = Flat::of(&bwd(p.pop().expect("two parameters"), ct));
        zero_for_none(cts, &param_avals)
    });
    if bwd.program.outputs.len() != num_args {
        panic!(
            "custom_vjp: bwd must return one cotangent per argument leaf ({num_args}), or \
             `None` for an argument that gets a zero cotangent, but it returns {}",
            bwd.out_def
        );
    }
    let prim = CustomVjp {
        fun: Arc::new(fun.program),
        fwd: Arc::new(fwd.program),
        bwd: Arc::new(bwd.program),
        num_args,
        num_residuals,
    };
    let mut inputs: Vec<&Array> = fun.primals.iter().collect();
    inputs.extend(fwd.primals[num_args..].iter());
    inputs.extend(bwd.primals[num_residuals + num_outputs..].iter());
    Flat { leaves: bind(&prim, &inputs), def: fun.out_def }
}
