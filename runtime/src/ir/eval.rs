//! Evaluating a program by binding its equations: on concrete arrays this runs it op by op;
//! on traced arrays it records the equations into the current trace (inlining the program).

use super::{Atom, Program};
use crate::array::Array;
use crate::primitives::bind_at;

/// Runs `program` on `args`, one equation at a time, each with its original source span.
///
/// Panics when the arguments do not match the program's inputs in number.
pub fn eval_program(program: &Program, args: &[Array]) -> Vec<Array> {
    assert_eq!(
        args.len(),
        program.inputs.len(),
        "eval_program: the program takes {} inputs, got {}",
        program.inputs.len(),
        args.len()
    );
    let mut env: Vec<Option<Array>> = vec![None; program.avals.len()];
    for (var, arg) in program.inputs.iter().zip(args) {
        env[var.index()] = Some(arg.clone());
    }
    let read = |env: &[Option<Array>], atom: &Atom| match atom {
        Atom::Var(v) => env[v.index()].clone().expect("programs define variables before use"),
        Atom::Const(a) => a.clone(),
    };
    for eqn in &program.equations {
        let inputs: Vec<Array> = eqn.inputs.iter().map(|a| read(&env, a)).collect();
        let refs: Vec<&Array> = inputs.iter().collect();
        let outputs = bind_at(eqn.prim.as_ref(), &refs, eqn.span);
        for (var, out) in eqn.outputs.iter().zip(outputs) {
            env[var.index()] = Some(out);
        }
    }
    program.outputs.iter().map(|a| read(&env, a)).collect()
}
