//! Which arguments are traced and which static, as JAX decides them: integers that are data
//! (`i32`, `u32`, `i64`) are traced as weakly typed 0-d arrays, so a step counter never
//! retraces; `static_argnames` / `static_argnums` make any parameter static (floats keyed by
//! their bits, tuples, user enums); `Option` parameters are structure; and
//! `RJAX_LOG_COMPILES=1` says why each trace happened.

use rjax::prelude::*;

fn vals(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

// --- Traced integers -------------------------------------------------------------------------

#[jit]
fn scaled_step(x: &Array, i: u32) -> Array {
    x * i + 1.0
}

#[test]
fn a_step_counter_traces_once_for_a_hundred_values() {
    let x = jnp::array([1.0f32, 2.0]);
    for i in 0..100u32 {
        let y = scaled_step(&x, i);
        assert_eq!(vals(&y), vec![i as f32 + 1.0, 2.0 * i as f32 + 1.0]);
        // A weak integer does not change the float32 result's dtype.
        assert_eq!(y.dtype(), DType::F32);
    }
    assert_eq!(scaled_step::cache_info().traces, 1);
}

#[jit]
fn counters(a: i32, b: u32, c: i64) -> (Array, Array, Array, Array) {
    (a.clone(), b.clone(), c.clone(), b * 2)
}

#[test]
fn traced_integers_keep_their_dtype_and_are_weak() {
    let _x64 = rjax::config::x64_scope(true);
    let (a, b, c, d) = counters(4, 5, -6);
    assert_eq!((a.dtype(), b.dtype(), c.dtype()), (DType::I32, DType::U32, DType::I64));
    assert!(a.is_weak() && b.is_weak() && c.is_weak());
    assert_eq!(c.item::<i64>().unwrap(), -6);
    // Two weak integers give the default integer type, as two Python ints do in JAX.
    assert_eq!((d.dtype(), d.is_weak(), d.item::<i32>().unwrap()), (DType::I32, true, 10));
    // Weakly typed, an int32 counter does not widen an int8 array (JAX's promotion).
    let small = jnp::array([1i8, 2]);
    assert_eq!((&small + &a).dtype(), DType::I8);
}

#[jit]
fn dynamic_row(x: &Array, i: i32) -> Array {
    lax::dynamic_slice(x, &[i, Array::from(0i32)], [1, 2])
}

#[test]
fn a_traced_integer_is_an_index() {
    let x = jnp::arange(6.0).reshape([3, 2]);
    for i in 0..3 {
        assert_eq!(vals(&dynamic_row(&x, i)), vec![2.0 * i as f32, 2.0 * i as f32 + 1.0]);
    }
    assert_eq!(dynamic_row::cache_info().traces, 1);
}

#[jit]
fn sum_first(x: &Array, n: u32) -> Array {
    // A traced bound: the loop becomes a `while_loop`, traced once for every `n`.
    lax::fori_loop(
        0,
        n,
        |i, acc: Array| acc + lax::dynamic_index_in_dim(x, &i, 0, false),
        jnp::zeros([]),
    )
}

#[test]
fn a_traced_integer_bounds_a_fori_loop() {
    let x = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
    assert_eq!(vals(&sum_first(&x, 2)), vec![3.0]);
    assert_eq!(vals(&sum_first(&x, 4)), vec![10.0]);
    assert_eq!(sum_first::cache_info().traces, 1);
}

#[grad]
fn scaled_square(x: f32, k: i32) -> f32 {
    x * x * k
}

#[test]
fn grad_with_a_traced_integer_beside() {
    assert_eq!(scaled_square(3.0, 2), 12.0);
    assert_eq!(scaled_square(3.0, -1), -6.0);
}

// --- static_argnames / static_argnums -----------------------------------------------------

#[jit(static_argnames = ("mass",))]
fn momentum_step(v: &Array, g: &Array, mass: f32) -> Array {
    // Rust control flow on a static float.
    if mass == 0.0 {
        g.clone()
    } else {
        v * mass + g
    }
}

#[test]
fn a_static_float_is_keyed_by_its_value() {
    let (v, g) = (jnp::array([1.0f32, 2.0]), jnp::array([0.5f32, 0.5]));
    assert_eq!(vals(&momentum_step(&v, &g, 0.0)), vec![0.5, 0.5]);
    assert_eq!(vals(&momentum_step(&v, &g, 0.9)), vec![1.4, 2.3]);
    assert_eq!(vals(&momentum_step(&v, &g, 0.9)), vec![1.4, 2.3]);
    let info = momentum_step::cache_info();
    assert_eq!((info.traces, info.hits), (2, 1), "{info:?}");
    // The value is a constant of the program, not an input.
    let ir = momentum_step::jaxpr(&v, &g, 0.5).simplified.to_string();
    assert!(ir.contains("0.5"), "{ir}");
}

#[jit(static_argnums = 1)]
fn clipped(x: &Array, limits: (i32, i32)) -> Array {
    let (lo, hi) = limits;
    x.clip(lo as f32, hi as f32)
}

#[test]
fn a_static_tuple_of_integers() {
    let x = jnp::array([-5.0f32, 0.5, 5.0]);
    assert_eq!(vals(&clipped(&x, (-1, 1))), vec![-1.0, 0.5, 1.0]);
    assert_eq!(vals(&clipped(&x, (0, 2))), vec![0.0, 0.5, 2.0]);
    assert_eq!(vals(&clipped(&x, (-1, 1))), vec![-1.0, 0.5, 1.0]);
    assert_eq!(clipped::cache_info().traces, 2);
}

#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Reduce {
    Sum,
    Max,
}

#[jit(static_argnames = "how")]
fn reduce_with(x: &Array, how: Reduce) -> Array {
    match how {
        Reduce::Sum => x.sum(),
        Reduce::Max => x.max(),
    }
}

#[test]
fn a_static_enum_drives_a_match() {
    let x = jnp::array([1.0f32, 4.0, 2.0]);
    assert_eq!(vals(&reduce_with(&x, Reduce::Sum)), vec![7.0]);
    assert_eq!(vals(&reduce_with(&x, Reduce::Max)), vec![4.0]);
    assert_eq!(reduce_with::cache_info().traces, 2);
}

#[jit(static_argnames = ("n",))]
fn powered(x: &Array, n: i32) -> Array {
    // An `i32` made static, so it can bound a Rust loop.
    let mut y = x.clone();
    for _ in 1..n {
        y = y * x;
    }
    y
}

#[test]
fn an_integer_made_static_drives_a_rust_loop() {
    let x = jnp::array([2.0f32, 3.0]);
    assert_eq!(vals(&powered(&x, 3)), vec![8.0, 27.0]);
    assert_eq!(vals(&powered(&x, 2)), vec![4.0, 9.0]);
    assert_eq!(powered::cache_info().traces, 2);
}

#[vmap(in_axes = (0, None), static_argnames = ("scale",))]
fn scale_rows(row: &Array, scale: f64) -> Array {
    row * scale
}

#[test]
fn static_argnames_on_another_transform() {
    let x = jnp::array([[1.0f32, 2.0], [3.0, 4.0]]);
    assert_eq!(vals(&scale_rows(&x, 2.0)), vec![2.0, 4.0, 6.0, 8.0]);
}

// --- Options are structure ---------------------------------------------------------------

#[jit]
fn affine(x: &Array, bias: Option<&Array>) -> Array {
    match bias {
        Some(b) => x * 2.0 + b,
        None => x * 2.0,
    }
}

#[test]
fn an_option_of_a_reference_is_a_parameter_and_match_on_it_is_static() {
    let x = jnp::array([1.0f32, 2.0]);
    let b = jnp::array([10.0f32, 20.0]);
    assert_eq!(vals(&affine(&x, Some(&b))), vec![12.0, 24.0]);
    assert_eq!(vals(&affine(&x, None)), vec![2.0, 4.0]);
    assert_eq!(vals(&affine(&x, Some(&b))), vec![12.0, 24.0]);
    assert_eq!(affine::cache_info().traces, 2);
}

#[grad]
fn loss_with_optional_bias(w: &Array, bias: Option<&Array>) -> Array {
    let y = match bias {
        Some(b) => w * w + b,
        None => w * w,
    };
    y.sum()
}

#[test]
fn grad_through_an_optional_parameter() {
    let w = jnp::array([1.0f32, -2.0]);
    let b = jnp::array([3.0f32, 3.0]);
    assert_eq!(vals(&loss_with_optional_bias(&w, Some(&b))), vec![2.0, -4.0]);
    assert_eq!(vals(&loss_with_optional_bias(&w, None)), vec![2.0, -4.0]);
}

// --- The compile log ----------------------------------------------------------------------

#[jit]
fn logged(x: &Array, n: usize) -> Array {
    x * n as f32
}

/// Runs the calls whose log the test below reads (in a child process, so that the log's
/// environment variable and its stderr are its own).
#[test]
fn logged_calls() {
    if std::env::var_os("RJAX_STATIC_ARGS_CHILD").is_none() {
        return;
    }
    let _x64 = rjax::config::x64_scope(true);
    let (a, b) = (jnp::zeros([3]), jnp::zeros([4]));
    logged(&a, 2);
    logged(&a, 2);
    logged(&a, 3);
    logged(&b, 3);
    logged(&b.astype(DType::F64), 3);
    for n in 10..20 {
        logged(&a, n);
    }
}

#[test]
fn the_compile_log_says_why_each_trace_happened() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "logged_calls", "--nocapture", "--test-threads=1"])
        .env("RJAX_STATIC_ARGS_CHILD", "1")
        .env("RJAX_LOG_COMPILES", "1")
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("rjax: tracing")).collect();
    assert_eq!(lines.len(), 14, "{log}");
    assert!(lines[0].contains("function `logged` (trace 1): first call"), "{log}");
    assert!(lines[1].ends_with("argument `n`: static value 2 → 3"), "{log}");
    assert!(lines[2].ends_with("argument `x`: shape [3] → [4]"), "{log}");
    assert!(lines[3].ends_with("argument `x`: dtype float32 → float64"), "{log}");
    let warning: Vec<&str> = log.lines().filter(|l| l.contains("was traced 10 times")).collect();
    assert_eq!(warning.len(), 1, "one warning: {log}");
    assert!(warning[0].contains("argument `n` changed in 7 of them"), "{log}");
}

// --- Traced integers as seeds ---------------------------------------------------------------

#[jit]
fn noise_at(key_data: &Array, step: u32) -> Array {
    let key = random::fold_in(&random::wrap_key_data(key_data), step);
    random::normal(&key, [2])
}

#[test]
fn a_traced_step_counter_folds_into_a_key() {
    let key = random::key(7);
    for step in [0u32, 1, 5, 1000] {
        let eager = random::normal(&random::fold_in(&key, step), [2]);
        assert_eq!(vals(&noise_at(&random::key_data(&key), step)), vals(&eager));
    }
    assert_eq!(noise_at::cache_info().traces, 1);
}
