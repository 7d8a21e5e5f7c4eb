//! Arrays in a device's memory, and the placement flags JAX keeps on arrays.

use std::borrow::Cow;
use std::sync::Arc;

use super::{shared_shape, Array, Buffer, Data};
use crate::backend::{backend, DeviceBuffer};
use crate::device::Device;
use crate::error::Error;

impl Array {
    /// An array over `buffer`, in its device's memory, committed to that device.
    pub(crate) fn from_device_buffer(shape: &[usize], buffer: DeviceBuffer, weak: bool) -> Array {
        debug_assert_eq!(shape.iter().product::<usize>(), buffer.len());
        let device = buffer.device();
        Array {
            shape: shared_shape(shape),
            data: Data::OnDevice(Arc::new(buffer)),
            weak,
            device,
            committed: true,
        }
    }

    /// The buffer of an array held in a device's memory.
    /// The same buffer under `out`'s shape and weak flag (a reshape on a device: its
    /// row-major elements are already in the new shape's order).
    pub(crate) fn reshaped_in_place(&self, out: &crate::primitives::Aval) -> Array {
        debug_assert_eq!(out.shape.iter().product::<usize>(), self.size());
        Array { shape: shared_shape(&out.shape), weak: out.weak, ..self.clone() }
    }

    /// The array itself if it is on the host, otherwise a copy of it there (uncommitted).
    pub(crate) fn to_host(&self) -> Result<Array, Error> {
        match &self.data {
            Data::OnDevice(_) => {
                let host = self.host_buffer()?.into_owned();
                Ok(Array::from_buffer(self.shape(), host, self.weak))
            }
            _ => Ok(self.clone()),
        }
    }

    /// Waits until the array's values have been computed (`jax.Array.block_until_ready`), and
    /// returns it. Work on a GPU is queued and runs while the host goes on; time GPU code
    /// with this, not with the calls that queue it. Host arrays are always ready.
    ///
    /// # Panics
    /// When the device failed (lost, or out of memory), naming it.
    ///
    /// ```
    /// use rjax_runtime::jnp;
    /// let y = (jnp::ones([1000]) * 2.0).block_until_ready().clone();
    /// assert_eq!(y.size(), 1000);
    /// ```
    pub fn block_until_ready(&self) -> &Array {
        let pieces = match &self.data {
            Data::Sharded(s) => s.parts.iter().collect(),
            _ => vec![self],
        };
        for piece in pieces {
            if let Data::OnDevice(b) = &piece.data {
                let done = backend(b.device()).and_then(|device| device.synchronize());
                done.unwrap_or_else(|e| panic!("block_until_ready: {e}"));
            }
        }
        self
    }

    pub(crate) fn device_buffer(&self) -> Option<&DeviceBuffer> {
        match &self.data {
            Data::OnDevice(b) => Some(b),
            _ => None,
        }
    }

    /// Whether the array is committed to its device (JAX's `committed`): placed there by
    /// [`device_put`](crate::device::device_put), or computed on a GPU (every GPU array is).
    /// An operation may move an uncommitted operand (an array made by a `jnp` function, a
    /// Rust scalar) to the device of a committed one; committed operands on different devices
    /// are an error. Results of operations on the host are not committed: host devices share
    /// memory, so nothing there needs to stay put.
    pub fn is_committed(&self) -> bool {
        self.committed
    }

    /// The same array committed to `device`, which must hold its data already (any host
    /// device, for host data: they share memory).
    pub(crate) fn committed_to(&self, device: Device) -> Array {
        debug_assert!(self.device == device || (self.device.is_host() && device.is_host()));
        Array { device, committed: true, ..self.clone() }
    }

    /// The values in host memory: borrowed for a host array, copied from the device for one
    /// on a GPU.
    pub(crate) fn host_buffer(&self) -> Result<Cow<'_, Buffer>, Error> {
        match &self.data {
            Data::OnDevice(b) => Ok(Cow::Owned(backend(b.device())?.download(b)?)),
            Data::Traced(_) => Err(Error::Traced { op: "reading an array's values" }),
            _ => Ok(Cow::Borrowed(self.buffer())),
        }
    }
}

/// What `Array::buffer` says of an array on a device: its values are not in host memory.
#[track_caller]
pub(super) fn not_on_host(b: &DeviceBuffer) -> ! {
    let device = b.device();
    panic!(
        "the values of an array on {device} were read on the host by an operation that has no \
         {} kernel; rjax makes no hidden copies: move the array with \
         device_put(&x, Device::Cpu(0)) first",
        device.platform().to_uppercase()
    )
}
