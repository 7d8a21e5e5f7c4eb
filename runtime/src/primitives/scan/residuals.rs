//! Partial evaluation of a scan body's jvp (JAX's `_scan_partial_eval`): which of its
//! equations the primal scan runs, which the tangent scan runs, and which primal values pass
//! from the first to the second.

use crate::ir::{Atom, Equation, Program, Var};
use crate::transform::simplify::eliminate_dead_code;

use super::Scan;

/// What a variable of the joint (primal and tangent) body depends on.
#[derive(Clone, Copy, PartialEq)]
enum Depends {
    /// Only constants: the same at every step.
    Invariant,
    /// The carry or the step's slice of the xs, not a tangent: a primal value of this step.
    Step,
    /// A tangent.
    Tangent,
}

/// A scan body's jvp split in two bodies.
pub(super) struct SplitBody {
    /// The original body's inputs; outputs: its outputs, then the `stacked` residuals.
    pub primal: Program,
    /// Inputs: the float carry's tangents; as xs, the stacked residuals, the `used_xs`
    /// primal xs and the nonzero xs tangents; as constants, the `used_consts` primal
    /// constants and the nonzero constant tangents. Outputs: the float outputs' tangents.
    pub linear: Program,
    /// Residuals the primal scan stacks as extra ys.
    pub stacked: usize,
    /// Positions of the primal xs the tangent scan reads.
    pub used_xs: Vec<usize>,
    /// Positions of the primal constants the tangent scan reads.
    pub used_consts: Vec<usize>,
}

impl SplitBody {
    /// Splits `joint`, the [`jvp_program`](crate::transform::ad::jvp_program) of `scan`'s
    /// body: inputs the body's (carry, xs, constants), then a tangent for each of them that
    /// `nonzero` marks; outputs the body's, then the float outputs' tangents.
    ///
    /// Equations that read a tangent go to the linear body, the others to the primal one.
    /// Of the primal values the linear body reads, a step's values are stacked by the primal
    /// scan (or, for a slice of the xs, read from the xs themselves), and values computed from
    /// the constants alone are recomputed in the linear body rather than stacked.
    pub fn new(joint: &Program, scan: &Scan, nonzero: &[bool]) -> SplitBody {
        let (carry, xs) = (scan.carry, scan.xs);
        let num_primals = scan.body.inputs.len();
        let parts = Partition::new(joint, carry + xs, num_primals);
        let (primal_outs, tangent_outs) = joint.outputs.split_at(scan.body.outputs.len());
        let mut linear = program(joint, Vec::new(), parts.linear, tangent_outs.to_vec());
        let read = read_vars(&linear);
        let (carry_vars, rest) = joint.inputs[..num_primals].split_at(carry);
        let (x_slices, consts) = rest.split_at(xs);
        // The step's values the linear body reads, except the slices of the xs, which it
        // reads from the xs themselves.
        let stacked: Vec<Var> = (0..joint.avals.len())
            .map(|i| Var(i as u32))
            .filter(|v| read[v.index()] && parts.depends[v.index()] == Depends::Step)
            .filter(|v| !x_slices.contains(v))
            .collect();
        let used = |vars: &[Var]| -> Vec<usize> {
            (0..vars.len()).filter(|&i| read[vars[i].index()]).collect()
        };
        let (used_xs, used_consts) = (used(x_slices), used(consts));

        let (carry_t, rest) = joint.inputs[num_primals..].split_at(count(&nonzero[..carry]));
        let (x_t, const_t) = rest.split_at(count(&nonzero[carry..carry + xs]));
        let mut inputs: Vec<Var> = carry_t.to_vec();
        inputs.extend(&stacked);
        inputs.extend(used_xs.iter().map(|&i| x_slices[i]));
        inputs.extend(x_t);
        inputs.extend(used_consts.iter().map(|&i| consts[i]));
        inputs.extend(const_t);
        linear.inputs = inputs;

        let mut outputs = primal_outs.to_vec();
        outputs.extend(stacked.iter().map(|v| Atom::Var(*v)));
        let inputs = carry_vars.iter().chain(x_slices).chain(consts).copied().collect();
        let primal = program(joint, inputs, parts.primal, outputs);
        SplitBody { primal, linear, stacked: stacked.len(), used_xs, used_consts }
    }
}

/// The joint body's equations sorted by what they depend on.
struct Partition {
    /// For each variable.
    depends: Vec<Depends>,
    /// Equations without a tangent among their inputs.
    primal: Vec<Equation>,
    /// Equations with one, and those of the constants alone.
    linear: Vec<Equation>,
}

impl Partition {
    /// The joint body's first `step_inputs` inputs change from step to step (the carry and
    /// the slices of the xs); the rest of its first `num_primals` are constants; then come
    /// the tangents.
    fn new(joint: &Program, step_inputs: usize, num_primals: usize) -> Partition {
        let mut depends = vec![Depends::Invariant; joint.avals.len()];
        for (i, v) in joint.inputs.iter().enumerate() {
            depends[v.index()] = match i {
                i if i < step_inputs => Depends::Step,
                i if i < num_primals => Depends::Invariant,
                _ => Depends::Tangent,
            };
        }
        let (mut primal, mut linear) = (Vec::new(), Vec::new());
        for eqn in &joint.equations {
            let kind = eqn_depends(eqn, &depends);
            for v in &eqn.outputs {
                depends[v.index()] = kind;
            }
            match kind {
                Depends::Tangent => linear.push(eqn.clone()),
                Depends::Step => primal.push(eqn.clone()),
                Depends::Invariant => {
                    // Either body may need it, and keeps it only if it does.
                    linear.push(eqn.clone());
                    primal.push(eqn.clone());
                }
            }
        }
        Partition { depends, primal, linear }
    }
}

/// A program over `joint`'s variables with only the equations its outputs need.
fn program(
    joint: &Program,
    inputs: Vec<Var>,
    equations: Vec<Equation>,
    outputs: Vec<Atom>,
) -> Program {
    eliminate_dead_code(&Program { avals: joint.avals.clone(), inputs, equations, outputs })
}

/// What an equation's outputs depend on, given what each variable does. An effect (a print,
/// which must run once) is kept to the primal body, so its results count as the step's.
fn eqn_depends(eqn: &Equation, depends: &[Depends]) -> Depends {
    let of = |a: &Atom| match a {
        Atom::Var(v) => depends[v.index()],
        Atom::Const(_) => Depends::Invariant,
    };
    if eqn.inputs.iter().any(|a| of(a) == Depends::Tangent) {
        Depends::Tangent
    } else if eqn.prim.has_effect() || eqn.inputs.iter().any(|a| of(a) == Depends::Step) {
        Depends::Step
    } else {
        Depends::Invariant
    }
}

/// For each variable of `program`, whether an equation or an output reads it.
fn read_vars(program: &Program) -> Vec<bool> {
    let mut read = vec![false; program.avals.len()];
    let atoms = program.equations.iter().flat_map(|e| e.inputs.iter());
    for atom in atoms.chain(&program.outputs) {
        if let Atom::Var(v) = atom {
            read[v.index()] = true;
        }
    }
    read
}

fn count(mask: &[bool]) -> usize {
    mask.iter().filter(|&&b| b).count()
}
