use rjax::prelude::*;

#[traceable]
fn scale(x: impl Into<Array>) -> Array {
    x.into() * 2.0
}

fn main() {}
