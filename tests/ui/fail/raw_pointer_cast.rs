use rjax::prelude::*;

#[traceable]
fn address(x: &Array) -> Array {
    let p = x as *const Array;
    let _ = p;
    x * 2.0
}

fn main() {}
