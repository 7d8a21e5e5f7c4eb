//! Slices at positions known only when the program runs, and XLA's general padding:
//! [`dynamic_slice`], [`dynamic_update_slice`], their one-axis forms [`dynamic_index_in_dim`],
//! [`dynamic_slice_in_dim`] and [`dynamic_update_index_in_dim`], [`slice`], [`pad`],
//! [`clamp`] and [`select_n`], as in `jax.lax`.
//!
//! Start indices may be traced (a loop counter inside `fori_loop`, a batch of positions under
//! `vmap`): the slices are gathers and scatters at clamped positions, which differentiate and
//! batch like those. As in JAX, a negative start counts from the end, and a start is then
//! clamped so that the whole slice lies inside the operand, never out of bounds.

use crate::jnp::{self, ArrayLike};
use crate::primitives::{bind1, Pad, Slice};
use crate::shape::ShapeDisplay;
use crate::{Array, DType};

/// Checks one start index per axis, each a 0-d integer, and slice sizes within the operand.
#[track_caller]
fn check_slice(op: &str, x: &Array, starts: &[Array], sizes: &[usize]) {
    if starts.len() != x.ndim() || sizes.len() != x.ndim() {
        panic!(
            "{op}: an operand of shape {} needs {} start indices and slice sizes, got {} and {}",
            ShapeDisplay(x.shape()),
            x.ndim(),
            starts.len(),
            sizes.len()
        );
    }
    if let Some(bad) = starts.iter().find(|s| s.ndim() != 0 || !s.dtype().is_int()) {
        panic!("{op}: start indices must be 0-d integers, got {}", bad.aval());
    }
    if sizes.iter().zip(x.shape()).any(|(s, n)| s > n) {
        panic!(
            "{op}: slice sizes {} exceed the operand's shape {}",
            ShapeDisplay(sizes),
            ShapeDisplay(x.shape())
        );
    }
}

/// The positions `start + 0 .. start + size` along an axis of extent `extent`. A negative
/// start counts from the end (as JAX reads it), then the start is clamped into
/// `0 ..= extent - size` as XLA clamps it.
fn positions(start: &Array, size: usize, extent: usize) -> Array {
    let start = jnp::convert(start, DType::I64, false);
    let start = jnp::where_(jnp::less(&start, 0), jnp::add(&start, extent as i64), &start);
    let start = jnp::clip(&start, 0, (extent - size) as i64);
    jnp::add(jnp::convert(&jnp::arange(size), DType::I64, false), &start)
}

/// The `sizes`-shaped block of `x` at `start_indices` (`lax.dynamic_slice`). The starts are
/// 0-d integer arrays, traced ones too; a negative start counts from the end, and each is
/// clamped so the block lies inside `x`.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = jnp::arange(10).reshape([2, 5]);
/// let i = Array::from(3i32);
/// let block = lax::dynamic_slice(&x, &[Array::from(0i32), i], [2, 2]);
/// assert_eq!(block.to_vec::<i32>().unwrap(), vec![3, 4, 8, 9]);
/// ```
#[track_caller]
pub fn dynamic_slice(
    x: &Array,
    start_indices: &[Array],
    slice_sizes: impl AsRef<[usize]>,
) -> Array {
    let sizes = slice_sizes.as_ref();
    check_slice("dynamic_slice", x, start_indices, sizes);
    let mut out = x.clone();
    for (axis, (start, &size)) in start_indices.iter().zip(sizes).enumerate() {
        if size == x.shape()[axis] {
            continue;
        }
        let at = positions(start, size, x.shape()[axis]);
        out = jnp::take_mode(&out, &at, Some(axis as isize), jnp::IndexMode::Clip);
    }
    out
}

/// `x` with `update` written at `start_indices` (`lax.dynamic_update_slice`); each start is
/// clamped so the whole update lies inside `x`.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = jnp::zeros([5]);
/// let y = lax::dynamic_update_slice(&x, &jnp::ones([2]), &[Array::from(4i32)]);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 1.0, 1.0]);
/// ```
#[track_caller]
pub fn dynamic_update_slice(x: &Array, update: &Array, start_indices: &[Array]) -> Array {
    check_slice("dynamic_update_slice", x, start_indices, update.shape());
    if update.dtype() != x.dtype() {
        panic!(
            "dynamic_update_slice: the update's dtype must be the operand's, got {} and {}",
            update.aval(),
            x.aval()
        );
    }
    if update.size() == 0 {
        return x.clone();
    }
    // Row-major flat positions of the update's elements: one broadcast sum over the axes.
    let rank = x.ndim();
    let mut stride = 1i64;
    let mut flat = jnp::zeros_dtype([0usize; 0], DType::I64);
    for axis in (0..rank).rev() {
        let at = positions(&start_indices[axis], update.shape()[axis], x.shape()[axis]);
        let mut shape = vec![1; rank];
        shape[axis] = update.shape()[axis];
        flat = jnp::add(&flat, jnp::multiply(at.reshape(shape.as_slice()), stride));
        stride *= x.shape()[axis] as i64;
    }
    let flat = jnp::broadcast_to(&flat, update.shape()).ravel();
    x.ravel().at(crate::s![&flat]).set(update.ravel()).reshape(x.shape())
}

/// The block of `size` elements at `index` along `axis` (`lax.dynamic_slice_in_dim`), the
/// other axes whole.
#[track_caller]
pub fn dynamic_slice_in_dim(x: &Array, index: impl ArrayLike, size: usize, axis: usize) -> Array {
    let (starts, mut sizes) = one_axis("dynamic_slice_in_dim", x, index, axis);
    sizes[axis] = size;
    dynamic_slice(x, &starts, sizes)
}

/// The element at `index` along `axis`, that axis kept with length 1 when `keepdims`
/// (`lax.dynamic_index_in_dim`).
#[track_caller]
pub fn dynamic_index_in_dim(
    x: &Array,
    index: impl ArrayLike,
    axis: usize,
    keepdims: bool,
) -> Array {
    let block = dynamic_slice_in_dim(x, index, 1, axis);
    if keepdims {
        block
    } else {
        block.squeeze(axis as isize)
    }
}

/// `x` with `update` written at `index` along `axis` (`lax.dynamic_update_index_in_dim`):
/// `update` has `x`'s shape without that axis, or with it of length 1.
#[track_caller]
pub fn dynamic_update_index_in_dim(
    x: &Array,
    update: &Array,
    index: impl ArrayLike,
    axis: usize,
) -> Array {
    let (starts, _) = one_axis("dynamic_update_index_in_dim", x, index, axis);
    let update = if update.ndim() + 1 == x.ndim() {
        update.expand_dims(axis as isize)
    } else {
        update.clone()
    };
    dynamic_update_slice(x, &update, &starts)
}

/// `x` with `update` written at `start_index` along `axis` (`lax.dynamic_update_slice_in_dim`),
/// the other axes from 0: `update` has `x`'s rank and dtype; a start that would let the
/// update run past the end is moved back to fit, as in JAX.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let x = jnp::zeros([5]);
/// let y = lax::dynamic_update_slice_in_dim(&x, &jnp::ones([2]), 4, 0);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 1.0, 1.0]);
/// ```
#[track_caller]
pub fn dynamic_update_slice_in_dim(
    x: &Array,
    update: &Array,
    start_index: impl ArrayLike,
    axis: usize,
) -> Array {
    let (starts, _) = one_axis("dynamic_update_slice_in_dim", x, start_index, axis);
    dynamic_update_slice(x, update, &starts)
}

/// Start indices that are zero except `index` at `axis`, and `x`'s shape as slice sizes.
#[track_caller]
fn one_axis(op: &str, x: &Array, index: impl ArrayLike, axis: usize) -> (Vec<Array>, Vec<usize>) {
    if axis >= x.ndim() {
        panic!(
            "{op}: axis {axis} is out of bounds for an operand of shape {}",
            ShapeDisplay(x.shape())
        );
    }
    let mut starts: Vec<Array> =
        (0..x.ndim()).map(|_| jnp::zeros_dtype([0usize; 0], DType::I32)).collect();
    starts[axis] = index.into_operand(op);
    (starts, x.shape().to_vec())
}

/// The static slice `x[start : limit : stride]` per axis (`lax.slice`); `strides` `None`
/// steps by 1.
///
/// ```
/// use rjax_runtime::lax;
/// let x = rjax_runtime::jnp::arange(10);
/// assert_eq!(lax::slice(&x, [1], [8], Some(&[3][..])).to_vec::<i32>().unwrap(), vec![1, 4, 7]);
/// ```
#[track_caller]
pub fn slice(
    x: &Array,
    start_indices: impl AsRef<[usize]>,
    limit_indices: impl AsRef<[usize]>,
    strides: Option<&[usize]>,
) -> Array {
    let (start, limit) = (start_indices.as_ref().to_vec(), limit_indices.as_ref().to_vec());
    let strides = strides.map_or_else(|| vec![1; x.ndim()], <[usize]>::to_vec);
    let valid = start.len() == x.ndim()
        && limit.len() == x.ndim()
        && strides.len() == x.ndim()
        && strides.iter().all(|&s| s >= 1)
        && start.iter().zip(&limit).zip(x.shape()).all(|((&a, &b), &n)| a <= b && b <= n);
    if !valid {
        panic!(
            "slice: starts {}, limits {} and strides {} do not describe a slice of an operand of \
             shape {} (one each per axis, start <= limit <= extent, strides >= 1)",
            ShapeDisplay(&start),
            ShapeDisplay(&limit),
            ShapeDisplay(&strides),
            ShapeDisplay(x.shape())
        );
    }
    bind1(&Slice { start_indices: start, limit_indices: limit, strides }, &[x])
}

/// Pads `x` with `value` by `(low, high, interior)` per axis (`lax.pad`): `low` and `high`
/// elements before and after (negative ones crop), `interior` between neighbours.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let y = lax::pad(&jnp::array(&[1, 2, 3]), 0, &[(1, -1, 1)]);
/// assert_eq!(y.to_vec::<i32>().unwrap(), vec![0, 1, 0, 2, 0]);
/// ```
#[track_caller]
pub fn pad(x: &Array, value: impl ArrayLike, config: &[(i64, i64, usize)]) -> Array {
    if config.len() != x.ndim() {
        panic!(
            "pad: an operand of shape {} needs {} (low, high, interior) triples, got {}",
            ShapeDisplay(x.shape()),
            x.ndim(),
            config.len()
        );
    }
    let value = value.into_operand("pad");
    if value.ndim() != 0 {
        panic!("pad: the padding value must be 0-d, got {}", value.aval());
    }
    let value = value.astype(x.dtype());
    let pad = Pad {
        low: config.iter().map(|c| c.0).collect(),
        high: config.iter().map(|c| c.1).collect(),
        interior: config.iter().map(|c| c.2).collect(),
    };
    bind1(&pad, &[x, &value])
}

/// `x` limited to `[min, max]` elementwise (`lax.clamp(min, x, max)`; JAX's argument order).
#[track_caller]
pub fn clamp(min: impl ArrayLike, x: &Array, max: impl ArrayLike) -> Array {
    jnp::clip(x, min, max)
}

/// Picks, elementwise, `cases[which]` (`lax.select_n`): `which` is bool (two cases: false
/// picks the first) or an integer below the number of cases; all cases share one shape and
/// dtype.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let which = jnp::array(&[0, 2, 1]);
/// let cases = [jnp::zeros([3]), jnp::ones([3]), jnp::full([3], 2.0f32)];
/// assert_eq!(lax::select_n(&which, &cases).to_vec::<f32>().unwrap(), vec![0.0, 2.0, 1.0]);
/// ```
#[track_caller]
pub fn select_n(which: &Array, cases: &[Array]) -> Array {
    let Some(first) = cases.first() else { panic!("select_n: needs at least one case") };
    if let Some(bad) =
        cases.iter().find(|c| c.shape() != first.shape() || c.dtype() != first.dtype())
    {
        panic!(
            "select_n: every case must have one shape and dtype, got {} and {}",
            first.aval(),
            bad.aval()
        );
    }
    let valid_which = (which.dtype() == DType::Bool && cases.len() <= 2) || which.dtype().is_int();
    if !valid_which || (which.ndim() != 0 && which.shape() != first.shape()) {
        panic!(
            "select_n: `which` must be bool (at most two cases) or an integer, 0-d or of the cases' shape, got {} for {} cases of {}",
            which.aval(),
            cases.len(),
            first.aval()
        );
    }
    // The last case where `which` reaches past every earlier one.
    cases.iter().enumerate().skip(1).fold(first.clone(), |acc, (i, case)| {
        let pick = if which.dtype() == DType::Bool {
            which.clone()
        } else {
            jnp::greater_equal(which, i as i64)
        };
        jnp::where_(&pick, case, &acc)
    })
}
