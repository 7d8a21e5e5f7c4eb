//! Sorting, searching and order statistics against JAX (`tests/data/sorting.json`, made by
//! `tests/data/gen/sorting.py`): `jnp::sort`/`argsort` on every axis and both orders (ties,
//! NaNs of both signs, signed zeros), `lax::top_k`, `jnp::searchsorted`, `jnp::diff`,
//! `jnp::unique_size`, `jnp::median`/`quantile`/`percentile`, eagerly and under `#[jit]`;
//! their gradients (first and second order) and `#[vmap]` forms; f64 finite-difference checks
//! of the derivative rules; nested `jnp::array`; and the errors for bad axes and `k`.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close, leaf_to_array, panic_text};
use rjax::prelude::*;
use rjax::transform::ad::api::grad_of;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/sorting.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    let c = &data()["cases"][case];
    assert!(!c.is_null(), "no golden case {case}");
    assert!(!c[key].is_null(), "no field {key} in golden case {case}");
    leaf_to_array(&c[key])
}

/// Orders move elements without arithmetic, so they must match bit for bit (signs of zeros
/// and of NaNs included).
#[track_caller]
fn check_exact(what: &str, got: &Array, want: &Array) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let g = got.astype(DType::F64).to_vec::<f64>().unwrap();
    let w = want.astype(DType::F64).to_vec::<f64>().unwrap();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let same = if b.is_nan() { a.is_nan() } else { a == b };
        assert!(
            same && a.is_sign_negative() == b.is_sign_negative(),
            "{what}: element {i} is {a}, JAX has {b}\n got {g:?}\nwant {w:?}"
        );
    }
}

/// Interpolation and gradients are arithmetic: a few ulps apart from XLA's.
#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = match want.dtype() {
        DType::F32 => (2e-6, 1e-6),
        _ => (1e-13, 1e-14),
    };
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let compared = catch_unwind(AssertUnwindSafe(|| assert_close(got, want, rtol, atol)));
    assert!(compared.is_ok(), "{what} differs from JAX");
}

/// The golden key of an axis (`none` for the flattened array).
fn axis_key(axis: Option<isize>) -> String {
    axis.map_or("none".to_string(), |a| a.to_string())
}

#[jit]
fn sort_jit(x: &Array, axis: isize, flat: bool, descending: bool) -> Array {
    let ax = if flat { None } else { Some(axis) };
    jnp::sort_axis(x, ax, descending)
}

#[jit]
fn argsort_jit(x: &Array, axis: isize, flat: bool, descending: bool) -> Array {
    let ax = if flat { None } else { Some(axis) };
    jnp::argsort_axis(x, ax, descending)
}

const SORT_CASES: [&str; 9] = [
    "sort1_float32",
    "sort1_float64",
    "sort2_float32",
    "sort2_float64",
    "sort3_float32",
    "sort3_float64",
    "sort_int32",
    "sort_uint32",
    "sort_bool",
];

#[test]
fn sort_and_argsort_match_jax_on_every_axis_in_both_orders() {
    let _x64 = rjax::config::x64_scope(true);
    let mut compared = 0;
    for case in SORT_CASES {
        let x = field(case, "x");
        let rank = x.ndim() as isize;
        let axes = std::iter::once(None).chain((-rank..rank).map(Some));
        for axis in axes {
            for desc in [false, true] {
                let key = format!("{}_{}", axis_key(axis), if desc { "desc" } else { "asc" });
                let (want, want_idx) =
                    (field(case, &format!("sort_{key}")), field(case, &format!("argsort_{key}")));
                let what = format!("{case} {key}");
                check_exact(&format!("{what} sort"), &jnp::sort_axis(&x, axis, desc), &want);
                check_exact(
                    &format!("{what} argsort"),
                    &jnp::argsort_axis(&x, axis, desc),
                    &want_idx,
                );
                let (a, flat) = (axis.unwrap_or(0), axis.is_none());
                check_exact(&format!("{what} sort jit"), &sort_jit(&x, a, flat, desc), &want);
                check_exact(
                    &format!("{what} argsort jit"),
                    &argsort_jit(&x, a, flat, desc),
                    &want_idx,
                );
                compared += 1;
            }
        }
    }
    // Axes (the flattened one included) of each case, in both orders.
    assert_eq!(compared, 2 * (2 * (3 + 5 + 7) + 5 + 5 + 3));
}

#[test]
fn sort_and_argsort_defaults_and_methods_use_the_last_axis() {
    let _x64 = rjax::config::x64_scope(true);
    let x = field("sort2_float32", "x");
    check_exact("sort", &jnp::sort(&x), &field("sort2_float32", "sort_-1_asc"));
    check_exact("x.sort()", &x.sort(), &field("sort2_float32", "sort_-1_asc"));
    check_exact("argsort", &jnp::argsort(&x), &field("sort2_float32", "argsort_-1_asc"));
    check_exact("x.argsort()", &x.argsort(), &field("sort2_float32", "argsort_-1_asc"));
}

#[jit]
fn top_k_jit(x: &Array, k: usize) -> (Array, Array) {
    lax::top_k(x, k)
}

#[test]
fn top_k_matches_jax_with_nans_ties_and_signed_zeros() {
    let _x64 = rjax::config::x64_scope(true);
    for case in ["top_k_float32", "top_k_float64"] {
        let x = field(case, "x");
        for k in [0, 1, 5, 12] {
            let (want_v, want_i) =
                (field(case, &format!("values_{k}")), field(case, &format!("indices_{k}")));
            let (v, i) = lax::top_k(&x, k);
            check_exact(&format!("{case} k={k} values"), &v, &want_v);
            check_exact(&format!("{case} k={k} indices"), &i, &want_i);
            let (v, i) = top_k_jit(&x, k);
            check_exact(&format!("{case} k={k} values jit"), &v, &want_v);
            check_exact(&format!("{case} k={k} indices jit"), &i, &want_i);
        }
        let (v, i) = lax::top_k_axis(&x, 2, 0);
        check_exact(&format!("{case} axis 0 values"), &v, &field(case, "values_axis0"));
        check_exact(&format!("{case} axis 0 indices"), &i, &field(case, "indices_axis0"));
    }
    let (v, i) = lax::top_k(&field("top_k_int32", "x"), 3);
    check_exact("top_k int32 values", &v, &field("top_k_int32", "values_3"));
    check_exact("top_k int32 indices", &i, &field("top_k_int32", "indices_3"));
}

#[jit]
fn searchsorted_both_jit(a: &Array, v: &Array) -> (Array, Array) {
    (jnp::searchsorted(a, v), jnp::searchsorted_side(a, v, jnp::Side::Right))
}

#[test]
fn searchsorted_matches_jax_on_both_sides_with_nans() {
    let _x64 = rjax::config::x64_scope(true);
    for case in ["searchsorted_float32", "searchsorted_float64", "searchsorted_mixed"] {
        let (a, v) = (field(case, "a"), field(case, "v"));
        let (left, right) = (field(case, "left"), field(case, "right"));
        check_exact(&format!("{case} left"), &jnp::searchsorted(&a, &v), &left);
        check_exact(
            &format!("{case} right"),
            &jnp::searchsorted_side(&a, &v, jnp::Side::Right),
            &right,
        );
        let (l, r) = searchsorted_both_jit(&a, &v);
        check_exact(&format!("{case} left jit"), &l, &left);
        check_exact(&format!("{case} right jit"), &r, &right);
    }
    for case in ["searchsorted_float32", "searchsorted_float64"] {
        // JAX's binary search on unsorted rows, step for step.
        let (u, v) = (field(case, "unsorted"), field(case, "v"));
        check_exact(
            &format!("{case} unsorted"),
            &jnp::searchsorted(&u, &v),
            &field(case, "unsorted_left"),
        );
        let right = jnp::searchsorted_side(&u, &v, jnp::Side::Right);
        check_exact(&format!("{case} unsorted right"), &right, &field(case, "unsorted_right"));
        let empty = field(case, "a").slice(s![..0]);
        check_exact(
            &format!("{case} empty"),
            &jnp::searchsorted(&empty, &v),
            &field(case, "empty"),
        );
    }
}

#[jit]
fn diff_jit(x: &Array, n: usize, axis: isize) -> Array {
    jnp::diff(x, n, axis)
}

#[test]
fn diff_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let cases: [(&str, &str, usize, isize); 11] = [
        ("diff_float32", "n1_last", 1, -1),
        ("diff_float32", "n2_axis0", 2, 0),
        ("diff_float32", "n3_axis1", 3, 1),
        ("diff_float32", "n5_last", 5, -1),
        ("diff_float64", "n1_last", 1, -1),
        ("diff_float64", "n3_axis1", 3, 1),
        ("diff_bool", "n1_last", 1, -1),
        ("diff_bool", "n2_axis0", 1, 0),
        ("diff_uint32", "n2_last", 2, -1),
        ("diff_int32", "n1_last", 1, -1),
        ("diff_int32", "n1_axis0", 1, 0),
    ];
    for (case, key, n, axis) in cases {
        let (x, want) = (field(case, "x"), field(case, key));
        check(&format!("{case} {key}"), &jnp::diff(&x, n, axis), &want);
        check(&format!("{case} {key} jit"), &diff_jit(&x, n, axis), &want);
    }
    let x = field("diff_int32", "x");
    check_exact("diff n=0", &jnp::diff(&x, 0, -1), &x);
}

#[jit]
fn unique_jit(x: &Array, size: usize) -> Array {
    jnp::unique_size(x, size)
}

#[jit]
fn unique_fill_jit(x: &Array, size: usize, fill: f32) -> Array {
    jnp::unique_size_fill(x, size, fill)
}

#[test]
fn unique_with_a_static_size_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let case = format!("unique_{dt}");
        let x = field(&case, "x");
        for (key, size) in [("size8", 8), ("size2", 2), ("size0", 0)] {
            let want = field(&case, key);
            check_exact(&format!("{case} {key}"), &jnp::unique_size(&x, size), &want);
            check_exact(&format!("{case} {key} jit"), &unique_jit(&x, size), &want);
        }
        let want = field(&case, "size8_fill");
        check_exact(&format!("{case} fill"), &jnp::unique_size_fill(&x, 8, -1.5), &want);
        if dt == "float32" {
            check_exact(&format!("{case} fill jit"), &unique_fill_jit(&x, 8, -1.5), &want);
        }
    }
    let x = field("unique_int32", "x");
    check_exact("unique int32", &jnp::unique_size(&x, 9), &field("unique_int32", "size9"));
    let filled = jnp::unique_size_fill(&x, 9, 100);
    check_exact("unique int32 fill", &filled, &field("unique_int32", "size9_fill"));
    check_exact("unique eager", &jnp::unique(&x), &field("unique_int32", "all"));
}

/// One order statistic eagerly and under `#[jit]`.
struct Stat {
    eager: fn(&Array) -> Array,
    jit: fn(&Array) -> Array,
}

macro_rules! stats {
    ($($name:ident: |$x:ident| $body:expr;)*) => {
        $(
            mod $name {
                use rjax::prelude::*;

                #[allow(dead_code)]
                #[traceable]
                fn q(x: &Array) -> Array {
                    jnp::array([0.0, 0.25, 0.5, 0.9, 1.0]).astype(x.dtype())
                }

                #[allow(dead_code)]
                #[traceable]
                fn p(x: &Array) -> Array {
                    jnp::array([5.0, 50.0, 99.0]).astype(x.dtype())
                }

                pub fn eager($x: &Array) -> Array { $body }

                #[jit]
                pub fn jit($x: &Array) -> Array { $body }
            }
        )*

        fn stats() -> Vec<(&'static str, Stat)> {
            vec![$((stringify!($name), Stat { eager: $name::eager, jit: $name::jit })),*]
        }
    };
}

stats! {
    median_all: |x| jnp::median(x);
    median_axis0: |x| jnp::median_axes(x, 0, false);
    median_axis1_keep: |x| jnp::median_axes(x, 1, true);
    median_all_keep: |x| jnp::median_axes(x, Axes::All, true);
    quantile_scalar: |x| jnp::quantile(x, 0.3);
    quantile_axis1: |x| jnp::quantile_axes(x, 0.3, 1, false);
    quantile_vec_axis0: |x| jnp::quantile_axes(x, q(x), 0, false);
    quantile_vec_axis1_keep: |x| jnp::quantile_axes(x, q(x), 1, true);
    quantile_vec_all: |x| jnp::quantile(x, q(x));
    percentile_vec_last: |x| jnp::percentile_axes(x, p(x), -1, false);
    percentile_scalar_axis0_keep: |x| jnp::percentile_axes(x, 37.5, 0, true);
    median_axes02: |x| jnp::median_axes(x, [0, 2], false);
    median_axes02_keep: |x| jnp::median_axes(x, [0, 2], true);
    quantile_vec_axes12: |x| jnp::quantile_axes(x, q(x), [1, 2], false);
    quantile_vec_axes20_keep: |x| jnp::quantile_axes(x, q(x), [2, 0], true);
}

/// The golden cases that hold statistic `name`.
fn stat_cases(name: &str) -> Vec<String> {
    let labels: &[&str] = if name.contains("axes") {
        &["stats3"]
    } else {
        &["stats_smooth", "stats_ties", "stats_nan"]
    };
    labels.iter().flat_map(|l| ["float32", "float64"].map(|dt| format!("{l}_{dt}"))).collect()
}

#[test]
fn median_quantile_and_percentile_match_jax_with_gradients() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, f) in stats() {
        for case in stat_cases(name) {
            let x = field(&case, "x");
            check(&format!("{case} {name}"), &(f.eager)(&x), &field(&case, name));
            check(&format!("{case} {name} jit"), &(f.jit)(&x), &field(&case, name));
            if case.starts_with("stats_nan") {
                continue;
            }
            let w = field(&case, &format!("{name}_weights"));
            let g = grad_of(|x| ((f.eager)(x) * &w).sum(), &x);
            check(&format!("{case} {name} grad"), &g, &field(&case, &format!("{name}_grad")));
        }
    }
    let x = field("stats_int32", "x");
    check("int median", &jnp::median(&x), &field("stats_int32", "median_all"));
    let m = jnp::median_axes(&x, 1, false);
    check("int median axis 1", &m, &field("stats_int32", "median_axis1"));
    let p = jnp::percentile_axes(&x, 40, 0, false);
    check("int percentile", &p, &field("stats_int32", "percentile_axis0"));
    for dt in ["float32", "float64"] {
        let case = format!("quantile_q_grad_{dt}");
        let (x, q) = (field(&case, "x"), field(&case, "q"));
        let g = grad_of(|q| jnp::quantile_axes(&x, q, 1, false).sum(), &q);
        check(&format!("{case} d/dq"), &g, &field(&case, "grad_q"));
    }
}

#[test]
fn gradients_of_sort_top_k_diff_and_unique_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for case in
        ["grad_smooth_float32", "grad_smooth_float64", "grad_ties_float32", "grad_ties_float64"]
    {
        let x = field(case, "x");
        let (w, wk, wk0) = (field(case, "w"), field(case, "wk"), field(case, "wk0"));
        let grad = |f: &dyn Fn(&Array) -> Array| grad_of(|x| f(x).sum(), &x);
        let got = [
            ("sort_last", grad(&|x| jnp::sort(x) * &w)),
            ("sort_axis0_desc", grad(&|x| jnp::sort_axis(x, Some(0), true) * &w)),
            ("sort_flat", grad(&|x| jnp::sort_axis(x, None, false) * w.ravel())),
            ("top_k", grad(&|x| lax::top_k(x, 3).0 * &wk)),
            ("top_k_axis0", grad(&|x| lax::top_k_axis(x, 2, 0).0 * &wk0)),
            ("diff_grad", grad(&|x| jnp::diff(x, 2, -1).square())),
            ("unique_grad", grad(&|x| jnp::unique_size(x, 6) * jnp::arange(6.0).astype(x.dtype()))),
        ];
        for (key, g) in got {
            check(&format!("{case} {key}"), &g, &field(case, key));
        }
        let cubed = |v: &Array| (jnp::sort_axis(v, Some(0), false).powi(3) * &w).sum();
        let g2 = grad_of(|x| grad_of(cubed, x).sum(), &x);
        check(&format!("{case} second order"), &g2, &field(case, "sort_cubed_grad2"));
    }
}

#[jit]
#[grad]
fn median_grad_jit(x: &Array) -> Array {
    jnp::median(x)
}

#[jit]
#[grad]
fn top_k_grad_jit(x: &Array, w: &Array) -> Array {
    let (values, _indices) = lax::top_k(x, 3);
    (values * w).sum()
}

#[test]
fn annotated_gradients_under_jit_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for case in ["stats_ties_float32", "stats_smooth_float64"] {
        let x = field(case, "x");
        let g = median_grad_jit(&x);
        // The golden weights of the 0-d median are the single weight -1.5.
        let want = field(case, "median_all_grad") / -1.5;
        check(&format!("{case} #[jit] #[grad] median"), &g, &want);
    }
    let case = "grad_ties_float64";
    let g = top_k_grad_jit(&field(case, "x"), &field(case, "wk"));
    check("#[jit] #[grad] top_k", &g, &field(case, "top_k"));
}

#[vmap(in_axes = 1)]
fn vmap_sort(r: &Array) -> Array {
    jnp::sort(r)
}

#[vmap(in_axes = 1)]
fn vmap_argsort_desc(r: &Array) -> Array {
    jnp::argsort_axis(r, Some(-1), true)
}

#[vmap(in_axes = 1)]
fn vmap_top_k(r: &Array) -> (Array, Array) {
    lax::top_k(r, 2)
}

#[vmap(in_axes = 1)]
fn vmap_median(r: &Array) -> Array {
    jnp::median(r)
}

#[vmap(in_axes = (None, 0))]
fn vmap_quantile_q(x: &Array, q: &Array) -> Array {
    jnp::quantile_axes(x, q, 0, false)
}

#[vmap(in_axes = (0, 0))]
fn vmap_searchsorted_both(a: &Array, v: &Array) -> Array {
    jnp::searchsorted(a, v)
}

#[vmap(in_axes = (0, None))]
fn vmap_searchsorted_a(a: &Array, v: &Array) -> Array {
    jnp::searchsorted(a, v)
}

#[vmap(in_axes = (None, 1))]
fn vmap_searchsorted_v(a: &Array, v: &Array) -> Array {
    jnp::searchsorted_side(a, v, jnp::Side::Right)
}

#[vmap(in_axes = 1)]
fn vmap_unique(r: &Array) -> Array {
    jnp::unique_size_fill(r, 4, 9.0)
}

#[vmap(in_axes = 1)]
fn vmap_diff(r: &Array) -> Array {
    jnp::diff(r, 2, -1)
}

#[vmap(in_axes = 1)]
#[grad]
fn vmap_grad_median(r: &Array) -> Array {
    jnp::median(r)
}

#[vmap(in_axes = 1)]
#[grad]
fn vmap_grad_sort(r: &Array) -> Array {
    let n = r.shape()[0];
    (jnp::sort(r) * jnp::arange(n as i32).astype(r.dtype())).sum()
}

#[jit]
#[vmap(in_axes = 1)]
fn jit_vmap_sort(r: &Array) -> Array {
    jnp::sort(r)
}

#[test]
fn vmapped_forms_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let case = format!("vmap_{dt}");
        let (x, xt, rows) = (field(&case, "x"), field(&case, "xt"), field(&case, "sorted_rows"));
        let c = |key: &str, got: &Array| check(&format!("{case} {key}"), got, &field(&case, key));
        c("sort", &vmap_sort(&x));
        c("sort", &jit_vmap_sort(&x));
        c("argsort_desc", &vmap_argsort_desc(&xt));
        let (v, i) = vmap_top_k(&xt);
        c("top_k_values", &v);
        c("top_k_indices", &i);
        c("median", &vmap_median(&xt));
        let q = jnp::array([0.2, 0.5, 0.7]).astype(xt.dtype());
        c("quantile_q", &vmap_quantile_q(&xt, &q));
        c("searchsorted_both", &vmap_searchsorted_both(&rows, &x.t().slice(s![.., ..2])));
        let v = jnp::array([0.0, 1.0]).astype(xt.dtype());
        c("searchsorted_a", &vmap_searchsorted_a(&rows, &v));
        c("searchsorted_v", &vmap_searchsorted_v(&rows.slice(s![0]), &x));
        c("unique", &vmap_unique(&xt));
        c("diff", &vmap_diff(&xt));
        c("grad_median", &vmap_grad_median(&xt));
        c("grad_sort", &vmap_grad_sort(&xt));
    }
}

/// Sort, argsort and top_k of one example along `axis`.
#[traceable]
fn orders(r: &Array, axis: isize) -> (Array, Array, Array, Array) {
    let (v, i) = lax::top_k_axis(r, 1, axis);
    (jnp::sort_axis(r, Some(axis), false), jnp::argsort_axis(r, Some(axis), true), v, i)
}

macro_rules! mapped_orders {
    ($($name:ident: $in_axis:literal, $axis:literal;)*) => {
        $(
            #[vmap(in_axes = $in_axis)]
            fn $name(r: &Array) -> (Array, Array, Array, Array) {
                orders(r, $axis)
            }
        )*
        fn mapped_cases() -> Vec<(usize, isize, fn(&Array) -> (Array, Array, Array, Array))> {
            vec![$(($in_axis, $axis, $name)),*]
        }
    };
}

mapped_orders! {
    orders_0_last: 0, -1;
    orders_0_first: 0, -2;
    orders_1_last: 1, -1;
    orders_1_first: 1, -2;
    orders_2_last: 2, -1;
    orders_2_first: 2, -2;
}

/// vmap along any axis of a rank-3 array equals the loop over that axis, for sort along
/// either per-example axis, descending argsort and top_k.
#[test]
fn vmap_agrees_with_a_loop_over_examples() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([
        [[0.5f32, -1.0, 2.0, 0.5], [3.0, f32::NAN, -0.0, 0.0], [1.0, 1.0, -2.0, 4.0]],
        [[2.0, 2.0, -1.0, 0.0], [-3.0, 5.0, 0.25, 0.25], [f32::NAN, 1.0, 0.0, -0.0]],
    ]);
    for (in_axis, axis, mapped) in mapped_cases() {
        let mapped = mapped(&x);
        let n = x.shape()[in_axis];
        let looped: Vec<_> =
            (0..n).map(|k| orders(&x.take(k as i32, Some(in_axis as isize)), axis)).collect();
        type Four = (Array, Array, Array, Array);
        let stack = |get: &dyn Fn(&Four) -> Array| {
            jnp::stack(&looped.iter().map(get).collect::<Vec<_>>(), 0)
        };
        let what = format!("in_axis {in_axis} axis {axis}");
        check_exact(&format!("{what} sort"), &mapped.0, &stack(&|t| t.0.clone()));
        check_exact(&format!("{what} argsort"), &mapped.1, &stack(&|t| t.1.clone()));
        check_exact(&format!("{what} top_k values"), &mapped.2, &stack(&|t| t.2.clone()));
        check_exact(&format!("{what} top_k indices"), &mapped.3, &stack(&|t| t.3.clone()));
    }
}

#[test]
fn derivative_rules_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    // Distinct values, so the sorting permutation is fixed near the point.
    let x = jnp::array([[0.31, -1.2, 2.2, 0.74, -0.45], [1.1, 0.93, -2.5, 0.2, 1.7]]);
    let w = jnp::array([[0.5, -1.5, 2.0, 1.0, -0.25], [1.5, 0.75, -1.0, 2.5, 0.1]]);
    check_grads("sort", &|x: &Array| jnp::sort(x) * &w, &x, 1e-6);
    check_grads("sort cubed", &|x: &Array| jnp::sort_axis(x, Some(0), true).powi(3), &x, 1e-6);
    check_grads("sort flat", &|x: &Array| jnp::sort_axis(x, None, false).square(), &x, 1e-6);
    check_grads("top_k", &|x: &Array| lax::top_k(x, 3).0.powi(2), &x, 1e-6);
    check_grads("top_k axis 0", &|x: &Array| lax::top_k_axis(x, 1, 0).0.exp(), &x, 1e-6);
    check_grads("median", &|x: &Array| jnp::median_axes(x, 1, false).powi(2), &x, 1e-6);
    check_grads("median all", &|x: &Array| jnp::median(x).exp(), &x, 1e-6);
    let q = jnp::array([0.1, 0.35, 0.8]);
    check_grads("quantile", &|x: &Array| jnp::quantile_axes(x, &q, 1, false).powi(2), &x, 1e-6);
    check_grads(
        "quantile in q",
        &|q: &Array| jnp::quantile_axes(&x, q, 1, false).powi(2),
        &q,
        1e-6,
    );
    check_grads("percentile", &|x: &Array| jnp::percentile_axes(x, 30.0, [0, 1], true), &x, 1e-6);
    check_grads("diff", &|x: &Array| jnp::diff(x, 2, -1).powi(2), &x, 1e-6);
    check_grads("unique", &|x: &Array| jnp::unique_size(x, 7).powi(2), &x, 1e-6);
}

#[traceable]
fn shifted(x: &Array) -> Array {
    x + jnp::array([[1.0f32, 2.0], [3.0, 4.0]])
}

#[jit]
fn nested_constant_jit(x: &Array) -> Array {
    shifted(x) * jnp::array([[[2.0f32], [3.0]]]).reshape([2, 1])
}

#[grad]
fn nested_constant_grad(x: &Array) -> Array {
    (x * jnp::array([[1.0f32, 2.0], [3.0, 4.0]])).sum()
}

#[test]
fn nested_rust_arrays_give_their_shape_in_every_element_type() {
    let _x64 = rjax::config::x64_scope(true);
    let m = jnp::array([[1.0f32, 2.0], [3.0, 4.0]]);
    assert_eq!((m.shape(), m.dtype()), (&[2, 2][..], DType::F32));
    assert_eq!(m.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
    let i = jnp::array([[[1, 2, 3]], [[4, 5, 6]]]);
    assert_eq!((i.shape(), i.dtype()), (&[2, 1, 3][..], DType::I32));
    assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4, 5, 6]);
    let b = jnp::array([[[[true, false]], [[false, true]]]]);
    assert_eq!((b.shape(), b.dtype()), (&[1, 2, 1, 2][..], DType::Bool));
    let nested = [[1.5f64], [2.5]];
    // The borrowed form has its own impl, which this checks.
    #[allow(clippy::needless_borrows_for_generic_args)]
    let d = jnp::array(&nested);
    assert_eq!((d.shape(), d.dtype()), (&[2, 1][..], DType::F64));
    assert_eq!(d.to_vec::<f64>().unwrap(), nested.as_flattened());
    let u = jnp::array(vec![[1u32, 2], [3, 4], [5, 6]]);
    assert_eq!((u.shape(), u.dtype()), (&[3, 2][..], DType::U32));
    let rows: &[[i64; 2]] = &[[7, 8]];
    assert_eq!(jnp::array(rows).shape(), &[1, 2]);
    assert_eq!(jnp::array(vec![[[0u8; 3]; 2]; 4]).shape(), &[4, 2, 3]);
    let empty: [[f32; 0]; 3] = [[]; 3];
    assert_eq!(jnp::array(empty).shape(), &[3, 0]);
    // Inside traced functions the nested arrays are constants.
    let x = jnp::array([[1.0f32, 1.0], [1.0, 1.0]]);
    assert_eq!(nested_constant_jit(&x).to_vec::<f32>().unwrap(), vec![4.0, 6.0, 12.0, 15.0]);
    assert_eq!(nested_constant_grad(&x).to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn bad_axes_k_and_shapes_are_refused_with_the_operation_and_shape() {
    let x = jnp::zeros([2, 3]);
    let expect = |f: &dyn Fn(), words: &[&str]| {
        let text = panic_text(f);
        for w in words {
            assert!(text.contains(w), "missing {w:?} in: {text}");
        }
    };
    expect(&|| drop(jnp::sort_axis(&x, Some(2), false)), &["sort", "axis 2", "(2, 3)"]);
    expect(&|| drop(jnp::argsort_axis(&x, Some(-3), true)), &["argsort", "axis -3", "(2, 3)"]);
    expect(&|| drop(jnp::sort(&Array::from(1.0f32))), &["sort", "()"]);
    expect(&|| drop(lax::top_k(&x, 4)), &["top_k", "k = 4", "float32(2, 3)"]);
    expect(&|| drop(lax::top_k_axis(&x, 1, 5)), &["top_k", "axis 5", "(2, 3)"]);
    expect(&|| drop(lax::top_k(&Array::from(1.0f32), 1)), &["top_k", "at least one axis"]);
    expect(&|| drop(jnp::searchsorted(&x, 1.0)), &["searchsorted", "1-D", "(2, 3)"]);
    expect(&|| drop(jnp::diff(&x, 1, 2)), &["diff", "axis 2", "(2, 3)"]);
    expect(&|| drop(jnp::diff(&Array::from(1.0f32), 1, 0)), &["diff", "at least one axis"]);
    expect(&|| drop(jnp::median_axes(&x, 3, false)), &["median", "axis 3", "(2, 3)"]);
    expect(&|| drop(jnp::quantile_axes(&x, 0.5, [0, 0], false)), &["quantile", "repeated axis"]);
    expect(&|| drop(jnp::quantile(&x, jnp::zeros([2, 2]))), &["quantile", "q must be", "(2, 2)"]);
    expect(&|| drop(jnp::unique_size(&jnp::zeros([0]), 3)), &["unique", "fill_value"]);
    let lexsort = jnp::zeros([3]);
    expect(&|| drop(lax::sort(&[&x, &lexsort], 0, 1)), &["sort", "equal shapes", "float32(2, 3)"]);
    expect(&|| drop(lax::sort(&[&x], 0, 2)), &["sort", "num_keys"]);
}

#[jit]
fn unique_without_size(x: &Array) -> Array {
    jnp::unique(x)
}

#[jit]
fn top_k_traced(x: &Array, k: usize) -> Array {
    lax::top_k(x, k).0
}

#[test]
fn traced_misuse_names_the_fix_and_the_line() {
    let text = panic_text(|| drop(unique_without_size(&jnp::zeros([3]))));
    assert!(text.contains("unique") && text.contains("unique_size"), "{text}");
    let text = panic_text(|| drop(top_k_traced(&jnp::zeros([2, 3]), 7)));
    assert!(text.contains("top_k") && text.contains("k = 7"), "{text}");
    assert!(text.contains("sorting.rs"), "the message names the user's line: {text}");
}
