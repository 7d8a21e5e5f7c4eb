//! NumPy-style functions on arrays, like `jax.numpy`.
//!
//! Functions take arrays by reference (`jnp::tanh(&x)`); binary functions take anything
//! [`ArrayLike`] on either side, so Rust scalars mix in as weakly typed values
//! (`jnp::add(&x, 1.0)`). Axes are passed as anything that converts into [`Axes`]
//! (`1`, `-1`, `[0, 2]`), and reductions come in two forms: over all axes (`jnp::sum(&x)`) and
//! over chosen axes with a `keepdims` flag (`jnp::sum_axes(&x, 1, false)`).

mod arrangement;
mod complex;
mod composed;
mod creation;
mod elementwise;
pub mod fft;
mod indexing;
pub mod linalg;
mod matrix;
mod numpy_math;
mod predicates;
mod reductions;
mod searching;
mod shape_ops;
mod signal;
mod sorting;
mod statistics;

pub use crate::primitives::IndexMode;
pub use arrangement::*;
pub use complex::*;
pub use composed::*;
pub use creation::*;
pub use elementwise::*;
pub use indexing::*;
pub use linalg::{cross, dot, einsum, inner, kron, matmul, outer, tensordot, vdot, TensordotAxes};
pub use matrix::*;
pub use numpy_math::*;
pub use predicates::*;
pub use reductions::*;
pub use searching::*;
pub use shape_ops::*;
pub use signal::*;
pub use sorting::*;
pub use statistics::*;

pub use crate::shape::Axes;
use crate::{Array, DType};

/// A value usable as an array operand: an [`Array`], a reference to one, or a Rust scalar
/// (which becomes a weakly typed 0-d array, as a Python scalar does in JAX).
pub trait ArrayLike {
    fn into_array(self) -> Array;

    /// [`into_array`](ArrayLike::into_array) for an operand of the function `op`, which a
    /// refusal (a Rust integer outside `int64`) names.
    #[track_caller]
    fn into_operand(self, op: &str) -> Array
    where
        Self: Sized,
    {
        let _ = op;
        self.into_array()
    }
}

impl ArrayLike for Array {
    fn into_array(self) -> Array {
        self
    }
}

impl ArrayLike for &Array {
    fn into_array(self) -> Array {
        self.clone()
    }
}

macro_rules! weak_scalar_like {
    ($($t:ty),*) => {$(
        impl ArrayLike for $t {
            fn into_array(self) -> Array { Array::weak_scalar(self) }
        }
    )*};
}
weak_scalar_like!(f32, f64, i32, i64, crate::Complex<f32>, crate::Complex<f64>);

/// Other Rust integers (lengths, counters) are weakly typed integers too, held as `i64`.
macro_rules! weak_integer_like {
    ($($t:ty),*) => {$(
        impl ArrayLike for $t {
            #[track_caller]
            fn into_array(self) -> Array {
                self.into_operand("array")
            }
            #[track_caller]
            fn into_operand(self, op: &str) -> Array {
                match i64::try_from(self) {
                    Ok(v) => Array::weak_scalar(v),
                    Err(_) => panic!(
                        "{op}: the integer {self} ({}) does not fit in int64, the dtype a Rust \
                         integer operand takes (JAX raises OverflowError); pass an array of \
                         dtype uint64 or a float instead",
                        stringify!($t)
                    ),
                }
            }
        }
    )*};
}
weak_integer_like!(usize, isize, u64, u32, u16, u8, i16, i8);

impl ArrayLike for bool {
    fn into_array(self) -> Array {
        Array::from(self)
    }
}

/// Converts every operand to their common dtype (JAX's `promote_dtypes`).
#[track_caller]
pub(crate) fn promote_all(arrays: &[Array]) -> Vec<Array> {
    let kinds: Vec<(DType, bool)> = arrays.iter().map(|a| (a.dtype(), a.is_weak())).collect();
    let (dtype, weak) = crate::dtype::promote(&kinds);
    arrays.iter().map(|a| convert(a, dtype, weak)).collect()
}

/// [`promote_all`] for the operands of `op`, which is named when an operand's shape cannot
/// hold the promoted dtype (a wider dtype can take an empty array past `isize::MAX` bytes).
#[track_caller]
pub(crate) fn promote_all_for(op: &str, arrays: &[Array]) -> Vec<Array> {
    let kinds: Vec<(DType, bool)> = arrays.iter().map(|a| (a.dtype(), a.is_weak())).collect();
    let (dtype, weak) = crate::dtype::promote(&kinds);
    for a in arrays {
        crate::shape::check(op, a.shape(), dtype);
    }
    arrays.iter().map(|a| convert(a, dtype, weak)).collect()
}

/// Like [`promote_all`], then integers and bools become the default float type
/// (JAX's `promote_args_inexact`).
#[track_caller]
pub(crate) fn promote_inexact(arrays: &[Array]) -> Vec<Array> {
    let promoted = promote_all(arrays);
    if promoted[0].dtype().is_inexact() {
        return promoted;
    }
    promoted
        .iter()
        .map(|a| convert(a, crate::dtype::to_inexact(a.dtype(), a.is_weak()), a.is_weak()))
        .collect()
}

/// `convert_element_type`, skipped when nothing changes.
#[track_caller]
pub(crate) fn convert(x: &Array, dtype: DType, weak: bool) -> Array {
    if x.dtype() == dtype && x.is_weak() == weak {
        return x.clone();
    }
    let convert = crate::primitives::Convert { dtype, weak };
    if x.is_weak() && x.ndim() == 0 && !x.is_traced() && x.device().is_host() {
        // A Rust scalar operand converts as NumPy converts a Python scalar for JAX: rounded,
        // never flushed (see `float_mode`).
        let aval = crate::primitives::Aval { shape: Vec::new(), dtype, weak };
        let eval = || crate::primitives::Primitive::eval(&convert, &[x], &[aval]);
        return crate::exec::cpu::float_mode::ieee(eval).remove(0);
    }
    crate::primitives::bind1(&convert, &[x])
}
