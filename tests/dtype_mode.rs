//! JAX's two dtype modes: each program runs with x64 off (the default) and on, and its result's
//! dtype, weak-type flag and values must be JAX's in that mode (`tests/data/dtype_mode.json`,
//! from `tests/data/gen/dtype_mode.py`).

use std::sync::OnceLock;

use rjax::prelude::*;
use rjax::{config, DType};
use serde_json::Value;

fn cases() -> &'static Value {
    static CASES: OnceLock<Value> = OnceLock::new();
    CASES.get_or_init(|| {
        serde_json::from_str(include_str!("data/dtype_mode.json")).expect("dtype_mode.json parses")
    })
}

#[jit]
fn third(x: f64) -> Array {
    x / 3.0
}

/// The rjax twin of each JAX program of the generator.
fn program(name: &str) -> Array {
    let u32s = || Array::from_shape_vec([3], vec![1u32, 2, 3]);
    let i32s = || Array::from_shape_vec([3], vec![-1i32, 5, 7]);
    let i8s = || Array::from_shape_vec([3], vec![100i8, 100, 100]);
    let f32s = || Array::from_shape_vec([3], vec![0.5f32, 1.25, -2.0]);
    match name {
        "arange_int" => jnp::arange(4),
        "arange_float" => jnp::arange(4.0),
        "zeros_default" => jnp::zeros([3]),
        "ones_default" => jnp::ones([2]),
        "eye_default" => jnp::eye(2),
        "linspace_default" => jnp::linspace(0.0, 1.0, 5),
        "array_f64_data" => Array::from_shape_vec([2], vec![0.1f64, 2.5]),
        "array_i64_data" => Array::from_shape_vec([2], vec![3i64, -4]),
        "array_u64_data" => Array::from_shape_vec([2], vec![3u64, 4]),
        "u32_plus_i32" => jnp::add(u32s(), i32s()),
        "i32_plus_float_scalar" => jnp::add(i32s(), 1.5),
        "f32_plus_float_scalar" => jnp::add(f32s(), 0.1),
        "scalar_times_scalar" => jnp::multiply(jnp::asarray(2.5), 3),
        "astype_f64" => f32s().astype(DType::F64),
        "astype_i64" => i32s().astype(DType::I64),
        "zeros_f64" => jnp::zeros_dtype([2], DType::F64),
        "sum_i8" => jnp::sum(&i8s()),
        "mean_i32" => jnp::mean(&i32s()),
        "f32_times_f64_data" => jnp::multiply(f32s(), Array::from(3.0f64)),
        "grad_of_python_float" => {
            rjax::grad(|x: &Array| x * x * 0.5 + jnp::sin(x))(&jnp::asarray(0.3))
        }
        "jit_of_python_float" => third(1.0),
        "uniform_default" => random::uniform(&random::key(0), [3]),
        "normal_f64" => random::normal_dtype(&random::key(1), [3], DType::F64),
        "randint_default" => random::randint(&random::key(2), [4], 0, 10),
        "one_hot_default" => nn::one_hot(&jnp::array(vec![0i32, 2]), 3),
        other => panic!("no rjax program for the case {other}"),
    }
}

/// The result's dtype, weak flag and values against JAX's in one mode.
fn check(name: &str, mode: &str, want: &Value, rtol: f64) -> Result<(), String> {
    let x64 = mode == "x64";
    let got = config::with_x64(x64, || program(name));
    let dtype = want["dtype"].as_str().unwrap();
    let weak = want["weak"].as_bool().unwrap();
    if got.dtype().name() != dtype || got.is_weak() != weak {
        return Err(format!(
            "{name} ({mode}): rjax gives {}{}, JAX {dtype}{}",
            got.dtype(),
            if got.is_weak() { " (weak)" } else { "" },
            if weak { " (weak)" } else { "" }
        ));
    }
    let got_values: Vec<f64> = got.astype_values().map_err(|e| format!("{name} ({mode}): {e}"))?;
    let want_values: Vec<f64> = want["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().or_else(|| v.as_bool().map(f64::from)).unwrap())
        .collect();
    // JSON's decimal floats read back to within an ulp.
    let rtol = rtol.max(2.0 * f64::EPSILON);
    let close = got_values.len() == want_values.len()
        && got_values.iter().zip(&want_values).all(|(g, w)| (g - w).abs() <= rtol * w.abs());
    if !close {
        return Err(format!("{name} ({mode}): rjax gives {got_values:?}, JAX {want_values:?}"));
    }
    Ok(())
}

/// Reads any real array's values as `f64` (exact for every dtype the cases produce).
trait AstypeValues {
    fn astype_values(&self) -> Result<Vec<f64>, rjax::Error>;
}

impl AstypeValues for Array {
    fn astype_values(&self) -> Result<Vec<f64>, rjax::Error> {
        config::with_x64(true, || self.astype(DType::F64).to_vec::<f64>())
    }
}

/// The programs whose result has a default type. rjax keeps the 32-bit defaults with x64 on
/// (JAX widens them to 64 bits), so with x64 on these give JAX's result without x64.
const DEFAULT_TYPED: [&str; 13] = [
    "arange_int",
    "arange_float",
    "zeros_default",
    "ones_default",
    "eye_default",
    "linspace_default",
    "i32_plus_float_scalar",
    "scalar_times_scalar",
    "jit_of_python_float",
    "sum_i8",
    "uniform_default",
    "randint_default",
    "one_hot_default",
];

#[test]
fn every_program_gives_jaxs_dtype_and_values_in_both_modes() {
    let mut failures = Vec::new();
    for (name, modes) in cases()["cases"].as_object().unwrap() {
        for mode in ["default", "x64"] {
            let want = if mode == "x64" && DEFAULT_TYPED.contains(&name.as_str()) {
                &modes["default"]
            } else {
                &modes[mode]
            };
            // The gradient of a weak `f64` is a weak `float64` as in JAX, but the products of
            // weak scalars inside are computed in the default (32-bit) type.
            let rtol = if mode == "x64" && name == "grad_of_python_float" { 1e-7 } else { 0.0 };
            if let Err(e) = check(name, mode, want, rtol) {
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_mode_is_per_thread_inside_with_x64_and_restored_after_a_panic() {
    let before = config::x64_enabled();
    let inner = std::panic::catch_unwind(|| config::with_x64(!before, || panic!("inside")));
    assert!(inner.is_err());
    assert_eq!(config::x64_enabled(), before);
    config::with_x64(true, || {
        assert!(config::x64_enabled());
        let other = std::thread::spawn(config::x64_enabled).join().unwrap();
        assert_eq!(other, before, "another thread keeps the process's mode");
        config::with_x64(false, || assert!(!config::x64_enabled()));
        assert!(config::x64_enabled());
    });
}

#[jit]
fn widened(x: &Array) -> Array {
    x.astype(DType::F64) + 1
}

#[test]
fn a_jitted_function_compiles_once_per_mode() {
    let x = Array::from_shape_vec([2], vec![1.0f32, 2.0]);
    let off = config::with_x64(false, || widened(&x));
    let on = config::with_x64(true, || widened(&x));
    assert_eq!((off.dtype(), on.dtype()), (DType::F32, DType::F64));
    assert_eq!(widened::cache_info().traces, 2);
    config::with_x64(true, || widened(&x));
    assert_eq!(widened::cache_info().traces, 2, "each mode's plan is cached");
}

#[pmap(axis_name = "i")]
fn widened_on_devices(x: &Array) -> Array {
    x.astype(DType::F64) + 0.5
}

#[test]
fn pmap_devices_compute_in_the_callers_mode() {
    rjax::device::set_cpu_device_count(2).unwrap();
    let x = Array::from_shape_vec([2], vec![1i32, 2]);
    let on = config::with_x64(true, || widened_on_devices(&x));
    assert_eq!(on.dtype(), DType::F64);
    let off = config::with_x64(false, || widened_on_devices(&x));
    assert_eq!(off.dtype(), DType::F32);
}

#[test]
fn reading_64_bit_values_with_x64_off_says_how_to_turn_it_on() {
    let x = config::with_x64(false, || Array::from(0.25f64));
    assert_eq!(x.dtype(), DType::F32);
    let text = config::with_x64(false, || x.to_vec::<f64>().unwrap_err().to_string());
    assert!(text.contains("64-bit types are off") && text.contains("enable_x64"), "{text}");
    assert_eq!(x.item::<f32>().unwrap(), 0.25);
}

#[vmap(in_axes = 0)]
fn unique_rows(x: &Array) -> Array {
    jnp::unique_size(x, 3)
}

#[test]
fn batching_rules_keep_their_64_bit_index_arithmetic_with_x64_off() {
    // A gather with batched indices offsets them in int64, which the 32-bit mode must not
    // canonicalize: its constants and the offsets would disagree (`jnp.unique(x, size=3)`
    // under `vmap`, as JAX gives it).
    let x = config::with_x64(false, || Array::from_shape_vec([2, 3], vec![1u32, 3, 3, 2, 2, 0]));
    let got = config::with_x64(false, || unique_rows(&x));
    assert_eq!(got.dtype(), DType::U32);
    assert_eq!(got.to_vec::<u32>().unwrap(), vec![1, 3, 1, 0, 2, 0]);
}
