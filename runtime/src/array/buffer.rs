//! The typed, shared storage behind arrays.

use half::{bf16, f16};

use crate::dtype::{DType, Element};

/// A contiguous, row-major buffer of one element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    U8(Vec<u8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<num_complex::Complex<f32>>),
    C128(Vec<num_complex::Complex<f64>>),
}

/// Runs `$body` with `$v` bound to the typed `Vec` inside a [`Buffer`] and `$t` to its element
/// type, for every dtype. The one place that enumerates the variants for generic kernels.
#[macro_export]
#[doc(hidden)]
macro_rules! with_buffer {
    ($buf:expr, |$v:ident : $t:ident| $body:expr) => {{
        use $crate::array::buffer::Buffer as __B;
        match $buf {
            __B::Bool($v) => {
                #[allow(unused)]
                type $t = bool;
                $body
            }
            __B::I8($v) => {
                #[allow(unused)]
                type $t = i8;
                $body
            }
            __B::I16($v) => {
                #[allow(unused)]
                type $t = i16;
                $body
            }
            __B::I32($v) => {
                #[allow(unused)]
                type $t = i32;
                $body
            }
            __B::I64($v) => {
                #[allow(unused)]
                type $t = i64;
                $body
            }
            __B::U8($v) => {
                #[allow(unused)]
                type $t = u8;
                $body
            }
            __B::U16($v) => {
                #[allow(unused)]
                type $t = u16;
                $body
            }
            __B::U32($v) => {
                #[allow(unused)]
                type $t = u32;
                $body
            }
            __B::U64($v) => {
                #[allow(unused)]
                type $t = u64;
                $body
            }
            __B::F16($v) => {
                #[allow(unused)]
                type $t = half::f16;
                $body
            }
            __B::BF16($v) => {
                #[allow(unused)]
                type $t = half::bf16;
                $body
            }
            __B::F32($v) => {
                #[allow(unused)]
                type $t = f32;
                $body
            }
            __B::F64($v) => {
                #[allow(unused)]
                type $t = f64;
                $body
            }
            __B::C64($v) => {
                #[allow(unused)]
                type $t = $crate::Complex<f32>;
                $body
            }
            __B::C128($v) => {
                #[allow(unused)]
                type $t = $crate::Complex<f64>;
                $body
            }
        }
    }};
}

/// [`with_buffer!`] for operations on ordered (real or bool) elements, whose shape rules
/// refuse complex operands.
#[macro_export]
#[doc(hidden)]
macro_rules! with_real_buffer {
    ($buf:expr, |$v:ident : $t:ident| $body:expr) => {{
        use $crate::array::buffer::Buffer as __B;
        match $buf {
            __B::Bool($v) => {
                #[allow(unused)]
                type $t = bool;
                $body
            }
            __B::I8($v) => {
                #[allow(unused)]
                type $t = i8;
                $body
            }
            __B::I16($v) => {
                #[allow(unused)]
                type $t = i16;
                $body
            }
            __B::I32($v) => {
                #[allow(unused)]
                type $t = i32;
                $body
            }
            __B::I64($v) => {
                #[allow(unused)]
                type $t = i64;
                $body
            }
            __B::U8($v) => {
                #[allow(unused)]
                type $t = u8;
                $body
            }
            __B::U16($v) => {
                #[allow(unused)]
                type $t = u16;
                $body
            }
            __B::U32($v) => {
                #[allow(unused)]
                type $t = u32;
                $body
            }
            __B::U64($v) => {
                #[allow(unused)]
                type $t = u64;
                $body
            }
            __B::F16($v) => {
                #[allow(unused)]
                type $t = half::f16;
                $body
            }
            __B::BF16($v) => {
                #[allow(unused)]
                type $t = half::bf16;
                $body
            }
            __B::F32($v) => {
                #[allow(unused)]
                type $t = f32;
                $body
            }
            __B::F64($v) => {
                #[allow(unused)]
                type $t = f64;
                $body
            }
            __B::C64(_) | __B::C128(_) => {
                unreachable!("complex operands are refused by the operation's shape rule")
            }
        }
    }};
}

/// Runs `$body` with `$t` bound to the Rust element type of a [`DType`].
#[macro_export]
#[doc(hidden)]
macro_rules! with_dtype {
    ($dtype:expr, |$t:ident| $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => {
                #[allow(unused)]
                type $t = bool;
                $body
            }
            __D::I8 => {
                #[allow(unused)]
                type $t = i8;
                $body
            }
            __D::I16 => {
                #[allow(unused)]
                type $t = i16;
                $body
            }
            __D::I32 => {
                #[allow(unused)]
                type $t = i32;
                $body
            }
            __D::I64 => {
                #[allow(unused)]
                type $t = i64;
                $body
            }
            __D::U8 => {
                #[allow(unused)]
                type $t = u8;
                $body
            }
            __D::U16 => {
                #[allow(unused)]
                type $t = u16;
                $body
            }
            __D::U32 => {
                #[allow(unused)]
                type $t = u32;
                $body
            }
            __D::U64 => {
                #[allow(unused)]
                type $t = u64;
                $body
            }
            __D::F16 => {
                #[allow(unused)]
                type $t = half::f16;
                $body
            }
            __D::BF16 => {
                #[allow(unused)]
                type $t = half::bf16;
                $body
            }
            __D::F32 => {
                #[allow(unused)]
                type $t = f32;
                $body
            }
            __D::F64 => {
                #[allow(unused)]
                type $t = f64;
                $body
            }
            __D::C64 => {
                #[allow(unused)]
                type $t = $crate::Complex<f32>;
                $body
            }
            __D::C128 => {
                #[allow(unused)]
                type $t = $crate::Complex<f64>;
                $body
            }
        }
    }};
}

/// [`with_dtype!`] for code paths that refuse complex dtypes before reaching it.
#[macro_export]
#[doc(hidden)]
macro_rules! with_real_dtype {
    ($dtype:expr, |$t:ident| $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dtype {
            __D::Bool => {
                #[allow(unused)]
                type $t = bool;
                $body
            }
            __D::I8 => {
                #[allow(unused)]
                type $t = i8;
                $body
            }
            __D::I16 => {
                #[allow(unused)]
                type $t = i16;
                $body
            }
            __D::I32 => {
                #[allow(unused)]
                type $t = i32;
                $body
            }
            __D::I64 => {
                #[allow(unused)]
                type $t = i64;
                $body
            }
            __D::U8 => {
                #[allow(unused)]
                type $t = u8;
                $body
            }
            __D::U16 => {
                #[allow(unused)]
                type $t = u16;
                $body
            }
            __D::U32 => {
                #[allow(unused)]
                type $t = u32;
                $body
            }
            __D::U64 => {
                #[allow(unused)]
                type $t = u64;
                $body
            }
            __D::F16 => {
                #[allow(unused)]
                type $t = half::f16;
                $body
            }
            __D::BF16 => {
                #[allow(unused)]
                type $t = half::bf16;
                $body
            }
            __D::F32 => {
                #[allow(unused)]
                type $t = f32;
                $body
            }
            __D::F64 => {
                #[allow(unused)]
                type $t = f64;
                $body
            }
            __D::C64 | __D::C128 => {
                unreachable!("complex dtypes are refused before this point")
            }
        }
    }};
}

impl Buffer {
    pub fn dtype(&self) -> DType {
        crate::with_buffer!(self, |_v: T| T::DTYPE)
    }

    pub fn len(&self) -> usize {
        crate::with_buffer!(self, |v: T| v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements as a typed slice, if `T` is this buffer's element type.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::slice(self)
    }

    /// Bytes allocated for the buffer (its capacity, not just its length).
    pub fn capacity_bytes(&self) -> usize {
        crate::with_buffer!(self, |v: T| v.capacity() * std::mem::size_of::<T>())
    }

    /// Moves the allocation out, leaving this buffer empty (so dropping it recycles nothing).
    fn take_allocation(&mut self) -> Buffer {
        crate::with_buffer!(self, |v: T| T::wrap(std::mem::take(v)))
    }

    /// Frees the allocation now, bypassing the pool.
    pub(crate) fn release(&mut self) {
        crate::with_buffer!(self, |v: T| drop(std::mem::take::<Vec<T>>(v)))
    }

    /// A new buffer of `dtype` with every element converted by `astype` rules.
    pub fn cast(&self, dtype: DType) -> Buffer {
        crate::with_buffer!(self, |src: S| {
            crate::with_dtype!(dtype, |D| {
                D::wrap(crate::exec::cpu::elementwise::map(src, |x: S| x.cast::<D>()))
            })
        })
    }
}

impl Drop for Buffer {
    /// Large buffers go back to the pool for reuse by the next result of the same size, and
    /// tile-sized ones to this thread's cache of them.
    fn drop(&mut self) {
        use crate::exec::cpu::pool;
        let bytes = self.capacity_bytes();
        if bytes >= pool::MIN_POOLED_BYTES {
            pool::recycle(self.take_allocation());
        } else if bytes >= pool::MIN_CACHED_BYTES {
            pool::recycle_small(self.take_allocation());
        }
    }
}
