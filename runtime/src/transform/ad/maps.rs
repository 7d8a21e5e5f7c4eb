//! `jax.vjp` and `jax.linearize` as values: the function is traced and linearized once, and
//! the map it returns (the pullback, or the linear pushforward) can be applied any number of
//! times, as JAX's `vjp_fn` and `f_jvp` can.

use super::api::{trace_body, Flat};
use super::{differentiable, linearize, ops, Linearized, Tangent};
use crate::array::Array;
use crate::tree::{Tree, TreeDef};

/// The linearization of a function of one pytree argument at a point, with what is needed
/// to turn its flat inputs and outputs back into trees.
pub struct LinearMap {
    lin: Linearized,
    /// The argument's structure and leaves' avals; `wrt[k]`: whether leaf `k` is
    /// differentiated (floating point).
    in_def: TreeDef,
    in_avals: Vec<crate::primitives::Aval>,
    wrt: Vec<bool>,
    out_def: TreeDef,
}

/// Traces `body` on `primals` and linearizes it there: returns the output and the map.
#[track_caller]
pub fn linear_map<R: Tree>(primals: Flat, body: impl FnOnce(Vec<Flat>) -> R) -> (Flat, LinearMap) {
    let in_avals: Vec<_> = primals.leaves.iter().map(Array::aval).collect();
    let wrt: Vec<bool> = in_avals.iter().map(differentiable).collect();
    let in_def = primals.def.clone();
    let body = trace_body(&[primals], body);
    let mut mask = wrt.clone();
    mask.resize(body.primals.len(), false);
    let lin = linearize(&body.program, &body.primals, &mask);
    let out = Flat { leaves: lin.outputs.clone(), def: body.out_def.clone() };
    (out, LinearMap { lin, in_def, in_avals, wrt, out_def: body.out_def })
}

impl LinearMap {
    /// The output tangent for the argument's tangent `t` (`jax.linearize`'s `f_jvp`).
    #[track_caller]
    pub fn push(&self, t: Flat) -> Flat {
        self.check("linearize", "tangent", &self.in_def, &t, &self.in_avals);
        let tangents: Vec<Array> =
            t.leaves.into_iter().zip(&self.wrt).filter(|(_, w)| **w).map(|(l, _)| l).collect();
        let outs = self.lin.apply(&tangents);
        let avals = self.out_avals();
        let leaves = outs.iter().zip(&avals).map(|(o, a)| ops::instantiate(&Some(o.clone()), a));
        Flat { leaves: leaves.collect(), def: self.out_def.clone() }
    }

    /// The argument's cotangent for the output cotangent `ct` (`jax.vjp`'s `vjp_fn`); integer
    /// leaves get zeros of their own type.
    #[track_caller]
    pub fn pull(&self, ct: Flat) -> Flat {
        self.check("vjp", "cotangent", &self.out_def, &ct, &self.out_avals());
        let cts: Vec<Tangent> = ct.leaves.into_iter().map(Some).collect();
        let mut in_cts = self.lin.transpose(&cts).into_iter();
        let leaves = self
            .in_avals
            .iter()
            .zip(&self.wrt)
            .map(|(a, w)| if *w { in_cts.next().expect("a cotangent") } else { ops::zeros(a) })
            .collect();
        Flat { leaves, def: self.in_def.clone() }
    }

    fn out_avals(&self) -> Vec<crate::primitives::Aval> {
        self.lin.outputs.iter().map(Array::aval).collect()
    }

    /// Panics naming the transform when `value` does not have `def`'s structure and `avals`'
    /// shapes and dtypes.
    #[track_caller]
    fn check(
        &self,
        op: &str,
        what: &str,
        def: &TreeDef,
        value: &Flat,
        avals: &[crate::primitives::Aval],
    ) {
        if value.def != *def {
            panic!("{op}: the {what} has structure {} but it must have {def}", value.def);
        }
        for (v, a) in value.leaves.iter().zip(avals) {
            if v.shape() != a.shape.as_slice() || v.dtype() != a.dtype {
                panic!("{op}: the {what} has a leaf {} where {a} was expected", v.aval());
            }
        }
    }
}
