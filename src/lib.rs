#![doc = include_str!("../README.md")]

// The derives in this crate's own modules (`optim`) name it `::rjax`, as users' code does.
extern crate self as rjax;

pub mod optim;

pub use rjax_macros::{
    checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit, jvp, pmap, traceable,
    value_and_grad, vjp, vmap, Tree,
};
pub use rjax_runtime::*;

/// Several processes as one set of global devices, over MPI (`jax.distributed`; feature
/// `distributed`, see README, "Several machines").
#[cfg(feature = "distributed")]
pub use rjax_runtime::device::distributed;

/// Prints arrays when the program runs, inside traced functions too (`jax.debug.print`):
/// `rjax::debug_print!("x = {}, y = {}", x, y)`. Each `{}` takes one array.
#[macro_export]
macro_rules! debug_print {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::__private::debug_print($fmt, &[$($crate::__private::debug_arg(&$arg)),*])
    };
}

/// What `use rjax::prelude::*;` brings into scope: the array type, `jnp`, `lax`, `random`,
/// `tree`, and the attributes.
pub mod prelude {
    pub use rjax_macros::{
        checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit, jvp, pmap,
        traceable, value_and_grad, vjp, vmap, Tree,
    };
    pub use rjax_runtime::prelude::*;
}
