//! Weight initializers under `jax.nn.initializers`' names. They are the samplers of
//! [`random::init`](crate::random::init) (the same draws and scaling as JAX, so the same
//! numbers), plus JAX's aliases: `xavier_*` for `glorot_*` and `kaiming_*` for `he_*`.
//!
//! ```
//! use rjax_runtime::{nn::initializers, random};
//! let w = initializers::xavier_uniform().init(&random::key(0), [3, 4]);
//! assert_eq!(w.shape(), &[3, 4]);
//! let b = initializers::zeros().init(&random::key(1), [4]);
//! assert_eq!(b.to_vec::<f32>().unwrap(), vec![0.0; 4]);
//! ```

pub use crate::random::init::{
    constant, glorot_normal, glorot_uniform, he_normal, he_uniform, lecun_normal, lecun_uniform,
    normal, ones, truncated_normal, uniform, variance_scaling, zeros, Distribution, FanMode,
    Initializer,
};

/// The same initializer as [`glorot_uniform`] (`jax.nn.initializers.xavier_uniform`).
pub fn xavier_uniform() -> Initializer {
    glorot_uniform()
}

/// The same initializer as [`glorot_normal`] (`jax.nn.initializers.xavier_normal`).
pub fn xavier_normal() -> Initializer {
    glorot_normal()
}

/// The same initializer as [`he_uniform`] (`jax.nn.initializers.kaiming_uniform`).
pub fn kaiming_uniform() -> Initializer {
    he_uniform()
}

/// The same initializer as [`he_normal`] (`jax.nn.initializers.kaiming_normal`).
pub fn kaiming_normal() -> Initializer {
    he_normal()
}
