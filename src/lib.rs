pub use rjax_runtime::*;
