//! Layers defined in their own crate: traced functions in the tests call them across the crate
//! boundary, through paths and `use`.

use rjax::prelude::*;

/// A dense layer with a tanh activation.
#[traceable]
pub fn dense(w: &Array, b: &Array, x: &Array) -> Array {
    (x.dot(w) + b).tanh()
}

/// Nested modules work too.
pub mod activations {
    use rjax::prelude::*;

    /// `max(x, 0)` through a traced `if` on each call's sum, to exercise `cond` across crates.
    #[traceable]
    pub fn relu_if_positive(x: &Array) -> Array {
        if x.sum() > 0.0 {
            jnp::maximum(x, 0.0)
        } else {
            x * 0.0
        }
    }

    /// A scalar function with Rust float types.
    #[traceable]
    pub fn softsign(x: f32) -> f32 {
        x / (1.0 + x.abs())
    }
}
