//! The rest of JAX's golden autodiff cases (`tests/data/golden.json`), through the runtime's
//! one-array transforms (`rjax::ad::api`) and, where the case has several arguments, the
//! attributes.

mod common;

use common::{assert_golden, input};
use rjax::ad::api::{grad_of, jacobian_of, jvp_of, vjp_of};
use rjax::prelude::*;

#[test]
fn scalar_gradients_and_weak_types() {
    let _x64 = rjax::config::x64_scope(true);
    let g = grad_of(|x| x.tanh(), &Array::weak_scalar(1.0f32));
    assert_golden("grad_tanh_python_scalar_is_weak", 0, &g);
    let x = input("grad_sin_scalar", "x");
    assert_golden("grad_sin_scalar", 1, &grad_of(|x| x.sin(), &x));
    assert_golden("grad_sin_scalar", 2, &grad_of(|x| grad_of(|y| y.sin(), x), &x));
}

#[test]
fn elementwise_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("grad_exp", "x");
    assert_golden("grad_exp", 0, &grad_of(|x| x.exp().sum(), &x));
    let x = input("grad_log", "x");
    assert_golden("grad_log", 0, &grad_of(|x| x.log().sum(), &x));
    let x = input("grad_cube", "x");
    assert_golden("grad_cube", 1, &grad_of(|x| x.powi(3).sum(), &x));
    // vmap(grad(grad(f))) on a vector is the sum's second derivative, elementwise.
    let d2 = grad_of(|x| grad_of(|y| y.powi(3).sum(), x).sum(), &x);
    assert_golden("grad_cube", 2, &d2);
    let x = input("grad_softplus", "x");
    assert_golden("grad_softplus", 1, &grad_of(|x| jnp::softplus(x).sum(), &x));
    let x = input("stop_gradient", "x");
    let g = grad_of(|x| (x.square() + lax::stop_gradient(&x.powi(3))).sum(), &x);
    assert_golden("stop_gradient", 1, &g);
}

#[test]
fn reduction_gradients_split_ties() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("grad_logsumexp", "x");
    assert_golden("grad_logsumexp", 1, &grad_of(jnp::logsumexp, &x));
    let x = input("value_and_grad_sum_tanh_sq", "x");
    assert_golden("value_and_grad_sum_tanh_sq", 1, &grad_of(|x| x.tanh().square().sum(), &x));
    let x = input("grad_max_ties_split", "x");
    assert_golden("grad_max_ties_split", 0, &grad_of(jnp::max, &x));
    let x = input("grad_max_along_axis", "X");
    let w = jnp::array([1.0f32, 2.0, 3.0]);
    let g = grad_of(|x| (jnp::max_axes(x, 1, false) * &w).sum(), &x);
    assert_golden("grad_max_along_axis", 0, &g);
    let x = input("mean_axes_and_grad", "X");
    let g = grad_of(|x| jnp::mean_axes(x, 0, false).square().sum(), &x);
    assert_golden("mean_axes_and_grad", 3, &g);
    let (x, w) = (input("softmax_log_softmax_grads", "x"), input("softmax_log_softmax_grads", "w"));
    let g = grad_of(|x| (jnp::softmax(x, -1) * &w).sum(), &x);
    assert_golden("softmax_log_softmax_grads", 0, &g);
    let g = grad_of(|x| jnp::log_softmax(x, -1).slice(s![2]), &x);
    assert_golden("softmax_log_softmax_grads", 1, &g);
    let x = input("cumsum_cumprod_and_grad", "x");
    let g = grad_of(|x| x.cumsum(Some(0)).square().sum(), &x);
    assert_golden("cumsum_cumprod_and_grad", 2, &g);
}

#[test]
fn shape_op_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "reshape_transpose_grad";
    let (x, w) = (input(c, "x"), input(c, "W"));
    let f = |x: &Array| {
        let t = x.reshape([3, 2, 2]).transpose(Some(&[1, 2, 0]));
        (t * w.square() * x.reshape([2, 2, 3])).sum()
    };
    assert_golden(c, 0, &f(&x));
    assert_golden(c, 1, &grad_of(f, &x));
}

#[grad(argnums = (0, 1))]
fn grad_concat(a: &Array, b: &Array, w: &Array) -> (Array, Array) {
    (jnp::concatenate(&[a, b], 0).square() * w).sum()
}

#[grad(argnums = (0, 1))]
fn grad_einsum(a: &Array, b: &Array) -> (Array, Array) {
    jnp::einsum("bij,bjk->bik", &[a, b]).square().sum()
}

#[test]
fn multi_argument_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "concatenate_stack_and_grad";
    let (da, db) = grad_concat(&input(c, "a"), &input(c, "b"), &input(c, "w"));
    assert_golden(c, 3, &da);
    assert_golden(c, 4, &db);
    let c = "batched_matmul_einsum_and_grad";
    let (da, db) = grad_einsum(&input(c, "A"), &input(c, "B"));
    assert_golden(c, 2, &da);
    assert_golden(c, 3, &db);
}

fn r3_to_r2(x: &Array) -> Array {
    let e = |i: isize| x.slice(s![i]);
    jnp::stack(&[e(0) * e(1) * e(2), e(0).square() - e(2).sin()], 0)
}

fn cubic(x: &Array) -> Array {
    let e = |i: isize| x.slice(s![i]);
    x.powi(3).sum() + e(0) * e(1) * e(2) + (e(0) * e(2)).sin()
}

#[test]
fn jacobians_vjps_and_linearization() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("jacfwd_R3_to_R2", "x");
    assert_golden("jacfwd_R3_to_R2", 0, &jacobian_of(r3_to_r2, &x, false));
    assert_golden("jacrev_R3_to_R2", 0, &jacobian_of(r3_to_r2, &x, true));
    let (x, ct) = (input("vjp_R3_to_R2", "x"), input("vjp_R3_to_R2", "ct"));
    assert_golden("vjp_R3_to_R2", 1, &vjp_of(r3_to_r2, &x, &ct));
    let t = input("jacfwd_scalar_to_vector", "t");
    let f = |t: &Array| jnp::stack(&[t.cos(), t.sin(), t.square()], 0);
    assert_golden("jacfwd_scalar_to_vector", 0, &jacobian_of(f, &t, false));
    assert_golden("jacfwd_scalar_to_vector", 1, &jacobian_of(f, &t, true));
    let x = input("hessian_jacfwd_jacrev", "x");
    let h = jacobian_of(|x| jacobian_of(cubic, x, true), &x, false);
    assert_golden("hessian_jacfwd_jacrev", 0, &h);
    assert_golden("hessian_builtin", 0, &h);
    let (x, v) = (input("linearize_sin_cos", "x"), input("linearize_sin_cos", "v"));
    let (y, t) = jvp_of(|x| x.sin() * (x * 2.0).cos(), &x, &v);
    assert_golden("linearize_sin_cos", 0, &y);
    assert_golden("linearize_sin_cos", 1, &t);
}

#[jit]
fn tanh_times(x: &Array) -> Array {
    (x.tanh() * x).sum()
}

#[grad]
fn grad_of_jit(x: &Array) -> Array {
    tanh_times(x)
}

#[test]
fn control_flow_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("python_for_loop_static_range", "x");
    let f = |x: &Array| {
        let mut y = x.clone();
        for i in 0..4 {
            y = y.sin() * x + i as f32;
        }
        y
    };
    assert_golden("python_for_loop_static_range", 1, &grad_of(f, &x));
    let c = "cond_false_branch_value_grad";
    let f = |x: &Array| {
        lax::cond(x.gt(0.0), |x: Array| x.sin() * &x, |x: Array| x.cos() - x, x.clone())
    };
    assert_golden(c, 1, &grad_of(f, &input(c, "x")));
    let c = "where_value_grad";
    let f = |x: &Array| jnp::where_(x.gt(0.0), x.square(), x * -0.5).sum();
    assert_golden(c, 1, &grad_of(f, &input(c, "x")));
    assert_golden("grad_of_jit", 0, &grad_of_jit(&input("grad_of_jit", "x")));
}

#[test]
fn float64_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let (w, x) = (input("x64_mlp_style_grad", "W"), input("x64_mlp_style_grad", "x"));
    let g = grad_of(|w| w.matmul(&x).tanh().square().sum(), &w);
    assert_golden("x64_mlp_style_grad", 0, &g);
}
