// Calls to `#[traceable]` functions are inlined, across modules and through `use`; `mut`
// parameters work as in plain Rust.
use rjax::prelude::*;

mod layers {
    use rjax::prelude::*;

    #[traceable]
    pub fn dense(w: &Array, b: &Array, x: &Array) -> Array {
        x.dot(w) + b
    }
}

use layers::dense;

#[jit]
fn two_layers(w1: &Array, b1: &Array, w2: &Array, b2: &Array, x: &Array) -> Array {
    let h = dense(w1, b1, x).tanh();
    layers::dense(w2, b2, &h)
}

#[jit]
fn doubled(mut x: Array, n: usize) -> Array {
    for _ in 0..n {
        x = x * 2.0;
    }
    x
}

#[traceable]
fn clamp_low(mut x: f32) -> f32 {
    if x < 0.0 {
        x = x * 0.0;
    }
    x
}

fn main() {
    let (w1, b1) = (jnp::ones([2, 2]), jnp::zeros([2]));
    let (w2, b2) = (jnp::ones([2, 1]), jnp::full([1], 1.0f32));
    let x = Array::from_shape_vec([1, 2], vec![0.25f32, 0.25]);
    let out = two_layers(&w1, &b1, &w2, &b2, &x).item::<f32>().unwrap();
    assert!((out - (2.0 * 0.5f32.tanh() + 1.0)).abs() < 1e-6);
    println!("{}", two_layers::jaxpr(&w1, &b1, &w2, &b2, &x));

    assert_eq!(doubled(jnp::array(&[1.0f32]), 3).to_vec::<f32>().unwrap(), vec![8.0]);
    assert_eq!((clamp_low(-2.0), clamp_low(2.0)), (0.0, 2.0));
}
