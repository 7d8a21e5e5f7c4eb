//! [`DeviceOp::Matmul`](crate::backend::DeviceOp::Matmul) on wgpu: a batched, tiled matrix
//! product `[b, m, k] x [b, k, n] -> [b, m, n]` of row-major operands (`dispatch` has already
//! transposed them into that layout).
//!
//! Each workgroup computes one `TILE x TILE` block of one batch element's output. It walks
//! `k` in slices of [`DEPTH`], staging the slice of both operands in workgroup memory so each
//! element is read from storage once per workgroup rather than once per output, and each
//! invocation keeps a [`BLOCK`]` x `[`BLOCK`] block of outputs in registers, so a value read
//! from workgroup memory feeds `BLOCK` products. Edges are bounds-checked, so any `m`, `k`, `n`
//! work (`k = 0` gives zeros). Every output sums its products in increasing `k`, one at a time,
//! so a result is the same on every run; integers wrap, as WGSL's arithmetic does.

use super::{Bound, WgpuBackend};
use crate::backend::{DeviceBuffer, Operand};
use crate::dtype::DType;
use crate::error::Error;
use crate::primitives::Aval;

/// Outputs per invocation along each side of its block.
const BLOCK: u32 = 4;
/// The slice of `k` staged in workgroup memory at a time.
const DEPTH: u32 = 16;
/// Invocations per side of a workgroup, largest first: the first the adapter allows is used.
const SIDES: [u32; 3] = [16, 8, 4];

/// The shape of the work of one workgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tiling {
    /// Invocations along each side of the (square) workgroup.
    side: u32,
}

impl Tiling {
    /// Output rows (and columns) one workgroup computes.
    fn tile(self) -> u32 {
        self.side * BLOCK
    }

    /// Bytes of workgroup memory: one `tile x DEPTH` slice of each operand, of elements of
    /// `element` bytes.
    fn storage(self, element: u32) -> u32 {
        2 * self.tile() * DEPTH * element
    }

    /// The largest tiling `limits` allow for elements of `element` bytes, if any.
    fn fitting(limits: &wgpu::Limits, element: u32) -> Option<Tiling> {
        SIDES.into_iter().map(|side| Tiling { side }).find(|t| {
            t.side * t.side <= limits.max_compute_invocations_per_workgroup
                && t.side
                    <= limits.max_compute_workgroup_size_x.min(limits.max_compute_workgroup_size_y)
                && t.storage(element) <= limits.max_compute_workgroup_storage_size
        })
    }
}

/// The WGSL scalar type of a dtype the kernel multiplies in.
fn scalar(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::F32 => Some("f32"),
        DType::F64 => Some("f64"),
        DType::I32 => Some("i32"),
        DType::U32 => Some("u32"),
        _ => None,
    }
}

/// The kernel for elements of WGSL type `ty` under `tiling`. Parameters: `m, k, n`, then the
/// workgroup offsets `x0, y0, z0` of this launch (a grid larger than the adapter's
/// per-dimension limit is split into launches). Workgroup `(x, y, z)` computes output rows
/// `(y0 + y) * TILE..`, columns `(x0 + x) * TILE..` of batch element `z0 + z`; invocation
/// `(lx, ly)` holds rows `ly + i * SIDE` and columns `lx + j * SIDE` of it, so neighbouring
/// invocations read neighbouring words of the staged slices. The register block is written
/// out as `BLOCK * BLOCK` scalars rather than an indexed array: compilers that run
/// invocations as SIMD lanes (lavapipe's llvmpipe) keep an indexed array in memory.
fn shader(ty: &str, tiling: Tiling) -> String {
    let side = tiling.side;
    let tile = tiling.tile();
    let staged = tile * DEPTH;
    let threads = side * side;
    let block = |f: &dyn Fn(u32, u32) -> String| -> String {
        let lines = (0..BLOCK).flat_map(|i| (0..BLOCK).map(move |j| (i, j)));
        lines.map(|(i, j)| f(i, j)).collect()
    };
    let acc = block(&|i, j| format!("    var acc{i}{j} = {ty}(0);\n"));
    let loads: String = (0..BLOCK)
        .map(|i| {
            let at = i * side;
            format!(
                "            let a{i} = a_tile[(lid.y + {at}u) * DEPTH + d];\n            \
                 let b{i} = b_tile[d * TILE + lid.x + {at}u];\n"
            )
        })
        .collect();
    let sums = block(&|i, j| format!("            acc{i}{j} = acc{i}{j} + a{i} * b{j};\n"));
    let stores = block(&|i, j| {
        let (r, c) = (i * side, j * side);
        format!("    put(m, n, c_base, row0 + lid.y + {r}u, col0 + lid.x + {c}u, acc{i}{j});\n")
    });
    format!(
        "// rjax matmul kernel ({ty}, {tile}x{tile} tiles)
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> lhs: array<{ty}>;
@group(0) @binding(2) var<storage, read> rhs: array<{ty}>;
@group(0) @binding(3) var<storage, read_write> out: array<{ty}>;

const TILE: u32 = {tile}u;
const DEPTH: u32 = {DEPTH}u;

// lhs rows [TILE][DEPTH] and rhs rows [DEPTH][TILE] of the current slice of k.
var<workgroup> a_tile: array<{ty}, {staged}>;
var<workgroup> b_tile: array<{ty}, {staged}>;

// Writes output element (r, c) of the matrix at `base`, when it is inside the m x n output.
fn put(m: u32, n: u32, base: u32, r: u32, c: u32, v: {ty}) {{
    if (r < m && c < n) {{
        out[base + r * n + c] = v;
    }}
}}

@compute @workgroup_size({side}, {side}, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {{
    let m = params[0];
    let k = params[1];
    let n = params[2];
    let col0 = (params[3] + wg.x) * TILE;
    let row0 = (params[4] + wg.y) * TILE;
    let batch = params[5] + wg.z;
    let a_base = batch * m * k;
    let b_base = batch * k * n;
    // Zeros, so k = 0 gives zeros.
{acc}    for (var k0 = 0u; k0 < k; k0 = k0 + DEPTH) {{
        // Stage the slice; elements past an edge are zeros that are never summed.
        for (var e = lane; e < {staged}u; e = e + {threads}u) {{
            let ar = row0 + e / DEPTH;
            let ac = k0 + e % DEPTH;
            var a = {ty}(0);
            if (ar < m && ac < k) {{
                a = lhs[a_base + ar * k + ac];
            }}
            a_tile[e] = a;
            let br = k0 + e / TILE;
            let bc = col0 + e % TILE;
            var b = {ty}(0);
            if (br < k && bc < n) {{
                b = rhs[b_base + br * n + bc];
            }}
            b_tile[e] = b;
        }}
        workgroupBarrier();
        // Only the slice's real depth is summed: padding would add +0 to a -0 sum.
        let depth = min(DEPTH, k - k0);
        for (var d = 0u; d < depth; d = d + 1u) {{
{loads}{sums}        }}
        workgroupBarrier();
    }}
    let c_base = batch * m * n;
{stores}}}
"
    )
}

/// Splits `count` workgroups into launches of at most `max`: `(first, count)` of each.
fn chunks(count: u32, max: u32) -> impl Iterator<Item = (u32, u32)> {
    let max = max.max(1);
    (0..count.div_ceil(max)).map(move |c| (c * max, (count - c * max).min(max)))
}

impl WgpuBackend {
    /// The product of `[b, m, k]` and `[b, k, n]` row-major operands, of `out`'s aval.
    pub(super) fn matmul(
        &self,
        [b, m, k, n]: [usize; 4],
        operands: &[Operand<'_>],
        out: &Aval,
    ) -> Result<DeviceBuffer, Error> {
        let op = "dot_general";
        let ty = self.product_type(operands, out)?;
        let tiling = Tiling::fitting(&self.limits, super::element_bytes(out.dtype) as u32)
            .ok_or_else(|| Error::Device {
                device: self.id,
                problem: format!("{op}: the adapter's workgroup limits leave no room for a tile"),
            })?;
        let word = |v: usize| {
            u32::try_from(v).map_err(|_| Error::Device {
                device: self.id,
                problem: format!("{op}: an extent of {v} does not fit 32 bits"),
            })
        };
        let (b, m, k, n) = (word(b)?, word(m)?, word(k)?, word(n)?);
        let len = out.shape.iter().product();
        let result = self.output(out.dtype, len, op)?;
        let wgsl = shader(ty, tiling);
        let max = self.limits.max_compute_workgroups_per_dimension;
        let tile = tiling.tile();
        for (z0, z) in chunks(b, max) {
            for (y0, y) in chunks(m.div_ceil(tile), max) {
                for (x0, x) in chunks(n.div_ceil(tile), max) {
                    let buffers = [
                        Bound::array(operands[0].buffer),
                        Bound::array(operands[1].buffer),
                        Bound::new(&result, out.dtype, len),
                    ];
                    let params = [m, k, n, x0, y0, z0];
                    self.launch_grid(op, &wgsl, &params, &buffers, [x, y, z])?;
                }
            }
        }
        Ok(DeviceBuffer::new(self.id, out.dtype, len, result))
    }

    /// The WGSL type both operands and the output share, or the error naming what differs.
    fn product_type(&self, operands: &[Operand<'_>], out: &Aval) -> Result<&'static str, Error> {
        let dtypes = [operands[0].buffer.dtype(), operands[1].buffer.dtype(), out.dtype];
        if dtypes.iter().any(|&d| d != out.dtype) {
            return Err(Error::Device {
                device: self.id,
                problem: format!(
                    "dot_general: the GPU kernel multiplies operands of the output's dtype, got \
                     {} x {} -> {}",
                    dtypes[0], dtypes[1], dtypes[2]
                ),
            });
        }
        scalar(out.dtype).ok_or_else(|| self.unsupported_dtype("dot_general", out.dtype))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_grid_within_the_limit() {
        assert_eq!(chunks(5, 2).collect::<Vec<_>>(), vec![(0, 2), (2, 2), (4, 1)]);
        assert_eq!(chunks(4, 65535).collect::<Vec<_>>(), vec![(0, 4)]);
        assert_eq!(chunks(0, 8).count(), 0);
    }

    #[test]
    fn tiling_follows_the_limits() {
        let mut limits = wgpu::Limits::default();
        assert_eq!(Tiling::fitting(&limits, 4), Some(Tiling { side: 16 }));
        limits.max_compute_invocations_per_workgroup = 128;
        assert_eq!(Tiling::fitting(&limits, 4), Some(Tiling { side: 8 }));
        limits.max_compute_workgroup_storage_size = 2048;
        assert_eq!(Tiling::fitting(&limits, 4), Some(Tiling { side: 4 }));
        limits.max_compute_workgroup_storage_size = 1024;
        assert_eq!(Tiling::fitting(&limits, 4), None);
        limits.max_compute_workgroup_storage_size = 4096;
        assert_eq!(Tiling::fitting(&limits, 8), Some(Tiling { side: 4 }));
    }
}
