//! Elementwise functions: math, arithmetic with promotion, comparisons, logic, `where`.

use super::{convert, promote_all, promote_inexact, ArrayLike};
use crate::primitives::{bind1, BinaryOp, Select, UnaryOp};
use crate::shape::ShapeDisplay;
use crate::{Array, DType};

#[track_caller]
pub(crate) fn unary(op: UnaryOp, x: &Array) -> Array {
    let x = if op.needs_float() && !x.dtype().is_inexact() {
        if let Some(name) = inexact_only(op) {
            panic!(
                "{name}: {} does not accept dtype {}; it takes floating-point arrays only \
                 (convert with astype first), got an array of shape {}",
                op.op_name(),
                x.dtype(),
                ShapeDisplay(x.shape())
            );
        }
        convert(x, crate::dtype::to_inexact(x.dtype(), x.is_weak()), x.is_weak())
    } else {
        x.clone()
    };
    bind1(&op, &[&x])
}

/// The `jnp` name of a unary function that JAX defines for floating-point operands only
/// (`jax.nn.sigmoid` and `lax.rsqrt` raise a `TypeError` for integers and bools); the other
/// float functions promote integers to `float32` first, as `jnp.exp` does.
fn inexact_only(op: UnaryOp) -> Option<&'static str> {
    match op {
        UnaryOp::Logistic => Some("sigmoid"),
        UnaryOp::Rsqrt => Some("rsqrt"),
        _ => None,
    }
}

/// `floor`, `ceil` or `round`: the primitive for floats, while integers and bools are returned
/// unchanged (an integer is its own floor), keeping the dtype, as JAX returns them; `round`
/// rejects bools, as JAX does.
#[track_caller]
fn rounding(op: UnaryOp, name: &str, x: &Array) -> Array {
    // Complex operands go to the primitive, which refuses them as JAX does.
    if x.dtype().is_inexact() {
        return unary(op, x);
    }
    if x.dtype().is_bool() && op == UnaryOp::Round {
        panic!(
            "{name}: data type bool is not inexact, got an array of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    x.clone()
}

#[track_caller]
fn binary(op: BinaryOp, name: &str, a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let operands = [a.into_operand(name), b.into_operand(name)];
    let promoted =
        if op.needs_float() { promote_inexact(&operands) } else { promote_all(&operands) };
    bind1(&op, &[&promoted[0], &promoted[1]])
}

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(x: &Array) -> Array { unary(UnaryOp::$op, x) }
    )*};
}

unary_fns! {
    /// `-x`.
    negative => Neg;
    /// `|x|`.
    abs => Abs;
    /// -1, 0 or 1 by the sign of `x` (NaN stays NaN).
    sign => Sign;
    /// `x * x`.
    square => Square;
    /// `e^x`.
    exp => Exp;
    /// `2^x`.
    exp2 => Exp2;
    /// Natural logarithm.
    log => Log;
    /// `ln(1 + x)`, accurate near 0.
    log1p => Log1p;
    /// `e^x - 1`, accurate near 0.
    expm1 => Expm1;
    sqrt => Sqrt;
    /// `1 / sqrt(x)` (`lax.rsqrt`). Floating-point arrays only: panics for integers and bools,
    /// as JAX raises a `TypeError`.
    rsqrt => Rsqrt;
    cbrt => Cbrt;
    /// `1 / x`.
    reciprocal => Reciprocal;
    sin => Sin;
    cos => Cos;
    tan => Tan;
    asin => Asin;
    acos => Acos;
    atan => Atan;
    sinh => Sinh;
    cosh => Cosh;
    tanh => Tanh;
    asinh => Asinh;
    acosh => Acosh;
    atanh => Atanh;
    /// `1 / (1 + e^-x)`, as JAX computes it on CPU (for `float32`, its bits); results below the
    /// smallest normal float are 0, as under XLA's flush-to-zero. Never NaN for large `|x|`.
    /// Floating-point arrays only: panics for integers and bools, as `jax.nn.sigmoid` raises a
    /// `TypeError`.
    sigmoid => Logistic;
    /// The error function.
    erf => Erf;
    /// The inverse error function.
    erfinv => ErfInv;
    /// Elementwise `x.is_nan()`.
    isnan => IsNan;
    /// Elementwise `x.is_finite()`.
    isfinite => IsFinite;
}

/// The largest integer not above `x` (`jnp.floor`). Integer and bool arrays are returned
/// unchanged, keeping their dtype, as in JAX.
#[track_caller]
pub fn floor(x: &Array) -> Array {
    rounding(UnaryOp::Floor, "floor", x)
}

/// The smallest integer not below `x` (`jnp.ceil`). Integer and bool arrays are returned
/// unchanged, keeping their dtype, as in JAX.
#[track_caller]
pub fn ceil(x: &Array) -> Array {
    rounding(UnaryOp::Ceil, "ceil", x)
}

/// Rounds to the nearest integer, halves to even (`jnp.round`). Integer arrays are returned
/// unchanged, keeping their dtype; bools panic, as JAX raises for them.
#[track_caller]
pub fn round(x: &Array) -> Array {
    rounding(UnaryOp::Round, "round", x)
}

/// Logical not for `bool`, bitwise not for integers.
#[track_caller]
pub fn logical_not(x: &Array) -> Array {
    unary(UnaryOp::Not, x)
}

/// `x ** n` for an integer `n` (`lax.integer_pow`): exact for integer arrays, and defined for
/// negative float bases.
#[track_caller]
pub fn powi(x: &Array, n: i32) -> Array {
    unary(UnaryOp::IntegerPow(n), x)
}

/// `log(1 + e^x)`, computed without overflow (`jax.nn.softplus`).
#[track_caller]
pub fn softplus(x: &Array) -> Array {
    logaddexp(x, 0.0)
}

/// `log(e^a + e^b)`, computed without overflow. Its derivative is JAX's: `e^(a - out)` and
/// `e^(b - out)`, so equal operands get half each (the stable formula's `max` and `abs`
/// kinks would cancel to 0 there).
#[track_caller]
pub fn logaddexp(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_inexact(&[a.into_operand("logaddexp"), b.into_operand("logaddexp")]);
    let (a, b) = (ops[0].clone(), ops[1].clone());
    if !crate::ir::trace::is_tracing() {
        // Only traced values are differentiated; eager ones need no rule.
        return logaddexp_value(&a, &b);
    }
    crate::transform::ad::custom::custom_jvp(
        &(a, b),
        |(a, b): (Array, Array)| logaddexp_value(&a, &b),
        |(a, b): (Array, Array), (ta, tb): (Array, Array)| {
            let out = logaddexp_value(&a, &b);
            let share = |x: &Array| {
                let d = subtract(x, &out);
                exp(&where_(isnan(&d), 0.0, d))
            };
            let t = add(multiply(&ta, share(&a)), multiply(&tb, share(&b)));
            (out, t)
        },
    )
}

fn logaddexp_value(a: &Array, b: &Array) -> Array {
    let hi = maximum(a, b);
    let delta = subtract(a, b);
    // `min - max` rather than `-|a - b|` (the same value): the derivative rule above
    // differentiates this formula for second derivatives, and at `a == b` the kinks of
    // `min` and `max` (half each) cancel, where `max` and `abs` would give the wrong slope.
    let tail = log1p(&exp(&subtract(minimum(a, b), &hi)));
    // Where the inputs are equal infinities the difference is NaN; the max is the answer then.
    where_(isnan(&delta), add(a, b), add(&hi, &tail))
}

macro_rules! binary_fns {
    ($($(#[$doc:meta])* $name:ident => $op:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(a: impl ArrayLike, b: impl ArrayLike) -> Array {
            binary(BinaryOp::$op, stringify!($name), a, b)
        }
    )*};
}

binary_fns! {
    /// `a + b`, broadcasting, with JAX's type promotion.
    add => Add;
    /// `a - b`.
    subtract => Sub;
    /// `a * b`.
    multiply => Mul;
    /// Elementwise maximum; NaN propagates.
    maximum => Max;
    /// Elementwise minimum; NaN propagates.
    minimum => Min;
    /// `atan(a / b)` in the right quadrant.
    atan2 => Atan2;
    /// The next float after `a` towards `b`.
    nextafter => NextAfter;
    /// `a == b`.
    equal => Eq;
    /// `a != b`.
    not_equal => Ne;
    /// `a < b`.
    less => Lt;
    /// `a <= b`.
    less_equal => Le;
    /// `a > b`.
    greater => Gt;
    /// `a >= b`.
    greater_equal => Ge;
    /// Logical and for bools, bitwise and for integers.
    logical_and => And;
    /// Logical or for bools, bitwise or for integers.
    logical_or => Or;
    /// Logical xor for bools, bitwise xor for integers.
    logical_xor => Xor;
}

/// True division: integers are promoted to the default float first (`i32 / i32` is `f32`).
#[track_caller]
pub fn divide(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_inexact(&[a.into_operand("divide"), b.into_operand("divide")]);
    bind1(&BinaryOp::Div, &[&ops[0], &ops[1]])
}

/// `a ** b` with array exponents; integer operands stay integers.
#[track_caller]
pub fn pow(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    binary(BinaryOp::Pow, "pow", a, b)
}

/// Division rounded toward negative infinity, like Python's `//`.
#[track_caller]
pub fn floor_divide(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_all(&[a.into_operand("floor_divide"), b.into_operand("floor_divide")]);
    let (a, b) = (&ops[0], &ops[1]);
    if a.dtype().is_unsigned_int() {
        return bind1(&BinaryOp::Div, &[a, b]);
    }
    if a.dtype().is_int() {
        let q = bind1(&BinaryOp::Div, &[a, b]);
        let r = bind1(&BinaryOp::Rem, &[a, b]);
        let signs_differ = not_equal(sign(a), sign(b));
        let adjust = logical_and(&signs_differ, not_equal(&r, 0));
        return where_(&adjust, subtract(&q, 1), &q);
    }
    float_divmod(a, b).0
}

/// Remainder with the sign of the divisor, like Python's `%` (`jnp.remainder`).
///
/// An integer remainder by zero is 0, as in JAX and NumPy (the `rem` primitive alone would give
/// the dividend).
#[track_caller]
pub fn remainder(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_all(&[a.into_operand("remainder"), b.into_operand("remainder")]);
    let (a, b) = (&ops[0], &ops[1]);
    if a.dtype().is_float() {
        return float_divmod(a, b).1;
    }
    let b = &nonzero_divisor(b);
    let r = bind1(&BinaryOp::Rem, &[a, b]);
    if a.dtype().is_unsigned_int() {
        return r;
    }
    let adjust = logical_and(not_equal(&r, 0), not_equal(sign(&r), sign(b)));
    where_(&adjust, add(&r, b), &r)
}

/// Truncating division and C remainder are the primitives; Python's floor semantics are built
/// from them as JAX builds them.
#[track_caller]
fn float_divmod(a: &Array, b: &Array) -> (Array, Array) {
    let m = bind1(&BinaryOp::Rem, &[a, b]);
    // By zero, `a / 0` (an infinity of the right sign), not `(a - NaN) / 0`, as JAX has it.
    let corrected = where_(equal(b, 0.0), a, subtract(a, &m));
    let d = bind1(&BinaryOp::Div, &[&corrected, b]);
    let fix = logical_and(not_equal(&m, 0.0), not_equal(sign(b), sign(&m)));
    let m = where_(&fix, add(&m, b), &m);
    let d = where_(&fix, subtract(&d, 1.0), &d);
    (round(&d), m)
}

/// An integer divisor with its zeros replaced by 1, as JAX's `remainder` and `fmod` replace
/// them, so that the remainder by zero is 0 rather than XLA's (the dividend).
#[track_caller]
fn nonzero_divisor(b: &Array) -> Array {
    where_(equal(b, 0), convert(&Array::from(1i32), b.dtype(), b.is_weak()), b)
}

/// C-style truncating division (`lax.div`, [`lax::div`](crate::lax::div)). Integer division by
/// zero gives -1 (all bits set: `u32::MAX` for `uint32`), and `i32::MIN / -1` wraps to
/// `i32::MIN`, as XLA defines them.
#[track_caller]
pub fn trunc_divide(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    binary(BinaryOp::Div, "trunc_divide", a, b)
}

/// C-style remainder with the sign of the dividend (`jnp.fmod`). An integer remainder by zero
/// is 0, as in JAX and NumPy; [`lax::rem`](crate::lax::rem) gives the dividend there instead.
#[track_caller]
pub fn fmod(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    let ops = promote_all(&[a.into_operand("fmod"), b.into_operand("fmod")]);
    let (a, b) = (&ops[0], &ops[1]);
    if a.dtype().is_float() {
        return bind1(&BinaryOp::Rem, &[a, b]);
    }
    bind1(&BinaryOp::Rem, &[a, &nonzero_divisor(b)])
}

/// The `rem` primitive after promotion: C's `%`, with XLA's answers where C has none (`x % 0`
/// is `x`, `i32::MIN % -1` is 0).
#[track_caller]
pub(crate) fn rem_primitive(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    binary(BinaryOp::Rem, "rem", a, b)
}

/// Elementwise choice: `on_true` where `condition` holds, else `on_false` (`jnp.where`).
#[track_caller]
pub fn where_(
    condition: impl ArrayLike,
    on_true: impl ArrayLike,
    on_false: impl ArrayLike,
) -> Array {
    let c = condition.into_operand("where");
    let c = if c.dtype() == DType::Bool { c } else { not_equal(&c, 0) };
    let branches = promote_all(&[on_true.into_operand("where"), on_false.into_operand("where")]);
    bind1(&Select, &[&c, &branches[0], &branches[1]])
}

/// Limits values to `[lo, hi]` (`jnp.clip`), as `minimum(maximum(x, lo), hi)`; use
/// [`maximum`] or [`minimum`] alone for a one-sided bound.
#[track_caller]
pub fn clip(x: &Array, lo: impl ArrayLike, hi: impl ArrayLike) -> Array {
    minimum(maximum(x, lo), hi)
}

/// Converts to `dtype` (`x.astype(dtype)`): floats truncate toward zero into integers,
/// integers wrap, nonzero is `true`. A 64-bit `dtype` gives its 32-bit kin unless x64 is on
/// (see [`crate::config`]).
#[track_caller]
pub fn astype(x: &Array, dtype: DType) -> Array {
    convert(x, crate::dtype::canonicalize(dtype), false)
}
