//! Elementwise primitives of one operand: `neg`, `exp`, `tanh`, `is_finite`, ...

use half::{bf16, f16};

use super::bind1;
use super::{expect_arity, Aval, Fusion, Primitive, SliceOp};
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::exec::cpu::elementwise::map;
use crate::exec::cpu::special_math;
use crate::exec::cpu::xla_math::{
    erf_f32, erf_inv_f32, erf_inv_f64, exp_f32, log1p_f32, log1p_f64, log_f32, tanh_f32,
};
use crate::transform::ad::ops::{self, add, div, mul, neg, scalar, scale, select, unary};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// An elementwise function of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Abs,
    Sign,
    Square,
    Not,
    Exp,
    Exp2,
    Log,
    Log1p,
    Expm1,
    Sqrt,
    Rsqrt,
    Cbrt,
    Reciprocal,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Logistic,
    Erf,
    /// `1 - erf(x)`, accurate where `erf(x)` is near 1.
    Erfc,
    ErfInv,
    /// `ln |Gamma(x)|`.
    Lgamma,
    /// `d/dx ln Gamma(x)`.
    Digamma,
    /// `e^-|x| I_0(x)`, the exponentially scaled modified Bessel function of order 0.
    BesselI0e,
    /// `e^-|x| I_1(x)`.
    BesselI1e,
    Floor,
    Ceil,
    /// Rounds half to even, as `jnp.round` does.
    Round,
    IsNan,
    IsFinite,
    /// `x ** n` for a fixed integer `n`, by repeated multiplication (`lax.integer_pow`).
    IntegerPow(i32),
}

/// Which dtypes an op accepts and what it returns.
enum Kind {
    /// Floats in, same float out.
    Float,
    /// Any number (not bool) in, same type out.
    Numeric,
    /// Bool or integer in, same type out (logical / bitwise not).
    Logical,
    /// Float in, bool out.
    Predicate,
}

impl UnaryOp {
    fn kind(self) -> Kind {
        use UnaryOp::*;
        match self {
            Neg | Abs | Sign | Square | IntegerPow(_) => Kind::Numeric,
            Not => Kind::Logical,
            IsNan | IsFinite => Kind::Predicate,
            _ => Kind::Float,
        }
    }

    /// The lowercase name used in messages and IR (`tanh`, `is_finite`).
    pub fn op_name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Sign => "sign",
            Square => "square",
            Not => "not",
            Exp => "exp",
            Exp2 => "exp2",
            Log => "log",
            Log1p => "log1p",
            Expm1 => "expm1",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Cbrt => "cbrt",
            Reciprocal => "reciprocal",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Logistic => "logistic",
            Erf => "erf",
            Erfc => "erfc",
            ErfInv => "erf_inv",
            Lgamma => "lgamma",
            Digamma => "digamma",
            BesselI0e => "bessel_i0e",
            BesselI1e => "bessel_i1e",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            IsNan => "is_nan",
            IsFinite => "is_finite",
            IntegerPow(_) => "integer_pow",
        }
    }

    /// Whether the op takes only floating-point operands (so `jnp` promotes integers first).
    pub fn needs_float(self) -> bool {
        matches!(self.kind(), Kind::Float | Kind::Predicate)
    }

    /// Whether the op is defined for complex operands (`abs` of them is real).
    pub fn accepts_complex(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Neg | Abs
                | Sign
                | Square
                | IntegerPow(_)
                | Exp
                | Log
                | Sqrt
                | Rsqrt
                | Reciprocal
                | Sin
                | Cos
                | Tan
                | Sinh
                | Cosh
                | Tanh
        )
    }
}

impl Primitive for UnaryOp {
    fn fusion(&self) -> Fusion<'_> {
        Fusion::Elementwise
    }

    /// Every operation but the special functions, which have no GPU kernel yet.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        use UnaryOp::*;
        if matches!(self, Erfc | Lgamma | Digamma | BesselI0e | BesselI1e) {
            return None;
        }
        Some(crate::backend::DeviceOp::Elementwise(crate::backend::ElementwiseOp::Unary(*self)))
    }

    fn slice_op(&self) -> Option<SliceOp> {
        use UnaryOp::*;
        matches!(
            self,
            Neg | Abs
                | Square
                | Exp
                | Log
                | Log1p
                | Sqrt
                | Rsqrt
                | Reciprocal
                | Sin
                | Cos
                | Tanh
                | Logistic
                | IntegerPow(_)
        )
        .then_some(SliceOp::Unary(*self))
    }
    /// Elementwise in its one operand: the batch axis stays where it is.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        one(bind1(self, &[&args[0]]), dims[0])
    }

    fn name(&self) -> String {
        match self {
            UnaryOp::IntegerPow(n) => format!("integer_pow[y={n}]"),
            op => op.op_name().to_string(),
        }
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        if let UnaryOp::IntegerPow(n) = self {
            if *n < 0 && x.dtype.is_int() {
                return Err(format!(
                    "integers cannot be raised to the negative power {n}, got {x}"
                ));
            }
        }
        if x.dtype.is_complex() {
            return self.complex_aval(x);
        }
        let ok = match self.kind() {
            Kind::Float | Kind::Predicate => x.dtype.is_float(),
            Kind::Numeric => !x.dtype.is_bool(),
            Kind::Logical => x.dtype.is_bool() || x.dtype.is_int(),
        };
        if !ok {
            let wants = match self.kind() {
                Kind::Float | Kind::Predicate => "a floating-point operand",
                Kind::Numeric => "a numeric operand (bool arithmetic is not defined)",
                Kind::Logical => "a bool or integer operand",
            };
            return Err(format!("expected {wants}, got {x}"));
        }
        let out = match self.kind() {
            Kind::Predicate => Aval { shape: x.shape.clone(), dtype: DType::Bool, weak: false },
            _ => x.clone(),
        };
        Ok(vec![out])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let buffer = match x.buffer() {
            Buffer::F32(v) => float_op(*self, v),
            Buffer::F64(v) => float_op(*self, v),
            Buffer::C64(v) => complex_op_c64(*self, v),
            Buffer::C128(v) => complex_op_c128(*self, v),
            Buffer::F16(v) => via_f32(*self, v, f16::from_f32, f16::to_f32),
            Buffer::BF16(v) => via_f32(*self, v, bf16::from_f32, bf16::to_f32),
            Buffer::Bool(v) => Buffer::Bool(map(v, |b: bool| !b)),
            Buffer::I8(v) => int_op(*self, v),
            Buffer::I16(v) => int_op(*self, v),
            Buffer::I32(v) => int_op(*self, v),
            Buffer::I64(v) => int_op(*self, v),
            Buffer::U8(v) => int_op(*self, v),
            Buffer::U16(v) => int_op(*self, v),
            Buffer::U32(v) => int_op(*self, v),
            Buffer::U64(v) => int_op(*self, v),
        };
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let x = &primals[0];
        let y = super::bind1(self, &[x]);
        let t = tangents[0].as_ref().expect("jvp rules run with a nonzero tangent");
        let ty = derivative(*self, x, &y, t);
        Ok((vec![y], vec![ty]))
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        match self {
            UnaryOp::Neg => Ok(vec![cts[0].as_ref().map(neg)]),
            _ => Err(format!("{} is not linear", self.op_name())),
        }
    }
}

impl UnaryOp {
    /// The shape rule for a complex operand.
    fn complex_aval(self, x: &Aval) -> Result<Vec<Aval>, String> {
        if !self.accepts_complex() {
            return Err(format!("{} is not defined for complex operands, got {x}", self.op_name()));
        }
        let dtype = if self == UnaryOp::Abs { x.dtype.to_real() } else { x.dtype };
        Ok(vec![Aval { shape: x.shape.clone(), dtype, weak: x.weak }])
    }
}

/// `abs`'s tangent at a complex `x` (JAX's rule): `re(t conj(x) / |x|)`, with `|x| = 0`
/// replaced by 1.
fn complex_abs_derivative(x: &Array, y: &Array, t: &Array) -> Array {
    let r = ops::convert(y, x.dtype());
    let zero = ops::eq(&r, &scalar(&r, 0.0));
    let safe = select(&zero, &ops::broadcast_to(&scalar(&r, 1.0), r.shape()), &r);
    let c = crate::primitives::complex::conj(x);
    crate::primitives::complex::real(&mul(t, &div(&c, &safe)))
}

/// The tangent of `y = op(x)` along `t`, following JAX's conventions at kinks: `abs` has
/// slope 1 at 0, `sign`, `floor`, `ceil` and `round` have zero derivative, `sqrt` at 0 is inf.
fn derivative(op: UnaryOp, x: &Array, y: &Array, t: &Array) -> Tangent {
    use UnaryOp::*;
    let c = |v: f64| scalar(x, v);
    let one_minus_sq = |v: &Array| ops::sub(&c(1.0), &mul(v, v));
    let d = match op {
        Neg => neg(t),
        Abs if x.dtype().is_complex() => complex_abs_derivative(x, y, t),
        Abs => {
            let nonneg = ops::binary(super::BinaryOp::Ge, x, &c(0.0));
            select(&nonneg, t, &neg(t))
        }
        Sign | Floor | Ceil | Round | IsNan | IsFinite | Not => return None,
        Square => mul(t, &scale(x, 2.0)),
        Exp => mul(t, y),
        Exp2 => mul(t, &scale(y, std::f64::consts::LN_2)),
        Log => div(t, x),
        Log1p => div(t, &add(&c(1.0), x)),
        Expm1 => mul(t, &add(y, &c(1.0))),
        Sqrt => div(t, &scale(y, 2.0)),
        Rsqrt => mul(t, &div(&scale(y, -0.5), x)),
        // JAX's rule, `t / (3 y^2)`: infinite at 0 (where `y / 3x` would be NaN).
        Cbrt => mul(t, &scale(&div(&c(1.0), &mul(y, y)), 1.0 / 3.0)),
        Reciprocal => mul(t, &neg(&mul(y, y))),
        Sin => mul(t, &unary(Cos, x)),
        Cos => mul(t, &neg(&unary(Sin, x))),
        Tan => mul(t, &add(&c(1.0), &mul(y, y))),
        Asin => mul(t, &unary(Rsqrt, &one_minus_sq(x))),
        Acos => mul(t, &neg(&unary(Rsqrt, &one_minus_sq(x)))),
        Atan => div(t, &add(&c(1.0), &mul(x, x))),
        Sinh => mul(t, &unary(Cosh, x)),
        Cosh => mul(t, &unary(Sinh, x)),
        Tanh => mul(t, &one_minus_sq(y)),
        Asinh => mul(t, &unary(Rsqrt, &add(&mul(x, x), &c(1.0)))),
        Acosh => {
            let below = ops::sub(x, &c(1.0));
            let above = add(x, &c(1.0));
            mul(t, &unary(Rsqrt, &mul(&below, &above)))
        }
        Atanh => div(t, &one_minus_sq(x)),
        Logistic => mul(t, &mul(y, &ops::sub(&c(1.0), y))),
        Erf => {
            let gauss = unary(Exp, &neg(&mul(x, x)));
            mul(t, &scale(&gauss, std::f64::consts::FRAC_2_SQRT_PI))
        }
        Erfc => {
            let gauss = unary(Exp, &neg(&mul(x, x)));
            mul(t, &scale(&gauss, -std::f64::consts::FRAC_2_SQRT_PI))
        }
        ErfInv => {
            let e = unary(Exp, &mul(y, y));
            mul(t, &scale(&e, std::f64::consts::PI.sqrt() / 2.0))
        }
        Lgamma => mul(t, &unary(Digamma, x)),
        Digamma => mul(t, &trigamma(x)),
        BesselI0e => {
            let sign_y = mul(&unary(Sign, x), y);
            mul(t, &ops::sub(&unary(BesselI1e, x), &sign_y))
        }
        BesselI1e => mul(t, &bessel_i1e_slope(x, y)),
        IntegerPow(0) => return None,
        IntegerPow(1) => t.clone(),
        IntegerPow(n) => {
            let lower = match n.checked_sub(1) {
                Some(1) => x.clone(),
                Some(m) => unary(IntegerPow(m), x),
                // x^(i32::MIN - 1) has no exponent of its own: it is x^i32::MIN / x.
                None => div(y, x),
            };
            mul(t, &scale(&lower, n as f64))
        }
    };
    Some(d)
}

/// Below this, the recurrence `psi1(x) = psi1(x + 1) + 1/x^2` carries [`trigamma`]'s argument
/// up to where its asymptotic series is accurate (first omitted term about `1e-13`).
const TRIGAMMA_SHIFT: usize = 10;

/// `B_2k` for k = 1..7: trigamma's asymptotic series is `1/x + 1/(2x^2) + sum B_2k / x^(2k+1)`.
const TRIGAMMA_SERIES: [f64; 7] =
    [1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0, -691.0 / 2730.0, 7.0 / 6.0];

/// The trigamma function `psi'(x)`, digamma's derivative, composed of primitives (so that it is
/// itself differentiable, as JAX's `polygamma(1, x)` is): reflection below 1/2
/// (`psi1(1 - x) + psi1(x) = pi^2 / sin^2(pi x)`), a fixed number of recurrence steps, then
/// the asymptotic series.
fn trigamma(x: &Array) -> Array {
    let c = |v: f64| scalar(x, v);
    let reflect = ops::binary(super::BinaryOp::Lt, x, &c(0.5));
    let z = select(&reflect, &ops::sub(&c(1.0), x), x);
    let mut acc = c(0.0);
    for k in 0..TRIGAMMA_SHIFT {
        let r = div(&c(1.0), &add(&z, &c(k as f64)));
        acc = add(&acc, &mul(&r, &r));
    }
    let w = add(&z, &c(TRIGAMMA_SHIFT as f64));
    let inv = div(&c(1.0), &w);
    let inv2 = mul(&inv, &inv);
    let mut series = c(0.0);
    for &b in TRIGAMMA_SERIES.iter().rev() {
        series = add(&mul(&series, &inv2), &c(b));
    }
    let tail = add(&add(&inv, &scale(&inv2, 0.5)), &mul(&series, &mul(&inv2, &inv)));
    let direct = add(&acc, &tail);
    // sin^2 has period 1: reducing x to [-1/2, 1/2] first keeps pi * x's rounding error (and
    // so the cancellation against the large recurrence terms) small.
    // Elements that take the direct branch reflect 1/2 instead, so that the unused branch
    // stays finite and its zero cotangent does not turn into NaN (0 * inf) under `grad`.
    let reduced = select(&reflect, &ops::sub(x, &unary(UnaryOp::Round, x)), &c(0.5));
    let s = unary(UnaryOp::Sin, &scale(&reduced, std::f64::consts::PI));
    let reflected = ops::sub(&div(&c(std::f64::consts::PI.powi(2)), &mul(&s, &s)), &direct);
    select(&reflect, &reflected, &direct)
}

/// `d i1e / dx = i0e(x) - i1e(x) (sign(x) + 1/x)`, with JAX's limit 1/2 where `|x|` is at most
/// the dtype's epsilon (the formula is 0/0 at 0).
fn bessel_i1e_slope(x: &Array, y: &Array) -> Array {
    let eps = match x.dtype() {
        DType::F64 => f64::EPSILON,
        DType::F32 => f32::EPSILON as f64,
        DType::F16 => f16::EPSILON.to_f64(),
        _ => bf16::EPSILON.to_f64(),
    };
    let c = |v: f64| scalar(x, v);
    let not_tiny = ops::binary(super::BinaryOp::Gt, &unary(UnaryOp::Abs, x), &c(eps));
    let safe_x = select(&not_tiny, x, &c(eps));
    let factor = add(&unary(UnaryOp::Sign, &safe_x), &unary(UnaryOp::Reciprocal, &safe_x));
    let slope = ops::sub(&unary(UnaryOp::BesselI0e, &safe_x), &mul(y, &factor));
    select(&not_tiny, &slope, &c(0.5))
}

/// The unary ops on complex numbers (those [`UnaryOp::accepts_complex`] lists), one
/// function per precision.
macro_rules! complex_op {
    ($name:ident, $t:ident) => {
        fn $name(op: UnaryOp, v: &[num_complex::Complex<$t>]) -> Buffer {
            use num_complex::Complex;
            use UnaryOp::*;
            type C = Complex<$t>;
            let one = C::new(1.0, 0.0);
            macro_rules! f {
                ($g:expr) => {
                    C::wrap(map(v, $g))
                };
            }
            match op {
                Neg => f!(|z: C| -z),
                Abs => <$t as Element>::wrap(map(v, |z: C| z.norm())),
                Sign => f!(|z: C| {
                    let r = z.norm();
                    if r == 0.0 {
                        C::new(0.0, 0.0)
                    } else {
                        z / r
                    }
                }),
                Square => f!(|z: C| z * z),
                IntegerPow(n) => f!(|z: C| z.powi(n)),
                Exp => f!(|z: C| z.exp()),
                Log => f!(|z: C| z.ln()),
                Sqrt => f!(|z: C| z.sqrt()),
                Rsqrt => f!(|z: C| one / z.sqrt()),
                Reciprocal => f!(|z: C| one / z),
                Sin => f!(|z: C| z.sin()),
                Cos => f!(|z: C| z.cos()),
                Tan => f!(|z: C| z.tan()),
                Sinh => f!(|z: C| z.sinh()),
                Cosh => f!(|z: C| z.cosh()),
                Tanh => f!(|z: C| z.tanh()),
                _ => unreachable!(
                    "{} is refused for complex operands by its shape rule",
                    op.op_name()
                ),
            }
        }
    };
}

complex_op!(complex_op_c64, f32);
complex_op!(complex_op_c128, f64);

/// Half-precision floats compute in f32 and round back, as XLA does on CPU.
fn via_f32<H: Element>(
    op: UnaryOp,
    v: &[H],
    from: impl Fn(f32) -> H + Sync,
    to: impl Fn(H) -> f32 + Sync,
) -> Buffer {
    let wide = map(v, to);
    let result = float_op(op, &wide);
    match &result {
        Buffer::F32(r) => H::wrap(map(r, from)),
        _ => result,
    }
}

fn float_op<T: Real>(op: UnaryOp, v: &[T]) -> Buffer {
    use UnaryOp::*;
    // A macro rather than a closure taking a `fn` pointer: each operation gets its own loop
    // with the scalar function inlined, so the loops vectorize.
    macro_rules! f {
        ($g:expr) => {
            T::wrap(map(v, $g))
        };
    }
    match op {
        Neg => f!(|x| -x),
        Abs => f!(T::abs),
        Sign => f!(T::sign),
        Square => f!(|x| x * x),
        Exp => f!(T::exp),
        Exp2 => f!(xla(T::exp2)),
        Log => f!(T::ln),
        Log1p => f!(T::ln_1p),
        Expm1 => f!(T::exp_m1),
        Sqrt => f!(T::sqrt),
        Rsqrt => f!(|x| T::one() / x.sqrt()),
        Cbrt => f!(xla(T::cbrt)),
        Reciprocal => f!(|x| T::one() / x),
        Sin => f!(T::sin),
        Cos => f!(xla(T::cos)),
        Tan => f!(T::tan),
        Asin => f!(T::asin),
        Acos => f!(xla(T::acos)),
        Atan => f!(T::atan),
        Sinh => f!(xla(T::sinh)),
        Cosh => f!(xla(T::cosh)),
        Tanh => f!(T::tanh),
        Asinh => f!(xla(T::asinh)),
        Acosh => f!(xla(T::acosh)),
        Atanh => f!(xla(T::atanh)),
        Logistic => f!(T::logistic),
        Erf => f!(xla(T::erf)),
        Erfc => f!(xla(T::erfc)),
        ErfInv => f!(xla(T::erf_inv)),
        Lgamma => f!(xla(T::lgamma)),
        Digamma => f!(xla(T::digamma)),
        BesselI0e => f!(xla(T::bessel_i0e)),
        BesselI1e => f!(xla(T::bessel_i1e)),
        Floor => f!(T::floor),
        Ceil => f!(T::ceil),
        Round => f!(T::round_ties_even),
        IsNan => Buffer::Bool(map(v, |x: T| x.is_nan())),
        IsFinite => Buffer::Bool(map(v, |x: T| x.is_finite())),
        IntegerPow(n) => T::wrap(map(v, |x: T| x.powi(n))),
        Not => unreachable!("not is rejected for floats by its shape rule"),
    }
}

/// `op` (one of those [`UnaryOp::slice_op`] offers) from `src` into `dst`, with the scalar
/// functions of [`float_op`], so fused and unfused results agree bit for bit.
// Inlined so that the fused path's AVX2 entry point compiles the loops for wider vectors.
#[inline(always)]
pub(crate) fn float_op_into<T: Real>(op: UnaryOp, src: &[T], dst: &mut [T]) {
    use UnaryOp::*;
    macro_rules! f {
        ($g:expr) => {{
            let g = $g;
            for (o, &x) in dst.iter_mut().zip(src) {
                *o = g(x);
            }
        }};
    }
    match op {
        Neg => f!(|x: T| -x),
        Abs => f!(T::abs),
        Square => f!(|x: T| x * x),
        Exp => f!(T::exp),
        Log => f!(T::ln),
        Log1p => f!(T::ln_1p),
        Sqrt => f!(T::sqrt),
        Rsqrt => f!(|x: T| T::one() / x.sqrt()),
        Reciprocal => f!(|x: T| T::one() / x),
        Sin => f!(T::sin),
        Cos => f!(xla(T::cos)),
        Tanh => f!(T::tanh),
        Logistic => f!(T::logistic),
        IntegerPow(n) => f!(|x: T| x.powi(n)),
        _ => unreachable!("{} has no slice form", op.op_name()),
    }
}

fn int_op<T: Int>(op: UnaryOp, v: &[T]) -> Buffer {
    use UnaryOp::*;
    let out = match op {
        Neg => map(v, T::wrapping_neg),
        Abs => map(v, T::wrapping_abs),
        Sign => map(v, T::signum),
        Square => map(v, |x: T| x.wrapping_mul(x)),
        // By squaring: a loop of `n` multiplications takes seconds per element for large `n`.
        // (Negative powers of integers are refused by the shape rule.)
        IntegerPow(n) => map(v, |x: T| {
            let (mut acc, mut base, mut e) = (T::from_i64(1), x, n.max(0) as u32);
            while e > 0 {
                if e & 1 == 1 {
                    acc = acc.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            acc
        }),
        Not => map(v, T::not),
        _ => unreachable!("{} is rejected for integers by its shape rule", op.op_name()),
    };
    T::wrap(out)
}

/// The float operations unary primitives need, for f32 and f64.
pub(crate) trait Real:
    Element + std::ops::Neg<Output = Self> + std::ops::Mul<Output = Self> + std::ops::Div<Output = Self>
{
    fn one() -> Self;
    fn abs(self) -> Self;
    fn sign(self) -> Self;
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn ln(self) -> Self;
    fn ln_1p(self) -> Self;
    fn exp_m1(self) -> Self;
    fn sqrt(self) -> Self;
    fn cbrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn tanh(self) -> Self;
    fn asinh(self) -> Self;
    fn acosh(self) -> Self;
    fn atanh(self) -> Self;
    fn logistic(self) -> Self;
    fn erf(self) -> Self;
    fn erf_inv(self) -> Self;
    fn erfc(self) -> Self;
    fn lgamma(self) -> Self;
    fn digamma(self) -> Self;
    fn bessel_i0e(self) -> Self;
    fn bessel_i1e(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_ties_even(self) -> Self;
    fn is_nan(self) -> bool;
    fn is_finite(self) -> bool;
    fn powi(self, n: i32) -> Self;
    /// A subnormal as the zero of its sign (checked on the bits, so it holds whatever the
    /// thread's float modes): what XLA's modes do to the operands and results of functions
    /// computed in software here, which the processor's modes do not reach.
    fn flushed(self) -> Self;
}

/// `g` with XLA's float modes applied in software to its operand and result (see
/// [`Real::flushed`]), for the functions of the C math library and the series functions.
#[inline(always)]
fn xla<T: Real>(g: impl Fn(T) -> T) -> impl Fn(T) -> T {
    move |x: T| g(x.flushed()).flushed()
}

macro_rules! real {
    (
        $t:ident, $exp:path, $ln:path, $ln_1p:path, $tanh:path, $erf:path, $erf_inv:path,
        $erfc:path, $lgamma:path
    ) => {
        impl Real for $t {
            #[inline(always)]
            fn flushed(self) -> Self {
                let bits = self.to_bits();
                if bits & (<$t>::INFINITY.to_bits()) == 0 {
                    $t::from_bits(bits & (-0.0 as $t).to_bits())
                } else {
                    self
                }
            }
            #[inline(always)]
            fn one() -> Self {
                1.0
            }
            #[inline(always)]
            fn abs(self) -> Self {
                $t::abs(self)
            }
            #[inline(always)]
            fn sign(self) -> Self {
                // NumPy's sign: 0 at +-0, NaN at NaN; a subnormal counts as a zero of its
                // sign, as under XLA's float modes.
                let x = self.flushed();
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    x
                }
            }
            #[inline(always)]
            fn exp(self) -> Self {
                $exp(self)
            }
            #[inline(always)]
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                // A subnormal counts as zero (the C library's f64 `log` computes it on its bits).
                $ln(self.flushed())
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                $ln_1p(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                // XLA's `expm1` returns a tiny `x` as it is, subnormals too (its select passes
                // the bits through the float modes).
                if self.flushed().to_bits() != self.to_bits() {
                    return self;
                }
                $t::exp_m1(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            #[inline(always)]
            fn cbrt(self) -> Self {
                $t::cbrt(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                // A subnormal is returned as it is, as by XLA's `sin`.
                if self.flushed().to_bits() != self.to_bits() {
                    return self;
                }
                $t::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                $t::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                // A subnormal is returned as it is, as by XLA's `tan`.
                if self.flushed().to_bits() != self.to_bits() {
                    return self;
                }
                $t::tan(self)
            }
            #[inline(always)]
            fn asin(self) -> Self {
                // XLA computes `2 atan2(x, 1 + sqrt(1 - x^2))`, whose `x / 2` flushes below
                // twice the smallest normal number: a zero of `x`'s sign there.
                if self.abs() < 2.0 * $t::MIN_POSITIVE {
                    return $t::from_bits(self.to_bits() & (-0.0 as $t).to_bits());
                }
                $t::asin(self)
            }
            #[inline(always)]
            fn acos(self) -> Self {
                $t::acos(self)
            }
            #[inline(always)]
            fn atan(self) -> Self {
                // A subnormal is returned as it is, as by XLA's `atan`.
                if self.flushed().to_bits() != self.to_bits() {
                    return self;
                }
                $t::atan(self)
            }
            #[inline(always)]
            fn sinh(self) -> Self {
                $t::sinh(self)
            }
            #[inline(always)]
            fn cosh(self) -> Self {
                $t::cosh(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                $tanh(self)
            }
            #[inline(always)]
            fn asinh(self) -> Self {
                $t::asinh(self)
            }
            #[inline(always)]
            fn acosh(self) -> Self {
                $t::acosh(self)
            }
            #[inline(always)]
            fn atanh(self) -> Self {
                $t::atanh(self)
            }
            #[inline(always)]
            fn logistic(self) -> Self {
                // As XLA expands it (and so JAX computes it on CPU): with f32 `exp` being XLA's,
                // the same bits. Results below the smallest normal float are 0, as under XLA's
                // flush-to-zero (f32: from about x = -87.3 down).
                let y = 1.0 / (1.0 + $exp(-self));
                if y < $t::MIN_POSITIVE {
                    0.0
                } else {
                    y
                }
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn erf_inv(self) -> Self {
                $erf_inv(self)
            }
            #[inline(always)]
            fn erfc(self) -> Self {
                $erfc(self)
            }
            #[inline(always)]
            fn lgamma(self) -> Self {
                $lgamma(self)
            }
            // The series functions run in f64 and round once (see `special_math`).
            #[inline(always)]
            fn digamma(self) -> Self {
                special_math::digamma(self as f64) as $t
            }
            #[inline(always)]
            fn bessel_i0e(self) -> Self {
                special_math::bessel_i0e(self as f64) as $t
            }
            #[inline(always)]
            fn bessel_i1e(self) -> Self {
                special_math::bessel_i1e(self as f64) as $t
            }
            #[inline(always)]
            fn floor(self) -> Self {
                $t::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                $t::ceil(self)
            }
            #[inline(always)]
            fn round_ties_even(self) -> Self {
                $t::round_ties_even(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                $t::powi(self, n)
            }
        }
    };
}

real!(f32, exp_f32, log_f32, log1p_f32, tanh_f32, erf_f32, erf_inv_f32, libm::erfcf, libm::lgammaf);
real!(
    f64,
    f64::exp,
    f64::ln,
    log1p_f64,
    f64::tanh,
    libm::erf,
    erf_inv_f64,
    libm::erfc,
    libm::lgamma
);

/// The integer operations unary primitives need.
pub(crate) trait Int: Element {
    fn wrapping_neg(self) -> Self;
    fn wrapping_abs(self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn signum(self) -> Self;
    fn not(self) -> Self;
}

macro_rules! signed_int {
    ($($t:ident),*) => {$(
        impl Int for $t {
            #[inline(always)]
            fn wrapping_neg(self) -> Self { $t::wrapping_neg(self) }
            #[inline(always)]
            fn wrapping_abs(self) -> Self { $t::wrapping_abs(self) }
            #[inline(always)]
            fn wrapping_mul(self, other: Self) -> Self { $t::wrapping_mul(self, other) }
            #[inline(always)]
            fn signum(self) -> Self { $t::signum(self) }
            #[inline(always)]
            fn not(self) -> Self { !self }
        }
    )*};
}

macro_rules! unsigned_int {
    ($($t:ident),*) => {$(
        impl Int for $t {
            #[inline(always)]
            fn wrapping_neg(self) -> Self { $t::wrapping_neg(self) }
            #[inline(always)]
            fn wrapping_abs(self) -> Self { self }
            #[inline(always)]
            fn wrapping_mul(self, other: Self) -> Self { $t::wrapping_mul(self, other) }
            #[inline(always)]
            fn signum(self) -> Self { (self > 0) as $t }
            #[inline(always)]
            fn not(self) -> Self { !self }
        }
    )*};
}

signed_int!(i8, i16, i32, i64);
unsigned_int!(u8, u16, u32, u64);
