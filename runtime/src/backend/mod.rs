//! Backends: the device-neutral interface between arrays and the devices that hold them.
//!
//! An array on the host holds a [`Buffer`] and primitives evaluate on it directly
//! (`exec/cpu`). An array on any other device holds a `DeviceBuffer`, and everything done
//! with it goes through the `Backend` trait: upload, download, and running one
//! elementwise operation ([`ElementwiseOp`]) over operands broadcast by NumPy's rules (see
//! `layout`). The trait and this module name no device kind; each implementation is a
//! folder beside it — today `wgpu/` (feature `gpu`) — so a new backend touches no primitive.
//! `cuda/` (feature `cuda`) is a backend's first half: the CUDA C of every elementwise kernel
//! and fused group, compiled by NVRTC; no CUDA device holds arrays yet.
//!
//! `dispatch` is where an operation meets a device: `primitives::bind` hands it every
//! concrete operation whose operands are not all on the host, and it runs the operation on
//! their device, or panics naming the operation, dtype and device when that device has no
//! kernel for it. Nothing falls back to the host behind the caller's back.
//!
//! This is the first slice of the backend layer of the design: fused groups, library calls
//! and plans for `jit` are not here yet.

#[cfg(feature = "cuda")]
pub(crate) mod cuda;
pub(crate) mod dispatch;
pub(crate) mod layout;
pub mod ops;
#[cfg(feature = "gpu")]
pub(crate) mod wgpu;

use std::any::Any;

use crate::array::Buffer;
use crate::device::{Device, MemoryStats};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::{Aval, BinaryOp, UnaryOp};

pub use ops::{
    ConvWindows, CopyRegion, DeviceOp, ElementwiseGroup, GroupOp, GroupReduction, GroupValue,
    Strided,
};

/// The elementwise operations a backend runs, one kernel each: what a primitive is, as far as
/// a device is concerned (see [`DeviceOp::Elementwise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementwiseOp {
    /// A function of one operand.
    Unary(UnaryOp),
    /// A function of two operands of one dtype.
    Binary(BinaryOp),
    /// `select(pred, on_true, on_false)`.
    Select,
    /// `convert_element_type` to the output's dtype.
    Convert,
}

/// An array's storage in a device's memory: its dtype, element count and device, and the
/// backend's own handle, which goes back to that backend's allocator when dropped.
pub(crate) struct DeviceBuffer {
    dtype: DType,
    len: usize,
    device: Device,
    raw: Box<dyn Any + Send + Sync>,
}

impl DeviceBuffer {
    /// A buffer of `len` elements of `dtype` on `device`, held by the backend as `raw`.
    // Only backends make these, and without a backend feature there is none.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn new(
        device: Device,
        dtype: DType,
        len: usize,
        raw: impl Any + Send + Sync,
    ) -> DeviceBuffer {
        DeviceBuffer { dtype, len, device, raw: Box::new(raw) }
    }

    pub(crate) fn dtype(&self) -> DType {
        self.dtype
    }

    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn device(&self) -> Device {
        self.device
    }

    /// The backend's handle, if it is a `T` (the backend that made it asks).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn raw<T: 'static>(&self) -> Option<&T> {
        self.raw.downcast_ref()
    }
}

/// An operand of a kernel: a buffer on the kernel's device and the shape it has there.
// Read by the backends, of which there is none without a backend feature.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) struct Operand<'a> {
    pub buffer: &'a DeviceBuffer,
    pub shape: &'a [usize],
}

/// What a device offers the runtime.
pub(crate) trait Backend: Send + Sync {
    /// Whether the device has kernels for `dtype` (any dtype can be stored and copied); if
    /// not, why not (no kernels written yet, or an adapter without the feature they need),
    /// naming the dtype and the device.
    fn computes(&self, dtype: DType) -> Result<(), String>;
    /// A copy of `host` in the device's memory.
    fn upload(&self, host: &Buffer) -> Result<DeviceBuffer, Error>;
    /// A copy of `buffer` in host memory (waits for the work that writes it).
    fn download(&self, buffer: &DeviceBuffer) -> Result<Buffer, Error>;
    /// `op` over `operands` (on this device, in dtypes it [`computes`](Backend::computes),
    /// with the shapes the primitive's shape rule checked), into new buffers of `outs`'
    /// dtypes and shapes. It may return before the device has finished. [`DeviceOp::Alias`]
    /// and [`DeviceOp::Composite`] never come here, nor a [`DeviceOp::Matmul`] whose
    /// operands need a transpose first (`dispatch` makes it, with an `Assemble`).
    fn run(
        &self,
        op: &DeviceOp,
        operands: &[Operand<'_>],
        outs: &[Aval],
    ) -> Result<Vec<DeviceBuffer>, Error>;
    /// The allocator's counters.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    fn memory_stats(&self) -> MemoryStats;
    /// Returns once the work submitted so far has finished.
    fn synchronize(&self) -> Result<(), Error>;
    /// Opens a batch: until it is closed, work is recorded for one submission to the
    /// device, made when the batch closes or when a value must be read back before (a
    /// loop's predicate). Batches nest; the outermost one submits.
    fn begin_batch(&self);
    /// Closes the batch [`begin_batch`](Backend::begin_batch) opened.
    fn end_batch(&self);
    /// How many submissions the device has been given (for tests).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    fn submissions(&self) -> u64;
}

/// A batch of `device`'s work (see [`Backend::begin_batch`]), closed when dropped; nothing
/// on the host.
pub(crate) struct Batch(Option<&'static dyn Backend>);

impl Batch {
    pub(crate) fn begin(device: Device) -> Batch {
        let backend = if device.is_host() { None } else { backend(device).ok() };
        if let Some(b) = backend {
            b.begin_batch();
        }
        Batch(backend)
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        if let Some(b) = self.0 {
            b.end_batch();
        }
    }
}

/// The backend running `device`, opened on first use.
pub(crate) fn backend(device: Device) -> Result<&'static dyn Backend, Error> {
    match device {
        Device::Cpu(_) => Err(Error::Device {
            device,
            problem: "host devices hold their arrays in host memory and have no device backend"
                .to_string(),
        }),
        #[cfg(feature = "gpu")]
        Device::Gpu(id) => wgpu::open(id).map(|b| b as &'static dyn Backend),
        #[cfg(not(feature = "gpu"))]
        Device::Gpu(_) => Err(without_gpu()),
    }
}

/// How many GPUs there are (see [`crate::device::gpu_devices`]).
pub(crate) fn gpu_count() -> Result<usize, Error> {
    #[cfg(feature = "gpu")]
    return wgpu::adapter_count();
    #[cfg(not(feature = "gpu"))]
    Err(without_gpu())
}

#[cfg(not(feature = "gpu"))]
fn without_gpu() -> Error {
    Error::Platform {
        platform: "gpu",
        problem: "rjax was built without the `gpu` feature (build with `--features gpu`)"
            .to_string(),
    }
}

/// The adapter's name for a GPU (see [`crate::device::device_kind`]).
pub(crate) fn adapter_name(device: Device) -> Result<String, Error> {
    match device {
        Device::Cpu(_) => Ok("cpu".to_string()),
        #[cfg(feature = "gpu")]
        Device::Gpu(id) => wgpu::adapter_name(id),
        #[cfg(not(feature = "gpu"))]
        Device::Gpu(_) => Err(without_gpu()),
    }
}

/// The allocator counters of an opened GPU (see [`crate::device::memory_stats`]).
pub(crate) fn memory_stats(device: Device) -> Option<MemoryStats> {
    match device {
        Device::Cpu(_) => None,
        #[cfg(feature = "gpu")]
        Device::Gpu(id) => wgpu::opened(id).map(|b| b.memory_stats()),
        #[cfg(not(feature = "gpu"))]
        Device::Gpu(_) => None,
    }
}

/// How many submissions an opened GPU has been given (see [`crate::device::submissions`]).
pub(crate) fn submissions(device: Device) -> Option<u64> {
    match device {
        Device::Cpu(_) => None,
        #[cfg(feature = "gpu")]
        Device::Gpu(id) => wgpu::opened(id).map(|b| b.submissions()),
        #[cfg(not(feature = "gpu"))]
        Device::Gpu(_) => None,
    }
}

pub(crate) use dispatch::place;

/// `names` and every function they call (as `deps` lists them), each after the functions it
/// calls: the order kernel generators emit helper functions in.
#[cfg_attr(not(any(feature = "gpu", feature = "cuda")), allow(dead_code))]
pub(crate) fn in_call_order(
    names: &std::collections::BTreeSet<&'static str>,
    deps: fn(&str) -> &'static [&'static str],
) -> Vec<&'static str> {
    fn visit(
        name: &'static str,
        deps: fn(&str) -> &'static [&'static str],
        out: &mut Vec<&'static str>,
    ) {
        if out.contains(&name) {
            return;
        }
        for dep in deps(name) {
            visit(dep, deps, out);
        }
        out.push(name);
    }
    let mut out = Vec::new();
    for name in names {
        visit(name, deps, &mut out);
    }
    out
}

/// The WGSL compute shader the GPU backend runs for `op` over operands of these dtypes and
/// shapes, giving an output of `out`'s dtype and shape: one shader per operation, dtypes and
/// broadcast pattern, with extents and offsets read from its parameter buffer at run time.
/// For looking at kernels (as `jax.jit(f).lower(x).as_text()` shows XLA's) and for tests.
///
/// # Panics
/// When the shapes do not broadcast to `out`'s or the dtypes have no GPU kernel.
#[cfg(feature = "gpu")]
pub fn elementwise_wgsl(
    op: ElementwiseOp,
    operands: &[(DType, &[usize])],
    out: (DType, &[usize]),
) -> String {
    wgpu::wgsl(op, operands, out)
}

/// The WGSL compute shader the GPU backend runs for a fused group of `#[jit]` (see
/// [`ElementwiseGroup`]) over operands of these dtypes and shapes, broadcast to `shape` (the
/// group's shape, which is its reduction's `shape` when it ends in one).
///
/// # Panics
/// When an operand does not broadcast to `shape` or a dtype has no GPU kernel.
#[cfg(feature = "gpu")]
pub fn fused_wgsl(
    group: &ElementwiseGroup,
    operands: &[(DType, &[usize])],
    shape: &[usize],
) -> String {
    wgpu::fused_wgsl(group, operands, shape)
}

#[cfg(feature = "cuda")]
pub use cuda::CudaArch;

/// The CUDA C kernel the CUDA backend will run for `op` over operands of these dtypes and
/// shapes, giving an output of `out`'s dtype and shape: one `__global__` function,
/// `rjax_kernel`, per operation, dtypes and broadcast pattern, with the element count,
/// extents and strides passed by value.
///
/// # Errors
/// When the shapes do not broadcast to `out`'s, or CUDA has no kernel for the operation on
/// these dtypes (16-bit floats; `digamma` and the Bessel functions), saying which.
#[cfg(feature = "cuda")]
pub fn elementwise_cuda(
    op: ElementwiseOp,
    operands: &[(DType, &[usize])],
    out: (DType, &[usize]),
) -> Result<String, Error> {
    cuda::elementwise_source(op, operands, out)
}

/// The CUDA C kernel of a fused group of `#[jit]` (see [`ElementwiseGroup`]) over operands of
/// these dtypes and shapes, broadcast to `shape`.
///
/// # Errors
/// As [`elementwise_cuda`].
#[cfg(feature = "cuda")]
pub fn fused_cuda(
    group: &ElementwiseGroup,
    operands: &[(DType, &[usize])],
    shape: &[usize],
) -> Result<String, Error> {
    cuda::fused_source(group, operands, shape)
}

/// The CUDA C kernel of [`DeviceOp::Threefry2x32`] over `uint32` operands `key0, key1, x0,
/// x1` of these shapes, broadcast to `shape`: both words of each hash, bit for bit as the host
/// computes them.
///
/// # Errors
/// When an operand does not broadcast to `shape`.
#[cfg(feature = "cuda")]
pub fn threefry_cuda(operands: &[&[usize]], shape: &[usize]) -> Result<String, Error> {
    cuda::threefry_source(operands, shape)
}

/// `source` (CUDA C) compiled by NVRTC into a CUBIN for `arch`, from the process's cache, the
/// disk cache (`RJAX_CACHE_DIR`, else `~/.cache/rjax/cuda`) or the compiler.
///
/// # Errors
/// When NVRTC is not installed (the message says how to get it), or the source does not
/// compile (the message holds the compiler's log and the source).
#[cfg(feature = "cuda")]
pub fn compile_cuda(source: &str, arch: CudaArch) -> Result<std::sync::Arc<Vec<u8>>, Error> {
    cuda::compile(source, arch)
}
