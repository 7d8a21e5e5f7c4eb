//! Learning-rate schedules: functions of the step count, as Optax's.
//!
//! A schedule maps the optimizer's step count (an `int32` scalar array, so the schedule is
//! part of a jitted step rather than a reason to retrace it) to a `float32` scalar.

use std::f64::consts::PI;
use std::fmt;
use std::sync::Arc;

use crate::{jnp, Array, DType};

/// A learning rate as a function of the step count (`optax.Schedule`).
///
/// Plain numbers convert into constant schedules, so `adam(1e-3)` and
/// `adam(cosine_decay_schedule(1e-3, 1000, 0.0))` both work.
#[derive(Clone)]
pub struct Schedule {
    f: Arc<dyn Fn(&Array) -> Array + Send + Sync>,
    name: String,
}

impl Schedule {
    /// A schedule from any function of the count.
    pub fn new(
        name: impl Into<String>,
        f: impl Fn(&Array) -> Array + Send + Sync + 'static,
    ) -> Self {
        Schedule { f: Arc::new(f), name: name.into() }
    }

    /// The value at `count` (an integer scalar array, traced or not).
    pub fn at(&self, count: &Array) -> Array {
        (self.f)(count)
    }

    /// The value at a step given as a number.
    pub fn at_step(&self, step: i32) -> f32 {
        self.at(&Array::from(step))
            .astype(DType::F32)
            .item::<f32>()
            .expect("a scalar schedule value")
    }
}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl From<f64> for Schedule {
    fn from(value: f64) -> Self {
        constant_schedule(value)
    }
}

/// A constant given as a scalar array: inside `#[jit]` a traced learning rate, so that
/// changing it needs no new trace.
impl From<Array> for Schedule {
    fn from(value: Array) -> Self {
        Schedule::new("constant(array)", move |count| {
            jnp::full_like(&steps(count), 0.0) + value.astype(DType::F32)
        })
    }
}

impl From<&Array> for Schedule {
    fn from(value: &Array) -> Self {
        Schedule::from(value.clone())
    }
}

impl From<f32> for Schedule {
    fn from(value: f32) -> Self {
        constant_schedule(f64::from(value))
    }
}

/// The count as a `float32` array.
fn steps(count: &Array) -> Array {
    count.astype(DType::F32)
}

/// `value` at every step.
pub fn constant_schedule(value: f64) -> Schedule {
    Schedule::new(format!("constant({value})"), move |count| jnp::full_like(&steps(count), value))
}

/// `init_value * decay_rate ^ ((count - transition_begin) / transition_steps)`, constant
/// before `transition_begin`, optionally in whole steps (`staircase`) and bounded by
/// `end_value` (`optax.exponential_decay`).
///
/// # Panics
/// When `transition_steps` is 0 or `decay_rate` is 0.
pub fn exponential_decay(
    init_value: f64,
    transition_steps: u32,
    decay_rate: f64,
    transition_begin: u32,
    staircase: bool,
    end_value: Option<f64>,
) -> Schedule {
    assert!(transition_steps > 0, "optim::exponential_decay: transition_steps must be positive");
    assert!(decay_rate != 0.0, "optim::exponential_decay: decay_rate must not be 0");
    let name = format!("exponential_decay({init_value}, {transition_steps}, {decay_rate})");
    Schedule::new(name, move |count| {
        let count = steps(count) - f64::from(transition_begin);
        let mut p = &count / f64::from(transition_steps);
        if staircase {
            p = p.floor();
        }
        let decayed = jnp::pow(decay_rate, &p) * init_value;
        let mut value = jnp::where_(count.le(0.0), jnp::full_like(&decayed, init_value), &decayed);
        if let Some(end) = end_value {
            value = if decay_rate < 1.0 {
                jnp::maximum(&value, end)
            } else {
                jnp::minimum(&value, end)
            };
        }
        value
    })
}

/// Half a cosine from `init_value` down to `alpha * init_value` over `decay_steps`, then
/// constant (`optax.cosine_decay_schedule`).
///
/// # Panics
/// When `decay_steps` is 0.
pub fn cosine_decay_schedule(init_value: f64, decay_steps: u32, alpha: f64) -> Schedule {
    assert!(decay_steps > 0, "optim::cosine_decay_schedule: decay_steps must be positive");
    let name = format!("cosine_decay({init_value}, {decay_steps}, {alpha})");
    Schedule::new(name, move |count| {
        let count = jnp::minimum(steps(count), f64::from(decay_steps));
        let cosine = (((&count * PI) / f64::from(decay_steps)).cos() + 1.0) * 0.5;
        ((cosine * (1.0 - alpha)) + alpha) * init_value
    })
}

/// A straight line from `init_value` to `end_value` over `transition_steps`, starting at
/// `transition_begin`, constant outside (`optax.linear_schedule`).
pub fn linear_schedule(
    init_value: f64,
    end_value: f64,
    transition_steps: u32,
    transition_begin: u32,
) -> Schedule {
    let name = format!("linear({init_value} -> {end_value}, {transition_steps})");
    Schedule::new(name, move |count| {
        if transition_steps == 0 {
            return jnp::full_like(&steps(count), init_value);
        }
        let count = jnp::clip(
            &(steps(count) - f64::from(transition_begin)),
            0.0,
            f64::from(transition_steps),
        );
        let frac = 1.0 - count / f64::from(transition_steps);
        frac * (init_value - end_value) + end_value
    })
}

/// Runs `schedules[0]` until `boundaries[0]`, then `schedules[1]` counted from that
/// boundary, and so on (`optax.join_schedules`).
///
/// # Panics
/// Unless there is one boundary fewer than schedules.
pub fn join_schedules(schedules: Vec<Schedule>, boundaries: Vec<u32>) -> Schedule {
    assert_eq!(
        schedules.len(),
        boundaries.len() + 1,
        "optim::join_schedules: {} schedules need {} boundaries, got {}",
        schedules.len(),
        schedules.len().saturating_sub(1),
        boundaries.len()
    );
    let name = format!("join({schedules:?} at {boundaries:?})");
    Schedule::new(name, move |count| {
        let mut value = schedules[0].at(count);
        for (schedule, &boundary) in schedules[1..].iter().zip(&boundaries) {
            let boundary = i64::from(boundary);
            let later = schedule.at(&(count - boundary));
            value = jnp::where_(count.lt(boundary), &value, &later);
        }
        value
    })
}

/// A linear warmup from `init_value` to `peak_value` over `warmup_steps`, then a cosine
/// decay to `end_value` at `decay_steps` (counted from 0, warmup included)
/// (`optax.warmup_cosine_decay_schedule`).
///
/// # Panics
/// When `decay_steps <= warmup_steps` or `peak_value` is 0.
pub fn warmup_cosine_decay_schedule(
    init_value: f64,
    peak_value: f64,
    warmup_steps: u32,
    decay_steps: u32,
    end_value: f64,
) -> Schedule {
    assert!(
        decay_steps > warmup_steps,
        "optim::warmup_cosine_decay_schedule: decay_steps ({decay_steps}) must exceed warmup_steps ({warmup_steps})"
    );
    assert!(peak_value != 0.0, "optim::warmup_cosine_decay_schedule: peak_value must not be 0");
    join_schedules(
        vec![
            linear_schedule(init_value, peak_value, warmup_steps, 0),
            cosine_decay_schedule(peak_value, decay_steps - warmup_steps, end_value / peak_value),
        ],
        vec![warmup_steps],
    )
}
