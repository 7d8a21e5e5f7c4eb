//! The function of W1, `x*x + x*2.0`: op by op (three materialized passes) and under `#[jit]`
//! (one fused pass).

use rjax::prelude::*;

pub fn slow_f(x: &Array) -> Array {
    x * x + x * 2.0
}

/// The same function compiled: traced once, then run from the cached plan.
#[jit]
pub fn fast_f(x: &Array) -> Array {
    x * x + x * 2.0
}
