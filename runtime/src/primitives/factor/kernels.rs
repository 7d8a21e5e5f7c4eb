//! The factorizations on CPU buffers, through `faer`: each matrix of a batch of row-major
//! matrices is factored on its own, the matrices of a batch in parallel.
//!
//! Where faer can work in place (`cholesky`, `lu`, `eigh`'s vectors, `triangular_solve`) it
//! works on the output buffer itself, the input transposed into it to get the column-major
//! layout faer's kernels are fast on (measured at 512 x 512: a row-major view made the LU
//! 10 times and the eigenvector update 3 times slower), and transposed back in place; the
//! transposes move tiles through a local buffer and cost a small part of a factorization. The other factorizations go through faer's owning types.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor as llt;
use faer::linalg::evd;
use faer::linalg::lu::partial_pivoting::factor as plu;
use faer::linalg::triangular_solve as tri;
use faer::traits::RealField;
use faer::{ColMut, MatMut, MatRef, Par};
use rayon::prelude::*;

use crate::dtype::Element;
use crate::exec::cpu::alloc;
use crate::exec::cpu::float_mode::Flushing;

/// The element types the factorizations run in (`f32` and `f64`).
pub(super) trait Real: RealField + Element + Default {}

impl Real for f32 {}
impl Real for f64 {}

/// From how many rows a lone matrix is worth spreading over the threads: below it the
/// blocks faer hands out are too small to pay for the hand-off. Cholesky and LU run their
/// 512 x 512 matrices faster on one thread (1.7 and 6 times, measured on 2 threads);
/// the eigendecomposition gains from threads there.
#[derive(Clone, Copy)]
enum Threads {
    /// Spread a lone matrix from `side >= 1024`.
    FromLarge,
    /// Spread a lone matrix from `side >= 192`.
    FromMedium,
}

/// How a factorization of one `side x side` matrix spreads its work: the matrices of a
/// batch are spread over the threads instead, and a small lone matrix runs on one.
fn inner_par(count: usize, side: usize, threads: Threads) -> Par {
    let from = match threads {
        Threads::FromLarge => 1024,
        Threads::FromMedium => 192,
    };
    if count > 1 || side < from || rayon::current_num_threads() < 2 {
        Par::Seq
    } else {
        Par::rayon(0)
    }
}

/// `f` of each of the `count` row-major `m x n` matrices in `x`, in order.
///
/// faer allocates its factors and workspace itself, aborting when it cannot; so before each
/// matrix, the memory they take ([`faer_workspace`]) is checked to be available, which turns
/// a shortfall into the usual out-of-memory panic.
fn each<T: Real, R: Send>(
    x: &[T],
    count: usize,
    (m, n): (usize, usize),
    f: impl Fn(MatRef<'_, T>) -> R + Sync,
) -> Vec<R> {
    let workspace = faer_workspace::<T>(m.max(n), inner_par(count, m.max(n), Threads::FromMedium));
    let one = |i: usize| {
        alloc::ensure_available(workspace);
        f(MatRef::from_row_major_slice(&x[i * m * n..(i + 1) * m * n], m, n))
    };
    if count > 1 {
        (0..count).into_par_iter().flushing().map(one).collect()
    } else {
        (0..count).map(one).collect()
    }
}

/// Runs `f` on each of the `count` matrices whose elements are the consecutive `len`-long
/// pieces of `out` (and the matching `aux_len`-long pieces of `aux`), with the parallelism
/// each one gets; the matrices of a batch run in parallel. Before each, the memory faer's
/// products may take for themselves is checked to be available (see [`each`]).
fn each_in_place<T: Real, U: Send>(
    (out, len): (&mut [T], usize),
    (aux, aux_len): (&mut [U], usize),
    (count, side, threads): (usize, usize, Threads),
    f: impl Fn(usize, &mut [T], &mut [U], Par) + Sync,
) {
    let par = inner_par(count, side, threads);
    let workspace = faer_workspace::<T>(side, par);
    let one = |(i, (piece, aux)): (usize, (&mut [T], &mut [U]))| {
        alloc::ensure_available(workspace);
        f(i, piece, aux, par)
    };
    // `chunks_mut` needs nonzero lengths; an empty matrix has nothing to compute.
    if len == 0 || aux_len == 0 {
        return;
    }
    let aux_chunks = aux_len;
    if count > 1 {
        out.par_chunks_mut(len)
            .zip(aux.par_chunks_mut(aux_chunks))
            .enumerate()
            .flushing()
            .for_each(one);
    } else {
        out.chunks_mut(len).zip(aux.chunks_mut(aux_chunks)).enumerate().for_each(one);
    }
}

/// One empty value per matrix: the `aux` of [`each_in_place`] for a factorization that
/// has a single output (a `Vec` of zero-sized values allocates nothing).
fn nothing(count: usize) -> Vec<()> {
    vec![(); count]
}

/// At most what faer allocates for itself while factoring a matrix whose larger side is
/// `side`: its factors and workspace, a few matrices of `side x side`, and for the products
/// inside, packing buffers of up to twice the L3 cache (measured: 64 MiB on a 32 MiB L3) in
/// each of the products that run at once under `par` (nested parallel joins on every
/// thread), budgeted twice over.
fn faer_workspace<T>(side: usize, par: Par) -> usize {
    let matrices = side.saturating_mul(side).saturating_mul(8 * std::mem::size_of::<T>());
    let l3 = gemm_common::cache::CACHE_INFO[2].cache_bytes.max(32 << 20);
    let products_at_once = match par {
        Par::Seq => 1,
        Par::Rayon(threads) => threads.get() + 1,
    };
    let packing = l3.saturating_mul(4 * products_at_once);
    matrices.saturating_add(packing)
}

/// faer's scratch memory of `req`, allocated fallibly.
fn scratch(req: StackReq) -> MemBuffer {
    MemBuffer::try_new(req).unwrap_or_else(|_| alloc::out_of_memory(req.size_bytes()))
}

/// A copy of `x` in a fallibly allocated buffer: the output that a factorization overwrites.
fn copied<T: Copy>(x: &[T]) -> Vec<T> {
    let mut out = alloc::with_capacity(x.len());
    out.extend_from_slice(x);
    out
}

/// The edge of the tiles the transposes move: two tiles of `f64` stay in L1.
const TILE: usize = 32;

/// A tile's elements, row-major `TILE x TILE`.
type Tile<T> = [T; TILE * TILE];

/// Copies the `h x w` tile at `(i0, j0)` of the row-major matrix `src` (`c` columns) into
/// `tile`, row by row: each row is read once, whole, so that rows a power of two apart do
/// not evict one another from the cache as a column walk through the matrix would.
fn load_tile<T: Copy>(
    tile: &mut Tile<T>,
    src: &[T],
    c: usize,
    (i0, j0): (usize, usize),
    (h, w): (usize, usize),
) {
    for i in 0..h {
        let row = (i0 + i) * c + j0;
        tile[i * TILE..i * TILE + w].copy_from_slice(&src[row..row + w]);
    }
}

/// Writes the transpose of the `h x w` `tile` as the `w x h` block at `(i0, j0)` of the
/// row-major matrix `dst` (`c` columns), row by row.
fn store_transposed<T: Copy>(
    tile: &Tile<T>,
    dst: &mut [T],
    c: usize,
    (i0, j0): (usize, usize),
    (h, w): (usize, usize),
) {
    for j in 0..w {
        let row = (i0 + j) * c + j0;
        for (i, d) in dst[row..row + h].iter_mut().enumerate() {
            *d = tile[i * TILE + j];
        }
    }
}

/// Writes the transpose of the row-major `r x c` matrix `src` into `dst` (row-major
/// `c x r`), tile by tile through a local buffer.
fn transpose_into<T: Copy + Default>(src: &[T], dst: &mut [T], (r, c): (usize, usize)) {
    let mut tile = [T::default(); TILE * TILE];
    for i0 in (0..r).step_by(TILE) {
        for j0 in (0..c).step_by(TILE) {
            let (h, w) = (TILE.min(r - i0), TILE.min(c - j0));
            load_tile(&mut tile, src, c, (i0, j0), (h, w));
            store_transposed(&tile, dst, r, (j0, i0), (h, w));
        }
    }
}

/// Transposes the square `n x n` matrix `a` in place, swapping tiles across the diagonal
/// through two local buffers.
fn transpose_in_place<T: Copy + Default>(a: &mut [T], n: usize) {
    let (mut upper, mut lower) = ([T::default(); TILE * TILE], [T::default(); TILE * TILE]);
    for i0 in (0..n).step_by(TILE) {
        for j0 in (0..=i0).step_by(TILE) {
            let (h, w) = (TILE.min(n - i0), TILE.min(n - j0));
            load_tile(&mut lower, a, n, (i0, j0), (h, w));
            load_tile(&mut upper, a, n, (j0, i0), (w, h));
            store_transposed(&lower, a, n, (j0, i0), (h, w));
            store_transposed(&upper, a, n, (i0, j0), (w, h));
        }
    }
}

/// Runs `f` on the row-major `m x n` matrix `src` seen column-major, the layout faer's
/// kernels are fast on, leaving the result row-major in `a`: `src` is transposed into `a`
/// (square) or a fallibly allocated buffer, and transposed back afterwards.
fn column_major<T: Real>(
    src: &[T],
    a: &mut [T],
    (m, n): (usize, usize),
    f: impl FnOnce(MatMut<'_, T>),
) {
    if m == n {
        transpose_into(src, a, (m, n));
        f(MatMut::from_column_major_slice_mut(a, m, n));
        transpose_in_place(a, n);
    } else {
        let mut columns = alloc::with_capacity(m * n);
        columns.resize(m * n, T::from_f64(0.0));
        transpose_into(src, &mut columns, (m, n));
        f(MatMut::from_column_major_slice_mut(&mut columns, m, n));
        transpose_into(&columns, a, (n, m));
    }
}

/// Appends `a`'s elements in row-major order.
fn push_rows<T: Real>(out: &mut Vec<T>, a: MatRef<'_, T>) {
    for i in 0..a.nrows() {
        out.extend((0..a.ncols()).map(|j| a[(i, j)]));
    }
}

/// Appends `a`'s transpose in row-major order.
fn push_cols<T: Real>(out: &mut Vec<T>, a: MatRef<'_, T>) {
    push_rows(out, a.transpose());
}

/// Appends `len` NaNs: the result of a factorization that failed (as LAPACK's callers in JAX
/// fill them).
fn push_nans<T: Real>(out: &mut Vec<T>, len: usize) {
    out.extend(std::iter::repeat_n(T::from_f64(f64::NAN), len));
}

/// Fills `out` with NaNs: the result of a factorization that failed.
fn fill_nans<T: Real>(out: &mut [T]) {
    out.fill(T::from_f64(f64::NAN));
}

/// Concatenates per-matrix results (in a fallibly allocated buffer).
fn concat<T: Copy>(parts: Vec<Vec<T>>) -> Vec<T> {
    let mut out = alloc::with_capacity(parts.iter().map(Vec::len).sum());
    for part in parts {
        out.extend_from_slice(&part);
    }
    out
}

/// The lower Cholesky factors (zeros above the diagonal) of the `n x n` matrices, read from
/// their lower triangles; NaNs in the lower triangle for a matrix that is not positive
/// definite.
pub(super) fn cholesky<T: Real>(x: &[T], count: usize, n: usize) -> Vec<T> {
    let mut out = alloc::zeroed(x.len(), T::from_f64(0.0));
    let shape = (count, n, Threads::FromLarge);
    each_in_place((&mut out, n * n), (&mut nothing(count), 1), shape, |i, a, _, par| {
        cholesky_into(&x[i * n * n..(i + 1) * n * n], a, n, par)
    });
    out
}

/// Writes the lower Cholesky factor of the row-major `n x n` matrix `src` into `a`: faer
/// factors the lower triangle in place (reading nothing above it), and the upper one is
/// zeroed.
fn cholesky_into<T: Real>(src: &[T], a: &mut [T], n: usize, par: Par) {
    let mut buffer = scratch(llt::cholesky_in_place_scratch::<T>(n, par, Default::default()));
    let mut factored = Ok(());
    column_major(src, a, (n, n), |view| {
        let stack = MemStack::new(&mut buffer);
        factored = llt::cholesky_in_place(view, Default::default(), par, stack, Default::default())
            .map(drop);
    });
    if factored.is_err() {
        fill_nans(a);
    }
    for (i, row) in a.chunks_exact_mut(n).enumerate() {
        row[i + 1..].fill(T::from_f64(0.0));
    }
}

/// Eigenvectors (as columns) and ascending eigenvalues of the symmetric `n x n` matrices,
/// read from their lower triangles.
pub(super) fn eigh<T: Real>(x: &[T], count: usize, n: usize) -> (Vec<T>, Vec<T>) {
    let mut v = alloc::with_capacity(count * n * n);
    v.resize(count * n * n, T::from_f64(0.0));
    let mut w = alloc::with_capacity(count * n);
    w.resize(count * n, T::from_f64(0.0));
    each_in_place((&mut v, n * n), (&mut w, n), (count, n, Threads::FromMedium), |i, v, w, par| {
        let a = MatRef::from_row_major_slice(&x[i * n * n..(i + 1) * n * n], n, n);
        eigh_into(a, v, w, par)
    });
    (v, w)
}

/// Writes the eigenvectors of `a` (read from its lower triangle) into the row-major `v` and
/// its eigenvalues into `w`, or NaNs where the iteration fails.
fn eigh_into<T: Real>(a: MatRef<'_, T>, v: &mut [T], w: &mut [T], par: Par) {
    let n = a.nrows();
    let vectors = evd::ComputeEigenvectors::Yes;
    let mut buffer =
        scratch(evd::self_adjoint_evd_scratch::<T>(n, vectors, par, Default::default()));
    let stack = MemStack::new(&mut buffer);
    // faer writes the vectors column-major: `v` holds `V^T` row-major until transposed.
    let u = MatMut::from_column_major_slice_mut(v, n, n);
    let s = ColMut::from_slice_mut(w).as_diagonal_mut();
    if evd::self_adjoint_evd(a, s, Some(u), par, stack, Default::default()).is_err() {
        fill_nans(v);
        fill_nans(w);
    } else {
        transpose_in_place(v, n);
    }
}

/// `Q` and `R` of the `m x n` matrices: `m x m` and `m x n` when `full`, else `m x k` and
/// `k x n` (`k = min(m, n)`).
pub(super) fn qr<T: Real>(
    x: &[T],
    count: usize,
    (m, n): (usize, usize),
    full: bool,
) -> (Vec<T>, Vec<T>) {
    let parts = each(x, count, (m, n), |a| {
        let qr = a.qr();
        let k = m.min(n);
        let q_cols = if full { m } else { k };
        let (mut q, mut r) = (alloc::with_capacity(m * q_cols), alloc::with_capacity(m * n));
        push_rows(&mut r, qr.thin_R());
        if full {
            push_rows(&mut q, qr.compute_Q().as_ref());
            // The full `R` is `m x n`: zero rows below the first `k`.
            r.resize(m * n, T::from_f64(0.0));
        } else {
            push_rows(&mut q, qr.compute_thin_Q().as_ref());
        }
        (q, r)
    });
    let (q, r): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    (concat(q), concat(r))
}

/// What [`svd`] computes.
pub(super) struct SvdParts<T> {
    /// The singular values, descending.
    pub s: Vec<T>,
    /// `U` and `V^T`, when asked for.
    pub uv: Option<(Vec<T>, Vec<T>)>,
}

/// The singular values of the `m x n` matrices and, when `uv` is `Some(full)`, `U` and
/// `V^T` (square when `full`, else `m x k` and `k x n`). NaNs where the iteration fails.
pub(super) fn svd<T: Real>(
    x: &[T],
    count: usize,
    (m, n): (usize, usize),
    uv: Option<bool>,
) -> SvdParts<T> {
    let k = m.min(n);
    let (um, vn) = match uv {
        Some(true) => (m, n),
        _ => (k, k),
    };
    let parts = each(x, count, (m, n), |a| {
        let mut s = alloc::with_capacity(k);
        let sides = if uv.is_some() { (m * um, vn * n) } else { (0, 0) };
        let (mut u, mut vt) = (alloc::with_capacity(sides.0), alloc::with_capacity(sides.1));
        let Some(full) = uv else {
            match a.singular_values() {
                Ok(values) => s = values,
                Err(_) => push_nans(&mut s, k),
            }
            return (s, u, vt);
        };
        let svd = if full { a.svd() } else { a.thin_svd() };
        match svd {
            Ok(svd) => {
                s.extend(svd.S().column_vector().iter().copied());
                push_rows(&mut u, svd.U());
                push_cols(&mut vt, svd.V());
            }
            Err(_) => {
                push_nans(&mut s, k);
                push_nans(&mut u, m * um);
                push_nans(&mut vt, vn * n);
            }
        }
        (s, u, vt)
    });
    let (s, u, vt) = (count * k, count * m * um, count * vn * n);
    let uv = uv.map(|_| (alloc::with_capacity(u), alloc::with_capacity(vt)));
    let mut out = SvdParts { s: alloc::with_capacity(s), uv };
    for (s, u, vt) in parts {
        out.s.extend(s);
        if let Some((us, vts)) = &mut out.uv {
            us.extend(u);
            vts.extend(vt);
        }
    }
    out
}

/// What [`lu`] computes for each `m x n` matrix `A`.
pub(super) struct LuParts<T> {
    /// `L` (unit diagonal, not stored) below the diagonal and `U` on and above it, `m x n`.
    pub lu: Vec<T>,
    /// LAPACK's row interchanges: row `i` was swapped with row `pivots[i]`, for `i < k`.
    pub pivots: Vec<i32>,
    /// The rows of `A` in the order `L U` holds them: `A[permutation] = L U`.
    pub permutation: Vec<i32>,
}

/// The LU factorizations with partial pivoting of the `m x n` matrices.
pub(super) fn lu<T: Real>(x: &[T], count: usize, (m, n): (usize, usize)) -> LuParts<T> {
    let k = m.min(n);
    let mut out = LuParts {
        lu: alloc::zeroed(x.len(), T::from_f64(0.0)),
        pivots: alloc::with_capacity(count * k),
        permutation: alloc::with_capacity(count * m),
    };
    // The identity order, which an empty matrix keeps.
    let mut rows: Vec<usize> = alloc::collect((0..count * m).map(|i| i % m));
    let shape = (count, m.max(n), Threads::FromLarge);
    each_in_place((&mut out.lu, m * n), (&mut rows, m), shape, |i, a, rows, par| {
        lu_into(&x[i * m * n..(i + 1) * m * n], a, rows, (m, n), par)
    });
    for permutation in rows.chunks_exact(m.max(1)).take(count) {
        out.pivots.extend(swaps(permutation, k).iter().map(|&p| p as i32));
        out.permutation.extend(permutation.iter().map(|&p| p as i32));
    }
    out
}

/// Writes the packed LU factors of the row-major `m x n` matrix `src` (unit-lower `L`
/// below the diagonal, `U` on and above it) into `a`, and the order of `A`'s rows they
/// factor into `rows`.
fn lu_into<T: Real>(src: &[T], a: &mut [T], rows: &mut [usize], (m, n): (usize, usize), par: Par) {
    let req = plu::lu_in_place_scratch::<usize, T>(m, n, par, Default::default());
    let mut buffer = scratch(req);
    let mut inverse = alloc::with_capacity(m);
    inverse.resize(m, 0usize);
    column_major(src, a, (m, n), |view| {
        let stack = MemStack::new(&mut buffer);
        plu::lu_in_place(view, rows, &mut inverse, par, stack, Default::default());
    });
}

/// The first `k` row interchanges (LAPACK's `ipiv`, from 0) that put the rows in the order
/// `permutation`: step `i` swaps row `i` with the row then holding `permutation[i]`.
fn swaps(permutation: &[usize], k: usize) -> Vec<usize> {
    let mut rows: Vec<usize> = (0..permutation.len()).collect();
    let mut at: Vec<usize> = rows.clone();
    (0..k)
        .map(|i| {
            let j = at[permutation[i]];
            let (ri, rj) = (rows[i], rows[j]);
            rows.swap(i, j);
            at[ri] = j;
            at[rj] = i;
            j
        })
        .collect()
}

/// How [`triangular_solve`] reads its triangular operand.
#[derive(Clone, Copy)]
pub(super) struct Triangle {
    /// Whether the lower triangle holds the matrix (else the upper).
    pub lower: bool,
    /// Whether the matrix is used transposed.
    pub transpose: bool,
    /// Whether the diagonal is taken as ones (and not read).
    pub unit: bool,
}

/// Solves `op(A) X = B` (`left`) or `X op(A) = B` for each `m x m` triangular `A` in `a`
/// and row-major `rows x cols` `B` in `b` (`op` per `t`, which for a right-side solve
/// describes `op(A)^T`), giving the `X`s.
pub(super) fn triangular_solve<T: Real>(
    a: &[T],
    b: &[T],
    count: usize,
    (rows, cols): (usize, usize),
    left: bool,
    t: Triangle,
) -> Vec<T> {
    let m = if left { rows } else { cols };
    let mut out = copied(b);
    let shape = (count, m, Threads::FromLarge);
    each_in_place((&mut out, rows * cols), (&mut nothing(count), 1), shape, |i, x, _, par| {
        let mut a = MatRef::from_row_major_slice(&a[i * m * m..(i + 1) * m * m], m, m);
        // A right-side solve is the left-side solve `op(A)^T X^T = B^T`, and `X^T` is the
        // row-major `X` read column by column.
        let x = if left {
            MatMut::from_row_major_slice_mut(x, rows, cols)
        } else {
            MatMut::from_column_major_slice_mut(x, cols, rows)
        };
        let mut lower = t.lower;
        if t.transpose {
            a = a.transpose();
            lower = !lower;
        }
        solve_in_place(a, x, lower, t.unit, par);
    });
    out
}

/// `x <- A^-1 x` for triangular `a` (its `lower` or upper triangle, unit diagonal if `unit`).
fn solve_in_place<T: Real>(a: MatRef<'_, T>, x: MatMut<'_, T>, lower: bool, unit: bool, par: Par) {
    match (lower, unit) {
        (true, false) => tri::solve_lower_triangular_in_place(a, x, par),
        (true, true) => tri::solve_unit_lower_triangular_in_place(a, x, par),
        (false, false) => tri::solve_upper_triangular_in_place(a, x, par),
        (false, true) => tri::solve_unit_upper_triangular_in_place(a, x, par),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiled_transposes_match_the_definition_at_ragged_sizes() {
        // Sizes below, at and across the tile edge, with partial tiles at the borders.
        for (r, c) in [(1, 1), (3, 5), (32, 32), (33, 70), (70, 33), (65, 65)] {
            let src: Vec<f64> = (0..r * c).map(|k| k as f64).collect();
            let mut dst = vec![0.0; r * c];
            transpose_into(&src, &mut dst, (r, c));
            for i in 0..r {
                for j in 0..c {
                    assert_eq!(dst[j * r + i], src[i * c + j], "{r} x {c} at ({i}, {j})");
                }
            }
            if r == c {
                let mut a = src.clone();
                transpose_in_place(&mut a, r);
                assert_eq!(a, dst, "{r} x {r} in place");
            }
        }
    }

    #[test]
    fn lu_rows_and_swaps_follow_lapack() {
        // Partial pivoting picks row 2, then row 2 again (the old row 0 moved there).
        let a = [1.0f64, 2.0, 0.0, 0.0, 1.0, 1.0, 4.0, 1.0, 1.0];
        let f = lu(&a, 1, (3, 3));
        assert_eq!(f.permutation, vec![2, 0, 1]);
        assert_eq!(f.pivots, vec![2, 2, 2]);
        // A[permutation] = L U.
        let mut rebuilt = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                rebuilt[i * 3 + j] = (0..3)
                    .map(|p| {
                        let lv = if i == p {
                            1.0
                        } else if i > p {
                            f.lu[i * 3 + p]
                        } else {
                            0.0
                        };
                        let uv = if p <= j { f.lu[p * 3 + j] } else { 0.0 };
                        lv * uv
                    })
                    .sum();
            }
        }
        for i in 0..3 {
            let row = f.permutation[i] as usize;
            for j in 0..3 {
                assert!((rebuilt[i * 3 + j] - a[row * 3 + j]).abs() < 1e-12);
            }
        }
    }
}
