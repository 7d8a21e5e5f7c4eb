//! [`DeviceOp::Assemble`](crate::backend::DeviceOp::Assemble) on wgpu: transposes,
//! broadcasts, slices, reversals, concatenations and pads as strided copies.
//!
//! Two kernels per element size serve every dtype of that size, since they move stored
//! words without looking at them (elements of 8 bytes as pairs of words): one sets every
//! element to a value (a pad's background), one copies a region between two strided views.
//! The region's rank, extents and strides are read from the parameter buffer, so one
//! compiled shader serves every shape.

use super::{codegen, Bound, WgpuBackend};
use crate::backend::{CopyRegion, DeviceBuffer, Operand};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::Aval;

/// Sets `n = params[0]` elements of `dst` to `value[0]`.
const FILL: &str = "// rjax fill kernel
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> value: array<Element>;
@group(0) @binding(2) var<storage, read_write> dst: array<Element>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * groups.x + wg.x) * 256u + lane;
    if (i >= params[0]) {
        return;
    }
    dst[i] = value[0];
}
";

/// Copies a region: element `i` of the region (row-major over its extents) goes from
/// `src[src_offset + Σ c_k * src_stride_k]` to `dst[dst_offset + Σ c_k * dst_stride_k]`.
/// Parameters: `n, rank, extents[rank], src_offset, src_strides[rank], dst_offset,
/// dst_strides[rank]`; strides are two's-complement, and positions are computed modulo
/// 2^32, which gives the right position whenever the true one is in range.
const COPY: &str = "// rjax strided copy kernel
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<Element>;
@group(0) @binding(2) var<storage, read_write> dst: array<Element>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * groups.x + wg.x) * 256u + lane;
    if (i >= params[0]) {
        return;
    }
    let rank = params[1];
    var rest = i;
    var read_at = params[2u + rank];
    var write_at = params[3u + 2u * rank];
    for (var k = rank; k > 0u; k = k - 1u) {
        let extent = params[1u + k];
        let c = rest % extent;
        rest = rest / extent;
        read_at = read_at + c * params[2u + rank + k];
        write_at = write_at + c * params[3u + 2u * rank + k];
    }
    dst[write_at] = src[read_at];
}
";

/// `kernel` ([`FILL`] or [`COPY`]) for elements of `dtype`'s size, or why there is none.
pub(super) fn for_elements(kernel: &str, dtype: DType) -> Option<String> {
    let element = match super::element_bytes(dtype) {
        4 => "u32",
        8 => "vec2<u32>",
        _ => return None,
    };
    Some(format!("alias Element = {element};\n{kernel}"))
}

/// The parameter words of a [`COPY`] of `region`.
fn copy_params(region: &CopyRegion) -> Result<Vec<u32>, String> {
    let word = |v: usize| u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"));
    let signed = |v: isize| {
        i32::try_from(v).map(|v| v as u32).map_err(|_| format!("stride {v} does not fit 32 bits"))
    };
    let n: usize = region.extents.iter().product();
    let mut words = vec![word(n)?, word(region.extents.len())?];
    for &e in &region.extents {
        words.push(word(e)?);
    }
    words.push(word(region.src.offset)?);
    for &s in &region.src.strides {
        words.push(signed(s)?);
    }
    words.push(word(region.dst.offset)?);
    for &s in &region.dst.strides {
        words.push(signed(s)?);
    }
    Ok(words)
}

impl WgpuBackend {
    /// The output of `out`'s aval assembled from `fill` (an operand index) and `regions`.
    pub(super) fn assemble(
        &self,
        fill: Option<usize>,
        regions: &[CopyRegion],
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let op = "a strided copy";
        let kernels = for_elements(FILL, out.dtype).zip(for_elements(COPY, out.dtype));
        let Some((fill_kernel, copy_kernel)) = kernels else {
            return Err(self.unsupported_dtype(op, out.dtype));
        };
        let len: usize = out.shape.iter().product();
        let result = self.output(out.dtype, len, op)?;
        let dst = || Bound::new(&result, out.dtype, len);
        if let Some(f) = fill {
            let value = Bound::array(operands[f].buffer);
            self.launch(op, &fill_kernel, &[len as u32], &[value, dst()], len)?;
        }
        for region in regions {
            let params = copy_params(region)
                .map_err(|problem| Error::Device { device: self.id, problem })?;
            let n = params[0] as usize;
            let src = Bound::array(operands[region.operand].buffer);
            self.launch(op, &copy_kernel, &params, &[src, dst()], n)?;
        }
        Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
    }

    /// The error for a dtype an operation has no kernel for.
    pub(super) fn unsupported_dtype(&self, op: &str, dtype: DType) -> Error {
        Error::Device { device: self.id, problem: format!("{op}: no GPU kernel yet for {dtype}") }
    }
}

/// Both kernels are fixed text; the workgroup size they name is the launch's.
const _: () = assert!(codegen::WORKGROUP == 256);
