//! The factorizations on CPU buffers, through `faer`: each matrix of a batch of row-major
//! matrices is factored on its own, the matrices of a batch in parallel.

use faer::linalg::triangular_solve as tri;
use faer::traits::RealField;
use faer::{Mat, MatMut, MatRef, Par, Side};
use rayon::prelude::*;

use crate::dtype::Element;
use crate::exec::cpu::alloc;

/// The element types the factorizations run in (`f32` and `f64`).
pub(super) trait Real: RealField + Element {}

impl Real for f32 {}
impl Real for f64 {}

/// How a factorization of one matrix spreads its work: a lone matrix uses every thread,
/// while the matrices of a batch are spread over the threads instead.
fn inner_par(count: usize) -> Par {
    if count > 1 {
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
    let workspace = faer_workspace::<T>(m.max(n), inner_par(count));
    let one = |i: usize| {
        alloc::ensure_available(workspace);
        f(MatRef::from_row_major_slice(&x[i * m * n..(i + 1) * m * n], m, n))
    };
    if count > 1 {
        (0..count).into_par_iter().map(one).collect()
    } else {
        (0..count).map(one).collect()
    }
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

/// Concatenates per-matrix results (in a fallibly allocated buffer).
fn concat<T: Copy>(parts: Vec<Vec<T>>) -> Vec<T> {
    let mut out = alloc::with_capacity(parts.iter().map(Vec::len).sum());
    for part in parts {
        out.extend_from_slice(&part);
    }
    out
}

/// The lower Cholesky factors (zeros above the diagonal) of the `n x n` matrices, read from
/// their lower triangles; NaNs for a matrix that is not positive definite.
pub(super) fn cholesky<T: Real>(x: &[T], count: usize, n: usize) -> Vec<T> {
    concat(each(x, count, (n, n), |a| {
        let mut out = alloc::with_capacity(n * n);
        match a.llt(Side::Lower) {
            Ok(llt) => push_rows(&mut out, llt.L()),
            Err(_) => push_nans(&mut out, n * n),
        }
        out
    }))
}

/// Eigenvectors (as columns) and ascending eigenvalues of the symmetric `n x n` matrices,
/// read from their lower triangles.
pub(super) fn eigh<T: Real>(x: &[T], count: usize, n: usize) -> (Vec<T>, Vec<T>) {
    let parts = each(x, count, (n, n), |a| {
        let (mut v, mut w) = (alloc::with_capacity(n * n), alloc::with_capacity(n));
        match a.self_adjoint_eigen(Side::Lower) {
            Ok(e) => {
                push_rows(&mut v, e.U());
                w.extend(e.S().column_vector().iter().copied());
            }
            Err(_) => {
                push_nans(&mut v, n * n);
                push_nans(&mut w, n);
            }
        }
        (v, w)
    });
    let (v, w): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
    (concat(v), concat(w))
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
    let parts = each(x, count, (m, n), |a| {
        let f = a.partial_piv_lu();
        let (l, u) = (f.L(), f.U());
        let mut packed = alloc::with_capacity(m * n);
        for i in 0..m {
            packed.extend((0..n).map(|j| if i > j { l[(i, j)] } else { u[(i, j)] }));
        }
        let permutation: Vec<usize> = f.P().arrays().0.to_vec();
        (packed, swaps(&permutation, k), permutation)
    });
    let mut out = LuParts {
        lu: alloc::with_capacity(count * m * n),
        pivots: alloc::with_capacity(count * k),
        permutation: alloc::with_capacity(count * m),
    };
    for (packed, pivots, permutation) in parts {
        out.lu.extend(packed);
        out.pivots.extend(pivots.iter().map(|&p| p as i32));
        out.permutation.extend(permutation.iter().map(|&p| p as i32));
    }
    out
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

/// Solves `op(A) X = B` for each `m x m` triangular `A` in `a` and `m x n` `B` in `b`
/// (`op` per `t`), giving the `X`s.
pub(super) fn triangular_solve<T: Real>(
    a: &[T],
    b: &[T],
    count: usize,
    (m, n): (usize, usize),
    t: Triangle,
) -> Vec<T> {
    let par = inner_par(count);
    let one = |i: usize| {
        alloc::ensure_available(faer_workspace::<T>(m.max(n), par));
        let mut a = MatRef::from_row_major_slice(&a[i * m * m..(i + 1) * m * m], m, m);
        let mut x = Mat::from_fn(m, n, |r, c| b[i * m * n + r * n + c]);
        let mut lower = t.lower;
        if t.transpose {
            a = a.transpose();
            lower = !lower;
        }
        solve_in_place(a, x.as_mut(), lower, t.unit, par);
        let mut out = alloc::with_capacity(m * n);
        push_rows(&mut out, x.as_ref());
        out
    };
    if count > 1 {
        concat((0..count).into_par_iter().map(one).collect())
    } else {
        concat((0..count).map(one).collect())
    }
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
