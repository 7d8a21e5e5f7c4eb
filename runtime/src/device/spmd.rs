//! SPMD execution on a platform's devices (the host's virtual CPUs, or the GPUs): one thread
//! per shard, and the rendezvous that collectives meet at.
//!
//! `run_shards` runs a shard function once per member of a named axis, each on its own
//! thread, which carries the axis (its name, its position, a shared `Comm`) in a
//! per-thread context. A collective evaluated on a shard thread (`exchange`) hands its
//! value to the `Comm` and waits for the other members' values. Nested launches (a `pmap`
//! inside a `pmap`) stack their axes: a thread of the inner launch can meet the threads of
//! other outer shards over the outer axis, grouped by its position on the inner one.
//!
//! A launch runs on the devices of one platform (`Platform`): a top-level `pmap` on the
//! GPUs when one of its operands is on a GPU, otherwise on the virtual CPUs; nested launches
//! take their share of the enclosing launch's devices. Values exchanged by a collective
//! arrive on the receiving shard's device (copied there between GPUs).
//!
//! A panic on one shard marks every `Comm` its thread belongs to as failed, which wakes the
//! members waiting there; the launch then panics on the caller's thread with the first
//! shard's own message, never hanging.
//!
//! With the `distributed` feature, a top-level launch in a process that joined others spans
//! them all (see `distributed`): its axis has every process's shards, this process's being
//! members `rank * size..(rank + 1) * size`. A collective meets the local members here, then
//! the last of them to arrive trades the process's values with the other processes in one
//! MPI call for all of them (for a reduction, the process's values combined: each process
//! sends one value, not one per member). A failed launch tells the other processes.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex};

use super::Device;
use crate::array::Array;

/// The devices a launch runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Platform {
    /// The host's virtual CPU devices (`RJAX_CPU_DEVICES`).
    #[default]
    Cpu,
    /// The GPUs (`RJAX_GPU_DEVICES` virtual devices per adapter).
    Gpu,
}

impl Platform {
    /// Where a top-level launch over `operands` runs: on the GPUs when one of them is on a
    /// GPU (a `pmap` output counts by its pieces), otherwise on the CPUs.
    pub(crate) fn of(operands: &[&Array]) -> Platform {
        let on_gpu = |x: &&Array| x.devices().iter().any(|d| !d.is_host());
        if operands.iter().any(on_gpu) {
            Platform::Gpu
        } else {
            Platform::Cpu
        }
    }

    /// Device `id` of the platform.
    fn device(self, id: usize) -> Device {
        match self {
            Platform::Cpu => Device::Cpu(id),
            Platform::Gpu => Device::Gpu(id),
        }
    }

    /// How many devices the platform has.
    fn device_count(self) -> usize {
        match self {
            Platform::Cpu => super::device_count(),
            Platform::Gpu => crate::backend::gpu_count().unwrap_or(0),
        }
    }

    /// How to get more devices, for the message of a launch that is too large.
    fn more_devices_hint(self, size: usize) -> String {
        match self {
            Platform::Cpu => format!(
                "set RJAX_CPU_DEVICES={size} (or call rjax::device::set_cpu_device_count({size}) \
                 before using devices) for more virtual CPU devices"
            ),
            Platform::Gpu => "set RJAX_GPU_DEVICES=n to present each GPU as n devices (each \
                              with its own memory), or map fewer shards"
                .to_string(),
        }
    }
}

/// What a collective's members agree on to meet: their positions on the other axes, the
/// launches below the collective's axis that they belong to, and how many collectives over
/// this axis each has done before.
type Key = (Vec<usize>, Vec<u64>, u64);

/// One collective's meeting point: a value per local member, then every member's.
struct Slot {
    values: Vec<Option<Array>>,
    arrived: usize,
    all: Option<Vec<Array>>,
    taken: usize,
}

#[derive(Default)]
struct CommState {
    slots: HashMap<Key, Slot>,
    failure: Option<String>,
}

/// The communicator of one launch's axis, shared by all its threads.
pub(crate) struct Comm {
    /// The members in this process.
    size: usize,
    /// Whether the axis spans other processes too.
    across_processes: bool,
    state: Mutex<CommState>,
    ready: Condvar,
}

/// Marks the message of a shard that stopped because another one failed.
const STOPPED: &str = "stopped because another device failed";

impl Comm {
    fn new(size: usize, across_processes: bool) -> Comm {
        Comm {
            size,
            across_processes,
            state: Mutex::new(CommState::default()),
            ready: Condvar::new(),
        }
    }

    /// Contributes `value` as local member `local` and returns every member's value, in
    /// order; on an axis across processes, what `across` makes of the local members' values
    /// (it runs once per process, on the thread that arrives last).
    fn exchange(&self, key: Key, local: usize, value: Array, across: Across) -> Vec<Array> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let size = self.size;
        let slot = state.slots.entry(key.clone()).or_insert_with(|| Slot {
            values: vec![None; size],
            arrived: 0,
            all: None,
            taken: 0,
        });
        slot.values[local] = Some(value);
        slot.arrived += 1;
        if slot.arrived == size {
            let values: Vec<Array> =
                slot.values.iter_mut().map(|v| v.take().expect("every member arrived")).collect();
            let all = if self.across_processes {
                drop(state);
                let all = self.across(values, across);
                state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                all
            } else {
                values
            };
            state.slots.get_mut(&key).expect("a slot stays until all members read it").all =
                Some(all);
        }
        self.ready.notify_all();
        loop {
            if let Some(failure) = &state.failure {
                panic!("{STOPPED} ({failure})");
            }
            let slot = state.slots.get_mut(&key).expect("a slot stays until all members read it");
            if let Some(all) = &slot.all {
                let values = all.clone();
                slot.taken += 1;
                if slot.taken == size {
                    state.slots.remove(&key);
                }
                return values;
            }
            state = self.ready.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// What the processes make of this process's values: a failure fails this launch too,
    /// so that the local members waiting for the result wake.
    fn across(&self, values: Vec<Array>, across: Across) -> Vec<Array> {
        catch_unwind(AssertUnwindSafe(|| across.run(values))).unwrap_or_else(|payload| {
            self.fail(&panic_text(&*payload));
            std::panic::resume_unwind(payload)
        })
    }

    fn fail(&self, message: &str) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.failure.get_or_insert_with(|| message.to_string());
        self.ready.notify_all();
    }
}

/// How a reducing collective combines values: an associative, commutative elementwise
/// operation, given by the collective (the devices cannot name primitives).
#[derive(Clone, Copy)]
pub(crate) struct Reduction {
    /// Whether it is the addition (for which MPI's own sum serves the primitive number types).
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub(crate) is_sum: bool,
    /// Two values of the same shape and dtype, combined.
    pub(crate) combine: fn(&Array, &Array) -> Array,
}

impl Reduction {
    /// `values` combined in order.
    pub(crate) fn fold(self, values: &[Array]) -> Array {
        let (first, rest) = values.split_first().expect("an axis has at least one member");
        rest.iter().fold(first.clone(), |acc, v| (self.combine)(&acc, v))
    }
}

/// What a collective over an axis across processes does with the local members' values
/// (`what` names it to the other processes).
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
struct Across<'a> {
    what: &'a str,
    reduction: Option<Reduction>,
}

impl Across<'_> {
    /// Every process's values gathered, or for a reduction the one value combined from
    /// every process's.
    #[cfg(feature = "distributed")]
    fn run(&self, values: Vec<Array>) -> Vec<Array> {
        match self.reduction {
            None => super::distributed::all_gather(self.what, &values),
            Some(reduction) => {
                let host: Vec<Array> = values.iter().map(on_host).collect();
                let mine = reduction.fold(&host);
                vec![super::distributed::all_reduce(self.what, &mine, reduction)]
            }
        }
    }

    #[cfg(not(feature = "distributed"))]
    fn run(&self, _values: Vec<Array>) -> Vec<Array> {
        unreachable!("only the distributed feature makes launches across processes")
    }
}

/// `x` on the host (values from several GPUs combine there before they cross processes).
#[cfg(feature = "distributed")]
fn on_host(x: &Array) -> Array {
    if x.device().is_host() {
        x.clone()
    } else {
        super::device_put(x, Device::Cpu(0))
    }
}

/// One axis a shard thread belongs to.
#[derive(Clone)]
struct Frame {
    name: String,
    /// The position on the axis and its size, over all processes it spans.
    index: usize,
    size: usize,
    /// The position among this process's members.
    local: usize,
    comm: Arc<Comm>,
    /// Which of its parent thread's launches made this axis.
    launch: u64,
}

/// A thread's SPMD context.
#[derive(Clone, Default)]
struct Context {
    frames: Vec<Frame>,
    /// Collectives done per axis (by frame position), for the meeting key.
    done: Vec<u64>,
    /// Launches this thread made, to tell repeated inner launches apart.
    launches: u64,
    /// Devices left for launches from this thread (`None`: all of them), from this one on.
    devices: Option<usize>,
    first_device: usize,
    /// The platform of the launch this thread belongs to.
    platform: Platform,
}

thread_local! {
    static CONTEXT: RefCell<Context> = RefCell::new(Context::default());
}

/// Runs `shard(i)` for `i in 0..size` in parallel, each on its own thread bound to member
/// `i` of axis `name` and to a device of `platform` (a nested launch keeps its enclosing
/// launch's platform), and returns the results in order.
///
/// # Panics
/// When `size` exceeds the devices available here (all of them at the top level, an outer
/// launch's share inside it), or when a shard panics (with that shard's message).
pub(crate) fn run_shards<R: Send>(
    name: &str,
    size: usize,
    platform: Platform,
    shard: impl Fn(usize) -> R + Sync,
) -> Vec<R> {
    let parent = CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        c.launches += 1;
        c.clone()
    });
    let platform = if parent.frames.is_empty() { platform } else { parent.platform };
    let available = available_devices(platform);
    if size > available {
        let share = if parent.frames.is_empty() {
            String::new()
        } else {
            let outer: Vec<String> =
                parent.frames.iter().map(|f| format!("`{}` ({})", f.name, f.size)).collect();
            format!(", its share of the devices under the enclosing pmap over {}", outer.join(", "))
        };
        panic!(
            "pmap: the mapped axis `{name}` has size {size}, but there are only {available} \
             devices{share}; {}",
            platform.more_devices_hint(size)
        );
    }
    let (rank, processes) = if parent.frames.is_empty() { spanned_processes() } else { (0, 1) };
    let comm = Arc::new(Comm::new(size, processes > 1));
    // The devices' threads compute in the caller's dtype mode.
    let x64 = crate::config::x64_enabled();
    let results: Vec<Result<R, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..size)
            .map(|index| {
                let mut context = parent.clone();
                context.frames.push(Frame {
                    name: name.to_string(),
                    index: rank * size + index,
                    size: processes * size,
                    local: index,
                    comm: comm.clone(),
                    launch: parent.launches,
                });
                context.done = vec![0; context.frames.len()];
                context.launches = 0;
                let share = available / size.max(1);
                context.devices = Some(share);
                context.first_device = parent.first_device + index * share;
                context.platform = platform;
                let shard = &shard;
                scope.spawn(move || {
                    crate::config::with_x64(x64, || run_one(context, || shard(index)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|p| Err(panic_text(&*p)))).collect()
    });
    let mut outputs = Vec::with_capacity(size);
    let mut first_failure: Option<(usize, String)> = None;
    for (index, result) in results.into_iter().enumerate() {
        match result {
            Ok(r) => outputs.push(r),
            Err(message) => {
                let original = !message.starts_with(STOPPED);
                if first_failure.as_ref().is_none_or(|(_, m)| m.starts_with(STOPPED) && original) {
                    first_failure = Some((index, message));
                }
            }
        }
    }
    if let Some((index, message)) = first_failure {
        let failure = format!(
            "pmap over `{name}`: device {} of {} failed: {message}",
            rank * size + index,
            processes * size
        );
        if processes > 1 {
            tell_other_processes(&failure);
        }
        panic!("{failure}");
    }
    outputs
}

/// This process's index and the number of processes a top-level launch spans.
#[cfg(feature = "distributed")]
pub(crate) fn spanned_processes() -> (usize, usize) {
    super::distributed::spanning().unwrap_or((0, 1))
}

/// This process's index and the number of processes a top-level launch spans.
#[cfg(not(feature = "distributed"))]
pub(crate) fn spanned_processes() -> (usize, usize) {
    (0, 1)
}

/// `f()`, which builds a launch across processes when `across` is set: if it panics, the
/// other processes are told (they would wait for this one at the launch's collectives).
pub(crate) fn telling_other_processes<R>(across: bool, f: impl FnOnce() -> R) -> R {
    if !across {
        return f();
    }
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        tell_other_processes(&format!("tracing pmap's function: {}", panic_text(&*payload)));
        std::panic::resume_unwind(payload)
    })
}

#[cfg(feature = "distributed")]
fn tell_other_processes(failure: &str) {
    super::distributed::tell_failure(failure);
}

#[cfg(not(feature = "distributed"))]
fn tell_other_processes(_failure: &str) {}

/// Runs one shard with its context installed; a panic fails every axis it belongs to.
fn run_one<R>(context: Context, shard: impl FnOnce() -> R) -> Result<R, String> {
    let comms: Vec<Arc<Comm>> = context.frames.iter().map(|f| f.comm.clone()).collect();
    CONTEXT.with(|c| *c.borrow_mut() = context);
    catch_unwind(AssertUnwindSafe(shard)).map_err(|payload| {
        let message = panic_text(&*payload);
        for comm in &comms {
            comm.fail(&message);
        }
        message
    })
}

/// The message a panic carried.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// How many devices a launch from this thread may use: all of `platform`'s at the top
/// level, an enclosing launch's share on its shard threads.
pub(crate) fn available_devices(platform: Platform) -> usize {
    CONTEXT.with(|c| c.borrow().devices).unwrap_or_else(|| platform.device_count())
}

/// The message for a launch of `size` shards over more devices than `platform` offers here.
pub(crate) fn too_few_devices(platform: Platform, size: usize, available: usize) -> String {
    format!(
        "pmap: the mapped axis has size {size}, but only {available} devices are available \
         here; {}",
        platform.more_devices_hint(size)
    )
}

/// Whether this thread runs a shard of a launch (its collectives and device share live in
/// this thread's context, so its work must stay on it).
pub(crate) fn in_shard() -> bool {
    CONTEXT.with(|c| !c.borrow().frames.is_empty())
}

/// The device this thread runs a shard for (`cpu:0` outside any launch).
pub(crate) fn current_device() -> Device {
    CONTEXT.with(|c| {
        let c = c.borrow();
        c.platform.device(c.first_device)
    })
}

/// This thread's position on axis `name`, if a launch bound it.
pub(crate) fn axis_index(name: &str) -> Option<usize> {
    CONTEXT.with(|c| c.borrow().frames.iter().rev().find(|f| f.name == name).map(|f| f.index))
}

/// Every member's value of `value` along axis `name`, in member order, and this thread's
/// position; `None` when no launch bound `name` here. `op` names the collective.
///
/// # Panics
/// For an axis across processes reached from a nested launch's thread: the processes could
/// not tell its groups of inner members apart.
pub(crate) fn exchange(op: &str, name: &str, value: Array) -> Option<(usize, Vec<Array>)> {
    meet(op, name, value, None)
}

/// Every member's `value` along axis `name` combined by `reduction` (in member order within
/// a process); `None` when no launch bound `name` here. Across processes each process
/// combines its members' values, and one MPI all-reduce combines the processes'.
///
/// # Panics
/// As [`exchange`].
pub(crate) fn reduce(op: &str, name: &str, value: Array, reduction: Reduction) -> Option<Array> {
    let (_, values) = meet(op, name, value, Some(reduction))?;
    Some(reduction.fold(&values))
}

/// This thread's position on axis `name` and the members' values (for a `reduction` across
/// processes, the one value already combined).
fn meet(
    op: &str,
    name: &str,
    value: Array,
    reduction: Option<Reduction>,
) -> Option<(usize, Vec<Array>)> {
    let (comm, key, index, local) = CONTEXT.with(|c| {
        let mut c = c.borrow_mut();
        let k = c.frames.iter().rposition(|f| f.name == name)?;
        if c.frames[k].comm.across_processes && k + 1 < c.frames.len() {
            panic!(
                "{op} over `{name}`: an axis across processes takes collectives only from its \
                 own pmap's devices, not from a pmap nested inside it"
            );
        }
        let others: Vec<usize> =
            c.frames.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, f)| f.index).collect();
        let launches: Vec<u64> = c.frames[k + 1..].iter().map(|f| f.launch).collect();
        let done = c.done[k];
        c.done[k] += 1;
        let frame = &c.frames[k];
        Some((frame.comm.clone(), (others, launches, done), frame.index, frame.local))
    })?;
    let what = format!("{op} over `{name}` ({} members)", comm.size);
    let values = comm.exchange(key, local, value, Across { what: &what, reduction });
    Some((index, values.iter().map(arrive).collect()))
}

/// A value another member sent, on this shard's device: as it is on the host (its devices
/// share memory), copied from another GPU.
fn arrive(value: &Array) -> Array {
    let here = current_device();
    if value.device() == here || value.device().is_host() {
        value.clone()
    } else {
        super::device_put(value, here)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(x: f32) -> Array {
        Array::from(x)
    }

    fn scalar(a: &Array) -> f32 {
        a.item::<f32>().unwrap()
    }

    /// Launches here do not depend on the configured device count.
    fn launch<R: Send>(name: &str, size: usize, shard: impl Fn(usize) -> R + Sync) -> Vec<R> {
        CONTEXT.with(|c| c.borrow_mut().devices = Some(64));
        run_shards(name, size, Platform::Cpu, shard)
    }

    #[test]
    fn members_exchange_values_in_order_many_times() {
        let out = launch("i", 4, |d| {
            (0..3)
                .map(|round| {
                    let (me, all) = exchange("test", "i", value((10 * round + d) as f32)).unwrap();
                    assert_eq!(me, d);
                    all.iter().map(scalar).sum::<f32>()
                })
                .collect::<Vec<_>>()
        });
        for sums in out {
            assert_eq!(sums, vec![6.0, 46.0, 86.0]);
        }
    }

    #[test]
    fn inner_members_meet_the_other_outer_shards_by_their_inner_position() {
        // 3 x 2 shards; two inner launches per outer shard, each exchanging over the outer axis.
        let out = launch("outer", 3, |i| {
            (0..2)
                .map(|call| {
                    launch("inner", 2, |j| {
                        let (_, all) =
                            exchange("test", "outer", value((100 * call + 10 * i + j) as f32))
                                .unwrap();
                        all.iter().map(scalar).collect::<Vec<_>>()
                    })
                })
                .collect::<Vec<_>>()
        });
        for per_outer in &out {
            for (call, per_inner) in per_outer.iter().enumerate() {
                for (j, got) in per_inner.iter().enumerate() {
                    let want: Vec<f32> = (0..3).map(|i| (100 * call + 10 * i + j) as f32).collect();
                    assert_eq!(got, &want);
                }
            }
        }
    }

    #[test]
    fn a_panic_on_one_device_fails_the_launch_without_hanging() {
        let message = std::panic::catch_unwind(|| {
            launch("i", 4, |d| {
                if d == 2 {
                    panic!("device two broke");
                }
                exchange("test", "i", value(1.0)).unwrap();
            })
        })
        .expect_err("the launch must fail");
        let text = panic_text(&*message);
        assert!(text.contains("device 2 of 4 failed: device two broke"), "{text}");
    }

    #[test]
    fn outside_a_launch_no_axis_is_bound() {
        assert!(exchange("test", "i", value(1.0)).is_none());
        assert_eq!(axis_index("i"), None);
    }

    #[test]
    fn a_launch_larger_than_the_devices_is_refused() {
        let message = std::panic::catch_unwind(|| {
            CONTEXT.with(|c| c.borrow_mut().devices = Some(2));
            run_shards("i", 3, Platform::Cpu, |_| ())
        })
        .expect_err("3 shards on 2 devices");
        assert!(panic_text(&*message).contains("size 3, but there are only 2 devices"));
    }
}
