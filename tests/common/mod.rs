//! Shared helpers for integration tests: golden cases computed with JAX and comparisons.
#![allow(dead_code)]

#[cfg(feature = "gpu")]
pub mod gpu;
pub mod gradcheck;
pub mod mlp;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use rjax::prelude::*;
use rjax::{Complex, Device};
use serde_json::Value;

/// The golden cases (`tests/data/golden.json`), computed once with JAX 0.10.2 on CPU.
pub fn golden() -> &'static Value {
    static GOLDEN: OnceLock<Value> = OnceLock::new();
    GOLDEN.get_or_init(|| {
        let text = include_str!("../data/golden.json");
        serde_json::from_str(text).expect("golden.json parses")
    })
}

/// One golden case by name.
pub fn case(name: &str) -> &'static Value {
    golden()["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no golden case named {name}"))
}

/// The `i`-th output leaf of a golden case as an array.
pub fn output(name: &str, i: usize) -> Array {
    leaf_to_array(&case(name)["outputs"][i])
}

/// A named input of a golden case as an array: on the host, or on `gpu:0` when the golden
/// cases are run there (see [`golden_device`]).
pub fn input(name: &str, var: &str) -> Array {
    let x = leaf_to_array(&case(name)["inputs"][var]);
    match golden_device() {
        Some(gpu) if gpu_dtype(x.dtype(), gpu) => rjax::device::device_put(&x, gpu),
        _ => x,
    }
}

/// Where the golden cases' inputs go: `gpu:0` with `RJAX_GOLDEN_DEVICE=gpu` (and the `gpu`
/// feature), so that the same tests check the GPU backend against JAX's values; otherwise
/// the host. Inputs of dtypes without GPU kernels there stay on the host.
pub fn golden_device() -> Option<Device> {
    if std::env::var("RJAX_GOLDEN_DEVICE").as_deref() != Ok("gpu") {
        return None;
    }
    #[cfg(feature = "gpu")]
    {
        let gpus = rjax::device::gpu_devices().expect("RJAX_GOLDEN_DEVICE=gpu needs a GPU");
        Some(gpus[0])
    }
    #[cfg(not(feature = "gpu"))]
    panic!("RJAX_GOLDEN_DEVICE=gpu needs the tests built with --features gpu")
}

/// `x` on the host (a copy when it is on a device). Host arrays are taken as they are:
/// placing them would fix the CPU device count, which some tests set first.
pub fn to_host(x: &Array) -> Array {
    if x.devices().iter().all(|d| d.is_host()) {
        x.clone()
    } else {
        rjax::device::device_put(x, Device::Cpu(0))
    }
}

/// The dtypes the GPU backend computes in on `gpu`: float64 where the adapter has it
/// (`SHADER_F64`, which Apple's GPUs lack).
fn gpu_dtype(dtype: DType, gpu: Device) -> bool {
    match dtype {
        DType::F32 | DType::I32 | DType::U32 | DType::Bool => true,
        DType::F64 => computes_float64(gpu),
        _ => false,
    }
}

/// Whether `gpu` runs a float64 kernel (asked once, by negating a float64 array there).
fn computes_float64(gpu: Device) -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        let x = rjax::device::device_put(&rjax::jnp::array([1.0f64]), gpu);
        catch_unwind(AssertUnwindSafe(|| (-&x).to_vec::<f64>())).is_ok()
    })
}

fn float_of(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "NaN" => f64::NAN,
        Value::String(s) if s == "-NaN" => -f64::NAN,
        Value::String(s) if s == "Infinity" => f64::INFINITY,
        Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
        Value::Bool(b) => *b as u8 as f64,
        v => v.as_f64().expect("a number"),
    }
}

/// Converts a `{shape, dtype, data, weak_type}` leaf into an array with that dtype and weak flag.
pub fn leaf_to_array(leaf: &Value) -> Array {
    let shape: Vec<usize> =
        leaf["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let dtype = DType::from_name(leaf["dtype"].as_str().unwrap()).expect("known dtype");
    let data = leaf["data"].as_array().unwrap();
    let a = match dtype {
        DType::Bool => {
            Array::from_shape_vec(&shape, data.iter().map(|v| v.as_bool().unwrap()).collect())
        }
        DType::U64 => {
            Array::from_shape_vec(&shape, data.iter().map(|v| v.as_u64().unwrap()).collect())
        }
        DType::U32 => {
            Array::from_shape_vec(&shape, data.iter().map(|v| v.as_u64().unwrap() as u32).collect())
        }
        d if d.is_int() => {
            Array::from_shape_vec(&shape, data.iter().map(|v| v.as_i64().unwrap()).collect())
                .astype(d)
        }
        d if d.is_complex() => {
            // Complex values are `[re, im]` pairs.
            let part = |k: usize| -> Vec<f64> { data.iter().map(|v| float_of(&v[k])).collect() };
            let values = part(0).into_iter().zip(part(1)).map(|(re, im)| Complex::new(re, im));
            Array::from_shape_vec(&shape, values.collect::<Vec<Complex<f64>>>()).astype(d)
        }
        d => {
            Array::from_shape_vec(&shape, data.iter().map(float_of).collect::<Vec<f64>>()).astype(d)
        }
    };
    if leaf["weak_type"].as_bool().unwrap_or(false) {
        a.with_weak_type(true)
    } else {
        a
    }
}

/// Field `key` of golden case `case` among `cases` (a golden file's table of cases).
#[track_caller]
pub fn golden_field(cases: &Value, case: &str, key: &str) -> Array {
    let c = &cases[case];
    assert!(!c.is_null(), "no golden case {case}");
    assert!(!c[key].is_null(), "no field {key} in golden case {case}");
    leaf_to_array(&c[key])
}

/// [`assert_close`], failing with a message that names `what`; the comparison's own message,
/// with the elements, is printed above it.
#[track_caller]
pub fn assert_close_as(what: &str, got: &Array, want: &Array, rtol: f64, atol: f64) {
    let compared = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_close(got, want, rtol, atol)
    }));
    assert!(compared.is_ok(), "{what} differs from JAX");
}

/// The values of a real array as `f64`s, whatever its dtype and the dtype mode.
pub fn values_f64(x: &Array) -> Vec<f64> {
    rjax::config::with_x64(true, || x.astype(DType::F64).to_vec::<f64>().unwrap())
}

/// Asserts `got` matches `want` in shape and dtype, and in value within the case's tolerance
/// (`|got - want| <= atol + rtol * |want|`; exact for integers and bools; NaNs must match).
#[track_caller]
pub fn assert_close(got: &Array, want: &Array, rtol: f64, atol: f64) {
    // Results computed on a GPU (see `golden_device`) are compared on the host.
    let (got, want) = (&to_host(got), &to_host(want));
    assert_eq!(got.shape(), want.shape(), "shape: got {got:?}, want {want:?}");
    assert_eq!(got.dtype(), want.dtype(), "dtype: got {got:?}, want {want:?}");
    if want.dtype().is_complex() {
        return assert_close_complex(got, want, rtol, atol);
    }
    let (g, w) = (values_f64(got), values_f64(want));
    let exact = !want.dtype().is_float();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = if b.is_nan() {
            a.is_nan()
        } else if exact || b.is_infinite() {
            a == b
        } else {
            (a - b).abs() <= atol + rtol * b.abs()
        };
        assert!(ok, "element {i}: got {a}, want {b}\ngot  {got:?}\nwant {want:?}");
    }
}

/// [`assert_close`] for complex arrays: `|got - want| <= atol + rtol * |want|` in the complex
/// plane; NaN parts must match.
#[track_caller]
fn assert_close_complex(got: &Array, want: &Array, rtol: f64, atol: f64) {
    let read = |x: &Array| {
        rjax::config::with_x64(true, || x.astype(DType::C128).to_vec::<Complex<f64>>().unwrap())
    };
    let (g, w) = (read(got), read(want));
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = if b.re.is_nan() || b.im.is_nan() {
            a.re.is_nan() == b.re.is_nan() && a.im.is_nan() == b.im.is_nan()
        } else {
            (a - b).norm() <= atol + rtol * b.norm()
        };
        assert!(ok, "element {i}: got {a}, want {b}\ngot  {got:?}\nwant {want:?}");
    }
}

/// Asserts `got` matches output leaf `i` of golden case `name`, with the case's tolerance,
/// including the weak-type flag.
#[track_caller]
pub fn assert_golden(name: &str, i: usize, got: &Array) {
    let c = case(name);
    let want = output(name, i);
    let tol = &c["tolerance"];
    let rtol = tol["rtol"].as_f64().unwrap_or(0.0);
    let atol = tol["atol"].as_f64().unwrap_or(0.0);
    assert_close(got, &want, rtol, atol);
    assert_eq!(got.is_weak(), want.is_weak(), "{name}[{i}]: weak_type of {got:?}");
}

/// Row-major multi-index of flat position `flat` in an array of `shape`.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for ax in (0..shape.len()).rev() {
        idx[ax] = flat % shape[ax];
        flat /= shape[ax];
    }
    idx
}

/// The panic message of `f`, which must panic.
#[track_caller]
pub fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else {
        panic!("panic payload is not text")
    }
}

/// The fixed weights the linalg and fft goldens' generators sum outputs with, `(i % 5 - 1.5) / 2` in row-major order.
pub struct Weights;

impl Weights {
    /// The weights of `x`'s shape and dtype (constants, also while `x` is traced).
    pub fn like(x: &Array) -> Array {
        let w: Vec<f64> = (0..x.size()).map(|i| ((i % 5) as f64 - 1.5) / 2.0).collect();
        Array::from_shape_vec(x.shape(), w).astype(x.dtype())
    }
}
