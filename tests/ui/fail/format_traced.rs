use rjax::prelude::*;

#[traceable]
fn label(x: f32) -> f32 {
    let name = format!("value {}", x * 2.0);
    let _ = name;
    x
}

fn main() {}
