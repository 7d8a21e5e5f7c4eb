//! Reductions: folds over axes (`reduce_sum`, `reduce_max`, ...), `argmax`/`argmin` along one
//! axis, and cumulative scans along one axis (`cumsum`, ...).
//!
//! The primitives take normalized axes and keep dtypes; `jnp` resolves negative axes, widens
//! small integers before summing and reshapes for `keepdims`. Half-precision floats are folded
//! in `f32` and rounded once at the end, as XLA does on CPU.

use std::convert::identity as same;

use half::{bf16, f16};

use super::binary::{BinaryOp, Scalar};
use super::{bind1, expect_arity, tuple, Aval, Fusion, Primitive};
use super::{BroadcastInDim, Pad, Transpose};
use crate::array::{Array, Buffer};
use crate::backend::DeviceOp;
use crate::dtype::DType;
use crate::exec::cpu::elementwise::map;
use crate::exec::cpu::reduce::{arg_reduce, reduce, scan, Fold};
use crate::transform::ad::ops::{self, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{batched_axis, one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// How a fold over axes combines elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum of numbers (not bool); integers wrap.
    Sum,
    /// Product of numbers (not bool); integers wrap.
    Prod,
    /// Largest element; NaN propagates. For bool, logical or.
    Max,
    /// Smallest element; NaN propagates. For bool, logical and.
    Min,
    /// Logical and of bools.
    And,
    /// Logical or of bools.
    Or,
}

impl ReduceOp {
    /// The primitive's name (`reduce_sum`, ...).
    #[track_caller]
    pub fn op_name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "reduce_sum",
            ReduceOp::Prod => "reduce_prod",
            ReduceOp::Max => "reduce_max",
            ReduceOp::Min => "reduce_min",
            ReduceOp::And => "reduce_and",
            ReduceOp::Or => "reduce_or",
        }
    }
}

/// `reduce_*`: folds `axes` away; the output keeps the other axes in order. Folding an empty
/// axis gives the op's identity (0, 1, -inf / the type's minimum for max, ...).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reduce {
    pub op: ReduceOp,
    /// Distinct axes in `0..rank`, in any order.
    pub axes: Vec<usize>,
}

impl Reduce {
    /// Broadcasts a reduced value back over the reduced axes of an operand of `shape`.
    fn expand(&self, reduced: &Array, shape: &[usize]) -> Array {
        let kept = (0..shape.len()).filter(|a| !self.axes.contains(a)).collect();
        bind1(&BroadcastInDim { shape: shape.to_vec(), broadcast_dimensions: kept }, &[reduced])
    }

    /// The tangent of a product along `t`: each element's tangent times the product of the
    /// others, computed from exclusive running products so zeros need no division.
    fn prod_tangent(&self, x: &Array, t: &Array) -> Array {
        let rank = x.ndim();
        let kept: Vec<usize> = (0..rank).filter(|a| !self.axes.contains(a)).collect();
        let mut permutation = kept.clone();
        permutation.extend(&self.axes);
        let mut shape: Vec<usize> = kept.iter().map(|&a| x.shape()[a]).collect();
        shape.push(self.axes.iter().map(|&a| x.shape()[a]).product());
        let last = shape.len() - 1;
        let flat = |a: &Array| {
            ops::reshape(&bind1(&Transpose { permutation: permutation.clone() }, &[a]), &shape)
        };
        let (xf, tf) = (flat(x), flat(t));
        let one = ops::scalar(x, 1.0).with_weak_type(false);
        let shifted = |reverse: bool| {
            let running = bind1(&Cumulative { op: CumOp::Prod, axis: last, reverse }, &[&xf]);
            let mut low = vec![0i64; shape.len()];
            let mut high = vec![0i64; shape.len()];
            (low[last], high[last]) = if reverse { (-1, 1) } else { (1, -1) };
            bind1(&Pad { low, high, interior: vec![0; shape.len()] }, &[&running, &one])
        };
        let others = ops::mul(&shifted(false), &shifted(true));
        let sum = Reduce { op: ReduceOp::Sum, axes: vec![last] };
        bind1(&sum, &[&ops::mul(&tf, &others)])
    }
}

/// Which element an [`ArgReduce`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgOp {
    Max,
    Min,
}

/// `argmax` / `argmin` along `axis`: the `int32` index of the first largest (smallest)
/// element, where a NaN counts as larger (smaller) than everything, as in NumPy and JAX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArgReduce {
    pub op: ArgOp,
    pub axis: usize,
}

/// How a cumulative scan combines elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CumOp {
    /// Running sum of numbers (not bool).
    Sum,
    /// Running product of numbers (not bool).
    Prod,
    /// Running maximum; NaN propagates.
    Max,
    /// Running minimum; NaN propagates.
    Min,
}

/// `cumsum` / `cumprod` / `cummax` / `cummin` along `axis` (`lax.cumsum` and friends): element
/// `i` is the fold of elements `0..=i`, or of `i..` when `reverse`. The output has the input's
/// shape and dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cumulative {
    pub op: CumOp,
    pub axis: usize,
    pub reverse: bool,
}

/// Checks that `axis` indexes `x`, naming the rank and the operand when it does not.
fn check_axis(axis: usize, x: &Aval) -> Result<(), String> {
    if axis < x.shape.len() {
        Ok(())
    } else {
        Err(format!(
            "axis {axis} is out of bounds for an array of rank {} (operand {x})",
            x.shape.len()
        ))
    }
}

/// What ordering reductions want instead of complex operands.
const UNORDERED: &str = "a real operand (complex numbers have no order)";
const NOT_BOOL: &str =
    "a numeric operand (bool arithmetic is not defined; convert with .astype first)";

impl Primitive for Reduce {
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Reduce { op: self.op, axes: &self.axes }
    }

    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Reduce { op: self.op, axes: self.axes.clone() })
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let axes = self.axes.iter().map(|&a| batched_axis(a, d)).collect();
        let out_dim = d - self.axes.iter().filter(|&&a| a < d).count();
        one(bind1(&Reduce { op: self.op, axes }, &[&args[0]]), Some(out_dim))
    }

    fn params(&self) -> String {
        format!("axes={}", tuple(&self.axes))
    }

    fn name(&self) -> String {
        self.op.op_name().to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        for (i, &axis) in self.axes.iter().enumerate() {
            check_axis(axis, x)?;
            if self.axes[..i].contains(&axis) {
                return Err(format!("repeated axis {axis} in axes {:?}", self.axes));
            }
        }
        let wants = match self.op {
            ReduceOp::Sum | ReduceOp::Prod if x.dtype.is_bool() => Some(NOT_BOOL),
            ReduceOp::And | ReduceOp::Or if !x.dtype.is_bool() => Some("a bool operand"),
            ReduceOp::Max | ReduceOp::Min if x.dtype.is_complex() => Some(UNORDERED),
            _ => None,
        };
        if let Some(wants) = wants {
            return Err(format!("expected {wants}, got {x}"));
        }
        let shape = x
            .shape
            .iter()
            .enumerate()
            .filter(|(ax, _)| !self.axes.contains(ax))
            .map(|(_, &d)| d)
            .collect();
        Ok(vec![Aval { shape, dtype: x.dtype, weak: x.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (op, shape, axes) = (self.op, x.shape(), &self.axes[..]);
        let buffer = match x.buffer() {
            Buffer::Bool(v) => Buffer::Bool(match op {
                ReduceOp::And | ReduceOp::Min => {
                    reduce(v, shape, axes, &Fold { identity: true, load: same, combine: and })
                }
                _ => reduce(v, shape, axes, &Fold { identity: false, load: same, combine: or }),
            }),
            Buffer::F16(v) => {
                Buffer::F16(map(&fold_numbers(op, v, shape, axes, f16::to_f32), f16::from_f32))
            }
            Buffer::BF16(v) => {
                Buffer::BF16(map(&fold_numbers(op, v, shape, axes, bf16::to_f32), bf16::from_f32))
            }
            Buffer::F32(v) => Buffer::F32(fold_numbers(op, v, shape, axes, same)),
            Buffer::F64(v) => Buffer::F64(fold_numbers(op, v, shape, axes, same)),
            Buffer::C64(v) => Buffer::C64(fold_numbers(op, v, shape, axes, same)),
            Buffer::C128(v) => Buffer::C128(fold_numbers(op, v, shape, axes, same)),
            Buffer::I8(v) => Buffer::I8(fold_numbers(op, v, shape, axes, same)),
            Buffer::I16(v) => Buffer::I16(fold_numbers(op, v, shape, axes, same)),
            Buffer::I32(v) => Buffer::I32(fold_numbers(op, v, shape, axes, same)),
            Buffer::I64(v) => Buffer::I64(fold_numbers(op, v, shape, axes, same)),
            Buffer::U8(v) => Buffer::U8(fold_numbers(op, v, shape, axes, same)),
            Buffer::U16(v) => Buffer::U16(fold_numbers(op, v, shape, axes, same)),
            Buffer::U32(v) => Buffer::U32(fold_numbers(op, v, shape, axes, same)),
            Buffer::U64(v) => Buffer::U64(fold_numbers(op, v, shape, axes, same)),
        };
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let x = &primals[0];
        let y = bind1(self, &[x]);
        let t = tangents[0].as_ref().expect("jvp rules run with a nonzero tangent");
        let sum = Reduce { op: ReduceOp::Sum, axes: self.axes.clone() };
        let ty = match self.op {
            ReduceOp::Sum => Some(bind1(self, &[t])),
            ReduceOp::Max | ReduceOp::Min => {
                // Tied extremes share the slope equally (JAX's convention).
                let at = ops::eq(x, &self.expand(&y, x.shape()));
                let mask = ops::convert(&at, x.dtype());
                let hits = bind1(&sum, &[&mask]);
                Some(ops::div(&bind1(&sum, &[&ops::mul(t, &mask)]), &hits))
            }
            ReduceOp::Prod => Some(self.prod_tangent(x, t)),
            ReduceOp::And | ReduceOp::Or => None,
        };
        Ok((vec![y], vec![ty]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        if self.op != ReduceOp::Sum {
            return Err(format!("{} is not linear", self.op.op_name()));
        }
        Ok(vec![single_ct(cts).map(|ct| self.expand(ct, &args[0].aval().shape))])
    }
}

/// Folds numbers, loaded into accumulators of type `A`. Each arm passes its combining function
/// as its own type so the kernel inlines it into its loops.
pub(crate) fn fold_numbers<S, A>(
    op: ReduceOp,
    v: &[S],
    shape: &[usize],
    axes: &[usize],
    load: impl Fn(S) -> A + Sync,
) -> Vec<A>
where
    S: Copy + Sync,
    A: Identities,
{
    match op {
        ReduceOp::Sum => reduce(v, shape, axes, &Fold { identity: A::ZERO, load, combine: A::add }),
        ReduceOp::Prod => reduce(v, shape, axes, &Fold { identity: A::ONE, load, combine: A::mul }),
        ReduceOp::Max => {
            reduce(v, shape, axes, &Fold { identity: A::LOWEST, load, combine: <A as Scalar>::max })
        }
        ReduceOp::Min => reduce(
            v,
            shape,
            axes,
            &Fold { identity: A::HIGHEST, load, combine: <A as Scalar>::min },
        ),
        ReduceOp::And | ReduceOp::Or => unreachable!("the shape rule only lets bools through"),
    }
}

/// `op`'s fold of a contiguous run of numbers: the pairwise fold [`Reduce`] gives a row.
pub(crate) fn fold_run<A: Identities>(op: ReduceOp, v: &[A]) -> A {
    match op {
        ReduceOp::Sum => Fold { identity: A::ZERO, load: same, combine: A::add }.row(v),
        ReduceOp::Prod => Fold { identity: A::ONE, load: same, combine: A::mul }.row(v),
        ReduceOp::Max => {
            Fold { identity: A::LOWEST, load: same, combine: <A as Scalar>::max }.row(v)
        }
        ReduceOp::Min => {
            Fold { identity: A::HIGHEST, load: same, combine: <A as Scalar>::min }.row(v)
        }
        ReduceOp::And | ReduceOp::Or => unreachable!("the shape rule only lets bools through"),
    }
}

/// `op`'s combining function and identity, for numbers.
pub(crate) fn combiner<A: Identities>(op: ReduceOp) -> (fn(A, A) -> A, A) {
    match op {
        ReduceOp::Sum => (A::add, A::ZERO),
        ReduceOp::Prod => (A::mul, A::ONE),
        ReduceOp::Max => (<A as Scalar>::max, A::LOWEST),
        ReduceOp::Min => (<A as Scalar>::min, A::HIGHEST),
        ReduceOp::And | ReduceOp::Or => unreachable!("the shape rule only lets bools through"),
    }
}

/// The identities of the numeric folds, for the types that accumulate (`f16` folds in `f32`).
pub(crate) trait Identities: Scalar {
    const ZERO: Self;
    const ONE: Self;
    /// The identity of `max`: -inf for floats, the type's minimum for integers.
    const LOWEST: Self;
    /// The identity of `min`.
    const HIGHEST: Self;
}

macro_rules! int_identities {
    ($($t:ident),*) => {$(
        impl Identities for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = $t::MIN;
            const HIGHEST: Self = $t::MAX;
        }
    )*};
}
int_identities!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Complex numbers have only the identities of `sum` and `prod`: the shape rules refuse
/// `max` and `min` of them, so the order identities are never read.
macro_rules! complex_identities {
    ($($t:ident),*) => {$(
        impl Identities for num_complex::Complex<$t> {
            const ZERO: Self = num_complex::Complex::new(0.0, 0.0);
            const ONE: Self = num_complex::Complex::new(1.0, 0.0);
            const LOWEST: Self = num_complex::Complex::new($t::NAN, $t::NAN);
            const HIGHEST: Self = num_complex::Complex::new($t::NAN, $t::NAN);
        }
    )*};
}
complex_identities!(f32, f64);

macro_rules! float_identities {
    ($($t:ident),*) => {$(
        impl Identities for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = $t::NEG_INFINITY;
            const HIGHEST: Self = $t::INFINITY;
        }
    )*};
}
float_identities!(f32, f64);

impl Primitive for ArgReduce {
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::ArgReduce { op: self.op, axis: self.axis })
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let reduce = ArgReduce { op: self.op, axis: batched_axis(self.axis, d) };
        one(bind1(&reduce, &[&args[0]]), Some(d - usize::from(self.axis < d)))
    }

    fn params(&self) -> String {
        format!("axis={}", self.axis)
    }

    fn name(&self) -> String {
        match self.op {
            ArgOp::Max => "argmax",
            ArgOp::Min => "argmin",
        }
        .to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        check_axis(self.axis, x)?;
        if x.dtype.is_complex() {
            return Err(format!("expected {UNORDERED}, got {x}"));
        }
        let n = x.shape[self.axis];
        if n == 0 {
            return Err(format!(
                "attempt to get {} of an empty sequence: axis {} of {x} is empty",
                self.name(),
                self.axis
            ));
        }
        if n > i32::MAX as usize {
            return Err(format!("axis {} of {x} is too long for int32 indices", self.axis));
        }
        let mut shape = x.shape.clone();
        shape.remove(self.axis);
        Ok(vec![Aval { shape, dtype: DType::I32, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (shape, axis) = (x.shape(), self.axis);
        let indices = crate::with_real_buffer!(x.buffer(), |v: T| match self.op {
            ArgOp::Max => arg_reduce(v, shape, axis, beats_max::<T>),
            ArgOp::Min => arg_reduce(v, shape, axis, beats_min::<T>),
        });
        vec![Array::from_buffer(&outputs[0].shape, Buffer::I32(indices), false)]
    }
}

fn and(a: bool, b: bool) -> bool {
    a & b
}

fn or(a: bool, b: bool) -> bool {
    a | b
}

/// Whether `c` replaces `b` as the running argmax: a NaN beats any number and loses to an
/// earlier NaN; ties keep the earlier element.
#[inline(always)]
fn beats_max<T: PartialOrd + Copy>(c: T, b: T) -> bool {
    c > b || (is_nan(c) && !is_nan(b))
}

/// Whether `c` replaces `b` as the running argmin (NaN counts as the smallest).
#[inline(always)]
fn beats_min<T: PartialOrd + Copy>(c: T, b: T) -> bool {
    c < b || (is_nan(c) && !is_nan(b))
}

/// NaN is the only value not equal to itself; for integers and bools this is always false.
#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

impl Primitive for Cumulative {
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Cumulative { op: self.op, axis: self.axis, reverse: self.reverse })
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let scan = Cumulative { axis: batched_axis(self.axis, d), ..*self };
        one(bind1(&scan, &[&args[0]]), Some(d))
    }

    fn params(&self) -> String {
        format!("axis={} reverse={}", self.axis, self.reverse)
    }

    fn name(&self) -> String {
        match self.op {
            CumOp::Sum => "cumsum",
            CumOp::Prod => "cumprod",
            CumOp::Max => "cummax",
            CumOp::Min => "cummin",
        }
        .to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        check_axis(self.axis, x)?;
        if matches!(self.op, CumOp::Sum | CumOp::Prod) && x.dtype.is_bool() {
            return Err(format!("expected {NOT_BOOL}, got {x}"));
        }
        if matches!(self.op, CumOp::Max | CumOp::Min) && x.dtype.is_complex() {
            return Err(format!("expected {UNORDERED}, got {x}"));
        }
        Ok(vec![x.clone()])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (op, shape, axis, rev) = (self.op, x.shape(), self.axis, self.reverse);
        let buffer = match x.buffer() {
            Buffer::Bool(v) => Buffer::Bool(match op {
                CumOp::Max => scan(
                    v,
                    shape,
                    axis,
                    rev,
                    &Fold { identity: false, load: same, combine: or },
                    same,
                ),
                _ => scan(
                    v,
                    shape,
                    axis,
                    rev,
                    &Fold { identity: true, load: same, combine: and },
                    same,
                ),
            }),
            Buffer::F16(v) => {
                Buffer::F16(scan_numbers(op, v, shape, axis, rev, f16::to_f32, f16::from_f32))
            }
            Buffer::BF16(v) => {
                Buffer::BF16(scan_numbers(op, v, shape, axis, rev, bf16::to_f32, bf16::from_f32))
            }
            Buffer::F32(v) => Buffer::F32(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::F64(v) => Buffer::F64(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::C64(v) => Buffer::C64(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::C128(v) => Buffer::C128(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::I8(v) => Buffer::I8(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::I16(v) => Buffer::I16(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::I32(v) => Buffer::I32(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::I64(v) => Buffer::I64(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::U8(v) => Buffer::U8(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::U16(v) => Buffer::U16(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::U32(v) => Buffer::U32(scan_numbers(op, v, shape, axis, rev, same, same)),
            Buffer::U64(v) => Buffer::U64(scan_numbers(op, v, shape, axis, rev, same, same)),
        };
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        match self.op {
            CumOp::Sum => ops::linear_jvp(self, primals, tangents),
            CumOp::Prod => {
                let x = &primals[0];
                let t = tangents[0].as_ref().expect("jvp rules run with a nonzero tangent");
                Ok((vec![bind1(self, &[x])], vec![Some(cumprod_tangent(self, x, t))]))
            }
            CumOp::Max | CumOp::Min => {
                let x = &primals[0];
                let t = tangents[0].as_ref().expect("jvp rules run with a nonzero tangent");
                Ok((vec![bind1(self, &[x])], vec![Some(cumextreme_tangent(self, x, t))]))
            }
        }
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        if self.op != CumOp::Sum {
            return Err(format!("{} is not linear", self.name()));
        }
        let back = Cumulative { reverse: !self.reverse, ..*self };
        Ok(vec![single_ct(cts).map(|ct| bind1(&back, &[ct]))])
    }
}

/// The tangent of a cumulative product along `t`: a Hillis-Steele scan over (value, tangent)
/// pairs, combined as `(a, ta) * (b, tb) = (a b, ta b + a tb)` (the jvp of the scan JAX
/// differentiates). It is built from `mul`, `add` and `pad` alone, so it can be differentiated
/// again (which the tangent of `reduce_prod` relies on).
fn cumprod_tangent(scan: &Cumulative, x: &Array, t: &Array) -> Array {
    let n = x.shape()[scan.axis];
    let one = ops::scalar(x, 1.0).with_weak_type(false);
    let zero = ops::scalar(x, 0.0).with_weak_type(false);
    let (mut p, mut tp) = (x.clone(), t.clone());
    let mut d = 1;
    while d < n {
        let (ps, ts) = (shifted(scan, &p, d, &one), shifted(scan, &tp, d, &zero));
        tp = ops::add(&ops::mul(&tp, &ps), &ops::mul(&p, &ts));
        p = ops::mul(&p, &ps);
        d *= 2;
    }
    tp
}

/// The tangent of a running maximum or minimum: the scan of [`cumprod_tangent`] with each
/// step combined by the jvp of `max`/`min`, which JAX gives wholly to the operand equal to the
/// result, and half to each of two tied operands.
fn cumextreme_tangent(scan: &Cumulative, x: &Array, t: &Array) -> Array {
    let n = x.shape()[scan.axis];
    let (op, identity) = match scan.op {
        CumOp::Max => (BinaryOp::Max, f64::NEG_INFINITY),
        _ => (BinaryOp::Min, f64::INFINITY),
    };
    let full = |v: f64| ops::broadcast_to(&ops::scalar(x, v).with_weak_type(false), x.shape());
    let (one, half, zero) = (full(1.0), full(0.5), full(0.0));
    let identity = ops::scalar(x, identity).with_weak_type(false);
    let no_tangent = ops::scalar(x, 0.0).with_weak_type(false);
    // The share of the result's tangent that comes from `a`, combined with `b` into `ans`.
    let share = |a: &Array, b: &Array, ans: &Array| {
        ops::select(&ops::eq(a, ans), &ops::select(&ops::eq(b, ans), &half, &one), &zero)
    };
    let (mut p, mut tp) = (x.clone(), t.clone());
    let mut d = 1;
    while d < n {
        let (ps, ts) = (shifted(scan, &p, d, &identity), shifted(scan, &tp, d, &no_tangent));
        let ans = ops::binary(op, &ps, &p);
        tp = ops::add(&ops::mul(&ts, &share(&ps, &p, &ans)), &ops::mul(&tp, &share(&p, &ps, &ans)));
        p = ans;
        d *= 2;
    }
    tp
}

/// `a` moved `d` places along the scan's axis (in its direction), the vacated places holding
/// `fill`.
fn shifted(scan: &Cumulative, a: &Array, d: usize, fill: &Array) -> Array {
    let rank = a.ndim();
    let (mut low, mut high) = (vec![0i64; rank], vec![0i64; rank]);
    let d = d as i64;
    (low[scan.axis], high[scan.axis]) = if scan.reverse { (-d, d) } else { (d, -d) };
    bind1(&Pad { low, high, interior: vec![0; rank] }, &[a, fill])
}

/// Scans numbers through accumulators of type `A`, converting each output back with `store`.
fn scan_numbers<T, A>(
    op: CumOp,
    v: &[T],
    shape: &[usize],
    axis: usize,
    reverse: bool,
    load: impl Fn(T) -> A + Sync,
    store: impl Fn(A) -> T + Sync,
) -> Vec<T>
where
    T: Copy + Send + Sync,
    A: Identities,
{
    let (s, ax, rev) = (shape, axis, reverse);
    match op {
        CumOp::Sum => {
            scan(v, s, ax, rev, &Fold { identity: A::ZERO, load, combine: A::add }, store)
        }
        CumOp::Prod => {
            scan(v, s, ax, rev, &Fold { identity: A::ONE, load, combine: A::mul }, store)
        }
        CumOp::Max => {
            let fold = Fold { identity: A::LOWEST, load, combine: <A as Scalar>::max };
            scan(v, s, ax, rev, &fold, store)
        }
        CumOp::Min => {
            let fold = Fold { identity: A::HIGHEST, load, combine: <A as Scalar>::min };
            scan(v, s, ax, rev, &fold, store)
        }
    }
}
