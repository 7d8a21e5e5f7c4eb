//! Layers as `jax.example_libraries.stax` builds them: a [`Layer`] is a pair of functions,
//! `init` (a key and an input shape give the output shape and the parameters) and `apply`
//! (parameters and inputs give the outputs), and combinators build networks from layers.
//!
//! The draws, shapes and defaults are stax's, so a network initialized from the same key has
//! the same parameters as in JAX. Parameters and activations are [`Nested`] values (an array,
//! or a sequence of nested values, as stax's tuples); shapes are [`Shapes`], whose `-1`
//! stands for an extent not known at `init` (the batch). Layers take JAX's names in snake
//! case (`Dense` is [`dense`], `Relu` is [`relu`]).
//!
//! ```
//! use rjax_runtime::nn::stax;
//! use rjax_runtime::{jnp, random};
//! let net = stax::serial([stax::dense(16), stax::relu(), stax::dense(3), stax::log_softmax()]);
//! let (out_shape, params) = net.init(&random::key(0), [-1, 8]);
//! assert_eq!(out_shape.dims(), &[-1, 3]);
//! let logits = net.apply(&params, &jnp::ones([5, 8]));
//! assert_eq!(logits.shape(), &[5, 3]);
//! ```

use std::sync::Arc;

use crate::array::Array;
use crate::jnp;
use crate::lax::{self, Padding, WindowOp};
use crate::random::{self, init::Initializer, Key};
use crate::tree::{DefReader, Node, Tree, TreeDef, Unflatten};

/// A parameter or activation value: an array, or a sequence of nested values (stax's tuples
/// and lists). A layer without parameters has the empty sequence. It is a pytree, so `grad`
/// and the optimizers take it as they take any tree of arrays.
#[derive(Clone, Debug)]
pub enum Nested {
    /// One array.
    Leaf(Array),
    /// A sequence of values.
    Seq(Vec<Nested>),
}

impl Nested {
    /// The array of a leaf; panics, naming what it holds, for a sequence.
    #[track_caller]
    pub fn array(&self) -> &Array {
        match self {
            Nested::Leaf(a) => a,
            Nested::Seq(items) => {
                panic!("stax: expected an array, found a sequence of {} values", items.len())
            }
        }
    }

    /// The values of a sequence; panics for a leaf.
    #[track_caller]
    pub fn items(&self) -> &[Nested] {
        match self {
            Nested::Seq(items) => items,
            Nested::Leaf(a) => panic!("stax: expected a sequence, found an array {}", a.aval()),
        }
    }

    /// The empty sequence: the parameters of a layer that has none.
    pub fn empty() -> Nested {
        Nested::Seq(Vec::new())
    }
}

impl From<Array> for Nested {
    fn from(a: Array) -> Nested {
        Nested::Leaf(a)
    }
}

impl From<&Array> for Nested {
    fn from(a: &Array) -> Nested {
        Nested::Leaf(a.clone())
    }
}

impl From<Vec<Nested>> for Nested {
    fn from(items: Vec<Nested>) -> Nested {
        Nested::Seq(items)
    }
}

impl Tree for Nested {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        match self {
            Nested::Leaf(a) => a.flatten_into(def, leaves),
            Nested::Seq(items) => items.flatten_into(def, leaves),
        }
    }
}

impl Unflatten for Nested {
    fn unflatten_from(def: &mut DefReader<'_>, leaves: &mut dyn Iterator<Item = Array>) -> Self {
        match def.next("an array or a sequence") {
            Node::Leaf => {
                Nested::Leaf(leaves.next().expect("unflatten: fewer leaves than the structure has"))
            }
            &Node::Seq(n) => {
                Nested::Seq((0..n).map(|_| Nested::unflatten_from(def, leaves)).collect())
            }
            other => {
                let other = other.clone();
                def.mismatch("an array or a sequence", &other)
            }
        }
    }
}

/// The shape of a [`Nested`] value: the extents of an array (`-1` where `init` does not know
/// one, as stax's `(-1, 784)`), or a sequence of shapes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shapes {
    /// An array's extents.
    Dims(Vec<i64>),
    /// A sequence's shapes.
    Seq(Vec<Shapes>),
}

impl Shapes {
    /// The extents of an array's shape; panics for a sequence.
    #[track_caller]
    pub fn dims(&self) -> &[i64] {
        match self {
            Shapes::Dims(d) => d,
            Shapes::Seq(s) => panic!("stax: expected one array's shape, found {} shapes", s.len()),
        }
    }

    /// The shapes of a sequence; panics for one array's shape.
    #[track_caller]
    pub fn items(&self) -> &[Shapes] {
        match self {
            Shapes::Seq(s) => s,
            Shapes::Dims(d) => panic!("stax: expected a sequence of shapes, found {d:?}"),
        }
    }
}

impl From<Vec<i64>> for Shapes {
    fn from(d: Vec<i64>) -> Shapes {
        Shapes::Dims(d)
    }
}

impl From<&[i64]> for Shapes {
    fn from(d: &[i64]) -> Shapes {
        Shapes::Dims(d.to_vec())
    }
}

impl<const N: usize> From<[i64; N]> for Shapes {
    fn from(d: [i64; N]) -> Shapes {
        Shapes::Dims(d.to_vec())
    }
}

impl From<Vec<Shapes>> for Shapes {
    fn from(s: Vec<Shapes>) -> Shapes {
        Shapes::Seq(s)
    }
}

type InitFn = dyn Fn(&Key, &Shapes) -> (Shapes, Nested) + Send + Sync;
type ApplyFn = dyn Fn(&Nested, &Nested, Option<&Key>) -> Nested + Send + Sync;

/// A layer: stax's `(init_fun, apply_fun)` pair. Cheap to clone (the functions are shared).
#[derive(Clone)]
pub struct Layer {
    init: Arc<InitFn>,
    apply: Arc<ApplyFn>,
}

impl std::fmt::Debug for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Layer")
    }
}

impl Layer {
    /// A layer from its two functions: `init(key, input_shape) -> (output_shape, params)` and
    /// `apply(params, inputs, rng) -> outputs` (`rng` is the key given to
    /// [`apply_rng`](Layer::apply_rng), for layers that draw, as stax's `rng=` keyword).
    pub fn new(
        init: impl Fn(&Key, &Shapes) -> (Shapes, Nested) + Send + Sync + 'static,
        apply: impl Fn(&Nested, &Nested, Option<&Key>) -> Nested + Send + Sync + 'static,
    ) -> Layer {
        Layer { init: Arc::new(init), apply: Arc::new(apply) }
    }

    /// `init_fun(rng, input_shape)`: the output shape and freshly drawn parameters.
    #[track_caller]
    pub fn init(&self, key: &Key, input_shape: impl Into<Shapes>) -> (Shapes, Nested) {
        (self.init)(key, &input_shape.into())
    }

    /// `apply_fun(params, inputs)` for one input array and one output array.
    #[track_caller]
    pub fn apply(&self, params: &Nested, inputs: &Array) -> Array {
        self.apply_nested(params, &Nested::from(inputs), None).array().clone()
    }

    /// `apply_fun(params, inputs, rng=rng)` for one input and one output array, for networks
    /// with layers that draw ([`dropout`]).
    #[track_caller]
    pub fn apply_rng(&self, params: &Nested, inputs: &Array, rng: &Key) -> Array {
        self.apply_nested(params, &Nested::from(inputs), Some(rng)).array().clone()
    }

    /// `apply_fun` on nested inputs and outputs (the sequences [`fan_out`] and [`parallel`]
    /// pass between layers).
    #[track_caller]
    pub fn apply_nested(&self, params: &Nested, inputs: &Nested, rng: Option<&Key>) -> Nested {
        (self.apply)(params, inputs, rng)
    }
}

/// The two keys stax's layers split their key into (`k1, k2 = random.split(rng)`).
fn two_keys(key: &Key) -> (Key, Key) {
    let keys = random::split(key, 2);
    (keys.get(0), keys.get(1))
}

/// A layer with no parameters applying `f` to its input array, keeping its shape.
pub fn elementwise(f: impl Fn(&Array) -> Array + Send + Sync + 'static) -> Layer {
    Layer::new(
        |_, shape| (shape.clone(), Nested::empty()),
        move |_, x, _| Nested::Leaf(f(x.array())),
    )
}

/// `stax.Relu`.
pub fn relu() -> Layer {
    elementwise(super::relu)
}

/// `stax.Tanh`.
pub fn tanh() -> Layer {
    elementwise(jnp::tanh)
}

/// `stax.Sigmoid`.
pub fn sigmoid() -> Layer {
    elementwise(super::sigmoid)
}

/// `stax.Elu` (`alpha` 1).
pub fn elu() -> Layer {
    elementwise(|x| super::elu(x, 1.0))
}

/// `stax.LeakyRelu` (negative slope 0.01).
pub fn leaky_relu() -> Layer {
    elementwise(|x| super::leaky_relu(x, 0.01))
}

/// `stax.Selu`.
pub fn selu() -> Layer {
    elementwise(super::selu)
}

/// `stax.Gelu` (the tanh approximation, `jax.nn.gelu`'s default).
pub fn gelu() -> Layer {
    elementwise(|x| super::gelu(x, true))
}

/// `stax.Softplus`.
pub fn softplus() -> Layer {
    elementwise(super::softplus)
}

/// `stax.Exp`.
pub fn exp() -> Layer {
    elementwise(jnp::exp)
}

/// `stax.LogSoftmax` over the last axis.
pub fn log_softmax() -> Layer {
    elementwise(|x| super::log_softmax(x, -1))
}

/// `stax.Softmax` over the last axis.
pub fn softmax() -> Layer {
    elementwise(|x| super::softmax(x, -1))
}

/// `stax.Identity`.
pub fn identity() -> Layer {
    Layer::new(|_, shape| (shape.clone(), Nested::empty()), |_, x, _| x.clone())
}

/// `stax.Dense(out_dim)`: `inputs @ W + b`, `W` drawn by Glorot normal and `b` by a normal
/// of standard deviation 0.01 (stax's defaults); [`dense_with`] takes other initializers.
pub fn dense(out_dim: usize) -> Layer {
    dense_with(out_dim, random::init::glorot_normal(), random::init::normal(1e-2))
}

/// `stax.Dense(out_dim, W_init, b_init)`.
pub fn dense_with(out_dim: usize, w_init: Initializer, b_init: Initializer) -> Layer {
    Layer::new(
        move |key, shape| {
            let dims = shape.dims();
            let Some(&fan_in) = dims.last() else {
                panic!("stax.Dense: the input needs at least one axis, got shape {dims:?}")
            };
            let fan_in = known("stax.Dense", "the input's last extent", fan_in);
            let (k1, k2) = two_keys(key);
            let w = w_init.init(&k1, [fan_in, out_dim]);
            let b = b_init.init(&k2, [out_dim]);
            let mut out = dims.to_vec();
            *out.last_mut().expect("checked above") = out_dim as i64;
            (Shapes::Dims(out), Nested::Seq(vec![w.into(), b.into()]))
        },
        |params, x, _| {
            let [w, b] = pair(params);
            Nested::Leaf(jnp::matmul(x.array(), w) + b)
        },
    )
}

/// The two arrays of a `(W, b)` parameter pair.
#[track_caller]
fn pair(params: &Nested) -> [&Array; 2] {
    match params.items() {
        [w, b] => [w.array(), b.array()],
        other => panic!("stax: expected parameters (W, b), found {} values", other.len()),
    }
}

/// An extent `init` must know (not `-1`).
#[track_caller]
fn known(op: &str, what: &str, extent: i64) -> usize {
    usize::try_from(extent)
        .unwrap_or_else(|_| panic!("{op}: {what} must be known at init, got {extent}"))
}

/// `stax.Conv(out_chan, filter_shape, strides, padding)`: a convolution over `NHWC` inputs with
/// an `HWIO` kernel (Glorot normal over its `I` and `O` axes) and a bias (normal, 1e-6).
/// `strides` of `None` are all 1.
pub fn conv(
    out_chan: usize,
    filter_shape: impl AsRef<[usize]>,
    strides: Option<Vec<usize>>,
    padding: impl Into<Padding>,
) -> Layer {
    general_conv(("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding)
}

/// `stax.GeneralConv(dimension_numbers, out_chan, filter_shape, strides, padding)`, with stax's
/// initializers: Glorot normal over the kernel's `I` and `O` axes, a normal bias of 1e-6.
pub fn general_conv(
    dimension_numbers: (&str, &str, &str),
    out_chan: usize,
    filter_shape: impl AsRef<[usize]>,
    strides: Option<Vec<usize>>,
    padding: impl Into<Padding>,
) -> Layer {
    let (lhs, rhs, out) = dimension_numbers;
    let (lhs, rhs, out) = (lhs.to_string(), rhs.to_string(), out.to_string());
    let filter = filter_shape.as_ref().to_vec();
    let strides = strides.unwrap_or_else(|| vec![1; filter.len()]);
    let padding = padding.into();
    let axis = |spec: &str, c: char| spec.find(c).expect("a dimension letter") as isize;
    let w_init = random::init::glorot_normal().with_axes([axis(&rhs, 'I')], [axis(&rhs, 'O')], []);
    let b_init = random::init::normal(1e-6);
    let options = lax::ConvOptions::from((lhs.as_str(), rhs.as_str(), out.as_str()));
    let apply_strides = strides.clone();
    let apply_padding = padding.clone();
    Layer::new(
        move |key, shape| {
            let dims = shape.dims();
            if dims.len() != lhs.len() {
                panic!("stax.GeneralConv: input shape {dims:?} does not match the layout {lhs}");
            }
            let channels =
                known("stax.GeneralConv", "the input's channels", dims[axis(&lhs, 'C') as usize]);
            let mut spatial = filter.iter();
            let kernel: Vec<usize> = rhs
                .chars()
                .map(|c| match c {
                    'O' => out_chan,
                    'I' => channels,
                    _ => *spatial.next().expect("one filter extent per spatial axis"),
                })
                .collect();
            // The output's spatial extents, in the input's spatial order.
            let lhs_spatial: Vec<usize> =
                lhs.char_indices().filter(|(_, c)| !"NC".contains(*c)).map(|(i, _)| i).collect();
            let rhs_spatial: Vec<usize> =
                rhs.char_indices().filter(|(_, c)| !"OI".contains(*c)).map(|(i, _)| i).collect();
            let outs: Vec<i64> = lhs_spatial
                .iter()
                .zip(&rhs_spatial)
                .enumerate()
                .map(|(k, (&li, &ri))| window_out(dims[li], kernel[ri], strides[k], &padding, k))
                .collect();
            let mut out_spatial = outs.iter();
            let out_shape: Vec<i64> = out
                .chars()
                .map(|c| match c {
                    'N' => dims[axis(&lhs, 'N') as usize],
                    'C' => out_chan as i64,
                    _ => *out_spatial.next().expect("one output extent per spatial axis"),
                })
                .collect();
            let bias: Vec<usize> =
                out.chars().map(|c| if c == 'C' { out_chan } else { 1 }).collect();
            let (k1, k2) = two_keys(key);
            let (w, b) = (w_init.init(&k1, &kernel), b_init.init(&k2, &bias));
            (Shapes::Dims(out_shape), Nested::Seq(vec![w.into(), b.into()]))
        },
        move |params, x, _| {
            let [w, b] = pair(params);
            let y = lax::conv_general_dilated(
                x.array(),
                w,
                &apply_strides,
                apply_padding.clone(),
                options.clone(),
            );
            Nested::Leaf(y + b)
        },
    )
}

/// The number of window positions along an axis of `extent` (`-1`: unknown, stays `-1`).
fn window_out(extent: i64, window: usize, stride: usize, padding: &Padding, axis: usize) -> i64 {
    if extent < 0 {
        return -1;
    }
    let (n, k, s) = (extent, window as i64, stride as i64);
    match padding {
        Padding::Valid => ((n - k) / s + 1).max(0),
        Padding::Same | Padding::SameLower => (n + s - 1) / s,
        Padding::Explicit(pairs) => {
            let (lo, hi) = pairs.get(axis).copied().unwrap_or((0, 0));
            ((n + lo + hi - k) / s + 1).max(0)
        }
    }
}

/// Which pooling a pooling layer does.
#[derive(Clone, Copy)]
enum Pool {
    Max,
    Sum,
    Avg,
}

/// A pooling layer over the spatial axes of `NHWC` inputs (stax's `_pooling_layer` with no
/// `spec`): windows and strides get 1 on the batch and channel axes. Explicit padding, as in
/// stax, gives a `(low, high)` pair for every axis of the input.
fn pooling(
    kind: Pool,
    window_shape: &[usize],
    strides: Option<Vec<usize>>,
    padding: Padding,
) -> Layer {
    let spatial = window_shape.to_vec();
    let spatial_strides = strides.unwrap_or_else(|| vec![1; spatial.len()]);
    let full = |v: &[usize]| [vec![1], v.to_vec(), vec![1]].concat();
    let (window, strides) = (full(&spatial), full(&spatial_strides));
    let init_padding = padding.clone();
    Layer::new(
        move |_, shape| {
            let dims = shape.dims();
            if dims.len() != spatial.len() + 2 {
                panic!(
                    "stax pooling: a window of {} axes needs NHWC inputs of {} axes, got shape \
                     {dims:?}",
                    spatial.len(),
                    spatial.len() + 2
                );
            }
            let mut out = dims.to_vec();
            for k in 0..spatial.len() {
                let (extent, window) = (dims[k + 1], spatial[k]);
                out[k + 1] = window_out(extent, window, spatial_strides[k], &init_padding, k + 1);
            }
            (Shapes::Dims(out), Nested::empty())
        },
        move |_, x, _| {
            let x = x.array();
            let pooled =
                |x: &Array, op| lax::reduce_window(x, op, &window, &strides, padding.clone());
            Nested::Leaf(match kind {
                Pool::Max => pooled(x, WindowOp::Max),
                Pool::Sum => pooled(x, WindowOp::Sum),
                Pool::Avg => {
                    // Each window's count of input elements, padding excluded (stax divides
                    // by the window sums of ones).
                    let ones = jnp::ones_like(x);
                    pooled(x, WindowOp::Sum) / pooled(&ones, WindowOp::Sum)
                }
            })
        },
    )
}

/// `stax.MaxPool(window_shape, strides, padding)` over `NHWC` inputs.
pub fn max_pool(
    window_shape: impl AsRef<[usize]>,
    strides: Option<Vec<usize>>,
    padding: impl Into<Padding>,
) -> Layer {
    pooling(Pool::Max, window_shape.as_ref(), strides, padding.into())
}

/// `stax.SumPool(window_shape, strides, padding)` over `NHWC` inputs.
pub fn sum_pool(
    window_shape: impl AsRef<[usize]>,
    strides: Option<Vec<usize>>,
    padding: impl Into<Padding>,
) -> Layer {
    pooling(Pool::Sum, window_shape.as_ref(), strides, padding.into())
}

/// `stax.AvgPool(window_shape, strides, padding)` over `NHWC` inputs: each window's mean over
/// the input elements it covers (padding not counted, as stax divides).
pub fn avg_pool(
    window_shape: impl AsRef<[usize]>,
    strides: Option<Vec<usize>>,
    padding: impl Into<Padding>,
) -> Layer {
    pooling(Pool::Avg, window_shape.as_ref(), strides, padding.into())
}

/// `stax.Flatten`: every axis after the first merged into one.
pub fn flatten() -> Layer {
    Layer::new(
        |_, shape| {
            let dims = shape.dims();
            let Some((&batch, rest)) = dims.split_first() else {
                panic!("stax.Flatten: the input needs a batch axis, got shape {dims:?}")
            };
            let size = rest
                .iter()
                .map(|&d| known("stax.Flatten", "each non-batch extent", d) as i64)
                .product();
            (Shapes::Dims(vec![batch, size]), Nested::empty())
        },
        |_, x, _| {
            let x = x.array();
            let batch = x.shape().first().copied().unwrap_or(1);
            Nested::Leaf(x.reshape([batch as isize, -1]))
        },
    )
}

/// `stax.BatchNorm(axis, epsilon)` with `center` and `scale`: standardizes over `axes` with
/// the batch's statistics, then scales by `gamma` (ones) and shifts by `beta` (zeros), both of
/// the shape of the other axes. stax's default axes are `(0, 1, 2)`, epsilon `1e-5`.
pub fn batch_norm(axes: impl AsRef<[usize]>, epsilon: f64) -> Layer {
    let axes = axes.as_ref().to_vec();
    let apply_axes = axes.clone();
    Layer::new(
        move |key, shape| {
            let dims = shape.dims();
            let kept: Vec<usize> = dims
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, &d)| known("stax.BatchNorm", "each extent outside the axes", d))
                .collect();
            let (k1, k2) = two_keys(key);
            let beta = random::init::zeros().init(&k1, &kept);
            let gamma = random::init::ones().init(&k2, &kept);
            (shape.clone(), Nested::Seq(vec![beta.into(), gamma.into()]))
        },
        move |params, x, _| {
            let [beta, gamma] = pair(params);
            let x = x.array();
            let z = super::standardize(
                x,
                apply_axes.iter().map(|&a| a as isize).collect::<Vec<_>>(),
                epsilon,
            );
            // The parameters broadcast with a unit axis in place of each normalized one.
            let expand = |p: &Array| {
                let mut shape = x.shape().to_vec();
                for &a in &apply_axes {
                    shape[a] = 1;
                }
                p.reshape(shape)
            };
            Nested::Leaf(expand(gamma) * z + expand(beta))
        },
    )
}

/// `stax.Dropout(rate, mode)`: in `"train"` mode keeps each element with probability `rate`
/// (stax's `rate` is the probability of keeping) and divides the kept ones by it; in any
/// other mode it passes its input through. As in stax, it needs the key given to
/// [`Layer::apply_rng`] in either mode.
pub fn dropout(rate: f64, mode: &str) -> Layer {
    let train = mode == "train";
    Layer::new(
        |_, shape| (shape.clone(), Nested::empty()),
        move |_, x, rng| {
            let Some(rng) = rng else {
                panic!("stax.Dropout: apply needs a key; call apply_rng(params, inputs, &key)")
            };
            if !train {
                return x.clone();
            }
            let x = x.array();
            let keep = random::bernoulli(rng, rate, x.shape());
            Nested::Leaf(jnp::where_(&keep, x / rate, 0.0))
        },
    )
}

/// `stax.FanOut(num)`: the input repeated `num` times, as a sequence.
pub fn fan_out(num: usize) -> Layer {
    Layer::new(
        move |_, shape| (Shapes::Seq(vec![shape.clone(); num]), Nested::empty()),
        move |_, x, _| Nested::Seq(vec![x.clone(); num]),
    )
}

/// `stax.FanInSum`: the sum of a sequence of inputs.
pub fn fan_in_sum() -> Layer {
    Layer::new(
        |_, shape| {
            let first = shape.items().first().expect("stax.FanInSum: an empty sequence of inputs");
            (first.clone(), Nested::empty())
        },
        |_, x, _| {
            let items = x.items();
            let mut total = items.first().expect("stax.FanInSum: no inputs").array().clone();
            for item in &items[1..] {
                total += item.array();
            }
            Nested::Leaf(total)
        },
    )
}

/// `stax.FanInConcat(axis)`: a sequence of inputs concatenated along `axis`.
pub fn fan_in_concat(axis: isize) -> Layer {
    Layer::new(
        move |_, shape| {
            let shapes: Vec<&[i64]> = shape.items().iter().map(Shapes::dims).collect();
            let first = shapes.first().expect("stax.FanInConcat: an empty sequence of inputs");
            let ax = axis.rem_euclid(first.len() as isize) as usize;
            let mut out = first.to_vec();
            out[ax] = shapes.iter().map(|s| s[ax]).sum();
            (Shapes::Dims(out), Nested::empty())
        },
        move |_, x, _| {
            let arrays: Vec<&Array> = x.items().iter().map(Nested::array).collect();
            Nested::Leaf(jnp::concatenate(&arrays, axis))
        },
    )
}

/// `stax.serial(*layers)`: the layers in turn, each fed the previous one's output. Its
/// parameters are the sequence of the layers' parameters; `init` and `apply_rng` split their
/// key once per layer, as stax does.
pub fn serial(layers: impl IntoIterator<Item = Layer>) -> Layer {
    let layers: Arc<[Layer]> = layers.into_iter().collect();
    let apply_layers = Arc::clone(&layers);
    Layer::new(
        move |key, shape| {
            let (mut key, mut shape) = (key.clone(), shape.clone());
            let mut params = Vec::with_capacity(layers.len());
            for layer in layers.iter() {
                let (next, layer_key) = two_keys(&key);
                key = next;
                let (out, p) = (layer.init)(&layer_key, &shape);
                shape = out;
                params.push(p);
            }
            (shape, Nested::Seq(params))
        },
        move |params, x, rng| {
            let n = apply_layers.len();
            let keys = rng.map(|k| random::split(k, n));
            let mut x = x.clone();
            for (i, (layer, p)) in apply_layers.iter().zip(params.items()).enumerate() {
                let key = keys.as_ref().map(|k| k.get(i));
                x = (layer.apply)(p, &x, key.as_ref());
            }
            x
        },
    )
}

/// `stax.parallel(*layers)`: each layer applied to its own element of a sequence of inputs.
pub fn parallel(layers: impl IntoIterator<Item = Layer>) -> Layer {
    let layers: Arc<[Layer]> = layers.into_iter().collect();
    let apply_layers = Arc::clone(&layers);
    Layer::new(
        move |key, shape| {
            let keys = random::split(key, layers.len());
            let (shapes, params) = layers
                .iter()
                .zip(shape.items())
                .enumerate()
                .map(|(i, (layer, s))| (layer.init)(&keys.get(i), s))
                .unzip();
            (Shapes::Seq(shapes), Nested::Seq(params))
        },
        move |params, x, rng| {
            let keys = rng.map(|k| random::split(k, apply_layers.len()));
            let outs = apply_layers
                .iter()
                .zip(params.items())
                .zip(x.items())
                .enumerate()
                .map(|(i, ((layer, p), x))| {
                    let key = keys.as_ref().map(|k| k.get(i));
                    (layer.apply)(p, x, key.as_ref())
                })
                .collect();
            Nested::Seq(outs)
        },
    )
}
