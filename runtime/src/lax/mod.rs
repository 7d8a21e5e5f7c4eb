//! `lax`: structured control flow that traced code can use, as `jax.lax`.

mod cond;

pub use cond::cond;
