//! A compiled plan: a simplified program partitioned into fused groups and single equations,
//! with buffer lifetimes worked out, run on the CPU kernels without re-checking shapes (the
//! shape rules ran when it was traced).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::cpu::float_mode;
use super::cpu::{alloc, fused, parts};
use super::fusion::{self, Step};
use super::schedule;
use crate::array::Array;
use crate::ir::{Atom, Program, Var};
use crate::primitives::Aval;

/// A program ready to run: each step knows its output avals and which variables die after it,
/// so intermediate buffers return to the pool as soon as their last reader is done (or are
/// overwritten in place by a fused group that reads them last).
#[derive(Debug)]
pub struct Plan {
    program: Program,
    steps: Vec<Planned>,
    /// Whether some value is large enough for its kernel to split work over the thread pool.
    parallel: bool,
}

/// How long a caller waiting for its plan on the pool yields before it sleeps.
const YIELD_WAIT: Duration = Duration::from_micros(200);

/// A plan with a value of at least this many elements runs on a pool thread (see
/// [`Plan::run`]); smaller ones never leave the caller's thread.
const POOL_MIN_ELEMENTS: usize = 1 << 15;

#[derive(Debug)]
struct Planned {
    step: Step,
    /// Output avals of a single equation.
    outputs: Vec<Aval>,
    /// Variables whose last use is this step.
    release: Vec<Var>,
    /// For a fused group, which inputs are moved in rather than cloned: those read for the
    /// last time, by one input slot, so the group may reuse their buffers for its outputs.
    move_in: Vec<bool>,
}

impl Plan {
    /// Plans `program` for execution, fusing elementwise work and running independent
    /// products of like size side by side.
    pub fn new(program: Program) -> Plan {
        Plan::with_fusion(program, true)
    }

    /// Plans `program` to run one equation at a time, in program order (what `jit` without
    /// fusion would do).
    pub fn unfused(program: Program) -> Plan {
        Plan::with_fusion(program, false)
    }

    fn with_fusion(program: Program, fuse: bool) -> Plan {
        let mut steps = fusion::partition(&program, fuse);
        if fuse {
            steps = schedule::pair_products(&program, steps);
        }
        let mut last_use = vec![usize::MAX; program.avals.len()];
        for (i, step) in steps.iter().enumerate() {
            for atom in step_inputs(&program, step) {
                if let Atom::Var(v) = atom {
                    last_use[v.index()] = i;
                }
            }
        }
        for atom in &program.outputs {
            if let Atom::Var(v) = atom {
                last_use[v.index()] = usize::MAX;
            }
        }
        let mut release: Vec<Vec<Var>> = vec![Vec::new(); steps.len()];
        for (v, &step) in last_use.iter().enumerate() {
            if step != usize::MAX {
                release[step].push(Var(v as u32));
            }
        }
        let steps = steps
            .into_iter()
            .zip(release)
            .map(|(step, release)| {
                let avals = |i: usize| {
                    program.equations[i].outputs.iter().map(|v| program.aval(*v).clone())
                };
                let outputs = match &step {
                    Step::Single(i) => avals(*i).collect(),
                    Step::Pair(pair) => pair.iter().flat_map(|&i| avals(i)).collect(),
                    Step::Fused(_) => Vec::new(),
                };
                let move_in = match &step {
                    Step::Fused(group) => group
                        .inputs
                        .iter()
                        .map(|(atom, _)| match atom {
                            Atom::Var(v) => release.contains(v) && once(group, *v),
                            Atom::Const(_) => false,
                        })
                        .collect(),
                    Step::Single(_) | Step::Pair(_) => Vec::new(),
                };
                Planned { step, outputs, release, move_in }
            })
            .collect();
        let parallel = program
            .avals
            .iter()
            .any(|aval| aval.shape.iter().product::<usize>() >= POOL_MIN_ELEMENTS);
        Plan { program, steps, parallel }
    }

    /// The program this plan runs.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// For each fused group, how many equations of the program it runs.
    pub fn fused_groups(&self) -> Vec<usize> {
        self.steps
            .iter()
            .filter_map(|s| match &s.step {
                Step::Fused(g) => Some(g.equations),
                Step::Single(_) | Step::Pair(_) => None,
            })
            .collect()
    }

    /// The pairs of equations (indices into the program) that run side by side.
    pub fn side_by_side(&self) -> Vec<[usize; 2]> {
        self.steps
            .iter()
            .filter_map(|s| match s.step {
                Step::Pair(pair) => Some(pair),
                _ => None,
            })
            .collect()
    }

    /// For each fused group, whether it has run as a loop compiled to machine code (see
    /// [`crate::exec::cpu::native`]); groups compile on their first run, where they suit it.
    pub fn compiled_groups(&self) -> Vec<bool> {
        self.steps
            .iter()
            .filter_map(|s| match &s.step {
                Step::Fused(g) => Some(g.native.compiled()),
                Step::Single(_) | Step::Pair(_) => None,
            })
            .collect()
    }

    /// Runs the plan on concrete arguments matching the program's inputs.
    ///
    /// A plan with parallel kernels runs on a thread of the rayon pool. Called from outside
    /// the pool, each parallel kernel would hand its work to the pool and sleep until it is
    /// done: one wake-up of a pool thread and one of the caller per kernel, which on a
    /// virtual machine costs more than a kernel on a 64K-element tile. On a pool thread the
    /// plan wakes nobody and waits for nobody: its kernels' halves are stolen by idle
    /// threads or run by the thread itself.
    pub fn run(&self, args: impl IntoIterator<Item = Array> + Send) -> Vec<Array> {
        let mut results = Vec::new();
        self.run_into(args, &mut results);
        results
    }

    /// Runs the plan as [`Plan::run`] does, appending its results to `results`.
    pub fn run_into(&self, args: impl IntoIterator<Item = Array> + Send, results: &mut Vec<Array>) {
        // A pmap shard stays on its own thread: its collectives and devices are in its
        // thread's context, and its peers block in collectives until it joins them. (Small
        // plans, the dispatch-bound ones, skip both thread-local checks.)
        let hop = self.parallel
            && rayon::current_thread_index().is_none()
            && !crate::device::spmd::in_shard();
        if hop {
            return self.run_on_pool(args, results);
        }
        self.run_here(args, results)
    }

    /// Runs the plan on a pool thread while this thread waits for it.
    ///
    /// The wait yields the processor in a loop for up to [`YIELD_WAIT`] before it sleeps: a
    /// thread that sleeps is slow to wake on a virtual machine (its virtual CPU halts), and a
    /// plan worth a hop often takes less time than the wake-up. (On the W5 hessian, 10-20%
    /// faster over a blocking wait, in each of eight paired runs.) Yielding rather than
    /// spinning leaves the processor to the pool threads that run the plan.
    fn run_on_pool(&self, args: impl IntoIterator<Item = Array> + Send, results: &mut Vec<Array>) {
        /// Marks the run finished, also when it unwinds (the scope then re-raises the panic).
        struct Finished<'a>(&'a AtomicBool);
        impl Drop for Finished<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Release);
            }
        }
        let finished = AtomicBool::new(false);
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| {
                let _finished = Finished(&finished);
                self.run_here(args, results);
            });
            let start = Instant::now();
            while !finished.load(Ordering::Acquire) && start.elapsed() < YIELD_WAIT {
                std::thread::yield_now();
            }
        });
    }

    fn run_here(&self, args: impl IntoIterator<Item = Array>, results: &mut Vec<Array>) {
        // The plan computes as XLA does on CPU, flushing subnormals (see `float_mode`).
        let _modes = float_mode::guard();
        let p = &self.program;
        let Scratch { mut env, mut group_inputs, mut group_results } = SCRATCH.take();
        env.resize(p.avals.len(), None);
        for (var, arg) in p.inputs.iter().zip(args) {
            env[var.index()] = Some(arg);
        }
        for planned in &self.steps {
            match &planned.step {
                Step::Single(i) => run_single(p, *i, planned, &mut env),
                Step::Pair(pair) => run_pair(p, *pair, planned, &mut env),
                Step::Fused(group) => {
                    group_inputs.extend(group.inputs.iter().zip(&planned.move_in).map(
                        |((atom, _), &moved)| match atom {
                            Atom::Var(v) if moved => {
                                env[v.index()].take().expect("defined before use")
                            }
                            _ => read(&env, atom),
                        },
                    ));
                    fused::run(group, &mut group_inputs, &mut group_results);
                    group_inputs.clear();
                    release(&mut env, &planned.release);
                    bind_group_results(group, group_results.drain(..), &mut env);
                }
            }
        }
        let outputs = p.outputs.iter().enumerate().map(|(i, atom)| match atom {
            // The last output a variable gives takes its value; earlier ones share it.
            Atom::Var(v) if !p.outputs[i + 1..].iter().any(|a| a.var() == Some(*v)) => {
                env[v.index()].take().expect("defined before use")
            }
            _ => read(&env, atom),
        });
        results.extend(outputs);
        env.clear();
        SCRATCH.set(Scratch { env, group_inputs, group_results });
    }
}

/// Vectors that runs of plans reuse from one call to the next on the same thread, so that a
/// cached call of a small function allocates little besides its outputs. A run nested in a
/// step of another (a scan body's plan) finds them taken and makes its own.
#[derive(Default)]
struct Scratch {
    /// The value of each live variable.
    env: Vec<Option<Array>>,
    /// The inputs of the fused group being run.
    group_inputs: Vec<Array>,
    /// Its results.
    group_results: Vec<Array>,
}

thread_local! {
    static SCRATCH: Cell<Scratch> = Cell::default();
}

fn read(env: &[Option<Array>], atom: &Atom) -> Array {
    match atom {
        Atom::Var(v) => env[v.index()].clone().expect("defined before use"),
        Atom::Const(c) => c.clone(),
    }
}

/// Runs equation `i` of `p` on its own and binds its outputs.
fn run_single(p: &Program, i: usize, planned: &Planned, env: &mut [Option<Array>]) {
    let results = eval(p, i, &planned.outputs, env);
    release(env, &planned.release);
    for (var, value) in p.equations[i].outputs.iter().zip(results) {
        env[var.index()] = Some(value);
    }
}

/// Runs two independent equations of `p` side by side and binds their outputs.
fn run_pair(p: &Program, [a, b]: [usize; 2], planned: &Planned, env: &mut [Option<Array>]) {
    let (outputs_a, outputs_b) = planned.outputs.split_at(p.equations[a].outputs.len());
    let shared: &[Option<Array>] = env;
    let (results_a, results_b) =
        parts::side_by_side(|| eval(p, a, outputs_a, shared), || eval(p, b, outputs_b, shared));
    release(env, &planned.release);
    let vars = p.equations[a].outputs.iter().chain(&p.equations[b].outputs);
    for (var, value) in vars.zip(results_a.into_iter().chain(results_b)) {
        env[var.index()] = Some(value);
    }
}

/// Equation `i` of `p` on the values bound in `env`, giving `outputs`.
fn eval(p: &Program, i: usize, outputs: &[Aval], env: &[Option<Array>]) -> Vec<Array> {
    let eqn = &p.equations[i];
    let inputs: Vec<&Array> = eqn
        .inputs
        .iter()
        .map(|atom| match atom {
            Atom::Var(v) => env[v.index()].as_ref().expect("defined before use"),
            Atom::Const(c) => c,
        })
        .collect();
    // An allocation that fails inside the kernels is reported as this op's (with the traced
    // line that bound it), as eagerly, rather than as the whole function's.
    let op = || {
        let result = crate::primitives::describe(outputs);
        match eqn.span {
            Some(span) => {
                format!("{} (result {result}, in traced code at {span})", eqn.prim.name())
            }
            None => format!("{} (result {result})", eqn.prim.name()),
        }
    };
    alloc::named(op, || eqn.prim.eval(&inputs, outputs))
}

/// Binds a fused group's outputs, its reduction's result and the reshaped views of them that
/// the group stands for.
fn bind_group_results(
    group: &fusion::FusedGroup,
    results: impl Iterator<Item = Array>,
    env: &mut [Option<Array>],
) {
    for (var, value) in group.result_vars().zip(results) {
        env[var.index()] = Some(value);
    }
    for (var, o, aval) in &group.aliases {
        let output = env[group.outputs[*o].var.index()].as_ref();
        let output = output.expect("bound just above");
        env[var.index()] = Some(output.with_shape(aval.shape.clone()));
    }
}

fn release(env: &mut [Option<Array>], vars: &[Var]) {
    for var in vars {
        env[var.index()] = None;
    }
}

/// Whether `v` is read by only one of the group's inputs.
fn once(group: &fusion::FusedGroup, v: Var) -> bool {
    group.inputs.iter().filter(|(a, _)| matches!(a, Atom::Var(x) if *x == v)).count() == 1
}

/// The atoms a step reads.
fn step_inputs<'a>(
    program: &'a Program,
    step: &'a Step,
) -> Box<dyn Iterator<Item = &'a Atom> + 'a> {
    match step {
        Step::Single(i) => Box::new(program.equations[*i].inputs.iter()),
        Step::Pair(pair) => Box::new(pair.iter().flat_map(|&i| program.equations[i].inputs.iter())),
        Step::Fused(group) => Box::new(group.inputs.iter().map(|(a, _)| a)),
    }
}
