//! Execution: the compile cache and plans behind `#[jit]`, fusion, and the CPU kernels.

pub mod cpu;
mod device_plan;
pub mod fusion;
pub mod jit;
pub mod plan;
pub mod schedule;

pub use jit::{trace_function, CacheInfo, JitFunction, TracedFunction};
pub use plan::Plan;
