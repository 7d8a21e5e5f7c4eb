// `for` over a static range and over a pytree sequence is unrolled while tracing, as JAX
// unrolls Python loops; `.enumerate()` gives a static index that may drive an `if`.
use rjax::prelude::*;

#[traceable]
fn predict(params: &[(Array, Array)], inputs: &Array) -> Array {
    let mut inputs = inputs.clone();
    let mut outputs = inputs.clone();
    for (w, b) in params {
        outputs = inputs.dot(w) + b;
        inputs = outputs.tanh();
    }
    outputs
}

#[jit]
fn predict_linear_first(params: &[(Array, Array)], inputs: &Array) -> Array {
    let mut h = inputs.clone();
    for (i, (w, b)) in params.iter().enumerate() {
        if i == 0 {
            h = h.dot(w) + b;
        } else {
            h = h.tanh().dot(w) + b;
        }
    }
    h
}

#[jit]
fn repeat_double(x: &Array, times: usize) -> Array {
    let mut y = x.clone();
    for _ in 0..times {
        y = y * 2.0;
    }
    y
}

#[jit]
fn sum_all(xs: &[Array]) -> Array {
    let mut total = jnp::zeros([]);
    for (i, x) in xs.iter().enumerate() {
        total = total + x.sum() * (i + 1) as f32;
    }
    total
}

fn main() {
    let params = vec![
        (jnp::full([2, 3], 0.5f32), jnp::full([3], 0.1f32)),
        (jnp::full([3, 1], -1.0f32), jnp::full([1], 0.2f32)),
    ];
    let inputs = Array::from_shape_vec([1, 2], vec![1.0f32, 2.0]);
    let h = 0.5f32 * 1.0 + 0.5 * 2.0 + 0.1;
    let expected = -3.0 * h.tanh() + 0.2;
    let out = predict(&params, &inputs).to_vec::<f32>().unwrap();
    assert!((out[0] - expected).abs() < 1e-5, "{out:?} vs {expected}");
    let out = predict_linear_first(&params, &inputs).to_vec::<f32>().unwrap();
    assert!((out[0] - expected).abs() < 1e-5, "{out:?} vs {expected}");

    let x = jnp::array(&[1.0f32, -2.0]);
    assert_eq!(repeat_double(&x, 3).to_vec::<f32>().unwrap(), vec![8.0, -16.0]);

    let xs = vec![jnp::array(&[1.0f32, 1.0]), jnp::array(&[2.0f32])];
    assert_eq!(sum_all(&xs).item::<f32>().unwrap(), 2.0 + 2.0 * 2.0);
}
