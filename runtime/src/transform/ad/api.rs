//! The differentiation transforms over pytrees: what `#[grad]`, `#[jvp]`, `#[jacrev]`, ... call.
//!
//! Each takes the function's traced parameters as [`Flat`] trees (leaves and structure) and
//! the function itself as a closure over rebuilt parameters, traces it once, transforms the
//! program and returns the result as a `Flat`, whose structure follows from the arguments'
//! and the output's (a gradient has its argument's structure). The attribute macros rebuild
//! the declared return type from it; stacked attributes nest these calls.

use super::{differentiable, jvp_eval, linearize, ops, Linearized, Tangent};
use crate::array::Array;
use crate::ir::{trace, Program};
use crate::jnp;
use crate::primitives::Aval;
use crate::transform::batch::{self, BatchDim};
use crate::tree::{self, Node, Tree, TreeDef, Unflatten};

/// A pytree as its leaves and structure: a transform's argument or result whose Rust type
/// is known only to the caller.
#[derive(Clone, Debug)]
pub struct Flat {
    pub leaves: Vec<Array>,
    pub def: TreeDef,
}

impl Flat {
    /// Flattens a tree.
    pub fn of<T: Tree + ?Sized>(value: &T) -> Flat {
        let (leaves, def) = tree::flatten(value);
        Flat { leaves, def }
    }

    /// Rebuilds a value of type `T`; panics when the structure does not describe a `T`.
    #[track_caller]
    pub fn into_tree<T: Unflatten>(self) -> T {
        tree::unflatten(&self.def, self.leaves)
    }

    /// A tuple of these trees.
    pub fn tuple(parts: Vec<Flat>) -> Flat {
        let defs: Vec<TreeDef> = parts.iter().map(|p| p.def.clone()).collect();
        Flat {
            leaves: parts.into_iter().flat_map(|p| p.leaves).collect(),
            def: TreeDef::tuple(&defs),
        }
    }

    /// The elements of a tuple tree, or `None` when this is not a tuple.
    pub fn into_elements(self) -> Option<Vec<Flat>> {
        let defs = self.def.tuple_elements()?;
        let mut leaves = self.leaves.into_iter();
        Some(
            defs.into_iter()
                .map(|def| Flat { leaves: leaves.by_ref().take(def.num_leaves()).collect(), def })
                .collect(),
        )
    }
}

impl Tree for Flat {
    fn flatten_into(&self, def: &mut TreeDef, leaves: &mut Vec<Array>) {
        def.extend(&self.def);
        leaves.extend(self.leaves.iter().cloned());
    }
}

/// A function traced for differentiation: its program takes the parameters' leaves, then the
/// outer values it captured.
pub(super) struct Body {
    pub(super) program: Program,
    pub(super) primals: Vec<Array>,
    pub(super) out_def: TreeDef,
}

pub(super) fn trace_body<R: Tree>(params: &[Flat], body: impl FnOnce(Vec<Flat>) -> R) -> Body {
    let avals: Vec<Aval> = params.iter().flat_map(|p| p.leaves.iter().map(Array::aval)).collect();
    let traced = trace_params(params, &avals, body);
    let mut primals: Vec<Array> = params.iter().flat_map(|p| p.leaves.iter().cloned()).collect();
    primals.extend(traced.captured);
    Body { program: traced.program, primals, out_def: traced.extra }
}

/// Traces `body` on parameters of `params`' structures whose leaves have `avals` (their own,
/// or one example's under vmap); the result's structure is the trace's extra value.
pub(crate) fn trace_params<R: Tree>(
    params: &[Flat],
    avals: &[Aval],
    body: impl FnOnce(Vec<Flat>) -> R,
) -> trace::Traced<TreeDef> {
    trace::trace_with(avals, |ins| {
        let mut ins = ins.into_iter();
        let rebuilt = params
            .iter()
            .map(|p| Flat {
                leaves: ins.by_ref().take(p.leaves.len()).collect(),
                def: p.def.clone(),
            })
            .collect();
        let out = Flat::of(&body(rebuilt));
        (out.leaves, out.def)
    })
}

/// Which parameters a transform differentiates, and how they are named in messages.
#[derive(Clone, Copy, Debug)]
pub struct Wrt<'a> {
    /// The transform, for messages (`grad`, `jacrev`, ...).
    pub transform: &'static str,
    /// Positions among the traced parameters.
    pub argnums: &'a [usize],
    /// The parameters' names, for messages.
    pub names: &'a [&'static str],
}

impl Wrt<'_> {
    /// The mask over the program's inputs of the leaves to differentiate, checking they are
    /// floating point.
    #[track_caller]
    fn mask(&self, params: &[Flat], num_inputs: usize) -> Vec<bool> {
        let mut mask = Vec::with_capacity(num_inputs);
        for (i, p) in params.iter().enumerate() {
            let wanted = self.argnums.contains(&i);
            for leaf in &p.leaves {
                if wanted && !differentiable(&leaf.aval()) {
                    panic!(
                        "{}: {} requires real-valued inputs (a floating-point dtype), but argument \
                         `{}` has a leaf {}; integer and boolean arguments cannot be \
                         differentiated (convert with .astype(DType::F32), or leave the argument \
                         out of argnums)",
                        self.transform,
                        self.transform,
                        self.names.get(i).copied().unwrap_or("?"),
                        leaf.aval()
                    );
                }
                mask.push(wanted);
            }
        }
        mask.resize(num_inputs, false);
        mask
    }

    /// Splits the differentiated leaves' values back into one tree per argnum.
    fn rebuild(&self, params: &[Flat], mut values: std::vec::IntoIter<Array>) -> Vec<Flat> {
        let mut out = Vec::new();
        for (i, p) in params.iter().enumerate() {
            if self.argnums.contains(&i) {
                let leaves = p
                    .leaves
                    .iter()
                    .map(|primal| {
                        let v = values.next().expect("one value per differentiated leaf");
                        v.with_weak_type(primal.is_weak())
                    })
                    .collect();
                out.push((i, Flat { leaves, def: p.def.clone() }));
            }
        }
        // In argnums order, which may differ from parameter order.
        self.argnums
            .iter()
            .map(|a| out.iter().find(|(i, _)| i == a).expect("argnums are parameters").1.clone())
            .collect()
    }
}

/// The gradient of a scalar function (`jax.grad`): one tree per argnum (a tuple of them when
/// `tuple`), plus the auxiliary output when `has_aux` (the function then returns
/// `(value, aux)` and the result is `(grads, aux)`).
#[track_caller]
pub fn grad<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    has_aux: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    let (_value, grads, aux) = value_and_grad_parts(wrt, tuple, has_aux, params, body);
    match aux {
        Some(aux) => Flat::tuple(vec![grads, aux]),
        None => grads,
    }
}

/// `jax.value_and_grad`: `(value, grads)`, or `((value, aux), grads)` with `has_aux`.
#[track_caller]
pub fn value_and_grad<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    has_aux: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    let (value, grads, aux) = value_and_grad_parts(wrt, tuple, has_aux, params, body);
    let value = match aux {
        Some(aux) => Flat::tuple(vec![value, aux]),
        None => value,
    };
    Flat::tuple(vec![value, grads])
}

#[track_caller]
fn value_and_grad_parts<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    has_aux: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> (Flat, Flat, Option<Flat>) {
    let body = trace_body(&params, body);
    let mask = wrt.mask(&params, body.primals.len());
    let (value_def, aux_def) = if has_aux {
        match body.out_def.tuple_elements() {
            Some(parts) if parts.len() == 2 => (parts[0].clone(), Some(parts[1].clone())),
            _ => panic!(
                "{}: with has_aux the function must return a pair (value, aux), but it returned {}",
                wrt.transform, body.out_def
            ),
        }
    } else {
        (body.out_def.clone(), None)
    };
    let out_avals = body.program.output_avals();
    let value_aval = &out_avals[0];
    // Real outputs only, as JAX's `grad` without `holomorphic`.
    if value_def.num_leaves() != 1 || !value_aval.shape.is_empty() || !value_aval.dtype.is_float() {
        let got = if value_def.num_leaves() == 1 {
            format!("an output {value_aval}")
        } else {
            format!("an output of structure {value_def}")
        };
        panic!(
            "{}: the gradient is only defined for functions with a scalar (0-d) floating-point \
             output, but the function has {got}; reduce it (for example with .sum()), or use \
             jacrev/vjp for non-scalar outputs",
            wrt.transform
        );
    }
    let lin = linearize(&body.program, &body.primals, &mask);
    let mut cts: Vec<Tangent> = vec![None; out_avals.len()];
    cts[0] = Some(ops::scalar(&lin.outputs[0], 1.0).with_weak_type(false));
    let grads = wrt.rebuild(&params, lin.transpose(&cts).into_iter());
    let grads =
        if tuple { Flat::tuple(grads) } else { grads.into_iter().next().expect("one argnum") };
    let mut outs = lin.outputs.into_iter();
    let value = Flat { leaves: vec![outs.next().expect("a value")], def: value_def };
    let aux = aux_def.map(|def| Flat { leaves: outs.collect(), def });
    (value, grads, aux)
}

/// `jax.jvp`: the function's output at the primals and its directional derivative along the
/// tangents (one tangent tree per primal, of the same structure and types), as `(out, tangent)`.
#[track_caller]
pub fn jvp<R: Tree>(
    names: &[&'static str],
    primals: Vec<Flat>,
    tangents: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    let mut tangent_leaves: Vec<Tangent> = Vec::new();
    for ((p, t), name) in
        primals.iter().zip(&tangents).zip(names.iter().chain(std::iter::repeat(&"?")))
    {
        if p.def != t.def {
            panic!(
                "jvp: the tangent of `{name}` has structure {} but the primal has {}",
                t.def, p.def
            );
        }
        for (pl, tl) in p.leaves.iter().zip(&t.leaves) {
            if pl.shape() != tl.shape() || pl.dtype() != tl.dtype() {
                panic!(
                    "jvp: primal and tangent arguments must match in shape and dtype, but `{name}` \
                     has a primal {} and a tangent {}",
                    pl.aval(),
                    tl.aval()
                );
            }
            tangent_leaves.push(differentiable(&pl.aval()).then(|| tl.clone()));
        }
    }
    let body = trace_body(&primals, body);
    tangent_leaves.resize(body.primals.len(), None);
    let (outs, out_tangents) = jvp_eval(&body.program, &body.primals, &tangent_leaves);
    let out_tangents =
        out_tangents.iter().zip(&outs).map(|(t, o)| ops::instantiate(t, &o.aval())).collect();
    Flat::tuple(vec![
        Flat { leaves: outs, def: body.out_def.clone() },
        Flat { leaves: out_tangents, def: body.out_def },
    ])
}

/// `jax.vjp` applied at once: the cotangents of every traced parameter (a tuple of them when
/// there are several) for the output cotangent `ct`, which has the output's structure.
#[track_caller]
pub fn vjp<R: Tree>(
    names: &[&'static str],
    primals: Vec<Flat>,
    ct: Flat,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    let body = trace_body(&primals, body);
    if ct.def != body.out_def {
        panic!(
            "vjp: the cotangent has structure {} but the function's output has {}",
            ct.def, body.out_def
        );
    }
    for (c, o) in ct.leaves.iter().zip(body.program.output_avals()) {
        if c.shape() != o.shape.as_slice() || c.dtype() != o.dtype {
            panic!("vjp: the cotangent {} does not match the output {o}", c.aval());
        }
    }
    let argnums: Vec<usize> = (0..primals.len()).collect();
    let mut mask: Vec<bool> =
        primals.iter().flat_map(|p| p.leaves.iter().map(|l| differentiable(&l.aval()))).collect();
    mask.resize(body.primals.len(), false);
    let lin = linearize(&body.program, &body.primals, &mask);
    let cts: Vec<Tangent> = ct.leaves.into_iter().map(Some).collect();
    let mut in_cts = lin.transpose(&cts).into_iter();
    // Integer leaves have no cotangent; they get zeros of their own type.
    let all: Vec<Array> = primals
        .iter()
        .flat_map(|p| p.leaves.iter())
        .map(|l| {
            if differentiable(&l.aval()) {
                in_cts.next().expect("a cotangent")
            } else {
                ops::zeros(&l.aval())
            }
        })
        .collect();
    let wrt = Wrt { transform: "vjp", argnums: &argnums, names };
    let parts = wrt.rebuild(&primals, all.into_iter());
    if parts.len() == 1 {
        parts.into_iter().next().expect("one part")
    } else {
        Flat::tuple(parts)
    }
}

/// `jax.jacfwd`: column by column, pushing each input basis vector forward through the
/// linearized function. With several argnums (`tuple`), a tuple with one jacobian per argnum.
#[track_caller]
pub fn jacfwd<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    jacobian(wrt, tuple, params, body, Mode::Forward)
}

/// `jax.jacrev`: row by row, pulling each output basis vector back. With several argnums
/// (`tuple`), a tuple with one jacobian per argnum.
#[track_caller]
pub fn jacrev<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    jacobian(wrt, tuple, params, body, Mode::Reverse)
}

/// `jax.hessian`: `jacfwd(jacrev(f))`; with several argnums (`tuple`), a tuple of tuples
/// (block `[i][j]` differentiates by argnum `i`, then by argnum `j`).
#[track_caller]
pub fn hessian<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
) -> Flat {
    let wrt = Wrt { transform: "hessian", ..wrt };
    jacfwd(wrt, tuple, params, move |p| jacrev(wrt, tuple, p, body))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Forward,
    Reverse,
}

/// The dense jacobian as JAX nests it: the output's structure, each of its leaves replaced by
/// the differentiated arguments' structure (a tuple of them when `tuple`), whose leaves are
/// the blocks `d out_leaf / d in_leaf`, shaped `out_leaf.shape ++ in_leaf.shape`.
#[track_caller]
fn jacobian<R: Tree>(
    wrt: Wrt<'_>,
    tuple: bool,
    params: Vec<Flat>,
    body: impl FnOnce(Vec<Flat>) -> R,
    mode: Mode,
) -> Flat {
    let body = trace_body(&params, body);
    let mask = wrt.mask(&params, body.primals.len());
    // The differentiated leaves in parameter order (the order of the linearized inputs).
    let inputs: Vec<Aval> = params
        .iter()
        .enumerate()
        .filter(|(i, _)| wrt.argnums.contains(i))
        .flat_map(|(_, p)| p.leaves.iter().map(Array::aval))
        .collect();
    let outputs = body.program.output_avals();
    if let Some(o) = outputs.iter().find(|o| !o.dtype.is_float()) {
        panic!("{}: requires real-valued outputs, but the function returns {o}", wrt.transform);
    }
    if let Some(i) = inputs.iter().find(|i| i.dtype.is_complex()) {
        panic!(
            "{}: complex inputs are not supported (JAX needs holomorphic=True for them), got {i}",
            wrt.transform
        );
    }
    let lin = linearize(&body.program, &body.primals, &mask);
    // blocks[o][k]: d output o / d input k, of shape out_o ++ in_k.
    let blocks: Vec<Vec<Array>> = match mode {
        Mode::Forward => forward_blocks(&lin, &inputs, &outputs),
        Mode::Reverse => reverse_blocks(&lin, &inputs, &outputs),
    };
    let (order, in_def) = argnums_layout(&wrt, tuple, &params);
    let leaves = blocks.into_iter().flat_map(|row| order.iter().map(move |&k| row[k].clone()));
    Flat { leaves: leaves.collect(), def: replace_leaves(&body.out_def, &in_def) }
}

/// The differentiated arguments' structure (one argument's, or a tuple of them in argnums
/// order), and for each of its leaves the leaf's position in parameter order.
fn argnums_layout(wrt: &Wrt<'_>, tuple: bool, params: &[Flat]) -> (Vec<usize>, TreeDef) {
    let mut start = Vec::new();
    let mut next = 0;
    for (i, p) in params.iter().enumerate() {
        start.push(next);
        if wrt.argnums.contains(&i) {
            next += p.leaves.len();
        }
    }
    let order = wrt
        .argnums
        .iter()
        .flat_map(|&a| (0..params[a].leaves.len()).map(move |j| (a, j)))
        .map(|(a, j)| start[a] + j)
        .collect();
    let defs: Vec<TreeDef> = wrt.argnums.iter().map(|&a| params[a].def.clone()).collect();
    let def = if tuple { TreeDef::tuple(&defs) } else { defs[0].clone() };
    (order, def)
}

/// `outer` with each of its leaves replaced by a tree of structure `inner`.
fn replace_leaves(outer: &TreeDef, inner: &TreeDef) -> TreeDef {
    let mut def = TreeDef::new();
    for node in outer.nodes() {
        match node {
            Node::Leaf => def.extend(inner),
            other => def.push(other.clone()),
        }
    }
    def
}

/// The `n` one-hot arrays of `aval`'s type and shape, stacked: `[n] ++ shape`, where `n` is
/// the number of elements (the identity, reshaped).
fn basis(aval: &Aval) -> Array {
    let n: usize = aval.shape.iter().product();
    let shape: Vec<usize> = std::iter::once(n).chain(aval.shape.iter().copied()).collect();
    ops::reshape(&jnp::eye_dtype(n, n, 0, aval.dtype), &shape)
}

/// Batched arguments for one value per aval: the basis of value `k` (batched in front), zeros
/// (shared by the whole batch) for the others.
fn basis_of(avals: &[Aval], k: usize) -> (Vec<Array>, Vec<BatchDim>) {
    avals
        .iter()
        .enumerate()
        .map(|(j, a)| if j == k { (basis(a), Some(0)) } else { (ops::zeros(a), None) })
        .unzip()
}

/// `[n] ++ a` batched results as the block `a ++ b` (`b` has `n` elements), the batch axis
/// moved last for forward mode (`jax.jacfwd`'s `out_axes=-1`) or kept first for reverse mode.
fn block(batched: &Array, a: &Aval, b: &Aval, forward: bool) -> Array {
    let shape: Vec<usize> = a.shape.iter().chain(&b.shape).copied().collect();
    if b.shape.iter().product::<usize>() == 0 {
        return ops::zeros(&Aval { shape, dtype: batched.dtype(), weak: false });
    }
    let arranged =
        if forward { batch::ops::move_axis(batched, 0, a.shape.len()) } else { batched.clone() };
    ops::reshape(&arranged, &shape)
}

/// Every column of the jacobian in one batched forward pass per input: the tangents are the
/// input's basis, batched.
fn forward_blocks(lin: &Linearized, inputs: &[Aval], outputs: &[Aval]) -> Vec<Vec<Array>> {
    let mut blocks: Vec<Vec<Array>> = vec![Vec::new(); outputs.len()];
    for (k, input) in inputs.iter().enumerate() {
        let n: usize = input.shape.iter().product();
        let (tangents, dims) = basis_of(inputs, k);
        let columns = lin.apply_batched(&tangents, &dims, n);
        for (o, col) in columns.iter().enumerate() {
            blocks[o].push(block(col, &outputs[o], input, true));
        }
    }
    blocks
}

/// Every row of the jacobian in one batched backward pass per output: the cotangents are the
/// output's basis, batched.
fn reverse_blocks(lin: &Linearized, inputs: &[Aval], outputs: &[Aval]) -> Vec<Vec<Array>> {
    let mut blocks: Vec<Vec<Array>> = Vec::new();
    for (o, output) in outputs.iter().enumerate() {
        let m: usize = output.shape.iter().product();
        let (cts, dims) = basis_of(outputs, o);
        let rows = lin.transpose_batched(&cts, &dims, m);
        blocks.push(
            rows.iter().zip(inputs).map(|(r, input)| block(r, output, input, false)).collect(),
        );
    }
    blocks
}

/// `jax.grad` of a function of one array, for use from plain Rust (the attribute macros are
/// the usual way): the gradient of a scalar-valued `f` at `x`. Nests: `f` may itself call
/// `grad_of`.
///
/// ```
/// use rjax_runtime::{transform::ad::api::grad_of, Array};
/// let g = grad_of(|x| x.tanh(), &Array::from(1.0f32));
/// assert!((g.item::<f32>().unwrap() - 0.4199743).abs() < 1e-6);
/// ```
#[track_caller]
pub fn grad_of(f: impl FnOnce(&Array) -> Array, x: &Array) -> Array {
    let wrt = Wrt { transform: "grad", argnums: &[0], names: &["x"] };
    grad(wrt, false, false, vec![Flat::of(x)], |mut p| f(&p.remove(0).into_tree::<Array>()))
        .into_tree()
}

/// `jax.jvp` of a function of one array: `(f(x), df(x)[t])`.
#[track_caller]
pub fn jvp_of(f: impl FnOnce(&Array) -> Array, x: &Array, t: &Array) -> (Array, Array) {
    jvp(&["x"], vec![Flat::of(x)], vec![Flat::of(t)], |mut p| f(&p.remove(0).into_tree::<Array>()))
        .into_tree()
}

/// `jax.vjp` of a function of one array, applied to the cotangent `ct`.
#[track_caller]
pub fn vjp_of(f: impl FnOnce(&Array) -> Array, x: &Array, ct: &Array) -> Array {
    vjp(&["x"], vec![Flat::of(x)], Flat::of(ct), |mut p| f(&p.remove(0).into_tree::<Array>()))
        .into_tree()
}

/// The dense jacobian of a function of one array, by forward or reverse mode
/// (`jax.jacfwd` / `jax.jacrev`): shape `f(x).shape ++ x.shape`.
#[track_caller]
pub fn jacobian_of(f: impl FnOnce(&Array) -> Array, x: &Array, reverse: bool) -> Array {
    let wrt =
        Wrt { transform: if reverse { "jacrev" } else { "jacfwd" }, argnums: &[0], names: &["x"] };
    let body = |mut p: Vec<Flat>| f(&p.remove(0).into_tree::<Array>());
    let jac = if reverse {
        jacrev(wrt, false, vec![Flat::of(x)], body)
    } else {
        jacfwd(wrt, false, vec![Flat::of(x)], body)
    };
    jac.into_tree()
}
