use rjax::prelude::*;

#[jit]
fn safe_log(x: &Array) -> Array {
    assert!(x.ndim() == 1, "expected a vector");
    assert!(x.min() > 0.0, "log of a non-positive value");
    x.log()
}

fn main() {}
