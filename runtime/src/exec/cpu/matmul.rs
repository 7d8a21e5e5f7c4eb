//! Batched matrix multiplication on the CPU.
//!
//! [`batched_matmul`] computes `out[b] = lhs[b] @ rhs[b]` for row-major,
//! contiguous matrices, with per-operand batch strides (a stride of 0
//! broadcasts one matrix over the whole batch).
//!
//! # Kernels
//!
//! | element type                | kernel                                                   |
//! |-----------------------------|----------------------------------------------------------|
//! | `f32`, `f64`, [`half::f16`] | the `gemm` crate (SIMD kernel picked at run time)        |
//! | `f32`, small, one thread    | an unpacked AVX-512 or AVX2 kernel (`small_matmul`), else gemm |
//! | `f32`, large, deep and wide, Zen 4 | an AVX-512 kernel packing only the right operand (`packed_matmul`) |
//! | [`half::bf16`]              | widened to `f32`, `f32` gemm, rounded back once          |
//! | `Complex<f32>`, `Complex<f64>` | the `gemm` crate's complex kernels (no conjugation)   |
//! | `i8`..`i64`, `u8`..`u64`    | cache-blocked loop, wrapping (two's-complement) arithmetic |
//! | `bool`                      | the same loop as OR of ANDs (numpy semantics)            |
//!
//! # Threading
//!
//! All parallelism runs on rayon's current thread pool.
//!
//! * A product with at least [`PARALLEL_MIN_MACS`] multiply-adds (`m * k * n`)
//!   is split over all pool threads: a float product up to [`SPLIT_MAX_MACS`] as
//!   one single-threaded gemm call per thread on its own block of columns or rows
//!   (`split_product`), a larger one by gemm's `Parallelism::Rayon` (or column
//!   parts in `packed_matmul`), and integer products by row blocks. Smaller
//!   products run on the calling thread, because below that size the fork/join
//!   cost outweighs the gain.
//! * A batch of products is parallelised over the batch instead (each product
//!   single-threaded) when the whole batch reaches [`PARALLEL_MIN_MACS`] and
//!   either each product is below it, or the batch divides evenly over the
//!   threads, or it has at least [`BATCH_PARALLEL_MIN_PER_THREAD`] products
//!   per thread.
//! * A shared right-hand side (`rhs_batch_stride == 0`) with contiguous
//!   left-hand batches is folded into one tall `(batch * m) x k` product, and
//!   two broadcast operands are multiplied once and copied.
//!
//! Matrix-vector shapes (`m == 1` or `n == 1`) go to gemm's dedicated GEMV
//! paths for floats (above the threshold split over threads by rows of the
//! matrix, since gemm's GEMV is serial) and to a row-dot-product loop
//! (`n == 1`) or an AXPY-style loop (`m == 1`) for integers. `k == 0` yields
//! an all-zero result.

use half::{bf16, f16};
use num_complex::Complex;
use rayon::prelude::*;

use super::float_mode::Flushing;

/// Multiply-add count (`m * k * n`) from which one product is split over all
/// threads of the rayon pool; smaller products run single-threaded.
///
/// Measured with `benches/matmul_compare.rs` (f32, gemm `Parallelism::None`
/// vs `Parallelism::Rayon(2)`, 2-core AMD EPYC Zen 4, best of several quiet
/// runs): up to 80^3 (0.5M multiply-adds) the two are identical (gemm's own
/// `DEFAULT_THREADING_THRESHOLD` of 48*48*256 keeps it serial), 96^3 (0.88M)
/// gains 4-8% (within noise), and from 2^20 on the threaded call wins
/// (64x256x64: 1.2-1.35x, 112^3: 1.2x, 128^3: 1.4x, 256^3: 1.9x). The
/// integer loop, being slower per multiply-add, is at least as profitable to
/// split at this size, so it uses the same threshold.
pub const PARALLEL_MIN_MACS: usize = 1 << 20;

/// A batch of at least this many products per pool thread is always
/// parallelised over the batch (each product single-threaded), even when
/// every product is large enough to be threaded on its own.
///
/// Measured (f32, 2 threads): over-the-batch parallelism matched or beat
/// threading inside each product at every size (8 x 256^3: 225 vs 207 GFLOP/s,
/// 16 x 128^3: 213 vs 159), because independent products need no
/// synchronisation. It only loses when the batch does not divide evenly and
/// is short (3 products on 2 threads leave one idle for a third of the time),
/// so a batch that is not a multiple of the thread count must have at least
/// this many products per thread.
pub const BATCH_PARALLEL_MIN_PER_THREAD: usize = 4;

/// Integer kernel: columns of the right-hand block kept hot per pass.
const INT_BLOCK_COLS: usize = 512;

/// Integer kernel: bytes of the right-hand `kc x nc` block (fits in L2).
const INT_BLOCK_BYTES: usize = 256 * 1024;

/// Element types that [`batched_matmul`] supports.
///
/// Implemented for `f32`, `f64`, [`half::f16`], [`half::bf16`], all signed and
/// unsigned integers from 8 to 64 bits, and `bool`. The trait is sealed: the
/// kernels are chosen per type inside this module.
pub trait MatmulElement: Copy + Send + Sync + 'static + sealed::Sealed {}

impl<T: Copy + Send + Sync + 'static + sealed::Sealed> MatmulElement for T {}

/// Computes `out[b] = lhs[b] @ rhs[b]` for `b in 0..batch`.
///
/// * `lhs[b]` is the `m x k` row-major matrix starting at
///   `lhs[b * lhs_batch_stride]`; `rhs[b]` is the `k x n` row-major matrix
///   starting at `rhs[b * rhs_batch_stride]`. A stride of 0 broadcasts one
///   matrix over the batch; a stride larger than the matrix skips padding.
/// * The result is `batch * m * n` elements: `batch` contiguous row-major
///   `m x n` matrices.
/// * Integers use wrapping arithmetic; `bool` computes `OR_p (a[i,p] AND
///   b[p,j])`; `bf16` is computed in `f32` and rounded once at the end.
/// * `k == 0` gives zeros (`false` for `bool`).
///
/// # Panics
///
/// Panics if `lhs` or `rhs` is too short for the given shape and stride, or if
/// the output size overflows `usize`.
// The eight-argument signature mirrors rjax's kernel interface.
#[allow(clippy::too_many_arguments)]
pub fn batched_matmul<T: MatmulElement>(
    lhs: &[T],
    rhs: &[T],
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    lhs_batch_stride: usize,
    rhs_batch_stride: usize,
) -> Vec<T> {
    let shape = sealed::Shape {
        batch,
        m,
        k,
        n,
        lhs_stride: lhs_batch_stride,
        rhs_stride: rhs_batch_stride,
    };
    shape.validate(lhs.len(), rhs.len());
    T::batched(lhs, rhs, &shape)
}

mod sealed {
    /// Shape of a batched product; see [`super::batched_matmul`].
    #[derive(Clone, Copy, Debug)]
    pub struct Shape {
        pub batch: usize,
        pub m: usize,
        pub k: usize,
        pub n: usize,
        pub lhs_stride: usize,
        pub rhs_stride: usize,
    }

    impl Shape {
        /// Number of `lhs` elements the product reads.
        pub fn lhs_len(&self) -> usize {
            span(self.batch, self.lhs_stride, self.m, self.k)
        }

        /// Number of `rhs` elements the product reads.
        pub fn rhs_len(&self) -> usize {
            span(self.batch, self.rhs_stride, self.k, self.n)
        }

        /// Number of output elements.
        pub fn out_len(&self) -> usize {
            self.batch
                .checked_mul(self.m)
                .and_then(|x| x.checked_mul(self.n))
                .expect("batched_matmul: output size overflows usize")
        }

        /// Panics unless both operands cover the elements the product reads.
        pub fn validate(&self, lhs_len: usize, rhs_len: usize) {
            self.out_len();
            let (need_lhs, need_rhs) = (self.lhs_len(), self.rhs_len());
            assert!(
                lhs_len >= need_lhs,
                "batched_matmul: lhs has {lhs_len} elements, {self:?} needs {need_lhs}"
            );
            assert!(
                rhs_len >= need_rhs,
                "batched_matmul: rhs has {rhs_len} elements, {self:?} needs {need_rhs}"
            );
        }
    }

    /// Elements spanned by `batch` matrices of `rows x cols`, `stride` apart.
    fn span(batch: usize, stride: usize, rows: usize, cols: usize) -> usize {
        let size = rows.checked_mul(cols).expect("batched_matmul: matrix size overflows usize");
        if batch == 0 || size == 0 {
            return 0;
        }
        (batch - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(size))
            .expect("batched_matmul: operand span overflows usize")
    }

    /// Per-type kernel selection. Private to this module (sealed trait).
    pub trait Sealed: Sized {
        /// Runs the batched product; `shape` has been validated against the
        /// operand lengths.
        fn batched(lhs: &[Self], rhs: &[Self], shape: &Shape) -> Vec<Self>;

        /// One product of operands stored row-major or transposed (see [`matmul_in_place`]); `None`
        /// when the type has no strided kernel (the caller then copies the operands).
        fn strided(
            _lhs: &[Self],
            _rhs: &[Self],
            _layout: [super::Layout; 2],
            _mkn: [usize; 3],
        ) -> Option<Vec<Self>> {
            None
        }
    }
}

use sealed::Shape;

/// How a matrix operand of [`matmul_in_place`] is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row-major as the product reads it: `m x k` for the left operand, `k x n` for the right.
    RowMajor,
    /// Row-major as its transpose: `k x m` for the left operand, `n x k` for the right.
    Transposed,
}

/// `lhs @ rhs` (`m x k` times `k x n`, one product) with each operand in the given layout, so
/// the caller never materializes a transpose: a transposed left operand is read where it is,
/// and a transposed right one too unless the product has 32 rows or more, where a row-major
/// copy into a pooled buffer is faster (on Zen 4, the packed kernel copies it into its
/// panels instead, see `packed_matmul`). Returns `None` for element types
/// without a strided kernel (integers, `bool`, `bf16`) and for vector shapes (`m`, `n` or `k`
/// of 1, which have their own kernels in [`batched_matmul`]).
///
/// # Panics
///
/// Panics if an operand is shorter than its matrix.
pub fn matmul_in_place<T: MatmulElement>(
    lhs: &[T],
    rhs: &[T],
    layout: [Layout; 2],
    m: usize,
    k: usize,
    n: usize,
) -> Option<Vec<T>> {
    if m <= 1 || n <= 1 || k <= 1 {
        return None;
    }
    assert!(lhs.len() >= m * k && rhs.len() >= k * n, "matmul_in_place: operands too short");
    T::strided(lhs, rhs, layout, [m, k, n])
}

/// Rows of the product from which a transposed right operand is first copied to row-major.
///
/// gemm reads a right operand with unit row stride (column-major) at a third of the rate of a
/// row-major one (128x512x512 f32 on 2 threads of a Zen 5 core pair: about 130 GFLOP/s against
/// 400), while the copy costs one pass over `k x n` elements: it pays once the product has a
/// few dozen rows to amortize it over.
const TRANSPOSE_RHS_MIN_ROWS: usize = 32;

/// `dst = lhs @ rhs` for operands in `layout`, on the threads [`threads_for`] gives.
fn strided_product<T: GemmFloat + crate::dtype::Element>(
    lhs: &[T],
    rhs: &[T],
    layout: [Layout; 2],
    d: Dims,
) -> Vec<T> {
    let Dims { m, k, n } = d;
    let threads = threads_for(d);
    let mut out = super::pool::take_for_overwrite(m * n, T::ZERO);
    let (lhs_row, lhs_col) = match layout[0] {
        Layout::RowMajor => (k, 1),
        Layout::Transposed => (1, m),
    };
    let (rhs_row, rhs_col) = match layout[1] {
        Layout::RowMajor => (n, 1),
        Layout::Transposed => (1, k),
    };
    let lhs = MatRef { data: lhs, row_stride: lhs_row, col_stride: lhs_col };
    let rhs_in_place = MatRef { data: rhs, row_stride: rhs_row, col_stride: rhs_col };
    let mut dst = MatMut { data: &mut out, row_stride: n, col_stride: 1 };
    // A kernel of the type's own that takes the operands where they lie goes first; else a
    // product split by columns copies each thread's block of a transposed right operand
    // itself (see `split_product`), and an unsplit one copies all of it here.
    let copy_rhs = layout[1] == Layout::Transposed
        && m >= TRANSPOSE_RHS_MIN_ROWS
        && split_of(d, threads) != Some(Split::Columns);
    if !copy_rhs {
        gemm_strided(dst, lhs, rhs_in_place, d, parallelism(threads));
        return out;
    }
    if T::own_product(&mut dst, lhs, rhs_in_place, d, threads) {
        return out;
    }
    let copied = RowMajorCopy(super::copy::transpose(rhs, &[n, k], &[1, 0]));
    let rhs = MatRef { data: &copied.0, row_stride: n, col_stride: 1 };
    gemm_strided(dst, lhs, rhs, d, parallelism(threads));
    out
}

/// gemm's threading for a product given `threads` threads.
pub(crate) fn parallelism(threads: usize) -> gemm::Parallelism {
    if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    }
}

/// Dimensions of one product `(m x k) @ (k x n)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dims {
    pub m: usize,
    pub k: usize,
    pub n: usize,
}

impl Dims {
    fn macs(self) -> usize {
        self.m.saturating_mul(self.k).saturating_mul(self.n)
    }
}

/// Threads to give one product of `dims`.
fn threads_for(dims: Dims) -> usize {
    if dims.macs() >= PARALLEL_MIN_MACS {
        super::parts::threads()
    } else {
        1
    }
}

/// How a product treats the `dst` it is given.
#[derive(Clone, Copy, PartialEq)]
enum Dst {
    /// Adds into a zero-filled `dst`.
    Accumulates,
    /// Writes every element of `dst` (for `k > 0`), whatever it held, so the output may be
    /// a recycled buffer.
    Overwrites,
}

/// Shared batching driver.
///
/// `product(dst, lhs, rhs, dims, threads)` must set `dst` (`m * n`) to `lhs` (`m * k`) @
/// `rhs` (`k * n`) using up to `threads` threads, as `dst_use` says. `shape` must be
/// validated and `zero` is the additive identity.
fn run_batched<T, F>(
    lhs: &[T],
    rhs: &[T],
    shape: &Shape,
    zero: T,
    dst_use: Dst,
    product: F,
) -> Vec<T>
where
    T: crate::dtype::Element,
    F: Fn(&mut [T], &[T], &[T], Dims, usize) + Sync,
{
    let k = shape.k;
    if k == 0 || dst_use == Dst::Accumulates {
        let out = super::alloc::zeroed(shape.out_len(), zero);
        if out.is_empty() || k == 0 {
            return out;
        }
        return run_products(out, lhs, rhs, shape, product);
    }
    let out = super::pool::take_for_overwrite(shape.out_len(), zero);
    run_products(out, lhs, rhs, shape, product)
}

/// Fills `out` with the batch of products, choosing where the threads go.
fn run_products<T, F>(mut out: Vec<T>, lhs: &[T], rhs: &[T], shape: &Shape, product: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(&mut [T], &[T], &[T], Dims, usize) + Sync,
{
    let Shape { batch, m, k, n, .. } = *shape;
    if out.is_empty() {
        return out;
    }
    let (mk, kn, mn) = (m * k, k * n, m * n);
    let lhs_at = |b: usize| &lhs[b * shape.lhs_stride..][..mk];
    let rhs_at = |b: usize| &rhs[b * shape.rhs_stride..][..kn];
    let dims = Dims { m, k, n };

    // One product, or a shared rhs under contiguous lhs batches: a single
    // (batch * m) x k @ k x n product covers everything.
    if batch == 1 || (shape.rhs_stride == 0 && shape.lhs_stride == mk) {
        let tall = Dims { m: batch * m, k, n };
        product(&mut out, &lhs[..batch * mk], rhs_at(0), tall, threads_for(tall));
        return out;
    }

    // Both operands broadcast: every output matrix is the same.
    if shape.lhs_stride == 0 && shape.rhs_stride == 0 {
        let (first, rest) = out.split_at_mut(mn);
        product(first, lhs_at(0), rhs_at(0), dims, threads_for(dims));
        for dst in rest.chunks_exact_mut(mn) {
            dst.copy_from_slice(first);
        }
        return out;
    }

    let threads = super::parts::threads();
    let big_products = dims.macs() >= PARALLEL_MIN_MACS;
    let big_batch = dims.macs().saturating_mul(batch) >= PARALLEL_MIN_MACS;
    let balanced =
        batch.is_multiple_of(threads) || batch >= BATCH_PARALLEL_MIN_PER_THREAD * threads;
    if threads > 1 && big_batch && (!big_products || balanced) {
        out.par_chunks_exact_mut(mn)
            .enumerate()
            .flushing()
            .for_each(|(b, dst)| product(dst, lhs_at(b), rhs_at(b), dims, 1));
    } else {
        let threads = if big_products { threads } else { 1 };
        for (b, dst) in out.chunks_exact_mut(mn).enumerate() {
            product(dst, lhs_at(b), rhs_at(b), dims, threads);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Floating point: the `gemm` crate.
// ---------------------------------------------------------------------------

/// Element types with a `gemm` kernel (`gemm::gemm` panics for any other).
pub(crate) trait GemmFloat:
    crate::dtype::Element + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    /// Whether a threaded `1 x k @ k x n` product may be split over `k` and
    /// its partial results added in this type (costs one rounding per split).
    const SPLIT_K: bool;

    /// Runs the product on a kernel of this type's own if it has one that suits it: the small
    /// single-threaded one ([`super::small_matmul`]) or the large packed one
    /// ([`super::packed_matmul`]); returns whether it did (if not, gemm runs it).
    fn own_product(
        _dst: &mut MatMut<'_, Self>,
        _lhs: MatRef<'_, Self>,
        _rhs: MatRef<'_, Self>,
        _d: Dims,
        _threads: usize,
    ) -> bool {
        false
    }
}

impl GemmFloat for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const SPLIT_K: bool = true;

    fn own_product(
        dst: &mut MatMut<'_, f32>,
        lhs: MatRef<'_, f32>,
        rhs: MatRef<'_, f32>,
        d: Dims,
        threads: usize,
    ) -> bool {
        if threads == 1 && super::small_matmul::product(dst, lhs, rhs, d) {
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if super::packed_matmul::product(dst, lhs, rhs, d, threads) {
            return true;
        }
        false
    }
}

impl GemmFloat for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const SPLIT_K: bool = true;
}

impl GemmFloat for f16 {
    const ZERO: Self = f16::ZERO;
    const ONE: Self = f16::ONE;
    const SPLIT_K: bool = false;
}

impl GemmFloat for Complex<f32> {
    const ZERO: Self = Complex::new(0.0, 0.0);
    const ONE: Self = Complex::new(1.0, 0.0);
    const SPLIT_K: bool = true;
}

impl GemmFloat for Complex<f64> {
    const ZERO: Self = Complex::new(0.0, 0.0);
    const ONE: Self = Complex::new(1.0, 0.0);
    const SPLIT_K: bool = true;
}

/// `dst = lhs @ rhs` through `gemm::gemm`, all three row-major, on up to
/// `threads` threads.
///
/// gemm's GEMV paths (taken for `m == 1` or `n == 1`) are single-threaded,
/// so threaded matrix-vector products are split here so that every thread
/// streams its own contiguous part of the matrix: rows of `lhs` for `n == 1`
/// (each thread writes its own part of `dst`), and rows of `rhs` (ranges of
/// `k`) for `m == 1`, whose per-thread partial rows are then added. That
/// extra addition rounds once more per thread, so the `m == 1` split is only
/// taken for f32, f64 and complex types (`SPLIT_K`), not f16.
fn gemm_product<T: GemmFloat>(dst: &mut [T], lhs: &[T], rhs: &[T], d: Dims, threads: usize) {
    let Dims { m, k, n } = d;
    if k == 1 {
        // An outer product (per-example weight gradients are batches of them): gemm's
        // packing costs more than the single multiply per element it would do.
        outer_product(&mut dst[..m * n], &lhs[..m], &rhs[..n], threads);
    } else if threads > 1 && n == 1 && m > 1 {
        let rows = m.div_ceil(threads);
        dst[..m].par_chunks_mut(rows).zip(lhs[..m * k].par_chunks(rows * k)).flushing().for_each(
            |(dst, lhs)| {
                let part = Dims { m: dst.len(), k, n };
                gemm_call(dst, lhs, rhs, part, n, gemm::Parallelism::None);
            },
        );
    } else if threads > 1 && m == 1 && n > 1 && k > 1 && T::SPLIT_K {
        let depth = k.div_ceil(threads);
        let partials: Vec<Vec<T>> = lhs[..k]
            .par_chunks(depth)
            .zip(rhs[..k * n].par_chunks(depth * n))
            .flushing()
            .map(|(lhs, rhs)| {
                let mut partial = super::alloc::filled(n, T::ZERO);
                let part = Dims { m, k: lhs.len(), n };
                gemm_call(&mut partial, lhs, rhs, part, n, gemm::Parallelism::None);
                partial
            })
            .collect();
        let (first, rest) = partials.split_first().expect("k > 1 gives a chunk");
        dst[..n].copy_from_slice(first);
        for partial in rest {
            for (out, &p) in dst.iter_mut().zip(partial) {
                *out = *out + p;
            }
        }
    } else {
        gemm_call(dst, lhs, rhs, d, n, parallelism(threads));
    }
}

/// `dst[i, j] = lhs[i] * rhs[j]`, rows split over `threads`; the same single rounding as
/// gemm's `k == 1` product.
fn outer_product<T: GemmFloat>(dst: &mut [T], lhs: &[T], rhs: &[T], threads: usize) {
    let n = rhs.len();
    if n == 0 {
        return;
    }
    let row = |(out, &a): (&mut [T], &T)| {
        for (o, &b) in out.iter_mut().zip(rhs) {
            *o = a * b;
        }
    };
    if threads > 1 {
        dst.par_chunks_mut(n).zip(lhs.par_iter()).flushing().for_each(row);
    } else {
        dst.chunks_mut(n).zip(lhs.iter()).for_each(row);
    }
}

/// One `gemm::gemm` call: `dst` (`m x n`, row stride `n`) = `lhs` (`m x k`,
/// row stride `k`) @ `rhs` (`k x n`, row stride `rhs_row_stride >= n`); every
/// column stride is 1.
fn gemm_call<T: GemmFloat>(
    dst: &mut [T],
    lhs: &[T],
    rhs: &[T],
    d: Dims,
    rhs_row_stride: usize,
    parallelism: gemm::Parallelism,
) {
    let Dims { k, n, .. } = d;
    let dst = MatMut { data: dst, row_stride: n, col_stride: 1 };
    let lhs = MatRef { data: lhs, row_stride: k, col_stride: 1 };
    let rhs = MatRef { data: rhs, row_stride: rhs_row_stride, col_stride: 1 };
    gemm_strided(dst, lhs, rhs, d, parallelism);
}

/// A matrix read from a slice: element `(i, j)` is `data[i * row_stride + j * col_stride]`.
#[derive(Clone, Copy)]
pub(crate) struct MatRef<'a, T> {
    pub data: &'a [T],
    pub row_stride: usize,
    pub col_stride: usize,
}

/// A matrix written into a slice, laid out as [`MatRef`] describes.
pub(crate) struct MatMut<'a, T> {
    pub data: &'a mut [T],
    pub row_stride: usize,
    pub col_stride: usize,
}

/// Index one past the last element an `rows x cols` matrix with these strides addresses.
fn extent(rows: usize, cols: usize, row_stride: usize, col_stride: usize) -> usize {
    (rows - 1) * row_stride + (cols - 1) * col_stride + 1
}

/// `dst = lhs @ rhs` (`m x k` times `k x n`) for matrices with any strides, overwriting
/// `dst` whatever it held; `k == 0` leaves `dst` untouched, so callers zero it themselves.
pub(crate) fn gemm_strided<T: GemmFloat>(
    mut dst: MatMut<'_, T>,
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    d: Dims,
    parallelism: gemm::Parallelism,
) {
    let Dims { m, k, n } = d;
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    assert!(dst.data.len() >= extent(m, n, dst.row_stride, dst.col_stride));
    assert!(lhs.data.len() >= extent(m, k, lhs.row_stride, lhs.col_stride));
    assert!(rhs.data.len() >= extent(k, n, rhs.row_stride, rhs.col_stride));
    let threads = match parallelism {
        gemm::Parallelism::None => 1,
        gemm::Parallelism::Rayon(0) => super::parts::threads(),
        gemm::Parallelism::Rayon(threads) => threads,
    };
    if T::own_product(&mut dst, lhs, rhs, d, threads) {
        return;
    }
    if let Some(split) = split_of(d, threads) {
        return split_product(dst, lhs, rhs, d, threads, split);
    }
    // SAFETY: the asserts above bound the last element each matrix addresses by its slice's
    // length; `dst` is an exclusive borrow, so it aliases neither input.
    unsafe {
        gemm_raw(dst.data.as_mut_ptr(), dst.row_stride, dst.col_stride, lhs, rhs, d, parallelism)
    };
}

/// Products up to this many multiply-adds (about 645^3) are split by `split_product`;
/// larger ones are threaded inside gemm.
///
/// Measured on 2 threads of a Sapphire Rapids-class Xeon (GFLOP/s, median of runs, split
/// against gemm's threads): 640^3 378 vs 330, 128 x 784 x 512 ~15% faster in a training step;
/// 1024^3 level (376-402 vs 396-399), 2048^3 394-418 vs 423: there gemm's blocks are deep
/// enough that meeting per block costs little, and each split part would pack the whole
/// left operand again.
pub const SPLIT_MAX_MACS: usize = 1 << 28;

/// How [`split_product`] divides a product among threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// Each thread a block of columns (a product at least as wide as it is tall).
    Columns,
    /// Each thread a block of rows.
    Rows,
}

/// How a float product of `d` on `threads` threads is split by [`split_product`], or `None`
/// when it is not (one thread, or large enough for gemm's own threading).
fn split_of(d: Dims, threads: usize) -> Option<Split> {
    let split = if d.n >= d.m { Split::Columns } else { Split::Rows };
    (threads > 1 && d.macs() <= SPLIT_MAX_MACS).then_some(split)
}

/// Part boundaries fall on multiples of this many rows or columns (a cache line of `f32`).
const SPLIT_ALIGN: usize = 16;

/// `dst = lhs @ rhs` on `threads` threads as one single-threaded gemm call per thread, each
/// on its own block of `dst`: a block of columns when the product is at least as wide as it
/// is tall, else a block of rows.
///
/// gemm's own threading meets its threads at every block of the depth; on the products of a
/// training step (128 x 784 x 512, 512 x 128 x 512 and the like) that cost 15-30% over
/// independent blocks, which meet once (see [`super::parts`]).
fn split_product<T: GemmFloat>(
    dst: MatMut<'_, T>,
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    d: Dims,
    threads: usize,
    split: Split,
) {
    let by_columns = split == Split::Columns;
    let len = if by_columns { d.n } else { d.m };
    let block = len.div_ceil(threads).next_multiple_of(SPLIT_ALIGN);
    let (row_stride, col_stride) = (dst.row_stride, dst.col_stride);
    let dst = super::parts::DisjointOut::new(dst.data);
    super::parts::for_each(len.div_ceil(block), |p| {
        let start = p * block;
        let size = block.min(len - start);
        let copied;
        let (offset, lhs, rhs, part) = if by_columns {
            let mut rhs = MatRef { data: &rhs.data[start * rhs.col_stride..], ..rhs };
            let transposed = rhs.row_stride == 1 && rhs.col_stride == d.k && d.k > 1;
            if transposed && d.m >= TRANSPOSE_RHS_MIN_ROWS {
                // The block's columns are rows of the stored transpose: copied row-major,
                // on the thread that multiplies them, into its own cache.
                let stored = &rhs.data[..size * d.k];
                copied = RowMajorCopy(super::copy::transpose(stored, &[size, d.k], &[1, 0]));
                rhs = MatRef { data: &copied.0, row_stride: size, col_stride: 1 };
            }
            (start * col_stride, lhs, rhs, Dims { n: size, ..d })
        } else {
            let lhs = MatRef { data: &lhs.data[start * lhs.row_stride..], ..lhs };
            (start * row_stride, lhs, rhs, Dims { m: size, ..d })
        };
        // SAFETY: the part's block of `dst` starts `offset` elements in and lies within the
        // whole matrix, which the caller bounded by its slice; the blocks of different parts
        // hold different elements (a matrix's strides address each element once), and the
        // exclusive borrow of `dst` outlives this call, so no one else reads or writes them.
        unsafe {
            gemm_raw(
                dst.get().add(offset),
                row_stride,
                col_stride,
                lhs,
                rhs,
                part,
                gemm::Parallelism::None,
            )
        };
    });
}

/// A block of a right operand copied to row-major, returned to the buffer pool when dropped.
struct RowMajorCopy<T: GemmFloat>(Vec<T>);

impl<T: GemmFloat> Drop for RowMajorCopy<T> {
    fn drop(&mut self) {
        drop(T::wrap(std::mem::take(&mut self.0)));
    }
}

/// `dst := lhs @ rhs` through `gemm::gemm`, for an `m x n` `dst` at the given pointer and
/// strides.
///
/// # Safety
///
/// Every element `dst.add(i * dst_row_stride + j * dst_col_stride)` for `i < m`, `j < n`
/// must be valid for writes and read or written by no one else during the call; `lhs` and
/// `rhs` must hold their `m x k` and `k x n` matrices within their slices.
unsafe fn gemm_raw<T: GemmFloat>(
    dst: *mut T,
    dst_row_stride: usize,
    dst_col_stride: usize,
    lhs: MatRef<'_, T>,
    rhs: MatRef<'_, T>,
    d: Dims,
    parallelism: gemm::Parallelism,
) {
    let Dims { m, k, n } = d;
    super::alloc::ensure_available(gemm_workspace_bytes::<T>(d));
    let stride = |s: usize| isize::try_from(s).expect("gemm: a matrix stride overflows isize");
    // SAFETY: gemm computes dst := alpha*dst + beta*lhs@rhs (alpha unused because read_dst
    // is false, beta = 1) for an m x n `dst`, m x k `lhs` and k x n `rhs`, each given as
    // (column stride, row stride): the caller vouches for `dst`, and `lhs`, `rhs` lie within
    // their slices. `T` is f32, f64, f16, or `num_complex::Complex` of f32 or f64 (sealed
    // `GemmFloat`): the types gemm supports, complex ones being gemm's own `c32`/`c64`.
    // gemm joins its worker threads before returning, so no pointer outlives its borrow.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            stride(dst_col_stride),
            stride(dst_row_stride),
            false,
            lhs.data.as_ptr(),
            stride(lhs.col_stride),
            stride(lhs.row_stride),
            rhs.data.as_ptr(),
            stride(rhs.col_stride),
            stride(rhs.row_stride),
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// At most how many bytes one `gemm::gemm` call of `d` allocates for itself: its packed
/// block of `rhs` (`kc x nc`, which gemm sizes to fit the L3 cache when it knows the cache),
/// its packed rows of `lhs` (at most two L2-sized blocks) and its thread's L2-sized slab,
/// with a page of slack for alignment. Never more than packing both operands whole.
fn gemm_workspace_bytes<T>(d: Dims) -> usize {
    /// Packed panels are rounded up to whole register tiles, at most this wide.
    const TILE: usize = 64;
    let Dims { m, k, n } = d;
    let [_, l2, l3] = *gemm_common::cache::CACHE_INFO;
    let size = std::mem::size_of::<T>();
    let whole = |rows: usize| k.saturating_mul(rows.saturating_add(TILE)).saturating_mul(size);
    let rhs = if l3.cache_bytes == 0 { whole(n) } else { whole(n).min(l3.cache_bytes) };
    let lhs = whole(m).min(2 * l2.cache_bytes + TILE * TILE * size);
    rhs.saturating_add(lhs).saturating_add(l2.cache_bytes).saturating_add(4096)
}

macro_rules! impl_gemm_float {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {
            fn batched(lhs: &[Self], rhs: &[Self], shape: &Shape) -> Vec<Self> {
                run_batched(lhs, rhs, shape, <$t as GemmFloat>::ZERO, Dst::Overwrites, gemm_product::<$t>)
            }

            fn strided(lhs: &[Self], rhs: &[Self], layout: [Layout; 2], [m, k, n]: [usize; 3]) -> Option<Vec<Self>> {
                Some(strided_product(lhs, rhs, layout, Dims { m, k, n }))
            }
        }
    )*};
}

impl_gemm_float!(f32, f64, f16, Complex<f32>, Complex<f64>);

impl sealed::Sealed for bf16 {
    /// gemm has no bf16 kernel, so the operands are widened to f32 (exact:
    /// bf16 is a truncated f32), multiplied with the f32 gemm path (f32
    /// accumulation), and each result is rounded back to bf16 once
    /// (round-to-nearest-even). This matches or beats a native bf16
    /// accumulation in accuracy, at the cost of two temporary f32 copies of
    /// the operands.
    fn batched(lhs: &[Self], rhs: &[Self], shape: &Shape) -> Vec<Self> {
        let widen = |xs: &[bf16]| super::alloc::collect(xs.iter().map(|x| x.to_f32()));
        let lhs32 = widen(&lhs[..shape.lhs_len()]);
        let rhs32 = widen(&rhs[..shape.rhs_len()]);
        let out32 = <f32 as sealed::Sealed>::batched(&lhs32, &rhs32, shape);
        super::alloc::collect(out32.into_iter().map(bf16::from_f32))
    }
}

// ---------------------------------------------------------------------------
// Integers and bool: a cache-blocked loop.
// ---------------------------------------------------------------------------

/// Semiring used by the blocked loop: wrapping `+`/`*` for integers,
/// `OR`/`AND` for bool.
trait Semiring: Copy + Send + Sync + 'static {
    const ZERO: Self;
    /// `acc + a * b` in the semiring.
    fn mul_add(acc: Self, a: Self, b: Self) -> Self;
    /// Whether `self` annihilates products (lets the loop skip a row of rhs).
    fn is_zero(self) -> bool;
}

macro_rules! impl_int_semiring {
    ($($t:ty),*) => {$(
        impl Semiring for $t {
            const ZERO: Self = 0;
            #[inline(always)]
            fn mul_add(acc: Self, a: Self, b: Self) -> Self {
                acc.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            fn is_zero(self) -> bool {
                self == 0
            }
        }

        impl sealed::Sealed for $t {
            fn batched(lhs: &[Self], rhs: &[Self], shape: &Shape) -> Vec<Self> {
                run_batched(lhs, rhs, shape, 0, Dst::Accumulates, blocked_product::<$t>)
            }
        }
    )*};
}

impl_int_semiring!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Semiring for bool {
    const ZERO: Self = false;
    #[inline(always)]
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        acc | (a & b)
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        !self
    }
}

impl sealed::Sealed for bool {
    fn batched(lhs: &[Self], rhs: &[Self], shape: &Shape) -> Vec<Self> {
        run_batched(lhs, rhs, shape, false, Dst::Accumulates, blocked_product::<bool>)
    }
}

/// `dst = lhs @ rhs` for the blocked loop, split into row blocks over
/// `threads` rayon tasks when `threads > 1`.
fn blocked_product<T: Semiring>(dst: &mut [T], lhs: &[T], rhs: &[T], d: Dims, threads: usize) {
    let (dst, lhs, rhs) = (&mut dst[..d.m * d.n], &lhs[..d.m * d.k], &rhs[..d.k * d.n]);
    if threads > 1 && d.m > 1 {
        // A few blocks per thread so work stealing can even out imbalance.
        let rows = d.m.div_ceil(4 * threads);
        dst.par_chunks_mut(rows * d.n)
            .zip(lhs.par_chunks(rows * d.k))
            .flushing()
            .for_each(|(dst, lhs)| blocked_rows(dst, lhs, rhs, d.k, d.n));
    } else {
        blocked_rows(dst, lhs, rhs, d.k, d.n);
    }
}

/// Single-threaded `dst = lhs @ rhs` for whole rows: `lhs` is `rows x k`,
/// `dst` is `rows x n` (zero on entry) and `rhs` is `k x n`; `k > 0`.
///
/// The `i-p-j` loop order streams contiguous rows of `rhs` into contiguous
/// rows of `dst` (the inner loop auto-vectorises); `rhs` is walked in
/// `kc x nc` blocks that stay in L2 while every row of `lhs` passes over them.
fn blocked_rows<T: Semiring>(dst: &mut [T], lhs: &[T], rhs: &[T], k: usize, n: usize) {
    if n == 1 {
        // Matrix-vector: one dot product per row.
        for (out, row) in dst.iter_mut().zip(lhs.chunks_exact(k)) {
            *out = row.iter().zip(rhs).fold(T::ZERO, |acc, (&a, &b)| T::mul_add(acc, a, b));
        }
        return;
    }
    let nc = INT_BLOCK_COLS.min(n);
    let kc = (INT_BLOCK_BYTES / std::mem::size_of::<T>() / nc).clamp(1, k);
    for k0 in (0..k).step_by(kc) {
        let k1 = (k0 + kc).min(k);
        for n0 in (0..n).step_by(nc) {
            let n1 = (n0 + nc).min(n);
            for (dst_row, lhs_row) in dst.chunks_exact_mut(n).zip(lhs.chunks_exact(k)) {
                let dst_row = &mut dst_row[n0..n1];
                for (p, &a) in (k0..k1).zip(&lhs_row[k0..k1]) {
                    if a.is_zero() {
                        continue;
                    }
                    let rhs_row = &rhs[p * n + n0..p * n + n1];
                    for (out, &b) in dst_row.iter_mut().zip(rhs_row) {
                        *out = T::mul_add(*out, a, b);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64* generator: deterministic, dependency-free test data.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        /// Uniform in [-1, 1).
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// Test-side view of an element type.
    trait TestElement: MatmulElement + PartialEq + std::fmt::Debug {
        fn random(rng: &mut Rng) -> Self;
        fn to_f64(self) -> f64;
        /// Whether `got` is acceptable given the exact f64 result `want` and
        /// `scale = sum_p |a[i,p] * b[p,j]|` over a depth of `k`.
        fn accept(got: Self, want: f64, scale: f64, k: usize) -> bool;
    }

    macro_rules! float_test_element {
        ($t:ty, $eps:expr, $from:expr, $to:expr) => {
            impl TestElement for $t {
                fn random(rng: &mut Rng) -> Self {
                    $from(rng.unit())
                }
                fn to_f64(self) -> f64 {
                    $to(self)
                }
                fn accept(got: Self, want: f64, scale: f64, k: usize) -> bool {
                    ($to(got) - want).abs() <= $eps * (k as f64 + 4.0) * scale + 1e-300
                }
            }
        };
    }

    float_test_element!(f64, f64::EPSILON, |x| x, |x| x);
    float_test_element!(f32, f32::EPSILON as f64, |x| x as f32, |x: f32| x as f64);
    float_test_element!(f16, f16::EPSILON.to_f64(), f16::from_f64, f16::to_f64);
    float_test_element!(bf16, bf16::EPSILON.to_f64(), bf16::from_f64, bf16::to_f64);

    macro_rules! int_test_element {
        ($($t:ty),*) => {$(
            impl TestElement for $t {
                fn random(rng: &mut Rng) -> Self {
                    // Small values: the f64 reference stays exact, while i8/u8
                    // sums still overflow and exercise wrapping.
                    if <$t>::MIN == 0 {
                        (rng.next() % 6) as $t
                    } else {
                        ((rng.next() % 9) as i64 - 4) as $t
                    }
                }
                fn to_f64(self) -> f64 {
                    self as f64
                }
                fn accept(got: Self, want: f64, _scale: f64, _k: usize) -> bool {
                    // Reduce the exact integer modulo 2^bits (`as` truncates).
                    got == (want as i128) as $t
                }
            }
        )*};
    }

    int_test_element!(i8, i16, i32, i64, u8, u16, u32, u64);

    impl TestElement for bool {
        fn random(rng: &mut Rng) -> Self {
            rng.next().is_multiple_of(3)
        }
        fn to_f64(self) -> f64 {
            f64::from(u8::from(self))
        }
        fn accept(got: Self, want: f64, _scale: f64, _k: usize) -> bool {
            got == (want > 0.0)
        }
    }

    /// (batch, m, k, n, lhs_stride, rhs_stride); `None` means contiguous.
    type Case = (usize, usize, usize, usize, Option<usize>, Option<usize>);

    fn cases() -> Vec<Case> {
        vec![
            // Empty and degenerate shapes.
            (0, 2, 3, 4, None, None),
            (1, 0, 0, 0, None, None),
            (1, 0, 3, 4, None, None),
            (1, 3, 4, 0, None, None),
            (1, 3, 0, 4, None, None),
            (3, 2, 0, 5, Some(0), Some(0)),
            (1, 1, 1, 1, None, None),
            // Matrix-vector, vector-matrix, outer and inner products.
            (1, 1, 37, 1, None, None),
            (1, 1, 17, 9, None, None),
            (1, 9, 17, 1, None, None),
            (1, 9, 1, 13, None, None),
            (1, 300, 300, 1, None, None),
            (1, 1, 300, 300, None, None),
            // Plain and odd small shapes.
            (1, 5, 6, 7, None, None),
            (3, 5, 6, 7, None, None),
            (2, 17, 70, 33, None, None),
            (4, 1, 33, 1, None, None),
            (4, 16, 16, 16, None, None),
            // Broadcasting and padded strides.
            (4, 6, 5, 7, Some(0), None),
            (4, 6, 5, 7, None, Some(0)),
            (4, 6, 5, 7, Some(0), Some(0)),
            (3, 6, 5, 7, Some(41), Some(0)),
            (3, 6, 5, 7, Some(33), Some(50)),
            (2, 1, 5, 1, Some(0), Some(9)),
            // Above PARALLEL_MIN_MACS: threaded single product, folded tall
            // product, batch-parallel small products, and a large batch of
            // large products.
            (1, 130, 140, 150, None, None),
            (4, 40, 90, 110, None, Some(0)),
            (3, 100, 110, 120, None, Some(0)),
            (96, 16, 40, 30, None, None),
            (64, 20, 30, 25, Some(0), None),
            (4, 100, 110, 100, None, None),
            (3, 100, 110, 100, None, None),
            (1, 1200, 900, 1, None, None),
            (1, 1, 900, 1300, None, None),
            (3, 1, 1100, 1000, Some(0), None),
        ]
    }

    fn check_case<T: TestElement>(rng: &mut Rng, case: Case) {
        let (batch, m, k, n, ls, rs) = case;
        let ls = ls.unwrap_or(m * k);
        let rs = rs.unwrap_or(k * n);
        let lhs_len = if batch == 0 { 0 } else { (batch - 1) * ls + m * k };
        let rhs_len = if batch == 0 { 0 } else { (batch - 1) * rs + k * n };
        let lhs: Vec<T> = (0..lhs_len).map(|_| T::random(rng)).collect();
        let rhs: Vec<T> = (0..rhs_len).map(|_| T::random(rng)).collect();

        let got = batched_matmul(&lhs, &rhs, batch, m, k, n, ls, rs);
        assert_eq!(got.len(), batch * m * n, "{case:?}");
        for b in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let (mut want, mut scale) = (0.0_f64, 0.0_f64);
                    for p in 0..k {
                        let prod =
                            lhs[b * ls + i * k + p].to_f64() * rhs[b * rs + p * n + j].to_f64();
                        want += prod;
                        scale += prod.abs();
                    }
                    let v = got[(b * m + i) * n + j];
                    assert!(
                        T::accept(v, want, scale, k),
                        "{} {case:?} at [{b},{i},{j}]: got {v:?}, want {want}",
                        std::any::type_name::<T>()
                    );
                }
            }
        }
    }

    fn check_all<T: TestElement>(seed: u64) {
        let mut rng = Rng(seed);
        for case in cases() {
            check_case::<T>(&mut rng, case);
        }
    }

    #[test]
    fn f32_matches_reference() {
        check_all::<f32>(1);
    }

    /// Float outputs may be recycled buffers holding anything: every product path (outer
    /// product, split matrix-vector, split vector-matrix, gemm, batch-parallel, broadcast
    /// copy) must overwrite all of it. Each case first leaves a NaN-filled buffer of exactly
    /// its output size in the pool.
    #[test]
    fn float_products_overwrite_recycled_outputs() {
        let mut rng = Rng(13);
        let cases: [Case; 6] = [
            (1, 300, 1, 400, None, None),
            (1, 70_000, 20, 1, None, None),
            (1, 1, 20, 70_000, None, None),
            (1, 256, 64, 300, None, None),
            (4, 130, 30, 140, None, None),
            (3, 200, 30, 120, Some(0), Some(0)),
        ];
        for case @ (batch, m, _, n, _, _) in cases {
            drop(crate::array::Buffer::F32(vec![f32::NAN; batch * m * n]));
            check_case::<f32>(&mut rng, case);
            drop(crate::array::Buffer::F64(vec![f64::NAN; batch * m * n]));
            check_case::<f64>(&mut rng, case);
        }
    }

    /// Every layout pair of `matmul_in_place`, on both sides of the row count at which a
    /// transposed right operand is copied to row-major first.
    fn check_layouts<T: TestElement + MatmulElement>(seed: u64) {
        let mut rng = Rng(seed);
        let layouts = [Layout::RowMajor, Layout::Transposed];
        for (m, k, n) in [(5, 9, 7), (TRANSPOSE_RHS_MIN_ROWS, 3, 40), (70, 45, 33)] {
            let lhs: Vec<T> = (0..m * k).map(|_| T::random(&mut rng)).collect();
            let rhs: Vec<T> = (0..k * n).map(|_| T::random(&mut rng)).collect();
            for layout in layouts.iter().flat_map(|&a| layouts.map(|b| [a, b])) {
                let at = |data: &[T], rows: usize, cols: usize, l: Layout, i: usize, j: usize| {
                    let index = if l == Layout::RowMajor { i * cols + j } else { j * rows + i };
                    data[index].to_f64()
                };
                let got = matmul_in_place(&lhs, &rhs, layout, m, k, n).expect("a float type");
                for (i, j) in (0..m).flat_map(|i| (0..n).map(move |j| (i, j))) {
                    let products = (0..k)
                        .map(|p| at(&lhs, m, k, layout[0], i, p) * at(&rhs, k, n, layout[1], p, j));
                    let (want, scale) = products.fold((0.0, 0.0), |(w, s), x| (w + x, s + x.abs()));
                    let v = got[i * n + j];
                    assert!(T::accept(v, want, scale, k), "{layout:?} {m}x{k}x{n} at [{i},{j}]");
                }
            }
        }
    }

    #[test]
    fn float_layouts_match_reference() {
        check_layouts::<f32>(21);
        check_layouts::<f64>(22);
        check_layouts::<f16>(23);
    }

    #[test]
    fn f64_matches_reference() {
        check_all::<f64>(2);
    }

    #[test]
    fn f16_matches_reference() {
        check_all::<f16>(3);
    }

    #[test]
    fn bf16_matches_reference() {
        check_all::<bf16>(4);
    }

    #[test]
    fn signed_integers_match_reference() {
        check_all::<i8>(5);
        check_all::<i16>(6);
        check_all::<i32>(7);
        check_all::<i64>(8);
    }

    #[test]
    fn unsigned_integers_match_reference() {
        check_all::<u8>(9);
        check_all::<u16>(10);
        check_all::<u32>(11);
        check_all::<u64>(12);
    }

    #[test]
    fn bool_matches_reference() {
        check_all::<bool>(13);
    }

    #[test]
    fn k_zero_gives_zeros() {
        let out: Vec<f32> = batched_matmul(&[], &[], 2, 3, 0, 4, 0, 0);
        assert_eq!(out, vec![0.0; 24]);
        let out: Vec<i64> = batched_matmul(&[], &[], 1, 2, 0, 2, 0, 0);
        assert_eq!(out, vec![0; 4]);
        let out: Vec<bool> = batched_matmul(&[], &[], 1, 1, 0, 3, 0, 0);
        assert_eq!(out, vec![false; 3]);
    }

    #[test]
    fn large_integers_wrap() {
        // Exact reference with wrapping arithmetic at full range, where the
        // f64 reference would round.
        let mut rng = Rng(99);
        let (m, k, n) = (7, 13, 5);
        let lhs: Vec<u64> = (0..m * k).map(|_| rng.next()).collect();
        let rhs: Vec<u64> = (0..k * n).map(|_| rng.next()).collect();
        let got = batched_matmul(&lhs, &rhs, 1, m, k, n, 0, 0);
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).fold(0u64, |acc, p| {
                    acc.wrapping_add(lhs[i * k + p].wrapping_mul(rhs[p * n + j]))
                });
                assert_eq!(got[i * n + j], want);
            }
        }
        let got: Vec<i32> = batched_matmul(&[i32::MAX, 2], &[2, 3], 1, 1, 2, 1, 0, 0);
        assert_eq!(got, vec![i32::MAX.wrapping_mul(2).wrapping_add(6)]);
        let got: Vec<i8> = batched_matmul(&[100, 100], &[2, 1], 1, 1, 2, 1, 0, 0);
        assert_eq!(got, vec![44]); // 300 mod 256
    }

    #[test]
    fn bool_is_or_of_ands() {
        // [[1,0],[0,0]] @ [[1,1],[1,1]] = [[1,1],[0,0]]
        let got = batched_matmul(&[true, false, false, false], &[true; 4], 1, 2, 2, 2, 0, 0);
        assert_eq!(got, vec![true, true, false, false]);
    }

    #[test]
    fn bf16_rounds_once_from_f32() {
        // 1 + 2^-9 rounds back to 1 in bf16, so a bf16 accumulator would
        // return 1 here; the f32 accumulator sums exactly to 1 + 2^-7, which
        // bf16 represents.
        let (one, tiny) = (bf16::ONE, bf16::from_f32(2f32.powi(-9)));
        let lhs = [one, tiny, tiny, tiny, tiny];
        let got = batched_matmul(&lhs, &[one; 5], 1, 1, 5, 1, 0, 0);
        assert_eq!(got, vec![bf16::from_f32(1.0 + 2f32.powi(-7))]);
    }

    #[test]
    fn parallel_paths_match_single_product_calls() {
        // Batch-parallel results equal per-product results bit for bit.
        let mut rng = Rng(7);
        let (batch, m, k, n) = (12, 40, 60, 50);
        let lhs: Vec<f32> = (0..batch * m * k).map(|_| rng.unit() as f32).collect();
        let rhs: Vec<f32> = (0..batch * k * n).map(|_| rng.unit() as f32).collect();
        assert!(m * k * n < PARALLEL_MIN_MACS && batch * m * k * n >= PARALLEL_MIN_MACS);
        let all = batched_matmul(&lhs, &rhs, batch, m, k, n, m * k, k * n);
        for b in 0..batch {
            let one = batched_matmul(&lhs[b * m * k..], &rhs[b * k * n..], 1, m, k, n, 0, 0);
            assert_eq!(&all[b * m * n..][..m * n], &one[..]);
        }
    }

    #[test]
    fn products_have_the_same_bits_on_every_thread_count() {
        // Split products (one gemm call per block of rows or columns) against the whole
        // product on one thread: the depth is summed in the same blocks either way.
        let mut rng = Rng(8);
        let layouts = [Layout::RowMajor, Layout::Transposed];
        let shapes = [(128, 784, 512), (512, 128, 512), (784, 128, 100), (100, 300, 97)];
        for (m, k, n) in shapes {
            assert!(m * k * n >= PARALLEL_MIN_MACS && m * k * n <= SPLIT_MAX_MACS);
            let lhs: Vec<f32> = (0..m * k).map(|_| rng.unit() as f32 - 0.5).collect();
            let rhs: Vec<f32> = (0..k * n).map(|_| rng.unit() as f32 - 0.5).collect();
            let wide: Vec<f64> = lhs.iter().map(|&x| f64::from(x)).collect();
            for layout in layouts.iter().flat_map(|&a| layouts.map(|b| [a, b])) {
                let on = |threads: usize| {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
                    pool.unwrap().install(|| {
                        let rhs64: Vec<f64> = rhs.iter().map(|&x| f64::from(x)).collect();
                        let f32s = matmul_in_place(&lhs, &rhs, layout, m, k, n).unwrap();
                        (f32s, matmul_in_place(&wide, &rhs64, layout, m, k, n).unwrap())
                    })
                };
                let one = on(1);
                assert!(one == on(2) && one == on(3), "{layout:?} {m}x{k}x{n}");
            }
        }
    }

    #[test]
    fn split_products_of_strided_operands_match_a_scalar_loop() {
        // Column-major right operands with and without padding between columns (the copy of
        // each block to row-major applies only without), and a padded left one.
        let (m, k, n) = (96, 200, 160);
        let mut rng = Rng(9);
        for (lhs_strides, rhs_strides) in [((k, 1), (1, k)), ((1, m + 5), (1, k + 3))] {
            let lhs: Vec<f64> = (0..(m + 5) * (k + 3)).map(|_| rng.unit() - 0.5).collect();
            let rhs: Vec<f64> = (0..(n + 5) * (k + 3)).map(|_| rng.unit() - 0.5).collect();
            let a = MatRef { data: &lhs, row_stride: lhs_strides.0, col_stride: lhs_strides.1 };
            let b = MatRef { data: &rhs, row_stride: rhs_strides.0, col_stride: rhs_strides.1 };
            let mut out = vec![f64::NAN; m * n];
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                let dst = MatMut { data: &mut out, row_stride: n, col_stride: 1 };
                gemm_strided(dst, a, b, Dims { m, k, n }, gemm::Parallelism::Rayon(2));
            });
            let at = |x: &MatRef<'_, f64>, i: usize, j: usize| {
                x.data[i * x.row_stride + j * x.col_stride]
            };
            for (i, j) in (0..m).flat_map(|i| (0..n).map(move |j| (i, j))) {
                let want: f64 = (0..k).map(|p| at(&a, i, p) * at(&b, p, j)).sum();
                assert!((out[i * n + j] - want).abs() < 1e-12, "{rhs_strides:?} at [{i},{j}]");
            }
        }
    }

    #[test]
    #[should_panic(expected = "lhs has 5 elements")]
    fn short_lhs_panics() {
        let _ = batched_matmul(&[0.0f32; 5], &[0.0f32; 6], 1, 2, 3, 2, 0, 0);
    }

    #[test]
    #[should_panic(expected = "rhs has 10 elements")]
    fn short_strided_rhs_panics() {
        // Batch 1 starts at offset 5 and needs 6 elements: 11 in all.
        let _ = batched_matmul(&[0i32; 6], &[0i32; 10], 2, 1, 3, 2, 0, 5);
    }
}
