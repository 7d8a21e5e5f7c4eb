// `if` on a traced 0-d bool becomes `lax::cond`: both branches are traced, the outer
// `let mut` locals they assign are threaded through as outputs, and a branch may produce a
// Rust literal (a weakly typed scalar) where the other produces an array.
use rjax::prelude::*;

#[jit]
fn halve_if_large(x: &Array) -> (Array, Array) {
    let mut y = x.clone();
    let mut halved = Array::from(0.0f32);
    let mut count = Array::from(0.0f32);
    if x.sum() > 10.0 {
        y = y / 2.0;
        halved = Array::from(1.0f32);
        count = count + 1.0;
    } else {
        count = count + 2.0;
    }
    let _ = count;
    (y, halved)
}

#[jit]
fn relu_sum(x: &Array) -> Array {
    let s = x.sum();
    if s > 0.0 {
        s
    } else {
        0.0
    }
}

#[traceable]
fn sign(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

#[jit]
fn in_unit_interval(x: f32) -> f32 {
    let inside = if x >= 0.0 && x <= 1.0 { x } else { x * 0.0 - 1.0 };
    inside
}

fn main() {
    let small = jnp::array(&[1.0f32, 2.0]);
    let large = jnp::array(&[10.0f32, 20.0]);
    let (y, halved) = halve_if_large(&small);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert_eq!(halved.item::<f32>().unwrap(), 0.0);
    let (y, halved) = halve_if_large(&large);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 10.0]);
    assert_eq!(halved.item::<f32>().unwrap(), 1.0);
    assert_eq!(halve_if_large::cache_info().traces, 1);

    assert_eq!(relu_sum(&small).item::<f32>().unwrap(), 3.0);
    assert_eq!(relu_sum(&(-&small)).item::<f32>().unwrap(), 0.0);

    assert_eq!((sign(2.5), sign(-0.5), sign(0.0)), (1.0, -1.0, 0.0));
    assert_eq!((in_unit_interval(0.25), in_unit_interval(3.0)), (0.25, -1.0));
}
