//! Elementwise primitives of two operands: arithmetic, comparisons and logic.
//!
//! Operands must share a dtype (`jnp` promotes first) and broadcast together by NumPy's rules;
//! the kernels read broadcast operands in place instead of materializing them.

use half::{bf16, f16};

use super::UnaryOp;
use super::{describe, expect_arity, Aval, Fusion, Primitive, SliceOp, Src};
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::exec::cpu::elementwise::zip;
use crate::shape::broadcast_shapes;
use crate::transform::ad::ops::{
    self, add, broadcast_to, div, mul, neg, scalar, select, unbroadcast,
};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{elementwise, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// An elementwise function of two operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// True division for floats; truncating (C) division for integers, like `lax.div`.
    Div,
    /// Remainder with the sign of the dividend (C's `fmod`), like `lax.rem`.
    Rem,
    Pow,
    Max,
    Min,
    Atan2,
    NextAfter,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
}

enum Kind {
    /// Numbers in (not bool), same type out.
    Arithmetic,
    /// Floats in, same float out.
    Float,
    /// Any type in, bool out.
    Comparison,
    /// Bool or integers in, same type out.
    Logical,
    /// Any type in, same type out (`max`, `min`).
    Order,
}

impl BinaryOp {
    fn kind(self) -> Kind {
        use BinaryOp::*;
        match self {
            Add | Sub | Mul | Div | Rem | Pow => Kind::Arithmetic,
            Atan2 | NextAfter => Kind::Float,
            Eq | Ne | Lt | Le | Gt | Ge => Kind::Comparison,
            And | Or | Xor => Kind::Logical,
            Max | Min => Kind::Order,
        }
    }

    pub fn op_name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Sub => "sub",
            Mul => "mul",
            Div => "div",
            Rem => "rem",
            Pow => "pow",
            Max => "max",
            Min => "min",
            Atan2 => "atan2",
            NextAfter => "nextafter",
            Eq => "eq",
            Ne => "ne",
            Lt => "lt",
            Le => "le",
            Gt => "gt",
            Ge => "ge",
            And => "and",
            Or => "or",
            Xor => "xor",
        }
    }

    /// Whether the op takes only floating-point operands (so `jnp` promotes integers first).
    pub fn needs_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }

    /// Whether the result is `bool` whatever the operands are.
    pub fn is_comparison(self) -> bool {
        matches!(self.kind(), Kind::Comparison)
    }

    /// Whether the op is defined for complex operands (as in `lax`: arithmetic and equality;
    /// complex numbers have no order).
    pub fn accepts_complex(self) -> bool {
        use BinaryOp::*;
        matches!(self, Add | Sub | Mul | Div | Pow | Eq | Ne)
    }
}

/// Whether every element of `a` is one (numbers only).
fn all_ones(a: &Array) -> bool {
    !a.dtype().is_bool()
        && crate::jnp::convert(a, DType::F64, false)
            .to_vec::<f64>()
            .is_ok_and(|v| v.iter().all(|&x| x == 1.0))
}

impl Primitive for BinaryOp {
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Elementwise
    }

    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Elementwise(crate::backend::ElementwiseOp::Binary(*self)))
    }

    fn commutative(&self) -> bool {
        // Not max and min: which NaN or which signed zero they return follows operand order.
        use BinaryOp::*;
        matches!(self, Add | Mul | Eq | Ne | And | Or | Xor)
    }

    fn passes_through(&self, constants: &[Option<&Array>]) -> Option<usize> {
        // Multiplying by one is exact for every number, infinity and NaN, except that it
        // quiets a signalling NaN: dropping it, as XLA's simplifier does too, leaves such a
        // NaN signalling under `#[jit]` where eager execution quiets it (the README says so).
        // (Adding zero is not exact: -0 + 0 is +0.) Derivatives produce these products: a
        // cotangent of ones broadcast over what it scales.
        let ones = |k: usize| constants[k].is_some_and(all_ones);
        match self {
            BinaryOp::Mul if ones(1) => Some(0),
            BinaryOp::Mul if ones(0) => Some(1),
            _ => None,
        }
    }

    fn slice_op(&self) -> Option<SliceOp> {
        use BinaryOp::*;
        matches!(self, Add | Sub | Mul | Div | Max | Min).then_some(SliceOp::Binary(*self))
    }
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        elementwise(self, args, dims)
    }

    fn name(&self) -> String {
        self.op_name().to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (a, b) = (&inputs[0], &inputs[1]);
        if a.dtype != b.dtype {
            return Err(format!("operands must have the same dtype, got {}", describe(inputs)));
        }
        let d = a.dtype;
        if d.is_complex() && !self.accepts_complex() {
            return Err(format!(
                "{} is not defined for complex operands (complex numbers have no order), got {}",
                self.op_name(),
                describe(inputs)
            ));
        }
        let ok = match self.kind() {
            Kind::Arithmetic => !d.is_bool(),
            Kind::Float => d.is_float(),
            Kind::Logical => d.is_bool() || d.is_int(),
            Kind::Comparison | Kind::Order => true,
        };
        if !ok {
            let wants = match self.kind() {
                Kind::Arithmetic => "numeric operands (arithmetic on bool is not defined; convert with .astype first)",
                Kind::Float => "floating-point operands",
                _ => "bool or integer operands",
            };
            return Err(format!("expected {wants}, got {}", describe(inputs)));
        }
        let shape = broadcast_shapes(&a.shape, &b.shape)
            .ok_or_else(|| format!("shapes do not broadcast together: {}", describe(inputs)))?;
        let dtype = if self.is_comparison() { DType::Bool } else { d };
        let weak = !self.is_comparison() && a.weak && b.weak;
        Ok(vec![Aval { shape, dtype, weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (a, b) = (inputs[0], inputs[1]);
        let out = &outputs[0];
        let buffer = crate::with_buffer!(a.buffer(), |av: T| {
            let bv = b.as_slice::<T>().expect("the shape rule checked the dtypes agree");
            eval_typed(*self, (av, a.shape()), (bv, b.shape()), &out.shape)
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (a, b) = (&primals[0], &primals[1]);
        let out = super::bind1(self, &[a, b]);
        let (ta, tb) = (&tangents[0], &tangents[1]);
        let t = match self.kind() {
            Kind::Comparison | Kind::Logical => None,
            _ => {
                let from_a = ta.as_ref().and_then(|t| self.partial_a(a, b, &out, t));
                let from_b = tb.as_ref().and_then(|t| self.partial_b(a, b, &out, t));
                ops::add_tangents(from_a, from_b).map(|t| broadcast_to(&t, out.shape()))
            }
        };
        Ok((vec![out], vec![t]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = &cts[0] else { return Ok(vec![None, None]) };
        let (a, b) = (&args[0], &args[1]);
        let back = |ct: Array, arg: &LinearArg| Some(unbroadcast(&ct, &arg.aval().shape));
        let both_linear = a.is_linear() && b.is_linear();
        let cts = match (self, a.known(), b.known()) {
            (BinaryOp::Add, _, _) => {
                vec![a.is_linear().then(|| ct.clone()), b.is_linear().then(|| ct.clone())]
            }
            (BinaryOp::Sub, _, _) => {
                vec![a.is_linear().then(|| ct.clone()), b.is_linear().then(|| neg(ct))]
            }
            (BinaryOp::Mul, None, Some(b)) => vec![Some(mul(ct, b)), None],
            (BinaryOp::Mul, Some(a), None) => vec![None, Some(mul(a, ct))],
            (BinaryOp::Div, None, Some(b)) => vec![Some(div(ct, b)), None],
            _ if both_linear => {
                return Err(format!(
                    "{} of two differentiated values is not linear",
                    self.op_name()
                ))
            }
            _ => return Err(format!("{} is not linear in this operand", self.op_name())),
        };
        Ok(cts.into_iter().zip([a, b]).map(|(c, arg)| c.and_then(|c| back(c, arg))).collect())
    }
}

impl BinaryOp {
    /// The tangent contribution of operand `a` (tangent `t`) to `out = op(a, b)`, with JAX's
    /// conventions: `max`/`min` ties give half to each side, `pow` has zero slope where the
    /// exponent is 0.
    fn partial_a(self, a: &Array, b: &Array, out: &Array, t: &Array) -> Tangent {
        use BinaryOp::*;
        let d = match self {
            Add | Sub | Rem => t.clone(),
            Mul => mul(t, b),
            Div => div(t, b),
            Pow => {
                let zero = scalar(b, 0.0);
                let b_minus_one = ops::sub(b, &scalar(b, 1.0));
                let slope = mul(b, &ops::binary(Pow, a, &b_minus_one));
                mul(t, &select(&ops::eq(b, &zero), &ops::zeros(&slope.aval()), &slope))
            }
            Max | Min => mul(t, &balanced_eq(a, out, b)),
            Atan2 => mul(t, &div(b, &add(&mul(a, a), &mul(b, b)))),
            NextAfter => return None,
            Eq | Ne | Lt | Le | Gt | Ge | And | Or | Xor => return None,
        };
        Some(d)
    }

    /// The tangent contribution of operand `b` (tangent `t`) to `out = op(a, b)`.
    fn partial_b(self, a: &Array, b: &Array, out: &Array, t: &Array) -> Tangent {
        use BinaryOp::*;
        let d = match self {
            Add => t.clone(),
            Sub => neg(t),
            Mul => mul(a, t),
            Div => neg(&mul(t, &div(&div(a, b), b))),
            Rem => {
                let q = div(a, b);
                let whole = mul(
                    &ops::unary(UnaryOp::Sign, &q),
                    &ops::unary(UnaryOp::Floor, &ops::unary(UnaryOp::Abs, &q)),
                );
                neg(&mul(t, &whole))
            }
            Pow => {
                // log(a) * a^b, with a = 0 replaced by 1 so the slope there is 0, not NaN.
                let zero = scalar(a, 0.0);
                let safe =
                    select(&ops::eq(a, &zero), &ops::broadcast_to(&scalar(a, 1.0), a.shape()), a);
                mul(t, &mul(&ops::unary(UnaryOp::Log, &safe), out))
            }
            Max | Min => mul(t, &balanced_eq(b, out, a)),
            Atan2 => neg(&mul(t, &div(a, &add(&mul(a, a), &mul(b, b))))),
            NextAfter => return None,
            Eq | Ne | Lt | Le | Gt | Ge | And | Or | Xor => return None,
        };
        Some(d)
    }
}

/// How much of `max(x, y) = z`'s slope goes to `x`: 1 where `x` alone attains `z`, 1/2 at a
/// tie, 0 elsewhere (JAX's `_balanced_eq`).
fn balanced_eq(x: &Array, z: &Array, y: &Array) -> Array {
    let one = scalar(z, 1.0);
    let zeros = ops::zeros(&z.aval());
    let ones = ops::broadcast_to(&one, z.shape());
    let num = select(&ops::eq(x, z), &ones, &zeros);
    let den = select(&ops::eq(y, z), &ops::broadcast_to(&scalar(z, 2.0), z.shape()), &ones);
    div(&num, &den)
}

type Operand<'a, T> = (&'a [T], &'a [usize]);

fn eval_typed<T: Scalar>(op: BinaryOp, a: Operand<T>, b: Operand<T>, shape: &[usize]) -> Buffer {
    use BinaryOp::*;
    if let Some(out) = T::inlined(op, a, b, shape) {
        return out;
    }
    let same = |f: fn(T, T) -> T| T::wrap(zip(a, b, shape, f));
    let test = |f: fn(T, T) -> bool| Buffer::Bool(zip(a, b, shape, f));
    match op {
        Add => same(T::add),
        Sub => same(T::sub),
        Mul => same(T::mul),
        Div => same(T::div),
        Rem => same(T::rem),
        Pow => same(T::pow),
        Max => same(T::max),
        Min => same(T::min),
        Atan2 => same(T::atan2),
        NextAfter => same(T::next_after),
        And => same(T::and),
        Or => same(T::or),
        Xor => same(T::xor),
        Eq => test(|x, y| x == y),
        Ne => test(|x, y| x != y),
        Lt => test(T::lt),
        Le => test(T::le),
        Gt => test(|x, y| T::lt(y, x)),
        Ge => test(|x, y| T::le(y, x)),
    }
}

/// `op` (one of those [`BinaryOp::slice_op`] offers) of `a` and `b` into `dst`, with the
/// scalar functions of [`eval_typed`], so fused and unfused results agree bit for bit.
// Inlined so that the fused path's AVX2 entry point compiles the loops for wider vectors.
#[inline(always)]
pub(crate) fn float_op_into<T: Scalar>(op: BinaryOp, a: Src<T>, b: Src<T>, dst: &mut [T]) {
    use BinaryOp::*;
    match op {
        Add => apply(a, b, dst, T::add),
        Sub => apply(a, b, dst, T::sub),
        Mul => apply(a, b, dst, T::mul),
        Div => apply(a, b, dst, T::div),
        Max => apply(a, b, dst, T::max),
        Min => apply(a, b, dst, T::min),
        _ => unreachable!("{} has no slice form", op.op_name()),
    }
}

/// One loop per operand form, each with `f` inlined, so each vectorizes.
#[inline(always)]
fn apply<T: Copy>(a: Src<T>, b: Src<T>, dst: &mut [T], f: impl Fn(T, T) -> T) {
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => {
            for ((o, &x), &y) in dst.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
        (Src::Slice(a), Src::Scalar(y)) => {
            for (o, &x) in dst.iter_mut().zip(a) {
                *o = f(x, y);
            }
        }
        (Src::Scalar(x), Src::Slice(b)) => {
            for (o, &y) in dst.iter_mut().zip(b) {
                *o = f(x, y);
            }
        }
        (Src::Scalar(x), Src::Scalar(y)) => dst.fill(f(x, y)),
    }
}

/// Per-type scalar semantics of the binary primitives. Methods a type's shape rule excludes
/// (arithmetic on bool, `atan2` on integers) are never called for it.
pub(crate) trait Scalar: Element {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn pow(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn atan2(self, o: Self) -> Self;
    fn next_after(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn lt(self, o: Self) -> bool;
    fn le(self, o: Self) -> bool;
    /// The hot arithmetic of float types with the scalar function inlined into its own loop,
    /// so it vectorizes; the other operations and types share loops that call through a
    /// function pointer, which keeps the crate's compile time down.
    fn inlined(
        _op: BinaryOp,
        _a: Operand<Self>,
        _b: Operand<Self>,
        _shape: &[usize],
    ) -> Option<Buffer> {
        None
    }
}

macro_rules! float_scalar {
    ($($t:ident),*) => {$(
        impl Scalar for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
            // XLA's `fmod` counts a subnormal divisor as zero but keeps a subnormal dividend
            // and result (it computes on the bits, as the C library does).
            #[inline(always)] fn rem(self, o: Self) -> Self { self % flushed(o) }
            #[inline(always)] fn pow(self, o: Self) -> Self { self.xla_pow(o) }
            // NaN propagates through max/min, as in XLA. Subnormal operands count as zeros of
            // their sign, and between equal operands +0 is larger than -0 (XLA's `max` and
            // `min` are IEEE's `maximum` and `minimum` under its float modes). Written as a chain
            // of selects, which the compiler vectorizes.
            #[inline(always)] fn max(self, o: Self) -> Self {
                let (a, b) = (flushed(self), flushed(o));
                let pick = if b > a { b } else { a };
                let pick = if a == b { $t::from_bits(a.to_bits() & b.to_bits()) } else { pick };
                let pick = if b.is_nan() { b } else { pick };
                if a.is_nan() { a } else { pick }
            }
            #[inline(always)] fn min(self, o: Self) -> Self {
                let (a, b) = (flushed(self), flushed(o));
                let pick = if b < a { b } else { a };
                let pick = if a == b { $t::from_bits(a.to_bits() | b.to_bits()) } else { pick };
                let pick = if b.is_nan() { b } else { pick };
                if a.is_nan() { a } else { pick }
            }
            // The C library's `atan2` under the modes gives XLA's results, subnormals included.
            #[inline(always)] fn atan2(self, o: Self) -> Self { $t::atan2(self, o) }
            #[inline(always)] fn next_after(self, o: Self) -> Self { self.xla_next_after(o) }
            #[inline(always)] fn and(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn or(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn xor(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn le(self, o: Self) -> bool { self <= o }
            fn inlined(op: BinaryOp, a: Operand<Self>, b: Operand<Self>, shape: &[usize]) -> Option<Buffer> {
                let out = match op {
                    BinaryOp::Add => zip(a, b, shape, |x: $t, y| x + y),
                    BinaryOp::Sub => zip(a, b, shape, |x: $t, y| x - y),
                    BinaryOp::Mul => zip(a, b, shape, |x: $t, y| x * y),
                    BinaryOp::Div => zip(a, b, shape, |x: $t, y| x / y),
                    BinaryOp::Max => zip(a, b, shape, <$t as Scalar>::max),
                    BinaryOp::Min => zip(a, b, shape, <$t as Scalar>::min),
                    _ => return None,
                };
                Some(<$t as Element>::wrap(out))
            }
        }
    )*};
}

/// A subnormal as the zero of its sign, checked on the bits (so whatever the thread's float
/// modes): XLA's denormals-are-zero and flush-to-zero, for what the processor's modes miss.
#[inline(always)]
fn flushed<T: FloatBits>(x: T) -> T {
    x.flushed()
}

/// The float types' bits, for the operations XLA computes on them.
trait FloatBits: Copy {
    /// See [`flushed`].
    fn flushed(self) -> Self;
    /// `nextafter` as XLA computes it: `y` where `x == y` (a comparison that counts
    /// subnormals as zeros), else a step of `x`'s bits towards `y`.
    fn xla_next_after(self, y: Self) -> Self;
    /// `pow` under XLA's float modes: a subnormal base has the logarithm of half the smallest
    /// subnormal (`pow(1e-40, 0.5)` is `2^-75` in `float32`), a subnormal exponent is not a
    /// whole number, and a subnormal result flushes.
    fn xla_pow(self, y: Self) -> Self;
}

macro_rules! float_bits {
    ($($t:ident: $bits:ident, $log2_half_tiniest:expr);*) => {$(
        impl FloatBits for $t {
            #[inline(always)]
            fn flushed(self) -> Self {
                let bits = self.to_bits();
                if bits & $t::INFINITY.to_bits() == 0 {
                    $t::from_bits(bits & (-0.0 as $t).to_bits())
                } else {
                    self
                }
            }

            #[inline(always)]
            fn xla_next_after(self, y: Self) -> Self {
                const SIGN: $bits = 1 << ($bits::BITS - 1);
                if self.is_nan() || y.is_nan() {
                    return $t::NAN;
                }
                if self.flushed() == y.flushed() {
                    return y;
                }
                let (x_bits, y_bits) = (self.to_bits(), y.to_bits());
                let (x_mag, y_mag) = (x_bits & !SIGN, y_bits & !SIGN);
                if x_mag == 0 {
                    return $t::from_bits((y_bits & SIGN) | 1);
                }
                let down = (x_bits & SIGN) != (y_bits & SIGN) || x_mag > y_mag;
                $t::from_bits(if down { x_bits - 1 } else { x_bits + 1 })
            }

            // `y as f64` and `as $t` are casts between f64s for `f64`.
            #[allow(clippy::unnecessary_cast)]
            fn xla_pow(self, y: Self) -> Self {
                let subnormal = |v: $t| v.flushed().to_bits() != v.to_bits();
                if !subnormal(self) {
                    return self.powf(y).flushed();
                }
                let whole = |v: $t| !subnormal(v) && v.trunc() == v;
                let magnitude = (($log2_half_tiniest) * (y as f64)).exp2() as $t;
                let r = if y.is_nan() {
                    $t::NAN
                } else if self.is_sign_positive() {
                    magnitude
                } else if !whole(y) {
                    $t::NAN
                } else if whole(y * 0.5) {
                    magnitude
                } else {
                    -magnitude
                };
                r.flushed()
            }
        }
    )*};
}

float_bits!(f32: u32, -150.0; f64: u64, -1075.0);

float_scalar!(f32, f64);

/// Half-precision arithmetic rounds each result from f32, as XLA does on CPU.
macro_rules! half_scalar {
    ($($t:ident),*) => {$(
        impl Scalar for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { Self::from_f32(self.to_f32() + o.to_f32()) }
            #[inline(always)] fn sub(self, o: Self) -> Self { Self::from_f32(self.to_f32() - o.to_f32()) }
            #[inline(always)] fn mul(self, o: Self) -> Self { Self::from_f32(self.to_f32() * o.to_f32()) }
            #[inline(always)] fn div(self, o: Self) -> Self { Self::from_f32(self.to_f32() / o.to_f32()) }
            #[inline(always)] fn rem(self, o: Self) -> Self { Self::from_f32(self.to_f32() % o.to_f32()) }
            #[inline(always)] fn pow(self, o: Self) -> Self { Self::from_f32(self.to_f32().powf(o.to_f32())) }
            #[inline(always)] fn max(self, o: Self) -> Self { Self::from_f32(Scalar::max(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn min(self, o: Self) -> Self { Self::from_f32(Scalar::min(self.to_f32(), o.to_f32())) }
            #[inline(always)] fn atan2(self, o: Self) -> Self { Self::from_f32(self.to_f32().atan2(o.to_f32())) }
            #[inline(always)] fn next_after(self, o: Self) -> Self {
                Self::from_f64(next_after_half(self.to_f64(), o.to_f64(), self.to_bits(), Self::from_bits))
            }
            #[inline(always)] fn and(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn or(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn xor(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn le(self, o: Self) -> bool { self <= o }
        }
    )*};
}

fn next_after_half<H: Element>(x: f64, y: f64, x_bits: u16, from_bits: fn(u16) -> H) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x == 0.0 {
        let tiny = from_bits(1).to_f64();
        return if y > 0.0 { tiny } else { -tiny };
    }
    let away_from_zero = (y > x) == (x > 0.0);
    from_bits(if away_from_zero { x_bits + 1 } else { x_bits - 1 }).to_f64()
}

half_scalar!(f16, bf16);

macro_rules! int_scalar {
    ($($t:ident),*) => {$(
        impl Scalar for $t {
            #[inline(always)] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            // XLA's integer semantics: x / 0 is all ones (-1 when signed), MIN / -1 wraps.
            #[inline(always)] fn div(self, o: Self) -> Self { if o == 0 { !0 } else { self.wrapping_div(o) } }
            // x % 0 is x, as in XLA.
            #[inline(always)] fn rem(self, o: Self) -> Self { if o == 0 { self } else { self.wrapping_rem(o) } }
            #[inline(always)] fn pow(self, o: Self) -> Self { int_pow(self as i128, o as i128) as $t }
            #[inline(always)] fn max(self, o: Self) -> Self { Ord::max(self, o) }
            #[inline(always)] fn min(self, o: Self) -> Self { Ord::min(self, o) }
            #[inline(always)] fn atan2(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn next_after(self, _: Self) -> Self { unreachable!() }
            #[inline(always)] fn and(self, o: Self) -> Self { self & o }
            #[inline(always)] fn or(self, o: Self) -> Self { self | o }
            #[inline(always)] fn xor(self, o: Self) -> Self { self ^ o }
            #[inline(always)] fn lt(self, o: Self) -> bool { self < o }
            #[inline(always)] fn le(self, o: Self) -> bool { self <= o }
        }
    )*};
}

int_scalar!(i8, i16, i32, i64, u8, u16, u32, u64);

/// Complex arithmetic; the ordering, bitwise and real-only operations are refused for complex
/// operands by the shape rule ([`BinaryOp::accepts_complex`]).
macro_rules! complex_scalar {
    ($($t:ident),*) => {$(
        impl Scalar for num_complex::Complex<$t> {
            #[inline(always)] fn add(self, o: Self) -> Self { self + o }
            #[inline(always)] fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)] fn mul(self, o: Self) -> Self { self * o }
            #[inline(always)] fn div(self, o: Self) -> Self { self / o }
            // exp(y log x), with 0 ** 0 = 1 and 0 ** y = 0 where Re(y) > 0, as XLA computes it.
            fn pow(self, o: Self) -> Self {
                if self.re == 0.0 && self.im == 0.0 {
                    if o.re == 0.0 && o.im == 0.0 {
                        return Self::new(1.0, 0.0);
                    }
                    if o.re > 0.0 {
                        return Self::new(0.0, 0.0);
                    }
                }
                (o * self.ln()).exp()
            }
            fn rem(self, _: Self) -> Self { unreachable!() }
            fn max(self, _: Self) -> Self { unreachable!() }
            fn min(self, _: Self) -> Self { unreachable!() }
            fn atan2(self, _: Self) -> Self { unreachable!() }
            fn next_after(self, _: Self) -> Self { unreachable!() }
            fn and(self, _: Self) -> Self { unreachable!() }
            fn or(self, _: Self) -> Self { unreachable!() }
            fn xor(self, _: Self) -> Self { unreachable!() }
            fn lt(self, _: Self) -> bool { unreachable!() }
            fn le(self, _: Self) -> bool { unreachable!() }
        }
    )*};
}

complex_scalar!(f32, f64);

/// Integer power by squaring, wrapping like the narrower type will when truncated. A negative
/// exponent gives 0 except for bases 1 and -1, as XLA computes it.
fn int_pow(base: i128, exp: i128) -> i128 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 => {
                if exp % 2 == 0 {
                    1
                } else {
                    -1
                }
            }
            _ => 0,
        };
    }
    let (mut acc, mut b, mut e) = (1i128, base, exp);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    acc
}

impl Scalar for bool {
    fn add(self, o: Self) -> Self {
        self | o
    }
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn div(self, o: Self) -> Self {
        self & o
    }
    fn rem(self, _: Self) -> Self {
        false
    }
    fn pow(self, o: Self) -> Self {
        self | !o
    }
    fn max(self, o: Self) -> Self {
        self | o
    }
    fn min(self, o: Self) -> Self {
        self & o
    }
    fn atan2(self, _: Self) -> Self {
        unreachable!()
    }
    fn next_after(self, _: Self) -> Self {
        unreachable!()
    }
    fn and(self, o: Self) -> Self {
        self & o
    }
    fn or(self, o: Self) -> Self {
        self | o
    }
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    fn lt(self, o: Self) -> bool {
        !self & o
    }
    fn le(self, o: Self) -> bool {
        !self | o
    }
}
