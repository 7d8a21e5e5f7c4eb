//! Matrix products: `dot`, `matmul`, `outer`, `tensordot` and `einsum`, all lowered to the
//! `dot_general` primitive (also at the top of [`jnp`](crate::jnp)), for real and complex
//! operands (complex products do not conjugate, as in NumPy); and the rest of
//! `jax.numpy.linalg`: factorizations (`cholesky`, `eigh`, `qr`, `svd`), linear systems
//! (`solve`, `inv`, `det`, `slogdet`, `lstsq`, `pinv`, `matrix_power`) and `norm`, on stacks of
//! `float32`/`float64` matrices (`[..., m, n]`), computed on CPU. Sign conventions of
//! eigenvectors and singular vectors are arbitrary, as LAPACK's.

mod factor;
mod norm;
mod solve;

pub use factor::{cholesky, eigh, eigvalsh, qr, qr_complete, svd, svdvals};
pub(crate) use factor::{float_matrices, square_matrices};
pub use norm::{norm, norm_with, NormOrd};
pub(crate) use solve::permutation_matrix;
pub use solve::{det, inv, lstsq, matrix_power, pinv, slogdet, solve, Lstsq};

use super::{broadcast_to, promote_all_for, sum_axes, transpose};
use crate::primitives::{bind1, DotGeneral};
use crate::shape::broadcast_shapes;
use crate::shape::ShapeDisplay;
use crate::Array;

#[track_caller]
fn dot_general(
    op: &str,
    a: &Array,
    b: &Array,
    contract: (&[usize], &[usize]),
    batch: (&[usize], &[usize]),
) -> Array {
    let ops = promote_all_for(op, &[a.clone(), b.clone()]);
    let prim = DotGeneral {
        lhs_contract: contract.0.to_vec(),
        rhs_contract: contract.1.to_vec(),
        lhs_batch: batch.0.to_vec(),
        rhs_batch: batch.1.to_vec(),
    };
    bind1(&prim, &[&ops[0], &ops[1]])
}

/// NumPy's `dot`: scalars multiply, vectors take the inner product, and otherwise the last
/// axis of `a` is contracted with the second-to-last of `b` (the last, if `b` is 1-D).
///
/// ```
/// use rjax_runtime::jnp;
/// let v = jnp::array([1.0f32, -1.0, 2.0]);
/// assert_eq!(jnp::dot(&v, &v).item::<f32>().unwrap(), 6.0);
/// ```
#[track_caller]
pub fn dot(a: &Array, b: &Array) -> Array {
    if a.ndim() == 0 || b.ndim() == 0 {
        return super::multiply(a, b);
    }
    let b_axis = if b.ndim() == 1 { 0 } else { b.ndim() - 2 };
    check_contracted("dot", a, a.ndim() - 1, b, b_axis);
    dot_general("dot", a, b, (&[a.ndim() - 1], &[b_axis]), (&[], &[]))
}

/// NumPy's `matmul` (`a @ b`): matrix products over the last two axes, with the leading
/// (batch) axes broadcast; a 1-D operand is a vector whose axis is removed from the result.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::ones([4, 2, 3]);
/// let b = jnp::ones([3, 5]);
/// assert_eq!(jnp::matmul(&a, &b).shape(), &[4, 2, 5]);
/// ```
#[track_caller]
pub fn matmul(a: &Array, b: &Array) -> Array {
    if a.ndim() == 0 || b.ndim() == 0 {
        panic!(
            "matmul: operands must have at least one axis, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        );
    }
    let a2 = if a.ndim() == 1 { a.reshape([1, a.shape()[0] as isize]) } else { a.clone() };
    let b2 = if b.ndim() == 1 { b.reshape([b.shape()[0] as isize, 1]) } else { b.clone() };
    let (ra, rb) = (a2.ndim(), b2.ndim());
    check_contracted("matmul", &a2, ra - 1, &b2, rb - 2);
    let Some(batch) = broadcast_shapes(&a2.shape()[..ra - 2], &b2.shape()[..rb - 2]) else {
        panic!(
            "matmul: batch dimensions do not broadcast: shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        )
    };
    let full = |x: &Array, r: usize| {
        let mut shape = batch.clone();
        shape.extend_from_slice(&x.shape()[r - 2..]);
        if x.shape() == &shape[..] {
            x.clone()
        } else {
            broadcast_to(x, &shape)
        }
    };
    let (a3, b3) = (full(&a2, ra), full(&b2, rb));
    let nb = batch.len();
    let batch_axes: Vec<usize> = (0..nb).collect();
    let out = dot_general("matmul", &a3, &b3, (&[nb + 1], &[nb]), (&batch_axes, &batch_axes));
    // Drop the axes that 1-D operands were given.
    let mut shape: Vec<isize> = out.shape().iter().map(|&d| d as isize).collect();
    if b.ndim() == 1 {
        shape.pop();
    }
    if a.ndim() == 1 {
        shape.remove(shape.len() - if b.ndim() == 1 { 1 } else { 2 });
    }
    out.reshape(shape)
}

#[track_caller]
fn check_contracted(op: &str, a: &Array, a_axis: usize, b: &Array, b_axis: usize) {
    if a.shape()[a_axis] != b.shape()[b_axis] {
        panic!(
            "{op}: contracted dimensions differ: shapes {} and {} (axis {a_axis} has {}, axis {b_axis} has {})",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape()),
            a.shape()[a_axis],
            b.shape()[b_axis]
        );
    }
}

/// The outer product of the flattened operands: `out[i, j] = a[i] * b[j]`.
#[track_caller]
pub fn outer(a: &Array, b: &Array) -> Array {
    let a = a.reshape([-1, 1]);
    let b = b.reshape([1, -1]);
    super::multiply(&a, &b)
}

/// The inner product over the last axes of `a` and `b` (`jnp.inner`): the result holds
/// `a`'s other axes, then `b`'s; a 0-d operand scales the other.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::array(&[1.0f32, 2.0]);
/// assert_eq!(jnp::inner(&a, &a).item::<f32>().unwrap(), 5.0);
/// ```
#[track_caller]
pub fn inner(a: &Array, b: &Array) -> Array {
    if a.ndim() == 0 || b.ndim() == 0 {
        return super::multiply(a, b);
    }
    tensordot(a, b, ([-1], [-1]))
}

/// The dot product of the flattened operands, the first conjugated (`jnp.vdot`).
#[track_caller]
pub fn vdot(a: &Array, b: &Array) -> Array {
    if a.size() != b.size() {
        panic!(
            "vdot: the operands must have the same number of elements, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        );
    }
    let a = if a.dtype().is_complex() { super::conj(a) } else { a.clone() };
    dot(&a.ravel(), &b.ravel())
}

/// The Kronecker product (`jnp.kron`): blocks of `b` scaled by each element of `a`; the
/// operand with fewer axes gets leading axes of length 1 first.
///
/// ```
/// use rjax_runtime::jnp;
/// let k = jnp::kron(&jnp::array(&[1, 10]), &jnp::array(&[1, 2]));
/// assert_eq!(k.to_vec::<i32>().unwrap(), vec![1, 2, 10, 20]);
/// ```
#[track_caller]
pub fn kron(a: &Array, b: &Array) -> Array {
    let ops = super::promote_all(&[a.clone(), b.clone()]);
    let rank = a.ndim().max(b.ndim());
    let lead = |x: &Array| {
        let mut shape = vec![1; rank - x.ndim()];
        shape.extend_from_slice(x.shape());
        shape
    };
    let (sa, sb) = (lead(&ops[0]), lead(&ops[1]));
    // a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product interleaves the axes.
    let spread = |shape: &[usize], first: bool| -> Vec<usize> {
        shape.iter().flat_map(|&d| if first { [d, 1] } else { [1, d] }).collect()
    };
    let product = super::multiply(
        ops[0].reshape(spread(&sa, true).as_slice()),
        ops[1].reshape(spread(&sb, false).as_slice()),
    );
    let out: Vec<usize> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
    product.reshape(out.as_slice())
}

/// The cross product of vectors along the last axes of `a` and `b`, broadcasting the others
/// (`jnp.cross`). Vectors have 3 components, or 2 (the third taken as zero); two 2-vectors
/// give the scalar `z` component.
///
/// ```
/// use rjax_runtime::jnp;
/// let c = jnp::cross(&jnp::array(&[1, 0, 0]), &jnp::array(&[0, 1, 0]));
/// assert_eq!(c.to_vec::<i32>().unwrap(), vec![0, 0, 1]);
/// ```
#[track_caller]
pub fn cross(a: &Array, b: &Array) -> Array {
    let components = |x: &Array| x.shape().last().copied().filter(|&n| n == 2 || n == 3);
    let (Some(na), Some(nb)) = (components(a), components(b)) else {
        panic!(
            "cross: the last axes must have 2 or 3 components, got shapes {} and {}",
            ShapeDisplay(a.shape()),
            ShapeDisplay(b.shape())
        );
    };
    let ops = super::promote_all(&[a.clone(), b.clone()]);
    let part = |x: &Array, n: usize, i: usize| -> Option<Array> {
        (i < n).then(|| super::slice_axis(x, x.ndim() - 1, i, i + 1).squeeze(-1))
    };
    let (a0, a1, a2) = (part(&ops[0], na, 0), part(&ops[0], na, 1), part(&ops[0], na, 2));
    let (b0, b1, b2) = (part(&ops[1], nb, 0), part(&ops[1], nb, 1), part(&ops[1], nb, 2));
    let (a0, a1, b0, b1) = (a0.unwrap(), a1.unwrap(), b0.unwrap(), b1.unwrap());
    let z = super::subtract(super::multiply(&a0, &b1), super::multiply(&a1, &b0));
    if na == 2 && nb == 2 {
        return z;
    }
    // A missing third component is zero, so its products drop out.
    let times = |x: &Array, y: &Option<Array>| y.as_ref().map(|y| super::multiply(x, y));
    let minus = |p: Option<Array>, q: Option<Array>| match (p, q) {
        (Some(p), Some(q)) => super::subtract(&p, &q),
        (Some(p), None) => p,
        (None, Some(q)) => super::negative(&q),
        (None, None) => unreachable!("one operand has a third component"),
    };
    let x = minus(times(&a1, &b2), a2.as_ref().map(|a2| super::multiply(a2, &b1)));
    let y = minus(a2.as_ref().map(|a2| super::multiply(a2, &b0)), times(&a0, &b2));
    // x, y and z are products of the same broadcast operands, so their shapes broadcast.
    let shape = broadcast_shapes(x.shape(), y.shape())
        .and_then(|s| broadcast_shapes(&s, z.shape()))
        .expect("components of one broadcast");
    let parts: Vec<Array> = [x, y, z].iter().map(|p| broadcast_to(p, shape.as_slice())).collect();
    super::stack(&parts, -1)
}

/// How [`tensordot`] pairs axes: the last `n` of `a` with the first `n` of `b`, or explicit
/// lists (negative axes count from the end).
pub enum TensordotAxes {
    Count(usize),
    Pairs(Vec<isize>, Vec<isize>),
}

impl From<usize> for TensordotAxes {
    fn from(n: usize) -> Self {
        TensordotAxes::Count(n)
    }
}

impl From<i32> for TensordotAxes {
    fn from(n: i32) -> Self {
        TensordotAxes::Count(n.max(0) as usize)
    }
}

impl<const N: usize> From<([isize; N], [isize; N])> for TensordotAxes {
    fn from((a, b): ([isize; N], [isize; N])) -> Self {
        TensordotAxes::Pairs(a.to_vec(), b.to_vec())
    }
}

/// Contracts `a` and `b` over paired axes (`jnp.tensordot`); the result holds `a`'s remaining
/// axes, then `b`'s.
#[track_caller]
pub fn tensordot(a: &Array, b: &Array, axes: impl Into<TensordotAxes>) -> Array {
    let (la, lb): (Vec<usize>, Vec<usize>) = match axes.into() {
        TensordotAxes::Count(n) => {
            if n > a.ndim() || n > b.ndim() {
                panic!(
                    "tensordot: cannot contract {n} axes of shapes {} and {}",
                    ShapeDisplay(a.shape()),
                    ShapeDisplay(b.shape())
                );
            }
            ((a.ndim() - n..a.ndim()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(x, y) => (
            x.iter().map(|&ax| crate::shape::normalize_axis("tensordot", ax, a.ndim())).collect(),
            y.iter().map(|&ax| crate::shape::normalize_axis("tensordot", ax, b.ndim())).collect(),
        ),
    };
    for (&x, &y) in la.iter().zip(&lb) {
        check_contracted("tensordot", a, x, b, y);
    }
    dot_general("tensordot", a, b, (&la, &lb), (&[], &[]))
}

/// Einstein summation over one or two operands (`jnp.einsum`), e.g. `"ij,jk->ik"`,
/// `"bij,bjk->bik"`, `"ij->ji"`, `"ij,ij->"`. Without `->` the output takes the letters that
/// appear once, in alphabetical order. Letters repeated within one operand (diagonals) are
/// not supported.
///
/// A letter names one size everywhere it appears, except that an axis of length 1 broadcasts
/// against a longer one, as in JAX. The spec is checked before any computation: a malformed
/// spec (an operand count or letter count that does not match the operands, an output letter
/// repeated or missing from the inputs, a letter bound to two different sizes) panics with a
/// message that starts `einsum:` and names the letter and the sizes.
///
/// ```
/// use rjax_runtime::jnp;
/// let a = jnp::ones([2, 3]);
/// let b = jnp::ones([3, 4]);
/// assert_eq!(jnp::einsum("ij,jk->ik", &[&a, &b]).shape(), &[2, 4]);
/// ```
#[track_caller]
pub fn einsum(spec: &str, operands: &[&Array]) -> Array {
    let (inputs, output) = parse_einsum(spec, operands);
    let sizes = letter_sizes(spec, &inputs, operands);
    // Axes of length 1 whose letter is longer elsewhere are broadcast up front, so the products
    // below see one size per letter.
    let operands: Vec<Array> = inputs
        .iter()
        .zip(operands)
        .map(|(letters, x)| {
            let want: Vec<usize> = letters.iter().map(|c| size_of(&sizes, *c)).collect();
            if x.shape() == want.as_slice() {
                (*x).clone()
            } else {
                broadcast_to(x, want)
            }
        })
        .collect();
    match &operands[..] {
        [x] => einsum_one(&inputs[0], &output, x),
        [a, b] => einsum_two((&inputs[0], a), (&inputs[1], b), &output),
        _ => panic!("einsum: {spec:?} needs one or two operands, got {}", operands.len()),
    }
}

/// The size each letter of an einsum stands for: the same wherever it appears, except that a
/// length of 1 gives way to a longer one.
#[track_caller]
fn letter_sizes(spec: &str, inputs: &[Vec<char>], operands: &[&Array]) -> Vec<(char, usize)> {
    // (letter, size, where it was first bound with that size)
    let mut bound: Vec<(char, usize, usize)> = Vec::new();
    for (i, (letters, x)) in inputs.iter().zip(operands).enumerate() {
        for (&c, &n) in letters.iter().zip(x.shape()) {
            match bound.iter_mut().find(|(b, _, _)| *b == c) {
                None => bound.push((c, n, i)),
                Some(entry) if entry.1 == n || n == 1 => {}
                Some(entry) if entry.1 == 1 => *entry = (c, n, i),
                Some(&mut (_, m, j)) => {
                    let term = |k: usize| inputs[k].iter().collect::<String>();
                    panic!(
                        "einsum: {spec:?}: letter {c} has size {m} in operand {j} ({}, shape {}) \
                         but size {n} in operand {i} ({}, shape {})",
                        term(j),
                        ShapeDisplay(operands[j].shape()),
                        term(i),
                        ShapeDisplay(x.shape())
                    );
                }
            }
        }
    }
    bound.into_iter().map(|(c, n, _)| (c, n)).collect()
}

fn size_of(sizes: &[(char, usize)], c: char) -> usize {
    sizes.iter().find(|(b, _)| *b == c).expect("every input letter has a size").1
}

#[track_caller]
fn parse_einsum(spec: &str, operands: &[&Array]) -> (Vec<Vec<char>>, Vec<char>) {
    let spec: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, out) = match spec.split_once("->") {
        Some((l, o)) => (l.to_string(), Some(o.chars().collect::<Vec<char>>())),
        None => (spec.clone(), None),
    };
    let inputs: Vec<Vec<char>> = lhs.split(',').map(|s| s.chars().collect()).collect();
    if inputs.len() != operands.len() {
        panic!(
            "einsum: {spec:?} names {} operands but {} were given",
            inputs.len(),
            operands.len()
        );
    }
    for (letters, x) in inputs.iter().zip(operands) {
        if letters.iter().any(|c| !c.is_ascii_alphabetic()) {
            panic!("einsum: {spec:?}: only letters may name axes");
        }
        if letters.len() != x.ndim() {
            panic!(
                "einsum: {spec:?}: operand {} has {} letters for an array of shape {}",
                letters.iter().collect::<String>(),
                letters.len(),
                ShapeDisplay(x.shape())
            );
        }
        let mut sorted = letters.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            panic!("einsum: {spec:?}: a letter repeated within one operand (a diagonal) is not supported");
        }
    }
    let output = out.unwrap_or_else(|| {
        let all: Vec<char> = inputs.concat();
        let mut once: Vec<char> =
            all.iter().copied().filter(|c| all.iter().filter(|d| *d == c).count() == 1).collect();
        once.sort_unstable();
        once
    });
    for (k, c) in output.iter().enumerate() {
        if !c.is_ascii_alphabetic() {
            panic!("einsum: {spec:?}: only letters may name axes");
        }
        if output[..k].contains(c) {
            let out: String = output.iter().collect();
            panic!(
                "einsum: {spec:?}: output letter {c} appears more than once in the output {out}"
            );
        }
        if !inputs.iter().any(|i| i.contains(c)) {
            panic!("einsum: {spec:?}: output letter {c} appears in no operand");
        }
    }
    (inputs, output)
}

/// Sums away the letters of `x` not in `keep`, returning the rest and their letters.
fn sum_out(x: &Array, letters: &[char], keep: impl Fn(char) -> bool) -> (Array, Vec<char>) {
    let gone: Vec<usize> = (0..letters.len()).filter(|&i| !keep(letters[i])).collect();
    if gone.is_empty() {
        return (x.clone(), letters.to_vec());
    }
    let rest = letters.iter().copied().filter(|&c| keep(c)).collect();
    (sum_axes(x, gone, false), rest)
}

/// Permutes `x`, whose axes are named by `have`, into the order `want`.
fn arrange(x: &Array, have: &[char], want: &[char]) -> Array {
    if have == want {
        return x.clone();
    }
    let perm: Vec<isize> =
        want.iter().map(|c| have.iter().position(|h| h == c).unwrap() as isize).collect();
    transpose(x, Some(&perm))
}

fn einsum_one(letters: &[char], output: &[char], x: &Array) -> Array {
    let (x, have) = sum_out(x, letters, |c| output.contains(&c));
    arrange(&x, &have, output)
}

#[track_caller]
fn einsum_two(a: (&[char], &Array), b: (&[char], &Array), output: &[char]) -> Array {
    // A letter only one operand has, and the output lacks, is summed away first.
    let (a_arr, la) = sum_out(a.1, a.0, |c| output.contains(&c) || b.0.contains(&c));
    let (b_arr, lb) = sum_out(b.1, b.0, |c| output.contains(&c) || la.contains(&c));
    let shared: Vec<char> = la.iter().copied().filter(|c| lb.contains(c)).collect();
    let batch: Vec<char> = shared.iter().copied().filter(|c| output.contains(c)).collect();
    let contract: Vec<char> = shared.iter().copied().filter(|c| !output.contains(c)).collect();
    let pos = |letters: &[char], set: &[char]| -> Vec<usize> {
        set.iter().map(|c| letters.iter().position(|l| l == c).unwrap()).collect()
    };
    let out = dot_general(
        "einsum",
        &a_arr,
        &b_arr,
        (&pos(&la, &contract), &pos(&lb, &contract)),
        (&pos(&la, &batch), &pos(&lb, &batch)),
    );
    let free = |letters: &[char]| -> Vec<char> {
        letters.iter().copied().filter(|c| !shared.contains(c)).collect()
    };
    let have: Vec<char> = [batch.clone(), free(&la), free(&lb)].concat();
    arrange(&out, &have, output)
}

impl Array {
    /// [`dot`] as a method: `x.dot(&w)`.
    #[track_caller]
    pub fn dot(&self, other: &Array) -> Array {
        dot(self, other)
    }

    /// [`matmul`] as a method: `x.matmul(&w)`.
    #[track_caller]
    pub fn matmul(&self, other: &Array) -> Array {
        matmul(self, other)
    }
}
