//! `#[vmap]` against JAX's golden values (`tests/data/golden.json`): in_axes/out_axes,
//! nesting, per-example gradients of the README's MLP, batched `if`, collectives.

mod common;

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
    assert_golden("vmap_with_axis_name_psum", 0, &normalize(&jnp::arange(4.0)));
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

#[traceable]
fn loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    (predict(params, inputs) - targets).square().sum()
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
