//! Small `f32` matrix products without packing.
//!
//! gemm copies (packs) its operands into blocks before its micro-kernels run, which pays for
//! itself on large products. On the products of a recurrent cell or a classifier head (16 x 64
//! times 64 x 64, 128 x 512 times 512 x 10) that fixed cost is a large part of the call: here
//! the right operand's rows are read where they lie, each tile of up to 8 x 32 results (4 x 16
//! with AVX2) is accumulated in registers over the whole depth and stored once.
//!
//! Every result is `fma(a[i, k-1], b[k-1, j], ... fma(a[i, 0], b[0, j], 0))`, the depth in
//! order: the same bits as gemm for depths within its first block, and the same on every run.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

use super::matmul::{Dims, MatMut, MatRef};

/// Products of at most this many multiply-adds use this kernel (larger ones are threaded,
/// where gemm's blocking pays).
const MAX_MACS: usize = 1 << 22;

/// Depths below this go to gemm: a tile's few multiply-adds do not cover its stores (measured:
/// 128 x 10 times 10 x 512 took 11.9 µs here, 6.7 µs in gemm).
const MIN_DEPTH: usize = 16;

/// Narrower results go to gemm: its matrix-vector paths use every lane, where a tile would
/// fill one lane of each vector.
const MIN_COLUMNS: usize = 8;

/// Depth up to which a 32-column panel of the right operand (`k x 32`) stays in L2 while
/// every row of the left one passes over it.
const MAX_DEPTH: usize = 1024;

/// `dst = lhs @ rhs` on this thread if the product suits the kernel: small but not a
/// matrix-vector product, `rhs` and `dst` with unit column stride (rows read and written
/// where they lie; `lhs` may have any strides), and a CPU with AVX-512F, or AVX2 and FMA and
/// a multiple of 16 columns.
/// Returns whether it ran; if not, `dst` is untouched.
///
/// The caller has checked that each matrix lies within its slice.
pub(crate) fn product(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
) -> bool {
    let Dims { m, k, n } = d;
    let suits = rhs.col_stride == 1
        && dst.col_stride == 1
        && m >= 2
        && n >= MIN_COLUMNS
        && (MIN_DEPTH..=MAX_DEPTH).contains(&k)
        && m.saturating_mul(k).saturating_mul(n) <= MAX_MACS;
    if !suits {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY (both): the CPU has the features (checked just before); the caller checked
        // that `dst`, `lhs` and `rhs`, with their strides, lie within their slices, and `dst`
        // is borrowed exclusively.
        if std::is_x86_feature_detected!("avx512f") {
            unsafe { product_avx512(dst, lhs, rhs, d) };
            return true;
        }
        // (Only whole panels: on first-generation Zen cores, with AVX2's masked loads in every
        // panel the kernel ran at half gemm's speed.)
        let whole_panels = n % (2 * Avx2::LANES) == 0;
        if whole_panels
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
        {
            unsafe { product_avx2(dst, lhs, rhs, d) };
            return true;
        }
    }
    false
}

/// [`panels`] with 16-lane vectors, in row tiles of up to 8 (16 sums in registers).
///
/// # Safety
/// The CPU has AVX-512F; every matrix lies within its slice.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn product_avx512(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
) {
    // SAFETY: as this function's.
    unsafe { panels::<Avx512, 8>(dst, lhs, rhs, d) }
}

/// [`panels`] with 8-lane vectors, in row tiles of up to 4 (8 sums in registers, of 16).
///
/// # Safety
/// The CPU has AVX2 and FMA; every matrix lies within its slice.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn product_avx2(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
) {
    // SAFETY: as this function's.
    unsafe { panels::<Avx2, 4>(dst, lhs, rhs, d) }
}

/// The vector operations the kernel needs, for one width of registers.
#[cfg(target_arch = "x86_64")]
trait Lanes {
    type Vector: Copy;
    type Mask: Copy;
    const LANES: usize;
    /// The first `width` lanes (all of them from `LANES` up).
    fn mask(width: usize) -> Self::Mask;
    /// # Safety
    /// The CPU has the width's features (all below).
    unsafe fn zero() -> Self::Vector;
    unsafe fn splat(x: f32) -> Self::Vector;
    unsafe fn fma(a: Self::Vector, b: Self::Vector, acc: Self::Vector) -> Self::Vector;
    /// # Safety
    /// The masked lanes at `ptr` are readable (the others are not read).
    unsafe fn load(mask: Self::Mask, ptr: *const f32) -> Self::Vector;
    /// # Safety
    /// The masked lanes at `ptr` are writable (the others are not written).
    unsafe fn store(ptr: *mut f32, mask: Self::Mask, v: Self::Vector);
    /// # Safety
    /// `LANES` values at `ptr` are readable.
    unsafe fn load_all(ptr: *const f32) -> Self::Vector;
    /// # Safety
    /// `LANES` values at `ptr` are writable.
    unsafe fn store_all(ptr: *mut f32, v: Self::Vector);
}

#[cfg(target_arch = "x86_64")]
struct Avx512;

#[cfg(target_arch = "x86_64")]
impl Lanes for Avx512 {
    type Vector = __m512;
    type Mask = __mmask16;
    const LANES: usize = 16;
    #[inline(always)]
    fn mask(width: usize) -> __mmask16 {
        (((1u32 << width.min(16)) - 1) & 0xffff) as __mmask16
    }
    #[inline(always)]
    unsafe fn zero() -> __m512 {
        // SAFETY: AVX-512F (the caller's contract), as below.
        unsafe { _mm512_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m512 {
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn fma(a: __m512, b: __m512, acc: __m512) -> __m512 {
        unsafe { _mm512_fmadd_ps(a, b, acc) }
    }
    #[inline(always)]
    unsafe fn load(mask: __mmask16, ptr: *const f32) -> __m512 {
        unsafe { _mm512_maskz_loadu_ps(mask, ptr) }
    }
    #[inline(always)]
    unsafe fn store(ptr: *mut f32, mask: __mmask16, v: __m512) {
        unsafe { _mm512_mask_storeu_ps(ptr, mask, v) }
    }
    #[inline(always)]
    unsafe fn load_all(ptr: *const f32) -> __m512 {
        unsafe { _mm512_loadu_ps(ptr) }
    }
    #[inline(always)]
    unsafe fn store_all(ptr: *mut f32, v: __m512) {
        unsafe { _mm512_storeu_ps(ptr, v) }
    }
}

#[cfg(target_arch = "x86_64")]
struct Avx2;

#[cfg(target_arch = "x86_64")]
impl Lanes for Avx2 {
    type Vector = __m256;
    /// The sign bit of each lane that is in.
    type Mask = [i32; 8];
    const LANES: usize = 8;
    #[inline(always)]
    fn mask(width: usize) -> [i32; 8] {
        std::array::from_fn(|lane| if lane < width { -1 } else { 0 })
    }
    #[inline(always)]
    unsafe fn zero() -> __m256 {
        // SAFETY: AVX2 and FMA (the caller's contract), as below; the mask is 8 `i32`s.
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m256 {
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn fma(a: __m256, b: __m256, acc: __m256) -> __m256 {
        unsafe { _mm256_fmadd_ps(a, b, acc) }
    }
    #[inline(always)]
    unsafe fn load(mask: [i32; 8], ptr: *const f32) -> __m256 {
        unsafe { _mm256_maskload_ps(ptr, _mm256_loadu_si256(mask.as_ptr().cast())) }
    }
    #[inline(always)]
    unsafe fn store(ptr: *mut f32, mask: [i32; 8], v: __m256) {
        unsafe { _mm256_maskstore_ps(ptr, _mm256_loadu_si256(mask.as_ptr().cast()), v) }
    }
    #[inline(always)]
    unsafe fn load_all(ptr: *const f32) -> __m256 {
        unsafe { _mm256_loadu_ps(ptr) }
    }
    #[inline(always)]
    unsafe fn store_all(ptr: *mut f32, v: __m256) {
        unsafe { _mm256_storeu_ps(ptr, v) }
    }
}

/// Column panels of two vectors (a last narrower one is masked: masked loads are slower, on
/// AVX2 much slower), each in row tiles of `TOP` rows, then 4, 2 and 1.
///
/// # Safety
/// The CPU has `L`'s features; every matrix lies within its slice.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn panels<L: Lanes, const TOP: usize>(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
) {
    let a = Operand { ptr: lhs.data.as_ptr(), row: lhs.row_stride, col: lhs.col_stride };
    let mut j = 0;
    while j < d.n {
        let width = (d.n - j).min(2 * L::LANES);
        let panel = Panel::<L> {
            // SAFETY: column `j < n` of each matrix lies within its slice.
            dst: unsafe { dst.data.as_mut_ptr().add(j) },
            dst_row: dst.row_stride,
            b: unsafe { rhs.data.as_ptr().add(j) },
            b_row: rhs.row_stride,
            masks: [L::mask(width), L::mask(width.saturating_sub(L::LANES))],
        };
        // SAFETY: as this function's; the masks cover the panel's columns only.
        unsafe {
            if width == 2 * L::LANES {
                panel.rows::<2, TOP, false>(a, d.m, d.k)
            } else if width > L::LANES {
                panel.rows::<2, TOP, true>(a, d.m, d.k)
            } else {
                panel.rows::<1, TOP, true>(a, d.m, d.k)
            }
        }
        j += 2 * L::LANES;
    }
}

/// The left operand: element `(i, p)` at `ptr + i * row + p * col`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Operand {
    ptr: *const f32,
    row: usize,
    col: usize,
}

/// A panel of up to two vectors of columns of the result and of the right operand.
#[cfg(target_arch = "x86_64")]
struct Panel<L: Lanes> {
    dst: *mut f32,
    dst_row: usize,
    b: *const f32,
    b_row: usize,
    /// The panel's columns in each of its two vectors.
    masks: [L::Mask; 2],
}

#[cfg(target_arch = "x86_64")]
impl<L: Lanes> Panel<L> {
    /// All `m` rows, in tiles of `TOP` (8 or 4), then 4, 2 and 1.
    ///
    /// # Safety
    /// As [`panels`]'s, for this panel.
    #[inline(always)]
    unsafe fn rows<const V: usize, const TOP: usize, const MASKED: bool>(
        &self,
        a: Operand,
        m: usize,
        k: usize,
    ) {
        let mut i = 0;
        // SAFETY (each tile): rows `i..i + R` are within the `m` rows.
        while m - i >= TOP {
            unsafe { self.tile::<TOP, V, MASKED>(a, i, k) };
            i += TOP;
        }
        for rows in [4, 2, 1] {
            if rows < TOP && m - i >= rows {
                match rows {
                    4 => unsafe { self.tile::<4, V, MASKED>(a, i, k) },
                    2 => unsafe { self.tile::<2, V, MASKED>(a, i, k) },
                    _ => unsafe { self.tile::<1, V, MASKED>(a, i, k) },
                }
                i += rows;
            }
        }
    }

    /// Rows `i..i + R` of the panel: `R x V` vectors of sums kept in registers over the depth.
    ///
    /// # Safety
    /// As [`panels`]'s; rows `i..i + R` exist. Loads and stores touch only the panel's columns
    /// (all of its `V` vectors unless `MASKED`).
    #[inline(always)]
    unsafe fn tile<const R: usize, const V: usize, const MASKED: bool>(
        &self,
        a: Operand,
        i: usize,
        k: usize,
    ) {
        // SAFETY (the vector operations): the CPU has `L`'s features.
        let mut acc = [[unsafe { L::zero() }; V]; R];
        for p in 0..k {
            let mut b = [unsafe { L::zero() }; V];
            for (v, b) in b.iter_mut().enumerate() {
                // SAFETY: row `p < k` of the right operand, the panel's columns.
                let at = unsafe { self.b.add(p * self.b_row + L::LANES * v) };
                *b = unsafe {
                    if MASKED {
                        L::load(self.masks[v], at)
                    } else {
                        L::load_all(at)
                    }
                };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: element `(i + r, p)` of the left operand.
                let x = unsafe { L::splat(*a.ptr.add((i + r) * a.row + p * a.col)) };
                for (acc, &b) in acc.iter_mut().zip(&b) {
                    *acc = unsafe { L::fma(x, b, *acc) };
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            for (v, &sum) in acc.iter().enumerate() {
                let at = (i + r) * self.dst_row + L::LANES * v;
                // SAFETY: row `i + r` of the result, the panel's columns.
                let at = unsafe { self.dst.add(at) };
                unsafe {
                    if MASKED {
                        L::store(at, self.masks[v], sum)
                    } else {
                        L::store_all(at, sum)
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's order of operations, one element at a time.
    fn reference(lhs: &[f32], (lr, lc): (usize, usize), rhs: &[f32], d: Dims) -> Vec<f32> {
        let mut out = vec![0.0f32; d.m * d.n];
        for i in 0..d.m {
            for j in 0..d.n {
                let mut acc = 0.0f32;
                for p in 0..d.k {
                    acc = lhs[i * lr + p * lc].mul_add(rhs[p * d.n + j], acc);
                }
                out[i * d.n + j] = acc;
            }
        }
        out
    }

    /// Products covering every row tail (1 to 8 past a multiple of 8) and column tail (masked
    /// panels of 1 to 32 columns).
    const SHAPES: [(usize, usize, usize); 9] = [
        (2, 16, 8),
        (3, 17, 9),
        (9, 16, 16),
        (16, 64, 64),
        (13, 33, 47),
        (20, 40, 70),
        (7, 20, 17),
        (7, 20, 32),
        (5, 33, 48),
    ];

    /// Runs `kernel` on each of [`SHAPES`], with both layouts of the left operand, and checks
    /// its results bit for bit against a scalar loop; where `kernel` declines (returns
    /// false), checks that it left `dst` untouched.
    fn check(
        kernel: impl Fn(&mut MatMut<'_, f32>, MatRef<'_, f32>, MatRef<'_, f32>, Dims) -> bool,
    ) {
        let value = |i: usize| ((i * 7919 % 1013) as f32 - 506.0) / 317.0;
        for (m, k, n) in SHAPES {
            let d = Dims { m, k, n };
            let lhs: Vec<f32> = (0..m * k).map(value).collect();
            let rhs: Vec<f32> = (0..k * n).map(|i| value(i + 5)).collect();
            for transposed in [false, true] {
                let strides = if transposed { (1, m) } else { (k, 1) };
                let a = MatRef { data: &lhs, row_stride: strides.0, col_stride: strides.1 };
                let b = MatRef { data: &rhs, row_stride: n, col_stride: 1 };
                let mut out = vec![f32::NAN; m * n];
                let mut dst = MatMut { data: &mut out, row_stride: n, col_stride: 1 };
                if !kernel(&mut dst, a, b, d) {
                    assert!(out.iter().all(|x| x.is_nan()), "{m}x{k}x{n} left untouched");
                    continue;
                }
                let want = reference(&lhs, strides, &rhs, d);
                let same = out.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{m}x{k}x{n}, transposed lhs {transposed}");
            }
        }
    }

    /// The kernel this CPU runs: every shape with AVX-512, whole 16-column panels with AVX2
    /// only; a product outside the kernel's range is declined and leaves `dst` as it was.
    #[test]
    fn tiles_and_tails_match_a_scalar_loop_bit_for_bit() {
        let avx512 = std::is_x86_feature_detected!("avx512f");
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        if !avx512 && !avx2 {
            return;
        }
        check(|dst, a, b, d| {
            let runs = product(dst, a, b, d);
            assert_eq!(runs, avx512 || d.n % 16 == 0, "{d:?}");
            runs
        });
        let (lhs, rhs) = (vec![1.0f32; 8 * 4], vec![1.0f32; 4 * 8]);
        let mut out = vec![7.0f32; 64];
        let mut dst = MatMut { data: &mut out, row_stride: 8, col_stride: 1 };
        let a = MatRef { data: &lhs, row_stride: 4, col_stride: 1 };
        let b = MatRef { data: &rhs, row_stride: 8, col_stride: 1 };
        assert!(!product(&mut dst, a, b, Dims { m: 8, k: 4, n: 8 }), "a depth of 4 is gemm's");
        let column = MatRef { data: &rhs, row_stride: 1, col_stride: 1 };
        let mut narrow = MatMut { data: &mut out, row_stride: 1, col_stride: 1 };
        let long = MatRef { data: &lhs, row_stride: 16, col_stride: 1 };
        assert!(!product(&mut narrow, long, column, Dims { m: 2, k: 16, n: 1 }), "a vector's");
        assert!(out.iter().all(|&x| x == 7.0));
    }

    /// The AVX2 kernel on every shape, masked panels included, whatever kernel `product`
    /// would pick on this CPU.
    #[test]
    fn the_avx2_kernel_matches_a_scalar_loop_bit_for_bit() {
        if !(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")) {
            return;
        }
        check(|dst, a, b, d| {
            // SAFETY: the CPU has AVX2 and FMA (checked above); `check` builds each matrix
            // within its slice.
            unsafe { product_avx2(dst, a, b, d) };
            true
        });
    }
}
