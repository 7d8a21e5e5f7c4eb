//! Execution: the compile cache and plans behind `#[jit]`, fusion, and the CPU kernels.

pub mod cpu;
mod device_plan;
pub mod fusion;
pub mod jit;
pub mod jit_log;
pub mod plan;
pub mod schedule;
pub mod static_args;

pub use jit::{trace_function, CacheInfo, JitFunction, TracedFunction};
pub use jit_log::{log_compiles, set_log_compiles, CallSite};
pub use plan::Plan;
pub use static_args::{StaticArg, StaticKey};
