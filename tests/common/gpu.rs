//! Helpers for the GPU tests (feature `gpu`): the device, reproducible data, and comparing
//! a function's GPU results with its CPU results.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard};

use rjax::device::{self, device_put, Device};
use rjax::{Array, DType};

/// `gpu:0` and a lock that runs the GPU tests of one binary one at a time (the buffer
/// counters are the device's, and lavapipe uses every core anyway); `None`, having said why,
/// when there is no GPU and `RJAX_REQUIRE_GPU` is not `1`.
pub fn gpu() -> Option<(Device, MutexGuard<'static, ()>)> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    match device::gpu_devices() {
        Ok(gpus) => Some((gpus[0], ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()))),
        Err(e) if std::env::var("RJAX_REQUIRE_GPU").as_deref() == Ok("1") => {
            panic!("RJAX_REQUIRE_GPU=1, but there is no GPU: {e}")
        }
        Err(e) => {
            eprintln!("skipped: no GPU ({e})");
            None
        }
    }
}

/// xorshift64*: reproducible data without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A random array of `shape`: floats in [-4, 4), integers in [-50, 50), bools.
    pub fn array(&mut self, dtype: DType, shape: &[usize]) -> Array {
        let n = shape.iter().product();
        match dtype {
            DType::F32 => Array::from_shape_vec(
                shape,
                (0..n).map(|_| (self.unit() * 8.0 - 4.0) as f32).collect(),
            ),
            DType::F64 => {
                Array::from_shape_vec(shape, (0..n).map(|_| self.unit() * 8.0 - 4.0).collect())
            }
            DType::I32 => {
                Array::from_shape_vec(shape, (0..n).map(|_| self.below(100) as i32 - 50).collect())
            }
            DType::U32 => {
                Array::from_shape_vec(shape, (0..n).map(|_| self.below(100) as u32).collect())
            }
            DType::Bool => {
                Array::from_shape_vec(shape, (0..n).map(|_| self.below(2) == 1).collect())
            }
            other => panic!("Rng::array: no generator for {other}"),
        }
    }
}

/// The text of a caught panic.
pub fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// The panic message of `f`, which must panic.
pub fn panic_of<R>(f: impl FnOnce() -> R) -> String {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => panic_text(&payload),
    }
}

/// Runs `f` on `args` on the host and on copies placed on `gpu`, and checks that every
/// output of the GPU run is on the GPU and equals the host's: bit for bit for integers and
/// bools, within `rel` (relative to the largest magnitude of the host output, or absolute
/// below 1) for floats. `what` names the case in failures.
pub fn assert_matches_cpu(
    what: &str,
    gpu: Device,
    args: &[Array],
    rel: f32,
    f: impl Fn(&[Array]) -> Vec<Array>,
) {
    let want = f(args);
    let placed: Vec<Array> = args.iter().map(|a| device_put(a, gpu)).collect();
    let got = f(&placed);
    assert_eq!(want.len(), got.len(), "{what}: output count");
    for (k, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(g.device(), gpu, "{what}: output {k} is not on {gpu}");
        assert_eq!(w.shape(), g.shape(), "{what}: output {k} shape");
        assert_eq!(w.dtype(), g.dtype(), "{what}: output {k} dtype");
        match w.dtype() {
            DType::F32 => {
                let (w, g) = (w.to_vec::<f32>().unwrap(), g.to_vec::<f32>().unwrap());
                let scale =
                    w.iter().fold(1f32, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
                for (i, (a, b)) in w.iter().zip(&g).enumerate() {
                    let same = a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    assert!(
                        same || (a - b).abs() <= rel * scale,
                        "{what}: output {k} element {i}: cpu {a}, gpu {b}"
                    );
                }
            }
            DType::F64 => {
                let (w, g) = (w.to_vec::<f64>().unwrap(), g.to_vec::<f64>().unwrap());
                let scale =
                    w.iter().fold(1f64, |m, v| if v.is_finite() { m.max(v.abs()) } else { m });
                for (i, (a, b)) in w.iter().zip(&g).enumerate() {
                    let same = a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    assert!(
                        same || (a - b).abs() <= f64::from(rel) * scale,
                        "{what}: output {k} element {i}: cpu {a:e}, gpu {b:e}"
                    );
                }
            }
            DType::I32 => {
                assert_eq!(w.to_vec::<i32>().unwrap(), g.to_vec::<i32>().unwrap(), "{what}")
            }
            DType::U32 => {
                assert_eq!(w.to_vec::<u32>().unwrap(), g.to_vec::<u32>().unwrap(), "{what}")
            }
            DType::Bool => {
                assert_eq!(w.to_vec::<bool>().unwrap(), g.to_vec::<bool>().unwrap(), "{what}")
            }
            other => panic!("{what}: no comparison for {other}"),
        }
    }
}
