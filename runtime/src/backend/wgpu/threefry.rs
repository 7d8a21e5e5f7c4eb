//! [`DeviceOp::Threefry2x32`](crate::backend::DeviceOp::Threefry2x32) on wgpu: the 20-round
//! threefry-2x32 hash of four broadcast `uint32` operands, bit for bit as the host computes it
//! (`exec::cpu::threefry::threefry2x32`): the same key schedule, rotations and wrapping adds,
//! which WGSL's `u32` arithmetic does natively.
//!
//! One shader serves every shape: the output's extents and each operand's strides over them
//! (0 along an axis it is broadcast on) are read from the parameter buffer, as the strided
//! copy of `assemble` reads its region's.

use super::{codegen, Bound, WgpuBackend};
use crate::backend::ops::row_major_strides;
use crate::backend::{DeviceBuffer, Operand};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::Aval;

/// Hashes element `i` of the output. Parameters: `n, rank, extents[rank]`, then the strides of
/// `key0, key1, x0, x1` over the output's axes (`rank` words each).
const THREEFRY: &str = "// rjax threefry2x32 kernel
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> key0: array<u32>;
@group(0) @binding(2) var<storage, read> key1: array<u32>;
@group(0) @binding(3) var<storage, read> count0: array<u32>;
@group(0) @binding(4) var<storage, read> count1: array<u32>;
@group(0) @binding(5) var<storage, read_write> out0: array<u32>;
@group(0) @binding(6) var<storage, read_write> out1: array<u32>;

fn rotl(x: u32, r: u32) -> u32 {
    return (x << r) | (x >> (32u - r));
}

// Where output element i reads operand `which` (0..4).
fn position(i: u32, which: u32) -> u32 {
    let rank = params[1];
    var rest = i;
    var at = 0u;
    for (var d = rank; d > 0u; d = d - 1u) {
        let extent = params[1u + d];
        at = at + (rest % extent) * params[1u + rank + which * rank + d];
        rest = rest / extent;
    }
    return at;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * groups.x + wg.x) * 256u + lane;
    if (i >= params[0]) {
        return;
    }
    let k0 = key0[position(i, 0u)];
    let k1 = key1[position(i, 1u)];
    // Rotation distances of the even and odd groups of four rounds.
    var rotations = array<u32, 8>(13u, 15u, 26u, 6u, 17u, 29u, 16u, 24u);
    // The key schedule: both words and their parity.
    var ks = array<u32, 3>(k0, k1, k0 ^ k1 ^ 0x1BD11BDAu);
    var x0 = count0[position(i, 2u)] + ks[0];
    var x1 = count1[position(i, 3u)] + ks[1];
    // Five groups of four rounds, each followed by a key injection.
    for (var g = 0u; g < 5u; g = g + 1u) {
        for (var r = 0u; r < 4u; r = r + 1u) {
            x0 = x0 + x1;
            x1 = rotl(x1, rotations[(g % 2u) * 4u + r]) ^ x0;
        }
        x0 = x0 + ks[(g + 1u) % 3u];
        x1 = x1 + ks[(g + 2u) % 3u] + g + 1u;
    }
    out0[i] = x0;
    out1[i] = x1;
}
";

/// The strides over the axes of `out` of an operand of `shape` broadcast to it (NumPy's
/// rules: trailing axes align, and an axis of extent 1 repeats with stride 0).
fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let lead = out.len() - shape.len();
    let own = row_major_strides(shape);
    let mut strides = vec![0; out.len()];
    for (d, (&extent, &stride)) in shape.iter().zip(&own).enumerate() {
        if extent != 1 {
            // Row-major strides of an existing array are positive.
            strides[lead + d] = stride as usize;
        }
    }
    strides
}

/// The parameter words of [`THREEFRY`] for `shapes` broadcast to `out`.
fn params(shapes: &[&[usize]], out: &[usize]) -> Result<Vec<u32>, String> {
    let word = |v: usize| u32::try_from(v).map_err(|_| format!("{v} does not fit 32 bits"));
    let mut words = vec![word(out.iter().product())?, word(out.len())?];
    for &e in out {
        words.push(word(e)?);
    }
    for shape in shapes {
        for s in broadcast_strides(shape, out) {
            words.push(word(s)?);
        }
    }
    Ok(words)
}

impl WgpuBackend {
    /// Both words of the hash of `key0, key1, x0, x1` (broadcast to `out`'s shape).
    pub(super) fn threefry(
        &self,
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<Vec<DeviceBuffer>, Error> {
        let op = "threefry2x32";
        if let Some(o) = operands.iter().find(|o| o.buffer.dtype() != DType::U32) {
            return Err(self.unsupported_dtype(op, o.buffer.dtype()));
        }
        let shapes: Vec<&[usize]> = operands.iter().map(|o| o.shape).collect();
        let params = params(&shapes, &out.shape)
            .map_err(|problem| Error::Device { device: self.id, problem })?;
        let len = params[0] as usize;
        let words = [self.output(DType::U32, len, op)?, self.output(DType::U32, len, op)?];
        let mut buffers: Vec<Bound<'_>> = operands.iter().map(|o| Bound::array(o.buffer)).collect();
        buffers.extend(words.iter().map(|w| Bound::new(w, DType::U32, len)));
        self.launch(op, THREEFRY, &params, &buffers, len)?;
        Ok(words.into_iter().map(|w| DeviceBuffer::new(self.id, DType::U32, len, w)).collect())
    }
}

/// The kernel is fixed text; the workgroup size it names is the launch's.
const _: () = assert!(codegen::WORKGROUP == 256);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_operands_repeat_with_stride_zero() {
        assert_eq!(broadcast_strides(&[3], &[2, 3]), vec![0, 1]);
        assert_eq!(broadcast_strides(&[2, 1], &[2, 3]), vec![1, 0]);
        assert_eq!(broadcast_strides(&[], &[2, 3]), vec![0, 0]);
        assert_eq!(broadcast_strides(&[2, 3], &[2, 3]), vec![3, 1]);
    }

    #[test]
    fn params_list_extents_then_strides() {
        let p = params(&[&[], &[1], &[4], &[4]], &[4]).unwrap();
        assert_eq!(p, vec![4, 1, 4, 0, 0, 1, 1]);
    }
}
