//! Running one case and judging it: the properties every call of the safe API must have.
//!
//! - A refusal is a panic whose message names the operation, never one of Rust's own checks
//!   (an overflow, an index out of bounds, a failed allocation, an `unwrap` of `None`).
//! - Eager and `#[jit]` agree: both fail, or both give the same shape, dtype, weak type and
//!   bits (NaN payloads included; float sums that `#[jit]` fuses within rounding, and the
//!   host-side samplers may refuse traced keys).
//! - A result is a real array: its shape is valid (its size fits `isize::MAX` bytes) and its
//!   buffer holds exactly its elements. Where the arguments alone fix the result's shape (or
//!   the element an integer index reads), the result has it; where the shape they ask for
//!   cannot exist, there is no result.
//! - Where cheap: `vmap` over a batch of two examples equals stacking their results, and
//!   `grad` runs the same eagerly and under `#[jit]` (or is refused the same proper way).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use rjax::config::with_x64;
use rjax::prelude::*;
use rjax::transform::ad::api::Flat;
use rjax::transform::batch::api::{vmap, BatchAxes, Vmap};

use crate::draw::{self, elements, valid_shape, Data, Input};
use crate::ops::{Case, Expect, Op};

/// What became of a case.
pub enum Verdict {
    Pass,
    /// Not run: a valid result too large for the suite to make.
    Skip(String),
    Fail(Failure),
}

/// A broken property: `signature` groups failures of one cause (the operation, the property
/// and the message with its numbers blanked), `detail` says what happened.
#[derive(Clone, Debug)]
pub struct Failure {
    pub signature: String,
    pub detail: String,
}

/// A failure of `op`: `what` property broke (the signature), as `detail` says.
fn failure(op: &str, what: &str, detail: impl Into<String>) -> Failure {
    Failure { signature: format!("{op}: {what}"), detail: detail.into() }
}

/// A failure shown by a panic: its message's gist joins the signature, so that different
/// wrong panics of one op are told apart.
fn panicked(op: &str, what: &str, message: &str) -> Failure {
    Failure { signature: format!("{op}: {what}: {}", gist(message)), detail: message.to_string() }
}

/// The first line of a message with its numbers replaced by `N`, so that failures of one
/// cause on different inputs group together.
pub fn gist(message: &str) -> String {
    let line = message.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut in_number = false;
    for c in line.chars().take(160) {
        if c.is_ascii_digit() {
            if !in_number {
                out.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// Text of Rust's own panics (arithmetic and bounds checks, allocation failures, `unwrap`s,
/// internal assertions): a panic that contains one is a bug, not a refusal.
const BUG_CHECKS: [&str; 17] = [
    "capacity overflow",
    "with overflow",
    "attempt to divide by zero",
    "attempt to calculate the remainder",
    "index out of bounds",
    "range start index",
    "range end index",
    "out of range for slice",
    "slice index starts",
    "memory allocation of",
    "called `Option::unwrap()`",
    "called `Result::unwrap()`",
    "entered unreachable code",
    "assertion failed",
    "assertion `left",
    "already borrowed",
    "PoisonError",
];

/// Whether a panic message is a proper refusal of the op: `None` if so, else what is wrong.
fn bad_message(message: &str, names: &[&str]) -> Option<&'static str> {
    // `unimplemented!()` and `todo!()` start their messages so; an op may still say that
    // something "is not implemented" in its own words.
    let unfinished = ["not implemented", "not yet implemented"]
        .iter()
        .any(|m| message == *m || message.starts_with(&format!("{m}: ")));
    if unfinished || BUG_CHECKS.iter().any(|b| message.contains(b)) {
        return Some("panics with a Rust bug check instead of an error");
    }
    if !names.iter().any(|n| message.contains(n)) {
        return Some("panics without naming the operation");
    }
    None
}

thread_local! {
    /// How many [`catch`]es the thread is inside: panics there are results to check, panics
    /// elsewhere are the harness's own and get printed.
    static CATCHING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a panic on this thread will be caught by [`catch`].
pub fn catching() -> bool {
    CATCHING.with(|c| c.get() > 0)
}

/// Runs `f`, turning a panic into its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    CATCHING.with(|c| c.set(c.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(c.get() - 1));
    result.map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "(a panic without a message)".to_string())
    })
}

// --- Running an op eagerly and under `#[jit]` ------------------------------------------------

/// The ops being run, by key: the `#[jit]` functions below take the key as a static argument
/// (part of their cache key, so every case is traced afresh) and look the op up.
static OPS: Mutex<Option<HashMap<String, Op>>> = Mutex::new(None);

/// An op registered under a fresh key for the duration of a case.
pub struct Registered(String);

impl Registered {
    pub fn new(op: &Op) -> Registered {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let key = format!("op{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        ops().get_or_insert_with(HashMap::new).insert(key.clone(), op.clone());
        Registered(key)
    }

    pub fn key(&self) -> &str {
        &self.0
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(map) = ops().as_mut() {
            map.remove(&self.0);
        }
    }
}

fn ops() -> std::sync::MutexGuard<'static, Option<HashMap<String, Op>>> {
    OPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Looks up registered ops from inside the twin functions.
pub struct Registry;

impl Registry {
    pub fn op(key: &str) -> Op {
        ops().as_ref().and_then(|m| m.get(key)).cloned().expect("the case registered its op")
    }
}

impl Op {
    /// The sum of the first result, with `x` in place of input 0 (what `grad` differentiates).
    pub fn loss(&self, x: &Array, rest: &[Array]) -> Array {
        let xs: Vec<Array> = std::iter::once(x.clone()).chain(rest.iter().cloned()).collect();
        self.apply(&xs)[0].sum()
    }
}

/// Each op is one body run two ways: op by op, and traced and compiled by `#[jit]`.
pub mod twins {
    use super::Registry;
    use rjax::prelude::*;

    pub fn eager(xs: &[Array], key: &str) -> Vec<Array> {
        Registry::op(key).apply(xs)
    }

    #[jit]
    pub fn jitted(xs: &[Array], key: &str) -> Vec<Array> {
        Registry::op(key).apply(xs)
    }

    #[grad]
    pub fn grad_eager(x: &Array, rest: &[Array], key: &str) -> Array {
        Registry::op(key).loss(x, rest)
    }

    #[jit]
    #[grad]
    pub fn grad_jitted(x: &Array, rest: &[Array], key: &str) -> Array {
        Registry::op(key).loss(x, rest)
    }
}

// --- Comparing results -----------------------------------------------------------------------

/// The bits of every element, widened to 64 bits (floats by their bit patterns, so NaN
/// payloads and signed zeros count). A NaN counts with its quiet bit set: `#[jit]` drops a
/// product with ones, as XLA does, which leaves a signalling NaN signalling where the eager
/// product quiets it. For the same reason a subnormal counts as the zero of its sign: the
/// eager product flushes it and the dropped one keeps it, in JAX too (`grad` of `sum(cos(x))`
/// at `-1e-45` is `0` op by op and `1e-45` under `jax.jit`).
fn bits(a: &Array) -> Vec<u64> {
    let quiet32 = |v: &f32| {
        let bits = match v.classify() {
            std::num::FpCategory::Nan => v.to_bits() | 0x0040_0000,
            std::num::FpCategory::Subnormal => v.to_bits() & 0x8000_0000,
            _ => v.to_bits(),
        };
        u64::from(bits)
    };
    let quiet64 = |v: &f64| match v.classify() {
        std::num::FpCategory::Nan => v.to_bits() | 0x0008_0000_0000_0000,
        std::num::FpCategory::Subnormal => v.to_bits() & 0x8000_0000_0000_0000,
        _ => v.to_bits(),
    };
    match a.dtype() {
        DType::F32 => a.to_vec::<f32>().unwrap().iter().map(quiet32).collect(),
        DType::F64 => a.to_vec::<f64>().unwrap().iter().map(quiet64).collect(),
        DType::F16 | DType::BF16 => bits(&a.astype(DType::F32)),
        DType::Bool => a.to_vec::<bool>().unwrap().iter().map(|&v| u64::from(v)).collect(),
        // Both parts of each complex element, in turn.
        DType::C64 | DType::C128 => {
            let (re, im) = (bits(&jnp::real(a)), bits(&jnp::imag(a)));
            re.into_iter().zip(im).flat_map(|(r, i)| [r, i]).collect()
        }
        DType::U64 => a.to_vec::<u64>().unwrap(),
        DType::U32 => a.to_vec::<u32>().unwrap().iter().map(|&v| u64::from(v)).collect(),
        DType::I32 => a.to_vec::<i32>().unwrap().iter().map(|&v| v as u64).collect(),
        // Widened with x64 on, which the cases may run without.
        _ => with_x64(true, || a.astype(DType::I64).to_vec::<i64>().unwrap())
            .iter()
            .map(|&v| v as u64)
            .collect(),
    }
}

/// Checks that a result is a real array: a valid shape, and a buffer of exactly its elements.
fn check_array(a: &Array) -> Result<(), String> {
    let shape = a.shape();
    if !valid_shape(shape, a.dtype()) {
        return Err(format!(
            "returned an array of shape {shape:?} ({}), whose size does not fit isize::MAX bytes",
            a.dtype()
        ));
    }
    let n = a.buffer().len();
    if elements(shape) != Some(n) {
        return Err(format!("returned an array of shape {shape:?} with a buffer of {n} elements"));
    }
    Ok(())
}

/// How closely two results must agree.
#[derive(Clone, Copy)]
enum Agree {
    /// Bit for bit, NaN payloads included.
    Bits,
    /// Bit for bit, except that any NaN matches any NaN: which NaN an operation on NaNs gives
    /// depends on the operand order of the kernel that computes it, and `vmap` runs other
    /// kernels (a batched operand where an example had a broadcast one).
    AnyNan,
    /// Within rounding for floats: a fused reduction adds in another order than the eager one
    /// (as the README says under "Compilation"). Only checked for moderate inputs, whose sums
    /// reordering cannot change beyond rounding.
    Rounding { tame: bool },
}

fn same(got: &[Array], want: &[Array], how: Agree) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} results against {}", got.len(), want.len()));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.shape() != w.shape() || g.dtype() != w.dtype() || g.is_weak() != w.is_weak() {
            return Err(format!(
                "result {i}: {}{:?} (weak {}) against {}{:?} (weak {})",
                g.dtype(),
                g.shape(),
                g.is_weak(),
                w.dtype(),
                w.shape(),
                w.is_weak()
            ));
        }
        let (gb, wb) = (bits(g), bits(w));
        let float = g.dtype().is_float();
        let (gf, wf) = if float { (floats(g), floats(w)) } else { (vec![], vec![]) };
        let differs = |k: usize| match how {
            _ if !float => gb[k] != wb[k],
            Agree::Bits => gb[k] != wb[k],
            Agree::AnyNan => gb[k] != wb[k] && !(gf[k].is_nan() && wf[k].is_nan()),
            Agree::Rounding { tame } => tame && !close(gf[k], wf[k]),
        };
        if let Some(k) = (0..gb.len()).find(|&k| differs(k)) {
            return Err(format!(
                "result {i} differs at element {k}: bits {:#x} against {:#x}\n  got  {g:?}\n  want {w:?}",
                gb[k], wb[k]
            ));
        }
    }
    Ok(())
}

/// Whether floats `a` and `b` agree to within summation-order rounding.
fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-4 * a.abs().max(b.abs()).max(1.0)
}

fn floats(a: &Array) -> Vec<f64> {
    with_x64(true, || a.astype(DType::F64).to_vec::<f64>().unwrap())
}

/// Whether every input is finite and moderate, so rounding differences stay small.
fn tame(inputs: &[Input]) -> bool {
    inputs.iter().all(|x| match &x.data {
        Data::F32(v) => v.iter().all(|f| f.abs() <= 1e3),
        Data::F64(v) => v.iter().all(|f| f.abs() <= 1e3),
        Data::I32(v) => v.iter().all(|i| i.unsigned_abs() <= 1000),
        Data::U32(v) => v.iter().all(|&u| u <= 1000),
        Data::Bool(_) => true,
    })
}

/// How closely `#[jit]` must reproduce the eager result of `case`.
fn jit_agreement(case: &Case) -> Agree {
    if case.op.fuses_a_float_sum() {
        Agree::Rounding { tame: tame(&case.inputs) }
    } else {
        Agree::Bits
    }
}

// --- The properties ----------------------------------------------------------------------------

/// Runs a case and checks every property.
pub fn run_case(case: &Case) -> Verdict {
    let names = case.op.names();
    let op_name = names[0];
    let xs = match catch(|| case.inputs.iter().map(Input::build).collect::<Vec<Array>>()) {
        Ok(xs) => xs,
        // Inputs have valid, small shapes: building them must work.
        Err(e) => return Verdict::Fail(panicked("from_shape_vec", "refuses a valid input", &e)),
    };
    let reg = Registered::new(&case.op);
    let key = reg.key();

    // Trace first: the program's values have shapes, and a valid one too large to make here
    // means the case cannot run (creation ops run while tracing, so they are drawn harmless
    // instead).
    if !case.op.is_creation() {
        if let Ok(traced) = catch(|| twins::jitted::jaxpr(&xs, key)) {
            for aval in traced.traced.avals.iter().chain(&traced.simplified.avals) {
                if !valid_shape(&aval.shape, aval.dtype) {
                    let what = format!("makes a value of shape {:?} ({})", aval.shape, aval.dtype);
                    return Verdict::Fail(failure(
                        op_name,
                        "accepts a shape too large to exist",
                        what,
                    ));
                }
                let bytes = draw::bytes(&aval.shape, aval.dtype).unwrap_or(usize::MAX);
                if bytes > draw::MAX_RESULT_BYTES && bytes < crate::ops::UNALLOCATABLE {
                    return Verdict::Skip(format!("a value of shape {:?}", aval.shape));
                }
            }
        }
    }

    let eager = catch(|| twins::eager(&xs, key));
    let jitted = catch(|| twins::jitted(&xs, key));
    for (how, result) in [("eager", &eager), ("jit", &jitted)] {
        if let Err(message) = result {
            if let Some(what) = bad_message(message, &names) {
                return Verdict::Fail(panicked(op_name, &format!("{how}: {what}"), message));
            }
        }
    }
    let outs = match (&eager, &jitted) {
        (Ok(e), Ok(j)) => {
            if let Err(d) = same(j, e, jit_agreement(case)) {
                return Verdict::Fail(failure(op_name, "jit differs from eager", d));
            }
            e
        }
        (Err(_), Err(_)) => return Verdict::Pass,
        // These samplers compute on the host, so traced keys are refused (as `random`'s
        // documentation says); the refusal was checked above like any other.
        (Ok(_), Err(_)) if case.op.host_only() => return Verdict::Pass,
        (Ok(_), Err(m)) => return Verdict::Fail(panicked(op_name, "fails only under jit", m)),
        (Err(m), Ok(_)) => return Verdict::Fail(panicked(op_name, "fails only eagerly", m)),
    };
    for a in outs {
        if let Err(d) = check_array(a) {
            return Verdict::Fail(failure(op_name, "returns a broken array", d));
        }
    }
    if let Some(ok) = case.op.must_succeed() {
        if ok != (outs.len() == 1) {
            let what = if ok { "fails on valid arguments" } else { "accepts invalid arguments" };
            return Verdict::Fail(failure(op_name, what, format!("{} results", outs.len())));
        }
    }
    match (case.op.expected(&case.inputs), outs.as_slice()) {
        (Some(Expect::Shape(want)), [out]) if out.shape() != want.as_slice() => {
            let d = format!("result has shape {:?}, the arguments ask for {want:?}", out.shape());
            return Verdict::Fail(failure(op_name, "returns the wrong shape", d));
        }
        (Some(Expect::Refusal), [out]) => {
            let d = format!("returned shape {:?} where the arguments ask for none", out.shape());
            return Verdict::Fail(failure(op_name, "accepts arguments it must refuse", d));
        }
        _ => {}
    }
    if let (Some(at), [out]) = (case.op.expected_position(&case.inputs), outs.as_slice()) {
        let want = bits(&xs[0])[at];
        if out.ndim() != 0 || bits(out) != [want] {
            let d = format!("result {out:?}, element {at} has bits {want:#x}");
            return Verdict::Fail(failure(op_name, "reads the wrong element", d));
        }
    }
    if let Some(exact) = case.op.vmap_exact() {
        if let Err(f) = check_vmap(case, exact, outs) {
            return Verdict::Fail(f);
        }
    }
    if case.op.differentiable() {
        if let Err(f) = check_grad(case, &xs, key, outs) {
            return Verdict::Fail(f);
        }
    }
    Verdict::Pass
}

/// `vmap` over a batch of two examples (the inputs, and the inputs with their elements
/// reversed) equals stacking the two examples' results.
fn check_vmap(case: &Case, exact: bool, outs: &[Array]) -> Result<(), Failure> {
    let op_name = case.op.names()[0];
    let small = |x: &Input| elements(&x.shape).is_some_and(|n| n <= 64);
    if !case.inputs.iter().all(small) || outs.iter().any(|o| o.size() == 0) {
        return Ok(());
    }
    let second: Vec<Input> = case.inputs.iter().map(|x| x.with_data(x.data.reversed())).collect();
    let build = |inputs: &[Input]| inputs.iter().map(Input::build).collect::<Vec<_>>();
    let (first, second) = (build(&case.inputs), build(&second));
    let Ok(other) = catch(|| case.op.apply(&second)) else {
        // The second example fails where the first did not (values matter to the op).
        return Ok(());
    };
    let batched: Vec<Array> =
        first.iter().zip(&second).map(|(a, b)| jnp::stack(&[a, b], 0)).collect();
    let in_axes = vec![BatchAxes::Axis(0); batched.len()];
    let names = vec!["x"; batched.len()];
    let spec =
        Vmap { names: &names, in_axes: &in_axes, out_axes: &BatchAxes::Axis(0), axis_name: None };
    let params: Vec<Flat> = batched.iter().map(Flat::of).collect();
    let op = case.op.clone();
    let got = catch(|| {
        vmap(spec, params, |ps| {
            let args: Vec<Array> = ps.into_iter().map(|p| p.into_tree()).collect();
            op.apply(&args)
        })
        .into_tree::<Vec<Array>>()
    })
    .map_err(|m| panicked(op_name, "vmap fails where every example succeeds", &m))?;
    if got.len() != outs.len() {
        let d = format!("{} results against {}", got.len(), outs.len());
        return Err(failure(op_name, "vmap differs from stacking", d));
    }
    for (k, g) in got.iter().enumerate() {
        let want = jnp::stack(&[&outs[k], &other[k]], 0);
        if g.shape() != want.shape() || g.dtype() != want.dtype() {
            let d = format!(
                "result {k}: {}{:?} against {}{:?}",
                g.dtype(),
                g.shape(),
                want.dtype(),
                want.shape()
            );
            return Err(failure(op_name, "vmap differs from stacking", d));
        }
        let how = if exact { Agree::AnyNan } else { Agree::Rounding { tame: tame(&case.inputs) } };
        if let Err(d) = same(std::slice::from_ref(g), &[want], how) {
            return Err(failure(op_name, "vmap differs from stacking", d));
        }
    }
    Ok(())
}

/// `grad` of the sum of the result with respect to input 0 runs the same eagerly and under
/// `#[jit]`, and has input 0's shape and dtype.
fn check_grad(case: &Case, xs: &[Array], key: &str, outs: &[Array]) -> Result<(), Failure> {
    let op_name = case.op.names()[0];
    if !case.inputs[0].is_plain_float() || !outs[0].dtype().is_float() {
        return Ok(());
    }
    let (x, rest) = (&xs[0], &xs[1..]);
    let eager = catch(|| twins::grad_eager(x, rest, key));
    let jitted = catch(|| twins::grad_jitted(x, rest, key));
    match (eager, jitted) {
        (Ok(e), Ok(j)) => {
            same(&[j], std::slice::from_ref(&e), jit_agreement(case))
                .map_err(|d| failure(op_name, "grad: jit differs from eager", d))?;
            if e.shape() != x.shape() || e.dtype() != x.dtype() {
                let d = format!(
                    "gradient {}{:?} of input {}{:?}",
                    e.dtype(),
                    e.shape(),
                    x.dtype(),
                    x.shape()
                );
                return Err(failure(op_name, "grad has the wrong shape or dtype", d));
            }
            Ok(())
        }
        // Not every derivative exists; a refusal must still be a proper one.
        (Err(e), Err(j)) => {
            let names = case.op.names();
            for (how, message) in [("eager", e), ("jit", j)] {
                if let Some(what) = bad_message(&message, &names) {
                    return Err(panicked(op_name, &format!("grad: {how}: {what}"), &message));
                }
            }
            Ok(())
        }
        (Ok(_), Err(m)) => Err(panicked(op_name, "grad fails only under jit", &m)),
        (Err(m), Ok(_)) => Err(panicked(op_name, "grad fails only eagerly", &m)),
    }
}
