//! The few array operations derivative rules are written with. They bind primitives directly
//! (no NumPy promotion), so a rule's tangents keep the dtype of the values they belong to.

use crate::array::Array;
use crate::dtype::DType;
use crate::jnp;
use crate::primitives::{
    bind1, Aval, BinaryOp, BroadcastInDim, Convert, Reduce, ReduceOp, Reshape, Select, UnaryOp,
};

use super::Tangent;

/// A weak 0-d constant of `like`'s dtype, so it neither promotes nor changes weak flags.
pub(crate) fn scalar(like: &Array, value: f64) -> Array {
    jnp::full_exact(&[], value, like.dtype()).with_weak_type(true)
}

/// Zeros of an aval (an instantiated symbolic zero).
pub(crate) fn zeros(aval: &Aval) -> Array {
    jnp::full_exact(&aval.shape, 0.0, aval.dtype).with_weak_type(aval.weak)
}

/// The tangent, or zeros of `aval` where it is a symbolic zero.
pub(crate) fn instantiate(t: &Tangent, aval: &Aval) -> Array {
    t.clone().unwrap_or_else(|| zeros(aval))
}

pub(crate) fn binary(op: BinaryOp, a: &Array, b: &Array) -> Array {
    bind1(&op, &[a, b])
}

pub(crate) fn add(a: &Array, b: &Array) -> Array {
    binary(BinaryOp::Add, a, b)
}

pub(crate) fn sub(a: &Array, b: &Array) -> Array {
    binary(BinaryOp::Sub, a, b)
}

pub(crate) fn mul(a: &Array, b: &Array) -> Array {
    binary(BinaryOp::Mul, a, b)
}

pub(crate) fn div(a: &Array, b: &Array) -> Array {
    binary(BinaryOp::Div, a, b)
}

pub(crate) fn unary(op: UnaryOp, x: &Array) -> Array {
    bind1(&op, &[x])
}

pub(crate) fn neg(x: &Array) -> Array {
    unary(UnaryOp::Neg, x)
}

/// `x * c` for a Rust constant `c`.
pub(crate) fn scale(x: &Array, c: f64) -> Array {
    mul(x, &scalar(x, c))
}

pub(crate) fn select(pred: &Array, on_true: &Array, on_false: &Array) -> Array {
    bind1(&Select, &[pred, on_true, on_false])
}

/// `a == b` elementwise.
pub(crate) fn eq(a: &Array, b: &Array) -> Array {
    binary(BinaryOp::Eq, a, b)
}

pub(crate) fn convert(x: &Array, dtype: DType) -> Array {
    if x.dtype() == dtype {
        return x.clone();
    }
    bind1(&Convert { dtype, weak: x.is_weak() }, &[x])
}

pub(crate) fn reshape(x: &Array, shape: &[usize]) -> Array {
    if x.shape() == shape {
        return x.clone();
    }
    bind1(&Reshape { new_sizes: shape.to_vec() }, &[x])
}

pub(crate) fn sum_axes(x: &Array, axes: Vec<usize>) -> Array {
    if axes.is_empty() {
        return x.clone();
    }
    bind1(&Reduce { op: ReduceOp::Sum, axes }, &[x])
}

/// `x` broadcast to `shape` by NumPy's rules (trailing axes aligned).
pub(crate) fn broadcast_to(x: &Array, shape: &[usize]) -> Array {
    if x.shape() == shape {
        return x.clone();
    }
    let lead = shape.len() - x.ndim();
    let broadcast_dimensions = (lead..shape.len()).collect();
    bind1(&BroadcastInDim { shape: shape.to_vec(), broadcast_dimensions }, &[x])
}

/// The transpose of NumPy broadcasting: sums `ct` over the axes along which a value of
/// `shape` was broadcast, giving an array of `shape`.
pub(crate) fn unbroadcast(ct: &Array, shape: &[usize]) -> Array {
    if ct.shape() == shape {
        return ct.clone();
    }
    let lead = ct.ndim() - shape.len();
    let axes = (0..ct.ndim())
        .filter(|&ax| ax < lead || (shape[ax - lead] == 1 && ct.shape()[ax] != 1))
        .collect();
    reshape(&sum_axes(ct, axes), shape)
}

/// The sum of two tangents, either of which may be a symbolic zero.
pub(crate) fn add_tangents(a: Tangent, b: Tangent) -> Tangent {
    match (a, b) {
        (Some(a), Some(b)) => Some(add(&a, &b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The jvp of a primitive linear in all its operands: the primitive applied to the tangents.
pub(crate) fn linear_jvp(
    prim: &dyn crate::primitives::Primitive,
    primals: &[Array],
    tangents: &[Tangent],
) -> Result<(Vec<Array>, Vec<Tangent>), String> {
    let refs: Vec<&Array> = primals.iter().collect();
    let outs = crate::primitives::bind(prim, &refs);
    let ts: Vec<Array> =
        tangents.iter().zip(primals).map(|(t, p)| instantiate(t, &p.aval())).collect();
    let trefs: Vec<&Array> = ts.iter().collect();
    let touts = crate::primitives::bind(prim, &trefs).into_iter().map(Some).collect();
    Ok((outs, touts))
}

/// The single output cotangent of a transpose rule, or `None` when it is zero.
pub(crate) fn single_ct(cts: &[Tangent]) -> Option<&Array> {
    cts[0].as_ref()
}

/// Spreads `results` (one per floating-point output, in order) over `outputs`: the tangents
/// of an equation whose tangent equation returns only what can carry one.
pub(crate) fn float_tangents(outputs: &[Array], results: Vec<Array>) -> Vec<Tangent> {
    let mut results = results.into_iter();
    outputs
        .iter()
        .map(|o| if super::differentiable(&o.aval()) { results.next() } else { None })
        .collect()
}

/// The cotangents of the floating-point outputs among `avals`, zeros instantiated: the
/// operands a transposed sub-program takes after the known values.
pub(crate) fn float_cts(cts: &[Tangent], avals: &[Aval]) -> Vec<Array> {
    cts.iter()
        .zip(avals)
        .filter(|(_, a)| super::differentiable(a))
        .map(|(ct, a)| instantiate(ct, a))
        .collect()
}

/// What a transpose rule returns for operands `args` given the linear ones' cotangents in
/// order (`None` for the known ones).
pub(crate) fn linear_cts(args: &[super::LinearArg], results: Vec<Array>) -> Vec<Tangent> {
    let mut results = results.into_iter();
    args.iter().map(|a| if a.is_linear() { results.next() } else { None }).collect()
}
