//! A compiled plan: a simplified program with its buffer lifetimes worked out, run op by op on
//! the CPU kernels without re-checking shapes (the shape rules ran when it was traced).

use crate::array::Array;
use crate::ir::{Atom, Program, Var};
use crate::primitives::Aval;

/// A program ready to run: each step knows its output avals and which variables die after it,
/// so intermediate buffers return to the pool as soon as their last reader is done.
#[derive(Debug)]
pub struct Plan {
    program: Program,
    steps: Vec<Step>,
}

#[derive(Debug)]
struct Step {
    outputs: Vec<Aval>,
    /// Variables whose last use is this step.
    release: Vec<Var>,
}

impl Plan {
    /// Plans `program` for execution.
    pub fn new(program: Program) -> Plan {
        let mut last_use = vec![usize::MAX; program.avals.len()];
        for (i, eqn) in program.equations.iter().enumerate() {
            for atom in &eqn.inputs {
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
        let mut release: Vec<Vec<Var>> = vec![Vec::new(); program.equations.len()];
        for (v, &step) in last_use.iter().enumerate() {
            if step != usize::MAX {
                release[step].push(Var(v as u32));
            }
        }
        let steps = program
            .equations
            .iter()
            .zip(release)
            .map(|(eqn, release)| Step {
                outputs: eqn.outputs.iter().map(|v| program.aval(*v).clone()).collect(),
                release,
            })
            .collect();
        Plan { program, steps }
    }

    /// The program this plan runs.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Runs the plan on concrete arguments matching the program's inputs.
    pub fn run(&self, args: Vec<Array>) -> Vec<Array> {
        let p = &self.program;
        let mut env: Vec<Option<Array>> = vec![None; p.avals.len()];
        for (var, arg) in p.inputs.iter().zip(args) {
            env[var.index()] = Some(arg);
        }
        for (eqn, step) in p.equations.iter().zip(&self.steps) {
            let results = {
                let inputs: Vec<&Array> = eqn
                    .inputs
                    .iter()
                    .map(|atom| match atom {
                        Atom::Var(v) => env[v.index()].as_ref().expect("defined before use"),
                        Atom::Const(c) => c,
                    })
                    .collect();
                eqn.prim.eval(&inputs, &step.outputs)
            };
            for var in &step.release {
                env[var.index()] = None;
            }
            for (var, value) in eqn.outputs.iter().zip(results) {
                env[var.index()] = Some(value);
            }
        }
        p.outputs
            .iter()
            .map(|atom| match atom {
                Atom::Var(v) => env[v.index()].clone().expect("outputs are defined"),
                Atom::Const(c) => c.clone(),
            })
            .collect()
    }
}
