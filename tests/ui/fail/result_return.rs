use rjax::prelude::*;

#[jit]
fn checked_scale(x: &Array, factor: f32) -> Result<Array, Error> {
    Ok(x * factor)
}

fn main() {}
