use rjax::prelude::*;

#[jit]
fn zero_first(x: &Array) -> Array {
    let mut y = x.clone();
    y[0] = 0.0;
    y
}

fn main() {}
