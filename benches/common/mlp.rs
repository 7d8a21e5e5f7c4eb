//! The MLP of W3 and W4: layer sizes [784, 512, 512, 10], tanh hidden layers, squared-error
//! loss, parameters and a batch of 128 drawn from `random::key(0)` (as `benches/jax/bench.py`
//! draws them).

use rjax::prelude::*;

pub const SIZES: [usize; 4] = [784, 512, 512, 10];
pub const BATCH: usize = 128;

#[traceable]
pub fn loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    let mut x = inputs.clone();
    let mut out = inputs.clone();
    for (w, b) in params {
        out = x.dot(w) + b;
        x = out.tanh();
    }
    (out - targets).square().sum()
}

/// The parameters, inputs `[128, 784]` and targets `[128, 10]`.
pub fn inputs() -> (Vec<(Array, Array)>, Array, Array) {
    let keys = random::split(&random::key(0), 8);
    let params = (0..3)
        .map(|l| {
            let w = random::normal(&keys.get(l), [SIZES[l], SIZES[l + 1]]) * 0.05;
            (w, jnp::zeros([SIZES[l + 1]]))
        })
        .collect();
    let inputs = random::normal(&keys.get(4), [BATCH, SIZES[0]]);
    let targets = random::normal(&keys.get(5), [BATCH, SIZES[3]]);
    (params, inputs, targets)
}
