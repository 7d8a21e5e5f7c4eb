//! `rjax::nn` against JAX (`tests/data/nn.json`, made by `tests/data/gen/nn.py`): every
//! function eagerly, under `#[jit]`, its gradient (`#[grad]`), second derivative and `#[vmap]`,
//! in f32 and f64, at kinks and large magnitudes; f64 finite-difference checks of the
//! derivatives; the initializers' names; and the errors for bad axes.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close, assert_close_as, golden_field, panic_text};
use rjax::prelude::*;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/nn.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    golden_field(&data()["cases"], case, key)
}

/// JAX and rjax use different `expm1`, `erfc` and f64 `exp` kernels: a few ulps apart.
fn tolerance(dtype: DType) -> (f64, f64) {
    match dtype {
        DType::F32 => (2e-5, 1e-6),
        _ => (1e-11, 1e-13),
    }
}

#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = tolerance(want.dtype());
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    // The comparison's own message (printed above this one) has the elements.
    assert_close_as(what, got, want, rtol, atol);
}

/// One elementwise function in all its forms: the same body eagerly, under `#[jit]`, its
/// gradient, its elementwise second derivative and its vmapped forms.
struct Elementwise {
    eager: fn(&Array) -> Array,
    jit: fn(&Array) -> Array,
    grad: fn(&Array) -> Array,
    grad2: fn(&Array) -> Array,
    vmap: fn(&Array) -> Array,
    vmap_grad: fn(&Array) -> Array,
}

macro_rules! elementwise {
    ($($name:ident: |$x:ident| $body:expr;)*) => {
        $(
            mod $name {
                use rjax::prelude::*;

                pub fn eager($x: &Array) -> Array { $body }

                #[jit]
                pub fn jit($x: &Array) -> Array { $body }

                #[grad]
                pub fn grad($x: &Array) -> Array { ($body).sum() }

                #[vmap]
                #[grad]
                #[grad]
                pub fn grad2($x: &Array) -> Array { $body }

                #[vmap]
                pub fn vmap($x: &Array) -> Array { $body }

                #[vmap]
                #[grad]
                pub fn vmap_grad($x: &Array) -> Array { $body }
            }
        )*

        fn elementwise_cases() -> Vec<(&'static str, Elementwise)> {
            vec![$((stringify!($name), Elementwise {
                eager: $name::eager,
                jit: $name::jit,
                grad: $name::grad,
                grad2: $name::grad2,
                vmap: $name::vmap,
                vmap_grad: $name::vmap_grad,
            })),*]
        }
    };
}

elementwise! {
    relu: |x| nn::relu(x);
    relu6: |x| nn::relu6(x);
    hard_sigmoid: |x| nn::hard_sigmoid(x);
    hard_silu: |x| nn::hard_silu(x);
    sigmoid: |x| nn::sigmoid(x);
    silu: |x| nn::silu(x);
    swish: |x| nn::swish(x);
    softplus: |x| nn::softplus(x);
    log_sigmoid: |x| nn::log_sigmoid(x);
    gelu_tanh: |x| nn::gelu(x, true);
    gelu_erf: |x| nn::gelu(x, false);
    elu: |x| nn::elu(x, 0.7);
    celu: |x| nn::celu(x, 1.3);
    selu: |x| nn::selu(x);
    leaky_relu: |x| nn::leaky_relu(x, 0.05);
    hard_tanh: |x| nn::hard_tanh(x);
}

#[test]
fn elementwise_functions_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in elementwise_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let (x, want) = (field(&case, "x"), field(&case, "out"));
            check(&format!("{case} eager"), &(f.eager)(&x), &want);
            check(&format!("{case} jit"), &(f.jit)(&x), &want);
        }
    }
}

#[test]
fn elementwise_derivatives_match_jax_at_kinks_and_extremes() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in elementwise_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let x = field(&case, "x");
            check(&format!("{case} grad"), &(f.grad)(&x), &field(&case, "grad"));
            check(&format!("{case} grad of grad"), &(f.grad2)(&x), &field(&case, "grad2"));
        }
    }
}

#[test]
fn elementwise_functions_vmap_like_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in elementwise_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let rows = field(&case, "rows");
            check(&format!("{case} vmap"), &(f.vmap)(&rows), &field(&case, "vmap"));
            let x = field(&case, "x");
            check(&format!("{case} vmap grad"), &(f.vmap_grad)(&x), &field(&case, "vmap_grad"));
        }
    }
}

#[test]
fn relu_and_friends_have_jax_slopes_at_their_kinks() {
    let at = |f: fn(&Array) -> Array, v: f32| f(&jnp::array([v])).item::<f32>().unwrap();
    assert_eq!(at(relu::grad, 0.0), 0.0);
    assert_eq!(at(relu6::grad, 0.0), 0.0);
    assert_eq!(at(relu6::grad, 6.0), 0.0);
    assert_eq!(at(leaky_relu::grad, 0.0), 1.0);
    assert_eq!(at(hard_tanh::grad, 1.0), 1.0);
    assert_eq!(at(hard_tanh::grad, -1.0), 1.0);
}

/// One function over axes: its full form, its gradient against fixed weights, and the same
/// function mapped over rows.
struct OverAxes {
    eager: fn(&Array) -> Array,
    jit: fn(&Array) -> Array,
    grad: fn(&Array, &Array) -> Array,
    vmap: fn(&Array) -> Array,
}

macro_rules! over_axes {
    ($($name:ident: |$x:ident| $body:expr, |$r:ident| $row:expr;)*) => {
        $(
            mod $name {
                use rjax::prelude::*;

                pub fn eager($x: &Array) -> Array { $body }

                #[jit]
                pub fn jit($x: &Array) -> Array { $body }

                #[grad]
                pub fn grad($x: &Array, w: &Array) -> Array { (($body) * w).sum() }

                #[vmap]
                pub fn vmap($r: &Array) -> Array { $row }
            }
        )*

        fn axes_cases() -> Vec<(&'static str, OverAxes)> {
            vec![$((stringify!($name), OverAxes {
                eager: $name::eager,
                jit: $name::jit,
                grad: $name::grad,
                vmap: $name::vmap,
            })),*]
        }
    };
}

over_axes! {
    softmax: |x| nn::softmax(x, -1), |r| nn::softmax(r, -1);
    softmax_axis0: |x| nn::softmax(x, 0), |r| nn::softmax(r, -1);
    softmax_all: |x| nn::softmax(x, [0, 1]), |r| nn::softmax(r, -1);
    log_softmax: |x| nn::log_softmax(x, -1), |r| nn::log_softmax(r, -1);
    log_softmax_axis0: |x| nn::log_softmax(x, 0), |r| nn::log_softmax(r, -1);
    logsumexp: |x| nn::logsumexp(x, -1, false), |r| nn::logsumexp(r, -1, false);
    logsumexp_axis0: |x| nn::logsumexp(x, 0, false), |r| nn::logsumexp(r, -1, false);
    logsumexp_keepdims: |x| nn::logsumexp(x, -1, true), |r| nn::logsumexp(r, -1, true);
    logsumexp_inf_rows: |x| nn::logsumexp(x, -1, false), |r| nn::logsumexp(r, -1, false);
    log_softmax_inf_rows: |x| nn::log_softmax(x, -1), |r| nn::log_softmax(r, -1);
    softmax_inf_rows: |x| nn::softmax(x, -1), |r| nn::softmax(r, -1);
    standardize: |x| nn::standardize(x, -1, 1e-5), |r| nn::standardize(r, -1, 1e-5);
    standardize_axis0: |x| nn::standardize(x, 0, 1e-3), |r| nn::standardize(r, -1, 1e-3);
}

#[test]
fn functions_over_axes_match_jax_in_value_gradient_and_vmap() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in axes_cases() {
        for dt in ["float32", "float64"] {
            let case = format!("{name}_{dt}");
            let (x, want) = (field(&case, "x"), field(&case, "out"));
            check(&format!("{case} eager"), &(f.eager)(&x), &want);
            check(&format!("{case} jit"), &(f.jit)(&x), &want);
            let w = field(&case, "weights");
            check(&format!("{case} grad"), &(f.grad)(&x, &w), &field(&case, "grad"));
            check(&format!("{case} vmap"), &(f.vmap)(&x), &field(&case, "vmap"));
        }
    }
}

#[test]
fn one_hot_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let got = nn::one_hot(&field("one_hot", "x"), 4);
    assert_close(&got, &field("one_hot", "out"), 0.0, 0.0);
}

/// Points away from the kinks, in f64.
fn smooth_points() -> Array {
    jnp::array([-3.1, -1.7, -0.6, -0.2, 0.3, 0.8, 1.9, 4.2])
}

#[test]
fn derivatives_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    type F = fn(&Array) -> Array;
    let functions: [(&str, F); 16] = [
        ("relu", nn::relu),
        ("relu6", |x| nn::relu6(&(x * 2.0))),
        ("hard_sigmoid", nn::hard_sigmoid),
        ("hard_silu", nn::hard_silu),
        ("sigmoid", nn::sigmoid),
        ("silu", nn::silu),
        ("softplus", nn::softplus),
        ("log_sigmoid", nn::log_sigmoid),
        ("gelu tanh", |x| nn::gelu(x, true)),
        ("gelu erf", |x| nn::gelu(x, false)),
        ("elu", |x| nn::elu(x, 0.7)),
        ("celu", |x| nn::celu(x, 1.3)),
        ("selu", nn::selu),
        ("leaky_relu", |x| nn::leaky_relu(x, 0.05)),
        ("hard_tanh", nn::hard_tanh),
        ("standardize", |x| nn::standardize(x, -1, 1e-5)),
    ];
    for (name, f) in functions {
        check_grads(name, &f, &smooth_points(), 1e-6);
    }
    let m = smooth_points().reshape([2, 4]);
    check_grads("softmax", &|x: &Array| nn::softmax(x, -1), &m, 1e-6);
    check_grads("log_softmax", &|x: &Array| nn::log_softmax(x, 0), &m, 1e-6);
    check_grads("logsumexp", &|x: &Array| nn::logsumexp(x, [0, 1], false), &m, 1e-6);
}

#[test]
fn initializers_have_jax_names_and_values() {
    let _x64 = rjax::config::x64_scope(true);
    use nn::initializers;
    let key = random::key(0);
    let same = |a: &Array, b: &Array| assert_eq!(a.to_vec::<f32>(), b.to_vec::<f32>());
    same(
        &initializers::xavier_uniform().init(&key, [3, 4]),
        &random::init::glorot_uniform().init(&key, [3, 4]),
    );
    same(
        &initializers::kaiming_normal().init(&key, [3, 4]),
        &random::init::he_normal().init(&key, [3, 4]),
    );
    same(&initializers::ones().init(&key, [2]), &jnp::ones([2]));
    same(&initializers::zeros().init(&key, [2, 2]), &jnp::zeros([2, 2]));
    let c = initializers::constant(0.5).with_dtype(DType::F64).init(&key, [2]);
    assert_eq!(c.to_vec::<f64>().unwrap(), vec![0.5, 0.5]);
}

#[test]
fn axes_out_of_range_name_the_function_and_the_shape() {
    let x = jnp::zeros([2, 3]);
    let text = panic_text(|| {
        nn::softmax(&x, 2);
    });
    assert!(text.contains("softmax") && text.contains("(2, 3)"), "{text}");
    let text = panic_text(|| {
        nn::logsumexp(&x, [0, -3], false);
    });
    assert!(text.contains("logsumexp") && text.contains("(2, 3)"), "{text}");
    let text = panic_text(|| {
        nn::standardize(&x, 5, 1e-5);
    });
    assert!(text.contains("standardize") && text.contains("(2, 3)"), "{text}");
}

#[test]
fn sigmoid_refuses_integers_as_jax_does() {
    let text = panic_text(|| {
        nn::sigmoid(&jnp::array([1i32, 2]));
    });
    assert!(text.contains("sigmoid") && text.contains("int32"), "{text}");
}
