//! Optimizers in Optax's shape: gradient transformations that compose.
//!
//! An optimizer is a [`GradientTransformation`]: `init(params)` builds its state (moments, a
//! step count) with the structure of the parameters, and `update(grads, state, params)`
//! turns gradients into updates and a new state. [`apply_updates`] adds the updates to the
//! parameters. Everything works on any pytree (`Vec<(Array, Array)>`, a `#[derive(Tree)]`
//! struct, ...), and every step is ordinary array code, so a whole optimizer step can run
//! inside `#[jit]`: pass the state in and return the new one.
//!
//! The building blocks are Optax's ([`scale_by_adam`], [`scale_by_rms`], [`scale_by_rss`],
//! [`trace`], [`add_decayed_weights`], [`clip_by_global_norm`], [`scale_by_learning_rate`]),
//! and the optimizers are their [`chain`]s, with Optax's defaults and arithmetic.
//!
//! ```
//! use rjax::prelude::*;
//! use rjax::optim::{self, GradientTransformation};
//!
//! let params = vec![jnp::array([1.0f32, -2.0]), jnp::array([0.5f32])];
//! let opt = optim::chain((optim::clip_by_global_norm(1.0), optim::adam(0.1)));
//! let state = opt.init(&params);
//! let grads = vec![jnp::array([0.3f32, 0.4]), jnp::array([0.0f32])];
//! let (updates, _state) = opt.update(&grads, &state, &params);
//! let params = optim::apply_updates(&params, &updates);
//! // Adam's first step moves each parameter by the learning rate against its gradient.
//! assert!((params[0].to_vec::<f32>().unwrap()[0] - 0.9).abs() < 1e-6);
//! ```

mod alias;
mod schedule;
mod transform;

pub use alias::{adagrad, adam, adamw, rmsprop, sgd, Adagrad, Adam, AdamW, RmsProp, Sgd};
pub use schedule::{
    constant_schedule, cosine_decay_schedule, exponential_decay, join_schedules, linear_schedule,
    warmup_cosine_decay_schedule, Schedule,
};
pub use transform::{
    add_decayed_weights, clip_by_global_norm, global_norm, identity, scale_by_adam,
    scale_by_learning_rate, scale_by_rms, scale_by_rss, trace, AddDecayedWeights, ClipByGlobalNorm,
    Identity, ScaleByAdam, ScaleByAdamState, ScaleByLearningRate, ScaleByRms, ScaleByRmsState,
    ScaleByRss, ScaleByRssState, ScheduleState, Trace, TraceState,
};

use crate::tree::{self, Unflatten};

/// A pytree of parameters (or gradients, or updates) an optimizer can work on.
pub trait Params: Unflatten + Clone {}

impl<P: Unflatten + Clone> Params for P {}

/// Optax's `GradientTransformation`: a pure `init` and `update` pair.
///
/// `State<P>` has the structure the transformation needs for parameters `P` and is itself a
/// pytree, so it can go in and out of `#[jit]` functions and checkpoints.
pub trait GradientTransformation {
    /// The state for parameters of type `P`.
    type State<P: Params>: Params;

    /// The initial state for `params`.
    fn init<P: Params>(&self, params: &P) -> Self::State<P>;

    /// Transforms `updates` (gradients, for the first transformation of a chain) given the
    /// current parameters; returns the new updates and state.
    fn update<P: Params>(
        &self,
        updates: &P,
        state: &Self::State<P>,
        params: &P,
    ) -> (P, Self::State<P>);
}

/// Applies transformations in order, each to the updates of the one before (`optax.chain`).
///
/// Tuples of up to six transformations are transformations; `chain` only names the intent:
/// `chain((clip_by_global_norm(1.0), adam(1e-3)))`.
pub fn chain<T: GradientTransformation>(transformations: T) -> T {
    transformations
}

macro_rules! chain_tuple {
    ($($t:ident $s:ident),+) => {
        impl<$($t: GradientTransformation),+> GradientTransformation for ($($t,)+) {
            type State<P: Params> = ($($t::State<P>,)+);

            fn init<P: Params>(&self, params: &P) -> Self::State<P> {
                #[allow(non_snake_case)]
                let ($($t,)+) = self;
                ($($t.init(params),)+)
            }

            fn update<P: Params>(
                &self,
                updates: &P,
                state: &Self::State<P>,
                params: &P,
            ) -> (P, Self::State<P>) {
                #[allow(non_snake_case)]
                let ($($t,)+) = self;
                let ($($s,)+) = state;
                let updates = updates.clone();
                $(let (updates, $s) = $t.update(&updates, $s, params);)+
                (updates, ($($s,)+))
            }
        }
    };
}

chain_tuple!(A a);
chain_tuple!(A a, B b);
chain_tuple!(A a, B b, C c);
chain_tuple!(A a, B b, C c, D d);
chain_tuple!(A a, B b, C c, D d, E e);
chain_tuple!(A a, B b, C c, D d, E e, F f);

/// `params + updates`, leaf by leaf (`optax.apply_updates`); each result keeps its
/// parameter's dtype.
#[track_caller]
pub fn apply_updates<P: Params>(params: &P, updates: &P) -> P {
    tree::map2(params, updates, |p, u| (p + u).astype(p.dtype()))
}
