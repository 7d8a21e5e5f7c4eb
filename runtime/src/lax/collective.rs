//! Collectives over named axes, as `jax.lax.psum` and friends: usable inside a function
//! mapped by `#[vmap(axis_name = "i")]` (and `#[pmap]`), where every member of the axis sees
//! the combination of all members' values.

use crate::array::Array;
use crate::jnp::{self, ArrayLike};
use crate::primitives::{
    bind1, AllGather, AxisIndex, Collective, CollectiveOp, Ppermute, PsumScatter,
};
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

/// Sums `x` over the members of `axis_name` and gives member `i` row `i` of the sum
/// (`jax.lax.psum_scatter(x, axis_name)`): `x`'s leading axis must have the axis' size.
#[track_caller]
pub fn psum_scatter(x: impl ArrayLike, axis_name: &str) -> Array {
    let size = axes::require("psum_scatter", axis_name);
    let x = x.into_array();
    if x.shape().first() != Some(&size) {
        panic!(
            "psum_scatter: the operand's leading axis must have the size {size} of axis \
             `{axis_name}`, got shape {:?}",
            x.shape()
        );
    }
    bind1(&PsumScatter { axis_name: axis_name.to_string(), size }, &[&x])
}

/// Sends member `src`'s `x` to member `dst` for each `(src, dst)` in `perm`; members no pair
/// sends to get zeros (`jax.lax.ppermute`).
///
/// # Panics
/// When a member appears twice as a source or twice as a destination, or is out of range.
#[track_caller]
pub fn ppermute(x: impl ArrayLike, axis_name: &str, perm: &[(usize, usize)]) -> Array {
    let size = axes::require("ppermute", axis_name);
    let mut sources = vec![false; size];
    let mut targets = vec![false; size];
    for &(src, dst) in perm {
        if src >= size || dst >= size {
            panic!("ppermute: the pair ({src}, {dst}) is out of range for axis `{axis_name}` of size {size}");
        }
        if std::mem::replace(&mut sources[src], true) || std::mem::replace(&mut targets[dst], true)
        {
            panic!(
                "ppermute: perm {perm:?} is not a permutation: a member sends or receives twice"
            );
        }
    }
    bind1(&Ppermute { axis_name: axis_name.to_string(), perm: perm.to_vec() }, &[&x.into_array()])
}
