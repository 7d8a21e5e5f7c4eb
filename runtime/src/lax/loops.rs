//! `lax::while_loop` and `lax::fori_loop`: loops whose trip count is decided when the program
//! runs, as one `while` equation holding the traced condition and body.

use std::sync::Arc;

use super::branch::convert_output;
use crate::array::Array;
use crate::dtype::DType;
use crate::ir::trace::{self, Traced};
use crate::primitives::{bind, Aval, WhileLoop};
use crate::tree::{self, TreeDef, Unflatten};

/// `lax.while_loop(cond_fun, body_fun, init)`: `carry = init; while cond(&carry) { carry =
/// body(carry) }`, returning the final carry.
///
/// `cond` returns a 0-d bool array. When the carry holds traced arrays (or a trace is being
/// recorded), the condition and body are traced once into a `while` equation, so the body
/// must return a carry of the same structure, shapes and dtypes; otherwise the loop simply
/// runs. Forward-mode differentiation and batching work through it; reverse mode does not
/// (the trip count is unknown), as in JAX.
///
/// ```
/// use rjax_runtime::{lax, Array};
/// let (i, x) = lax::while_loop(
///     |(i, _): &(Array, Array)| i.lt(5),
///     |(i, x): (Array, Array)| (i + 1, x * 2.0),
///     (Array::from(0), Array::from(1.0f32)),
/// );
/// assert_eq!((i.item::<i32>().unwrap(), x.item::<f32>().unwrap()), (5, 32.0));
/// ```
#[track_caller]
pub fn while_loop<T: Unflatten>(cond: impl Fn(&T) -> Array, body: impl Fn(T) -> T, init: T) -> T {
    let (leaves, def) = tree::flatten(&init);
    if !trace::is_tracing() && !leaves.iter().any(Array::is_traced) {
        let mut carry = init;
        while predicate(&cond(&carry)) {
            carry = body(carry);
        }
        return carry;
    }
    let avals: Vec<Aval> = leaves.iter().map(Array::aval).collect();
    let cond_trace = trace::trace_with(&avals, |inputs| {
        let carry: T = tree::unflatten(&def, inputs);
        let p = cond(&carry);
        check_predicate(&p);
        (vec![p], ())
    });
    let mut body_trace = trace::trace_with(&avals, |inputs| {
        let carry = body(tree::unflatten(&def, inputs));
        tree::flatten(&carry)
    });
    check_carry("while_loop", &def, &avals, &mut body_trace);
    let n_cond = cond_trace.captured.len();
    let prim = WhileLoop {
        cond: Arc::new(cond_trace.program),
        body: Arc::new(body_trace.program),
        carry: leaves.len(),
        cond_consts: n_cond,
    };
    let mut inputs: Vec<&Array> = leaves.iter().collect();
    inputs.extend(cond_trace.captured.iter());
    inputs.extend(body_trace.captured.iter());
    tree::unflatten(&def, bind(&prim, &inputs))
}

/// `lax.fori_loop(lower, upper, body_fun, init)`: `carry = body(i, carry)` for `i` in
/// `lower..upper`, where `i` is a 0-d `int32` array.
///
/// With concrete bounds (Rust integers) the trip count is static and the loop is a
/// [`scan`](super::scan), so it differentiates in reverse mode too; with a traced bound it is a
/// [`while_loop`] (forward mode only), as in JAX.
///
/// ```
/// use rjax_runtime::{lax, Array};
/// let total = lax::fori_loop(0, 5, |i, acc: Array| acc + i, Array::from(0));
/// assert_eq!(total.item::<i32>().unwrap(), 10);
/// ```
#[track_caller]
pub fn fori_loop<T: Unflatten>(
    lower: impl Into<Array>,
    upper: impl Into<Array>,
    body: impl Fn(Array, T) -> T,
    init: T,
) -> T {
    let lower = lower.into().astype(DType::I32);
    let upper = upper.into().astype(DType::I32);
    for (name, bound) in [("lower", &lower), ("upper", &upper)] {
        if !bound.shape().is_empty() {
            panic!("fori_loop: the {name} bound must be a 0-d integer, got {}", bound.aval());
        }
    }
    if let (Some(lo), Some(hi)) = (static_bound(&lower), static_bound(&upper)) {
        let length = usize::try_from(hi.saturating_sub(lo)).unwrap_or(0);
        let step = |(i, carry): (Array, T), (): ()| {
            let next = body(i.clone(), carry);
            ((i + 1, next), ())
        };
        let options = super::ScanOptions::default().length(length);
        let ((_, carry), ()) = super::scan_with(step, (lower, init), (), options);
        return carry;
    }
    let (_, _, carry) = while_loop(
        |(i, hi, _): &(Array, Array, T)| i.lt(hi),
        |(i, hi, carry): (Array, Array, T)| {
            let next = body(i.clone(), carry);
            (i + 1, hi, next)
        },
        (lower, upper, init),
    );
    carry
}

/// A bound's value when it is known while tracing.
#[track_caller]
fn static_bound(bound: &Array) -> Option<i32> {
    if bound.is_traced() {
        return None;
    }
    bound.item::<i32>().ok()
}

#[track_caller]
fn predicate(p: &Array) -> bool {
    check_predicate(p);
    p.item::<bool>().expect("checked to be a 0-d bool")
}

#[track_caller]
fn check_predicate(p: &Array) {
    if !p.shape().is_empty() || p.dtype() != DType::Bool {
        panic!("while_loop: the condition must return a 0-d bool, got {}", p.aval());
    }
}

/// The body of loop `op` must give back a carry like the one it got (its first outputs); a
/// weakly typed leaf (a Rust literal) adopts the carry's dtype.
#[track_caller]
pub(super) fn check_carry(op: &str, def: &TreeDef, avals: &[Aval], body: &mut Traced<TreeDef>) {
    if body.extra != *def {
        panic!(
            "{op}: the body must return the carry's structure {def}, but returns {}",
            body.extra
        );
    }
    for (i, want) in avals.iter().enumerate() {
        let got = body.program.atom_aval(&body.program.outputs[i]);
        if got.shape == want.shape && got.dtype != want.dtype && got.weak {
            convert_output(&mut body.program, i, want.dtype, want.weak);
        } else if got.shape != want.shape || got.dtype != want.dtype {
            panic!(
                "{op}: the body must return the carry's shapes and dtypes; carry leaf {i} is \
                 {want} but the body returns {got}"
            );
        }
    }
}
