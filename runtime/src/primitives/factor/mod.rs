//! Matrix factorizations (JAX's `lax.linalg`): `cholesky`, `triangular_solve`, `lu`, `eigh`,
//! `qr` and `svd`. Each takes a stack of matrices `[..., m, n]` (the leading axes a batch, the
//! matrices factored independently and in parallel) of `float32` or `float64`, and computes
//! on CPU with `faer`. Their derivative rules are JAX's (`jax/_src/lax/linalg.py`), written
//! with the primitives of the `matrix` submodule, so they nest to any order;
//! `triangular_solve` is linear in its right-hand side and transposes there.
//!
//! None of them runs on GPUs yet ([`Primitive::device_op`] is `None`, which the backends
//! report naming the primitive).

mod kernels;
pub(crate) mod matrix;

use self::kernels::Triangle;
use self::matrix::{as_col, as_row, diag_embed, diagonal, eye, mm, mt, recip, resize, tril, triu};
use super::{bind, bind1, describe, expect_arity, Aval, Primitive};
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::transform::ad::ops;
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// `cholesky`: the lower-triangular `L` with `L L^T = A` for symmetric positive-definite
/// `A` (`[..., n, n]`), read from its lower triangle; zeros above the diagonal, in its
/// tangents too (JAX's `lax.linalg.cholesky`, which zeroes them after its primitive). A
/// matrix that is not positive definite gives NaNs in the lower triangle, as in JAX.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cholesky;

/// `triangular_solve(a, b)`: `X` with `op(A) X = B` (`left_side`) or `X op(A) = B`, for
/// triangular `A` (`[..., m, m]`, only its `lower` or upper triangle read) and `B` of the same
/// leading axes; `op` transposes when `transpose_a`. With `unit_diagonal` the diagonal of `A`
/// is taken as ones. A zero on the diagonal gives infinities and NaNs, not an error.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TriangularSolve {
    pub left_side: bool,
    pub lower: bool,
    pub transpose_a: bool,
    pub unit_diagonal: bool,
}

/// `lu`: LU factorization with partial pivoting of `A` (`[..., m, n]`), as LAPACK's `getrf`:
/// `lu` (`[..., m, n]`, unit-lower `L` below the diagonal and `U` on and above it), `pivots`
/// (`int32[..., min(m, n)]`, row `i` swapped with row `pivots[i]`) and `permutation`
/// (`int32[..., m]`, `A[permutation] = L U`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lu;

/// `eigh`: eigenvectors `V` (`[..., n, n]`, as columns) and eigenvalues `w` (`[..., n]`,
/// ascending) of symmetric `A`, read from its lower triangle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Eigh;

/// `qr`: `Q` with orthonormal columns and upper-triangular `R` with `Q R = A`: `Q` is
/// `[..., m, m]` and `R` `[..., m, n]` with `full_matrices`, else `[..., m, k]` and
/// `[..., k, n]` (`k = min(m, n)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Qr {
    pub full_matrices: bool,
}

/// `svd`: the singular values `s` (`[..., k]`, descending) of `A` (`[..., m, n]`) and, with
/// `compute_uv`, `U` and `V^T` (`[..., m, m]` and `[..., n, n]` with `full_matrices`, else
/// `[..., m, k]` and `[..., k, n]`), in that order (JAX's primitive's).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Svd {
    pub full_matrices: bool,
    pub compute_uv: bool,
}

/// Runs `$body` with `$v` the `f32` or `f64` elements of `$x` and `$t` their type.
macro_rules! on_real {
    ($x:expr, |$v:ident : $t:ident| $body:expr) => {
        match $x.buffer() {
            Buffer::F32($v) => {
                type $t = f32;
                $body
            }
            Buffer::F64($v) => {
                type $t = f64;
                $body
            }
            _ => unreachable!("the shape rules admit float32 and float64 only"),
        }
    };
}

/// The matrix extents `(m, n)` of a stack of `float32` or `float64` matrices.
fn matrices(x: &Aval) -> Result<(usize, usize), String> {
    let r = x.shape.len();
    if r < 2 {
        return Err(format!("expected a matrix or a stack of matrices (2 or more axes), got {x}"));
    }
    if !matches!(x.dtype, DType::F32 | DType::F64) {
        return Err(format!("expected float32 or float64 matrices, got {x}"));
    }
    Ok((x.shape[r - 2], x.shape[r - 1]))
}

/// The extent `n` of a stack of square matrices.
fn square(x: &Aval) -> Result<usize, String> {
    let (m, n) = matrices(x)?;
    if m != n {
        return Err(format!("expected square matrices, got {x} ({m} x {n})"));
    }
    Ok(n)
}

/// The number of matrices in a stack of `shape`.
fn count(shape: &[usize]) -> usize {
    shape[..shape.len() - 2].iter().product()
}

/// An aval with `x`'s leading (batch) axes, the last two replaced by `last`.
fn with_last(x: &Aval, last: &[usize], dtype: DType) -> Aval {
    let mut shape = x.shape[..x.shape.len() - 2].to_vec();
    shape.extend_from_slice(last);
    Aval { shape, dtype, weak: false }
}

/// An output array of aval `out`.
fn output(out: &Aval, buffer: Buffer) -> Array {
    Array::from_buffer(&out.shape, buffer, out.weak)
}

/// The batching rule of a one-operand factorization: a batch axis among the leading axes
/// stays where it is (every output keeps the operand's leading axes), one elsewhere moves
/// to the front.
fn batch_matrices(prim: &dyn Primitive, args: &[Array], dims: &[BatchDim]) -> Batched {
    let x = &args[0];
    let d = dims[0].expect("batching rules run with a batched operand");
    let d = if d + 2 < x.ndim() { d } else { 0 };
    let x = to_dim(x, dims[0], d, 0);
    let outs = bind(prim, &[&x]);
    let n = outs.len();
    Ok((outs, vec![Some(d); n]))
}

/// The one nonzero tangent of a one-operand rule.
fn the_tangent(tangents: &[Tangent]) -> &Array {
    tangents[0].as_ref().expect("jvp rules run with a nonzero tangent")
}

impl Primitive for Cholesky {
    fn name(&self) -> String {
        "cholesky".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        square(&inputs[0])?;
        Ok(vec![Aval { weak: false, ..inputs[0].clone() }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (c, n) = (count(x.shape()), x.shape()[x.ndim() - 1]);
        let buffer = on_real!(x, |v: T| T::wrap(kernels::cholesky::<T>(v, c, n)));
        vec![output(&outputs[0], buffer)]
    }

    /// JAX's rule (Murray, arXiv:1602.07527): `L' = L phi(L^-1 A' L^-T)`, `phi` taking the
    /// lower triangle with the diagonal halved; `L'` is then cut to its lower triangle, as
    /// JAX's `lax.linalg.cholesky` cuts it (which matters where `L` holds NaNs).
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let l = bind1(self, &[&primals[0]]);
        let solve = |left_side, transpose_a, b: &Array| {
            let s = TriangularSolve { left_side, lower: true, transpose_a, unit_diagonal: false };
            bind1(&s, &[&l, b])
        };
        let tmp = solve(false, true, the_tangent(tangents));
        let inner = solve(true, false, &tmp);
        let halved_diagonal =
            ops::scale(&ops::mul(&inner, &eye(inner.shape(), inner.dtype())), 0.5);
        let phi = ops::sub(&tril(&inner, 0), &halved_diagonal);
        let l_dot = tril(&mm(&l, &phi), 0);
        Ok((vec![l], vec![Some(l_dot)]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        batch_matrices(self, args, dims)
    }
}

impl TriangularSolve {
    /// The triangle as the kernel reads it when solving from the left: a right-side solve
    /// `X op(A) = B` is the left-side solve `op(A)^T X^T = B^T`.
    fn triangle(&self) -> Triangle {
        Triangle {
            lower: self.lower,
            // Left: `op` as given; right: flipped.
            transpose: self.transpose_a == self.left_side,
            unit: self.unit_diagonal,
        }
    }

    /// JAX's derivative in `a` (`g` its tangent) given the solution `x`, ordering the solve
    /// and the product by cost.
    fn jvp_a(&self, a: &Array, x: &Array, g: &Array) -> Array {
        let r = x.ndim();
        let (m, n) = (x.shape()[r - 2], x.shape()[r - 1]);
        let k = i64::from(self.unit_diagonal);
        let g = if self.lower { tril(g, -k) } else { triu(g, k) };
        let g = ops::neg(&g);
        let g = if self.transpose_a { mt(&g) } else { g };
        let a_inverse = |rhs: &Array| bind1(self, &[a, rhs]);
        match (self.left_side, m > n, m < n) {
            (true, true, _) => a_inverse(&mm(&g, x)),
            (true, false, _) => mm(&a_inverse(&g), x),
            (false, _, true) => a_inverse(&mm(x, &g)),
            (false, _, false) => mm(x, &a_inverse(&g)),
        }
    }
}

impl Primitive for TriangularSolve {
    fn name(&self) -> String {
        "triangular_solve".to_string()
    }

    fn params(&self) -> String {
        format!(
            "left_side={} lower={} transpose_a={} unit_diagonal={}",
            self.left_side, self.lower, self.transpose_a, self.unit_diagonal
        )
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (a, b) = (&inputs[0], &inputs[1]);
        let m = square(a)?;
        matrices(b)?;
        let r = a.shape.len();
        if a.dtype != b.dtype || b.shape.len() != r || a.shape[..r - 2] != b.shape[..r - 2] {
            return Err(format!(
                "the operands must have one dtype and the same leading axes, got {}",
                describe(inputs)
            ));
        }
        let solved = if self.left_side { b.shape[r - 2] } else { b.shape[r - 1] };
        if solved != m {
            let side = if self.left_side { "rows" } else { "columns" };
            return Err(format!(
                "the right-hand side must have {m} {side} to match the {m} x {m} triangular \
                 matrices, got {}",
                describe(inputs)
            ));
        }
        Ok(vec![Aval { weak: false, ..b.clone() }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (a, b) = (inputs[0], inputs[1]);
        let r = b.ndim();
        let (c, rows, cols) = (count(b.shape()), b.shape()[r - 2], b.shape()[r - 1]);
        let buffer = on_real!(a, |av: T| {
            let bv = b.as_slice::<T>().expect("the shape rule checked the dtypes agree");
            let x =
                kernels::triangular_solve(av, bv, c, (rows, cols), self.left_side, self.triangle());
            T::wrap(x)
        });
        vec![output(&outputs[0], buffer)]
    }

    /// Linear in `b` (the solve of its tangent); in `a`, JAX's rule (`jvp_a` below).
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (a, b) = (&primals[0], &primals[1]);
        let x = bind1(self, &[a, b]);
        let from_a = tangents[0].as_ref().map(|g| self.jvp_a(a, &x, g));
        let from_b = tangents[1].as_ref().map(|t| bind1(self, &[a, t]));
        Ok((vec![x], vec![ops::add_tangents(from_a, from_b)]))
    }

    /// The cotangent of `b` is the solve with `A` transposed.
    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(a) = args[0].known() else {
            return Err("it is not linear in the triangular matrix".to_string());
        };
        let Some(ct) = ops::single_ct(cts) else { return Ok(vec![None, None]) };
        let transposed = TriangularSolve { transpose_a: !self.transpose_a, ..self.clone() };
        Ok(vec![None, Some(bind1(&transposed, &[a, ct]))])
    }

    /// Both operands get the batch axis in front (an unbatched one broadcast).
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let a = to_dim(&args[0], dims[0], 0, axis.size);
        let b = to_dim(&args[1], dims[1], 0, axis.size);
        Ok((vec![bind1(self, &[&a, &b])], vec![Some(0)]))
    }
}

/// Constant square matrices of `dtype` with ones on the diagonal from row `k` on: the part of
/// the identity that `U`'s padding to `n x n` lacks in [`Lu`]'s rule.
fn eye_from(n: usize, k: usize, dtype: DType) -> Array {
    let data: Vec<f64> =
        (0..n * n).map(|p| if p / n == p % n && p / n >= k { 1.0 } else { 0.0 }).collect();
    ops::convert(&Array::from_shape_vec([n, n], data), dtype)
}

impl Primitive for Lu {
    fn name(&self) -> String {
        "lu".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let (m, n) = matrices(x)?;
        if m > i32::MAX as usize {
            return Err(format!("{x} has too many rows for int32 pivots"));
        }
        let pivots = with_last(x, &[m.min(n)], DType::I32);
        let permutation = with_last(x, &[m], DType::I32);
        Ok(vec![Aval { weak: false, ..x.clone() }, pivots, permutation])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let r = x.ndim();
        let (c, m, n) = (count(x.shape()), x.shape()[r - 2], x.shape()[r - 1]);
        let (lu, pivots, permutation) = on_real!(x, |v: T| {
            let f = kernels::lu::<T>(v, c, (m, n));
            (T::wrap(f.lu), f.pivots, f.permutation)
        });
        vec![
            output(&outputs[0], lu),
            output(&outputs[1], Buffer::I32(pivots)),
            output(&outputs[2], Buffer::I32(permutation)),
        ]
    }

    /// JAX's rule (de Hoog, Anderssen and Lukas): with `P A = L U`,
    /// `L^-1 P A' U^-1 = X` gives `L' = L tril(X, -1)` and `U' = triu(X) U`.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let outs = bind(self, &[&primals[0]]);
        let (lu, permutation) = (&outs[0], &outs[2]);
        let r = lu.ndim();
        let (m, n) = (lu.shape()[r - 2], lu.shape()[r - 1]);
        let k = m.min(n);
        let dtype = lu.dtype();
        // P as a matrix: row i is one-hot at permutation[i].
        let mut p_shape = permutation.shape().to_vec();
        p_shape.push(m);
        let columns = bind1(
            &super::Iota { dtype: DType::I32, shape: p_shape.clone(), dimension: r - 1 },
            &[],
        );
        let picked = ops::broadcast_to(&as_col(permutation), &p_shape);
        let p = ops::convert(&ops::eq(&picked, &columns), dtype);
        let x = mm(&p, the_tangent(tangents));
        let l = ops::add(&tril(&resize(lu, r - 1, m), -1), &eye(&[m, m], dtype));
        let u = ops::add(&triu(&resize(lu, r - 2, n), 0), &eye_from(n, k, dtype));
        let solve = |left_side, lower, unit_diagonal, a: &Array, b: &Array| {
            let s = TriangularSolve { left_side, lower, transpose_a: false, unit_diagonal };
            bind1(&s, &[a, b])
        };
        let la = solve(true, true, true, &l, &x);
        let lau = solve(false, false, false, &u, &la);
        let l_dot = mm(&l, &tril(&lau, -1));
        let u_dot = mm(&triu(&lau, 0), &u);
        Ok((outs, vec![Some(ops::add(&l_dot, &u_dot)), None, None]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        batch_matrices(self, args, dims)
    }
}

impl Primitive for Eigh {
    fn name(&self) -> String {
        "eigh".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let n = square(x)?;
        let w = with_last(x, &[n], x.dtype);
        Ok(vec![Aval { weak: false, ..x.clone() }, w])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (c, n) = (count(x.shape()), x.shape()[x.ndim() - 1]);
        let (v, w) = on_real!(x, |xv: T| {
            let (v, w) = kernels::eigh::<T>(xv, c, n);
            (T::wrap(v), T::wrap(w))
        });
        vec![output(&outputs[0], v), output(&outputs[1], w)]
    }

    /// JAX's rule: with `S = V^T A' V`, `w' = diag(S)` and `V' = V (F * S)`, `F` holding
    /// `1 / (w_j - w_i)` off the diagonal and zeros on it.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let outs = bind(self, &[&primals[0]]);
        let (v, w) = (&outs[0], &outs[1]);
        let n = w.shape()[w.ndim() - 1];
        let eye_n = eye(&[n, n], w.dtype());
        let gaps = ops::sub(&as_row(w), &as_col(w));
        let f = ops::sub(&recip(&ops::add(&eye_n, &gaps)), &eye_n);
        let s = mm(&mm(&mt(v), the_tangent(tangents)), v);
        let dv = mm(v, &ops::mul(&f, &s));
        let dw = diagonal(&s);
        Ok((outs, vec![Some(dv), Some(dw)]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        batch_matrices(self, args, dims)
    }
}

impl Primitive for Qr {
    fn name(&self) -> String {
        "qr".to_string()
    }

    fn params(&self) -> String {
        format!("full_matrices={}", self.full_matrices)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let (m, n) = matrices(x)?;
        let k = if self.full_matrices { m } else { m.min(n) };
        Ok(vec![with_last(x, &[m, k], x.dtype), with_last(x, &[k, n], x.dtype)])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let r = x.ndim();
        let (c, m, n) = (count(x.shape()), x.shape()[r - 2], x.shape()[r - 1]);
        let (q, rr) = on_real!(x, |v: T| {
            let (q, rr) = kernels::qr::<T>(v, c, (m, n), self.full_matrices);
            (T::wrap(q), T::wrap(rr))
        });
        vec![output(&outputs[0], q), output(&outputs[1], rr)]
    }

    /// JAX's rule (for `m >= n`, and square `Q` only when `m == n`, as JAX):
    /// with `C = Q^T A' R^-1` and `O = tril(C, -1) - tril(C, -1)^T`,
    /// `Q' = Q (O - C) + A' R^-1` and `R' = (C - O) R`.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let x = &primals[0];
        let r = x.ndim();
        let (m, n) = (x.shape()[r - 2], x.shape()[r - 1]);
        if m < n || (self.full_matrices && m != n) {
            return Err(format!(
                "the derivative of qr is defined (as in JAX) only for matrices with at least as \
                 many rows as columns, and with full_matrices only for square ones; got {}",
                x.aval()
            ));
        }
        let outs = bind(self, &[x]);
        let (q, rr) = (&outs[0], &outs[1]);
        let right_solve = TriangularSolve {
            left_side: false,
            lower: false,
            transpose_a: false,
            unit_diagonal: false,
        };
        let dx_rinv = bind1(&right_solve, &[rr, the_tangent(tangents)]);
        let c = mm(&mt(q), &dx_rinv);
        let lower = tril(&c, -1);
        let o = ops::sub(&lower, &mt(&lower));
        let dq = ops::add(&mm(q, &ops::sub(&o, &c)), &dx_rinv);
        let dr = mm(&ops::sub(&c, &o), rr);
        Ok((outs, vec![Some(dq), Some(dr)]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        batch_matrices(self, args, dims)
    }
}

impl Primitive for Svd {
    fn name(&self) -> String {
        "svd".to_string()
    }

    fn params(&self) -> String {
        format!("full_matrices={} compute_uv={}", self.full_matrices, self.compute_uv)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let (m, n) = matrices(x)?;
        let k = m.min(n);
        let s = with_last(x, &[k], x.dtype);
        if !self.compute_uv {
            return Ok(vec![s]);
        }
        let (um, vn) = if self.full_matrices { (m, n) } else { (k, k) };
        Ok(vec![s, with_last(x, &[m, um], x.dtype), with_last(x, &[vn, n], x.dtype)])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let r = x.ndim();
        let (c, m, n) = (count(x.shape()), x.shape()[r - 2], x.shape()[r - 1]);
        let uv = self.compute_uv.then_some(self.full_matrices);
        let buffers: Vec<Buffer> = on_real!(x, |v: T| {
            let parts = kernels::svd::<T>(v, c, (m, n), uv);
            let mut out = vec![T::wrap(parts.s)];
            if let Some((u, vt)) = parts.uv {
                out.extend([T::wrap(u), T::wrap(vt)]);
            }
            out
        });
        buffers.into_iter().zip(outputs).map(|(b, out)| output(out, b)).collect()
    }

    /// JAX's rule (for the thin factors, or the values alone, as JAX): with
    /// `S' = U^T A' V`, `s' = diag(S')`, and `U'`, `V'` from `S'` and the gaps between the
    /// squared singular values, plus the parts of `A'` outside the spans of `U` and `V` for
    /// non-square `A`.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        if self.compute_uv && self.full_matrices {
            return Err("the derivative of svd with full_matrices=true is not defined (as in \
                        JAX); use full_matrices=false"
                .to_string());
        }
        let a = &primals[0];
        let da = the_tangent(tangents);
        let thin = Svd { full_matrices: false, compute_uv: true };
        let outs = bind(&thin, &[a]);
        let (s, u, vt) = (&outs[0], &outs[1], &outs[2]);
        let (ut, v) = (mt(u), mt(vt));
        let ds_full = mm(&mm(&ut, da), &v);
        let ds = diagonal(&ds_full);
        if !self.compute_uv {
            return Ok((vec![s.clone()], vec![Some(ds)]));
        }
        let (du, dv) = svd_vectors_jvp(s, u, &v, da, &ds_full);
        Ok((outs, vec![Some(ds), Some(du), Some(mt(&dv))]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        batch_matrices(self, args, dims)
    }
}

/// The tangents of `U` and `V` in [`Svd`]'s rule, given `S' = U^T A' V`.
fn svd_vectors_jvp(s: &Array, u: &Array, v: &Array, da: &Array, ds: &Array) -> (Array, Array) {
    let (s_row, s_col) = (as_row(s), as_col(s));
    let k = s.shape()[s.ndim() - 1];
    let eye_k = eye(&[k, k], s.dtype());
    let s_diffs = ops::mul(&ops::add(&s_row, &s_col), &ops::sub(&s_row, &s_col));
    let f = ops::sub(&recip(&ops::add(&s_diffs, &eye_k)), &eye_k);
    let dss = ops::mul(&s_row, ds);
    let sds = ops::mul(&s_col, ds);
    // 1/s with zeros kept zero.
    let s_zeros = ops::convert(&ops::eq(s, &ops::scalar(s, 0.0)), s.dtype());
    let s_inv = ops::sub(&recip(&ops::add(s, &s_zeros)), &s_zeros);
    let du_dv_diag = ops::mul(&ops::scale(&ops::sub(ds, &mt(ds)), 0.5), &diag_embed(&s_inv));
    let mut du = mm(u, &ops::add(&ops::mul(&f, &ops::add(&dss, &mt(&dss))), &du_dv_diag));
    let mut dv = mm(v, &ops::mul(&f, &ops::add(&sds, &mt(&sds))));
    let r = da.ndim();
    let (m, n) = (da.shape()[r - 2], da.shape()[r - 1]);
    if m > n {
        let dav = mm(da, v);
        let outside = ops::sub(&dav, &mm(u, &mm(&mt(u), &dav)));
        du = ops::add(&du, &ops::div(&outside, &s_row));
    }
    if n > m {
        let dahu = mm(&mt(da), u);
        let outside = ops::sub(&dahu, &mm(v, &mm(&mt(v), &dahu)));
        dv = ops::add(&dv, &ops::div(&outside, &s_row));
    }
    (du, dv)
}
