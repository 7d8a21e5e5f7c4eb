//! Primitives: the operations every array computation is made of.
//!
//! Each family lives in one file that holds, for each of its primitives, everything the system
//! knows about it: its name, its shape and dtype rule ([`Aval`]s in, `Aval`s out, or a message
//! saying why the inputs do not fit), its evaluation on CPU buffers, its forward-mode derivative
//! (jvp) and, for primitives linear in some operands, its transpose (reverse mode is
//! linearize + transpose, as in JAX; see [`crate::transform::ad`]). User-facing functions in
//! [`jnp`](crate::jnp) handle NumPy conveniences (type promotion, weak scalars, axis arguments)
//! and then [`bind`] primitives, which check their inputs and run.

pub mod binary;
pub mod collective;
pub mod complex;
pub mod control;
pub mod conv;
pub mod convert;
pub mod custom_ad;
pub mod factor;
pub mod fft;
pub mod indexing;
pub mod linalg;
pub mod pmap;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod select;
pub mod shape_ops;
pub mod sort;
pub mod unary;

use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use crate::array::Array;
use crate::dtype::DType;
use crate::ir::{trace, Program, Span};
use crate::shape::ShapeDisplay;
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::{BatchAxis, BatchDim};

pub use binary::BinaryOp;
pub use collective::{AllGather, AxisIndex, Collective, CollectiveOp, Ppermute, PsumScatter};
pub use complex::{ComplexPart, MakeComplex};
pub use control::{Cond, DebugPrint, WhileLoop};
pub use conv::{ConvDimensionNumbers, ConvGeneralDilated};
pub use convert::Convert;
pub use custom_ad::{Checkpoint, CustomJvp, CustomVjp, CustomVjpLinear, StopGradient};
pub use factor::{Cholesky, Eigh, Lu, Qr, Svd, TriangularSolve};
pub use fft::{Fft, FftType};
pub use indexing::{Gather, IndexMode, Scatter, ScatterOp};
pub use linalg::DotGeneral;
pub use pmap::Pmap;
pub use reduce::{ArgOp, ArgReduce, CumOp, Cumulative, Reduce, ReduceOp};
pub use scan::Scan;
pub use select::Select;
pub use shape_ops::{BroadcastInDim, Concatenate, Iota, Pad, Reshape, Rev, Slice, Transpose};
pub use sort::{SearchSorted, Side, Sort, TopK};
pub use unary::UnaryOp;

/// What a shape rule knows about a value: its shape, dtype and weak-type flag.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Aval {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub weak: bool,
}

impl fmt::Display for Aval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, ShapeDisplay(&self.shape))
    }
}

/// The rules every primitive provides.
///
/// A primitive's `Debug` output names it and every parameter, so two primitives with equal
/// `Debug` text compute the same function (common-subexpression elimination relies on it).
pub trait Primitive: fmt::Debug + Send + Sync + PrimitiveClone {
    /// The name shown in errors and IR listings (`add`, `reduce_sum`, ...).
    fn name(&self) -> String;
    /// The output avals for these input avals, or why the inputs are invalid.
    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String>;
    /// Runs on concrete arrays whose avals passed [`Primitive::abstract_eval`], producing arrays
    /// of the given output avals.
    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array>;
    /// Parameters shown in IR listings after the name: `axes=(0,)`, `new_sizes=(2, 3)`.
    fn params(&self) -> String {
        String::new()
    }
    /// Sub-programs the primitive runs (a `cond`'s branches), shown nested in IR listings.
    fn subprograms(&self) -> Vec<(String, &Program)> {
        Vec::new()
    }
    /// The same primitive with its sub-programs replaced (in [`Primitive::subprograms`]
    /// order), for passes that rewrite them; `None` for primitives without sub-programs.
    fn with_subprograms(&self, _programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        None
    }
    /// Whether the primitive does something besides computing its outputs (printing), so
    /// simplification must keep it even when its outputs are unused.
    fn has_effect(&self) -> bool {
        false
    }
    /// Whether two applications to the same operands may share one result (CSE). Primitives
    /// that own sub-programs opt out: comparing them is not worth it.
    fn cse_allowed(&self) -> bool {
        self.subprograms().is_empty() && !self.has_effect()
    }
    /// Whether the two operands may trade places without changing the result, so that CSE
    /// merges `f(a, b)` with `f(b, a)` (derivative rules produce both orders).
    fn commutative(&self) -> bool {
        false
    }
    /// Which operand the result equals, bit for bit, given the operands that are concrete
    /// constants (`None` for the others): `x * 1` is `x`. The simplifier drops the equation
    /// when that operand also has the result's aval (no broadcast or promotion in between).
    fn passes_through(&self, _constants: &[Option<&Array>]) -> Option<usize> {
        None
    }
    /// The one primitive that applying this one to the result of `inner` amounts to, both
    /// taking one operand: `transpose(transpose(x))` is one transpose of `x`,
    /// `reshape(reshape(x))` one reshape. The simplifier rewrites such chains (and drops the
    /// composed primitive too when it passes its operand through).
    fn compose_after(&self, _inner: &dyn Primitive) -> Option<Arc<dyn Primitive>> {
        None
    }
    /// Forward-mode derivative: the outputs at `primals` and their tangents, given the
    /// operands' tangents (`None` is a symbolic zero, as for integer operands). Rules bind
    /// primitives that have rules themselves, so derivatives nest to any order. Called only
    /// when some tangent is nonzero.
    fn jvp(
        &self,
        _primals: &[Array],
        _tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        Err("differentiation is not defined for this operation".to_string())
    }
    /// Reverse-mode rule of a primitive linear in its [`LinearArg::Linear`] operands: given
    /// the outputs' cotangents (`None` = zero), the cotangent of each operand (`None` for the
    /// known ones and for zeros).
    fn transpose(&self, _cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        Err("it is not linear in its differentiated operands, so it cannot be transposed for \
             reverse-mode differentiation"
            .to_string())
    }
    /// Batching rule (`vmap`): the primitive applied to operands that carry an extra axis of
    /// `axis.size` at `dims[i]` (`None`: the operand is the same for every example), giving
    /// the outputs and where their batch axis is. Rules move the batch axis only where the
    /// operation needs it elsewhere. Called only when some operand is batched, or when
    /// [`Primitive::uses_axis`] says the primitive depends on the mapped axis itself.
    fn batch(
        &self,
        _args: &[Array],
        _dims: &[BatchDim],
        _axis: &BatchAxis,
    ) -> Result<(Vec<Array>, Vec<BatchDim>), String> {
        Err("batching (vmap) is not defined for this operation".to_string())
    }
    /// Whether the primitive refers to the named axis `name` (a collective over it, or a
    /// sub-program containing one), so batching must run its rule even on unbatched operands.
    fn uses_axis(&self, name: &str) -> bool {
        self.subprograms().iter().any(|(_, p)| p.equations.iter().any(|e| e.prim.uses_axis(name)))
    }
    /// Whether the primitive must be recorded whenever a trace is open, even without traced
    /// operands: its value depends on an enclosing transform (`axis_index`).
    fn always_traced(&self) -> bool {
        false
    }
    /// How `#[jit]` may fuse the primitive with its neighbours (see [`crate::exec::fusion`]).
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Opaque
    }
    /// For a product whose kernel splits its work over threads (`dot_general`), its
    /// multiply-adds for these operand avals: a plan runs two independent products of about
    /// the same size side by side, each on its share of the threads. `None` for the rest.
    fn multiply_adds(&self, _inputs: &[Aval]) -> Option<usize> {
        None
    }
    /// For an elementwise float primitive, the operation as a loop over slices (the fused
    /// fast path writes it straight into its destination); `None` if it has none.
    fn slice_op(&self) -> Option<SliceOp> {
        None
    }
    /// The primitive as an operation of the backends' vocabulary, for operands of these
    /// avals (which passed [`Primitive::abstract_eval`]): how it runs on devices other than
    /// the host (see [`crate::backend`]). `None` where no device runs it.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        None
    }
}

/// An elementwise operation that fused groups of f32 or f64 run as a loop from slices (or a
/// scalar) into a slice, with the same scalar functions as its `eval`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
}

/// An operand of a [`SliceOp`]: a slice as long as the destination, or one value for all.
#[derive(Clone, Copy, Debug)]
pub enum Src<'a, T> {
    Slice(&'a [T]),
    Scalar(T),
}

impl<T: Copy> Src<'_, T> {
    /// Writes the operand's values into `dst`: the slice's, or the scalar into every element.
    pub fn write_to(self, dst: &mut [T]) {
        match self {
            Src::Slice(s) => dst.copy_from_slice(s),
            Src::Scalar(x) => dst.fill(x),
        }
    }
}

/// What the fusion pass may do with a primitive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fusion<'a> {
    /// Runs on its own.
    Opaque,
    /// One output whose every element depends only on the elements at the same index of its
    /// operands (broadcast by NumPy's rules), so it can run on any flat range of its output.
    Elementwise,
    /// `broadcast_in_dim`: operand axis `i` becomes output axis `broadcast_dimensions[i]`.
    Broadcast { broadcast_dimensions: &'a [usize] },
    /// A reduction over `axes`, which may end a fused group.
    Reduce { op: ReduceOp, axes: &'a [usize] },
    /// `reshape`: the same elements in the same order under another shape. One that only adds
    /// or removes axes of extent 1 stays inside a fused group as another name for its operand.
    Reshape,
    /// `transpose`: output axis `i` is operand axis `permutation[i]`. It may end the fused
    /// group of its operand, which then writes its value out in the transposed order.
    Transpose { permutation: &'a [usize] },
}

/// Copies a primitive into a shared handle, so the IR can keep what `bind` was given.
pub trait PrimitiveClone {
    fn clone_arc(&self) -> Arc<dyn Primitive>;
}

impl<T: Primitive + Clone + 'static> PrimitiveClone for T {
    fn clone_arc(&self) -> Arc<dyn Primitive> {
        Arc::new(self.clone())
    }
}

/// Applies a primitive to arrays: checks the inputs with its shape rule, panicking with the
/// primitive's name and the rule's message on a mismatch, then evaluates it — or, when an
/// operand is traced, records it into the trace being built (see [`crate::ir::trace`]).
#[track_caller]
pub fn bind(prim: &dyn Primitive, inputs: &[&Array]) -> Vec<Array> {
    // Read the caller here: inside a closure it would name the closure.
    let caller = Location::caller();
    let span = trace::current_span().unwrap_or_else(|| Span::of(caller));
    bind_at(prim, inputs, Some(span))
}

/// [`bind`] with an explicit source span (used when re-binding an equation of a program).
#[track_caller]
pub fn bind_at(prim: &dyn Primitive, inputs: &[&Array], span: Option<Span>) -> Vec<Array> {
    let avals: Vec<Aval> = inputs.iter().map(|a| a.aval()).collect();
    let traced =
        inputs.iter().any(|a| a.is_traced()) || (prim.always_traced() && trace::is_tracing());
    let out = match prim.abstract_eval(&avals).and_then(checked_results) {
        Ok(out) => out,
        Err(msg) if traced => match span {
            Some(span) => panic!("{}: {msg}\n  in traced code at {span}", prim.name()),
            None => panic!("{}: {msg}", prim.name()),
        },
        Err(msg) => panic!("{}: {msg}", prim.name()),
    };
    if traced {
        return trace::record(prim, inputs, out, span);
    }
    if prim.has_effect() {
        if let Some(outs) = trace::record_effect(prim, inputs, out.clone(), span) {
            return outs;
        }
    }
    // Operands on a device other than the host run there.
    if let Some(outs) = crate::backend::dispatch::run(prim, inputs, &out) {
        return outs;
    }
    // An allocation that fails inside the kernels is reported as this op's, with its result.
    // The op computes as XLA does on CPU, flushing subnormals (see `float_mode`).
    crate::exec::cpu::alloc::named(
        || format!("{} (result {})", prim.name(), describe(&out)),
        || crate::exec::cpu::float_mode::flushing(|| prim.eval(inputs, &out)),
    )
}

/// The result avals of a shape rule if every one of them is a shape an array can have (see
/// [`crate::shape`]'s invariant), so no kernel ever sees an element count that wrapped.
fn checked_results(out: Vec<Aval>) -> Result<Vec<Aval>, String> {
    for aval in &out {
        crate::shape::validate(&aval.shape, aval.dtype)?;
    }
    Ok(out)
}

/// [`bind`] for primitives with one output.
#[track_caller]
pub fn bind1(prim: &dyn Primitive, inputs: &[&Array]) -> Array {
    bind(prim, inputs).pop().expect("a primitive bound with bind1 has one output")
}

/// `"float32(2, 3) and int32(3,)"`: operands listed for error messages.
pub(crate) fn describe(avals: &[Aval]) -> String {
    let parts: Vec<String> = avals.iter().map(Aval::to_string).collect();
    match parts.len() {
        0 => String::new(),
        1 => parts[0].clone(),
        _ => format!("{} and {}", parts[..parts.len() - 1].join(", "), parts[parts.len() - 1]),
    }
}

/// `(0, 2)`: a list of numbers as IR listings show parameters (JAX's tuple style).
pub(crate) fn tuple<T: fmt::Display>(items: &[T]) -> String {
    let parts: Vec<String> = items.iter().map(T::to_string).collect();
    match parts.len() {
        1 => format!("({},)", parts[0]),
        _ => format!("({})", parts.join(", ")),
    }
}

/// Checks that a primitive got `n` operands.
pub(crate) fn expect_arity(inputs: &[Aval], n: usize) -> Result<(), String> {
    if inputs.len() == n {
        Ok(())
    } else {
        Err(format!("expected {n} operands, got {}", inputs.len()))
    }
}
