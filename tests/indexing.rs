//! Indexing (`x.slice(s![..])`), functional updates (`x.at(s![..])`), `take`,
//! `take_along_axis` and `one_hot` against JAX golden cases, NumPy results (computed once with
//! NumPy 2.4 and pasted in as literals), naive loops, and bad input.

mod common;
use common::*;
use proptest::prelude::*;
use rjax::prelude::*;

#[track_caller]
fn assert_i32(a: &Array, shape: &[usize], data: &[i32]) {
    assert_eq!(a.shape(), shape, "shape of {a:?}");
    assert_eq!(a.to_vec::<i32>().unwrap(), data);
}

#[track_caller]
fn assert_f32(a: &Array, shape: &[usize], data: &[f32]) {
    assert_eq!(a.shape(), shape, "shape of {a:?}");
    assert_eq!(a.to_vec::<f32>().unwrap(), data);
}

/// `arange(24).reshape(2, 3, 4)` in int32.
fn x24() -> Array {
    jnp::arange(24).reshape([2, 3, 4])
}

// ---- golden JAX cases ----

#[test]
fn golden_out_of_bounds_indexing_clamps() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "out_of_bounds_indexing_clamps";
    let x = input(name, "x");
    assert_golden(name, 0, &x.slice(s![10]));
    // The jitted lambdas index with a traced (dynamic) integer: a 0-d index array here.
    assert_golden(name, 1, &x.slice(s![Array::from(7i32)]));
    assert_golden(name, 2, &x.slice(s![Array::from(-7i32)]));
    assert_golden(name, 3, &x.at(s![10]).set(-1.0));
    assert_golden(name, 4, &x.at(s![jnp::array([1, 9])]).add(100.0));
}

#[test]
fn golden_at_set_add_values() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "at_set_add_values";
    let x = input(name, "x");
    assert_golden(name, 0, &x.at(s![2]).set(10.0));
    assert_golden(name, 1, &x.at(s![1]).add(5.0));
    assert_golden(name, 2, &x.at(s![jnp::array([0, 0, 3])]).add(1.0));
    assert_golden(name, 3, &x.at(s![1..3]).set(jnp::array([-1.0f32, -2.0])));
    assert_golden(name, 4, &x.at(s![4]).mul(3.0));
    assert_golden(name, 5, &x.at(s![0]).max(2.5));
}

// ---- basic indexing against NumPy ----

#[test]
fn integers_and_stepped_ranges() {
    let x = x24();
    // x[1, ::2, 1:3]
    assert_i32(&x.slice(s![1, ..;2, 1..3]), &[2, 2], &[13, 14, 21, 22]);
    // x[:, ::-1, -1]
    assert_i32(&x.slice(s![.., ..;-1, -1]), &[2, 3], &[11, 7, 3, 23, 19, 15]);
    // x[..., 3:0:-2]: the range 1..4 walked backwards in steps of 2
    #[rustfmt::skip]
    let want = [3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21];
    assert_i32(&x.slice(s![..., 1..4;-2]), &[2, 3, 2], &want);
    // x[::-1, 2:0:-1]
    #[rustfmt::skip]
    let want = [20, 21, 22, 23, 16, 17, 18, 19, 8, 9, 10, 11, 4, 5, 6, 7];
    assert_i32(&x.slice(s![..;-1, 1..=2;-1]), &[2, 2, 4], &want);
    // x[1:100, -100:2, ::3]: bounds clamp like Python's
    assert_i32(&x.slice(s![1..100, -100..2, ..;3]), &[1, 2, 2], &[12, 15, 16, 19]);
}

#[test]
fn new_axes_and_ellipsis() {
    let x = x24();
    // x[None, 0, :, None, 2]
    assert_i32(&x.slice(s![NewAxis, 0, .., NewAxis, 2]), &[1, 3, 1], &[2, 6, 10]);
    assert_eq!(x.slice(s![..., NewAxis]).shape(), &[2, 3, 4, 1]);
    assert_eq!(x.slice(s![0, ...]).shape(), &[3, 4]);
    assert_eq!(x.slice(s![...]).shape(), &[2, 3, 4]);
    assert_eq!(x.slice(s![]).shape(), &[2, 3, 4]);
    // A range whose end is before its start is empty, as in Python.
    assert_eq!(x.slice(s![.., -1..1]).shape(), &[2, 0, 4]);
}

#[test]
fn whole_array_index_shares_the_buffer() {
    let x = x24();
    assert!(x.slice(s![.., ..]).shares_buffer_with(&x));
}

#[test]
fn static_integers_clamp() {
    let x = jnp::arange(5);
    assert_eq!(x.slice(s![10]).item::<i32>().unwrap(), 4);
    assert_eq!(x.slice(s![-1]).item::<i32>().unwrap(), 4);
    assert_eq!(x.slice(s![-7]).item::<i32>().unwrap(), 0);
}

// ---- advanced indexing against NumPy ----

#[test]
fn index_arrays_follow_numpy_placement() {
    let x = x24();
    let (a, b) = (jnp::array([1, 0]), jnp::array([3, 3]));
    // x[[1, 0], :, [3, 3]]: separated index arrays put their dimension first
    assert_i32(&x.slice(s![&a, .., &b]), &[2, 3], &[15, 19, 23, 3, 7, 11]);
    // x[:, [0, 2], [1, 3]]: neighbouring ones replace their axes in place
    let (c, d) = (jnp::array([0, 2]), jnp::array([1, 3]));
    assert_i32(&x.slice(s![.., &c, &d]), &[2, 2], &[1, 11, 13, 23]);
    // x[0, [[2], [0]], [1, 3]]: integers join the index arrays and broadcast with them
    let col = jnp::array([2, 0]).reshape([2, 1]);
    assert_i32(&x.slice(s![0, &col, &d]), &[2, 2], &[9, 11, 1, 3]);
    // x[1, :, [0, 2]]
    assert_i32(&x.slice(s![1, .., &c]), &[2, 3], &[12, 16, 20, 14, 18, 22]);
}

#[test]
fn index_arrays_clamp_out_of_bounds() {
    let x = x24();
    let idx = jnp::array([2i64, -1, 7]);
    let row = [8, 9, 10, 11];
    let want: Vec<i32> =
        [row; 3].concat().into_iter().chain([row.map(|v| v + 12); 3].concat()).collect();
    assert_i32(&x.slice(s![.., &idx]), &[2, 3, 4], &want);
    // Two arrays: each clamps into its own axis.
    let (i, j) = (jnp::array([5u8, 0]), jnp::array([-9i16, 9]));
    assert_i32(&x.slice(s![&i, 0, &j]), &[2], &[12, 3]);
}

#[test]
fn at_get_reads_like_slice() {
    let x = x24();
    assert_i32(&x.at(s![1, ..;-1, 0]).get(), &[3], &[20, 16, 12]);
}

// ---- functional updates against NumPy ----

#[test]
fn at_updates_match_numpy() {
    let z = jnp::zeros([3, 4]);
    // y[1:, ::2] += arange(4).reshape(2, 2)
    let v = jnp::arange(4.0).reshape([2, 2]);
    let want = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 2.0, 0.0, 3.0, 0.0];
    assert_f32(&z.at(s![1.., ..;2]).add(&v), &[3, 4], &want);
    // np.add.at(y, ([0, 0, 2], 1), 1.0): repeated indices accumulate
    let rows = jnp::array([0, 0, 2]);
    let want = [0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    assert_f32(&z.at(s![&rows, 1]).add(1.0), &[3, 4], &want);
    let w = jnp::arange(12.0).reshape([3, 4]);
    // y[:, [1, 3]] = maximum(y[:, [1, 3]], 6)
    let cols = jnp::array([1, 3]);
    let want = [0.0, 6.0, 2.0, 6.0, 4.0, 6.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
    assert_f32(&w.at(s![.., &cols]).max(6.0), &[3, 4], &want);
    // y[..., -1] *= 2
    let want = [0.0, 1.0, 2.0, 6.0, 4.0, 5.0, 6.0, 14.0, 8.0, 9.0, 10.0, 22.0];
    assert_f32(&w.at(s![..., -1]).mul(2), &[3, 4], &want);
    // y[::-1, 0] = [100, 200, 300]
    let vals = jnp::array([100.0f32, 200.0, 300.0]);
    let want = [300.0, 1.0, 2.0, 3.0, 200.0, 5.0, 6.0, 7.0, 100.0, 9.0, 10.0, 11.0];
    assert_f32(&w.at(s![..;-1, 0]).set(&vals), &[3, 4], &want);
}

#[test]
fn at_drops_out_of_bounds_updates() {
    let x = jnp::arange(5.0);
    let idx = jnp::array([0, 5, -1, -6, 2]);
    assert_f32(&x.at(s![&idx]).min(-3.0), &[5], &[-3.0, 1.0, -3.0, 3.0, -3.0]);
    assert_f32(&x.at(s![-6]).set(9.0), &[5], &[0.0, 1.0, 2.0, 3.0, 4.0]);
    let m = jnp::zeros([2, 3]);
    // One index in bounds and one out: the whole update is dropped.
    let (r, c) = (jnp::array([1, 1]), jnp::array([0, 3]));
    assert_f32(&m.at(s![&r, &c]).set(1.0), &[2, 3], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn at_converts_values_to_the_array_dtype() {
    let x = jnp::arange(3);
    let y = x.at(s![0]).set(2.7);
    assert_eq!(y.dtype(), DType::I32);
    assert_i32(&y, &[3], &[2, 1, 2]);
    let weak = Array::weak_scalar(1.0f32).reshape([1]);
    assert!(weak.at(s![0]).set(2.0).is_weak());
}

// ---- take, take_along_axis, one_hot ----

#[test]
fn take_matches_numpy_and_fills_out_of_bounds() {
    let b = jnp::arange(12).reshape([3, 4]);
    let idx = jnp::array([0, 2, 1, 1]).reshape([2, 2]);
    let want = [0, 2, 1, 1, 4, 6, 5, 5, 8, 10, 9, 9];
    assert_i32(&jnp::take(&b, &idx, Some(1)), &[3, 2, 2], &want);
    assert_i32(&b.take(jnp::array([5, -1, 0]), None), &[3], &[5, 11, 0]);
    // JAX's default mode fills: the most negative int32 here, NaN for floats.
    assert_i32(&jnp::take(&b, jnp::array([12]), None), &[1], &[i32::MIN]);
    let clamped = jnp::take_mode(&b, jnp::array([12, -13]), None, jnp::IndexMode::Clip);
    assert_i32(&clamped, &[2], &[11, 0]);
    assert_eq!(jnp::take(&b, 1, Some(0)).shape(), &[4]);
}

#[test]
fn take_along_axis_matches_numpy() {
    let c = jnp::array([3.0f32, 1.0, 2.0, 9.0, 7.0, 8.0]).reshape([2, 3]);
    // np.take_along_axis(c, np.argsort(c, axis=1), axis=1)
    let order = jnp::array([1, 2, 0, 1, 2, 0]).reshape([2, 3]);
    assert_f32(&jnp::take_along_axis(&c, &order, 1), &[2, 3], &[1.0, 2.0, 3.0, 7.0, 8.0, 9.0]);
    let pick = jnp::array([2, 0]).reshape([2, 1]);
    assert_f32(&jnp::take_along_axis(&c, &pick, -1), &[2, 1], &[2.0, 9.0]);
    let rows = jnp::array([1, 0, 1]).reshape([1, 3]);
    assert_f32(&jnp::take_along_axis(&c, &rows, 0), &[1, 3], &[9.0, 1.0, 8.0]);
    let past = jnp::take_along_axis(&c, &jnp::array([3, -1]).reshape([2, 1]), 1);
    let got = past.to_vec::<f32>().unwrap();
    assert!(got[0].is_nan());
    assert_eq!(got[1], 8.0);
}

#[test]
fn one_hot_matches_jax_nn() {
    let idx = jnp::array([0, 2, -1, 3]);
    let want = [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    assert_f32(&jnp::one_hot(&idx, 3), &[4, 3], &want);
    let batch = jnp::array([1u8, 0]).reshape([2, 1]);
    assert_f32(&jnp::one_hot(&batch, 2), &[2, 1, 2], &[0.0, 1.0, 1.0, 0.0]);
}

// ---- errors ----

#[test]
#[should_panic(
    expected = "slice: too many indices for an array of shape (2, 3) (rank 2): 3 were given"
)]
fn too_many_indices() {
    jnp::zeros([2, 3]).slice(s![0, 0, 0]);
}

#[test]
#[should_panic(expected = "at: too many indices for an array of shape (3,) (rank 1): 2 were given")]
fn too_many_indices_in_an_update() {
    jnp::zeros([3]).at(s![0, 1]).set(1.0);
}

#[test]
#[should_panic(expected = "slice: an index can only have a single ellipsis (...)")]
fn two_ellipses() {
    jnp::zeros([2, 3]).slice(s![..., 0, ...]);
}

#[test]
#[should_panic(expected = "slice: boolean mask indices are not supported")]
fn boolean_masks() {
    let x = jnp::zeros([3]);
    x.slice(s![x.gt(0.0)]);
}

#[test]
#[should_panic(expected = "slice: index arrays must hold integers, got float32")]
fn float_index_arrays() {
    jnp::zeros([3]).slice(s![jnp::zeros([2])]);
}

#[test]
#[should_panic(expected = "slice: index arrays of shapes (2,), (3,) do not broadcast together")]
fn index_arrays_that_do_not_broadcast() {
    let (a, b) = (jnp::array([0, 1]), jnp::array([0, 1, 2]));
    jnp::zeros([3, 3]).slice(s![&a, &b]);
}

#[test]
#[should_panic(expected = "slice: index 0 is out of bounds for axis 0, which has extent 0")]
fn integer_index_into_an_empty_axis() {
    jnp::zeros([0]).slice(s![0]);
}

#[test]
#[should_panic(expected = "s!: a slice step cannot be zero")]
fn zero_step() {
    jnp::zeros([3]).slice(s![..;0]);
}

#[test]
#[should_panic(expected = "s!: a step (`;`) applies only to ranges, not to Index(1)")]
fn step_on_an_integer() {
    jnp::zeros([3]).slice(s![1;2]);
}

#[test]
#[should_panic(expected = "at: cannot broadcast values of shape (3,) to the indexed shape (2,)")]
fn update_values_of_the_wrong_shape() {
    jnp::zeros([5]).at(s![1..3]).set(jnp::zeros([3]));
}

#[test]
#[should_panic(
    expected = "take_along_axis: indices of shape (2,) must have the rank of the array of shape (2, 3)"
)]
fn take_along_axis_rank_mismatch() {
    jnp::take_along_axis(&jnp::zeros([2, 3]), &jnp::array([0, 1]), 1);
}

#[test]
#[should_panic(expected = "take: axis 2 is out of bounds for an array of rank 2")]
fn take_bad_axis() {
    jnp::take(&jnp::zeros([2, 3]), jnp::array([0]), Some(2));
}

// ---- properties ----

/// One index entry for a property test.
#[derive(Clone, Debug)]
enum Entry {
    Range(Option<isize>, Option<isize>, isize),
    Int(isize),
}

fn entry() -> impl Strategy<Value = Entry> {
    let bound = prop::option::of(-7isize..8);
    let step = prop_oneof![1isize..4, -3isize..0];
    prop_oneof![
        (bound.clone(), bound, step).prop_map(|(a, b, s)| Entry::Range(a, b, s)),
        (-7isize..8).prop_map(Entry::Int),
    ]
}

/// The positions an entry selects on an axis of extent `n`, by definition: the Python range
/// with clamped bounds, walked forwards or (negative step) from its end; integers wrap once and
/// clamp. `None` marks an integer (the axis is dropped).
fn naive_positions(e: &Entry, n: usize) -> (Vec<usize>, bool) {
    let n = n as isize;
    match *e {
        Entry::Int(i) => (vec![(if i < 0 { i + n } else { i }).clamp(0, n - 1) as usize], true),
        Entry::Range(a, b, step) => {
            let bound = |v: isize| (if v < 0 { v + n } else { v }).clamp(0, n);
            let (s, t) = (a.map_or(0, bound), b.map_or(n, bound));
            let mut all: Vec<usize> = (s..t).map(|i| i as usize).collect();
            if step < 0 {
                all.reverse();
            }
            (all.into_iter().step_by(step.unsigned_abs()).collect(), false)
        }
    }
}

fn to_elem(e: &Entry, n: usize) -> SliceElem {
    match *e {
        // An integer on an empty axis has nothing to clamp to; use the whole axis instead.
        Entry::Int(_) if n == 0 => SliceElem::from(..),
        Entry::Int(i) => SliceElem::from(i),
        Entry::Range(a, b, s) => SliceElem::Range { start: a, end: b, step: s },
    }
}

fn shape_and_entries() -> impl Strategy<Value = (Vec<usize>, Vec<Entry>)> {
    prop::collection::vec(0usize..6, 1..4).prop_flat_map(|shape| {
        let k = shape.len();
        (Just(shape), prop::collection::vec(entry(), 0..=k))
    })
}

/// Every multi-index of the cartesian product of per-axis position lists, in row-major order.
fn product(lists: &[Vec<usize>]) -> Vec<Vec<usize>> {
    lists.iter().fold(vec![vec![]], |acc, list| {
        acc.iter()
            .flat_map(|pre| list.iter().map(move |&i| [pre.clone(), vec![i]].concat()))
            .collect()
    })
}

proptest! {
    #[test]
    fn slicing_agrees_with_a_naive_loop((shape, entries) in shape_and_entries()) {
        let _x64 = rjax::config::x64_scope(true);
        let n: usize = shape.iter().product();
        let data: Vec<i64> = (0..n as i64).collect();
        let x = Array::from_shape_vec(&shape, data.clone());
        let mut index = Vec::new();
        let mut lists = Vec::new();
        let mut want_shape = Vec::new();
        for (ax, &extent) in shape.iter().enumerate() {
            let e = entries.get(ax).cloned().unwrap_or(Entry::Range(None, None, 1));
            let e = if matches!(e, Entry::Int(_)) && extent == 0 { Entry::Range(None, None, 1) } else { e };
            index.push(to_elem(&e, extent));
            let (pos, dropped) = naive_positions(&e, extent);
            if !dropped {
                want_shape.push(pos.len());
            }
            lists.push(pos);
        }
        let strides: Vec<usize> = (0..shape.len()).map(|a| shape[a + 1..].iter().product()).collect();
        let want: Vec<i64> = product(&lists)
            .iter()
            .map(|idx| data[idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()])
            .collect();
        let got = x.slice(&index);
        prop_assert_eq!(got.shape(), &want_shape[..]);
        prop_assert_eq!(got.to_vec::<i64>().unwrap(), want);
    }

    #[test]
    fn gather_along_an_axis_agrees_with_a_naive_loop(
        shape in prop::collection::vec(1usize..5, 1..4),
        axis_pick in 0usize..3,
        idx in prop::collection::vec(-8i32..8, 0..6),
    ) {
        let axis = axis_pick % shape.len();
        let n: usize = shape.iter().product();
        let x = Array::from_shape_vec(&shape, (0..n as i32).collect::<Vec<_>>());
        let mut index: Vec<SliceElem> = (0..axis).map(|_| SliceElem::from(..)).collect();
        index.push(SliceElem::from(jnp::array(&idx)));
        let got = x.slice(&index);
        let extent = shape[axis] as i32;
        let clamped: Vec<usize> = idx
            .iter()
            .map(|&i| (if i < 0 { i + extent } else { i }).clamp(0, extent - 1) as usize)
            .collect();
        let mut lists: Vec<Vec<usize>> = shape.iter().map(|&e| (0..e).collect()).collect();
        lists[axis] = clamped;
        let strides: Vec<usize> = (0..shape.len()).map(|a| shape[a + 1..].iter().product()).collect();
        let want: Vec<i32> = product(&lists)
            .iter()
            .map(|m| m.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>() as i32)
            .collect();
        let mut want_shape = shape.clone();
        want_shape[axis] = idx.len();
        prop_assert_eq!(got.shape(), &want_shape[..]);
        prop_assert_eq!(got.to_vec::<i32>().unwrap(), want);
    }

    #[test]
    fn scatter_add_agrees_with_a_naive_loop(
        n in 0usize..6,
        idx in prop::collection::vec(-8i32..8, 0..8),
    ) {
        let x = Array::from_shape_vec([n], vec![0i32; n]);
        let vals: Vec<i32> = (1..=idx.len() as i32).collect();
        let got = x.at(s![jnp::array(&idx)]).add(jnp::array(&vals));
        let mut want = vec![0i32; n];
        for (&i, &v) in idx.iter().zip(&vals) {
            let i = if i < 0 { i + n as i32 } else { i };
            if (0..n as i32).contains(&i) {
                want[i as usize] += v;
            }
        }
        prop_assert_eq!(got.to_vec::<i32>().unwrap(), want);
    }
}
