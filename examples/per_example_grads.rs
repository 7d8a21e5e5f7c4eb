//! Differentially private SGD (DP-SGD) on the digits: per-example gradients with
//! `#[vmap(in_axes = (None, 0, 0))] #[grad]`, each clipped to an L2 norm of at most `C`,
//! summed, noised with `N(0, (σC)^2)` and averaged, then an SGD step.
//!
//! ```text
//! cargo run --release --example per_example_grads
//! cargo run --release --example per_example_grads -- --clip 1.0 --noise 1.1 --epochs 20
//! ```
//!
//! Clipping per example bounds how much any one example can move the model, which is what
//! plain batch gradients cannot do, and why per-example gradients are vmap's killer use.

use std::time::Instant;

use clap::Parser;
use rjax::optim::{self, GradientTransformation};
use rjax::prelude::*;

#[path = "common/digits.rs"]
mod digits;

use digits::{
    accuracy, init_params, load_digits, predict, train_test_split, Params, CLASSES, PIXELS,
};

#[derive(Parser, Debug)]
#[command(about = "DP-SGD on the UCI handwritten digits with per-example gradients")]
struct Args {
    /// Passes over the training set.
    #[arg(long, default_value_t = 30)]
    epochs: usize,
    /// Examples per step.
    #[arg(long, default_value_t = 64)]
    batch_size: usize,
    /// SGD's learning rate.
    #[arg(long, default_value_t = 0.5)]
    learning_rate: f64,
    /// Largest L2 norm of one example's gradient (`C`).
    #[arg(long, default_value_t = 1.0)]
    clip: f32,
    /// Noise multiplier (`σ`): the noise's standard deviation is `σ C`.
    #[arg(long, default_value_t = 0.5)]
    noise: f32,
    /// Seed for the split, the initialization, the shuffling and the noise.
    #[arg(long, default_value_t = 0)]
    seed: i64,
}

/// One example's softmax cross-entropy.
#[traceable]
fn example_loss(params: &[(Array, Array)], image: &Array, label: &Array) -> Array {
    let log_probs = jnp::log_softmax(&predict(params, image), -1);
    -(log_probs * label).sum()
}

/// Every example's gradient at once: the leaves gain a leading batch axis.
#[jit]
#[vmap(in_axes = (None, 0, 0))]
#[grad]
fn per_example_grads(
    params: &[(Array, Array)],
    image: &Array,
    label: &Array,
) -> Vec<(Array, Array)> {
    example_loss(params, image, label)
}

/// Clips each example's gradient (all leaves together) to norm `clip`, sums over the batch,
/// adds the Gaussian noise and averages: the privatized batch gradient.
#[jit]
fn privatize(grads: &[(Array, Array)], noise: &[(Array, Array)], clip: f32) -> Vec<(Array, Array)> {
    let batch = grads[0].0.shape()[0];
    let mut squares = jnp::zeros([batch]);
    for (w, b) in grads {
        squares = squares + w.square().sum_axes([1, 2], false) + b.square().sum_axes(1, false);
    }
    let scale = jnp::minimum(clip / (squares.sqrt() + 1e-12), 1.0);
    let mut out = Vec::new();
    for ((w, b), (nw, nb)) in grads.iter().zip(noise) {
        let w = (w * scale.reshape([batch, 1, 1])).sum_axes(0, false) + nw * clip;
        let b = (b * scale.reshape([batch, 1])).sum_axes(0, false) + nb * clip;
        out.push((w / batch as f64, b / batch as f64));
    }
    out
}

/// Standard normal noise shaped like the parameters, times `noise`.
fn gaussian_like(params: &Params, key: &random::Key, noise: f32) -> Params {
    let keys = random::split(key, params.len() * 2);
    params
        .iter()
        .enumerate()
        .map(|(i, (w, b))| {
            let draw = |k: usize, a: &Array| random::normal(&keys.get(k), a.shape()) * noise;
            (draw(2 * i, w), draw(2 * i + 1, b))
        })
        .collect()
}

fn main() {
    let args = Args::parse();
    let keys = random::split(&random::key(args.seed), 4);
    let (train, test) = train_test_split(&load_digits(), &keys.get(0));
    let mut params = init_params(&[PIXELS, 64, CLASSES], &keys.get(1));
    let sgd = optim::sgd(args.learning_rate);
    let mut state = sgd.init(&params);
    let steps_per_epoch = train.len() / args.batch_size;
    let (mut shuffle_key, mut noise_key) = (keys.get(2), keys.get(3));
    println!(
        "DP-SGD: clip {} noise {} batch {} lr {} for {} epochs",
        args.clip, args.noise, args.batch_size, args.learning_rate, args.epochs
    );
    let start = Instant::now();
    for epoch in 0..args.epochs {
        let shuffle = random::split(&shuffle_key, 2);
        shuffle_key = shuffle.get(0);
        let order = random::permutation(&shuffle.get(1), train.len());
        for step in 0..steps_per_epoch {
            let rows = order.slice(s![step * args.batch_size..(step + 1) * args.batch_size]);
            let batch = train.rows(&rows);
            let grads = per_example_grads(&params, &batch.images, &batch.labels);
            let noise_keys = random::split(&noise_key, 2);
            noise_key = noise_keys.get(0);
            let noise = gaussian_like(&params, &noise_keys.get(1), args.noise);
            let private = privatize(&grads, &noise, args.clip);
            let (updates, next) = sgd.update(&private, &state, &params);
            (params, state) = (optim::apply_updates(&params, &updates), next);
        }
        if (epoch + 1) % 5 == 0 || epoch + 1 == args.epochs {
            let acc = accuracy(&params, &test.images, &test.labels).item::<f32>().unwrap();
            println!("epoch {:>3}: test accuracy {:.1}%", epoch + 1, 100.0 * acc);
        }
    }
    let steps = args.epochs * steps_per_epoch;
    println!(
        "{steps} steps in {:.2} s ({:.0} µs per step, per-example gradients of {} examples each)",
        start.elapsed().as_secs_f64(),
        start.elapsed().as_secs_f64() * 1e6 / steps.max(1) as f64,
        args.batch_size
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without noise, the privatized gradient is the mean of the clipped per-example
    /// gradients: checked against clipping each example's own `grad` in a loop.
    #[test]
    fn privatize_clips_each_example_then_averages() {
        let keys = random::split(&random::key(3), 2);
        let (train, _) = train_test_split(&load_digits(), &keys.get(0));
        let params = init_params(&[PIXELS, 16, CLASSES], &keys.get(1));
        let batch = train.rows(&jnp::arange(8.0).astype(DType::I32));
        let clip = 0.05;
        let zero_noise = tree::map(&params, jnp::zeros_like);
        let got =
            privatize(&per_example_grads(&params, &batch.images, &batch.labels), &zero_noise, clip);

        let mut want: Params = tree::map(&params, jnp::zeros_like);
        for i in 0..8 {
            let (image, label) = (batch.images.slice(s![i]), batch.labels.slice(s![i]));
            let g = single_grad(&params, &image, &label);
            let norm = optim::global_norm(&g).item::<f32>().unwrap();
            assert!(norm > clip, "the test needs gradients that get clipped");
            want = tree::map2(&want, &g, |acc, g| acc + g * (clip / norm) / 8.0);
        }
        for ((gw, gb), (ww, wb)) in got.iter().zip(&want) {
            for (a, b) in [(gw, ww), (gb, wb)] {
                let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
                assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6), "{a:?} vs {b:?}");
            }
        }
    }

    #[grad]
    fn single_grad(params: &[(Array, Array)], image: &Array, label: &Array) -> Vec<(Array, Array)> {
        example_loss(params, image, label)
    }
}
