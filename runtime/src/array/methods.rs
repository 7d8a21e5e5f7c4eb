//! Methods on [`Array`] that mirror `jnp` functions, so code reads like JAX's (`x.tanh()`).

use super::Array;
use crate::jnp::{self, ArrayLike};
use crate::DType;

macro_rules! unary_methods {
    ($($name:ident),* $(,)?) => {$(
        #[doc = concat!("[`jnp::", stringify!($name), "`] as a method.")]
        #[track_caller]
        pub fn $name(&self) -> Array { jnp::$name(self) }
    )*};
}

macro_rules! binary_methods {
    ($($name:ident => $f:ident),* $(,)?) => {$(
        #[doc = concat!("[`jnp::", stringify!($f), "`] as a method.")]
        #[track_caller]
        pub fn $name(&self, other: impl ArrayLike) -> Array { jnp::$f(self, other) }
    )*};
}

impl Array {
    unary_methods!(
        abs,
        sign,
        square,
        exp,
        exp2,
        log,
        log1p,
        expm1,
        sqrt,
        rsqrt,
        cbrt,
        reciprocal,
        sin,
        cos,
        tan,
        asin,
        acos,
        atan,
        sinh,
        cosh,
        tanh,
        asinh,
        acosh,
        atanh,
        sigmoid,
        softplus,
        erf,
        erfinv,
        floor,
        ceil,
        round,
        isnan,
        isfinite,
        logical_not,
    );

    binary_methods!(
        add => add, sub => subtract, mul => multiply, div => divide, pow => pow,
        maximum => maximum, minimum => minimum, atan2 => atan2, floor_divide => floor_divide,
        remainder => remainder, eq => equal, ne => not_equal, lt => less, le => less_equal,
        gt => greater, ge => greater_equal, logical_and => logical_and,
        logical_or => logical_or, logical_xor => logical_xor,
    );

    /// `-x`.
    #[track_caller]
    pub fn neg(&self) -> Array {
        jnp::negative(self)
    }

    /// `x ** n` for an integer `n`.
    #[track_caller]
    pub fn powi(&self, n: i32) -> Array {
        jnp::powi(self, n)
    }

    /// Limits values to `[lo, hi]`.
    #[track_caller]
    pub fn clip(&self, lo: impl ArrayLike, hi: impl ArrayLike) -> Array {
        jnp::clip(self, lo, hi)
    }

    /// Converts to `dtype`.
    #[track_caller]
    pub fn astype(&self, dtype: DType) -> Array {
        jnp::astype(self, dtype)
    }
}
