use rjax::prelude::*;

#[jit]
fn fast_f(x: &Array) -> Array {
    x * x + x * 2.0
}

#[traceable]
fn tanh_scalar(x: f32) -> f32 {
    let y = (-2.0 * x).exp();
    (1.0 - y) / (1.0 + y)
}

#[jit]
fn relu_sum(x: &Array) -> Array {
    let s = x.sum();
    if s > 0.0 {
        s
    } else {
        0.0
    }
}

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
fn loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    (predict(params, inputs) - targets).square().sum()
}

#[test]
fn smoke() {
    let x = jnp::arange(4.0);
    let y = fast_f(&x);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 3.0, 8.0, 15.0]);
    let _ = fast_f(&x);
    let info = fast_f::cache_info();
    assert_eq!(info.traces, 1);
    assert_eq!(info.hits, 1);
    println!("{}", fast_f::jaxpr(&x));
    assert!((tanh_scalar(1.0) - 1.0f32.tanh()).abs() < 1e-6);
    println!("{}", tanh_scalar::jaxpr(1.0));
    assert_eq!(relu_sum(&x).item::<f32>().unwrap(), 6.0);
    assert_eq!(relu_sum(&(-&x)).item::<f32>().unwrap(), 0.0);
    println!("{}", relu_sum::jaxpr(&x));
    let params = vec![(jnp::ones([3, 4]), jnp::zeros([4])), (jnp::ones([4, 2]), jnp::zeros([2]))];
    let inputs = jnp::ones([5, 3]);
    let targets = jnp::zeros([5, 2]);
    let l = loss(&params, &inputs, &targets);
    let eager = (predict(&params, &inputs) - &targets).square().sum();
    assert_eq!(l.item::<f32>().unwrap(), eager.item::<f32>().unwrap());
    println!("{}", loss::jaxpr(&params, &inputs, &targets));
}
