//! Integer division and remainder with XLA's semantics, where they differ from `jnp`'s.

use crate::jnp::{self, ArrayLike};
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
