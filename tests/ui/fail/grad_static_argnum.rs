use rjax::prelude::*;

// `n` is an integer: static, and not differentiable.
#[grad(argnums = 1)]
fn grad_power(x: f32, n: i32) -> i32 {
    x.powi(n)
}

// Only two parameters.
#[grad(argnums = 2)]
fn out_of_range(x: f32, y: f32) -> f32 {
    x * y
}

fn main() {}
