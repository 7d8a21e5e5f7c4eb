//! Creating arrays, reading them back, converting to and from ndarray, and printing them the
//! way NumPy does (expected strings from `str(numpy_array)`).

use rjax::prelude::*;

#[test]
fn creation_functions() {
    let _x64 = rjax::config::x64_scope(true);
    assert_eq!(jnp::full([2], 7i32).to_vec::<i32>().unwrap(), vec![7, 7]);
    assert_eq!(jnp::zeros([2, 3]).shape(), &[2, 3]);
    assert_eq!(jnp::ones([5000, 4]).size(), 20000);
    assert_eq!(jnp::arange(4).to_vec::<i32>().unwrap(), vec![0, 1, 2, 3]);
    assert_eq!(jnp::arange(4.0).dtype(), DType::F32);
    let r = jnp::arange_step(1.0, 2.0, 0.25, DType::F64);
    assert_eq!(r.to_vec::<f64>().unwrap(), vec![1.0, 1.25, 1.5, 1.75]);
    let l = jnp::linspace(0.0, 1.0, 5);
    assert_eq!(l.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    let e = jnp::eye_dtype(2, 3, 1, DType::I32);
    assert_eq!(e.to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 1]);
    let x = jnp::array([1.5f64, 2.5]);
    assert_eq!(jnp::zeros_like(&x).to_vec::<f64>().unwrap(), vec![0.0, 0.0]);
    assert_eq!(jnp::ones_like(&x).dtype(), DType::F64);
    assert_eq!(jnp::full_like(&x, 3.0).to_vec::<f64>().unwrap(), vec![3.0, 3.0]);
    assert_eq!(jnp::array(vec![1u32, 2]).dtype(), DType::U32);
    assert_eq!(Array::from(1.0f32).shape(), &[] as &[usize]);
    assert_eq!(Array::from(3i32).item::<i32>().unwrap(), 3);
    assert!(!Array::from(1.0f32).is_weak() && jnp::asarray(1.0f32).is_weak());
}

#[test]
fn clones_share_one_buffer() {
    let x = jnp::ones([1000]);
    let y = x.clone();
    assert!(x.shares_buffer_with(&y));
    assert!(!x.shares_buffer_with(&jnp::ones([1000])));
}

#[test]
fn ndarray_round_trip() {
    let _x64 = rjax::config::x64_scope(true);
    let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2, 3]), (0..6).collect::<Vec<i64>>())
        .unwrap();
    let x = Array::from(a.clone());
    assert_eq!((x.shape(), x.dtype()), (&[2, 3][..], DType::I64));
    let back: ndarray::ArrayD<i64> = (&x).try_into().unwrap();
    assert_eq!(back, a);
    // a transposed (non-standard layout) view converts in logical order
    let t = Array::from(a.t().to_owned());
    assert_eq!(t.to_vec::<i64>().unwrap(), vec![0, 3, 1, 4, 2, 5]);
    assert!(ndarray::ArrayD::<f32>::try_from(&x).is_err());
}

#[test]
fn display_matches_numpy_str() {
    let _x64 = rjax::config::x64_scope(true);
    let show = |a: Array| a.to_string();
    let f = |shape: &[usize], v: Vec<f32>| Array::from_shape_vec(shape, v);
    assert_eq!(show(f(&[2, 2], vec![1., 2., 3., 4.])), "[[1. 2.]\n [3. 4.]]");
    assert_eq!(show(f(&[3], vec![0.1, 0.25, -1.5])), "[ 0.1   0.25 -1.5 ]");
    assert_eq!(show(f(&[3], vec![1e-5, 0.25, 3.0])), "[1.0e-05 2.5e-01 3.0e+00]");
    assert_eq!(show(f(&[2], vec![1e9, 2.0])), "[1.e+09 2.e+00]");
    assert_eq!(show(f(&[3], vec![f32::NAN, 1.5, f32::NEG_INFINITY])), "[ nan  1.5 -inf]");
    assert_eq!(show(Array::from(2.5f32)), "2.5");
    let rank3 = f(&[2, 2, 2], (0..8).map(|v| v as f32).collect());
    assert_eq!(show(rank3), "[[[0. 1.]\n  [2. 3.]]\n\n [[4. 5.]\n  [6. 7.]]]");
    // dtypes other than float32 are named after the values
    let i = Array::from_shape_vec([2, 2], vec![1i32, -20, 300, 4]);
    assert_eq!(show(i), "[[  1 -20]\n [300   4]] dtype=int32");
    assert_eq!(show(jnp::array([true, false])), "[ True False] dtype=bool");
    assert_eq!(show(jnp::array([1.0 / 3.0, 2.0f64])), "[0.33333333 2.        ] dtype=float64");
    assert_eq!(show(jnp::arange(2000)), "[   0    1    2 ... 1997 1998 1999] dtype=int32");
    assert_eq!(show(jnp::array([250u8, 4])), "[250   4] dtype=uint8");
}

#[test]
fn debug_is_jax_repr() {
    let x = jnp::array([1.0f32, 2.0]);
    assert_eq!(format!("{x:?}"), "Array([1., 2.], dtype=float32)");
    assert_eq!(format!("{:?}", jnp::asarray(2i32)), "Array(2, dtype=int32, weak_type=True)");
}
