//! Reductions on wgpu: [`DeviceOp::Reduce`](crate::backend::DeviceOp::Reduce) (folds over
//! any set of axes), [`DeviceOp::ArgReduce`](crate::backend::DeviceOp::ArgReduce) and
//! [`DeviceOp::Cumulative`](crate::backend::DeviceOp::Cumulative), for `f32`, `f64`, `i32`,
//! `u32` and `bool`.
//!
//! A fold reads its operand as `[kept..., reduced...]` through strides computed here, so any
//! axes in any order fold without a transposed copy: the parameter buffer holds the kept
//! extents and strides and the reduced ones, and the kernel reads the ranks at run time (one
//! shader per operation and dtype serves every shape). Reduced axes are walked in ascending
//! order, so neighbouring lanes read neighbouring elements when the innermost axis is folded.
//!
//! Short folds run one invocation per output, looping over the reduced elements in order.
//! Long ones run one workgroup per output: each lane folds the elements `lane, lane + 256,
//! ...`, then the 256 partial results are combined as a tree in workgroup memory. Both orders
//! depend only on the shape, so a float sum gives the same bits on every run; it may differ
//! from the host's pairwise sum by rounding. Integer folds wrap and match the host bit for
//! bit; `max`/`min` propagate NaN (the helpers of the elementwise kernels); an argmax is the
//! first index of the largest element, a NaN counting as the largest (as on the host).
//!
//! A cumulative scan runs one invocation per row, folding along the axis in order from the
//! identity, exactly as the host does, so its floats match the host's bit for bit too.

use std::fmt::Write as _;

use super::alloc::Pooled;
use super::{codegen, math, Bound, Chunks, WgpuBackend};
use crate::backend::layout::{Access, Layout};
use crate::backend::ops::row_major_strides;
use crate::backend::{DeviceBuffer, ElementwiseGroup, GroupReduction, Operand};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::{ArgOp, Aval, CumOp, ReduceOp};

/// Reduced lengths from which a fold takes one workgroup per output: below it the lanes of a
/// workgroup would mostly fold nothing, and one loop per output is cheaper.
const TREE_FROM: usize = 256;

/// The index an empty (value, index) pair holds in an arg reduction: no element yet.
const NO_INDEX: &str = "0xffffffffu";

/// What a fold kernel computes per output.
#[derive(Clone, Copy)]
enum Fold {
    /// Combines values with a reduction (`bool` max/min already turned into or/and).
    Value(ReduceOp),
    /// Finds the first index of the best value.
    Arg(ArgOp),
}

/// The operation a fold over `dtype` runs: on `bool` (stored 0/1), max is or and min is and.
fn bool_aware(op: ReduceOp, dtype: DType) -> ReduceOp {
    match (op, dtype) {
        (ReduceOp::Max, DType::Bool) => ReduceOp::Or,
        (ReduceOp::Min, DType::Bool) => ReduceOp::And,
        _ => op,
    }
}

/// The primitive's name, for kernels and messages.
fn arg_name(op: ArgOp) -> &'static str {
    match op {
        ArgOp::Max => "argmax",
        ArgOp::Min => "argmin",
    }
}

/// The reduction a scan's running fold is.
fn scan_op(op: CumOp) -> ReduceOp {
    match op {
        CumOp::Sum => ReduceOp::Sum,
        CumOp::Prod => ReduceOp::Prod,
        CumOp::Max => ReduceOp::Max,
        CumOp::Min => ReduceOp::Min,
    }
}

/// The stored word of `op`'s identity in `dtype` (after [`bool_aware`]); for `f64`, the
/// bits of the `f32` of the same value, which the kernel widens.
fn identity(op: ReduceOp, dtype: DType) -> u32 {
    let float = matches!(dtype, DType::F32 | DType::F64);
    match op {
        ReduceOp::Sum | ReduceOp::Or => 0,
        ReduceOp::Prod if float => 1f32.to_bits(),
        ReduceOp::Prod | ReduceOp::And => 1,
        ReduceOp::Max if float => f32::NEG_INFINITY.to_bits(),
        ReduceOp::Max if dtype == DType::I32 => i32::MIN as u32,
        ReduceOp::Max => 0,
        ReduceOp::Min if float => f32::INFINITY.to_bits(),
        ReduceOp::Min if dtype == DType::I32 => i32::MAX as u32,
        ReduceOp::Min => u32::MAX,
    }
}

/// The WGSL of `op` combining accumulators `a` and `b` (`a` first) of storage type `ty`, and
/// the helpers it calls.
fn combine_expr(op: ReduceOp, ty: &str) -> (String, &'static [&'static str]) {
    let float = ty == "f32";
    match op {
        ReduceOp::Max if ty == "f64" => ("max_f64(a, b)".into(), &["is_nan_f64", "max_f64"]),
        ReduceOp::Min if ty == "f64" => ("min_f64(a, b)".into(), &["is_nan_f64", "min_f64"]),
        ReduceOp::Sum => ("a + b".into(), &[]),
        ReduceOp::Prod => ("a * b".into(), &[]),
        ReduceOp::Max if float => ("max_f32(a, b)".into(), &["is_nan", "max_f32"]),
        ReduceOp::Min if float => ("min_f32(a, b)".into(), &["is_nan", "min_f32"]),
        ReduceOp::Max => ("max(a, b)".into(), &[]),
        ReduceOp::Min => ("min(a, b)".into(), &[]),
        ReduceOp::And => ("a & b".into(), &[]),
        ReduceOp::Or => ("a | b".into(), &[]),
    }
}

/// The bindings, helpers and `Acc`/`identity`/`combine` definitions of a value fold, whose
/// identity is parameter word `identity_word` (a WGSL expression).
fn value_prelude(
    op: ReduceOp,
    ty: &str,
    out: &str,
    chunks: [&Chunks; 2],
    identity_word: &str,
) -> String {
    let (_, helpers) = combine_expr(op, ty);
    let mut s = bindings(ty, out, chunks);
    for h in helpers {
        s.push_str(&math::source(h));
    }
    s.push_str(&value_definitions(op, ty, identity_word));
    s
}

/// The `Acc`/`identity`/`combine` definitions of a value fold (without the helpers
/// `combine` calls), whose identity is parameter word `identity_word`.
fn value_definitions(op: ReduceOp, ty: &str, identity_word: &str) -> String {
    let (expr, _) = combine_expr(op, ty);
    let mut s = String::new();
    // WGSL has no bitcast of a type to itself.
    let word = format!("params[{identity_word}]");
    let identity = match ty {
        "u32" => word,
        "f64" => format!("f64(bitcast<f32>({word}))"),
        _ => format!("bitcast<{ty}>({word})"),
    };
    let _ = write!(
        s,
        "alias Acc = {ty};

fn identity() -> Acc {{
    return {identity};
}}

fn combine(a: Acc, b: Acc) -> Acc {{
    return {expr};
}}
"
    );
    s
}

/// The bindings: parameters, the operand of storage type `ty` (read with `src_at`), the
/// output of type `out` (written with `dst_set`), each in `chunks`.
fn bindings(ty: &str, out: &str, [src, dst]: [&Chunks; 2]) -> String {
    let mut s = "@group(0) @binding(0) var<storage, read> params: array<u32>;\n".to_string();
    s.push_str(&codegen::chunked_binding("src", ty, 1, src, false));
    s.push_str(&codegen::chunked_binding("dst", out, 1 + src.count, dst, true));
    s.push('\n');
    s
}

/// The definitions of an arg fold over `ty`: accumulators are (value, index) pairs, and the
/// winner of two is the better value, or on a tie (two NaNs included) the lower index, so
/// the combination is the same whichever order partial results meet in.
fn arg_prelude(op: ArgOp, ty: &str, chunks: [&Chunks; 2]) -> String {
    let mut s = bindings(ty, "i32", chunks);
    let cmp = match op {
        ArgOp::Max => ">",
        ArgOp::Min => "<",
    };
    let is_nan = match ty {
        "f32" => Some("is_nan"),
        "f64" => Some("is_nan_f64"),
        _ => None,
    };
    let beats = if let Some(is_nan) = is_nan {
        s.push_str(&math::source(is_nan));
        format!("c {cmp} b || ({is_nan}(c) && !{is_nan}(b))")
    } else {
        format!("c {cmp} b")
    };
    let _ = write!(
        s,
        "struct Acc {{
    v: {ty},
    i: u32,
}}

// Whether `c` is better than `b`: NaN beats every number.
fn beats(c: {ty}, b: {ty}) -> bool {{
    return {beats};
}}

fn identity() -> Acc {{
    return Acc({ty}(), {NO_INDEX});
}}

fn combine(a: Acc, b: Acc) -> Acc {{
    if (b.i == {NO_INDEX}) {{
        return a;
    }}
    if (a.i == {NO_INDEX} || beats(b.v, a.v) || (!beats(a.v, b.v) && b.i < a.i)) {{
        return b;
    }}
    return a;
}}
"
    );
    s
}

/// The WGSL of a fold over operand storage type `ty`: parameters `n_out, red_len, identity,
/// kept_rank, red_rank, kept_extents, kept_strides, red_extents, red_strides` (from word
/// `FOLD`, here 0), its operand and output bound in `chunks`.
fn fold_wgsl(fold: Fold, ty: &str, tree: bool, chunks: [&Chunks; 2]) -> String {
    let (name, prelude, load, store) = match fold {
        Fold::Value(op) => {
            (op.op_name(), value_prelude(op, ty, ty, chunks, "FOLD + 2u"), "src_at(at)", "acc")
        }
        Fold::Arg(op) => {
            (arg_name(op), arg_prelude(op, ty, chunks), "Acc(src_at(at), j)", "i32(acc.i)")
        }
    };
    let kind = if tree { "tree" } else { "loop" };
    let mut s = format!("// rjax {name} {kind} kernel ({ty})\n");
    s.push_str(&prelude);
    s.push_str("\nconst FOLD = 0u;\n");
    s.push_str(POSITIONS);
    let _ = write!(
        s,
        "
fn load(j: u32, at: u32) -> Acc {{
    return {load};
}}

fn store(o: u32, acc: Acc) {{
    dst_set(o, {store});
}}
"
    );
    s.push_str(if tree { TREE_MAIN } else { LOOP_MAIN });
    s
}

/// Where output `o` starts and where reduced element `j` lies from there, from the fold
/// parameters (row-major over the extents, the last fastest).
const POSITIONS: &str = "
fn kept_base(o: u32) -> u32 {
    let kr = params[FOLD + 3u];
    var rest = o;
    var at = 0u;
    for (var k = kr; k > 0u; k = k - 1u) {
        let extent = params[FOLD + 4u + k];
        at = at + (rest % extent) * params[FOLD + 4u + kr + k];
        rest = rest / extent;
    }
    return at;
}

fn reduced_offset(j: u32) -> u32 {
    let first = FOLD + 5u + 2u * params[FOLD + 3u];
    let rr = params[FOLD + 4u];
    var rest = j;
    var at = 0u;
    for (var k = rr; k > 0u; k = k - 1u) {
        let extent = params[first + k - 1u];
        at = at + (rest % extent) * params[first + rr + k - 1u];
        rest = rest / extent;
    }
    return at;
}
";

/// One invocation per output, folding its elements in order.
const LOOP_MAIN: &str = "
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let o = (wg.y * groups.x + wg.x) * 256u + lane;
    if (o >= params[FOLD]) {
        return;
    }
    let base = kept_base(o);
    var acc = identity();
    for (var j = 0u; j < params[FOLD + 1u]; j = j + 1u) {
        acc = combine(acc, load(j, base + reduced_offset(j)));
    }
    store(o, acc);
}
";

/// One workgroup per output: strided partial folds per lane, then a fixed tree. Workgroups
/// past the last output do the same steps on no elements, so every barrier is reached by
/// the whole workgroup.
const TREE_MAIN: &str = "
var<workgroup> part: array<Acc, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let o = wg.y * groups.x + wg.x;
    let live = o < params[FOLD];
    let len = select(0u, params[FOLD + 1u], live);
    let base = select(0u, kept_base(o), live);
    var acc = identity();
    for (var j = lane; j < len; j = j + 256u) {
        acc = combine(acc, load(j, base + reduced_offset(j)));
    }
    part[lane] = acc;
    workgroupBarrier();
    for (var gap = 128u; gap > 0u; gap = gap / 2u) {
        if (lane < gap) {
            part[lane] = combine(part[lane], part[lane + gap]);
        }
        workgroupBarrier();
    }
    if (live && lane == 0u) {
        store(o, part[0]);
    }
}
";

/// The WGSL of a fused group closed by its reduction: the fold kernel of [`fold_wgsl`]
/// (loop or tree), whose `load` computes the group's values at the element it reads — the
/// same expressions as the group's own kernel, storing the group's outputs there, each once
/// — instead of reading a stored operand. Its parameters are the group's ([`codegen::params`]
/// over `rank` axes), then from word `fold_word` the fold's, so the fold reads the group's
/// values in the order, and with the result, of the unfused reduction.
pub(super) fn fused_fold_wgsl(
    group: &ElementwiseGroup,
    inputs: &[(DType, &Access)],
    rank: usize,
    fold_word: usize,
    tree: bool,
) -> String {
    let r = group.reduction.as_ref().expect("a fused fold has a closing reduction");
    let dtype = codegen::group_dtype(group, inputs, r.input);
    let op = bool_aware(r.op, dtype);
    let ty = codegen::storage(dtype);
    let (_, helpers) = combine_expr(op, ty);
    let kind = if tree { "tree" } else { "loop" };
    let mut s =
        format!("// rjax fused {} {kind} kernel: {} operations\n", op.op_name(), group.ops.len());
    s.push_str(&codegen::group_bindings(group, inputs));
    let dst = inputs.len() + group.outputs.len() + 1;
    let _ = writeln!(s, "@group(0) @binding({dst}) var<storage, read_write> dst: array<{ty}>;");
    s.push_str(&codegen::group_functions(group, inputs, rank, helpers));
    let _ = write!(s, "\nconst FOLD = {fold_word}u;\n\n");
    s.push_str(&value_definitions(op, ty, "FOLD + 2u"));
    let value = codegen::group_value_name(r.input);
    let value = if dtype == DType::Bool { format!("select(0u, 1u, {value})") } else { value };
    let _ = write!(
        s,
        "
// The group's values at element `i` of its shape, its outputs stored there.
fn element(i: u32) -> Acc {{
{}    return {value};
}}
",
        codegen::group_body(group, inputs, rank)
    );
    s.push_str(POSITIONS);
    s.push_str(
        "
fn load(j: u32, at: u32) -> Acc {
    return element(at);
}

fn store(o: u32, acc: Acc) {
    dst[o] = acc;
}
",
    );
    s.push_str(if tree { TREE_MAIN } else { LOOP_MAIN });
    s
}

/// The launch of a fused group closed by its reduction, over operands read as `layout`
/// says: the parameter words, where the fold's begin, and the fold.
fn fused_fold_plan(
    group: &ElementwiseGroup,
    r: &GroupReduction,
    dtype: DType,
    layout: &Layout,
) -> Result<(Vec<u32>, usize, FoldPlan), String> {
    let op = bool_aware(r.op, dtype);
    let plan = FoldPlan::new(&r.shape, &r.axes, identity(op, dtype))?;
    let accesses: Vec<&Access> = layout.operands.iter().collect();
    let bases = vec![0; layout.operands.len() + group.outputs.len()];
    word(layout.len())?;
    let mut params = codegen::params(layout.len(), &layout.dims, &bases, &accesses);
    let fold_word = params.len();
    params.extend(&plan.params);
    Ok((params, fold_word, plan))
}

/// The shader [`WgpuBackend::fused_fold`] runs for `group` over operands of these dtypes
/// and shapes (see [`crate::backend::fused_wgsl`]).
pub(super) fn fused_fold_source(
    group: &ElementwiseGroup,
    operands: &[(DType, &[usize])],
) -> Result<String, String> {
    let r = group.reduction.as_ref().expect("a fused fold has a closing reduction");
    let shapes: Vec<&[usize]> = operands.iter().map(|(_, s)| *s).collect();
    let layout = Layout::new(&r.shape, &shapes);
    let inputs: Vec<(DType, &Access)> =
        operands.iter().zip(&layout.operands).map(|((d, _), a)| (*d, a)).collect();
    let dtype = codegen::group_dtype(group, &inputs, r.input);
    let (_, fold_word, plan) = fused_fold_plan(group, r, dtype, &layout)?;
    let tree = plan.reduced >= TREE_FROM;
    Ok(fused_fold_wgsl(group, &inputs, layout.dims.len(), fold_word, tree))
}

/// The WGSL of a scan over storage type `ty`: parameters `rows, n, inner, reverse,
/// identity`; each invocation scans one row of `n` elements `inner` apart. Its operand and
/// output are bound in `chunks`.
fn scan_wgsl(op: ReduceOp, ty: &str, chunks: [&Chunks; 2]) -> String {
    let mut s = format!("// rjax cumulative {} kernel ({ty})\n", op.op_name());
    s.push_str(&value_prelude(op, ty, ty, chunks, "4"));
    s.push_str(
        "
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let r = (wg.y * groups.x + wg.x) * 256u + lane;
    if (r >= params[0]) {
        return;
    }
    let n = params[1];
    let inner = params[2];
    let start = (r / inner) * n * inner + r % inner;
    var acc = identity();
    for (var k = 0u; k < n; k = k + 1u) {
        let at = start + select(k, n - 1u - k, params[3] != 0u) * inner;
        acc = combine(acc, src_at(at));
        dst_set(at, acc);
    }
}
",
    );
    s
}

/// The launch of a fold: operand axes split into kept ones (in order) and reduced ones.
struct FoldPlan {
    outputs: usize,
    reduced: usize,
    params: Vec<u32>,
}

impl FoldPlan {
    /// The plan folding `axes` of an operand of `shape`; `identity` is the fold's identity.
    fn new(shape: &[usize], axes: &[usize], identity: u32) -> Result<FoldPlan, String> {
        let strides = row_major_strides(shape);
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let mut reduced = axes.to_vec();
        reduced.sort_unstable();
        let outputs: usize = kept.iter().map(|&a| shape[a]).product();
        let len: usize = reduced.iter().map(|&a| shape[a]).product();
        let mut words = vec![word(outputs)?, word(len)?, identity];
        words.extend([word(kept.len())?, word(reduced.len())?]);
        for group in [&kept, &reduced] {
            for &a in group.iter() {
                words.push(word(shape[a])?);
            }
            for &a in group.iter() {
                words.push(word(strides[a] as usize)?);
            }
        }
        Ok(FoldPlan { outputs, reduced: len, params: words })
    }
}

/// `v` as a parameter word.
fn word(v: usize) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"))
}

impl WgpuBackend {
    /// `op` folding `axes` of `x` away, into an array of `out`'s aval.
    pub(super) fn reduce(
        &self,
        op: ReduceOp,
        axes: &[usize],
        x: &Operand<'_>,
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let op = bool_aware(op, out.dtype);
        self.fold(op.op_name(), Fold::Value(op), axes, x, out, identity(op, out.dtype))
    }

    /// The `int32` index of the first best element of `x` along `axis`.
    pub(super) fn arg_reduce(
        &self,
        op: ArgOp,
        axis: usize,
        x: &Operand<'_>,
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        // The identity word is unused: an empty pair is marked by its index.
        self.fold(arg_name(op), Fold::Arg(op), &[axis], x, out, 0)
    }

    /// Runs `fold` over `axes` of `x`, choosing the loop or the tree kernel by the length.
    fn fold(
        &self,
        name: &str,
        fold: Fold,
        axes: &[usize],
        x: &Operand<'_>,
        out: &Aval,
        identity: u32,
    ) -> Result<DeviceBuffer, Error> {
        let plan = FoldPlan::new(x.shape, axes, identity).map_err(|problem| Error::Device {
            device: self.id,
            problem: format!("{name}: {problem}"),
        })?;
        let result = self.output(out.dtype, plan.outputs, name)?;
        let tree = plan.reduced >= TREE_FROM;
        // Operands and outputs larger than one binding are bound in chunks.
        let src = self.chunks(x.buffer.dtype(), x.buffer.len());
        let dst = self.chunks(out.dtype, plan.outputs);
        let wgsl = fold_wgsl(fold, codegen::storage(x.buffer.dtype()), tree, [&src, &dst]);
        let lanes = if tree { codegen::WORKGROUP as usize } else { 1 };
        let bound = [
            Bound::array(x.buffer).in_chunks(),
            Bound::new(&result, out.dtype, plan.outputs).in_chunks(),
        ];
        self.launch(name, &wgsl, &plan.params, &bound, plan.outputs * lanes)?;
        Ok(DeviceBuffer::new(self.id, out.dtype, plan.outputs, result))
    }

    /// A fused group closed by its reduction as one kernel (see [`fused_fold_wgsl`]): the
    /// group's outputs (of its shape) then the reduction's.
    pub(super) fn fused_fold(
        &self,
        group: &ElementwiseGroup,
        operands: &[Operand<'_>],
        outs: &[Aval],
    ) -> Result<Vec<DeviceBuffer>, Error> {
        let name = "a fused reduction";
        let r = group.reduction.as_ref().expect("a fused fold has a closing reduction");
        let nout = group.outputs.len();
        // The parameters and the reduction's output are bound too.
        let buffers = operands.len() + nout + 2;
        if buffers > self.limits.max_storage_buffers_per_shader_stage as usize {
            let problem = format!("{name}: {buffers} buffers are more than one kernel binds");
            return Err(Error::Device { device: self.id, problem });
        }
        let shapes: Vec<&[usize]> = operands.iter().map(|o| o.shape).collect();
        let layout = Layout::new(&r.shape, &shapes);
        let inputs: Vec<(DType, &Access)> =
            operands.iter().zip(&layout.operands).map(|(o, a)| (o.buffer.dtype(), a)).collect();
        let dtype = codegen::group_dtype(group, &inputs, r.input);
        let (params, fold_word, plan) =
            fused_fold_plan(group, r, dtype, &layout).map_err(|problem| Error::Device {
                device: self.id,
                problem: format!("{name}: {problem}"),
            })?;
        let tree = plan.reduced >= TREE_FROM;
        let wgsl = fused_fold_wgsl(group, &inputs, layout.dims.len(), fold_word, tree);
        let len = layout.len();
        let full = outs[..nout]
            .iter()
            .map(|o| self.output(o.dtype, len, name))
            .collect::<Result<Vec<Pooled>, Error>>()?;
        let reduced = &outs[nout];
        let result = self.output(reduced.dtype, plan.outputs, name)?;
        let mut bound: Vec<Bound<'_>> = operands.iter().map(|o| Bound::array(o.buffer)).collect();
        bound.extend(full.iter().zip(outs).map(|(f, o)| Bound::new(f, o.dtype, len)));
        bound.push(Bound::new(&result, reduced.dtype, plan.outputs));
        let lanes = if tree { codegen::WORKGROUP as usize } else { 1 };
        self.launch(name, &wgsl, &params, &bound, plan.outputs * lanes)?;
        let mut made: Vec<DeviceBuffer> = full
            .into_iter()
            .zip(outs)
            .map(|(f, o)| DeviceBuffer::new(self.id, o.dtype, len, f))
            .collect();
        made.push(DeviceBuffer::new(self.id, reduced.dtype, plan.outputs, result));
        Ok(made)
    }

    /// Running folds of `x` along `axis` (from the end when `reverse`).
    pub(super) fn cumulative(
        &self,
        op: CumOp,
        axis: usize,
        reverse: bool,
        x: &Operand<'_>,
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let fold = bool_aware(scan_op(op), out.dtype);
        let name = match op {
            CumOp::Sum => "cumsum",
            CumOp::Prod => "cumprod",
            CumOp::Max => "cummax",
            CumOp::Min => "cummin",
        };
        let len: usize = x.shape.iter().product();
        let n = x.shape[axis];
        let inner: usize = x.shape[axis + 1..].iter().product();
        // An empty axis leaves no rows to scan.
        let rows = len.checked_div(n).unwrap_or(0);
        let params = [rows, n, inner, usize::from(reverse)]
            .into_iter()
            .map(word)
            .chain([Ok(identity(fold, out.dtype))])
            .collect::<Result<Vec<u32>, String>>()
            .map_err(|problem| Error::Device {
                device: self.id,
                problem: format!("{name}: {problem}"),
            })?;
        let result = self.output(out.dtype, len, name)?;
        // A scan binds its operand and output whole (one chunk each).
        let whole = Chunks { count: 1, elements: u64::from(u32::MAX) };
        let wgsl = scan_wgsl(fold, codegen::storage(out.dtype), [&whole, &whole]);
        let bound = [Bound::array(x.buffer), Bound::new(&result, out.dtype, len)];
        self.launch(name, &wgsl, &params, &bound, rows)?;
        Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
    }
}

/// The kernels' fixed text names the launch's workgroup size.
const _: () = assert!(codegen::WORKGROUP == 256);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fold_reads_kept_then_reduced_axes_in_ascending_order() {
        let plan = FoldPlan::new(&[2, 3, 4], &[2, 0], 7).unwrap();
        assert_eq!((plan.outputs, plan.reduced), (3, 8));
        // n_out, len, identity, ranks, kept [3]/[4], reduced [2, 4]/[12, 1].
        assert_eq!(plan.params, vec![3, 8, 7, 1, 2, 3, 4, 2, 4, 12, 1]);
    }

    #[test]
    fn bool_max_and_min_are_or_and_and() {
        assert_eq!(bool_aware(ReduceOp::Max, DType::Bool), ReduceOp::Or);
        assert_eq!(bool_aware(ReduceOp::Min, DType::Bool), ReduceOp::And);
        assert_eq!(bool_aware(ReduceOp::Max, DType::F32), ReduceOp::Max);
        assert_eq!(identity(ReduceOp::Max, DType::I32), 0x8000_0000);
        assert_eq!(identity(ReduceOp::Min, DType::F32), f32::INFINITY.to_bits());
    }
}
