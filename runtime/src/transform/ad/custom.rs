//! Controlling differentiation: [`stop_gradient`], [`checkpoint`], and functions with
//! user-given derivatives ([`custom_jvp`], [`custom_vjp`]).

use std::sync::Arc;

use super::api::{trace_body, Flat};
use crate::array::Array;
use crate::primitives::{bind, bind1, Checkpoint, CustomJvp, CustomVjp, StopGradient};
use crate::tree::{Tree, Unflatten};

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

/// Flattens owned arguments and rebuilds them inside a trace.
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
    let params = one_param(args);
    let num_args = params[0].leaves.len();
    let fun = trace_body(&params, |p| f(rebuild(p)));
    let tangent_params = vec![params[0].clone(), params[0].clone()];
    let rule = trace_body(&tangent_params, |mut p| {
        let t = rebuild(p.split_off(1));
        rule(rebuild(p), t)
    });
    let prim = CustomJvp { fun: Arc::new(fun.program), rule: Arc::new(rule.program), num_args };
    let mut inputs: Vec<&Array> = fun.primals.iter().collect();
    inputs.extend(rule.primals[2 * num_args..].iter());
    let leaves = bind(&prim, &inputs);
    Flat { leaves, def: fun.out_def }.into_tree()
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
    let params = one_param(args);
    let num_args = params[0].leaves.len();
    let fun = trace_body(&params, |p| f(rebuild(p)));
    let fwd = trace_body(&params, |p| fwd(rebuild(p)));
    let out_def = fun.out_def.clone();
    let num_outputs = out_def.num_leaves();
    let num_residuals = fwd.program.outputs.len() - num_outputs;
    let outs = fwd.program.output_avals();
    let residual_def = fwd.out_def.tuple_elements().expect("fwd returns a pair")[1].clone();
    let residual_flat = Flat {
        leaves: outs[num_outputs..].iter().map(super::ops::zeros).collect(),
        def: residual_def,
    };
    let ct_flat =
        Flat { leaves: outs[..num_outputs].iter().map(super::ops::zeros).collect(), def: out_def };
    let bwd = trace_body(&[residual_flat, ct_flat], |mut p| {
        let ct = rebuild(p.split_off(1));
        bwd(rebuild(p), ct)
    });
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
    let leaves = bind(&prim, &inputs);
    Flat { leaves, def: fun.out_def }.into_tree()
}
