//! Samplers built on linear algebra: `multivariate_normal` (standard normal draws mapped by a
//! factor of the covariance) and `orthogonal` (the QR factorization of a normal matrix with
//! the signs of `R`'s diagonal moved into `Q`), as JAX builds them from `jnp.linalg`.

use super::continuous::check_float;
use super::{normal_dtype, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::shape::{broadcast_shapes, ShapeDisplay};

/// Multivariate normal values with mean `mean` (`[..., n]`) and covariance `cov`
/// (`[..., n, n]`, positive definite), by the Cholesky factor of `cov`
/// (`jax.random.multivariate_normal(key, mean, cov, shape)`). The result has shape
/// `shape + [n]`; `shape` must be a broadcast of the batch shapes of `mean` and `cov` (pass
/// their broadcast, e.g. `[]` for one mean and one covariance, for JAX's default). The dtype
/// is that of `mean` and `cov` promoted to a float type.
///
/// Differentiable in `mean` and `cov`, as JAX's is: the samples are
/// `mean + L z` for `L = cholesky(cov)` and standard normal `z`.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let mean = jnp::array([1.0f32, -1.0]);
/// let cov = jnp::array([[1.0f32, 0.5], [0.5, 2.0]]);
/// let x = random::multivariate_normal(&random::key(0), &mean, &cov, [10]);
/// assert_eq!(x.shape(), &[10, 2]);
/// ```
#[track_caller]
pub fn multivariate_normal(
    key: &Key,
    mean: impl ArrayLike,
    cov: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    let (mean, cov) = promote("multivariate_normal", mean, cov);
    let dtype = mean.dtype();
    multivariate_normal_with(key, &mean, &cov, shape, dtype, "cholesky")
}

/// [`multivariate_normal`] with JAX's `dtype` (of the normal draws) and `method` arguments:
/// the factor `A` with `A A^T = cov` is `"cholesky"` (`L`), `"eigh"` (`V sqrt(diag(w))` from
/// [`eigh`](crate::jnp::linalg::eigh)) or `"svd"` (`U sqrt(diag(s))` from
/// [`svd`](crate::jnp::linalg::svd)); the last two also take singular covariances. The
/// result is `mean + A z`, in the promoted type of `mean`, `cov` and `dtype`.
///
/// The eigenvectors and singular vectors have arbitrary signs, which flip the corresponding
/// columns of `A`: samples by `"eigh"` and `"svd"` have the right distribution but need not
/// equal JAX's (LAPACK's) for the same key.
#[track_caller]
pub fn multivariate_normal_with(
    key: &Key,
    mean: impl ArrayLike,
    cov: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
    method: &str,
) -> Array {
    const OP: &str = "multivariate_normal";
    let shape = shape.as_ref();
    key.single(OP);
    let (mean, cov) = promote(OP, mean, cov);
    if !matches!(method, "svd" | "eigh" | "cholesky") {
        panic!("{OP}: method must be one of 'svd', 'eigh', 'cholesky', got {method:?}");
    }
    let dtype = check_float(OP, dtype);
    let Some(&n) = mean.shape().last() else {
        panic!("{OP}: requires mean.ndim >= 1, got mean.ndim == 0");
    };
    if cov.ndim() < 2 {
        panic!("{OP}: requires cov.ndim >= 2, got cov.ndim == {}", cov.ndim());
    }
    if cov.shape()[cov.ndim() - 2..] != [n, n] {
        panic!(
            "{OP}: requires cov.shape == (..., n, n) for n={n}, but got cov.shape == {}",
            ShapeDisplay(cov.shape())
        );
    }
    let mean_batch = &mean.shape()[..mean.ndim() - 1];
    let cov_batch = &cov.shape()[..cov.ndim() - 2];
    let fits = broadcast_shapes(mean_batch, cov_batch)
        .and_then(|b| broadcast_shapes(shape, &b))
        .is_some_and(|b| b == shape);
    if !fits {
        panic!(
            "{OP}: the sample shape {} is not a broadcast of the batch shapes {} of mean and {} \
             of cov",
            ShapeDisplay(shape),
            ShapeDisplay(mean_batch),
            ShapeDisplay(cov_batch)
        );
    }
    let factor = match method {
        "svd" => {
            let (u, s, _) = jnp::linalg::svd(&cov, false);
            jnp::multiply(&u, jnp::expand_dims(&jnp::sqrt(&s), -2))
        }
        "eigh" => {
            let (w, v) = jnp::linalg::eigh(&cov);
            jnp::multiply(&v, jnp::expand_dims(&jnp::sqrt(&w), -2))
        }
        _ => jnp::linalg::cholesky(&cov),
    };
    let mut full = shape.to_vec();
    full.push(n);
    let z = normal_dtype(key, &full, dtype);
    // A z for every batch element: `einsum('...ij,...j->...i')`.
    let az = jnp::matmul(&factor, &jnp::expand_dims(&z, -1));
    let az = az.reshape(az.shape()[..az.ndim() - 1].to_vec());
    jnp::add(&mean, &az)
}

/// `mean` and `cov` promoted to a common float type (JAX's `promote_dtypes_inexact`).
#[track_caller]
fn promote(op: &str, mean: impl ArrayLike, cov: impl ArrayLike) -> (Array, Array) {
    let mut both = jnp::promote_inexact(&[mean.into_array(), cov.into_array()]).into_iter();
    let (mean, cov) = (both.next().expect("two operands"), both.next().expect("two operands"));
    if !mean.dtype().is_float() {
        panic!("{op}: mean and cov must be real, got {} and {}", mean.dtype(), cov.dtype());
    }
    (mean, cov)
}

/// Random `float32` orthogonal `n x n` matrices, uniformly distributed over the orthogonal
/// group O(n) (`jax.random.orthogonal(key, n, shape)`); the result has shape
/// `shape + [n, n]`.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let q = random::orthogonal(&random::key(0), 3, []);
/// let qtq = jnp::matmul(&jnp::swapaxes(&q, -1, -2), &q).to_vec::<f32>().unwrap();
/// assert!((qtq[0] - 1.0).abs() < 1e-5 && qtq[1].abs() < 1e-5);
/// ```
#[track_caller]
pub fn orthogonal(key: &Key, n: usize, shape: impl AsRef<[usize]>) -> Array {
    orthogonal_dtype(key, n, shape, crate::dtype::default_float())
}

/// Random orthogonal matrices of `dtype` (`F32` or `F64`), as JAX draws them (Mezzadri's
/// method): `Q diag(sign(diag(R)))` for the QR factorization `Q R` of a standard normal
/// matrix of shape `shape + [n, n]`, which makes the factorization unique and the
/// distribution Haar.
#[track_caller]
pub fn orthogonal_dtype(key: &Key, n: usize, shape: impl AsRef<[usize]>, dtype: DType) -> Array {
    key.single("orthogonal");
    let dtype = check_float("orthogonal", dtype);
    let mut full = shape.as_ref().to_vec();
    full.extend([n, n]);
    crate::shape::check("orthogonal", &full, dtype);
    let z = normal_dtype(key, &full, dtype);
    let (q, r) = jnp::linalg::qr(&z);
    let d = jnp::diagonal(&r, 0, -2, -1);
    jnp::multiply(&q, jnp::expand_dims(&jnp::sign(&d), -2))
}
