//! XLA's float semantics on CPU: every computation runs with *denormals-are-zero* (a subnormal
//! operand counts as a zero of its sign) and *flush-to-zero* (a subnormal result becomes a zero
//! of its sign), so `jnp::square(&jnp::exp(-51.77))` is `0.0` in `float32`, as in JAX.
//!
//! XLA sets the processor's modes for each execution on the calling thread
//! (`tsl::port::ScopedFlushDenormal` in the CPU client) and for the whole life of its own
//! worker threads. rjax does the same with [`FlushDenormals`], an RAII guard that sets the
//! modes on its thread and restores what it found there when dropped, so Rust code outside
//! rjax keeps the IEEE behaviour it had. The guard is taken where rjax computes:
//!
//! - an eager primitive evaluated on the host (`primitives::bind`), and every run of a `#[jit]`
//!   plan, on the calling thread (and on the pool thread a plan may move to);
//! - each task that rjax's kernels hand to rayon's threads: the parallel iterators' pieces
//!   (`Flushing::flushing`), the halves of `float_mode::join`, and the parts of
//!   [`parts::for_each`](super::parts::for_each). These threads are the user's rayon pool,
//!   shared with code outside rjax, so the modes are set per task rather than per thread.
//!
//! rayon's global pool is started before the first guard is taken (when a thread outside any
//! pool first computes): a thread starts with the modes of the thread that spawns it, and the
//! pool's threads must keep the IEEE behaviour between rjax's tasks.
//!
//! Not covered: the threads that gemm (large matrix products, convolutions) and faer
//! (factorizations and the other `linalg` kernels) hand their own parallel work to. When such a
//! kernel splits one product or one factorization over rayon's threads, the pieces it runs
//! there compute without the modes and may keep subnormal results and operands; their
//! single-threaded work, on the guarded calling thread, flushes.
//!
//! Constant folding while tracing (`transform::simplify`) runs unguarded, as XLA's HLO
//! evaluator folds constants without the modes: a computation on constants alone keeps its
//! subnormal results under `jax.jit` too. Conversions done in Rust rather than by a primitive
//! (making an array from Rust values, reading one out) keep every bit, as NumPy's do in JAX;
//! so does the conversion of a Rust scalar operand to the dtype it is promoted to, which JAX
//! leaves to NumPy for a Python scalar (`jnp.where(c, x, 1e-45)` keeps the subnormal `1e-45`
//! in `float32`). `astype` is a computation and flushes, as XLA's `convert` does.
//!
//! The modes are the x86-64 MXCSR bits FTZ (15) and DAZ (6), and on AArch64 FPCR.FZ (bit 24),
//! which does both; elsewhere the guard does nothing. Taking it reads the control register
//! once, and writes it (and again when dropped) only on a thread without the modes: a few
//! nanoseconds per eager operation, nothing next to dispatching it.
//!
//! GPUs are outside this: the wgpu and CUDA backends' kernels follow the device's own rules
//! for subnormals (WGSL lets an implementation flush them; most GPUs may flush `f32` results,
//! as under XLA on GPUs).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::iter::{MapInit, ParallelIterator};

/// Sets flush-to-zero and denormals-are-zero on this thread while it lives, and puts back the
/// state it found when dropped (XLA's `ScopedFlushDenormal`). Guards nest: one taken where
/// the modes are already set changes nothing, now or when dropped.
///
/// rjax takes it itself wherever it computes; kernels written outside rjax that should
/// compute as XLA does on CPU can take it too.
///
/// ```
/// use rjax_runtime::exec::cpu::float_mode::{flushes_denormals, FlushDenormals};
/// let tiny = std::hint::black_box(1e-40f32);
/// {
///     let _modes = FlushDenormals::new();
///     if flushes_denormals() {
///         // x86-64 and AArch64; elsewhere the guard does nothing.
///         assert_eq!(std::hint::black_box(tiny) * 1.0, 0.0);
///     }
/// }
/// assert!(!flushes_denormals());
/// assert_eq!(std::hint::black_box(tiny) * 1.0, 1e-40);
/// ```
#[must_use = "the modes are restored when the guard is dropped"]
pub struct FlushDenormals {
    /// The mode bits this thread had, when the guard changed them.
    before: Option<Control>,
    /// The modes belong to this thread: the guard must be dropped where it was made.
    _thread: PhantomData<*const ()>,
}

impl FlushDenormals {
    /// Sets both modes on this thread.
    #[inline]
    pub fn new() -> Self {
        let now = arch::read();
        let before = if now & arch::MODES == arch::MODES {
            None
        } else {
            arch::write(now | arch::MODES);
            Some(now & arch::MODES)
        };
        FlushDenormals { before, _thread: PhantomData }
    }
}

impl Default for FlushDenormals {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for FlushDenormals {
    #[inline]
    fn drop(&mut self) {
        if let Some(before) = self.before {
            // Only the two mode bits go back: the exception flags raised meanwhile stay.
            arch::write((arch::read() & !arch::MODES) | before);
        }
    }
}

/// Whether this thread computes with flush-to-zero and denormals-are-zero set, as rjax does
/// while it runs an operation (always `false` on targets where [`FlushDenormals`] does
/// nothing).
pub fn flushes_denormals() -> bool {
    arch::MODES != 0 && arch::read() & arch::MODES == arch::MODES
}

/// Runs `f` with the modes set on this thread (see [`guard`]).
#[inline]
pub(crate) fn flushing<R>(f: impl FnOnce() -> R) -> R {
    let _modes = guard();
    f()
}

/// [`FlushDenormals`] for an operation or a plan about to compute on this thread, once rayon's
/// global pool has started: a thread outside any pool that computes in parallel uses the
/// global pool, and the pool's threads would otherwise start with the modes of the guarded
/// thread that happened to start it, and keep them.
#[inline]
pub(crate) fn guard() -> FlushDenormals {
    /// Set once the global pool is known to have started.
    static POOL_STARTED: AtomicBool = AtomicBool::new(false);
    if !POOL_STARTED.load(Ordering::Relaxed) && rayon::current_thread_index().is_none() {
        // Starts the global pool, from this thread before it sets the modes.
        let _ = rayon::current_num_threads();
        POOL_STARTED.store(true, Ordering::Relaxed);
    }
    FlushDenormals::new()
}

/// Runs `f` with the modes cleared on this thread (IEEE subnormals), restoring them after:
/// for the conversions JAX leaves to NumPy, which never flush.
pub(crate) fn ieee<R>(f: impl FnOnce() -> R) -> R {
    /// Sets the modes again, also when `f` unwinds.
    struct Again(Option<Control>);
    impl Drop for Again {
        fn drop(&mut self) {
            if let Some(modes) = self.0 {
                arch::write(arch::read() | modes);
            }
        }
    }
    let now = arch::read();
    let set = now & arch::MODES;
    if set != 0 {
        arch::write(now & !arch::MODES);
    }
    let _again = Again((set != 0).then_some(set));
    f()
}

/// `rayon::join` with the modes set for each closure, on whichever thread runs it.
pub(crate) fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    rayon::join(|| flushing(a), || flushing(b))
}

/// The guard a piece of a parallel iterator holds while it runs.
type Init = fn() -> FlushDenormals;
/// Passes each item through unchanged.
type Pass<T> = fn(&mut FlushDenormals, T) -> T;

/// Parallel iterators whose pieces run with the modes set: rayon runs each piece (one split of
/// the work, many items) on some thread of its pool, with one guard taken for the piece.
pub(crate) trait Flushing: ParallelIterator {
    /// This iterator, its pieces run under [`FlushDenormals`]. Put it right before the
    /// consuming call (`for_each`, `collect`, ...): the adaptors before it run inside the
    /// pieces, so under the guard.
    fn flushing(self) -> MapInit<Self, Init, Pass<Self::Item>>;
}

impl<I: ParallelIterator> Flushing for I {
    fn flushing(self) -> MapInit<Self, Init, Pass<Self::Item>> {
        self.map_init(FlushDenormals::new as Init, (|_, item| item) as Pass<Self::Item>)
    }
}

/// The processor's control register, as the guard reads and writes it.
type Control = arch::Control;

#[cfg(target_arch = "x86_64")]
mod arch {
    use std::arch::asm;

    pub(super) type Control = u32;

    /// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
    pub(super) const MODES: Control = (1 << 15) | (1 << 6);

    #[inline]
    pub(super) fn read() -> Control {
        let mut csr: Control = 0;
        // SAFETY: `stmxcsr` stores the 32-bit MXCSR into the `u32` the pointer names, a local
        // that lives across the instruction; it changes nothing else.
        unsafe {
            asm!("stmxcsr dword ptr [{}]", in(reg) &mut csr, options(nostack, preserves_flags));
        }
        csr
    }

    #[inline]
    pub(super) fn write(csr: Control) {
        // SAFETY: `ldmxcsr` loads MXCSR from a live local. The value is one `read` returned
        // with at most the FTZ and DAZ bits changed, so no reserved bit is set (which would
        // fault); every x86-64 processor supports both bits. The modes change how later float
        // instructions round tiny values, which is the point, and nothing Rust assumes.
        unsafe {
            asm!("ldmxcsr dword ptr [{}]", in(reg) &csr, options(nostack, preserves_flags, readonly));
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod arch {
    use std::arch::asm;

    pub(super) type Control = u64;

    /// FPCR.FZ (bit 24): subnormal inputs and results of single and double precision
    /// arithmetic are zeros.
    pub(super) const MODES: Control = 1 << 24;

    #[inline]
    pub(super) fn read() -> Control {
        let fpcr: Control;
        // SAFETY: reading FPCR has no effect besides the value.
        unsafe { asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack, preserves_flags)) };
        fpcr
    }

    #[inline]
    pub(super) fn write(fpcr: Control) {
        // SAFETY: the value is one `read` returned with at most FZ changed, which every AArch64
        // processor supports; it changes how later float instructions treat tiny values only.
        unsafe { asm!("msr fpcr, {}", in(reg) fpcr, options(nostack, preserves_flags)) };
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    pub(super) type Control = u32;

    /// No modes to set on this target.
    pub(super) const MODES: Control = 0;

    pub(super) fn read() -> Control {
        0
    }

    pub(super) fn write(_: Control) {}
}

#[cfg(all(test, any(target_arch = "x86_64", target_arch = "aarch64")))]
mod tests {
    use super::*;
    use rayon::prelude::*;
    use std::hint::black_box;

    #[test]
    fn the_guard_flushes_while_it_lives_and_nests() {
        let tiny = black_box(1e-40f32);
        assert!(!flushes_denormals());
        assert_eq!(black_box(tiny) * 1.0, 1e-40);
        {
            let _outer = FlushDenormals::new();
            assert!(flushes_denormals());
            assert_eq!(black_box(tiny) * 1.0, 0.0);
            assert_eq!(black_box(f32::MIN_POSITIVE) * 0.5, 0.0);
            // A subnormal operand counts as zero.
            assert_eq!(black_box(tiny).partial_cmp(&0.0), Some(std::cmp::Ordering::Equal));
            {
                let _inner = FlushDenormals::new();
                assert!(flushes_denormals());
            }
            // The inner guard found the modes set and left them.
            assert!(flushes_denormals());
            assert_eq!(black_box(1e-310f64) * 1.0, 0.0);
        }
        assert!(!flushes_denormals());
        assert_eq!(black_box(tiny) * 1.0, 1e-40);
    }

    #[test]
    fn pieces_of_a_parallel_iterator_flush_and_restore_their_threads() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let n = 1 << 16;
        let (flushed, restored) = pool.install(|| {
            let flushed: Vec<bool> = (0..n)
                .into_par_iter()
                .with_max_len(64)
                .flushing()
                .map(|_| flushes_denormals() && black_box(1e-40f32) * 1.0 == 0.0)
                .collect();
            let restored = pool.broadcast(|_| !flushes_denormals());
            (flushed, restored)
        });
        assert!(flushed.iter().all(|&f| f));
        assert!(restored.iter().all(|&r| r));
        let (a, b) = pool.install(|| join(flushes_denormals, flushes_denormals));
        assert!(a && b);
        assert!(!flushes_denormals());
    }
}
