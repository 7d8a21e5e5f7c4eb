//! The rjax runtime: arrays, primitives, their CPU kernels and (feature `gpu`) their GPU ones.
//!
//! Users normally depend on the `rjax` facade crate and write `use rjax::prelude::*;`.

pub mod array;
pub mod backend;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod dtype;
pub mod error;
pub mod exec;
pub mod func;
pub mod ir;
pub mod jnp;
pub mod lax;
pub mod nn;
pub mod primitives;
pub mod random;
pub mod scipy;
pub mod shape;
pub mod transform;
pub mod tree;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use array::Array;
pub use device::Device;
pub use dtype::{promote, DType, Element};
pub use error::Error;
pub use exec::cpu::alloc::try_run;
pub use exec::cpu::pool::release_pooled_memory;
pub use exec::{set_log_compiles, CacheInfo, StaticKey, TracedFunction};
pub use func::{
    checkpoint, grad, hessian, jacfwd, jacrev, jit, jvp, linearize, pmap, value_and_grad, vjp, vmap,
};
pub use jnp::{NewAxis, SliceElem};
/// The element type of complex arrays: `Complex<f32>` for `complex64`, `Complex<f64>` for
/// `complex128` (re-exported from `num-complex`).
pub use num_complex::Complex;
pub use shape::Axes;
pub use transform::ad;
pub use tree::{Tree, TreeDef, Unflatten};

/// What `use rjax::prelude::*;` brings into scope.
pub mod prelude {
    pub use crate::func::{
        checkpoint, grad, hessian, jacfwd, jacrev, jit, jvp, linearize, pmap, value_and_grad, vjp,
        vmap,
    };
    pub use crate::jnp;
    pub use crate::lax;
    pub use crate::nn;
    pub use crate::random;
    pub use crate::s;
    pub use crate::scipy;
    pub use crate::shape::Axes;
    pub use crate::tree;
    pub use crate::{Array, DType, Error, NewAxis, SliceElem};
}
