//! Linear systems and what follows from an LU factorization: `solve`, `inv`, `det`,
//! `slogdet`, `matrix_power`; least squares and the pseudo-inverse from the SVD: `lstsq`,
//! `pinv`.

use super::factor::{float_matrices, square_matrices};
use super::svd;
use crate::dtype::DType;
use crate::jnp;
use crate::primitives::factor::matrix::{diagonal, eye, mm, mt};
use crate::primitives::{bind, bind1, Lu, TriangularSolve};
use crate::shape::{broadcast_shapes, ShapeDisplay};
use crate::Array;

/// `[..., n, n]` permutation matrices `P` from `[..., n]` row orders: `P[i, j] = 1` where
/// `permutation[i] == j`, so `P A = A[permutation]`.
pub(crate) fn permutation_matrix(permutation: &Array, dtype: DType) -> Array {
    let n = permutation.shape()[permutation.ndim() - 1];
    let cols = jnp::arange(n as i32);
    jnp::equal(permutation.expand_dims(-1), &cols).astype(dtype)
}

/// `x` with leading axes `batch` (broadcast), keeping its last `keep` axes.
#[track_caller]
fn with_batch(x: &Array, batch: &[usize], keep: usize) -> Array {
    let mut shape = batch.to_vec();
    shape.extend_from_slice(&x.shape()[x.ndim() - keep..]);
    jnp::broadcast_to(x, shape)
}

/// Solves `A X = B` from the LU factorization of `A` (`lu`, `permutation`, batch axes
/// matching `b`'s).
fn lu_solve(lu: &Array, permutation: &Array, b: &Array) -> Array {
    // The rows of `b` in the order of `lu`'s, gathered as JAX applies the permutation.
    let pb = jnp::take_along_axis(b, &permutation.expand_dims(-1), -2);
    let lower =
        TriangularSolve { left_side: true, lower: true, transpose_a: false, unit_diagonal: true };
    let upper = TriangularSolve { lower: false, unit_diagonal: false, ..lower.clone() };
    bind1(&upper, &[lu, &bind1(&lower, &[lu, &pb])])
}

/// The solution `x` of `a x = b` for each square matrix of `a` (`[..., n, n]`), with `b`
/// either a vector `[n]` (when it has one axis) or a stack of right-hand sides
/// `[..., n, k]`; leading axes broadcast (`jnp.linalg.solve`). Computed from an LU
/// factorization with partial pivoting; a singular matrix gives infinities or NaNs (no
/// error), as in JAX. Shapes that do not fit panic, naming both.
///
/// ```
/// use rjax_runtime::jnp;
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let a = jnp::array([[2.0f64, 0.0], [0.0, 4.0]]);
/// let x = jnp::linalg::solve(&a, &jnp::array([2.0f64, 2.0]));
/// assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 0.5]);
/// ```
#[track_caller]
pub fn solve(a: &Array, b: &Array) -> Array {
    let promoted = jnp::promote_inexact(&[a.clone(), b.clone()]);
    let a = square_matrices("solve", &promoted[0]);
    let b = jnp::convert(&promoted[1], a.dtype(), false);
    let n = a.shape()[a.ndim() - 1];
    let vector = b.ndim() == 1;
    let fits =
        if vector { b.shape()[0] == n } else { b.ndim() >= 2 && b.shape()[b.ndim() - 2] == n };
    let mismatch = || {
        panic!(
            "solve: the right-hand side must be a vector of {n} or a stack of matrices with \
             {n} rows to match the {n} x {n} matrices, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        )
    };
    if !fits {
        mismatch();
    }
    let b2 = if vector { b.expand_dims(-1) } else { b.clone() };
    let Some(batch) = broadcast_shapes(&a.shape()[..a.ndim() - 2], &b2.shape()[..b2.ndim() - 2])
    else {
        mismatch()
    };
    let a = with_batch(&a, &batch, 2);
    let b2 = with_batch(&b2, &batch, 2);
    let f = bind(&Lu, &[&a]);
    let x = lu_solve(&f[0], &f[2], &b2);
    if vector {
        x.squeeze(-1)
    } else {
        x
    }
}

/// The inverse of each square matrix of `a` (`jnp.linalg.inv`): `solve(a, I)`. A singular
/// matrix gives infinities or NaNs, as in JAX.
#[track_caller]
pub fn inv(a: &Array) -> Array {
    let a = square_matrices("inv", a);
    let n = a.shape()[a.ndim() - 1];
    let identity = jnp::broadcast_to(&eye(&[n, n], a.dtype()), a.shape());
    solve(&a, &identity)
}

/// The sign (`-1`, `0` or `1`) and the log of the absolute value of the determinant of each
/// square matrix of `a` (`jnp.linalg.slogdet`), from an LU factorization: a singular matrix
/// gives sign 0 and `-inf`.
#[track_caller]
pub fn slogdet(a: &Array) -> (Array, Array) {
    let a = square_matrices("slogdet", a);
    let f = bind(&Lu, &[&a]);
    let (lu, pivots) = (&f[0], &f[1]);
    let dtype = a.dtype();
    let d = diagonal(lu);
    let zero = jnp::zeros_dtype([], dtype);
    let is_zero = jnp::any_axes(&jnp::equal(&d, &zero), -1, false);
    let n = a.shape()[a.ndim() - 1];
    let iota = jnp::arange(n as i32);
    let swaps = jnp::sum_axes(&jnp::not_equal(pivots, &iota).astype(DType::I32), -1, false);
    let negatives = jnp::sum_axes(&jnp::less(&d, &zero).astype(DType::I32), -1, false);
    let odd = jnp::equal(jnp::remainder(jnp::add(&swaps, &negatives), 2), 1);
    let one = jnp::ones_dtype([], dtype);
    let sign = jnp::where_(&odd, jnp::negative(&one), &one);
    let sign = jnp::where_(&is_zero, &zero, &sign);
    let logdet = jnp::sum_axes(&jnp::log(&jnp::abs(&d)), -1, false);
    let minus_inf = jnp::full_dtype([], f64::NEG_INFINITY, dtype);
    (sign, jnp::where_(&is_zero, &minus_inf, &logdet))
}

/// The determinant of each square matrix of `a` (`jnp.linalg.det`): the explicit products
/// for 2 x 2 and 3 x 3 matrices (as JAX), otherwise `sign * exp(logabsdet)` of
/// [`slogdet`]. Derivatives follow the LU factorization, which agrees with JAX's
/// cofactor rule wherever the matrix is invertible.
#[track_caller]
pub fn det(a: &Array) -> Array {
    let a = square_matrices("det", a);
    let n = a.shape()[a.ndim() - 1];
    let at = |i: i32, j: i32| element(&a, i, j);
    match n {
        2 => jnp::subtract(at(0, 0) * at(1, 1), at(0, 1) * at(1, 0)),
        3 => {
            let plus = at(0, 0) * at(1, 1) * at(2, 2)
                + at(0, 1) * at(1, 2) * at(2, 0)
                + at(0, 2) * at(1, 0) * at(2, 1);
            plus - at(0, 2) * at(1, 1) * at(2, 0)
                - at(0, 0) * at(1, 2) * at(2, 1)
                - at(0, 1) * at(1, 0) * at(2, 2)
        }
        _ => {
            let (sign, logdet) = slogdet(&a);
            sign * jnp::exp(&logdet)
        }
    }
}

/// Element `(i, j)` of each matrix of a stack: `[..., n, n]` to `[...]`.
fn element(a: &Array, i: i32, j: i32) -> Array {
    let r = a.ndim() as isize;
    let row = jnp::take(a, i, Some(r - 2));
    jnp::take(&row, j, Some(r - 2))
}

/// `a` raised to the integer power `n` by repeated squaring, as JAX's
/// `jnp.linalg.matrix_power`: `n = 0` gives identities, negative `n` powers of [`inv`].
#[track_caller]
pub fn matrix_power(a: &Array, n: i64) -> Array {
    let mut a = square_matrices("matrix_power", a);
    let size = a.shape()[a.ndim() - 1];
    if n == 0 {
        return jnp::broadcast_to(&eye(&[size, size], a.dtype()), a.shape());
    }
    if n < 0 {
        a = inv(&a);
    }
    let mut n = n.unsigned_abs();
    match n {
        1 => return a,
        2 => return mm(&a, &a),
        3 => return mm(&mm(&a, &a), &a),
        _ => {}
    }
    let (mut z, mut result): (Option<Array>, Option<Array>) = (None, None);
    while n > 0 {
        let next = match &z {
            None => a.clone(),
            Some(z) => mm(z, z),
        };
        if n % 2 == 1 {
            result = Some(match result {
                None => next.clone(),
                Some(r) => mm(&r, &next),
            });
        }
        z = Some(next);
        n /= 2;
    }
    result.expect("a positive power multiplies at least once")
}

/// What [`lstsq`] returns.
#[derive(Clone, Debug)]
pub struct Lstsq {
    /// The least-squares solution (`[n]` or `[n, k]`, as `b`).
    pub x: Array,
    /// The squared 2-norm of each column of `b - a x` (`[k]`, `[1]` for a vector `b`).
    pub residuals: Array,
    /// The effective rank of `a` (`int32`).
    pub rank: Array,
    /// The singular values of `a`, descending.
    pub s: Array,
}

/// The least-squares solution of `a x = b` for a matrix `a` (`[m, n]`) and `b` (`[m]` or
/// `[m, k]`), as JAX's `jnp.linalg.lstsq`: from the thin SVD, singular values below
/// `rcond * s_max` treated as zero (`rcond` defaults to `eps * max(m, n)`; a negative one
/// means `eps`). Residuals are always computed (JAX's `numpy_resid=False`).
#[track_caller]
pub fn lstsq(a: &Array, b: &Array, rcond: Option<f64>) -> Lstsq {
    let promoted = jnp::promote_inexact(&[a.clone(), b.clone()]);
    let a = float_matrices("lstsq", &promoted[0]);
    let b = jnp::convert(&promoted[1], a.dtype(), false);
    if a.ndim() != 2 || !(1..=2).contains(&b.ndim()) || b.shape()[0] != a.shape()[0] {
        panic!(
            "lstsq: expected a matrix [m, n] and a right-hand side [m] or [m, k], got shapes \
             {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        );
    }
    let (m, n) = (a.shape()[0], a.shape()[1]);
    let dtype = a.dtype();
    let eps = if dtype == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
    let rcond = match rcond {
        None => eps * m.max(n) as f64,
        Some(r) if r < 0.0 => eps,
        Some(r) => r,
    };
    let vector = b.ndim() == 1;
    let b2 = if vector { b.expand_dims(-1) } else { b.clone() };
    let (u, s, vt) = svd(&a, false);
    let zero = jnp::zeros_dtype([], dtype);
    let s_max = jnp::take(&s, 0, Some(0));
    let cutoff = jnp::multiply(&s_max, jnp::full_dtype([], rcond, dtype));
    let mask = jnp::logical_and(jnp::greater(&s, &zero), jnp::greater_equal(&s, &cutoff));
    let rank = jnp::sum_axes(&mask.astype(DType::I32), 0, false);
    let one = jnp::ones_dtype([], dtype);
    let safe_s = jnp::where_(&mask, &s, &one);
    let s_inv = jnp::where_(&mask, jnp::divide(&one, &safe_s), &zero).expand_dims(-1);
    let utb = mm(&mt(&u), &b2);
    let x = mm(&mt(&vt), &jnp::multiply(&s_inv, &utb));
    let r = jnp::subtract(&b2, mm(&a, &x));
    let residuals = jnp::sum_axes(&jnp::multiply(&r, &r), 0, false);
    let x = if vector { x.squeeze(-1) } else { x };
    Lstsq { x, residuals, rank, s }
}

/// The Moore-Penrose pseudo-inverse of each matrix of `a` (`[..., m, n]` to `[..., n, m]`),
/// as JAX's `jnp.linalg.pinv`: from the thin SVD, singular values at or below
/// `rtol * s_max` dropped (`rtol` defaults to `10 * max(m, n) * eps`). Derivatives follow the
/// SVD; they agree with JAX's rule where the rank is full and singular values are distinct.
#[track_caller]
pub fn pinv(a: &Array, rtol: Option<f64>) -> Array {
    let a = float_matrices("pinv", a);
    let r = a.ndim();
    let (m, n) = (a.shape()[r - 2], a.shape()[r - 1]);
    let dtype = a.dtype();
    if m == 0 || n == 0 {
        let mut shape = a.shape().to_vec();
        shape.swap(r - 2, r - 1);
        return jnp::zeros_dtype(shape, dtype);
    }
    let eps = if dtype == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
    let rtol = rtol.unwrap_or(10.0 * m.max(n) as f64 * eps);
    let (u, s, vh) = svd(&a, false);
    let s_max = jnp::take(&s, 0, Some(r as isize - 2)).expand_dims(-1);
    let cutoff = jnp::multiply(&s_max, jnp::full_dtype([], rtol, dtype));
    let inf = jnp::full_dtype([], f64::INFINITY, dtype);
    let s = jnp::where_(jnp::greater(&s, &cutoff), &s, &inf);
    mm(&mt(&vh), &jnp::divide(mt(&u), s.expand_dims(-1)))
}
