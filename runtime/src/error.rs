//! [`Error`]: failures that come from outside the program rather than from a programming mistake.

use std::fmt;

use crate::device::Device;
use crate::dtype::DType;

/// What can go wrong for reasons a caller may want to handle.
///
/// Programming errors (mismatched shapes, bad axes) panic instead, with a message that names the
/// operation and the shapes involved.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// A typed read asked for the wrong element type.
    DType { op: &'static str, expected: DType, found: DType },
    /// A value's shape does not fit what was asked of it.
    Shape(String),
    /// Values were asked of a traced array, which has none until the traced function runs
    /// (JAX's `ConcretizationTypeError`).
    Traced { op: &'static str },
    /// A traced value was used outside the trace that made it (JAX's `UnexpectedTracerError`).
    EscapedTracer,
    /// A checkpoint could not be saved or loaded: the file, the leaf (its path in the tree)
    /// when one is to blame, and what is wrong.
    Checkpoint { path: String, leaf: Option<String>, problem: String },
    /// A platform (`"gpu"`) cannot be used: rjax was built without it, no driver or loader is
    /// installed, or no adapter was found; `problem` says which.
    Platform { platform: &'static str, problem: String },
    /// A device failed at something asked of it (it was lost, a mapping failed, an array does
    /// not fit its largest buffer): the device and what went wrong.
    Device { device: Device, problem: String },
    /// `device` (the host's memory for a CPU device) had no room for a buffer of `bytes` bytes
    /// that `op` needed (JAX's `RESOURCE_EXHAUSTED`). Nothing was changed; the process goes on.
    OutOfMemory { device: Device, op: String, bytes: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::DType { op, expected, found }
                if expected.is_64_bit() && crate::dtype::canonicalize(*expected) == *found =>
            {
                write!(
                    f,
                    "{op}: the array holds {found}, not {expected}: 64-bit types are off, as in \
                     JAX by default; turn them on with rjax::config::enable_x64(true) (or \
                     RJAX_ENABLE_X64=1) before making the array, or read it as {found}"
                )
            }
            Error::DType { op, expected, found } => {
                write!(f, "{op}: the array holds {found}, not {expected}; convert it first with .astype(DType::{expected:?})")
            }
            Error::Shape(msg) => f.write_str(msg),
            Error::Traced { op } => write!(
                f,
                "{op}: the array is traced (a symbolic value inside a #[jit] or #[traceable] \
                 function) and has no values yet; keep the computation in rjax operations, \
                 branch with `if` on a traced 0-d bool (lax::cond), or print with \
                 rjax::debug_print!"
            ),
            Error::EscapedTracer => f.write_str(
                "a traced value was used after the traced function that made it returned; \
                 return it from that function instead of storing it (JAX's UnexpectedTracerError)",
            ),
            Error::Checkpoint { path, leaf: Some(leaf), problem } => {
                write!(f, "checkpoint {path}: leaf `{leaf}`: {problem}")
            }
            Error::Checkpoint { path, leaf: None, problem } => {
                write!(f, "checkpoint {path}: {problem}")
            }
            Error::Platform { platform, problem } => write!(f, "platform {platform}: {problem}"),
            Error::Device { device, problem } => write!(f, "{device}: {problem}"),
            Error::OutOfMemory { device, op, bytes } => write!(
                f,
                "{op}: out of memory on {device}: could not allocate {bytes} bytes ({:.2} GiB)",
                *bytes as f64 / (1u64 << 30) as f64
            ),
        }
    }
}

impl std::error::Error for Error {}
