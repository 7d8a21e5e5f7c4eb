//! Data-parallel training across processes: the digits MLP of `train_digits`, each process
//! taking its share of every batch on its local devices, `lax::pmean` averaging the
//! gradients over every device of every process (one MPI call per collective), then the same
//! Adam step everywhere. Every process also trains on the whole batch alone, and process 0
//! prints the test accuracy and a checksum of both parameter sets: they agree up to rounding.
//!
//! ```text
//! cargo build --release --features distributed --example multihost_data_parallel
//! RJAX_CPU_DEVICES=2 mpirun -np 2 -x RJAX_CPU_DEVICES target/release/examples/multihost_data_parallel
//! ```

use rjax::distributed;
use rjax::optim::{self, Adam, GradientTransformation};
use rjax::prelude::*;

#[path = "common/digits.rs"]
mod digits;

use digits::{
    accuracy, init_params, load_digits, loss_and_grad, train_test_split, Params, CLASSES, PIXELS,
};

/// Examples per step over all processes.
const BATCH: usize = 64;
const EPOCHS: usize = 2;
const LEARNING_RATE: f32 = 3e-3;

type OptState = <Adam as GradientTransformation>::State<Params>;

/// One step on every device of every process: the shard's gradient, averaged over all of
/// them, then Adam. The replicated results come back once (`out_axes = None`).
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

/// The same step in one process on the whole batch.
#[jit]
fn single_step(
    params: Params,
    state: OptState,
    images: &Array,
    labels: &Array,
    learning_rate: &Array,
) -> (Params, OptState) {
    let (_, grads) = loss_and_grad(&params, images, labels);
    let (updates, state) = optim::adam(learning_rate).update(&grads, &state, &params);
    (optim::apply_updates(&params, &updates), state)
}

/// This process's rows of a global batch, as `[local devices, rows per device, ...]`.
fn local_shard(x: &Array, process: usize, processes: usize, local: usize) -> Array {
    let per_process = x.shape()[0] / processes;
    let mine = x.slice(s![process * per_process..(process + 1) * per_process]);
    let mut shape = vec![local, per_process / local];
    shape.extend_from_slice(&x.shape()[1..]);
    mine.reshape(shape)
}

/// The sum of every parameter, in f64.
fn checksum(params: &Params) -> f64 {
    let values = |p: &Array| p.to_vec::<f32>().unwrap();
    tree::leaves(params).iter().flat_map(values).map(f64::from).sum()
}

fn main() {
    distributed::initialize().expect("joining the other processes");
    let (process, processes) = (distributed::process_index(), distributed::process_count());
    let local = distributed::local_devices().len();
    assert!(
        BATCH.is_multiple_of(processes * local),
        "the batch of {BATCH} must split evenly over {} devices",
        processes * local
    );
    let keys = random::split(&random::key(0), 3);
    let (train, test) = train_test_split(&load_digits(), &keys.get(0));
    let init = init_params(&[PIXELS, 64, CLASSES], &keys.get(1));
    let lr = Array::from(LEARNING_RATE);
    let (mut parallel, mut parallel_state) = (init.clone(), optim::adam(0.0).init(&init));
    let (mut single, mut single_state) = (init.clone(), optim::adam(0.0).init(&init));
    let mut shuffle_key = keys.get(2);
    for _ in 0..EPOCHS {
        let split = random::split(&shuffle_key, 2);
        shuffle_key = split.get(0);
        let order = random::permutation(&split.get(1), train.len());
        for step in 0..train.len() / BATCH {
            let batch = train.rows(&order.slice(s![step * BATCH..(step + 1) * BATCH]));
            let images = local_shard(&batch.images, process, processes, local);
            let labels = local_shard(&batch.labels, process, processes, local);
            (parallel, parallel_state) =
                parallel_step(parallel, parallel_state, &images, &labels, &lr);
            (single, single_state) =
                single_step(single, single_state, &batch.images, &batch.labels, &lr);
        }
    }
    if process == 0 {
        let acc = accuracy(&parallel, &test.images, &test.labels).item::<f32>().unwrap();
        let (sum, reference) = (checksum(&parallel), checksum(&single));
        println!("{processes} processes x {local} devices: test accuracy {:.2}%", 100.0 * acc);
        println!("parameter checksum {sum:.6}, single-process training {reference:.6}");
        println!("checksum difference {:.3e}", (sum - reference).abs());
    }
}
