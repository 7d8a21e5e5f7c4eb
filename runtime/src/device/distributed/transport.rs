//! The MPI side: starting it, the header every collective begins with, and the one MPI
//! collective that carries a process's values.
//!
//! MPI is initialized asking for `MPI_THREAD_MULTIPLE` and must give at least
//! `MPI_THREAD_SERIALIZED`: `pmap`'s device threads call it, one at a time (a mutex here
//! serializes every call). rjax talks on its own duplicate of `MPI_COMM_WORLD`, so a program's
//! own MPI messages never meet rjax's.

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use mpi::environment::Threading;
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{CommunicatorCollectives, Destination, Source};

use crate::array::buffer::Buffer;
use crate::array::Array;
use crate::device::{self, Device};
use crate::dtype::{DType, Element};
use crate::error::Error;

/// The tag of the headers processes trade before each collective.
const HEADER_TAG: i32 = 0x7a1;
/// How much of a failure's message travels to the other processes.
const MESSAGE_LIMIT: usize = 2000;

/// rjax's communicator and how many collectives it has carried.
struct Mpi {
    comm: SimpleCommunicator,
    collectives: u64,
}

// SAFETY: the communicator is a handle MPI lets any thread use when calls are serialized
// (MPI_THREAD_SERIALIZED or better, checked in `start`); it is only reached through the
// mutex below, which serializes them.
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
    MPI.set(Mutex::new(Mpi { comm, collectives: 0 }))
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

/// The array's elements as bytes, in memory order.
fn to_bytes(x: &Array) -> Vec<u8> {
    let host = if x.device().is_host() { x.clone() } else { device::device_put(x, Device::Cpu(0)) };
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
