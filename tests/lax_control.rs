//! `lax::cond`, `lax::switch`, `lax::while_loop`, `lax::fori_loop`: eagerly and inside
//! `#[jit]`, against JAX's values (tests/data/golden.json).

mod common;

use common::{assert_close, input, output};
use rjax::prelude::*;

fn close(got: &Array, want: &Array) {
    assert_close(got, want, 1e-5, 1e-6);
}

fn cond_branches(x: &Array) -> Array {
    lax::cond(x.gt(0.0), |x: Array| x.sin() * &x, |x: Array| x.cos() - &x, x.clone())
}

#[jit]
fn cond_jit(x: &Array) -> Array {
    lax::cond(x.gt(0.0), |x: Array| x.sin() * &x, |x: Array| x.cos() - &x, x.clone())
}

#[test]
fn cond_matches_jax_on_both_branches() {
    let _x64 = rjax::config::x64_scope(true);
    for case in ["cond_true_branch_value_grad", "cond_false_branch_value_grad"] {
        let x = input(case, "x");
        close(&cond_branches(&x), &output(case, 0));
        close(&cond_jit(&x), &output(case, 0));
    }
    assert_eq!(cond_jit::cache_info().traces, 1, "one trace serves both branches");
    let listing = cond_jit::jaxpr(&input("cond_true_branch_value_grad", "x")).to_string();
    assert!(listing.contains("cond["), "{listing}");
}

#[jit]
fn switch_jit(i: &Array, x: &Array) -> Array {
    let add_one = |x: Array| x + 1.0;
    let double = |x: Array| 2.0 * x;
    let square = |x: Array| x.powi(2);
    lax::switch(i, &[&add_one, &double, &square], x.clone())
}

#[test]
fn switch_clamps_its_index_like_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let case = "switch_index_clamped";
    let x = input(case, "x");
    for (k, i) in [0, 1, 2, 7, -3].into_iter().enumerate() {
        close(&switch_jit(&Array::from(i), &x), &output(case, k));
        let add_one = |x: Array| x + 1.0;
        let double = |x: Array| 2.0 * x;
        let square = |x: Array| x.powi(2);
        close(
            &lax::switch(Array::from(i), &[&add_one, &double, &square], x.clone()),
            &output(case, k),
        );
    }
    assert_eq!(switch_jit::cache_info().traces, 1);
}

#[jit]
fn while_jit(x: &Array) -> (Array, Array) {
    lax::while_loop(
        |c: &(Array, Array)| c.0.lt(100.0),
        |c: (Array, Array)| (&c.0 * 2.0 + 1.0, &c.1 + 1),
        (x.clone(), Array::from(0)),
    )
}

#[test]
fn while_loop_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let case = "while_loop_value";
    let x = input(case, "x");
    let eager = lax::while_loop(
        |c: &(Array, Array)| c.0.lt(100.0),
        |c: (Array, Array)| (&c.0 * 2.0 + 1.0, &c.1 + 1),
        (x.clone(), Array::from(0)),
    );
    for (value, count) in [eager, while_jit(&x)] {
        close(&value, &output(case, 0));
        assert_eq!(count.to_vec::<i32>().unwrap(), output(case, 1).to_vec::<i32>().unwrap());
    }
    let listing = while_jit::jaxpr(&x).to_string();
    assert!(
        listing.contains("while[") && listing.contains("cond=") && listing.contains("body="),
        "{listing}"
    );
}

#[jit]
fn fori_static(x: &Array) -> Array {
    lax::fori_loop(0, 5, |i, c: Array| &c * c.sin() + 0.1 * i, x.clone())
}

#[jit]
fn fori_traced_bound(x: &Array, n: &Array) -> Array {
    lax::fori_loop(0, n.clone(), |i, c: Array| c * 1.5 + i, x.clone())
}

#[test]
fn fori_loop_matches_jax_with_static_and_traced_bounds() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("fori_loop_value_grad_static", "x");
    close(&fori_static(&x), &output("fori_loop_value_grad_static", 0));
    let case = "fori_loop_dynamic_trip_count";
    let x = input(case, "x");
    close(&fori_traced_bound(&x, &Array::from(0)), &output(case, 0));
    close(&fori_traced_bound(&x, &Array::from(4)), &output(case, 1));
    assert_eq!(fori_traced_bound::cache_info().traces, 1, "the trip count is traced, not static");
}

#[jit]
fn cond_capturing(x: &Array, y: &Array) -> Array {
    let scale = y * 3.0;
    lax::cond(x.sum().gt(0.0), |()| x + &scale, |()| x - &scale, ())
}

#[test]
fn branches_capture_outer_traced_values_as_operands() {
    let x = jnp::array([1.0f32, 2.0]);
    let y = jnp::array([0.5f32, 1.0]);
    assert_eq!(cond_capturing(&x, &y).to_vec::<f32>().unwrap(), vec![2.5, 5.0]);
    assert_eq!(cond_capturing(&-&x, &y).to_vec::<f32>().unwrap(), vec![-2.5, -5.0]);
    let traced = cond_capturing::jaxpr(&x, &y).traced;
    let cond = traced.equations.iter().find(|e| e.prim.name() == "cond").expect("a cond");
    assert_eq!(cond.inputs.len(), 3, "predicate, x and scale:\n{traced}");
}

#[jit]
fn weak_branch(x: &Array) -> Array {
    lax::cond(x.gt(0.0), |x: Array| x, |_x: Array| Array::weak_scalar(0.0f64), x.clone())
}

#[test]
fn a_weakly_typed_branch_adopts_the_other_branch_dtype() {
    let y = weak_branch(&Array::from(-2.0f32));
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.item::<f32>().unwrap(), 0.0);
    assert_eq!(weak_branch(&Array::from(2.0f32)).item::<f32>().unwrap(), 2.0);
}

#[test]
#[should_panic(expected = "cond: the branches must return values of the same shapes and dtypes")]
fn branches_of_different_shapes_are_refused() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = cond_shapes(&x);
}

#[jit]
fn cond_shapes(x: &Array) -> Array {
    lax::cond(x.sum().gt(0.0), |x: Array| x.clone(), |x: Array| x.sum(), x.clone())
}

#[test]
#[should_panic(expected = "cond: the predicate must be a 0-d bool, got bool(2,)")]
fn a_non_scalar_predicate_is_refused() {
    let x = jnp::array([1.0f32, 2.0]);
    let _ = lax::cond(x.gt(0.0), |x: Array| x, |x: Array| x, x.clone());
}

#[test]
#[should_panic(expected = "while_loop: the body must return the carry's shapes and dtypes")]
fn a_while_body_changing_the_carry_shape_is_refused() {
    let _ = while_shapes(&jnp::array([1.0f32, 2.0]));
}

#[jit]
fn while_shapes(x: &Array) -> Array {
    lax::while_loop(|c: &Array| c.sum().lt(10.0), |c: Array| c.sum(), x.clone())
}

/// The compile-time refusals (locked in tests/ui/fail/*.stderr) tell users to write `lax::..`
/// calls instead; each function they name must exist and run.
#[test]
fn compile_time_advice_names_functions_that_exist() {
    type Call<'a> = Box<dyn Fn() + 'a>;
    let x = Array::from(1.0f32);
    let calls: Vec<(&str, Call<'_>)> = vec![
        ("lax::cond", Box::new(|| drop(lax::cond(true, |x: Array| x, |x: Array| -x, x.clone())))),
        ("lax::switch", Box::new(|| drop(lax::switch(0, &[&|x: Array| x], x.clone())))),
        (
            "lax::while_loop",
            Box::new(|| {
                drop(lax::while_loop(|c: &Array| c.lt(3.0), |c: Array| c + 1.0, x.clone()))
            }),
        ),
        (
            "lax::fori_loop",
            Box::new(|| drop(lax::fori_loop(0, 2, |_, c: Array| c * 2.0, x.clone()))),
        ),
        (
            "lax::scan",
            Box::new(|| {
                drop(lax::scan(|c: Array, y: Array| (c + &y, y), x.clone(), jnp::arange(2.0)))
            }),
        ),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui/fail");
    let mut named = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (at, _) in text.match_indices("lax::") {
                let name: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                named.insert(name);
            }
        }
    }
    assert!(named.contains("lax::while_loop") && named.contains("lax::scan"), "{named:?}");
    for name in &named {
        let (_, call) = calls.iter().find(|(n, _)| n == name).unwrap_or_else(|| {
            panic!("a compile error advises `{name}`, which this test does not know")
        });
        call();
    }
}

#[test]
fn select_chooses_elementwise_without_broadcasting() {
    let x = jnp::array([-2.0f32, -0.5, 0.0, 0.5, 2.0]);
    let y = lax::select(&x.gt(0.0), &x.square(), &(&x * -0.5));
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 0.25, -0.0, 0.25, 4.0]);
    let all = lax::select(&Array::from(true), &x, &x.square());
    assert_eq!(all.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    let msg = common::panic_text(|| drop(lax::select(&x.gt(0.0), &x, &Array::from(1.0f32))));
    assert!(msg.contains("select: the branches must have one shape and dtype"), "{msg}");
    let msg = common::panic_text(|| drop(lax::select(&jnp::array([true, false]), &x, &x)));
    assert!(
        msg.contains("select: the predicate must be bool, 0-d or of the branches' shape"),
        "{msg}"
    );
}
