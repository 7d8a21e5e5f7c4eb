//! Data-parallel training on 8 virtual CPU devices: each device takes an eighth of every
//! batch, computes its gradient, and `lax::pmean` averages the gradients over the devices
//! before the same Adam step on each, so every device keeps the same parameters, and they
//! are the parameters single-device training on the whole batch gives.
//!
//! ```text
//! cargo run --release --example data_parallel
//! ```

use std::time::Instant;

use clap::Parser;
use rjax::optim::{self, Adam, GradientTransformation};
use rjax::prelude::*;

#[path = "common/digits.rs"]
mod digits;

use digits::{
    accuracy, init_params, load_digits, loss_and_grad, train_test_split, Params, CLASSES, PIXELS,
};

const DEVICES: usize = 8;

#[derive(Parser, Debug)]
#[command(about = "Data-parallel training of the digits MLP on 8 virtual CPU devices")]
struct Args {
    /// Passes over the training set.
    #[arg(long, default_value_t = 10)]
    epochs: usize,
    /// Examples per step, split evenly over the 8 devices.
    #[arg(long, default_value_t = 64)]
    batch_size: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 3e-3)]
    learning_rate: f32,
}

type OptState = <Adam as GradientTransformation>::State<Params>;

/// One step on every device: the shard's gradient, averaged over the devices, then Adam.
/// Parameters and optimizer state are replicated (`None`), the batch is split (`0`), and
/// the replicated results come back once (`out_axes = None`).
#[pmap(axis_name = "devices", in_axes = (None, None, 0, 0, None), out_axes = None)]
fn parallel_step(
    params: Params,
    state: OptState,
    images: &Array,
    labels: &Array,
    learning_rate: &Array,
) -> (Params, OptState, Array) {
    let (loss, grads) = loss_and_grad(&params, images, labels);
    let mut mean_grads = Vec::new();
    for (w, b) in &grads {
        mean_grads.push((lax::pmean(w, "devices"), lax::pmean(b, "devices")));
    }
    let (updates, state) = optim::adam(learning_rate).update(&mean_grads, &state, &params);
    (optim::apply_updates(&params, &updates), state, lax::pmean(loss, "devices"))
}

/// The same step on one device and the whole batch.
#[jit]
fn single_step(
    params: Params,
    state: OptState,
    images: &Array,
    labels: &Array,
    learning_rate: &Array,
) -> (Params, OptState, Array) {
    let (loss, grads) = loss_and_grad(&params, images, labels);
    let (updates, state) = optim::adam(learning_rate).update(&grads, &state, &params);
    (optim::apply_updates(&params, &updates), state, loss)
}

/// `[batch, ...]` as `[DEVICES, batch / DEVICES, ...]`.
fn shard(x: &Array) -> Array {
    let mut shape = vec![DEVICES, x.shape()[0] / DEVICES];
    shape.extend_from_slice(&x.shape()[1..]);
    x.reshape(shape)
}

/// The largest difference between two parameter sets.
fn max_difference(a: &Params, b: &Params) -> f32 {
    let diffs = tree::map2(a, b, |x, y| (x - y).abs().max());
    tree::leaves(&diffs).iter().map(|d| d.item::<f32>().unwrap()).fold(0.0, f32::max)
}

/// Trains both ways on the same batches; returns both parameter sets and the test split.
fn train(args: &Args) -> (Params, Params, digits::Split) {
    rjax::device::set_cpu_device_count(DEVICES).expect("the device count is set before first use");
    assert!(
        args.batch_size.is_multiple_of(DEVICES),
        "--batch-size must be a multiple of {DEVICES}"
    );
    let keys = random::split(&random::key(0), 3);
    let (train, test) = train_test_split(&load_digits(), &keys.get(0));
    let init = init_params(&[PIXELS, 64, CLASSES], &keys.get(1));
    let lr = Array::from(args.learning_rate);
    let (mut parallel, mut parallel_state) = (init.clone(), optim::adam(0.0).init(&init));
    let (mut single, mut single_state) = (init.clone(), optim::adam(0.0).init(&init));
    let steps_per_epoch = train.len() / args.batch_size;
    let mut shuffle_key = keys.get(2);
    let (mut parallel_time, mut single_time) = (0.0, 0.0);
    for epoch in 0..args.epochs {
        let split = random::split(&shuffle_key, 2);
        shuffle_key = split.get(0);
        let order = random::permutation(&split.get(1), train.len());
        let mut losses = Vec::new();
        for step in 0..steps_per_epoch {
            let rows = order.slice(s![step * args.batch_size..(step + 1) * args.batch_size]);
            let batch = train.rows(&rows);
            let start = Instant::now();
            let (p, s, loss) = parallel_step(
                parallel,
                parallel_state,
                &shard(&batch.images),
                &shard(&batch.labels),
                &lr,
            );
            (parallel, parallel_state) = (p, s);
            losses.push(loss.item::<f32>().unwrap());
            parallel_time += start.elapsed().as_secs_f64();
            let start = Instant::now();
            let (p, s, _) = single_step(single, single_state, &batch.images, &batch.labels, &lr);
            (single, single_state) = (p, s);
            single_time += start.elapsed().as_secs_f64();
        }
        let mean_loss = losses.iter().sum::<f32>() / losses.len() as f32;
        println!(
            "epoch {:>2}: loss {mean_loss:.4}, parameters differ from single-device training by at most {:.2e}",
            epoch + 1,
            max_difference(&parallel, &single)
        );
    }
    let steps = (args.epochs * steps_per_epoch).max(1) as f64;
    println!(
        "per step: {:.0} µs on {DEVICES} devices, {:.0} µs on one",
        parallel_time * 1e6 / steps,
        single_time * 1e6 / steps
    );
    (parallel, single, test)
}

fn main() {
    let args = Args::parse();
    let (parallel, single, test) = train(&args);
    let acc = |p: &Params| accuracy(p, &test.images, &test.labels).item::<f32>().unwrap();
    println!(
        "test accuracy: {:.2}% data-parallel, {:.2}% single-device",
        100.0 * acc(&parallel),
        100.0 * acc(&single)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of the example: averaging shard gradients with pmean reproduces
    /// single-device training (up to rounding in the order of the sums).
    #[test]
    fn data_parallel_training_matches_single_device_training() {
        let args = Args::parse_from(["data_parallel", "--epochs", "1"]);
        let (parallel, single, _) = train(&args);
        let diff = max_difference(&parallel, &single);
        assert!(diff < 1e-4, "the parameters differ by {diff}");
    }
}
