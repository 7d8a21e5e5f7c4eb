use rjax::prelude::*;

#[jit]
fn show(x: &Array) -> Array {
    let y = x * 2.0;
    rjax::debug_print!("y = {y}");
    rjax::debug_print!("y = {:.3}", y);
    y
}

fn main() {}
