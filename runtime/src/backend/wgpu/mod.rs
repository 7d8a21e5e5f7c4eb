//! The wgpu backend (feature `gpu`): arrays in the memory of any adapter wgpu finds (Vulkan,
//! Metal, DX12; Mesa's lavapipe runs Vulkan on the CPU), elementwise operations as generated
//! WGSL compute shaders, strided copies ([`assemble`]), matrix products ([`matmul`]) and the
//! threefry hash ([`threefry`]) as fixed ones.
//!
//! Each adapter is opened once, on first use: its device and queue are requested with the
//! adapter's own limits (wgpu asks for fewer by default: 8 storage buffers, 128 MiB
//! bindings). Storage comes from a caching allocator ([`alloc`]); shaders are generated per
//! operation, dtypes and broadcast pattern ([`codegen`]) and their pipelines cached by their
//! WGSL text. A launch records all its dispatches into one submission and returns without
//! waiting; inside a batch (a `#[jit]` call) every launch is recorded into the batch's one
//! submission, made when it closes. Reading values back submits the work recorded before
//! them and waits for it.
//!
//! An output larger than one binding (128 MiB on lavapipe, `max_storage_buffer_binding_size`
//! in general) is computed in windows, each binding the part of every operand it reads (see
//! [`Layout::windows`]).
//! Reductions (not scans yet) instead bind an operand or output larger than one binding as
//! several bindings of one chunk each ([`codegen::chunked_binding`]), so one kernel reads it
//! all.

mod alloc;
mod assemble;
mod codegen;
mod conv;
mod indexing;
mod math;
mod math64;
mod math64_special;
mod math64_trig;
mod matmul;
mod reduce;
mod threefry;

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};

use alloc::{Kind, Pool, Pooled};

use super::layout::{Access, Layout};
use super::{Backend, DeviceBuffer, DeviceOp, ElementwiseOp, Operand};
use crate::array::Buffer;
use crate::device::{Device, MemoryStats};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::Aval;

/// The adapters found, in device order, each with its backend once opened.
struct Adapters {
    found: Vec<Found>,
}

struct Found {
    adapter: wgpu::Adapter,
    opened: OnceLock<Result<WgpuBackend, Error>>,
}

/// The adapters, looked for once per process.
static ADAPTERS: OnceLock<Result<Adapters, Error>> = OnceLock::new();

fn adapters() -> Result<&'static Adapters, Error> {
    ADAPTERS.get_or_init(find_adapters).as_ref().map_err(Clone::clone)
}

fn find_adapters() -> Result<Adapters, Error> {
    let backends = wgpu::Backends::PRIMARY.with_env();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        // No validation layers (they are slow and usually absent) unless WGPU_* asks.
        flags: wgpu::InstanceFlags::empty().with_env(),
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let mut found = pollster::block_on(instance.enumerate_adapters(backends));
    // Real GPUs before emulated ones, so gpu:0 is the fastest there is.
    found.sort_by_key(|a| match a.get_info().device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    });
    if found.is_empty() {
        return Err(Error::Platform { platform: "gpu", problem: no_adapter_reason() });
    }
    let per_adapter = virtual_devices_per_adapter()?;
    let found = found.into_iter().flat_map(|adapter| vec![adapter; per_adapter]);
    let found = found.map(|adapter| Found { adapter, opened: OnceLock::new() });
    Ok(Adapters { found: found.collect() })
}

/// `RJAX_GPU_DEVICES`: how many devices each adapter is presented as (default 1). Each is
/// opened as its own logical device, with its own memory and queue, so that `pmap` over
/// several GPUs can be tried, and tested, with one.
fn virtual_devices_per_adapter() -> Result<usize, Error> {
    let Ok(text) = std::env::var("RJAX_GPU_DEVICES") else { return Ok(1) };
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Error::Platform {
            platform: "gpu",
            problem: format!("RJAX_GPU_DEVICES must be a positive integer, got {text:?}"),
        }),
    }
}

/// Why wgpu found no adapter, as far as can be told without loading anything.
fn no_adapter_reason() -> String {
    let hint = "on Linux without a GPU, Mesa's lavapipe gives a Vulkan device on the CPU \
                (apt-get install mesa-vulkan-drivers libvulkan1)";
    if cfg!(target_os = "linux") && !vulkan_loader_installed() {
        return format!(
            "no Vulkan loader (libvulkan.so.1) was found, so wgpu has no Vulkan adapter; {hint}"
        );
    }
    format!(
        "wgpu found no Vulkan, Metal or DX12 adapter (no driver for a device here, or \
         WGPU_BACKEND rules them out); {hint}"
    )
}

/// Whether `libvulkan.so.1` is in one of the usual library directories or `LD_LIBRARY_PATH`.
fn vulkan_loader_installed() -> bool {
    let mut dirs: Vec<std::path::PathBuf> = std::env::var_os("LD_LIBRARY_PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    let arch = std::env::consts::ARCH;
    for d in ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"] {
        dirs.push(d.into());
        dirs.push(format!("{d}/{arch}-linux-gnu").into());
    }
    dirs.iter().any(|d| d.join("libvulkan.so.1").exists())
}

/// How many adapters there are.
pub(super) fn adapter_count() -> Result<usize, Error> {
    adapters().map(|a| a.found.len())
}

/// The name of `gpu:{id}`'s adapter, without opening it.
pub(super) fn adapter_name(id: usize) -> Result<String, Error> {
    let adapters = adapters()?;
    let found = adapters.found.get(id).ok_or_else(|| Error::Device {
        device: Device::Gpu(id),
        problem: format!("there is no such device; {} GPUs were found", adapters.found.len()),
    })?;
    let info = found.adapter.get_info();
    Ok(format!("{} ({:?})", info.name, info.backend))
}

/// The backend of `gpu:{id}`, opening it on first use.
pub(super) fn open(id: usize) -> Result<&'static WgpuBackend, Error> {
    let adapters = adapters()?;
    let found = adapters.found.get(id).ok_or_else(|| Error::Device {
        device: Device::Gpu(id),
        problem: format!("there is no such device; {} GPUs were found", adapters.found.len()),
    })?;
    found.opened.get_or_init(|| WgpuBackend::new(id, &found.adapter)).as_ref().map_err(Clone::clone)
}

/// The backend of `gpu:{id}` if it has been opened.
pub(super) fn opened(id: usize) -> Option<&'static WgpuBackend> {
    let adapters = ADAPTERS.get()?.as_ref().ok()?;
    adapters.found.get(id)?.opened.get()?.as_ref().ok()
}

/// The shader [`WgpuBackend::elementwise`] runs (see [`super::elementwise_wgsl`]).
pub(super) fn wgsl(
    op: ElementwiseOp,
    operands: &[(DType, &[usize])],
    out: (DType, &[usize]),
) -> String {
    let shapes: Vec<&[usize]> = operands.iter().map(|(_, s)| *s).collect();
    for (dtype, shape) in operands.iter().copied().chain([out]) {
        assert!(codegen::computes(dtype), "elementwise_wgsl: no GPU kernel for {dtype}");
        assert!(
            crate::shape::broadcast_shapes(shape, out.1).as_deref() == Some(out.1),
            "elementwise_wgsl: {shape:?} does not broadcast to {:?}",
            out.1
        );
    }
    let layout = Layout::new(out.1, &shapes);
    let kernel = codegen::Kernel {
        op,
        inputs: operands.iter().zip(&layout.operands).map(|((d, _), a)| (*d, a)).collect(),
        out: out.0,
        rank: layout.dims.len(),
    };
    codegen::elementwise(&kernel)
}

/// The shader [`WgpuBackend::fused`] runs (see [`super::fused_wgsl`]).
pub(super) fn fused_wgsl(
    group: &super::ElementwiseGroup,
    operands: &[(DType, &[usize])],
    shape: &[usize],
) -> String {
    let shapes: Vec<&[usize]> = operands.iter().map(|(_, s)| *s).collect();
    for (dtype, s) in operands {
        assert!(codegen::computes(*dtype), "fused_wgsl: no GPU kernel for {dtype}");
        assert!(
            crate::shape::broadcast_shapes(s, shape).as_deref() == Some(shape),
            "fused_wgsl: {s:?} does not broadcast to {shape:?}"
        );
    }
    if let Some(r) = &group.reduction {
        assert_eq!(r.shape, shape, "fused_wgsl: the reduction's shape is the group's");
        return reduce::fused_fold_source(group, operands)
            .unwrap_or_else(|e| panic!("fused_wgsl: {e}"));
    }
    let layout = Layout::new(shape, &shapes);
    let inputs: Vec<(DType, &Access)> =
        operands.iter().zip(&layout.operands).map(|((d, _), a)| (*d, a)).collect();
    codegen::fused(group, &inputs, layout.dims.len())
}

/// The optional features kernels use when the adapter has them: float64 arithmetic (with
/// 64-bit integers, which `frexp` of an f64 gives) and float16 arithmetic in shaders.
const WANTED: wgpu::Features = wgpu::Features::SHADER_F64
    .union(wgpu::Features::SHADER_INT64)
    .union(wgpu::Features::SHADER_F16);

/// `RJAX_GPU_FEATURES_OFF`: adapter features not to use even where present, as a
/// comma-separated list of `shader-f64` and `shader-f16`, so that a program can be tried as
/// it would run on an adapter without them (Apple's GPUs have no float64).
fn features_turned_off() -> Result<wgpu::Features, Error> {
    let Ok(text) = std::env::var("RJAX_GPU_FEATURES_OFF") else {
        return Ok(wgpu::Features::empty());
    };
    let mut off = wgpu::Features::empty();
    for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        off |= match name {
            "shader-f64" => wgpu::Features::SHADER_F64,
            "shader-f16" => wgpu::Features::SHADER_F16,
            _ => {
                return Err(Error::Platform {
                    platform: "gpu",
                    problem: format!(
                        "RJAX_GPU_FEATURES_OFF lists {name:?}; it takes shader-f64 and shader-f16"
                    ),
                })
            }
        };
    }
    Ok(off)
}

/// A compiled kernel and the layout of its bindings.
struct Pipeline {
    pipeline: wgpu::ComputePipeline,
    bindings: wgpu::BindGroupLayout,
}

/// One opened adapter.
pub(crate) struct WgpuBackend {
    id: Device,
    name: String,
    device: wgpu::Device,
    queue: wgpu::Queue,
    limits: wgpu::Limits,
    /// The optional features opened (those of [`WANTED`] the adapter has).
    features: wgpu::Features,
    pool: Arc<Pool>,
    /// Compiled kernels by their WGSL.
    pipelines: Mutex<HashMap<String, Arc<Pipeline>>>,
    /// The work recorded for one submission, while a batch is open.
    recording: Mutex<Recording>,
    /// Command buffers submitted to the queue so far.
    submissions: AtomicU64,
}

/// Open batches (see [`Backend::begin_batch`]) and the commands they have recorded.
#[derive(Default)]
struct Recording {
    depth: usize,
    encoder: Option<wgpu::CommandEncoder>,
}

impl WgpuBackend {
    fn new(index: usize, adapter: &wgpu::Adapter) -> Result<WgpuBackend, Error> {
        let id = Device::Gpu(index);
        let info = adapter.get_info();
        let limits = adapter.limits();
        let features = adapter.features() & WANTED & !features_turned_off()?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("rjax"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| Error::Device {
            device: id,
            problem: format!("opening adapter {:?} ({:?}) failed: {e}", info.name, info.backend),
        })?;
        let pool = Pool::new(device.clone(), id, limits.max_buffer_size);
        Ok(WgpuBackend {
            id,
            name: info.name,
            device,
            queue,
            limits,
            features,
            pool,
            pipelines: Mutex::new(HashMap::new()),
            recording: Mutex::new(Recording::default()),
            submissions: AtomicU64::new(0),
        })
    }

    /// The pipeline of `wgsl`, compiled on first use.
    fn pipeline(&self, wgsl: &str) -> Arc<Pipeline> {
        if let Some(p) = self.pipelines.lock().unwrap_or_else(|e| e.into_inner()).get(wgsl) {
            return p.clone();
        }
        // A shader that does not compile is a bug here, not the caller's: say which.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("rjax elementwise"),
            source: wgpu::ShaderSource::Wgsl(wgsl.into()),
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("rjax elementwise"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            panic!("a generated kernel was rejected by {} ({}): {e}\n{wgsl}", self.id, self.name);
        }
        let bindings = pipeline.get_bind_group_layout(0);
        let compiled = Arc::new(Pipeline { pipeline, bindings });
        let mut cache = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        cache.entry(wgsl.to_string()).or_insert(compiled).clone()
    }

    /// The most elements of `element` bytes a window may span in one binding, keeping room
    /// to start the binding at an aligned offset before the first.
    fn window_elements(&self, element: u64) -> usize {
        let binding = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        let align = u64::from(self.limits.min_storage_buffer_offset_alignment);
        usize::try_from((binding - align) / element).unwrap_or(usize::MAX)
    }

    /// Records commands with `encode`: into the open batch's encoder, or into one submitted
    /// at once when no batch is open.
    fn encode(&self, encode: impl FnOnce(&mut wgpu::CommandEncoder)) {
        let mut recording = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        if recording.depth > 0 {
            let encoder = recording
                .encoder
                .get_or_insert_with(|| self.device.create_command_encoder(&Default::default()));
            encode(encoder);
            return;
        }
        drop(recording);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encode(&mut encoder);
        self.submit(encoder);
    }

    /// Submits the commands recorded so far, with `encode`'s after them, as one submission.
    fn flush(&self, encode: impl FnOnce(&mut wgpu::CommandEncoder)) {
        let mut recording = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        let mut encoder = recording
            .encoder
            .take()
            .unwrap_or_else(|| self.device.create_command_encoder(&Default::default()));
        encode(&mut encoder);
        self.submit(encoder);
        // What the submitted work freed may be written again; a batch still open holds on.
        self.pool.hold(recording.depth > 0);
    }

    fn submit(&self, encoder: wgpu::CommandEncoder) {
        self.queue.submit([encoder.finish()]);
        self.submissions.fetch_add(1, Ordering::Relaxed);
    }

    /// Bytes of one chunk of a buffer bound in chunks: the most one binding holds, in whole
    /// steps of the offset alignment, so each chunk's binding starts aligned.
    fn chunk_bytes(&self) -> u64 {
        let binding = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        let align = u64::from(self.limits.min_storage_buffer_offset_alignment);
        binding / align * align
    }

    /// How a kernel reads `len` elements of `dtype` bound in chunks.
    fn chunks(&self, dtype: DType, len: usize) -> Chunks {
        let bytes = stored_bytes(dtype, len);
        let element = stored_bytes(dtype, 1);
        Chunks {
            count: bytes.div_ceil(self.chunk_bytes()).max(1) as usize,
            elements: self.chunk_bytes() / element,
        }
    }

    /// Waits for the work submitted so far.
    fn wait(&self) -> Result<(), Error> {
        self.device.poll(wgpu::PollType::wait_indefinitely()).map(|_| ()).map_err(|e| {
            Error::Device {
                device: self.id,
                problem: format!("waiting for the device failed: {e}"),
            }
        })
    }
}

/// Bytes a device buffer of `len` elements of `dtype` holds: bool is stored as `u32`, and
/// copies move multiples of 4 bytes.
fn stored_bytes(dtype: DType, len: usize) -> u64 {
    (len as u64 * element_bytes(dtype)).div_ceil(4) * 4
}

/// Bytes of one stored element of `dtype`.
fn element_bytes(dtype: DType) -> u64 {
    if dtype == DType::Bool {
        4
    } else {
        dtype.size_of() as u64
    }
}

/// Writes the bytes of `host` as the device stores them into `view` (the stored size, padding
/// included).
fn write_host(host: &Buffer, mut view: wgpu::QueueWriteBufferView) {
    let expanded: Vec<u32>;
    let bytes: &[u8] = match host {
        Buffer::Bool(v) => {
            expanded = v.iter().map(|&b| u32::from(b)).collect();
            bytemuck::cast_slice(&expanded)
        }
        Buffer::I8(v) => bytemuck::cast_slice(v),
        Buffer::I16(v) => bytemuck::cast_slice(v),
        Buffer::I32(v) => bytemuck::cast_slice(v),
        Buffer::I64(v) => bytemuck::cast_slice(v),
        Buffer::U8(v) => v,
        Buffer::U16(v) => bytemuck::cast_slice(v),
        Buffer::U32(v) => bytemuck::cast_slice(v),
        Buffer::U64(v) => bytemuck::cast_slice(v),
        Buffer::F16(v) => bytemuck::cast_slice(v),
        Buffer::BF16(v) => bytemuck::cast_slice(v),
        Buffer::F32(v) => bytemuck::cast_slice(v),
        Buffer::F64(v) => bytemuck::cast_slice(v),
        Buffer::C64(_) | Buffer::C128(_) => unreachable!("`upload` refuses complex buffers"),
    };
    view.slice(..bytes.len()).copy_from_slice(bytes);
    view.slice(bytes.len()..).fill(0);
}

/// `len` elements of `dtype` from the device's bytes.
fn read_host(dtype: DType, len: usize, src: &[u8]) -> Buffer {
    if dtype == DType::Bool {
        return Buffer::Bool(src.chunks_exact(4).take(len).map(|c| c != [0; 4]).collect());
    }
    let b = &src[..len * dtype.size_of()];
    match dtype {
        DType::I8 => Buffer::I8(bytemuck::pod_collect_to_vec(b)),
        DType::I16 => Buffer::I16(bytemuck::pod_collect_to_vec(b)),
        DType::I32 => Buffer::I32(bytemuck::pod_collect_to_vec(b)),
        DType::I64 => Buffer::I64(bytemuck::pod_collect_to_vec(b)),
        DType::U8 => Buffer::U8(b.to_vec()),
        DType::U16 => Buffer::U16(bytemuck::pod_collect_to_vec(b)),
        DType::U32 => Buffer::U32(bytemuck::pod_collect_to_vec(b)),
        DType::U64 => Buffer::U64(bytemuck::pod_collect_to_vec(b)),
        DType::F16 => Buffer::F16(bytemuck::pod_collect_to_vec(b)),
        DType::BF16 => Buffer::BF16(bytemuck::pod_collect_to_vec(b)),
        DType::F32 => Buffer::F32(bytemuck::pod_collect_to_vec(b)),
        DType::F64 => Buffer::F64(bytemuck::pod_collect_to_vec(b)),
        DType::Bool => unreachable!("handled above"),
        DType::C64 | DType::C128 => unreachable!("`upload` refuses complex buffers"),
    }
}

/// A buffer bound to a kernel: the pooled buffer, the bytes of it the kernel sees, and
/// whether the kernel reads it in chunks (see [`codegen::chunked_binding`]).
pub(super) struct Bound<'a> {
    buffer: &'a wgpu::Buffer,
    bytes: u64,
    chunked: bool,
}

impl<'a> Bound<'a> {
    /// The stored elements of an array's buffer.
    fn array(buffer: &'a DeviceBuffer) -> Bound<'a> {
        let pooled: &Pooled = buffer.raw().expect("a GPU array holds a pooled wgpu buffer");
        Bound { buffer: pooled, bytes: stored_bytes(buffer.dtype(), buffer.len()), chunked: false }
    }

    /// The first `len` elements of `dtype` of a new buffer.
    fn new(buffer: &'a Pooled, dtype: DType, len: usize) -> Bound<'a> {
        Bound { buffer, bytes: stored_bytes(dtype, len), chunked: false }
    }

    /// The same, bound as [`WgpuBackend::chunks`] consecutive bindings of one chunk each.
    fn in_chunks(self) -> Bound<'a> {
        Bound { chunked: true, ..self }
    }
}

/// How a kernel reads a buffer bound in chunks: how many, and the elements of each.
pub(super) struct Chunks {
    pub count: usize,
    pub elements: u64,
}

impl WgpuBackend {
    /// A new buffer for `len` elements of `dtype`, for `op`'s result.
    fn output(&self, dtype: DType, len: usize, op: &str) -> Result<Pooled, Error> {
        self.pool.take(Kind::Storage, stored_bytes(dtype, len), op)
    }

    /// Runs `wgsl` once over `invocations` invocations, laid out in workgroups of
    /// [`codegen::WORKGROUP`] over x and y (the kernel numbers them
    /// `(wg.y * groups.x + wg.x) * WORKGROUP + lane`): binding 0 holds `params`, bindings
    /// 1.. the `buffers` in order. Every buffer must fit one binding; `op` names the
    /// operation when one does not. Returns once the work is recorded (see `encode`).
    fn launch(
        &self,
        op: &str,
        wgsl: &str,
        params: &[u32],
        buffers: &[Bound<'_>],
        invocations: usize,
    ) -> Result<(), Error> {
        let groups =
            u32::try_from(invocations.div_ceil(codegen::WORKGROUP as usize)).map_err(|_| {
                Error::Device {
                    device: self.id,
                    problem: format!("{op}: {invocations} invocations are too many for one launch"),
                }
            })?;
        let max_groups = self.limits.max_compute_workgroups_per_dimension.max(1);
        // No invocations make a grid of [1, 0, 1], which runs nothing.
        let x = groups.min(max_groups).max(1);
        self.launch_grid(op, wgsl, params, buffers, [x, groups.div_ceil(x), 1])
    }

    /// Runs `wgsl` once over a grid of `groups` workgroups (x, y, z; the shader names its own
    /// workgroup size), with the bindings of [`launch`](Self::launch). A grid with no
    /// workgroups runs nothing. Every extent must be within
    /// `max_compute_workgroups_per_dimension`; callers with more work split it into launches.
    fn launch_grid(
        &self,
        op: &str,
        wgsl: &str,
        params: &[u32],
        buffers: &[Bound<'_>],
        groups: [u32; 3],
    ) -> Result<(), Error> {
        let binding = self.limits.max_storage_buffer_binding_size.min(self.limits.max_buffer_size);
        if let Some(big) = buffers.iter().find(|b| !b.chunked && b.bytes > binding) {
            return Err(Error::Device {
                device: self.id,
                problem: format!(
                    "{op}: an operand of {} bytes is larger than one binding of this adapter \
                     ({binding} bytes); only elementwise operations and reductions read \
                     larger ones so far",
                    big.bytes
                ),
            });
        }
        let chunk = self.chunk_bytes();
        let count = |b: &Bound<'_>| if b.chunked { b.bytes.div_ceil(chunk).max(1) } else { 1 };
        let bindings = buffers.iter().map(count).sum::<u64>() + 1;
        let max_bindings = u64::from(self.limits.max_storage_buffers_per_shader_stage);
        if bindings > max_bindings {
            return Err(Error::Device {
                device: self.id,
                problem: format!(
                    "{op}: its operands need {bindings} bindings, more than this adapter's \
                     {max_bindings}"
                ),
            });
        }
        if groups.contains(&0) {
            return Ok(());
        }
        let max_groups = self.limits.max_compute_workgroups_per_dimension;
        if groups.iter().any(|&g| g > max_groups) {
            return Err(Error::Device {
                device: self.id,
                problem: format!(
                    "{op}: a grid of {groups:?} workgroups exceeds this adapter's {max_groups} \
                     per dimension"
                ),
            });
        }
        let pipeline = self.pipeline(wgsl);
        let param_bytes = (params.len().max(1) * 4) as u64;
        let param_buffer = self.pool.take(Kind::Storage, param_bytes, op)?;
        let words: &[u32] = if params.is_empty() { &[0] } else { params };
        self.queue.write_buffer(&param_buffer, 0, bytemuck::cast_slice(words));
        // A zero-length binding is not allowed: an empty array binds 4 bytes it never reads.
        fn whole(buffer: &wgpu::Buffer, bytes: u64) -> wgpu::BindingResource<'_> {
            wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset: 0,
                size: NonZeroU64::new(bytes.max(4)),
            })
        }
        let mut entries =
            vec![wgpu::BindGroupEntry { binding: 0, resource: whole(&param_buffer, param_bytes) }];
        for bound in buffers {
            if !bound.chunked {
                let binding = entries.len() as u32;
                entries.push(wgpu::BindGroupEntry {
                    binding,
                    resource: whole(bound.buffer, bound.bytes),
                });
                continue;
            }
            for c in 0..count(bound) {
                let offset = c * chunk;
                let binding = entries.len() as u32;
                entries.push(wgpu::BindGroupEntry {
                    binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: bound.buffer,
                        offset,
                        size: NonZeroU64::new((bound.bytes - offset).min(chunk).max(4)),
                    }),
                });
            }
        }
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.bindings,
            entries: &entries,
        });
        self.encode(|encoder| {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline.pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
        });
        Ok(())
    }

    /// The error for an operation this backend has no kernel for yet.
    fn no_kernel(&self, op: &DeviceOp) -> Error {
        let what = format!("{op:?}");
        let what = what.split([' ', '(', '{']).next().unwrap_or("this operation").to_string();
        Error::Device {
            device: self.id,
            problem: format!(
                "no GPU kernel yet for this operation ({what}); move the array with \
                 device_put(&x, Device::Cpu(0))"
            ),
        }
    }
}

impl Backend for WgpuBackend {
    fn computes(&self, dtype: DType) -> Result<(), String> {
        let needs = match dtype {
            DType::F64 => Some((
                "SHADER_F64 and SHADER_INT64",
                wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64,
            )),
            DType::F16 => Some(("SHADER_F16", wgpu::Features::SHADER_F16)),
            _ => None,
        };
        if !codegen::computes(dtype) {
            return Err(format!("no GPU kernel yet for {dtype} on {}", self.id));
        }
        match needs {
            Some((name, feature)) if !self.features.contains(feature) => Err(format!(
                "{dtype} on {} needs the adapter features {name}, which {} does not offer \
                 (or RJAX_GPU_FEATURES_OFF turned off)",
                self.id, self.name
            )),
            _ => Ok(()),
        }
    }

    fn run(
        &self,
        op: &DeviceOp,
        operands: &[Operand<'_>],
        outs: &[Aval],
    ) -> Result<Vec<DeviceBuffer>, Error> {
        let one = |b: Result<DeviceBuffer, Error>| b.map(|b| vec![b]);
        match op {
            DeviceOp::Elementwise(e) => one(self.elementwise(*e, operands, &outs[0])),
            DeviceOp::Assemble { fill, regions } => {
                one(self.assemble(*fill, regions, operands, &outs[0]))
            }
            DeviceOp::Conv(windows) => one(self.conv(windows, operands, &outs[0])),
            DeviceOp::Gather { .. } | DeviceOp::Scatter { .. } => {
                one(self.index(op, operands, &outs[0]))
            }
            DeviceOp::Reduce { op, axes } => one(self.reduce(*op, axes, &operands[0], &outs[0])),
            DeviceOp::ArgReduce { op, axis } => {
                one(self.arg_reduce(*op, *axis, &operands[0], &outs[0]))
            }
            DeviceOp::Cumulative { op, axis, reverse } => {
                one(self.cumulative(*op, *axis, *reverse, &operands[0], &outs[0]))
            }
            DeviceOp::Fused(group) => self.fused(group, operands, outs),
            // `dispatch` has laid the operands out as [b, m, k] and [b, k, n].
            DeviceOp::Matmul { b, m, k, n, .. } => {
                one(self.matmul([*b, *m, *k, *n], operands, &outs[0]))
            }
            DeviceOp::Threefry2x32 => self.threefry(operands, &outs[0]),
            _ => Err(self.no_kernel(op)),
        }
    }

    fn upload(&self, host: &Buffer) -> Result<DeviceBuffer, Error> {
        let (dtype, len) = (host.dtype(), host.len());
        if dtype.is_complex() {
            return Err(self.unsupported_dtype("device_put", dtype));
        }
        let bytes = stored_bytes(dtype, len);
        let buffer = self.pool.take(Kind::Storage, bytes, "device_put")?;
        if let Some(size) = NonZeroU64::new(bytes) {
            let view = self.queue.write_buffer_with(&buffer, 0, size).ok_or_else(|| {
                Error::Device { device: self.id, problem: format!("writing {bytes} bytes failed") }
            })?;
            write_host(host, view);
        }
        Ok(DeviceBuffer::new(self.id, dtype, len, buffer))
    }

    fn download(&self, buffer: &DeviceBuffer) -> Result<Buffer, Error> {
        let (dtype, len) = (buffer.dtype(), buffer.len());
        let bytes = stored_bytes(dtype, len);
        if bytes == 0 {
            return Ok(read_host(dtype, 0, &[]));
        }
        let source: &Pooled = buffer.raw().expect("a GPU array holds a pooled wgpu buffer");
        let staging = self.pool.take(Kind::Readback, bytes, "reading values back")?;
        // The copy follows the work recorded so far in one submission.
        self.flush(|encoder| encoder.copy_buffer_to_buffer(source, 0, &staging, 0, bytes));
        let (sent, mapped) = mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, ..bytes, move |r| {
            let _ = sent.send(r);
        });
        self.wait()?;
        let failed = |e: String| Error::Device {
            device: self.id,
            problem: format!("reading {bytes} bytes back failed: {e}"),
        };
        mapped.recv().map_err(|e| failed(e.to_string()))?.map_err(|e| failed(e.to_string()))?;
        let host = {
            let view = staging.get_mapped_range(..bytes).map_err(|e| failed(e.to_string()))?;
            read_host(dtype, len, &view)
        };
        staging.unmap();
        Ok(host)
    }

    fn memory_stats(&self) -> MemoryStats {
        self.pool.stats()
    }

    fn synchronize(&self) -> Result<(), Error> {
        self.flush(|_| {});
        self.wait()
    }

    fn begin_batch(&self) {
        let mut recording = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        recording.depth += 1;
        if recording.depth == 1 {
            self.pool.hold(true);
        }
    }

    fn end_batch(&self) {
        let mut recording = self.recording.lock().unwrap_or_else(|e| e.into_inner());
        recording.depth -= 1;
        if recording.depth > 0 {
            return;
        }
        if let Some(encoder) = recording.encoder.take() {
            self.submit(encoder);
        }
        self.pool.hold(false);
    }

    fn submissions(&self) -> u64 {
        self.submissions.load(Ordering::Relaxed)
    }
}

impl WgpuBackend {
    /// A fused elementwise group as one kernel (see [`codegen::fused`]).
    fn fused(
        &self,
        group: &crate::backend::ElementwiseGroup,
        operands: &[Operand<'_>],
        outs: &[Aval],
    ) -> Result<Vec<DeviceBuffer>, Error> {
        if group.reduction.is_some() {
            return self.fused_fold(group, operands, outs);
        }
        let op = "a fused group";
        for o in &group.ops {
            let dtype = match o.args[0] {
                crate::backend::GroupValue::Operand(i) => operands[i].buffer.dtype(),
                crate::backend::GroupValue::Op(k) => group.ops[k].dtype,
            };
            if let Some(why) = codegen::refusal(o.op, dtype) {
                return Err(Error::Device { device: self.id, problem: format!("{op}: {why}") });
            }
        }
        let shape = &outs[0].shape;
        let shapes: Vec<&[usize]> = operands.iter().map(|o| o.shape).collect();
        let layout = Layout::new(shape, &shapes);
        let len = layout.len();
        let buffers = operands.len() + outs.len();
        if buffers >= self.limits.max_storage_buffers_per_shader_stage as usize {
            let problem = format!("{op}: {buffers} buffers are more than one kernel binds");
            return Err(Error::Device { device: self.id, problem });
        }
        let results = outs
            .iter()
            .map(|o| self.output(o.dtype, len, op))
            .collect::<Result<Vec<Pooled>, Error>>()?;
        let inputs: Vec<(DType, &Access)> =
            operands.iter().zip(&layout.operands).map(|(o, a)| (o.buffer.dtype(), a)).collect();
        let wgsl = codegen::fused(group, &inputs, layout.dims.len());
        let accesses: Vec<&Access> = layout.operands.iter().collect();
        let bases = vec![0; buffers];
        let params = codegen::params(len, &layout.dims, &bases, &accesses);
        let mut bound: Vec<Bound<'_>> = operands.iter().map(|o| Bound::array(o.buffer)).collect();
        bound.extend(results.iter().zip(outs).map(|(r, o)| Bound::new(r, o.dtype, len)));
        self.launch(op, &wgsl, &params, &bound, len)?;
        let made = results.into_iter().zip(outs);
        Ok(made.map(|(r, o)| DeviceBuffer::new(self.id, o.dtype, len, r)).collect())
    }

    /// `op` over operands broadcast to `out`'s shape, in windows when the output is larger
    /// than one binding.
    fn elementwise(
        &self,
        op: ElementwiseOp,
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let shapes: Vec<&[usize]> = operands.iter().map(|o| o.shape).collect();
        let layout = Layout::new(&out.shape, &shapes);
        let len = layout.len();
        let op_name = match op {
            ElementwiseOp::Unary(u) => u.op_name().to_string(),
            ElementwiseOp::Binary(b) => b.op_name().to_string(),
            ElementwiseOp::Select => "select".to_string(),
            ElementwiseOp::Convert => "convert_element_type".to_string(),
        };
        if let Some(why) = codegen::refusal(op, operands[0].buffer.dtype()) {
            return Err(Error::Device { device: self.id, problem: why });
        }
        let result = self.pool.take(Kind::Storage, stored_bytes(out.dtype, len), &op_name)?;
        // Bytes per stored element of each operand, then of the result.
        let sizes: Vec<u64> = operands
            .iter()
            .map(|o| o.buffer.dtype())
            .chain([out.dtype])
            .map(element_bytes)
            .collect();
        let widest = sizes.iter().copied().max().unwrap_or(4);
        let windows = layout.windows(self.window_elements(widest));
        if windows.is_empty() {
            return Ok(DeviceBuffer::new(self.id, out.dtype, len, result));
        }
        let kernel = codegen::Kernel {
            op,
            inputs: operands
                .iter()
                .zip(&layout.operands)
                .map(|(o, a)| (o.buffer.dtype(), a))
                .collect(),
            out: out.dtype,
            rank: layout.dims.len(),
        };
        let pipeline = self.pipeline(&codegen::elementwise(&kernel));

        // Every window's bindings start at an aligned offset at or before its first element;
        // its parameters say where that element is.
        let align = u64::from(self.limits.min_storage_buffer_offset_alignment);
        let accesses: Vec<&Access> = layout.operands.iter().collect();
        let mut params: Vec<Vec<u32>> = Vec::new();
        let mut ranges: Vec<Vec<(u64, u64)>> = Vec::new();
        for w in &windows {
            let mut bases = Vec::new();
            let mut bound = Vec::new();
            for (&(start, span), &size) in w.spans.iter().zip(&sizes) {
                let first = start as u64 * size;
                let offset = first / align * align;
                bases.push(((first - offset) / size) as usize);
                // Whole words: a binding of 2-byte elements may end mid-word.
                bound.push((offset, (first - offset + span as u64 * size).div_ceil(4) * 4));
            }
            params.push(codegen::params(w.len(), &w.dims, &bases, &accesses));
            ranges.push(bound);
        }
        let words = params[0].len() as u64;
        let stride = (words * 4).div_ceil(align) * align;
        let param_buffer = self.pool.take(Kind::Storage, stride * params.len() as u64, &op_name)?;
        let mut packed = vec![0u32; (stride / 4) as usize * params.len()];
        for (k, p) in params.iter().enumerate() {
            let at = k * (stride / 4) as usize;
            packed[at..at + p.len()].copy_from_slice(p);
        }
        self.queue.write_buffer(&param_buffer, 0, bytemuck::cast_slice(&packed));

        let mut buffers: Vec<&wgpu::Buffer> = operands
            .iter()
            .map(|o| &**o.buffer.raw::<Pooled>().expect("a GPU array holds a pooled wgpu buffer"))
            .collect();
        buffers.push(&result);
        let max_groups = self.limits.max_compute_workgroups_per_dimension.max(1);
        self.encode(|encoder| {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline.pipeline);
            for (k, (w, bound)) in windows.iter().zip(&ranges).enumerate() {
                let mut entries = vec![wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &param_buffer,
                        offset: k as u64 * stride,
                        size: NonZeroU64::new(words * 4),
                    }),
                }];
                for (b, (buffer, &(offset, size))) in buffers.iter().zip(bound).enumerate() {
                    entries.push(wgpu::BindGroupEntry {
                        binding: b as u32 + 1,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer,
                            offset,
                            size: NonZeroU64::new(size),
                        }),
                    });
                }
                let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &pipeline.bindings,
                    entries: &entries,
                });
                pass.set_bind_group(0, &group, &[]);
                let groups = u32::try_from(w.len().div_ceil(codegen::WORKGROUP as usize))
                    .expect("a window is smaller than one binding");
                let x = groups.min(max_groups);
                pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
            }
        });
        Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
    }
}
