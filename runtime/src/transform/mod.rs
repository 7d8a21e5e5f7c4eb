//! Program-to-program passes. Tracing already specializes (static control flow is resolved,
//! loops unrolled, calls inlined, shapes known); these passes clean up what it produced.

pub mod simplify;

pub use simplify::simplify;
