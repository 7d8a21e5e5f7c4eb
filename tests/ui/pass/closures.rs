// Closures are inlined into the trace; their parameters are traced unless typed as static.
use rjax::prelude::*;

#[jit]
fn affine_twice(x: &Array, times: usize) -> Array {
    let scale = |a: &Array| a * 3.0;
    let shift = |a: Array, by: f32| a + by;
    let repeat = |n: usize| n * 2;
    let mut y = x.clone();
    for _ in 0..repeat(times) {
        y = shift(scale(&y), 1.0);
    }
    y
}

#[jit]
fn count_down(x: &Array) -> (Array, Array) {
    lax::while_loop(
        |(i, _): &(Array, Array)| i > 0,
        |(i, y): (Array, Array)| (i - 1, y * 2.0),
        (Array::from(3), x.clone()),
    )
}

fn main() {
    let x = jnp::array(&[0.0f32, 1.0]);
    assert_eq!(affine_twice(&x, 1).to_vec::<f32>().unwrap(), vec![4.0, 13.0]);
    let (i, y) = count_down(&x);
    assert_eq!(i.item::<i32>().unwrap(), 0);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 8.0]);
}
