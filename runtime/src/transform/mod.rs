//! Program-to-program passes. Tracing already specializes (static control flow is resolved,
//! loops unrolled, calls inlined, shapes known); [`simplify`] cleans up what it produced and
//! [`ad`] differentiates programs.

pub mod ad;
pub mod simplify;

pub use simplify::simplify;
