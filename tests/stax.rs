//! `rjax::nn::stax` against `jax.example_libraries.stax` (`tests/data/stax.json`, made by
//! `tests/data/gen/stax.py`): for each network the output shape and the parameters `init`
//! draws from the same key, the output of `apply` (with the same key where the network draws)
//! and the gradient of `sum(output * weights)` with respect to the parameters; `apply` under
//! `jit` gives the eager result.

mod common;

use std::sync::OnceLock;

use common::{assert_close_as, leaf_to_array, panic_text};
use rjax::nn::stax::{self, Layer, Nested};
use rjax::prelude::*;
use serde_json::Value;

fn cases() -> &'static serde_json::Map<String, Value> {
    static DATA: OnceLock<Value> = OnceLock::new();
    let data =
        DATA.get_or_init(|| serde_json::from_str(include_str!("data/stax.json")).expect("parses"));
    data["cases"].as_object().expect("a table of cases")
}

/// The network of each case, as the generator builds it with stax.
fn network(name: &str) -> Layer {
    use stax::*;
    match name {
        "mlp" => serial([dense(16), relu(), dense(10), log_softmax()]),
        "cnn" => serial([
            conv(4, [3, 3], None, "SAME"),
            batch_norm([0, 1, 2], 1e-5),
            relu(),
            max_pool([2, 2], Some(vec![2, 2]), "VALID"),
            conv(6, [3, 3], Some(vec![1, 1]), "VALID"),
            elu(),
            avg_pool([2, 2], None, "SAME"),
            flatten(),
            dense(5),
            log_softmax(),
        ]),
        "pools" => serial([
            conv(3, [2, 2], Some(vec![2, 1]), "VALID"),
            tanh(),
            sum_pool([2, 3], Some(vec![1, 2]), "SAME"),
            sigmoid(),
            avg_pool([3, 2], None, "VALID"),
            flatten(),
            dense(4),
            softmax(),
        ]),
        "branches" => serial([
            dense(6),
            fan_out(3),
            parallel([dense(4), serial([dense(4), gelu()]), identity()]),
            parallel([softplus(), selu(), dense(4)]),
            fan_in_sum(),
            leaky_relu(),
            dense(3),
            exp(),
        ]),
        "concat" => {
            serial([fan_out(2), parallel([dense(3), dense(2)]), fan_in_concat(-1), dense(2)])
        }
        "dropout_train" => serial([dense(8), dropout(0.7, "train"), dense(2)]),
        "dropout_test" => serial([dense(8), dropout(0.7, "test"), dense(2)]),
        other => panic!("no network for case {other}"),
    }
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().expect("a list").iter().map(|d| d.as_i64().expect("an integer")).collect()
}

fn leaves(v: &Value) -> Vec<Array> {
    v.as_array().expect("a list").iter().map(leaf_to_array).collect()
}

fn apply(net: &Layer, params: &Nested, x: &Array, rng: Option<&random::Key>) -> Array {
    match rng {
        Some(key) => net.apply_rng(params, x, key),
        None => net.apply(params, x),
    }
}

#[test]
fn every_network_initializes_applies_and_differentiates_as_stax() {
    assert_eq!(cases().len(), 7);
    for (name, case) in cases() {
        let net = network(name);
        let seed = case["seed"].as_u64().unwrap();
        let (out_shape, params) = net.init(&random::key(seed), ints(&case["init_shape"]));
        // stax's pooling layers turn an unknown batch (-1) into 0; rjax keeps it unknown.
        let mut want_shape = ints(&case["out_shape"]);
        want_shape[0] = -1;
        assert_eq!(out_shape.dims(), want_shape.as_slice(), "{name}: output shape");

        let got_params = rjax::tree::leaves(&params);
        let want_params = leaves(&case["params"]);
        assert_eq!(got_params.len(), want_params.len(), "{name}: parameter count");
        for (i, (g, w)) in got_params.iter().zip(&want_params).enumerate() {
            assert_close_as(&format!("{name}: parameter {i}"), g, w, 1e-5, 1e-7);
        }

        // From JAX's parameters, so that the outputs test `apply` alone.
        let params: Nested = rjax::tree::unflatten(&rjax::tree::structure(&params), want_params);
        let x = leaf_to_array(&case["x"]);
        let key = case["rng"].as_u64().map(random::key);
        let y = apply(&net, &params, &x, key.as_ref());
        assert_close_as(&format!("{name}: output"), &y, &leaf_to_array(&case["y"]), 1e-4, 1e-5);

        let jitted = rjax::jit(|p: &Nested| apply(&net, p, &x, key.as_ref()))(&params);
        assert_eq!(common::values_f64(&jitted), common::values_f64(&y), "{name}: jit");

        let weights = (jnp::arange(y.size() as i32) % 5 - 1.5).reshape(y.shape());
        let loss = |p: &Nested| (apply(&net, p, &x, key.as_ref()) * &weights).sum();
        let grads = rjax::tree::leaves(&rjax::grad(loss)(&params));
        let want_grads = leaves(&case["grads"]);
        assert_eq!(grads.len(), want_grads.len(), "{name}: gradient count");
        for (i, (g, w)) in grads.iter().zip(&want_grads).enumerate() {
            assert_close_as(&format!("{name}: gradient {i}"), g, w, 2e-4, 2e-5);
        }
    }
}

#[test]
fn parameters_are_a_pytree_an_optimizer_can_update() {
    let net = stax::serial([stax::dense(3), stax::relu(), stax::dense(1)]);
    let (_, params) = net.init(&random::key(0), [-1, 2]);
    let x = jnp::ones([4, 2]);
    let loss = |p: &Nested| net.apply(p, &x).square().mean();
    let g = rjax::grad(loss)(&params);
    let stepped = rjax::tree::map2(&params, &g, |p, g| p - g * 0.1);
    assert!(loss(&stepped).item::<f32>().unwrap() < loss(&params).item::<f32>().unwrap());
    // Param-less layers hold the empty sequence, as stax's `()`.
    assert_eq!(rjax::tree::structure(&params).to_string(), "[[*, *], [], [*, *]]");
}

#[test]
fn misuse_is_an_error_naming_the_layer() {
    let net = stax::serial([stax::dense(2), stax::dropout(0.5, "train")]);
    let (_, params) = net.init(&random::key(0), [-1, 3]);
    let text = panic_text(|| {
        net.apply(&params, &jnp::ones([1, 3]));
    });
    assert!(text.contains("stax.Dropout") && text.contains("apply_rng"), "{text}");
    let text = panic_text(|| {
        stax::dense(2).init(&random::key(0), [-1, -1]);
    });
    assert!(text.contains("stax.Dense") && text.contains("known"), "{text}");
    let text = panic_text(|| {
        stax::max_pool([2, 2], None, "VALID").init(&random::key(0), [-1, 4]);
    });
    assert!(text.contains("pooling") && text.contains("NHWC"), "{text}");
}
