//! Recording programs: a per-thread stack of traces that [`bind`](crate::primitives::bind)
//! appends equations to when an operand is traced.
//!
//! Tracing runs the function body itself on [`Tracer`]-backed arrays, as JAX does: Rust
//! control flow on static values (loops, `if` on integers, recursion) simply runs, so loops
//! are unrolled and calls inlined. A trace nested inside another (a `cond` branch) may use the
//! outer trace's values; they are captured as extra inputs of the inner program, which is how
//! closures over traced values become explicit operands.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{Atom, Equation, Program, Span, Var};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::{Aval, Primitive};

/// What a traced array refers to: variable `var` of the trace `trace`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracer {
    pub(crate) trace: u64,
    pub(crate) var: Var,
    pub(crate) dtype: DType,
}

/// One program being recorded.
struct Frame {
    id: u64,
    program: Program,
    /// Values from enclosing traces used here, in order of first use, and their variables here.
    captures: Vec<(Array, Var)>,
    captured: HashMap<(u64, Var), Var>,
}

thread_local! {
    static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    /// The user's span that equations bound by a transformation rule are attributed to.
    static RULE_SPAN: std::cell::Cell<Option<Span>> = const { std::cell::Cell::new(None) };
}

/// Runs `body` (a derivative or batching rule applied to an equation) with every primitive it
/// binds attributed to `span`, the line of user code the equation came from, so errors and IR
/// listings of transformed programs point at the user's code rather than at the rule.
pub fn with_span<R>(span: Option<Span>, body: impl FnOnce() -> R) -> R {
    struct Restore(Option<Span>);
    impl Drop for Restore {
        fn drop(&mut self) {
            RULE_SPAN.with(|s| s.set(self.0));
        }
    }
    let previous = RULE_SPAN.with(|s| s.replace(span.or(s.get())));
    let _restore = Restore(previous);
    body()
}

/// The span set by [`with_span`], if a rule is running.
pub(crate) fn current_span() -> Option<Span> {
    RULE_SPAN.with(|s| s.get())
}

static NEXT_TRACE: AtomicU64 = AtomicU64::new(1);

/// Whether a trace is being recorded on this thread.
pub fn is_tracing() -> bool {
    STACK.with(|s| !s.borrow().is_empty())
}

/// Starts recording a program with inputs of these avals; returns the traced input arrays.
/// Every `begin` is matched by an [`end`] on the same thread.
pub fn begin(inputs: &[Aval]) -> Vec<Array> {
    let id = NEXT_TRACE.fetch_add(1, Ordering::Relaxed);
    let mut program =
        Program { avals: Vec::new(), inputs: Vec::new(), equations: Vec::new(), outputs: vec![] };
    let tracers = inputs
        .iter()
        .map(|aval| {
            let var = program.new_var(aval.clone());
            program.inputs.push(var);
            Array::from_tracer(aval, Tracer { trace: id, var, dtype: aval.dtype })
        })
        .collect();
    STACK.with(|s| {
        s.borrow_mut().push(Frame { id, program, captures: Vec::new(), captured: HashMap::new() })
    });
    tracers
}

/// Finishes the innermost trace with these outputs. Returns the program, whose inputs are the
/// ones given to [`begin`] followed by one per captured outer value, and those captured values
/// (arrays of the enclosing trace) in the same order.
///
/// The trace is popped even when an output cannot be part of it (a traced value that escaped
/// an earlier trace panics here), so the thread's stack never keeps a finished trace.
pub fn end(outputs: &[Array]) -> (Program, Vec<Array>) {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let ids: Vec<u64> = stack.iter().map(|f| f.id).collect();
        let mut frame = stack.pop().expect("trace::end without trace::begin");
        drop(stack);
        let atoms: Vec<Atom> = outputs.iter().map(|o| frame.atom(o, &ids)).collect();
        frame.program.outputs = atoms;
        let captured: Vec<Array> = frame.captures.iter().map(|(a, _)| a.clone()).collect();
        frame.program.inputs.extend(frame.captures.iter().map(|(_, v)| *v));
        (frame.program, captured)
    })
}

/// Drops the innermost trace without a program: used when the traced body panicked.
pub fn abandon() {
    STACK.with(|s| {
        s.borrow_mut().pop();
    });
}

/// A finished trace: the program, the captured outer values it takes after its own inputs,
/// and whatever else the traced body returned.
pub struct Traced<R> {
    pub program: Program,
    pub captured: Vec<Array>,
    pub extra: R,
}

/// Runs `body` on the traced inputs of a fresh trace with inputs of `avals` and records the
/// program that computes the arrays it returns. The trace is dropped if `body` panics, so a
/// failed trace never leaves the thread's stack inconsistent.
pub fn trace_with<R>(
    avals: &[Aval],
    body: impl FnOnce(Vec<Array>) -> (Vec<Array>, R),
) -> Traced<R> {
    struct Guard(bool);
    impl Drop for Guard {
        fn drop(&mut self) {
            if !self.0 {
                abandon();
            }
        }
    }
    let inputs = begin(avals);
    let mut guard = Guard(false);
    let (outputs, extra) = body(inputs);
    // `end` pops the trace whether or not it panics.
    guard.0 = true;
    let (program, captured) = end(&outputs);
    Traced { program, captured, extra }
}

impl Frame {
    /// The atom that stands for `value` in this frame: its variable if it is this trace's,
    /// a captured input if it belongs to an enclosing trace, a constant if it holds values.
    fn atom(&mut self, value: &Array, live: &[u64]) -> Atom {
        let Some(t) = value.tracer() else { return Atom::Const(value.clone()) };
        if t.trace == self.id {
            return Atom::Var(t.var);
        }
        if !live.contains(&t.trace) {
            panic!("{}", Error::EscapedTracer);
        }
        if let Some(v) = self.captured.get(&(t.trace, t.var)) {
            return Atom::Var(*v);
        }
        let var = self.program.new_var(value.aval());
        self.captured.insert((t.trace, t.var), var);
        self.captures.push((value.clone(), var));
        Atom::Var(var)
    }
}

/// Appends `prim` applied to `inputs` (at least one traced) to the innermost trace and returns
/// traced arrays for its outputs, whose avals the primitive's shape rule gave.
pub(crate) fn record(
    prim: &dyn Primitive,
    inputs: &[&Array],
    outputs: Vec<Aval>,
    span: Option<Span>,
) -> Vec<Array> {
    STACK.with(|s| {
        let mut stack = s.borrow_mut();
        let ids: Vec<u64> = stack.iter().map(|f| f.id).collect();
        let Some(frame) = stack.last_mut() else { panic!("{}", Error::EscapedTracer) };
        let atoms: Vec<Atom> = inputs.iter().map(|x| frame.atom(x, &ids)).collect();
        let vars: Vec<Var> = outputs.iter().map(|a| frame.program.new_var(a.clone())).collect();
        frame.program.equations.push(Equation {
            prim: prim.clone_arc(),
            inputs: atoms,
            outputs: vars.clone(),
            span,
        });
        let id = frame.id;
        outputs
            .iter()
            .zip(vars)
            .map(|(aval, var)| {
                Array::from_tracer(aval, Tracer { trace: id, var, dtype: aval.dtype })
            })
            .collect()
    })
}

/// Records an effectful primitive with no traced operands (so `bind` would run it at once)
/// into the innermost trace, if any. Returns `None` when nothing is being traced.
pub(crate) fn record_effect(
    prim: &dyn Primitive,
    inputs: &[&Array],
    outputs: Vec<Aval>,
    span: Option<Span>,
) -> Option<Vec<Array>> {
    if is_tracing() {
        Some(record(prim, inputs, outputs, span))
    } else {
        None
    }
}

/// A shared handle to a finished program, as primitives that own sub-programs store them.
pub type SharedProgram = Arc<Program>;
