use rjax::prelude::*;

#[jit]
async fn f(x: &Array) -> Array {
    x * 2.0
}

fn main() {}
