use rjax::prelude::*;

#[traceable]
fn pick(x: f32) -> f32 {
    match x {
        0.0 => 1.0,
        _ => x,
    }
}

fn main() {}
