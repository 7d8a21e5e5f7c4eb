// What the compile errors of `tests/ui/fail` tell users to write instead compiles and runs.
use rjax::prelude::*;

// instead of `while y.sum() > 1.0 { y = y / 2.0 }`
#[jit]
fn halve_until_small(x: &Array) -> Array {
    lax::while_loop(|y: &Array| y.sum() > 1.0, |y: Array| y / 2.0, x.clone())
}

// instead of `match`
#[jit]
fn pick(i: &Array, x: &Array) -> Array {
    let double = |x: Array| x * 2.0;
    let negate = |x: Array| -x;
    lax::switch(i, &[&double, &negate], x.clone())
}

// instead of `y[0] = 0.0` and `y[i] += 1.0`
#[jit]
fn update(x: &Array, i: usize) -> Array {
    let mut y = x.clone();
    y = y.at(s![0]).set(0.0);
    y = y.at(s![i]).add(1.0);
    y
}

// instead of `x.sum() as i32`
#[jit]
fn truncate(x: &Array) -> Array {
    x.sum().astype(DType::I32)
}

// instead of a static `count` assigned in a traced `if`
#[jit]
fn count_positive(x: &Array) -> Array {
    let mut count = Array::from(0.0f32);
    if x.sum() > 0.0 {
        count = count + 1.0;
    }
    count
}

// instead of `return 0.0` from a traced branch
#[traceable]
fn relu(x: f32) -> f32 {
    if x < 0.0 {
        0.0
    } else {
        x
    }
}

fn main() {
    let x = jnp::array(&[3.0f32, 5.0]);
    assert_eq!(halve_until_small(&x).to_vec::<f32>().unwrap(), vec![0.375, 0.625]);
    assert_eq!(pick(&Array::from(1), &x).to_vec::<f32>().unwrap(), vec![-3.0, -5.0]);
    assert_eq!(pick(&Array::from(0), &x).to_vec::<f32>().unwrap(), vec![6.0, 10.0]);
    assert_eq!(update(&x, 1).to_vec::<f32>().unwrap(), vec![0.0, 6.0]);
    assert_eq!(truncate(&jnp::array(&[1.5f32, 2.0])).item::<i32>().unwrap(), 3);
    assert_eq!(count_positive(&x).item::<f32>().unwrap(), 1.0);
    assert_eq!(count_positive(&(-&x)).item::<f32>().unwrap(), 0.0);
    assert_eq!((relu(-1.0), relu(2.0)), (0.0, 2.0));
}
