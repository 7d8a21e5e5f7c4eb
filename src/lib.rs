#![doc = include_str!("../README.md")]

pub use rjax_runtime::*;
