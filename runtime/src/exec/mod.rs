//! Execution: the compile cache and plans behind `#[jit]`, and the CPU kernels.

pub mod cpu;
pub mod jit;
pub mod plan;

pub use jit::{trace_function, CacheInfo, JitFunction, TracedFunction};
pub use plan::Plan;
