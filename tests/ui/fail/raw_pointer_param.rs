use rjax::prelude::*;

#[jit]
fn scale(x: &Array, factor: *const f32) -> Array {
    let _ = factor;
    x * 2.0
}

fn main() {}
