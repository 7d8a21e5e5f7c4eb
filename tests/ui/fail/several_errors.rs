use rjax::prelude::*;

#[jit]
fn everything_wrong(x: f32, v: &Array) -> f32 {
    let first = v.item::<f32>().unwrap();
    println!("first = {first}");
    match x {
        0.0 => first,
        _ => x * first,
    }
}

fn main() {}
