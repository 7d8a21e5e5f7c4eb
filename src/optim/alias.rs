//! The optimizers: Optax's chains of building blocks, with Optax's defaults.
//!
//! Each is a small struct of hyperparameters with builder methods
//! (`adam(1e-3).b1(0.8)`), and a [`GradientTransformation`] through the chain it stands for.

use super::transform::{
    add_decayed_weights, scale_by_adam, scale_by_learning_rate, scale_by_rms, scale_by_rss, trace,
    AddDecayedWeights, ScaleByAdam, ScaleByLearningRate, ScaleByRms, ScaleByRss, Trace,
};
use super::{GradientTransformation, Params, Schedule};

/// Implements [`GradientTransformation`] for an optimizer by delegating to `self.chain()`.
macro_rules! through_chain {
    ($name:ident => $chain:ty) => {
        impl GradientTransformation for $name {
            type State<P: Params> = <$chain as GradientTransformation>::State<P>;

            fn init<P: Params>(&self, params: &P) -> Self::State<P> {
                self.chain().init(params)
            }

            fn update<P: Params>(
                &self,
                updates: &P,
                state: &Self::State<P>,
                params: &P,
            ) -> (P, Self::State<P>) {
                self.chain().update(updates, state, params)
            }
        }
    };
}

/// Builder methods that set one field each.
macro_rules! setters {
    ($($(#[$doc:meta])* $field:ident: $t:ty),* $(,)?) => {$(
        $(#[$doc])*
        pub fn $field(mut self, $field: $t) -> Self {
            self.$field = $field;
            self
        }
    )*};
}

/// Stochastic gradient descent, with optional (Nesterov) momentum (`optax.sgd`).
#[derive(Clone, Debug)]
pub struct Sgd {
    pub learning_rate: Schedule,
    pub momentum: Option<f64>,
    pub nesterov: bool,
}

/// See [`Sgd`]: plain SGD; `.momentum(0.9)` and `.nesterov(true)` add momentum.
pub fn sgd(learning_rate: impl Into<Schedule>) -> Sgd {
    Sgd { learning_rate: learning_rate.into(), momentum: None, nesterov: false }
}

impl Sgd {
    /// Momentum decay (none by default).
    pub fn momentum(mut self, decay: f64) -> Self {
        self.momentum = Some(decay);
        self
    }
    setters!(/// Nesterov's look-ahead momentum.
        nesterov: bool);

    fn chain(&self) -> (Option<Trace>, ScaleByLearningRate) {
        let momentum = self.momentum.map(|decay| trace(decay, self.nesterov));
        (momentum, scale_by_learning_rate(self.learning_rate.clone()))
    }
}
through_chain!(Sgd => (Option<Trace>, ScaleByLearningRate));

/// Adam (`optax.adam`): `b1 = 0.9`, `b2 = 0.999`, `eps = 1e-8`, `eps_root = 0`.
#[derive(Clone, Debug)]
pub struct Adam {
    pub learning_rate: Schedule,
    pub b1: f64,
    pub b2: f64,
    pub eps: f64,
    pub eps_root: f64,
}

/// See [`Adam`].
pub fn adam(learning_rate: impl Into<Schedule>) -> Adam {
    Adam { learning_rate: learning_rate.into(), b1: 0.9, b2: 0.999, eps: 1e-8, eps_root: 0.0 }
}

impl Adam {
    setters!(b1: f64, b2: f64, eps: f64, eps_root: f64);

    fn chain(&self) -> (ScaleByAdam, ScaleByLearningRate) {
        (
            scale_by_adam(self.b1, self.b2, self.eps, self.eps_root),
            scale_by_learning_rate(self.learning_rate.clone()),
        )
    }
}
through_chain!(Adam => (ScaleByAdam, ScaleByLearningRate));

/// Adam with decoupled weight decay (`optax.adamw`): Adam's defaults and
/// `weight_decay = 1e-4`.
#[derive(Clone, Debug)]
pub struct AdamW {
    pub learning_rate: Schedule,
    pub b1: f64,
    pub b2: f64,
    pub eps: f64,
    pub eps_root: f64,
    pub weight_decay: f64,
}

/// See [`AdamW`].
pub fn adamw(learning_rate: impl Into<Schedule>) -> AdamW {
    let Adam { learning_rate, b1, b2, eps, eps_root } = adam(learning_rate);
    AdamW { learning_rate, b1, b2, eps, eps_root, weight_decay: 1e-4 }
}

impl AdamW {
    setters!(b1: f64, b2: f64, eps: f64, eps_root: f64, weight_decay: f64);

    fn chain(&self) -> (ScaleByAdam, AddDecayedWeights, ScaleByLearningRate) {
        (
            scale_by_adam(self.b1, self.b2, self.eps, self.eps_root),
            add_decayed_weights(self.weight_decay),
            scale_by_learning_rate(self.learning_rate.clone()),
        )
    }
}
through_chain!(AdamW => (ScaleByAdam, AddDecayedWeights, ScaleByLearningRate));

/// RMSProp (`optax.rmsprop`, uncentered): `decay = 0.9`, `eps = 1e-8`,
/// `initial_scale = 0`, optional momentum.
#[derive(Clone, Debug)]
pub struct RmsProp {
    pub learning_rate: Schedule,
    pub decay: f64,
    pub eps: f64,
    pub initial_scale: f64,
    pub momentum: Option<f64>,
    pub nesterov: bool,
}

/// See [`RmsProp`].
pub fn rmsprop(learning_rate: impl Into<Schedule>) -> RmsProp {
    RmsProp {
        learning_rate: learning_rate.into(),
        decay: 0.9,
        eps: 1e-8,
        initial_scale: 0.0,
        momentum: None,
        nesterov: false,
    }
}

impl RmsProp {
    setters!(decay: f64, eps: f64, initial_scale: f64, nesterov: bool);

    /// Momentum decay (none by default).
    pub fn momentum(mut self, decay: f64) -> Self {
        self.momentum = Some(decay);
        self
    }

    fn chain(&self) -> (ScaleByRms, ScaleByLearningRate, Option<Trace>) {
        (
            scale_by_rms(self.decay, self.eps, self.initial_scale),
            scale_by_learning_rate(self.learning_rate.clone()),
            self.momentum.map(|decay| trace(decay, self.nesterov)),
        )
    }
}
through_chain!(RmsProp => (ScaleByRms, ScaleByLearningRate, Option<Trace>));

/// Adagrad (`optax.adagrad`): `initial_accumulator_value = 0.1`, `eps = 1e-7`.
#[derive(Clone, Debug)]
pub struct Adagrad {
    pub learning_rate: Schedule,
    pub initial_accumulator_value: f64,
    pub eps: f64,
}

/// See [`Adagrad`].
pub fn adagrad(learning_rate: impl Into<Schedule>) -> Adagrad {
    Adagrad { learning_rate: learning_rate.into(), initial_accumulator_value: 0.1, eps: 1e-7 }
}

impl Adagrad {
    setters!(initial_accumulator_value: f64, eps: f64);

    fn chain(&self) -> (ScaleByRss, ScaleByLearningRate) {
        (
            scale_by_rss(self.initial_accumulator_value, self.eps),
            scale_by_learning_rate(self.learning_rate.clone()),
        )
    }
}
through_chain!(Adagrad => (ScaleByRss, ScaleByLearningRate));
