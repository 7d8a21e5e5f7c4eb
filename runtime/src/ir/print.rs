//! Printing programs in the style of `jax.make_jaxpr`:
//!
//! ```text
//! { lambda ; a:f32[3]. let
//!     b:f32[3] = mul a a
//!     c:f32[3] = add b 1.0:f32[]
//!   in (c,) }
//! ```
//!
//! Variables are renamed `a`, `b`, ... in order of definition; constants of one element print
//! inline, larger ones are listed before the `;` as JAX lists its constvars.

use std::collections::HashMap;
use std::fmt::{self, Write};

use super::{Atom, Program, Var};
use crate::array::Array;
use crate::primitives::Aval;

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        Printer::default().program(self, &mut out, 0)?;
        f.write_str(&out)
    }
}

/// `f32[2,3]`: an aval as jaxprs show it.
pub(crate) fn aval_text(aval: &Aval) -> String {
    let dims: Vec<String> = aval.shape.iter().map(usize::to_string).collect();
    format!("{}[{}]", aval.dtype.short_name(), dims.join(","))
}

#[derive(Default)]
struct Printer {
    names: HashMap<Var, String>,
    consts: Vec<(String, Array)>,
    next: usize,
}

/// JAX's variable names: a..z, then ba, bb, ... (base 26 with `a` as zero).
fn name_of(mut n: usize) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b'a' + (n % 26) as u8);
        n /= 26;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).expect("ascii")
}

impl Printer {
    fn bind(&mut self, var: Var, program: &Program) -> String {
        let name = name_of(self.next);
        self.next += 1;
        self.names.insert(var, name.clone());
        format!("{name}:{}", aval_text(program.aval(var)))
    }

    fn atom(&mut self, atom: &Atom) -> String {
        match atom {
            Atom::Var(v) => self.names.get(v).cloned().unwrap_or_else(|| format!("?{}", v.0)),
            Atom::Const(a) if a.size() == 1 && !a.is_traced() => {
                let text = a.to_string();
                let value = text.split(" dtype=").next().unwrap_or(&text).trim_matches(['[', ']']);
                format!("{value}:{}", aval_text(&a.aval()))
            }
            Atom::Const(a) => {
                if let Some((name, _)) = self.consts.iter().find(|(_, c)| c.shares_buffer_with(a)) {
                    return name.clone();
                }
                let name = name_of(self.next);
                self.next += 1;
                self.consts.push((name.clone(), a.clone()));
                name
            }
        }
    }

    fn program(&mut self, p: &Program, out: &mut String, indent: usize) -> fmt::Result {
        let pad = " ".repeat(indent);
        // Constants listed before the `;` are named first, as JAX names its constvars.
        for atom in p.equations.iter().flat_map(|e| &e.inputs).chain(&p.outputs) {
            if matches!(atom, Atom::Const(a) if a.size() != 1 || a.is_traced()) {
                self.atom(atom);
            }
        }
        let inputs: Vec<String> = p.inputs.iter().map(|v| self.bind(*v, p)).collect();
        let mut body = String::new();
        for eqn in &p.equations {
            let args: Vec<String> = eqn.inputs.iter().map(|a| self.atom(a)).collect();
            let outs: Vec<String> = eqn.outputs.iter().map(|v| self.bind(*v, p)).collect();
            let mut params = eqn.prim.params();
            let subs = eqn.prim.subprograms();
            let mut nested = String::new();
            for (label, sub) in &subs {
                let mut inner = Printer { next: 0, ..Printer::default() };
                let mut text = String::new();
                inner.program(sub, &mut text, indent + 6)?;
                write!(nested, "\n{pad}      {label}={}", text.trim_start())?;
            }
            if !nested.is_empty() {
                if !params.is_empty() {
                    params.push(' ');
                }
                params.push_str(&format!("{nested}\n{pad}    "));
            }
            let head = if params.is_empty() {
                eqn.prim.name()
            } else {
                format!("{}[{params}]", eqn.prim.name())
            };
            let lhs = if outs.is_empty() { "_".to_string() } else { outs.join(" ") };
            writeln!(body, "{pad}    {lhs} = {head} {}", args.join(" "))?;
        }
        let results: Vec<String> = p.outputs.iter().map(|a| self.atom(a)).collect();
        let consts: Vec<String> =
            self.consts.iter().map(|(n, a)| format!("{n}:{}", aval_text(&a.aval()))).collect();
        let tuple = if results.len() == 1 {
            format!("({},)", results[0])
        } else {
            format!("({})", results.join(", "))
        };
        write!(
            out,
            "{pad}{{ lambda {}; {}. let\n{body}{pad}  in {tuple} }}",
            join(&consts),
            join(&inputs)
        )
    }
}

fn join(items: &[String]) -> String {
    items.join(" ")
}
