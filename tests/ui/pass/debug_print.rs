// `rjax::debug_print!` prints traced values when the function runs; static facts (shapes,
// dtypes, static parameters) may be printed and asserted on with Rust's own macros.
use rjax::prelude::*;

#[jit]
fn noisy(x: &Array, label: &str) -> Array {
    assert!(x.ndim() == 1, "expected a vector, got shape {:?}", x.shape());
    assert_eq!(x.dtype(), DType::F32);
    println!("tracing {label} for shape {:?}", x.shape());
    let y = x * 2.0;
    rjax::debug_print!("y = {}", y);
    rjax::debug_print!("y + 1 = {}, x = {}", y + 1.0, x);
    y
}

fn main() {
    let x = jnp::array(&[1.0f32, 2.0]);
    assert_eq!(noisy(&x, "first").to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    assert_eq!(noisy(&x, "first").to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    assert_eq!(noisy::cache_info().traces, 1);
}
