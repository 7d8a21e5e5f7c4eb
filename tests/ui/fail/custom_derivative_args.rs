use rjax::prelude::*;

// custom_vjp needs both passes.
#[custom_vjp(fwd = f_fwd)]
fn f(x: &Array) -> Array {
    x.sin()
}

// custom_jvp needs its rule.
#[custom_jvp]
fn g(x: &Array) -> Array {
    x.sin()
}

fn main() {}
