//! Shape functions against JAX golden cases, against NumPy results (computed once with NumPy
//! 2.4 and pasted in as literals), against naive loops, and on bad input.

mod common;
use common::*;
use proptest::prelude::*;
use rjax::prelude::*;

#[track_caller]
fn assert_i32(a: &Array, shape: &[usize], data: &[i32]) {
    assert_eq!(a.shape(), shape, "shape of {a:?}");
    assert_eq!(a.to_vec::<i32>().unwrap(), data);
}

/// `arange(24).reshape(2, 3, 4)` in int32.
fn x24() -> Array {
    jnp::arange(24).reshape([2, 3, 4])
}

// ---- golden JAX cases ----

#[test]
fn golden_concatenate_and_stack() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "concatenate_stack_and_grad";
    let (a, b, c) = (input(name, "a"), input(name, "b"), input(name, "c"));
    assert_golden(name, 0, &jnp::concatenate(&[&a, &b], 0));
    assert_golden(name, 1, &jnp::concatenate(&[&a, &c], 1));
    assert_golden(name, 2, &jnp::stack(&[a.clone(), &a * 2], 1));
}

/// `f(x)` of the case, with the final `jnp.sum` done here in f64 (reductions live elsewhere).
#[test]
fn golden_reshape_transpose_value() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "reshape_transpose_grad";
    let (x, w) = (input(name, "x"), input(name, "W"));
    let t = jnp::transpose(&x.reshape([3, 2, 2]), Some(&[1, 2, 0]));
    let prod = &t * &w.powi(2) * x.reshape([2, 2, 3]);
    assert_eq!(prod.shape(), &[2, 2, 3]);
    let total: f64 = prod.to_vec::<f32>().unwrap().iter().map(|&v| v as f64).sum();
    assert_golden(name, 0, &Array::from(total as f32));
}

// ---- reshape family ----

#[test]
fn reshape_infers_one_extent_and_shares_the_buffer() {
    let x = jnp::arange(6);
    let y = x.reshape([2, -1]);
    assert_i32(&y, &[2, 3], &[0, 1, 2, 3, 4, 5]);
    assert!(y.shares_buffer_with(&x));
    assert_eq!(x.reshape([6]).shape(), &[6]);
    assert_eq!(x.reshape(6).shape(), &[6]);
    assert_eq!(x.reshape(vec![3usize, 2]).shape(), &[3, 2]);
    assert_eq!(jnp::reshape(&x, [-1, 1, 2]).shape(), &[3, 1, 2]);
    assert_eq!(y.reshape(x.shape()).shape(), &[6]);
    assert_eq!(Array::from(1.5f32).reshape([1, 1]).shape(), &[1, 1]);
    assert_eq!(jnp::zeros([0, 3]).reshape([-1, 6]).shape(), &[0, 6]);
}

#[test]
fn ravel_and_flatten() {
    let x = x24();
    assert_eq!(x.ravel().shape(), &[24]);
    assert_eq!(jnp::ravel(&x.t()).to_vec::<i32>().unwrap()[..4], [0, 12, 4, 16]);
    assert!(x.flatten().shares_buffer_with(&x));
}

#[test]
fn expand_dims_and_squeeze() {
    let x = jnp::zeros([2, 3]);
    assert_eq!(x.expand_dims(1).shape(), &[2, 1, 3]);
    assert_eq!(jnp::expand_dims(&x, [0, -1]).shape(), &[1, 2, 3, 1]);
    assert_eq!(jnp::expand_dims(&x, [0, 2]).shape(), &[1, 2, 1, 3]);
    let y = jnp::zeros([1, 2, 1, 3, 1]);
    assert_eq!(jnp::squeeze(&y, Axes::All).shape(), &[2, 3]);
    assert_eq!(y.squeeze([0, -1]).shape(), &[2, 1, 3]);
    assert_eq!(jnp::squeeze(&Array::from(1i32), Axes::All).shape(), &[] as &[usize]);
}

// ---- transposes ----

#[test]
fn transposes_match_numpy() {
    let x = x24();
    #[rustfmt::skip]
    let t201 = [0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23];
    assert_i32(&jnp::transpose(&x, Some(&[2, 0, 1])), &[4, 2, 3], &t201);
    assert_i32(&x.permute_dims([-1, 0, 1]), &[4, 2, 3], &t201);
    #[rustfmt::skip]
    let swapped = [0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23];
    assert_i32(&jnp::swapaxes(&x, 0, 2), &[4, 3, 2], &swapped);
    assert_i32(&x.t(), &[4, 3, 2], &swapped);
    assert_i32(&x.transpose(None), &[4, 3, 2], &swapped);
    #[rustfmt::skip]
    let moved = [0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23];
    assert_i32(&jnp::moveaxis(&x, [0, 1], [-1, 0]), &[3, 4, 2], &moved);
    assert_eq!(x.moveaxis(-1, 0).shape(), &[4, 2, 3]);
}

#[test]
fn identity_permutations_do_not_copy() {
    let x = x24();
    assert!(jnp::transpose(&x, Some(&[0, 1, 2])).shares_buffer_with(&x));
    assert!(jnp::swapaxes(&x, 1, 1).shares_buffer_with(&x));
}

#[test]
fn large_transposes_match_a_naive_loop() {
    // Big enough to run the tiled kernel in parallel, with extents that are not tile multiples.
    let (r, c) = (301, 457);
    let data: Vec<f32> = (0..r * c).map(|v| v as f32).collect();
    let x = Array::from_shape_vec([r, c], data.clone());
    let t = x.t().to_vec::<f32>().unwrap();
    for i in 0..c {
        for j in 0..r {
            assert_eq!(t[i * r + j], data[j * c + i]);
        }
    }
    let b = Array::from_shape_vec([3, r, c], [data.clone(), data.clone(), data].concat());
    let bt = b.swapaxes(1, 2);
    assert_eq!(bt.shape(), &[3, c, r]);
    assert_eq!(bt.slice(s![2]).to_vec::<f32>().unwrap(), t);
}

#[test]
fn every_permutation_of_three_axes_matches_a_naive_loop() {
    let _x64 = rjax::config::x64_scope(true);
    // Extents off the kernel's block sizes, 8-byte elements, and an axis between the two
    // that swap (perm (2, 1, 0)).
    let dims = [19usize, 13, 21];
    let x = Array::from_shape_vec(dims, (0..(19 * 13 * 21) as i64).collect());
    let data = x.to_vec::<i64>().unwrap();
    for perm in [[0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        let axes: Vec<isize> = perm.iter().map(|&a| a as isize).collect();
        let t = jnp::transpose(&x, Some(&axes)).to_vec::<i64>().unwrap();
        let out: Vec<usize> = perm.iter().map(|&a| dims[a]).collect();
        for (flat, &v) in t.iter().enumerate() {
            let idx = [flat / (out[1] * out[2]), flat / out[2] % out[1], flat % out[2]];
            let mut src = [0usize; 3];
            for (k, &a) in perm.iter().enumerate() {
                src[a] = idx[k];
            }
            assert_eq!(v, data[(src[0] * dims[1] + src[1]) * dims[2] + src[2]], "{perm:?}");
        }
    }
}

#[test]
fn large_copies_agree_with_their_definitions() {
    // Big enough for the parallel paths of the concatenate, pad and gather kernels.
    let (r, c) = (400, 300);
    let x = Array::from_shape_vec([r, c], (0..(r * c) as i32).collect());
    let parts = jnp::split(&x, [100, 250], 1);
    assert_eq!(parts[1].shape(), &[r, 150]);
    let back = jnp::concatenate(&parts, 1);
    assert_eq!(back.to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    let p = jnp::pad(&x, [(1, 2), (3, 0)], -1);
    assert_eq!(p.shape(), &[r + 3, c + 3]);
    assert_eq!(p.slice(s![1..=r as i32, 3..]).to_vec::<i32>().unwrap(), x.to_vec::<i32>().unwrap());
    assert!(p.slice(s![.., ..3]).to_vec::<i32>().unwrap().iter().all(|&v| v == -1));
    assert!(p.slice(s![-2.., ..]).to_vec::<i32>().unwrap().iter().all(|&v| v == -1));
    let reversed = jnp::array((0..r as i32).rev().collect::<Vec<_>>());
    let g = x.slice(s![&reversed]);
    assert_eq!(g.to_vec::<i32>().unwrap(), x.flip(0).to_vec::<i32>().unwrap());
}

// ---- broadcasting, joining, splitting ----

#[test]
fn broadcast_to_repeats_along_new_and_unit_axes() {
    let col = jnp::array([1, 2]).reshape([2, 1]);
    assert_i32(
        &jnp::broadcast_to(&col, [3, 2, 2]),
        &[3, 2, 2],
        &[1, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2],
    );
    assert_eq!(Array::from(1.0f32).broadcast_to([2, 3]).shape(), &[2, 3]);
    assert_eq!(col.broadcast_to([2, 0]).shape(), &[2, 0]);
}

#[test]
fn concatenate_promotes_and_accepts_owned_arrays() {
    let a = jnp::array([1i32, 2]);
    let b = jnp::array([0.5f32]);
    let c = jnp::concatenate(&[&a, &b], 0);
    assert_eq!(c.dtype(), DType::F32);
    assert_eq!(c.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 0.5]);
    let parts = vec![x24(), x24()];
    assert_eq!(jnp::concatenate(&parts, -1).shape(), &[2, 3, 8]);
    assert_eq!(jnp::concatenate(&[jnp::zeros([2, 0]), jnp::ones([2, 1])], 1).shape(), &[2, 1]);
}

#[test]
fn stack_along_the_last_axis() {
    let a = jnp::array([1, 2]);
    let b = jnp::array([3, 4]);
    assert_i32(&jnp::stack(&[&a, &b], -1), &[2, 2], &[1, 3, 2, 4]);
    assert_i32(&jnp::stack(&[&a, &b], 0), &[2, 2], &[1, 2, 3, 4]);
}

#[test]
fn split_matches_numpy() {
    let parts = jnp::split(&jnp::arange(10), [3, -2], 0);
    assert_eq!(parts.len(), 3);
    assert_i32(&parts[0], &[3], &[0, 1, 2]);
    assert_i32(&parts[1], &[5], &[3, 4, 5, 6, 7]);
    assert_i32(&parts[2], &[2], &[8, 9]);
    let parts = jnp::split(&jnp::arange(12).reshape([3, 4]), 2, 1);
    assert_i32(&parts[0], &[3, 2], &[0, 1, 4, 5, 8, 9]);
    assert_i32(&parts[1], &[3, 2], &[2, 3, 6, 7, 10, 11]);
    // Decreasing split points give empty pieces, like NumPy.
    let parts = jnp::split(&jnp::arange(4), [3, 1], 0);
    assert_eq!(parts.iter().map(Array::size).collect::<Vec<_>>(), vec![3, 0, 3]);
}

// ---- flip, tile, repeat, pad ----

#[test]
fn flip_matches_numpy() {
    #[rustfmt::skip]
    let want = [15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8];
    assert_i32(&jnp::flip(&x24(), [0, 2]), &[2, 3, 4], &want);
    let all = x24().flip(Axes::All).to_vec::<i32>().unwrap();
    assert_eq!(all, (0..24).rev().collect::<Vec<i32>>());
}

#[test]
fn tile_matches_numpy() {
    let a = jnp::arange(6).reshape([2, 3]);
    #[rustfmt::skip]
    let want = [0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5];
    assert_i32(&jnp::tile(&a, [2, 1, 2]), &[2, 2, 6], &want);
    assert_i32(&a.tile([2]), &[2, 6], &[0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]);
}

#[test]
fn repeat_matches_numpy() {
    let a = jnp::arange(6).reshape([2, 3]);
    assert_i32(&jnp::repeat(&a, 2, Some(1)), &[2, 6], &[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    #[rustfmt::skip]
    let want = [0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5];
    assert_i32(&a.repeat(3, Some(0)), &[6, 3], &want);
    assert_i32(&jnp::repeat(&a, 2, None), &[12], &[0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
}

#[test]
fn pad_matches_numpy() {
    let a = jnp::arange(6).reshape([2, 3]);
    #[rustfmt::skip]
    let want = [-1, -1, -1, -1, -1, -1, -1, -1, 0, 1, 2, -1, -1, -1, 3, 4, 5, -1];
    assert_i32(&jnp::pad(&a, [(1, 0), (2, 1)], -1), &[3, 6], &want);
    let f = jnp::pad(&jnp::ones([2]), 1usize, 0.5);
    assert_eq!(f.dtype(), DType::F32);
    assert_eq!(f.to_vec::<f32>().unwrap(), vec![0.5, 1.0, 1.0, 0.5]);
}

// ---- errors ----

#[test]
#[should_panic(
    expected = "reshape: cannot reshape an array of shape (2, 3) (6 elements) into shape (4, -1)"
)]
fn reshape_rejects_a_shape_that_does_not_divide() {
    jnp::zeros([2, 3]).reshape([4, -1]);
}

#[test]
#[should_panic(
    expected = "reshape: cannot reshape an array of shape (2, 3) (6 elements) into shape (7,)"
)]
fn reshape_rejects_a_different_size() {
    jnp::zeros([2, 3]).reshape([7]);
}

#[test]
#[should_panic(expected = "reshape: can only infer one dimension (-1), got shape (-1, -1)")]
fn reshape_rejects_two_unknown_extents() {
    jnp::zeros([2, 3]).reshape([-1, -1]);
}

#[test]
#[should_panic(expected = "squeeze: axis 3 is out of bounds for an array of rank 2")]
fn squeeze_rejects_a_bad_axis() {
    jnp::zeros([1, 3]).squeeze(3);
}

#[test]
#[should_panic(
    expected = "squeeze: cannot squeeze axis 1 of an array of shape (1, 3): its extent is 3, not 1"
)]
fn squeeze_rejects_an_axis_longer_than_one() {
    jnp::zeros([1, 3]).squeeze(1);
}

#[test]
#[should_panic(
    expected = "concatenate: arrays must have the same shape except along axis 0, got shapes (2, 2), (1, 3)"
)]
fn concatenate_rejects_mismatched_shapes() {
    jnp::concatenate(&[jnp::zeros([2, 2]), jnp::zeros([1, 3])], 0);
}

#[test]
#[should_panic(
    expected = "concatenate: all arrays must have the same rank, got shapes (2, 2), (2,)"
)]
fn concatenate_rejects_mismatched_ranks() {
    jnp::concatenate(&[jnp::zeros([2, 2]), jnp::zeros([2])], 0);
}

#[test]
#[should_panic(expected = "concatenate: axis 2 is out of bounds for an array of rank 2")]
fn concatenate_rejects_a_bad_axis() {
    jnp::concatenate(&[jnp::zeros([2, 2]), jnp::zeros([2, 2])], 2);
}

#[test]
#[should_panic(expected = "concatenate: zero-dimensional arrays cannot be concatenated")]
fn concatenate_rejects_scalars() {
    jnp::concatenate(&[Array::from(1.0f32), Array::from(2.0f32)], 0);
}

#[test]
#[should_panic(expected = "stack: all arrays must have the same shape, got shapes (2,), (3,)")]
fn stack_rejects_mismatched_shapes() {
    jnp::stack(&[jnp::zeros([2]), jnp::zeros([3])], 0);
}

#[test]
#[should_panic(expected = "transpose: repeated axis in [0, 0]")]
fn transpose_rejects_a_repeated_axis() {
    jnp::transpose(&jnp::zeros([2, 3]), Some(&[0, 0]));
}

#[test]
#[should_panic(
    expected = "permute_dims: axes [1, 0] must list each of the 3 axes of an array of shape (2, 3, 4) once"
)]
fn permute_dims_rejects_too_few_axes() {
    jnp::zeros([2, 3, 4]).permute_dims([1, 0]);
}

#[test]
#[should_panic(expected = "transpose: axis 2 is out of bounds for an array of rank 2")]
fn transpose_rejects_an_out_of_range_axis() {
    jnp::transpose(&jnp::zeros([2, 3]), Some(&[2, 0]));
}

#[test]
#[should_panic(
    expected = "moveaxis: source [0] and destination [0, 1] must name the same number of axes"
)]
fn moveaxis_rejects_mismatched_lists() {
    jnp::moveaxis(&jnp::zeros([2, 3]), 0, [0, 1]);
}

#[test]
#[should_panic(expected = "broadcast_to: cannot broadcast an array of shape (3,) to shape (2, 4)")]
fn broadcast_to_rejects_incompatible_shapes() {
    jnp::broadcast_to(&jnp::zeros([3]), [2, 4]);
}

#[test]
#[should_panic(expected = "broadcast_to: cannot broadcast an array of shape (2, 3) to shape (3,)")]
fn broadcast_to_rejects_a_lower_rank() {
    jnp::broadcast_to(&jnp::zeros([2, 3]), [3]);
}

#[test]
#[should_panic(
    expected = "split: array split does not result in an equal division: axis 0 of an array of shape (5,) has extent 5, which 2 sections cannot divide"
)]
fn split_rejects_unequal_sections() {
    jnp::split(&jnp::zeros([5]), 2, 0);
}

#[test]
#[should_panic(
    expected = "pad: expected one (before, after) pair, or one per axis of an array of shape (2, 3)"
)]
fn pad_rejects_the_wrong_number_of_widths() {
    jnp::pad(&jnp::zeros([2, 3]), [(1, 1), (1, 1), (1, 1)], 0.0);
}

#[test]
#[should_panic(expected = "expand_dims: axis 3 is out of bounds for an array of rank 3")]
fn expand_dims_rejects_a_bad_axis() {
    jnp::expand_dims(&jnp::zeros([2, 3]), 3);
}

// ---- properties ----

/// A shape of rank 1 to 4 with extents 0 to 5, and a permutation of its axes.
fn shape_and_perm() -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop::collection::vec(0usize..6, 1..5).prop_flat_map(|shape| {
        let perm = Just((0..shape.len()).collect::<Vec<usize>>()).prop_shuffle();
        (Just(shape), perm)
    })
}

fn iota_f32(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(shape, (0..n).map(|v| v as f32).collect())
}

proptest! {
    #[test]
    fn transpose_then_inverse_is_identity((shape, perm) in shape_and_perm()) {
        let x = iota_f32(&shape);
        let axes: Vec<isize> = perm.iter().map(|&p| p as isize).collect();
        let mut inverse = vec![0isize; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i as isize;
        }
        let t = x.permute_dims(&axes);
        let want: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        prop_assert_eq!(t.shape(), &want[..]);
        let back = t.permute_dims(&inverse);
        prop_assert_eq!(back.shape(), x.shape());
        prop_assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    }

    #[test]
    fn reshape_to_flat_and_back_is_identity(shape in prop::collection::vec(0usize..6, 0..5)) {
        let x = iota_f32(&shape);
        let flat = x.reshape([-1]);
        prop_assert_eq!(flat.shape(), &[x.size()]);
        let back = flat.reshape(&shape[..]);
        prop_assert_eq!(back.shape(), &shape[..]);
        prop_assert_eq!(back.to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
    }

    #[test]
    fn concatenate_then_split_gives_the_parts(
        shape in prop::collection::vec(1usize..5, 1..4),
        extents in prop::collection::vec(0usize..4, 1..4),
        axis_pick in 0usize..3,
    ) {
        let axis = axis_pick % shape.len();
        let parts: Vec<Array> = extents
            .iter()
            .enumerate()
            .map(|(k, &e)| {
                let mut s = shape.clone();
                s[axis] = e;
                &iota_f32(&s) + (100 * k) as f32
            })
            .collect();
        let joined = jnp::concatenate(&parts, axis as isize);
        let mut bounds = Vec::new();
        let mut at = 0;
        for &e in &extents[..extents.len() - 1] {
            at += e;
            bounds.push(at);
        }
        let back = jnp::split(&joined, bounds, axis as isize);
        prop_assert_eq!(back.len(), parts.len());
        for (got, want) in back.iter().zip(&parts) {
            prop_assert_eq!(got.shape(), want.shape());
            prop_assert_eq!(got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
        }
    }
}
