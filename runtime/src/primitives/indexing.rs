//! Indexing primitives: `gather` and the `scatter` family along one axis with an integer index
//! array, with JAX's out-of-bounds conventions.
//!
//! Indices are normalized as `jnp` indexing does: a negative index `i` means `i + n` (once;
//! `-n - 1` stays out of bounds). What happens to indices still out of bounds is the primitive's
//! [`IndexMode`]: gathers clamp them or return a fill value, scatters clamp them or drop their
//! updates. Indexing never raises on a bad index, as XLA cannot.

use super::binary::Scalar;
use super::{bind1, describe, expect_arity, Aval, Primitive};
use super::{BinaryOp, BroadcastInDim, Iota};
use crate::array::Array;
use crate::dtype::{DType, Element};
use crate::exec::cpu::alloc;
use crate::exec::cpu::copy::{self, AxisLayout};
use crate::shape::ShapeDisplay;
use crate::transform::ad::ops::{self, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{batched_axis, one, to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// What a gather or scatter does with an index that is out of bounds after negative indices are
/// normalized (JAX's `GatherScatterMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexMode {
    /// Clamp into `[0, n - 1]` (what `x[i]` does in JAX).
    Clip,
    /// Gathers return the dtype's fill value (NaN, the minimum signed integer, the maximum
    /// unsigned integer, `true`); scatters drop the update (what `x.at[i]` does in JAX).
    FillOrDrop,
}

impl IndexMode {
    fn clips(self) -> bool {
        self == IndexMode::Clip
    }
}

/// The fill value of an out-of-bounds gather in [`IndexMode::FillOrDrop`]: NaN for floats, the
/// most negative value for signed integers, the largest for unsigned ones, `true` for bool.
pub fn fill_value<T: Element>() -> T {
    let d = T::DTYPE;
    // Float-to-integer conversion saturates, so infinities give the extreme integers.
    T::from_f64(if d.is_float() {
        f64::NAN
    } else if d.is_signed_int() {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    })
}

/// The shape of `x` indexed along `axis` by an index array of `idx` shape.
fn indexed_shape(x: &[usize], axis: usize, idx: &[usize]) -> Vec<usize> {
    [&x[..axis], idx, &x[axis + 1..]].concat()
}

/// Checks the operand and index avals shared by gather and scatter.
fn check_indexing(x: &Aval, idx: &Aval, axis: usize) -> Result<(), String> {
    if axis >= x.shape.len() {
        return Err(format!("axis {axis} is out of bounds for an operand {x}"));
    }
    if !idx.dtype.is_int() {
        return Err(format!("indices must be integers, got {idx}"));
    }
    Ok(())
}

/// The indices as `i64` (the kernels' index type).
fn indices_i64(idx: &Array) -> Vec<i64> {
    crate::with_buffer!(idx.buffer(), |v: T| alloc::collect(v.iter().map(|&i| i.cast::<i64>())))
}

/// The operand's layout around `axis` for `m` indices.
fn layout(shape: &[usize], axis: usize) -> AxisLayout {
    AxisLayout {
        outer: shape[..axis].iter().product(),
        n: shape[axis],
        inner: shape[axis + 1..].iter().product(),
    }
}

/// `gather(operand, indices)` along `axis`: the result has the operand's shape with axis `axis`
/// replaced by the index array's shape, and `out[.., j.., ..] = operand[.., indices[j..], ..]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Gather {
    /// The operand axis the indices select along.
    pub axis: usize,
    /// What out-of-bounds indices read.
    pub mode: IndexMode,
}

impl Primitive for Gather {
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Gather { axis: self.axis, mode: self.mode })
    }

    /// A batched operand with shared indices gathers along the shifted axis; batched indices
    /// into a shared operand give their batch axis to the result. When both are batched, the
    /// batch axis is merged with the indexed one and each example's indices are offset into
    /// its own block, so one gather serves all examples.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let (x, idx) = (&args[0], &args[1]);
        let k = idx.ndim() - usize::from(dims[1].is_some());
        match (dims[0], dims[1]) {
            (Some(d), None) => {
                let gather = Gather { axis: batched_axis(self.axis, d), mode: self.mode };
                let out_dim = if d <= self.axis { d } else { d - 1 + k };
                one(bind1(&gather, &[x, idx]), Some(out_dim))
            }
            (None, Some(e)) => one(bind1(self, &[x, idx]), Some(self.axis + e)),
            _ => {
                let merged = merge_batch_axis(x, dims[0], self.axis, axis.size);
                let n = match dims[0] {
                    Some(d) => x.shape()[batched_axis(self.axis, d)],
                    None => x.shape()[self.axis],
                };
                let offsets = offset_indices(idx, dims[1], n, axis.size, self.mode);
                let gather = Gather { axis: self.axis, mode: self.mode };
                one(bind1(&gather, &[&merged, &offsets]), Some(self.axis))
            }
        }
    }

    fn params(&self) -> String {
        format!("axis={} mode={:?}", self.axis, self.mode)
    }

    fn name(&self) -> String {
        "gather".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (x, idx) = (&inputs[0], &inputs[1]);
        check_indexing(x, idx, self.axis)?;
        let empty_source = x.shape[self.axis] == 0 && !idx.shape.contains(&0);
        if empty_source && self.mode.clips() {
            return Err(format!(
                "cannot clamp indices {idx} into axis {} of {x}, which is empty",
                self.axis
            ));
        }
        let shape = indexed_shape(&x.shape, self.axis, &idx.shape);
        Ok(vec![Aval { shape, dtype: x.dtype, weak: x.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (x, idx) = (inputs[0], inputs[1]);
        let out = &outputs[0];
        let indices = indices_i64(idx);
        let layout = layout(x.shape(), self.axis);
        let clip = self.mode.clips();
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            T::wrap(copy::gather_axis(v, layout, &indices, clip, fill_value::<T>()))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (x, idx) = (&primals[0], &primals[1]);
        let out = bind1(self, &[x, idx]);
        let t = tangents[0].as_ref().map(|t| bind1(self, &[t, idx]));
        Ok((vec![out], vec![t]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None, None]) };
        let Some(idx) = args[1].known() else {
            return Err("indices cannot be differentiated".into());
        };
        // Every gathered element sends its cotangent back to where it was read from; reads
        // out of bounds (filled, not read) send nothing.
        let zeros = ops::zeros(&args[0].aval());
        let add = Scatter { axis: self.axis, op: ScatterOp::Add, mode: self.mode };
        Ok(vec![Some(bind1(&add, &[&zeros, idx, ct])), None])
    }
}

impl Scatter {
    /// Which index positions address an element of an axis of extent `n` (after negative
    /// indices wrap); in clip mode all of them do.
    fn in_bounds(&self, idx: &Array, n: usize) -> Array {
        let all = ops::broadcast_to(&Array::from(true), idx.shape());
        if self.mode.clips() {
            return all;
        }
        let below = ops::binary(BinaryOp::Lt, idx, &ops::scalar(idx, n as f64));
        if idx.dtype().is_signed_int() {
            let above = ops::binary(BinaryOp::Ge, idx, &ops::scalar(idx, -(n as f64)));
            return ops::binary(BinaryOp::And, &below, &above);
        }
        below
    }

    /// Which index positions' updates survive a `set` scatter into an axis of extent `n`:
    /// in bounds, and the last among repeats of their index.
    fn landed(&self, idx: &Array, n: usize) -> Array {
        let ids = bind1(&Iota { dtype: DType::I32, shape: vec![idx.size()], dimension: 0 }, &[]);
        let ids = ops::reshape(&ids, idx.shape());
        let idx32 = ops::convert(idx, DType::I32);
        let none = ops::broadcast_to(&ops::scalar(&ids, -1.0), &[n]);
        let one_axis = Scatter { axis: 0, op: ScatterOp::Set, mode: self.mode };
        let winners = bind1(&one_axis, &[&none, &idx32, &ids]);
        let winner = bind1(&Gather { axis: 0, mode: IndexMode::Clip }, &[&winners, &idx32]);
        ops::binary(BinaryOp::And, &ops::eq(&winner, &ids), &self.in_bounds(idx, n))
    }
}

/// How a scatter combines an update with the element it lands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterOp {
    /// Replace (with repeated indices, the last update wins).
    Set,
    /// Add (repeated indices accumulate).
    Add,
    /// Multiply.
    Mul,
    /// Keep the minimum.
    Min,
    /// Keep the maximum.
    Max,
}

/// `scatter(operand, indices, updates)` along `axis`: a copy of the operand where, for each
/// index position `j`, `out[.., indices[j], ..]` is combined with `updates[.., j, ..]` by `op`.
/// Updates have the shape a [`Gather`] with the same indices would produce. Repeated indices
/// apply their updates in order, so `Add`, `Mul`, `Min` and `Max` accumulate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scatter {
    /// The operand axis the indices select along.
    pub axis: usize,
    /// How updates combine with the elements they land on.
    pub op: ScatterOp,
    /// What happens to updates at out-of-bounds indices.
    pub mode: IndexMode,
}

impl Primitive for Scatter {
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        let (axis, op, mode) = (self.axis, self.op, self.mode);
        Some(crate::backend::DeviceOp::Scatter { axis, op, mode })
    }

    /// Shared indices: operand and updates get their batch axis in front, one axis before the
    /// scattered one. Batched indices: the batch axis is merged with the scattered one and the
    /// indices offset per example, as for `gather`.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let (x, idx, upd) = (&args[0], &args[1], &args[2]);
        let size = axis.size;
        if dims[1].is_none() {
            let (x, upd) = (to_dim(x, dims[0], 0, size), to_dim(upd, dims[2], 0, size));
            let scatter = Scatter { axis: self.axis + 1, ..*self };
            return one(bind1(&scatter, &[&x, idx, &upd]), Some(0));
        }
        let n = match dims[0] {
            Some(d) => x.shape()[batched_axis(self.axis, d)],
            None => x.shape()[self.axis],
        };
        let merged = merge_batch_axis(x, dims[0], self.axis, size);
        let offsets = offset_indices(idx, dims[1], n, size, self.mode);
        let upd = to_dim(upd, dims[2], self.axis, size);
        let out = bind1(self, &[&merged, &offsets, &upd]);
        let mut shape = out.shape().to_vec();
        shape.splice(self.axis..=self.axis, [size, n]);
        one(ops::reshape(&out, &shape), Some(self.axis))
    }

    fn params(&self) -> String {
        format!("axis={} mode={:?}", self.axis, self.mode)
    }

    fn name(&self) -> String {
        match self.op {
            ScatterOp::Set => "scatter",
            ScatterOp::Add => "scatter-add",
            ScatterOp::Mul => "scatter-mul",
            ScatterOp::Min => "scatter-min",
            ScatterOp::Max => "scatter-max",
        }
        .to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 3)?;
        let (x, idx, upd) = (&inputs[0], &inputs[1], &inputs[2]);
        check_indexing(x, idx, self.axis)?;
        if upd.dtype != x.dtype {
            return Err(format!(
                "updates must have the operand's dtype, got {}",
                describe(&[x.clone(), upd.clone()])
            ));
        }
        if x.dtype.is_complex() && matches!(self.op, ScatterOp::Min | ScatterOp::Max) {
            return Err(format!("complex numbers have no order, got {x}"));
        }
        let want = indexed_shape(&x.shape, self.axis, &idx.shape);
        if upd.shape != want {
            return Err(format!(
                "updates {upd} must have shape {} to scatter into axis {} of {x} at indices {idx}",
                ShapeDisplay(&want),
                self.axis
            ));
        }
        Ok(vec![x.clone()])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (x, idx, upd) = (inputs[0], inputs[1], inputs[2]);
        let out = &outputs[0];
        let indices = indices_i64(idx);
        let layout = layout(x.shape(), self.axis);
        let clip = self.mode.clips();
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            let mut dst = alloc::copy_of(v);
            let u = upd.as_slice::<T>().expect("checked by the shape rule");
            let combine: fn(T, T) -> T = match self.op {
                ScatterOp::Set => |_, y| y,
                ScatterOp::Add => Scalar::add,
                ScatterOp::Mul => Scalar::mul,
                ScatterOp::Min => Scalar::min,
                ScatterOp::Max => Scalar::max,
            };
            copy::scatter_axis(&mut dst, layout, &indices, u, clip, combine);
            T::wrap(dst)
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        if !matches!(self.op, ScatterOp::Set | ScatterOp::Add) {
            return Err(format!("the derivative of {} is not implemented", self.name()));
        }
        let (x, idx, upd) = (&primals[0], &primals[1], &primals[2]);
        let out = bind1(self, &[x, idx, upd]);
        let tx = ops::instantiate(&tangents[0], &x.aval());
        let tu = ops::instantiate(&tangents[2], &upd.aval());
        Ok((vec![out], vec![Some(bind1(self, &[&tx, idx, &tu]))]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None; 3]) };
        let Some(idx) = args[1].known() else {
            return Err("indices cannot be differentiated".into());
        };
        let upd = args[2].aval();
        let (operand_ct, kept) = match self.op {
            ScatterOp::Add => (ct.clone(), self.in_bounds(idx, ct.shape()[self.axis])),
            ScatterOp::Set => {
                // Overwritten elements get nothing; of repeated indices only the last update
                // (the one that landed) gets the cotangent.
                let cleared = bind1(self, &[ct, idx, &ops::zeros(&upd)]);
                (cleared, self.landed(idx, ct.shape()[self.axis]))
            }
            _ => return Err(format!("{} is not linear", self.name())),
        };
        let gather = Gather { axis: self.axis, mode: IndexMode::Clip };
        let read = bind1(&gather, &[ct, idx]);
        let dims = (self.axis..self.axis + idx.ndim()).collect();
        let kept = bind1(
            &BroadcastInDim { shape: upd.shape.clone(), broadcast_dimensions: dims },
            &[&kept],
        );
        let updates_ct = ops::select(&kept, &read, &ops::zeros(&upd));
        Ok(vec![
            args[0].is_linear().then_some(operand_ct),
            None,
            args[2].is_linear().then_some(updates_ct),
        ])
    }
}

/// The operand with its batch axis (broadcast if it has none) merged into axis `axis`:
/// `[.., size, n, ..]` becomes `[.., size * n, ..]`, example `b`'s block starting at `b * n`.
fn merge_batch_axis(x: &Array, dim: BatchDim, axis: usize, size: usize) -> Array {
    let x = to_dim(x, dim, axis, size);
    let mut shape = x.shape().to_vec();
    let n = shape.remove(axis + 1);
    shape[axis] *= n;
    ops::reshape(&x, &shape)
}

/// Per-example indices into an axis of extent `n`, batched in front and offset into each
/// example's block of a merged axis. Each example's out-of-bounds convention is applied
/// first (clamped, or sent past the merged axis to be dropped), since the merged axis would
/// otherwise let an index reach a neighbour's block.
fn offset_indices(idx: &Array, dim: BatchDim, n: usize, size: usize, mode: IndexMode) -> Array {
    let idx = ops::convert(&to_dim(idx, dim, 0, size), DType::I64).with_weak_type(false);
    let c = |v: i64| ops::scalar(&idx, v as f64);
    let negative = ops::binary(BinaryOp::Lt, &idx, &c(0));
    let idx = ops::select(&negative, &ops::add(&idx, &c(n as i64)), &idx);
    let local = match mode {
        IndexMode::Clip => {
            let high = c(n.saturating_sub(1) as i64);
            ops::binary(BinaryOp::Min, &ops::binary(BinaryOp::Max, &idx, &c(0)), &high)
        }
        IndexMode::FillOrDrop => {
            let inside = ops::binary(
                BinaryOp::And,
                &ops::binary(BinaryOp::Ge, &idx, &c(0)),
                &ops::binary(BinaryOp::Lt, &idx, &c(n as i64)),
            );
            ops::select(&inside, &idx, &c((size * n) as i64))
        }
    };
    let lanes = bind1(&Iota { dtype: DType::I64, shape: idx.shape().to_vec(), dimension: 0 }, &[]);
    ops::add(&local, &ops::mul(&lanes, &c(n as i64)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::primitives::bind1;

    #[test]
    fn gather_rows_with_clamping() {
        let x = Array::from_shape_vec([3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let i = Array::from_shape_vec([2, 2], vec![2i32, -1, 9, -9]);
        let y = bind1(&Gather { axis: 0, mode: IndexMode::Clip }, &[&x, &i]);
        assert_eq!(y.shape(), &[2, 2, 2]);
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 1.0, 2.0]);
        let y = bind1(&Gather { axis: 1, mode: IndexMode::FillOrDrop }, &[&x, &i]);
        assert_eq!(y.shape(), &[3, 2, 2]);
        // Per row: index 2 is past the end, -1 is the last column, 9 and -9 are out of bounds.
        let row: Vec<f32> = y.to_vec::<f32>().unwrap()[4..8].to_vec();
        assert!(row[0].is_nan() && row[1] == 4.0 && row[2].is_nan() && row[3].is_nan());
    }

    #[test]
    fn fill_values_follow_jax() {
        assert!(fill_value::<f32>().is_nan());
        assert_eq!(fill_value::<i8>(), i8::MIN);
        assert_eq!(fill_value::<u16>(), u16::MAX);
        assert!(fill_value::<bool>());
    }

    #[test]
    fn scatter_add_accumulates_and_drops() {
        let x = Array::from_shape_vec([4], vec![0i32, 0, 0, 0]);
        let i = Array::from_shape_vec([4], vec![1i64, 1, -1, 4]);
        let u = Array::from_shape_vec([4], vec![1i32, 2, 3, 4]);
        let s = Scatter { axis: 0, op: ScatterOp::Add, mode: IndexMode::FillOrDrop };
        assert_eq!(bind1(&s, &[&x, &i, &u]).to_vec::<i32>().unwrap(), vec![0, 3, 0, 3]);
        let s = Scatter { axis: 0, op: ScatterOp::Max, mode: IndexMode::Clip };
        assert_eq!(bind1(&s, &[&x, &i, &u]).to_vec::<i32>().unwrap(), vec![0, 2, 0, 4]);
    }

    #[test]
    fn scatter_rejects_misshapen_updates() {
        let x = Aval { shape: vec![3, 2], dtype: DType::F32, weak: false };
        let i = Aval { shape: vec![4], dtype: DType::I32, weak: false };
        let u = Aval { shape: vec![4], dtype: DType::F32, weak: false };
        let s = Scatter { axis: 0, op: ScatterOp::Set, mode: IndexMode::Clip };
        let err = s.abstract_eval(&[x, i, u]).unwrap_err();
        assert!(err.contains("must have shape (4, 2)"), "{err}");
    }
}
