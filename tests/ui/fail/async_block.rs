use rjax::prelude::*;

#[traceable]
fn f(x: &Array) -> Array {
    let later = async { 2.0 };
    let _ = later;
    x * 2.0
}

fn main() {}
