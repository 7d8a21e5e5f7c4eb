//! Sorting and searching: `sort` (operands reordered together by the first `num_keys` of
//! them, as `lax.sort`), `top_k` (the `k` largest elements along an axis and their indices)
//! and `searchsorted` (a binary search of sorted rows).
//!
//! The orders are JAX's. `sort` and `searchsorted` compare floats by value with every NaN
//! after `+inf` (all NaNs equal) and `-0.0` equal to `0.0`, and the sort is stable: equal keys
//! keep their order, and the elements themselves (signs of zeros, NaN payloads) move
//! unchanged. `top_k` ranks floats by IEEE 754's total order, as XLA's TopK does: a NaN with
//! its sign bit set below `-inf`, `-0.0` below `0.0`; equal elements come in index order.
//!
//! None of them runs on GPUs yet ([`Primitive::device_op`] is `None`, which the backends
//! report naming the primitive).

use std::cmp::Ordering;

use rayon::prelude::*;

use super::{bind, bind1, describe, expect_arity, Aval, Primitive};
use super::{Gather, IndexMode, Iota};
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::exec::cpu::alloc;
use crate::exec::cpu::copy::AxisLayout;
use crate::exec::cpu::float_mode::Flushing;
use crate::shape::contiguous_strides;
use crate::transform::ad::ops;
use crate::transform::ad::Tangent;
use crate::transform::batch::ops::{batched_axis, move_axis, to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// Sort keys below this many elements are ordered on one thread (spreading rows over
/// threads costs more than it saves).
const PARALLEL_ELEMENTS: usize = 1 << 15;

/// `sort` along `dimension` (`lax.sort`): every operand (all of one shape) is reordered by the
/// permutation that sorts the first `num_keys` operands lexicographically, stably. With a
/// second operand of indices it is `argsort`; with the tangents it is the sort's jvp.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sort {
    /// The axis sorted along.
    pub dimension: usize,
    /// How many leading operands are keys (at least 1); the rest follow their order.
    pub num_keys: usize,
}

/// `top_k` along `axis`: the `k` largest elements, largest first (ties in index order), and
/// their `int32` indices. The outputs have the operand's shape with `axis` of extent `k`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TopK {
    pub k: usize,
    pub axis: usize,
}

/// Which insertion point `searchsorted` returns among equal elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Before them: the number of elements less than the query.
    Left,
    /// After them: the number of elements less than or equal to the query.
    Right,
}

/// `searchsorted(sorted, query)`: for each query element, where it would be inserted into
/// its row of `sorted` to keep the row sorted. `sorted` has shape `(B.., n)` and `query`
/// `(B.., Q..)`, the first `batch_dims` axes shared (one row per batch index); the result has
/// the query's shape, in `int32` (`int64` for rows longer than `i32::MAX`). The search is
/// JAX's: `ceil(log2(n + 1))` halvings of `[0, n]`, so unsorted rows give JAX's answer too.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SearchSorted {
    pub side: Side,
    pub batch_dims: usize,
}

/// The index dtype for positions in an axis of extent `n` (JAX's `int_dtype_for_dim`).
pub fn index_dtype(n: usize) -> DType {
    if n <= i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// How floats compare when they become sort keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FloatOrder {
    /// `sort`'s: NaNs after `+inf`, all equal; `-0.0 == 0.0`.
    Sort,
    /// IEEE 754's total order (by sign and bits), `top_k`'s.
    Total,
}

const SIGN: u64 = 1 << 63;

/// A float as an unsigned integer whose order is `order`'s float order.
fn float_key(f: f64, order: FloatOrder) -> u64 {
    if order == FloatOrder::Sort {
        if f.is_nan() {
            return u64::MAX;
        }
        if f == 0.0 {
            return SIGN;
        }
    }
    let bits = f.to_bits();
    if bits & SIGN != 0 {
        !bits
    } else {
        bits | SIGN
    }
}

/// Every element of `x` as a `u64` whose unsigned order is the element order: floats by
/// `order` (widening to f64 is exact), signed integers offset by 2^63, the rest as they are.
fn keys(x: &Array, order: FloatOrder) -> Vec<u64> {
    let dtype = x.dtype();
    crate::with_buffer!(x.buffer(), |v: T| {
        if dtype.is_float() {
            alloc::collect(v.iter().map(|&e| float_key(e.to_f64(), order)))
        } else if dtype.is_signed_int() {
            alloc::collect(v.iter().map(|&e| (e.cast::<i64>() as u64) ^ SIGN))
        } else {
            alloc::collect(v.iter().map(|&e| e.cast::<u64>()))
        }
    })
}

/// The layout of `shape` around `axis`.
fn layout(shape: &[usize], axis: usize) -> AxisLayout {
    AxisLayout {
        outer: shape[..axis].iter().product(),
        n: shape[axis],
        inner: shape[axis + 1..].iter().product(),
    }
}

/// Fills `m` positions per row: row `r` (of `outer * inner`, outer-major) is the run along
/// the axis at `(r / inner, .., r % inner)`, and `fill(at, row)` gets the flat position of
/// the row's element `j` as `at(j)`. Rows are spread over threads when there are many.
fn per_row(
    l: AxisLayout,
    m: usize,
    fill: impl Fn(&dyn Fn(usize) -> usize, &mut [usize]) + Sync,
) -> Vec<usize> {
    let AxisLayout { outer, n, inner } = l;
    let mut out = alloc::filled(outer * inner * m, 0usize);
    if m == 0 {
        return out;
    }
    let row = |(r, dst): (usize, &mut [usize])| {
        let (o, i) = (r / inner, r % inner);
        fill(&|j| (o * n + j) * inner + i, dst);
    };
    if outer * n * inner >= PARALLEL_ELEMENTS {
        out.par_chunks_mut(m).enumerate().flushing().for_each(row);
    } else {
        out.chunks_mut(m).enumerate().for_each(row);
    }
    out
}

/// For each row along the axis, the positions in sorted order of the `keys` (compared
/// lexicographically), equal keys in position order.
fn sort_permutation(keys: &[Vec<u64>], l: AxisLayout) -> Vec<usize> {
    per_row(l, l.n, |at, row| {
        if let [k] = keys {
            // Distinct positions break ties, so an unstable sort of pairs is a stable sort.
            let mut pairs = alloc::collect((0..row.len()).map(|j| (k[at(j)], j)));
            pairs.sort_unstable();
            row.iter_mut().zip(pairs).for_each(|(d, (_, j))| *d = j);
        } else {
            row.iter_mut().enumerate().for_each(|(j, d)| *d = j);
            let cmp = |&a: &usize, &b: &usize| {
                let (a, b) = (at(a), at(b));
                keys.iter().map(|k| k[a].cmp(&k[b])).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
            };
            row.sort_by(cmp);
        }
    })
}

/// For each row along the axis, the positions of its `k` largest keys, largest first, equal
/// keys in position order.
fn top_positions(keys: &[u64], l: AxisLayout, k: usize) -> Vec<usize> {
    per_row(l, k, |at, row| {
        // Complemented keys sort the largest first; positions break ties.
        let mut pairs = alloc::collect((0..l.n).map(|j| (!keys[at(j)], j)));
        if k < pairs.len() {
            pairs.select_nth_unstable(k);
            pairs.truncate(k);
        }
        pairs.sort_unstable();
        row.iter_mut().zip(pairs).for_each(|(d, (_, j))| *d = j);
    })
}

/// The elements of `v` (laid out as `l`) at `picks` (`m` positions per row, as [`per_row`]
/// lays them out), in a `(outer, m, inner)` result.
fn take_rows<T: Element>(v: &[T], picks: &[usize], l: AxisLayout, m: usize) -> Vec<T> {
    let AxisLayout { outer, n, inner } = l;
    // An empty result may still have a huge extent elsewhere: no loop over it.
    if outer == 0 || m == 0 || inner == 0 {
        return Vec::new();
    }
    let mut out = alloc::with_capacity(outer * m * inner);
    for o in 0..outer {
        for t in 0..m {
            for i in 0..inner {
                let j = picks[(o * inner + i) * m + t];
                out.push(v[(o * n + j) * inner + i]);
            }
        }
    }
    out
}

/// [`take_rows`] on any buffer.
fn take_buffer(b: &Buffer, picks: &[usize], l: AxisLayout, m: usize) -> Buffer {
    crate::with_buffer!(b, |v: T| T::wrap(take_rows(v, picks, l, m)))
}

/// The positions themselves in a `(outer, m, inner)` array of `dtype` (`int32` or `int64`).
fn positions_buffer(picks: &[usize], l: AxisLayout, m: usize, dtype: DType) -> Buffer {
    let AxisLayout { outer, inner, .. } = l;
    let outer = if m == 0 || inner == 0 { 0 } else { outer };
    let len = outer * m * inner;
    let ordered = (0..outer)
        .flat_map(|o| (0..m).flat_map(move |t| (0..inner).map(move |i| (o * inner + i) * m + t)))
        .map(|p| picks[p]);
    match dtype {
        DType::I64 => Buffer::I64(alloc::collect_counted(ordered.map(|j| j as i64), len)),
        _ => Buffer::I32(alloc::collect_counted(ordered.map(|j| j as i32), len)),
    }
}

/// `t`'s elements at `idx` along `axis` (`idx` has `t`'s rank and shape except along
/// `axis`): the tangent of a reordering, as one gather from the flattened `t` (whose transpose
/// is one scatter-add), so it differentiates and batches like any gather.
fn take_along(t: &Array, idx: &Array, axis: usize) -> Array {
    let dtype = index_dtype(t.size());
    let strides = contiguous_strides(t.shape());
    let mut flat = ops::scale(&ops::convert(idx, dtype), strides[axis] as f64);
    for d in (0..t.ndim()).filter(|&d| d != axis && t.shape()[d] > 1) {
        let coord = bind1(&Iota { dtype, shape: idx.shape().to_vec(), dimension: d }, &[]);
        flat = ops::add(&flat, &ops::scale(&coord, strides[d] as f64));
    }
    let flat_t = ops::reshape(t, &[t.size()]);
    bind1(&Gather { axis: 0, mode: IndexMode::Clip }, &[&flat_t, &flat])
}

/// Checks that `axis` indexes an operand of rank `rank`.
fn check_axis(what: &str, axis: usize, x: &Aval) -> Result<(), String> {
    if axis < x.shape.len() {
        Ok(())
    } else {
        Err(format!(
            "{what} {axis} is out of bounds for an operand of rank {} ({x})",
            x.shape.len()
        ))
    }
}

impl Primitive for Sort {
    fn name(&self) -> String {
        "sort".to_string()
    }

    fn params(&self) -> String {
        format!("dimension={} num_keys={}", self.dimension, self.num_keys)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let Some(first) = inputs.first() else {
            return Err("expected at least one operand".to_string());
        };
        if inputs.iter().any(|a| a.shape != first.shape) {
            return Err(format!("operands must have equal shapes, got {}", describe(inputs)));
        }
        if self.num_keys == 0 || self.num_keys > inputs.len() {
            return Err(format!(
                "num_keys must be between 1 and the number of operands ({}), got {}",
                inputs.len(),
                self.num_keys
            ));
        }
        check_axis("dimension", self.dimension, first)?;
        if let Some(k) = inputs[..self.num_keys].iter().find(|k| k.dtype.is_complex()) {
            return Err(format!("sort keys must be real (complex numbers have no order), got {k}"));
        }
        Ok(inputs.to_vec())
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let l = layout(inputs[0].shape(), self.dimension);
        let keys: Vec<Vec<u64>> =
            inputs[..self.num_keys].iter().map(|x| keys(x, FloatOrder::Sort)).collect();
        let perm = sort_permutation(&keys, l);
        inputs
            .iter()
            .zip(outputs)
            .map(|(x, out)| {
                Array::from_buffer(&out.shape, take_buffer(x.buffer(), &perm, l, l.n), out.weak)
            })
            .collect()
    }

    /// JAX's rule: sort the operands with their positions alongside, then gather every
    /// nonzero tangent by the positions.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let shape = primals[0].shape().to_vec();
        let dtype = index_dtype(shape[self.dimension]);
        let iota = bind1(&Iota { dtype, shape, dimension: self.dimension }, &[]);
        let mut operands: Vec<&Array> = primals.iter().collect();
        operands.push(&iota);
        let mut sorted = bind(self, &operands);
        let perm = sorted.pop().expect("the positions are sorted along");
        let out_tangents = tangents
            .iter()
            .map(|t| t.as_ref().map(|t| take_along(t, &perm, self.dimension)))
            .collect();
        Ok((sorted, out_tangents))
    }

    /// Every operand gets the batch axis of the first batched one (unbatched ones are
    /// broadcast), and the sort moves past it when it comes first.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let d = dims.iter().find_map(|&d| d).expect("batching rules run with a batched operand");
        let moved: Vec<Array> = args
            .iter()
            .zip(dims)
            .map(|(x, &dim)| match dim {
                Some(e) => move_axis(x, e, d),
                None => to_dim(x, None, d, axis.size),
            })
            .collect();
        let sort = Sort { dimension: batched_axis(self.dimension, d), num_keys: self.num_keys };
        let refs: Vec<&Array> = moved.iter().collect();
        Ok((bind(&sort, &refs), vec![Some(d); args.len()]))
    }
}

impl Primitive for TopK {
    fn name(&self) -> String {
        "top_k".to_string()
    }

    fn params(&self) -> String {
        format!("k={} axis={}", self.k, self.axis)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        if x.shape.is_empty() {
            return Err(format!("the operand must have at least one axis, got {x}"));
        }
        check_axis("axis", self.axis, x)?;
        if x.dtype.is_complex() {
            return Err(format!(
                "the operand must be real (complex numbers have no order), got {x}"
            ));
        }
        let n = x.shape[self.axis];
        if self.k > n {
            return Err(format!(
                "k = {} is larger than the extent {n} of axis {} of the operand {x}",
                self.k, self.axis
            ));
        }
        if n > i32::MAX as usize + 1 {
            return Err(format!("axis {} of {x} is too long for int32 indices", self.axis));
        }
        let mut shape = x.shape.clone();
        shape[self.axis] = self.k;
        Ok(vec![
            Aval { shape: shape.clone(), dtype: x.dtype, weak: x.weak },
            Aval { shape, dtype: DType::I32, weak: false },
        ])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let l = layout(x.shape(), self.axis);
        let picks = top_positions(&keys(x, FloatOrder::Total), l, self.k);
        let values = take_buffer(x.buffer(), &picks, l, self.k);
        let indices = positions_buffer(&picks, l, self.k, DType::I32);
        vec![
            Array::from_buffer(&outputs[0].shape, values, outputs[0].weak),
            Array::from_buffer(&outputs[1].shape, indices, false),
        ]
    }

    /// The values' tangent is the operand's tangent at the indices (JAX's rule).
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let outs = bind(self, &[&primals[0]]);
        let t = tangents[0].as_ref().expect("jvp rules run with a nonzero tangent");
        let tv = take_along(t, &outs[1], self.axis);
        Ok((outs, vec![Some(tv), None]))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let top = TopK { k: self.k, axis: batched_axis(self.axis, d) };
        Ok((bind(&top, &[&args[0]]), vec![Some(d), Some(d)]))
    }
}

impl SearchSorted {
    /// The insertion point of `q` into the sorted keys `a`, by JAX's fixed number of halvings.
    fn search(&self, a: &[u64], q: u64) -> usize {
        let n = a.len();
        let (mut low, mut high) = (0, n);
        // ceil(log2(n + 1)) levels: the bit length of n.
        for _ in 0..(usize::BITS - n.leading_zeros()) {
            let mid = low + (high - low) / 2;
            // JAX reads a[mid] with clamped indexing.
            let m = a[mid.min(n - 1)];
            let go_left = match self.side {
                Side::Left => q <= m,
                Side::Right => q < m,
            };
            if go_left {
                high = mid;
            } else {
                low = mid;
            }
        }
        high
    }
}

impl Primitive for SearchSorted {
    fn name(&self) -> String {
        "searchsorted".to_string()
    }

    fn params(&self) -> String {
        let side = match self.side {
            Side::Left => "left",
            Side::Right => "right",
        };
        format!("side={side} batch_dims={}", self.batch_dims)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (a, q) = (&inputs[0], &inputs[1]);
        let b = self.batch_dims;
        if a.shape.len() != b + 1 {
            return Err(format!(
                "the sorted operand must have {} axes ({b} batch axes and the sorted one), got {a}",
                b + 1
            ));
        }
        if q.shape.len() < b || q.shape[..b] != a.shape[..b] {
            return Err(format!(
                "the queries must start with the {b} batch axes of the sorted operand, got {}",
                describe(inputs)
            ));
        }
        if a.dtype != q.dtype {
            return Err(format!("the operands must have one dtype, got {}", describe(inputs)));
        }
        if a.dtype.is_complex() {
            return Err(format!(
                "the operands must be real (complex numbers have no order), got {}",
                describe(inputs)
            ));
        }
        let dtype = index_dtype(a.shape[b]);
        Ok(vec![Aval { shape: q.shape.clone(), dtype, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (a, q) = (inputs[0], inputs[1]);
        let n = a.shape()[self.batch_dims];
        let (ka, kq) = (keys(a, FloatOrder::Sort), keys(q, FloatOrder::Sort));
        let rows = a.size().checked_div(n).unwrap_or(0);
        let per_row = kq.len() / rows.max(1);
        let found = alloc::collect(kq.iter().enumerate().map(|(p, &k)| {
            if n == 0 {
                0
            } else {
                self.search(&ka[p / per_row * n..][..n], k)
            }
        }));
        let out = &outputs[0];
        let buffer = match out.dtype {
            DType::I64 => Buffer::I64(alloc::collect(found.iter().map(|&j| j as i64))),
            _ => Buffer::I32(alloc::collect(found.iter().map(|&j| j as i32))),
        };
        vec![Array::from_buffer(&out.shape, buffer, false)]
    }

    /// A batched sorted operand moves its batch axis in front of the shared ones, and the
    /// queries get it there too; batched queries into a shared sorted operand only need
    /// their batch axis among their own axes.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let b = self.batch_dims;
        let (a, q) = (&args[0], &args[1]);
        match (dims[0], dims[1]) {
            (None, Some(e)) => {
                let q = move_axis(q, e, e.max(b));
                Ok((bind(self, &[a, &q]), vec![Some(e.max(b))]))
            }
            (da, dq) => {
                let a = to_dim(a, da, 0, axis.size);
                let q = to_dim(q, dq, 0, axis.size);
                let search = SearchSorted { side: self.side, batch_dims: b + 1 };
                Ok((bind(&search, &[&a, &q]), vec![Some(0)]))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Array {
        Array::from_shape_vec([v.len()], v.to_vec())
    }

    #[test]
    fn sort_orders_nans_last_and_keeps_zero_signs_in_place() {
        let x = f32s(&[3.0, f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, -f32::NAN, -0.0]);
        let iota = Array::from_shape_vec([7], (0..7).collect::<Vec<i32>>());
        let out = bind(&Sort { dimension: 0, num_keys: 1 }, &[&x, &iota]);
        assert_eq!(out[1].to_vec::<i32>().unwrap(), vec![4, 2, 3, 6, 0, 1, 5]);
        let v = out[0].to_vec::<f32>().unwrap();
        assert!(v[1].is_sign_negative() && v[2].is_sign_positive() && v[3].is_sign_negative());
    }

    #[test]
    fn several_keys_sort_lexicographically_along_any_axis() {
        let a = Array::from_shape_vec([3, 2], vec![1i32, 0, 0, 0, 1, 0]);
        let b = Array::from_shape_vec([3, 2], vec![5u32, 1, 7, 2, 4, 0]);
        let out = bind(&Sort { dimension: 0, num_keys: 2 }, &[&a, &b]);
        assert_eq!(out[0].to_vec::<i32>().unwrap(), vec![0, 0, 1, 0, 1, 0]);
        assert_eq!(out[1].to_vec::<u32>().unwrap(), vec![7, 0, 4, 1, 5, 2]);
    }

    #[test]
    fn top_k_uses_the_total_order() {
        let x = f32s(&[0.0, -f32::NAN, 2.0, -0.0, f32::NAN, 2.0]);
        let out = bind(&TopK { k: 4, axis: 0 }, &[&x]);
        assert_eq!(out[1].to_vec::<i32>().unwrap(), vec![4, 2, 5, 0]);
    }

    #[test]
    fn searchsorted_counts_like_jax() {
        let a = f32s(&[0.0, 1.0, 1.0, 2.0, f32::NAN]);
        let q = f32s(&[-1.0, 1.0, 1.5, f32::NAN, -0.0, 9.0]);
        let left = bind(&SearchSorted { side: Side::Left, batch_dims: 0 }, &[&a, &q]);
        let right = bind(&SearchSorted { side: Side::Right, batch_dims: 0 }, &[&a, &q]);
        assert_eq!(left[0].to_vec::<i32>().unwrap(), vec![0, 1, 3, 4, 0, 4]);
        assert_eq!(right[0].to_vec::<i32>().unwrap(), vec![0, 3, 3, 5, 1, 4]);
    }
}
