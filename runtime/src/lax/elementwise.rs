//! `lax`'s elementwise operations under JAX's names. Unlike `jnp`'s, they do not promote:
//! both operands of a binary operation must have one dtype (a Rust scalar is a weakly typed
//! value of its default dtype, `float32` or `int32`, as a Python scalar is in `jax.lax`), and
//! floating-point functions refuse integers. Operands of a binary operation have one rank or
//! one of them is 0-d; axes of length 1 broadcast. Each is the primitive that `jnp` builds on.

use crate::jnp::{self, ArrayLike};
use crate::primitives::{bind1, BinaryOp, ComplexPart, MakeComplex, UnaryOp};
use crate::shape::ShapeDisplay;
use crate::{Array, DType};

/// The dtypes a unary operation accepts, as JAX lists them.
#[derive(Clone, Copy)]
enum Accepts {
    /// Real floating-point types.
    Float,
    /// Real and complex floating-point types.
    Inexact,
    /// Integers and floating-point types, real or complex (not bool).
    Number,
    /// Integers and bool.
    IntOrBool,
    /// Complex types.
    Complex,
}

impl Accepts {
    fn admits(self, d: DType) -> bool {
        match self {
            Accepts::Float => d.is_float(),
            Accepts::Inexact => d.is_inexact(),
            Accepts::Number => !d.is_bool(),
            Accepts::IntOrBool => d.is_int() || d.is_bool(),
            Accepts::Complex => d.is_complex(),
        }
    }

    fn kinds(self) -> &'static str {
        match self {
            Accepts::Float => "floating",
            Accepts::Inexact => "floating, complexfloating",
            Accepts::Number => "integer, floating, complexfloating",
            Accepts::IntOrBool => "integer, bool",
            Accepts::Complex => "complexfloating",
        }
    }
}

/// Panics as JAX raises a `TypeError` when `x`'s dtype is not one `op` accepts.
#[track_caller]
fn check_dtype(op: &str, x: &Array, accepts: Accepts) {
    if !accepts.admits(x.dtype()) {
        panic!(
            "lax.{op} does not accept dtype {} (an array of shape {}); accepted dtypes are \
             subtypes of {} (jnp's functions promote; or convert with astype first)",
            x.dtype(),
            ShapeDisplay(x.shape()),
            accepts.kinds()
        );
    }
}

#[track_caller]
fn unary(op: UnaryOp, name: &str, accepts: Accepts, x: impl ArrayLike) -> Array {
    let x = x.into_operand(name);
    check_dtype(name, &x, accepts);
    bind1(&op, &[&x])
}

/// The operands of the binary operation `op` as they are, after checking that their dtypes
/// agree and that their ranks do (or one is 0-d), as `jax.lax` requires; `tip` is the `jnp`
/// function that promotes instead.
#[track_caller]
fn operands(op: &str, tip: &str, x: impl ArrayLike, y: impl ArrayLike) -> (Array, Array) {
    let (x, y) = (x.into_operand(op), y.into_operand(op));
    if x.dtype() != y.dtype() {
        panic!(
            "lax.{op} requires arguments to have the same dtypes, got {}, {} (jnp.{tip} is a \
             similar function that promotes its operands)",
            x.dtype(),
            y.dtype()
        );
    }
    if x.ndim() != y.ndim() && x.ndim() != 0 && y.ndim() != 0 {
        panic!(
            "lax.{op}: arrays must have the same number of dimensions, got shapes {} and {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(y.shape())
        );
    }
    (x, y)
}

#[track_caller]
fn binary(op: BinaryOp, name: &str, tip: &str, x: impl ArrayLike, y: impl ArrayLike) -> Array {
    let (x, y) = operands(name, tip, x, y);
    bind1(&op, &[&x, &y])
}

macro_rules! lax_unary {
    ($($(#[$doc:meta])* $name:ident => $op:ident, $accepts:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(x: impl ArrayLike) -> Array {
            unary(UnaryOp::$op, stringify!($name), Accepts::$accepts, x)
        }
    )*};
}

lax_unary! {
    /// `|x|` (`lax.abs`); the magnitude, a real array, for complex `x`.
    ///
    /// ```
    /// use rjax_runtime::{jnp, lax};
    /// assert_eq!(lax::abs(&jnp::array([-2i32, 3])).to_vec::<i32>().unwrap(), vec![2, 3]);
    /// ```
    abs => Abs, Number;
    /// `-x` (`lax.neg`).
    neg => Neg, Number;
    /// -1, 0 or 1 by the sign of `x` (`lax.sign`); NaN stays NaN.
    sign => Sign, Number;
    /// `x * x` (`lax.square`).
    square => Square, Number;
    /// `1 / x` (`lax.reciprocal`); integers are refused, as JAX refuses their negative powers.
    reciprocal => Reciprocal, Inexact;
    /// `e^x` (`lax.exp`).
    exp => Exp, Inexact;
    /// `2^x` (`lax.exp2`).
    exp2 => Exp2, Inexact;
    /// `e^x - 1`, accurate near 0 (`lax.expm1`).
    expm1 => Expm1, Inexact;
    /// The natural logarithm (`lax.log`).
    log => Log, Inexact;
    /// `ln(1 + x)`, accurate near 0 (`lax.log1p`).
    log1p => Log1p, Inexact;
    /// `1 / (1 + e^-x)` (`lax.logistic`; `jax.nn.sigmoid`).
    logistic => Logistic, Inexact;
    /// The square root (`lax.sqrt`).
    sqrt => Sqrt, Inexact;
    /// `1 / sqrt(x)` (`lax.rsqrt`).
    rsqrt => Rsqrt, Inexact;
    /// The cube root (`lax.cbrt`).
    cbrt => Cbrt, Float;
    /// The sine (`lax.sin`).
    sin => Sin, Inexact;
    /// The cosine (`lax.cos`).
    cos => Cos, Inexact;
    /// The tangent (`lax.tan`).
    tan => Tan, Inexact;
    /// The arcsine (`lax.asin`).
    asin => Asin, Inexact;
    /// The arccosine (`lax.acos`).
    acos => Acos, Inexact;
    /// The arctangent (`lax.atan`).
    atan => Atan, Inexact;
    /// The hyperbolic sine (`lax.sinh`).
    sinh => Sinh, Inexact;
    /// The hyperbolic cosine (`lax.cosh`).
    cosh => Cosh, Inexact;
    /// The hyperbolic tangent (`lax.tanh`).
    tanh => Tanh, Inexact;
    /// The inverse hyperbolic sine (`lax.asinh`).
    asinh => Asinh, Inexact;
    /// The inverse hyperbolic cosine (`lax.acosh`).
    acosh => Acosh, Inexact;
    /// The inverse hyperbolic tangent (`lax.atanh`).
    atanh => Atanh, Inexact;
    /// The error function (`lax.erf`).
    erf => Erf, Float;
    /// The complementary error function `1 - erf(x)`, accurate where `erf(x)` is near 1
    /// (`lax.erfc`).
    erfc => Erfc, Float;
    /// The inverse error function (`lax.erf_inv`).
    erf_inv => ErfInv, Float;
    /// The exponentially scaled modified Bessel function of order 0, `e^-|x| I0(x)`
    /// (`lax.bessel_i0e`).
    bessel_i0e => BesselI0e, Float;
    /// The exponentially scaled modified Bessel function of order 1, `e^-|x| I1(x)`
    /// (`lax.bessel_i1e`).
    bessel_i1e => BesselI1e, Float;
    /// The largest integer not above `x` (`lax.floor`); floating-point arrays only.
    floor => Floor, Float;
    /// The smallest integer not below `x` (`lax.ceil`); floating-point arrays only.
    ceil => Ceil, Float;
    /// Whether each element is neither infinite nor NaN (`lax.is_finite`), as `bool`.
    is_finite => IsFinite, Float;
    /// Bitwise not of integers, logical not of bools (`lax.bitwise_not`).
    bitwise_not => Not, IntOrBool;
}

/// `x ** y` for a fixed integer `y` (`lax.integer_pow`), by repeated multiplication: exact for
/// integers (which wrap), defined for negative float bases. Integers cannot be raised to a
/// negative power.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// assert_eq!(lax::integer_pow(&jnp::array([-2i32, 3]), 3).to_vec::<i32>().unwrap(), vec![-8, 27]);
/// ```
#[track_caller]
pub fn integer_pow(x: impl ArrayLike, y: i32) -> Array {
    unary(UnaryOp::IntegerPow(y), "integer_pow", Accepts::Number, x)
}

/// How [`round`] breaks ties (`lax.RoundingMethod`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RoundingMethod {
    /// Halves round away from zero (`2.5` -> `3`, `-0.5` -> `-1`): JAX's default.
    #[default]
    AwayFromZero,
    /// Halves round to the even neighbour (`2.5` -> `2`), as `jnp.round` does.
    ToNearestEven,
}

/// Rounds to an integer value (`lax.round`), breaking ties by `method`; floating-point arrays
/// only. Its derivative is zero.
///
/// ```
/// use rjax_runtime::{jnp, lax, lax::RoundingMethod};
/// let x = jnp::array([0.5f32, 1.5, 2.5, -0.5]);
/// let away = lax::round(&x, RoundingMethod::AwayFromZero);
/// assert_eq!(away.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, -1.0]);
/// let even = lax::round(&x, RoundingMethod::ToNearestEven);
/// assert_eq!(even.to_vec::<f32>().unwrap(), vec![0.0, 2.0, 2.0, -0.0]);
/// ```
#[track_caller]
pub fn round(x: impl ArrayLike, method: RoundingMethod) -> Array {
    let x = x.into_operand("round");
    check_dtype("round", &x, Accepts::Float);
    match method {
        RoundingMethod::ToNearestEven => bind1(&UnaryOp::Round, &[&x]),
        RoundingMethod::AwayFromZero => {
            // `x - trunc(x)` is exact, so comparing it with one half decides the tie rule.
            let t = jnp::trunc(&x);
            let up = jnp::greater_equal(jnp::abs(&jnp::subtract(&x, &t)), 0.5);
            jnp::where_(&up, jnp::add(&t, jnp::sign(&x)), &t)
        }
    }
}

/// The real part of a complex array (`lax.real`), of the parts' precision.
#[track_caller]
pub fn real(x: impl ArrayLike) -> Array {
    let x = x.into_operand("real");
    check_dtype("real", &x, Accepts::Complex);
    bind1(&ComplexPart::Real, &[&x])
}

/// The imaginary part of a complex array (`lax.imag`), of the parts' precision.
#[track_caller]
pub fn imag(x: impl ArrayLike) -> Array {
    let x = x.into_operand("imag");
    check_dtype("imag", &x, Accepts::Complex);
    bind1(&ComplexPart::Imag, &[&x])
}

/// The complex conjugate (`lax.conj`): always complex, so a real floating-point array becomes
/// its complex type (`float64` gives `complex128`, other floats `complex64`) with zero
/// imaginary parts.
#[track_caller]
pub fn conj(x: impl ArrayLike) -> Array {
    let x = x.into_operand("conj");
    check_dtype("conj", &x, Accepts::Inexact);
    let z = jnp::convert(&x, x.dtype().to_complex(), x.is_weak());
    bind1(&ComplexPart::Conj, &[&z])
}

/// `x + i y` (`lax.complex`): the parts have one real dtype, `float32` (giving `complex64`)
/// or `float64` (giving `complex128`).
///
/// ```
/// use rjax_runtime::{jnp, lax, Complex};
/// let z = lax::complex(&jnp::array([1.0f32, 2.0]), 0.5);
/// assert_eq!(z.to_vec::<Complex<f32>>().unwrap()[1], Complex::new(2.0, 0.5));
/// ```
#[track_caller]
pub fn complex(x: impl ArrayLike, y: impl ArrayLike) -> Array {
    let (x, y) = operands("complex", "complex", x, y);
    if !matches!(x.dtype(), DType::F32 | DType::F64) {
        panic!(
            "lax.complex does not accept dtype {}; the parts must be float32 or float64",
            x.dtype()
        );
    }
    let shape = crate::shape::broadcast_shapes(x.shape(), y.shape()).unwrap_or_else(|| {
        panic!(
            "lax.complex got incompatible shapes for broadcasting: {} and {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(y.shape())
        )
    });
    bind1(&MakeComplex, &[&jnp::broadcast_to(&x, &shape), &jnp::broadcast_to(&y, &shape)])
}

macro_rules! lax_binary {
    ($($(#[$doc:meta])* $name:ident => $op:ident, $tip:ident;)*) => {$(
        $(#[$doc])*
        #[track_caller]
        pub fn $name(x: impl ArrayLike, y: impl ArrayLike) -> Array {
            binary(BinaryOp::$op, stringify!($name), stringify!($tip), x, y)
        }
    )*};
}

lax_binary! {
    /// `x + y` (`lax.add`): both operands of one dtype, no promotion.
    ///
    /// ```
    /// use rjax_runtime::{jnp, lax};
    /// let x = jnp::array([1.0f32, 2.0]);
    /// assert_eq!(lax::add(&x, 0.5).to_vec::<f32>().unwrap(), vec![1.5, 2.5]);
    /// ```
    add => Add, add;
    /// `x - y` (`lax.sub`).
    sub => Sub, subtract;
    /// `x * y` (`lax.mul`).
    mul => Mul, multiply;
    /// The elementwise maximum (`lax.max`); NaN propagates.
    max => Max, maximum;
    /// The elementwise minimum (`lax.min`); NaN propagates.
    min => Min, minimum;
    /// `atan(x / y)` in the right quadrant (`lax.atan2`); floating-point operands.
    atan2 => Atan2, arctan2;
    /// The next representable float after `x` towards `y` (`lax.nextafter`).
    nextafter => NextAfter, nextafter;
    /// `x == y` (`lax.eq`), as `bool`.
    eq => Eq, equal;
    /// `x != y` (`lax.ne`), as `bool`.
    ne => Ne, not_equal;
    /// `x < y` (`lax.lt`), as `bool`.
    lt => Lt, less;
    /// `x <= y` (`lax.le`), as `bool`.
    le => Le, less_equal;
    /// `x > y` (`lax.gt`), as `bool`.
    gt => Gt, greater;
    /// `x >= y` (`lax.ge`), as `bool`.
    ge => Ge, greater_equal;
    /// Bitwise and of integers, logical and of bools (`lax.bitwise_and`).
    bitwise_and => And, bitwise_and;
    /// Bitwise or of integers, logical or of bools (`lax.bitwise_or`).
    bitwise_or => Or, bitwise_or;
    /// Bitwise xor of integers, logical xor of bools (`lax.bitwise_xor`).
    bitwise_xor => Xor, bitwise_xor;
}

/// `x ** y` (`lax.pow`) for a floating-point or complex base. The exponent has the base's
/// dtype, or is an integer array, whose values are used as exponents of that dtype.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::array([2.0f32, 3.0]);
/// assert_eq!(lax::pow(&x, &jnp::array([3i32, 2])).to_vec::<f32>().unwrap(), vec![8.0, 9.0]);
/// ```
#[track_caller]
pub fn pow(x: impl ArrayLike, y: impl ArrayLike) -> Array {
    let (x, y) = (x.into_operand("pow"), y.into_operand("pow"));
    check_dtype("pow", &x, Accepts::Inexact);
    let y = if y.dtype().is_int() { jnp::convert(&y, x.dtype(), y.is_weak()) } else { y };
    binary(BinaryOp::Pow, "pow", "power", x, y)
}

/// Converts `x` to `dtype` (`lax.convert_element_type`): floats truncate toward zero into
/// integers, integers wrap, nonzero is `true`, and a complex number keeps its real part. A
/// 64-bit `dtype` gives its 32-bit kin unless x64 is on (see [`crate::config`]).
#[track_caller]
pub fn convert_element_type(x: impl ArrayLike, dtype: DType) -> Array {
    jnp::astype(&x.into_operand("convert_element_type"), dtype)
}
