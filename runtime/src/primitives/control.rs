//! Control-flow and effect primitives: `cond` (branches as sub-programs), `while` (condition
//! and body as sub-programs) and `debug_print`.

use std::sync::Arc;

use super::bind;
use super::{describe, Aval, Primitive};
use super::{Reduce, ReduceOp};
use crate::array::Array;
use crate::dtype::DType;
use crate::ir::trace;
use crate::ir::{eval_program, Program};
use crate::transform::ad::ops;
use crate::transform::ad::{
    differentiable, jvp_eval, tangent_program, transpose_program, LinearArg, Tangent,
};
use crate::transform::batch::ops::{select_examples, to_dim, Batched};
use crate::transform::batch::{
    batch_eval, batch_program, batched_avals, batched_outputs, BatchAxis, BatchDim,
};

/// `cond`: runs `branches[index]` on the operands, where the first input is the index — a
/// bool (false picks branch 0, true branch 1) or an integer, clamped into range as JAX does.
/// Every branch takes the same operands and returns values of the same shapes and dtypes.
#[derive(Clone, Debug)]
pub struct Cond {
    pub branches: Vec<Arc<Program>>,
}

impl Primitive for Cond {
    /// Its branches' (body's) primitives run where their operands are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// A shared index: the branches are batched, agreeing on which outputs are batched. A
    /// batched index (a per-example predicate): every branch runs on all examples and each
    /// example's results are selected by its index, as JAX turns `cond` into `select`.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let Some(d) = dims[0] else {
            return self.batch_branches(args, dims, axis);
        };
        let (index, operands) = args.split_first().expect("cond has an index operand");
        let results: Vec<Vec<Array>> = self
            .branches
            .iter()
            .map(|b| {
                let (outs, out_dims) = batch_eval(b, operands, &dims[1..], axis);
                outs.iter().zip(out_dims).map(|(x, d)| to_dim(x, d, 0, axis.size)).collect()
            })
            .collect();
        let index = to_dim(index, Some(d), 0, axis.size);
        let mut outs = results[0].clone();
        for (k, branch) in results.iter().enumerate().skip(1) {
            let pick = self.picks(&index, k);
            for (out, candidate) in outs.iter_mut().zip(branch) {
                *out = select_examples(&pick, candidate, out);
            }
        }
        let n = outs.len();
        Ok((outs, vec![Some(0); n]))
    }

    fn name(&self) -> String {
        "cond".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let (index, operands) = inputs.split_first().ok_or("expected a predicate operand")?;
        if !index.shape.is_empty() || !(index.dtype.is_bool() || index.dtype.is_int()) {
            return Err(format!(
                "the predicate must be a 0-d bool (or integer index), got {index}; \
                 for elementwise choices use jnp::where"
            ));
        }
        let first = &self.branches[0];
        for (i, branch) in self.branches.iter().enumerate() {
            let takes = branch.input_avals();
            if !same_types(&takes, operands) {
                return Err(format!(
                    "branch {i} takes {} but the operands are {}",
                    describe(&takes),
                    describe(operands)
                ));
            }
        }
        let mut out = first.output_avals();
        for branch in &self.branches[1..] {
            let other = branch.output_avals();
            if !same_types(&out, &other) {
                return Err(format!(
                    "the branches must return values of the same shapes and dtypes, but one \
                     returns {} and another {}",
                    describe(&out),
                    describe(&other)
                ));
            }
            for (o, b) in out.iter_mut().zip(&other) {
                o.weak &= b.weak;
            }
        }
        Ok(out)
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let index = branch_index(inputs[0], self.branches.len());
        let operands: Vec<Array> = inputs[1..].iter().map(|a| (*a).clone()).collect();
        let results = eval_program(&self.branches[index], &operands);
        results.into_iter().zip(outputs).map(|(r, aval)| r.with_weak_type(aval.weak)).collect()
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        let n = self.branches.len();
        self.branches
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let label = match (n, i) {
                    (2, 0) => "false".to_string(),
                    (2, 1) => "true".to_string(),
                    _ => format!("branch {i}"),
                };
                (label, b.as_ref())
            })
            .collect()
    }

    fn has_effect(&self) -> bool {
        self.branches.iter().any(|b| has_effect(b))
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        Some(Arc::new(Cond { branches: programs.into_iter().map(Arc::new).collect() }))
    }

    /// The primal outputs come from this `cond`; the tangents from a second one whose
    /// branches are the branches' tangent programs (recomputing what they need), so the
    /// second is linear in the tangents and transposes branch by branch.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind(self, &refs);
        let nonzero: Vec<bool> = tangents[1..].iter().map(Option::is_some).collect();
        let branches =
            self.branches.iter().map(|b| Arc::new(tangent_program(b, &nonzero))).collect();
        let mut inputs = refs;
        inputs.extend(tangents[1..].iter().flatten());
        let tangents = ops::float_tangents(&outs, bind(&Cond { branches }, &inputs));
        Ok((outs, tangents))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(index) = args[0].known() else {
            return Err("the branch index cannot be differentiated".to_string());
        };
        let linear: Vec<bool> = args[1..].iter().map(LinearArg::is_linear).collect();
        let branches =
            self.branches.iter().map(|b| Arc::new(transpose_program(b, &linear))).collect();
        let out_avals = self.branches[0].output_avals();
        let cts = ops::float_cts(cts, &out_avals);
        let mut inputs: Vec<&Array> = vec![index];
        inputs.extend(args[1..].iter().filter_map(LinearArg::known));
        inputs.extend(cts.iter());
        let mut result = vec![None];
        result.extend(ops::linear_cts(&args[1..], bind(&Cond { branches }, &inputs)));
        Ok(result)
    }
}

impl Cond {
    /// The `cond` with every branch batched, for an index shared by all examples; outputs
    /// that any branch batches are batched in all of them, so the branches agree.
    fn batch_branches(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let operand_dims = &dims[1..];
        let mut force = vec![false; self.branches[0].outputs.len()];
        for branch in &self.branches {
            for (f, b) in force.iter_mut().zip(batched_outputs(branch, operand_dims, axis)) {
                *f |= b;
            }
        }
        let batched: Vec<(Program, Vec<BatchDim>)> =
            self.branches.iter().map(|b| batch_program(b, operand_dims, axis, &force)).collect();
        let out_dims = batched[0].1.clone();
        let branches = batched.into_iter().map(|(p, _)| Arc::new(p)).collect();
        let refs: Vec<&Array> = args.iter().collect();
        Ok((bind(&Cond { branches }, &refs), out_dims))
    }

    /// Which examples take branch `k`, for per-example indices (`false`/`true` for 0/1,
    /// integers clamped into range).
    fn picks(&self, index: &Array, k: usize) -> Array {
        if index.dtype() == DType::Bool {
            return if k == 1 { index.clone() } else { ops::unary(super::UnaryOp::Not, index) };
        }
        let last = ops::scalar(index, (self.branches.len() - 1) as f64);
        let low = ops::binary(super::BinaryOp::Max, index, &ops::scalar(index, 0.0));
        let clamped = ops::binary(super::BinaryOp::Min, &low, &last);
        ops::eq(&clamped, &ops::scalar(index, k as f64))
    }
}

/// Whether a sub-program does something besides computing (prints), so the equation that
/// runs it must be kept, and not folded, even when its outputs are unused.
fn has_effect(program: &Program) -> bool {
    program.equations.iter().any(|e| e.prim.has_effect())
}

fn same_types(a: &[Aval], b: &[Aval]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.shape == y.shape && x.dtype == y.dtype)
}

/// The branch an index operand picks: false/true are 0/1, integers are clamped.
fn branch_index(index: &Array, n: usize) -> usize {
    if index.dtype() == DType::Bool {
        return usize::from(index.item::<bool>().expect("checked by the shape rule"));
    }
    // Read on the host: a device may have no 64-bit integers.
    let index = index.to_host().expect("a concrete index can be read");
    let i = crate::jnp::convert(&index, DType::I64, false)
        .item::<i64>()
        .expect("checked by the shape rule");
    i.clamp(0, n as i64 - 1) as usize
}

/// `while`: runs `body` on the carry while `cond` holds. Inputs are the carry, then the
/// values the condition captured (`cond_consts` of them), then those the body captured; the
/// condition takes `carry ++ cond consts` and returns a 0-d bool, the body takes
/// `carry ++ body consts` and returns the next carry.
#[derive(Clone, Debug)]
pub struct WhileLoop {
    pub cond: Arc<Program>,
    pub body: Arc<Program>,
    pub carry: usize,
    pub cond_consts: usize,
}

impl Primitive for WhileLoop {
    /// Its branches' (body's) primitives run where their operands are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// The carry is batched wherever the body makes it so (found by iterating to a fixed
    /// point). A batched condition runs the loop until every example is done, each example's
    /// carry frozen once its own condition fails, as JAX's batched `while_loop` does.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let n = self.carry;
        let (carry, consts) = args.split_at(n);
        let (carry_dims, const_dims) = dims.split_at(n);
        let (cond_const_dims, body_const_dims) = const_dims.split_at(self.cond_consts);
        let mut batched = self.batched_carry(carry_dims, body_const_dims, axis);
        let predicate_batched =
            batched_outputs(&self.cond, &with(&batched, cond_const_dims), axis)[0];
        if predicate_batched {
            batched = vec![true; n];
        }
        let carry: Vec<Array> = carry
            .iter()
            .zip(carry_dims)
            .zip(&batched)
            .map(|((x, d), &b)| if b { to_dim(x, *d, 0, axis.size) } else { x.clone() })
            .collect();
        let cond_dims = with(&batched, cond_const_dims);
        let body_dims = with(&batched, body_const_dims);
        let out_dims: Vec<BatchDim> = batched.iter().map(|&b| b.then_some(0)).collect();
        let mut inputs: Vec<&Array> = carry.iter().collect();
        if !predicate_batched {
            let (cond, _) = batch_program(&self.cond, &cond_dims, axis, &[]);
            let (body, _) = batch_program(&self.body, &body_dims, axis, &batched);
            inputs.extend(consts);
            let lp = WhileLoop { cond: Arc::new(cond), body: Arc::new(body), ..*self };
            return Ok((bind(&lp, &inputs), out_dims));
        }
        let (cond, body) = self.batched_predicate_programs(&cond_dims, &body_dims, axis, consts);
        let (cond_consts, _) = consts.split_at(self.cond_consts);
        inputs.extend(cond_consts);
        inputs.extend(consts);
        let lp = WhileLoop { cond: Arc::new(cond), body: Arc::new(body), ..*self };
        Ok((bind(&lp, &inputs), out_dims))
    }

    fn name(&self) -> String {
        "while".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        if inputs.len() < self.carry + self.cond_consts {
            return Err(format!("expected at least {} operands", self.carry + self.cond_consts));
        }
        let carry = &inputs[..self.carry];
        let cond_out = self.cond.output_avals();
        if cond_out.len() != 1 || !cond_out[0].shape.is_empty() || !cond_out[0].dtype.is_bool() {
            return Err(format!(
                "the condition must return a 0-d bool, got {}",
                describe(&cond_out)
            ));
        }
        let body_out = self.body.output_avals();
        if !same_types(carry, &body_out) {
            return Err(format!(
                "the body must return the carry's types: the carry is {} but the body returns {}",
                describe(carry),
                describe(&body_out)
            ));
        }
        Ok(carry.to_vec())
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (carry, consts) = inputs.split_at(self.carry);
        let (cond_consts, body_consts) = consts.split_at(self.cond_consts);
        let with = |carry: &[Array], consts: &[&Array]| -> Vec<Array> {
            carry.iter().cloned().chain(consts.iter().map(|c| (*c).clone())).collect()
        };
        let mut carry: Vec<Array> = carry.iter().map(|c| (*c).clone()).collect();
        loop {
            let holds = eval_program(&self.cond, &with(&carry, cond_consts));
            if !holds[0].item::<bool>().expect("the condition returns a 0-d bool") {
                break;
            }
            carry = eval_program(&self.body, &with(&carry, body_consts));
        }
        carry.into_iter().zip(outputs).map(|(c, aval)| c.with_weak_type(aval.weak)).collect()
    }

    fn subprograms(&self) -> Vec<(String, &Program)> {
        vec![("cond".to_string(), self.cond.as_ref()), ("body".to_string(), self.body.as_ref())]
    }

    fn has_effect(&self) -> bool {
        has_effect(&self.cond) || has_effect(&self.body)
    }

    fn with_subprograms(&self, programs: Vec<Program>) -> Option<Arc<dyn Primitive>> {
        let [cond, body]: [Program; 2] = programs.try_into().ok()?;
        Some(Arc::new(WhileLoop { cond: Arc::new(cond), body: Arc::new(body), ..self.clone() }))
    }

    /// Forward mode carries the tangents alongside the carry, in a second loop that
    /// recomputes the primal one (whose outputs are the primal results).
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let refs: Vec<&Array> = primals.iter().collect();
        let outs = bind(self, &refs);
        let n = self.carry;
        let (carry, consts) = primals.split_at(n);
        let (cond_consts, body_consts) = consts.split_at(self.cond_consts);
        let body_tangents = &tangents[n + self.cond_consts..];
        let carry_avals: Vec<Aval> = carry.iter().map(Array::aval).collect();
        let float: Vec<bool> = carry_avals.iter().map(differentiable).collect();
        let carry_tangents: Vec<Array> = tangents[..n]
            .iter()
            .zip(&carry_avals)
            .zip(&float)
            .filter(|(_, f)| **f)
            .map(|((t, a), _)| ops::instantiate(t, a))
            .collect();
        let nt = carry_tangents.len();
        let const_tangents: Vec<&Array> = body_tangents.iter().flatten().collect();
        let tangent_avals: Vec<Aval> = carry_tangents.iter().map(Array::aval).collect();
        let cond = self.cond.clone();
        let cond_avals: Vec<Aval> = carry_avals
            .iter()
            .chain(&tangent_avals)
            .cloned()
            .chain(cond_consts.iter().map(Array::aval))
            .collect();
        let cond = trace::trace_with(&cond_avals, |ins| {
            let mut args: Vec<Array> = ins[..n].to_vec();
            args.extend_from_slice(&ins[n + nt..]);
            (eval_program(&cond, &args), ())
        })
        .program;
        let body = self.body.clone();
        let body_nonzero: Vec<bool> = body_tangents.iter().map(Option::is_some).collect();
        let mut body_avals = cond_avals[..n + nt].to_vec();
        body_avals.extend(body_consts.iter().map(Array::aval));
        body_avals.extend(const_tangents.iter().map(|a| a.aval()));
        let body = trace::trace_with(&body_avals, |ins| {
            let (c, rest) = ins.split_at(n);
            let (ct, rest) = rest.split_at(nt);
            let (k, kt) = rest.split_at(body_consts.len());
            let mut ct = ct.iter();
            let mut kt = kt.iter();
            let mut ts: Vec<Tangent> =
                float.iter().map(|&f| if f { ct.next().cloned() } else { None }).collect();
            ts.extend(body_nonzero.iter().map(|&nz| if nz { kt.next().cloned() } else { None }));
            let args: Vec<Array> = c.iter().chain(k).cloned().collect();
            let (next, next_t) = jvp_eval(&body, &args, &ts);
            let mut result = next.clone();
            result.extend(
                next_t
                    .iter()
                    .zip(&next)
                    .filter(|(_, o)| differentiable(&o.aval()))
                    .map(|(t, o)| ops::instantiate(t, &o.aval())),
            );
            (result, ())
        })
        .program;
        let joint = WhileLoop {
            cond: Arc::new(cond),
            body: Arc::new(body),
            carry: n + nt,
            cond_consts: self.cond_consts,
        };
        let mut inputs: Vec<&Array> = carry.iter().collect();
        inputs.extend(carry_tangents.iter());
        inputs.extend(cond_consts.iter());
        inputs.extend(body_consts.iter());
        inputs.extend(const_tangents);
        let mut results = bind(&joint, &inputs).into_iter().skip(n);
        let tangents = float.iter().map(|&f| if f { results.next() } else { None }).collect();
        Ok((outs, tangents))
    }

    fn transpose(&self, _cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        Err("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop \
             with a traced trip count (lax::while_loop / lax::fori_loop). Use forward mode \
             (jvp, jacfwd), or a Rust loop with a static trip count, which is unrolled"
            .to_string())
    }
}

/// Batch axes for a carry batched where `batched` says (in front), then other operands'.
fn with(batched: &[bool], rest: &[BatchDim]) -> Vec<BatchDim> {
    batched.iter().map(|&b| b.then_some(0)).chain(rest.iter().copied()).collect()
}

impl WhileLoop {
    /// Which carry elements are batched: those batched on entry, and those the body makes
    /// batched from them, iterated to a fixed point.
    fn batched_carry(
        &self,
        carry: &[BatchDim],
        consts: &[BatchDim],
        axis: &BatchAxis,
    ) -> Vec<bool> {
        let mut batched: Vec<bool> = carry.iter().map(Option::is_some).collect();
        loop {
            let outs = batched_outputs(&self.body, &with(&batched, consts), axis);
            let next: Vec<bool> = batched.iter().zip(&outs).map(|(a, b)| *a || *b).collect();
            if next == batched {
                return batched;
            }
            batched = next;
        }
    }

    /// The loop for a per-example condition: it continues while any example's condition
    /// holds, and the body leaves the carry of finished examples unchanged. The body then
    /// needs the condition's constants too: its constants are the condition's, then its own.
    fn batched_predicate_programs(
        &self,
        cond_dims: &[BatchDim],
        body_dims: &[BatchDim],
        axis: &BatchAxis,
        consts: &[Array],
    ) -> (Program, Program) {
        let n = self.carry;
        let (cond_consts, body_consts) = consts.split_at(self.cond_consts);
        let avals_of = |xs: &[Array]| -> Vec<Aval> { xs.iter().map(Array::aval).collect() };
        let carry = self.body.output_avals();
        let carry_avals = batched_avals(&carry, &vec![Some(0); carry.len()], axis.size);
        let per_example = |ins: &[Array]| -> Array {
            let (p, d) = batch_eval(&self.cond, ins, cond_dims, axis);
            to_dim(&p[0], d[0], 0, axis.size)
        };
        let mut cond_avals = carry_avals.clone();
        cond_avals.extend(avals_of(cond_consts));
        let cond = trace::trace_with(&cond_avals, |ins| {
            let any = Reduce { op: ReduceOp::Or, axes: vec![0] };
            (vec![super::bind1(&any, &[&per_example(&ins)])], ())
        })
        .program;
        let mut body_avals = carry_avals;
        body_avals.extend(avals_of(cond_consts));
        body_avals.extend(avals_of(body_consts));
        let body = trace::trace_with(&body_avals, |ins| {
            let (carry, rest) = ins.split_at(n);
            let (cond_consts, body_consts) = rest.split_at(self.cond_consts);
            let cond_args: Vec<Array> = carry.iter().chain(cond_consts).cloned().collect();
            let live = per_example(&cond_args);
            let body_args: Vec<Array> = carry.iter().chain(body_consts).cloned().collect();
            let (next, next_dims) = batch_eval(&self.body, &body_args, body_dims, axis);
            let outs = next
                .iter()
                .zip(next_dims)
                .zip(carry)
                .map(|((x, d), old)| select_examples(&live, &to_dim(x, d, 0, axis.size), old))
                .collect();
            (outs, ())
        })
        .program;
        (cond, body)
    }
}

/// `debug_print`: prints its operands at run time, inside traced code too
/// (`jax.debug.print`). The format has one `{}` per operand.
#[derive(Clone, Debug)]
pub struct DebugPrint {
    pub format: String,
}

impl Primitive for DebugPrint {
    /// Printing reads values wherever they are.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    /// Prints the batched values, all examples at once.
    fn batch(&self, args: &[Array], _dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let refs: Vec<&Array> = args.iter().collect();
        bind(self, &refs);
        Ok((Vec::new(), Vec::new()))
    }

    fn name(&self) -> String {
        "debug_print".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        if let Some(bad) = unsupported_placeholder(&self.format) {
            return Err(format!(
                "the format {:?} uses `{bad}`; debug_print fills only plain `{{}}` placeholders, \
                 one per value",
                self.format
            ));
        }
        let holes = format_pieces(&self.format).len() - 1;
        if holes != inputs.len() {
            return Err(format!(
                "the format {:?} has {holes} `{{}}` placeholders but {} values were given",
                self.format,
                inputs.len()
            ));
        }
        Ok(Vec::new())
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        let pieces = format_pieces(&self.format);
        let mut text = pieces[0].clone();
        for (value, piece) in inputs.iter().zip(&pieces[1..]) {
            text.push_str(&value.to_string());
            text.push_str(piece);
        }
        println!("{text}");
        Vec::new()
    }

    fn params(&self) -> String {
        format!("fmt={:?}", self.format)
    }

    fn has_effect(&self) -> bool {
        true
    }
}

/// The first placeholder other than `{}` (`{x}`, `{:.3}`), which debug_print does not fill.
fn unsupported_placeholder(format: &str) -> Option<String> {
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(tail) = after.strip_prefix('{').or_else(|| after.strip_prefix('}')) {
            rest = tail;
            continue;
        }
        let end = after.find('}').map_or(after.len(), |e| e + 1);
        return Some(format!("{{{}", &after[..end]));
    }
    None
}

/// The literal text around each `{}` of a format (`{{` and `}}` are escaped braces).
fn format_pieces(format: &str) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('{', Some('{')) | ('}', Some('}')) => {
                chars.next();
                pieces.last_mut().expect("never empty").push(c);
            }
            ('{', Some('}')) => {
                chars.next();
                pieces.push(String::new());
            }
            _ => pieces.last_mut().expect("never empty").push(c),
        }
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::format_pieces;

    #[test]
    fn only_plain_placeholders_are_filled() {
        assert_eq!(super::unsupported_placeholder("x = {}, {{literal}}"), None);
        assert_eq!(super::unsupported_placeholder("x = {x}"), Some("{x}".to_string()));
        assert_eq!(super::unsupported_placeholder("{} {:.3}"), Some("{:.3}".to_string()));
    }

    #[test]
    fn format_pieces_split_on_placeholders() {
        assert_eq!(format_pieces("x = {}, y = {}!"), vec!["x = ", ", y = ", "!"]);
        assert_eq!(format_pieces("{{literal}} {}"), vec!["{literal} ", ""]);
        assert_eq!(format_pieces("none"), vec!["none"]);
    }
}
