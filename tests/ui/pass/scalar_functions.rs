// `f32`/`f64` parameters are traced 0-d arrays, so scalar code reads like plain Rust.
use rjax::prelude::*;

#[traceable]
fn t(x: f32) -> f32 {
    let y = (-2.0 * x).exp();
    (1.0 - y) / (1.0 + y)
}

#[jit]
fn scaled_tanh(x: f32, scale: f32) -> (f32, f32) {
    let v = t(x) * scale;
    (v, x + scale)
}

#[jit]
fn poly(x: f64) -> f64 {
    x * x + 2.0 * x + 1.0
}

fn main() {
    assert!((t(1.0) - 1.0f32.tanh()).abs() < 1e-6);
    assert!((t(-0.5) - (-0.5f32).tanh()).abs() < 1e-6);
    let (v, s) = scaled_tanh(0.5, 2.0);
    assert!((v - 2.0 * 0.5f32.tanh()).abs() < 1e-6);
    assert_eq!(s, 2.5);
    assert_eq!(poly(3.0), 16.0);
    assert_eq!(poly(3.0), 16.0);
    assert_eq!(poly::cache_info().traces, 1);
}
