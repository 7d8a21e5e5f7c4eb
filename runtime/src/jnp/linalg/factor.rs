//! The factorizations: `cholesky`, `eigh`, `qr`, `svd`.

use crate::primitives::factor::matrix::symmetrize;
use crate::primitives::{bind, bind1, Cholesky, Eigh, Qr, Svd};
use crate::shape::ShapeDisplay;
use crate::Array;

/// `a` as a stack of `float32`/`float64` matrices for `op` (integers and bools become the
/// default float type, as JAX's `promote_dtypes_inexact`), or a panic naming `op` when `a`
/// has fewer than two axes or is not numeric.
#[track_caller]
pub(crate) fn float_matrices(op: &str, a: &Array) -> Array {
    if a.ndim() < 2 {
        panic!(
            "{op}: expected a matrix or a stack of matrices (2 or more axes), got {}{}",
            a.dtype(),
            ShapeDisplay(a.shape())
        );
    }
    let a = crate::jnp::promote_inexact(std::slice::from_ref(a)).remove(0);
    if !matches!(a.dtype(), crate::DType::F32 | crate::DType::F64) {
        panic!(
            "{op}: expected float32 or float64 matrices (other float types have no \
             factorizations), got {}{}",
            a.dtype(),
            ShapeDisplay(a.shape())
        );
    }
    crate::jnp::convert(&a, a.dtype(), false)
}

/// [`float_matrices`] for square matrices.
#[track_caller]
pub(crate) fn square_matrices(op: &str, a: &Array) -> Array {
    let a = float_matrices(op, a);
    let r = a.ndim();
    if a.shape()[r - 2] != a.shape()[r - 1] {
        panic!(
            "{op}: expected square matrices (last two axes equal), got {}{}",
            a.dtype(),
            ShapeDisplay(a.shape())
        );
    }
    a
}

/// The lower Cholesky factor `L` of each symmetric positive-definite matrix of `a`
/// (`[..., n, n]`), with `L L^T = A` (`jnp.linalg.cholesky`). `a` is symmetrized first
/// (`(A + A^T) / 2`), as JAX does, so gradients flow to both triangles.
///
/// A matrix that is not positive definite (a pivot that is not positive) is no error: its
/// factor holds NaNs in the whole lower triangle and zeros above it, as JAX's does (the other
/// matrices of a stack are factored as usual). Non-square matrices panic, naming the shape.
///
/// ```
/// use rjax_runtime::jnp;
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let a = jnp::array([[4.0f64, 2.0], [2.0, 5.0]]);
/// let l = jnp::linalg::cholesky(&a);
/// assert_eq!(l.to_vec::<f64>().unwrap(), vec![2.0, 0.0, 1.0, 2.0]);
/// ```
#[track_caller]
pub fn cholesky(a: &Array) -> Array {
    let a = square_matrices("cholesky", a);
    // The primitive zeroes the upper triangle of its result and of its tangents.
    bind1(&Cholesky, &[&symmetrize(&a)])
}

/// Eigenvalues (ascending) and eigenvectors (as columns) of each symmetric matrix of `a`
/// (`[..., n, n]`), as `(w, v)` with `A v = v diag(w)` (`jnp.linalg.eigh`). `a` is
/// symmetrized first, as JAX does. Each eigenvector's sign is arbitrary (as LAPACK's).
#[track_caller]
pub fn eigh(a: &Array) -> (Array, Array) {
    let a = square_matrices("eigh", a);
    let mut out = bind(&Eigh, &[&symmetrize(&a)]);
    let w = out.pop().expect("eigh has two outputs");
    (w, out.pop().expect("eigh has two outputs"))
}

/// The eigenvalues of each symmetric matrix of `a`, ascending (`jnp.linalg.eigvalsh`).
#[track_caller]
pub fn eigvalsh(a: &Array) -> Array {
    eigh(a).0
}

/// The reduced QR factorization of each matrix of `a` (`[..., m, n]`): `Q` (`[..., m, k]`,
/// orthonormal columns) and upper-triangular `R` (`[..., k, n]`), `k = min(m, n)`
/// (`jnp.linalg.qr`, `mode="reduced"`). Signs of the columns of `Q` (and rows of `R`) are
/// arbitrary. Differentiable for `m >= n`, as in JAX.
#[track_caller]
pub fn qr(a: &Array) -> (Array, Array) {
    qr_with(a, false)
}

/// The complete QR factorization: `Q` square (`[..., m, m]`) and `R` `[..., m, n]`
/// (`mode="complete"`). Differentiable for square matrices only, as in JAX.
#[track_caller]
pub fn qr_complete(a: &Array) -> (Array, Array) {
    qr_with(a, true)
}

#[track_caller]
fn qr_with(a: &Array, full_matrices: bool) -> (Array, Array) {
    let a = float_matrices("qr", a);
    let mut out = bind(&Qr { full_matrices }, &[&a]);
    let r = out.pop().expect("qr has two outputs");
    (out.pop().expect("qr has two outputs"), r)
}

/// The singular value decomposition of each matrix of `a` (`[..., m, n]`): `(U, s, Vh)` with
/// `A = U diag(s) Vh`, `s` descending (`jnp.linalg.svd`). With `full_matrices`, `U` and `Vh`
/// are square (`[..., m, m]`, `[..., n, n]`); otherwise `[..., m, k]` and `[..., k, n]`.
/// Signs of paired singular vectors are arbitrary. As in JAX, only the thin decomposition
/// (`full_matrices = false`) is differentiable.
#[track_caller]
pub fn svd(a: &Array, full_matrices: bool) -> (Array, Array, Array) {
    let a = float_matrices("svd", a);
    let mut out = bind(&Svd { full_matrices, compute_uv: true }, &[&a]).into_iter();
    let (s, u, vh) = (out.next(), out.next(), out.next());
    let missing = "svd has three outputs";
    (u.expect(missing), s.expect(missing), vh.expect(missing))
}

/// The singular values of each matrix of `a`, descending (`jnp.linalg.svdvals`, or `svd`
/// with `compute_uv=False`).
#[track_caller]
pub fn svdvals(a: &Array) -> Array {
    let a = float_matrices("svdvals", a);
    bind1(&Svd { full_matrices: false, compute_uv: false }, &[&a])
}
