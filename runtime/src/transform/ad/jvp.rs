//! Forward mode: running a program on primal values and tangents together.

use super::{differentiable, ops, Tangent};
use crate::array::Array;
use crate::ir::{trace, Atom, Equation, Program};
use crate::primitives::bind_at;
use crate::transform::simplify::eliminate_dead_code;

/// Runs `program` on `primals` with `tangents` (one per input, `None` = zero), returning its
/// outputs and their tangents. Equations whose operands all have zero tangents are simply
/// bound; the others run their primitive's jvp rule.
pub fn jvp_eval(
    program: &Program,
    primals: &[Array],
    tangents: &[Tangent],
) -> (Vec<Array>, Vec<Tangent>) {
    assert_eq!(primals.len(), program.inputs.len(), "jvp: one primal per program input");
    assert_eq!(tangents.len(), primals.len(), "jvp: one tangent per primal");
    let mut env: Vec<Option<Array>> = vec![None; program.avals.len()];
    let mut tan: Vec<Tangent> = vec![None; program.avals.len()];
    for ((var, p), t) in program.inputs.iter().zip(primals).zip(tangents) {
        env[var.index()] = Some(p.clone());
        tan[var.index()] = t.clone().filter(|_| differentiable(&p.aval()));
    }
    let read = |env: &[Option<Array>], atom: &Atom| match atom {
        Atom::Var(v) => env[v.index()].clone().expect("programs define variables before use"),
        Atom::Const(a) => a.clone(),
    };
    for eqn in &program.equations {
        let inputs: Vec<Array> = eqn.inputs.iter().map(|a| read(&env, a)).collect();
        let tangents: Vec<Tangent> = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) => tan[v.index()].clone(),
                Atom::Const(_) => None,
            })
            .collect();
        let (outs, out_tangents) = if tangents.iter().all(Option::is_none) {
            let refs: Vec<&Array> = inputs.iter().collect();
            (bind_at(eqn.prim.as_ref(), &refs, eqn.span), vec![None; eqn.outputs.len()])
        } else {
            apply_rule(eqn, &inputs, &tangents)
        };
        for ((var, out), t) in eqn.outputs.iter().zip(outs).zip(out_tangents) {
            tan[var.index()] = t.filter(|_| differentiable(&out.aval()));
            env[var.index()] = Some(out);
        }
    }
    let outs: Vec<Array> = program.outputs.iter().map(|a| read(&env, a)).collect();
    let out_tangents = program
        .outputs
        .iter()
        .map(|a| match a {
            Atom::Var(v) => tan[v.index()].clone(),
            Atom::Const(_) => None,
        })
        .collect();
    (outs, out_tangents)
}

/// Runs one equation's jvp rule, with what it binds attributed to the equation's span.
fn apply_rule(
    eqn: &Equation,
    inputs: &[Array],
    tangents: &[Tangent],
) -> (Vec<Array>, Vec<Tangent>) {
    let refs: Vec<&Array> = inputs.iter().collect();
    let avals: Vec<_> = inputs.iter().map(Array::aval).collect();
    let outputs_differentiable = match eqn.prim.abstract_eval(&avals) {
        Ok(outs) => outs.iter().any(differentiable),
        Err(_) => true,
    };
    if !outputs_differentiable {
        // Integer or boolean results (comparisons, argmax, random bits) carry no tangent.
        return (bind_at(eqn.prim.as_ref(), &refs, eqn.span), vec![None; eqn.outputs.len()]);
    }
    let result = trace::with_span(eqn.span, || eqn.prim.jvp(inputs, tangents));
    match result {
        Ok(r) => r,
        Err(msg) => {
            let at =
                eqn.span.map(|s| format!("\n  in differentiated code at {s}")).unwrap_or_default();
            panic!("differentiating {}: {msg}{at}", eqn.prim.name())
        }
    }
}

/// The jvp of `program` as a program: inputs are the primals, then a tangent for each input
/// marked in `nonzero`; outputs are the primal outputs, then a tangent for every
/// floating-point output (zeros instantiated).
pub fn jvp_program(program: &Program, nonzero: &[bool]) -> Program {
    traced_jvp(program, nonzero, true)
}

/// Like [`jvp_program`] but returning only the output tangents: the primal computation it
/// needs is recomputed inside (what `cond` and `checkpoint` differentiate into, so the
/// primal outputs come from the original equation and this one is linear in the tangents).
pub fn tangent_program(program: &Program, nonzero: &[bool]) -> Program {
    eliminate_dead_code(&without_prints(&traced_jvp(program, nonzero, false)))
}

/// The program without its output-less effects (`debug_print`), recursively: recomputing
/// primal values for tangents must not print them a second time.
fn without_prints(program: &Program) -> Program {
    let equations = program
        .equations
        .iter()
        .filter(|e| {
            !(e.prim.has_effect() && e.outputs.is_empty() && e.prim.subprograms().is_empty())
        })
        .map(|e| {
            let subs: Vec<Program> =
                e.prim.subprograms().iter().map(|(_, p)| without_prints(p)).collect();
            match e.prim.with_subprograms(subs) {
                Some(prim) if e.prim.has_effect() => Equation { prim, ..e.clone() },
                _ => e.clone(),
            }
        })
        .collect();
    Program { equations, ..program.clone() }
}

fn traced_jvp(program: &Program, nonzero: &[bool], keep_primals: bool) -> Program {
    let in_avals = program.input_avals();
    let mut avals = in_avals.clone();
    avals.extend(in_avals.iter().zip(nonzero).filter(|(_, nz)| **nz).map(|(a, _)| a.clone()));
    let out_avals = program.output_avals();
    let traced = trace::trace_with(&avals, |ins| {
        let (primals, rest) = ins.split_at(in_avals.len());
        let mut rest = rest.iter();
        let tangents: Vec<Tangent> =
            nonzero.iter().map(|&nz| if nz { rest.next().cloned() } else { None }).collect();
        let (outs, out_tangents) = jvp_eval(program, primals, &tangents);
        let mut result = if keep_primals { outs } else { Vec::new() };
        for (t, aval) in out_tangents.iter().zip(&out_avals) {
            if differentiable(aval) {
                result.push(ops::instantiate(t, aval));
            }
        }
        (result, ())
    });
    assert!(traced.captured.is_empty(), "a differentiated sub-program captured outer values");
    traced.program
}
