//! Reading an annotated function: its signature into a [`Func`] model, and the scopes the body
//! analysis uses to tell traced locals from static ones.

pub mod scope;
pub mod signature;
pub mod transforms;

pub use scope::{Scopes, Taint};
pub use signature::{Func, ParamKind, Passing};
