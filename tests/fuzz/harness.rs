//! Running the cases in child processes, so that an abort, a crash or a hang is a reported
//! failure rather than the end of the test run.
//!
//! The parent re-executes its own test binary with `--exact fuzz` and `RJAX_FUZZ_CHILD` set to
//! `seed start end`. The child draws case `i` from a proptest runner seeded by `(seed, i)`, runs
//! it under `catch_unwind`, and reports on stdout, one line per event:
//!
//! ```text
//! @@fuzz start <i> <op>\t<case>      before case i runs
//! @@fuzz alive <i> <op>\t<case>      before each shrinking attempt
//! @@fuzz pass <i> | skip <i> <why> | fail <i> <signature>\t<detail>\t<minimal case>
//! @@fuzz end
//! ```
//!
//! The parent reads the lines under a watchdog. If the child exits before `end`, the case it
//! had started crashed it (the exit status and the tail of its stderr say how); if no line comes
//! for the timeout, the child is killed and the case reported as a hang. Either way a new child
//! takes over from the next case.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::check::{self, Failure, Verdict};
use crate::ops;

/// Cases per run unless `RJAX_FUZZ_CASES` says otherwise: a case takes about 4 ms of CPU in
/// a debug build, so this is a minute and a half to two minutes on two cores.
const DEFAULT_CASES: usize = 50_000;
/// The seed unless `RJAX_FUZZ_SEED` says otherwise, so that CI runs are reproducible.
const DEFAULT_SEED: u64 = 0x7a11_5eed;
/// Cases per child process: enough that starting processes costs little, few enough that
/// the children spread over the jobs. (A crash loses nothing: a new child resumes after the
/// crashing case.)
const CASES_PER_CHILD: usize = 500;
/// Shrinking attempts per failing case.
const SHRINK_STEPS: usize = 48;
/// Writable memory a child may map (`RLIMIT_DATA`, which unlike the address-space limit does
/// not count the reservations of allocator arenas and thread stacks, so it does not depend on
/// the number of cores): far above what any case needs, low enough that a bug which
/// allocates without bound fails at once instead of exhausting the machine.
const CHILD_MEMORY: u64 = 4 << 30;

const MARK: &str = "@@fuzz ";

pub struct Settings {
    pub seed: u64,
    pub cases: std::ops::Range<usize>,
    pub jobs: usize,
    pub timeout: Duration,
}

impl Settings {
    pub fn from_env() -> Settings {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let parse = |name: &str, v: String| -> u64 {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => v.parse(),
            };
            parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number"))
        };
        let seed = var("RJAX_FUZZ_SEED").map_or(DEFAULT_SEED, |v| parse("RJAX_FUZZ_SEED", v));
        let count =
            var("RJAX_FUZZ_CASES").map_or(DEFAULT_CASES, |v| parse("RJAX_FUZZ_CASES", v) as usize);
        let cases = match var("RJAX_FUZZ_ONLY") {
            Some(v) => {
                let i = parse("RJAX_FUZZ_ONLY", v) as usize;
                i..i + 1
            }
            None => 0..count,
        };
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let jobs =
            var("RJAX_FUZZ_JOBS").map_or(cores.min(4), |v| parse("RJAX_FUZZ_JOBS", v) as usize);
        let timeout = Duration::from_secs(
            var("RJAX_FUZZ_TIMEOUT").map_or(30, |v| parse("RJAX_FUZZ_TIMEOUT", v)),
        );
        Settings { seed, cases, jobs: jobs.max(1), timeout }
    }
}

// --- The child ---------------------------------------------------------------------------------

/// The proptest runner case `index` is drawn with: its RNG seeded from `(seed, index)` alone,
/// so any case can be drawn again on its own.
fn runner(seed: u64, index: usize) -> TestRunner {
    let mut state = seed ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_mut(8) {
        // SplitMix64.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        chunk.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// One line with tabs and newlines escaped.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('\n', "\\n").replace('\t', "\\t")
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => break,
        }
    }
    out
}

fn emit(line: String) {
    // Stdout is line-buffered: each event reaches the parent before the next case starts.
    println!("{MARK}{line}");
}

/// Keeps a runaway allocation from taking the machine down with the child, and keeps
/// aborting children from writing core files.
#[cfg(unix)]
fn limit_resources() {
    let set = |resource, limit: u64| {
        let lim = libc::rlimit { rlim_cur: limit as libc::rlim_t, rlim_max: limit as libc::rlim_t };
        // SAFETY: setrlimit only reads the struct passed by reference.
        unsafe { libc::setrlimit(resource, &lim) };
    };
    set(libc::RLIMIT_DATA, CHILD_MEMORY);
    set(libc::RLIMIT_CORE, 0);
}

#[cfg(not(unix))]
fn limit_resources() {}

/// Runs cases `start..end` of `seed`: the child's side.
pub fn child(spec: &str) {
    let parts: Vec<u64> = spec.split_whitespace().map(|p| p.parse().expect("a number")).collect();
    let [seed, start, end] = parts[..] else {
        panic!("RJAX_FUZZ_CHILD={spec}: want `seed start end`")
    };
    limit_resources();
    // Panics inside a case are results: the checks read their messages from the payload.
    // Others (on threads a case started, or in the harness) are printed, so that a child
    // which dies of one says why.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !check::catching() {
            default_hook(info);
        }
    }));
    // Every case traces afresh (its op's key is a static argument): keep few plans around.
    check::twins::jitted::set_cache_capacity(8);
    check::twins::grad_jitted::set_cache_capacity(8);
    let strategy = ops::case();
    let mut shrink_budget = Duration::from_secs(30);
    for i in start as usize..end as usize {
        let mut runner = runner(seed, i);
        let mut tree = strategy.new_tree(&mut runner).expect("cases can be drawn");
        let case = tree.current();
        // Even cases run with x64 on (their 64-bit dtypes stay 64-bit), odd ones in JAX's
        // default 32-bit mode, where internal 64-bit arithmetic must keep its dtypes.
        rjax::config::enable_x64(i % 2 == 0);
        let name = case.op.names()[0];
        emit(format!("start {i} {name}\t{}", escape(&format!("{case:?}"))));
        match run_case(&case) {
            Verdict::Pass => emit(format!("pass {i}")),
            Verdict::Skip(why) => emit(format!("skip {i} {}", escape(&why))),
            Verdict::Fail(failure) => {
                let began = Instant::now();
                let (smallest, failure) = shrink(i, &mut tree, case, failure, shrink_budget);
                shrink_budget = shrink_budget.saturating_sub(began.elapsed());
                emit(format!(
                    "fail {i} {}\t{}\t{}",
                    escape(&failure.signature),
                    escape(&failure.detail),
                    escape(&format!("{smallest:?}"))
                ));
            }
        }
    }
    emit("end".to_string());
}

/// [`check::run_case`], with a panic of the checks themselves (outside the calls they make)
/// reported as a failure of the harness rather than ending the child.
fn run_case(case: &ops::Case) -> Verdict {
    check::catch(|| check::run_case(case)).unwrap_or_else(|message| {
        let signature = format!("fuzz harness: panics: {}", check::gist(&message));
        Verdict::Fail(Failure { signature, detail: message })
    })
}

/// Proptest's shrinking, by hand (the cases run outside `proptest!`): simplify while the case
/// still fails the same way, step back when it passes. Stops after [`SHRINK_STEPS`] attempts
/// or when the child's shrinking time is spent.
fn shrink(
    index: usize,
    tree: &mut impl ValueTree<Value = ops::Case>,
    case: ops::Case,
    failure: Failure,
    budget: Duration,
) -> (ops::Case, Failure) {
    let began = Instant::now();
    let (mut best, mut best_failure) = (case, failure);
    let mut still_fails = true;
    for _ in 0..SHRINK_STEPS {
        if began.elapsed() > budget {
            break;
        }
        let moved = if still_fails { tree.simplify() } else { tree.complicate() };
        if !moved {
            break;
        }
        let attempt = tree.current();
        let name = attempt.op.names()[0];
        emit(format!("alive {index} {name}\t{}", escape(&format!("{attempt:?}"))));
        still_fails = match run_case(&attempt) {
            Verdict::Fail(f) if f.signature == best_failure.signature => {
                (best, best_failure) = (attempt, f);
                true
            }
            _ => false,
        };
    }
    (best, best_failure)
}

// --- The parent --------------------------------------------------------------------------------

/// A failure as the parent reports it.
struct Report {
    index: usize,
    failure: Failure,
    case: String,
}

#[derive(Default)]
struct Summary {
    cases: usize,
    processes: usize,
    skipped: usize,
    /// Failures grouped by signature.
    failures: BTreeMap<String, Vec<Report>>,
}

enum Event {
    Line(String),
    Closed,
}

/// Runs every case in child processes and returns the summary line and the failures.
pub fn parent(settings: &Settings) -> (String, Vec<String>) {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut chunks: Vec<std::ops::Range<usize>> = Vec::new();
    let mut at = settings.cases.start;
    while at < settings.cases.end {
        let end = (at + CASES_PER_CHILD).min(settings.cases.end);
        chunks.push(at..end);
        at = end;
    }
    let queue = Mutex::new(chunks.into_iter());
    let summary = Mutex::new(Summary::default());
    std::thread::scope(|s| {
        for _ in 0..settings.jobs {
            s.spawn(|| loop {
                let Some(chunk) = queue.lock().unwrap().next() else { break };
                run_chunk(&exe, settings, chunk, &summary);
            });
        }
    });
    let summary = summary.into_inner().unwrap();
    let failed: usize = summary.failures.values().map(Vec::len).sum();
    let mut line = format!(
        "fuzz: {} cases in {} processes, {} failures",
        summary.cases, summary.processes, failed
    );
    if summary.skipped > 0 {
        line += &format!(" ({} skipped: valid results too large to make here)", summary.skipped);
    }
    let reports = summary
        .failures
        .iter()
        .map(|(signature, reports)| {
            let first = reports.iter().min_by_key(|r| r.index).expect("a failure");
            let indices: Vec<String> = reports.iter().take(8).map(|r| r.index.to_string()).collect();
            format!(
                "[{}x] {signature}\n    cases {}{} (rerun one with RJAX_FUZZ_SEED={:#x} RJAX_FUZZ_ONLY=<case>)\n    \
                 case {}: {}\n    {}",
                reports.len(),
                indices.join(", "),
                if reports.len() > 8 { ", ..." } else { "" },
                settings.seed,
                first.index,
                first.case,
                first.failure.detail.replace('\n', "\n    "),
            )
        })
        .collect();
    (line, reports)
}

/// Runs `chunk`, starting a new child after each crash or hang.
fn run_chunk(
    exe: &std::path::Path,
    settings: &Settings,
    chunk: std::ops::Range<usize>,
    summary: &Mutex<Summary>,
) {
    let mut next = chunk.start;
    while next < chunk.end {
        summary.lock().unwrap().processes += 1;
        next = run_child(exe, settings, next..chunk.end, summary);
    }
}

/// Runs one child on `range`; returns where the next child must start.
fn run_child(
    exe: &std::path::Path,
    settings: &Settings,
    range: std::ops::Range<usize>,
    summary: &Mutex<Summary>,
) -> usize {
    let mut child = Command::new(exe)
        .args(["--exact", "fuzz", "--nocapture", "--test-threads=1"])
        .env("RJAX_FUZZ_CHILD", format!("{} {} {}", settings.seed, range.start, range.end))
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test binary starts again as a child");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(at) = line.find(MARK) {
                if tx.send(Event::Line(line[at + MARK.len()..].to_string())).is_err() {
                    break;
                }
            }
        }
        let _ = tx.send(Event::Closed);
    });
    let mut stderr = child.stderr.take().expect("piped stderr");
    let stderr_reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    });

    // The case running now (index, op name, description), from the last start/alive line,
    // and the next case to draw once it is done.
    let mut current: Option<(usize, String, String)> = None;
    let mut next = range.start;
    let mut hung = false;
    let mut finished = false;
    loop {
        match rx.recv_timeout(settings.timeout) {
            Ok(Event::Line(line)) => {
                let (kind, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
                let (index, rest) = rest.split_once(' ').unwrap_or((rest, ""));
                let index: usize = index.parse().unwrap_or(0);
                let mut s = summary.lock().unwrap();
                match kind {
                    "start" | "alive" => {
                        let (name, case) = rest.split_once('\t').unwrap_or((rest, ""));
                        let case = unescape(case);
                        let case = if kind == "alive" {
                            format!("{case} (while shrinking)")
                        } else {
                            case
                        };
                        current = Some((index, name.to_string(), case));
                    }
                    "pass" => {
                        s.cases += 1;
                        (current, next) = (None, index + 1);
                    }
                    "skip" => {
                        s.cases += 1;
                        s.skipped += 1;
                        (current, next) = (None, index + 1);
                    }
                    "fail" => {
                        let mut fields = rest.split('\t').map(unescape);
                        let signature = fields.next().unwrap_or_default();
                        let detail = fields.next().unwrap_or_default();
                        let case = fields.next().unwrap_or_default();
                        s.cases += 1;
                        let report = Report {
                            index,
                            failure: Failure { signature: signature.clone(), detail },
                            case,
                        };
                        s.failures.entry(signature).or_default().push(report);
                        (current, next) = (None, index + 1);
                    }
                    "end" => finished = true,
                    _ => {}
                }
            }
            Ok(Event::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                hung = true;
                let _ = child.kill();
                break;
            }
        }
    }
    let status = child.wait().expect("the child is waited for");
    let stderr = stderr_reader.join().unwrap_or_default();
    if finished && status.success() {
        return range.end;
    }
    let (index, name, case) = match current {
        Some(c) => c,
        // Died between cases: while drawing the next one, or in the harness itself.
        None => (next, "fuzz harness".to_string(), "(drawing the case)".to_string()),
    };
    let tail: String = {
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(6)..].join("\n")
    };
    let how = if hung {
        format!("hangs: no progress for {} s, killed", settings.timeout.as_secs())
    } else {
        describe_exit(&status)
    };
    let first_line = tail.lines().rev().find(|l| !l.starts_with("note:")).unwrap_or("");
    let signature = format!("{name}: {how}: {}", check::gist(first_line));
    let detail = format!("{how}\n  stderr: {}", tail.replace('\n', "\n          "));
    let mut s = summary.lock().unwrap();
    s.cases += 1;
    s.failures.entry(signature.clone()).or_default().push(Report {
        index,
        failure: Failure { signature, detail },
        case,
    });
    index + 1
}

#[cfg(unix)]
fn describe_exit(status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(libc::SIGABRT) => "aborts (SIGABRT)".to_string(),
        Some(libc::SIGSEGV) => "crashes (SIGSEGV)".to_string(),
        Some(libc::SIGBUS) => "crashes (SIGBUS)".to_string(),
        Some(libc::SIGILL) => "crashes (SIGILL)".to_string(),
        Some(libc::SIGKILL) => "is killed (SIGKILL, out of memory?)".to_string(),
        Some(sig) => format!("dies by signal {sig}"),
        None => format!("exits with {status} before finishing"),
    }
}

#[cfg(not(unix))]
fn describe_exit(status: &std::process::ExitStatus) -> String {
    format!("exits with {status} before finishing")
}
