//! Devices and placement.
//!
//! The host has `n` virtual CPU devices, as JAX's `--xla_force_host_platform_device_count`
//! gives: `RJAX_CPU_DEVICES=n` in the environment, or [`set_cpu_device_count`] before the
//! first use, sets `n` (default 1). They share the host's memory, so placing an array on one
//! ([`device_put`]) copies nothing; what they are for is `pmap`, which runs one shard of its
//! function per device, each on its own thread (see [`spmd`]). A GPU backend adds devices of
//! its own kind here, and its collectives behind the same [`spmd`] interface.
//!
//! ```
//! use rjax_runtime::{device, jnp};
//! let devices = device::devices();
//! assert!(!devices.is_empty());
//! let x = device::device_put(&jnp::ones([2]), devices[devices.len() - 1]);
//! assert_eq!(x.device(), devices[devices.len() - 1]);
//! ```

pub mod spmd;

use std::fmt;
use std::sync::OnceLock;

use crate::array::Array;

/// Where an array's buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Virtual CPU device `id` of the host.
    Cpu(usize),
}

/// `cpu:0`, where arrays are made.
impl Default for Device {
    fn default() -> Self {
        Device::Cpu(0)
    }
}

impl Device {
    /// The device's index among devices of its kind.
    pub fn id(self) -> usize {
        match self {
            Device::Cpu(id) => id,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cpu:{}", self.id())
    }
}

static CPU_DEVICES: OnceLock<usize> = OnceLock::new();

/// The number of virtual CPU devices: `RJAX_CPU_DEVICES`, or what [`set_cpu_device_count`]
/// set, or 1. Fixed at the first call.
pub fn device_count() -> usize {
    *CPU_DEVICES.get_or_init(|| {
        let Ok(text) = std::env::var("RJAX_CPU_DEVICES") else { return 1 };
        match text.trim().parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => panic!("RJAX_CPU_DEVICES must be a positive integer, got {text:?}"),
        }
    })
}

/// Sets the number of virtual CPU devices. Must come before anything asks for the devices
/// (the count is fixed at first use, as JAX's backend is), and overrides `RJAX_CPU_DEVICES`.
///
/// Returns an error naming the count in use when it is too late to change it.
pub fn set_cpu_device_count(n: usize) -> Result<(), String> {
    assert!(n >= 1, "set_cpu_device_count: there must be at least one device");
    match CPU_DEVICES.set(n) {
        Ok(()) => Ok(()),
        Err(_) if device_count() == n => Ok(()),
        Err(_) => Err(format!(
            "set_cpu_device_count({n}): the device count is already fixed at {} (set it before \
             the first use of devices or pmap)",
            device_count()
        )),
    }
}

/// All devices (`jax.devices()`).
pub fn devices() -> Vec<Device> {
    (0..device_count()).map(Device::Cpu).collect()
}

/// `x` placed on `device` (`jax.device_put`). Virtual CPU devices share memory: the buffer
/// is shared, only the placement changes.
///
/// # Panics
/// When `device` does not exist.
pub fn device_put(x: &Array, device: Device) -> Array {
    let n = device_count();
    if device.id() >= n {
        panic!("device_put: there is no device {device}; the host has {n} (set RJAX_CPU_DEVICES for more)");
    }
    x.on_device(device)
}
