//! What the digits examples share: the bundled data, the split, the model and its metrics.
// Each example uses its own part of this module.
#![allow(dead_code)]

use rjax::prelude::*;

/// The digits, as bundled: 64 pixels (0..16) and a label per line.
pub const DIGITS_CSV: &str = include_str!("../../data/digits/digits.csv");
pub const PIXELS: usize = 64;
pub const CLASSES: usize = 10;

/// The model's parameters: one `(weights, bias)` pair per layer.
pub type Params = Vec<(Array, Array)>;

/// Tanh hidden layers, a linear last layer: the logits.
#[traceable]
pub fn predict(params: &[(Array, Array)], inputs: &Array) -> Array {
    let mut inputs = inputs.clone();
    let mut outputs = inputs.clone();
    for (w, b) in params {
        outputs = inputs.dot(w) + b;
        inputs = outputs.tanh();
    }
    outputs
}

/// Mean softmax cross-entropy of the logits against one-hot labels, and its gradient.
#[traceable]
#[value_and_grad]
pub fn loss_and_grad(
    params: &[(Array, Array)],
    images: &Array,
    labels: &Array,
) -> (Array, Vec<(Array, Array)>) {
    let log_probs = jnp::log_softmax(&predict(params, images), -1);
    -jnp::sum_axes(&(log_probs * labels), -1, false).mean()
}

/// The fraction of `images` whose largest logit is the label.
#[jit]
pub fn accuracy(params: &[(Array, Array)], images: &Array, labels: &Array) -> Array {
    let predicted = predict(params, images).argmax_axis(-1, false);
    predicted.eq(labels.argmax_axis(-1, false)).astype(DType::F32).mean()
}

/// Images scaled to [0, 1] (`n x 64`) and one-hot labels (`n x 10`).
pub struct Split {
    pub images: Array,
    pub labels: Array,
}

impl Split {
    pub fn len(&self) -> usize {
        self.images.shape()[0]
    }

    /// The examples at `rows`, in that order.
    pub fn rows(&self, rows: &Array) -> Split {
        Split { images: self.images.take(rows, Some(0)), labels: self.labels.take(rows, Some(0)) }
    }
}

/// All 1797 digits, parsed from the bundled CSV.
pub fn load_digits() -> Split {
    let mut pixels = Vec::new();
    let mut labels = Vec::new();
    for (number, line) in DIGITS_CSV.lines().enumerate() {
        let values: Vec<u8> = line
            .split(',')
            .map(|v| {
                v.trim().parse().unwrap_or_else(|e| panic!("digits.csv line {}: {e}", number + 1))
            })
            .collect();
        assert_eq!(values.len(), PIXELS + 1, "digits.csv line {}: expected 65 values", number + 1);
        pixels.extend(values[..PIXELS].iter().map(|&p| f32::from(p) / 16.0));
        labels.push(i32::from(values[PIXELS]));
    }
    let n = labels.len();
    Split {
        images: Array::from_shape_vec([n, PIXELS], pixels),
        labels: jnp::one_hot(&Array::from_shape_vec([n], labels), CLASSES),
    }
}

/// A fixed 80/20 split of a random permutation.
pub fn train_test_split(all: &Split, key: &random::Key) -> (Split, Split) {
    let order = random::permutation(key, all.len()).to_vec::<i32>().expect("concrete indices");
    let n_train = all.len() * 4 / 5;
    let take = |part: &[i32]| all.rows(&Array::from_shape_vec([part.len()], part.to_vec()));
    (take(&order[..n_train]), take(&order[n_train..]))
}

/// Glorot-normal weights and zero biases for layer widths `sizes`.
pub fn init_params(sizes: &[usize], key: &random::Key) -> Params {
    let keys = random::split(key, sizes.len() - 1);
    sizes
        .windows(2)
        .enumerate()
        .map(|(i, io)| {
            let w = random::init::glorot_normal().init(&keys.get(i), [io[0], io[1]]);
            (w, jnp::zeros([io[1]]))
        })
        .collect()
}
