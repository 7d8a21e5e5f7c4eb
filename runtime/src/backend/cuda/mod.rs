//! The CUDA backend's kernel compiler (feature `cuda`): the CUDA C of every elementwise
//! operation and fused group, made from the same layouts and groups the wgpu backend runs,
//! and compiled by NVRTC into CUBIN for a GPU generation, with an in-memory and on-disk cache.
//!
//! NVRTC is loaded when first needed (cudarc's dynamic loading), so building with the feature
//! needs no CUDA, and a machine without it gets an [`Error`] naming what is missing. Arrays do
//! not live on CUDA devices yet: there is no `Device::Cuda` and nothing here launches a kernel.
//! The compiler comes first because it can be checked without a GPU: a CUBIN for `sm_80` or
//! `sm_90` has been through NVIDIA's own assembler for that device.

mod codegen;
mod math;
mod nvrtc;

use crate::backend::layout::{Access, Layout};
use crate::backend::{ElementwiseGroup, ElementwiseOp};
use crate::dtype::DType;
use crate::error::Error;

pub(crate) use nvrtc::compile;
pub use nvrtc::CudaArch;

fn refused(problem: String) -> Error {
    Error::Platform { platform: "cuda", problem }
}

/// Checks that every operand broadcasts to `shape`, and lays them out over it.
fn layout(what: &str, operands: &[(DType, &[usize])], shape: &[usize]) -> Result<Layout, Error> {
    for (_, s) in operands {
        if crate::shape::broadcast_shapes(s, shape).as_deref() != Some(shape) {
            return Err(refused(format!("{what}: operand {s:?} does not broadcast to {shape:?}")));
        }
    }
    let shapes: Vec<&[usize]> = operands.iter().map(|(_, s)| *s).collect();
    Ok(Layout::new(shape, &shapes))
}

/// The CUDA C of the kernel running `op` (see [`crate::backend::elementwise_cuda`]).
pub(crate) fn elementwise_source(
    op: ElementwiseOp,
    operands: &[(DType, &[usize])],
    out: (DType, &[usize]),
) -> Result<String, Error> {
    let layout = layout("elementwise_cuda", operands, out.1)?;
    let kernel = codegen::Kernel {
        op,
        inputs: operands.iter().zip(&layout.operands).map(|((d, _), a)| (*d, a)).collect(),
        out: out.0,
        rank: layout.dims.len(),
    };
    codegen::elementwise(&kernel).map_err(|e| refused(format!("{op:?}: {e}")))
}

/// The CUDA C of a fused group's kernel (see [`crate::backend::fused_cuda`]).
pub(crate) fn fused_source(
    group: &ElementwiseGroup,
    operands: &[(DType, &[usize])],
    shape: &[usize],
) -> Result<String, Error> {
    if group.reduction.is_some() {
        return Err(refused(
            "fused_cuda: no CUDA kernel yet for a group closed by a reduction".to_string(),
        ));
    }
    let layout = layout("fused_cuda", operands, shape)?;
    let inputs: Vec<(DType, &Access)> =
        operands.iter().zip(&layout.operands).map(|((d, _), a)| (*d, a)).collect();
    codegen::fused(group, &inputs, layout.dims.len()).map_err(refused)
}

/// The CUDA C of the threefry-2x32 kernel over `uint32` operands `key0, key1, x0, x1` of these
/// shapes, broadcast to `shape`, writing both words of each hash.
pub(crate) fn threefry_source(operands: &[&[usize]], shape: &[usize]) -> Result<String, Error> {
    let typed: Vec<(DType, &[usize])> = operands.iter().map(|s| (DType::U32, *s)).collect();
    let layout = layout("threefry2x32", &typed, shape)?;
    let inputs: Vec<(DType, &Access)> = layout.operands.iter().map(|a| (DType::U32, a)).collect();
    codegen::threefry(&inputs, layout.dims.len()).map_err(refused)
}

#[cfg(test)]
mod host_tests;
#[cfg(test)]
mod tests;
