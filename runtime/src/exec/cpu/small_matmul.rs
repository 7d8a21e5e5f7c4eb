//! Small `f32` matrix products without packing.
//!
//! gemm copies (packs) its operands into blocks before its micro-kernels run, which pays for
//! itself on large products. On the products of a recurrent cell or a classifier head (16 x 64
//! times 64 x 64, 128 x 512 times 512 x 10) that fixed cost is a large part of the call: here
//! the right operand's rows are read where they lie, each tile of up to 8 x 32 results is
//! accumulated in registers over the whole depth and stored once.
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
/// where they lie; `lhs` may have any strides), and a CPU with AVX-512F. Returns whether it ran; if not, `dst` is untouched.
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
    if std::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked above); the caller checked that `dst`, `lhs`
        // and `rhs`, with their strides, lie within their slices, and `dst` is borrowed
        // exclusively.
        unsafe { product_avx512(dst, lhs, rhs, d) };
        return true;
    }
    false
}

/// Column panels of 32 (two vectors; a last narrower one is masked), each in row tiles.
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
    let lanes = |w: usize| -> __mmask16 { (((1u32 << w.min(16)) - 1) & 0xffff) as __mmask16 };
    let a = Operand { ptr: lhs.data.as_ptr(), row: lhs.row_stride, col: lhs.col_stride };
    let mut j = 0;
    while j < d.n {
        let width = (d.n - j).min(32);
        let masks = [lanes(width), lanes(width.saturating_sub(16))];
        let panel = Panel {
            // SAFETY: column `j < n` of each matrix lies within its slice.
            dst: unsafe { dst.data.as_mut_ptr().add(j) },
            dst_row: dst.row_stride,
            b: unsafe { rhs.data.as_ptr().add(j) },
            b_row: rhs.row_stride,
            masks,
        };
        // SAFETY: as this function's; the masks cover the panel's columns only.
        unsafe {
            if width > 16 {
                panel.rows::<2>(a, d.m, d.k)
            } else {
                panel.rows::<1>(a, d.m, d.k)
            }
        }
        j += 32;
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

/// A panel of up to 32 columns of the result and of the right operand.
#[cfg(target_arch = "x86_64")]
struct Panel {
    dst: *mut f32,
    dst_row: usize,
    b: *const f32,
    b_row: usize,
    /// The panel's columns in each of its two vectors.
    masks: [__mmask16; 2],
}

#[cfg(target_arch = "x86_64")]
impl Panel {
    /// All `m` rows, in tiles of 8, then 4, 2 and 1.
    ///
    /// # Safety
    /// As [`product_avx512`]'s, for this panel.
    #[inline(always)]
    unsafe fn rows<const V: usize>(&self, a: Operand, m: usize, k: usize) {
        let mut i = 0;
        // SAFETY (each tile): rows `i..i + R` are within the `m` rows.
        while m - i >= 8 {
            unsafe { self.tile::<8, V>(a, i, k) };
            i += 8;
        }
        for rows in [4, 2, 1] {
            if m - i >= rows {
                match rows {
                    4 => unsafe { self.tile::<4, V>(a, i, k) },
                    2 => unsafe { self.tile::<2, V>(a, i, k) },
                    _ => unsafe { self.tile::<1, V>(a, i, k) },
                }
                i += rows;
            }
        }
    }

    /// Rows `i..i + R` of the panel: `R x V` vectors of sums kept in registers over the depth.
    ///
    /// # Safety
    /// As [`product_avx512`]'s; rows `i..i + R` exist. Masked loads and stores touch only the
    /// panel's columns.
    #[inline(always)]
    unsafe fn tile<const R: usize, const V: usize>(&self, a: Operand, i: usize, k: usize) {
        let mut acc = [[_mm512_setzero_ps(); V]; R];
        for p in 0..k {
            let mut b = [_mm512_setzero_ps(); V];
            for (v, b) in b.iter_mut().enumerate() {
                // SAFETY: row `p < k` of the right operand, the panel's columns.
                *b = unsafe {
                    _mm512_maskz_loadu_ps(self.masks[v], self.b.add(p * self.b_row + 16 * v))
                };
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: element `(i + r, p)` of the left operand.
                let x = _mm512_set1_ps(unsafe { *a.ptr.add((i + r) * a.row + p * a.col) });
                for (acc, &b) in acc.iter_mut().zip(&b) {
                    *acc = _mm512_fmadd_ps(x, b, *acc);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            for (v, &sum) in acc.iter().enumerate() {
                let at = (i + r) * self.dst_row + 16 * v;
                // SAFETY: row `i + r` of the result, the panel's columns.
                unsafe { _mm512_mask_storeu_ps(self.dst.add(at), self.masks[v], sum) };
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

    /// Every row tail (1 to 8 past a multiple of 8), column tail (masked panels of 1 to 32)
    /// and both layouts of the left operand, bit for bit against a scalar loop; a product
    /// outside the kernel's range is declined and leaves `dst` as it was.
    #[test]
    fn tiles_and_tails_match_a_scalar_loop_bit_for_bit() {
        if !std::is_x86_feature_detected!("avx512f") {
            return;
        }
        let value = |i: usize| ((i * 7919 % 1013) as f32 - 506.0) / 317.0;
        for (m, k, n) in
            [(2, 16, 8), (3, 17, 9), (9, 16, 16), (16, 64, 64), (13, 33, 47), (20, 40, 70)]
        {
            let d = Dims { m, k, n };
            let lhs: Vec<f32> = (0..m * k).map(value).collect();
            let rhs: Vec<f32> = (0..k * n).map(|i| value(i + 5)).collect();
            for transposed in [false, true] {
                let strides = if transposed { (1, m) } else { (k, 1) };
                let a = MatRef { data: &lhs, row_stride: strides.0, col_stride: strides.1 };
                let b = MatRef { data: &rhs, row_stride: n, col_stride: 1 };
                let mut out = vec![f32::NAN; m * n];
                let mut dst = MatMut { data: &mut out, row_stride: n, col_stride: 1 };
                assert!(product(&mut dst, a, b, d));
                let want = reference(&lhs, strides, &rhs, d);
                let same = out.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                assert!(same, "{m}x{k}x{n}, transposed lhs {transposed}");
            }
        }
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
}
