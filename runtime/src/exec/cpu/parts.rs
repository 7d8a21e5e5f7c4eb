//! A kernel's work split into a few parts run by the calling thread and the pool's idle
//! threads, where the calling thread, once no part is left to start, waits for the parts
//! still running by spinning rather than sleeping.
//!
//! Rayon's `join` puts a thread that waits for a stolen job to sleep after a few dozen
//! microseconds, and waking it costs as much again on a virtual machine. A kernel of a few
//! hundred microseconds whose halves finish 20 µs apart (the helper thread started late)
//! then waits 30 to 45 µs more for the sleeper to wake: measured on each product of a jitted
//! MLP training step, several percent of the step. Here the wait is bounded by one part's
//! time: it only starts once every part has been claimed by a running thread.
//!
//! Parts are claimed from a shared counter, so a helper that starts late takes fewer of them
//! and the caller never waits for a helper that has not started.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// An output that the parts of a parallel kernel write at disjoint elements, through a shared
/// pointer to its first element. Each kernel states why its parts' elements are disjoint
/// where it writes through [`DisjointOut::get`].
pub(crate) struct DisjointOut<T>(*mut T);

impl<T> DisjointOut<T> {
    /// The output held in `buffer`, which the caller keeps borrowed while the parts run.
    pub(crate) fn new(buffer: &mut [T]) -> Self {
        DisjointOut(buffer.as_mut_ptr())
    }

    /// The output's first element.
    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}

// SAFETY: parts only write disjoint elements through the pointer (each kernel's contract, see
// `DisjointOut`) while the buffer stays borrowed, and sending `T` values between threads is
// sound (`T: Send`).
unsafe impl<T: Send> Send for DisjointOut<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for DisjointOut<T> {}

/// Runs `part(i)` for each `i in 0..parts`, on this thread and idle threads of the current
/// rayon pool; returns when all have run. Which thread runs which part varies from call to
/// call, so each part must compute the same result on any thread.
///
/// Called from outside a pool (a `pmap` shard's thread), the parts go to rayon's parallel
/// iterator instead: spinning there would wait for pool threads to pick up the helpers.
///
/// # Panics
///
/// Re-raises the panic of a part (the other parts still run to completion).
pub fn for_each(parts: usize, part: impl Fn(usize) + Sync) {
    let helpers = rayon::current_num_threads().min(parts).saturating_sub(1);
    if helpers == 0 {
        (0..parts).for_each(part);
    } else if rayon::current_thread_index().is_none() {
        (0..parts).into_par_iter().for_each(&part);
    } else {
        run_claimed(parts, helpers, &part);
    }
}

/// How long the caller spins for parts still running before it yields its core between
/// checks (the waits measured on the products of a training step were under 20 µs).
const SPIN: Duration = Duration::from_micros(50);

/// The claiming loop of [`for_each`] on `helpers` pool threads besides this one.
fn run_claimed(parts: usize, helpers: usize, part: &(impl Fn(usize) + Sync)) {
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let work = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= parts {
            return;
        }
        // A part that panics still counts as finished, or the caller would spin forever;
        // the panic is raised again once every part is done.
        let outcome = catch_unwind(AssertUnwindSafe(|| part(i)));
        finished.fetch_add(1, Ordering::Release);
        if let Err(panic) = outcome {
            resume_unwind(panic);
        }
    };
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| work());
        }
        work();
        // Every part has been claimed by a thread that is running it. Past a short spin the
        // wait yields, in case that thread shares this one's core (more threads than cores).
        let start = Instant::now();
        while finished.load(Ordering::Acquire) < parts {
            if start.elapsed() < SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // A helper that never started is still queued on this thread, which runs it (it
        // finds nothing to claim) as the scope ends, without sleeping.
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn on_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    #[test]
    fn every_part_runs_once_on_any_thread_count() {
        for threads in [1, 2, 3, 8] {
            for parts in [0, 1, 2, 5, 64] {
                let counts: Vec<AtomicU64> = (0..parts).map(|_| AtomicU64::new(0)).collect();
                on_pool(threads, || {
                    for_each(parts, |i| {
                        counts[i].fetch_add(1, Ordering::Relaxed);
                    })
                });
                assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 1), "{threads} {parts}");
            }
        }
    }

    #[test]
    fn nested_splits_finish_inside_and_outside_a_pool() {
        let sum = |threads: Option<usize>| {
            let total = AtomicU64::new(0);
            let run = || {
                for_each(4, |i| {
                    for_each(4, |j| {
                        for_each(3, |k| {
                            total.fetch_add((i * 100 + j * 10 + k) as u64, Ordering::Relaxed);
                        })
                    })
                })
            };
            match threads {
                Some(threads) => on_pool(threads, run),
                None => run(),
            }
            total.into_inner()
        };
        let expected: u64 = (0..4u64)
            .flat_map(|i| (0..4u64).flat_map(move |j| (0..3u64).map(move |k| i * 100 + j * 10 + k)))
            .sum();
        assert_eq!(sum(Some(2)), expected);
        assert_eq!(sum(Some(3)), expected);
        assert_eq!(sum(None), expected);
    }

    #[test]
    fn a_panicking_part_panics_the_caller_after_the_others_ran() {
        let ran = AtomicU64::new(0);
        let outcome = on_pool(2, || {
            catch_unwind(AssertUnwindSafe(|| {
                for_each(6, |i| {
                    ran.fetch_add(1, Ordering::Relaxed);
                    assert_ne!(i, 3, "part 3 fails");
                })
            }))
        });
        assert!(outcome.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 6);
    }
}
