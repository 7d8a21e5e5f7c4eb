use rjax::prelude::*;

// The gradient with respect to `params` has its owned type, `Vec<(Array, Array)>`.
#[grad]
fn grad_loss(params: &[(Array, Array)], x: &Array) -> Array {
    (x.dot(&params[0].0) + &params[0].1).sum()
}

// value_and_grad returns `(value, gradient)`.
#[value_and_grad]
fn value_and_grad_tanh(x: f32) -> f32 {
    x.tanh()
}

fn main() {}
