//! rjax: JAX for Rust.
//!
//! NumPy-style arrays with JAX's semantics — dtypes, weak types, broadcasting, type promotion —
//! run eagerly on CPU cores, the foundation for composable transformations (`grad`, `jit`,
//! `vmap`, `pmap`).
//!
//! ```
//! use rjax::prelude::*;
//!
//! let x = Array::from_shape_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
//! let y = (&x * 2.0 + 1.0).tanh();
//! assert_eq!(y.dtype(), DType::F32);
//! assert_eq!((jnp::arange(4) + 1.5).dtype(), DType::F32);
//! ```

pub use rjax_runtime::*;
