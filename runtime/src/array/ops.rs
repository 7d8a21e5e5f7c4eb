//! Rust operators on arrays: `+ - * / % -x !x & | ^` on `Array`, `&Array` and Rust scalars on
//! either side. Scalars are weakly typed (`f32 array * 2.0` stays `f32`).

use std::ops::{Add, BitAnd, BitOr, BitXor, Div, Mul, Neg, Not, Rem, Sub};

use super::Array;
use crate::jnp;

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
        binary_operator!(@scalars $trait, $method, $f, f32, f64, i32, i64);
    };
    (@scalars $trait:ident, $method:ident, $f:path, $($s:ty),*) => {$(
        impl $trait<$s> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: $s) -> Array { $f(self, rhs) }
        }
        impl $trait<$s> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: $s) -> Array { $f(&self, rhs) }
        }
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
