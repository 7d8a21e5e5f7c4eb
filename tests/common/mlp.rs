//! The README's tanh MLP (the golden `mlp_*` and `per_example_*` cases use it).

use rjax::prelude::*;

/// Tanh hidden layers, a linear last layer.
#[traceable]
pub fn predict(params: &[(Array, Array)], inputs: &Array) -> Array {
    let mut inputs = inputs.clone();
    let mut outputs = inputs.clone();
    for (w, b) in params {
        outputs = inputs.dot(w) + b;
        inputs = outputs.tanh();
    }
    outputs
}

/// The summed squared error.
#[traceable]
pub fn loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    (predict(params, inputs) - targets).square().sum()
}
