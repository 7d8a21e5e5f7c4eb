//! Control flow inside annotated functions: `if` on static parameters, traced `if` (lax::cond)
//! with both branches taken at run time, `else if` chains and outer locals assigned in
//! branches, loops over static ranges and pytrees (one specialization per length), closures,
//! static recursion, calls across modules, `#[traceable]` scalar functions, and the exact IR
//! text of a few small functions.

mod common;
use common::mlp::predict;
use common::*;
use rjax::prelude::*;

fn vals(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

fn scalar(a: &Array) -> f32 {
    a.item::<f32>().unwrap()
}

// --- Golden JAX cases ------------------------------------------------------------------------

#[jit]
fn sin_steps(x: &Array, n: usize) -> Array {
    let mut y = x.clone();
    for _ in 0..n {
        y = y.sin() + y;
    }
    y
}

#[test]
fn golden_jit_static_argnums() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("jit_static_argnums", "x");
    assert_golden("jit_static_argnums", 0, &sin_steps(&x, 2));
    assert_golden("jit_static_argnums", 1, &sin_steps(&x, 3));
    // Each static value is its own specialization; repeating one hits the cache.
    assert_eq!(sin_steps::cache_info().traces, 2);
    assert_golden("jit_static_argnums", 0, &sin_steps(&x, 2));
    let info = sin_steps::cache_info();
    assert_eq!((info.traces, info.hits, info.plans), (2, 1, 2), "{info:?}");
    // The loop is unrolled: n = 3 has three `sin`s.
    let text = sin_steps::jaxpr(&x, 3).traced.to_string();
    assert_eq!(text.matches(" sin ").count(), 3, "{text}");
}

#[jit]
fn reduce_by(x: &Array, mode: &str) -> Array {
    if mode == "sum" {
        x.sum()
    } else {
        x.prod()
    }
}

#[test]
fn golden_jit_static_argnames() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("jit_static_argnames", "x");
    assert_golden("jit_static_argnames", 0, &reduce_by(&x, "sum"));
    assert_golden("jit_static_argnames", 1, &reduce_by(&x, "prod"));
    assert_eq!(reduce_by::cache_info().traces, 2);
    let sum_ir = reduce_by::jaxpr(&x, "sum").simplified.to_string();
    assert!(sum_ir.contains("reduce_sum") && !sum_ir.contains("reduce_prod"), "{sum_ir}");
}

fn slow_f(x: &Array) -> Array {
    x * x + x * 2.0
}

#[jit]
fn fast_f(x: &Array) -> Array {
    x * x + x * 2.0
}

#[test]
fn golden_jit_slow_f() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("jit_slow_f", "x");
    let fast = fast_f(&x);
    let slow = slow_f(&x);
    assert_golden("jit_slow_f", 0, &fast);
    assert_golden("jit_slow_f", 1, &slow);
    assert_eq!(vals(&fast), vals(&slow));
}

#[derive(Tree, Clone, Debug)]
struct AB {
    a: Array,
    b: Array,
}

/// Field order follows JAX's sorted dict keys, so the leaves line up with the golden outputs.
#[derive(Tree, Clone, Debug)]
struct ProdSum {
    prod: Array,
    sum: Array,
}

#[jit]
fn prod_sum(d: &AB) -> ProdSum {
    ProdSum { sum: &d.a + &d.b, prod: &d.a * &d.b }
}

#[jit]
fn prod_sum_tuple(d: (Array, Array)) -> (Array, Array) {
    let (a, b) = d;
    (&a * &b, &a + &b)
}

#[test]
fn golden_jit_pytree_in_out() {
    let _x64 = rjax::config::x64_scope(true);
    let d = AB { a: input("jit_pytree_in_out", "a"), b: input("jit_pytree_in_out", "b") };
    let out = prod_sum(&d);
    let leaves = tree::leaves(&out);
    assert_golden("jit_pytree_in_out", 0, &leaves[0]);
    assert_golden("jit_pytree_in_out", 1, &leaves[1]);
    assert_eq!(tree::structure(&out).to_string(), "ProdSum { prod: *, sum: * }");
    let (p, s) = prod_sum_tuple((d.a.clone(), d.b.clone()));
    assert_golden("jit_pytree_in_out", 0, &p);
    assert_golden("jit_pytree_in_out", 1, &s);
}

#[jit]
fn static_range_loop(x: &Array) -> Array {
    let mut y = x.clone();
    for i in 0..4 {
        y = y.sin() * x + i;
    }
    y
}

#[jit]
fn static_range_loop_scalar(x: f32) -> f32 {
    let mut y = x.clone();
    for i in 0..4 {
        y = y.sin() * &x + i;
    }
    y
}

#[test]
fn golden_python_for_loop_static_range() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("python_for_loop_static_range", "x");
    assert_golden("python_for_loop_static_range", 0, &static_range_loop(&x));
    let want = output("python_for_loop_static_range", 0);
    assert_eq!(static_range_loop_scalar(scalar(&x)), scalar(&want));
}

#[traceable]
fn rec(x: &Array, depth: usize) -> Array {
    if depth == 0 {
        return x.clone();
    }
    rec(x, depth - 1).cos() * x
}

#[jit]
fn rec3(x: &Array) -> Array {
    rec(x, 3)
}

#[jit]
fn rec_n(x: &Array, depth: usize) -> Array {
    rec(x, depth)
}

#[test]
fn golden_python_recursion_fixed_depth() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("python_recursion_fixed_depth", "x");
    assert_golden("python_recursion_fixed_depth", 0, &rec3(&x));
    // Eagerly, the traceable function runs op by op and gives the same value.
    assert_golden("python_recursion_fixed_depth", 0, &rec(&x, 3));
    assert_eq!(scalar(&rec3(&x)), scalar(&rec(&x, 3)));
    // Recursion depth is static: unrolled into that many cos/mul pairs.
    for depth in 0..5 {
        let text = rec_n::jaxpr(&x, depth).traced.to_string();
        assert_eq!(text.matches(" cos ").count(), depth, "{text}");
        assert_eq!(scalar(&rec_n(&x, depth)), scalar(&rec(&x, depth)));
    }
    assert_eq!(rec_n::cache_info().traces, 5);
}

#[jit]
fn abs_val(x: &Array) -> Array {
    if x > 0.0 {
        x.clone()
    } else {
        -x
    }
}

#[jit]
fn abs_val_scalar(x: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        -x
    }
}

#[test]
fn golden_abs_val_traced_if() {
    let _x64 = rjax::config::x64_scope(true);
    for name in ["abs_val_grad_at_1.0", "abs_val_grad_at_neg1.0"] {
        let x = input(name, "x");
        assert_golden(name, 0, &abs_val(&x));
        assert_eq!(abs_val_scalar(scalar(&x)), scalar(&output(name, 0)));
    }
    // Both inputs share one signature: one trace, the branch chosen when the plan runs.
    assert_eq!(abs_val::cache_info().traces, 1);
    assert_eq!(abs_val_scalar::cache_info().traces, 1);
    assert_eq!(abs_val_scalar(-2.5), 2.5);
    assert_eq!(abs_val_scalar(0.0), 0.0);
}

#[jit]
fn lax_cond_sin_cos(x: &Array) -> Array {
    lax::cond(x.gt(0.0), |x: Array| x.sin() * &x, |x: Array| x.cos() - &x, x.clone())
}

#[test]
fn golden_cond_branch_values() {
    let _x64 = rjax::config::x64_scope(true);
    for name in ["cond_true_branch_value_grad", "cond_false_branch_value_grad"] {
        let x = input(name, "x");
        assert_golden(name, 0, &lax_cond_sin_cos(&x));
    }
    assert_eq!(lax_cond_sin_cos::cache_info().traces, 1);
    let text = lax_cond_sin_cos::jaxpr(&input("cond_true_branch_value_grad", "x")).to_string();
    assert!(text.contains("cond[") && text.contains(" sin ") && text.contains(" cos "), "{text}");
}

// --- Traced `if` -----------------------------------------------------------------------------

#[jit]
fn grow_or_shrink(x: &Array) -> Array {
    if x.sum() > 0.0 {
        x * 2.0
    } else {
        x.exp()
    }
}

#[test]
fn traced_if_takes_both_branches_at_run_time() {
    let pos = jnp::array([1.0f32, 2.0, -0.5]);
    let neg = jnp::array([-1.0f32, 2.0, -3.5]);
    assert_eq!(vals(&grow_or_shrink(&pos)), vals(&(&pos * 2.0)));
    assert_eq!(vals(&grow_or_shrink(&neg)), vals(&neg.exp()));
    assert_eq!(vals(&grow_or_shrink(&pos)), vals(&(&pos * 2.0)));
    let info = grow_or_shrink::cache_info();
    assert_eq!((info.traces, info.hits), (1, 2), "{info:?}");
    let text = grow_or_shrink::jaxpr(&pos).simplified.to_string();
    assert!(
        text.contains(" exp ") && text.contains(" mul "),
        "both branches are in the IR: {text}"
    );
}

#[jit]
fn branch_assigns_one(x: &Array) -> Array {
    let mut y = x + 1.0;
    if x.sum() > 0.0 {
        y = y * 10.0;
    } else {
        y = y - 10.0;
    }
    y + x
}

#[jit]
fn branch_assigns_two(x: &Array) -> (Array, Array) {
    let mut a = x * 2.0;
    let mut b = x + 1.0;
    let c = x.sum();
    if c > 0.0 {
        a = a.exp();
        b = &b * 3.0;
    }
    (a, b)
}

#[jit]
fn branch_assigns_in_both(x: &Array) -> (Array, Array) {
    let mut a = x * 2.0;
    let mut b = x + 1.0;
    if x.sum() > 0.0 {
        a = a.exp();
        b = &b * 3.0;
    } else {
        a = a.sin();
    }
    (a, b)
}

#[jit]
fn branch_accumulates(x: &Array) -> Array {
    let mut acc = x.clone();
    if x.max() > 1.0 {
        acc += x;
        acc *= 2.0;
    }
    acc
}

#[test]
fn traced_if_assigns_outer_locals() {
    let pos = jnp::array([1.0f32, 0.5]);
    let neg = jnp::array([-1.0f32, 0.5]);
    assert_eq!(vals(&branch_assigns_one(&pos)), vals(&((&pos + 1.0) * 10.0 + &pos)));
    assert_eq!(vals(&branch_assigns_one(&neg)), vals(&((&neg + 1.0) - 10.0 + &neg)));
    let (a, b) = branch_assigns_two(&pos);
    assert_eq!(vals(&a), vals(&(&pos * 2.0).exp()));
    assert_eq!(vals(&b), vals(&((&pos + 1.0) * 3.0)));
    let (a, b) = branch_assigns_two(&neg);
    assert_eq!(vals(&a), vals(&(&neg * 2.0)), "untouched when the branch is not taken");
    assert_eq!(vals(&b), vals(&(&neg + 1.0)));
    let (a, b) = branch_assigns_in_both(&pos);
    assert_eq!(vals(&a), vals(&(&pos * 2.0).exp()));
    assert_eq!(vals(&b), vals(&((&pos + 1.0) * 3.0)));
    let (a, b) = branch_assigns_in_both(&neg);
    assert_eq!(vals(&a), vals(&(&neg * 2.0).sin()));
    assert_eq!(vals(&b), vals(&(&neg + 1.0)));
    let big = jnp::array([3.0f32, -1.0]);
    assert_eq!(vals(&branch_accumulates(&big)), vec![12.0, -4.0]);
    assert_eq!(vals(&branch_accumulates(&pos)), vec![1.0, 0.5]);
    for f in [branch_assigns_one::cache_info, branch_accumulates::cache_info] {
        assert_eq!(f().traces, 1);
    }
}

#[jit]
fn piecewise(x: f32) -> f32 {
    if x > 1.0 {
        x * 2.0
    } else if x > 0.0 {
        x * 3.0
    } else if x > -1.0 {
        x.sin()
    } else {
        0.0
    }
}

#[test]
fn else_if_chains() {
    assert_eq!(piecewise(2.0), 4.0);
    assert_eq!(piecewise(0.5), 1.5);
    assert_eq!(piecewise(-0.5), (-0.5f32).sin());
    assert_eq!(piecewise(-3.0), 0.0);
    assert_eq!(piecewise::cache_info().traces, 1);
    let text = piecewise::jaxpr(0.5).traced.to_string();
    assert_eq!(text.matches("cond[").count(), 3, "{text}");
}

#[jit]
fn nested_traced_if(x: &Array) -> Array {
    let s = x.sum();
    if s > 0.0 {
        if s > 10.0 {
            x * 2.0
        } else {
            x * 3.0
        }
    } else {
        x.clone()
    }
}

#[test]
fn nested_traced_ifs() {
    let small = jnp::array([1.0f32, 2.0]);
    let large = jnp::array([10.0f32, 2.0]);
    let negative = jnp::array([-10.0f32, 2.0]);
    assert_eq!(vals(&nested_traced_if(&small)), vec![3.0, 6.0]);
    assert_eq!(vals(&nested_traced_if(&large)), vec![20.0, 4.0]);
    assert_eq!(vals(&nested_traced_if(&negative)), vec![-10.0, 2.0]);
    assert_eq!(nested_traced_if::cache_info().traces, 1);
}

#[jit]
fn static_bool_flag(x: &Array, negate: bool, times: usize) -> Array {
    let mut y = if negate { -x } else { x.clone() };
    if times > 1 {
        y = y * times as f32;
    }
    y
}

#[test]
fn static_if_on_bool_and_integer() {
    let x = jnp::array([1.0f32, -2.0]);
    assert_eq!(vals(&static_bool_flag(&x, true, 1)), vec![-1.0, 2.0]);
    assert_eq!(vals(&static_bool_flag(&x, false, 3)), vec![3.0, -6.0]);
    assert_eq!(vals(&static_bool_flag(&x, true, 3)), vec![-3.0, 6.0]);
    assert_eq!(static_bool_flag::cache_info().traces, 3);
    let text = static_bool_flag::jaxpr(&x, false, 1).simplified.to_string();
    assert!(!text.contains("cond") && !text.contains("neg") && !text.contains("mul"), "{text}");
}

// --- Loops over pytrees ----------------------------------------------------------------------

#[jit]
fn mlp(params: &[(Array, Array)], x: &Array) -> Array {
    let mut h = x.clone();
    for (w, b) in params {
        h = (h.dot(w) + b).tanh();
    }
    h
}

fn mlp_eager(params: &[(Array, Array)], x: &Array) -> Array {
    let mut h = x.clone();
    for (w, b) in params {
        h = (h.dot(w) + b).tanh();
    }
    h
}

fn layers(n: usize) -> Vec<(Array, Array)> {
    (0..n)
        .map(|k| {
            let w = jnp::arange(9.0).reshape([3, 3]) / (10.0 + k as f64);
            let b = jnp::full([3], 0.1f32 * k as f32);
            (w, b)
        })
        .collect()
}

#[test]
fn loops_over_pytrees_specialize_per_length() {
    let x = jnp::linspace(-1.0, 1.0, 6).reshape([2, 3]);
    for n in 1..=3 {
        let p = layers(n);
        assert_eq!(vals(&mlp(&p, &x)), vals(&mlp_eager(&p, &x)), "{n} layers");
        assert_eq!(mlp::cache_info().traces, n as u64, "a new length is a new specialization");
        let text = mlp::jaxpr(&p, &x).traced.to_string();
        assert_eq!(text.matches(" tanh ").count(), n, "unrolled: {text}");
    }
    let _ = mlp(&layers(2), &x);
    let info = mlp::cache_info();
    assert_eq!((info.traces, info.hits, info.plans), (3, 1, 3), "{info:?}");
}

#[jit]
fn loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Array {
    (predict(params, inputs) - targets).square().sum()
}

#[test]
fn traceable_pytree_function_called_from_jit() {
    let params = layers(3);
    let inputs = jnp::linspace(-1.0, 1.0, 6).reshape([2, 3]);
    let targets = jnp::ones([2, 3]);
    let want = (predict(&params, &inputs) - &targets).square().sum();
    assert_eq!(scalar(&loss(&params, &inputs, &targets)), scalar(&want));
    // The last layer's tanh is computed but unused: simplification drops it.
    let ir = loss::jaxpr(&params, &inputs, &targets);
    assert_eq!(ir.traced.to_string().matches(" tanh ").count(), 3);
    assert_eq!(ir.simplified.to_string().matches(" tanh ").count(), 2);
}

#[jit]
fn enumerate_weights(xs: &[Array]) -> Array {
    let mut total = jnp::zeros([2]);
    for (i, x) in xs.iter().enumerate() {
        total = total + x * (i as f32 + 1.0);
    }
    total
}

#[test]
fn enumerate_gives_static_indices() {
    let xs = vec![jnp::ones([2]), jnp::full([2], 2.0f32), jnp::full([2], -1.0f32)];
    assert_eq!(vals(&enumerate_weights(&xs)), vec![1.0 + 4.0 - 3.0; 2]);
    assert_eq!(vals(&enumerate_weights(&xs[..1])), vec![1.0; 2]);
    assert_eq!(enumerate_weights::cache_info().traces, 2);
}

// --- Closures and calls ----------------------------------------------------------------------

#[jit]
fn with_closures(x: &Array) -> Array {
    let scale = x.sum();
    let square = |v: &Array| v * v;
    let scaled = |v: Array| v * &scale;
    let shift = |v: Array, by: f32| v + by;
    shift(scaled(square(x)), 0.5)
}

#[test]
fn closures_called_in_the_body() {
    let x = jnp::array([1.0f32, -2.0, 3.0]);
    let want = (&x * &x) * x.sum() + 0.5;
    assert_eq!(vals(&with_closures(&x)), vals(&want));
    let text = with_closures::jaxpr(&x).traced.to_string();
    assert_eq!(text.matches(" mul ").count(), 2, "{text}");
}

mod a {
    use rjax::prelude::*;

    #[traceable]
    pub fn f(x: &Array) -> Array {
        x.tanh() * 2.0
    }

    pub mod b {
        use rjax::prelude::*;

        #[traceable]
        pub fn g(x: &Array, k: i32) -> Array {
            super::f(x) + k
        }
    }
}

use a::b::g;
use a::f;

#[jit]
fn cross_module(x: &Array) -> Array {
    a::f(x) + f(x) + a::b::g(x, 1) + g(x, 2) + crate::a::f(x)
}

#[test]
fn calls_across_modules() {
    let x = jnp::array([0.5f32, -1.0]);
    let f_eager = x.tanh() * 2.0;
    let want = &f_eager + &f_eager + (&f_eager + 1) + (&f_eager + 2) + &f_eager;
    assert_eq!(vals(&cross_module(&x)), vals(&want));
    // Eagerly, the traceable functions run op by op.
    assert_eq!(vals(&a::b::g(&x, 1)), vals(&(&f_eager + 1)));
    // Inlined into one program: five tanh calls, no call primitive.
    let text = cross_module::jaxpr(&x).traced.to_string();
    assert_eq!(text.matches(" tanh ").count(), 5, "{text}");
    // CSE merges the five identical calls.
    let simple = cross_module::jaxpr(&x).simplified.to_string();
    assert_eq!(simple.matches(" tanh ").count(), 1, "{simple}");
}

#[traceable]
fn tanh_scalar(x: f32) -> f32 {
    let y = (-2.0 * x).exp();
    (1.0 - y) / (1.0 + y)
}

#[jit]
fn tanh_twice(x: f32) -> f32 {
    tanh_scalar(tanh_scalar(x))
}

#[jit]
fn tanh_of_array(x: &Array) -> Array {
    tanh_scalar(x) * 2.0
}

#[test]
fn traceable_scalar_function_eager_and_jitted() {
    let eager = tanh_scalar(1.0);
    assert!((eager - 1.0f32.tanh()).abs() < 1e-6, "{eager}");
    let e2 = tanh_scalar(eager);
    assert_eq!(tanh_twice(1.0), e2);
    assert_eq!(tanh_twice(1.0), tanh_scalar(tanh_scalar(1.0)));
    let x = Array::from(0.75f32);
    assert_eq!(scalar(&tanh_of_array(&x)), tanh_scalar(0.75) * 2.0);
    // The scalar parameter is traced: every value reuses one plan.
    for k in 0..5 {
        let v = k as f32 / 4.0;
        assert_eq!(tanh_twice(v), tanh_scalar(tanh_scalar(v)));
    }
    assert_eq!(tanh_twice::cache_info().traces, 1);
}

// --- IR snapshots ----------------------------------------------------------------------------

#[test]
fn ir_of_an_elementwise_function() {
    let x = jnp::arange(4.0);
    let traced = fast_f::jaxpr(&x);
    let want = "\
{ lambda ; a:f32[4]. let
    b:f32[4] = mul a a
    c:f32[4] = mul a 2.:f32[]
    d:f32[4] = add b c
  in (d,) }";
    assert_eq!(traced.traced.to_string(), want);
    assert_eq!(traced.simplified.to_string(), want);
    assert_eq!(traced.out_def.to_string(), "*");
}

#[test]
fn ir_of_a_scalar_function() {
    let want = "\
{ lambda ; a:f32[]. let
    b:f32[] = mul -2.:f32[] a
    c:f32[] = exp b
    d:f32[] = sub 1.:f32[] c
    e:f32[] = add 1.:f32[] c
    f:f32[] = div d e
  in (f,) }";
    assert_eq!(tanh_scalar::jaxpr(1.0).traced.to_string(), want);
}

#[test]
fn ir_of_nested_traced_ifs() {
    let x = jnp::arange(4.0);
    let want = "\
{ lambda ; a:f32[4]. let
    b:f32[] = reduce_sum[axes=(0,)] a
    c:bool[] = gt b 0.:f32[]
    d:f32[4] = cond[
      false={ lambda ; a:f32[4] b:f32[]. let
        in (a,) }
      true={ lambda ; a:f32[4] b:f32[]. let
          c:bool[] = gt b 10.:f32[]
          d:f32[4] = cond[
            false={ lambda ; a:f32[4]. let
                b:f32[4] = mul a 3.:f32[]
              in (b,) }
            true={ lambda ; a:f32[4]. let
                b:f32[4] = mul a 2.:f32[]
              in (b,) }
          ] c a
        in (d,) }
    ] c a b
  in (d,) }";
    let traced = nested_traced_if::jaxpr(&x);
    assert_eq!(traced.traced.to_string(), want);
    assert_eq!(traced.simplified.to_string(), want);
}

#[jit]
fn redundant(x: &Array) -> Array {
    let a = x.sin();
    let b = x.sin();
    let unused = x.exp() * 3.0;
    let c = &a * &b;
    let d = &a * &b;
    c + d
}

#[test]
fn ir_after_cse_and_dce() {
    let x = jnp::zeros([2, 3]);
    let traced = redundant::jaxpr(&x);
    assert_eq!(
        traced.traced.to_string(),
        "\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sin a
    c:f32[2,3] = sin a
    d:f32[2,3] = exp a
    e:f32[2,3] = mul d 3.:f32[]
    f:f32[2,3] = mul b c
    g:f32[2,3] = mul b c
    h:f32[2,3] = add f g
  in (h,) }"
    );
    assert_eq!(
        traced.simplified.to_string(),
        "\
{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = sin a
    c:f32[2,3] = mul b b
    d:f32[2,3] = add c c
  in (d,) }"
    );
    // The simplified program computes the same thing.
    let x = jnp::linspace(-2.0, 2.0, 6).reshape([2, 3]);
    let s = x.sin();
    assert_eq!(vals(&redundant(&x)), vals(&(&s * &s + &s * &s)));
}

#[jit]
fn swapped_operands(x: &Array, y: &Array) -> Array {
    let (m, n) = (x * y, y * x);
    let (p, q) = (jnp::maximum(x, y), jnp::maximum(y, x));
    (m + n) * (p - q) + (x - y) + (y - x)
}

#[test]
fn cse_merges_commutative_operations_given_their_operands_in_either_order() {
    let (x, y) = (jnp::zeros([2]), jnp::zeros([2]));
    // One product; both maxima (whose result, for NaNs and signed zeros, depends on the
    // order); both differences.
    assert_eq!(
        swapped_operands::jaxpr(&x, &y).simplified.to_string(),
        "\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = mul a b
    d:f32[2] = max a b
    e:f32[2] = max b a
    f:f32[2] = add c c
    g:f32[2] = sub d e
    h:f32[2] = mul f g
    i:f32[2] = sub a b
    j:f32[2] = add h i
    k:f32[2] = sub b a
    l:f32[2] = add j k
  in (l,) }"
    );
}

#[jit]
fn scaled_by_ones(x: &Array, row: &Array) -> Array {
    let (ones_row, ones) = (jnp::ones([3]), jnp::ones([2, 3]));
    // The first two products are `x`; the third broadcasts `row`, so it stays.
    (x * &ones_row + &ones * x * 1.0) * (&ones * row)
}

#[test]
fn products_with_ones_that_change_nothing_are_dropped() {
    let (x, row) = (jnp::linspace(-1.0, 1.0, 6).reshape([2, 3]), jnp::arange(3.0));
    assert_eq!(
        scaled_by_ones::jaxpr(&x, &row).simplified.to_string(),
        "\
{ lambda a:f32[2,3]; b:f32[2,3] c:f32[3]. let
    d:f32[2,3] = add b b
    e:f32[2,3] = mul a c
    f:f32[2,3] = mul d e
  in (f,) }"
    );
    let expected = (&x * 2.0) * jnp::broadcast_to(&row, [2, 3]);
    assert_eq!(vals(&scaled_by_ones(&x, &row)), vals(&expected));
}

#[jit]
fn shuffled(x: &Array) -> Array {
    let back = x.transpose(Some(&[1, 0, 2])).transpose(Some(&[1, 0, 2]));
    let rolled = x.transpose(Some(&[1, 2, 0])).transpose(Some(&[1, 2, 0]));
    let flat = x.reshape([6, 4]).reshape([24]).reshape([2, 3, 4]);
    (back + flat) * rolled.transpose(Some(&[1, 2, 0]))
}

#[test]
fn chains_of_transposes_and_reshapes_compose_into_one_or_none() {
    let x = jnp::arange(24.0).reshape([2, 3, 4]);
    // A transpose undone and a reshape back to the shape it started from vanish; two
    // transposes that roll the axes twice are one; the last one completes the cycle.
    assert_eq!(
        shuffled::jaxpr(&x).simplified.to_string(),
        "\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,3,4] = add a a
    c:f32[2,3,4] = mul b a
  in (c,) }"
    );
    let x3 = &x * &x * 2.0;
    assert_eq!(vals(&shuffled(&x)), vals(&x3));
}

#[jit]
fn with_constants(x: &Array) -> Array {
    let ramp = jnp::arange(3.0) * 2.0;
    (x + &ramp) * jnp::ones([2, 3]) + &ramp
}

#[test]
fn ir_lists_captured_constants_first() {
    let x = jnp::zeros([3]);
    let traced = with_constants::jaxpr(&x);
    assert_eq!(
        traced.traced.to_string(),
        "\
{ lambda a:f32[3] b:f32[2,3]; c:f32[3]. let
    d:f32[3] = add c a
    e:f32[2,3] = mul d b
    f:f32[2,3] = add e a
  in (f,) }"
    );
    let x = jnp::array([1.0f32, -1.0, 0.5]);
    assert_eq!(vals(&with_constants(&x)), vec![1.0, 3.0, 8.5, 1.0, 3.0, 8.5]);
}

#[test]
fn ir_of_a_pytree_function() {
    let d = AB { a: jnp::ones([2]), b: jnp::zeros([2]) };
    let traced = prod_sum::jaxpr(&d);
    assert_eq!(
        traced.traced.to_string(),
        "\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = add a b
    d:f32[2] = mul a b
  in (d, c) }"
    );
    assert_eq!(traced.out_def.to_string(), "ProdSum { prod: *, sum: * }");
}

#[jit]
fn integer_closure(x: &Array, k: usize) -> Array {
    let axes: Vec<usize> = (0..x.ndim()).map(|a| a + k).collect();
    x * axes.len() as f32
}

#[test]
fn untyped_closure_parameters_may_hold_integers() {
    let x = jnp::ones([2, 2]);
    assert_eq!(integer_closure(&x, 3).to_vec::<f32>().unwrap(), vec![2.0; 4]);
}
