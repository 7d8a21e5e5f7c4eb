//! Differentiation through the attribute macros: the design's examples and JAX's golden
//! values (`tests/data/golden.json`), with compositions checked against each other.

mod common;

use common::mlp::loss;
use common::{assert_close, assert_golden, input, panic_text};
use rjax::prelude::*;

fn close(got: &Array, want: &Array) {
    assert_close(got, want, 1e-5, 1e-6);
}

// ---- The design's examples ----------------------------------------------------------------

#[grad]
fn grad_tanh(x: f32) -> f32 {
    let y = (-2.0 * x).exp();
    (1.0 - y) / (1.0 + y)
}

#[grad]
#[grad]
#[grad]
fn d3_tanh(x: f32) -> f32 {
    let y = (-2.0 * x).exp();
    (1.0 - y) / (1.0 + y)
}

#[test]
fn grad_of_tanh_to_third_order() {
    assert!((grad_tanh(1.0) - 0.4199743).abs() < 1e-6);
    assert!((d3_tanh(1.0) - 0.62162673).abs() < 1e-5, "{}", d3_tanh(1.0));
}

#[grad]
fn abs_val(x: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        -x
    }
}

#[test]
fn traced_if_differentiates_the_branch_taken() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("abs_val_grad_at_1.0", 1, &Array::from(abs_val(1.0)));
    assert_golden("abs_val_grad_at_neg1.0", 1, &Array::from(abs_val(-1.0)));
}

#[grad]
fn grad_loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

#[jit]
#[grad]
fn jit_grad_loss(
    params: &[(Array, Array)],
    inputs: &Array,
    targets: &Array,
) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

#[grad]
#[jit]
fn grad_jit_loss(
    params: &[(Array, Array)],
    inputs: &Array,
    targets: &Array,
) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

#[jit]
#[value_and_grad]
fn loss_and_grad(
    params: &[(Array, Array)],
    inputs: &Array,
    targets: &Array,
) -> (Array, Vec<(Array, Array)>) {
    loss(params, inputs, targets)
}

#[grad(argnums = 1)]
fn grad_loss_inputs(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    loss(params, inputs, targets)
}

fn mlp(case: &str) -> (Vec<(Array, Array)>, Array, Array) {
    let params =
        vec![(input(case, "W0"), input(case, "b0")), (input(case, "W1"), input(case, "b1"))];
    (params, input(case, "inputs"), input(case, "targets"))
}

fn golden_params(case: &str, first: usize, got: &[(Array, Array)]) {
    for (k, (w, b)) in got.iter().enumerate() {
        assert_golden(case, first + 2 * k, w);
        assert_golden(case, first + 2 * k + 1, b);
    }
}

#[test]
fn mlp_gradient_matches_jax_with_jit_anywhere() {
    let _x64 = rjax::config::x64_scope(true);
    let (params, x, y) = mlp("mlp_grad_params");
    let eager = grad_loss(&params, &x, &y);
    golden_params("mlp_grad_params", 0, &eager);
    let jitted = jit_grad_loss(&params, &x, &y);
    let inner = grad_jit_loss(&params, &x, &y);
    for ((a, b), (c, d)) in eager.iter().zip(&jitted).chain(eager.iter().zip(&inner)) {
        close(c, a);
        close(d, b);
    }
    // The cached plan gives the same numbers on the second call.
    golden_params("mlp_grad_params", 0, &jit_grad_loss(&params, &x, &y));
    assert_eq!(jit_grad_loss::cache_info().traces, 1);
}

#[test]
fn mlp_value_and_grad_and_input_gradient() {
    let _x64 = rjax::config::x64_scope(true);
    let (params, x, y) = mlp("mlp_jit_value_and_grad");
    let (value, grads) = loss_and_grad(&params, &x, &y);
    assert_golden("mlp_jit_value_and_grad", 0, &value);
    golden_params("mlp_jit_value_and_grad", 1, &grads);
    close(&value, &loss(&params, &x, &y));
    let (params, x, y) = mlp("mlp_grad_inputs");
    assert_golden("mlp_grad_inputs", 0, &grad_loss_inputs(&params, &x, &y));
}

// ---- argnums, has_aux, value_and_grad ------------------------------------------------------

#[grad(argnums = (0, 1))]
fn grad_pow(x: &Array, y: &Array) -> (Array, Array) {
    x.pow(y)
}

#[grad(argnums = (0, 1))]
fn grad_two(x: &Array, y: &Array) -> (Array, Array) {
    (x * y.sin()).sum() + x.dot(y).square()
}

#[test]
fn argnums_tuples_give_tuples_of_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "grad_pow_float_both_args";
    let (dx, dy) = grad_pow(&input(c, "x"), &input(c, "y"));
    assert_golden(c, 0, &dx);
    assert_golden(c, 1, &dy);
    let c = "grad_argnums_0_1";
    let (dx, dy) = grad_two(&input(c, "x"), &input(c, "y"));
    assert_golden(c, 0, &dx);
    assert_golden(c, 1, &dy);
}

#[derive(Tree)]
struct Aux {
    mean: Array,
    y: Array,
}

#[grad(has_aux)]
fn grad_with_aux(x: &Array) -> (Array, Aux) {
    let y = x.sin();
    (y.square().sum(), Aux { mean: y.mean(), y })
}

#[value_and_grad(has_aux)]
fn value_grad_with_aux(x: &Array) -> ((Array, Array), Array) {
    let y = x.sin();
    (y.square().sum(), jnp::max(&y))
}

#[test]
fn has_aux_returns_the_auxiliary_output() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "grad_has_aux";
    let (g, aux) = grad_with_aux(&input(c, "x"));
    assert_golden(c, 0, &g);
    assert_golden(c, 1, &aux.mean);
    assert_golden(c, 2, &aux.y);
    let c = "value_and_grad_has_aux";
    let ((value, aux), g) = value_grad_with_aux(&input(c, "x"));
    assert_golden(c, 0, &value);
    assert_golden(c, 1, &aux);
    assert_golden(c, 2, &g);
}

// ---- jvp, vjp, jacobians, hessians ---------------------------------------------------------

#[jvp]
fn jvp_two(x: &Array, y: &Array, tx: &Array, ty: &Array) -> (Array, Array) {
    x * y + x.exp()
}

#[vjp]
fn vjp_matvec(w: &Array, x: &Array, ct: &Array) -> (Array, Array) {
    (w.matmul(x)).tanh()
}

#[jvp]
#[grad]
fn hvp(x: &Array, v: &Array) -> (Array, Array) {
    (x.sin() * x.square()).sum()
}

#[test]
fn jvp_vjp_and_forward_over_reverse() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "jvp_two_args";
    let (y, t) = jvp_two(&input(c, "x"), &input(c, "y"), &input(c, "vx"), &input(c, "vy"));
    assert_golden(c, 0, &y);
    assert_golden(c, 1, &t);
    let c = "vjp_two_args_tanh_matvec";
    let (dw, dx) = vjp_matvec(&input(c, "W"), &input(c, "x"), &input(c, "ct"));
    assert_golden(c, 1, &dw);
    assert_golden(c, 2, &dx);
    let c = "jvp_of_grad_hvp";
    let (g, hv) = hvp(&input(c, "x"), &input(c, "v"));
    assert_golden(c, 0, &g);
    assert_golden(c, 1, &hv);
}

#[jacrev]
fn jac_gram(x: &Array) -> Array {
    x.matmul(&x.t())
}

#[jacfwd]
fn jac_gram_fwd(x: &Array) -> Array {
    x.matmul(&x.t())
}

#[hessian]
fn hess_lse(x: &Array) -> Array {
    jnp::logsumexp(x)
}

#[jacfwd]
#[jacrev]
fn hess_lse_composed(x: &Array) -> Array {
    jnp::logsumexp(x)
}

#[derive(Tree)]
struct Ab {
    a: Array,
    b: Array,
}

#[jacrev]
fn jac_dict(p: &Ab) -> Ab {
    &p.a * p.b.square()
}

#[test]
fn jacobians_lay_out_output_axes_first() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "jacrev_matrix_function";
    let x = input(c, "X");
    let j = jac_gram(&x);
    assert_eq!(j.shape(), &[2, 2, 2, 3]);
    assert_golden(c, 0, &j);
    close(&jac_gram_fwd(&x), &j);
    let c = "hessian_logsumexp";
    let h = hess_lse(&input(c, "x"));
    assert_golden(c, 0, &h);
    close(&hess_lse_composed(&input(c, "x")), &h);
    close(&h, &h.t());
    let c = "jacrev_dict_input";
    let j = jac_dict(&Ab { a: input(c, "a"), b: input(c, "b") });
    assert_golden(c, 0, &j.a);
    assert_golden(c, 1, &j.b);
}

// ---- Control flow, recursion, closures -----------------------------------------------------

#[traceable]
fn rec(x: &Array, depth: usize) -> Array {
    if depth == 0 {
        return x.clone();
    }
    rec(x, depth - 1).cos() * x
}

#[grad]
fn grad_rec(x: f32) -> f32 {
    rec(&x, 3)
}

#[grad]
#[grad]
fn grad2_rec(x: f32) -> f32 {
    rec(&x, 3)
}

#[grad]
fn grad_cond(x: f32) -> f32 {
    lax::cond(x.gt(0.0), |x: Array| x.sin() * &x, |x: Array| x.cos() - x, x.clone())
}

#[grad]
fn grad_closure(x: f32) -> f32 {
    let scale = |v: &Array| v * &x;
    scale(&x.sin()) + scale(&x)
}

#[test]
fn recursion_branches_and_closures() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "python_recursion_fixed_depth";
    assert_golden(c, 1, &Array::from(grad_rec(0.6)));
    assert_golden(c, 2, &Array::from(grad2_rec(0.6)));
    assert_golden("cond_true_branch_value_grad", 1, &Array::from(grad_cond(0.7)));
    let want = 0.5 * 0.5f32.cos() + 0.5f32.sin() + 2.0 * 0.5;
    assert!((grad_closure(0.5) - want).abs() < 1e-6);
}

#[grad]
fn grad_sqrt_where(x: &Array) -> Array {
    let safe = jnp::where_(x.gt(0.0), x, 1.0);
    jnp::where_(x.gt(0.0), safe.sqrt(), 0.0).sum()
}

#[test]
fn where_double_trick_gives_finite_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "where_grad_double_where_fix";
    assert_golden(c, 0, &grad_sqrt_where(&input(c, "x")));
}

#[grad]
fn grad_while(x: &Array) -> Array {
    lax::while_loop(|c: &Array| c.lt(10.0), |c: Array| c * 2.0, x.clone())
}

#[jvp]
fn jvp_while(x: &Array, t: &Array) -> (Array, Array) {
    lax::while_loop(|c: &Array| c.lt(10.0), |c: Array| c * 2.0, x.clone())
}

#[test]
fn while_loops_differentiate_forward_only() {
    let msg = panic_text(|| {
        grad_while(&Array::from(1.0f32));
    });
    assert!(msg.contains("Reverse-mode differentiation does not work for lax.while_loop"), "{msg}");
    let (y, t) = jvp_while(&Array::from(1.0f32), &Array::from(1.0f32));
    assert_eq!(y.item::<f32>().unwrap(), 16.0);
    assert_eq!(t.item::<f32>().unwrap(), 16.0);
}

// ---- stop_gradient, checkpoint, custom rules -----------------------------------------------

#[grad]
fn td_grad(w: &Array, s: &Array, s_next: &Array, r: &Array) -> Array {
    let target = r + 0.9 * w.dot(s_next);
    (lax::stop_gradient(&target) - w.dot(s)).square()
}

#[grad]
fn grad_plain(x: &Array) -> Array {
    (x.sin().sin() * x).sum()
}

#[grad]
#[checkpoint]
fn grad_checkpointed(x: &Array) -> Array {
    (x.sin().sin() * x).sum()
}

#[test]
fn stop_gradient_and_checkpoint() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "stop_gradient_td_target";
    let g = td_grad(&input(c, "w"), &input(c, "s"), &input(c, "s_next"), &input(c, "r"));
    assert_golden(c, 0, &g);
    let c = "checkpoint_same_grads";
    let x = input(c, "x");
    assert_golden(c, 0, &grad_plain(&x));
    assert_golden(c, 1, &grad_checkpointed(&x));
    // The backward pass recomputes inside a checkpoint equation instead of storing.
    let ir = grad_checkpointed::jaxpr(&x).to_string();
    assert!(ir.contains("checkpoint"), "{ir}");
}

#[traceable]
fn f_sin_times_y(x: &Array, y: &Array) -> Array {
    rjax::ad::custom::custom_vjp(
        &(x.clone(), y.clone()),
        |(x, y): (Array, Array)| x.sin() * y,
        |(x, y): (Array, Array)| (x.sin() * &y, (x.cos(), x.sin(), y)),
        |(cos_x, sin_x, y): (Array, Array, Array), g: Array| (cos_x * &g * y, sin_x * g),
    )
}

#[grad(argnums = (0, 1))]
fn grad_custom_vjp(x: &Array, y: &Array) -> (Array, Array) {
    f_sin_times_y(x, y)
}

#[traceable]
fn log1pexp(x: &Array) -> Array {
    rjax::ad::custom::custom_jvp(
        x,
        |x: Array| (x.exp() + 1.0).log(),
        |x: Array, t: Array| {
            let y = (x.exp() + 1.0).log();
            (y, (1.0 - 1.0 / (x.exp() + 1.0)) * t)
        },
    )
}

#[grad]
fn grad_log1pexp(x: f32) -> f32 {
    log1pexp(&x)
}

#[jvp]
fn jvp_log1pexp(x: &Array, t: &Array) -> (Array, Array) {
    log1pexp(x)
}

#[test]
fn custom_vjp_and_custom_jvp_rules_are_used() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "custom_vjp_f_sin_times_y";
    let (x, y) = (input(c, "x"), input(c, "y"));
    assert_golden(c, 0, &f_sin_times_y(&x, &y));
    let (dx, dy) = grad_custom_vjp(&x, &y);
    assert_golden(c, 1, &dx);
    assert_golden(c, 2, &dy);
    let c = "custom_jvp_log1pexp";
    let x = input(c, "x").to_vec::<f32>().unwrap();
    let grads: Vec<f32> = x.iter().map(|&v| grad_log1pexp(v)).collect();
    assert_golden(c, 0, &jnp::array(&grads[..]));
    let xs = input(c, "x");
    let (y, t) = jvp_log1pexp(&xs, &jnp::ones_like(&xs));
    assert_golden(c, 1, &y);
    assert_golden(c, 2, &t);
}

// ---- Refusals at run time ------------------------------------------------------------------

#[grad]
fn grad_vector_output(x: &Array) -> Array {
    x * 2.0
}

#[test]
fn non_scalar_outputs_and_integer_inputs_are_refused() {
    let msg = panic_text(|| {
        grad_vector_output(&jnp::ones([3]));
    });
    assert!(msg.contains("scalar (0-d)") && msg.contains("float32(3,)"), "{msg}");
    let msg = panic_text(|| {
        grad_vector_output(&jnp::arange(3));
    });
    assert!(msg.contains("grad requires real-valued inputs") && msg.contains("int32(3,)"), "{msg}");
}

// ---- Composition ---------------------------------------------------------------------------

#[jacfwd]
fn jf(x: &Array) -> Array {
    x.tanh() * x.sum() + x.matmul(&jnp::ones([3, 3]))
}

#[jacrev]
fn jr(x: &Array) -> Array {
    x.tanh() * x.sum() + x.matmul(&jnp::ones([3, 3]))
}

#[hessian]
fn w5_hessian(x: &Array) -> Array {
    (x.tanh() * x.square()).sum()
}

#[value_and_grad]
fn vg(x: &Array) -> (Array, Array) {
    (x.tanh() * x.square()).sum()
}

#[grad]
fn g(x: &Array) -> Array {
    (x.tanh() * x.square()).sum()
}

#[test]
fn transforms_agree_with_each_other() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([0.3f32, -1.2, 2.0]);
    close(&jf(&x), &jr(&x));
    let h = w5_hessian(&x);
    close(&h, &h.t());
    let (v, gv) = vg(&x);
    close(&v, &(x.tanh() * x.square()).sum());
    close(&gv, &g(&x));
}

// ---- The custom-derivative attributes -----------------------------------------------------

#[traceable]
fn log1pexp_rule(x: &Array, t: &Array) -> (Array, Array) {
    let y = (x.exp() + 1.0).log();
    (y, (1.0 - 1.0 / (x.exp() + 1.0)) * t)
}

#[custom_jvp(jvp = log1pexp_rule)]
fn log1pexp_attr(x: &Array) -> Array {
    (x.exp() + 1.0).log()
}

#[grad]
fn grad_log1pexp_attr(x: f32) -> f32 {
    log1pexp_attr(&x)
}

#[traceable]
fn sin_times_fwd(x: &Array, y: &Array) -> (Array, (Array, Array, Array)) {
    (x.sin() * y, (x.cos(), x.sin(), y.clone()))
}

#[traceable]
fn sin_times_bwd(res: (Array, Array, Array), g: Array) -> (Array, Array) {
    let (cos_x, sin_x, y) = res;
    (cos_x * &g * y, sin_x * g)
}

#[custom_vjp(fwd = sin_times_fwd, bwd = sin_times_bwd)]
fn sin_times(x: &Array, y: &Array) -> Array {
    x.sin() * y
}

#[grad(argnums = (0, 1))]
fn grad_sin_times(x: &Array, y: &Array) -> (Array, Array) {
    sin_times(x, y)
}

#[jvp]
fn jvp_sin_times(x: &Array, y: &Array, tx: &Array, ty: &Array) -> (Array, Array) {
    sin_times(x, y)
}

#[test]
fn custom_derivative_attributes() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "custom_jvp_log1pexp";
    let x = input(c, "x").to_vec::<f32>().unwrap();
    let grads: Vec<f32> = x.iter().map(|&v| grad_log1pexp_attr(v)).collect();
    assert_golden(c, 0, &jnp::array(&grads[..]));
    let c = "custom_vjp_f_sin_times_y";
    let (x, y) = (input(c, "x"), input(c, "y"));
    assert_golden(c, 0, &sin_times(&x, &y));
    let (dx, dy) = grad_sin_times(&x, &y);
    assert_golden(c, 1, &dx);
    assert_golden(c, 2, &dy);
    let msg = panic_text(|| {
        jvp_sin_times(&x, &y, &x, &y);
    });
    assert!(msg.contains("cannot be differentiated in forward mode"), "{msg}");
}
