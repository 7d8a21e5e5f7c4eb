//! Large `f32` matrix products: the right operand packed into column panels, the left one
//! broadcast from where it lies, tiles of 6 x 64 results kept in registers.
//!
//! # Why not gemm here
//!
//! gemm packs both operands and re-reads and re-writes the result once per depth block. For a
//! 2048 x 2048 product on two Zen 4 cores that kept it at 84-88% of the FMA peak, where this
//! kernel runs at 91-94% (interleaved, per-round ratio of times about 0.92):
//!
//! * the depth block is as deep as 2048, so up to that depth every result is written once
//!   and never read back;
//! * the left operand is not packed at all: each tile broadcasts its six rows' elements
//!   straight from the matrix (any strides; a transposed operand reads six consecutive
//!   values), so only the right operand's panels are copied;
//! * threads split the columns, so each packs only its own part of the right operand and no
//!   thread waits on another.
//!
//! That holds where a core runs each 512-bit multiply-add as two 256-bit halves (AMD's Zen
//! 4): there the four panel vectors a depth step reads from L2 keep pace with its 24
//! multiply-adds. A core with two full-width 512-bit FMA units finishes those in 12 cycles
//! and waits on L2: on a 2-core Xeon (Sapphire Rapids class) this kernel reached 196-367
//! GFLOP/s on the 2048 x 2048 product (by block sizes) where gemm, whose packed micro-panels
//! stay in L1, reached 421. So products go to this kernel on Zen 4 only ([`product`]).
//!
//! The module exists on x86-64 only; elsewhere every product goes to gemm.
//!
//! Every result is `fma(a[i, k-1], b[k-1, j], ... fma(a[i, 0], b[0, j], 0))`, the depth in
//! order, with one addition per further depth block: the same bits on every run and for
//! every thread count.

use std::arch::x86_64::*;

use super::matmul::{Dims, MatMut, MatRef};

/// Rows of a tile: each of its elements of the left operand is broadcast once per depth step.
const TILE_ROWS: usize = 6;

/// Columns of a tile: four vectors of 16. Six by four vectors is 24 accumulators, which
/// leaves registers for the four loaded vectors and a broadcast.
const TILE_COLS: usize = 64;

/// Depth of a packed block. Up to it the results are written once; a deeper product adds
/// each further block's sums to them.
const DEPTH_BLOCK: usize = 2048;

/// Columns of a packed block (depth x columns floats, 3 MiB at full depth, read from L2 and
/// L3 by every row tile). Measured against 64 to 512: 256 to 512 were best, 384 by a little.
const COLUMN_BLOCK: usize = 384;

/// Products with fewer multiply-adds go to gemm or the small kernel.
const MIN_MACS: usize = super::matmul::PARALLEL_MIN_MACS;

/// Shallower products go to gemm, which was as fast or faster on them (512 x 128 x 512 on
/// two threads: 1.12x gemm's time here, 128 x 512 x 512: level, 128 x 784 x 512: 0.93x).
const MIN_DEPTH: usize = 512;

/// Narrower products go to gemm: the last tile of a row would leave many lanes empty.
const MIN_COLUMNS: usize = 128;

/// `dst = lhs @ rhs` on up to `threads` threads on a Zen 4 CPU, if the product suits the
/// kernel (see [`product_with_avx512`]). Returns whether it ran; if not, `dst` is untouched.
///
/// The caller has checked that each matrix lies within its slice.
pub(crate) fn product(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
    threads: usize,
) -> bool {
    halves_512_bit_ops() && product_with_avx512(dst, lhs, rhs, d, threads)
}

/// `dst = lhs @ rhs` on up to `threads` threads if the product suits the kernel: large, deep
/// and wide enough, `rhs` and `dst` with unit column stride (`lhs` may have any strides), and
/// a CPU with AVX-512F. Returns whether it ran; if not, `dst` is untouched.
///
/// The caller has checked that each matrix lies within its slice.
fn product_with_avx512(
    dst: &mut MatMut<'_, f32>,
    lhs: MatRef<'_, f32>,
    rhs: MatRef<'_, f32>,
    d: Dims,
    threads: usize,
) -> bool {
    let Dims { m, k, n } = d;
    // At least seven in eight lanes of the tiles hold a column.
    let lanes_used = 8 * n >= 7 * n.next_multiple_of(TILE_COLS);
    // A transposed right operand (unit row stride) is packed through transposing tiles.
    let rhs_layout_suits = rhs.col_stride == 1 || (rhs.row_stride == 1 && rhs.col_stride >= k);
    let suits = rhs_layout_suits
        && dst.col_stride == 1
        && m >= 2
        && n >= MIN_COLUMNS
        && lanes_used
        && k >= MIN_DEPTH
        && m.saturating_mul(k).saturating_mul(n) >= MIN_MACS;
    if !suits {
        return false;
    }
    if !std::is_x86_feature_detected!("avx512f") {
        return false;
    }
    let product = Product {
        a: Strided { ptr: lhs.data.as_ptr(), row: lhs.row_stride, col: lhs.col_stride },
        b: Strided { ptr: rhs.data.as_ptr(), row: rhs.row_stride, col: rhs.col_stride },
        c: Rows { ptr: dst.data.as_mut_ptr(), row: dst.row_stride },
        d,
    };
    let parts = Part::split(d, threads.max(1));
    if parts.len() == 1 {
        // SAFETY: the CPU has AVX-512F; the caller checked that every matrix lies within its
        // slice, and `dst` is borrowed exclusively.
        unsafe { product.run(parts[0]) };
    } else {
        // SAFETY: as above; the parts cover disjoint blocks of `dst`, so no two threads write
        // the same element, and `lhs` and `rhs` are only read.
        super::parts::for_each(parts.len(), |i| unsafe { product.run(parts[i]) });
    }
    true
}

/// Whether this CPU is an AMD Zen 4 (family 19h with AVX-512), whose cores split each
/// 512-bit operation into two 256-bit halves (see the module's documentation).
fn halves_512_bit_ops() -> bool {
    static ZEN4: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ZEN4.get_or_init(|| {
        let (vendor, signature) = (__cpuid(0), __cpuid(1));
        let mut name = [0u8; 12];
        for (bytes, word) in name.chunks_exact_mut(4).zip([vendor.ebx, vendor.edx, vendor.ecx]) {
            bytes.copy_from_slice(&word.to_le_bytes());
        }
        let amd = &name == b"AuthenticAMD";
        let family = ((signature.eax >> 8) & 0xf) + ((signature.eax >> 20) & 0xff);
        amd && family == 0x19
    })
}

/// A matrix read in place: element `(i, j)` at `ptr + i * row + j * col`.
#[derive(Clone, Copy)]
struct Strided {
    ptr: *const f32,
    row: usize,
    col: usize,
}

/// A matrix with unit column stride: element `(i, j)` at `ptr + i * row + j`.
#[derive(Clone, Copy)]
struct Rows<P> {
    ptr: P,
    row: usize,
}

/// One product's operands, shared by the threads that compute its parts.
#[derive(Clone, Copy)]
struct Product {
    a: Strided,
    /// Row-major (unit column stride) or transposed (unit row stride).
    b: Strided,
    c: Rows<*mut f32>,
    d: Dims,
}

// SAFETY: a `Product` only carries the pointers of `product`'s borrows across the threads
// of its own parallel loop, which ends before `product` returns. The threads read `a` and
// `b` and write disjoint parts of `c` (see `Part::split`).
unsafe impl Send for Product {}
// SAFETY: as for `Send`.
unsafe impl Sync for Product {}

/// Rows and columns of the result that one thread computes.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Part {
    rows: (usize, usize),
    cols: (usize, usize),
}

impl Part {
    /// Up to `threads` parts: column ranges (multiples of a tile's width) first, since each
    /// thread then packs only its own columns of `rhs`; rows are split too when there are
    /// fewer column tiles than threads.
    fn split(d: Dims, threads: usize) -> Vec<Part> {
        let col_parts = threads.min(d.n.div_ceil(TILE_COLS));
        let width = d.n.div_ceil(col_parts).next_multiple_of(TILE_COLS);
        let row_parts = (threads / col_parts).min(d.m.div_ceil(TILE_ROWS)).max(1);
        let height = d.m.div_ceil(row_parts).next_multiple_of(TILE_ROWS);
        let ranges = |len: usize, step: usize| {
            (0..len).step_by(step).map(move |start| (start, (start + step).min(len)))
        };
        ranges(d.n, width)
            .flat_map(|cols| ranges(d.m, height).map(move |rows| Part { rows, cols }))
            .collect()
    }
}

thread_local! {
    /// Each thread's packed block of `rhs`, kept between products.
    static PACKED: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Product {
    /// Computes one part: for each depth block and column block of it, packs that block of
    /// `rhs`, then runs every row tile over every column tile of it.
    ///
    /// # Safety
    /// The CPU has AVX-512F; the operands lie within their slices; no other thread writes
    /// this part of `c`.
    unsafe fn run(&self, part: Part) {
        PACKED.with_borrow_mut(|packed| {
            let Dims { k, .. } = self.d;
            let block_cols =
                COLUMN_BLOCK.min(part.cols.1 - part.cols.0).next_multiple_of(TILE_COLS);
            super::alloc::resize(packed, k.min(DEPTH_BLOCK) * block_cols, 0.0);
            for p0 in (0..k).step_by(DEPTH_BLOCK) {
                let depth = (k - p0).min(DEPTH_BLOCK);
                for j0 in (part.cols.0..part.cols.1).step_by(COLUMN_BLOCK) {
                    let cols = (part.cols.1 - j0).min(COLUMN_BLOCK);
                    // SAFETY: rows `p0..p0 + depth` and columns `j0..j0 + cols` lie in `rhs`;
                    // `packed` holds `depth` rows of `cols` rounded up to whole panels.
                    unsafe { self.pack(p0, depth, j0, cols, packed) };
                    // SAFETY: as this function's, for the block just packed.
                    unsafe { self.block(part.rows, p0, depth, j0, cols, packed) };
                }
            }
        });
    }

    /// Copies `rhs[p0..p0 + depth, j0..j0 + cols]` into panels of [`TILE_COLS`] columns, each
    /// `depth` rows of its columns in a row, the last panel padded with zeros.
    ///
    /// # Safety
    /// The block lies within `rhs`; `packed` holds `depth * cols.next_multiple_of(TILE_COLS)`.
    #[inline(always)]
    unsafe fn pack(&self, p0: usize, depth: usize, j0: usize, cols: usize, packed: &mut [f32]) {
        if self.b.col == 1 {
            // SAFETY: the caller's contract.
            unsafe { self.pack_rows(p0, depth, j0, cols, packed) }
        } else {
            // SAFETY: the caller's contract.
            unsafe { self.pack_columns(p0, depth, j0, cols, packed) }
        }
    }

    /// [`Product::pack`] for a row-major `rhs`: rows are read whole, in order, so that the
    /// copy streams.
    ///
    /// # Safety
    /// As [`Product::pack`]'s.
    #[inline(always)]
    unsafe fn pack_rows(
        &self,
        p0: usize,
        depth: usize,
        j0: usize,
        cols: usize,
        packed: &mut [f32],
    ) {
        let full = cols / TILE_COLS;
        let tail = cols % TILE_COLS;
        for p in 0..depth {
            // SAFETY: row `p0 + p` of `rhs`, columns `j0..j0 + cols`.
            let row = unsafe {
                std::slice::from_raw_parts(self.b.ptr.add((p0 + p) * self.b.row + j0), cols)
            };
            for (q, src) in row.chunks_exact(TILE_COLS).enumerate() {
                let at = (q * depth + p) * TILE_COLS;
                packed[at..at + TILE_COLS].copy_from_slice(src);
            }
            if tail > 0 {
                let at = (full * depth + p) * TILE_COLS;
                packed[at..at + tail].copy_from_slice(&row[full * TILE_COLS..]);
                packed[at + tail..at + TILE_COLS].fill(0.0);
            }
        }
    }

    /// [`Product::pack`] for a transposed `rhs`, whose columns lie in memory as rows: each
    /// panel is the transpose of `TILE_COLS` such lines, moved through square tiles of
    /// registers ([`super::copy::Block::transpose_into`]).
    ///
    /// # Safety
    /// As [`Product::pack`]'s.
    #[inline(always)]
    unsafe fn pack_columns(
        &self,
        p0: usize,
        depth: usize,
        j0: usize,
        cols: usize,
        packed: &mut [f32],
    ) {
        let Dims { k, n, .. } = self.d;
        // SAFETY: the caller checked that `rhs`, `k x n` with these strides, lies within its
        // slice; its last element is `(k - 1, n - 1)`.
        let rhs = unsafe {
            std::slice::from_raw_parts(self.b.ptr, (k - 1) * self.b.row + (n - 1) * self.b.col + 1)
        };
        for (q, jq) in (0..cols).step_by(TILE_COLS).enumerate() {
            let width = (cols - jq).min(TILE_COLS);
            let panel = &mut packed[q * depth * TILE_COLS..(q + 1) * depth * TILE_COLS];
            let block = super::copy::Block {
                base: (j0 + jq) * self.b.col + p0 * self.b.row,
                rows: depth,
                cols: width,
                col_step: self.b.col,
            };
            block.transpose_into(rhs, panel, TILE_COLS);
            if width < TILE_COLS {
                for row in panel.chunks_exact_mut(TILE_COLS) {
                    row[width..].fill(0.0);
                }
            }
        }
    }

    /// Every tile of `rows` x `j0..j0 + cols` over the packed depth block `p0..p0 + depth`.
    ///
    /// # Safety
    /// As [`Product::run`]'s; `packed` holds the block as [`Product::pack`] left it.
    #[inline(always)]
    unsafe fn block(
        &self,
        rows: (usize, usize),
        p0: usize,
        depth: usize,
        j0: usize,
        cols: usize,
        packed: &[f32],
    ) {
        for i in (rows.0..rows.1).step_by(TILE_ROWS) {
            for jr in (0..cols).step_by(TILE_COLS) {
                let width = (cols - jr).min(TILE_COLS);
                let tile = Tile {
                    // SAFETY: element `(i, p0)` of `lhs` and `(i, j0 + jr)` of the result
                    // exist (`i < m`, `p0 < k`, `j0 + jr < n`).
                    a: unsafe { self.a.ptr.add(i * self.a.row + p0 * self.a.col) },
                    a_row: self.a.row,
                    a_col: self.a.col,
                    b: packed[jr * depth..(jr + TILE_COLS) * depth].as_ptr(),
                    depth,
                    c: unsafe { self.c.ptr.add(i * self.c.row + j0 + jr) },
                    c_row: self.c.row,
                    masks: lane_masks(width),
                    accumulate: p0 > 0,
                };
                // SAFETY: rows `i..i + R` of `lhs` and of the result exist (`R` is at most
                // the rows left); the masks cover the `width` columns that exist.
                unsafe {
                    match (rows.1 - i).min(TILE_ROWS) {
                        6 => tile.run::<6>(),
                        5 => tile.run::<5>(),
                        4 => tile.run::<4>(),
                        3 => tile.run::<3>(),
                        2 => tile.run::<2>(),
                        _ => tile.run::<1>(),
                    }
                }
            }
        }
    }
}

/// The lanes of each of a tile's four vectors that hold one of its `width` columns.
fn lane_masks(width: usize) -> [__mmask16; 4] {
    std::array::from_fn(|v| {
        let lanes = width.saturating_sub(16 * v).min(16);
        ((1u32 << lanes) - 1) as __mmask16
    })
}

/// Up to `TILE_ROWS` x [`TILE_COLS`] results over one packed depth block.
struct Tile {
    /// Element `(i, p0)` of `lhs`; `(i + r, p0 + p)` is at `a + r * a_row + p * a_col`.
    a: *const f32,
    a_row: usize,
    a_col: usize,
    /// The packed panel: `depth` rows of [`TILE_COLS`] values.
    b: *const f32,
    depth: usize,
    /// Element `(i, j)` of the result; row `r` starts `r * c_row` further on.
    c: *mut f32,
    c_row: usize,
    masks: [__mmask16; 4],
    /// Add to the results (a later depth block) rather than overwrite them.
    accumulate: bool,
}

impl Tile {
    /// The tile's `R` rows: `R x 4` vectors of sums, one multiply-add each per depth step.
    ///
    /// # Safety
    /// The CPU has AVX-512F; rows `0..R` of the tile exist in `lhs` and the result, the
    /// panel holds `depth` rows, and the masks cover only columns that exist.
    #[target_feature(enable = "avx512f")]
    unsafe fn run<const R: usize>(&self) {
        if self.accumulate {
            // The sums are added to these results at the end: fetch them meanwhile.
            for r in 0..R {
                for v in 0..4 {
                    // SAFETY: a prefetch never faults; the address is within the result.
                    unsafe {
                        _mm_prefetch::<_MM_HINT_ET0>(self.c.add(r * self.c_row + 16 * v).cast())
                    };
                }
            }
        }
        let rows: [usize; R] = std::array::from_fn(|r| r * self.a_row);
        let mut acc = [[_mm512_setzero_ps(); 4]; R];
        let (mut a, mut b) = (self.a, self.b);
        for _ in 0..self.depth {
            // SAFETY: one row of the panel (`depth` rows of 64 values).
            let bv: [__m512; 4] =
                std::array::from_fn(|v| unsafe { _mm512_loadu_ps(b.add(16 * v)) });
            for (acc, &row) in acc.iter_mut().zip(&rows) {
                // SAFETY: element `(i + r, p)` of `lhs`, for a depth step `p` within the block.
                let x = _mm512_set1_ps(unsafe { *a.add(row) });
                for (acc, &bv) in acc.iter_mut().zip(&bv) {
                    *acc = _mm512_fmadd_ps(x, bv, *acc);
                }
            }
            // Past the last step these point outside the operands, but are never read.
            (a, b) = (a.wrapping_add(self.a_col), b.wrapping_add(TILE_COLS));
        }
        for (r, acc) in acc.iter().enumerate() {
            for (v, &sum) in acc.iter().enumerate() {
                // SAFETY: row `r` of the tile, the columns the mask selects.
                unsafe {
                    let at = self.c.add(r * self.c_row + 16 * v);
                    let sum = if self.accumulate {
                        _mm512_add_ps(_mm512_maskz_loadu_ps(self.masks[v], at), sum)
                    } else {
                        sum
                    };
                    _mm512_mask_storeu_ps(at, self.masks[v], sum);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's order of operations, one element at a time: a multiply-add chain over
    /// each depth block, the blocks' sums added in order.
    fn reference(lhs: &[f32], (lr, lc): (usize, usize), rhs: &[f32], d: Dims) -> Vec<f32> {
        let mut out = vec![0.0f32; d.m * d.n];
        for i in 0..d.m {
            for j in 0..d.n {
                let mut total = 0.0f32;
                for p0 in (0..d.k).step_by(DEPTH_BLOCK) {
                    let mut acc = 0.0f32;
                    for p in p0..(p0 + DEPTH_BLOCK).min(d.k) {
                        acc = lhs[i * lr + p * lc].mul_add(rhs[p * d.n + j], acc);
                    }
                    total = if p0 == 0 { acc } else { total + acc };
                }
                out[i * d.n + j] = total;
            }
        }
        out
    }

    fn value(i: usize) -> f32 {
        ((i * 7919 % 1013) as f32 - 506.0) / 317.0
    }

    /// Row tails (1 to 5 past a multiple of 6), column tails (masked panels, a block edge at
    /// 384), a depth past one block, both layouts of each operand and 1 to 3 threads, bit for
    /// bit against a scalar loop.
    #[test]
    fn tiles_tails_blocks_and_threads_match_a_scalar_loop_bit_for_bit() {
        if !std::is_x86_feature_detected!("avx512f") {
            return;
        }
        for (m, k, n) in [(7, 2100, 128), (13, 600, 450), (40, 520, 250), (2, 1000, 900)] {
            let d = Dims { m, k, n };
            let lhs: Vec<f32> = (0..m * k).map(value).collect();
            let rhs: Vec<f32> = (0..k * n).map(|i| value(i + 5)).collect();
            // The same right operand stored as its transpose: `n x k`, row-major.
            let rhs_t: Vec<f32> = (0..n * k).map(|i| rhs[(i % k) * n + i / k]).collect();
            for (lhs_t, rhs_t) in [(false, None), (true, None), (false, Some(&rhs_t))] {
                let strides = if lhs_t { (1, m) } else { (k, 1) };
                let want = reference(&lhs, strides, &rhs, d);
                let b = match rhs_t {
                    None => MatRef { data: &rhs, row_stride: n, col_stride: 1 },
                    Some(t) => MatRef { data: t, row_stride: 1, col_stride: k },
                };
                for threads in 1..=3 {
                    let a = MatRef { data: &lhs, row_stride: strides.0, col_stride: strides.1 };
                    let mut out = vec![f32::NAN; m * n];
                    let mut dst = MatMut { data: &mut out, row_stride: n, col_stride: 1 };
                    assert!(
                        product_with_avx512(&mut dst, a, b, d, threads),
                        "{m}x{k}x{n} is large enough"
                    );
                    let same = out.iter().zip(&want).all(|(x, y)| x.to_bits() == y.to_bits());
                    let layouts = format!("transposed lhs {lhs_t}, rhs {}", rhs_t.is_some());
                    assert!(same, "{m}x{k}x{n}, {layouts}, {threads} threads");
                }
            }
        }
    }

    /// Padded rows (strides past the row's end) are neither read as values nor written.
    #[test]
    fn strided_rows_leave_the_padding_alone() {
        if !std::is_x86_feature_detected!("avx512f") {
            return;
        }
        let d = Dims { m: 21, k: 520, n: 230 };
        let (lhs_row, rhs_row, out_row) = (530, 240, 233);
        let lhs: Vec<f32> = (0..d.m * lhs_row).map(value).collect();
        let rhs: Vec<f32> = (0..d.k * rhs_row).map(|i| value(i + 3)).collect();
        let mut out = vec![-1.0f32; d.m * out_row];
        let a = MatRef { data: &lhs, row_stride: lhs_row, col_stride: 1 };
        let b = MatRef { data: &rhs, row_stride: rhs_row, col_stride: 1 };
        let mut dst = MatMut { data: &mut out, row_stride: out_row, col_stride: 1 };
        assert!(product_with_avx512(&mut dst, a, b, d, 2));
        let dense = |data: &[f32], row: usize, rows: usize, cols: usize| -> Vec<f32> {
            (0..rows).flat_map(|i| data[i * row..i * row + cols].to_vec()).collect()
        };
        let want = reference(
            &dense(&lhs, lhs_row, d.m, d.k),
            (d.k, 1),
            &dense(&rhs, rhs_row, d.k, d.n),
            d,
        );
        for i in 0..d.m {
            let row = &out[i * out_row..(i + 1) * out_row];
            assert_eq!(row[..d.n], want[i * d.n..(i + 1) * d.n], "row {i}");
            assert!(row[d.n..].iter().all(|&x| x == -1.0), "padding of row {i}");
        }
    }

    /// Products too small, too shallow, too narrow, with lanes to spare or with a strided
    /// right operand are declined, and leave `dst` as it was.
    #[test]
    fn unsuitable_products_are_declined() {
        let (lhs, rhs) = (vec![1.0f32; 1 << 20], vec![1.0f32; 1 << 20]);
        let mut out = vec![7.0f32; 1 << 20];
        let declines = |out: &mut [f32], (m, k, n): (usize, usize, usize), rhs_col: usize| {
            let a = MatRef { data: &lhs, row_stride: k, col_stride: 1 };
            let b = MatRef { data: &rhs, row_stride: n * rhs_col, col_stride: rhs_col };
            let mut dst = MatMut { data: out, row_stride: n, col_stride: 1 };
            !product_with_avx512(&mut dst, a, b, Dims { m, k, n }, 2)
        };
        assert!(declines(&mut out, (8, 512, 128), 1), "too small");
        assert!(declines(&mut out, (1024, 256, 1024), 1), "too shallow");
        assert!(declines(&mut out, (1024, 1024, 100), 1), "too narrow");
        assert!(
            declines(&mut out, (1024, 1024, 200), 1),
            "a quarter of the last tile's lanes idle"
        );
        assert!(declines(&mut out, (512, 512, 512), 2), "strided rhs");
        assert!(out.iter().all(|&x| x == 7.0));
    }

    /// Column parts come first, in whole tiles; rows are split when columns run out.
    #[test]
    fn parts_cover_the_result_once() {
        let parts = Part::split(Dims { m: 2048, k: 8, n: 2048 }, 2);
        assert_eq!(
            parts,
            [
                Part { rows: (0, 2048), cols: (0, 1024) },
                Part { rows: (0, 2048), cols: (1024, 2048) }
            ]
        );
        for (d, threads) in [
            (Dims { m: 100, k: 1, n: 40 }, 4),
            (Dims { m: 5, k: 1, n: 1000 }, 3),
            (Dims { m: 1000, k: 1, n: 130 }, 8),
        ] {
            let mut hits = vec![0u8; d.m * d.n];
            for part in Part::split(d, threads) {
                assert!(part.cols.0 % TILE_COLS == 0 && part.rows.0 % TILE_ROWS == 0);
                for i in part.rows.0..part.rows.1 {
                    for j in part.cols.0..part.cols.1 {
                        hits[i * d.n + j] += 1;
                    }
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "{d:?} on {threads} threads");
        }
    }
}
