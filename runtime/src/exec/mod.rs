//! Execution: CPU kernels (and later compiled plans and other backends).

pub mod cpu;
