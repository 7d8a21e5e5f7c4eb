//! `lax`: structured control flow that traced code can use, and convolutions, as `jax.lax`.
//!
//! Each takes closures that the runtime traces into sub-programs when their operands are
//! traced, so the choice or the loop happens when the program runs: [`cond`] and [`switch`]
//! pick a branch, [`scan`], [`map`], [`fori_loop`] and [`while_loop`] loop; [`psum`] and the other collectives
//! combine values across a named mapped axis. With concrete operands outside a
//! trace they simply run the Rust closures. [`conv_general_dilated`] is XLA's general
//! convolution, with the shortcuts [`conv`] and [`conv_with_general_padding`]. [`div`] and
//! [`rem`] are the integer division and remainder of XLA, which `jnp` adjusts at zero divisors.
//! [`sort`], [`sort_key_val`] and [`top_k`] sort and select along an axis.
//! [`dynamic_slice`] and [`dynamic_update_slice`] read and write blocks at traced positions,
//! [`pad`] pads with interior padding, and [`reduce_window`] (with [`max_pool`], [`avg_pool`]
//! and [`sum_pool`]) reduces sliding windows.
//!
//! The elementwise operations ([`add`], [`exp`], [`eq`], [`round`], ...) are the primitives
//! `jnp` builds on, without its type promotion: the operands of one operation share a dtype,
//! and floating-point functions refuse integers, as in `jax.lax`. Beside them are the
//! reductions ([`reduce_sum`], [`argmax`], ...), shape operations ([`broadcast_in_dim`],
//! [`reshape`], [`transpose`], [`collapse`], ...), constructors ([`iota`], [`full`]) and the
//! products [`dot`] and [`dot_general`].

mod arith;
mod associative;
mod branch;
mod collective;
mod conv;
mod elementwise;
mod loops;
mod scan;
mod slicing;
mod sort;
mod structure;
mod windows;

pub use crate::jnp::broadcast_shapes;
pub use crate::primitives::ConvDimensionNumbers;
pub use crate::transform::ad::custom::stop_gradient;
pub use arith::{digamma, div, lgamma, rem};
pub use associative::{associative_scan, cumlogsumexp, cummax, cummin, cumprod, cumsum};
pub use branch::{cond, select, switch};
pub use collective::{
    all_gather, axis_index, pmax, pmean, pmin, ppermute, psum, psum_scatter, AxisNames,
};
pub use conv::{conv, conv_general_dilated, conv_with_general_padding, ConvOptions, Padding};
pub use elementwise::{
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bessel_i0e, bessel_i1e, bitwise_and,
    bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, complex, conj, convert_element_type, cos,
    cosh, eq, erf, erf_inv, erfc, exp, exp2, expm1, floor, ge, gt, imag, integer_pow, is_finite,
    le, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter, pow, real, reciprocal, round,
    rsqrt, sign, sin, sinh, sqrt, square, sub, tan, tanh, RoundingMethod,
};
pub use loops::{fori_loop, while_loop};
pub use scan::{map, scan, scan_with, ScanOptions};
pub use slicing::{
    clamp, dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_index_in_dim,
    dynamic_update_slice, dynamic_update_slice_in_dim, pad, select_n, slice,
};
pub use sort::{sort, sort_key_val, top_k, top_k_axis};
pub use structure::{
    argmax, argmin, broadcast, broadcast_in_dim, broadcast_to_rank, broadcasted_iota, collapse,
    concatenate, dot, dot_general, expand_dims, full, full_like, index_in_dim, iota, reduce_and,
    reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_xor, reshape, rev,
    slice_in_dim, split, squeeze, stack, tile, transpose, unstack, DotDimensionNumbers,
};
pub use windows::{avg_pool, max_pool, reduce_window, sum_pool, WindowOp};
