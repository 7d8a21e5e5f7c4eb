// An annotated function's name calls like a function, and `*f` is its `fn` pointer where one
// (or a closure) is expected.
use rjax::prelude::*;

#[traceable]
fn double(x: &Array) -> Array {
    x * 2.0
}

#[jit]
fn cube(x: f32) -> f32 {
    x * x * x
}

fn main() {
    let x = jnp::array([1.0f32, 2.0]);
    assert_eq!(double(&x).to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    let pointer: fn(&Array) -> Array = *double;
    assert_eq!(pointer(&x).to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
    let cubes: Vec<f32> = [1.0f32, 2.0].into_iter().map(*cube).collect();
    assert_eq!(cubes, vec![1.0, 8.0]);
    let copy = cube;
    assert_eq!(copy(3.0), 27.0);
}
