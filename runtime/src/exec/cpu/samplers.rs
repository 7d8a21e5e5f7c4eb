//! What each sampler computes from the two hashed words of its counter: random bits, and
//! JAX's float samplers fused into the hashing pass (one sweep over memory instead of one per
//! `lax` op), with XLA's arithmetic (fused multiply-adds, [`xla_math`](super::xla_math)) so the
//! values match JAX's bit for bit, in f32 and in f64.
//!
//! A sampler here is a [`CounterMap`]; [`map_counters`](super::threefry::map_counters) runs it.

use std::marker::PhantomData;
use std::ops::{Add, Div, Mul, Neg, Sub};

use super::threefry::CounterMap;
use super::xla_math::{erf_f32, erf_inv_f32, erf_inv_f64, log1p_f32, log1p_f64, log_f32};
use crate::dtype::Element;

/// The float types samplers produce, with the math they need in the precision XLA uses.
pub trait SampleFloat:
    Element
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// `0`.
    const ZERO: Self;
    /// `1`.
    const ONE: Self;
    /// `sqrt(2)` rounded to this type.
    const SQRT2: Self;
    /// The smallest positive normal number (`finfo.tiny`).
    const TINY: Self;
    /// `nextafter(-1, 0)`: the lower end of the uniform draw behind `normal`.
    const NEG_ONE_UP: Self;
    /// A uniform float in `[0, 1)` from the hashed words: the mantissa bits of `[1, 2)` minus 1,
    /// from `y0 ^ y1` for f32 and from `(y0 << 32) | y1` for f64, as JAX draws 32 or 64 bits.
    fn unit(y0: u32, y1: u32) -> Self;
    /// `self * b + c` with one rounding.
    fn fma(self, b: Self, c: Self) -> Self;
    /// Square root (correctly rounded, as XLA's).
    fn sqrt(self) -> Self;
    /// Natural logarithm, as XLA computes it.
    fn log(self) -> Self;
    /// `ln(1 + x)`, as XLA computes it.
    fn log1p(self) -> Self;
    /// The error function (XLA's for f32; the C library's, correctly rounded in practice, for f64).
    fn erf(self) -> Self;
    /// The inverse error function, as XLA computes it.
    fn erf_inv(self) -> Self;
    /// The next value toward +infinity (`nextafter(x, inf)`).
    fn next_up(self) -> Self;
    /// The next value toward -infinity (`nextafter(x, -inf)`).
    fn next_down(self) -> Self;
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
    /// `self as f64`, for statistics and messages.
    fn as_f64(self) -> f64;
}

/// The next representable value toward +infinity (`nextafter(x, inf)`; `f32::next_up` needs a
/// newer Rust than the crate's minimum).
macro_rules! next_up_bits {
    ($x:expr, $t:ty) => {{
        let x: $t = $x;
        if x.is_nan() || x == <$t>::INFINITY {
            x
        } else if x == 0.0 {
            <$t>::from_bits(1)
        } else if x > 0.0 {
            <$t>::from_bits(x.to_bits() + 1)
        } else {
            <$t>::from_bits(x.to_bits() - 1)
        }
    }};
}

impl SampleFloat for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const SQRT2: f32 = std::f64::consts::SQRT_2 as f32;
    const TINY: f32 = f32::MIN_POSITIVE;
    const NEG_ONE_UP: f32 = -1.0 + f32::EPSILON / 2.0;
    #[inline(always)]
    fn unit(y0: u32, y1: u32) -> f32 {
        f32::from_bits(((y0 ^ y1) >> 9) | 0x3F80_0000) - 1.0
    }
    #[inline(always)]
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn log(self) -> f32 {
        log_f32(self)
    }
    #[inline(always)]
    fn log1p(self) -> f32 {
        log1p_f32(self)
    }
    #[inline(always)]
    fn erf(self) -> f32 {
        erf_f32(self)
    }
    #[inline(always)]
    fn erf_inv(self) -> f32 {
        erf_inv_f32(self)
    }
    #[inline(always)]
    fn next_up(self) -> f32 {
        next_up_bits!(self, f32)
    }
    #[inline(always)]
    fn next_down(self) -> f32 {
        -next_up_bits!(-self, f32)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl SampleFloat for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
    const SQRT2: f64 = std::f64::consts::SQRT_2;
    const TINY: f64 = f64::MIN_POSITIVE;
    const NEG_ONE_UP: f64 = -1.0 + f64::EPSILON / 2.0;
    #[inline(always)]
    fn unit(y0: u32, y1: u32) -> f64 {
        let bits = ((y0 as u64) << 32) | y1 as u64;
        f64::from_bits((bits >> 12) | 0x3FF0_0000_0000_0000) - 1.0
    }
    #[inline(always)]
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn log(self) -> f64 {
        self.ln()
    }
    #[inline(always)]
    fn log1p(self) -> f64 {
        log1p_f64(self)
    }
    #[inline(always)]
    fn erf(self) -> f64 {
        libm::erf(self)
    }
    #[inline(always)]
    fn erf_inv(self) -> f64 {
        erf_inv_f64(self)
    }
    #[inline(always)]
    fn next_up(self) -> f64 {
        next_up_bits!(self, f64)
    }
    #[inline(always)]
    fn next_down(self) -> f64 {
        -next_up_bits!(-self, f64)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn as_f64(self) -> f64 {
        self
    }
}

/// `lax.max`: NaN in either operand gives NaN.
#[inline(always)]
fn max<T: SampleFloat>(a: T, b: T) -> T {
    if b > a || b.is_nan() {
        b
    } else {
        a
    }
}

/// `lax.min`, NaN-propagating like [`max`].
#[inline(always)]
fn min<T: SampleFloat>(a: T, b: T) -> T {
    if b < a || b.is_nan() {
        b
    } else {
        a
    }
}

/// JAX's `_uniform` on a `[0, 1)` draw: `max(lo, u * (hi - lo) + lo)`, the multiply-add fused.
#[inline(always)]
fn affine<T: SampleFloat>(u: T, lo: T, hi: T) -> T {
    max(lo, u.fma(hi - lo, lo))
}

/// A pair of bounds per element: the same pair everywhere, or one pair per element.
pub trait Bounds<T>: Sync {
    /// The `(lo, hi)` pair of flat element `i`.
    fn at(&self, i: usize) -> (T, T);
}

/// The same `(lo, hi)` for every element.
pub struct Same<T>(pub T, pub T);

impl<T: SampleFloat> Bounds<T> for Same<T> {
    #[inline(always)]
    fn at(&self, _: usize) -> (T, T) {
        (self.0, self.1)
    }
}

/// `(lo[i], hi[i])` for element `i` (bounds already broadcast to the output shape).
pub struct PerElement<'a, T>(pub &'a [T], pub &'a [T]);

impl<T: SampleFloat> Bounds<T> for PerElement<'_, T> {
    #[inline(always)]
    fn at(&self, i: usize) -> (T, T) {
        (self.0[i], self.1[i])
    }
}

/// `random.uniform(key, shape, dtype, lo, hi)`.
pub struct Uniform<T, B>(pub B, pub PhantomData<T>);

impl<T: SampleFloat, B: Bounds<T>> CounterMap for Uniform<T, B> {
    type Out = T;
    #[inline(always)]
    fn apply(&self, i: usize, y0: u32, y1: u32) -> T {
        let (lo, hi) = self.0.at(i);
        affine(T::unit(y0, y1), lo, hi)
    }
}

/// `random.normal`: `sqrt(2) * erf_inv(u)`, `u` uniform on `[nextafter(-1, 0), 1)`.
pub struct Normal<T>(pub PhantomData<T>);

impl<T: SampleFloat> CounterMap for Normal<T> {
    type Out = T;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> T {
        let u = affine(T::unit(y0, y1), T::NEG_ONE_UP, T::ONE);
        T::SQRT2 * u.erf_inv()
    }
}

/// `random.exponential`: `-log1p(-u)`, `u` uniform on `[0, 1)`.
pub struct Exponential<T>(pub PhantomData<T>);

impl<T: SampleFloat> CounterMap for Exponential<T> {
    type Out = T;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> T {
        let u = affine(T::unit(y0, y1), T::ZERO, T::ONE);
        -(-u).log1p()
    }
}

/// `random.gumbel` (mode `"low"`): `-log(-log(u))`, `u` uniform on `[tiny, 1)`.
pub struct Gumbel<T>(pub PhantomData<T>);

impl<T: SampleFloat> CounterMap for Gumbel<T> {
    type Out = T;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> T {
        let u = affine(T::unit(y0, y1), T::TINY, T::ONE);
        -(-u.log()).log()
    }
}

/// `random.truncated_normal`: `sqrt(2) * erf_inv(u)` with `u` uniform on
/// `[erf(lower / sqrt 2), erf(upper / sqrt 2))` (the first bounds), clipped to the open interval
/// `(lower, upper)` (the second bounds hold `nextafter(lower, inf), nextafter(upper, -inf)`).
pub struct TruncatedNormal<T, B, C>(pub B, pub C, pub PhantomData<T>);

impl<T: SampleFloat, B: Bounds<T>, C: Bounds<T>> CounterMap for TruncatedNormal<T, B, C> {
    type Out = T;
    #[inline(always)]
    fn apply(&self, i: usize, y0: u32, y1: u32) -> T {
        let (a, b) = self.0.at(i);
        let (lo, hi) = self.1.at(i);
        let u = affine(T::unit(y0, y1), a, b);
        min(hi, max(lo, T::SQRT2 * u.erf_inv()))
    }
}

/// The bounds of the uniform draw behind a truncated normal on `(lower, upper)`.
#[inline(always)]
pub fn truncated_normal_range<T: SampleFloat>(lower: T, upper: T) -> [T; 4] {
    [(lower / T::SQRT2).erf(), (upper / T::SQRT2).erf(), lower.next_up(), upper.next_down()]
}

/// `random.bits` with 32 bits: `y0 ^ y1`.
pub struct Bits32;

impl CounterMap for Bits32 {
    type Out = u32;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> u32 {
        y0 ^ y1
    }
}

/// `random.bits` with 8 or 16 bits: the low bits of `y0 ^ y1`.
pub struct BitsNarrow<T>(pub PhantomData<T>);

impl CounterMap for BitsNarrow<u8> {
    type Out = u8;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> u8 {
        (y0 ^ y1) as u8
    }
}

impl CounterMap for BitsNarrow<u16> {
    type Out = u16;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> u16 {
        (y0 ^ y1) as u16
    }
}

/// `random.bits` with 64 bits, and split keys packed in one word: `(y0 << 32) | y1`.
pub struct Bits64;

impl CounterMap for Bits64 {
    type Out = u64;
    #[inline(always)]
    fn apply(&self, _: usize, y0: u32, y1: u32) -> u64 {
        ((y0 as u64) << 32) | y1 as u64
    }
}
