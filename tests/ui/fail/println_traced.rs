use rjax::prelude::*;

#[jit]
fn show(x: &Array) -> Array {
    let y = x.tanh();
    println!("shape {:?}, value {}", x.shape(), y);
    y
}

fn main() {}
