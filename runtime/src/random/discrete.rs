//! Integer and index samplers: `randint`, `permutation`, `choice`, `categorical`.

use super::continuous::{check_float, sample, unit_uniform};
use super::{bits_dtype, split, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::lax;
use crate::primitives::random::Sampler;
use crate::primitives::{bind, bind1, Iota, Slice, Sort, TopK};
use crate::shape::{broadcast_shapes, normalize_axis, ShapeDisplay};

/// Uniform `int32` values in `[minval, maxval)` (`jax.random.randint(key, shape, minval,
/// maxval)`); the bounds are integers or integer arrays that broadcast to `shape`.
///
/// Like JAX, each value combines two 32-bit draws (from the two halves of `split(key)`) by
/// modular arithmetic. Bounds outside the dtype's range are clipped to it, a `maxval` above
/// the dtype's maximum still reaching that maximum; where `maxval <= minval` the range is
/// empty and the value is `minval`, as in JAX.
///
/// ```
/// use rjax_runtime::random;
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let dice = random::randint(&random::key(7), [6], 0, 10);
/// assert_eq!(dice.to_vec::<i32>().unwrap(), vec![9, 2, 0, 7, 2, 6]);
/// let top = random::randint(&random::key(0), [4], i32::MAX as i64, 1i64 << 40);
/// assert!(top.to_vec::<i32>().unwrap().iter().all(|&v| v == i32::MAX));
/// ```
#[track_caller]
pub fn randint(
    key: &Key,
    shape: impl AsRef<[usize]>,
    minval: impl ArrayLike,
    maxval: impl ArrayLike,
) -> Array {
    randint_dtype(key, shape, minval, maxval, crate::dtype::default_int())
}

/// Uniform integers of `dtype` (any signed or unsigned integer type) in `[minval, maxval)`.
///
/// Bounds are taken as JAX takes them with `jax_enable_x64` and an explicit `dtype`: integer
/// bounds keep their values (`uint64` ones included), float bounds are truncated to `int64`,
/// and then both are clipped to the range of `dtype`, where a `maxval` past its maximum widens
/// the span by one so the maximum stays reachable. Types narrower than 32 bits are drawn as
/// `int32` and converted, as JAX does to limit the modulo bias; their bounds are first
/// converted to `int32` as JAX converts them (wrapping, so `1 << 40` becomes 0) and clipped to
/// the type's range, `maxval` to one past its maximum (`randint(.., 0, 256, U8)`).
#[track_caller]
pub fn randint_dtype(
    key: &Key,
    shape: impl AsRef<[usize]>,
    minval: impl ArrayLike,
    maxval: impl ArrayLike,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    key.single("randint");
    if !dtype.is_int() {
        panic!("randint: dtype must be an integer type, got {dtype}");
    }
    let dtype = crate::dtype::canonicalize(dtype);
    // The draws are words of at least 32 bits, as wide as any result element.
    crate::shape::check("randint", shape, word_dtype(dtype.size_of() * 8));
    let narrow = dtype.size_of() < 4;
    let lo = int_bound("minval", minval, shape, narrow);
    let hi = int_bound("maxval", maxval, shape, narrow);
    if !narrow {
        return randint_bits(key, &lo, &hi, shape, dtype);
    }
    let (min, max) = int_range(dtype);
    let clip = |v: &Array, top: i128| {
        jnp::clip(v, int_scalar(min, DType::I32), int_scalar(top, DType::I32))
    };
    randint_bits(key, &clip(&lo, max), &clip(&hi, max + 1), shape, DType::I32).astype(dtype)
}

/// An integer bound, checked to broadcast to `shape`, with its exact value: `int64` for signed
/// integers, `uint64` for unsigned ones and `int64` truncation for floats (JAX's `astype(int)`
/// under x64). With `narrow`, the value is instead the bound converted to `int32`, as JAX
/// converts the bounds of 8- and 16-bit samples.
#[track_caller]
fn int_bound(name: &str, x: impl ArrayLike, shape: &[usize], narrow: bool) -> Array {
    let x = x.into_operand("randint");
    if x.dtype().is_bool() {
        panic!("randint: {name} must be an integer, got bool");
    }
    if broadcast_shapes(x.shape(), shape).as_deref() != Some(shape) {
        panic!(
            "randint: {name} of shape {} does not broadcast to the sample shape {}",
            ShapeDisplay(x.shape()),
            ShapeDisplay(shape)
        );
    }
    if narrow {
        x.astype(DType::I32)
    } else if x.dtype().is_unsigned_int() {
        // Through int64 the values above i64::MAX would wrap negative.
        crate::jnp::convert(&x, DType::U64, false)
    } else {
        crate::jnp::convert(&x, DType::I64, false)
    }
}

/// The smallest and largest values of an integer dtype.
fn int_range(dtype: DType) -> (i128, i128) {
    let bits = dtype.size_of() as u32 * 8;
    if dtype.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `v` as a 0-d array of the integer `dtype`, whose range holds it.
fn int_scalar(v: i128, dtype: DType) -> Array {
    if dtype.is_unsigned_int() {
        Array::from(v as u64).astype(dtype)
    } else {
        Array::from(v as i64).astype(dtype)
    }
}

/// The unsigned type of `nbits`-bit random words (32 bits for narrower samples).
fn word_dtype(nbits: usize) -> DType {
    if nbits == 64 {
        DType::U64
    } else {
        DType::U32
    }
}

/// `x` clamped into the range of `dtype` and converted to it (JAX's
/// `_convert_and_clip_integer`): the clamp runs in `x`'s dtype, to the part of `dtype`'s range
/// it can hold.
fn convert_and_clip(x: &Array, dtype: DType) -> Array {
    let ((min, max), (xmin, xmax)) = (int_range(dtype), int_range(x.dtype()));
    let (lo, hi) = (int_scalar(min.max(xmin), x.dtype()), int_scalar(max.min(xmax), x.dtype()));
    jnp::clip(x, lo, hi).astype(dtype)
}

/// JAX's `_randint` for a 32- or 64-bit `dtype`: two draws of `nbits` bits, combined as
/// `(hi % span * (2^nbits % span) + lo % span) % span` in unsigned `nbits`-bit arithmetic,
/// with `lax.rem`'s `x % 0 == x` (a span of 2^nbits wraps to 0). Bounds are `int64`, `uint64`
/// or `int32` arrays that broadcast to `shape`; it is all array operations, so it traces.
#[track_caller]
fn randint_bits(key: &Key, lo: &Array, hi: &Array, shape: &[usize], dtype: DType) -> Array {
    let nbits = dtype.size_of() * 8;
    let word = word_dtype(nbits);
    let (_, max) = int_range(dtype);
    // A maxval above the dtype's maximum widens the span by one, so that the maximum itself
    // can be drawn.
    let hi_max = max.min(int_range(hi.dtype()).1);
    let out_of_range = jnp::greater(hi, int_scalar(hi_max, hi.dtype()));
    let (l, h) = (convert_and_clip(lo, dtype), convert_and_clip(hi, dtype));
    let (lw, hw) = (l.astype(word), h.astype(word));
    let nonempty = jnp::greater(&h, &l);
    // An empty range (maxval <= minval) has span 1, which always gives minval.
    let span = jnp::where_(&nonempty, jnp::subtract(&hw, &lw), int_scalar(1, word));
    let span = jnp::where_(
        jnp::logical_and(&out_of_range, &nonempty),
        jnp::add(&span, int_scalar(1, word)),
        &span,
    );
    let m = lax::rem(int_scalar(1i128 << (nbits / 2), word), &span);
    let m = lax::rem(jnp::multiply(&m, &m), &span);
    let keys = split(key, 2);
    let higher = bits_dtype(&keys.get(0), shape, word);
    let lower = bits_dtype(&keys.get(1), shape, word);
    let offset = jnp::add(jnp::multiply(lax::rem(&higher, &span), &m), lax::rem(&lower, &span));
    let offset = lax::rem(&offset, &span);
    // The words hold the result's bits; wrapping conversion reinterprets them.
    jnp::add(&lw, &offset).astype(dtype)
}

/// `n` as the number of `int32` indices `op` makes, which must all fit in `int32`.
#[track_caller]
fn index_count(op: &str, n: usize, what: &str) -> usize {
    if n > i32::MAX as usize {
        panic!(
            "{op}: {what} has {n} elements, but its indices are int32, which count at most \
             {} (JAX raises OverflowError)",
            i32::MAX
        );
    }
    n
}

/// A random permutation of `0..n` as `int32` (`jax.random.permutation(key, n)`).
///
/// Like JAX, it sorts by fresh random 32-bit keys for as many rounds as make collisions
/// negligible (one round up to 1625 elements).
///
/// ```
/// use rjax_runtime::random;
/// let mut p = random::permutation(&random::key(0), 5).to_vec::<i32>().unwrap();
/// p.sort();
/// assert_eq!(p, vec![0, 1, 2, 3, 4]);
/// ```
#[track_caller]
pub fn permutation(key: &Key, n: usize) -> Array {
    key.single("permutation");
    let n = index_count("permutation", n, "the range 0..n");
    shuffled_indices(key, &[n], 0)
}

/// `x` randomly permuted along `axis` (`jax.random.permutation(key, x, axis, independent)`):
/// the same permutation for every slice along `axis`, or with `independent`, a separate one
/// for each lane.
#[track_caller]
pub fn permutation_array(key: &Key, x: &Array, axis: isize, independent: bool) -> Array {
    key.single("permutation");
    if x.ndim() == 0 {
        panic!("permutation: x must be at least 1-D (use permutation(key, n) to permute 0..n)");
    }
    let axis = normalize_axis("permutation", axis, x.ndim());
    index_count("permutation", x.shape()[axis], &format!("axis {axis} of x"));
    if independent || x.ndim() == 1 {
        // Sorting x by the keys is gathering it at the sorted order of its positions.
        let order = shuffled_indices(key, x.shape(), axis);
        return jnp::take_along_axis(x, &order, axis as isize);
    }
    let order = shuffled_indices(key, &[x.shape()[axis]], 0);
    jnp::take(x, &order, Some(axis as isize))
}

/// JAX's `_shuffle` of an array of `shape` along `axis`, as the `int32` positions along `axis`
/// that its elements come from: rounds of stable sorts by random 32-bit keys, as many as make
/// collisions negligible (one up to 1625 elements).
#[track_caller]
fn shuffled_indices(key: &Key, shape: &[usize], axis: usize) -> Array {
    let n = crate::shape::check("permutation", shape, DType::U32);
    let rounds = (3.0 * (n.max(1) as f64).ln() / (u32::MAX as f64).ln()).ceil() as usize;
    let (mut key, mut order) = (
        key.clone(),
        bind1(&Iota { dtype: DType::I32, shape: shape.to_vec(), dimension: axis }, &[]),
    );
    for _ in 0..rounds {
        let keys = split(&key, 2);
        key = keys.get(0);
        let sort_keys = bits_dtype(&keys.get(1), shape, DType::U32);
        let sort = Sort { dimension: axis, num_keys: 1 };
        order = bind(&sort, &[&sort_keys, &order]).pop().expect("sort returns its operands");
    }
    order
}

/// The first `k` elements of `x` along `axis`.
fn first(x: &Array, axis: usize, k: usize) -> Array {
    let mut limit_indices = x.shape().to_vec();
    limit_indices[axis] = k;
    let slice =
        Slice { start_indices: vec![0; x.ndim()], limit_indices, strides: vec![1; x.ndim()] };
    bind1(&slice, &[x])
}

/// `int32` samples of `shape` from `0..n`, with or without replacement
/// (`jax.random.choice(key, n, shape, replace)`).
///
/// Panics when `n == 0` and samples are requested, or without replacement when `shape` holds
/// more than `n` samples.
///
/// ```
/// use rjax_runtime::random;
/// let hand = random::choice(&random::key(3), 52, [5], false).to_vec::<i32>().unwrap();
/// assert!(hand.iter().all(|&c| (0..52).contains(&c)));
/// ```
#[track_caller]
pub fn choice(key: &Key, n: usize, shape: impl AsRef<[usize]>, replace: bool) -> Array {
    choose(key, Population::Range(n), shape.as_ref(), replace, None)
}

/// `int32` samples from `0..n` drawn with probabilities `p` (a 1-D array of length `n`, which
/// need not be normalized), with or without replacement, as JAX draws them: by inverting the
/// cumulative sum with one uniform per sample, or (without replacement) by the Gumbel top-k
/// trick.
#[track_caller]
pub fn choice_weighted(
    key: &Key,
    n: usize,
    shape: impl AsRef<[usize]>,
    replace: bool,
    p: &Array,
) -> Array {
    choose(key, Population::Range(n), shape.as_ref(), replace, Some(p))
}

/// Samples of the slices of `a` along `axis` (`jax.random.choice(key, a, shape, replace, p,
/// axis)`): the result has shape `a.shape[..axis] + shape + a.shape[axis + 1..]`.
#[track_caller]
pub fn choice_array(
    key: &Key,
    a: &Array,
    shape: impl AsRef<[usize]>,
    replace: bool,
    p: Option<&Array>,
    axis: isize,
) -> Array {
    if a.ndim() == 0 {
        panic!("choice: a must be at least 1-D (use choice(key, n, ..) to sample from 0..n)");
    }
    let axis = normalize_axis("choice", axis, a.ndim());
    choose(key, Population::Axis(a, axis), shape.as_ref(), replace, p)
}

/// What `choice` samples from.
enum Population<'a> {
    Range(usize),
    Axis(&'a Array, usize),
}

#[track_caller]
fn choose(key: &Key, pop: Population, shape: &[usize], replace: bool, p: Option<&Array>) -> Array {
    key.single("choice");
    let (n_inputs, dtype, out_shape) = match pop {
        Population::Range(n) => (n, DType::I32, shape.to_vec()),
        Population::Axis(a, axis) => {
            let mut out: Vec<usize> = a.shape()[..axis].to_vec();
            out.extend_from_slice(shape);
            out.extend_from_slice(&a.shape()[axis + 1..]);
            (a.shape()[axis], a.dtype(), out)
        }
    };
    // The samples are int32 indices, then (for an array) its slices.
    let n_draws = crate::shape::check("choice", shape, DType::I32);
    crate::shape::check("choice", &out_shape, dtype);
    if n_draws == 0 {
        return jnp::zeros_dtype(&out_shape, dtype);
    }
    if n_inputs == 0 {
        let population = match pop {
            Population::Range(_) => "0..0".to_string(),
            Population::Axis(a, axis) => {
                format!("axis {axis} of shape {}", ShapeDisplay(a.shape()))
            }
        };
        panic!(
            "choice: the population must not be empty unless no samples are taken (population \
             {population}, sample shape {})",
            ShapeDisplay(shape)
        );
    }
    if !replace && n_draws > n_inputs {
        panic!(
            "choice: cannot take a larger sample (size {n_draws}) than the population \
             (size {n_inputs}) without replacement"
        );
    }
    index_count("choice", n_inputs, "the population");
    let idx = match p {
        Some(p) => weighted_indices(key, p, n_inputs, n_draws, shape, replace),
        None if replace => super::randint(key, shape, 0, n_inputs as i64),
        None => {
            // Without replacement: the first samples of a permutation, which for an array
            // JAX takes along the axis after permuting it whole.
            let perm = match pop {
                Population::Range(n) => permutation(key, n),
                Population::Axis(a, axis) => {
                    let permuted = permutation_array(key, a, axis as isize, false);
                    return first(&permuted, axis, n_draws).with_shape(out_shape);
                }
            };
            first(&perm, 0, n_draws).with_shape(shape.to_vec())
        }
    };
    match pop {
        Population::Range(_) => idx,
        Population::Axis(a, axis) => {
            let flat = idx.with_shape(vec![n_draws]);
            jnp::take(a, &flat, Some(axis as isize)).with_shape(out_shape)
        }
    }
}

/// `int32` indices of `shape` drawn with probabilities `p`, in the float type of `p` (integers
/// become `float32`).
#[track_caller]
fn weighted_indices(
    key: &Key,
    p: &Array,
    n_inputs: usize,
    n_draws: usize,
    shape: &[usize],
    replace: bool,
) -> Array {
    if p.shape() != [n_inputs] {
        panic!(
            "choice: p must be a 1-D array with one probability per candidate ({n_inputs}), \
             got shape {}",
            ShapeDisplay(p.shape())
        );
    }
    let dtype = if p.dtype().is_float() { p.dtype() } else { crate::dtype::default_float() };
    let dtype = check_float("choice", dtype);
    let p = p.astype(dtype);
    if replace {
        // Invert the cumulative distribution: r = total * (1 - u) is in (0, total].
        let cdf = jnp::cumsum(&p, Some(0));
        let last = Slice {
            start_indices: vec![n_inputs - 1],
            limit_indices: vec![n_inputs],
            strides: vec![1],
        };
        let total = bind1(&last, &[&cdf]).with_shape(vec![]);
        let u = unit_uniform("choice", key, shape, dtype);
        jnp::searchsorted(&cdf, jnp::multiply(&total, jnp::subtract(1.0, &u)))
    } else {
        // Gumbel top-k: the k largest of log(p) + Gumbel noise are a weighted sample.
        let g = sample("choice", Sampler::Gumbel, key, &[n_inputs], dtype, &[]);
        let scores = jnp::add(&g, jnp::log(&p));
        let top = bind(&TopK { k: n_draws, axis: 0 }, &[&scores]);
        top[1].with_shape(shape.to_vec())
    }
}

/// Category indices (`int32`) drawn from `softmax(logits)` along `axis`
/// (`jax.random.categorical(key, logits, axis)`): one per slice, so the result has the shape
/// of `logits` without `axis`. Uses the Gumbel-max trick as JAX does:
/// `argmax(logits + gumbel(key, logits.shape), axis)`.
///
/// Panics if `axis` has length 0 (no categories), as JAX raises.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let logits = jnp::array(&[0.0f32, 10.0, 0.0]);
/// assert_eq!(random::categorical(&random::key(0), &logits, -1).item::<i32>().unwrap(), 1);
/// ```
#[track_caller]
pub fn categorical(key: &Key, logits: &Array, axis: isize) -> Array {
    categorical_impl(key, logits, axis, None)
}

/// [`categorical`] with an explicit sample `shape`, which must end with the batch shape of
/// `logits` (its shape without `axis`) up to broadcasting; leading axes are independent samples.
#[track_caller]
pub fn categorical_shape(
    key: &Key,
    logits: &Array,
    axis: isize,
    shape: impl AsRef<[usize]>,
) -> Array {
    categorical_impl(key, logits, axis, Some(shape.as_ref()))
}

#[track_caller]
fn categorical_impl(key: &Key, logits: &Array, axis: isize, shape: Option<&[usize]>) -> Array {
    key.single("categorical");
    if !logits.dtype().is_float() {
        panic!("categorical: logits must be floating point, got {}", logits.dtype());
    }
    check_float("categorical", logits.dtype());
    let axis = normalize_axis("categorical", axis, logits.ndim());
    let mut batch = logits.shape().to_vec();
    let classes = batch.remove(axis);
    if classes == 0 {
        // There is no category to draw (JAX's arg-max over the empty axis raises), even when
        // no samples are asked for.
        panic!(
            "categorical: attempt to draw from 0 classes: axis {axis} of the logits of shape {} \
             is empty",
            ShapeDisplay(logits.shape())
        );
    }
    let shape = shape.map_or(batch.clone(), <[usize]>::to_vec);
    if shape.len() < batch.len() || broadcast_shapes(&shape, &batch).as_deref() != Some(&shape[..])
    {
        panic!(
            "categorical: the sample shape {} must end with the batch shape {} of the logits",
            ShapeDisplay(&shape),
            ShapeDisplay(&batch)
        );
    }
    crate::shape::check("categorical", &shape, DType::I32);
    if shape.contains(&0) {
        // No samples: nothing to draw from however many classes there are.
        return jnp::zeros_dtype(&shape, DType::I32);
    }
    index_count("categorical", classes, &format!("axis {axis} of the logits"));
    let prefix = shape.len() - batch.len();
    let mut noise_shape = shape.clone();
    noise_shape.insert(prefix + axis, classes);
    let mut logits_shape = vec![1; prefix];
    logits_shape.extend_from_slice(logits.shape());
    let noise = sample("categorical", Sampler::Gumbel, key, &noise_shape, logits.dtype(), &[]);
    let scores = jnp::add(&noise, logits.with_shape(logits_shape));
    jnp::argmax_axis(&scores, (prefix + axis) as isize, false)
}
