use rjax::prelude::*;

fn rescale(x: &Array) -> Array {
    x * 2.0
}

mod helpers {
    pub fn shift(x: f32) -> f32 {
        x + 1.0
    }
}

#[jit]
fn quadruple(x: &Array) -> Array {
    rescale(&rescale(x))
}

#[grad]
fn shifted(x: f32) -> f32 {
    helpers::shift(x) * x
}

#[traceable]
fn square_fwd(x: &Array) -> (Array, Array) {
    (x * x, x.clone())
}

fn square_bwd(x: Array, g: Array) -> Array {
    g * x * 2.0
}

// custom_vjp's passes must be traceable too.
#[custom_vjp(fwd = square_fwd, bwd = square_bwd)]
fn squared(x: &Array) -> Array {
    x * x
}

fn main() {}
