//! The Threefry-2x32 hash (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011),
//! 20 rounds, exactly as JAX's `threefry2x32` primitive computes it, and the counter kernel every
//! sampler runs on.
//!
//! JAX (with `jax_threefry_partitionable`, the default) gives element `i` of a draw the 64-bit
//! counter `i`, split as `(hi32(i), lo32(i))`, hashes it under the key, and derives the element
//! from the two output words. [`map_counters`] does exactly that for `0..n`, in blocks of lanes
//! the compiler vectorizes, across cores for large `n`, and with the hashed words handed to a
//! [`CounterMap`] that turns them into the sampler's value in the same pass.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::elementwise::build;
use crate::dtype::Element;

/// Rotation distances of the even and odd groups of four rounds.
pub(crate) const ROTATIONS: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
/// Threefry's key-schedule parity constant.
pub(crate) const PARITY: u32 = 0x1BD1_1BDA;
/// Counters hashed per inner block: a multiple of every SIMD width, small enough for L1.
const LANES: usize = 64;
/// Elements per parallel task of [`hash_each`].
const CHUNK: usize = 1 << 14;

/// Threefry-2x32 of one counter pair under one key.
///
/// ```
/// use rjax_runtime::exec::cpu::threefry::threefry2x32;
/// // Known-answer test from the Random123 distribution.
/// let y = threefry2x32([0x1319_8A2E, 0x0370_7344], [0x243F_6A88, 0x85A3_08D3]);
/// assert_eq!(y, [0xC492_3A9C, 0x483D_F7A0]);
/// ```
#[inline(always)]
pub fn threefry2x32(key: [u32; 2], count: [u32; 2]) -> [u32; 2] {
    let ks = [key[0], key[1], key[0] ^ key[1] ^ PARITY];
    let mut x0 = count[0].wrapping_add(ks[0]);
    let mut x1 = count[1].wrapping_add(ks[1]);
    // Five groups of four rounds, each followed by a key injection.
    for group in 0..5 {
        for &r in &ROTATIONS[group % 2] {
            x0 = x0.wrapping_add(x1);
            x1 = x1.rotate_left(r) ^ x0;
        }
        x0 = x0.wrapping_add(ks[(group + 1) % 3]);
        x1 = x1.wrapping_add(ks[(group + 2) % 3]).wrapping_add(group as u32 + 1);
    }
    [x0, x1]
}

/// Turns the two hashed words of one counter into one output element.
///
/// A trait rather than a closure so that `apply` is always inlined into the vectorized,
/// FMA-enabled kernel body (a float `mul_add` outside it would be a library call).
pub trait CounterMap: Sync {
    /// The output element type.
    type Out: Element;
    /// The element for flat index `i`, whose counter hashed to `(y0, y1)`.
    fn apply(&self, i: usize, y0: u32, y1: u32) -> Self::Out;
}

/// `f.apply(i, y0, y1)` for every `i` in `0..n`, where `(y0, y1)` is the hash of the counter
/// `(hi32(i), lo32(i))` under `key`.
pub fn map_counters<F: CounterMap>(key: [u32; 2], n: usize, f: &F) -> Vec<F::Out> {
    build(n, |start, out| fill(key, start, out, f))
}

fn fill<F: CounterMap>(key: [u32; 2], start: usize, out: &mut [MaybeUninit<F::Out>], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("fma")
    {
        // SAFETY: `fill_avx512` only differs from `fill_portable` in being compiled for
        // AVX-512F and FMA, which this CPU was just found to support.
        unsafe { fill_avx512(key, start, out, f) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: `fill_fma` only differs from `fill_portable` in being compiled for AVX and FMA,
        // which this CPU was just found to support.
        unsafe { fill_fma(key, start, out, f) };
        return;
    }
    fill_portable(key, start, out, f);
}

/// [`fill_portable`] compiled with AVX and FMA, so that the samplers' fused multiply-adds (which
/// XLA emits, and which their exact results depend on) are single instructions.
///
/// # Safety
/// The CPU must support AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,fma")]
unsafe fn fill_fma<F: CounterMap>(
    key: [u32; 2],
    start: usize,
    out: &mut [MaybeUninit<F::Out>],
    f: &F,
) {
    fill_portable(key, start, out, f);
}

/// [`fill_portable`] compiled for AVX-512F and FMA: sixteen counters a vector, and the hash's
/// rotations single instructions (`vprold`) instead of two shifts and an or. The element
/// operations are the same as in [`fill_fma`], so the values are bit-identical.
///
/// # Safety
/// The CPU must support AVX-512F and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn fill_avx512<F: CounterMap>(
    key: [u32; 2],
    start: usize,
    out: &mut [MaybeUninit<F::Out>],
    f: &F,
) {
    fill_portable(key, start, out, f);
}

#[inline(always)]
fn fill_portable<F: CounterMap>(
    key: [u32; 2],
    start: usize,
    out: &mut [MaybeUninit<F::Out>],
    f: &F,
) {
    let mut y0 = [0u32; LANES];
    let mut y1 = [0u32; LANES];
    for (b, block) in out.chunks_mut(LANES).enumerate() {
        let first = start + b * LANES;
        hash_block(key, first as u64, &mut y0, &mut y1);
        // Zipped rather than indexed: a bounds check on `y0[l]` is an early exit, which keeps
        // the loop (and the sampler's arithmetic in it) from being vectorized.
        let words = y0.iter().zip(&y1);
        for (l, (o, (&a, &b))) in block.iter_mut().zip(words).enumerate() {
            o.write(f.apply(first + l, a, b));
        }
    }
}

/// Hashes the `LANES` consecutive counters starting at `first` (a full block even when the
/// caller needs fewer: uniform work keeps the loop vectorized).
#[inline(always)]
fn hash_block(key: [u32; 2], first: u64, y0: &mut [u32; LANES], y1: &mut [u32; LANES]) {
    let (hi, lo) = ((first >> 32) as u32, first as u32);
    for l in 0..LANES {
        let c_lo = lo.wrapping_add(l as u32);
        // The low word wrapped past 2^32: carry into the high word.
        let c_hi = hi.wrapping_add((c_lo < lo) as u32);
        let [a, b] = threefry2x32(key, [c_hi, c_lo]);
        y0[l] = a;
        y1[l] = b;
    }
}

/// Threefry-2x32 elementwise over equal-length slices of keys and counters, as JAX's primitive
/// computes it once its operands are broadcast: `(y0[i], y1[i]) = hash((k0[i], k1[i]),
/// (x0[i], x1[i]))`.
pub fn hash_each(k0: &[u32], k1: &[u32], x0: &[u32], x1: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n = x0.len();
    assert!(k0.len() == n && k1.len() == n && x1.len() == n, "hash_each: lengths differ");
    let mut y0 = super::alloc::zeroed(n, 0u32);
    let mut y1 = super::alloc::zeroed(n, 0u32);
    y0.par_chunks_mut(CHUNK).zip(y1.par_chunks_mut(CHUNK)).enumerate().for_each(|(c, (a, b))| {
        let s = c * CHUNK;
        for (j, (a, b)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
            let i = s + j;
            [*a, *b] = threefry2x32([k0[i], k1[i]], [x0[i], x1[i]]);
        }
    });
    (y0, y1)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair;
    impl CounterMap for Pair {
        type Out = u64;
        fn apply(&self, _: usize, y0: u32, y1: u32) -> u64 {
            ((y0 as u64) << 32) | y1 as u64
        }
    }

    #[test]
    fn known_answers() {
        // Random123's known-answer vectors for threefry2x32_20.
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6B20_0159, 0x99BA_4EFE]);
        assert_eq!(threefry2x32([!0, !0], [!0, !0]), [0x1CB9_96FC, 0xBB00_2BE7]);
    }

    #[test]
    fn counters_match_scalar_hash_across_blocks_and_chunks() {
        let key = [7, 42];
        let n = 70_000; // several parallel chunks and a ragged last block
        let got = map_counters(key, n, &Pair);
        for i in [0, 1, 63, 64, 65, 16_383, 16_384, 69_999] {
            let [a, b] = threefry2x32(key, [0, i as u32]);
            assert_eq!(got[i], ((a as u64) << 32) | b as u64, "counter {i}");
        }
    }

    #[test]
    fn hash_block_carries_into_the_high_word() {
        let mut y0 = [0; LANES];
        let mut y1 = [0; LANES];
        hash_block([1, 2], u32::MAX as u64, &mut y0, &mut y1);
        assert_eq!([y0[0], y1[0]], threefry2x32([1, 2], [0, u32::MAX]));
        assert_eq!([y0[1], y1[1]], threefry2x32([1, 2], [1, 0]));
    }
}
