use rjax::prelude::*;

#[jit]
fn bump(x: &Array, i: usize) -> Array {
    let mut y = x * 2.0;
    y[i] += 1.0;
    y
}

fn main() {}
