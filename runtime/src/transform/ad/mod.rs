//! Automatic differentiation, as JAX does it: forward mode is an interpreter that runs each
//! equation's jvp rule ([`jvp_eval`]); reverse mode linearizes (traces the jvp, then splits it
//! into the primal computation and a program linear in the tangents, [`linearize`]) and
//! transposes the linear program ([`backward_pass`]), which needs transpose rules only for
//! linear primitives.
//!
//! Every rule binds ordinary primitives, so the programs these passes produce can themselves
//! be differentiated: `grad(grad(f))`, forward-over-reverse hessians and so on compose to any
//! depth. On concrete arrays the passes run op by op; inside a trace (`#[jit]`, an outer
//! transform) they record into it.
//!
//! The user-facing transforms over pytrees (`grad`, `jvp`, `jacfwd`, ...) are in [`api`].

pub mod api;
pub mod custom;
mod jvp;
mod linearize;
pub mod maps;
pub(crate) mod ops;
mod transpose;

use crate::array::Array;
use crate::primitives::Aval;

pub use jvp::{jvp_eval, jvp_program, tangent_program};
pub use linearize::{linearize, Linearized};
pub use transpose::{backward_pass, transpose_program};

/// A tangent or cotangent: `None` is a symbolic zero (nothing flows), which is also what
/// integer and boolean values carry.
pub type Tangent = Option<Array>;

/// An operand of a linear equation being transposed: a known value, or a linear operand
/// (whose cotangent is wanted) of this aval.
#[derive(Clone, Debug)]
pub enum LinearArg {
    Known(Array),
    Linear(Aval),
}

impl LinearArg {
    /// The value of a known operand.
    pub fn known(&self) -> Option<&Array> {
        match self {
            LinearArg::Known(a) => Some(a),
            LinearArg::Linear(_) => None,
        }
    }

    /// Whether the operand is linear (its cotangent is wanted).
    pub fn is_linear(&self) -> bool {
        matches!(self, LinearArg::Linear(_))
    }

    /// The operand's aval.
    pub fn aval(&self) -> Aval {
        match self {
            LinearArg::Known(a) => a.aval(),
            LinearArg::Linear(aval) => aval.clone(),
        }
    }
}

/// Whether values of this aval carry tangents (real and complex floating-point ones do).
pub fn differentiable(aval: &Aval) -> bool {
    aval.dtype.is_inexact()
}
