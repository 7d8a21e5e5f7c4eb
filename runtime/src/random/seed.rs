//! [`Seed`]: the integers that [`key`](super::key()) and [`fold_in`](super::fold_in()) take,
//! a Rust integer or a 0-d integer array (which may be traced, like a step counter inside
//! `#[jit]`).

use crate::array::Array;
use crate::dtype::DType;
use crate::shape::ShapeDisplay;

/// An integer seed or fold-in datum: a Rust integer or a 0-d integer [`Array`].
///
/// A Rust integer is taken as JAX takes a Python `int` in its default 32-bit mode: its low 32
/// bits. An array keeps its dtype, so a traced step counter or seed works inside `#[jit]`,
/// `vmap` and `lax::scan` as it does in JAX; a 64-bit array seed gives the key JAX's x64 mode
/// gives.
pub trait Seed {
    /// The value as a 0-d integer array (`uint32` for a Rust integer); `op` names the
    /// function in the refusal of an array that is not a 0-d integer.
    fn into_seed(self, op: &str) -> Array;
}

macro_rules! rust_int_seed {
    ($($t:ty),*) => {$(
        impl Seed for $t {
            fn into_seed(self, _op: &str) -> Array {
                // The low 32 bits, wrapping as JAX's conversion to uint32 does.
                Array::from(self as u32)
            }
        }
    )*};
}
rust_int_seed!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl Seed for &Array {
    #[track_caller]
    fn into_seed(self, op: &str) -> Array {
        if self.ndim() != 0 || !self.dtype().is_int() {
            panic!(
                "{op}: expected an integer scalar (a Rust integer or a 0-d integer array), got \
                 {}{}; use vmap for a batch of them",
                self.dtype(),
                ShapeDisplay(self.shape())
            );
        }
        self.clone()
    }
}

impl Seed for Array {
    #[track_caller]
    fn into_seed(self, op: &str) -> Array {
        (&self).into_seed(op)
    }
}

/// The key data `[hi32, lo32]` of an integer seed: the high word is 0 unless the seed has 64
/// bits (JAX's `threefry_seed`, whose logical shift by 32 of a narrower seed is 0).
#[track_caller]
pub(super) fn seed_words(seed: &Array) -> Array {
    let lo = seed.astype(DType::U32);
    let hi = if seed.dtype().size_of() == 8 {
        // Unsigned division by 2^32 is the logical shift right by 32.
        crate::jnp::trunc_divide(
            crate::jnp::convert(seed, DType::U64, false),
            Array::from(1u64 << 32),
        )
        .astype(DType::U32)
    } else {
        Array::from(0u32)
    };
    crate::jnp::stack(&[hi, lo], 0)
}
