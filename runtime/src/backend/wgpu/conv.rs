//! [`DeviceOp::Conv`](crate::backend::DeviceOp::Conv) on wgpu: one invocation per output
//! element, summing over its group's input features and then its kernel taps in a fixed
//! order (deterministic; float sums round differently from the CPU's blocked products).
//!
//! The spatial rank, extents, strides, padding and dilations come from the parameter
//! buffer, so one shader per dtype serves every convolution.

use std::fmt::Write as _;

use super::{codegen, Bound, WgpuBackend};
use crate::backend::{ConvWindows, DeviceBuffer, Operand};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::Aval;

/// Spatial dimensions a kernel handles (its private position array's length).
const MAX_SPATIAL: usize = 8;

/// Words before the per-dimension fields, and fields per spatial dimension.
const HEADER: usize = 15;
const FIELDS: usize = 10;

/// The parameter words: see [`kernel`] for the layout.
fn params(c: &ConvWindows) -> Result<Vec<u32>, String> {
    let word = |v: usize| u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"));
    let positions: usize = c.output.iter().product();
    let count = c.out_batch * c.out_features * positions;
    let [ln, lc] = [c.lhs_strides[0], c.lhs_strides[1]];
    let [ro, ri] = [c.rhs_strides[0], c.rhs_strides[1]];
    let [on, oo] = [c.out_strides[0], c.out_strides[1]];
    let header = [
        count,
        c.output.len(),
        c.out_batch,
        c.out_features,
        c.group_in,
        c.group_out.max(1),
        usize::from(c.feature_grouped),
        usize::from(c.batch_grouped),
        ln,
        lc,
        ro,
        ri,
        on,
        oo,
        c.window.iter().product(),
    ];
    let mut words = header.iter().map(|&v| word(v)).collect::<Result<Vec<u32>, String>>()?;
    for d in 0..c.output.len() {
        let dilated = if c.input[d] == 0 { 0 } else { (c.input[d] - 1) * c.lhs_dilation[d] + 1 };
        let pad = i32::try_from(c.padding_lo[d]).map_err(|_| "padding does not fit 32 bits")?;
        words.extend([
            word(c.output[d])?,
            word(dilated)?,
            word(c.window[d])?,
            word(c.window_strides[d])?,
            pad as u32,
            word(c.lhs_dilation[d])?,
            word(c.rhs_dilation[d])?,
            word(c.lhs_strides[2 + d])?,
            word(c.rhs_strides[2 + d])?,
            word(c.out_strides[2 + d])?,
        ]);
    }
    Ok(words)
}

/// The shader for `dtype`. Header words: count, spatial rank, output batch, output
/// features, group inputs, group outputs, feature-grouped, batch-grouped, the input's batch
/// and feature strides, the kernel's output- and input-feature strides, the output's batch
/// and feature strides, the window size; then per spatial dimension: output extent, dilated
/// input extent, window extent, window step, padding before (two's complement), input
/// dilation, kernel dilation, and the input's, kernel's and output's strides.
fn kernel(dtype: DType) -> String {
    let ty = codegen::storage(dtype);
    let mut s = format!(
        "// rjax convolution kernel: {dtype}
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> lhs: array<{ty}>;
@group(0) @binding(2) var<storage, read> rhs: array<{ty}>;
@group(0) @binding(3) var<storage, read_write> out: array<{ty}>;

fn field(d: u32, f: u32) -> u32 {{
    return params[{HEADER}u + {FIELDS}u * d + f];
}}
"
    );
    s.push_str(&codegen::entry_point("e"));
    let _ = write!(
        s,
        "    let rank = params[1];
    var pos: array<u32, {MAX_SPATIAL}>;
    var rest = e;
    var out_at = 0u;
    for (var d = rank; d > 0u; d = d - 1u) {{
        let extent = field(d - 1u, 0u);
        pos[d - 1u] = rest % extent;
        rest = rest / extent;
        out_at = out_at + pos[d - 1u] * field(d - 1u, 9u);
    }}
    let o = rest % params[3];
    let n = rest / params[3];
    out_at = out_at + n * params[12] + o * params[13];
    let group = o / params[5];
    var image = n;
    if (params[7] == 1u) {{
        image = n + group * params[2];
    }}
    var acc: {ty} = {ty}(0);
    for (var ci = 0u; ci < params[4]; ci = ci + 1u) {{
        var channel = ci;
        if (params[6] == 1u) {{
            channel = group * params[4] + ci;
        }}
        let x_base = image * params[8] + channel * params[9];
        let w_base = o * params[10] + ci * params[11];
        for (var t = 0u; t < params[14]; t = t + 1u) {{
            var r = t;
            var x_at = x_base;
            var w_at = w_base;
            var inside = true;
            for (var d = rank; d > 0u; d = d - 1u) {{
                let dd = d - 1u;
                let k = r % field(dd, 2u);
                r = r / field(dd, 2u);
                let p = i32(pos[dd] * field(dd, 3u) + k * field(dd, 6u)) - bitcast<i32>(field(dd, 4u));
                let ld = i32(field(dd, 5u));
                if (p < 0 || p >= i32(field(dd, 1u)) || p % ld != 0) {{
                    inside = false;
                }} else {{
                    x_at = x_at + u32(p / ld) * field(dd, 7u);
                }}
                w_at = w_at + k * field(dd, 8u);
            }}
            if (inside) {{
                acc = acc + lhs[x_at] * rhs[w_at];
            }}
        }}
    }}
    out[out_at] = acc;
}}
"
    );
    s
}

impl WgpuBackend {
    /// [`DeviceOp::Conv`](crate::backend::DeviceOp::Conv) into a new buffer of `out`'s aval.
    pub(super) fn conv(
        &self,
        windows: &ConvWindows,
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let op = "conv_general_dilated";
        // The shape rule admits floats only; the GPU computes in float32 and float64.
        if !matches!(out.dtype, DType::F32 | DType::F64) {
            return Err(self.unsupported_dtype(op, out.dtype));
        }
        if windows.output.len() > MAX_SPATIAL {
            let problem = format!("{op}: at most {MAX_SPATIAL} spatial dimensions on a GPU");
            return Err(Error::Device { device: self.id, problem });
        }
        let words =
            params(windows).map_err(|problem| Error::Device { device: self.id, problem })?;
        let len: usize = out.shape.iter().product();
        let result = self.output(out.dtype, len, op)?;
        let bound = [
            Bound::array(operands[0].buffer),
            Bound::array(operands[1].buffer),
            Bound::new(&result, out.dtype, len),
        ];
        self.launch(op, &kernel(out.dtype), &words, &bound, words[0] as usize)?;
        Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
    }
}
