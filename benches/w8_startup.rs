//! W8: process start to the first W3 result. The bench runs itself again as a child process
//! that computes one jitted `grad` step of the W3 MLP and prints a number, and times the
//! child from spawn to exit; beside it the same for a Python process that imports JAX and
//! runs `jit(grad(loss))` once (`benches/jax/bench.py w8_child`).
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
