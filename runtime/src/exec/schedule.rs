//! Scheduling: which steps of a plan run side by side.
//!
//! A reverse-mode pass gives each layer two products of the same size that read the same
//! cotangent and not each other: `x.T @ g` for the weights and `g @ w.T` for the layer's
//! input. Split over two threads, each product pays for its split (both threads pack the
//! operand the split shares; the halves finish apart); run side by side on a thread each,
//! neither does (see [`crate::exec::cpu::parts::side_by_side`]). This pass moves such a
//! second product up beside the first and pairs them.

use std::collections::HashSet;

use super::fusion::Step;
use crate::ir::{Program, Var};

/// Products with fewer multiply-adds run alone: the pair's hand-over to a second thread
/// would cost about as much as it saves (a 2^18 multiply-add product takes about 5 µs on
/// one core).
const PAIR_MIN_MACS: usize = 1 << 18;

/// A pair's larger product has at most this many times the multiply-adds of the smaller,
/// in percent. Side by side, the pair takes as long as its larger product on one thread;
/// one after the other on two threads, at about 0.92 of twice one thread's rate (a training
/// step's products), their sum over 1.84: pairing wins while the larger is under about 1.2
/// times the smaller.
const PAIR_MAX_RATIO_PERCENT: usize = 120;

/// How many steps past a product the pass looks for its partner.
const LOOK_AHEAD: usize = 16;

/// Pairs each product step with the next one of about its size that reads nothing the
/// steps between them define, moving that one up beside it; the other steps keep their
/// order.
pub fn pair_products(program: &Program, steps: Vec<Step>) -> Vec<Step> {
    let mut pending: Vec<Option<Step>> = steps.into_iter().map(Some).collect();
    let mut scheduled = Vec::with_capacity(pending.len());
    for i in 0..pending.len() {
        let Some(step) = pending[i].take() else { continue };
        let partner = match step {
            Step::Single(e) => {
                multiply_adds(program, e).and_then(|macs| partner(program, &pending, i, e, macs))
            }
            _ => None,
        };
        match (step, partner) {
            (Step::Single(first), Some(j)) => {
                let Some(Step::Single(second)) = pending[j].take() else {
                    unreachable!("a partner is a single equation")
                };
                scheduled.push(Step::Pair([first, second]));
            }
            (step, _) => scheduled.push(step),
        }
    }
    scheduled
}

/// The product step after step `i` (equation `first`, of `macs` multiply-adds) to run beside
/// it: of a like size, and reading nothing that `first` or the steps between define.
fn partner(
    program: &Program,
    pending: &[Option<Step>],
    i: usize,
    first: usize,
    macs: usize,
) -> Option<usize> {
    let mut defined: HashSet<Var> = program.equations[first].outputs.iter().copied().collect();
    for (j, step) in pending.iter().enumerate().skip(i + 1).take(LOOK_AHEAD) {
        let Some(step) = step else { continue };
        if let Step::Single(e) = step {
            let reads_defined = program.equations[*e]
                .inputs
                .iter()
                .any(|a| a.var().is_some_and(|v| defined.contains(&v)));
            let like = multiply_adds(program, *e).is_some_and(|other| like_sizes(macs, other));
            if like && !reads_defined {
                return Some(j);
            }
        }
        defined.extend(step_outputs(program, step));
    }
    None
}

/// The multiply-adds of equation `e` if it is a product large enough to pair.
fn multiply_adds(program: &Program, e: usize) -> Option<usize> {
    let eqn = &program.equations[e];
    let avals: Vec<_> = eqn.inputs.iter().map(|a| program.atom_aval(a)).collect();
    eqn.prim.multiply_adds(&avals).filter(|&macs| macs >= PAIR_MIN_MACS)
}

fn like_sizes(a: usize, b: usize) -> bool {
    a.max(b).saturating_mul(100) <= a.min(b).saturating_mul(PAIR_MAX_RATIO_PERCENT)
}

/// The variables a step defines.
fn step_outputs<'a>(program: &'a Program, step: &'a Step) -> Box<dyn Iterator<Item = Var> + 'a> {
    match step {
        Step::Single(e) => Box::new(program.equations[*e].outputs.iter().copied()),
        Step::Pair(es) => {
            Box::new(es.iter().flat_map(|e| program.equations[*e].outputs.iter().copied()))
        }
        Step::Fused(group) => Box::new(group.defined_vars()),
    }
}
