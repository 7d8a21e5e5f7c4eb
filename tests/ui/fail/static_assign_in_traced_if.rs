use rjax::prelude::*;

#[jit]
fn count_positive(x: &Array) -> Array {
    let mut count = 0;
    if x.sum() > 0.0 {
        count += 1;
    }
    x * count as f32
}

fn main() {}
