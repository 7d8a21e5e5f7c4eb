//! Primitives: the operations every array computation is made of.
//!
//! Each family lives in one file that holds, for each of its primitives, everything the system
//! knows about it: its name, its shape and dtype rule ([`Aval`]s in, `Aval`s out, or a message
//! saying why the inputs do not fit) and its evaluation on CPU buffers. User-facing functions in
//! [`jnp`](crate::jnp) handle NumPy conveniences (type promotion, weak scalars, axis arguments)
//! and then [`bind`] primitives, which check their inputs and run.

pub mod binary;
pub mod convert;
pub mod indexing;
pub mod linalg;
pub mod random;
pub mod reduce;
pub mod select;
pub mod shape_ops;
pub mod unary;

use std::fmt;

use crate::array::Array;
use crate::dtype::DType;
use crate::shape::ShapeDisplay;

pub use binary::BinaryOp;
pub use convert::Convert;
pub use indexing::{Gather, IndexMode, Scatter, ScatterOp};
pub use linalg::DotGeneral;
pub use reduce::{ArgOp, ArgReduce, CumOp, Cumulative, Reduce, ReduceOp};
pub use select::Select;
pub use shape_ops::{BroadcastInDim, Concatenate, Iota, Pad, Reshape, Rev, Slice, Transpose};
pub use unary::UnaryOp;

/// What a shape rule knows about a value: its shape, dtype and weak-type flag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Aval {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub weak: bool,
}

impl fmt::Display for Aval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, ShapeDisplay(&self.shape))
    }
}

/// The rules every primitive provides.
pub trait Primitive: fmt::Debug {
    /// The name shown in errors and IR listings (`add`, `reduce_sum`, ...).
    fn name(&self) -> String;
    /// The output avals for these input avals, or why the inputs are invalid.
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String>;
    /// Runs on concrete arrays whose avals passed [`Primitive::abstract_eval`], producing arrays
    /// of the given output avals.
    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array>;
}

/// Applies a primitive to arrays eagerly: checks the inputs with its shape rule, panicking with
/// the primitive's name and the rule's message on a mismatch, then evaluates it.
#[track_caller]
pub fn bind(prim: &dyn Primitive, inputs: &[&Array]) -> Vec<Array> {
    let avals: Vec<Aval> = inputs.iter().map(|a| a.aval()).collect();
    match prim.abstract_eval(&avals) {
        Ok(out) => prim.eval(inputs, &out),
        Err(msg) => panic!("{}: {msg}", prim.name()),
    }
}

/// [`bind`] for primitives with one output.
#[track_caller]
pub fn bind1(prim: &dyn Primitive, inputs: &[&Array]) -> Array {
    bind(prim, inputs).pop().expect("a primitive bound with bind1 has one output")
}

/// `"float32(2, 3) and int32(3,)"`: operands listed for error messages.
pub(crate) fn describe(avals: &[Aval]) -> String {
    let parts: Vec<String> = avals.iter().map(Aval::to_string).collect();
    match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        _ => format!("{} and {}", parts[..parts.len() - 1].join(", "), parts[parts.len() - 1]),
    }
}

/// Checks that a primitive got `n` operands.
pub(crate) fn expect_arity(inputs: &[Aval], n: usize) -> Result<(), String> {
    if inputs.len() == n {
        Ok(())
    } else {
        Err(format!("expected {n} operands, got {}", inputs.len()))
    }
}
