//! Moving data out of arrays, and conversions to and from Rust values and `ndarray`.

use std::borrow::Cow;

use ndarray::{ArrayD, IxDyn};

use super::Array;
use crate::dtype::Element;
use crate::error::Error;
use crate::exec::cpu::alloc;
use crate::shape::ShapeDisplay;

impl Array {
    /// The elements in row-major order, if the array holds `T`. For an array on a GPU they
    /// are copied from the device (an error if that fails).
    ///
    /// ```
    /// use rjax_runtime::jnp;
    /// assert_eq!(jnp::arange(3).to_vec::<i32>().unwrap(), vec![0, 1, 2]);
    /// assert!(jnp::arange(3).to_vec::<f32>().is_err());
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, Error> {
        if self.is_traced() {
            return Err(Error::Traced { op: "to_vec" });
        }
        let wrong_dtype = Error::DType { op: "to_vec", expected: T::DTYPE, found: self.dtype() };
        if T::DTYPE != self.dtype() {
            return Err(wrong_dtype);
        }
        match self.host_buffer()? {
            Cow::Borrowed(b) => {
                let values = b.as_slice::<T>().ok_or(wrong_dtype)?;
                alloc::try_run(|| alloc::named(|| "to_vec".to_string(), || alloc::copy_of(values)))
            }
            Cow::Owned(mut b) => T::take_vec(&mut b).ok_or(wrong_dtype),
        }
    }

    /// The single element of a 0-d or one-element array (copied from the device for an array
    /// on a GPU).
    pub fn item<T: Element>(&self) -> Result<T, Error> {
        if self.is_traced() {
            return Err(Error::Traced { op: "item" });
        }
        if self.size() != 1 {
            return Err(Error::Shape(format!(
                "item: an array of shape {} has {} elements; item() needs exactly one",
                ShapeDisplay(self.shape()),
                self.size()
            )));
        }
        let wrong_dtype = Error::DType { op: "item", expected: T::DTYPE, found: self.dtype() };
        if T::DTYPE != self.dtype() {
            return Err(wrong_dtype);
        }
        let host = self.host_buffer()?;
        Ok(host.as_slice::<T>().ok_or(wrong_dtype)?[0])
    }

    /// Copies into an `ndarray::ArrayD`, if the array holds `T`.
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>, Error> {
        let data = self.to_vec::<T>()?;
        Ok(ArrayD::from_shape_vec(IxDyn(self.shape()), data)
            .expect("an array's buffer always matches its shape"))
    }
}

impl<T: Element> From<T> for Array {
    /// A 0-d array holding `value` (strongly typed, like `jnp.float32(1.0)`).
    fn from(value: T) -> Array {
        Array::from_shape_vec([], vec![value])
    }
}

/// Copies (or moves) an `ndarray` into an array; out of memory for the copy is an unwinding
/// panic naming the conversion, not an abort.
impl<T: Element> From<ArrayD<T>> for Array {
    #[track_caller]
    fn from(a: ArrayD<T>) -> Array {
        let shape = a.shape().to_vec();
        let data = if a.is_standard_layout() {
            // Standard layout is contiguous from the offset on.
            let n = a.len();
            let (raw, offset) = a.into_raw_vec_and_offset();
            let offset = offset.unwrap_or(0);
            if offset == 0 && raw.len() == n {
                raw
            } else {
                from_ndarray_copy(|| alloc::copy_of(&raw[offset..offset + n]))
            }
        } else {
            from_ndarray_copy(|| alloc::collect(a.iter().copied()))
        };
        Array::from_shape_vec(shape, data)
    }
}

/// Copies an `ndarray` into an array (out of memory is an unwinding panic, as for
/// `From<ArrayD<T>>`).
impl<T: Element> From<&ArrayD<T>> for Array {
    #[track_caller]
    fn from(a: &ArrayD<T>) -> Array {
        let data = from_ndarray_copy(|| alloc::collect(a.iter().copied()));
        Array::from_shape_vec(a.shape(), data)
    }
}

/// Runs a conversion's copy, naming the conversion if memory runs out.
#[track_caller]
fn from_ndarray_copy<T>(copy: impl FnOnce() -> Vec<T>) -> Vec<T> {
    alloc::named(|| "Array::from(ndarray)".to_string(), copy)
}

impl<T: Element> TryFrom<&Array> for ArrayD<T> {
    type Error = Error;
    fn try_from(a: &Array) -> Result<ArrayD<T>, Error> {
        a.to_ndarray()
    }
}

impl<T: Element> TryFrom<Array> for ArrayD<T> {
    type Error = Error;
    fn try_from(a: Array) -> Result<ArrayD<T>, Error> {
        a.to_ndarray()
    }
}
