//! How a `#[jit]` plan runs when its arguments are on a device: the simplified program is cut
//! into maximal runs of elementwise equations over one shape, each run launched as one
//! generated kernel (a [`crate::backend::ElementwiseGroup`]), and the other equations are
//! bound one at a time, each running where its operands are (products, reductions, shape
//! operations, control flow). A reduction of a value a run computes closes the run, as it
//! closes a fused group on the host: the kernel folds the run's values as it computes them.
//!
//! A run whose kernel would bind more buffers than every adapter allows is split in two
//! until each part fits; a run over more elements than one binding safely holds runs its
//! equations one by one instead, since those split their work into windows.

use std::collections::HashMap;
use std::ops::Range;

use crate::array::Array;
use crate::backend::dispatch::run_group;
use crate::backend::Batch;
use crate::backend::{
    DeviceOp, ElementwiseGroup, ElementwiseOp, GroupOp, GroupReduction, GroupValue,
};
use crate::ir::{Atom, Program, Var};
use crate::primitives::{bind_at, Aval, ReduceOp};

/// Storage buffers one fused kernel binds at most: wgpu's guaranteed minimum per shader
/// stage (8), less the parameter buffer.
const MAX_GROUP_BUFFERS: usize = 7;

/// Elements of the largest fused output: 64 MiB of 4-byte elements, within every adapter's
/// minimum binding size (128 MiB).
const MAX_GROUP_ELEMENTS: usize = 1 << 24;

/// One step of a device plan.
#[derive(Debug)]
enum Step {
    /// An equation of the program, bound as it is.
    Equation(usize),
    /// Equations `equations` as one kernel reading `inputs` and defining `outputs`.
    Group { group: ElementwiseGroup, equations: Range<usize>, inputs: Vec<Atom>, outputs: Vec<Var> },
}

/// A program partitioned for running on a device.
#[derive(Debug)]
pub(crate) struct DevicePlan {
    program: Program,
    steps: Vec<Step>,
}

impl DevicePlan {
    /// The partition of `program` (already simplified).
    pub(crate) fn new(program: Program) -> DevicePlan {
        let last_use = last_uses(&program);
        let mut steps = Vec::new();
        let mut run: Option<(Range<usize>, Vec<usize>)> = None;
        for (e, eqn) in program.equations.iter().enumerate() {
            if let Some((range, _)) = run.take_if(|(range, _)| closes(&program, range, e)) {
                split_into(&program, &last_use, range.start..e + 1, &mut steps);
                continue;
            }
            let shape = fusable(&program, e).then(|| program.aval(eqn.outputs[0]).shape.clone());
            match (&mut run, shape) {
                (Some((range, run_shape)), Some(shape)) if *run_shape == shape => range.end = e + 1,
                (_, shape) => {
                    if let Some((range, _)) = run.take() {
                        split_into(&program, &last_use, range, &mut steps);
                    }
                    match shape {
                        Some(shape) => run = Some((e..e + 1, shape)),
                        None => steps.push(Step::Equation(e)),
                    }
                }
            }
        }
        if let Some((range, _)) = run {
            split_into(&program, &last_use, range, &mut steps);
        }
        DevicePlan { program, steps }
    }

    /// How many kernels the fused groups launch.
    #[cfg(test)]
    pub(crate) fn groups(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s, Step::Group { .. })).count()
    }

    /// Runs the plan on `args`, its device work recorded into one submission.
    pub(crate) fn run(&self, args: &[Array]) -> Vec<Array> {
        let device = args.iter().map(Array::device).find(|d| !d.is_host());
        let _one_submission = device.map(Batch::begin);
        let program = &self.program;
        let mut env: Vec<Option<Array>> = vec![None; program.avals.len()];
        for (var, arg) in program.inputs.iter().zip(args) {
            env[var.index()] = Some(arg.clone());
        }
        let read = |env: &[Option<Array>], atom: &Atom| match atom {
            Atom::Var(v) => env[v.index()].clone().expect("programs define variables before use"),
            Atom::Const(a) => a.clone(),
        };
        for step in &self.steps {
            let (equations, fused) = match step {
                Step::Equation(e) => (*e..*e + 1, None),
                Step::Group { group, equations, inputs, outputs } => {
                    let values: Vec<Array> = inputs.iter().map(|a| read(&env, a)).collect();
                    let refs: Vec<&Array> = values.iter().collect();
                    let avals: Vec<Aval> =
                        outputs.iter().map(|v| program.aval(*v).clone()).collect();
                    (equations.clone(), run_group(group, &refs, &avals).map(|o| (outputs, o)))
                }
            };
            if let Some((vars, values)) = fused {
                for (var, value) in vars.iter().zip(values) {
                    env[var.index()] = Some(value);
                }
                continue;
            }
            // On the host (or in dtypes the device has no kernels for), one at a time.
            for eqn in &program.equations[equations] {
                let inputs: Vec<Array> = eqn.inputs.iter().map(|a| read(&env, a)).collect();
                let refs: Vec<&Array> = inputs.iter().collect();
                let outputs = bind_at(eqn.prim.as_ref(), &refs, eqn.span);
                for (var, out) in eqn.outputs.iter().zip(outputs) {
                    env[var.index()] = Some(out);
                }
            }
        }
        program.outputs.iter().map(|a| read(&env, a)).collect()
    }
}

/// The elementwise operation equation `e` is, if it can join a fused group.
fn elementwise_op(program: &Program, e: usize) -> Option<ElementwiseOp> {
    let eqn = &program.equations[e];
    if eqn.outputs.len() != 1 || eqn.prim.has_effect() {
        return None;
    }
    let avals: Vec<Aval> = eqn.inputs.iter().map(|a| atom_aval(program, a)).collect();
    let Some(DeviceOp::Elementwise(op)) = eqn.prim.device_op(&avals) else { return None };
    let out = program.aval(eqn.outputs[0]);
    // A conversion to the same dtype only changes the weak flag: no kernel computes it.
    if op == ElementwiseOp::Convert && avals[0].dtype == out.dtype {
        return None;
    }
    Some(op)
}

/// The fold equation `e` is, if it can close a fused group.
fn reduction_op(program: &Program, e: usize) -> Option<(ReduceOp, Vec<usize>)> {
    let eqn = &program.equations[e];
    if eqn.outputs.len() != 1 || eqn.prim.has_effect() {
        return None;
    }
    let avals: Vec<Aval> = eqn.inputs.iter().map(|a| atom_aval(program, a)).collect();
    match eqn.prim.device_op(&avals)? {
        DeviceOp::Reduce { op, axes } => Some((op, axes)),
        _ => None,
    }
}

/// Whether equation `e` is a reduction of a value the run `range` computes, which then
/// closes the run: the group's kernel folds its values as it computes them.
fn closes(program: &Program, range: &Range<usize>, e: usize) -> bool {
    let Some(Atom::Var(v)) = program.equations[e].inputs.first() else { return false };
    let defined = program.equations[range.clone()].iter().any(|q| q.outputs.contains(v));
    defined && reduction_op(program, e).is_some()
}

fn fusable(program: &Program, e: usize) -> bool {
    let out = program.aval(program.equations[e].outputs[0]);
    let size: usize = out.shape.iter().product();
    size <= MAX_GROUP_ELEMENTS && elementwise_op(program, e).is_some()
}

fn atom_aval(program: &Program, atom: &Atom) -> Aval {
    match atom {
        Atom::Var(v) => program.aval(*v).clone(),
        Atom::Const(a) => a.aval(),
    }
}

/// For each variable, the last equation that reads it (`usize::MAX` for program outputs).
fn last_uses(program: &Program) -> Vec<usize> {
    let mut last = vec![0; program.avals.len()];
    for (e, eqn) in program.equations.iter().enumerate() {
        for atom in &eqn.inputs {
            if let Atom::Var(v) = atom {
                last[v.index()] = e;
            }
        }
    }
    for atom in &program.outputs {
        if let Atom::Var(v) = atom {
            last[v.index()] = usize::MAX;
        }
    }
    last
}

/// Appends the steps of the run `range`: one group, or two halves (recursively) when one
/// kernel would bind too many buffers.
fn split_into(program: &Program, last_use: &[usize], range: Range<usize>, steps: &mut Vec<Step>) {
    if range.len() == 1 && elementwise_op(program, range.start).is_none() {
        // A closing reduction split off from its group.
        steps.push(Step::Equation(range.start));
        return;
    }
    let step = group(program, last_use, range.clone());
    let Step::Group { inputs, outputs, .. } = &step else { unreachable!("group makes groups") };
    if outputs.is_empty() {
        return; // Nothing reads what it computes.
    }
    if inputs.len() + outputs.len() > MAX_GROUP_BUFFERS && range.len() > 1 {
        let middle = range.start + range.len() / 2;
        split_into(program, last_use, range.start..middle, steps);
        split_into(program, last_use, middle..range.end, steps);
    } else {
        steps.push(step);
    }
}

/// The group of equations `range`: operands are the values they read that they do not
/// define (each once), outputs the values they define that later equations or the program's
/// outputs read, then the result of the reduction that closes the range, if one does.
fn group(program: &Program, last_use: &[usize], range: Range<usize>) -> Step {
    let mut defined: HashMap<Var, usize> = HashMap::new();
    let mut operand_of: HashMap<Var, usize> = HashMap::new();
    let mut inputs: Vec<Atom> = Vec::new();
    let mut ops = Vec::new();
    let closing = reduction_op(program, range.end - 1);
    let elementwise = range.start..range.end - usize::from(closing.is_some());
    for e in elementwise {
        let eqn = &program.equations[e];
        let op = elementwise_op(program, e).expect("runs hold elementwise equations");
        let args = eqn
            .inputs
            .iter()
            .map(|atom| match atom {
                Atom::Var(v) if defined.contains_key(v) => GroupValue::Op(defined[v]),
                Atom::Var(v) => GroupValue::Operand(*operand_of.entry(*v).or_insert_with(|| {
                    inputs.push(atom.clone());
                    inputs.len() - 1
                })),
                Atom::Const(_) => {
                    inputs.push(atom.clone());
                    GroupValue::Operand(inputs.len() - 1)
                }
            })
            .collect();
        let out = eqn.outputs[0];
        ops.push(GroupOp { op, args, dtype: program.aval(out).dtype });
        defined.insert(out, ops.len() - 1);
    }
    let mut outputs: Vec<Var> =
        defined.keys().copied().filter(|v| last_use[v.index()] >= range.end).collect();
    outputs.sort_by_key(|v| defined[v]);
    let values = outputs.iter().map(|v| GroupValue::Op(defined[v])).collect();
    let reduction = closing.map(|(op, axes)| {
        let eqn = &program.equations[range.end - 1];
        let Atom::Var(v) = &eqn.inputs[0] else { unreachable!("`closes` reads a variable") };
        let input = match defined.get(v) {
            Some(&k) => GroupValue::Op(k),
            // Its group was split, and the value comes from the part before.
            None => GroupValue::Operand(*operand_of.entry(*v).or_insert_with(|| {
                inputs.push(Atom::Var(*v));
                inputs.len() - 1
            })),
        };
        outputs.push(eqn.outputs[0]);
        GroupReduction { op, axes, input, shape: program.aval(*v).shape.clone() }
    });
    Step::Group {
        group: ElementwiseGroup { ops, outputs: values, reduction },
        equations: range,
        inputs,
        outputs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::trace_function;
    use crate::jnp;

    fn plan_of(f: impl FnOnce(&Array, &Array) -> Array) -> DevicePlan {
        let args = vec![jnp::ones([4, 3]), jnp::ones([3])];
        let traced = trace_function("f", &args, |x, _| f(&x[0], &x[1]));
        DevicePlan::new(traced.simplified)
    }

    #[test]
    fn elementwise_runs_fuse_and_other_equations_cut_them() {
        // One run: the broadcast row joins inside the kernel.
        let plan = plan_of(|x, b| ((x * b).tanh() + 1.0).exp());
        assert_eq!(plan.groups(), 1, "{plan:?}");
        // A reduction closes the first run, in its kernel; the second runs over the
        // reduced shape.
        let plan = plan_of(|x, b| ((x + b).sin().sum_axes(0, false) * b).cos());
        assert_eq!(plan.groups(), 2, "{plan:?}");
        assert_eq!(plan.steps.len(), 2, "{plan:?}");
    }

    #[test]
    fn a_reduction_of_a_run_closes_it() {
        let plan = plan_of(|x, b| jnp::sum_axes(&((x * b).exp() * x), 1, false));
        assert_eq!(plan.steps.len(), 1, "{plan:?}");
        let Step::Group { group, outputs, .. } = &plan.steps[0] else { panic!("{plan:?}") };
        let r = group.reduction.as_ref().expect("the sum closes the group");
        assert_eq!((r.axes.clone(), r.shape.clone()), (vec![1], vec![4, 3]));
        assert_eq!((group.outputs.len(), outputs.len()), (0, 1));
        // A value read after the group is one of its outputs too; a reduction of a value
        // from outside any run stays on its own.
        let plan = plan_of(|x, _| {
            let e = x.exp();
            jnp::sum_axes(&e, 0, false) + jnp::sum_axes(x, 0, false) + e.sum()
        });
        let Step::Group { group, .. } = &plan.steps[0] else { panic!("{plan:?}") };
        assert_eq!(group.outputs.len(), 1, "{plan:?}");
        assert!(plan.steps.iter().any(|s| matches!(s, Step::Equation(_))), "{plan:?}");
        // On the host the equations run one by one, with the same result.
        let args = vec![jnp::full([4, 3], 0.5f32), jnp::ones([3])];
        let want = crate::ir::eval_program(&plan.program, &args);
        assert_eq!(plan.run(&args)[0].to_vec::<f32>(), want[0].to_vec::<f32>());
    }

    #[test]
    fn runs_binding_too_many_buffers_are_split() {
        // Eight distinct operands need more than seven buffers with the output.
        let args: Vec<Array> = (0..8).map(|i| jnp::full([5], i as f32)).collect();
        let traced = trace_function("sum8", &args, |x, _| {
            x.iter().skip(1).fold(x[0].clone(), |acc, v| (acc * v).sin())
        });
        let plan = DevicePlan::new(traced.simplified);
        assert!(plan.groups() >= 2, "{plan:?}");
        for step in &plan.steps {
            if let Step::Group { inputs, outputs, .. } = step {
                assert!(inputs.len() + outputs.len() <= MAX_GROUP_BUFFERS, "{plan:?}");
            }
        }
        // On the host every group runs its equations one by one, with the same result.
        let want = crate::ir::eval_program(&plan.program, &args);
        assert_eq!(plan.run(&args)[0].to_vec::<f32>(), want[0].to_vec::<f32>());
    }
}
