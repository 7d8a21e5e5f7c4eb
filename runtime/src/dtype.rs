//! Element types and JAX's type-promotion lattice.
//!
//! Every [`Array`](crate::Array) carries a run-time [`DType`] and a *weak type* flag. Rust scalar
//! literals used with arrays (`&x + 1.0`) are weakly typed, as Python scalars are in JAX: they
//! take the other operand's type instead of widening it. [`promote`] implements JAX's lattice
//! (`jax.numpy.result_type`). The dtype mode ([`crate::config`]) decides the default types and
//! whether 64-bit types exist: in the default 32-bit mode [`canonicalize`] maps each 64-bit type
//! to its 32-bit kin, as JAX does without `jax_enable_x64`, so `u32 + i32` is `i32`.

use std::fmt;

use half::{bf16, f16};
use num_complex::Complex;

use crate::array::buffer::Buffer;

/// The run-time element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    /// Complex numbers of two `f32`s (NumPy's `complex64`).
    C64,
    /// Complex numbers of two `f64`s (NumPy's `complex128`).
    C128,
}

impl DType {
    /// Every dtype, in a stable order.
    pub const ALL: [DType; 15] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// NumPy's name for the dtype (`"float32"`, `"int32"`, `"bool"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C64 => "complex64",
            DType::C128 => "complex128",
        }
    }

    /// The short name IR listings use, as jaxprs do: `f32`, `i32`, `bool`, `bf16`.
    pub fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    /// Parses NumPy's dtype names, as written by [`DType::name`].
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Size of one element in bytes (`bool` takes one byte).
    pub fn size_of(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// Whether the dtype exists only with x64 on (`float64`, `int64`, `uint64`, `complex128`).
    pub fn is_64_bit(self) -> bool {
        matches!(self, DType::I64 | DType::U64 | DType::F64 | DType::C128)
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Whether the dtype is `complex64` or `complex128`.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// Whether the dtype is a real or complex floating-point type (NumPy's `inexact`).
    pub fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The complex type of a real float type's precision (`float64` -> `complex128`, other
    /// floats -> `complex64`); a complex type is its own.
    pub fn to_complex(self) -> DType {
        match self {
            DType::F64 | DType::C128 => DType::C128,
            _ => DType::C64,
        }
    }

    /// The real type of a complex type's parts (`complex64` -> `float32`); a real type is its
    /// own.
    pub fn to_real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I8 | DType::I16 | DType::I32 | DType::I64)
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::U8 | DType::U16 | DType::U32 | DType::U64)
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }

    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The default float type: what `jnp::arange(4.0)`, `jnp::zeros` and `i32 + 1.5` produce.
/// It is `float32` in both dtype modes: unlike JAX's x64 mode, where the defaults widen to
/// 64 bits, rjax's x64 mode keeps 64-bit types where they are asked for (64-bit data,
/// `astype`, promotion) and keeps the 32-bit defaults.
pub fn default_float() -> DType {
    DType::F32
}

/// The default integer type: what `jnp::arange(4)` produces (`int32` in both modes, see
/// [`default_float`]).
pub fn default_int() -> DType {
    DType::I32
}

/// The default complex type (`complex64` in both modes, see [`default_float`]).
pub fn default_complex() -> DType {
    DType::C64
}

/// The float type an operand of `dtype` is computed in by functions that need floats (JAX's
/// `to_inexact_dtype`): floats and complex types stay; `int64`/`uint64` give `float64`, the
/// other integers and `bool` `float32` (in both modes, as in JAX), and a weakly typed integer
/// (a Rust integer scalar) the default float type.
pub fn to_inexact(dtype: DType, weak: bool) -> DType {
    if dtype.is_inexact() {
        dtype
    } else if weak {
        default_float()
    } else if dtype.is_64_bit() {
        DType::F64
    } else {
        DType::F32
    }
}

/// The dtype an array of `dtype` gets in the current mode (JAX's `canonicalize_dtype`): with
/// x64 off, `float64`, `int64`, `uint64` and `complex128` become their 32-bit kin; with x64 on,
/// and for every other type, `dtype` itself.
///
/// ```
/// use rjax_runtime::{config, dtype::canonicalize, DType};
/// assert_eq!(config::with_x64(false, || canonicalize(DType::F64)), DType::F32);
/// assert_eq!(config::with_x64(true, || canonicalize(DType::F64)), DType::F64);
/// ```
pub fn canonicalize(dtype: DType) -> DType {
    if !dtype.is_64_bit() || crate::config::x64_enabled() {
        return dtype;
    }
    match dtype {
        DType::F64 => DType::F32,
        DType::I64 => DType::I32,
        DType::U64 => DType::U32,
        DType::C128 => DType::C64,
        other => other,
    }
}

/// A node of JAX's promotion lattice: a concrete dtype or one of the two weak categories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    Concrete(DType),
    WeakInt,
    WeakFloat,
    WeakComplex,
}

impl Node {
    fn of(dtype: DType, weak: bool) -> Node {
        match (weak, dtype) {
            (true, d) if d.is_int() => Node::WeakInt,
            (true, d) if d.is_float() => Node::WeakFloat,
            (true, d) if d.is_complex() => Node::WeakComplex,
            (_, d) => Node::Concrete(d),
        }
    }

    /// The lattice's edges (JAX's `_type_promotion_lattice`).
    fn parents(self) -> &'static [Node] {
        use DType::*;
        use Node::*;
        match self {
            Concrete(Bool) => &[WeakInt],
            WeakInt => &[Concrete(U8), Concrete(I8)],
            Concrete(U8) => &[Concrete(I16), Concrete(U16)],
            Concrete(U16) => &[Concrete(I32), Concrete(U32)],
            Concrete(U32) => &[Concrete(I64), Concrete(U64)],
            Concrete(U64) => &[WeakFloat],
            Concrete(I8) => &[Concrete(I16)],
            Concrete(I16) => &[Concrete(I32)],
            Concrete(I32) => &[Concrete(I64)],
            Concrete(I64) => &[WeakFloat],
            WeakFloat => &[Concrete(BF16), Concrete(F16), WeakComplex],
            Concrete(BF16) | Concrete(F16) => &[Concrete(F32)],
            Concrete(F32) => &[Concrete(F64), Concrete(C64)],
            WeakComplex => &[Concrete(C64)],
            Concrete(C64) => &[Concrete(C128)],
            Concrete(F64) => &[Concrete(C128)],
            Concrete(C128) => &[],
        }
    }

    /// This node and everything above it.
    fn upper_set(self) -> Vec<Node> {
        let mut seen = vec![self];
        let mut i = 0;
        while i < seen.len() {
            for &p in seen[i].parents() {
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
            i += 1;
        }
        seen
    }
}

/// The dtype and weak flag of the result of combining operands of the given dtypes and weak
/// flags, by JAX's rules (`jnp.result_type`).
///
/// ```
/// use rjax_runtime::{promote, DType};
/// // an f32 array plus a Rust integer stays f32
/// assert_eq!(promote(&[(DType::F32, false), (DType::I32, true)]), (DType::F32, false));
/// // an i32 array plus a Rust float becomes a weak f32
/// assert_eq!(promote(&[(DType::I32, false), (DType::F64, true)]), (DType::F32, true));
/// // u32 + i32 is i64, canonicalized to i32 unless x64 is on
/// let mixed = [(DType::U32, false), (DType::I32, false)];
/// assert_eq!(rjax_runtime::config::with_x64(false, || promote(&mixed)), (DType::I32, false));
/// assert_eq!(rjax_runtime::config::with_x64(true, || promote(&mixed)), (DType::I64, false));
/// ```
pub fn promote(operands: &[(DType, bool)]) -> (DType, bool) {
    assert!(!operands.is_empty(), "promote needs at least one operand");
    let mut acc = Node::of(operands[0].0, operands[0].1);
    for &(d, w) in &operands[1..] {
        acc = join(acc, Node::of(d, w));
    }
    match acc {
        Node::Concrete(d) => (canonicalize(d), false),
        // An all-weak result takes the default type, as a Python scalar expression does.
        Node::WeakInt => (default_int(), true),
        Node::WeakFloat => (default_float(), true),
        Node::WeakComplex => (default_complex(), true),
    }
}

fn join(a: Node, b: Node) -> Node {
    let ua = a.upper_set();
    let ub = b.upper_set();
    let common: Vec<Node> = ua.into_iter().filter(|n| ub.contains(n)).collect();
    // The least upper bound is the common node that every other common node lies above.
    *common
        .iter()
        .find(|n| {
            let up = n.upper_set();
            common.iter().all(|c| up.contains(c))
        })
        .expect("the promotion lattice has a join for every pair")
}

/// A Rust type that can be an array element.
pub trait Element: Copy + Send + Sync + PartialEq + fmt::Debug + 'static {
    /// The dtype of arrays of this element type.
    const DTYPE: DType;
    /// Converts with NumPy's `astype` semantics (floats truncate toward zero into integers,
    /// integers wrap, `bool` is `x != 0`).
    fn from_f64(v: f64) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_u64(v: u64) -> Self;
    /// Converts from a complex value: real types keep the real part (as JAX's `astype`
    /// does), `bool` is `z != 0`.
    fn from_complex(re: f64, im: f64) -> Self;
    /// Converts to another element type with `astype` semantics.
    fn cast<U: Element>(self) -> U;
    fn to_f64(self) -> f64;
    /// Moves a `Vec` of this type into the matching [`Buffer`] variant.
    fn wrap(v: Vec<Self>) -> Buffer;
    /// The typed slice inside `b`, if `b` holds this type.
    fn slice(b: &Buffer) -> Option<&[Self]>;
    /// Moves the `Vec` out of `b` (leaving it empty), if `b` holds this type.
    fn take_vec(b: &mut Buffer) -> Option<Vec<Self>>;
}

/// The `wrap`/`slice` pair of [`Element`]: buffer variants are named like dtype variants.
macro_rules! buffer_access {
    ($variant:ident) => {
        #[inline]
        fn wrap(v: Vec<Self>) -> Buffer {
            Buffer::$variant(v)
        }
        #[inline]
        fn slice(b: &Buffer) -> Option<&[Self]> {
            match b {
                Buffer::$variant(v) => Some(v),
                _ => None,
            }
        }
        #[inline]
        fn take_vec(b: &mut Buffer) -> Option<Vec<Self>> {
            match b {
                Buffer::$variant(v) => Some(std::mem::take(v)),
                _ => None,
            }
        }
    };
}

macro_rules! int_element {
    ($($t:ty => $d:ident, $wide:ident);* $(;)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_f64(v: f64) -> Self { v as $t }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { v as $t }
            #[inline(always)]
            fn from_u64(v: u64) -> Self { v as $t }
            #[inline(always)]
            fn from_complex(re: f64, _im: f64) -> Self { re as $t }
            #[inline(always)]
            fn cast<U: Element>(self) -> U { U::$wide(self as _) }
            #[inline(always)]
            fn to_f64(self) -> f64 { self as f64 }
            buffer_access!($d);
        }
    )*};
}

int_element! {
    i8 => I8, from_i64;
    i16 => I16, from_i64;
    i32 => I32, from_i64;
    i64 => I64, from_i64;
    u8 => U8, from_u64;
    u16 => U16, from_u64;
    u32 => U32, from_u64;
    u64 => U64, from_u64;
}

macro_rules! float_element {
    ($($t:ty => $d:ident, |$v:ident| $from:expr, |$s:ident| $to:expr);* $(;)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_f64($v: f64) -> Self { $from }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { Self::from_f64(v as f64) }
            #[inline(always)]
            fn from_u64(v: u64) -> Self { Self::from_f64(v as f64) }
            #[inline(always)]
            fn from_complex(re: f64, _im: f64) -> Self { Self::from_f64(re) }
            #[inline(always)]
            fn cast<U: Element>(self) -> U { U::from_f64(self.to_f64()) }
            #[inline(always)]
            fn to_f64(self) -> f64 { let $s = self; $to }
            buffer_access!($d);
        }
    )*};
}

float_element! {
    f32 => F32, |v| v as f32, |s| s as f64;
    f64 => F64, |v| v, |s| s;
    f16 => F16, |v| f16::from_f64(v), |s| s.to_f64();
    bf16 => BF16, |v| bf16::from_f64(v), |s| s.to_f64();
}

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_complex(re: f64, im: f64) -> Self {
        re != 0.0 || im != 0.0
    }
    #[inline(always)]
    fn cast<U: Element>(self) -> U {
        U::from_u64(self as u64)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    buffer_access!(Bool);
}

macro_rules! complex_element {
    ($($t:ident => $d:ident),* $(,)?) => {$(
        impl Element for Complex<$t> {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn from_f64(v: f64) -> Self { Complex::new(v as $t, 0.0) }
            #[inline(always)]
            fn from_i64(v: i64) -> Self { Self::from_f64(v as f64) }
            #[inline(always)]
            fn from_u64(v: u64) -> Self { Self::from_f64(v as f64) }
            #[inline(always)]
            fn from_complex(re: f64, im: f64) -> Self { Complex::new(re as $t, im as $t) }
            #[inline(always)]
            fn cast<U: Element>(self) -> U { U::from_complex(self.re as f64, self.im as f64) }
            /// The real part (what a cast to a real type keeps).
            #[inline(always)]
            fn to_f64(self) -> f64 { self.re as f64 }
            buffer_access!($d);
        }
    )*};
}

complex_element! {
    f32 => C64,
    f64 => C128,
}

/// What a shape check reads of a dtype (see [`crate::shape`]'s invariant).
impl crate::shape::ElementKind for DType {
    fn element_bytes(self) -> usize {
        self.size_of()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn lattice_matches_jax() {
        // With x64 on, as JAX's lattice without canonicalization.
        let _x64 = crate::config::x64_scope(true);
        let s = |d| (d, false);
        assert_eq!(promote(&[s(I8), s(U8)]), (I16, false));
        assert_eq!(promote(&[s(BF16), s(F16)]), (F32, false));
        assert_eq!(promote(&[s(I32), s(BF16)]), (BF16, false));
        assert_eq!(promote(&[s(F16), s(F32)]), (F32, false));
        assert_eq!(promote(&[s(U32), s(I32)]), (I64, false));
        assert_eq!(promote(&[s(U64), s(I64)]), (F32, true));
        assert_eq!(promote(&[s(F16), (F64, true)]), (F16, false));
        assert_eq!(promote(&[s(U8), (I32, true)]), (U8, false));
        assert_eq!(promote(&[(F32, true), (I32, true)]), (F32, true));
        assert_eq!(promote(&[(I32, true), s(Bool)]), (I32, true));
        assert_eq!(promote(&[s(Bool), s(Bool)]), (Bool, false));
        assert_eq!(promote(&[s(F32), s(C64)]), (C64, false));
        assert_eq!(promote(&[s(F64), s(C64)]), (C128, false));
        assert_eq!(promote(&[s(I32), s(C64)]), (C64, false));
        assert_eq!(promote(&[s(I64), s(C128)]), (C128, false));
        assert_eq!(promote(&[s(F16), (C64, true)]), (C64, false));
        assert_eq!(promote(&[s(C64), (F64, true)]), (C64, false));
        assert_eq!(promote(&[s(F64), (C64, true)]), (C128, false));
        assert_eq!(promote(&[s(I32), (C64, true)]), (C64, true));
        assert_eq!(promote(&[(F32, true), (C64, true)]), (C64, true));
    }

    #[test]
    fn casts_follow_astype() {
        assert_eq!((-1.7f32).cast::<i32>(), -1);
        assert_eq!(300i32.cast::<u8>(), 44);
        assert!(2.5f64.cast::<bool>());
        assert_eq!(true.cast::<f32>(), 1.0);
        assert_eq!(u64::MAX.cast::<f64>(), 18446744073709551615.0);
        assert_eq!(f32::NAN.cast::<i32>(), 0);
        assert_eq!(2.5f32.cast::<Complex<f64>>(), Complex::new(2.5, 0.0));
        assert_eq!(Complex::new(1.5f64, -2.0).cast::<f32>(), 1.5);
        assert_eq!(Complex::new(1.5f64, -2.0).cast::<Complex<f32>>(), Complex::new(1.5, -2.0));
        assert!(Complex::new(0.0f32, 1.0).cast::<bool>());
    }
}
