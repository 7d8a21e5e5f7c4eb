use rjax::prelude::*;

#[traceable]
fn affine((w, b): (Array, Array), x: &Array) -> Array {
    x.dot(&w) + b
}

fn main() {}
