//! [`Array`]: the immutable, shared, n-dimensional array every op reads and writes.

pub mod buffer;
mod convert;
mod device;
mod display;
mod methods;
pub mod ops;

use std::sync::Arc;

pub use buffer::Buffer;

use crate::device::Device;
use crate::dtype::{DType, Element};
use crate::error::Error;
use crate::ir::Tracer;
use crate::primitives::Aval;
use crate::shape::ShapeDisplay;

/// An immutable n-dimensional array, like `jax.Array`.
///
/// Cloning is cheap: clones share one buffer. Outside annotated functions every operation runs
/// eagerly and returns a new array. Arrays are always stored contiguously in row-major order.
///
/// ```
/// use rjax_runtime::{jnp, Array, DType};
/// let x = Array::from_shape_vec([2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
/// let y = &x * 2.0 + 1.0;
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0, 9.0]);
/// assert_eq!(y.dtype(), DType::F32);
/// assert_eq!(jnp::arange(4).dtype(), DType::I32);
/// ```
#[derive(Clone)]
pub struct Array {
    shape: Arc<[usize]>,
    data: Data,
    weak: bool,
    device: Device,
    /// Committed to `device`, as JAX commits arrays (see [`Array::is_committed`]).
    committed: bool,
}

/// What an array holds: values, values spread over devices, values in a device's memory, or
/// (inside a trace) a symbolic variable of the IR being built.
#[derive(Clone)]
pub(crate) enum Data {
    Concrete(Arc<Buffer>),
    Sharded(Arc<Shards>),
    OnDevice(Arc<crate::backend::DeviceBuffer>),
    Traced(Tracer),
}

/// The per-device pieces of an array (what `pmap` returns): the array is the pieces stacked
/// along `axis`, gathered into one buffer only when something reads its values, so a `pmap`
/// fed another's output takes the pieces as they are.
pub(crate) struct Shards {
    parts: Vec<Array>,
    axis: usize,
    gathered: std::sync::OnceLock<Arc<Buffer>>,
}

impl Shards {
    fn gathered(&self) -> &Buffer {
        self.gathered_shared()
    }

    fn gathered_shared(&self) -> &Arc<Buffer> {
        self.gathered.get_or_init(|| {
            use crate::transform::batch::ops::{move_axis, stack};
            // Pieces on GPUs are read back: a pmap output as a whole lives on the host.
            let on_host = |p: &Array| {
                p.to_host().unwrap_or_else(|e| panic!("reading the pieces of a pmap output: {e}"))
            };
            let parts: Vec<Array> = self.parts.iter().map(on_host).collect();
            let stacked = move_axis(&stack(&parts), 0, self.axis);
            match &stacked.data {
                Data::Concrete(b) => b.clone(),
                _ => unreachable!("stacking concrete shards gives values"),
            }
        })
    }
}

/// `shape` as an array's shape. Every 0-d array shares one empty shape, so making a scalar
/// does not allocate one (a cached scalar `#[jit]` call makes two).
fn shared_shape(shape: &[usize]) -> Arc<[usize]> {
    static SCALAR: std::sync::LazyLock<Arc<[usize]>> = std::sync::LazyLock::new(|| Arc::new([]));
    if shape.is_empty() {
        SCALAR.clone()
    } else {
        shape.into()
    }
}

impl Array {
    /// An array over `buffer`, which must hold exactly `shape`'s element count.
    pub(crate) fn from_buffer(shape: &[usize], buffer: Buffer, weak: bool) -> Array {
        // Every array's shape is valid (see `crate::shape`): the kernels rely on it.
        let n = crate::shape::check("Array", shape, buffer.dtype());
        assert_eq!(n, buffer.len(), "Array: shape {} needs {n} elements", ShapeDisplay(shape));
        let shape = shared_shape(shape);
        let data = Data::Concrete(Arc::new(buffer));
        Array { shape, data, weak, device: Device::default(), committed: false }
    }

    /// A symbolic array standing for variable `tracer` of a trace being recorded.
    pub(crate) fn from_tracer(aval: &Aval, tracer: Tracer) -> Array {
        Array {
            shape: shared_shape(&aval.shape),
            data: Data::Traced(tracer),
            weak: aval.weak,
            device: Device::default(),
            committed: false,
        }
    }

    /// The array made of `parts` (concrete, of one shape and dtype, one per device) stacked
    /// along a new axis `axis`; nothing is copied until its values are read.
    pub(crate) fn from_shards(parts: Vec<Array>, axis: usize) -> Array {
        let first = parts.first().expect("a sharded array has at least one piece");
        let mut shape = first.shape().to_vec();
        shape.insert(axis, parts.len());
        crate::shape::check("pmap", &shape, first.dtype());
        debug_assert!(parts.iter().all(|p| !p.is_traced() && p.aval() == first.aval()));
        let weak = first.weak;
        let shards = Shards { parts, axis, gathered: std::sync::OnceLock::new() };
        Array {
            shape: shape.into(),
            data: Data::Sharded(Arc::new(shards)),
            weak,
            device: Device::default(),
            committed: false,
        }
    }

    /// The per-device pieces, if this array is `pieces` stacked along `axis`.
    pub(crate) fn shards_along(&self, axis: usize) -> Option<&[Array]> {
        let Data::Sharded(s) = &self.data else { return None };
        let mut stacked = s.parts[0].shape().to_vec();
        stacked.insert(s.axis, s.parts.len());
        (s.axis == axis && *self.shape == *stacked).then_some(s.parts.as_slice())
    }

    /// The devices holding the array's data: one per piece for a `pmap` output, else one.
    pub fn devices(&self) -> Vec<Device> {
        match &self.data {
            Data::Sharded(s) => s.parts.iter().map(|p| p.device).collect(),
            _ => vec![self.device],
        }
    }

    /// The tracer behind a symbolic array, or `None` for one that holds values.
    pub(crate) fn tracer(&self) -> Option<&Tracer> {
        match &self.data {
            Data::Traced(t) => Some(t),
            Data::Concrete(_) | Data::Sharded(_) | Data::OnDevice(_) => None,
        }
    }

    /// Whether this array is a symbolic value inside a traced function (JAX's tracer) rather
    /// than one holding data. Traced arrays have a shape and dtype but no values.
    pub fn is_traced(&self) -> bool {
        matches!(self.data, Data::Traced(_))
    }

    /// An array of `shape` holding `data` in row-major order.
    ///
    /// Panics when `data.len()` is not the product of `shape`.
    #[track_caller]
    pub fn from_shape_vec<T: Element>(shape: impl AsRef<[usize]>, data: Vec<T>) -> Array {
        let shape = shape.as_ref();
        let n = crate::shape::check("Array::from_shape_vec", shape, T::DTYPE);
        if n != data.len() {
            panic!(
                "Array::from_shape_vec: shape {} needs {n} elements but {} were given",
                ShapeDisplay(shape),
                data.len()
            );
        }
        Array::from_host(shape, T::wrap(data), false)
    }

    /// An array of host data in the current dtype mode: 64-bit data becomes 32-bit unless x64
    /// is on, as `jnp.asarray` canonicalizes NumPy data (see [`crate::config`]).
    fn from_host(shape: &[usize], buffer: Buffer, weak: bool) -> Array {
        let dtype = crate::dtype::canonicalize(buffer.dtype());
        let buffer = if dtype == buffer.dtype() { buffer } else { buffer.cast(dtype) };
        Array::from_buffer(shape, buffer, weak)
    }

    /// Like [`Array::from_shape_vec`], returning an error instead of panicking.
    pub fn try_from_shape_vec<T: Element>(
        shape: impl AsRef<[usize]>,
        data: Vec<T>,
    ) -> Result<Array, Error> {
        let shape = shape.as_ref();
        let n = crate::shape::validate(shape, T::DTYPE)
            .map_err(|msg| Error::Shape(format!("Array::try_from_shape_vec: {msg}")))?;
        if n != data.len() {
            return Err(Error::Shape(format!(
                "shape {} needs {n} elements but {} were given",
                ShapeDisplay(shape),
                data.len()
            )));
        }
        Ok(Array::from_host(shape, T::wrap(data), false))
    }

    /// A weakly typed 0-d array, as a Rust scalar literal becomes when combined with an array.
    pub fn weak_scalar<T: Element>(value: T) -> Array {
        Array::from_host(&[], T::wrap(vec![value]), true)
    }

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match &self.data {
            Data::Concrete(b) => b.dtype(),
            Data::Sharded(s) => s.parts[0].dtype(),
            Data::OnDevice(b) => b.dtype(),
            Data::Traced(t) => t.dtype,
        }
    }

    /// JAX's weak-type flag: true for arrays that came from Rust scalars and promote like them.
    pub fn is_weak(&self) -> bool {
        self.weak
    }

    /// The device that holds the array's buffer.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The underlying buffer.
    ///
    /// Panics for a traced array, which has no values yet (JAX's `ConcretizationTypeError`),
    /// and for one on a GPU, whose values are copied to the host only when asked (`to_vec`,
    /// `item`, printing, `device_put` to a CPU device).
    #[track_caller]
    pub fn buffer(&self) -> &Buffer {
        match &self.data {
            Data::Concrete(b) => b,
            Data::Sharded(s) => s.gathered(),
            Data::OnDevice(b) => device::not_on_host(b),
            Data::Traced(_) => panic!("{}", Error::Traced { op: "reading an array's values" }),
        }
    }

    /// The array's buffer, if the array holds its values in one buffer nothing else shares
    /// (so a kernel may overwrite it); otherwise the array back.
    pub(crate) fn into_unique_buffer(self) -> Result<Buffer, Array> {
        let Array { shape, data, weak, device, committed } = self;
        match data {
            Data::Concrete(buffer) => Arc::try_unwrap(buffer).map_err(|b| Array {
                shape,
                data: Data::Concrete(b),
                weak,
                device,
                committed,
            }),
            data => Err(Array { shape, data, weak, device, committed }),
        }
    }

    /// An identity for the array's storage: equal for arrays sharing a buffer (or a tracer).
    pub(crate) fn buffer_id(&self) -> usize {
        match &self.data {
            Data::Concrete(b) => Arc::as_ptr(b) as usize,
            Data::Sharded(s) => Arc::as_ptr(s) as usize,
            Data::OnDevice(b) => Arc::as_ptr(b) as usize,
            Data::Traced(t) => (t.trace as usize) << 32 | t.var.index(),
        }
    }

    /// The elements as a typed slice, if `T` is the array's element type.
    ///
    /// Panics for a traced array, which has no values yet.
    #[track_caller]
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::slice(self.buffer())
    }

    /// Shape, dtype and weak flag: what shape rules see.
    pub fn aval(&self) -> Aval {
        Aval { shape: self.shape.to_vec(), dtype: self.dtype(), weak: self.weak }
    }

    /// The same array with a different shape of equal size, sharing the buffer.
    ///
    /// A traced array's shape is its variable's, so for one this records a `reshape` instead
    /// of relabelling the tracer (which the program would never see).
    #[track_caller]
    pub(crate) fn with_shape(&self, shape: Vec<usize>) -> Array {
        let n = crate::shape::check("reshape", &shape, self.dtype());
        assert_eq!(n, self.size(), "reshape: shape {} needs {n} elements", ShapeDisplay(&shape));
        if self.is_traced() {
            return crate::primitives::bind1(
                &crate::primitives::Reshape { new_sizes: shape },
                &[self],
            );
        }
        match &self.data {
            // The pieces are split along an axis of the old shape: relabel the whole instead.
            Data::Sharded(s) => Array {
                shape: shared_shape(&shape),
                data: Data::Concrete(s.gathered_shared().clone()),
                ..self.clone()
            },
            _ => Array { shape: shared_shape(&shape), ..self.clone() },
        }
    }

    /// The same data with JAX's weak-type flag set to `weak` (no copy).
    ///
    /// For a traced array this records the change (a `convert_element_type` to its own dtype),
    /// so the program's values carry the new flag too.
    #[track_caller]
    pub fn with_weak_type(&self, weak: bool) -> Array {
        if self.is_traced() && self.weak != weak {
            let convert = crate::primitives::Convert { dtype: self.dtype(), weak };
            return crate::primitives::bind1(&convert, &[self]);
        }
        Array { weak, ..self.clone() }
    }

    /// Whether two arrays share one buffer (clones do).
    pub fn shares_buffer_with(&self, other: &Array) -> bool {
        match (&self.data, &other.data) {
            (Data::Concrete(a), Data::Concrete(b)) => Arc::ptr_eq(a, b),
            (Data::Sharded(a), Data::Sharded(b)) => Arc::ptr_eq(a, b),
            (Data::OnDevice(a), Data::OnDevice(b)) => Arc::ptr_eq(a, b),
            (Data::Traced(a), Data::Traced(b)) => a == b,
            _ => false,
        }
    }
}
