//! [`Error`]: failures that come from outside the program rather than from a programming mistake.

use std::fmt;

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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::DType { op, expected, found } => {
                write!(f, "{op}: the array holds {found}, not {expected}; convert it first with .astype(DType::{expected:?})")
            }
            Error::Shape(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for Error {}
