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
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::float_mode::{self, Flushing};

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
    let helpers = threads().min(parts).saturating_sub(1);
    if helpers == 0 {
        (0..parts).for_each(part);
    } else if rayon::current_thread_index().is_none() {
        (0..parts).into_par_iter().flushing().for_each(&part);
    } else {
        run_claimed(parts, helpers, &part);
    }
}

thread_local! {
    /// The threads a kernel started on this thread may use, while [`side_by_side`] has set
    /// them; otherwise the pool's.
    static BUDGET: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// How many threads a kernel started here may split its work over: the current rayon pool's,
/// or its share of them inside [`side_by_side`].
pub fn threads() -> usize {
    BUDGET.get().unwrap_or_else(rayon::current_num_threads)
}

/// Runs `a` and `b` at the same time, each with half of this thread's [`threads`] (one each
/// on two), and returns both results. With a single thread they run one after the other.
///
/// Two independent kernels side by side on their own threads each run at the speed of one
/// thread alone, where one after the other, each split over both threads, they lose to the
/// split's own costs (each thread packs operands the other packs too, the halves finish
/// apart): a training step's 512 x 128 x 512 and 128 x 512 x 512 products on two Zen 4
/// cores took 638-641 µs side by side against 681-683 one after the other.
///
/// # Panics
///
/// Re-raises the panic of either (after both have run).
pub fn side_by_side<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    let total = threads();
    if total < 2 {
        return (a(), b());
    }
    let share = total / 2;
    let (a, b) = (Mutex::new(Some(a)), Mutex::new(Some(b)));
    let (ra, rb) = (Mutex::new(None), Mutex::new(None));
    for_each(2, |i| {
        let before = BUDGET.replace(Some(share));
        // Restores the budget also when the kernel unwinds.
        let _restore = Restore(before);
        if i == 0 {
            let a = a.lock().expect("claimed once").take().expect("claimed once");
            *ra.lock().expect("claimed once") = Some(a());
        } else {
            let b = b.lock().expect("claimed once").take().expect("claimed once");
            *rb.lock().expect("claimed once") = Some(b());
        }
    });
    let ra = ra.into_inner().expect("ran").expect("ran");
    let rb = rb.into_inner().expect("ran").expect("ran");
    (ra, rb)
}

/// Puts back the budget a part of [`side_by_side`] found on its thread.
struct Restore(Option<usize>);

impl Drop for Restore {
    fn drop(&mut self) {
        BUDGET.set(self.0);
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
            scope.spawn(|_| float_mode::flushing(work));
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

    /// Each side gets half the threads, and parts split inside it stay within them; the budget
    /// is the pool's again afterwards, also after a side panics.
    #[test]
    fn side_by_side_gives_each_side_half_the_threads_and_both_results() {
        for (pool, share) in [(1, 1), (2, 1), (4, 2), (5, 2)] {
            let (a, b) = on_pool(pool, || {
                let side = || {
                    let parts = AtomicU64::new(0);
                    for_each(8, |_| {
                        parts.fetch_add(1, Ordering::Relaxed);
                    });
                    (threads(), parts.into_inner())
                };
                side_by_side(side, side)
            });
            assert_eq!((a, b), ((share, 8), (share, 8)), "{pool} threads");
        }
        let after = on_pool(2, || {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                side_by_side(|| 1, || -> i32 { panic!("one side fails") })
            }));
            assert!(outcome.is_err());
            threads()
        });
        assert_eq!(after, 2);
    }
}
