//! Collectives over named axes: `psum`/`pmax`/`pmin`, `all_gather`, `psum_scatter`,
//! `ppermute` and `axis_index`. They mean something only inside a transform that binds the
//! axis: under `vmap` their batching rules turn them into ordinary operations over the batch
//! axis, as JAX's do; on the devices of a `pmap` they are evaluated by exchanging values
//! between the device threads (`device::spmd`).

use super::{bind1, expect_arity, tuple, Aval, Primitive};
use super::{Gather, IndexMode, Iota, Reduce, ReduceOp};
use crate::array::Array;
use crate::device::spmd;
use crate::dtype::DType;
use crate::transform::ad::ops::{self, linear_jvp, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{lane, move_axis, one, stack, to_dim, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// How a reducing collective combines the values along its axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveOp {
    Sum,
    Max,
    Min,
}

/// `psum` / `pmax` / `pmin` of one operand over the named axes: every member of the mapped
/// axes gets the combination of all members' values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Collective {
    pub op: CollectiveOp,
    pub axes: Vec<String>,
}

fn unbound(prim: &str, axes: &[String]) -> ! {
    panic!(
        "{prim}: unbound axis name {}: collectives run only inside a vmap or pmap that names the \
         axis (axis_name = \"..\")",
        axes.join(", ")
    )
}

impl CollectiveOp {
    /// How the devices combine two values: with the elementwise primitive of the op.
    fn reduction(self) -> spmd::Reduction {
        let combine: fn(&Array, &Array) -> Array = match self {
            CollectiveOp::Sum => |a, b| bind1(&super::BinaryOp::Add, &[a, b]),
            CollectiveOp::Max => |a, b| bind1(&super::BinaryOp::Max, &[a, b]),
            CollectiveOp::Min => |a, b| bind1(&super::BinaryOp::Min, &[a, b]),
        };
        spmd::Reduction { is_sum: self == CollectiveOp::Sum, combine }
    }
}

impl Collective {
    fn reduce_op(&self) -> ReduceOp {
        match self.op {
            CollectiveOp::Sum => ReduceOp::Sum,
            CollectiveOp::Max => ReduceOp::Max,
            CollectiveOp::Min => ReduceOp::Min,
        }
    }

    fn rest(&self, name: &str) -> Vec<String> {
        self.axes.iter().filter(|a| *a != name).cloned().collect()
    }
}

impl Primitive for Collective {
    /// On GPUs it meets the other shards' values on this shard's GPU (see `spmd::exchange`)
    /// and combines them with primitives bound there.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        match self.op {
            CollectiveOp::Sum => "psum",
            CollectiveOp::Max => "pmax",
            CollectiveOp::Min => "pmin",
        }
        .to_string()
    }

    fn params(&self) -> String {
        format!("axes={}", tuple(&self.axes))
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        if inputs[0].dtype.is_bool() && self.op == CollectiveOp::Sum {
            return Err(format!("cannot sum bool values, got {}", inputs[0]));
        }
        Ok(vec![inputs[0].clone()])
    }

    /// On pmap's devices: combines the members' values over each axis in turn (across
    /// processes, one MPI all-reduce per axis).
    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        let mut value = inputs[0].clone();
        for axis in &self.axes {
            value = spmd::reduce(&self.name(), axis, value, self.op.reduction())
                .unwrap_or_else(|| unbound(&self.name(), &self.axes));
        }
        vec![value]
    }

    fn uses_axis(&self, name: &str) -> bool {
        self.axes.iter().any(|a| a == name)
    }

    /// Its value depends on the other members, even for a constant operand.
    fn always_traced(&self) -> bool {
        true
    }

    /// Over the mapped axis, a reduction of the batch axis (an unbatched operand is the same
    /// in every member: `psum` multiplies it by the axis size); over other axes, the
    /// collective applied to every example at once.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let x = &args[0];
        let Some(name) = axis.name.as_deref().filter(|n| self.uses_axis(n)) else {
            return one(bind1(self, &[x]), dims[0]);
        };
        let reduced = match (dims[0], self.op) {
            (Some(d), _) => bind1(&Reduce { op: self.reduce_op(), axes: vec![d] }, &[x]),
            (None, CollectiveOp::Sum) => ops::scale(x, axis.size as f64),
            (None, _) => x.clone(),
        };
        let rest = self.rest(name);
        let out = if rest.is_empty() {
            reduced
        } else {
            bind1(&Collective { axes: rest, ..*self }, &[&reduced])
        };
        one(out, None)
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        match self.op {
            CollectiveOp::Sum => linear_jvp(self, primals, tangents),
            _ => Err("differentiating pmax/pmin is not supported".to_string()),
        }
    }

    /// Every member's output depends on every member's input with weight one, so the
    /// cotangents are summed over the axes too.
    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        match self.op {
            CollectiveOp::Sum => Ok(vec![single_ct(cts).map(|ct| bind1(self, &[ct]))]),
            _ => Err("pmax/pmin are not linear".to_string()),
        }
    }
}

/// `all_gather(x, axis_name)`: every member gets the stack of all members' values, along a
/// new leading axis of the axis' size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AllGather {
    pub axis_name: String,
    pub size: usize,
}

impl Primitive for AllGather {
    /// On GPUs it meets the other shards' values on this shard's GPU (see `spmd::exchange`)
    /// and combines them with primitives bound there.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        "all_gather".to_string()
    }

    fn params(&self) -> String {
        format!("axis_name={} axis_size={}", self.axis_name, self.size)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let mut shape = vec![self.size];
        shape.extend(&inputs[0].shape);
        Ok(vec![Aval { shape, ..inputs[0].clone() }])
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        match spmd::exchange(&self.name(), &self.axis_name, inputs[0].clone()) {
            Some((_, values)) => vec![stack(&values)],
            None => unbound("all_gather", std::slice::from_ref(&self.axis_name)),
        }
    }

    fn uses_axis(&self, name: &str) -> bool {
        self.axis_name == name
    }

    fn always_traced(&self) -> bool {
        true
    }

    /// Over the mapped axis the batch axis itself is the gathered one.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let x = &args[0];
        if !axis.is(&self.axis_name) {
            return one(bind1(self, &[x]), dims[0].map(|d| d + 1));
        }
        one(to_dim(x, dims[0], 0, axis.size), None)
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    /// Member `i`'s input appears as row `i` of every member's output: its cotangent is row
    /// `i` of the cotangents summed over the axis.
    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None]) };
        let summed =
            bind1(&Collective { op: CollectiveOp::Sum, axes: vec![self.axis_name.clone()] }, &[ct]);
        let index = bind1(&AxisIndex { axis_name: self.axis_name.clone() }, &[]);
        let row = bind1(&Gather { axis: 0, mode: IndexMode::Clip }, &[&summed, &index]);
        Ok(vec![Some(row)])
    }
}

/// `axis_index(axis_name)`: this member's position along the named axis (`int32`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AxisIndex {
    pub axis_name: String,
}

impl Primitive for AxisIndex {
    fn name(&self) -> String {
        "axis_index".to_string()
    }

    fn params(&self) -> String {
        format!("axis_name={}", self.axis_name)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 0)?;
        Ok(vec![Aval { shape: vec![], dtype: DType::I32, weak: false }])
    }

    fn eval(&self, _inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        match spmd::axis_index(&self.axis_name) {
            Some(i) => vec![Array::from(i as i32)],
            None => unbound("axis_index", std::slice::from_ref(&self.axis_name)),
        }
    }

    fn uses_axis(&self, name: &str) -> bool {
        self.axis_name == name
    }

    fn always_traced(&self) -> bool {
        true
    }

    fn batch(&self, _args: &[Array], _dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        if !axis.is(&self.axis_name) {
            return one(bind1(self, &[]), None);
        }
        let iota = Iota { dtype: DType::I32, shape: vec![axis.size], dimension: 0 };
        one(bind1(&iota, &[]), Some(0))
    }
}

/// `psum_scatter(x, axis_name)`: the members' `x` (whose leading axis has the axis' size)
/// summed, and member `i` keeps row `i` of the sum (JAX's `psum_scatter` with
/// `scatter_dimension=0, tiled=False`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PsumScatter {
    pub axis_name: String,
    pub size: usize,
}

impl Primitive for PsumScatter {
    /// On GPUs it meets the other shards' values on this shard's GPU (see `spmd::exchange`)
    /// and combines them with primitives bound there.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        "psum_scatter".to_string()
    }

    fn params(&self) -> String {
        format!("axis_name={} axis_size={}", self.axis_name, self.size)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        if x.shape.first() != Some(&self.size) || x.dtype.is_bool() {
            return Err(format!(
                "the operand must be numeric with a leading axis of the axis size {}, got {x}",
                self.size
            ));
        }
        Ok(vec![Aval { shape: x.shape[1..].to_vec(), ..x.clone() }])
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        let Some((me, values)) = spmd::exchange(&self.name(), &self.axis_name, inputs[0].clone())
        else {
            unbound("psum_scatter", std::slice::from_ref(&self.axis_name))
        };
        vec![lane(&CollectiveOp::Sum.reduction().fold(&values), Some(0), me)]
    }

    fn uses_axis(&self, name: &str) -> bool {
        self.axis_name == name
    }

    fn always_traced(&self) -> bool {
        true
    }

    /// Over the mapped axis: the sum over the batch, whose row `i` is example `i`'s result.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let x = &args[0];
        if !axis.is(&self.axis_name) {
            let front = to_dim(x, dims[0], 1, axis.size);
            let moved = if dims[0].is_some() { bind1(self, &[&front]) } else { bind1(self, &[x]) };
            return one(moved, dims[0].map(|_| 0));
        }
        let summed = match dims[0] {
            Some(d) => bind1(&Reduce { op: ReduceOp::Sum, axes: vec![d] }, &[x]),
            None => ops::scale(x, axis.size as f64),
        };
        one(summed, Some(0))
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    /// Member `j`'s row `i` reaches member `i`: the cotangent is every member's cotangent,
    /// gathered.
    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let gather = AllGather { axis_name: self.axis_name.clone(), size: self.size };
        Ok(vec![single_ct(cts).map(|ct| bind1(&gather, &[ct]))])
    }
}

/// `ppermute(x, axis_name, perm)`: member `dst` gets member `src`'s `x` for each
/// `(src, dst)` pair, and zeros if no pair sends to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ppermute {
    pub axis_name: String,
    pub perm: Vec<(usize, usize)>,
}

impl Ppermute {
    fn source_of(&self, dst: usize) -> Option<usize> {
        self.perm.iter().find(|(_, d)| *d == dst).map(|(s, _)| *s)
    }
}

impl Primitive for Ppermute {
    /// On GPUs it meets the other shards' values on this shard's GPU (see `spmd::exchange`)
    /// and combines them with primitives bound there.
    fn device_op(&self, _inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        Some(crate::backend::DeviceOp::Composite)
    }

    fn name(&self) -> String {
        "ppermute".to_string()
    }

    fn params(&self) -> String {
        format!("axis_name={} perm={:?}", self.axis_name, self.perm)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        Ok(vec![inputs[0].clone()])
    }

    fn eval(&self, inputs: &[&Array], _outputs: &[Aval]) -> Vec<Array> {
        let Some((me, values)) = spmd::exchange(&self.name(), &self.axis_name, inputs[0].clone())
        else {
            unbound("ppermute", std::slice::from_ref(&self.axis_name))
        };
        let out = match self.source_of(me) {
            Some(src) => values[src].clone(),
            None => ops::zeros(&inputs[0].aval()),
        };
        vec![out]
    }

    fn uses_axis(&self, name: &str) -> bool {
        self.axis_name == name
    }

    fn always_traced(&self) -> bool {
        true
    }

    /// Over the mapped axis: example `dst` of the result is example `src` of the operand.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        let x = &args[0];
        if !axis.is(&self.axis_name) {
            return one(bind1(self, &[x]), dims[0]);
        }
        let zero = ops::zeros(&lane(x, dims[0], 0).aval());
        let lanes: Vec<Array> = (0..axis.size)
            .map(|dst| match self.source_of(dst) {
                Some(src) => lane(x, dims[0], src),
                None => zero.clone(),
            })
            .collect();
        let out =
            if lanes.is_empty() { move_axis(x, dims[0].unwrap_or(0), 0) } else { stack(&lanes) };
        one(out, Some(0))
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    /// The inverse permutation carries the cotangents back.
    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let inverse = Ppermute {
            axis_name: self.axis_name.clone(),
            perm: self.perm.iter().map(|&(s, d)| (d, s)).collect(),
        };
        Ok(vec![single_ct(cts).map(|ct| bind1(&inverse, &[ct]))])
    }
}
