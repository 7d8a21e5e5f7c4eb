//! The transforms as functions of closures (`rjax::grad(f)`, `jit(f)`, `vmap(f, ..)`, ...):
//! a table of programs run both as attributes and as function forms must agree; closures
//! capture concrete and traced values; nested transforms keep their perturbations apart;
//! jacobians and hessians with tuple argnums against JAX (`tests/data/jacobian_argnums.json`,
//! generator in `tests/data/gen/jacobian_argnums.py`).

mod common;

use std::sync::OnceLock;

use common::{assert_close, assert_golden, input, leaf_to_array, panic_text};
use rjax::prelude::*;
use serde_json::Value;

fn same(got: &Array, want: &Array) {
    assert_close(got, want, 1e-6, 1e-6);
}

fn x3() -> Array {
    jnp::array([0.3f32, -1.2, 0.7])
}

// ---- The table: each attribute program and its function form. ----

#[grad]
fn attr_grad(x: &Array) -> Array {
    (x.tanh() * x).sum()
}

#[value_and_grad(has_aux)]
fn attr_value_and_grad_aux(x: &Array) -> ((Array, Array), Array) {
    let y = x.sin();
    (y.square().sum(), y.mean())
}

#[grad(argnums = (0, 1))]
fn attr_grad_two(w: &Array, b: &Array, x: &Array) -> (Array, Array) {
    ((x * w + b).tanh()).sum()
}

#[derive(Tree, Clone)]
struct Params {
    w: Array,
    b: Array,
}

#[grad]
fn attr_grad_params(p: &Params, x: &Array) -> Params {
    (x * &p.w + &p.b).square().sum()
}

#[vmap(in_axes = (None, 0))]
fn attr_vmap(a: &Array, x: &Array) -> Array {
    (a * x).sum()
}

#[vmap(in_axes = 1, out_axes = 1)]
fn attr_vmap_out(col: &Array) -> Array {
    col * 2.0 + col.sum()
}

#[jvp]
fn attr_jvp(x: &Array, t: &Array) -> (Array, Array) {
    x.sin() * x
}

#[vjp]
fn attr_vjp(x: &Array, ct: &Array) -> Array {
    x.exp() * 2.0
}

#[jacfwd]
fn attr_jacfwd(x: &Array) -> Array {
    x.sin() * x.sum()
}

#[jacrev]
fn attr_jacrev(x: &Array) -> Array {
    x.sin() * x.sum()
}

#[hessian]
fn attr_hessian(x: &Array) -> Array {
    (x.sin() * x).sum() * x.sum()
}

#[grad]
fn attr_grad_checkpoint(x: &Array) -> Array {
    remat_part(x).sum()
}

#[checkpoint]
fn remat_part(x: &Array) -> Array {
    x.sin().exp()
}

#[vmap(in_axes = (None, 0))]
#[grad]
fn attr_per_example(w: &Array, x: &Array) -> Array {
    (w * x).tanh().sum()
}

#[test]
fn attributes_and_function_forms_agree() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    let f = |x: &Array| (x.tanh() * x).sum();
    same(&grad(f)(&x), &attr_grad(&x));

    let aux = |x: &Array| {
        let y = x.sin();
        (y.square().sum(), y.mean())
    };
    let ((v, a), g): ((Array, Array), Array) = value_and_grad(aux).has_aux().call(&x);
    let ((v2, a2), g2) = attr_value_and_grad_aux(&x);
    same(&v, &v2);
    same(&a, &a2);
    same(&g, &g2);

    let (w, b) = (jnp::array([0.5f32, -0.2, 1.0]), Array::from(0.1f32));
    let loss = |(w, b, x): &(Array, Array, Array)| (x * w + b).tanh().sum();
    let (gw, gb): (Array, Array) =
        grad(loss).argnums((0, 1)).call(&(w.clone(), b.clone(), x.clone()));
    let (gw2, gb2) = attr_grad_two(&w, &b, &x);
    same(&gw, &gw2);
    same(&gb, &gb2);

    let p = Params { w: w.clone(), b: b.clone() };
    let gp = grad(|p: &Params| (&x * &p.w + &p.b).square().sum())(&p);
    let gp2 = attr_grad_params(&p, &x);
    same(&gp.w, &gp2.w);
    same(&gp.b, &gp2.b);

    let xs = jnp::arange(12.0f32).reshape([4, 3]);
    let per_row = vmap(|(a, x): &(Array, Array)| (a * x).sum(), (None, 0), 0);
    same(&per_row(&(w.clone(), xs.clone())), &attr_vmap(&w, &xs));
    let cols = vmap(|c: &Array| c * 2.0 + c.sum(), 1, 1);
    same(&cols(&xs), &attr_vmap_out(&xs));

    let t = jnp::array([1.0f32, 0.5, -2.0]);
    let (y, ty) = jvp(|x: &Array| x.sin() * x, &x, &t);
    let (y2, ty2) = attr_jvp(&x, &t);
    same(&y, &y2);
    same(&ty, &ty2);

    let (out, pull) = vjp(|x: &Array| x.exp() * 2.0, &x);
    same(&out, &(x.exp() * 2.0));
    same(&pull(&t), &attr_vjp(&x, &t));

    let j = |x: &Array| x.sin() * x.sum();
    same(&jacfwd(j)(&x), &attr_jacfwd(&x));
    same(&jacrev(j)(&x), &attr_jacrev(&x));
    same(&hessian(|x: &Array| (x.sin() * x).sum() * x.sum())(&x), &attr_hessian(&x));

    let remat = checkpoint(|x: &Array| x.sin().exp());
    same(&grad(|x: &Array| remat(x).sum())(&x), &attr_grad_checkpoint(&x));

    let per_example =
        vmap(|(w, x): &(Array, Array)| grad(|w: &Array| (w * x).tanh().sum())(w), (None, 0), 0);
    same(&per_example(&(w.clone(), xs.clone())), &attr_per_example(&w, &xs));
}

#[test]
fn vjp_fn_can_be_called_repeatedly_and_linearize_matches_jvp() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    let f = |x: &Array| x.sin() * x.sum();
    let (out, pull) = vjp(f, &x);
    same(&out, &f(&x));
    // Rows of the jacobian, one pullback each, from one linearization.
    let jac = jacrev(f)(&x);
    for i in 0..3 {
        let e = jnp::eye(3).slice(s![i]);
        same(&pull(&e), &jac.slice(s![i]));
    }
    let (out, push) = linearize(f, &x);
    same(&out, &f(&x));
    for t in [jnp::array([1.0f32, 0.0, 0.0]), jnp::array([0.5f32, -1.0, 2.0])] {
        same(&push(&t), &jvp(f, &x, &t).1);
    }
    let msg = panic_text(|| {
        pull(&jnp::ones([2]));
    });
    assert!(msg.contains("vjp: the cotangent has a leaf"), "{msg}");
}

#[test]
fn jit_of_a_closure_caches_per_signature_and_bakes_in_captured_arrays() {
    let _x64 = rjax::config::x64_scope(true);
    let scale = Array::from(3.0f32);
    let f = jit(|x: &Array| x * &scale + 1.0);
    same(&f(&jnp::array([1.0f32, 2.0])), &jnp::array([4.0f32, 7.0]));
    same(&f(&jnp::array([0.0f32, 1.0])), &jnp::array([1.0f32, 4.0]));
    same(&f(&jnp::ones([3])), &jnp::array([4.0f32, 4.0, 4.0]));
    let info = f.cache_info();
    assert_eq!((info.traces, info.hits, info.plans), (2, 1, 2), "{info:?}");
    // Pytrees in and out.
    let g = jit(|(a, b): &(Array, Array)| (a + b, a * b));
    let (s, p) = g(&(Array::from(2.0f32), Array::from(5.0f32)));
    same(&s, &Array::from(7.0f32));
    same(&p, &Array::from(10.0f32));
}

// ---- Closures and nesting inside traced functions. ----

#[traceable]
fn g(w: &Array) -> Array {
    w.sin() * 2.0
}

#[jit]
fn grad_of_closure_inside_jit(x: &Array) -> Array {
    let s = x.sum();
    // The closure captures the traced local `s`: a constant of the inner differentiation.
    grad(|w: &Array| g(w).sum() * &s)(x)
}

#[test]
fn closures_capture_traced_locals_in_annotated_functions() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    let want = x.cos() * 2.0 * x.sum();
    same(&grad_of_closure_inside_jit(&x), &want);
}

/// JAX's perturbation-confusion test: d/dx (x * d/dy (x + y)) at y = 0 is 1 (a confused
/// implementation gives 2).
#[test]
fn nested_grads_keep_their_perturbations_apart() {
    let d =
        grad(|x: &Array| x * grad(|y: &Array| x + y)(&Array::from(0.0f32)))(&Array::from(1.0f32));
    assert_eq!(d.item::<f32>().unwrap(), 1.0);
    assert_eq!(perturbation_in_jit(&Array::from(1.0f32)).item::<f32>().unwrap(), 1.0);
    assert_eq!(perturbation_attr(1.0), 1.0);
}

#[jit]
fn perturbation_in_jit(x0: &Array) -> Array {
    grad(|x: &Array| x * grad(|y: &Array| x + y)(&jnp::zeros([])))(x0)
}

#[grad]
fn perturbation_attr(x: f32) -> f32 {
    x * grad(|y: &Array| x + y)(&jnp::zeros([]))
}

// The seed's nested example as it reads in JAX:
//
//     @pmap
//     def f(x):
//       y = jnp.sin(x)
//       @pmap
//       def g(z):
//         return jnp.cos(z) * jnp.tan(y.sum()) * jnp.tan(x)
//       return grad(lambda w: jnp.sum(g(w)))(x)
//
//     grad(lambda x: jnp.sum(f(x)))(x)

#[pmap]
fn seed_f(x: &Array) -> Array {
    let y = x.sin();
    let g = pmap(|z: &Array| z.cos() * y.sum().tan() * x.tan(), 0, 0);
    grad(|w: &Array| g(w).sum())(x)
}

#[test]
#[allow(clippy::let_and_return)]
fn the_seeds_nested_pmap_example_reads_as_in_jax() {
    let _x64 = rjax::config::x64_scope(true);
    rjax::device::set_cpu_device_count(8).unwrap();
    let x = input("nested_pmap_example_grad", "x");
    let attr = grad(|x: &Array| seed_f(x).sum())(&x);
    assert_golden("nested_pmap_example_grad", 0, &attr);
    // All function forms, from plain Rust.
    let f = pmap(
        |x: &Array| {
            let y = x.sin();
            let g = pmap(|z: &Array| z.cos() * y.sum().tan() * x.tan(), 0, 0);
            // (Edition 2021: a tail expression's temporaries outlive the block's locals.)
            let dw = grad(|w: &Array| g(w).sum())(x);
            dw
        },
        0,
        0,
    );
    assert_golden("nested_pmap_example_grad", 0, &grad(|x: &Array| f(x).sum())(&x));
}

// ---- Tuple argnums on the jacobians, against JAX. ----

fn goldens() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/jacobian_argnums.json")).expect("json parses")
    })
}

fn golden_leaves(case: &str) -> Vec<Array> {
    goldens()["cases"][case].as_array().expect("a case").iter().map(leaf_to_array).collect()
}

fn check(case: &str, got: &[Array]) {
    let want = golden_leaves(case);
    assert_eq!(got.len(), want.len(), "{case}: number of blocks");
    for (g, w) in got.iter().zip(&want) {
        assert_close(g, w, 1e-5, 1e-5);
    }
}

fn xy() -> (Array, Array) {
    let i = &goldens()["inputs"];
    (leaf_to_array(&i["x"]), leaf_to_array(&i["y"]))
}

fn f_xy(x: &Array, y: &Array) -> Array {
    y * x.tanh().sum() + y.exp() * x.square().sum()
}

fn g_xy(x: &Array, y: &Array) -> Array {
    (x.sin() * x).sum() * y.powi(3).sum() + x.tanh().sum() * y.sum()
}

#[jacfwd(argnums = (0, 1))]
fn attr_jacfwd_01(x: &Array, y: &Array) -> (Array, Array) {
    y * x.tanh().sum() + y.exp() * x.square().sum()
}

#[jacrev(argnums = (1, 0))]
fn attr_jacrev_10(x: &Array, y: &Array) -> (Array, Array) {
    y * x.tanh().sum() + y.exp() * x.square().sum()
}

#[hessian(argnums = (0, 1))]
fn attr_hessian_01(x: &Array, y: &Array) -> ((Array, Array), (Array, Array)) {
    (x.sin() * x).sum() * y.powi(3).sum() + x.tanh().sum() * y.sum()
}

#[test]
fn tuple_argnums_jacobians_match_jax_as_attributes() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, y) = xy();
    let (jx, jy) = attr_jacfwd_01(&x, &y);
    check("jacfwd_argnums_01", &[jx, jy]);
    let (jy, jx) = attr_jacrev_10(&x, &y);
    check("jacrev_argnums_10", &[jy, jx]);
    let ((hxx, hxy), (hyx, hyy)) = attr_hessian_01(&x, &y);
    check("hessian_argnums_01", &[hxx, hxy, hyx, hyy]);
}

#[test]
fn tuple_argnums_jacobians_match_jax_as_functions() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, y) = xy();
    let args = (x.clone(), y.clone());
    let f = |(x, y): &(Array, Array)| f_xy(x, y);
    let g = |(x, y): &(Array, Array)| g_xy(x, y);
    let (jx, jy): (Array, Array) = jacfwd(f).argnums((0, 1)).call(&args);
    check("jacfwd_argnums_01", &[jx, jy]);
    let (jx, jy): (Array, Array) = jacrev(f).argnums((0, 1)).call(&args);
    check("jacrev_argnums_01", &[jx, jy]);
    let (jy, jx): (Array, Array) = jacrev(f).argnums((1, 0)).call(&args);
    check("jacrev_argnums_10", &[jy, jx]);
    let jy: Array = jacfwd(f).argnums(1).call(&args);
    check("jacfwd_argnums_1", &[jy]);
    let ((hxx, hxy), (hyx, hyy)): ((Array, Array), (Array, Array)) =
        hessian(g).argnums((0, 1)).call(&args);
    check("hessian_argnums_01", &[hxx, hxy, hyx, hyy]);
    let hyy: Array = hessian(g).argnums(1).call(&args);
    check("hessian_argnums_1", &[hyy]);
    let (gx, gy): (Array, Array) = grad(g).argnums((0, 1)).call(&args);
    check("grad_argnums_01", &[gx, gy]);
    assert_eq!(goldens()["structure"]["hessian_argnums_01"], "PyTreeDef(((*, *), (*, *)))");
}

#[test]
fn bad_argnums_and_structures_name_the_transform() {
    let x = x3();
    let msg = panic_text(|| {
        let _: Array = grad(|x: &Array| x.sum()).argnums(0).call(&x);
    });
    assert!(msg.contains("grad: argnums picks elements of the argument tuple"), "{msg}");
    let msg = panic_text(|| {
        let _: Array =
            grad(|(a, _b): &(Array, Array)| a.sum()).argnums(2).call(&(x.clone(), x.clone()));
    });
    assert!(msg.contains("grad: argnums 2 is out of range"), "{msg}");
    let msg = panic_text(|| {
        grad(|x: &Array| x.sin())(&x);
    });
    assert!(
        msg.contains("grad: the gradient is only defined for functions with a scalar"),
        "{msg}"
    );
}

// ---- custom_vjp: `None` is a zero cotangent, as in JAX. ----

#[custom_vjp(fwd = scale_fwd, bwd = scale_bwd)]
fn scale(x: &Array, k: &Array) -> Array {
    x * k
}

#[traceable]
fn scale_fwd(x: &Array, k: &Array) -> (Array, Array) {
    (x * k, k.clone())
}

#[traceable]
fn scale_bwd(k: Array, g: Array) -> (Array, Option<Array>) {
    (g * &k, None)
}

#[grad(argnums = (0, 1))]
fn grad_scale(x: &Array, k: &Array) -> (Array, Array) {
    scale(x, k).sum()
}

#[test]
fn custom_vjp_bwd_may_return_none_for_a_zero_cotangent() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, k) = (x3(), jnp::array([2.0f32, 3.0, 4.0]));
    let (gx, gk) = grad_scale(&x, &k);
    same(&gx, &k);
    same(&gk, &jnp::zeros([3]));
    // Through the function forms too.
    let (gx, gk): (Array, Array) =
        grad(|(x, k): &(Array, Array)| scale(x, k).sum()).argnums((0, 1)).call(&(x, k.clone()));
    same(&gx, &k);
    same(&gk, &jnp::zeros([3]));
}

#[jit]
fn jit_closure_over_a_traced_local(x: &Array) -> Array {
    let y = x.sin();
    // Concrete argument, traced capture: inlined into the enclosing trace.
    let inner = jit(|c: &Array| c + &y);
    inner(&jnp::ones([3]))
}

#[test]
fn jit_inside_a_trace_is_inlined_and_value_and_grad_is_callable() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    same(&jit_closure_over_a_traced_local(&x), &(x.sin() + 1.0));
    let (v, g) = value_and_grad(|x: &Array| x.square().sum())(&x);
    same(&v, &x.square().sum());
    same(&g, &(&x * 2.0));
}
