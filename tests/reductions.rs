//! Reductions: golden JAX cases, NumPy-computed values (pasted as literals), dtype and weak-type
//! rules, empty and NaN inputs, error messages, properties against a naive f64 reference, and
//! determinism across runs and thread counts.

mod common;
use common::*;
use proptest::prelude::*;
use rjax::prelude::*;
use rjax::primitives::{bind1, ArgOp, ArgReduce, CumOp, Cumulative, Reduce, ReduceOp};

fn f32s(shape: &[usize], data: &[f32]) -> Array {
    Array::from_shape_vec(shape, data.to_vec())
}

fn i32s(shape: &[usize], data: &[i32]) -> Array {
    Array::from_shape_vec(shape, data.to_vec())
}

fn i8s(shape: &[usize], data: &[i8]) -> Array {
    Array::from_shape_vec(shape, data.to_vec())
}

fn bools(shape: &[usize], data: &[bool]) -> Array {
    Array::from_shape_vec(shape, data.to_vec())
}

/// Same shape and dtype, values within float32 rounding of NumPy's (exact for ints and bools).
#[track_caller]
fn check(got: &Array, want: &Array) {
    assert_close(got, want, 2e-6, 1e-6);
}

// --- Golden JAX cases -------------------------------------------------------------------------

#[test]
fn golden_sum_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("sum_axes", "X");
    assert_golden("sum_axes", 0, &jnp::sum(&x));
    assert_golden("sum_axes", 1, &jnp::sum_axes(&x, 0, false));
    assert_golden("sum_axes", 2, &x.sum_axes(1, false));
    assert_golden("sum_axes", 3, &x.sum_axes(1, true));
}

#[test]
fn golden_mean_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("mean_axes_and_grad", "X");
    assert_golden("mean_axes_and_grad", 0, &jnp::mean(&x));
    assert_golden("mean_axes_and_grad", 1, &jnp::mean_axes(&x, 0, false));
    assert_golden("mean_axes_and_grad", 2, &x.mean_axes(1, false));
}

#[test]
fn golden_softmax_log_softmax() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("softmax_log_softmax", "X");
    assert_golden("softmax_log_softmax", 0, &jnp::softmax(&x, -1));
    assert_golden("softmax_log_softmax", 1, &jnp::log_softmax(&x, -1));
    assert_golden("softmax_log_softmax", 2, &jnp::softmax(&x, 0));
}

#[test]
fn golden_cumsum_cumprod() {
    let _x64 = rjax::config::x64_scope(true);
    let x = input("cumsum_cumprod_and_grad", "x");
    assert_golden("cumsum_cumprod_and_grad", 0, &jnp::cumsum(&x, None));
    assert_golden("cumsum_cumprod_and_grad", 1, &x.cumprod(None));
}

// --- Values computed once with NumPy 2.4 ------------------------------------------------------

/// `(((arange(24) * 7) % 11 - 5) / 2).reshape(2, 3, 4)` as float32: has ties and zeros.
fn x3() -> Array {
    f32s(
        &[2, 3, 4],
        &[
            -2.5, 1.0, -1.0, 2.5, 0.5, -1.5, 2.0, 0.0, -2.0, 1.5, -0.5, -2.5, 1.0, -1.0, 2.5, 0.5,
            -1.5, 2.0, 0.0, -2.0, 1.5, -0.5, -2.5, 1.0,
        ],
    )
}

#[test]
fn var_and_std_over_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    check(&jnp::var(&x), &f32s(&[], &[2.5898438]));
    check(
        &x.var_axes(1, true),
        &f32s(
            &[2, 1, 4],
            &[
                1.7222222, 1.7222222, 1.7222223, 4.1666665, 1.7222222, 1.7222223, 4.1666665,
                1.7222222,
            ],
        ),
    );
    check(&jnp::var_ddof(&x, [0, 2], false, 1), &f32s(&[3], &[3.125, 2.388393, 2.9285715]));
    check(
        &x.std_axes(-1, false),
        &f32s(&[2, 3], &[1.9039433, 1.25, 1.5562375, 1.25, 1.5562375, 1.5562375]),
    );
    check(
        &jnp::std_ddof(&x, [0, 1], true, 1),
        &f32s(&[1, 1, 4], &[1.7029387, 1.4404861, 1.8819317, 1.8819317]),
    );
    check(&jnp::mean_axes(&x, [0, 2], true), &f32s(&[1, 3, 1], &[0.375, -0.0625, -0.5]));
}

#[test]
fn prod_max_min_over_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    check(&jnp::prod_axes(&x, 2, false), &f32s(&[2, 3], &[6.25, -0.0, -3.75, -1.25, 0.0, 1.875]));
    check(
        &x.prod_axes(0, true),
        &f32s(
            &[1, 3, 4],
            &[-2.5, -1.0, -2.5, 1.25, -0.75, -3.0, 0.0, -0.0, -3.0, -0.75, 1.25, -2.5],
        ),
    );
    check(&jnp::max_axes(&x, [0, 2], true), &f32s(&[1, 3, 1], &[2.5, 2.0, 1.5]));
    check(&x.min_axes(1, false), &f32s(&[2, 4], &[-2.5, -1.5, -1.0, -2.5, -1.5, -1.0, -2.5, -2.0]));
    check(&x.max(), &f32s(&[], &[2.5]));
    check(&jnp::min(&x), &f32s(&[], &[-2.5]));
}

#[test]
fn argmax_argmin_take_the_first_tie() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    check(&jnp::argmax(&x), &i32s(&[], &[3]));
    check(&x.argmin(), &i32s(&[], &[0]));
    check(&jnp::argmax_axis(&x, 1, false), &i32s(&[2, 4], &[1, 2, 1, 0, 2, 1, 0, 2]));
    check(&x.argmin_axis(-1, true), &i32s(&[2, 3, 1], &[0, 1, 3, 1, 3, 2]));
    check(&x.argmax_axis(0, false), &i32s(&[3, 4], &[1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1]));
}

#[test]
fn logsumexp_over_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    check(
        &jnp::logsumexp_axes(&x, 2, false),
        &f32s(&[2, 3], &[2.7311637, 2.3283412, 1.6687704, 2.8283412, 2.1687703, 2.065417]),
    );
    check(&jnp::logsumexp(&x), &f32s(&[], &[4.166212]));
}

#[test]
fn logsumexp_handles_infinite_rows() {
    let _x64 = rjax::config::x64_scope(true);
    let inf = f32::INFINITY;
    let x = f32s(&[4, 3], &[-inf, -inf, -inf, 0.0, -inf, 1.0, inf, 0.0, 1.0, 1000.0, 1000.0, -1e3]);
    check(&jnp::logsumexp_axes(&x, 1, true), &f32s(&[4, 1], &[-inf, 1.3132616, inf, 1000.6932]));
    check(&jnp::logsumexp(&jnp::zeros([0])), &f32s(&[], &[-inf]));
    // Integers are promoted to float32.
    check(&jnp::logsumexp(&i32s(&[2], &[0, 0])), &f32s(&[], &[std::f32::consts::LN_2]));
}

#[test]
fn cumulative_scans_over_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    check(
        &jnp::cumprod(&x, Some(1)),
        &f32s(
            &[2, 3, 4],
            &[
                -2.5, 1.0, -1.0, 2.5, -1.25, -1.5, -2.0, 0.0, 2.5, -2.25, 1.0, -0.0, 1.0, -1.0,
                2.5, 0.5, -1.5, -2.0, 0.0, -1.0, -2.25, 1.0, -0.0, -1.0,
            ],
        ),
    );
    check(
        &jnp::cummax(&x, Some(-1)),
        &f32s(
            &[2, 3, 4],
            &[
                -2.5, 1.0, 1.0, 2.5, 0.5, 0.5, 2.0, 2.0, -2.0, 1.5, 1.5, 1.5, 1.0, 1.0, 2.5, 2.5,
                -1.5, 2.0, 2.0, 2.0, 1.5, 1.5, 1.5, 1.5,
            ],
        ),
    );
    check(
        &jnp::cummin(&x, Some(0)),
        &f32s(
            &[2, 3, 4],
            &[
                -2.5, 1.0, -1.0, 2.5, 0.5, -1.5, 2.0, 0.0, -2.0, 1.5, -0.5, -2.5, -2.5, -1.0, -1.0,
                0.5, -1.5, -1.5, 0.0, -2.0, -2.0, -0.5, -2.5, -2.5,
            ],
        ),
    );
}

#[test]
fn reverse_scans_through_the_primitive() {
    let _x64 = rjax::config::x64_scope(true);
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let rev = |op, axis| bind1(&Cumulative { op, axis, reverse: true }, &[&x]);
    check(&rev(CumOp::Sum, 1), &f32s(&[2, 3], &[6.0, 5.0, 3.0, 15.0, 11.0, 6.0]));
    check(&rev(CumOp::Prod, 0), &f32s(&[2, 3], &[4.0, 10.0, 18.0, 4.0, 5.0, 6.0]));
    check(&rev(CumOp::Max, 1), &f32s(&[2, 3], &[3.0, 3.0, 3.0, 6.0, 6.0, 6.0]));
    check(&rev(CumOp::Min, 1), &f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
}

fn int8_matrix() -> Array {
    i8s(&[3, 4], &[3, -7, 0, 12, 5, 5, -2, 9, 100, -100, 1, 1])
}

#[test]
fn integer_reductions_follow_jax_dtypes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = int8_matrix();
    check(&jnp::sum_axes(&x, 0, false), &i32s(&[4], &[108, -102, -1, 22]));
    check(&x.prod_axes(1, false), &i32s(&[3], &[0, -450, -10000]));
    check(&x.max_axes(1, false), &i8s(&[3], &[12, 9, 100]));
    check(&x.min_axes(0, false), &i8s(&[4], &[3, -100, -2, 1]));
    check(&jnp::mean_axes(&x, 1, false), &f32s(&[3], &[2.0, 4.25, 0.5]));
    check(&jnp::var(&x), &f32s(&[], &[1689.8541]));
    check(
        &jnp::std_ddof(&x, 0, false, 1),
        &f32s(&[4], &[55.434647, 57.471733, 1.5275253, 5.686241]),
    );
    check(&x.argmax_axis(1, false), &i32s(&[3], &[3, 3, 0]));
    check(&x.argmin_axis(0, false), &i32s(&[4], &[0, 2, 1, 2]));
    check(&x.cumsum(Some(1)), &i32s(&[3, 4], &[3, -4, -4, 8, 5, 10, 8, 17, 100, 0, 1, 2]));
    check(&jnp::cumprod(&x, None), &i32s(&[12], &[3, -21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    check(&x.all_axes(1, false), &bools(&[3], &[false, true, true]));
    check(&jnp::any_axes(&x, 0, false), &bools(&[4], &[true, true, true, true]));
    check(&x.all(), &bools(&[], &[false]));
    check(&x.any(), &bools(&[], &[true]));
}

#[test]
fn unsigned_and_wide_integers_keep_their_kind() {
    let _x64 = rjax::config::x64_scope(true);
    let u = Array::from_shape_vec([3], vec![200u8, 100, 50]);
    check(&jnp::sum(&u), &Array::from_shape_vec([], vec![350u32]));
    check(&jnp::cumsum(&u, None), &Array::from_shape_vec([3], vec![200u32, 300, 350]));
    let w = Array::from_shape_vec([2], vec![i64::MAX / 2, i64::MAX / 2]);
    assert_eq!(jnp::sum(&w).dtype(), DType::I64);
    assert_eq!(jnp::max(&u).dtype(), DType::U8);
}

#[test]
fn integer_sums_wrap() {
    let _x64 = rjax::config::x64_scope(true);
    check(&jnp::sum(&i32s(&[2], &[i32::MAX, 1])), &i32s(&[], &[i32::MIN]));
    check(&jnp::prod(&i32s(&[2], &[65536, 65536])), &i32s(&[], &[0]));
}

#[test]
fn bool_reductions() {
    let _x64 = rjax::config::x64_scope(true);
    let b = bools(&[2, 3], &[true, false, true, true, true, true]);
    check(&jnp::sum_axes(&b, 1, false), &i32s(&[2], &[2, 3]));
    check(&b.sum(), &i32s(&[], &[5]));
    check(&b.all_axes(0, false), &bools(&[3], &[true, false, true]));
    check(&b.any_axes(1, false), &bools(&[2], &[true, true]));
    check(&jnp::all_axes(&b, 1, false), &bools(&[2], &[false, true]));
    check(&jnp::cumsum(&b, Some(1)), &i32s(&[2, 3], &[1, 1, 2, 1, 2, 3]));
    check(&b.max_axes(1, false), &bools(&[2], &[true, true]));
    check(&b.min_axes(1, false), &bools(&[2], &[false, true]));
    check(&b.argmax_axis(1, false), &i32s(&[2], &[0, 0]));
    check(&b.argmin_axis(1, false), &i32s(&[2], &[1, 0]));
    check(&b.mean(), &f32s(&[], &[0.8333333]));
    assert_eq!(jnp::prod(&b).dtype(), DType::I32);
}

fn with_nans() -> Array {
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    f32s(&[3, 4], &[1.0, nan, 3.0, nan, nan, -inf, 2.0, 0.0, -1.0, 4.0, 4.0, -2.0])
}

#[test]
fn nan_propagates_and_wins_arg_reductions() {
    let _x64 = rjax::config::x64_scope(true);
    let x = with_nans();
    let nan = f32::NAN;
    check(&x.sum_axes(1, false), &f32s(&[3], &[nan, nan, 5.0]));
    check(&x.max_axes(1, false), &f32s(&[3], &[nan, nan, 4.0]));
    check(&x.min_axes(0, false), &f32s(&[4], &[nan, nan, 2.0, nan]));
    check(&x.argmax_axis(1, false), &i32s(&[3], &[1, 0, 1]));
    check(&x.argmin_axis(1, false), &i32s(&[3], &[1, 0, 3]));
    check(&x.argmax_axis(0, false), &i32s(&[4], &[1, 0, 2, 0]));
    check(&x.argmin_axis(0, false), &i32s(&[4], &[1, 0, 1, 0]));
    check(&x.argmax(), &i32s(&[], &[1]));
    check(&x.argmin(), &i32s(&[], &[1]));
    check(&x.all_axes(1, false), &bools(&[3], &[true, false, true]));
    check(&x.any_axes(0, false), &bools(&[4], &[true, true, true, true]));
    check(
        &jnp::cummax(&x, Some(1)),
        &f32s(&[3, 4], &[1.0, nan, nan, nan, nan, nan, nan, nan, -1.0, 4.0, 4.0, 4.0]),
    );
    check(
        &x.cumsum(Some(0)),
        &f32s(&[3, 4], &[1.0, nan, 3.0, nan, nan, nan, 5.0, nan, nan, nan, 9.0, nan]),
    );
}

#[test]
fn empty_reductions_give_the_identity() {
    let _x64 = rjax::config::x64_scope(true);
    let e = jnp::zeros([0, 3]);
    check(&e.sum_axes(0, false), &f32s(&[3], &[0.0; 3]));
    check(&e.prod_axes(0, false), &f32s(&[3], &[1.0; 3]));
    check(&e.all(), &bools(&[], &[true]));
    check(&e.any(), &bools(&[], &[false]));
    check(&e.sum_axes(1, true), &f32s(&[0, 1], &[]));
    assert!(e.mean().item::<f32>().unwrap().is_nan());
    // max and min have no identity: over the empty axis they panic (tests/edges.rs), over
    // the other one the result is empty.
    check(&e.max_axes(1, false), &f32s(&[0], &[]));
    check(&e.min_axes(1, true), &f32s(&[0, 1], &[]));
    check(&jnp::cumsum(&e, Some(0)), &f32s(&[0, 3], &[]));
    check(&jnp::argmax_axis(&e, 1, false), &i32s(&[0], &[]));
}

#[test]
fn zero_dimensional_inputs() {
    let _x64 = rjax::config::x64_scope(true);
    let s = Array::from(3.0f32);
    check(&s.sum(), &f32s(&[], &[3.0]));
    check(&jnp::sum_axes(&s, Axes::All, true), &f32s(&[], &[3.0]));
    check(&s.argmax(), &i32s(&[], &[0]));
    check(&jnp::cumsum(&s, None), &f32s(&[1], &[3.0]));
    check(&jnp::softmax(&s, Axes::All), &f32s(&[], &[1.0]));
}

#[test]
fn axes_accept_every_form() {
    let _x64 = rjax::config::x64_scope(true);
    let x = x3();
    let want = jnp::sum_axes(&x, [0, 2], false);
    for got in [
        jnp::sum_axes(&x, [2, 0], false),
        jnp::sum_axes(&x, [-1, -3], false),
        jnp::sum_axes(&x, &[0usize, 2][..], false),
        jnp::sum_axes(&x, vec![0i64, 2], false),
        x.sum_axes([0, 2], false),
    ] {
        check(&got, &want);
    }
    let total = jnp::sum(&x).item::<f32>().unwrap();
    check(&jnp::sum_axes(&x, Axes::All, true), &f32s(&[1, 1, 1], &[total]));
    // An empty list reduces nothing.
    check(&jnp::sum_axes(&x, Vec::<i32>::new(), false), &x);
}

#[test]
fn half_precision_accumulates_in_f32() {
    let _x64 = rjax::config::x64_scope(true);
    let h = jnp::full([1000], 0.1f32).astype(DType::F16);
    let s = jnp::sum(&h);
    assert_eq!(s.dtype(), DType::F16);
    // The exact sum of 1000 f16(0.1) values is 99.976, which rounds to 100 in f16; summing in
    // f16 itself would drift far from it.
    assert_eq!(s.astype(DType::F32).item::<f32>().unwrap(), 100.0);
    let m = jnp::mean(&h);
    assert_eq!(m.dtype(), DType::F16);
    assert_eq!(m.astype(DType::F32).item::<f32>().unwrap(), 0.099975586);
    assert_eq!(jnp::var(&h).dtype(), DType::F16);
    let b = jnp::full([3], 2.0f32).astype(DType::BF16);
    check(&jnp::cumprod(&b, None), &f32s(&[3], &[2.0, 4.0, 8.0]).astype(DType::BF16));
}

#[test]
fn weak_types_propagate() {
    let w = Array::weak_scalar(2.5f32);
    assert!(jnp::sum(&w).is_weak());
    assert!(jnp::max(&w).is_weak());
    assert!(jnp::mean(&w).is_weak());
    assert!(!jnp::sum(&x3()).is_weak());
    assert!(!jnp::argmax(&w).is_weak());
    assert!(!jnp::all(&w).is_weak());
}

#[test]
fn softmax_is_stable() {
    let _x64 = rjax::config::x64_scope(true);
    let inf = f32::INFINITY;
    let x = f32s(&[3, 2], &[1000.0, 1000.0, 0.0, -inf, -inf, -inf]);
    let p = jnp::softmax(&x, -1).to_vec::<f32>().unwrap();
    assert_eq!(&p[..4], &[0.5, 0.5, 1.0, 0.0]);
    // As in JAX, a row whose maximum is infinite has no defined softmax.
    assert!(p[4].is_nan() && p[5].is_nan());
    let l = jnp::log_softmax(&x, 1).to_vec::<f32>().unwrap();
    assert_eq!(&l[..4], &[-std::f32::consts::LN_2, -std::f32::consts::LN_2, 0.0, -inf]);
    let ints = jnp::softmax(&i32s(&[2], &[0, 0]), 0);
    check(&ints, &f32s(&[2], &[0.5, 0.5]));
    let over_all = jnp::softmax(&x3(), Axes::All);
    assert!((over_all.sum().item::<f32>().unwrap() - 1.0).abs() < 1e-6);
}

#[test]
fn large_f32_sums_are_accurate() {
    let n = 1 << 22;
    let x = jnp::full([n], 0.1f32);
    let got = jnp::sum(&x).item::<f32>().unwrap() as f64;
    let want = 0.1f32 as f64 * n as f64;
    assert!((got - want).abs() / want < 1e-6, "got {got}, want {want}");
    let m = jnp::mean(&x.with_weak_type(false)).item::<f32>().unwrap();
    assert!((m as f64 - 0.1f32 as f64).abs() < 1e-7, "mean {m}");
}

// --- Errors -----------------------------------------------------------------------------------

#[test]
#[should_panic(expected = "sum: axis 2 is out of bounds for an array of rank 2")]
fn sum_axis_out_of_bounds() {
    jnp::sum_axes(&jnp::zeros([2, 3]), 2, false);
}

#[test]
#[should_panic(expected = "mean: axis -3 is out of bounds for an array of rank 2")]
fn mean_negative_axis_out_of_bounds() {
    jnp::zeros([2, 3]).mean_axes(-3, true);
}

#[test]
#[should_panic(expected = "max: repeated axis in [0, -2]")]
fn max_repeated_axis() {
    jnp::max_axes(&jnp::zeros([2, 3]), [0, -2], false);
}

#[test]
#[should_panic(expected = "var: axis 1 is out of bounds for an array of rank 1")]
fn var_axis_out_of_bounds() {
    jnp::var_ddof(&jnp::zeros([4]), 1, false, 1);
}

#[test]
#[should_panic(expected = "std: axis 3 is out of bounds for an array of rank 1")]
fn std_axis_out_of_bounds() {
    jnp::zeros([4]).std_axes(3, false);
}

#[test]
#[should_panic(expected = "prod: axis 1 is out of bounds for an array of rank 1")]
fn prod_axis_out_of_bounds() {
    jnp::prod_axes(&jnp::zeros([4]), 1, false);
}

#[test]
#[should_panic(expected = "all: axis 1 is out of bounds for an array of rank 1")]
fn all_axis_out_of_bounds() {
    jnp::all_axes(&jnp::zeros([4]), 1, false);
}

#[test]
#[should_panic(expected = "logsumexp: axis -2 is out of bounds for an array of rank 1")]
fn logsumexp_axis_out_of_bounds() {
    jnp::logsumexp_axes(&jnp::zeros([4]), -2, false);
}

#[test]
#[should_panic(expected = "argmin: axis 5 is out of bounds for an array of rank 2")]
fn argmin_axis_out_of_bounds() {
    jnp::argmin_axis(&jnp::zeros([2, 3]), 5, false);
}

#[test]
#[should_panic(expected = "argmax: attempt to get argmax of an empty array of shape (0, 3)")]
fn argmax_of_empty_array() {
    jnp::argmax(&jnp::zeros([0, 3]));
}

#[test]
#[should_panic(
    expected = "argmax: attempt to get argmax of an empty sequence: axis 1 of float32(2, 0)"
)]
fn argmax_along_empty_axis() {
    jnp::argmax_axis(&jnp::zeros([2, 0]), 1, false);
}

#[test]
#[should_panic(expected = "cumsum: axis 1 is out of bounds for an array of rank 1")]
fn cumsum_axis_out_of_bounds() {
    jnp::cumsum(&jnp::zeros([3]), Some(1));
}

#[test]
#[should_panic(expected = "softmax: axis 2 is out of bounds for an array of rank 2")]
fn softmax_axis_out_of_bounds() {
    jnp::softmax(&jnp::zeros([2, 3]), 2);
}

#[test]
#[should_panic(expected = "log_softmax: axis -3 is out of bounds for an array of rank 2")]
fn log_softmax_axis_out_of_bounds() {
    jnp::log_softmax(&jnp::zeros([2, 3]), -3);
}

#[test]
#[should_panic(
    expected = "reduce_max: axis 3 is out of bounds for an array of rank 2 (operand float32(2, 3))"
)]
fn primitive_rejects_bad_axis() {
    bind1(&Reduce { op: ReduceOp::Max, axes: vec![3] }, &[&jnp::zeros([2, 3])]);
}

#[test]
#[should_panic(expected = "reduce_min: repeated axis 1 in axes [1, 1]")]
fn primitive_rejects_repeated_axis() {
    bind1(&Reduce { op: ReduceOp::Min, axes: vec![1, 1] }, &[&jnp::zeros([2, 3])]);
}

#[test]
#[should_panic(expected = "reduce_sum: expected a numeric operand")]
fn primitive_sum_rejects_bool() {
    bind1(&Reduce { op: ReduceOp::Sum, axes: vec![0] }, &[&bools(&[1], &[true])]);
}

#[test]
#[should_panic(expected = "reduce_and: expected a bool operand, got float32(3,)")]
fn primitive_and_needs_bool() {
    bind1(&Reduce { op: ReduceOp::And, axes: vec![0] }, &[&jnp::zeros([3])]);
}

#[test]
#[should_panic(expected = "cumprod: expected a numeric operand")]
fn primitive_cumprod_rejects_bool() {
    let op = Cumulative { op: CumOp::Prod, axis: 0, reverse: false };
    bind1(&op, &[&bools(&[1], &[true])]);
}

#[test]
#[should_panic(expected = "argmax: axis 1 is out of bounds for an array of rank 1")]
fn primitive_argmax_rejects_bad_axis() {
    bind1(&ArgReduce { op: ArgOp::Max, axis: 1 }, &[&jnp::zeros([3])]);
}

// --- Properties against a naive f64 reference -------------------------------------------------

/// Folds `data` over `axes` with `f` from `init`, element by element in f64.
fn naive(
    data: &[f64],
    shape: &[usize],
    axes: &[usize],
    init: f64,
    f: impl Fn(f64, f64) -> f64,
) -> Vec<f64> {
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let mut out = vec![init; kept.iter().map(|&a| shape[a]).product()];
    for (flat, &x) in data.iter().enumerate() {
        let idx = unravel(flat, shape);
        let o = kept.iter().fold(0, |acc, &a| acc * shape[a] + idx[a]);
        out[o] = f(out[o], x);
    }
    out
}

fn axes_of(mask: u32, rank: usize) -> Vec<usize> {
    (0..rank).filter(|a| mask & (1 << a) != 0).collect()
}

fn kept_shape(shape: &[usize], axes: &[usize], keepdims: bool) -> Vec<usize> {
    let dims = shape.iter().enumerate();
    if keepdims {
        dims.map(|(a, &d)| if axes.contains(&a) { 1 } else { d }).collect()
    } else {
        dims.filter(|(a, _)| !axes.contains(a)).map(|(_, &d)| d).collect()
    }
}

/// A shape of rank up to 4 (extents up to `max_dim`, zero included), data drawn from `values`,
/// and a mask choosing the reduced axes.
fn case<S: Strategy<Value = f32> + Clone>(
    max_dim: usize,
    max_rank: usize,
    values: S,
) -> impl Strategy<Value = (Vec<usize>, Vec<f32>, u32)> {
    prop::collection::vec(0..=max_dim, 0..=max_rank).prop_flat_map(move |shape| {
        let n: usize = shape.iter().product();
        let rank = shape.len();
        (Just(shape), prop::collection::vec(values.clone(), n), 0u32..(1 << rank))
    })
}

fn to_f64(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

#[track_caller]
fn assert_near(got: &Array, want: &[f64], shape: &[usize], tol: impl Fn(usize) -> f64) {
    assert_eq!(got.shape(), shape);
    let g = got.to_vec::<f32>().unwrap();
    for (i, (&a, &b)) in g.iter().zip(want).enumerate() {
        let ok = a as f64 == b || (a as f64 - b).abs() <= tol(i);
        assert!(ok, "element {i}: got {a}, want {b}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn sums_and_means_match_naive((shape, data, mask) in case(5, 4, -10f32..10f32), keep: bool) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let out_shape = kept_shape(&shape, &axes, keep);
        let d = to_f64(&data);
        let want = naive(&d, &shape, &axes, 0.0, |a, b| a + b);
        let mags = naive(&d, &shape, &axes, 0.0, |a, b| a + b.abs());
        let n = axes.iter().map(|&a| shape[a]).product::<usize>() as f64;
        assert_near(&x.sum_axes(axes.clone(), keep), &want, &out_shape, |i| 1e-5 * mags[i] + 1e-6);
        if n > 0.0 {
            let means: Vec<f64> = want.iter().map(|s| s / n).collect();
            let tol = |i: usize| 1e-5 * mags[i] / n + 1e-6;
            assert_near(&x.mean_axes(axes.clone(), keep), &means, &out_shape, tol);
        }
    }

    #[test]
    fn products_match_naive((shape, data, mask) in case(5, 4, 0.9f32..1.1f32), keep: bool) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let want = naive(&to_f64(&data), &shape, &axes, 1.0, |a, b| a * b);
        let out_shape = kept_shape(&shape, &axes, keep);
        assert_near(&jnp::prod_axes(&x, axes.clone(), keep), &want, &out_shape, |i| 1e-4 * want[i]);
    }

    #[test]
    fn extrema_match_naive_exactly((shape, data, mask) in case(5, 4, -10f32..10f32), keep: bool) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let d = to_f64(&data);
        let out_shape = kept_shape(&shape, &axes, keep);
        if axes.iter().any(|&a| shape[a] == 0) {
            // max and min have no identity: reducing an empty axis panics, as JAX raises.
            let refuses = |f: &dyn Fn() -> Array| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
            };
            prop_assert!(refuses(&|| x.max_axes(axes.clone(), keep)));
            prop_assert!(refuses(&|| x.min_axes(axes.clone(), keep)));
            return Ok(());
        }
        let hi = naive(&d, &shape, &axes, f64::NEG_INFINITY, f64::max);
        let lo = naive(&d, &shape, &axes, f64::INFINITY, f64::min);
        assert_near(&x.max_axes(axes.clone(), keep), &hi, &out_shape, |_| 0.0);
        assert_near(&x.min_axes(axes.clone(), keep), &lo, &out_shape, |_| 0.0);
    }

    #[test]
    fn variance_matches_two_pass_naive((shape, data, mask) in case(5, 4, -10f32..10f32)) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let n = axes.iter().map(|&a| shape[a]).product::<usize>();
        prop_assume!(n > 1);
        let d = to_f64(&data);
        let sums = naive(&d, &shape, &axes, 0.0, |a, b| a + b);
        // Squared deviations, with each element's mean looked up by its kept index.
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let mut sq = vec![0.0; sums.len()];
        for (flat, &v) in d.iter().enumerate() {
            let idx = unravel(flat, &shape);
            let o = kept.iter().fold(0, |acc, &a| acc * shape[a] + idx[a]);
            sq[o] += (v - sums[o] / n as f64).powi(2);
        }
        let want: Vec<f64> = sq.iter().map(|s| s / (n - 1) as f64).collect();
        let out_shape = kept_shape(&shape, &axes, false);
        let got = jnp::var_ddof(&x, axes.clone(), false, 1);
        assert_near(&got, &want, &out_shape, |i| 1e-4 * (want[i] + 1.0));
        let stds: Vec<f64> = want.iter().map(|v| v.sqrt()).collect();
        let got = jnp::std_ddof(&x, axes, false, 1);
        assert_near(&got, &stds, &out_shape, |i| 1e-4 * (stds[i] + 1.0));
    }

    #[test]
    fn logsumexp_matches_naive((shape, data, mask) in case(5, 4, -30f32..30f32)) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let d = to_f64(&data);
        let want: Vec<f64> =
            naive(&d, &shape, &axes, 0.0, |a, b| a + b.exp()).iter().map(|s| s.ln()).collect();
        let out_shape = kept_shape(&shape, &axes, false);
        assert_near(&jnp::logsumexp_axes(&x, axes, false), &want, &out_shape, |i| {
            if want[i].is_infinite() { 0.0 } else { 1e-5 * (want[i].abs() + 1.0) }
        });
    }

    #[test]
    fn all_any_match_naive(
        (shape, data, mask) in case(4, 4, prop::sample::select(vec![0.0f32, 1.0, -2.0])),
    ) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let truth: Vec<f64> = data.iter().map(|&v| (v != 0.0) as u8 as f64).collect();
        let all = naive(&truth, &shape, &axes, 1.0, f64::min);
        let any = naive(&truth, &shape, &axes, 0.0, f64::max);
        let as_bools = |v: &[f64]| v.iter().map(|&b| b == 1.0).collect::<Vec<_>>();
        prop_assert_eq!(jnp::all_axes(&x, axes.clone(), false).to_vec::<bool>().unwrap(), as_bools(&all));
        prop_assert_eq!(jnp::any_axes(&x, axes, false).to_vec::<bool>().unwrap(), as_bools(&any));
    }

    #[test]
    fn integer_sums_match_wrapping_naive(
        (shape, data, mask) in case(5, 4, -3e9f32..3e9f32),
    ) {
        let ints: Vec<i32> = data.iter().map(|&v| v as i32).collect();
        let x = i32s(&shape, &ints);
        let axes = axes_of(mask, shape.len());
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let mut want = vec![0i32; kept.iter().map(|&a| shape[a]).product()];
        for (flat, &v) in ints.iter().enumerate() {
            let idx = unravel(flat, &shape);
            let o = kept.iter().fold(0, |acc, &a| acc * shape[a] + idx[a]);
            want[o] = want[o].wrapping_add(v);
        }
        prop_assert_eq!(jnp::sum_axes(&x, axes, false).to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn arg_reductions_match_naive(
        (shape, data, _) in case(5, 4, (-3i32..3).prop_map(|v| v as f32)),
        axis_seed: usize,
    ) {
        prop_assume!(!shape.is_empty());
        let axis = axis_seed % shape.len();
        prop_assume!(shape[axis] > 0);
        let x = f32s(&shape, &data);
        let (outer, n) = (shape[..axis].iter().product::<usize>(), shape[axis]);
        let inner = shape[axis + 1..].iter().product::<usize>();
        let (mut hi, mut lo) = (vec![0i32; outer * inner], vec![0i32; outer * inner]);
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| data[(o * n + k) * inner + i];
                for k in 1..n {
                    if at(k) > at(hi[o * inner + i] as usize) { hi[o * inner + i] = k as i32; }
                    if at(k) < at(lo[o * inner + i] as usize) { lo[o * inner + i] = k as i32; }
                }
            }
        }
        let axis = axis as isize;
        prop_assert_eq!(x.argmax_axis(axis, false).to_vec::<i32>().unwrap(), hi);
        prop_assert_eq!(x.argmin_axis(axis, false).to_vec::<i32>().unwrap(), lo);
    }

    #[test]
    fn cumsum_matches_naive((shape, data, _) in case(5, 4, -10f32..10f32), axis_seed: usize) {
        prop_assume!(!shape.is_empty());
        let axis = axis_seed % shape.len();
        let x = f32s(&shape, &data);
        let (outer, n) = (shape[..axis].iter().product::<usize>(), shape[axis]);
        let inner = shape[axis + 1..].iter().product::<usize>();
        let mut want = to_f64(&data);
        for o in 0..outer {
            for i in 0..inner {
                for k in 1..n {
                    want[(o * n + k) * inner + i] += want[(o * n + k - 1) * inner + i];
                }
            }
        }
        assert_near(&x.cumsum(Some(axis as isize)), &want, &shape, |_| 1e-4);
    }

    #[test]
    fn reductions_are_deterministic((shape, data, mask) in case(5, 4, -10f32..10f32)) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let bits = |a: Array| a.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(x.sum_axes(axes.clone(), false)), bits(x.sum_axes(axes.clone(), false)));
        prop_assert_eq!(bits(x.var_axes(axes.clone(), false)), bits(x.var_axes(axes, false)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    /// Shapes large enough to take the kernels' blocked and parallel paths.
    #[test]
    fn large_sums_match_naive((shape, data, mask) in case(70, 3, -10f32..10f32)) {
        let x = f32s(&shape, &data);
        let axes = axes_of(mask, shape.len());
        let d = to_f64(&data);
        let want = naive(&d, &shape, &axes, 0.0, |a, b| a + b);
        let mags = naive(&d, &shape, &axes, 0.0, |a, b| a + b.abs());
        let out_shape = kept_shape(&shape, &axes, false);
        assert_near(&x.sum_axes(axes.clone(), false), &want, &out_shape, |i| 1e-5 * mags[i] + 1e-6);
        // max has no identity, so only non-empty reductions have a maximum to compare.
        if axes.iter().all(|&a| shape[a] > 0) {
            let hi = naive(&d, &shape, &axes, f64::NEG_INFINITY, f64::max);
            assert_near(&x.max_axes(axes, false), &hi, &out_shape, |_| 0.0);
        }
    }
}

// --- Determinism across thread counts ---------------------------------------------------------

/// Bit patterns of `f`'s result computed in a rayon pool of `threads` threads.
fn bits_with_threads(threads: usize, f: impl Fn() -> Array + Send + Sync) -> Vec<u32> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let out = pool.install(f);
    out.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn large_reductions_do_not_depend_on_thread_count() {
    let data: Vec<f32> = (0..3_000_000).map(|i| ((i as f32) * 0.377).sin() * 3.0).collect();
    let x = f32s(&[300, 100, 100], &data);
    let runs: Vec<Box<dyn Fn() -> Array + Send + Sync>> = vec![
        Box::new(|| jnp::sum(&x)),
        Box::new(|| jnp::sum_axes(&x, 0, false)),
        Box::new(|| jnp::sum_axes(&x, [0, 2], false)),
        Box::new(|| jnp::sum_axes(&x, -1, false)),
        Box::new(|| jnp::mean_axes(&x, [1, 2], false)),
        Box::new(|| jnp::var_axes(&x, 1, false)),
        Box::new(|| jnp::logsumexp_axes(&x, 0, false)),
        Box::new(|| jnp::softmax(&x, 0)),
        Box::new(|| jnp::cumsum(&x, Some(1))),
        Box::new(|| jnp::argmax_axis(&x, 0, false).astype(DType::F32)),
    ];
    for (i, run) in runs.iter().enumerate() {
        let one = bits_with_threads(1, run);
        assert_eq!(one, bits_with_threads(2, run), "computation {i}");
        assert_eq!(one, bits_with_threads(4, run), "computation {i}");
    }
}
