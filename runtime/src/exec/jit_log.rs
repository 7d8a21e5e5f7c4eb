//! Why a `#[jit]` call traced again, said on request (`RJAX_LOG_COMPILES=1`, as JAX's
//! `jax_log_compiles`) and, once, when a function keeps retracing.
//!
//! A miss is explained against the plan used most recently: the first argument (or static
//! argument) whose structure, shape, dtype, weak type or value differs is named. Misses are
//! rare by design, so the comparison is only made on the tracing path.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use super::static_args::StaticArg;
use crate::array::Array;
use crate::primitives::Aval;
use crate::tree::TreeDef;

/// After this many traces of one function, a warning names the argument that keeps changing.
pub const RETRACE_WARNING: u64 = 10;

/// The signature a plan was traced for, as the log compares it.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub def: TreeDef,
    pub leaves: Vec<Aval>,
    pub statics: Vec<StaticArg>,
}

/// How a call names its arguments: the traced parameters, in the order of the argument tuple
/// (empty when the arguments are one tree with no names), and the static ones.
pub struct CallSite<'a> {
    /// The traced parameters' names.
    pub params: &'static [&'static str],
    /// The static arguments, in declaration order.
    pub statics: &'a [StaticArg],
}

impl CallSite<'_> {
    /// A call with one unnamed argument tree and no static arguments (`jit(closure)`).
    pub const UNNAMED: CallSite<'static> = CallSite { params: &[], statics: &[] };

    /// The static arguments' combined key.
    pub(super) fn statics_hash(&self) -> u64 {
        self.statics.iter().fold(0x9e37_79b9_7f4a_7c15, |h: u64, s| {
            (h.rotate_left(7) ^ s.hash).wrapping_mul(0x1000_0000_01b3)
        })
    }
}

/// `RJAX_LOG_COMPILES` set to anything but `0` or empty, unless [`set_log_compiles`] said
/// otherwise.
pub fn log_compiles() -> bool {
    match OVERRIDE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => *FROM_ENV.get_or_init(|| {
            std::env::var("RJAX_LOG_COMPILES").is_ok_and(|v| !v.is_empty() && v != "0")
        }),
    }
}

/// Turns the compile log on or off for this process (as `RJAX_LOG_COMPILES` does; JAX's
/// `jax.config.update("jax_log_compiles", True)`): each trace of a `#[jit]` function prints
/// one line to stderr naming the function and why its cache missed.
pub fn set_log_compiles(on: bool) {
    OVERRIDE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

static OVERRIDE: AtomicU8 = AtomicU8::new(0);
static FROM_ENV: OnceLock<bool> = OnceLock::new();

/// Why a call missed the cache: a sentence for the log, and the argument it names (for the
/// retrace warning's count).
pub(super) struct Miss {
    pub reason: String,
    pub argument: Option<&'static str>,
}

/// Explains a miss of `now` against `previous`, the signature used most recently (`None` when
/// the cache is empty: a first call, or every plan evicted or cleared).
pub(super) fn explain(
    previous: Option<&Seen>,
    site: &CallSite<'_>,
    def: &TreeDef,
    leaves: &[Array],
    traces: u64,
) -> Miss {
    let Some(before) = previous else {
        let reason = if traces == 0 { "first call" } else { "the cache held no plan" };
        return Miss { reason: reason.to_string(), argument: None };
    };
    if let Some(miss) = static_change(before, site) {
        return miss;
    }
    if let Some(miss) = traced_change(before, site.params, def, leaves) {
        return miss;
    }
    let reason = "a signature whose plan was evicted (the cache is full: raise its capacity with \
                  `f::set_cache_capacity`)";
    Miss { reason: reason.to_string(), argument: None }
}

fn static_change(before: &Seen, site: &CallSite<'_>) -> Option<Miss> {
    let (old, new) = before.statics.iter().zip(site.statics).find(|(o, n)| o.hash != n.hash)?;
    let reason = match (&old.shown, &new.shown) {
        (Some(a), Some(b)) => format!("argument `{}`: static value {a} → {b}", new.name),
        _ => format!("argument `{}`: static value changed", new.name),
    };
    Some(Miss { reason, argument: Some(new.name) })
}

/// The first traced argument whose structure or leaves differ.
fn traced_change(
    before: &Seen,
    params: &'static [&'static str],
    def: &TreeDef,
    leaves: &[Array],
) -> Option<Miss> {
    let split = |d: &TreeDef| d.tuple_elements().filter(|parts| parts.len() == params.len());
    let (old_parts, new_parts) = match (split(&before.def), split(def)) {
        (Some(o), Some(n)) if !params.is_empty() => (o, n),
        _ => (vec![before.def.clone()], vec![def.clone()]),
    };
    let name = |i: usize| params.get(i).copied();
    let label =
        |i: usize| name(i).map_or("the arguments".to_string(), |n| format!("argument `{n}`"));
    let (mut old_at, mut new_at) = (0, 0);
    for (i, (o, n)) in old_parts.iter().zip(&new_parts).enumerate() {
        let (old_count, new_count) = (o.num_leaves(), n.num_leaves());
        if o != n {
            let reason = format!("{}: tree structure {o} → {n}", label(i));
            return Some(Miss { reason, argument: name(i) });
        }
        let old_leaves = &before.leaves[old_at..old_at + old_count];
        let new_leaves = &leaves[new_at..new_at + new_count];
        for (k, (a, l)) in old_leaves.iter().zip(new_leaves).enumerate() {
            let Some(change) = leaf_change(a, l) else { continue };
            let which =
                if new_count > 1 { format!(" (leaf {k} of {new_count})") } else { "".into() };
            let reason = format!("{}{which}: {change}", label(i));
            return Some(Miss { reason, argument: name(i) });
        }
        old_at += old_count;
        new_at += new_count;
    }
    None
}

fn leaf_change(before: &Aval, now: &Array) -> Option<String> {
    if before.dtype != now.dtype() {
        return Some(format!("dtype {} → {}", before.dtype, now.dtype()));
    }
    if before.shape[..] != *now.shape() {
        return Some(format!("shape {:?} → {:?}", &before.shape[..], now.shape()));
    }
    if before.weak != now.is_weak() {
        let kind = |weak: bool| if weak { "weakly typed" } else { "strongly typed" };
        return Some(format!("{} → {}", kind(before.weak), kind(now.is_weak())));
    }
    None
}

/// The warning printed once when a function reaches [`RETRACE_WARNING`] traces.
pub(super) fn retrace_warning(function: &str, traces: u64, changes: &[(&str, u64)]) -> String {
    let mut text = format!("rjax: #[jit] function `{function}` was traced {traces} times");
    if let Some((name, count)) = changes.iter().max_by_key(|(_, c)| *c) {
        text += &format!(
            "; argument `{name}` changed in {count} of them. A new value of a static argument \
             (or a new shape, dtype or structure) traces again: make a changing number a traced \
             parameter (`i32`, `u32`, `i64`, `f32`, `f64` or an array) rather than a static one"
        );
    }
    text + ". RJAX_LOG_COMPILES=1 prints why each trace happened."
}
