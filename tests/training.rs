//! Optimizers against Optax's numbers, optimizer steps inside `#[jit]`, schedules, and
//! checkpoints (round trips and every way a load can fail).

use std::path::PathBuf;
use std::sync::OnceLock;

use rjax::optim::{self, GradientTransformation, Schedule};
use rjax::prelude::*;
use serde_json::Value;

type Params = Vec<Array>;

/// `tests/data/optax.json`, computed once with Optax 0.2.8 (tests/data/gen/optax_golden.py).
fn golden() -> &'static Value {
    static GOLDEN: OnceLock<Value> = OnceLock::new();
    GOLDEN.get_or_init(|| serde_json::from_str(include_str!("data/optax.json")).unwrap())
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

/// The golden initial parameters, and each step's gradients, in their shapes.
fn params_and_grads() -> (Params, Vec<Params>) {
    let shapes: Vec<Vec<usize>> = golden()["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
        })
        .collect();
    let build = |leaves: &Value| -> Params {
        leaves
            .as_array()
            .unwrap()
            .iter()
            .zip(&shapes)
            .map(|(l, s)| Array::from_shape_vec(s, floats(l)))
            .collect()
    };
    let params = golden()["params"].as_array().unwrap().iter().map(|p| p["data"].clone()).collect();
    let grads = golden()["grads"].as_array().unwrap().iter().map(build).collect();
    (build(&Value::Array(params)), grads)
}

fn assert_close(got: &Array, want: &[f32], what: &str) {
    let got = got.to_vec::<f32>().unwrap();
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-6 + 2e-6 * w.abs(), "{what}[{i}]: got {g}, Optax {w}");
    }
}

/// Runs `opt` over the golden gradients and compares every step with Optax's parameters.
fn check_against_optax(name: &str, opt: impl GradientTransformation) {
    let (mut params, grads) = params_and_grads();
    let mut state = opt.init(&params);
    let trajectory =
        golden()["optimizers"][name].as_array().unwrap_or_else(|| panic!("no case {name}"));
    for (step, (g, want)) in grads.iter().zip(trajectory).enumerate() {
        let (updates, next) = opt.update(g, &state, &params);
        params = optim::apply_updates(&params, &updates);
        state = next;
        for (leaf, (p, w)) in params.iter().zip(want.as_array().unwrap()).enumerate() {
            assert_close(p, &floats(w), &format!("{name} step {} leaf {leaf}", step + 1));
        }
    }
}

#[test]
fn optimizers_match_optax() {
    check_against_optax("sgd", optim::sgd(0.1));
    check_against_optax("sgd_momentum", optim::sgd(0.1).momentum(0.9));
    check_against_optax("sgd_nesterov", optim::sgd(0.1).momentum(0.9).nesterov(true));
    check_against_optax("adam", optim::adam(0.01));
    check_against_optax(
        "adam_b1_eps_root",
        optim::adam(0.05).b1(0.8).b2(0.99).eps(1e-6).eps_root(1e-8),
    );
    check_against_optax("adamw", optim::adamw(0.01).weight_decay(0.1));
    check_against_optax("rmsprop", optim::rmsprop(0.01));
    check_against_optax("rmsprop_momentum", optim::rmsprop(0.01).decay(0.8).momentum(0.5));
    check_against_optax("adagrad", optim::adagrad(0.1));
    check_against_optax(
        "clip_then_sgd",
        optim::chain((optim::clip_by_global_norm(1.0), optim::sgd(0.1))),
    );
    check_against_optax("adam_cosine", optim::adam(optim::cosine_decay_schedule(0.01, 3, 0.1)));
}

#[test]
fn schedules_match_optax() {
    let cases: [(&str, Schedule); 5] = [
        ("exponential_decay", optim::exponential_decay(0.1, 3, 0.5, 0, false, None)),
        (
            "exponential_decay_staircase_begin_end",
            optim::exponential_decay(0.1, 2, 0.5, 2, true, Some(0.02)),
        ),
        ("cosine_decay", optim::cosine_decay_schedule(0.1, 8, 0.2)),
        ("linear", optim::linear_schedule(0.0, 1.0, 5, 1)),
        ("warmup_cosine_decay", optim::warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, 0.01)),
    ];
    let counts = golden()["counts"].as_array().unwrap();
    for (name, schedule) in cases {
        let want = floats(&golden()["schedules"][name]);
        for (count, w) in counts.iter().zip(want) {
            let count = count.as_i64().unwrap() as i32;
            let got = schedule.at_step(count);
            assert!(
                (got - w).abs() <= 1e-7 + 1e-6 * w.abs(),
                "{name} at {count}: got {got}, Optax {w}"
            );
        }
    }
}

type Clipped = (optim::ClipByGlobalNorm, optim::AdamW);
type ClippedState = <Clipped as GradientTransformation>::State<Params>;

fn clipped_adamw(lr: impl Into<Schedule>) -> Clipped {
    optim::chain((optim::clip_by_global_norm(1.0), optim::adamw(lr).weight_decay(0.1)))
}

/// A whole clipped AdamW step (the same as `clipped_adamw`), compiled: the optimizer is built
/// inside the traced function (which calls only rjax functions, so it is spelled out), and the learning rate is a traced scalar so that changing it does not retrace.
#[jit]
fn jitted_step(
    params: Params,
    state: ClippedState,
    grads: &Params,
    lr: &Array,
) -> (Params, ClippedState) {
    let opt = optim::chain((optim::clip_by_global_norm(1.0), optim::adamw(lr).weight_decay(0.1)));
    let (updates, state) = opt.update(grads, &state, &params);
    (optim::apply_updates(&params, &updates), state)
}

#[test]
fn an_optimizer_step_runs_inside_jit() {
    let (params, grads) = params_and_grads();
    let eager = clipped_adamw(0.01);
    let (mut p_eager, mut s_eager) = (params.clone(), eager.init(&params));
    let (mut p_jit, mut s_jit) = (params.clone(), eager.init(&params));
    let lr = Array::from(0.01f32);
    for g in &grads {
        let (updates, next) = eager.update(g, &s_eager, &p_eager);
        (p_eager, s_eager) = (optim::apply_updates(&p_eager, &updates), next);
        (p_jit, s_jit) = jitted_step(p_jit, s_jit, g, &lr);
    }
    for (j, e) in p_jit.iter().zip(&p_eager) {
        assert_close(j, &e.to_vec::<f32>().unwrap(), "jit vs eager");
    }
    assert_eq!(s_jit.1 .0.count.item::<i32>().unwrap(), grads.len() as i32);
    let _ = jitted_step(p_jit, s_jit, &grads[0], &Array::from(0.5f32));
    let info = jitted_step::cache_info();
    assert_eq!(info.traces, 1, "the learning rate is a value, not part of the trace: {info:?}");
}

#[test]
fn global_norm_clipping_leaves_small_updates_alone() {
    let clip = optim::clip_by_global_norm(10.0);
    let g = vec![jnp::array([3.0f32, 4.0])];
    let (small, ()) = clip.update(&g, &(), &g);
    assert_eq!(small[0].to_vec::<f32>().unwrap(), vec![3.0, 4.0]);
    let (big, ()) = optim::clip_by_global_norm(1.0).update(&g, &(), &g);
    assert_close(&big[0], &[0.6, 0.8], "clipped to norm 1");
    assert_eq!(optim::global_norm(&g).item::<f32>().unwrap(), 5.0);
}

// ---------------------------------------------------------------------------------------
// Checkpoints
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug, Tree)]
struct Layer {
    w: Array,
    b: Option<Array>,
    #[tree(static)]
    name: &'static str,
}

#[derive(Clone, Debug, Tree)]
struct Model {
    layers: Vec<Layer>,
    scale: (Array, Array),
    steps: Array,
}

fn model() -> Model {
    Model {
        layers: vec![
            Layer {
                w: Array::from_shape_vec([2, 3], vec![0.5f32, -1.0, 1.5, 0.25, -0.75, 2.0]),
                b: Some(jnp::array([0.1f32, -0.2, 0.3])),
                name: "first",
            },
            Layer {
                w: Array::from_shape_vec([3, 1], vec![1.0f64, 2.0, 3.0]),
                b: None,
                name: "last",
            },
        ],
        scale: (jnp::array([true, false]), jnp::array([1.5f32]).astype(DType::BF16)),
        steps: Array::from(41i32),
    }
}

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rjax-checkpoints-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn same(a: &Model, b: &Model) {
    let (la, da) = tree::flatten(a);
    let (lb, db) = tree::flatten(b);
    assert_eq!(da, db);
    for (x, y) in la.iter().zip(&lb) {
        assert_eq!((x.shape(), x.dtype()), (y.shape(), y.dtype()));
        assert_eq!(
            x.astype(DType::F64).to_vec::<f64>().unwrap(),
            y.astype(DType::F64).to_vec::<f64>().unwrap()
        );
    }
}

/// The error of a failed load, which must name the file and (when given) the leaf.
fn load_error(path: &PathBuf, like: &Model, leaf: Option<&str>) -> String {
    let err = rjax::checkpoint::load(path, like).expect_err("the load must fail");
    let Error::Checkpoint { path: p, leaf: l, .. } = &err else {
        panic!("not a checkpoint error: {err:?}")
    };
    assert_eq!(p, &path.display().to_string());
    assert_eq!(l.as_deref(), leaf, "{err}");
    err.to_string()
}

#[test]
fn a_nested_pytree_round_trips_with_every_dtype() {
    let _x64 = rjax::config::x64_scope(true);
    let path = temp_path("round_trip.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    let back = rjax::checkpoint::load(&path, &m).unwrap();
    same(&m, &back);
    assert_eq!(back.layers[1].name, "last", "static fields come from the structure");
    let names = tree::structure(&m).leaf_paths();
    assert_eq!(names, ["layers.0.w", "layers.0.b", "layers.1.w", "scale.0", "scale.1", "steps"]);
}

#[test]
fn a_missing_truncated_or_corrupt_file_is_an_error() {
    let m = model();
    let missing = temp_path("missing.safetensors");
    assert!(load_error(&missing, &m, None).contains("cannot read"));

    let path = temp_path("truncated.safetensors");
    rjax::checkpoint::save(&path, &m).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    assert!(load_error(&path, &m, None).contains("truncated or corrupt"));

    let garbage = temp_path("garbage.safetensors");
    std::fs::write(&garbage, b"\xff\xff\xff\xff\xff\xff\xff\x7fnot a header").unwrap();
    assert!(load_error(&garbage, &m, None).contains("truncated or corrupt"));
}

#[test]
fn a_different_structure_shape_or_dtype_names_the_leaf() {
    let _x64 = rjax::config::x64_scope(true);
    let path = temp_path("mismatch.safetensors");
    rjax::checkpoint::save(&path, &model()).unwrap();

    let mut extra = model();
    extra.layers[1].b = Some(jnp::zeros([1]));
    assert!(load_error(&path, &extra, Some("layers.1.b")).contains("no such tensor"));

    let mut fewer = model();
    fewer.layers[0].b = None;
    assert!(load_error(&path, &fewer, Some("layers.0.b")).contains("different structure"));

    let mut reshaped = model();
    reshaped.layers[0].w = jnp::zeros([3, 2]);
    assert!(load_error(&path, &reshaped, Some("layers.0.w")).contains("shape [2, 3]"));

    let mut retyped = model();
    retyped.steps = Array::from(41i64);
    assert!(load_error(&path, &retyped, Some("steps")).contains("int32"));
}

#[test]
fn a_failed_save_leaves_the_previous_checkpoint_intact() {
    let _x64 = rjax::config::x64_scope(true);
    let path = temp_path("atomic.safetensors");
    let m = model();
    rjax::checkpoint::save(&path, &m).unwrap();
    // Block the temporary file's name with a directory, so the next save fails mid-way.
    let temp = path.with_file_name(format!(".atomic.safetensors.{}.tmp", std::process::id()));
    std::fs::create_dir_all(&temp).unwrap();
    let mut changed = model();
    changed.steps = Array::from(7i32);
    let err = rjax::checkpoint::save(&path, &changed).expect_err("the save must fail");
    assert!(err.to_string().contains("cannot write"), "{err}");
    same(&m, &rjax::checkpoint::load(&path, &m).unwrap());
    std::fs::remove_dir(&temp).unwrap();
    rjax::checkpoint::save(&path, &changed).unwrap();
    assert_eq!(rjax::checkpoint::load(&path, &m).unwrap().steps.item::<i32>().unwrap(), 7);
}
