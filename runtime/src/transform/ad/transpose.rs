//! Transposition: running a linear program backwards, from output cotangents to the
//! cotangents of its linear inputs.

use super::{differentiable, ops, LinearArg, Tangent};
use crate::array::Array;
use crate::ir::{trace, Atom, Equation, Program, Var};
use crate::primitives::bind_at;

/// Transposes `program`, linear in the inputs given as [`LinearArg::Linear`], at the known
/// inputs' values: returns, for each input, its cotangent (`None` for known inputs and zeros)
/// given the outputs' cotangents `cts`.
///
/// Equations that use no linear value (recomputation of primal values inside a `cond` branch
/// or a `checkpoint`) run forwards first; then the linear ones run their transpose rules in
/// reverse order, accumulating cotangents.
pub fn backward_pass(program: &Program, args: &[LinearArg], cts: &[Tangent]) -> Vec<Tangent> {
    assert_eq!(args.len(), program.inputs.len(), "transpose: one argument per program input");
    let n = program.avals.len();
    let mut linear = vec![false; n];
    let mut env: Vec<Option<Array>> = vec![None; n];
    for (var, arg) in program.inputs.iter().zip(args) {
        match arg {
            LinearArg::Known(a) => env[var.index()] = Some(a.clone()),
            LinearArg::Linear(_) => linear[var.index()] = true,
        }
    }
    let is_linear =
        |linear: &[bool], atom: &Atom| matches!(atom, Atom::Var(v) if linear[v.index()]);
    let mut linear_eqns: Vec<&Equation> = Vec::new();
    for eqn in &program.equations {
        if eqn.inputs.iter().any(|a| is_linear(&linear, a)) {
            for v in &eqn.outputs {
                linear[v.index()] = true;
            }
            linear_eqns.push(eqn);
            continue;
        }
        let inputs: Vec<Array> = eqn.inputs.iter().map(|a| known(&env, a)).collect();
        let refs: Vec<&Array> = inputs.iter().collect();
        for (var, out) in eqn.outputs.iter().zip(bind_at(eqn.prim.as_ref(), &refs, eqn.span)) {
            env[var.index()] = Some(out);
        }
    }
    let mut ct_env: Vec<Tangent> = vec![None; n];
    for (atom, ct) in program.outputs.iter().zip(cts) {
        if let (Atom::Var(v), Some(ct)) = (atom, ct) {
            if linear[v.index()] {
                accumulate(program, &mut ct_env, *v, ct.clone());
            }
        }
    }
    for eqn in linear_eqns.into_iter().rev() {
        let out_cts: Vec<Tangent> = eqn.outputs.iter().map(|v| ct_env[v.index()].take()).collect();
        if out_cts.iter().all(Option::is_none) {
            continue;
        }
        let eqn_args: Vec<LinearArg> = eqn
            .inputs
            .iter()
            .map(|a| match a {
                Atom::Var(v) if linear[v.index()] => LinearArg::Linear(program.aval(*v).clone()),
                other => LinearArg::Known(known(&env, other)),
            })
            .collect();
        let in_cts = apply_rule(eqn, &out_cts, &eqn_args);
        for (atom, ct) in eqn.inputs.iter().zip(in_cts) {
            if let (Atom::Var(v), Some(ct)) = (atom, ct) {
                if linear[v.index()] {
                    accumulate(program, &mut ct_env, *v, ct);
                }
            }
        }
    }
    program
        .inputs
        .iter()
        .zip(args)
        .map(|(v, arg)| if arg.is_linear() { ct_env[v.index()].take() } else { None })
        .collect()
}

fn known(env: &[Option<Array>], atom: &Atom) -> Array {
    match atom {
        Atom::Var(v) => env[v.index()].clone().expect("known values are computed before use"),
        Atom::Const(a) => a.clone(),
    }
}

fn apply_rule(eqn: &Equation, cts: &[Tangent], args: &[LinearArg]) -> Vec<Tangent> {
    let result = trace::with_span(eqn.span, || eqn.prim.transpose(cts, args));
    match result {
        Ok(r) => r,
        Err(msg) => {
            let at =
                eqn.span.map(|s| format!("\n  in differentiated code at {s}")).unwrap_or_default();
            panic!("reverse-mode differentiation of {}: {msg}{at}", eqn.prim.name())
        }
    }
}

/// Adds a cotangent contribution to a variable's, checking it has the variable's type.
fn accumulate(program: &Program, ct_env: &mut [Tangent], var: Var, ct: Array) {
    let aval = program.aval(var);
    assert!(
        ct.shape() == aval.shape.as_slice() && ct.dtype() == aval.dtype,
        "a transpose rule produced a cotangent {} for a value {aval}",
        ct.aval()
    );
    let slot = &mut ct_env[var.index()];
    *slot = ops::add_tangents(slot.take(), Some(ct));
}

/// The transpose of `program` w.r.t. the inputs marked in `linear`, as a program: its inputs
/// are the known inputs (in order), then a cotangent for each floating-point output; its
/// outputs are the cotangents of the linear inputs (zeros instantiated).
pub fn transpose_program(program: &Program, linear: &[bool]) -> Program {
    let in_avals = program.input_avals();
    let out_avals = program.output_avals();
    let mut avals: Vec<_> =
        in_avals.iter().zip(linear).filter(|(_, l)| !**l).map(|(a, _)| a.clone()).collect();
    let num_known = avals.len();
    avals.extend(out_avals.iter().filter(|a| differentiable(a)).cloned());
    let traced = trace::trace_with(&avals, |ins| {
        let (knowns, cts) = ins.split_at(num_known);
        let mut knowns = knowns.iter();
        let args: Vec<LinearArg> = in_avals
            .iter()
            .zip(linear)
            .map(|(aval, &l)| {
                if l {
                    LinearArg::Linear(aval.clone())
                } else {
                    LinearArg::Known(knowns.next().expect("one known per input").clone())
                }
            })
            .collect();
        let mut cts = cts.iter();
        let out_cts: Vec<Tangent> = out_avals
            .iter()
            .map(|a| if differentiable(a) { cts.next().cloned() } else { None })
            .collect();
        let in_cts = backward_pass(program, &args, &out_cts);
        let result = in_cts
            .iter()
            .zip(&in_avals)
            .zip(linear)
            .filter(|(_, l)| **l)
            .map(|((ct, aval), _)| ops::instantiate(ct, aval))
            .collect();
        (result, ())
    });
    assert!(traced.captured.is_empty(), "a transposed sub-program captured outer values");
    traced.program
}
