use rjax::prelude::*;

// Three parameters, two entries.
#[vmap(in_axes = (None, 0))]
fn count(w: &Array, x: &Array, y: &Array) -> Array {
    w * x * y
}

// A static parameter has one value per call.
#[vmap(in_axes = (0, 0))]
fn mapped_static(x: &Array, n: usize) -> Array {
    x * n as f32
}

// So does an f32.
#[vmap(in_axes = (0, 0))]
fn mapped_scalar(x: &Array, s: f32) -> Array {
    x * s
}

// A tuple entry for one array.
#[vmap(in_axes = ((0, 1),))]
fn tuple_for_array(x: &Array) -> Array {
    x * 2.0
}

// A tuple entry of the wrong length.
#[vmap(in_axes = ((0, 1, 0),))]
fn tuple_length(pair: (Array, Array)) -> Array {
    pair.0 * pair.1
}

// Nothing mapped.
#[vmap(in_axes = (None, None))]
fn nothing_mapped(x: &Array, y: &Array) -> Array {
    x * y
}

// One number cannot hold a batch of results.
#[vmap]
fn scalar_result(x: &Array) -> f32 {
    x.sum()
}

// Axes are integers.
#[vmap(in_axes = ("rows",))]
fn string_axis(x: &Array) -> Array {
    x * 2.0
}

// vmap takes in_axes, out_axes and axis_name.
#[vmap(axes = 0)]
fn unknown_argument(x: &Array) -> Array {
    x * 2.0
}

fn main() {}
