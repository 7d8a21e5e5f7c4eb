use rjax::prelude::*;

#[traceable]
fn total(x: &Array) -> f32 {
    x.sum() as f32
}

fn main() {}
