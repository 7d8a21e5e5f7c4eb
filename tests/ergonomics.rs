//! What annotated functions accept beyond the basics: Rust floats inside the residuals and
//! cotangents of `custom_vjp`, type aliases as declared types, tail `.collect()` and
//! `tree::unflatten` inferred from the signature, slice steps of any integer type,
//! `tree::map_n` over any number of trees, string-keyed maps as pytrees, and annotated
//! functions called across modules and used as values.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{assert_close, panic_text};
use rjax::prelude::*;

fn vals(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

// ---- custom_vjp: scalars inside tuples, as residuals and as cotangents ----

/// `s * sin(x)`, differentiated by hand.
#[custom_vjp(fwd = scaled_sin_fwd, bwd = scaled_sin_bwd)]
fn scaled_sin(x: &Array, s: f32) -> Array {
    x.sin() * s
}

#[traceable]
fn scaled_sin_fwd(x: &Array, s: f32) -> (Array, (Array, f32, Array)) {
    (x.sin() * s, (x.cos(), s, x.sin()))
}

/// The residuals hold the scalar `s`; the cotangent of `s` is a scalar too.
#[traceable]
fn scaled_sin_bwd(res: (Array, f32, Array), g: Array) -> (Array, f32) {
    let (cos_x, s, sin_x) = res;
    (cos_x * &g * s, (g * sin_x).sum())
}

#[grad(argnums = (0, 1))]
fn grad_scaled_sin(x: &Array, s: f32) -> (Array, f32) {
    scaled_sin(x, s).sum()
}

#[test]
fn custom_vjp_residuals_and_cotangents_may_hold_scalars() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([0.5f32, -1.0, 2.0]);
    let (dx, ds) = grad_scaled_sin(&x, 3.0);
    assert_close(&dx, &(x.cos() * 3.0), 1e-6, 1e-6);
    assert!((ds - x.sin().sum().item::<f32>().unwrap()).abs() < 1e-5, "{ds}");
    // The passes still run eagerly, with Rust scalars in and out.
    let (out, (cos_x, s, _)) = scaled_sin_fwd(&x, 2.0);
    assert_close(&out, &(x.sin() * 2.0), 1e-6, 0.0);
    assert_close(&cos_x, &x.cos(), 0.0, 0.0);
    assert_eq!(s, 2.0);
    let (gx, gs) = scaled_sin_bwd((x.cos(), 2.0, x.sin()), jnp::ones([3]));
    assert_close(&gx, &(x.cos() * 2.0), 1e-6, 0.0);
    assert!((gs - x.sin().sum().item::<f32>().unwrap()).abs() < 1e-5);
}

/// A function of an array and a scalar whose `bwd` gives the scalar no gradient.
#[custom_vjp(fwd = offset_fwd, bwd = offset_bwd)]
fn offset(x: &Array, b: f32) -> Array {
    x + b
}

#[traceable]
fn offset_fwd(x: &Array, b: f32) -> (Array, ()) {
    (x + b, ())
}

#[traceable]
fn offset_bwd(_res: (), g: Array) -> (Array, Option<f32>) {
    (g, None)
}

#[grad(argnums = (0, 1))]
fn grad_offset(x: &Array, b: f32) -> (Array, f32) {
    (offset(x, b) * x).sum()
}

#[test]
fn a_scalar_cotangent_may_be_none() {
    let x = jnp::array([1.0f32, 2.0]);
    let (dx, db) = grad_offset(&x, 0.5);
    // d/dx sum((x + b) * x) with the custom rule passing g = x through for the inner call.
    assert_eq!(vals(&dx), vec![1.0 + 1.5, 2.0 + 2.5]);
    assert_eq!(db, 0.0);
}

/// A primal output holding a scalar: its cotangent is `(Array, f32)`.
#[custom_vjp(fwd = with_total_fwd, bwd = with_total_bwd)]
fn with_total(x: &Array) -> (Array, f32) {
    (x * 2.0, x.sum())
}

#[traceable]
fn with_total_fwd(x: &Array) -> ((Array, f32), Array) {
    ((x * 2.0, x.sum()), jnp::ones_like(x))
}

#[traceable]
fn with_total_bwd(ones: Array, ct: (Array, f32)) -> Array {
    let (g, total) = ct;
    g * 2.0 + ones * total
}

#[grad]
fn grad_with_total(x: &Array) -> Array {
    let (doubled, total) = with_total(x);
    doubled.sum() + total * 3.0
}

#[test]
fn a_cotangent_may_hold_scalars() {
    let x = jnp::array([1.0f32, -2.0, 4.0]);
    assert_eq!(vals(&grad_with_total(&x)), vec![5.0, 5.0, 5.0]);
}

// ---- type aliases as declared types ----

type Params = Vec<Array>;

#[grad]
fn grad_params(p: &Params, x: &Array) -> Params {
    (p[0].clone() * x + &p[1]).square().sum()
}

/// The parameter is a slice, the gradient declared through the alias of its owned type.
#[grad]
fn grad_slice_as_alias(p: &[Array], x: &Array) -> Params {
    (p[0].clone() * x).sum()
}

#[jit]
fn doubled_params(p: &Params) -> Params {
    p.iter().map(|a| a * 2.0).collect()
}

#[test]
fn a_type_alias_may_be_the_declared_type() {
    let (w, b, x) = (jnp::array([2.0f32]), jnp::array([1.0f32]), jnp::array([3.0f32]));
    let g = grad_params(&vec![w.clone(), b.clone()], &x);
    // d/dw (w x + b)^2 = 2 (w x + b) x, d/db = 2 (w x + b).
    assert_eq!(vals(&g[0]), vec![42.0]);
    assert_eq!(vals(&g[1]), vec![14.0]);
    let g = grad_slice_as_alias(std::slice::from_ref(&w), &x);
    assert_eq!(vals(&g[0]), vec![3.0]);
    assert_eq!(vals(&doubled_params(&vec![w, b])[1]), vec![2.0]);
}

// ---- a tail `.collect()` / `tree::unflatten` infers from the signature ----

#[vmap]
fn multiples(x: &Array) -> Vec<Array> {
    (1..=3).map(|k: i32| x * k as f32).collect()
}

#[jit]
fn rebuilt(p: &[(Array, Array)]) -> Vec<(Array, Array)> {
    let (leaves, def) = tree::flatten(p);
    tree::unflatten(&def, leaves.iter().map(|l| l + 1.0))
}

#[test]
fn tail_collect_and_unflatten_infer_from_the_signature() {
    let x = jnp::array([1.0f32, 2.0]);
    let m = multiples(&x);
    assert_eq!(m.len(), 3);
    assert_eq!(vals(&m[2]), vec![3.0, 6.0]);
    let p = rebuilt(&[(jnp::zeros([2]), jnp::ones([1]))]);
    assert_eq!((vals(&p[0].0), vals(&p[0].1)), (vec![1.0, 1.0], vec![2.0]));
}

// ---- `s![a..b; step]` with steps of any integer type ----

#[jit]
fn every(x: &Array, k: usize) -> Array {
    x.slice(s![..; k])
}

#[test]
fn slice_steps_take_any_integer_type() {
    let x = jnp::arange(7.0);
    let (a, b, c, d) = (2usize, 3u32, -2i64, 2u8);
    assert_eq!(vals(&x.slice(s![0..6; a])), vec![0.0, 2.0, 4.0]);
    assert_eq!(vals(&x.slice(s![1..; b])), vec![1.0, 4.0]);
    assert_eq!(vals(&x.slice(s![..; c])), vec![6.0, 4.0, 2.0, 0.0]);
    assert_eq!(vals(&x.slice(s![1..5; d])), vec![1.0, 3.0]);
    assert_eq!(vals(&x.slice(s![..; 3i16])), vec![0.0, 3.0, 6.0]);
    assert_eq!(vals(&every(&x, 4)), vec![0.0, 4.0]);
    // A step past `isize`'s range takes the first element only.
    assert_eq!(vals(&x.slice(s![..; u64::MAX])), vec![0.0]);
    let msg = panic_text(|| drop(x.slice(s![..; 0u32])));
    assert!(msg.contains("a slice step cannot be zero"), "{msg}");
}

// ---- `tree::map_n` ----

type Layers = Vec<(Array, Array)>;

#[jit]
fn weighted(a: Layers, b: Layers, c: Layers) -> Layers {
    tree::map_n(&[&a, &b, &c], |x| x[0] + x[1] * x[2])
}

#[test]
fn tree_map_n_maps_any_number_of_trees() {
    let t = |v: f32| vec![(jnp::full([2], v), jnp::full([1], v))];
    let out = weighted(t(1.0), t(2.0), t(3.0));
    assert_eq!((vals(&out[0].0), vals(&out[0].1)), (vec![7.0, 7.0], vec![7.0]));
    let four: Vec<(Array, Array)> = tree::map_n(&[&t(1.0), &t(1.0), &t(1.0), &t(1.0)], |x| {
        x.iter().fold(jnp::zeros([]), |s, a| s + *a)
    });
    assert_eq!(vals(&four[0].0), vec![4.0, 4.0]);
    let msg = panic_text(|| drop(tree::map_n(&[&t(1.0), &vec![]], |x| x[0].clone())));
    assert!(msg.contains("tree::map_n: tree 1 has the structure []"), "{msg}");
    let msg = panic_text(|| drop(tree::map_n::<Array>(&[], |x| x[0].clone())));
    assert!(msg.contains("no trees"), "{msg}");
}

// ---- string-keyed maps are pytrees ----

fn weights() -> BTreeMap<String, Array> {
    BTreeMap::from([
        ("w".to_string(), jnp::array([2.0f32, -1.0])),
        ("b".to_string(), jnp::array([0.5f32])),
    ])
}

#[grad]
fn grad_map(p: &BTreeMap<String, Array>, x: &Array) -> BTreeMap<String, Array> {
    (x.dot(&p["w"]) + &p["b"]).square().sum()
}

#[jit]
fn scaled_map(p: &HashMap<String, Array>, k: f32) -> HashMap<String, Array> {
    p.iter().map(|(name, a)| (name.clone(), a * k)).collect()
}

#[test]
fn maps_flatten_in_sorted_key_order() {
    let p = weights();
    let (leaves, def) = tree::flatten(&p);
    assert_eq!(def.to_string(), r#"{"b": *, "w": *}"#);
    assert_eq!(vals(&leaves[0]), vec![0.5]);
    assert_eq!(def.leaf_paths(), ["b", "w"]);
    let h: HashMap<String, Array> = p.clone().into_iter().collect();
    assert_eq!(tree::structure(&h), def, "a HashMap flattens like the BTreeMap");
    let back: BTreeMap<String, Array> = tree::unflatten(&def, leaves);
    assert_eq!(back.keys().collect::<Vec<_>>(), ["b", "w"]);
    let msg = panic_text(|| {
        drop(tree::unflatten::<BTreeMap<String, Array>>(
            &tree::structure(&jnp::ones([1])),
            vec![jnp::ones([1])],
        ))
    });
    assert!(msg.contains("expected a map"), "{msg}");
}

#[test]
fn maps_may_be_parameters_of_transforms() {
    let x = jnp::array([1.0f32, 3.0]);
    let g = grad_map(&weights(), &x);
    // r = x . w + b = 2 - 3 + 0.5 = -0.5; d/dw = 2 r x, d/db = 2 r.
    assert_eq!(vals(&g["w"]), vec![-1.0, -3.0]);
    assert_eq!(vals(&g["b"]), vec![-1.0]);
    let h: HashMap<String, Array> = weights().into_iter().collect();
    let s = scaled_map(&h, 2.0);
    assert_eq!(vals(&s["w"]), vec![4.0, -2.0]);
    assert_eq!(scaled_map::cache_info().traces, 1);
    scaled_map(&h, 3.0);
    assert_eq!(scaled_map::cache_info().traces, 1, "same keys, same trace");
}

// ---- annotated functions as values ----

#[traceable]
fn halve(x: &Array) -> Array {
    x / 2.0
}

mod layers {
    use rjax::prelude::*;

    #[traceable]
    pub fn affine(x: &Array, w: f32) -> Array {
        x * w + 1.0
    }
}

#[jit]
fn through_helpers(x: &Array) -> Array {
    layers::affine(&halve(x), 4.0)
}

#[test]
fn annotated_functions_call_from_plain_code_and_pass_as_fn_pointers() {
    let x = jnp::array([2.0f32, 4.0]);
    assert_eq!(vals(&through_helpers(&x)), vec![5.0, 9.0]);
    assert_eq!(vals(&layers::affine(&x, 0.5)), vec![2.0, 3.0]);
    let f: fn(&Array) -> Array = halve;
    let mapped: Vec<Array> = [x.clone()].iter().map(halve).collect();
    assert_eq!(vals(&f(&x)), vals(&mapped[0]));
    let listing = through_helpers::jaxpr(&x).to_string();
    assert!(listing.contains("div") || listing.contains("mul"), "{listing}");
}
