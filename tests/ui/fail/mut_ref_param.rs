use rjax::prelude::*;

#[jit]
fn scale_in_place(x: &mut Array) {
    *x = &*x * 2.0;
}

fn main() {}
