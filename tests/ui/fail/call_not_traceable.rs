use rjax::prelude::*;

fn rescale(x: &Array) -> Array {
    x * 2.0
}

#[jit]
fn quadruple(x: &Array) -> Array {
    rescale(&rescale(x))
}

fn main() {}
