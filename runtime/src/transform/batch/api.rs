//! `vmap` and `pmap` over pytrees: what `#[vmap(in_axes = .., out_axes = .., axis_name = ..)]`
//! and `#[pmap(..)]` call.
//!
//! The function is traced once on one example's avals (each mapped leaf without its mapped
//! axis), with the axis name bound for collectives, and the program is run by the batching
//! interpreter on the whole batch. Outputs get their batch axis where `out_axes` says.

use super::{batch_eval, ops, BatchAxis, BatchDim};
use crate::array::Array;
use crate::device::spmd;
use crate::primitives::Aval;
use crate::shape::ShapeDisplay;
use crate::transform::ad::api::{trace_params, Flat};
use crate::transform::axes;
use crate::tree::{Node, Tree, TreeDef};

/// An `in_axes` / `out_axes` entry, a prefix of the value's tree: one axis (negative counts
/// from the end) or `None` for everything below it, or one entry per child of a tuple,
/// sequence or struct (in field order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchAxes {
    /// Not mapped: the same value for every example.
    None,
    /// Mapped along this axis.
    Axis(isize),
    /// One entry per child.
    Tree(Vec<BatchAxes>),
}

/// A `vmap`'s parameters: one `in_axes` entry per traced parameter (named in `names`, for
/// messages), the outputs' `out_axes`, and the optional axis name for collectives.
#[derive(Clone, Copy, Debug)]
pub struct Vmap<'a> {
    pub names: &'a [&'static str],
    pub in_axes: &'a [BatchAxes],
    pub out_axes: &'a BatchAxes,
    pub axis_name: Option<&'static str>,
}

/// `jax.vmap`: `body` mapped over the axes of `params` that `spec.in_axes` names.
#[track_caller]
pub fn vmap<R: Tree>(spec: Vmap<'_>, params: Vec<Flat>, body: impl FnOnce(Vec<Flat>) -> R) -> Flat {
    let (mut dims, size) = mapped_dims("vmap", &spec, &params);
    let leaves: Vec<&Array> = params.iter().flat_map(|p| &p.leaves).collect();
    let axis = BatchAxis { size, name: spec.axis_name.map(str::to_string) };
    let example = example_avals(&leaves, &dims);
    let traced = with_axis_name(spec.axis_name, size, || trace_params(&params, &example, body));
    let mut args: Vec<Array> = leaves.into_iter().cloned().collect();
    args.extend(traced.captured.iter().cloned());
    dims.resize(args.len(), None);
    let (outs, out_dims) = batch_eval(&traced.program, &args, &dims, &axis);
    let out_def = traced.extra;
    let wanted = leaf_axes(spec.out_axes, &out_def)
        .unwrap_or_else(|e| panic!("vmap: out_axes {e} (the function's output)"));
    let leaves = outs
        .iter()
        .zip(out_dims)
        .zip(wanted)
        .enumerate()
        .map(|(k, ((x, d), want))| place_output(x, d, want, size, k))
        .collect();
    Flat { leaves, def: out_def }
}

/// The mapped axis of every leaf of `params` (as a position), and the axis size; panics
/// naming the argument when an axis is out of range or the sizes disagree.
#[track_caller]
fn mapped_dims(op: &str, spec: &Vmap<'_>, params: &[Flat]) -> (Vec<BatchDim>, usize) {
    assert_eq!(spec.in_axes.len(), params.len(), "{op}: one in_axes entry per traced parameter");
    let mut dims: Vec<BatchDim> = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let name = spec.names.get(i).copied().unwrap_or("?");
        let axes = leaf_axes(&spec.in_axes[i], &p.def)
            .unwrap_or_else(|e| panic!("{op}: in_axes for argument `{name}` {e}"));
        for (leaf, axis) in p.leaves.iter().zip(axes) {
            dims.push(axis.map(|a| {
                normalize(op, a, leaf.ndim(), || format!("argument `{name}`"), leaf.shape())
            }));
        }
    }
    let size = mapped_size(op, spec, params, &dims);
    (dims, size)
}

/// One example's (or one device's shard's) avals: each leaf without its mapped axis.
fn example_avals(leaves: &[&Array], dims: &[BatchDim]) -> Vec<Aval> {
    leaves
        .iter()
        .zip(dims)
        .map(|(x, d)| {
            let mut aval = x.aval();
            if let Some(d) = d {
                aval.shape.remove(*d);
            }
            aval
        })
        .collect()
}

/// The name a `pmap` without `axis_name` binds: no collective can name it.
const UNNAMED_PMAP_AXIS: &str = "<pmap axis>";

/// `jax.pmap`: `body` run on one device per member of the mapped axis of `params`, each on
/// its own thread, with collectives over `spec.axis_name` between the devices. The body is
/// traced once, on one shard's avals; the outputs are the devices' results stacked along
/// `out_axes`.
#[track_caller]
pub fn pmap<R: Tree>(spec: Vmap<'_>, params: Vec<Flat>, body: impl FnOnce(Vec<Flat>) -> R) -> Flat {
    let (mut dims, size) = mapped_dims("pmap", &spec, &params);
    let leaves: Vec<&Array> = params.iter().flat_map(|p| &p.leaves).collect();
    let platform = spmd::Platform::of(&leaves);
    let available = spmd::available_devices(platform);
    if size == 0 {
        panic!("pmap: the mapped axis has size 0; pmap needs at least one device's worth of data");
    }
    if size > available {
        panic!("{}", spmd::too_few_devices(platform, size, available));
    }
    let example = example_avals(&leaves, &dims);
    let axis_name = spec.axis_name.unwrap_or(UNNAMED_PMAP_AXIS);
    // Across processes, the axis the body's collectives see has every process's shards.
    let processes = if spmd::in_shard() { 1 } else { spmd::spanned_processes().1 };
    let traced = spmd::telling_other_processes(processes > 1, || {
        axes::with_axis(axis_name, size * processes, || trace_params(&params, &example, body))
    });
    let mut args: Vec<Array> = leaves.into_iter().cloned().collect();
    args.extend(traced.captured.iter().cloned());
    dims.resize(args.len(), None);
    let out_def = traced.extra;
    let wanted = leaf_axes(spec.out_axes, &out_def)
        .unwrap_or_else(|e| panic!("pmap: out_axes {e} (the function's output)"));
    let shard_outs = traced.program.output_avals();
    let out_axes = wanted
        .iter()
        .zip(&shard_outs)
        .enumerate()
        .map(|(k, (want, aval))| {
            let what = || format!("output leaf {k} (with the device axis)");
            want.map(|a| normalize("pmap", a, aval.shape.len() + 1, what, &aval.shape))
        })
        .collect();
    let prim = crate::primitives::Pmap {
        program: std::sync::Arc::new(traced.program),
        axis_name: axis_name.to_string(),
        size,
        in_axes: dims,
        out_axes,
    };
    let refs: Vec<&Array> = args.iter().collect();
    Flat { leaves: crate::primitives::bind(&prim, &refs), def: out_def }
}

fn with_axis_name<R>(name: Option<&str>, size: usize, body: impl FnOnce() -> R) -> R {
    match name {
        Some(name) => axes::with_axis(name, size, body),
        None => body(),
    }
}

/// An output leaf with its batch axis where `out_axes` wants it.
#[track_caller]
fn place_output(x: &Array, dim: BatchDim, want: Option<isize>, size: usize, k: usize) -> Array {
    let Some(want) = want else {
        if dim.is_some() {
            panic!(
                "vmap: out_axes is None for output leaf {k}, but that output depends on the \
                 mapped arguments (it is batched, {}); give it an axis",
                x.aval()
            );
        }
        return x.clone();
    };
    let rank = x.ndim() + usize::from(dim.is_none());
    let to = normalize("vmap", want, rank, || format!("output leaf {k}"), x.shape());
    ops::to_dim(x, dim, to, size)
}

/// The axis `axis` of a value of `rank` as a position, or a panic naming the value.
#[track_caller]
fn normalize(
    op: &str,
    axis: isize,
    rank: usize,
    what: impl Fn() -> String,
    shape: &[usize],
) -> usize {
    let r = rank as isize;
    if axis < -r || axis >= r {
        panic!(
            "{op}: axis {axis} is out of range for {} of shape {} (rank {rank}); use an axis in \
             {}..{rank}",
            what(),
            ShapeDisplay(shape),
            -r
        );
    }
    (if axis < 0 { axis + r } else { axis }) as usize
}

/// The size of the mapped axis, checking all mapped leaves agree on it.
#[track_caller]
fn mapped_size(op: &str, spec: &Vmap<'_>, params: &[Flat], dims: &[BatchDim]) -> usize {
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let mut k = 0;
    for (i, p) in params.iter().enumerate() {
        let name = spec.names.get(i).copied().unwrap_or("?");
        for (j, leaf) in p.leaves.iter().enumerate() {
            if let Some(d) = dims[k] {
                let which = if p.leaves.len() == 1 {
                    format!("argument `{name}`")
                } else {
                    format!("leaf {j} of argument `{name}`")
                };
                sizes.push((
                    format!(
                        "{which} of type {} has size {} at axis {d}",
                        leaf.aval(),
                        leaf.shape()[d]
                    ),
                    leaf.shape()[d],
                ));
            }
            k += 1;
        }
    }
    let Some((_, size)) = sizes.first().cloned() else {
        panic!("{op} must have at least one mapped argument: every in_axes entry is None");
    };
    if sizes.iter().any(|(_, s)| *s != size) {
        let lines: Vec<String> = sizes.iter().map(|(text, _)| format!("  * {text}")).collect();
        panic!("{op} got inconsistent sizes for the axes to be mapped:\n{}", lines.join("\n"));
    }
    size
}

/// Expands an axes prefix over a tree's leaves: the axis of each leaf, or why the prefix does
/// not fit the tree.
pub fn leaf_axes(spec: &BatchAxes, def: &TreeDef) -> Result<Vec<Option<isize>>, String> {
    let mut out = Vec::new();
    let end = expand(spec, def.nodes(), 0, &mut out)?;
    debug_assert_eq!(end, def.nodes().len());
    Ok(out)
}

fn expand(
    spec: &BatchAxes,
    nodes: &[Node],
    pos: usize,
    out: &mut Vec<Option<isize>>,
) -> Result<usize, String> {
    let children = children(&nodes[pos]);
    match spec {
        BatchAxes::None | BatchAxes::Axis(_) => {
            let axis = if let BatchAxes::Axis(a) = spec { Some(*a) } else { None };
            if matches!(nodes[pos], Node::Leaf) {
                out.push(axis);
                return Ok(pos + 1);
            }
            (0..children).try_fold(pos + 1, |p, _| expand(spec, nodes, p, out))
        }
        BatchAxes::Tree(specs) => {
            let kind = match &nodes[pos] {
                Node::Tuple(_) => "a tuple",
                Node::Seq(_) => "a sequence",
                Node::Map(_) => "a map",
                Node::Struct { .. } => "a struct",
                Node::Leaf => "an array",
                Node::Option(_) => "an option",
                Node::Unit | Node::Static(_) => "a value without arrays",
            };
            let groups = matches!(
                nodes[pos],
                Node::Tuple(_) | Node::Seq(_) | Node::Map(_) | Node::Struct { .. }
            );
            if !groups || specs.len() != children {
                return Err(format!(
                    "has {} entries, but the value is {kind}{} — give one entry per element, \
                     or a single axis for all of it",
                    specs.len(),
                    if groups { format!(" of {children} elements") } else { String::new() }
                ));
            }
            specs.iter().try_fold(pos + 1, |p, s| expand(s, nodes, p, out))
        }
    }
}

fn children(node: &Node) -> usize {
    match node {
        Node::Tuple(n) | Node::Seq(n) => *n,
        Node::Map(keys) => keys.len(),
        Node::Option(some) => usize::from(*some),
        Node::Struct { fields, .. } => fields.len(),
        Node::Leaf | Node::Unit | Node::Static(_) => 0,
    }
}
