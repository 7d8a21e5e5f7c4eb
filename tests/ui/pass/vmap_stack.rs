// Per-example gradients, the stack of the design's example: jit(vmap(grad(loss))).
use rjax::prelude::*;

#[traceable]
fn loss(params: &[(Array, Array)], x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for (w, b) in params {
        h = (h.dot(w) + b).tanh();
    }
    (h - y).square().sum()
}

#[jit]
#[vmap(in_axes = (None, 0, 0))]
#[grad]
fn perex_grads(params: &[(Array, Array)], x: &Array, y: &Array) -> Vec<(Array, Array)> {
    loss(params, x, y)
}

#[vmap(in_axes = (0, -1), out_axes = -1, axis_name = "batch")]
fn centered(x: &Array, y: &Array) -> Array {
    (x - lax::pmean(x, "batch")) * y
}

fn main() {
    let params = vec![(jnp::ones([3, 2]), jnp::zeros([2]))];
    let grads = perex_grads(&params, &jnp::ones([5, 3]), &jnp::zeros([5, 2]));
    assert_eq!(grads[0].0.shape(), &[5, 3, 2]);
    assert_eq!(grads[0].1.shape(), &[5, 2]);
    let out = centered(&jnp::arange(4.0), &jnp::ones([2, 4]));
    assert_eq!(out.shape(), &[2, 4]);
}
