use rjax::prelude::*;

#[traceable]
fn magnitude(x: &Array) -> Option<Array> {
    Some(x.abs())
}

#[traceable]
fn checked(x: &Array) -> Option<Array> {
    let y = if x.sum() > 0.0 { magnitude(x)? } else { x.clone() };
    Some(y)
}

fn main() {}
