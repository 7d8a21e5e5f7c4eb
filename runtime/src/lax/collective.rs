//! Collectives over named axes, as `jax.lax.psum` and friends: usable inside a function
//! mapped by `#[vmap(axis_name = "i")]` (and `#[pmap]`), where every member of the axis sees
//! the combination of all members' values.

use crate::array::Array;
use crate::jnp::{self, ArrayLike};
use crate::primitives::{bind1, AllGather, AxisIndex, Collective, CollectiveOp};
use crate::transform::axes;

/// The axis names a collective reduces over: one name (`"i"`) or several (`["i", "j"]`).
pub trait AxisNames {
    /// The names, in order.
    fn names(&self) -> Vec<String>;
}

impl AxisNames for &str {
    fn names(&self) -> Vec<String> {
        vec![self.to_string()]
    }
}

impl<const N: usize> AxisNames for [&str; N] {
    fn names(&self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

impl AxisNames for &[&str] {
    fn names(&self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

#[track_caller]
fn reduce(op: CollectiveOp, name: &str, x: impl ArrayLike, axis_names: impl AxisNames) -> Array {
    let axes = axis_names.names();
    for a in &axes {
        axes::require(name, a);
    }
    bind1(&Collective { op, axes }, &[&x.into_array()])
}

/// `lax.psum(x, axis_name)`: the sum of `x` over every member of the named axes.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// use rjax_runtime::transform::batch::api::{vmap, BatchAxes, Vmap};
/// use rjax_runtime::transform::ad::api::Flat;
/// let spec = Vmap { names: &["x"], in_axes: &[BatchAxes::Axis(0)], out_axes: &BatchAxes::Axis(0), axis_name: Some("i") };
/// let out = vmap(spec, vec![Flat::of(&jnp::arange(4.0))], |p| {
///     let x: Array = p.into_iter().next().unwrap().into_tree();
///     &x / lax::psum(&x, "i")
/// });
/// let y: Array = out.into_tree();
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 1.0 / 6.0, 2.0 / 6.0, 0.5]);
/// ```
#[track_caller]
pub fn psum(x: impl ArrayLike, axis_name: impl AxisNames) -> Array {
    reduce(CollectiveOp::Sum, "psum", x, axis_name)
}

/// `lax.pmax(x, axis_name)`: the elementwise maximum over the members of the named axes.
#[track_caller]
pub fn pmax(x: impl ArrayLike, axis_name: impl AxisNames) -> Array {
    reduce(CollectiveOp::Max, "pmax", x, axis_name)
}

/// `lax.pmin(x, axis_name)`: the elementwise minimum over the members of the named axes.
#[track_caller]
pub fn pmin(x: impl ArrayLike, axis_name: impl AxisNames) -> Array {
    reduce(CollectiveOp::Min, "pmin", x, axis_name)
}

/// `lax.pmean(x, axis_name)`: the mean over the members of the named axes.
#[track_caller]
pub fn pmean(x: impl ArrayLike, axis_name: impl AxisNames) -> Array {
    let names = axis_name.names();
    let count: usize = names.iter().map(|a| axes::require("pmean", a)).product();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let total = psum(x, refs.as_slice());
    jnp::divide(&total, count as f64)
}

/// `lax.all_gather(x, axis_name)`: every member's `x`, stacked along a new leading axis
/// whose size is the axis'.
#[track_caller]
pub fn all_gather(x: impl ArrayLike, axis_name: &str) -> Array {
    let size = axes::require("all_gather", axis_name);
    bind1(&AllGather { axis_name: axis_name.to_string(), size }, &[&x.into_array()])
}

/// `lax.axis_index(axis_name)`: this member's position along the named axis (`int32`).
#[track_caller]
pub fn axis_index(axis_name: &str) -> Array {
    axes::require("axis_index", axis_name);
    bind1(&AxisIndex { axis_name: axis_name.to_string() }, &[])
}
