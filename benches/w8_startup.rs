//! W8: process start to the first W3 result. The bench runs itself again as a child process
//! that computes one jitted `grad` step of the W3 MLP and prints a number, and times the
//! child from spawn to exit; beside it the same for a Python process that imports JAX and
//! runs `jit(grad(loss))` once (`benches/jax/bench.py w8_child`).
//!
//! The summary also counts the traces of a 1000-step training loop whose jitted step takes
//! the step number (a traced `u32`, as a Python int under `jax.jit`): it must be 1.
//!
//! `cargo bench --bench w8_startup`

mod common;

use std::process::Command;
use std::time::Instant;

use common::mlp::{inputs, loss};
use rjax::prelude::*;

#[jit]
#[grad]
fn grad_step(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Vec<(Array, Array)> {
    loss(params, inputs, targets)
}

/// One SGD step with a learning rate decayed by the step number.
#[jit]
fn counted_step(w: &Array, x: &Array, y: &Array, step: u32) -> Array {
    let lr = 0.1 / (step * 0.01 + 1.0);
    w - sq_loss_grad(w, x, y) * lr
}

#[grad]
fn sq_loss_grad(w: &Array, x: &Array, y: &Array) -> Array {
    (x.dot(w) - y).square().mean()
}

/// Traces of `counted_step` over a 1000-step loop.
fn step_counter_traces() -> u64 {
    let key = random::key(0);
    let x = random::normal(&key, [64, 8]);
    let y = x.sum_axes(1, true);
    let mut w = jnp::zeros([8, 1]);
    for step in 0..1000u32 {
        w = counted_step(&w, &x, &y, step);
    }
    counted_step::cache_info().traces
}

/// The child: one step, one number out.
fn first_result() {
    let (params, x, y) = inputs();
    let grads = grad_step(&params, &x, &y);
    println!("{}", grads[0].0.sum().item::<f32>().expect("a scalar"));
}

/// The median of `runs` spawn-to-exit times of `cmd`, in seconds.
fn spawn_time(runs: usize, mut cmd: impl FnMut() -> Command) -> Option<f64> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let out = cmd().output().ok()?;
        if !out.status.success() {
            return None;
        }
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Some(times[runs / 2])
}

fn main() {
    if std::env::var_os("RJAX_W8_CHILD").is_some() {
        first_result();
        return;
    }
    let me = std::env::current_exe().expect("the bench knows its own path");
    let rjax = spawn_time(7, || {
        let mut c = Command::new(&me);
        c.env("RJAX_W8_CHILD", "1");
        c
    })
    .expect("the child run succeeds");
    println!("\nW8 summary: process start to the first W3 result");
    common::report("rjax: spawn, one jit(grad) step, exit", rjax, "");
    let traces = step_counter_traces();
    println!("  traces of a 1000-step loop with a step counter: {traces} (target 1)");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/jax/bench.py");
    match spawn_time(5, || {
        let mut c = Command::new("python3");
        c.arg(script).arg("w8_child");
        c
    }) {
        Some(jax) => common::report(
            "jax: spawn, import, one jit(grad) step, exit",
            jax,
            &format!("rjax/jax = {:.3} (target <= 0.05)", rjax / jax),
        ),
        None => println!("(JAX not installed: no side-by-side numbers)"),
    }
}
