//! Memory of a long jitted training loop: 10 000 SGD steps of the W3 MLP, each one jitted
//! `value_and_grad` plus a jitted update, printing the resident set (now and peak) at steps
//! 100, 1000 and 10 000. Steady-state steps reuse their buffers, so the numbers stay flat.
//!
//! `cargo bench --bench w3_memory` (about half a minute)

mod common;

use common::mlp::{inputs, loss};
use rjax::prelude::*;

type Params = Vec<(Array, Array)>;

#[jit]
#[value_and_grad]
fn loss_and_grad(
    params: &[(Array, Array)],
    inputs: &Array,
    targets: &Array,
) -> (Array, Vec<(Array, Array)>) {
    loss(params, inputs, targets)
}

#[jit]
fn sgd(params: &[(Array, Array)], grads: &[(Array, Array)]) -> Params {
    params.iter().zip(grads).map(|((w, b), (gw, gb))| (w - gw * 1e-4, b - gb * 1e-4)).collect()
}

/// `VmRSS` and `VmHWM` (current and peak resident memory) in MiB, from `/proc/self/status`.
fn rss_mib() -> Option<(f64, f64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<f64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib / 1024.0)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

fn main() {
    let (mut params, x, y) = inputs();
    let steps = 10_000;
    let start = std::time::Instant::now();
    println!("\nW3 training-loop memory (jit(value_and_grad) + jit(sgd), batch 128)");
    for step in 1..=steps {
        let (value, grads) = loss_and_grad(&params, &x, &y);
        params = sgd(&params, &grads);
        if [1, 100, 1000, steps].contains(&step) {
            let loss = value.item::<f32>().expect("a scalar loss");
            match rss_mib() {
                Some((now, peak)) => println!(
                    "step {step:>6}: loss {loss:>10.4}  rss {now:>7.1} MiB  peak rss {peak:>7.1} MiB"
                ),
                None => println!("step {step:>6}: loss {loss:>10.4}  (no /proc/self/status here)"),
            }
        }
    }
    let per_step = start.elapsed().as_secs_f64() / steps as f64;
    println!(
        "{:.3} ms per step; plans traced: {}",
        per_step * 1e3,
        loss_and_grad::cache_info().traces
    );
}
