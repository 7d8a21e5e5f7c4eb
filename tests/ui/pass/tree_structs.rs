// `#[derive(Tree)]` structs (named, tuple, with `#[tree(static)]` fields) are pytrees:
// traced leaf by leaf, their static fields part of the structure and the cache key.
use rjax::prelude::*;

#[derive(Tree, Clone)]
struct Dense {
    w: Array,
    b: Array,
}

#[derive(Tree, Clone)]
struct Pair(Array, Array);

#[derive(Tree, Clone)]
struct Model {
    layers: Vec<Dense>,
    #[tree(static)]
    activation: String,
    #[tree(static)]
    scale: u32,
}

#[jit]
fn forward(model: &Model, x: &Array) -> Array {
    let mut h = x.clone();
    for layer in &model.layers {
        h = h.dot(&layer.w) + &layer.b;
        if model.activation == "tanh" {
            h = h.tanh();
        }
    }
    match model.activation.as_str() {
        "tanh" | "none" => h,
        _ => h * 0.0,
    }
}

#[jit]
fn shifted(model: &Model, x: &Array) -> Array {
    let copies = model.scale * 2;
    let mut y = x.clone();
    for _ in 0..copies {
        y = y + 1.0;
    }
    y
}

#[jit]
fn product(p: Pair) -> Array {
    p.0 * p.1
}

#[traceable]
fn dense(layer: &Dense, x: &Array) -> Array {
    x.dot(&layer.w) + &layer.b
}

fn main() {
    let layer = Dense { w: jnp::ones([2, 2]), b: jnp::full([2], 0.5f32) };
    let mut model =
        Model { layers: vec![layer.clone(), layer.clone()], activation: "none".into(), scale: 1 };
    let x = Array::from_shape_vec([1, 2], vec![1.0f32, 2.0]);
    // none: [3.5, 3.5] then [7.5, 7.5]
    assert_eq!(forward(&model, &x).to_vec::<f32>().unwrap(), vec![7.5, 7.5]);
    model.activation = "tanh".into();
    let t = (2.0 * 3.5f32.tanh() + 0.5).tanh();
    let out = forward(&model, &x).to_vec::<f32>().unwrap();
    assert!((out[0] - t).abs() < 1e-6, "{out:?} vs {t}");
    assert_eq!(forward::cache_info().traces, 2);
    assert_eq!(shifted(&model, &x).to_vec::<f32>().unwrap(), vec![3.0, 4.0]);

    let p = Pair(jnp::array(&[1.0f32, 2.0]), jnp::array(&[3.0f32, 4.0]));
    assert_eq!(product(p).to_vec::<f32>().unwrap(), vec![3.0, 8.0]);
    assert_eq!(dense(&layer, &x).to_vec::<f32>().unwrap(), vec![3.5, 3.5]);
}
