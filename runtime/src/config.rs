//! Process-wide settings, as `jax.config`: today the dtype mode (`jax_enable_x64`).
//!
//! By default rjax computes in JAX's 32-bit mode: 64-bit types are *canonicalized* to their
//! 32-bit kin wherever an array gets a dtype (`f64` data becomes `float32`, `u32 + i32` is
//! `int32`, `astype(DType::F64)` gives `float32`), and the default types are `float32`/`int32`.
//! With x64 on, 64-bit types are kept where they are asked for, as with
//! `jax.config.update("jax_enable_x64", True)`; unlike JAX, the default types stay
//! `float32`/`int32` (`jnp::arange(4)`, `jnp::zeros`, `random::uniform` without a dtype, Rust
//! scalars combined only with each other).
//!
//! The mode is read when an array is made or a function traced, so a compiled `#[jit]` plan
//! belongs to the mode it was traced in (the mode is part of the compile cache's key).
//!
//! ```
//! use rjax_runtime::{config, Array, DType};
//! let x = config::with_x64(false, || Array::from(1.5f64));
//! assert_eq!(x.dtype(), DType::F32);
//! let y = config::with_x64(true, || Array::from(1.5f64));
//! assert_eq!(y.dtype(), DType::F64);
//! ```

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, Ordering};

/// The process-wide mode: `UNSET` until first read or set, then `OFF` or `ON`.
static X64: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;

thread_local! {
    /// This thread's override (from [`with_x64`]), if any.
    static X64_HERE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Turns 64-bit types on or off for the whole process (`jax.config.update("jax_enable_x64",
/// on)`). Set it before making arrays: arrays already made keep their dtypes. The environment
/// variable `RJAX_ENABLE_X64=1` sets the same default at start-up.
pub fn enable_x64(on: bool) {
    X64.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether 64-bit types are on for code running on this thread now: the innermost
/// [`with_x64`] around it, else the process's mode ([`enable_x64`], else `RJAX_ENABLE_X64`,
/// else off).
pub fn x64_enabled() -> bool {
    if let Some(on) = X64_HERE.with(Cell::get) {
        return on;
    }
    match X64.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => {
            let on = std::env::var("RJAX_ENABLE_X64")
                .is_ok_and(|v| matches!(v.trim(), "1" | "true" | "True" | "TRUE"));
            // A racing `enable_x64` wins over the environment.
            let _ = X64.compare_exchange(
                UNSET,
                if on { ON } else { OFF },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            X64.load(Ordering::Relaxed) == ON
        }
    }
}

/// Runs `f` with 64-bit types on or off on this thread only (JAX's
/// `jax.experimental.enable_x64()` / `disable_x64()` context managers); the previous mode
/// comes back afterwards, also when `f` panics. Work that rjax spreads over threads for `f`
/// (`pmap`'s devices) runs in the same mode.
///
/// ```
/// use rjax_runtime::{config, jnp, DType};
/// let data = || jnp::array(vec![1i64, 2, 3]);
/// assert_eq!(config::with_x64(true, data).dtype(), DType::I64);
/// assert_eq!(config::with_x64(false, data).dtype(), DType::I32);
/// ```
pub fn with_x64<R>(on: bool, f: impl FnOnce() -> R) -> R {
    let _scope = x64_scope(on);
    f()
}

/// Turns 64-bit types on or off on this thread until the returned guard is dropped, as
/// [`with_x64`] does for a closure (for code where a closure does not fit, such as a test body
/// that returns early).
///
/// ```
/// use rjax_runtime::{config, Array, DType};
/// let _x64 = config::x64_scope(true);
/// assert_eq!(Array::from(0.5f64).dtype(), DType::F64);
/// ```
#[must_use = "the mode is restored when the guard is dropped: bind it to a named variable"]
pub fn x64_scope(on: bool) -> X64Scope {
    X64Scope { previous: X64_HERE.with(|m| m.replace(Some(on))), _not_send: PhantomData }
}

/// The guard of [`x64_scope`]: restores the thread's previous mode when dropped (also when
/// unwinding). It stays on the thread that made it.
pub struct X64Scope {
    previous: Option<bool>,
    _not_send: PhantomData<*const ()>,
}

impl Drop for X64Scope {
    fn drop(&mut self) {
        X64_HERE.with(|m| m.set(self.previous));
    }
}
