//! Where operations meet devices: placement (`device_put`) and running a primitive on the
//! device its operands live on.
//!
//! JAX's rules: an operation runs where its operands are; operands *committed* to different
//! devices are an error naming both; uncommitted ones (arrays made by `jnp` functions and Rust
//! scalars, which live on `cpu:0` until placed) follow the committed operand there. So in
//! `&g * 2.0` with `g` on `gpu:0` the `2.0` is uploaded, while an array placed on `cpu:0`
//! with `device_put` and met by `g` is an error. A device without a kernel for the operation
//! or its dtype is a panic that says so, never a copy back to the host.

use super::{backend, Backend, DeviceBuffer, DeviceOp, ElementwiseOp, Operand};
use crate::array::Array;
use crate::device::Device;
use crate::error::Error;
use crate::primitives::{Aval, Primitive};

/// Runs `prim` on the device its operands are on, when that is not the host; `None` when
/// every operand is on the host (the caller evaluates it there).
///
/// # Panics
/// When operands are committed to different devices, when the device has no kernel for the
/// operation or its dtypes, or when the device fails (out of memory: the op and the bytes).
#[track_caller]
pub(crate) fn run(prim: &dyn Primitive, inputs: &[&Array], outputs: &[Aval]) -> Option<Vec<Array>> {
    let device = operands_device(&prim.name(), inputs)?;
    let avals: Vec<Aval> = inputs.iter().map(|x| x.aval()).collect();
    let Some(op) = prim.device_op(&avals) else {
        let dtype = inputs.iter().find(|x| x.device() == device).map(|x| x.dtype());
        unsupported(prim, dtype.expect("an operand is on the device"), device);
    };
    match op {
        // Its evaluation binds primitives, each of which comes back here.
        DeviceOp::Composite => return None,
        DeviceOp::Alias => return Some(vec![inputs[0].reshaped_in_place(&outputs[0])]),
        // A conversion to the same dtype only changes the weak-type flag.
        DeviceOp::Elementwise(ElementwiseOp::Convert) if inputs[0].dtype() == outputs[0].dtype => {
            return Some(vec![inputs[0].with_weak_type(outputs[0].weak)]);
        }
        _ => {}
    }
    let backend = backend(device).unwrap_or_else(|e| panic!("{}: {e}", prim.name()));
    for dtype in inputs.iter().map(|x| x.dtype()).chain(outputs.iter().map(|o| o.dtype)) {
        if let Err(why) = backend.computes(dtype) {
            panic!("{}: {why}; move the array with device_put(&x, Device::Cpu(0))", prim.name());
        }
    }
    Some(run_there(backend, &prim.name(), &op, inputs, outputs))
}

/// The device an operation on `inputs` runs on: the first one not on the host; `None` when
/// all are on the host.
///
/// # Panics
/// When operands are committed to different devices (naming `name` and both devices).
#[track_caller]
fn operands_device(name: &str, inputs: &[&Array]) -> Option<Device> {
    let device = inputs.iter().map(|a| a.device()).find(|d| !d.is_host())?;
    for x in inputs {
        let other = x.device();
        if other != device && (x.is_committed() || !other.is_host()) {
            panic!(
                "{name}: operands are on different devices, {device} and {other}; rjax makes \
                 no implicit copies: move one with device_put(&x, Device::{})",
                variant(device)
            );
        }
    }
    Some(device)
}

/// Runs a fused elementwise group of a `#[jit]` plan on the device its operands are on;
/// `None` when every operand is on the host, or when the device cannot run the group's
/// dtypes (the caller then runs its equations one by one).
#[track_caller]
pub(crate) fn run_group(
    group: &super::ElementwiseGroup,
    inputs: &[&Array],
    outputs: &[Aval],
) -> Option<Vec<Array>> {
    let device = operands_device("a fused group", inputs)?;
    let backend = backend(device).ok()?;
    let dtypes = inputs.iter().map(|x| x.dtype()).chain(group.ops.iter().map(|o| o.dtype));
    if !dtypes.clone().all(|d| backend.computes(d).is_ok()) {
        return None;
    }
    let op = DeviceOp::Fused(Box::new(group.clone()));
    Some(run_there(backend, "a fused group", &op, inputs, outputs))
}

/// Runs `op` on `backend`, uploading the operands that are on the host first.
#[track_caller]
fn run_there(
    backend: &dyn Backend,
    name: &str,
    op: &DeviceOp,
    inputs: &[&Array],
    outputs: &[Aval],
) -> Vec<Array> {
    let uploaded: Vec<Option<DeviceBuffer>> = inputs
        .iter()
        .map(|x| {
            x.device_buffer()
                .is_none()
                .then(|| backend.upload(x.buffer()).unwrap_or_else(|e| panic!("{name}: {e}")))
        })
        .collect();
    let operands: Vec<Operand<'_>> = inputs
        .iter()
        .zip(&uploaded)
        .map(|(x, up)| Operand {
            buffer: up.as_ref().or(x.device_buffer()).expect("uploaded above"),
            shape: x.shape(),
        })
        .collect();
    let buffers = run_op(backend, op, &operands, outputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let arrays = buffers
        .into_iter()
        .zip(outputs)
        .map(|(buffer, out)| Array::from_device_buffer(&out.shape, buffer, out.weak));
    arrays.collect()
}

/// Runs `op` on `backend`, first bringing a product's operands to the layout it reads.
fn run_op(
    backend: &dyn Backend,
    op: &DeviceOp,
    operands: &[Operand<'_>],
    outputs: &[Aval],
) -> Result<Vec<DeviceBuffer>, Error> {
    let DeviceOp::Matmul { lhs_perm, rhs_perm, b, m, k, n } = op else {
        return backend.run(op, operands, outputs);
    };
    let laid_out = |x: &Operand<'_>, perm: &[usize]| -> Result<Option<DeviceBuffer>, Error> {
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            return Ok(None);
        }
        let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
        let aval = Aval { shape, dtype: x.buffer.dtype(), weak: false };
        let copy = DeviceOp::transpose(x.shape, perm);
        Ok(backend.run(&copy, std::slice::from_ref(x), &[aval])?.pop())
    };
    let lhs = laid_out(&operands[0], lhs_perm)?;
    let rhs = laid_out(&operands[1], rhs_perm)?;
    let (lhs_shape, rhs_shape) = ([*b, *m, *k], [*b, *k, *n]);
    let product = [
        Operand { buffer: lhs.as_ref().unwrap_or(operands[0].buffer), shape: &lhs_shape },
        Operand { buffer: rhs.as_ref().unwrap_or(operands[1].buffer), shape: &rhs_shape },
    ];
    let identity = |r: usize| (0..r).collect::<Vec<usize>>();
    let plain = DeviceOp::Matmul {
        lhs_perm: identity(3),
        rhs_perm: identity(3),
        b: *b,
        m: *m,
        k: *k,
        n: *n,
    };
    backend.run(&plain, &product, outputs)
}

#[track_caller]
fn unsupported(prim: &dyn Primitive, dtype: crate::DType, device: Device) -> ! {
    panic!(
        "{}: no {} kernel yet for {dtype} on {device}; move the array with \
         device_put(&x, Device::Cpu(0))",
        prim.name(),
        device.platform().to_uppercase(),
    )
}

/// `Gpu(0)`: how a device is written in Rust, for messages that suggest code.
fn variant(device: Device) -> String {
    let kind = match device {
        Device::Cpu(_) => "Cpu",
        Device::Gpu(_) => "Gpu",
    };
    format!("{kind}({})", device.id())
}

/// `x` on `device`, committed to it (see [`crate::device::try_device_put`], which checks that
/// the device exists).
pub(crate) fn place(x: &Array, device: Device) -> Result<Array, Error> {
    let from = x.device();
    // Host devices share memory: only the placement changes.
    if from == device || (from.is_host() && device.is_host()) {
        return Ok(x.committed_to(device));
    }
    if x.is_traced() {
        return Err(Error::Traced { op: "device_put" });
    }
    let host = x.host_buffer()?;
    if device.is_host() {
        let values = Array::from_buffer(x.shape(), host.into_owned(), x.is_weak());
        return Ok(values.committed_to(device));
    }
    let backend: &dyn Backend = backend(device)?;
    let buffer = backend.upload(&host)?;
    Ok(Array::from_device_buffer(x.shape(), buffer, x.is_weak()))
}
