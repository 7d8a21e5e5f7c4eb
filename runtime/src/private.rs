//! Support for the code the `rjax` macros generate. Not a public API: names and signatures
//! here change whenever the macros do.

pub use crate::exec::static_args::{DebugStatic, HashedStatic, KeyedStatic, OpaqueStatic, Static};
pub use crate::exec::{
    log_compiles, trace_function, CacheInfo, CallSite, JitFunction, StaticArg, TracedFunction,
};
pub use crate::lax::cond;

/// The differentiation transforms the attribute macros call.
pub mod ad {
    pub use crate::transform::ad::api::{
        grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp, Flat, Wrt,
    };
    pub use crate::transform::ad::custom::{checkpoint, custom_jvp_call, custom_vjp_call};
}

/// The batching transform `#[vmap]` calls.
pub mod batch {
    pub use crate::transform::batch::api::{pmap, vmap, BatchAxes, Vmap};
}

use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::jnp::{self, ArrayLike};

/// A parameter value as the traced entry point takes it: a pytree with Rust floats among its
/// leaves (`(Array, f32)`) rebuilt with arrays for them (`(Array, Array)`).
pub fn retype<T: crate::tree::Tree + ?Sized, U: crate::tree::Unflatten>(value: &T) -> U {
    let (leaves, def) = crate::tree::flatten(value);
    crate::tree::unflatten(&def, leaves)
}

/// Implemented by a type for itself only: `same_type::<A, B>()` compiles when `A` and `B` are
/// one type, which the macros use to check a declared type they cannot resolve (an alias).
#[diagnostic::on_unimplemented(
    message = "the declared type `{Self}` is not `{T}`, the type the transform returns here",
    label = "expected `{T}`"
)]
pub trait SameType<T> {}

impl<T> SameType<T> for T {}

/// Checks at compile time that `A` and `B` are the same type (see [`SameType`]).
pub fn same_type<A: SameType<B>, B>() {}

/// A value passed for a parameter declared `f32` or `f64` in traced code: an array (traced or
/// not) or a Rust number, which becomes a 0-d array of the declared dtype.
pub trait ScalarArg {
    fn into_scalar(self, dtype: DType) -> Array;
}

impl ScalarArg for Array {
    fn into_scalar(self, _dtype: DType) -> Array {
        self
    }
}

impl ScalarArg for &Array {
    fn into_scalar(self, _dtype: DType) -> Array {
        self.clone()
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl ScalarArg for $t {
            fn into_scalar(self, dtype: DType) -> Array {
                // Integers and `f64`s are weakly typed, as Python ints and floats are under
                // `jax.jit`; an `f32` is a strong `float32`, as `np.float32(x)` is.
                Array::from(self).astype(dtype).with_weak_type(dtype != DType::F32)
            }
        }
    )*};
}
scalar_arg!(f32, f64, i32, u32, i64);

/// A traced parameter declared `f32`/`f64`/`i32`/`u32`/`i64`, as the 0-d array the body
/// computes with.
#[track_caller]
pub fn scalar_param(value: impl ScalarArg, dtype: DType) -> Array {
    let a = value.into_scalar(dtype);
    if !a.shape().is_empty() {
        panic!(
            "a parameter declared as a Rust {dtype} scalar got an array of shape {:?}",
            a.shape()
        );
    }
    a
}

/// The Rust scalar a traced function declared `-> f32`/`-> f64` returns.
#[track_caller]
pub fn scalar_result<T: Element>(value: Array) -> T {
    let value = if value.dtype() == T::DTYPE {
        value
    } else {
        crate::jnp::convert(&value, T::DTYPE, false)
    };
    match value.item::<T>() {
        Ok(v) => v,
        Err(e) => {
            panic!("the function returns a Rust scalar, but its result could not be read: {e}")
        }
    }
}

/// Borrows an operand of an operator in traced code: traced locals are arrays (not `Copy`),
/// so the macro passes them by reference, whether the local holds an `Array` or a `&Array`;
/// Rust numbers pass by value.
pub trait Operand {
    type Out<'a>
    where
        Self: 'a;
    fn operand(&self) -> Self::Out<'_>;
}

impl Operand for Array {
    type Out<'a> = &'a Array;
    fn operand(&self) -> &Array {
        self
    }
}

impl<T: Operand + ?Sized> Operand for &T {
    type Out<'a>
        = T::Out<'a>
    where
        Self: 'a;
    fn operand(&self) -> T::Out<'_> {
        (**self).operand()
    }
}

macro_rules! number_operand {
    ($($t:ty),*) => {$(
        impl Operand for $t {
            type Out<'a> = $t;
            fn operand(&self) -> $t {
                *self
            }
        }
    )*};
}
// Every Rust number: a closure parameter the macro takes for traced may hold one, and static
// fields (`c.depth > 2`) compare through the same helpers.
number_operand!(f32, f64, i32, i64, bool, usize, isize, u64, u32, u16, u8, i16, i8);

/// A Rust literal as a weakly typed 0-d array (a branch of a traced `if` returning `0.0`).
pub fn weak(value: impl ArrayLike) -> Array {
    value.into_array()
}

/// Rust operators that need `bool`s (`<`, `==`, `&&`, ...) become these array functions when
/// an operand is traced (`&&` and `||` then evaluate both sides).
macro_rules! traced_operators {
    ($($name:ident => $f:ident: $op:literal),* $(,)?) => {$(
        #[doc = concat!("`a ", $op, " b` in traced code: [`jnp::", stringify!($f), "`].")]
        #[track_caller]
        pub fn $name(a: impl ArrayLike, b: impl ArrayLike) -> Array {
            jnp::$f(a, b)
        }
    )*};
}

traced_operators!(
    lt => less: "<",
    le => less_equal: "<=",
    gt => greater: ">",
    ge => greater_equal: ">=",
    eq => equal: "==",
    ne => not_equal: "!=",
    and => logical_and: "&&",
    or => logical_or: "||",
);

/// An argument of `debug_print!`: an array or a reference to one.
pub fn debug_arg<A: std::borrow::Borrow<Array>>(value: &A) -> Array {
    value.borrow().clone()
}

/// Runs `debug_print!`: prints now, or — inside a trace — whenever the program runs.
#[track_caller]
pub fn debug_print(format: &str, values: &[Array]) {
    let refs: Vec<&Array> = values.iter().collect();
    crate::primitives::bind(&crate::primitives::DebugPrint { format: format.to_string() }, &refs);
}

/// Implemented by the companion type of every `#[traceable]` or `#[jit]` function (and by the
/// fallbacks of [`callee`], with `TRACEABLE = false`). A traced call `f(x)` reaches
/// `f::__rjax_traced(x)` through it, and a call of a plain function fails at compile time with
/// a message that names the function and the fix.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a traceable function, so traced code cannot call it",
    label = "called with traced values here",
    note = "add `#[traceable]` (or `#[jit]`) to the function so that rjax can trace its body"
)]
pub trait Companion {
    /// Whether the type is a traceable function's companion.
    const TRACEABLE: bool = true;
}

/// The fallback callee of a traced call, one per number of arguments. The macros expand
/// `f(a, b)` in traced code to
///
/// ```text
/// { use callee::arity2::*; use f as __rjax_callee; /* check */ __rjax_callee::__rjax_traced(a, b) }
/// ```
///
/// The explicit `use` shadows the glob in each namespace where `f` has an item: a traceable
/// `f` brings its companion type, while a plain function leaves the glob's type in place. The
/// check, a constant that reads [`Companion::TRACEABLE`], then fails to compile with a message
/// naming `f`, instead of rustc's "cannot find module `f`". The fallbacks' own entry points
/// type-check any arguments and return an array (what most traced calls return, so that no
/// second error follows the first); they never run.
pub mod callee {
    macro_rules! fallbacks {
        ($($module:ident: $($arg:ident)*;)*) => {$(
            #[doc(hidden)]
            pub mod $module {
                #[doc(hidden)]
                #[allow(non_camel_case_types)]
                pub struct __rjax_callee;

                impl super::super::Companion for __rjax_callee {
                    const TRACEABLE: bool = false;
                }

                impl __rjax_callee {
                    #[doc(hidden)]
                    #[allow(non_snake_case, clippy::too_many_arguments)]
                    pub fn __rjax_traced<$($arg),*>($(_: $arg),*) -> crate::array::Array {
                        panic!("a traced call of a function that is not traceable cannot compile")
                    }
                }
            }
        )*};
    }

    fallbacks! {
        arity0: ;
        arity1: A0;
        arity2: A0 A1;
        arity3: A0 A1 A2;
        arity4: A0 A1 A2 A3;
        arity5: A0 A1 A2 A3 A4;
        arity6: A0 A1 A2 A3 A4 A5;
        arity7: A0 A1 A2 A3 A4 A5 A6;
        arity8: A0 A1 A2 A3 A4 A5 A6 A7;
        arity9: A0 A1 A2 A3 A4 A5 A6 A7 A8;
        arity10: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9;
        arity11: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10;
        arity12: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11;
        arity13: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12;
        arity14: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13;
        arity15: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14;
        arity16: A0 A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11 A12 A13 A14 A15;
    }
}
