//! SciPy-style functions on arrays, like `jax.scipy`: [`special`] functions (error function
//! family, gamma family, scaled Bessel functions, `xlogy`, `logsumexp`, ...) and the normal
//! distribution of [`stats`], and the triangular solve and LU factorization of [`linalg`].
//!
//! ```
//! use rjax_runtime::{jnp, scipy::special};
//! let g = special::gammaln(&jnp::array(&[5.0f32]));
//! assert!((g.item::<f32>().unwrap() - 24f32.ln()).abs() < 1e-6);
//! ```

pub mod linalg;
pub mod special;
pub mod stats;
