use rjax::prelude::*;

#[jit]
fn halve_until_small(x: &Array) -> Array {
    let mut y = x.clone();
    while y.sum() > 1.0 {
        y = y / 2.0;
    }
    y
}

fn main() {}
