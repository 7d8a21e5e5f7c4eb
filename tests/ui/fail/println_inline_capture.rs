use rjax::prelude::*;

#[jit]
fn show(x: &Array) -> Array {
    let y = x * 2.0;
    println!("y = {y:?}");
    y
}

fn main() {}
