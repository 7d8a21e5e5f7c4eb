use rjax::prelude::*;

#[jit]
#[grad]
#[grad]
fn d2_tanh(x: f32) -> f32 {
    x.tanh()
}

#[grad(argnums = 1)]
fn grad_scaled(n: usize, x: &Array) -> Array {
    (x * n as f32).sum()
}

fn main() {
    let d2 = d2_tanh(0.5);
    let t = 0.5f32.tanh();
    assert!((d2 - (-2.0 * t * (1.0 - t * t))).abs() < 1e-6);
    assert_eq!(grad_scaled(3, &jnp::ones([2])).to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
}
