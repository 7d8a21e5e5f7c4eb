//! Weight initializers, as `jax.nn.initializers` defines them (same draws, same scaling, so
//! the same numbers): [`glorot_uniform`], [`glorot_normal`], [`he_normal`], [`he_uniform`],
//! [`lecun_normal`], [`lecun_uniform`], [`normal`], [`uniform`], [`truncated_normal`], the
//! general [`variance_scaling`], and the constant [`zeros`], [`ones`] and [`constant`].
//!
//! They live here, in `random::init`, because they are samplers with a scale; an `nn` module
//! can re-export them as `nn::initializers`.
//!
//! ```
//! use rjax_runtime::random::{self, init};
//! rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
//! let w = init::glorot_normal().init(&random::key(0), [784, 128]);
//! assert_eq!(w.shape(), &[784, 128]);
//! let b = init::normal(0.01).with_dtype(rjax_runtime::DType::F64).init(&random::key(1), [128]);
//! assert_eq!(b.dtype(), rjax_runtime::DType::F64);
//! ```

use super::{normal_dtype, truncated_normal_dtype, uniform_dtype, uniform_range_dtype, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::shape::{normalize_axis, ShapeDisplay};

/// Which fan the variance is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FanMode {
    /// The number of inputs.
    FanIn,
    /// The number of outputs.
    FanOut,
    /// The mean of inputs and outputs.
    FanAvg,
    /// The geometric mean of inputs and outputs.
    FanGeoAvg,
}

/// The distribution a [`variance_scaling`] initializer draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// A normal truncated to two standard deviations, rescaled to the target variance.
    TruncatedNormal,
    /// A normal with the target variance.
    Normal,
    /// A uniform on a symmetric interval with the target variance.
    Uniform,
}

/// What an [`Initializer`] draws.
#[derive(Clone, Debug, PartialEq)]
enum Rule {
    Constant { value: f64 },
    Normal { stddev: f64 },
    Uniform { scale: f64 },
    TruncatedNormal { stddev: f64, lower: f64, upper: f64 },
    VarianceScaling { scale: f64, mode: FanMode, distribution: Distribution, axes: FanAxes },
}

/// The axes that count as inputs, outputs and batch for fan computations.
#[derive(Clone, Debug, PartialEq)]
struct FanAxes {
    input: Vec<isize>,
    output: Vec<isize>,
    batch: Vec<isize>,
}

/// A weight initializer: call [`init`](Initializer::init) with a key and a shape.
///
/// The default dtype is `float32`; [`with_dtype`](Initializer::with_dtype) changes it, and
/// [`with_axes`](Initializer::with_axes) changes which axes count as fan-in and fan-out for the
/// variance-scaling family (by default the second-to-last and the last).
#[derive(Clone, Debug, PartialEq)]
pub struct Initializer {
    rule: Rule,
    dtype: DType,
}

impl Initializer {
    /// The same initializer drawing values of `dtype` (`F32` or `F64`).
    pub fn with_dtype(mut self, dtype: DType) -> Initializer {
        self.dtype = dtype;
        self
    }

    /// The same variance-scaling initializer with fans computed from these axes (negative
    /// values count from the end); axes in none of the lists form the receptive field, whose
    /// size multiplies both fans (convolution kernels). Other initializers ignore axes.
    pub fn with_axes(
        mut self,
        input: impl AsRef<[isize]>,
        output: impl AsRef<[isize]>,
        batch: impl AsRef<[isize]>,
    ) -> Initializer {
        if let Rule::VarianceScaling { axes, .. } = &mut self.rule {
            *axes = FanAxes {
                input: input.as_ref().to_vec(),
                output: output.as_ref().to_vec(),
                batch: batch.as_ref().to_vec(),
            };
        }
        self
    }

    /// Draws an array of `shape` from `key`.
    ///
    /// Panics when a variance-scaling initializer gets fewer than two dimensions with the
    /// default axes, as JAX does.
    #[track_caller]
    pub fn init(&self, key: &Key, shape: impl AsRef<[usize]>) -> Array {
        let (shape, dtype) = (shape.as_ref(), self.dtype);
        match &self.rule {
            Rule::Constant { value } => crate::jnp::full_dtype(shape, *value, dtype),
            Rule::Normal { stddev } => normal_dtype(key, shape, dtype) * scalar(*stddev, dtype),
            Rule::Uniform { scale } => uniform_dtype(key, shape, dtype) * scalar(*scale, dtype),
            Rule::TruncatedNormal { stddev, lower, upper } => {
                truncated_normal_dtype(key, *lower, *upper, shape, dtype) * scalar(*stddev, dtype)
            }
            Rule::VarianceScaling { scale, mode, distribution, axes } => {
                let (fan_in, fan_out) = fans(shape, axes);
                let denominator = match mode {
                    FanMode::FanIn => fan_in,
                    FanMode::FanOut => fan_out,
                    FanMode::FanAvg => (fan_in + fan_out) / 2.0,
                    FanMode::FanGeoAvg => (fan_in * fan_out).sqrt(),
                };
                let variance = scalar(scale / denominator, dtype);
                scaled_draw(key, shape, dtype, *distribution, &variance)
            }
        }
    }
}

/// JAX's draw and multiplier for each variance-scaling distribution, in the weights' dtype.
#[track_caller]
fn scaled_draw(
    key: &Key,
    shape: &[usize],
    dtype: DType,
    d: Distribution,
    variance: &Array,
) -> Array {
    match d {
        Distribution::TruncatedNormal => {
            // The standard deviation of a standard normal truncated to (-2, 2).
            let stddev = variance.sqrt() / scalar(0.8796256610342398, dtype);
            truncated_normal_dtype(key, -2.0, 2.0, shape, dtype) * stddev
        }
        Distribution::Normal => normal_dtype(key, shape, dtype) * variance.sqrt(),
        Distribution::Uniform => {
            uniform_range_dtype(key, shape, dtype, -1.0, 1.0) * (variance * 3.0).sqrt()
        }
    }
}

/// A 0-d array of `dtype` holding `value` (`jnp.array(value, dtype)`).
fn scalar(value: f64, dtype: DType) -> Array {
    Array::from(value).astype(dtype)
}

/// JAX's `_compute_fans`: input and output sizes times the receptive-field size.
#[track_caller]
fn fans(shape: &[usize], axes: &FanAxes) -> (f64, f64) {
    if axes.input == [-2] && shape.len() <= 1 {
        panic!(
            "variance_scaling: cannot compute fans of a weights array of shape {} with the \
             default axes; it must be at least 2-D, or give the axes with with_axes",
            ShapeDisplay(shape)
        );
    }
    let product = |list: &[isize]| -> f64 {
        list.iter()
            .map(|&a| shape[normalize_axis("variance_scaling", a, shape.len())] as f64)
            .product()
    };
    let (input, output, batch) =
        (product(&axes.input), product(&axes.output), product(&axes.batch));
    let receptive = shape.iter().map(|&d| d as f64).product::<f64>() / input / output / batch;
    (input * receptive, output * receptive)
}

/// Scaled by `scale / fan` for the chosen fan, from the chosen distribution
/// (`jax.nn.initializers.variance_scaling`): the result has variance `scale / fan`.
pub fn variance_scaling(scale: f64, mode: FanMode, distribution: Distribution) -> Initializer {
    let axes = FanAxes { input: vec![-2], output: vec![-1], batch: vec![] };
    Initializer {
        rule: Rule::VarianceScaling { scale, mode, distribution, axes },
        dtype: DType::F32,
    }
}

/// Glorot (Xavier) uniform: variance `1 / fan_avg`, uniform.
pub fn glorot_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::Uniform)
}

/// Glorot (Xavier) normal: variance `1 / fan_avg`, truncated normal.
pub fn glorot_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanAvg, Distribution::TruncatedNormal)
}

/// LeCun uniform: variance `1 / fan_in`, uniform.
pub fn lecun_uniform() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::Uniform)
}

/// LeCun normal: variance `1 / fan_in`, truncated normal.
pub fn lecun_normal() -> Initializer {
    variance_scaling(1.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// He (Kaiming) uniform: variance `2 / fan_in`, uniform.
pub fn he_uniform() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::Uniform)
}

/// He (Kaiming) normal: variance `2 / fan_in`, truncated normal.
pub fn he_normal() -> Initializer {
    variance_scaling(2.0, FanMode::FanIn, Distribution::TruncatedNormal)
}

/// Every element `value`, whatever the key (`jax.nn.initializers.constant`).
pub fn constant(value: f64) -> Initializer {
    Initializer { rule: Rule::Constant { value }, dtype: DType::F32 }
}

/// All zeros (`jax.nn.initializers.zeros`), for biases.
pub fn zeros() -> Initializer {
    constant(0.0)
}

/// All ones (`jax.nn.initializers.ones`), for scales.
pub fn ones() -> Initializer {
    constant(1.0)
}

/// Normal with mean 0 and standard deviation `stddev` (`jax.nn.initializers.normal`; JAX's
/// default `stddev` is `1e-2`).
pub fn normal(stddev: f64) -> Initializer {
    Initializer { rule: Rule::Normal { stddev }, dtype: DType::F32 }
}

/// Uniform on `[0, scale)` (`jax.nn.initializers.uniform`; JAX's default `scale` is `1e-2`).
pub fn uniform(scale: f64) -> Initializer {
    Initializer { rule: Rule::Uniform { scale }, dtype: DType::F32 }
}

/// A standard normal truncated to `(-2, 2)`, times `stddev`
/// (`jax.nn.initializers.truncated_normal` with its default bounds).
pub fn truncated_normal(stddev: f64) -> Initializer {
    Initializer {
        rule: Rule::TruncatedNormal { stddev, lower: -2.0, upper: 2.0 },
        dtype: DType::F32,
    }
}
