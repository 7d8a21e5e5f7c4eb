//! Program-to-program passes. Tracing already specializes (static control flow is resolved,
//! loops unrolled, calls inlined, shapes known); `simplify` cleans up what it produced,
//! [`ad`] differentiates programs and [`batch`] vectorizes them.

pub mod ad;
pub mod axes;
pub mod batch;
pub mod simplify;

pub use simplify::simplify;
