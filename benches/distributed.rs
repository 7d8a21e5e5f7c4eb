//! Collectives across processes (feature `distributed`): this program starts itself under
//! `mpirun` on this machine, each process with one virtual CPU device.
//!
//! - An all-reduce of a 25 MB `f32` gradient over 2 and 4 processes: `lax::psum` in a `pmap`
//!   across the processes, beside MPI's own `MPI_Allreduce` of the same buffer (through the
//!   `mpi` crate rjax re-exports), with the ratio of their median times. The psum's input is
//!   already in a `pmap`'s pieces, as a gradient computed on the devices is, and its time
//!   includes making its result (a new array), which MPI's is given.
//! - One data-parallel training step of the digits MLP (a batch of 256 over all processes,
//!   gradients averaged with `pmean`, then Adam) on 1, 2 and 4 processes, in ms per step.
//!
//! ```text
//! cargo bench --features distributed --bench distributed
//! ```
//!
//! Needs `mpirun` (Open MPI or MPICH) on the PATH; `RJAX_BENCH_CHILD` selects a child's part.

use std::process::Command;
use std::time::{Duration, Instant};

use rjax::distributed::{self, mpi};
use rjax::optim::{self, Adam, GradientTransformation};
use rjax::prelude::*;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::CommunicatorCollectives;

#[path = "../examples/common/digits.rs"]
mod digits;

use digits::{init_params, load_digits, loss_and_grad, train_test_split, Params, CLASSES, PIXELS};

const CHILD: &str = "RJAX_BENCH_CHILD";
/// 25 MB of `f32`.
const ELEMENTS: usize = 25_000_000 / 4;
const WARMUP: usize = 3;
const ROUNDS: usize = 20;
/// Examples per training step, over all processes.
const BATCH: usize = 256;
const STEPS: usize = 30;

fn main() {
    match std::env::var(CHILD) {
        Ok(part) => child(&part),
        Err(_) => {
            for processes in [2, 4] {
                launch(processes, "allreduce");
            }
            for processes in [1, 2, 4] {
                launch(processes, "step");
            }
        }
    }
}

/// Runs `part` on `processes` processes; their output goes to this one's.
fn launch(processes: usize, part: &str) {
    let exe = std::env::current_exe().expect("the bench's own path");
    let status = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", &processes.to_string()])
        .args(["--mca", "btl_vader_single_copy_mechanism", "none"])
        .args(["-x", CHILD, "-x", "RJAX_CPU_DEVICES"])
        .arg(exe)
        .env(CHILD, part)
        .env("RJAX_CPU_DEVICES", "1")
        .status()
        .expect("mpirun must be installed (Open MPI or MPICH)");
    assert!(status.success(), "{part} on {processes} processes failed");
}

fn child(part: &str) {
    distributed::initialize().expect("joining the other processes");
    let world = SimpleCommunicator::world();
    match part {
        "allreduce" => allreduce(&world),
        "step" => training_step(&world),
        other => panic!("unknown part {other}"),
    }
}

/// Each device's rows, left in pieces on the devices.
#[pmap(axis_name = "i")]
fn on_devices(x: &Array) -> Array {
    x * 1.0
}

#[pmap(axis_name = "i")]
fn summed(x: &Array) -> Array {
    lax::psum(x, "i")
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// `f`'s time, all processes starting it together.
fn timed(world: &SimpleCommunicator, f: impl FnOnce()) -> Duration {
    world.barrier();
    let start = Instant::now();
    f();
    start.elapsed()
}

fn allreduce(world: &SimpleCommunicator) {
    let (rank, processes) = (distributed::process_index(), distributed::process_count());
    assert_eq!(distributed::local_devices().len(), 1, "one device per process");
    let data: Vec<f32> = (0..ELEMENTS).map(|k| ((k + rank) % 97) as f32 * 0.01).collect();
    let pieces = on_devices(&Array::from_shape_vec([1, ELEMENTS], data.clone()));
    let mut theirs = vec![0f32; ELEMENTS];
    world.all_reduce_into(&data[..], &mut theirs[..], SystemOperation::sum());
    let ours = summed(&pieces).to_vec::<f32>().unwrap();
    assert!(ours == theirs, "psum and MPI_Allreduce disagree");
    let (mut rjax_times, mut mpi_times, mut fresh_times) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..WARMUP + ROUNDS {
        let mut result = None;
        let ours = timed(world, || result = Some(summed(&pieces)));
        drop(result);
        let mpi = timed(world, || {
            world.all_reduce_into(&data[..], &mut theirs[..], SystemOperation::sum())
        });
        // Into a new buffer, as psum's result is: its pages are touched for the first time.
        let mut fresh = Vec::new();
        let fresh_time = timed(world, || {
            fresh = vec![0f32; ELEMENTS];
            world.all_reduce_into(&data[..], &mut fresh[..], SystemOperation::sum())
        });
        drop(fresh);
        if round >= WARMUP {
            rjax_times.push(ours);
            mpi_times.push(mpi);
            fresh_times.push(fresh_time);
        }
    }
    if rank == 0 {
        let (ours, mpi, fresh) = (median(rjax_times), median(mpi_times), median(fresh_times));
        println!(
            "all-reduce of 25 MB f32 over {processes} processes (median of {ROUNDS}): rjax psum \
             {ours:.2} ms; MPI_Allreduce {mpi:.2} ms into a reused buffer (ratio {:.3}), \
             {fresh:.2} ms into a new one (ratio {:.3})",
            ours / mpi,
            ours / fresh
        );
    }
}

type OptState = <Adam as GradientTransformation>::State<Params>;

/// The data-parallel step of `examples/multihost_data_parallel.rs`.
#[pmap(axis_name = "devices", in_axes = (None, None, 0, 0, None), out_axes = None)]
fn parallel_step(
    params: Params,
    state: OptState,
    images: &Array,
    labels: &Array,
    learning_rate: &Array,
) -> (Params, OptState) {
    let (_, grads) = loss_and_grad(&params, images, labels);
    let mut mean_grads = Vec::new();
    for (w, b) in &grads {
        mean_grads.push((lax::pmean(w, "devices"), lax::pmean(b, "devices")));
    }
    let (updates, state) = optim::adam(learning_rate).update(&mean_grads, &state, &params);
    (optim::apply_updates(&params, &updates), state)
}

/// This process's rows of batch `step`, as `[1 device, rows, ...]`.
fn shard(x: &Array, step: usize, rank: usize, processes: usize) -> Array {
    let per_process = BATCH / processes;
    let first = (step * BATCH) % (x.shape()[0] - BATCH) + rank * per_process;
    let mine = x.slice(s![first..first + per_process]);
    let mut shape = vec![1, per_process];
    shape.extend_from_slice(&x.shape()[1..]);
    mine.reshape(shape)
}

fn training_step(world: &SimpleCommunicator) {
    let (rank, processes) = (distributed::process_index(), distributed::process_count());
    let keys = random::split(&random::key(0), 2);
    let (train, _) = train_test_split(&load_digits(), &keys.get(0));
    let mut params = init_params(&[PIXELS, 64, CLASSES], &keys.get(1));
    let mut state = optim::adam(0.0).init(&params);
    let lr = Array::from(3e-3f32);
    let batches: Vec<(Array, Array)> = (0..WARMUP + STEPS)
        .map(|step| {
            let images = shard(&train.images, step, rank, processes);
            (images, shard(&train.labels, step, rank, processes))
        })
        .collect();
    let mut run = |batches: &[(Array, Array)]| {
        for (images, labels) in batches {
            (params, state) = parallel_step(params.clone(), state.clone(), images, labels, &lr);
        }
    };
    run(&batches[..WARMUP]);
    let took = timed(world, || run(&batches[WARMUP..]));
    if rank == 0 {
        println!(
            "data-parallel training step (digits MLP, batch {BATCH}) on {processes} \
             process(es): {:.2} ms per step (mean of {STEPS})",
            took.as_secs_f64() * 1e3 / STEPS as f64
        );
    }
}
