//! Count samplers: `poisson` (Knuth's multiplication method below rate 10, Hörmann's
//! transformed rejection above), `binomial` (inversion by geometric waiting times below
//! `n * min(p, 1 - p) = 10`, BTRS above) and `multinomial` (a `lax::scan` of binomials over the
//! categories), in JAX's order of operations. Each rejection or waiting-time method is one
//! `lax::while_loop` over the whole sample, which runs until every element is done; both
//! methods of a sampler run on the same key and each element takes its method's result, as
//! in JAX.

use super::continuous::{bound, check_float, unit_uniform};
use super::{split, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::jnp::{self, ArrayLike};
use crate::lax;
use crate::shape::{broadcast_shapes, ShapeDisplay};

/// A 0-d constant of `dtype`.
fn constant(v: f64, dtype: DType) -> Array {
    Array::from(v).astype(dtype)
}

/// Poisson `int32` counts with rate `lam` (`jax.random.poisson(key, lam, shape)`); `lam`
/// broadcasts to `shape` (pass `lam`'s own shape for JAX's default). Rates are taken as
/// `float32`, as JAX takes them; a rate of 0 gives 0.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let k = random::poisson(&random::key(0), jnp::array([0.0f32, 2.0, 50.0]), [3]);
/// assert_eq!(k.to_vec::<i32>().unwrap()[0], 0);
/// ```
#[track_caller]
pub fn poisson(key: &Key, lam: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    poisson_dtype(key, lam, shape, crate::dtype::default_int())
}

/// Poisson counts of the integer `dtype` (`int64` is JAX's default with `jax_enable_x64`).
///
/// Rates below 10 (and NaN) use Knuth's method: count uniforms until their product falls
/// below `exp(-lam)`. Larger rates use Hörmann's transformed rejection (PTRS). A NaN rate
/// gives -1 converted to `dtype`, as in JAX.
#[track_caller]
pub fn poisson_dtype(
    key: &Key,
    lam: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    key.single("poisson");
    if !dtype.is_int() {
        panic!("poisson: dtype must be an integer type, got {dtype}");
    }
    let dtype = crate::dtype::canonicalize(dtype);
    crate::shape::check("poisson", shape, dtype);
    let lam = jnp::broadcast_to(&bound("poisson", "lam", lam, DType::F32, shape), shape);
    let c = |v: f64| constant(v, DType::F32);
    let use_knuth = jnp::logical_or(jnp::isnan(&lam), jnp::less(&lam, c(10.0)));
    let lam_knuth = jnp::where_(&use_knuth, &lam, c(0.0));
    // Rejection is run on every element; the ones Knuth draws take a rate it accepts fast.
    let lam_rejection = jnp::where_(&use_knuth, c(1e5), &lam);
    let knuth = poisson_knuth(key, &lam_knuth, shape, dtype);
    let rejection = poisson_rejection(key, &lam_rejection, shape).astype(dtype);
    let result = jnp::where_(&use_knuth, &knuth, &rejection);
    jnp::where_(jnp::equal(&lam, c(0.0)), jnp::zeros_dtype(shape, dtype), &result)
}

/// JAX's `_poisson_knuth`: `k` counts the steps while the running sum of `log(u)` stays above
/// `-lam`; the sample is `k - 1`.
fn poisson_knuth(key: &Key, lam: &Array, shape: &[usize], dtype: DType) -> Array {
    let neg_lam = jnp::negative(lam);
    let one = constant(1.0, dtype);
    let init = (key.clone(), jnp::zeros_dtype(shape, dtype), jnp::zeros_dtype(shape, DType::F32));
    let (_, k, _) = lax::while_loop(
        |(_, _, log_prod): &(Key, Array, Array)| jnp::any(&jnp::greater(log_prod, &neg_lam)),
        |(key, k, log_prod)| {
            let keys = split(&key, 2);
            let k = jnp::where_(jnp::greater(&log_prod, &neg_lam), jnp::add(&k, &one), &k);
            let u = unit_uniform("poisson", &keys.get(1), shape, DType::F32);
            (keys.get(0), k, jnp::add(&log_prod, jnp::log(&u)))
        },
        init,
    );
    jnp::subtract(&k, &one)
}

/// JAX's `_poisson_rejection` (Hörmann's PTRS) for `float32` rates of at least 10: the
/// accepted `k` as a float.
fn poisson_rejection(key: &Key, lam: &Array, shape: &[usize]) -> Array {
    let dtype = DType::F32;
    let c = |v: f64| constant(v, dtype);
    let log_lam = jnp::log(lam);
    let b = jnp::add(c(0.931), jnp::multiply(c(2.53), jnp::sqrt(lam)));
    let a = jnp::add(c(-0.059), jnp::multiply(c(0.02483), &b));
    let inv_alpha = jnp::add(c(1.1239), jnp::divide(c(1.1328), jnp::subtract(&b, c(3.4))));
    let v_r = jnp::subtract(c(0.9277), jnp::divide(c(3.6224), jnp::subtract(&b, c(2.0))));
    let init = (key.clone(), jnp::full_dtype(shape, -1.0, dtype), jnp::full(shape, false));
    let (_, k, _) = lax::while_loop(
        |(_, _, accepted): &(Key, Array, Array)| jnp::any(&jnp::logical_not(accepted)),
        |(key, k_out, accepted)| {
            let keys = split(&key, 3);
            let u = jnp::subtract(unit_uniform("poisson", &keys.get(1), shape, dtype), c(0.5));
            let v = unit_uniform("poisson", &keys.get(2), shape, dtype);
            let us = jnp::subtract(c(0.5), jnp::abs(&u));
            let two_a = jnp::multiply(c(2.0), &a);
            let k = jnp::floor(&jnp::add(
                jnp::add(jnp::multiply(jnp::add(jnp::divide(&two_a, &us), &b), &u), lam),
                c(0.43),
            ));
            let bound_den = jnp::add(jnp::divide(&a, jnp::multiply(&us, &us)), &b);
            let s = jnp::log(&jnp::divide(jnp::multiply(&v, &inv_alpha), &bound_den));
            let t = jnp::subtract(
                jnp::add(jnp::negative(lam), jnp::multiply(&k, &log_lam)),
                lax::lgamma(jnp::add(&k, c(1.0))),
            );
            let accept1 =
                jnp::logical_and(jnp::greater_equal(&us, c(0.07)), jnp::less_equal(&v, &v_r));
            let reject = jnp::logical_or(
                jnp::less(&k, c(0.0)),
                jnp::logical_and(jnp::less(&us, c(0.013)), jnp::greater(&v, &us)),
            );
            let accept2 = jnp::less_equal(&s, &t);
            let accept =
                jnp::logical_or(&accept1, jnp::logical_and(jnp::logical_not(&reject), &accept2));
            let k_out = jnp::where_(&accept, &k, &k_out);
            (keys.get(0), k_out, jnp::logical_or(&accepted, &accept))
        },
        init,
    );
    k
}

/// Binomial `float32` counts of successes in `n` trials of probability `p`
/// (`jax.random.binomial(key, n, p, shape)`); `n` and `p` broadcast to `shape` (pass their
/// broadcast shape for JAX's default).
///
/// As in JAX, `n` is floored; `p > 1/2` draws the failures with `1 - p`; a NaN or negative
/// `n`, a NaN `p` or a `p` outside `[0, 1]` gives NaN, and an infinite `n` gives infinity.
///
/// ```
/// use rjax_runtime::random;
/// let k = random::binomial(&random::key(0), 20.0, 0.3, [4]).to_vec::<f32>().unwrap();
/// assert!(k.iter().all(|&v| (0.0..=20.0).contains(&v) && v.fract() == 0.0));
/// ```
#[track_caller]
pub fn binomial(
    key: &Key,
    n: impl ArrayLike,
    p: impl ArrayLike,
    shape: impl AsRef<[usize]>,
) -> Array {
    binomial_dtype(key, n, p, shape, crate::dtype::default_float())
}

/// Binomial counts as the float `dtype`. They are computed in the float type of `p`: its own
/// for a float array, `dtype` for a Rust scalar (as JAX's default float is `float64` with
/// `jax_enable_x64`), `float32` for an integer array.
#[track_caller]
pub fn binomial_dtype(
    key: &Key,
    n: impl ArrayLike,
    p: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    let shape = shape.as_ref();
    key.single("binomial");
    if !dtype.is_float() {
        panic!("binomial: dtype must be a float type, got {dtype}");
    }
    let dtype = check_float("binomial", dtype);
    let p = p.into_array();
    let float = if p.dtype().is_float() && !p.is_weak() {
        p.dtype()
    } else if p.is_weak() {
        dtype
    } else {
        DType::F32
    };
    let float = check_float("binomial", float);
    crate::shape::check("binomial", shape, float);
    let count = jnp::broadcast_to(&bound("binomial", "n", n, float, shape), shape);
    let prob = jnp::broadcast_to(&bound("binomial", "p", p, float, shape), shape);
    let c = |v: f64| constant(v, float);
    let p_lt_half = jnp::less(&prob, c(0.5));
    let q = jnp::where_(&p_lt_half, &prob, jnp::subtract(c(1.0), &prob));
    let count_nan_or_neg = jnp::logical_or(jnp::isnan(&count), jnp::less(&count, c(0.0)));
    let count_inf = jnp::isinf(&count);
    let q_is_nan = jnp::isnan(&q);
    let q_l_0 = jnp::less(&q, c(0.0));
    let q = jnp::where_(jnp::logical_or(&q_is_nan, &q_l_0), c(0.01), &q);
    let use_inversion =
        jnp::logical_or(&count_nan_or_neg, jnp::less_equal(jnp::multiply(&count, &q), c(10.0)));
    let count = jnp::floor(&count);
    let count_inv = jnp::where_(&use_inversion, &count, c(0.0));
    let count_btrs = jnp::where_(&use_inversion, c(1e4), &count);
    let q_btrs = jnp::where_(&use_inversion, c(0.5), &q);
    let samples = jnp::where_(
        &use_inversion,
        binomial_inversion(key, &count_inv, &q, shape),
        btrs(key, &count_btrs, &q_btrs, shape),
    )
    .astype(dtype);
    let invalid = jnp::logical_or(jnp::logical_or(&q_l_0, &q_is_nan), &count_nan_or_neg);
    let samples = jnp::where_(&invalid, constant(f64::NAN, dtype), &samples);
    let samples = jnp::where_(
        jnp::logical_and(&count_inf, jnp::logical_not(&invalid)),
        constant(f64::INFINITY, dtype),
        &samples,
    );
    let keep = [&count_nan_or_neg, &q_is_nan, &count_inf]
        .into_iter()
        .fold(p_lt_half, |acc, m| jnp::logical_or(&acc, m));
    jnp::where_(&keep, &samples, jnp::subtract(count.astype(dtype), &samples))
}

/// JAX's `_binomial_inversion`: the number of geometric waiting times (`ceil(log(u) /
/// log(1 - p))`) whose running sum stays within `count`.
fn binomial_inversion(key: &Key, count: &Array, prob: &Array, shape: &[usize]) -> Array {
    let dtype = prob.dtype();
    let one = constant(1.0, dtype);
    let log1minusprob = jnp::log1p(&jnp::negative(prob));
    let zeros = jnp::zeros_dtype(shape, dtype);
    let (_, num_geom, _) = lax::while_loop(
        |(_, _, geom_sum): &(Key, Array, Array)| jnp::any(&jnp::less_equal(geom_sum, count)),
        |(key, num_geom, geom_sum)| {
            let keys = split(&key, 2);
            let more = jnp::less_equal(&geom_sum, count);
            let num_geom = jnp::where_(&more, jnp::add(&num_geom, &one), &num_geom);
            let u = unit_uniform("binomial", &keys.get(0), shape, dtype);
            let geom = jnp::ceil(&jnp::divide(jnp::log(&u), &log1minusprob));
            (keys.get(1), num_geom, jnp::add(&geom_sum, &geom))
        },
        (key.clone(), zeros.clone(), zeros),
    );
    jnp::subtract(&num_geom, &one)
}

/// JAX's `_stirling_approx_tail`: the tail `log k! - (Stirling's approximation)`, tabulated
/// for `k <= 9`. As in JAX, the series beyond the table is evaluated at `k` clamped to 9.
fn stirling_approx_tail(k: &Array) -> Array {
    let dtype = k.dtype();
    let c = |v: f64| constant(v, dtype);
    let table = Array::from_shape_vec(
        [10],
        vec![
            0.0810614667953272,
            0.0413406959554092,
            0.0276779256849983,
            0.02079067210376509,
            0.0166446911898211,
            0.0138761288230707,
            0.0118967099458917,
            0.0104112652619720,
            0.00925546218271273,
            0.00833056343336287,
        ],
    )
    .astype(dtype);
    let use_tail_values = jnp::less_equal(k, c(9.0));
    let k = jnp::clip(k, c(0.0), c(9.0));
    let kp1 = jnp::add(&k, c(1.0));
    let kp1sq = jnp::multiply(&kp1, &kp1);
    let inner = jnp::subtract(c(1.0 / 360.0), jnp::divide(c(1.0 / 1260.0), &kp1sq));
    let approx = jnp::divide(jnp::subtract(c(1.0 / 12.0), jnp::divide(&inner, &kp1sq)), &kp1);
    let index = jnp::floor(&k).astype(DType::I32);
    jnp::where_(&use_tail_values, jnp::take(&table, &index, Some(0)), &approx)
}

/// JAX's `_btrs`: Hörmann's transformed rejection with squeeze for `count * prob > 10`, the
/// accepted `k` as a float.
fn btrs(key: &Key, count: &Array, prob: &Array, shape: &[usize]) -> Array {
    let dtype = prob.dtype();
    let c = |v: f64| constant(v, dtype);
    use crate::jnp::{add, divide as div, multiply as mul, subtract as sub};
    let one_minus_p = sub(c(1.0), prob);
    let stddev = jnp::sqrt(&mul(mul(count, prob), &one_minus_p));
    let b = add(c(1.15), mul(c(2.53), &stddev));
    let a = add(add(c(-0.0873), mul(c(0.0248), &b)), mul(c(0.01), prob));
    let cc = add(mul(count, prob), c(0.5));
    let v_r = sub(c(0.92), div(c(4.2), &b));
    let r = div(prob, &one_minus_p);
    let alpha = mul(add(c(2.83), div(c(5.1), &b)), &stddev);
    let m = jnp::floor(&mul(add(count, c(1.0)), prob));
    let init = (key.clone(), jnp::full_dtype(shape, -1.0, dtype), jnp::full(shape, false));
    let (_, k, _) = lax::while_loop(
        |(_, _, accepted): &(Key, Array, Array)| jnp::any(&jnp::logical_not(accepted)),
        |(key, k_out, accepted)| {
            let keys = split(&key, 3);
            let u = unit_uniform("binomial", &keys.get(1), shape, dtype);
            let v = unit_uniform("binomial", &keys.get(2), shape, dtype);
            let u = sub(&u, c(0.5));
            let us = sub(c(0.5), jnp::abs(&u));
            let accept1 =
                jnp::logical_and(jnp::greater_equal(&us, c(0.07)), jnp::less_equal(&v, &v_r));
            let k = jnp::floor(&add(mul(add(div(mul(c(2.0), &a), &us), &b), &u), &cc));
            let reject = jnp::logical_or(jnp::less(&k, c(0.0)), jnp::greater(&k, count));
            let v = jnp::log(&div(mul(&v, &alpha), add(div(&a, mul(&us, &us)), &b)));
            let count_m1 = add(sub(count, &m), c(1.0));
            let count_k1 = add(sub(count, &k), c(1.0));
            let k1 = add(&k, c(1.0));
            let ub = [
                mul(add(&m, c(0.5)), jnp::log(&div(add(&m, c(1.0)), mul(&r, &count_m1)))),
                mul(add(count, c(1.0)), jnp::log(&div(&count_m1, &count_k1))),
                mul(add(&k, c(0.5)), jnp::log(&div(mul(&r, &count_k1), &k1))),
                stirling_approx_tail(&m),
                stirling_approx_tail(&sub(count, &m)),
            ]
            .into_iter()
            .reduce(|x, y| add(&x, &y))
            .expect("five terms");
            let ub = sub(sub(&ub, stirling_approx_tail(&k)), stirling_approx_tail(&sub(count, &k)));
            let accept2 = jnp::less_equal(&v, &ub);
            let accept =
                jnp::logical_or(&accept1, jnp::logical_and(jnp::logical_not(&reject), &accept2));
            let k_out = jnp::where_(&accept, &k, &k_out);
            (keys.get(0), k_out, jnp::logical_or(&accepted, &accept))
        },
        init,
    );
    k
}

/// Multinomial `float32` counts of `n` trials over the categories of `p` along its last axis
/// (`jax.random.multinomial(key, n, p, shape=shape)`). `shape` is the full result shape,
/// which must end with `p`'s number of categories (pass `p`'s shape for JAX's default); `p`
/// broadcasts to it and `n` to `shape[..-1]`.
///
/// ```
/// use rjax_runtime::{jnp, random};
/// let p = jnp::array([0.2f32, 0.3, 0.5]);
/// let x = random::multinomial(&random::key(0), 100.0, &p, [3]).to_vec::<f32>().unwrap();
/// assert_eq!(x.iter().sum::<f32>(), 100.0);
/// ```
#[track_caller]
pub fn multinomial(key: &Key, n: impl ArrayLike, p: &Array, shape: impl AsRef<[usize]>) -> Array {
    multinomial_with(key, n, p, shape, DType::F32, 1)
}

/// [`multinomial`] with JAX's `dtype` (a float type) and `unroll` arguments.
///
/// The categories are drawn in order by a `lax::scan`, each a [`binomial`] of the trials left
/// with probability `p_i / (p_i + ... + p_last)`, from its own key of `split(key, categories)`.
/// `unroll` steps run in each iteration of the scan (the remainder after it), as JAX's
/// `unroll` does; it changes the program, not the numbers. The draws are computed in the
/// promoted float type of `n` and `p`.
#[track_caller]
pub fn multinomial_with(
    key: &Key,
    n: impl ArrayLike,
    p: &Array,
    shape: impl AsRef<[usize]>,
    dtype: DType,
    unroll: usize,
) -> Array {
    let shape = shape.as_ref();
    key.single("multinomial");
    if !dtype.is_float() {
        panic!("multinomial: dtype must be a float type, got {dtype}");
    }
    let dtype = check_float("multinomial", dtype);
    if unroll == 0 {
        panic!("multinomial: unroll must be at least 1, got 0");
    }
    let Some((&categories, batch)) = shape.split_last() else {
        panic!("multinomial: shape must be at least 1-D (it ends with the categories), got ()");
    };
    if p.ndim() == 0 {
        panic!("multinomial: p must be at least 1-D (categories along its last axis), got ()");
    }
    let promoted = jnp::promote_inexact(&[n.into_array(), p.clone()]);
    let (n, p) = (&promoted[0], &promoted[1]);
    check_float("multinomial", p.dtype());
    if broadcast_shapes(p.shape(), shape).as_deref() != Some(shape) {
        panic!(
            "multinomial: p of shape {} does not broadcast to the shape {}",
            ShapeDisplay(p.shape()),
            ShapeDisplay(shape)
        );
    }
    if broadcast_shapes(n.shape(), batch).as_deref() != Some(batch) {
        panic!(
            "multinomial: n of shape {} does not broadcast to the batch shape {}",
            ShapeDisplay(n.shape()),
            ShapeDisplay(batch)
        );
    }
    crate::shape::check("multinomial", shape, p.dtype());
    let n = jnp::broadcast_to(n, batch);
    let p = jnp::moveaxis(&jnp::broadcast_to(p, shape), -1, 0);
    if categories == 0 {
        return jnp::zeros_dtype(shape, dtype);
    }
    let remaining = jnp::flip(&jnp::cumsum(&jnp::flip(&p, 0), Some(0)), 0);
    let zero = jnp::equal(&remaining, constant(0.0, p.dtype()));
    let ratios = jnp::divide(&p, jnp::where_(&zero, constant(1.0, p.dtype()), &remaining));
    let keys = split(key, categories);
    let step = |remainder: Array, (ratio, key): (Array, Key)| {
        let prob = jnp::clip(&ratio, 0.0, 1.0);
        let count = binomial_dtype(&key, &remainder, &prob, batch, remainder.dtype());
        (jnp::subtract(&remainder, &count), count)
    };
    let unroll = unroll.min(categories);
    let chunks = categories / unroll;
    let main = chunks * unroll;
    let mut chunk_shape = vec![chunks, unroll];
    chunk_shape.extend_from_slice(batch);
    let chunk_ratios = ratios.slice(crate::s![0..main]).reshape(chunk_shape);
    let chunk_keys = super::wrap_key_data(
        &keys.data().slice(crate::s![0..main]).reshape(vec![chunks, unroll, 2]),
    );
    let (mut remainder, counts) = lax::scan(
        |remainder: Array, (ratio, key): (Array, Key)| {
            let mut out = Vec::with_capacity(unroll);
            let mut remainder = remainder;
            for i in 0..unroll {
                let (next, count) = step(remainder, (ratio.slice(crate::s![i]), key.get(i)));
                remainder = next;
                out.push(count);
            }
            (remainder, jnp::stack(&out, 0))
        },
        n,
        (chunk_ratios, chunk_keys),
    );
    let mut all = vec![counts.reshape([&[main][..], batch].concat())];
    for i in main..categories {
        let (next, count) = step(remainder, (ratios.slice(crate::s![i]), keys.get(i)));
        remainder = next;
        all.push(jnp::expand_dims(&count, 0));
    }
    jnp::moveaxis(&jnp::concatenate(&all, 0), 0, -1).astype(dtype)
}
