//! The MPI side: starting it, the header every collective begins with, and the one MPI
//! collective that carries a process's values: an all-gather of them, or for a reduction an
//! all-reduce of the process's combined value.
//!
//! MPI is initialized asking for `MPI_THREAD_MULTIPLE` and must give at least
//! `MPI_THREAD_SERIALIZED`: `pmap`'s device threads call it, one at a time (a mutex here
//! serializes every call). rjax talks on its own duplicate of `MPI_COMM_WORLD`, so a program's
//! own MPI messages never meet rjax's.

use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use mpi::datatype::{Equivalence, UserDatatype};
use mpi::environment::Threading;
use mpi::ffi::{MPI_Datatype, MPI_Op};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Destination, Source};

use crate::array::buffer::Buffer;
use crate::array::Array;
use crate::device::spmd::Reduction;
use crate::device::{self, Device};
use crate::dtype::{DType, Element};
use crate::error::Error;

/// The tag of the headers processes trade before each collective.
const HEADER_TAG: i32 = 0x7a1;
/// How much of a failure's message travels to the other processes.
const MESSAGE_LIMIT: usize = 2000;

/// rjax's communicator, how many collectives it has carried, and the MPI reduction that
/// combines values with rjax's own operations (`combine_elements`).
struct Mpi {
    comm: SimpleCommunicator,
    collectives: u64,
    combine_op: MPI_Op,
}

// SAFETY: the communicator and the operation are handles MPI lets any thread use when calls
// are serialized (MPI_THREAD_SERIALIZED or better, checked in `start`); they are only reached
// through the mutex below, which serializes them.
unsafe impl Send for Mpi {}

static MPI: OnceLock<Mutex<Mpi>> = OnceLock::new();

fn lock() -> MutexGuard<'static, Mpi> {
    let mpi = MPI.get().expect("distributed collectives run only after initialize()");
    mpi.lock().unwrap_or_else(|e| e.into_inner())
}

/// Initializes MPI and returns this process's rank and the number of processes.
pub(super) fn start() -> Result<(usize, usize), Error> {
    let Some((universe, level)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return Err(super::problem("MPI was already initialized in this process".to_string()));
    };
    if level < Threading::Serialized {
        return Err(super::problem(format!(
            "the MPI library gives thread support {level:?}; pmap's device threads need \
             MPI_THREAD_SERIALIZED or better"
        )));
    }
    let comm = universe.world().duplicate();
    let (rank, count) = (comm.rank() as usize, comm.size() as usize);
    // MPI lives until the process exits: finalized then (not when a value drops), so that
    // every exit path, a panic out of `main` included, tells `mpirun` the process is done.
    std::mem::forget(universe);
    finalize_at_exit();
    let combine_op = create_combine_op();
    MPI.set(Mutex::new(Mpi { comm, collectives: 0, combine_op }))
        .map_err(|_| super::problem("initialize() was called twice at once".to_string()))?;
    Ok((rank, count))
}

#[cfg(target_os = "linux")]
fn finalize_at_exit() {
    extern "C" fn finalize() {
        let mut done = 0;
        // SAFETY: FFI calls with a valid out-pointer; MPI was initialized by `start`, and
        // finalizing once, at exit, after every rjax call, is what MPI asks.
        unsafe {
            mpi::ffi::MPI_Finalized(&mut done);
            if done == 0 {
                mpi::ffi::MPI_Finalize();
            }
        }
    }
    // SAFETY: registers a plain `extern "C"` function with no captured state.
    unsafe {
        libc::atexit(finalize);
    }
}

#[cfg(not(target_os = "linux"))]
fn finalize_at_exit() {}

/// Every process's `local` values (one per local member of the axis), in process order:
/// one MPI all-gather of this process's values together, after the processes checked they
/// run the same collective (`what`, with the values' dtype and shapes).
///
/// # Panics
/// When another process failed (naming it, with its message), runs another collective or
/// other shapes (both headers), or does not arrive within the timeout (naming it).
pub(crate) fn all_gather(what: &str, local: &[Array]) -> Vec<Array> {
    let first = local.first().expect("a process has at least one member");
    let aval = first.aval();
    if let Some(other) = local.iter().find(|x| x.aval() != aval) {
        panic!("{what}: the devices of this process hold {aval} and {}", other.aval());
    }
    let mut mpi = lock();
    mpi.collectives += 1;
    let header = format!("collective #{}: {what} of {} x {aval}", mpi.collectives, local.len());
    trade_headers(&mpi.comm, &header);
    let bytes: Vec<u8> = local.iter().flat_map(to_bytes).collect();
    let count = mpi.comm.size() as usize;
    if bytes.len() > i32::MAX as usize {
        panic!("{header}: {} bytes per process exceed MPI's 2^31 - 1 limit", bytes.len());
    }
    let mut all = vec![0u8; bytes.len() * count];
    mpi.comm.all_gather_into(&bytes[..], &mut all[..]);
    drop(mpi);
    let each = bytes.len() / local.len();
    all.chunks(each.max(1))
        .take(count * local.len())
        .map(|chunk| from_bytes(&aval.shape, aval.dtype, aval.weak, chunk))
        .collect()
}

/// Every process's `value` combined by `reduction`, the same on every process: one MPI
/// all-reduce of this process's value, after the processes checked they run the same
/// collective (`what`, with the value's dtype and shape). A sum of a primitive number type
/// is MPI's own; anything else (max and min, whose NaNs MPI's operations do not propagate,
/// and the types MPI has no sum for) combines with `reduction.combine` inside MPI's
/// reduction, so the result is what rjax's own operation gives.
///
/// # Panics
/// As [`all_gather`], and when the value has 2^31 elements or more.
pub(crate) fn all_reduce(what: &str, value: &Array, reduction: Reduction) -> Array {
    let aval = value.aval();
    let mut mpi = lock();
    mpi.collectives += 1;
    let header = format!("collective #{}: {what} of {aval}", mpi.collectives);
    trade_headers(&mpi.comm, &header);
    let elements = crate::shape::size(&aval.shape);
    if elements > i32::MAX as usize {
        panic!("{header}: {elements} elements exceed MPI's 2^31 - 1 limit");
    }
    let host = on_host(value);
    let builtin = if reduction.is_sum { sum_datatype(aval.dtype) } else { None };
    let buffer = match builtin {
        // SAFETY: `sum_datatype` names the MPI type of exactly `T`, the buffer's element type.
        Some(datatype) => crate::with_buffer!(host.buffer(), |v: T| unsafe {
            T::wrap(all_reduce_elements(&mpi.comm, v, datatype, mpi::ffi::RSMPI_SUM))
        }),
        None => {
            let element =
                UserDatatype::contiguous(aval.dtype.size_of() as i32, &u8::equivalent_datatype());
            *combining() =
                Some(Combining { dtype: aval.dtype, combine: reduction.combine, failure: None });
            // SAFETY: the datatype spans one element of `T` (its bytes), and `combine_op`
            // combines such elements (reading the dtype from `COMBINING`, set above).
            let buffer = crate::with_buffer!(host.buffer(), |v: T| unsafe {
                T::wrap(all_reduce_elements(&mpi.comm, v, element.as_raw(), mpi.combine_op))
            });
            let done = combining().take().expect("set above");
            if let Some(failure) = done.failure {
                panic!("{header}: combining the processes' values failed: {failure}");
            }
            buffer
        }
    };
    drop(mpi);
    Array::from_buffer(&aval.shape, buffer, aval.weak)
}

/// MPI_Allreduce of `v` (elements of `datatype`, combined by `op`) into a new vector.
///
/// # Safety
/// `datatype` must describe exactly one `T`, and `op` must be able to combine it.
unsafe fn all_reduce_elements<T>(
    comm: &SimpleCommunicator,
    v: &[T],
    datatype: MPI_Datatype,
    op: MPI_Op,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(v.len());
    // SAFETY: `v` holds `v.len()` elements and `out` has room for as many (of the type the
    // caller vouches `datatype` describes); MPI writes every one of them before `set_len`,
    // and a failed MPI call aborts (the communicator's default error handler) rather than
    // returning.
    unsafe {
        mpi::ffi::MPI_Allreduce(
            v.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            v.len() as c_int,
            datatype,
            op,
            comm.as_raw(),
        );
        out.set_len(v.len());
    }
    out
}

/// The MPI type whose built-in sum is rjax's addition for `dtype` (IEEE addition, wrapping
/// integers), if MPI has one.
fn sum_datatype(dtype: DType) -> Option<MPI_Datatype> {
    let raw = match dtype {
        DType::I8 => i8::equivalent_datatype().as_raw(),
        DType::I16 => i16::equivalent_datatype().as_raw(),
        DType::I32 => i32::equivalent_datatype().as_raw(),
        DType::I64 => i64::equivalent_datatype().as_raw(),
        DType::U8 => u8::equivalent_datatype().as_raw(),
        DType::U16 => u16::equivalent_datatype().as_raw(),
        DType::U32 => u32::equivalent_datatype().as_raw(),
        DType::U64 => u64::equivalent_datatype().as_raw(),
        DType::F32 => f32::equivalent_datatype().as_raw(),
        DType::F64 => f64::equivalent_datatype().as_raw(),
        DType::Bool | DType::F16 | DType::BF16 | DType::C64 | DType::C128 => return None,
    };
    Some(raw)
}

/// What the reduction in flight combines: MPI calls `combine_elements` with raw bytes only.
struct Combining {
    dtype: DType,
    combine: fn(&Array, &Array) -> Array,
    /// A panic of `combine`, which must not unwind into MPI.
    failure: Option<String>,
}

/// Set while the MPI lock is held, for the one reduction in flight.
static COMBINING: Mutex<Option<Combining>> = Mutex::new(None);

fn combining() -> MutexGuard<'static, Option<Combining>> {
    COMBINING.lock().unwrap_or_else(|e| e.into_inner())
}

/// The MPI operation that calls `combine_elements` (commutative: rjax's sums, maxima and
/// minima are).
fn create_combine_op() -> MPI_Op {
    // SAFETY: `op` is a valid out-pointer, which MPI_Op_create fills (a failure aborts, the
    // default error handler); the handle stays valid until MPI is finalized.
    unsafe {
        let mut op = std::mem::MaybeUninit::<MPI_Op>::uninit();
        mpi::ffi::MPI_Op_create(Some(combine_elements), 1, op.as_mut_ptr());
        op.assume_init()
    }
}

/// MPI's user function: `inout[i] = combine(in[i], inout[i])` for `len` elements of the
/// dtype in `COMBINING`.
unsafe extern "C" fn combine_elements(
    input: *mut c_void,
    inout: *mut c_void,
    len: *mut c_int,
    _datatype: *mut MPI_Datatype,
) {
    let mut current = combining();
    let Some(c) = current.as_mut().filter(|c| c.failure.is_none()) else { return };
    // SAFETY: MPI passes `len` elements of the contiguous type `all_reduce` made for the
    // dtype, at `input` and at `inout`: `len * size_of` bytes each, in distinct buffers.
    let (a, b) = unsafe {
        let bytes = *len as usize * c.dtype.size_of();
        (
            std::slice::from_raw_parts(input.cast::<u8>(), bytes),
            std::slice::from_raw_parts_mut(inout.cast::<u8>(), bytes),
        )
    };
    let shape = [a.len() / c.dtype.size_of()];
    let combined = catch_unwind(AssertUnwindSafe(|| {
        let (x, y) = (from_bytes(&shape, c.dtype, false, a), from_bytes(&shape, c.dtype, false, b));
        to_bytes(&(c.combine)(&x, &y))
    }));
    match combined {
        Ok(bytes) if bytes.len() == b.len() => b.copy_from_slice(&bytes),
        Ok(bytes) => c.failure = Some(format!("{} bytes from {} bytes", bytes.len(), b.len())),
        Err(payload) => c.failure = Some(crate::device::spmd::panic_text(&*payload)),
    }
}

/// Tells every other process that this one's `pmap` failed, with `message`: the header
/// they wait for next says so.
pub(crate) fn tell_failure(message: &str) {
    let mpi = lock();
    let cut: String = message.chars().take(MESSAGE_LIMIT).collect();
    send_to_others(&mpi.comm, &format!("failed {cut}"));
}

fn send_to_others(comm: &SimpleCommunicator, text: &str) {
    for other in (0..comm.size()).filter(|&r| r != comm.rank()) {
        comm.process_at_rank(other).send_with_tag(text.as_bytes(), HEADER_TAG);
    }
}

/// Sends `header` to every other process and checks theirs match it.
fn trade_headers(comm: &SimpleCommunicator, header: &str) {
    send_to_others(comm, &format!("ok {header}"));
    for (rank, text) in receive_headers(comm, header) {
        if let Some(message) = text.strip_prefix("failed ") {
            panic!("process {rank} failed: {message}");
        }
        let theirs = text.strip_prefix("ok ").unwrap_or(&text);
        if theirs != header {
            panic!(
                "the processes run different programs: process {} is at {header}, process \
                 {rank} at {theirs}",
                comm.rank()
            );
        }
    }
}

/// Every other process's next header, polling until the timeout.
fn receive_headers(comm: &SimpleCommunicator, header: &str) -> Vec<(usize, String)> {
    let timeout = super::timeout();
    let start = Instant::now();
    let mut waiting: Vec<i32> = (0..comm.size()).filter(|&r| r != comm.rank()).collect();
    let mut got = Vec::with_capacity(waiting.len());
    let mut pause = std::time::Duration::from_micros(1);
    while !waiting.is_empty() {
        let before = waiting.len();
        waiting.retain(|&r| {
            match comm.process_at_rank(r).immediate_matched_probe_with_tag(HEADER_TAG) {
                Some(matched) => {
                    let (bytes, _) = matched.matched_receive_vec::<u8>();
                    got.push((r as usize, String::from_utf8_lossy(&bytes).into_owned()));
                    false
                }
                None => true,
            }
        });
        if waiting.len() < before {
            pause = std::time::Duration::from_micros(1);
        } else if start.elapsed() > timeout {
            let names: Vec<String> = waiting.iter().map(|r| r.to_string()).collect();
            panic!(
                "process {}: process {} did not reach {header} within {:.1} s (RJAX_DISTRIBUTED_\
                 TIMEOUT): it died, hangs, or runs a different program",
                comm.rank(),
                names.join(", "),
                timeout.as_secs_f64()
            );
        } else {
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(1));
        }
    }
    got
}

/// `x` on the host, where MPI reads it.
fn on_host(x: &Array) -> Array {
    if x.device().is_host() {
        x.clone()
    } else {
        device::device_put(x, Device::Cpu(0))
    }
}

/// The array's elements as bytes, in memory order.
fn to_bytes(x: &Array) -> Vec<u8> {
    let host = on_host(x);
    crate::with_buffer!(host.buffer(), |v: T| {
        // SAFETY: every element type is plain data without padding (numbers, bool, pairs of
        // floats), so its bytes are initialized; the slice covers exactly `v`.
        unsafe {
            std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(&v[..]))
        }
        .to_vec()
    })
}

/// An array of `shape` and `dtype` from bytes `to_bytes` made on another process.
fn from_bytes(shape: &[usize], dtype: DType, weak: bool, bytes: &[u8]) -> Array {
    let buffer = if dtype == DType::Bool {
        Buffer::Bool(bytes.iter().map(|b| *b != 0).collect())
    } else {
        let empty = Buffer::F32(Vec::new()).cast(dtype);
        crate::with_buffer!(&empty, |_v: T| elements::<T>(bytes))
    };
    Array::from_buffer(shape, buffer, weak)
}

fn elements<T: Element>(bytes: &[u8]) -> Buffer {
    let n = bytes.len() / std::mem::size_of::<T>();
    let mut out: Vec<T> = Vec::with_capacity(n);
    // SAFETY: `out` has room for `n` elements, the bytes hold `n` of them as `to_bytes` wrote
    // them (a non-bool numeric type, for which every bit pattern is a value), and the two
    // regions are distinct allocations.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            out.as_mut_ptr().cast::<u8>(),
            n * std::mem::size_of::<T>(),
        );
        out.set_len(n);
    }
    T::wrap(out)
}
