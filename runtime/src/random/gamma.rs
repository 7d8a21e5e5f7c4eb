//! `gamma` and `loggamma`: JAX's Marsaglia–Tsang rejection sampler (`_gamma_one`), one
//! `lax::while_loop` per element under `vmap`, each element drawing from its own key of
//! `split(key, n)`; differentiable in `a` by JAX's implicit reparameterization
//! (`random_gamma_grad`, the derivative of the sample along the regularized incomplete gamma
//! function's level set).

use super::continuous::{bound, check_float, unit_uniform};
use super::{exponential_dtype, normal_dtype, split, Key};
use crate::array::Array;
use crate::dtype::DType;
use crate::func::vmap;
use crate::jnp::{self, ArrayLike};
use crate::lax;
use crate::transform::ad::custom::custom_jvp;

/// Gamma `float32` values with concentration `a` and unit rate, density
/// `x^(a-1) e^-x / Gamma(a)` (`jax.random.gamma(key, a, shape)`); `a` broadcasts to `shape`.
///
/// Differentiable in `a` as JAX's: the derivative of a sample is `-dF/da / dF/dx` at the
/// sample, `F` the gamma CDF (JAX's `random_gamma_grad`).
///
/// ```
/// use rjax_runtime::random;
/// let g = random::gamma(&random::key(0), 2.0, [3]).to_vec::<f32>().unwrap();
/// assert!(g.iter().all(|&v| v > 0.0));
/// ```
#[track_caller]
pub fn gamma(key: &Key, a: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    gamma_dtype(key, a, shape, crate::dtype::default_float())
}

/// Gamma values of `dtype` (`F32` or `F64`).
#[track_caller]
pub fn gamma_dtype(
    key: &Key,
    a: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    sample_gamma("gamma", key, a, shape.as_ref(), dtype, false)
}

/// The logarithm of gamma `float32` values, drawn in log space so that small `a` does not
/// underflow to 0 (`jax.random.loggamma(key, a, shape)`): `exp(loggamma(k, a))` is
/// `gamma(k, a)` up to rounding.
#[track_caller]
pub fn loggamma(key: &Key, a: impl ArrayLike, shape: impl AsRef<[usize]>) -> Array {
    loggamma_dtype(key, a, shape, crate::dtype::default_float())
}

/// Log-gamma values of `dtype` (`F32` or `F64`).
#[track_caller]
pub fn loggamma_dtype(
    key: &Key,
    a: impl ArrayLike,
    shape: impl AsRef<[usize]>,
    dtype: DType,
) -> Array {
    sample_gamma("loggamma", key, a, shape.as_ref(), dtype, true)
}

/// JAX's `random_gamma` primitive: `a` broadcast to `shape`, one key per element, samples
/// with the reparameterized derivative in `a`.
#[track_caller]
pub(super) fn sample_gamma(
    op: &str,
    key: &Key,
    a: impl ArrayLike,
    shape: &[usize],
    dtype: DType,
    log_space: bool,
) -> Array {
    key.single(op);
    let dtype = check_float(op, dtype);
    let n = crate::shape::check(op, shape, dtype);
    let a = jnp::broadcast_to(&bound(op, "a", a, dtype, shape), shape);
    if n == 0 {
        return a;
    }
    let keys = split(key, n);
    let draw = |a: Array| draw_all(&keys, &a.reshape([n]), log_space).reshape(shape.to_vec());
    custom_jvp(&a, draw, |a: Array, t: Array| {
        let sample = draw(a.clone());
        let da = sample_derivative(&sample, &a, log_space);
        (sample, jnp::multiply(&t, &da))
    })
}

/// One sample per key and concentration (both of length `n`), mapped as JAX maps
/// `_gamma_one` over them.
fn draw_all(keys: &Key, alphas: &Array, log_space: bool) -> Array {
    let one = move |(key, alpha): &(Key, Array)| gamma_one(key, alpha, log_space);
    vmap(one, 0, 0)(&(keys.clone(), alphas.clone()))
}

/// A 0-d constant of `dtype`.
fn constant(v: f64, dtype: DType) -> Array {
    Array::from(v).astype(dtype)
}

/// JAX's `_gamma_one`: Marsaglia and Tsang's method for one key and a 0-d `alpha`, boosting
/// `alpha < 1` to `alpha + 1` and multiplying by `u^(1/alpha)` (adding its log in log space).
fn gamma_one(key: &Key, alpha: &Array, log_space: bool) -> Array {
    let dtype = alpha.dtype();
    let c = |v: f64| constant(v, dtype);
    let boost = jnp::greater_equal(alpha, c(1.0));
    let boosted = jnp::where_(&boost, alpha, jnp::add(alpha, c(1.0)));
    let d = jnp::subtract(&boosted, c(1.0 / 3.0));
    let scale = jnp::divide(c(1.0 / 3.0), jnp::sqrt(&d));
    let keys = split(key, 2);
    let (key, subkey) = (keys.get(0), keys.get(1));
    // The initial state makes the rejection test pass once (U = 2 rejects everything).
    let init = (key, c(0.0), c(1.0), c(2.0));
    let (_, _, v, _) = lax::while_loop(
        |(_, x2, v, u): &(Key, Array, Array, Array)| rejected(x2, v, u, &d),
        |(key, _, _, _)| propose(&key, &scale, dtype),
        init,
    );
    let inverse = jnp::divide(c(1.0), alpha);
    if log_space {
        let log_u = jnp::negative(&exponential_dtype(&subkey, [], dtype));
        let skip = jnp::logical_or(&boost, jnp::equal(&log_u, c(0.0)));
        let log_boost = jnp::where_(&skip, c(0.0), jnp::multiply(&log_u, &inverse));
        jnp::add(jnp::add(jnp::log(&d), jnp::log(&v)), &log_boost)
    } else {
        let u = jnp::subtract(c(1.0), unit_uniform("gamma", &subkey, &[], dtype));
        let factor = jnp::where_(&boost, c(1.0), jnp::pow(&u, &inverse));
        jnp::multiply(jnp::multiply(&d, &v), &factor)
    }
}

/// Whether the proposal `(x^2, v^3, u)` is rejected: the squeeze test and the log test both
/// fail.
fn rejected(x2: &Array, v: &Array, u: &Array, d: &Array) -> Array {
    let c = |x: f64| constant(x, u.dtype());
    let squeeze = jnp::subtract(c(1.0), jnp::multiply(c(0.0331), jnp::multiply(x2, x2)));
    let log_test = jnp::add(
        jnp::multiply(x2, c(0.5)),
        jnp::multiply(d, jnp::add(jnp::subtract(c(1.0), v), jnp::log(v))),
    );
    jnp::logical_and(jnp::greater_equal(u, &squeeze), jnp::greater_equal(jnp::log(u), &log_test))
}

/// One proposal: a normal `x` with `v = 1 + x * scale > 0` (redrawn until positive), and a
/// uniform `u`; returns the next key, `x^2`, `v^3` and `u`.
fn propose(key: &Key, scale: &Array, dtype: DType) -> (Key, Array, Array, Array) {
    let c = |x: f64| constant(x, dtype);
    let keys = split(key, 3);
    let (key, x_key, u_key) = (keys.get(0), keys.get(1), keys.get(2));
    let (_, x, v) = lax::while_loop(
        |(_, _, v): &(Key, Array, Array)| jnp::less_equal(v, c(0.0)),
        |(key, _, _)| {
            let keys = split(&key, 2);
            let x = normal_dtype(&keys.get(1), [], dtype);
            let v = jnp::add(c(1.0), jnp::multiply(&x, scale));
            (keys.get(0), x, v)
        },
        (x_key, c(0.0), c(-1.0)),
    );
    let v3 = jnp::multiply(jnp::multiply(&v, &v), &v);
    (key, jnp::multiply(&x, &x), v3, unit_uniform("gamma", &u_key, &[], dtype))
}

/// The derivative of gamma samples in `a` (JAX's `_gamma_grad`); in log space the derivative
/// of the log, with a sample that rounds to 0 taken as the smallest normal number.
fn sample_derivative(sample: &Array, a: &Array, log_space: bool) -> Array {
    if !log_space {
        return random_gamma_grad(a, sample);
    }
    let x = jnp::exp(sample);
    let tiny = if x.dtype() == DType::F32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE };
    let x = jnp::where_(jnp::equal(&x, 0.0), constant(tiny, x.dtype()), &x);
    jnp::divide(random_gamma_grad(a, &x), &x)
}

/// `lax.random_gamma_grad(a, x)`: `-(dP/da) / (dP/dx)` for the regularized lower incomplete
/// gamma function `P(a, x)`, by its power series below `max(1, a)` and its continued
/// fraction above, as JAX evaluates it; NaN outside `a > 0, x >= 0`.
pub fn random_gamma_grad(a: &Array, x: &Array) -> Array {
    let dtype = a.dtype();
    let c = |v: f64| constant(v, dtype);
    let is_nan = jnp::logical_or(jnp::isnan(a), jnp::isnan(x));
    let x_is_zero = jnp::equal(x, c(0.0));
    let domain_error = jnp::logical_or(jnp::less(x, c(0.0)), jnp::less_equal(a, c(0.0)));
    let use_cf = jnp::logical_and(jnp::greater(x, c(1.0)), jnp::greater(x, a));
    let ax = jnp::subtract(jnp::subtract(jnp::multiply(a, jnp::log(x)), x), lax::lgamma(a));
    let max = if dtype == DType::F32 { f32::MAX as f64 } else { f64::MAX };
    let underflow = jnp::less(&ax, jnp::negative(&jnp::log(&c(max))));
    let disabled = [&x_is_zero, &domain_error, &underflow, &is_nan]
        .into_iter()
        .fold(Array::from(false), |acc, m| jnp::logical_or(&acc, m));
    let enabled = jnp::logical_not(&disabled);
    let series_on = jnp::logical_and(&enabled, jnp::logical_not(&use_cf));
    let cf_on = jnp::logical_and(&enabled, &use_cf);
    let out = jnp::where_(
        &use_cf,
        jnp::negative(&igammac_cf_derivative(x, a, &cf_on)),
        igamma_series_derivative(x, a, &series_on),
    );
    let out = jnp::where_(&x_is_zero, c(0.0), &out);
    jnp::where_(jnp::logical_or(&domain_error, &is_nan), c(f64::NAN), &out)
}

fn eps(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

/// Whether any element of a `bool` array is set.
fn any(x: &Array) -> Array {
    jnp::any(x)
}

/// JAX's `_igamma_series` in mode `SAMPLE_DERIVATIVE`.
fn igamma_series_derivative(x: &Array, a: &Array, enabled: &Array) -> Array {
    let dtype = a.dtype();
    let c = |v: f64| constant(v, dtype);
    let shape = a.shape().to_vec();
    let full = |v: f64| jnp::broadcast_to(&c(v), &shape);
    type Carry = (Array, Array, Array, Array, Array, Array);
    let init: Carry = (enabled.clone(), a.clone(), full(1.0), full(1.0), full(0.0), full(0.0));
    let (_, _, _, ans, _, dans_da) = lax::while_loop(
        |carry: &Carry| any(&carry.0),
        |(on, r0, c0, ans0, dc0, dans0)| {
            let r = jnp::add(&r0, c(1.0));
            let dc_da = jnp::subtract(
                jnp::multiply(&dc0, jnp::divide(x, &r)),
                jnp::divide(jnp::multiply(&c0, x), jnp::multiply(&r, &r)),
            );
            let dans_da = jnp::add(&dans0, &dc_da);
            let cc = jnp::multiply(&c0, jnp::divide(x, &r));
            let ans = jnp::add(&ans0, &cc);
            let more = jnp::greater(jnp::abs(&jnp::divide(&dc_da, &dans_da)), c(eps(dtype)));
            let pick = |new: &Array, old: &Array| jnp::where_(&on, new, old);
            (
                jnp::logical_and(&on, &more),
                pick(&r, &r0),
                pick(&cc, &c0),
                pick(&ans, &ans0),
                pick(&dc_da, &dc0),
                pick(&dans_da, &dans0),
            )
        },
        init,
    );
    let dlogax_da = jnp::subtract(jnp::log(x), lax::digamma(jnp::add(a, c(1.0))));
    let sum = jnp::add(&dans_da, jnp::multiply(&ans, &dlogax_da));
    jnp::divide(jnp::multiply(jnp::negative(&sum), x), a)
}

/// JAX's `_igammac_continued_fraction` in mode `SAMPLE_DERIVATIVE` (at most 2000 terms).
fn igammac_cf_derivative(x: &Array, a: &Array, enabled: &Array) -> Array {
    let dtype = a.dtype();
    let c = |v: f64| constant(v, dtype);
    let y = jnp::subtract(c(1.0), a);
    let z = jnp::add(jnp::add(x, &y), c(1.0));
    let pkm1 = jnp::add(x, c(1.0));
    let qkm1 = jnp::multiply(&z, x);
    let ans = jnp::divide(&pkm1, &qkm1);
    let zeros = jnp::zeros_like(x);
    let dqkm1 = jnp::negative(x);
    let dans = jnp::divide(jnp::subtract(&zeros, jnp::multiply(&ans, &dqkm1)), &qkm1);
    let state = Cf {
        ans,
        y,
        z,
        pkm1,
        qkm1,
        pkm2: jnp::ones_like(x),
        qkm2: x.clone(),
        dpkm2: zeros.clone(),
        dqkm2: zeros.clone(),
        dpkm1: zeros,
        dqkm1,
        dans,
    };
    let init = (enabled.clone(), c(0.0), state.into_vec());
    let (_, _, out) = lax::while_loop(
        |(on, n, _): &(Array, Array, Vec<Array>)| {
            jnp::logical_and(jnp::less(n, c(2000.0)), any(on))
        },
        |(on, n, s)| {
            let n = jnp::add(&n, c(1.0));
            let old = Cf::from_vec(s);
            let (new, more) = old.step(&n);
            let picked = new.select(&on, &old);
            (jnp::logical_and(&on, &more), n, picked.into_vec())
        },
        init,
    );
    let out = Cf::from_vec(out);
    let dlogax_da = jnp::subtract(jnp::log(x), lax::digamma(a));
    let sum = jnp::add(&out.dans, jnp::multiply(&out.ans, &dlogax_da));
    jnp::negative(&jnp::multiply(&sum, x))
}

/// The continued fraction's state: the convergents `p/q` two steps back and their
/// derivatives in `a`, the answer so far and its derivative.
struct Cf {
    ans: Array,
    y: Array,
    z: Array,
    pkm1: Array,
    qkm1: Array,
    pkm2: Array,
    qkm2: Array,
    dpkm2: Array,
    dqkm2: Array,
    dpkm1: Array,
    dqkm1: Array,
    dans: Array,
}

impl Cf {
    fn into_vec(self) -> Vec<Array> {
        vec![
            self.ans, self.y, self.z, self.pkm1, self.qkm1, self.pkm2, self.qkm2, self.dpkm2,
            self.dqkm2, self.dpkm1, self.dqkm1, self.dans,
        ]
    }

    fn from_vec(v: Vec<Array>) -> Cf {
        let [ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans] =
            <[Array; 12]>::try_from(v).expect("twelve carried arrays");
        Cf { ans, y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans }
    }

    /// This state where `on`, `other` elsewhere.
    fn select(self, on: &Array, other: &Cf) -> Cf {
        let old = Cf { ..other.clone_all() }.into_vec();
        let new = self.into_vec();
        Cf::from_vec(new.iter().zip(&old).map(|(n, o)| jnp::where_(on, n, o)).collect())
    }

    fn clone_all(&self) -> Cf {
        Cf::from_vec(
            [
                &self.ans,
                &self.y,
                &self.z,
                &self.pkm1,
                &self.qkm1,
                &self.pkm2,
                &self.qkm2,
                &self.dpkm2,
                &self.dqkm2,
                &self.dpkm1,
                &self.dqkm1,
                &self.dans,
            ]
            .into_iter()
            .cloned()
            .collect(),
        )
    }

    /// The next term (the `n`-th), and whether the derivative still moves by more than eps.
    fn step(&self, n: &Array) -> (Cf, Array) {
        let dtype = self.ans.dtype();
        let c = |v: f64| constant(v, dtype);
        let y = jnp::add(&self.y, c(1.0));
        let z = jnp::add(&self.z, c(2.0));
        let yc = jnp::multiply(&y, n);
        let pk = jnp::subtract(jnp::multiply(&self.pkm1, &z), jnp::multiply(&self.pkm2, &yc));
        let qk = jnp::subtract(jnp::multiply(&self.qkm1, &z), jnp::multiply(&self.qkm2, &yc));
        let nonzero = jnp::not_equal(&qk, c(0.0));
        let r = jnp::divide(&pk, &qk);
        let ans = jnp::where_(&nonzero, &r, &self.ans);
        let dpk = derivative_term(&self.dpkm1, &z, &self.pkm1, &self.dpkm2, &yc, &self.pkm2, n);
        let dqk = derivative_term(&self.dqkm1, &z, &self.qkm1, &self.dqkm2, &yc, &self.qkm2, n);
        let dans_new = jnp::divide(jnp::subtract(&dpk, jnp::multiply(&ans, &dqk)), &qk);
        let dans = jnp::where_(&nonzero, &dans_new, &self.dans);
        let moved = jnp::where_(&nonzero, jnp::abs(&jnp::subtract(&dans_new, &self.dans)), c(1.0));
        let more = jnp::greater(&moved, c(eps(dtype)));
        // Rescale when the convergents grow past 1/eps, keeping their ratios.
        let rescale = jnp::greater(jnp::abs(&pk), jnp::reciprocal(&c(eps(dtype))));
        let shrink = |v: &Array| jnp::where_(&rescale, jnp::multiply(v, c(eps(dtype))), v);
        let next = Cf {
            ans,
            y,
            z,
            pkm2: shrink(&self.pkm1),
            pkm1: shrink(&pk),
            qkm2: shrink(&self.qkm1),
            qkm1: shrink(&qk),
            dpkm2: shrink(&self.dpkm1),
            dqkm2: shrink(&self.dqkm1),
            dpkm1: shrink(&dpk),
            dqkm1: shrink(&dqk),
            dans,
        };
        (next, more)
    }
}

/// `d(p_k)/da = d(p_{k-1})/da * z - p_{k-1} - d(p_{k-2})/da * yc + p_{k-2} * n`.
fn derivative_term(
    d1: &Array,
    z: &Array,
    p1: &Array,
    d2: &Array,
    yc: &Array,
    p2: &Array,
    n: &Array,
) -> Array {
    let t = jnp::subtract(jnp::subtract(jnp::multiply(d1, z), p1), jnp::multiply(d2, yc));
    jnp::add(&t, jnp::multiply(p2, n))
}
