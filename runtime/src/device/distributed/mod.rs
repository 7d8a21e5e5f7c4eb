//! Several processes, on one host or many, as one set of global devices (JAX's
//! `jax.distributed`), over MPI.
//!
//! Launch the program with `mpirun -np P`; each process calls [`initialize`] first, then runs
//! the same program. Every process has its local devices ([`local_devices`], the virtual CPU
//! devices of `RJAX_CPU_DEVICES`); together they are the [`global_devices`], ordered by
//! process. A top-level `pmap` in an initialized process with other processes maps over all
//! global devices: each process passes its local shard (a leading axis of its local device
//! count or fewer, the same on every process), gets its local results back, and the axis its
//! collectives see has `process_count()` times that size, member `process_index() * local +
//! d` being local device `d`.
//!
//! A collective over such an axis meets the local devices in the process first (the
//! rendezvous of `spmd`), then one thread of each process makes one MPI collective for them
//! all: `psum`, `pmax` and `pmin` (and `pmean`, a `psum`) combine the local values and
//! all-reduce the result, the other collectives all-gather the local values. Before it, the processes trade a small header naming the collective, its dtype and
//! shapes: a process that runs a different program is reported with both sides' headers, a
//! process whose `pmap` failed tells the others, who fail naming it, and a process that never
//! arrives is named after `RJAX_DISTRIBUTED_TIMEOUT` seconds (default 300) instead of a hang.
//!
//! ```no_run
//! use rjax_runtime::device::distributed;
//! distributed::initialize().unwrap();
//! println!("process {} of {}", distributed::process_index(), distributed::process_count());
//! ```

mod transport;

/// The MPI crate rjax runs on (rsmpi), for a program's own MPI calls after [`initialize`]:
/// `mpi::topology::SimpleCommunicator::world()` is every process; rjax's collectives use
/// their own communicator, so the program's messages never meet them.
pub use mpi;

use std::sync::OnceLock;
use std::time::Duration;

use super::Device;
use crate::error::Error;

pub(crate) use transport::{all_gather, all_reduce, tell_failure};

/// This process's place among the others.
struct Membership {
    rank: usize,
    count: usize,
    timeout: Duration,
}

static MEMBERSHIP: OnceLock<Membership> = OnceLock::new();

/// Joins the processes `mpirun` started (`jax.distributed.initialize()`): reads the MPI
/// environment, after which [`process_index`], [`process_count`] and [`global_devices`]
/// describe them all. Run without `mpirun`, the process is the only one.
///
/// Errors when called a second time, when the local device count was already fixed (call
/// it first, before anything uses devices; set the local count with `RJAX_CPU_DEVICES` or
/// [`set_cpu_device_count`](super::set_cpu_device_count) after it), when the MPI library
/// cannot give the thread support `pmap` needs, or when `RJAX_DISTRIBUTED_TIMEOUT` is not a
/// positive number of seconds.
pub fn initialize() -> Result<(), Error> {
    if MEMBERSHIP.get().is_some() {
        return Err(problem("initialize() was already called in this process".to_string()));
    }
    if super::device_count_is_fixed() {
        return Err(problem(format!(
            "initialize() must come before the devices are used; the local device count is \
             already fixed at {}",
            super::device_count()
        )));
    }
    let timeout = timeout_from_env()?;
    let (rank, count) = transport::start()?;
    MEMBERSHIP
        .set(Membership { rank, count, timeout })
        .map_err(|_| problem("initialize() was called twice at once".to_string()))
}

fn problem(problem: String) -> Error {
    Error::Platform { platform: "distributed", problem }
}

fn timeout_from_env() -> Result<Duration, Error> {
    let Ok(text) = std::env::var("RJAX_DISTRIBUTED_TIMEOUT") else {
        return Ok(Duration::from_secs(300));
    };
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(Duration::from_secs_f64(s)),
        _ => Err(problem(format!(
            "RJAX_DISTRIBUTED_TIMEOUT must be a positive number of seconds, got {text:?}"
        ))),
    }
}

/// This process's index among the processes, `0..process_count()` (its MPI rank); 0 before
/// [`initialize`].
pub fn process_index() -> usize {
    MEMBERSHIP.get().map_or(0, |m| m.rank)
}

/// How many processes there are; 1 before [`initialize`].
pub fn process_count() -> usize {
    MEMBERSHIP.get().map_or(1, |m| m.count)
}

/// This process's devices (`jax.local_devices()`): its virtual CPU devices.
pub fn local_devices() -> Vec<Device> {
    super::cpu_devices()
}

/// A device of some process (`jax.devices()` across processes): its global id, the process
/// that owns it, and what that process calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GlobalDevice {
    /// The position among all processes' devices: `process_index * local count + local id`.
    pub id: usize,
    /// The process that holds it.
    pub process_index: usize,
    /// The device as its process names it.
    pub local: Device,
}

/// Every process's devices, ordered by process, then by local id. Every process has as many
/// local devices as this one (`RJAX_CPU_DEVICES` is the same for all).
pub fn global_devices() -> Vec<GlobalDevice> {
    let local = local_devices();
    let n = local.len();
    (0..process_count())
        .flat_map(|p| {
            local.clone().into_iter().map(move |d| GlobalDevice {
                id: p * n + d.id(),
                process_index: p,
                local: d,
            })
        })
        .collect()
}

/// The processes a top-level `pmap` spans, and this one's index, when there are others.
pub(crate) fn spanning() -> Option<(usize, usize)> {
    MEMBERSHIP.get().filter(|m| m.count > 1).map(|m| (m.rank, m.count))
}

/// How long a process waits for the others at a collective.
fn timeout() -> Duration {
    MEMBERSHIP.get().map_or(Duration::from_secs(300), |m| m.timeout)
}
