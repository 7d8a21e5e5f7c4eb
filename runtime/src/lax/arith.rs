//! Integer division and remainder with XLA's semantics, where they differ from `jnp`'s, and
//! the special functions `lax` names itself (`lgamma`, `digamma`), which `scipy::special` and
//! the gamma sampler build on.

use crate::jnp::{self, promote_inexact, ArrayLike};
use crate::primitives::UnaryOp;
use crate::Array;

/// C-style truncating division (`lax.div`), after JAX's type promotion.
///
/// Integer division by zero gives -1 (all bits set: `u32::MAX` for `uint32`) and
/// `i32::MIN / -1` wraps to `i32::MIN`, as XLA defines them. The same as
/// [`jnp::trunc_divide`].
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let q = lax::div(&jnp::array(&[7i32, -7, i32::MIN]), &jnp::array(&[2i32, 0, -1]));
/// assert_eq!(q.to_vec::<i32>().unwrap(), vec![3, -1, i32::MIN]);
/// ```
#[track_caller]
pub fn div(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    jnp::trunc_divide(a, b)
}

/// C-style remainder with the sign of the dividend (`lax.rem`), after JAX's type promotion.
///
/// Unlike [`jnp::fmod`] and [`jnp::remainder`], which give 0, an integer remainder by zero is
/// the dividend, as XLA defines it; `i32::MIN % -1` is 0.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let r = lax::rem(&jnp::array(&[7i32, -7, i32::MIN]), &jnp::array(&[2i32, 0, -1]));
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![1, -7, 0]);
/// ```
#[track_caller]
pub fn rem(a: impl ArrayLike, b: impl ArrayLike) -> Array {
    jnp::rem_primitive(a, b)
}

/// `ln |Gamma(x)|` (`lax.lgamma`; `scipy::special::gammaln`); an integer operand is promoted to
/// a float as JAX promotes one. Its derivative is [`digamma`].
#[track_caller]
pub fn lgamma(x: impl ArrayLike) -> Array {
    jnp::unary(UnaryOp::Lgamma, &promote_inexact(&[x.into_array()])[0])
}

/// `d/dx ln Gamma(x)` (`lax.digamma`); NaN at 0 and the negative integers, as in JAX. Its
/// derivative is the trigamma function.
#[track_caller]
pub fn digamma(x: impl ArrayLike) -> Array {
    jnp::unary(UnaryOp::Digamma, &promote_inexact(&[x.into_array()])[0])
}
