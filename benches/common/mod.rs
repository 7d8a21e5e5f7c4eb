//! Shared pieces of the benchmarks: robust timing, the machine's limits, and JAX run side by
//! side when it is installed.
#![allow(dead_code)]

pub mod mlp;
pub mod peak;
pub mod w1;

use std::cell::RefCell;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rayon::prelude::*;

/// The median of `runs` timed calls of `f`, after one warm-up call.
pub fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

/// The machine's copy bandwidth over buffers of a given size, with all cores copying disjoint
/// chunks: the memory-bound limit of an elementwise op. Each measurement takes the faster of a
/// plain copy (`memcpy`) and one with non-temporal stores (which skip reading the destination
/// into the cache first, as rjax's streaming kernels do; whole 64-byte lines per store with
/// AVX-512).
pub struct CopyRate {
    src: Vec<f32>,
    dst: Vec<f32>,
}

impl CopyRate {
    /// Buffers of `bytes` each, written once so that no page fault is timed.
    pub fn new(bytes: usize) -> CopyRate {
        let n = bytes / 4;
        CopyRate { src: vec![1.0; n], dst: vec![2.0; n] }
    }

    /// GB/s (bytes read + bytes written per second): the faster copy's median of seven.
    pub fn gbs(&mut self) -> f64 {
        // A multiple of 16 elements, so every chunk starts as aligned as the buffer.
        let chunk = self.src.len().div_ceil(rayon::current_num_threads() * 4).next_multiple_of(16);
        let (src, dst) = (&self.src, &mut self.dst);
        let plain = median_time(7, || {
            dst.par_chunks_mut(chunk)
                .zip(src.par_chunks(chunk))
                .for_each(|(d, s)| d.copy_from_slice(s));
        });
        let streamed = median_time(7, || {
            dst.par_chunks_mut(chunk)
                .zip(src.par_chunks(chunk))
                .for_each(|(d, s)| stream_copy(s, d));
        });
        std::hint::black_box(&self.dst);
        2.0 * (self.src.len() * 4) as f64 / plain.min(streamed).as_secs_f64() / 1e9
    }
}

/// `dst.copy_from_slice(src)` with non-temporal stores where the destination is 16-byte aligned.
fn stream_copy(src: &[f32], dst: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above).
        unsafe { stream_lines(src, dst) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if (dst.as_ptr() as usize).is_multiple_of(16) {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_sfence, _mm_stream_ps};
        let whole = src.len().min(dst.len()) / 4 * 4;
        for i in (0..whole).step_by(4) {
            // SAFETY: `i + 4 <= whole`, inside both slices; `dst + i` is 16-byte aligned
            // (checked above, and `i` is a multiple of 4 floats); SSE is part of x86-64.
            unsafe { _mm_stream_ps(dst.as_mut_ptr().add(i), _mm_loadu_ps(src.as_ptr().add(i))) };
        }
        dst[whole..].copy_from_slice(&src[whole..]);
        // SAFETY: `sfence` has no preconditions.
        unsafe { _mm_sfence() };
        return;
    }
    dst.copy_from_slice(src);
}

/// Copies `src` into `dst` with whole 64-byte lines streamed (one 512-bit non-temporal store
/// each, as rjax's compiled loops write), the parts before the first and after the last whole
/// line of `dst` copied plainly.
///
/// # Safety
/// The CPU supports AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stream_lines(src: &[f32], dst: &mut [f32]) {
    use std::arch::x86_64::{_mm512_loadu_ps, _mm512_stream_ps, _mm_sfence};
    let len = src.len().min(dst.len());
    let head = ((64 - dst.as_ptr() as usize % 64) % 64 / 4).min(len);
    let lines = (len - head) / 16;
    dst[..head].copy_from_slice(&src[..head]);
    for line in 0..lines {
        let i = head + 16 * line;
        // SAFETY: `i + 16 <= len`, inside both slices; `dst + i` is 64-byte aligned (`head`
        // aligns it, and each line is 64 bytes); the CPU has AVX-512F (the caller's contract).
        unsafe { _mm512_stream_ps(dst.as_mut_ptr().add(i), _mm512_loadu_ps(src.as_ptr().add(i))) };
    }
    let done = head + 16 * lines;
    dst[done..len].copy_from_slice(&src[done..len]);
    _mm_sfence();
}

/// JAX's side of a workload: `benches/jax/bench.py WORKLOAD` kept running, timing its jitted
/// functions when asked, so that the bench can alternate between rjax and JAX.
pub struct Jax {
    process: RefCell<(Child, BufReader<ChildStdout>)>,
}

impl Jax {
    /// Starts the JAX side of `workload` and waits until its functions are built, or prints
    /// why there will be no side-by-side numbers and returns `None`.
    pub fn start(workload: &str) -> Option<Jax> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/jax/bench.py");
        let spawned = Command::new("python3")
            .arg(script)
            .arg(workload)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = spawned else {
            println!("(python3 not found: no side-by-side numbers with JAX)");
            return None;
        };
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut ready = String::new();
        if stdout.read_line(&mut ready).is_err() || !ready.starts_with("ready") {
            println!("(JAX not installed: no side-by-side numbers)");
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        Some(Jax { process: RefCell::new((child, stdout)) })
    }

    /// JAX's median seconds per call of its function `name` over `runs` timed calls.
    pub fn median(&self, name: &str, runs: usize) -> f64 {
        let (child, stdout) = &mut *self.process.borrow_mut();
        let stdin = child.stdin.as_mut().expect("piped stdin");
        writeln!(stdin, "{name} {runs}").expect("the JAX side of the bench exited");
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the JAX side of the bench exited");
        let seconds = line.strip_prefix(name).and_then(|rest| rest.trim().parse().ok());
        seconds.unwrap_or_else(|| panic!("the JAX side answered {line:?} to {name:?}"))
    }
}

impl Drop for Jax {
    fn drop(&mut self) {
        let (child, _) = &mut *self.process.borrow_mut();
        drop(child.stdin.take()); // end of input: the script exits
        let _ = child.wait();
    }
}

/// Quantities measured in alternation, one after the other in each of a number of rounds.
///
/// This machine's speed drifts by up to 2x over minutes (and the FMA peak and copy rate with
/// it), so a ratio of two medians taken minutes apart says little. A ratio taken within each
/// round compares measurements seconds apart; its median over the rounds is what the
/// summaries print.
#[derive(Default)]
pub struct Rounds<'a> {
    probes: Vec<(String, Box<dyn FnMut() -> f64 + 'a>)>,
}

impl<'a> Rounds<'a> {
    /// Adds a quantity measured once per round by `measure` (seconds, or any rate).
    pub fn probe(mut self, name: &str, measure: impl FnMut() -> f64 + 'a) -> Self {
        self.probes.push((name.to_string(), Box::new(measure)));
        self
    }

    /// Adds the median of `runs` calls of `f`, in seconds per call.
    pub fn time(self, name: &str, runs: usize, mut f: impl FnMut() + 'a) -> Self {
        self.probe(name, move || median_time(runs, &mut f).as_secs_f64())
    }

    /// Adds JAX's function `name` (the median of `runs` calls) when JAX runs beside us.
    pub fn jax(self, jax: Option<&'a Jax>, name: &str, runs: usize) -> Self {
        match jax {
            Some(jax) => {
                let owned = name.to_string();
                self.probe(name, move || jax.median(&owned, runs))
            }
            None => self,
        }
    }

    /// Measures every quantity once per round, `rounds` times over.
    pub fn run(mut self, rounds: usize) -> Samples {
        let mut values = vec![Vec::with_capacity(rounds); self.probes.len()];
        for _ in 0..rounds {
            for ((_, measure), samples) in self.probes.iter_mut().zip(&mut values) {
                samples.push(measure());
            }
        }
        let names = self.probes.into_iter().map(|(name, _)| name).collect();
        Samples { names, values }
    }
}

/// What [`Rounds::run`] measured: one value per quantity per round.
pub struct Samples {
    names: Vec<String>,
    values: Vec<Vec<f64>>,
}

impl Samples {
    /// Whether `name` was measured (JAX's quantities are absent without JAX).
    pub fn has(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }

    fn values(&self, name: &str) -> &[f64] {
        let index = self.names.iter().position(|n| n == name);
        &self.values[index.unwrap_or_else(|| panic!("{name} was not measured"))]
    }

    /// The values of `name` over the rounds.
    pub fn spread(&self, name: &str) -> Spread {
        Spread::of(self.values(name).to_vec())
    }

    /// The median over the rounds of `name`.
    pub fn median(&self, name: &str) -> f64 {
        self.spread(name).median
    }

    /// `f(a, b)` of the two quantities' values in each round, spread over the rounds.
    pub fn per_round(&self, a: &str, b: &str, f: impl Fn(f64, f64) -> f64) -> Spread {
        Spread::of(self.values(a).iter().zip(self.values(b)).map(|(x, y)| f(*x, *y)).collect())
    }

    /// `a / b` in each round, spread over the rounds.
    pub fn ratio(&self, a: &str, b: &str) -> Spread {
        self.per_round(a, b, |x, y| x / y)
    }
}

/// The median, lowest and highest of per-round values.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
    pub rounds: usize,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        let rounds = values.len();
        Spread { median: values[rounds / 2], low: values[0], high: values[rounds - 1], rounds }
    }

    /// `median (low to high over N rounds)` with `digits` decimals, each value times `scale`.
    pub fn show(&self, scale: f64, digits: usize) -> String {
        let [m, l, h] = [self.median, self.low, self.high].map(|v| v * scale);
        format!("{m:.digits$} ({l:.digits$} to {h:.digits$} over {} rounds)", self.rounds)
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.show(1.0, 2))
    }
}

/// Prints JAX's median for `jax_name` beside the per-round ratio of `ours` to it, when JAX ran.
pub fn report_against_jax(samples: &Samples, jax_name: &str, ours: &str) {
    if samples.has(jax_name) {
        let ratio = samples.ratio(ours, jax_name);
        report(jax_name, samples.median(jax_name), &format!("rjax / JAX = {ratio}"));
    }
}

/// Prints one line of a summary table.
pub fn report(name: &str, seconds: f64, note: &str) {
    println!("{name:<44} {:>10.3} ms   {note}", seconds * 1e3);
}
