//! [`DeviceOp::Gather`] and [`DeviceOp::Scatter`] on wgpu: indexing along one axis with an
//! integer index array, with the CPU's index rules (`exec/cpu/copy.rs`'s `resolve_index`):
//! a negative index counts from the end once; one still out of bounds is clamped (`Clip`) or
//! reads the dtype's fill value / drops its update (`FillOrDrop`).
//!
//! A gather moves stored words without looking at them, so one kernel per index dtype and
//! element size serves every operand dtype (the fill value's bits come in the parameters). A scatter runs
//! one invocation per `(outer, inner)` column of the output, each walking the indices in
//! order, so repeated indices combine in the CPU's order and results match it bit for bit.

use std::fmt::Write as _;

use super::{codegen, Bound, WgpuBackend};
use crate::backend::{DeviceBuffer, DeviceOp, Operand, Strided};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::{Aval, BinaryOp, IndexMode, ScatterOp};

/// `fn resolve(j) -> i32`: the position index `j` names along an axis of `params[1]`
/// elements, or -1 when it reads the fill value / drops its update; `params[4]` is 1 to clip.
fn resolve_function(index: DType) -> String {
    let raw = match index {
        // Negative indices count from the end once.
        DType::I32 => "var k = indices[j];\n    if (k < 0) {\n        k = k + i32(n);\n    }",
        // Above i32's range is out of bounds for every array a binding holds.
        _ => "var k = i32(min(indices[j], 0x7fffffffu));",
    };
    let ty = if index == DType::I32 { "i32" } else { "u32" };
    format!(
        "@group(0) @binding(2) var<storage, read> indices: array<{ty}>;

fn resolve(j: u32) -> i32 {{
    let n = params[1];
    {raw}
    if (k >= 0 && k < i32(n)) {{
        return k;
    }}
    if (params[4] == 1u && n > 0u) {{
        return clamp(k, 0, i32(n) - 1);
    }}
    return -1;
}}
"
    )
}

/// Parameters shared by both kernels: `outer, n, inner, m, clip`, then the fill bits (low
/// word, high word).
fn params(layout: [usize; 4], mode: IndexMode, fill: u64) -> Result<Vec<u32>, String> {
    let mut words = Vec::new();
    for v in layout {
        words.push(u32::try_from(v).map_err(|_| format!("extent {v} does not fit 32 bits"))?);
    }
    words.push(u32::from(mode == IndexMode::Clip));
    words.extend([fill as u32, (fill >> 32) as u32]);
    Ok(words)
}

/// `out[o, j, c] = src[o, resolve(j), c]`, or the fill bits `params[5..7]`, for elements of
/// one word (`u32`) or two (`vec2<u32>`).
fn gather_kernel(index: DType, element: &str) -> String {
    let fill = if element == "u32" { "params[5]" } else { "vec2<u32>(params[5], params[6])" };
    let mut s = format!(
        "// rjax gather kernel
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<{element}>;
@group(0) @binding(3) var<storage, read_write> out: array<{element}>;
",
    );
    s.push_str(&resolve_function(index));
    let _ = write!(
        s,
        "
@compute @workgroup_size({})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {{
    let i = (wg.y * groups.x + wg.x) * {}u + lane;
    let n = params[1];
    let inner = params[2];
    let m = params[3];
    if (i >= params[0] * m * inner) {{
        return;
    }}
    let c = i % inner;
    let j = (i / inner) % m;
    let o = i / (inner * m);
    let k = resolve(j);
    if (k < 0) {{
        out[i] = {fill};
    }} else {{
        out[i] = src[(o * n + u32(k)) * inner + c];
    }}
}}
",
        codegen::WORKGROUP,
        codegen::WORKGROUP
    );
    s
}

/// For each column `(o, c)`, in index order: `out[o, k, c] = combine(out[o, k, c],
/// updates[o, j, c])` where `k = resolve(j)` is in bounds (`Set` replaces).
fn scatter_kernel(op: ScatterOp, dtype: DType, index: DType) -> String {
    let ty = codegen::storage(dtype);
    let mut s = format!(
        "// rjax scatter kernel: {op:?} of {dtype}
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<{ty}>;
@group(0) @binding(3) var<storage, read> updates: array<{ty}>;
"
    );
    s.push_str(&resolve_function(index));
    let combined = match combining(op, dtype) {
        Some(binary) => {
            s.push_str(&codegen::combine_function(binary, dtype));
            "combine(out[at], updates[src_at])"
        }
        None => "updates[src_at]",
    };
    let _ = write!(
        s,
        "
@compute @workgroup_size({wg})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {{
    let t = (wg.y * groups.x + wg.x) * {wg}u + lane;
    let n = params[1];
    let inner = params[2];
    let m = params[3];
    if (t >= params[0] * inner) {{
        return;
    }}
    let c = t % inner;
    let o = t / inner;
    for (var j = 0u; j < m; j = j + 1u) {{
        let k = resolve(j);
        if (k >= 0) {{
            let at = (o * n + u32(k)) * inner + c;
            let src_at = (o * m + j) * inner + c;
            out[at] = {combined};
        }}
    }}
}}
",
        wg = codegen::WORKGROUP
    );
    s
}

/// The binary operation a scatter combines with, as the CPU's `Scalar` functions do it (for
/// bool: add and max are `or`, mul and min are `and`); `None` for `Set`.
fn combining(op: ScatterOp, dtype: DType) -> Option<BinaryOp> {
    let bool = dtype == DType::Bool;
    Some(match op {
        ScatterOp::Set => return None,
        ScatterOp::Add if bool => BinaryOp::Or,
        ScatterOp::Mul if bool => BinaryOp::And,
        ScatterOp::Max if bool => BinaryOp::Or,
        ScatterOp::Min if bool => BinaryOp::And,
        ScatterOp::Add => BinaryOp::Add,
        ScatterOp::Mul => BinaryOp::Mul,
        ScatterOp::Max => BinaryOp::Max,
        ScatterOp::Min => BinaryOp::Min,
    })
}

/// The stored bits an out-of-bounds gather reads: NaN, the most negative signed integer,
/// the largest unsigned one, `true`.
fn fill_bits(dtype: DType) -> u64 {
    match dtype {
        DType::F32 => f32::NAN.to_bits().into(),
        DType::F64 => f64::NAN.to_bits(),
        DType::I32 => i32::MIN as u32 as u64,
        DType::I64 => i64::MIN as u64,
        _ => u64::MAX,
    }
}

/// `(outer, n, inner)` of an operand of `shape` indexed along `axis`.
fn around(shape: &[usize], axis: usize) -> [usize; 3] {
    let outer = shape[..axis].iter().product();
    [outer, shape[axis], shape[axis + 1..].iter().product()]
}

impl WgpuBackend {
    /// [`DeviceOp::Gather`] and [`DeviceOp::Scatter`].
    pub(super) fn index(
        &self,
        op: &DeviceOp,
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let (x, idx) = (&operands[0], &operands[1]);
        let index = idx.buffer.dtype();
        if !matches!(index, DType::I32 | DType::U32) {
            return Err(self.unsupported_dtype("indexing with indices of", index));
        }
        let m: usize = idx.shape.iter().product();
        let failed = |problem| Error::Device { device: self.id, problem };
        match *op {
            DeviceOp::Gather { axis, mode } => {
                let [outer, n, inner] = around(x.shape, axis);
                let words =
                    params([outer, n, inner, m], mode, fill_bits(out.dtype)).map_err(failed)?;
                let len: usize = out.shape.iter().product();
                let result = self.output(out.dtype, len, "gather")?;
                let bound = [
                    Bound::array(x.buffer),
                    Bound::array(idx.buffer),
                    Bound::new(&result, out.dtype, len),
                ];
                let element = match super::element_bytes(out.dtype) {
                    4 => "u32",
                    8 => "vec2<u32>",
                    _ => return Err(self.unsupported_dtype("gather", out.dtype)),
                };
                self.launch("gather", &gather_kernel(index, element), &words, &bound, len)?;
                Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
            }
            DeviceOp::Scatter { axis, op, mode } => {
                let [outer, n, inner] = around(x.shape, axis);
                let words = params([outer, n, inner, m], mode, 0).map_err(failed)?;
                // The operand's copy, updated in place.
                let copy = crate::backend::CopyRegion {
                    operand: 0,
                    extents: x.shape.to_vec(),
                    src: Strided::row_major(x.shape),
                    dst: Strided::row_major(x.shape),
                };
                let result = self.assemble(None, &[copy], operands, out)?;
                let len = result.len();
                let bound = [
                    Bound::array(&result),
                    Bound::array(idx.buffer),
                    Bound::array(operands[2].buffer),
                ];
                let kernel = scatter_kernel(op, out.dtype, index);
                self.launch("scatter", &kernel, &words, &bound, outer * inner)?;
                debug_assert_eq!(len, outer * n * inner);
                Ok(result)
            }
            _ => unreachable!("index runs gathers and scatters"),
        }
    }
}
