// `if`, `while` and `match` on static values (integer and `&str` parameters, shapes) are
// Rust's own control flow, resolved when the function is traced; each static value keys the
// compile cache.
use rjax::prelude::*;

#[jit]
fn power(x: &Array, n: usize) -> Array {
    if n == 0 {
        return jnp::ones_like(x);
    }
    let mut y = x.clone();
    let mut k = 1;
    while k < n {
        y = y * x;
        k += 1;
    }
    y
}

#[jit]
fn activate(x: &Array, kind: &str) -> Array {
    match kind {
        "tanh" => x.tanh(),
        "square" => x.square(),
        _ => x.clone(),
    }
}

#[jit]
fn mean_rows(x: &Array) -> Array {
    let rows = x.shape()[0];
    if x.ndim() == 1 || rows == 1 {
        x.clone()
    } else {
        let mut total = x.slice(s![0]);
        for i in 1..rows {
            total = total + x.slice(s![i]);
        }
        total / rows as f32
    }
}

fn main() {
    let x = jnp::array(&[1.0f32, 2.0, 3.0]);
    assert_eq!(power(&x, 0).to_vec::<f32>().unwrap(), vec![1.0, 1.0, 1.0]);
    assert_eq!(power(&x, 3).to_vec::<f32>().unwrap(), vec![1.0, 8.0, 27.0]);
    assert_eq!(power(&x, 3).to_vec::<f32>().unwrap(), vec![1.0, 8.0, 27.0]);
    let info = power::cache_info();
    assert_eq!((info.traces, info.hits), (2, 1));

    assert_eq!(activate(&x, "square").to_vec::<f32>().unwrap(), vec![1.0, 4.0, 9.0]);
    assert_eq!(activate(&x, "id").to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    let t = activate(&x, "tanh").to_vec::<f32>().unwrap();
    assert!((t[1] - 2.0f32.tanh()).abs() < 1e-6);
    assert_eq!(activate::cache_info().traces, 3);

    let m = Array::from_shape_vec([2, 3], vec![1.0f32, 2.0, 3.0, 3.0, 4.0, 5.0]);
    assert_eq!(mean_rows(&m).to_vec::<f32>().unwrap(), vec![2.0, 3.0, 4.0]);
    assert_eq!(mean_rows(&x).to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);

    assert_eq!(tagged(&x, String::new(), true).to_vec::<f32>().unwrap(), vec![-1.0, -2.0, -3.0]);
    assert_eq!(tagged(&x, "twice".into(), false).to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    assert_eq!(tagged::cache_info().traces, 2);
}

#[jit]
fn tagged(x: &Array, tag: String, flip: bool) -> Array {
    let y = if flip { -x } else { x.clone() };
    if tag.is_empty() {
        y
    } else {
        y * 2.0
    }
}
