//! `rjax::debug_print!`: prints eagerly, and inside traced functions whenever the plan runs.

use rjax::prelude::*;

#[jit]
fn noisy(x: &Array) -> Array {
    let y = x * 2.0;
    rjax::debug_print!("y = {}", y);
    y.sum()
}

#[test]
fn debug_print_survives_simplification_and_runs_with_the_plan() {
    let x = jnp::arange(3.0);
    assert_eq!(noisy(&x).item::<f32>().unwrap(), 6.0);
    assert_eq!(noisy(&x).item::<f32>().unwrap(), 6.0);
    let ir = noisy::jaxpr(&x);
    assert!(ir.simplified.to_string().contains("debug_print[fmt=\"y = {}\"]"), "{ir}");
    assert_eq!(noisy::cache_info().traces, 1);
}

#[jit]
fn noisy_branch(x: &Array) -> Array {
    if x.sum() > 0.0 {
        rjax::debug_print!("positive: {}", x);
    }
    x * 2.0
}

#[test]
fn a_branch_that_prints_is_kept_though_its_value_is_unused() {
    let x = jnp::arange(3.0);
    assert_eq!(noisy_branch(&x).to_vec::<f32>().unwrap(), vec![0.0, 2.0, 4.0]);
    let simplified = noisy_branch::jaxpr(&x).simplified.to_string();
    assert!(simplified.contains("cond[") && simplified.contains("debug_print"), "{simplified}");
}

#[test]
fn debug_print_works_eagerly() {
    rjax::debug_print!("x = {}, y = {}", jnp::arange(2), Array::from(1.5f32));
}

#[test]
#[should_panic(expected = "debug_print fills only plain `{}` placeholders")]
fn named_placeholders_are_refused_instead_of_printed_verbatim() {
    let x = jnp::arange(2);
    rjax::debug_print!("x = {x}", x);
}
