//! Shape primitives: `reshape`, `transpose`, `broadcast_in_dim`, `concatenate`, `slice`, `rev`,
//! `pad` and `iota`, with XLA's semantics (as `jax.lax` exposes them).
//!
//! They move elements without computing on them. `reshape` is free (the result shares the
//! buffer); the others copy through the kernels in [`crate::exec::cpu::copy`].

use std::sync::Arc;

use super::{bind1, describe, expect_arity, tuple, Aval, Fusion, Primitive, PrimitiveClone};
use crate::array::Array;
use crate::backend::ops::row_major_strides;
use crate::backend::{CopyRegion, DeviceOp, Strided};
use crate::dtype::{DType, Element};
use crate::exec::cpu::copy::{self, PadAxis};
use crate::exec::cpu::elementwise::build;
use crate::shape::{contiguous_strides, size, ShapeDisplay};
use crate::transform::ad::ops::{self, linear_jvp, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{batched_axis, move_axis, one, per_lane, to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// The output aval: the operand's dtype and weak flag with a new shape.
fn reshaped(x: &Aval, shape: Vec<usize>) -> Vec<Aval> {
    vec![Aval { shape, dtype: x.dtype, weak: x.weak }]
}

/// `reshape`: the same elements in row-major order under a new shape of equal size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Reshape {
    /// The output shape.
    pub new_sizes: Vec<usize>,
}

impl Primitive for Reshape {
    /// On a device the buffer is shared under the new shape, as on the host.
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Alias)
    }

    /// Reshaping mixes axes, so the batch axis goes in front, where it stays apart.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let x = move_axis(&args[0], d, 0);
        let mut new_sizes = vec![x.shape()[0]];
        new_sizes.extend(&self.new_sizes);
        one(bind1(&Reshape { new_sizes }, &[&x]), Some(0))
    }

    fn params(&self) -> String {
        format!("new_sizes={}", tuple(&self.new_sizes))
    }

    /// A reshape of a reshape is one reshape: the order of the elements never changes.
    fn compose_after(&self, inner: &dyn Primitive) -> Option<Arc<dyn Primitive>> {
        matches!(inner.fusion(), Fusion::Reshape).then(|| self.clone_arc())
    }

    /// A reshape to the operand's own shape (the simplifier checks the avals).
    fn passes_through(&self, _constants: &[Option<&Array>]) -> Option<usize> {
        Some(0)
    }

    fn name(&self) -> String {
        "reshape".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let from = size(&x.shape);
        let to = crate::shape::validate(&self.new_sizes, x.dtype)?;
        if from != to {
            return Err(format!(
                "cannot reshape {x} ({from} elements) into shape {} ({to} elements)",
                ShapeDisplay(&self.new_sizes)
            ));
        }
        Ok(reshaped(x, self.new_sizes.clone()))
    }

    fn fusion(&self) -> Fusion<'_> {
        Fusion::Reshape
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        // Arrays are always contiguous, so a reshape only relabels the shared buffer.
        vec![inputs[0].with_shape(outputs[0].shape.clone())]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        Ok(vec![single_ct(cts).map(|ct| ops::reshape(ct, &args[0].aval().shape))])
    }
}

/// `transpose`: output axis `i` is operand axis `permutation[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Transpose {
    /// Output axis `i` is operand axis `permutation[i]`.
    pub permutation: Vec<usize>,
}

/// Whether `perm` lists each of `0..rank` once.
pub(crate) fn is_permutation(perm: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    perm.len() == rank && perm.iter().all(|&p| p < rank && !std::mem::replace(&mut seen[p], true))
}

impl Primitive for Transpose {
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::transpose(&inputs[0].shape, &self.permutation))
    }

    /// The batch axis keeps its place; the permutation moves the others around it.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let mut permutation: Vec<usize> =
            self.permutation.iter().map(|&a| batched_axis(a, d)).collect();
        permutation.insert(d, d);
        one(bind1(&Transpose { permutation }, &[&args[0]]), Some(d))
    }

    fn params(&self) -> String {
        format!("permutation={}", tuple(&self.permutation))
    }

    fn fusion(&self) -> Fusion<'_> {
        Fusion::Transpose { permutation: &self.permutation }
    }

    /// Output axis `i` of this transpose is axis `permutation[i]` of the inner one's result,
    /// which is axis `inner[permutation[i]]` of its operand.
    fn compose_after(&self, inner: &dyn Primitive) -> Option<Arc<dyn Primitive>> {
        let Fusion::Transpose { permutation: inner } = inner.fusion() else { return None };
        let permutation = self.permutation.iter().map(|&p| inner[p]).collect();
        Some(Arc::new(Transpose { permutation }))
    }

    /// The identity permutation.
    fn passes_through(&self, _constants: &[Option<&Array>]) -> Option<usize> {
        self.permutation.iter().enumerate().all(|(i, &p)| i == p).then_some(0)
    }

    fn name(&self) -> String {
        "transpose".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        if !is_permutation(&self.permutation, x.shape.len()) {
            return Err(format!(
                "permutation {:?} is not a permutation of the {} axes of {x}",
                self.permutation,
                x.shape.len()
            ));
        }
        Ok(reshaped(x, self.permutation.iter().map(|&p| x.shape[p]).collect()))
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            T::wrap(copy::transpose(v, x.shape(), &self.permutation))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let mut inverse = vec![0; self.permutation.len()];
        for (i, &p) in self.permutation.iter().enumerate() {
            inverse[p] = i;
        }
        Ok(vec![single_ct(cts).map(|ct| bind1(&Transpose { permutation: inverse }, &[ct]))])
    }
}

/// `broadcast_in_dim`: operand axis `i` becomes output axis `broadcast_dimensions[i]`, where it
/// must have the output's extent or extent 1 (repeated); other output axes repeat the operand.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BroadcastInDim {
    /// The output shape.
    pub shape: Vec<usize>,
    /// The output axis of each operand axis.
    pub broadcast_dimensions: Vec<usize>,
}

impl BroadcastInDim {
    fn check(&self, x: &Aval) -> Result<(), String> {
        let (dims, out) = (&self.broadcast_dimensions, &self.shape);
        let target = ShapeDisplay(out);
        if dims.len() != x.shape.len() {
            return Err(format!(
                "broadcast_dimensions {dims:?} must name one output axis for each of the {} axes of {x}",
                x.shape.len()
            ));
        }
        if dims.windows(2).any(|w| w[0] >= w[1]) || dims.iter().any(|&d| d >= out.len()) {
            return Err(format!(
                "broadcast_dimensions {dims:?} must be strictly increasing axes of the output shape {target}"
            ));
        }
        for (i, (&n, &d)) in x.shape.iter().zip(dims).enumerate() {
            if n != 1 && n != out[d] {
                return Err(format!(
                    "cannot broadcast {x} to shape {target}: operand axis {i} has extent {n} but output axis {d} has extent {}",
                    out[d]
                ));
            }
        }
        Ok(())
    }
}

impl Primitive for BroadcastInDim {
    /// A copy that reads a repeated axis with stride 0.
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let x = &inputs[0].shape;
        let from = row_major_strides(x);
        let mut strides = vec![0isize; self.shape.len()];
        for (axis, &d) in self.broadcast_dimensions.iter().enumerate() {
            if x[axis] != 1 {
                strides[d] = from[axis];
            }
        }
        let src = Strided { offset: 0, strides };
        Some(one_region(0, &self.shape, src, Strided::row_major(&self.shape)))
    }

    fn fusion(&self) -> Fusion<'_> {
        Fusion::Broadcast { broadcast_dimensions: &self.broadcast_dimensions }
    }
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let x = move_axis(&args[0], d, 0);
        let mut shape = vec![x.shape()[0]];
        shape.extend(&self.shape);
        let mut broadcast_dimensions = vec![0];
        broadcast_dimensions.extend(self.broadcast_dimensions.iter().map(|&a| a + 1));
        one(bind1(&BroadcastInDim { shape, broadcast_dimensions }, &[&x]), Some(0))
    }

    fn params(&self) -> String {
        format!(
            "shape={} broadcast_dimensions={}",
            tuple(&self.shape),
            tuple(&self.broadcast_dimensions)
        )
    }

    fn name(&self) -> String {
        "broadcast_in_dim".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        self.check(&inputs[0])?;
        Ok(reshaped(&inputs[0], self.shape.clone()))
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        if x.size() == size(&out.shape) {
            // Only extent-1 axes were added: the same elements in the same order.
            return vec![x.with_shape(out.shape.clone())];
        }
        let own = contiguous_strides(x.shape());
        let mut strides = vec![0isize; out.shape.len()];
        for (i, &d) in self.broadcast_dimensions.iter().enumerate() {
            if x.shape()[i] != 1 {
                strides[d] = own[i] as isize;
            }
        }
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            T::wrap(copy::strided_copy(v, 0, &strides, &out.shape))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None]) };
        let x = args[0].aval();
        let dims = &self.broadcast_dimensions;
        if dims.windows(2).any(|w| w[0] > w[1]) {
            return Err("broadcast_dimensions must be increasing to be transposed".to_string());
        }
        // Sum over the output axes the operand did not have and those it had with extent 1.
        let summed = (0..self.shape.len())
            .filter(|ax| match dims.iter().position(|d| d == ax) {
                None => true,
                Some(i) => x.shape[i] == 1 && self.shape[*ax] != 1,
            })
            .collect();
        Ok(vec![Some(ops::reshape(&ops::sum_axes(ct, summed), &x.shape))])
    }
}

/// `concatenate`: operands of one dtype and rank, equal in shape except along `dimension`,
/// joined along it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Concatenate {
    /// The axis to join along.
    pub dimension: usize,
}

impl Primitive for Concatenate {
    /// Each operand is copied into its stretch of the output.
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let axis = self.dimension;
        let mut out = inputs[0].shape.clone();
        out[axis] = inputs.iter().map(|x| x.shape[axis]).sum();
        let out_strides = row_major_strides(&out);
        let mut at = 0;
        let mut regions = Vec::new();
        for (operand, x) in inputs.iter().enumerate() {
            let dst =
                Strided { offset: at * out_strides[axis] as usize, strides: out_strides.clone() };
            at += x.shape[axis];
            let src = Strided::row_major(&x.shape);
            regions.push(CopyRegion { operand, extents: x.shape.clone(), src, dst });
        }
        Some(DeviceOp::Assemble { fill: None, regions })
    }

    /// Unbatched operands are broadcast to the batched ones' layout.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let d = dims.iter().flatten().copied().next().expect("some operand is batched");
        let parts: Vec<Array> =
            args.iter().zip(dims).map(|(x, e)| to_dim(x, *e, d, axis.size)).collect();
        let refs: Vec<&Array> = parts.iter().collect();
        let dimension = batched_axis(self.dimension, d);
        one(bind1(&Concatenate { dimension }, &refs), Some(d))
    }

    fn params(&self) -> String {
        format!("dimension={}", self.dimension)
    }

    fn name(&self) -> String {
        "concatenate".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        let first = inputs.first().ok_or("expected at least one operand")?;
        let (rank, axis) = (first.shape.len(), self.dimension);
        if inputs.iter().any(|a| a.dtype != first.dtype) {
            return Err(format!("operands must have the same dtype, got {}", describe(inputs)));
        }
        if inputs.iter().any(|a| a.shape.len() != rank) {
            return Err(format!("operands must have the same rank, got {}", describe(inputs)));
        }
        if axis >= rank {
            return Err(format!("axis {axis} is out of bounds for operands {}", describe(inputs)));
        }
        let differ = |a: &Aval| (0..rank).any(|d| d != axis && a.shape[d] != first.shape[d]);
        if inputs.iter().any(differ) {
            return Err(format!(
                "operands must have the same shape except along axis {axis}, got {}",
                describe(inputs)
            ));
        }
        let mut shape = first.shape.clone();
        shape[axis] = inputs.iter().map(|a| a.shape[axis]).sum();
        let weak = inputs.iter().all(|a| a.weak);
        Ok(vec![Aval { shape, dtype: first.dtype, weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let out = &outputs[0];
        let axis = self.dimension;
        let outer: usize = out.shape[..axis].iter().product();
        let inner: usize = out.shape[axis + 1..].iter().product();
        let buffer = crate::with_buffer!(inputs[0].buffer(), |_v: T| {
            let parts: Vec<(&[T], usize)> = inputs
                .iter()
                .map(|a| (a.as_slice::<T>().expect("checked"), a.shape()[axis] * inner))
                .collect();
            T::wrap(copy::concatenate(&parts, outer))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None; args.len()]) };
        let axis = self.dimension;
        let mut start = 0;
        let mut out = Vec::with_capacity(args.len());
        for arg in args {
            let shape = arg.aval().shape;
            let mut start_indices = vec![0; shape.len()];
            start_indices[axis] = start;
            let mut limit_indices = ct.shape().to_vec();
            limit_indices[axis] = start + shape[axis];
            start += shape[axis];
            out.push(arg.is_linear().then(|| {
                let strides = vec![1; shape.len()];
                bind1(&Slice { start_indices, limit_indices, strides }, &[ct])
            }));
        }
        Ok(out)
    }
}

/// `slice`: along each axis, elements `start, start + stride, ...` below `limit`
/// (`0 <= start <= limit <= extent`, `stride >= 1`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    /// First index per axis.
    pub start_indices: Vec<usize>,
    /// End per axis, exclusive.
    pub limit_indices: Vec<usize>,
    /// Step per axis (at least 1).
    pub strides: Vec<usize>,
}

impl Slice {
    fn out_shape(&self, x: &Aval) -> Result<Vec<usize>, String> {
        let (start, limit, strides) = (&self.start_indices, &self.limit_indices, &self.strides);
        let rank = x.shape.len();
        if start.len() != rank || limit.len() != rank || strides.len() != rank {
            return Err(format!(
                "start {start:?}, limit {limit:?} and strides {strides:?} must each have one entry per axis of {x}"
            ));
        }
        (0..rank)
            .map(|ax| {
                let (s, l, st, n) = (start[ax], limit[ax], strides[ax], x.shape[ax]);
                if s > l || l > n || st == 0 {
                    return Err(format!(
                        "axis {ax} of {x}: start {s}, limit {l}, stride {st} must satisfy 0 <= start <= limit <= {n} and stride >= 1"
                    ));
                }
                Ok((l - s).div_ceil(st))
            })
            .collect()
    }

    /// The steps that reach the elements of a result of shape `out`: an axis with at most one
    /// element takes none, so its step (which may be as large as `usize::MAX`) counts as 1,
    /// and every other step is below its axis's extent, so offsets stay inside the operand.
    fn steps(&self, out: &[usize]) -> Vec<usize> {
        self.strides.iter().zip(out).map(|(&st, &n)| if n <= 1 { 1 } else { st }).collect()
    }
}

impl Primitive for Slice {
    /// A copy reading from the start with each axis's step.
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let x = &inputs[0];
        let out = self.out_shape(x).ok()?;
        let from = row_major_strides(&x.shape);
        let offset = self.start_indices.iter().zip(&from).map(|(&s, &f)| s * f as usize).sum();
        let strides =
            self.steps(&out).iter().zip(&from).map(|(&step, &f)| step as isize * f).collect();
        Some(one_region(0, &out, Strided { offset, strides }, Strided::row_major(&out)))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let mut slice = self.clone();
        slice.start_indices.insert(d, 0);
        slice.limit_indices.insert(d, args[0].shape()[d]);
        slice.strides.insert(d, 1);
        one(bind1(&slice, &[&args[0]]), Some(d))
    }

    fn params(&self) -> String {
        format!(
            "start_indices={} limit_indices={} strides={}",
            tuple(&self.start_indices),
            tuple(&self.limit_indices),
            tuple(&self.strides)
        )
    }

    fn name(&self) -> String {
        "slice".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        Ok(reshaped(&inputs[0], self.out_shape(&inputs[0])?))
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        if out.shape == x.shape() {
            return vec![x.clone()];
        }
        let own = contiguous_strides(x.shape());
        let offset: usize = self.start_indices.iter().zip(&own).map(|(s, o)| s * o).sum();
        let strides: Vec<isize> =
            self.steps(&out.shape).iter().zip(&own).map(|(&s, &o)| (s * o) as isize).collect();
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            T::wrap(copy::strided_copy(v, offset, &strides, &out.shape))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None]) };
        let x = args[0].aval();
        if ct.size() == 0 {
            return Ok(vec![Some(ops::zeros(&x))]);
        }
        // Scatter the slice back: zeros before, between strided elements and after.
        let mut low = Vec::new();
        let mut high = Vec::new();
        let mut interior = Vec::new();
        for ax in 0..x.shape.len() {
            let (start, stride, n) = (self.start_indices[ax], self.strides[ax], ct.shape()[ax]);
            let last = start + (n - 1) * stride;
            low.push(start as i64);
            high.push((x.shape[ax] - last - 1) as i64);
            interior.push(stride - 1);
        }
        let zero = ops::scalar(ct, 0.0).with_weak_type(false);
        Ok(vec![Some(bind1(&Pad { low, high, interior }, &[ct, &zero]))])
    }
}

/// `rev`: reverses the order of elements along each of `dimensions`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rev {
    /// The axes to reverse.
    pub dimensions: Vec<usize>,
}

impl Primitive for Rev {
    /// A copy reading reversed axes from their last element backwards.
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let shape = &inputs[0].shape;
        let mut src = Strided::row_major(shape);
        for &axis in &self.dimensions {
            if shape[axis] > 0 {
                src.offset += (shape[axis] - 1) * src.strides[axis] as usize;
                src.strides[axis] = -src.strides[axis];
            }
        }
        Some(one_region(0, shape, src, Strided::row_major(shape)))
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        let dimensions = self.dimensions.iter().map(|&a| batched_axis(a, d)).collect();
        one(bind1(&Rev { dimensions }, &[&args[0]]), Some(d))
    }

    fn params(&self) -> String {
        format!("dimensions={}", tuple(&self.dimensions))
    }

    fn name(&self) -> String {
        "rev".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        let dims = &self.dimensions;
        let mut seen = vec![false; x.shape.len()];
        let ok = dims.iter().all(|&d| d < seen.len() && !std::mem::replace(&mut seen[d], true));
        if !ok {
            return Err(format!("dimensions {dims:?} must be distinct axes of {x}"));
        }
        Ok(reshaped(x, x.shape.clone()))
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        let own = contiguous_strides(x.shape());
        let mut strides: Vec<isize> = own.iter().map(|&s| s as isize).collect();
        let mut offset = 0;
        for &d in &self.dimensions {
            // Start at the last element of the axis and walk back.
            offset += x.shape()[d].saturating_sub(1) * own[d];
            strides[d] = -strides[d];
        }
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            T::wrap(copy::strided_copy(v, offset, &strides, &out.shape))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        Ok(vec![single_ct(cts).map(|ct| bind1(self, &[ct]))])
    }
}

/// `pad(operand, padding_value)`: along each axis, `low` copies of the 0-d padding value before
/// the elements, `high` after, and `interior` between neighbours. Negative `low`/`high` crop.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Pad {
    /// Padding before the elements, per axis (negative crops).
    pub low: Vec<i64>,
    /// Padding after the elements, per axis (negative crops).
    pub high: Vec<i64>,
    /// Padding between neighbouring elements, per axis.
    pub interior: Vec<usize>,
}

impl Primitive for Pad {
    /// The padding value everywhere, then the operand's surviving elements copied to their
    /// places (every `interior + 1`-th position from `low`, cropped to the output).
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let x = &inputs[0].shape;
        let out = self.abstract_eval(inputs).ok()?.pop()?.shape;
        let (from, to) = (row_major_strides(x), row_major_strides(&out));
        let mut region = CopyRegion {
            operand: 0,
            extents: Vec::new(),
            src: Strided { offset: 0, strides: from.clone() },
            dst: Strided { offset: 0, strides: Vec::new() },
        };
        for axis in 0..x.len() {
            let step = self.interior[axis] as i64 + 1;
            let low = self.low[axis];
            // The first element that lands at or after position 0, and how many land before
            // the output's end.
            let first = if low < 0 { (-low + step - 1) / step } else { 0 };
            let end = (out[axis] as i64 - low + step - 1).div_euclid(step).clamp(0, x[axis] as i64);
            let count = (end - first).max(0) as usize;
            region.extents.push(count);
            region.src.offset += first as usize * from[axis] as usize;
            if count > 0 {
                region.dst.offset += (low + first * step) as usize * to[axis] as usize;
            }
            region.dst.strides.push(step as isize * to[axis]);
        }
        Some(DeviceOp::Assemble { fill: Some(1), regions: vec![region] })
    }

    /// A per-example padding value has no batched form: each example is padded alone.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let Some(d) = dims[0].filter(|_| dims[1].is_none()) else {
            return per_lane(self, args, dims, axis);
        };
        let mut pad = self.clone();
        pad.low.insert(d, 0);
        pad.high.insert(d, 0);
        pad.interior.insert(d, 0);
        one(bind1(&pad, &[&args[0], &args[1]]), Some(d))
    }

    fn params(&self) -> String {
        format!(
            "low={} high={} interior={}",
            tuple(&self.low),
            tuple(&self.high),
            tuple(&self.interior)
        )
    }

    fn name(&self) -> String {
        "pad".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (x, v) = (&inputs[0], &inputs[1]);
        if !v.shape.is_empty() || v.dtype != x.dtype {
            return Err(format!(
                "the padding value must be a 0-d array of the operand's dtype, got {}",
                describe(inputs)
            ));
        }
        let rank = x.shape.len();
        let (low, high, interior) = (&self.low, &self.high, &self.interior);
        if low.len() != rank || high.len() != rank || interior.len() != rank {
            return Err(format!(
                "low {low:?}, high {high:?} and interior {interior:?} must each have one entry per axis of {x}"
            ));
        }
        let shape = (0..rank)
            .map(|ax| {
                // In i128, where no sum or product of these 64-bit values overflows.
                let n = x.shape[ax] as i128;
                let len =
                    low[ax] as i128 + high[ax] as i128 + n + (n - 1).max(0) * interior[ax] as i128;
                if len < 0 {
                    return Err(format!(
                        "padding low {low:?} and high {high:?} crops axis {ax} of {x} below zero"
                    ));
                }
                usize::try_from(len).map_err(|_| {
                    format!(
                        "padding low {low:?}, high {high:?} and interior {interior:?} make axis \
                         {ax} of {x} longer than any array can be ({len} elements)"
                    )
                })
            })
            .collect::<Result<Vec<usize>, String>>()?;
        Ok(reshaped(x, shape))
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let out = &outputs[0];
        if out.shape.is_empty() {
            return vec![x.clone()];
        }
        let axes: Vec<PadAxis> = (0..x.ndim())
            .map(|ax| PadAxis {
                low: self.low[ax],
                interior: self.interior[ax],
                len: x.shape()[ax],
            })
            .collect();
        let buffer = crate::with_buffer!(x.buffer(), |v: T| {
            let value = inputs[1].as_slice::<T>().expect("checked")[0];
            T::wrap(copy::pad(v, &axes, &out.shape, value))
        });
        vec![Array::from_buffer(&out.shape, buffer, out.weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None, None]) };
        // Undo the edge padding (cropping what was padded, re-padding what was cropped),
        // then take every (interior + 1)-th element.
        let unpad = Pad {
            low: self.low.iter().map(|l| -l).collect(),
            high: self.high.iter().map(|h| -h).collect(),
            interior: vec![0; self.low.len()],
        };
        let zero = ops::scalar(ct, 0.0).with_weak_type(false);
        let unpadded = bind1(&unpad, &[ct, &zero]);
        let strided = Slice {
            start_indices: vec![0; self.low.len()],
            limit_indices: unpadded.shape().to_vec(),
            strides: self.interior.iter().map(|i| i + 1).collect(),
        };
        let operand_ct = bind1(&strided, &[&unpadded]);
        let value_ct = args[1].is_linear().then(|| {
            let all = |a: &Array| ops::sum_axes(a, (0..a.ndim()).collect());
            ops::sub(&all(ct), &all(&operand_ct))
        });
        Ok(vec![args[0].is_linear().then_some(operand_ct), value_ct])
    }
}

/// `iota`: an array of `shape` whose elements are their index along `dimension`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Iota {
    /// The element type.
    pub dtype: DType,
    /// The output shape.
    pub shape: Vec<usize>,
    /// The axis whose index each element holds.
    pub dimension: usize,
}

impl Primitive for Iota {
    /// Without operands it is the same for every example.
    fn batch(&self, _args: &[Array], _dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        one(bind1(self, &[]), None)
    }

    fn params(&self) -> String {
        format!(
            "dtype={} shape={} dimension={}",
            self.dtype.short_name(),
            tuple(&self.shape),
            self.dimension
        )
    }

    fn name(&self) -> String {
        "iota".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 0)?;
        if self.dimension >= self.shape.len() {
            return Err(format!(
                "dimension {} is out of bounds for shape {}",
                self.dimension,
                ShapeDisplay(&self.shape)
            ));
        }
        if self.dtype.is_bool() {
            return Err("the dtype must be numeric, got bool".to_string());
        }
        Ok(vec![Aval { shape: self.shape.clone(), dtype: self.dtype, weak: false }])
    }

    fn eval(&self, _inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let out = &outputs[0];
        let step = contiguous_strides(&self.shape)[self.dimension];
        let n = self.shape[self.dimension];
        let buffer = crate::with_dtype!(self.dtype, |T| {
            T::wrap(build(size(&self.shape), |start, chunk| {
                for (k, o) in chunk.iter_mut().enumerate() {
                    o.write(T::from_u64((((start + k) / step) % n) as u64));
                }
            }))
        });
        vec![Array::from_buffer(&out.shape, buffer, false)]
    }
}

/// The assembly of one region of operand `operand` into a row-major output of `shape`.
fn one_region(operand: usize, shape: &[usize], src: Strided, dst: Strided) -> DeviceOp {
    let region = CopyRegion { operand, extents: shape.to_vec(), src, dst };
    DeviceOp::Assemble { fill: None, regions: vec![region] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::bind1;

    fn iota(shape: &[usize]) -> Array {
        let n = size(shape) as i32;
        Array::from_shape_vec(shape, (0..n).collect())
    }

    #[test]
    fn slice_with_strides() {
        let x = iota(&[3, 4]);
        let s = Slice { start_indices: vec![1, 0], limit_indices: vec![3, 4], strides: vec![1, 2] };
        let y = bind1(&s, &[&x]);
        assert_eq!(y.shape(), &[2, 2]);
        assert_eq!(y.to_vec::<i32>().unwrap(), vec![4, 6, 8, 10]);
    }

    #[test]
    fn reshape_shares_the_buffer() {
        let x = iota(&[2, 3]);
        let y = bind1(&Reshape { new_sizes: vec![3, 2] }, &[&x]);
        assert!(y.shares_buffer_with(&x));
    }

    #[test]
    fn broadcast_in_dim_repeats() {
        let x = iota(&[3]);
        let b = BroadcastInDim { shape: vec![3, 2], broadcast_dimensions: vec![0] };
        assert_eq!(bind1(&b, &[&x]).to_vec::<i32>().unwrap(), vec![0, 0, 1, 1, 2, 2]);
    }

    #[test]
    fn rules_reject_bad_parameters() {
        let x = Aval { shape: vec![2, 3], dtype: DType::F32, weak: false };
        let t = Transpose { permutation: vec![0, 0] };
        assert!(t.abstract_eval(std::slice::from_ref(&x)).unwrap_err().contains("[0, 0]"));
        let s = Slice { start_indices: vec![0, 2], limit_indices: vec![2, 4], strides: vec![1, 1] };
        assert!(s.abstract_eval(std::slice::from_ref(&x)).unwrap_err().contains("axis 1"));
        let b = BroadcastInDim { shape: vec![4, 3], broadcast_dimensions: vec![0, 1] };
        assert!(b.abstract_eval(&[x]).unwrap_err().contains("operand axis 0 has extent 2"));
    }

    #[test]
    fn iota_along_an_axis() {
        let i = bind1(&Iota { dtype: DType::I32, shape: vec![2, 3], dimension: 1 }, &[]);
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![0, 1, 2, 0, 1, 2]);
    }
}
