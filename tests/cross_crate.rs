//! Traced functions calling `#[traceable]` functions of another crate (`rjax-test-layers`),
//! by path and through `use`.

use rjax::prelude::*;
use rjax_test_layers::activations::{self, softsign};

#[jit]
fn two_layers(w1: &Array, b1: &Array, w2: &Array, b2: &Array, x: &Array) -> Array {
    let h = rjax_test_layers::dense(w1, b1, x);
    activations::relu_if_positive(&rjax_test_layers::dense(w2, b2, &h))
}

#[jit]
fn soft(x: f32) -> f32 {
    softsign(x) * 2.0
}

#[test]
fn jit_inlines_functions_of_another_crate() {
    let w1 = Array::from_shape_vec([2, 3], vec![0.5f32, -0.25, 1.0, 0.75, 0.1, -0.5]);
    let b1 = jnp::array([0.1f32, 0.0, -0.1]);
    let w2 = Array::from_shape_vec([3, 1], vec![1.0f32, -1.0, 0.5]);
    let b2 = jnp::array([0.2f32]);
    let x = Array::from_shape_vec([2, 2], vec![1.0f32, 2.0, -1.0, 0.5]);
    let eager = {
        let h = rjax_test_layers::dense(&w1, &b1, &x);
        activations::relu_if_positive(&rjax_test_layers::dense(&w2, &b2, &h))
    };
    let jitted = two_layers(&w1, &b1, &w2, &b2, &x);
    assert_eq!(jitted.to_vec::<f32>().unwrap(), eager.to_vec::<f32>().unwrap());
    let listing = two_layers::jaxpr(&w1, &b1, &w2, &b2, &x).to_string();
    assert_eq!(listing.matches("dot_general").count(), 4, "both layers inlined:\n{listing}");
    assert!(listing.contains("cond["), "{listing}");
}

#[test]
fn scalar_functions_of_another_crate_trace_too() {
    assert_eq!(soft(1.0), 1.0);
    assert_eq!(soft(-3.0), -1.5);
    assert_eq!(softsign(3.0), 0.75);
}
