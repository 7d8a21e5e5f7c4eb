//! Simplification: constant folding, common-subexpression elimination, composing chains of
//! one-operand primitives (`transpose(transpose(x))`), dead-code elimination.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::array::Array;
use crate::ir::{Atom, Equation, Program, Var};
use crate::primitives::Primitive;

/// Equations whose operands are all constants are evaluated at compile time when their
/// results are at most this many elements; larger results would bloat the plan's constants.
const FOLD_LIMIT: usize = 1 << 12;

/// Folds constants, merges repeated computations, composes chains of primitives that compose
/// and drops unused equations.
///
/// The result computes the same outputs from the same inputs; effectful equations
/// (`debug_print`) are always kept, in order.
pub fn simplify(program: &Program) -> Program {
    eliminate_dead_code(&fold_and_merge(program))
}

/// What identifies an operand for CSE: a variable, or a constant by identity (one-element
/// constants by value, since every literal is its own buffer).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum OperandKey {
    Var(Var),
    Buffer(usize),
    Scalar(String),
}

fn operand_key(atom: &Atom) -> OperandKey {
    match atom {
        Atom::Var(v) => OperandKey::Var(*v),
        Atom::Const(a) if a.size() == 1 => OperandKey::Scalar(format!("{a:?}")),
        Atom::Const(a) => OperandKey::Buffer(a.buffer_id()),
    }
}

fn fold_and_merge(program: &Program) -> Program {
    let mut subst: HashMap<Var, Atom> = HashMap::new();
    let mut seen: HashMap<(String, Vec<OperandKey>), Vec<Var>> = HashMap::new();
    let mut equations = Vec::new();
    let resolve = |subst: &HashMap<Var, Atom>, atom: &Atom| match atom {
        Atom::Var(v) => subst.get(v).cloned().unwrap_or(Atom::Var(*v)),
        c => c.clone(),
    };
    // The kept equation that defines each variable.
    let mut defined_by: HashMap<Var, usize> = HashMap::new();
    for eqn in &program.equations {
        let inputs: Vec<Atom> = eqn.inputs.iter().map(|a| resolve(&subst, a)).collect();
        let composed = compose(eqn, &inputs, &defined_by, &equations);
        let (eqn, inputs) = match &composed {
            Some(composed) => (composed, composed.inputs.clone()),
            None => (eqn, inputs),
        };
        if let Some(values) = fold(eqn, &inputs, program) {
            for (var, value) in eqn.outputs.iter().zip(values) {
                subst.insert(*var, Atom::Const(value));
            }
            continue;
        }
        if let Some(same) = passed_through(eqn, &inputs, program) {
            subst.insert(eqn.outputs[0], same);
            continue;
        }
        if eqn.prim.cse_allowed() {
            let mut operands: Vec<OperandKey> = inputs.iter().map(operand_key).collect();
            if eqn.prim.commutative() {
                operands.sort();
            }
            let key = (format!("{:?}", eqn.prim), operands);
            if let Some(previous) = seen.get(&key) {
                for (var, prev) in eqn.outputs.iter().zip(previous) {
                    subst.insert(*var, Atom::Var(*prev));
                }
                continue;
            }
            seen.insert(key, eqn.outputs.clone());
        }
        for var in &eqn.outputs {
            defined_by.insert(*var, equations.len());
        }
        equations.push(Equation { inputs, prim: simplify_subprograms(eqn), ..eqn.clone() });
    }
    let outputs = program.outputs.iter().map(|a| resolve(&subst, a)).collect();
    Program { equations, outputs, ..program.clone() }
}

/// The equation as one primitive applied to the operand of the one-operand equation that
/// defines its operand, when the two primitives compose (see [`Primitive::compose_after`]).
fn compose(
    eqn: &Equation,
    inputs: &[Atom],
    defined_by: &HashMap<Var, usize>,
    equations: &[Equation],
) -> Option<Equation> {
    let [Atom::Var(operand)] = inputs else { return None };
    let inner = &equations[*defined_by.get(operand)?];
    if inner.inputs.len() != 1 || inner.outputs.len() != 1 || eqn.outputs.len() != 1 {
        return None;
    }
    let prim = eqn.prim.compose_after(inner.prim.as_ref())?;
    Some(Equation { prim, inputs: inner.inputs.clone(), ..eqn.clone() })
}

/// The operand an equation's single result equals, if its primitive says so for these
/// operands and that operand has the result's aval.
fn passed_through(eqn: &Equation, inputs: &[Atom], program: &Program) -> Option<Atom> {
    if eqn.outputs.len() != 1 || eqn.prim.has_effect() {
        return None;
    }
    let constants: Vec<Option<&Array>> = inputs.iter().map(concrete).collect();
    let same = inputs.get(eqn.prim.passes_through(&constants)?)?;
    let aval = match same {
        Atom::Var(v) => program.aval(*v).clone(),
        Atom::Const(c) => c.aval(),
    };
    (&aval == program.aval(eqn.outputs[0])).then(|| same.clone())
}

/// The equation's primitive with its sub-programs (branches, loop bodies) simplified too.
fn simplify_subprograms(eqn: &Equation) -> Arc<dyn Primitive> {
    let subs = eqn.prim.subprograms();
    if subs.is_empty() {
        return eqn.prim.clone();
    }
    let simplified = subs.into_iter().map(|(_, p)| simplify(p)).collect();
    eqn.prim.with_subprograms(simplified).unwrap_or_else(|| eqn.prim.clone())
}

/// The operand's value, if it is known now (a constant that is not a tracer).
fn concrete(atom: &Atom) -> Option<&Array> {
    match atom {
        Atom::Const(c) if !c.is_traced() => Some(c),
        _ => None,
    }
}

/// The equation's results, if it can be evaluated now.
fn fold(eqn: &Equation, inputs: &[Atom], program: &Program) -> Option<Vec<Array>> {
    if eqn.prim.has_effect() {
        return None;
    }
    let consts: Vec<&Array> = inputs.iter().map(concrete).collect::<Option<_>>()?;
    let avals: Vec<_> = eqn.outputs.iter().map(|v| program.aval(*v).clone()).collect();
    if avals.iter().map(|a| a.shape.iter().product::<usize>()).sum::<usize>() > FOLD_LIMIT {
        return None;
    }
    Some(eqn.prim.eval(&consts, &avals))
}

pub(crate) fn eliminate_dead_code(program: &Program) -> Program {
    let mut live: HashSet<Var> = program
        .outputs
        .iter()
        .filter_map(|a| match a {
            Atom::Var(v) => Some(*v),
            Atom::Const(_) => None,
        })
        .collect();
    let mut kept = Vec::new();
    for eqn in program.equations.iter().rev() {
        if eqn.prim.has_effect() || eqn.outputs.iter().any(|v| live.contains(v)) {
            for atom in &eqn.inputs {
                if let Atom::Var(v) = atom {
                    live.insert(*v);
                }
            }
            kept.push(eqn.clone());
        }
    }
    kept.reverse();
    Program { equations: kept, ..program.clone() }
}
