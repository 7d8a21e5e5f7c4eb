//! Integer and index samplers: `randint`, `permutation`, `choice`, `categorical`.

use super::continuous::{check_float, sample};
use super::host::{argmax_axis, cumsum, searchsorted_left, sort_by_keys, take_axis, top_k};
use super::{bits_dtype, split, uniform_dtype, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::exec::cpu::samplers::SampleFloat;
use crate::jnp::{self, ArrayLike};
use crate::primitives::random::{broadcast_to, Sampler};
use crate::shape::{broadcast_shapes, normalize_axis, size, ShapeDisplay};

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
    randint_dtype(key, shape, minval, maxval, DType::I32)
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
    let narrow = dtype.size_of() < 4;
    let lo = int_bound("minval", minval, shape, narrow);
    let hi = int_bound("maxval", maxval, shape, narrow);
    if !narrow {
        return randint_bits(key, &lo, &hi, shape, dtype);
    }
    let (min, max) = int_range(dtype);
    let clip =
        |v: &[i128], top: i128| -> Vec<i128> { v.iter().map(|&x| x.clamp(min, top)).collect() };
    randint_bits(key, &clip(&lo, max), &clip(&hi, max + 1), shape, DType::I32).astype(dtype)
}

/// An integer bound broadcast to `shape`, with its exact value: `int64` for signed integers,
/// `uint64` for unsigned ones and `int64` truncation for floats (JAX's `astype(int)` under
/// x64). With `narrow`, the value is instead the bound converted to `int32`, as JAX converts
/// the bounds of 8- and 16-bit samples.
#[track_caller]
fn int_bound(name: &str, x: impl ArrayLike, shape: &[usize], narrow: bool) -> Vec<i128> {
    let x = x.into_array();
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
    let wide = |v: Vec<i64>| v.into_iter().map(i128::from).collect();
    if narrow {
        return wide(broadcast_to::<i64>(&x.astype(DType::I32).astype(DType::I64), shape));
    }
    if x.dtype().is_unsigned_int() {
        // Through int64 the values above i64::MAX would wrap negative.
        let v = broadcast_to::<u64>(&x.astype(DType::U64), shape);
        return v.into_iter().map(i128::from).collect();
    }
    wide(broadcast_to::<i64>(&x.astype(DType::I64), shape))
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

/// JAX's `_randint` for a 32- or 64-bit `dtype`: two draws of `nbits` bits, combined as
/// `(hi % span * (2^nbits % span) + lo % span) % span` in unsigned `nbits`-bit arithmetic.
#[track_caller]
fn randint_bits(key: &Key, lo: &[i128], hi: &[i128], shape: &[usize], dtype: DType) -> Array {
    let nbits = dtype.size_of() * 8;
    let mask = if nbits == 64 { u64::MAX } else { (1u64 << nbits) - 1 };
    let (min, max) = int_range(dtype);
    let keys = split(key, 2);
    let word = if nbits == 64 { DType::U64 } else { DType::U32 };
    let draw = |k: &Key| bits_dtype(k, shape, word).astype(DType::U64).to_vec::<u64>().unwrap();
    let (higher, lower) = (draw(&keys.get(0)), draw(&keys.get(1)));
    let words: Vec<u64> = (0..lo.len())
        .map(|i| {
            // Bounds are clipped into the dtype; a maxval above its maximum widens the span by
            // one, so that the maximum itself can be drawn.
            let out_of_range = hi[i] > max;
            let (l, h) = (lo[i].clamp(min, max), hi[i].clamp(min, max));
            let (lw, hw) = (l as u64 & mask, h as u64 & mask);
            // An empty range (maxval <= minval) has span 1, which always gives minval.
            let mut span = if h <= l { 1 } else { hw.wrapping_sub(lw) & mask };
            if out_of_range && h > l {
                span = span.wrapping_add(1) & mask;
            }
            let m = urem(1u64 << (nbits / 2), span);
            let m = urem(m.wrapping_mul(m) & mask, span);
            let offset = urem(higher[i], span).wrapping_mul(m).wrapping_add(urem(lower[i], span));
            lw.wrapping_add(urem(offset & mask, span)) & mask
        })
        .collect();
    let out = Array::from_shape_vec(shape, words);
    // The words hold the result's bits; wrapping conversion reinterprets them.
    match dtype {
        DType::U64 => out,
        DType::I64 => out.astype(DType::I64),
        d => out.astype(DType::U32).astype(d),
    }
}

/// XLA's unsigned remainder, where `x % 0 == x`.
fn urem(x: u64, span: u64) -> u64 {
    if span == 0 {
        x
    } else {
        x % span
    }
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
    shuffle(key, &jnp::arange(n as i32), 0)
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
    if independent || x.ndim() == 1 {
        return shuffle(key, x, axis);
    }
    let order = shuffle(key, &jnp::arange(x.shape()[axis] as i32), 0);
    take_axis(x, &indices(&order), axis)
}

/// JAX's `_shuffle`: rounds of stable sorts by random 32-bit keys.
fn shuffle(key: &Key, x: &Array, axis: usize) -> Array {
    let rounds = (3.0 * (x.size().max(1) as f64).ln() / (u32::MAX as f64).ln()).ceil() as usize;
    let (mut key, mut x) = (key.clone(), x.clone());
    for _ in 0..rounds {
        let keys = split(&key, 2);
        key = keys.get(0);
        let sort_keys = bits_dtype(&keys.get(1), x.shape(), DType::U32);
        x = sort_by_keys(sort_keys.as_slice::<u32>().expect("bits are uint32"), &x, axis);
    }
    x
}

/// An integer index array as `usize`s.
fn indices(idx: &Array) -> Vec<usize> {
    idx.astype(DType::I64).to_vec::<i64>().unwrap().into_iter().map(|i| i as usize).collect()
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
    let n_inputs = match pop {
        Population::Range(n) => n,
        Population::Axis(a, axis) => a.shape()[axis],
    };
    let n_draws = size(shape);
    if n_draws == 0 {
        let dtype = match pop {
            Population::Range(_) => DType::I32,
            Population::Axis(a, _) => a.dtype(),
        };
        return jnp::zeros_dtype(shape, dtype);
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
    let idx: Vec<usize> = match p {
        Some(p) => weighted_indices(key, p, n_inputs, n_draws, shape, replace),
        None if replace => indices(&super::randint(key, shape, 0, n_inputs as i64)),
        None => {
            // Without replacement: the first samples of a permutation, which for an array
            // JAX takes along the axis after permuting it whole.
            let perm = match pop {
                Population::Range(n) => permutation(key, n),
                Population::Axis(a, axis) => {
                    let permuted = permutation_array(key, a, axis as isize, false);
                    let first: Vec<usize> = (0..n_draws).collect();
                    return reshape_samples(&take_axis(&permuted, &first, axis), axis, shape);
                }
            };
            indices(&perm)[..n_draws].to_vec()
        }
    };
    match pop {
        Population::Range(_) => {
            Array::from_shape_vec(shape, idx.iter().map(|&i| i as i32).collect::<Vec<i32>>())
        }
        Population::Axis(a, axis) => reshape_samples(&take_axis(a, &idx, axis), axis, shape),
    }
}

/// Replaces the sample axis of a gathered array by the sample `shape`.
fn reshape_samples(x: &Array, axis: usize, shape: &[usize]) -> Array {
    let mut out: Vec<usize> = x.shape()[..axis].to_vec();
    out.extend_from_slice(shape);
    out.extend_from_slice(&x.shape()[axis + 1..]);
    x.with_shape(out)
}

/// Indices drawn with probabilities `p`, in the float type of `p` (integers become `float32`).
#[track_caller]
fn weighted_indices(
    key: &Key,
    p: &Array,
    n_inputs: usize,
    n_draws: usize,
    shape: &[usize],
    replace: bool,
) -> Vec<usize> {
    if p.shape() != [n_inputs] {
        panic!(
            "choice: p must be a 1-D array with one probability per candidate ({n_inputs}), \
             got shape {}",
            ShapeDisplay(p.shape())
        );
    }
    let dtype = if p.dtype().is_float() { p.dtype() } else { DType::F32 };
    check_float("choice", dtype);
    let p = p.astype(dtype);
    match dtype {
        DType::F32 => weighted::<f32>(key, &p, n_draws, shape, replace),
        _ => weighted::<f64>(key, &p, n_draws, shape, replace),
    }
}

fn weighted<T: SampleFloat>(
    key: &Key,
    p: &Array,
    n_draws: usize,
    shape: &[usize],
    replace: bool,
) -> Vec<usize> {
    let p = p.as_slice::<T>().expect("converted to the sample dtype");
    let dtype = T::DTYPE;
    if replace {
        // Invert the cumulative distribution: r = total * (1 - u) is in (0, total].
        let cdf = cumsum(p);
        let total = cdf[cdf.len() - 1];
        let u = uniform_dtype(key, shape, dtype);
        let u = u.as_slice::<T>().expect("uniform has the requested dtype");
        u.iter().map(|&u| searchsorted_left(&cdf, total * (T::ONE - u))).collect()
    } else {
        // Gumbel top-k: the k largest of log(p) + Gumbel noise are a weighted sample.
        let g = sample("choice", Sampler::Gumbel, key, &[p.len()], dtype, &[]);
        let g = g.as_slice::<T>().expect("gumbel has the requested dtype");
        let scores: Vec<T> = g.iter().zip(p).map(|(&g, &p)| g + p.log()).collect();
        top_k(&scores, n_draws)
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
    let prefix = shape.len() - batch.len();
    let mut noise_shape = shape.clone();
    noise_shape.insert(prefix + axis, classes);
    let mut logits_shape = vec![1; prefix];
    logits_shape.extend_from_slice(logits.shape());
    let noise = sample("categorical", Sampler::Gumbel, key, &noise_shape, logits.dtype(), &[]);
    let scores = jnp::add(&noise, logits.with_shape(logits_shape));
    let best = match scores.dtype() {
        DType::F32 => argmax_axis(scores.as_slice::<f32>().unwrap(), &noise_shape, prefix + axis),
        _ => argmax_axis(scores.as_slice::<f64>().unwrap(), &noise_shape, prefix + axis),
    };
    Array::from_shape_vec(shape, best)
}
