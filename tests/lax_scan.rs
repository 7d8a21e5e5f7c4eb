//! `lax::scan`, `lax::map` and `lax::fori_loop` with static bounds: JAX's values
//! (tests/data/golden.json), inside `#[jit]`, under `grad` and `vmap`, and their errors.

mod common;

use common::{assert_golden, input, panic_text};
use rjax::lax::ScanOptions;
use rjax::prelude::*;
use rjax::transform::ad::api::grad_of;

fn cumsum_step(carry: Array, x: Array) -> (Array, Array) {
    let carry = carry + x;
    (carry.clone(), carry)
}

#[jit]
fn cumsum_jit(init: &Array, xs: &Array) -> (Array, Array) {
    lax::scan(cumsum_step, init.clone(), xs.clone())
}

#[grad]
fn weighted_cumsum(xs: &Array) -> Array {
    let (_, ys) = lax::scan(cumsum_step, jnp::zeros([]), xs.clone());
    (ys * jnp::arange(6.0)).sum()
}

#[test]
fn scan_cumsum_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "scan_cumsum";
    let (init, xs) = (input(name, "init"), input(name, "xs"));
    let (last, ys) = lax::scan(cumsum_step, init.clone(), xs.clone());
    assert_golden(name, 0, &last);
    assert_golden(name, 1, &ys);
    let (last, ys) = cumsum_jit(&init, &xs);
    assert_golden(name, 0, &last);
    assert_golden(name, 1, &ys);
    assert_golden("scan_cumsum_grad", 0, &weighted_cumsum(&input("scan_cumsum_grad", "xs")));
}

type RnnParams = (Array, Array, Array);

#[traceable]
fn rnn(params: &RnnParams, h0: &Array, xs: &Array) -> (Array, Array) {
    let (wh, wx, b) = params;
    lax::scan(
        |h: Array, x: Array| {
            let h = (wh.dot(&h) + wx.dot(&x) + b).tanh();
            (h.clone(), h)
        },
        h0.clone(),
        xs.clone(),
    )
}

#[jit]
fn rnn_jit(params: &RnnParams, h0: &Array, xs: &Array) -> (Array, Array) {
    rnn(params, h0, xs)
}

fn rnn_case() -> (RnnParams, Array, Array) {
    let name = "scan_rnn_value";
    let params = (input(name, "Wh"), input(name, "Wx"), input(name, "b"));
    (params, input(name, "h0"), input(name, "xs"))
}

#[test]
fn scan_rnn_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (params, h0, xs) = rnn_case();
    let (h, hs) = rnn(&params, &h0, &xs);
    assert_golden("scan_rnn_value", 0, &h);
    assert_golden("scan_rnn_value", 1, &hs);
    let (h, hs) = rnn_jit(&params, &h0, &xs);
    assert_golden("scan_rnn_value", 0, &h);
    assert_golden("scan_rnn_value", 1, &hs);
    rnn_jit(&params, &h0, &(xs * 2.0));
    assert_eq!(rnn_jit::cache_info().traces, 1, "the body is traced once, not per step");
}

#[test]
fn scan_without_xs_takes_a_length() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "scan_no_xs_length";
    let step = |c: Array, (): ()| (&c * 2.0 + 1.0, c);
    let (last, ys) =
        lax::scan_with(step, Array::from(1.0f32), (), ScanOptions::default().length(5));
    assert_golden(name, 0, &last);
    assert_golden(name, 1, &ys);
}

#[jit]
fn row_map(xs: &Array) -> Array {
    lax::map(|r: Array| (&r * &r).sum() + r.slice(s![0]), xs.clone())
}

#[test]
fn map_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let xs = input("lax_map", "xs");
    assert_golden("lax_map", 0, &lax::map(|r: Array| (&r * &r).sum() + r.slice(s![0]), xs.clone()));
    assert_golden("lax_map", 0, &row_map(&xs));
}

#[grad]
fn fori_grad(x: &Array) -> Array {
    lax::fori_loop(0, 5, |i, c: Array| &c * c.sin() + 0.1 * i, x.clone())
}

#[test]
fn fori_loop_with_static_bounds_differentiates_in_reverse_mode() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "fori_loop_value_grad_static";
    assert_golden(name, 1, &fori_grad(&input(name, "x")));
}

#[test]
fn reverse_scans_run_from_the_end_and_keep_ys_in_place() {
    let xs = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
    let options = ScanOptions::default().reverse(true);
    let (total, ys) = lax::scan_with(cumsum_step, Array::from(0.0f32), xs.clone(), options);
    assert_eq!(total.item::<f32>().unwrap(), 10.0);
    assert_eq!(ys.to_vec::<f32>().unwrap(), vec![10.0, 9.0, 7.0, 4.0]);
    // Its gradient: d/dx_j sum_i w_i ys_i = sum of w_i over i <= j.
    let w = jnp::array([1.0f32, 10.0, 100.0, 1000.0]);
    let g = grad_of(
        |xs| (lax::scan_with(cumsum_step, Array::from(0.0f32), xs.clone(), options).1 * &w).sum(),
        &xs,
    );
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![1.0, 11.0, 111.0, 1111.0]);
}

#[test]
fn carries_and_xs_can_be_trees_and_ys_can_be_empty() {
    let xs = (jnp::arange(4.0), jnp::arange(4.0) * 10.0);
    let (carry, ()) = lax::scan(
        |(count, total): (Array, Array), (a, b): (Array, Array)| ((count + 1, total + a * b), ()),
        (Array::from(0), Array::from(0.0f32)),
        xs,
    );
    assert_eq!(carry.0.item::<i32>().unwrap(), 4);
    assert_eq!(carry.1.item::<f32>().unwrap(), 140.0);
    let (_, ys) = lax::scan(cumsum_step, Array::from(0.0f32), jnp::zeros([0]));
    assert_eq!(ys.shape(), &[0]);
}

#[test]
fn stacked_ys_keep_each_dtype_and_row_shape() {
    // Rows of a [3, 2, 2] xs; the ys are an f32 matrix, an i32 count and a bool per step.
    let xs = jnp::arange(12.0).reshape([3, 2, 2]);
    let step = |count: Array, x: Array| {
        let y = (&x * 2.0, count.clone(), x.sum().gt(10.0));
        (count + 1, y)
    };
    for reverse in [false, true] {
        let options = ScanOptions::default().reverse(reverse);
        let (count, (doubled, counts, big)) =
            lax::scan_with(step, Array::from(0), xs.clone(), options);
        assert_eq!(count.item::<i32>().unwrap(), 3);
        assert_eq!(doubled.shape(), &[3, 2, 2]);
        let want: Vec<f32> = (0..12).map(|v| 2.0 * v as f32).collect();
        assert_eq!(doubled.to_vec::<f32>().unwrap(), want);
        let order = if reverse { vec![2, 1, 0] } else { vec![0, 1, 2] };
        assert_eq!(counts.to_vec::<i32>().unwrap(), order);
        // Row sums are 6, 22 and 38.
        assert_eq!(big.to_vec::<bool>().unwrap(), vec![false, true, true]);
    }
}

// ---- gradients through scans, against JAX and against a Rust loop ----

#[traceable]
fn unrolled_rnn(params: &RnnParams, h0: &Array, xs: &Array) -> Array {
    let (wh, wx, b) = params;
    let mut h = h0.clone();
    let mut total = Array::from(0.0f32);
    for t in 0..xs.shape()[0] {
        h = (wh.dot(&h) + wx.dot(&xs.slice(s![t])) + b).tanh();
        total = total + h.sum() * (t as f32 + 1.0);
    }
    total
}

#[traceable]
fn scanned_rnn_loss(params: &RnnParams, h0: &Array, xs: &Array) -> Array {
    let (_, hs) = rnn(params, h0, xs);
    (jnp::sum_axes(&hs, 1, false) * (jnp::arange(4.0) + 1.0)).sum()
}

#[grad(argnums = (0, 1, 2))]
fn scanned_grads(params: &RnnParams, h0: &Array, xs: &Array) -> (RnnParams, Array, Array) {
    scanned_rnn_loss(params, h0, xs)
}

#[grad(argnums = (0, 1, 2))]
fn unrolled_grads(params: &RnnParams, h0: &Array, xs: &Array) -> (RnnParams, Array, Array) {
    unrolled_rnn(params, h0, xs)
}

#[jit]
#[grad(argnums = (0, 1, 2))]
fn scanned_grads_jit(params: &RnnParams, h0: &Array, xs: &Array) -> (RnnParams, Array, Array) {
    scanned_rnn_loss(params, h0, xs)
}

#[test]
fn rnn_gradients_equal_the_unrolled_loops() {
    let _x64 = rjax::config::x64_scope(true);
    let (params, h0, xs) = rnn_case();
    let unrolled = rjax::tree::leaves(&unrolled_grads(&params, &h0, &xs));
    for scanned in [scanned_grads(&params, &h0, &xs), scanned_grads_jit(&params, &h0, &xs)] {
        let scanned = rjax::tree::leaves(&scanned);
        assert_eq!(scanned.len(), 5);
        for (a, b) in scanned.iter().zip(&unrolled) {
            common::assert_close(a, b, 1e-5, 1e-6);
        }
    }
}

/// The scans of a traced program, with the number of `dot_general`s in each body.
fn scans_and_their_products(program: &rjax::ir::Program) -> Vec<(&rjax::ir::Equation, usize)> {
    let scans = program.equations.iter().filter(|e| e.prim.name() == "scan");
    scans
        .map(|e| {
            let subprograms = e.prim.subprograms();
            let body = subprograms[0].1;
            (e, body.equations.iter().filter(|b| b.prim.name() == "dot_general").count())
        })
        .collect()
}

/// The backward pass reads what the forward pass stacked (each step's incoming carry and its
/// `1 - tanh²`) instead of computing the cell again: the reverse scan of the RNN's gradient
/// holds the four products of the cotangents (of `wh`, `wx`, the carry and the xs), not the
/// cell's two on top of them.
#[test]
fn scan_gradients_read_stacked_residuals_instead_of_recomputing_the_cell() {
    let (params, h0, xs) = rnn_case();
    let program = scanned_grads_jit::jaxpr(&params, &h0, &xs).simplified;
    let scans = scans_and_their_products(&program);
    let products: Vec<usize> = scans.iter().map(|(_, n)| *n).collect();
    assert_eq!(products, [2, 4], "{program}");
}

#[grad]
fn sin_weight_rnn_loss(w: &Array, xs: &Array) -> Array {
    let step = |h: Array, x: Array| {
        let h = (w.sin().dot(&h) + x).tanh();
        (h.clone(), h.clone())
    };
    let (_, hs) = lax::scan(step, xs.slice(s![0]) * 0.0, xs.clone());
    hs.square().sum()
}

/// A value computed from the constants alone (`cos(w)`, for the tangent of `sin(w)`) is the
/// same at every step: the tangent scan computes it again rather than the forward scan
/// stacking `length` copies of it. The gradient still matches finite differences.
#[test]
fn loop_invariant_residuals_are_recomputed_not_stacked() {
    let _x64 = rjax::config::x64_scope(true);
    let w = jnp::linspace(-1.0, 1.0, 9).reshape([3, 3]);
    let xs = jnp::linspace(0.0, 2.0, 15).reshape([5, 3]);
    let program = sin_weight_rnn_loss::jaxpr(&w, &xs).simplified;
    let scans = scans_and_their_products(&program);
    let forward = scans.iter().find(|(e, _)| e.prim.params().contains("reverse=false"));
    let (forward, _) = forward.expect("a forward scan");
    for out in &forward.outputs {
        assert_ne!(program.aval(*out).shape, [5, 3, 3], "a stacked copy of w: {program}");
    }
    let (w64, xs64) = (w.astype(DType::F64), xs.astype(DType::F64));
    let grad = sin_weight_rnn_loss(&w64, &xs64).to_vec::<f64>().unwrap();
    let loss = |w: &Array| {
        let step = |h: Array, x: Array| {
            let h = (w.sin().dot(&h) + x).tanh();
            (h.clone(), h.clone())
        };
        let (_, hs) = lax::scan(step, xs64.slice(s![0]) * 0.0, xs64.clone());
        hs.square().sum().item::<f64>().unwrap()
    };
    let base = w64.to_vec::<f64>().unwrap();
    let eps = 1e-6;
    for (i, g) in grad.iter().enumerate() {
        let shifted = |d: f64| {
            let mut v = base.clone();
            v[i] += d;
            loss(&Array::from_shape_vec([3, 3], v))
        };
        let numeric = (shifted(eps) - shifted(-eps)) / (2.0 * eps);
        assert!((g - numeric).abs() < 1e-6 * (1.0 + numeric.abs()), "{i}: {g} vs {numeric}");
    }
}

// ---- errors ----

#[test]
fn bad_scans_are_refused_with_the_reason() {
    let xs = jnp::arange(3.0);
    let msg = panic_text(|| {
        lax::scan(
            |c: Array, x: Array| (jnp::stack(&[&c, &c], 0), x),
            Array::from(0.0f32),
            xs.clone(),
        );
    });
    assert!(msg.contains("scan: the body must return the carry's shapes and dtypes"), "{msg}");
    let msg = panic_text(|| {
        let step = |c: Array, (a, b): (Array, Array)| (c + a + b, ());
        lax::scan(step, Array::from(0.0f32), (xs.clone(), jnp::arange(4.0)));
    });
    assert!(msg.contains("leaf 0 has 3 and leaf 1 has 4"), "{msg}");
    let msg = panic_text(|| {
        lax::scan(|c: Array, (): ()| (c.clone(), c), Array::from(0.0f32), ());
    });
    assert!(msg.contains("ScanOptions::default().length(n)"), "{msg}");
    let msg = panic_text(|| {
        lax::scan_with(
            cumsum_step,
            Array::from(0.0f32),
            xs.clone(),
            ScanOptions::default().length(5),
        );
    });
    assert!(msg.contains("length is 5 but the xs have a leading axis of 3"), "{msg}");
    let msg = panic_text(|| {
        lax::scan(cumsum_step, Array::from(0.0f32), Array::from(1.0f32));
    });
    assert!(msg.contains("leaf 0 is float32()"), "{msg}");
}
