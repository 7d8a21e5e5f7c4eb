//! The IR: programs of primitive equations over typed variables, like JAX's jaxprs.
//!
//! A [`Program`] is what tracing an annotated function produces and what every transform reads
//! and writes: its inputs are variables, its body a list of [`Equation`]s (one primitive applied
//! to atoms, binding fresh variables), its outputs atoms. Atoms are variables or constants
//! (arrays captured from outside the trace, and Rust literals). Every equation keeps the
//! [`Span`] of the user's code that made it, so errors found later still point at the line.
//!
//! Programs are built by running the function body on traced arrays ([`trace`]); sub-programs
//! for control flow (`cond` branches) live inside the primitives that own them.

mod eval;
mod print;
pub mod trace;

use std::fmt;
use std::panic::Location;
use std::sync::Arc;

use crate::array::Array;
use crate::primitives::{Aval, Primitive};

pub use eval::eval_program;
pub use trace::Tracer;

/// A variable of a program: an index into its [`Program::avals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

impl Var {
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// An operand of an equation or an output of a program.
#[derive(Clone, Debug)]
pub enum Atom {
    Var(Var),
    /// A value known when tracing: a captured array or a Rust literal.
    Const(Array),
}

impl Atom {
    /// The variable, if this atom is one.
    pub fn var(&self) -> Option<Var> {
        match self {
            Atom::Var(v) => Some(*v),
            Atom::Const(_) => None,
        }
    }
}

/// Where in the user's source an equation came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: &'static str,
    pub line: u32,
    pub column: u32,
}

impl Span {
    /// The span of a `#[track_caller]` chain's caller: the user's line.
    pub fn of(location: &'static Location<'static>) -> Span {
        Span { file: location.file(), line: location.line(), column: location.column() }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One primitive applied to atoms, binding fresh output variables.
#[derive(Clone, Debug)]
pub struct Equation {
    pub prim: Arc<dyn Primitive>,
    pub inputs: Vec<Atom>,
    pub outputs: Vec<Var>,
    pub span: Option<Span>,
}

/// A traced function: typed input variables, equations in dependency order, output atoms.
#[derive(Clone, Debug)]
pub struct Program {
    /// The aval of every variable, indexed by [`Var`].
    pub avals: Vec<Aval>,
    pub inputs: Vec<Var>,
    pub equations: Vec<Equation>,
    pub outputs: Vec<Atom>,
}

impl Program {
    /// The aval of a variable.
    pub fn aval(&self, var: Var) -> &Aval {
        &self.avals[var.index()]
    }

    /// The aval of an atom.
    pub fn atom_aval(&self, atom: &Atom) -> Aval {
        match atom {
            Atom::Var(v) => self.aval(*v).clone(),
            Atom::Const(a) => a.aval(),
        }
    }

    /// The avals of the inputs, in order.
    pub fn input_avals(&self) -> Vec<Aval> {
        self.inputs.iter().map(|v| self.aval(*v).clone()).collect()
    }

    /// The avals of the outputs, in order.
    pub fn output_avals(&self) -> Vec<Aval> {
        self.outputs.iter().map(|a| self.atom_aval(a)).collect()
    }

    /// A fresh variable of this aval.
    pub(crate) fn new_var(&mut self, aval: Aval) -> Var {
        self.avals.push(aval);
        Var(self.avals.len() as u32 - 1)
    }
}
