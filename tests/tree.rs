//! Pytrees: flatten/unflatten round trips for arrays and the standard containers,
//! `#[derive(Tree)]` on named and tuple structs (with `#[tree(static)]` fields), `TreeDef`
//! equality and printing, `tree::map`/`map2`, and `#[jit]` over a derived struct.

mod common;

use common::panic_text;
use rjax::prelude::*;
use rjax::tree::{Node, Unflatten};
use rjax::TreeDef;

fn v(data: &[f32]) -> Array {
    jnp::array(data)
}

fn vals(a: &Array) -> Vec<f32> {
    a.to_vec::<f32>().unwrap()
}

/// Flattens `value`, checks its structure's text and leaf count, rebuilds it from the leaves
/// and returns the rebuilt value with the leaves.
#[track_caller]
fn round_trip<T: Unflatten>(value: &T, text: &str, n: usize) -> (T, Vec<Array>) {
    let (leaves, def) = tree::flatten(value);
    assert_eq!(def.to_string(), text);
    assert_eq!(leaves.len(), n);
    assert_eq!(def.num_leaves(), n);
    let rebuilt: T = tree::unflatten(&def, leaves.clone());
    let (again, def2) = tree::flatten(&rebuilt);
    assert_eq!(def2, def, "the rebuilt value has the same structure");
    assert_eq!(again.len(), leaves.len());
    for (a, b) in again.iter().zip(&leaves) {
        assert!(a.shares_buffer_with(b), "unflatten keeps the leaves themselves (no copies)");
    }
    (rebuilt, leaves)
}

// --- Standard containers ---------------------------------------------------------------------

#[test]
fn array_is_one_leaf() {
    let x = v(&[1.0, 2.0]);
    let (y, leaves) = round_trip(&x, "*", 1);
    assert!(y.shares_buffer_with(&x));
    assert!(leaves[0].shares_buffer_with(&x));
    assert_eq!(tree::structure(&x).nodes(), &[Node::Leaf]);
}

#[test]
fn vec_slice_and_fixed_array() {
    let xs = vec![v(&[1.0]), v(&[2.0, 3.0]), v(&[])];
    let (ys, leaves) = round_trip(&xs, "[*, *, *]", 3);
    assert_eq!(ys.len(), 3);
    assert_eq!(vals(&leaves[1]), vec![2.0, 3.0]);
    // A slice flattens like the Vec it borrows from.
    let (sl, sd) = tree::flatten(&xs[..]);
    assert_eq!(sd, tree::structure(&xs));
    assert_eq!(sl.len(), 3);
    assert_eq!(tree::structure(&xs[..2]).to_string(), "[*, *]");
    // Fixed-size arrays are sequences too.
    let fixed = [v(&[1.0]), v(&[2.0])];
    let (back, _) = round_trip(&fixed, "[*, *]", 2);
    assert_eq!(vals(&back[1]), vec![2.0]);
    // Empty sequences have no leaves.
    let empty: Vec<Array> = Vec::new();
    round_trip(&empty, "[]", 0);
}

#[test]
fn fixed_array_of_the_wrong_length_panics() {
    let def = tree::structure(&vec![v(&[1.0]), v(&[2.0])]);
    let leaves = vec![v(&[1.0]), v(&[2.0])];
    let msg = panic_text(|| {
        let _: [Array; 3] = tree::unflatten(&def, leaves);
    });
    assert!(msg.contains("sequence of 2") && msg.contains("array of 3"), "{msg}");
}

#[test]
fn tuples_of_every_arity() {
    let a = v(&[1.0]);
    round_trip(&(a.clone(),), "(*,)", 1);
    round_trip(&(a.clone(), a.clone()), "(*, *)", 2);
    round_trip(&(a.clone(), a.clone(), a.clone()), "(*, *, *)", 3);
    round_trip(&(a.clone(), a.clone(), a.clone(), a.clone()), "(*, *, *, *)", 4);
    let t8 =
        (a.clone(), a.clone(), a.clone(), a.clone(), a.clone(), a.clone(), a.clone(), a.clone());
    round_trip(&t8, "(*, *, *, *, *, *, *, *)", 8);
    round_trip(&(), "()", 0);
    round_trip(&(a.clone(), ()), "(*, ())", 1);
}

#[test]
fn options_and_boxes() {
    let a = v(&[1.0, 2.0]);
    let (some, _) = round_trip(&Some(a.clone()), "Some(*)", 1);
    assert!(some.unwrap().shares_buffer_with(&a));
    let none: Option<Array> = None;
    let (back, _) = round_trip(&none, "None", 0);
    assert!(back.is_none());
    let (boxed, _) = round_trip(&Box::new(a.clone()), "*", 1);
    assert!(boxed.shares_buffer_with(&a));
    round_trip(&Box::new((a.clone(), Some(a.clone()))), "(*, Some(*))", 2);
    // Some and None are different structures.
    assert_ne!(tree::structure(&Some(a.clone())), tree::structure(&none));
}

#[test]
fn nested_containers_keep_leaf_order() {
    type Entry = (Array, Vec<Array>, Option<(Array, Array)>);
    let leaf = |k: f32| v(&[k]);
    let value: Vec<Entry> = vec![
        (leaf(0.0), vec![leaf(1.0), leaf(2.0)], Some((leaf(3.0), leaf(4.0)))),
        (leaf(5.0), vec![], None),
        (leaf(6.0), vec![leaf(7.0)], Some((leaf(8.0), leaf(9.0)))),
    ];
    let (back, leaves) = round_trip(
        &value,
        "[(*, [*, *], Some((*, *))), (*, [], None), (*, [*], Some((*, *)))]",
        10,
    );
    let order: Vec<f32> = leaves.iter().map(|l| vals(l)[0]).collect();
    assert_eq!(order, (0..10).map(|k| k as f32).collect::<Vec<_>>());
    assert_eq!(vals(&back[2].2.as_ref().unwrap().1), vec![9.0]);
    assert!(back[1].2.is_none());
}

#[test]
fn rust_floats_are_zero_d_leaves() {
    let (leaves, def) = tree::flatten(&(1.5f32, 2.5f64));
    assert_eq!(def.to_string(), "(*, *)");
    assert_eq!(leaves[0].shape(), &[] as &[usize]);
    assert_eq!(leaves[0].dtype(), DType::F32);
    // An `f64` is a Python float: weakly typed, of the default float type.
    assert!(!leaves[0].is_weak() && leaves[1].is_weak());
    rjax::config::with_x64(false, || {
        let (leaves, _) = tree::flatten(&(1.5f32, 2.5f64));
        assert_eq!(leaves[1].dtype(), DType::F32);
        assert_eq!(leaves[1].item::<f32>().unwrap(), 2.5);
    });
    rjax::config::with_x64(true, || {
        let (leaves, _) = tree::flatten(&(1.5f32, 2.5f64));
        assert_eq!(leaves[1].dtype(), DType::F64);
        assert_eq!(leaves[1].item::<f64>().unwrap(), 2.5);
    });
}

#[test]
fn leaves_structure_and_counts() {
    let value = (v(&[1.0]), vec![v(&[2.0]), v(&[3.0])]);
    let leaves = tree::leaves(&value);
    assert_eq!(leaves.iter().map(|l| vals(l)[0]).collect::<Vec<_>>(), vec![1.0, 2.0, 3.0]);
    let def = tree::structure(&value);
    assert_eq!(def.num_leaves(), 3);
    assert_eq!(def.nodes(), &[Node::Tuple(2), Node::Leaf, Node::Seq(2), Node::Leaf, Node::Leaf]);
    // Shapes and dtypes are not part of the structure.
    let other = (jnp::zeros([4, 4]), vec![jnp::arange(3), v(&[])]);
    assert_eq!(tree::structure(&other), def);
    // Lengths are.
    assert_ne!(tree::structure(&(v(&[1.0]), vec![v(&[2.0])])), def);
}

#[test]
fn unflatten_refuses_a_structure_of_another_type() {
    let def = tree::structure(&(v(&[1.0]), v(&[2.0])));
    let msg = panic_text(|| {
        let _: Array = tree::unflatten(&def, vec![v(&[1.0]), v(&[2.0])]);
    });
    assert!(msg.contains("expected an array") && msg.contains("Tuple(2)"), "{msg}");
    let msg = panic_text(|| {
        let _: Vec<Array> = tree::unflatten(&def, vec![v(&[1.0]), v(&[2.0])]);
    });
    assert!(msg.contains("expected a sequence"), "{msg}");
    let msg = panic_text(|| {
        let _: (Array, Array, Array) = tree::unflatten(&def, vec![v(&[1.0]), v(&[2.0])]);
    });
    assert!(msg.contains("a tuple of 3"), "{msg}");
}

#[test]
fn unflatten_refuses_leftover_leaves_and_structure() {
    let def = tree::structure(&v(&[1.0]));
    let msg = panic_text(|| {
        let _: Array = tree::unflatten(&def, vec![v(&[1.0]), v(&[2.0])]);
    });
    assert!(msg.contains("more to it"), "{msg}");
    let def = tree::structure(&vec![v(&[1.0]), v(&[2.0])]);
    let msg = panic_text(|| {
        let _: Vec<Array> = tree::unflatten(&def, vec![v(&[1.0])]);
    });
    assert!(msg.contains("fewer leaves"), "{msg}");
}

// --- #[derive(Tree)] -------------------------------------------------------------------------

#[derive(Tree, Clone, Debug)]
struct Linear {
    w: Array,
    b: Array,
}

#[derive(Tree, Clone, Debug)]
struct Pair(Array, Array);

#[derive(Tree, Clone, Debug)]
struct Layer {
    linear: Linear,
    #[tree(static)]
    activation: String,
    #[tree(static)]
    width: usize,
    skip: Option<Array>,
}

#[derive(Tree, Clone, Debug)]
struct Model {
    layers: Vec<Layer>,
    #[tree(static)]
    name: &'static str,
}

#[derive(Tree, Clone, Debug)]
struct Wrapper<T> {
    inner: T,
}

#[derive(Tree, Clone, Debug)]
struct Marker;

fn linear(k: f32) -> Linear {
    Linear { w: v(&[k, k + 1.0]), b: v(&[-k]) }
}

fn layer(k: f32, activation: &str, width: usize) -> Layer {
    Layer { linear: linear(k), activation: activation.to_string(), width, skip: None }
}

#[test]
fn derive_named_struct() {
    let l = linear(1.0);
    let (back, leaves) = round_trip(&l, "Linear { w: *, b: * }", 2);
    assert!(leaves[0].shares_buffer_with(&l.w), "fields flatten in declaration order");
    assert!(leaves[1].shares_buffer_with(&l.b));
    assert_eq!(vals(&back.w), vec![1.0, 2.0]);
    assert_eq!(vals(&back.b), vec![-1.0]);
}

#[test]
fn derive_tuple_struct() {
    let p = Pair(v(&[1.0]), v(&[2.0, 3.0]));
    let (back, _) = round_trip(&p, "Pair { 0: *, 1: * }", 2);
    assert_eq!(vals(&back.1), vec![2.0, 3.0]);
}

#[test]
fn derive_generic_struct() {
    let w = Wrapper { inner: (v(&[1.0]), vec![v(&[2.0])]) };
    let (back, _) = round_trip(&w, "Wrapper { inner: (*, [*]) }", 2);
    assert_eq!(vals(&back.inner.1[0]), vec![2.0]);
}

#[test]
fn derive_unit_struct() {
    let (_, leaves) = round_trip(&Marker, "Marker", 0);
    assert!(leaves.is_empty());
    round_trip(&(Marker, v(&[1.0])), "(Marker, *)", 1);
}

#[test]
fn static_fields_are_structure_not_leaves() {
    let l = layer(1.0, "tanh", 16);
    let (back, leaves) = round_trip(
        &l,
        "Layer { linear: Linear { w: *, b: * }, activation: \"tanh\", width: 16, skip: None }",
        2,
    );
    assert_eq!(leaves.len(), 2, "static fields contribute no leaves");
    assert_eq!(back.activation, "tanh", "the static value is restored");
    assert_eq!(back.width, 16);
    // Two values differing only in a static field have different structures.
    let relu = layer(1.0, "relu", 16);
    let wider = layer(1.0, "tanh", 32);
    let def = tree::structure(&l);
    assert_ne!(tree::structure(&relu), def);
    assert_ne!(tree::structure(&wider), def);
    assert_ne!(tree::structure(&relu).to_string(), def.to_string());
    // Equal static values (and any leaves) give equal structures.
    assert_eq!(tree::structure(&layer(5.0, "tanh", 16)), def);
}

#[test]
fn structure_hash_follows_equality() {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    let hash = |d: &TreeDef| {
        let mut h = DefaultHasher::new();
        d.hash(&mut h);
        h.finish()
    };
    let a = tree::structure(&layer(1.0, "tanh", 16));
    let b = tree::structure(&layer(2.0, "tanh", 16));
    assert_eq!(hash(&a), hash(&b));
    let c = tree::structure(&layer(1.0, "gelu", 16));
    assert_ne!(a, c);
}

#[test]
fn nested_derived_structs() {
    let model = Model {
        layers: vec![
            layer(1.0, "tanh", 2),
            Layer { skip: Some(v(&[9.0])), ..layer(2.0, "relu", 1) },
        ],
        name: "mlp",
    };
    let (back, leaves) = round_trip(
        &model,
        "Model { layers: [Layer { linear: Linear { w: *, b: * }, activation: \"tanh\", width: 2, \
         skip: None }, Layer { linear: Linear { w: *, b: * }, activation: \"relu\", width: 1, \
         skip: Some(*) }], name: \"mlp\" }",
        5,
    );
    assert_eq!(vals(&leaves[4]), vec![9.0]);
    assert_eq!(back.name, "mlp");
    assert_eq!(back.layers[1].activation, "relu");
    assert_eq!(vals(back.layers[1].skip.as_ref().unwrap()), vec![9.0]);
}

#[test]
fn unflatten_into_another_struct_panics() {
    let def = tree::structure(&linear(1.0));
    let msg = panic_text(|| {
        let _: Pair = tree::unflatten(&def, vec![v(&[1.0]), v(&[2.0])]);
    });
    assert!(msg.contains("expected Pair"), "{msg}");
}

// --- tree::map and tree::map2 ---------------------------------------------------------------

#[test]
fn map_applies_to_every_leaf() {
    let params = vec![(jnp::ones([2, 2]), jnp::zeros([2])), (jnp::ones([2, 1]), jnp::ones([1]))];
    let doubled = tree::map(&params, |a| a * 2.0 + 1.0);
    assert_eq!(tree::structure(&doubled), tree::structure(&params));
    assert_eq!(vals(&doubled[0].0), vec![3.0; 4]);
    assert_eq!(vals(&doubled[0].1), vec![1.0; 2]);
    assert_eq!(doubled[1].0.shape(), &[2, 1]);
    assert_eq!(vals(&doubled[1].1), vec![3.0]);
    // Leaves are visited in flatten order.
    let mut seen = Vec::new();
    let _ = tree::map(&(v(&[1.0]), vec![v(&[2.0]), v(&[3.0])]), |a| {
        seen.push(vals(a)[0]);
        a.clone()
    });
    assert_eq!(seen, vec![1.0, 2.0, 3.0]);
}

#[test]
fn map_keeps_static_fields() {
    let l = Layer { skip: Some(v(&[4.0])), ..layer(1.0, "gelu", 7) };
    let m = tree::map(&l, |a| -a);
    assert_eq!(m.activation, "gelu");
    assert_eq!(m.width, 7);
    assert_eq!(vals(&m.linear.w), vec![-1.0, -2.0]);
    assert_eq!(vals(m.skip.as_ref().unwrap()), vec![-4.0]);
}

#[test]
fn map2_combines_matching_leaves() {
    let a = (linear(1.0), vec![v(&[1.0, 2.0])]);
    let b = (linear(10.0), vec![v(&[3.0, 4.0])]);
    let s = tree::map2(&a, &b, |x, y| x + y);
    assert_eq!(vals(&s.0.w), vec![11.0, 13.0]);
    assert_eq!(vals(&s.0.b), vec![-11.0]);
    assert_eq!(vals(&s.1[0]), vec![4.0, 6.0]);
}

#[test]
fn map2_panics_on_mismatched_structure() {
    let a = vec![v(&[1.0]), v(&[2.0])];
    let b = vec![v(&[1.0])];
    let msg = panic_text(|| {
        tree::map2(&a, &b, |x, y| x + y);
    });
    assert!(msg.contains("different structures"), "{msg}");
    assert!(msg.contains("[*, *]") && msg.contains("[*]"), "names both structures: {msg}");
    // Static fields count too.
    let msg = panic_text(|| {
        tree::map2(&layer(1.0, "tanh", 2), &layer(1.0, "relu", 2), |x, y| x + y);
    });
    assert!(msg.contains("\"tanh\"") && msg.contains("\"relu\""), "{msg}");
}

// --- #[jit] over derived structs ------------------------------------------------------------

#[derive(Tree, Clone, Debug)]
struct Params {
    w: Array,
    b: Array,
    #[tree(static)]
    activation: &'static str,
}

#[derive(Tree, Clone, Debug)]
struct Stats {
    out: Array,
    norm: Array,
}

#[jit]
fn forward(p: &Params, x: &Array) -> Stats {
    let activation: &str = p.activation;
    let h = x.dot(&p.w) + &p.b;
    let out = if activation == "tanh" { h.tanh() } else { jnp::maximum(&h, 0.0) };
    let norm = (&out * &out).sum();
    Stats { out, norm }
}

#[jit]
fn sgd(p: Params, g: &Params, lr: f32) -> Params {
    tree::map2(&p, g, |w, d| w - d * &lr)
}

fn params(activation: &'static str) -> Params {
    Params {
        w: Array::from_shape_vec([3, 2], vec![0.5f32, -1.0, 1.5, 0.25, -0.75, 2.0]),
        b: v(&[0.1, -0.2]),
        activation,
    }
}

#[test]
fn jit_takes_and_returns_derived_structs() {
    let x = Array::from_shape_vec([2, 3], vec![1.0f32, -2.0, 0.5, 3.0, 0.0, -1.0]);
    for activation in ["tanh", "relu"] {
        let p = params(activation);
        let got = forward(&p, &x);
        let h = x.dot(&p.w) + &p.b;
        let want = if activation == "tanh" { h.tanh() } else { jnp::maximum(&h, 0.0) };
        assert_eq!(vals(&got.out), vals(&want), "{activation}");
        assert_eq!(got.norm.item::<f32>().unwrap(), (&want * &want).sum().item::<f32>().unwrap());
    }
    // The static field is part of the signature: each activation traced once.
    let _ = forward(&params("tanh"), &x);
    let info = forward::cache_info();
    assert_eq!(info.traces, 2, "{info:?}");
    assert_eq!(info.hits, 1, "{info:?}");
    let relu_text = forward::jaxpr(&params("relu"), &x).simplified.to_string();
    assert!(relu_text.contains("max") && !relu_text.contains("tanh"), "{relu_text}");
}

#[test]
fn jit_rebuilds_struct_with_its_static_field() {
    let p = params("relu");
    let g = tree::map(&p, jnp::ones_like);
    let next = sgd(p.clone(), &g, 0.5);
    assert_eq!(next.activation, "relu", "the static field comes back from the jitted function");
    assert_eq!(vals(&next.b), vec![0.1 - 0.5, -0.2 - 0.5]);
    assert_eq!(vals(&next.w), vals(&(&p.w - 0.5)));
    let again = sgd(next.clone(), &g, 0.25);
    assert_eq!(vals(&again.b), vals(&(&next.b - 0.25)));
    assert_eq!(sgd::cache_info().traces, 1, "a new learning rate is a new value, not a new trace");
}
