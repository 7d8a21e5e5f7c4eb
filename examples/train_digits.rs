//! Trains the README's tanh MLP on the UCI handwritten digits (bundled in `data/digits/`)
//! with softmax cross-entropy and Adam, in a plain Rust loop around one jitted step.
//!
//! ```text
//! cargo run --release --example train_digits
//! cargo run --release --example train_digits -- --epochs 5 --batch-size 64 --learning-rate 3e-3
//! cargo run --release --features gpu --example train_digits -- --device gpu
//! ```
//!
//! Prints the test accuracy and the time per step, saves the trained parameters as a
//! safetensors checkpoint, and draws the loss and accuracy curves to a PNG.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use rjax::device::{device_put, Device};
use rjax::optim::{self, Adam, GradientTransformation};
use rjax::prelude::*;

#[path = "common/digits.rs"]
mod digits;

use digits::{
    accuracy, init_params, load_digits, loss_and_grad, train_test_split, Params, CLASSES, PIXELS,
};

#[derive(Parser, Debug)]
#[command(about = "Train a tanh MLP on the UCI handwritten digits")]
struct Args {
    /// Passes over the training set.
    #[arg(long, default_value_t = 40)]
    epochs: usize,
    /// Examples per step (the last, partial batch of an epoch is dropped).
    #[arg(long, default_value_t = 32)]
    batch_size: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 3e-3)]
    learning_rate: f64,
    /// Hidden layer widths.
    #[arg(long, value_delimiter = ',', default_value = "128")]
    hidden: Vec<usize>,
    /// Seed for the split, the initialization and the shuffling.
    #[arg(long, default_value_t = 0)]
    seed: i64,
    /// Where to save the trained parameters.
    #[arg(long, default_value = "target/digits.safetensors")]
    checkpoint: PathBuf,
    /// Where to draw the curves.
    #[arg(long, default_value = "target/digits_curves.png")]
    plot: PathBuf,
    /// Fail (exit code 1) unless the test accuracy reaches this.
    #[arg(long)]
    min_accuracy: Option<f32>,
    /// Where the parameters live and the steps run: `cpu`, or `gpu` (the first GPU; needs
    /// `--features gpu`). Batches are gathered on the host and copied over each step.
    #[arg(long, default_value = "cpu")]
    device: String,
}

/// The device `--device` names.
fn chosen_device(name: &str) -> Result<Device, Box<dyn std::error::Error>> {
    match name {
        "cpu" => Ok(Device::Cpu(0)),
        "gpu" => Ok(rjax::device::gpu_devices()?[0]),
        other => Err(format!("--device {other}: expected cpu or gpu").into()),
    }
}

type OptState = <Adam as GradientTransformation>::State<Params>;

#[jit]
fn train_step(
    params: Params,
    state: OptState,
    images: &Array,
    labels: &Array,
    learning_rate: &Array,
) -> (Params, OptState, Array) {
    let (loss, grads) = loss_and_grad(&params, images, labels);
    let optimizer = optim::adam(learning_rate);
    let (updates, state) = optimizer.update(&grads, &state, &params);
    (optim::apply_updates(&params, &updates), state, loss)
}

/// Per-epoch curves.
#[derive(Default)]
struct History {
    loss: Vec<f32>,
    train_accuracy: Vec<f32>,
    test_accuracy: Vec<f32>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let history = train(&args)?;
    let test_accuracy = history.test_accuracy.last().copied().unwrap_or(0.0);
    if let Some(min) = args.min_accuracy {
        if test_accuracy < min {
            return Err(
                format!("test accuracy {test_accuracy} is below --min-accuracy {min}").into()
            );
        }
    }
    Ok(())
}

/// Trains as `args` say, prints the results, saves the checkpoint and the curves.
fn train(args: &Args) -> Result<History, Box<dyn std::error::Error>> {
    let key = random::key(args.seed);
    let keys = random::split(&key, 3);
    let (train, test) = train_test_split(&load_digits(), &keys.get(0));
    let sizes: Vec<usize> =
        std::iter::once(PIXELS).chain(args.hidden.iter().copied()).chain([CLASSES]).collect();
    let device = chosen_device(&args.device)?;
    let on_device = |x: &Array| device_put(x, device);
    let mut params: Params = rjax::tree::map(&init_params(&sizes, &keys.get(1)), on_device);
    let mut state: OptState =
        rjax::tree::map(&optim::adam(args.learning_rate).init(&params), on_device);
    let steps_per_epoch = train.len() / args.batch_size.max(1);
    if steps_per_epoch == 0 {
        let msg = format!(
            "--batch-size {} does not fit the {} training examples",
            args.batch_size,
            train.len()
        );
        return Err(msg.into());
    }
    println!(
        "digits: {} train / {} test, MLP {sizes:?}, adam({}), batch {}, {} epochs, on {device}",
        train.len(),
        test.len(),
        args.learning_rate,
        args.batch_size,
        args.epochs
    );

    let bar = ProgressBar::new((args.epochs * steps_per_epoch) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} steps {msg}")?);
    let mut history = History::default();
    let mut step_time = Duration::ZERO;
    let mut shuffle_key = keys.get(2);
    let learning_rate = Array::from(args.learning_rate as f32);
    for epoch in 0..args.epochs {
        let [next, epoch_key] = [0, 1].map(|i| random::split(&shuffle_key, 2).get(i));
        shuffle_key = next;
        let order = random::permutation(&epoch_key, train.len());
        let mut epoch_loss = 0.0;
        for step in 0..steps_per_epoch {
            let rows = order.slice(s![step * args.batch_size..(step + 1) * args.batch_size]);
            let batch = train.rows(&rows);
            let start = Instant::now();
            let (images, labels) = (on_device(&batch.images), on_device(&batch.labels));
            let (p, s, loss) = train_step(params, state, &images, &labels, &learning_rate);
            let loss = loss.item::<f32>()?;
            step_time += start.elapsed();
            (params, state) = (p, s);
            epoch_loss += loss;
            bar.inc(1);
        }
        history.loss.push(epoch_loss / steps_per_epoch as f32);
        history.train_accuracy.push(accuracy(&params, &train.images, &train.labels).item::<f32>()?);
        history.test_accuracy.push(accuracy(&params, &test.images, &test.labels).item::<f32>()?);
        bar.set_message(format!(
            "epoch {} loss {:.4} train {:.1}% test {:.1}%",
            epoch + 1,
            history.loss[epoch],
            100.0 * history.train_accuracy[epoch],
            100.0 * history.test_accuracy[epoch]
        ));
    }
    bar.finish();

    let steps = args.epochs * steps_per_epoch;
    let test_accuracy = history.test_accuracy.last().copied().unwrap_or(0.0);
    println!("test accuracy: {:.2}%", 100.0 * test_accuracy);
    println!(
        "time per step: {:.1} µs over {steps} steps (the first includes tracing)",
        step_time.as_secs_f64() * 1e6 / steps.max(1) as f64
    );
    if let Some(dir) = args.checkpoint.parent() {
        std::fs::create_dir_all(dir)?;
    }
    rjax::checkpoint::save(&args.checkpoint, &params)?;
    let restored: Params = rjax::checkpoint::load(&args.checkpoint, &params)?;
    let check = accuracy(&restored, &test.images, &test.labels).item::<f32>()?;
    assert_eq!(check, test_accuracy, "the checkpoint restores the trained parameters");
    println!("checkpoint: {}", args.checkpoint.display());
    plot::curves(&args.plot, &history)?;
    println!("curves: {}", args.plot.display());
    Ok(history)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short run (what CI affords): the loss falls and the test accuracy passes 90%.
    #[test]
    fn a_few_epochs_learn_the_digits() {
        let dir = std::env::temp_dir().join(format!("rjax-train-digits-{}", std::process::id()));
        let args = Args::parse_from([
            "train_digits",
            "--epochs",
            "4",
            "--checkpoint",
            dir.join("digits.safetensors").to_str().unwrap(),
            "--plot",
            dir.join("curves.png").to_str().unwrap(),
        ]);
        let history = train(&args).unwrap();
        assert!(history.loss[3] < 0.5 * history.loss[0], "the loss falls: {:?}", history.loss);
        let accuracy = history.test_accuracy[3];
        assert!(accuracy >= 0.9, "test accuracy {accuracy} after 4 epochs");
        assert!(dir.join("digits.safetensors").exists() && dir.join("curves.png").exists());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The same run on the first GPU (lavapipe in CI) reaches the CPU's accuracy.
    #[cfg(feature = "gpu")]
    #[test]
    fn the_gpu_trains_to_the_cpus_accuracy() {
        let require = std::env::var("RJAX_REQUIRE_GPU").as_deref() == Ok("1");
        if let Err(e) = rjax::device::gpu_devices() {
            assert!(!require, "RJAX_REQUIRE_GPU=1, but there is no GPU: {e}");
            eprintln!("skipped: no GPU ({e})");
            return;
        }
        let dir = std::env::temp_dir().join(format!("rjax-digits-gpu-{}", std::process::id()));
        let run = |device: &str| {
            let args = Args::parse_from([
                "train_digits",
                "--epochs",
                "3",
                "--device",
                device,
                "--checkpoint",
                dir.join(format!("{device}.safetensors")).to_str().unwrap(),
                "--plot",
                dir.join(format!("{device}.png")).to_str().unwrap(),
            ]);
            train(&args).unwrap()
        };
        let (cpu, gpu) = (run("cpu"), run("gpu"));
        let (a, b) = (cpu.test_accuracy[2], gpu.test_accuracy[2]);
        assert!(b >= 0.9 && (a - b).abs() <= 0.02, "test accuracy: cpu {a}, gpu {b}");
        std::fs::remove_dir_all(dir).unwrap();
    }
}

mod plot {
    //! The loss and accuracy curves, side by side, with plotters' bitmap backend.

    use std::path::Path;

    use plotters::prelude::*;

    use super::History;

    /// Fonts tried for the labels; without one the charts are drawn unlabelled.
    const FONTS: [&str; 3] = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/Library/Fonts/Arial Unicode.ttf",
    ];

    /// Registers the first font found as plotters' sans-serif; whether one was.
    fn register_font() -> bool {
        let Some(bytes) = FONTS.iter().find_map(|path| std::fs::read(path).ok()) else {
            return false;
        };
        // plotters keeps fonts for the life of the program.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
    }

    pub fn curves(path: &Path, history: &History) -> Result<(), Box<dyn std::error::Error>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let labelled = register_font();
        let root = BitMapBackend::new(path, (1000, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let (left, right) = root.split_horizontally(500);
        let epochs = history.loss.len().max(1) as f32;
        let max_loss = history.loss.iter().copied().fold(0.0f32, f32::max).max(1e-3);
        let series =
            |v: &[f32]| v.iter().enumerate().map(|(i, &y)| (i as f32 + 1.0, y)).collect::<Vec<_>>();

        let mut loss = chart(&left, labelled, "training loss", 0.0..max_loss * 1.05, epochs)?;
        loss.draw_series(LineSeries::new(series(&history.loss), &BLUE))?;

        let mut acc = chart(&right, labelled, "accuracy", 0.0..1.0, epochs)?;
        for (name, values, color) in
            [("train", &history.train_accuracy, BLUE), ("test", &history.test_accuracy, RED)]
        {
            let drawn = acc.draw_series(LineSeries::new(series(values), color))?;
            if labelled {
                drawn
                    .label(name)
                    .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
            }
        }
        if labelled {
            acc.configure_series_labels().position(SeriesLabelPosition::LowerRight).draw()?;
        }
        root.present()?;
        Ok(())
    }

    type Chart<'a> = ChartContext<
        'a,
        BitMapBackend<'a>,
        Cartesian2d<plotters::coord::types::RangedCoordf32, plotters::coord::types::RangedCoordf32>,
    >;

    fn chart<'a>(
        area: &DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>,
        labelled: bool,
        title: &str,
        y: std::ops::Range<f32>,
        epochs: f32,
    ) -> Result<Chart<'a>, Box<dyn std::error::Error>> {
        let mut builder = ChartBuilder::on(area);
        builder.margin(15).x_label_area_size(30).y_label_area_size(45);
        if labelled {
            builder.caption(title, ("sans-serif", 20));
        }
        let mut chart = builder.build_cartesian_2d(1.0f32..epochs.max(2.0), y)?;
        let mut mesh = chart.configure_mesh();
        if labelled {
            mesh.x_desc("epoch");
        } else {
            mesh.disable_x_mesh().disable_y_mesh().x_labels(0).y_labels(0);
        }
        mesh.draw()?;
        Ok(chart)
    }
}
