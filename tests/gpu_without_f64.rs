//! An adapter without `SHADER_F64` (as Apple's GPUs), made here by turning the feature off
//! with `RJAX_GPU_FEATURES_OFF` before the device opens: float64 arrays can be placed there
//! and read back, and computing with them is an error naming the op, the dtype and the
//! adapter.
//! (Its own test binary: the feature list is read once, when the device is opened.)
#![cfg(feature = "gpu")]

use rjax::device::{self, device_put, Device};
use rjax::prelude::*;

mod common;
use common::gpu::{gpu, panic_of};

#[test]
fn float64_without_shader_f64_names_the_op_dtype_and_adapter() {
    let _x64 = rjax::config::x64_scope(true);
    std::env::set_var("RJAX_GPU_FEATURES_OFF", "shader-f64");
    let Some((gpu, _lock)) = gpu() else { return };
    let kind = device::device_kind(gpu).unwrap();
    let adapter = kind.rsplit_once(" (").map_or(kind.as_str(), |(name, _)| name);
    let x = device_put(&jnp::array([1.0f64, 2.0, 3.0]), gpu);
    assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
    let msg = panic_of(|| (&x * 2.0).to_vec::<f64>());
    for part in ["mul", "float64", "gpu:0", "SHADER_F64", adapter] {
        assert!(msg.contains(part), "{part:?} missing from: {msg}");
    }
    let msg = panic_of(|| x.sum().to_vec::<f64>());
    assert!(msg.contains("reduce_sum") && msg.contains("SHADER_F64"), "{msg}");
    // The explicit way: move, then compute.
    assert_eq!(device_put(&x, Device::Cpu(0)).sum().item::<f64>().unwrap(), 6.0);
    // Float32 is unaffected.
    let y = device_put(&jnp::array([1.0f32, 2.0]), gpu);
    assert_eq!((&y * 2.0).to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
}
