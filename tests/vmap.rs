//! `#[vmap]` against JAX's golden values (`tests/data/golden.json`): in_axes/out_axes,
//! nesting, per-example gradients of the README's MLP, batched `if`, collectives.

mod common;

use common::mlp::{loss, predict};
use common::{assert_close, assert_golden, input, panic_text};
use rjax::prelude::*;

#[vmap(in_axes = (None, 0))]
fn scale_rows(a: &Array, x: &Array) -> Array {
    a * x + 1.0
}

#[vmap(in_axes = 1)]
fn column_norms(col: &Array) -> Array {
    col.square().sum()
}

#[traceable]
fn matvec(m: &Array, v: &Array) -> Array {
    m.dot(v)
}

#[vmap(in_axes = (None, 1), out_axes = 1)]
fn matmat(m: &Array, v: &Array) -> Array {
    matvec(m, v)
}

#[test]
fn in_axes_and_out_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "vmap_in_axes_none_0";
    assert_golden(c, 0, &scale_rows(&input(c, "a"), &input(c, "X")));
    let c = "vmap_in_axes_1";
    assert_golden(c, 0, &column_norms(&input(c, "X")));
    let c = "vmap_matvec_to_matmat";
    let (m, v) = (input(c, "M"), input(c, "V"));
    assert_golden(c, 0, &matmat(&m, &v));
    assert_golden(c, 1, &m.matmul(&v));
}

#[vmap(in_axes = (None, 0))]
fn dots_with_rows(a: &Array, b: &Array) -> Array {
    a.dot(b)
}

#[vmap(in_axes = (0, None))]
fn pairwise(a: &Array, b: &Array) -> Array {
    dots_with_rows(a, b)
}

#[test]
fn nested_vmap_builds_pairwise_dots() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "vmap_nested_pairwise_dots";
    assert_golden(c, 0, &pairwise(&input(c, "A"), &input(c, "B")));
}

#[vmap]
#[grad]
fn grad_sin_sq(x: &Array) -> Array {
    x.sin() * x.square()
}

#[traceable]
fn tanh_row_dot(x: &Array) -> Array {
    x.tanh().sum() * x.slice(s![0])
}

#[vmap]
fn per_row(x: &Array) -> Array {
    tanh_row_dot(x)
}

#[grad]
fn grad_of_summed_vmap(x: &Array) -> Array {
    per_row(x).sum()
}

#[vmap]
#[grad]
#[grad]
fn second_derivative_of_cube(x: &Array) -> Array {
    x.powi(3)
}

#[test]
fn vmap_and_grad_compose_both_ways() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "vmap_of_grad";
    assert_golden(c, 0, &grad_sin_sq(&input(c, "xs")));
    let c = "grad_of_vmap_then_sum";
    assert_golden(c, 0, &grad_of_summed_vmap(&input(c, "X")));
    let c = "grad_cube";
    assert_golden(c, 2, &second_derivative_of_cube(&input(c, "x")));
}

#[vmap]
fn sin_or_cos(x: &Array) -> Array {
    if x.gt(0.0) {
        x.sin()
    } else {
        x.cos()
    }
}

#[vmap]
#[grad]
fn grad_sin_or_cos(x: &Array) -> Array {
    if x.gt(0.0) {
        x.sin()
    } else {
        x.cos()
    }
}

#[test]
fn batched_predicate_selects_between_branches() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "vmap_of_lax_cond";
    assert_golden(c, 0, &sin_or_cos(&input(c, "xs")));
    assert_golden(c, 1, &grad_sin_or_cos(&input(c, "xs")));
    let text = sin_or_cos::jaxpr(&input(c, "xs")).to_string();
    assert!(text.contains("select"), "a batched predicate becomes a select:\n{text}");
}

#[vmap(axis_name = "i")]
fn normalize(x: &Array) -> Array {
    x / lax::psum(x, "i")
}

#[test]
fn psum_over_the_vmapped_axis() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("vmap_with_axis_name_psum", 0, &normalize(&jnp::arange(4.0)));
}

#[vmap(in_axes = (None, 0))]
fn predict_each(params: &[(Array, Array)], x: &Array) -> Array {
    predict(params, x)
}

#[vmap(in_axes = (None, 0, 0))]
fn per_example_losses(params: &[(Array, Array)], x: &Array, y: &Array) -> Array {
    loss(params, x, y)
}

#[jit]
#[vmap(in_axes = (None, 0, 0))]
#[grad]
fn per_example_grads(params: &[(Array, Array)], x: &Array, y: &Array) -> Vec<(Array, Array)> {
    loss(params, x, y)
}

#[grad]
fn batch_grad(params: &[(Array, Array)], x: &Array, y: &Array) -> Vec<(Array, Array)> {
    loss(params, x, y)
}

fn mlp(case: &str) -> (Vec<(Array, Array)>, Array, Array) {
    let params =
        vec![(input(case, "W0"), input(case, "b0")), (input(case, "W1"), input(case, "b1"))];
    (params, input(case, "inputs"), input(case, "targets"))
}

fn flat(grads: &[(Array, Array)]) -> Vec<Array> {
    grads.iter().flat_map(|(w, b)| [w.clone(), b.clone()]).collect()
}

#[test]
fn per_example_gradients_of_the_mlp() {
    let _x64 = rjax::config::x64_scope(true);
    // vmap(predict, in_axes=(None, 0)): per-example predictions are the batch's.
    let c = "mlp_predict";
    let (params, x, _) = mlp(c);
    assert_golden(c, 0, &predict_each(&params, &x));
    let c = "per_example_losses_mlp";
    let (params, x, y) = mlp(c);
    assert_golden(c, 0, &per_example_losses(&params, &x, &y));
    let c = "per_example_grads_mlp";
    let (params, x, y) = mlp(c);
    let grads = per_example_grads(&params, &x, &y);
    for (i, leaf) in flat(&grads).iter().enumerate() {
        assert_golden(c, i, leaf);
    }
    // Twice: the second call runs the cached plan.
    let again = per_example_grads(&params, &x, &y);
    for (a, b) in flat(&grads).iter().zip(flat(&again)) {
        assert_close(a, &b, 0.0, 0.0);
    }
    let c = "per_example_grads_summed_equal_batch_grad";
    let (params, x, y) = mlp(c);
    let summed: Vec<Array> = flat(&per_example_grads(&params, &x, &y))
        .iter()
        .map(|g| jnp::sum_axes(g, 0, false))
        .collect();
    for (i, leaf) in summed.iter().enumerate() {
        assert_golden(c, i, leaf);
    }
    for (a, b) in summed.iter().zip(flat(&batch_grad(&params, &x, &y))) {
        assert_close(a, &b, 1e-5, 1e-6);
    }
}

#[vmap(in_axes = (0, 0))]
fn add_pairs(x: &Array, y: &Array) -> Array {
    x + y
}

#[vmap(in_axes = (0, 2))]
fn bad_axis(x: &Array, y: &Array) -> Array {
    x + y
}

#[test]
fn mismatched_sizes_and_bad_axes_are_clear_errors() {
    let text = panic_text(|| {
        add_pairs(&jnp::zeros([5, 3]), &jnp::zeros([4, 3]));
    });
    assert!(text.contains("inconsistent sizes"), "{text}");
    assert!(text.contains("argument `x`") && text.contains("size 5"), "{text}");
    assert!(text.contains("argument `y`") && text.contains("size 4"), "{text}");
    let text = panic_text(|| {
        bad_axis(&jnp::zeros([3]), &jnp::zeros([3, 2]));
    });
    assert!(text.contains("axis 2 is out of range for argument `y` of shape (3, 2)"), "{text}");
}

#[vmap(in_axes = (0, None), axis_name = "i")]
#[vmap(in_axes = (None, 0), axis_name = "j")]
fn two_axes(x: &Array, y: &Array) -> (Array, Array, Array) {
    // Over the elements of x ("i") and of y ("j").
    let both = x * y;
    (lax::psum(&both, "j"), lax::psum(&both, ["i", "j"]), lax::pmax(x, "i"))
}

#[vmap(axis_name = "i")]
fn collectives(x: &Array) -> (Array, Array, Array, Array, Array) {
    let mean = lax::pmean(x, "i");
    let max = lax::pmax(x, "i");
    let min = lax::pmin(x, "i");
    let gathered = lax::all_gather(x, "i");
    let index = lax::axis_index("i");
    (mean, max, min, gathered, index)
}

#[vmap(axis_name = "i")]
#[grad]
fn grad_through_psum(x: &Array) -> Array {
    (x / lax::psum(x, "i")).square()
}

#[grad]
fn grad_of_normalize_sum(x: &Array) -> Array {
    (normalize(x) * jnp::arange(4.0)).sum()
}

#[vmap(axis_name = "i")]
#[grad]
fn grad_through_all_gather(x: &Array) -> Array {
    (lax::all_gather(x, "i") * jnp::arange(3.0)).sum()
}

#[test]
fn collectives_over_named_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([1.0f32, 4.0, 2.0]);
    let (mean, max, min, gathered, index) = collectives(&x);
    assert_close(&mean, &jnp::full([3], 7.0f32 / 3.0), 1e-6, 0.0);
    assert_close(&max, &jnp::full([3], 4.0f32), 0.0, 0.0);
    assert_close(&min, &jnp::full([3], 1.0f32), 0.0, 0.0);
    assert_close(&gathered, &jnp::stack(&[&x, &x, &x], 0), 0.0, 0.0);
    assert_close(&index, &jnp::arange(3), 0.0, 0.0);

    // Nested: psum over the inner axis sums over y's rows, over both axes sums everything.
    let (a, b) = (jnp::array([1.0f32, 2.0, 3.0]), jnp::array([10.0f32, 20.0]));
    let (over_j, over_both, max_i) = two_axes(&a, &b);
    assert_close(&over_j, &jnp::outer(&a, &jnp::full([2], 30.0f32)), 1e-6, 0.0);
    assert_close(&over_both, &jnp::full([3, 2], 180.0f32), 1e-6, 0.0);
    assert_close(&max_i, &jnp::full([3, 2], 3.0f32), 0.0, 0.0);

    // d/dx_k of sum_i (x_i / S)^2 seen by example k, with S = psum(x): grad inside vmap
    // differentiates through the collective (psum transposes to psum).
    let x = jnp::array([1.0f32, 2.0, 3.0]);
    let g = grad_through_psum(&x);
    let s = 6.0f32;
    let xs = [1.0f32, 2.0, 3.0];
    let total_sq: f32 = xs.iter().map(|v| v * v).sum();
    let want: Vec<f32> =
        xs.iter().map(|&v| 2.0 * v / (s * s) - 2.0 * total_sq / (s * s * s)).collect();
    assert_close(&g, &jnp::array(want), 1e-5, 1e-6);

    // grad of a vmapped function with a collective: the psum became a reduction.
    let x = jnp::arange(4.0) + 1.0;
    let eps = 1e-3f32;
    let f = |x: &Array| (normalize(x) * jnp::arange(4.0)).sum().item::<f32>().unwrap();
    let g = grad_of_normalize_sum(&x).to_vec::<f32>().unwrap();
    for (k, gk) in g.iter().enumerate() {
        let e = jnp::arange(4.0).eq(k as f32).astype(DType::F32) * eps;
        let fd = (f(&(&x + &e)) - f(&(&x - &e))) / (2.0 * eps);
        assert!((gk - fd).abs() < 1e-2, "component {k}: {gk} vs {fd}");
    }

    // all_gather's transpose: example k's input is row k of every example's output.
    let g = grad_through_all_gather(&jnp::array([1.0f32, 1.0, 1.0]));
    assert_close(&g, &jnp::array([0.0f32, 3.0, 6.0]), 1e-6, 0.0);
}

#[test]
fn unbound_axis_names_are_clear_errors() {
    #[vmap(axis_name = "i")]
    fn wrong_name(x: &Array) -> Array {
        lax::psum(x, "j")
    }
    let text = panic_text(|| {
        wrong_name(&jnp::arange(3.0));
    });
    assert!(text.contains("psum: unbound axis name `j`"), "{text}");
    assert!(text.contains("the bound axes are `i`"), "{text}");
    let text = panic_text(|| {
        lax::psum(jnp::arange(3.0), "i");
    });
    assert!(text.contains("unbound axis name `i`") && text.contains("no axis is bound"), "{text}");
}

#[jit]
#[vmap(in_axes = (None, 0))]
fn jit_of_vmap(w: &Array, x: &Array) -> Array {
    x.dot(w).tanh()
}

#[jit]
fn jitted_row(w: &Array, x: &Array) -> Array {
    x.dot(w).tanh()
}

#[vmap(in_axes = (None, 0))]
fn vmap_of_jit(w: &Array, x: &Array) -> Array {
    jitted_row(w, x)
}

#[vmap]
#[jacfwd]
fn batched_jacobian(x: &Array) -> Array {
    x.sin() * x.sum()
}

#[vmap]
#[hessian]
fn batched_hessian(x: &Array) -> Array {
    jnp::logsumexp(x)
}

#[vmap(in_axes = 0, out_axes = (0, 1))]
fn two_outputs(x: &Array) -> (Array, Array) {
    (x.sum(), x * 2.0)
}

#[vmap(in_axes = ((0, 1), None))]
fn tuple_param(pair: (Array, Array), scale: f32) -> Array {
    (pair.0 + pair.1.sum()) * scale
}

#[test]
fn vmap_composes_with_jit_jacobians_and_pytrees() {
    let _x64 = rjax::config::x64_scope(true);
    let w = jnp::array([0.5f32, -1.0, 2.0]);
    let x = Array::from_shape_vec([4, 3], (0..12).map(|v| v as f32 / 10.0).collect::<Vec<_>>());
    let want = x.matmul(&w).tanh();
    assert_close(&jit_of_vmap(&w, &x), &want, 1e-6, 1e-6);
    assert_close(&jit_of_vmap(&w, &x), &want, 1e-6, 1e-6);
    assert_close(&vmap_of_jit(&w, &x), &want, 1e-6, 1e-6);

    let jac = batched_jacobian(&x);
    assert_eq!(jac.shape(), &[4, 3, 3]);
    for b in 0..4 {
        let row = x.slice(s![b]);
        let single = rjax::ad::api::jacobian_of(|r| r.sin() * r.sum(), &row, true);
        assert_close(&jac.slice(s![b]), &single, 1e-6, 1e-6);
    }
    let h = batched_hessian(&x);
    assert_eq!(h.shape(), &[4, 3, 3]);
    let row = x.slice(s![2]);
    let single =
        rjax::ad::api::jacobian_of(|r| rjax::ad::api::grad_of(jnp::logsumexp, r), &row, false);
    assert_close(&h.slice(s![2]), &single, 1e-5, 1e-6);

    let (sums, doubled) = two_outputs(&x);
    assert_close(&sums, &jnp::sum_axes(&x, 1, false), 1e-6, 0.0);
    assert_close(&doubled, &(x.t() * 2.0), 0.0, 0.0);

    let a = jnp::arange(6.0).reshape([2, 3]);
    let b = jnp::arange(6.0).reshape([3, 2]);
    let out = tuple_param((a.clone(), b.clone()), 2.0);
    let want = (&a + jnp::sum_axes(&b, 0, false).reshape([2, 1])) * 2.0;
    assert_close(&out, &want, 1e-6, 0.0);
}
