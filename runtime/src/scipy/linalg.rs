//! `jax.scipy.linalg`: [`solve_triangular`] and the LU factorization [`lu`].

use crate::jnp;
use crate::jnp::linalg::{float_matrices, permutation_matrix, square_matrices};
use crate::primitives::factor::matrix::{eye, mt, resize, tril, triu};
use crate::primitives::{bind, bind1, Lu, TriangularSolve};
use crate::shape::{broadcast_shapes, ShapeDisplay};
use crate::Array;

/// Which system [`solve_triangular`] solves (SciPy's `trans`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trans {
    /// `a x = b` (`trans=0` or `'N'`).
    N,
    /// `a^T x = b` (`trans=1` or `'T'`; for real matrices also `'C'`).
    T,
}

/// The solution `x` of `a x = b` (or `a^T x = b`) for triangular `a` (`[..., m, m]`, only its
/// `lower` or upper triangle read, its diagonal taken as ones with `unit_diagonal`) and `b` a
/// stack of vectors (`[..., m]`, when it has one axis fewer than `a`) or matrices
/// (`[..., m, k]`); leading axes broadcast (`jax.scipy.linalg.solve_triangular`). A zero on
/// the diagonal gives infinities or NaNs. Shapes that do not fit panic, naming both.
///
/// ```
/// use rjax_runtime::{jnp, scipy::linalg::{solve_triangular, Trans}};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let a = jnp::array([[2.0f64, 0.0], [1.0, 1.0]]);
/// let x = solve_triangular(&a, &jnp::array([2.0f64, 3.0]), Trans::N, true, false);
/// assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 2.0]);
/// ```
#[track_caller]
pub fn solve_triangular(
    a: &Array,
    b: &Array,
    trans: Trans,
    lower: bool,
    unit_diagonal: bool,
) -> Array {
    let promoted = jnp::promote_inexact(&[a.clone(), b.clone()]);
    let a = square_matrices("solve_triangular", &promoted[0]);
    let b = jnp::convert(&promoted[1], a.dtype(), false);
    let m = a.shape()[a.ndim() - 1];
    let vector = b.ndim() + 1 == a.ndim();
    let b2 = if vector { b.expand_dims(-1) } else { b.clone() };
    let mismatch = || {
        panic!(
            "solve_triangular: the right-hand side must have {m} rows (a stack of [{m}] vectors \
             or [{m}, k] matrices) to match the {m} x {m} matrices, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        )
    };
    if b2.ndim() < 2 || b2.shape()[b2.ndim() - 2] != m {
        mismatch();
    }
    let Some(batch) = broadcast_shapes(&a.shape()[..a.ndim() - 2], &b2.shape()[..b2.ndim() - 2])
    else {
        mismatch()
    };
    let full = |x: &Array| {
        let mut shape = batch.clone();
        shape.extend_from_slice(&x.shape()[x.ndim() - 2..]);
        jnp::broadcast_to(x, shape)
    };
    let prim =
        TriangularSolve { left_side: true, lower, transpose_a: trans == Trans::T, unit_diagonal };
    let x = bind1(&prim, &[&full(&a), &full(&b2)]);
    if vector {
        x.squeeze(-1)
    } else {
        x
    }
}

/// The LU factorization with partial pivoting of each matrix of `a` (`[..., m, n]`), as
/// `(p, l, u)` with `a = p @ l @ u` (`jax.scipy.linalg.lu`): `p` a permutation matrix
/// (`[..., m, m]`), `l` unit lower triangular (`[..., m, k]`) and `u` upper triangular
/// (`[..., k, n]`), `k = min(m, n)`. Pivoting picks the largest magnitude in each column, as
/// LAPACK's `getrf`.
#[track_caller]
pub fn lu(a: &Array) -> (Array, Array, Array) {
    let a = float_matrices("lu", a);
    let r = a.ndim();
    let (m, n) = (a.shape()[r - 2], a.shape()[r - 1]);
    let k = m.min(n);
    let f = bind(&Lu, &[&a]);
    let (packed, permutation) = (&f[0], &f[2]);
    let p = mt(&permutation_matrix(permutation, a.dtype()));
    let l = jnp::add(tril(&resize(packed, r - 1, k), -1), eye(&[m, k], a.dtype()));
    let u = triu(&resize(packed, r - 2, k), 0);
    (p, l, u)
}
