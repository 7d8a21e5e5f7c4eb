use rjax::prelude::*;

#[jit(donate_argnums = 0)]
fn power(x: &Array, n: usize) -> Array {
    let mut y = x.clone();
    for _ in 1..n {
        y = y * x;
    }
    y
}

fn main() {}
