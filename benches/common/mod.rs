//! Shared pieces of the benchmarks: robust timing, the machine's limits, and JAX run side by
//! side when it is installed.
#![allow(dead_code)]

pub mod mlp;
pub mod peak;

use std::process::Command;
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

/// Copy bandwidth in GB/s (bytes read + bytes written per second) over `bytes`-sized buffers,
/// with all cores copying disjoint chunks: the memory-bound limit of an elementwise op.
pub fn copy_bandwidth_gbs(bytes: usize) -> f64 {
    let n = bytes / 4;
    let src = vec![1.0f32; n];
    let mut dst = vec![0.0f32; n];
    let chunk = n.div_ceil(rayon::current_num_threads() * 4);
    let t = median_time(7, || {
        dst.par_chunks_mut(chunk)
            .zip(src.par_chunks(chunk))
            .for_each(|(d, s)| d.copy_from_slice(s));
    });
    std::hint::black_box(&dst);
    2.0 * bytes as f64 / t.as_secs_f64() / 1e9
}

/// Runs `benches/jax/bench.py WORKLOAD` and returns JAX's seconds per call for each line it
/// prints as `name seconds`, or `None` when JAX is not installed.
pub fn jax_times(workload: &str) -> Option<Vec<(String, f64)>> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/jax/bench.py");
    let out = Command::new("python3").arg(script).arg(workload).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let rows: Vec<(String, f64)> = text
        .lines()
        .filter_map(|l| {
            let (name, secs) = l.split_once(' ')?;
            Some((name.to_string(), secs.trim().parse().ok()?))
        })
        .collect();
    Some(rows)
}

/// Prints one summary line per JAX timing of `workload`, with `note(name, seconds)` beside it,
/// or says that JAX is not installed.
pub fn report_jax(workload: &str, note: impl Fn(&str, f64) -> String) {
    match jax_times(workload) {
        Some(rows) => {
            for (name, secs) in rows {
                report(&name, secs, &note(&name, secs));
            }
        }
        None => println!("(JAX not installed: no side-by-side numbers)"),
    }
}

/// Prints one line of a summary table.
pub fn report(name: &str, seconds: f64, note: &str) {
    println!("{name:<44} {:>10.3} ms   {note}", seconds * 1e3);
}
