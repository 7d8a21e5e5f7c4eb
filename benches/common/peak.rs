//! Machine peak floating-point throughput probe.
//!
//! [`peak_fma_gflops`] runs a register-blocked loop of independent fused
//! multiply-adds (no loads or stores in the loop body) on a number of threads
//! and reports the achieved single-precision GFLOP/s. It is the denominator
//! for "percent of peak" figures in the matmul benchmarks.
//!
//! Kernel selection (at run time):
//! * x86-64 with AVX-512F: 12 accumulators of `__m512` (16 f32 lanes) updated
//!   with `_mm512_fmadd_ps`;
//! * x86-64 with AVX2 + FMA: 12 accumulators of `__m256` (8 f32 lanes) updated
//!   with `_mm256_fmadd_ps`;
//! * anything else: a portable scalar `mul_add` loop (a lower bound, not a
//!   peak).
//!
//! Twelve independent chains cover the latency x throughput product of all
//! current x86 cores (e.g. 4-cycle latency x 2 FMA pipes = 8 in flight).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Number of independent accumulator chains in every kernel.
const ACCUMULATORS: u64 = 12;

/// Wall time each timed run aims for.
const TARGET_RUN: Duration = Duration::from_millis(200);

/// Timed runs per call; the best one is reported.
const RUNS: usize = 5;

/// A selected FMA kernel: `run(iters)` performs `iters` loop trips of
/// `flops_per_iter` floating-point operations each and returns a value that
/// depends on every accumulator (so the work cannot be optimised away).
#[derive(Clone, Copy)]
struct Kernel {
    run: fn(u64) -> f32,
    flops_per_iter: u64,
}

/// Measures peak single-precision FMA throughput, in GFLOP/s, using `threads`
/// concurrently running threads (a value of 0 is treated as 1).
///
/// One FMA counts as two floating-point operations. The probe calibrates the
/// trip count so that each timed run lasts about 200 ms, performs five timed
/// runs and returns the best, which makes it robust to other processes
/// briefly competing for the cores. Each run is timed from a barrier that all
/// worker threads pass until the last worker finishes.
///
/// The result is a property of the core's FMA units and clock; with more
/// threads than physical cores it stops scaling.
pub fn peak_fma_gflops(threads: usize) -> f64 {
    FmaPeak::new(threads).gflops(RUNS)
}

/// The FMA probe calibrated once, to be run again and again (each round of an interleaved
/// measurement, see `Rounds`).
pub struct FmaPeak {
    kernel: Kernel,
    iters: u64,
    threads: usize,
}

impl FmaPeak {
    /// Picks the kernel and calibrates its trip count for `threads` threads (0 counts as 1).
    pub fn new(threads: usize) -> FmaPeak {
        let kernel = select_kernel();
        // Calibrate on one thread: grow the trip count until a run takes >= 20 ms.
        let mut iters: u64 = 1 << 16;
        let per_iter = loop {
            let start = Instant::now();
            black_box((kernel.run)(black_box(iters)));
            let elapsed = start.elapsed();
            if elapsed >= Duration::from_millis(20) {
                break elapsed.as_secs_f64() / iters as f64;
            }
            iters *= 4;
        };
        let iters = ((TARGET_RUN.as_secs_f64() / per_iter) as u64).max(1);
        FmaPeak { kernel, iters, threads: threads.max(1) }
    }

    /// The best GFLOP/s of `runs` timed runs of about 200 ms each.
    pub fn gflops(&self, runs: usize) -> f64 {
        let total_flops = (self.kernel.flops_per_iter * self.iters * self.threads as u64) as f64;
        (0..runs)
            .map(|_| total_flops / timed_run(self.kernel, self.iters, self.threads) / 1e9)
            .fold(0.0, f64::max)
    }
}

/// Runs `kernel` for `iters` trips on each of `threads` threads at once and
/// returns the wall time in seconds from the common start to the last finish.
fn timed_run(kernel: Kernel, iters: u64, threads: usize) -> f64 {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    black_box((kernel.run)(black_box(iters)))
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for worker in workers {
            black_box(worker.join().expect("FMA probe thread panicked"));
        }
        start.elapsed().as_secs_f64()
    })
}

/// Picks the widest FMA kernel the running CPU supports.
fn select_kernel() -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            return Kernel { run: x86::run_avx512, flops_per_iter: ACCUMULATORS * 16 * 2 };
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            return Kernel { run: x86::run_avx2, flops_per_iter: ACCUMULATORS * 8 * 2 };
        }
    }
    Kernel { run: run_scalar, flops_per_iter: ACCUMULATORS * 2 }
}

/// Portable fallback: twelve scalar `mul_add` chains.
fn run_scalar(iters: u64) -> f32 {
    let a = black_box(0.999_999_f32);
    let b = black_box(1e-7_f32);
    let mut acc = [1.0_f32; ACCUMULATORS as usize];
    for _ in 0..iters {
        for x in &mut acc {
            *x = x.mul_add(a, b);
        }
    }
    acc.iter().sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::hint::black_box;

    /// Expands to a loop of `iters` trips, each applying `$fma(acc, a, b)` to
    /// twelve named accumulators, and returns the accumulators summed with
    /// `$add`. Separate `let` bindings (rather than an array) keep every chain
    /// in its own register. `acc = acc * a + b` with `a` just below 1 and a
    /// tiny `b` converges to a normal number, so no denormals or infinities
    /// ever slow the loop down.
    macro_rules! fma_chains {
        ($iters:expr, $init:expr, $a:expr, $b:expr, $fma:ident, $add:ident) => {{
            let (a, b) = ($a, $b);
            let (mut c0, mut c1, mut c2, mut c3) = ($init, $init, $init, $init);
            let (mut c4, mut c5, mut c6, mut c7) = ($init, $init, $init, $init);
            let (mut c8, mut c9, mut c10, mut c11) = ($init, $init, $init, $init);
            for _ in 0..$iters {
                c0 = $fma(c0, a, b);
                c1 = $fma(c1, a, b);
                c2 = $fma(c2, a, b);
                c3 = $fma(c3, a, b);
                c4 = $fma(c4, a, b);
                c5 = $fma(c5, a, b);
                c6 = $fma(c6, a, b);
                c7 = $fma(c7, a, b);
                c8 = $fma(c8, a, b);
                c9 = $fma(c9, a, b);
                c10 = $fma(c10, a, b);
                c11 = $fma(c11, a, b);
            }
            let s0 = $add($add(c0, c1), $add(c2, c3));
            let s1 = $add($add(c4, c5), $add(c6, c7));
            let s2 = $add($add(c8, c9), $add(c10, c11));
            $add($add(s0, s1), s2)
        }};
    }

    /// AVX-512F kernel; only ever selected after `avx512f` was detected.
    pub(super) fn run_avx512(iters: u64) -> f32 {
        // SAFETY: `select_kernel` only hands out this function when
        // `is_x86_feature_detected!("avx512f")` returned true, so the CPU
        // executes the AVX-512F instructions in `avx512_chains`.
        unsafe { avx512_chains(iters) }
    }

    /// AVX2 + FMA kernel; only ever selected after `avx2` and `fma` were
    /// detected.
    pub(super) fn run_avx2(iters: u64) -> f32 {
        // SAFETY: `select_kernel` only hands out this function when both
        // `avx2` and `fma` were detected at run time.
        unsafe { avx2_chains(iters) }
    }

    /// # Safety
    ///
    /// The running CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn avx512_chains(iters: u64) -> f32 {
        let sum = fma_chains!(
            iters,
            _mm512_set1_ps(1.0),
            _mm512_set1_ps(black_box(0.999_999)),
            _mm512_set1_ps(black_box(1e-7)),
            _mm512_fmadd_ps,
            _mm512_add_ps
        );
        _mm512_reduce_add_ps(sum)
    }

    /// # Safety
    ///
    /// The running CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2_chains(iters: u64) -> f32 {
        let sum = fma_chains!(
            iters,
            _mm256_set1_ps(1.0),
            _mm256_set1_ps(black_box(0.999_999)),
            _mm256_set1_ps(black_box(1e-7)),
            _mm256_fmadd_ps,
            _mm256_add_ps
        );
        let mut lanes = [0.0_f32; 8];
        // SAFETY: `lanes` is 8 contiguous f32 (32 bytes), exactly what an
        // unaligned 256-bit store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
        lanes.iter().sum()
    }
}
