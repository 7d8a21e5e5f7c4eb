//! Rust operators on arrays: `+ - * / % -x !x & | ^` on `Array`, `&Array` and Rust scalars on
//! either side. Scalars are weakly typed (`f32 array * 2.0` stays `f32`).
//!
//! On the right any [`WeakScalar`] works (`f32`, `f64`, `i32`, `i64`); on the left `f64` and
//! `i32`, which is what unsuffixed literals (`2.0 * &x`, `1 - &x`) are.

use std::ops::{
    Add, AddAssign, BitAnd, BitOr, BitXor, Div, DivAssign, Mul, MulAssign, Neg, Not, Rem,
    RemAssign, Sub, SubAssign,
};

use super::Array;
use crate::jnp::{self, ArrayLike};

/// Rust scalars that combine with arrays as weakly typed values.
pub trait WeakScalar: ArrayLike + Copy {}

impl WeakScalar for f32 {}
impl WeakScalar for f64 {}
impl WeakScalar for i32 {}
impl WeakScalar for crate::Complex<f32> {}
impl WeakScalar for crate::Complex<f64> {}
impl WeakScalar for i64 {}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $f:path) => {
        impl $trait<&Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array { $f(self, rhs) }
        }
        impl $trait<Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array { $f(self, &rhs) }
        }
        impl $trait<&Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array { $f(&self, rhs) }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array { $f(&self, &rhs) }
        }
        // One generic impl for scalars on the right, so that an unsuffixed literal
        // (`&x * 2.0`) has a single candidate and falls back to f64 / i32.
        impl<S: WeakScalar> $trait<S> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: S) -> Array { $f(self, rhs) }
        }
        impl<S: WeakScalar> $trait<S> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: S) -> Array { $f(&self, rhs) }
        }
        // On the left only one float and one integer type may implement the operator, or an
        // unsuffixed literal (`2.0 * &x`) would be ambiguous.
        binary_operator!(@scalars $trait, $method, $f, f64, i32);
    };
    (@scalars $trait:ident, $method:ident, $f:path, $($s:ty),*) => {$(
        impl $trait<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array { $f(self, rhs) }
        }
        impl $trait<Array> for $s {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array { $f(self, &rhs) }
        }
    )*};
}

binary_operator!(Add, add, jnp::add);
binary_operator!(Sub, sub, jnp::subtract);
binary_operator!(Mul, mul, jnp::multiply);
binary_operator!(Div, div, jnp::divide);
binary_operator!(Rem, rem, jnp::remainder);

macro_rules! logical_operator {
    ($trait:ident, $method:ident, $f:path) => {
        impl $trait<&Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                $f(self, rhs)
            }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                $f(&self, &rhs)
            }
        }
    };
}

logical_operator!(BitAnd, bitand, jnp::logical_and);
logical_operator!(BitOr, bitor, jnp::logical_or);
logical_operator!(BitXor, bitxor, jnp::logical_xor);

impl Neg for &Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        jnp::negative(self)
    }
}

impl Neg for Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        jnp::negative(&self)
    }
}

impl Not for &Array {
    type Output = Array;
    #[track_caller]
    fn not(self) -> Array {
        jnp::logical_not(self)
    }
}

impl Not for Array {
    type Output = Array;
    #[track_caller]
    fn not(self) -> Array {
        jnp::logical_not(&self)
    }
}

/// `x += y` and friends rebind `x` to a new array (arrays are immutable; nothing is written in
/// place), so accumulating loops read as they do with Rust numbers.
macro_rules! assign_operator {
    ($trait:ident, $method:ident, $op:ident, $opmethod:ident) => {
        impl<T> $trait<T> for Array
        where
            for<'a> &'a Array: $op<T, Output = Array>,
        {
            #[track_caller]
            fn $method(&mut self, rhs: T) {
                *self = $op::$opmethod(&*self, rhs);
            }
        }
    };
}

assign_operator!(AddAssign, add_assign, Add, add);
assign_operator!(SubAssign, sub_assign, Sub, sub);
assign_operator!(MulAssign, mul_assign, Mul, mul);
assign_operator!(DivAssign, div_assign, Div, div);
assign_operator!(RemAssign, rem_assign, Rem, rem);
