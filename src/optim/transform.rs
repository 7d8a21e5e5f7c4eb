//! Optax's building blocks: each one `GradientTransformation` with its state.

use super::{GradientTransformation, Params, Schedule};
use crate::tree::{self, Tree};
use crate::{jnp, Array};

/// `moment * decay + (1 - decay) * g^order`, in Optax's order of operations.
fn update_moment(g: &Array, moment: &Array, decay: f64, order: i32) -> Array {
    let g = if order == 1 { g.clone() } else { g.powi(order) };
    g * (1.0 - decay) + moment * decay
}

/// `moment / (1 - decay^count)` (Adam's bias correction).
fn bias_correction(moment: &Array, decay: f64, count: &Array) -> Array {
    let correction = 1.0 - jnp::pow(decay, count.astype(moment.dtype()));
    moment / correction
}

/// `count + 1`, stopping at `i32::MAX` instead of wrapping (Optax's `safe_increment`).
fn increment(count: &Array) -> Array {
    jnp::where_(count.lt(i32::MAX), count + 1, count)
}

fn zero_count() -> Array {
    Array::from(0i32)
}

/// Passes the updates through (`optax.identity`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Identity;

/// See [`Identity`].
pub fn identity() -> Identity {
    Identity
}

impl GradientTransformation for Identity {
    type State<P: Params> = ();
    fn init<P: Params>(&self, _params: &P) -> Self::State<P> {}
    fn update<P: Params>(&self, updates: &P, _state: &(), _params: &P) -> (P, ()) {
        (updates.clone(), ())
    }
}

/// Adam's rescaling: bias-corrected first moment over the root of the second
/// (`optax.scale_by_adam`).
#[derive(Clone, Copy, Debug)]
pub struct ScaleByAdam {
    pub b1: f64,
    pub b2: f64,
    pub eps: f64,
    pub eps_root: f64,
}

/// See [`ScaleByAdam`]; Optax's defaults are `(0.9, 0.999, 1e-8, 0.0)`.
pub fn scale_by_adam(b1: f64, b2: f64, eps: f64, eps_root: f64) -> ScaleByAdam {
    ScaleByAdam { b1, b2, eps, eps_root }
}

/// Adam's step count and moments.
#[derive(Clone, Debug, crate::Tree)]
pub struct ScaleByAdamState<P> {
    pub count: Array,
    pub mu: P,
    pub nu: P,
}

impl GradientTransformation for ScaleByAdam {
    type State<P: Params> = ScaleByAdamState<P>;

    fn init<P: Params>(&self, params: &P) -> ScaleByAdamState<P> {
        let zeros = tree::map(params, jnp::zeros_like);
        ScaleByAdamState { count: zero_count(), mu: zeros.clone(), nu: zeros }
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &ScaleByAdamState<P>,
        _params: &P,
    ) -> (P, ScaleByAdamState<P>) {
        let mu = tree::map2(updates, &state.mu, |g, m| update_moment(g, m, self.b1, 1));
        let nu = tree::map2(updates, &state.nu, |g, v| update_moment(g, v, self.b2, 2));
        let count = increment(&state.count);
        let scaled = tree::map2(&mu, &nu, |m, v| {
            let m_hat = bias_correction(m, self.b1, &count);
            let v_hat = bias_correction(v, self.b2, &count);
            m_hat / ((v_hat + self.eps_root).sqrt() + self.eps)
        });
        (scaled, ScaleByAdamState { count, mu, nu })
    }
}

/// Scales by the root of an exponential moving average of squared gradients
/// (`optax.scale_by_rms`, `eps` inside the root, no bias correction).
#[derive(Clone, Copy, Debug)]
pub struct ScaleByRms {
    pub decay: f64,
    pub eps: f64,
    pub initial_scale: f64,
}

/// See [`ScaleByRms`]; Optax's defaults are `(0.9, 1e-8, 0.0)`.
pub fn scale_by_rms(decay: f64, eps: f64, initial_scale: f64) -> ScaleByRms {
    ScaleByRms { decay, eps, initial_scale }
}

/// The moving average of squared gradients.
#[derive(Clone, Debug, crate::Tree)]
pub struct ScaleByRmsState<P> {
    pub nu: P,
}

impl GradientTransformation for ScaleByRms {
    type State<P: Params> = ScaleByRmsState<P>;

    fn init<P: Params>(&self, params: &P) -> ScaleByRmsState<P> {
        ScaleByRmsState { nu: tree::map(params, |p| jnp::full_like(p, self.initial_scale)) }
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &ScaleByRmsState<P>,
        _params: &P,
    ) -> (P, ScaleByRmsState<P>) {
        let nu = tree::map2(updates, &state.nu, |g, v| update_moment(g, v, self.decay, 2));
        let scaled = tree::map2(updates, &nu, |g, v| g * (v + self.eps).rsqrt());
        (scaled, ScaleByRmsState { nu })
    }
}

/// Scales by the root of the running sum of squared gradients (`optax.scale_by_rss`,
/// Adagrad's rescaling).
#[derive(Clone, Copy, Debug)]
pub struct ScaleByRss {
    pub initial_accumulator_value: f64,
    pub eps: f64,
}

/// See [`ScaleByRss`]; Optax's defaults are `(0.1, 1e-7)`.
pub fn scale_by_rss(initial_accumulator_value: f64, eps: f64) -> ScaleByRss {
    ScaleByRss { initial_accumulator_value, eps }
}

/// The running sum of squared gradients.
#[derive(Clone, Debug, crate::Tree)]
pub struct ScaleByRssState<P> {
    pub sum_of_squares: P,
}

impl GradientTransformation for ScaleByRss {
    type State<P: Params> = ScaleByRssState<P>;

    fn init<P: Params>(&self, params: &P) -> ScaleByRssState<P> {
        let value = self.initial_accumulator_value;
        ScaleByRssState { sum_of_squares: tree::map(params, |p| jnp::full_like(p, value)) }
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &ScaleByRssState<P>,
        _params: &P,
    ) -> (P, ScaleByRssState<P>) {
        let sum_of_squares = tree::map2(updates, &state.sum_of_squares, |g, s| g.square() + s);
        let scaled = tree::map2(updates, &sum_of_squares, |g, s| {
            let inv = jnp::where_(s.gt(0.0), (s + self.eps).rsqrt(), jnp::zeros_like(s));
            inv * g
        });
        (scaled, ScaleByRssState { sum_of_squares })
    }
}

/// Momentum: accumulates `g + decay * trace`, optionally Nesterov's look-ahead
/// (`optax.trace`).
#[derive(Clone, Copy, Debug)]
pub struct Trace {
    pub decay: f64,
    pub nesterov: bool,
}

/// See [`Trace`].
pub fn trace(decay: f64, nesterov: bool) -> Trace {
    Trace { decay, nesterov }
}

/// The momentum buffer.
#[derive(Clone, Debug, crate::Tree)]
pub struct TraceState<P> {
    pub trace: P,
}

impl GradientTransformation for Trace {
    type State<P: Params> = TraceState<P>;

    fn init<P: Params>(&self, params: &P) -> TraceState<P> {
        TraceState { trace: tree::map(params, jnp::zeros_like) }
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &TraceState<P>,
        _params: &P,
    ) -> (P, TraceState<P>) {
        let step = |g: &Array, t: &Array| g + t * self.decay;
        let new_trace = tree::map2(updates, &state.trace, step);
        let updates =
            if self.nesterov { tree::map2(updates, &new_trace, step) } else { new_trace.clone() };
        (updates, TraceState { trace: new_trace })
    }
}

/// `None` is the identity, so that optional parts of an optimizer (momentum) keep one type.
impl<T: GradientTransformation> GradientTransformation for Option<T> {
    type State<P: Params> = Option<T::State<P>>;

    fn init<P: Params>(&self, params: &P) -> Self::State<P> {
        self.as_ref().map(|t| t.init(params))
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &Self::State<P>,
        params: &P,
    ) -> (P, Self::State<P>) {
        match (self, state) {
            (Some(t), Some(s)) => {
                let (updates, s) = t.update(updates, s, params);
                (updates, Some(s))
            }
            _ => (updates.clone(), None),
        }
    }
}

/// Adds `weight_decay * params` to the updates (`optax.add_decayed_weights`, AdamW's
/// decoupled decay).
#[derive(Clone, Copy, Debug)]
pub struct AddDecayedWeights {
    pub weight_decay: f64,
}

/// See [`AddDecayedWeights`].
pub fn add_decayed_weights(weight_decay: f64) -> AddDecayedWeights {
    AddDecayedWeights { weight_decay }
}

impl GradientTransformation for AddDecayedWeights {
    type State<P: Params> = ();
    fn init<P: Params>(&self, _params: &P) {}
    fn update<P: Params>(&self, updates: &P, _state: &(), params: &P) -> (P, ()) {
        (tree::map2(updates, params, |u, p| u + p * self.weight_decay), ())
    }
}

/// The 2-norm of all leaves together (`optax.global_norm`).
pub fn global_norm<P: Tree + ?Sized>(tree: &P) -> Array {
    let leaves = tree::leaves(tree);
    let mut squares = leaves.iter().map(|leaf| leaf.square().sum());
    let first = squares.next().unwrap_or_else(|| Array::from(0.0f32));
    squares.fold(first, |acc, s| acc + s).sqrt()
}

/// Rescales the updates so that their [`global_norm`] is at most `max_norm`
/// (`optax.clip_by_global_norm`).
#[derive(Clone, Copy, Debug)]
pub struct ClipByGlobalNorm {
    pub max_norm: f64,
}

/// See [`ClipByGlobalNorm`].
///
/// # Panics
/// When `max_norm` is not positive.
pub fn clip_by_global_norm(max_norm: f64) -> ClipByGlobalNorm {
    assert!(
        max_norm > 0.0,
        "optim::clip_by_global_norm: max_norm must be positive, got {max_norm}"
    );
    ClipByGlobalNorm { max_norm }
}

impl GradientTransformation for ClipByGlobalNorm {
    type State<P: Params> = ();
    fn init<P: Params>(&self, _params: &P) {}
    fn update<P: Params>(&self, updates: &P, _state: &(), _params: &P) -> (P, ()) {
        let norm = global_norm(updates);
        let within = norm.lt(self.max_norm);
        let clipped = tree::map(updates, |u| {
            jnp::where_(&within, u, (u / norm.astype(u.dtype())) * self.max_norm)
        });
        (clipped, ())
    }
}

/// Multiplies the updates by `-schedule(count)`: the step itself
/// (`optax.scale_by_learning_rate`).
#[derive(Clone, Debug)]
pub struct ScaleByLearningRate {
    pub schedule: Schedule,
}

/// See [`ScaleByLearningRate`].
pub fn scale_by_learning_rate(learning_rate: impl Into<Schedule>) -> ScaleByLearningRate {
    ScaleByLearningRate { schedule: learning_rate.into() }
}

/// The step count a schedule reads.
#[derive(Clone, Debug, crate::Tree)]
pub struct ScheduleState {
    pub count: Array,
}

impl GradientTransformation for ScaleByLearningRate {
    type State<P: Params> = ScheduleState;

    fn init<P: Params>(&self, _params: &P) -> ScheduleState {
        ScheduleState { count: zero_count() }
    }

    fn update<P: Params>(
        &self,
        updates: &P,
        state: &ScheduleState,
        _params: &P,
    ) -> (P, ScheduleState) {
        let rate = self.schedule.at(&state.count);
        let scaled = tree::map(updates, |u| u * (-&rate).astype(u.dtype()));
        (scaled, ScheduleState { count: increment(&state.count) })
    }
}
