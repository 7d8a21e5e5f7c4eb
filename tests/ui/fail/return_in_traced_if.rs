use rjax::prelude::*;

#[jit]
fn relu(x: f32) -> f32 {
    if x < 0.0 {
        return 0.0;
    }
    x
}

fn main() {}
