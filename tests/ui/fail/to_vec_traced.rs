use rjax::prelude::*;

#[jit]
fn largest(x: &Array) -> Array {
    let values = (x * 2.0).to_vec::<f32>().unwrap();
    Array::from(values.iter().cloned().fold(f32::MIN, f32::max))
}

fn main() {}
