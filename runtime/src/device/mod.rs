//! Devices and placement.
//!
//! The host has `n` virtual CPU devices, as JAX's `--xla_force_host_platform_device_count`
//! gives: `RJAX_CPU_DEVICES=n` in the environment, or [`set_cpu_device_count`] before the
//! first use, sets `n` (default 1). They share the host's memory, so placing an array on one
//! ([`device_put`]) copies nothing; what they are for is `pmap`, which runs one shard of its
//! function per device, each on its own thread (see [`spmd`]).
//!
//! With the `gpu` feature, every adapter wgpu finds (Vulkan, Metal or DX12; Mesa's lavapipe
//! counts, so a machine without a GPU still has one) is a device `gpu:i` ([`gpu_devices`]);
//! `RJAX_GPU_DEVICES=n` presents each adapter as `n` devices, each opened as its own logical
//! device with its own memory, for `pmap` over several GPUs on one.
//! Arrays are made on `cpu:0`; [`device_put`] moves them, and an operation runs where its
//! operands live: operands committed to different devices are an error naming both, never an
//! implicit copy. Reading values (`to_vec`, `item`, printing) copies to the host.
//!
//! With the `distributed` feature, processes started by `mpirun` join into one set of global
//! devices (the `distributed` module), which a top-level `pmap` spans.
//!
//! ```
//! use rjax_runtime::{device, jnp};
//! let cpus = device::cpu_devices();
//! let x = device::device_put(&jnp::ones([2]), cpus[cpus.len() - 1]);
//! assert_eq!(x.device(), cpus[cpus.len() - 1]);
//! ```

#[cfg(feature = "distributed")]
pub mod distributed;
pub mod spmd;

use std::fmt;
use std::sync::OnceLock;

use crate::array::Array;
use crate::error::Error;

/// Where an array's buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Virtual CPU device `id` of the host.
    Cpu(usize),
    /// GPU `id`, in the order [`gpu_devices`] lists them (feature `gpu`, through wgpu).
    Gpu(usize),
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
            Device::Cpu(id) | Device::Gpu(id) => id,
        }
    }

    /// The platform the device belongs to: `"cpu"` or `"gpu"` (JAX's `device.platform`).
    pub fn platform(self) -> &'static str {
        match self {
            Device::Cpu(_) => "cpu",
            Device::Gpu(_) => "gpu",
        }
    }

    /// Whether the device is the host's (its arrays hold their values in host memory).
    pub fn is_host(self) -> bool {
        matches!(self, Device::Cpu(_))
    }
}

/// `cpu:0`, `gpu:1`: the platform and the index.
impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.platform(), self.id())
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

/// Whether the number of virtual CPU devices is already fixed.
#[cfg(feature = "distributed")]
fn device_count_is_fixed() -> bool {
    CPU_DEVICES.get().is_some()
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

/// The virtual CPU devices, `cpu:0` to `cpu:{n-1}` (`jax.devices("cpu")`).
pub fn cpu_devices() -> Vec<Device> {
    (0..device_count()).map(Device::Cpu).collect()
}

/// The GPUs (`jax.devices("gpu")`): every adapter wgpu finds, discrete GPUs first, then
/// integrated, virtual and CPU-emulated ones (Mesa's lavapipe).
///
/// Errors say why there are none: rjax was built without the `gpu` feature, no Vulkan loader
/// or driver is installed, or no adapter was found.
pub fn gpu_devices() -> Result<Vec<Device>, Error> {
    crate::backend::gpu_count().map(|n| (0..n).map(Device::Gpu).collect())
}

/// The devices of the default platform (`jax.devices()`).
///
/// `RJAX_PLATFORMS` chooses, like `JAX_PLATFORMS`: a comma-separated list of `cpu` and `gpu`
/// in order of preference, the first that has devices being the default; a platform named
/// there that cannot be used is an error. Unset, it is `gpu,cpu` with an unusable GPU
/// platform skipped: accelerators first. Arrays are still made on `cpu:0` whatever the
/// default platform is; [`device_put`] moves them.
///
/// # Panics
/// When `RJAX_PLATFORMS` names an unknown platform or one that cannot be used, with the
/// reason (see [`gpu_devices`]).
pub fn devices() -> Vec<Device> {
    match default_platform() {
        Ok(devices) => devices.clone(),
        Err(e) => panic!("devices: {e}"),
    }
}

/// The default platform's devices, chosen once (see [`devices`]).
fn default_platform() -> &'static Result<Vec<Device>, Error> {
    static DEFAULT: OnceLock<Result<Vec<Device>, Error>> = OnceLock::new();
    DEFAULT.get_or_init(|| {
        let Ok(text) = std::env::var("RJAX_PLATFORMS") else {
            return Ok(gpu_devices().ok().filter(|g| !g.is_empty()).unwrap_or_else(cpu_devices));
        };
        let mut first = None;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let found = match name {
                "cpu" => cpu_devices(),
                "gpu" => gpu_devices()?,
                other => {
                    return Err(Error::Platform {
                        platform: "RJAX_PLATFORMS",
                        problem: format!("unknown platform {other:?} (known: cpu, gpu)"),
                    })
                }
            };
            first.get_or_insert(found);
        }
        first.ok_or_else(|| Error::Platform {
            platform: "RJAX_PLATFORMS",
            problem: format!("{text:?} names no platform (known: cpu, gpu)"),
        })
    })
}

/// `x` placed on `device` (`jax.device_put`), committed to it: an operation on it runs
/// there, and meeting an array committed to another device is an error.
///
/// Virtual CPU devices share memory, so between them only the placement changes. Onto a GPU
/// the values are uploaded, back to a CPU device downloaded, between GPUs they go through the
/// host.
///
/// # Panics
/// When `device` does not exist or the copy fails, with the [`Error`] that
/// [`try_device_put`] returns.
#[track_caller]
pub fn device_put(x: &Array, device: Device) -> Array {
    match try_device_put(x, device) {
        Ok(placed) => placed,
        Err(e) => panic!("device_put: {e}"),
    }
}

/// [`device_put`], returning an error when `device` does not exist or the copy fails (a
/// device out of memory, a lost device).
pub fn try_device_put(x: &Array, device: Device) -> Result<Array, Error> {
    match device {
        Device::Cpu(id) => {
            let n = device_count();
            if id >= n {
                return Err(Error::Device {
                    device,
                    problem: format!(
                        "there is no such device; the host has {n} (set RJAX_CPU_DEVICES for more)"
                    ),
                });
            }
        }
        Device::Gpu(id) => {
            let n = crate::backend::gpu_count()?;
            if id >= n {
                return Err(Error::Device {
                    device,
                    problem: format!("there is no such device; {n} GPUs were found"),
                });
            }
        }
    }
    crate::backend::place(x, device)
}

/// What `device` is (`jax.Device.device_kind`): for a GPU its adapter's name and graphics
/// API (`"llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan)"` for Mesa's lavapipe), `"cpu"` for a
/// host device. Errors when the GPU does not exist.
pub fn device_kind(device: Device) -> Result<String, Error> {
    crate::backend::adapter_name(device)
}

/// What a device's allocator holds (`jax.Device.memory_stats()`), for GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Device buffers created since the device was opened. Freed arrays' buffers are kept
    /// for reuse by later ones of a similar size, so a loop of same-sized operations stops
    /// creating buffers after its first iteration.
    pub buffers_created: u64,
    /// Bytes of buffers held by live arrays and operations in flight.
    pub bytes_in_use: u64,
    /// Bytes of freed buffers kept for reuse.
    pub bytes_cached: u64,
}

/// The allocator's counters for `device`, or `None` for a CPU device (host memory is not
/// tracked this way) or a GPU that does not exist or was never opened.
pub fn memory_stats(device: Device) -> Option<MemoryStats> {
    crate::backend::memory_stats(device)
}

/// How many command submissions an opened GPU has been given: a `#[jit]` call makes one,
/// and one more for each value its control flow reads back. For tests; `None` as for
/// [`memory_stats`].
#[doc(hidden)]
pub fn submissions(device: Device) -> Option<u64> {
    crate::backend::submissions(device)
}

/// Whether a top-level `pmap` spans several processes (the `distributed` feature, after
/// `distributed::initialize` joined more than one).
pub(crate) fn spans_processes() -> bool {
    #[cfg(feature = "distributed")]
    {
        distributed::process_count() > 1
    }
    #[cfg(not(feature = "distributed"))]
    {
        false
    }
}
