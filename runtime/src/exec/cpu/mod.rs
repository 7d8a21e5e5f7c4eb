//! CPU kernels over contiguous row-major buffers, parallelized with rayon.

pub mod alloc;
pub mod conv;
pub mod copy;
pub mod elementwise;
pub mod float_mode;
pub mod fused;
pub mod fused_float;
pub mod matmul;
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
pub mod native;
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[path = "native_none.rs"]
pub mod native;
#[cfg(target_arch = "x86_64")]
mod packed_matmul;
pub mod parts;
pub mod pool;
pub mod reduce;
pub mod samplers;
mod small_matmul;
pub(crate) mod special_math;
pub mod threefry;
pub mod xla_math;
