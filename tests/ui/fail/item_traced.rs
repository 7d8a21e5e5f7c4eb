use rjax::prelude::*;

#[jit]
fn total(x: &Array) -> f32 {
    let s = x.sum();
    s.item::<f32>().unwrap()
}

fn main() {}
