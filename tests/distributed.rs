//! `pmap` across processes (feature `distributed`): this program starts itself under
//! `mpirun` with 2 and 4 processes of 2 virtual devices each, and each child checks every
//! collective and the gradients (of a mapped and of a replicated input) against the same function run with `vmap` over the whole axis
//! in one process. Then the failures: a process that runs another program, one that panics,
//! one that leaves, and one that is killed end the others with an error naming it, within a
//! bounded time.
//!
//! Needs `mpirun` (Open MPI or MPICH) on the PATH; `RJAX_DISTRIBUTED_CHILD` selects a
//! child's scenario.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rjax::distributed;
use rjax::prelude::*;

const LOCAL: usize = 2;
const ROW: usize = 3;
const CHILD: &str = "RJAX_DISTRIBUTED_CHILD";

fn main() {
    match std::env::var(CHILD) {
        Ok(scenario) => child(&scenario),
        Err(_) => parent(),
    }
}

// ---- the parent: launches, and checks what the children report ----

/// A child run's exit, its output (every rank's, tagged), and how long it took.
struct Run {
    success: bool,
    output: String,
    took: Duration,
}

fn launch(processes: usize, scenario: &str, timeout_s: &str) -> Run {
    launch_program(
        &std::env::current_exe().expect("the test's own path"),
        processes,
        scenario,
        timeout_s,
    )
}

fn launch_program(exe: &std::path::Path, processes: usize, scenario: &str, timeout_s: &str) -> Run {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe", "--tag-output", "-np"])
        .arg(processes.to_string())
        .args(["--mca", "btl_vader_single_copy_mechanism", "none"])
        .args(["-x", CHILD, "-x", "RJAX_CPU_DEVICES", "-x", "RJAX_DISTRIBUTED_TIMEOUT"])
        .arg(exe)
        .env(CHILD, scenario)
        .env("RJAX_CPU_DEVICES", LOCAL.to_string())
        .env("RJAX_DISTRIBUTED_TIMEOUT", timeout_s)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("mpirun must be installed (Open MPI or MPICH)");
    let limit = Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for mpirun") {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            panic!("{scenario} on {processes} processes: still running after {limit:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut output = String::new();
    child.stdout.take().unwrap().read_to_string(&mut output).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut output).unwrap();
    Run { success: status.success(), output, took: start.elapsed() }
}

fn parent() {
    for processes in [2, 4] {
        let run = launch(processes, "collectives", "60");
        assert!(run.success, "collectives on {processes} processes failed:\n{}", run.output);
        for rank in 0..processes {
            let line = format!("rank {rank} of {processes}: collectives and gradient agree");
            assert!(run.output.contains(&line), "missing `{line}` in:\n{}", run.output);
        }
        println!("collectives and gradient on {processes} processes: ok ({:.1?})", run.took);
    }
    expect_failure("mismatch", "60", &["different programs", "psum over `i`"]);
    expect_failure("panic", "60", &["[1,0]", "process 1 failed", "rank one broke"]);
    expect_failure("leave", "3", &["[1,0]", "process 1 did not reach", "within 3.0 s"]);
    let killed = launch(2, "killed", "5");
    assert!(!killed.success, "a killed process must fail the job:\n{}", killed.output);
    assert!(killed.took < Duration::from_secs(60), "took {:?}", killed.took);
    println!("killed: the job ended in {:.1?}", killed.took);
    example_checksum();
    across_network_namespaces();
    println!("distributed: all scenarios passed");
}

/// The data-parallel example on 2 processes: its parameters' checksum matches training in
/// one process.
fn example_checksum() {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let example = profile_dir.join("examples").join("multihost_data_parallel");
    assert!(
        example.exists(),
        "{} is missing: build it first (cargo build --features distributed --example \
         multihost_data_parallel)",
        example.display()
    );
    let run = launch_program(&example, 2, "example", "120");
    assert!(run.success, "the example failed:\n{}", run.output);
    let difference: f64 = run
        .output
        .lines()
        .find_map(|l| l.split("checksum difference ").nth(1))
        .unwrap_or_else(|| panic!("no checksum in:\n{}", run.output))
        .trim()
        .parse()
        .unwrap();
    assert!(difference < 1e-5, "checksums differ by {difference}:\n{}", run.output);
    println!(
        "example: checksum matches single-process training ({difference:.1e}, {:.1?})",
        run.took
    );
}

/// Two network namespaces joined by a veth pair, one rank in each: the collectives cross a
/// real network interface (MPI over TCP, no shared memory). `mpirun` runs in the first and
/// starts the second's rank through a launcher script that enters the second namespace.
/// Needs root and `ip netns`; without them it says so and checks nothing.
fn across_network_namespaces() {
    let Some(net) = Namespaces::create() else {
        println!("network namespaces: not checked (creating them needs root and `ip netns`)");
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &net.names[0], "mpirun", "--allow-run-as-root", "--tag-output"])
        .args(["-np", "2", "--host", "10.77.0.1,10.77.0.2"])
        .arg("--mca")
        .arg("plm_rsh_agent")
        .arg(&net.agent)
        .args(["--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "10.77.0.0/24"])
        .args(["--mca", "oob_tcp_if_include", "10.77.0.0/24"])
        .args(["-x", CHILD, "-x", "RJAX_CPU_DEVICES", "-x", "RJAX_DISTRIBUTED_TIMEOUT"])
        .arg(&exe)
        .env(CHILD, "collectives")
        .env("RJAX_CPU_DEVICES", LOCAL.to_string())
        .env("RJAX_DISTRIBUTED_TIMEOUT", "60");
    let start = Instant::now();
    let out = cmd.output().expect("ip netns exec .. mpirun");
    let output =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "collectives across namespaces failed:\n{output}");
    for rank in 0..2 {
        let line = format!("rank {rank} of 2: collectives and gradient agree");
        assert!(output.contains(&line), "missing `{line}` in:\n{output}");
    }
    println!("collectives across two network namespaces (veth, TCP): ok ({:.1?})", start.elapsed());
}

/// Two network namespaces (10.77.0.1 and .2 on a veth pair) and the launcher script that
/// runs a command in the second; removed on drop.
struct Namespaces {
    names: [String; 2],
    dir: std::path::PathBuf,
    agent: std::path::PathBuf,
}

impl Namespaces {
    fn create() -> Option<Namespaces> {
        let id = std::process::id();
        let names = [format!("rjax{id}a"), format!("rjax{id}b")];
        let veth = [format!("rjx{id}a"), format!("rjx{id}b")];
        let dir = std::env::temp_dir().join(format!("rjax-netns-{id}"));
        let agent = dir.join("enter-second-namespace");
        let net = Namespaces { names: names.clone(), dir, agent };
        if !ip(&["netns", "add", &names[0]]) {
            return None;
        }
        let made = ip(&["netns", "add", &names[1]])
            && ip(&["link", "add", &veth[0], "type", "veth", "peer", "name", &veth[1]])
            && (0..2).all(|k| {
                let address = format!("10.77.0.{}/24", k + 1);
                ip(&["link", "set", &veth[k], "netns", &names[k]])
                    && ip(&["-n", &names[k], "addr", "add", &address, "dev", &veth[k]])
                    && ip(&["-n", &names[k], "link", "set", &veth[k], "up"])
                    && ip(&["-n", &names[k], "link", "set", "lo", "up"])
            });
        assert!(made, "`ip netns add` works here, but setting up the veth pair failed");
        // mpirun calls it as `agent HOST COMMAND..` for the one remote host.
        let script = format!("#!/bin/sh\nshift\nexec ip netns exec {} sh -c \"$*\"\n", names[1]);
        std::fs::create_dir_all(&net.dir).unwrap();
        std::fs::write(&net.agent, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&net.agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        Some(net)
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for name in &self.names {
            ip(&["netns", "del", name]);
        }
        std::fs::remove_dir_all(&self.dir).ok();
    }
}

/// Runs `ip ARGS`, quietly; whether it succeeded.
fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `scenario` on 2 processes; rank 0 must report a failure containing each of `wanted`.
fn expect_failure(scenario: &str, timeout_s: &str, wanted: &[&str]) {
    let run = launch(2, scenario, timeout_s);
    let report: Vec<&str> = run.output.lines().filter(|l| l.contains("CAUGHT")).collect();
    let from_rank0 = report
        .iter()
        .find(|l| l.starts_with("[1,0]"))
        .unwrap_or_else(|| panic!("{scenario}: rank 0 reported no failure:\n{}", run.output));
    for w in wanted {
        assert!(from_rank0.contains(w), "{scenario}: `{w}` not in {from_rank0:?}");
    }
    assert!(run.took < Duration::from_secs(60), "{scenario} took {:?}", run.took);
    println!("{scenario}: rank 0 failed with the cause ({:.1?})", run.took);
}

// ---- the children ----

static SIZE: OnceLock<usize> = OnceLock::new();
static RANK: OnceLock<usize> = OnceLock::new();

fn axis_size() -> usize {
    *SIZE.get().expect("set by the child")
}

/// 1, 2, .., n: scales that make each of a member's `n` rows different.
fn row_weights() -> Vec<f32> {
    (1..=axis_size()).map(|k| k as f32).collect()
}

/// Every collective once: what the global axis `i` gives one member.
#[traceable]
fn collectives(x: &Array) -> Vec<Array> {
    let n = axis_size();
    let ring: Vec<(usize, usize)> = (0..n).map(|j| (j, (j + 1) % n)).collect();
    // Each member's `n` rows, different per member, for psum_scatter.
    let rows = jnp::stack(&row_weights().iter().map(|w| x * *w).collect::<Vec<_>>(), 0);
    vec![
        lax::psum(x, "i"),
        lax::pmean(x, "i"),
        lax::pmax(x, "i"),
        lax::pmin(x, "i"),
        lax::all_gather(x, "i"),
        lax::psum_scatter(&rows, "i"),
        lax::ppermute(x, "i", &ring),
        lax::axis_index("i").astype(DType::F32),
    ]
}

#[pmap(axis_name = "i")]
fn on_devices(x: &Array) -> Vec<Array> {
    collectives(x)
}

#[vmap(axis_name = "i")]
fn in_one_process(x: &Array) -> Vec<Array> {
    collectives(x)
}

/// `pmax`/`pmin` (which must propagate a NaN, as on one machine) and sums of `i32` and
/// `f16`: MPI's own sum for the one, rjax's operations inside MPI's reduction for the others.
/// (`x` has the NaN, `y` not).
#[traceable]
fn other_reductions(x: &Array, y: &Array) -> Vec<Array> {
    vec![
        lax::pmax(x, "i"),
        lax::pmin(x, "i"),
        lax::psum((y * 4.0).astype(DType::I32), "i").astype(DType::F32),
        lax::psum(y.astype(DType::F16), "i").astype(DType::F32),
    ]
}

#[pmap(axis_name = "i")]
fn other_reductions_on_devices(x: &Array, y: &Array) -> Vec<Array> {
    other_reductions(x, y)
}

#[vmap(axis_name = "i")]
fn other_reductions_in_one_process(x: &Array, y: &Array) -> Vec<Array> {
    other_reductions(x, y)
}

/// A function that fails on process 1 (when it is traced there), after the others began.
#[pmap(axis_name = "i")]
fn broken_on_rank_one(x: &Array) -> Array {
    if RANK.get() == Some(&1) {
        std::thread::sleep(Duration::from_millis(300));
        panic!("rank one broke");
    }
    lax::psum(x, "i")
}

/// A body whose gradient crosses processes: `psum`'s transpose is a `psum`.
#[traceable]
fn body(w: &Array, x: &Array) -> Array {
    let shared = lax::psum((x * w).sin(), "i");
    (shared * x).sum()
}

/// `w` mapped (each device its own copy), so its gradient is each device's share.
#[pmap(axis_name = "i")]
fn body_on_devices(w: &Array, x: &Array) -> Array {
    body(w, x)
}

/// `w` replicated (every device the same `w`): its gradient is a sum over every device of
/// every process.
#[pmap(axis_name = "i", in_axes = (None, 0))]
fn body_replicated(w: &Array, x: &Array) -> Array {
    body(w, x)
}

#[grad]
fn replicated_loss(w: &Array, x: &Array) -> Array {
    body_replicated(w, x).sum()
}

#[vmap(axis_name = "i", in_axes = (None, 0))]
fn body_in_one_process(w: &Array, x: &Array) -> Array {
    body(w, x)
}

#[pmap(axis_name = "i")]
fn summed_over_devices(x: &Array) -> Array {
    lax::psum(x, "i")
}

/// The gradient, from this process's devices' terms of the loss (see `check_collectives`).
#[grad]
fn local_loss(w: &Array, x: &Array) -> Array {
    body_on_devices(w, x).sum()
}

/// The gradient of the loss over the whole axis, in one process.
#[grad]
fn reference_loss(w: &Array, x: &Array) -> Array {
    body_in_one_process(w, x).sum()
}

fn child(scenario: &str) {
    distributed::initialize().expect("initialize");
    assert!(distributed::initialize().is_err(), "a second initialize must be an error");
    let (rank, count) = (distributed::process_index(), distributed::process_count());
    SIZE.set(count * LOCAL).unwrap();
    RANK.set(rank).unwrap();
    assert_eq!(distributed::local_devices().len(), LOCAL);
    let global = distributed::global_devices();
    assert_eq!(global.len(), count * LOCAL);
    assert_eq!(global[rank * LOCAL + 1].process_index, rank);
    let outcome = std::panic::catch_unwind(|| match scenario {
        "collectives" => check_collectives(rank, count),
        "mismatch" => {
            let len = if rank == 1 { ROW + 1 } else { ROW };
            on_devices(&jnp::ones([LOCAL, len]));
        }
        "panic" => {
            broken_on_rank_one(&jnp::ones([LOCAL, ROW]));
        }
        "leave" => {
            if rank != 1 {
                on_devices(&jnp::ones([LOCAL, ROW]));
            }
        }
        "killed" => {
            if rank == 1 {
                std::process::abort();
            }
            on_devices(&jnp::ones([LOCAL, ROW]));
        }
        other => panic!("unknown scenario {other}"),
    });
    if let Err(payload) = outcome {
        let text = payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        println!("CAUGHT {}", text.replace('\n', " "));
        std::process::exit(1);
    }
}

/// The whole axis' data: member `m` has row `m`.
fn global_data(count: usize) -> Vec<f32> {
    (0..count * LOCAL * ROW).map(|k| ((k * 7 % 11) as f32 - 5.0) * 0.25).collect()
}

fn check_collectives(rank: usize, count: usize) {
    let n = count * LOCAL;
    let all = Array::from_shape_vec([n, ROW], global_data(count));
    let mine = rank * LOCAL * ROW..(rank + 1) * LOCAL * ROW;
    let local = Array::from_shape_vec([LOCAL, ROW], global_data(count)[mine].to_vec());
    let got = on_devices(&local);
    let want = in_one_process(&all);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let w = w.to_vec::<f32>().unwrap();
        let per_member = w.len() / n;
        let rows = &w[rank * LOCAL * per_member..(rank + 1) * LOCAL * per_member];
        close(&format!("collective output {k}"), &g.to_vec::<f32>().unwrap(), rows);
    }
    check_other_reductions(rank, count);
    let w = Array::from_shape_vec([ROW], vec![0.3f32, -0.7, 1.1]);
    // Each device gets its copy's share of the gradient of the loss over every process
    // (the cotangents crossed processes through psum's transpose); the shares sum to it.
    let copies = jnp::stack(&vec![w.clone(); LOCAL], 0);
    let shares = local_loss(&copies, &local);
    let total = summed_over_devices(&shares);
    let got = total.to_vec::<f32>().unwrap();
    let want = reference_loss(&w, &all).to_vec::<f32>().unwrap();
    close("gradient", &got[..ROW], &want);
    // A replicated input's gradient is the whole one on every process: each process's sum
    // over its devices, summed over the processes.
    let got = replicated_loss(&w, &local).to_vec::<f32>().unwrap();
    close("gradient of a replicated input", &got, &want);
    println!("rank {rank} of {count}: collectives and gradient agree");
}

/// `other_reductions` with a NaN in the last process's data: the same as in one process.
fn check_other_reductions(rank: usize, count: usize) {
    let n = count * LOCAL;
    let clean = global_data(count);
    let mut data = clean.clone();
    data[(n - 1) * ROW + 1] = f32::NAN;
    let mine = rank * LOCAL * ROW..(rank + 1) * LOCAL * ROW;
    let local = |v: &[f32]| Array::from_shape_vec([LOCAL, ROW], v[mine.clone()].to_vec());
    let got = other_reductions_on_devices(&local(&data), &local(&clean));
    let whole = |v: Vec<f32>| Array::from_shape_vec([n, ROW], v);
    let want = other_reductions_in_one_process(&whole(data), &whole(clean));
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        let w = w.to_vec::<f32>().unwrap();
        let rows = &w[mine.clone()];
        let g = g.to_vec::<f32>().unwrap();
        assert!(rows.iter().any(|v| v.is_nan()) || k >= 2, "reduction {k}: no NaN in {rows:?}");
        for (i, (a, b)) in g.iter().zip(rows).enumerate() {
            let same = (a.is_nan() && b.is_nan()) || a == b;
            assert!(same, "reduction {k}[{i}]: {a} across processes, {b} in one");
        }
    }
}

fn close(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5 * (1.0 + w.abs()), "{what}[{i}]: {g} vs {w}");
    }
}
