//! Probability distributions, like `jax.scipy.stats`: each distribution is a module of
//! functions (`norm::pdf`, `gamma::logpdf`, ...) taking the point first, then the shape
//! parameters, then `loc` and `scale`, as JAX's do (JAX's defaults `loc = 0`, `scale = 1` are
//! spelled out). Operands broadcast together and are promoted to one float type; all are
//! composed of `jnp`, `lax` and [`special`](crate::scipy::special) operations, so `jit`, `grad`
//! (with respect to the point and the parameters) and `vmap` apply.
//!
//! The cumulative distributions of `gamma`, `beta` and `poisson` need the regularized
//! incomplete gamma and beta functions, which rjax does not have yet; they are absent.

use crate::jnp::{self, promote_inexact};
use crate::shape::{broadcast_shapes, ShapeDisplay};
use crate::Array;

/// The operands of the distribution function `op` broadcast-checked and promoted to one float
/// type (JAX's `promote_args_inexact`); shapes that do not broadcast panic, naming them.
#[track_caller]
fn operands<const N: usize>(op: &str, ops: [Array; N]) -> [Array; N] {
    let mut shape = Vec::new();
    for a in &ops {
        shape = broadcast_shapes(&shape, a.shape()).unwrap_or_else(|| {
            let shapes: Vec<String> =
                ops.iter().map(|a| format!("{} {}", a.dtype(), ShapeDisplay(a.shape()))).collect();
            panic!("{op}: the operands do not broadcast together: {}", shapes.join(", "))
        });
    }
    let promoted = promote_inexact(&ops);
    promoted.try_into().unwrap_or_else(|_| unreachable!("one array per operand"))
}

/// `-inf` where `outside` holds, else `value` (a log density outside its support).
fn outside_support(outside: &Array, value: &Array) -> Array {
    jnp::where_(outside, f64::NEG_INFINITY, value)
}

/// The normal distribution with mean `loc` and standard deviation `scale`
/// (`jax.scipy.stats.norm`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::norm};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let x = jnp::array(&[0.0f64]);
/// let p = norm::pdf(&x, 0.0, 1.0).item::<f64>().unwrap();
/// assert!((p - 1.0 / (2.0 * std::f64::consts::PI).sqrt()).abs() < 1e-15);
/// assert_eq!(norm::cdf(&x, 0.0, 1.0).item::<f64>().unwrap(), 0.5);
/// ```
pub mod norm {
    use crate::jnp::{self, promote_inexact, ArrayLike};
    use crate::Array;

    /// `x`, `loc` and `scale` promoted to one float type.
    #[track_caller]
    fn operands(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> [Array; 3] {
        let ops = promote_inexact(&[x.into_array(), loc.into_array(), scale.into_array()]);
        [ops[0].clone(), ops[1].clone(), ops[2].clone()]
    }

    /// The log density `-(ln(2 pi scale^2) + ((x - loc) / scale)^2) / 2`, as JAX computes it.
    #[track_caller]
    pub fn logpdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let [x, loc, scale] = operands(x, loc, scale);
        let scale_sq = jnp::square(&scale);
        let log_normalizer = jnp::log(&(&scale_sq * (2.0 * std::f64::consts::PI)));
        let quadratic = jnp::square(&(x - loc)) / &scale_sq;
        (log_normalizer + quadratic) / -2.0
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        jnp::exp(&logpdf(x, loc, scale))
    }

    /// The cumulative distribution, `ndtr((x - loc) / scale)`.
    #[track_caller]
    pub fn cdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let [x, loc, scale] = operands(x, loc, scale);
        crate::scipy::special::ndtr((x - loc) / scale)
    }

    /// The survival function `1 - cdf`, as `cdf(-x, -loc, scale)` (accurate in the upper tail).
    #[track_caller]
    pub fn sf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let [x, loc, scale] = operands(x, loc, scale);
        cdf(-x, -loc, scale)
    }
}

/// The gamma distribution with shape `a` (`jax.scipy.stats.gamma`): density
/// `y^(a-1) e^-y / (Gamma(a) scale)` at `y = (x - loc) / scale`, zero below `loc`.
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::gamma};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// // Shape 1 is the exponential distribution.
/// let p = gamma::pdf(jnp::array([2.0f64]), 1.0, 0.0, 1.0).item::<f64>().unwrap();
/// assert!((p - (-2.0f64).exp()).abs() < 1e-15);
/// ```
pub mod gamma {
    use super::{operands, outside_support};
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::special::{gammaln, xlogy};
    use crate::Array;

    /// The log density, `xlogy(a - 1, y) - y - gammaln(a) - ln(scale)`, `-inf` below `loc`.
    #[track_caller]
    pub fn logpdf(
        x: impl ArrayLike,
        a: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        let op = "gamma.logpdf";
        let [x, a, loc, scale] = operands(
            op,
            [x.into_operand(op), a.into_operand(op), loc.into_operand(op), scale.into_operand(op)],
        );
        let inside = x.ge(&loc);
        let y = jnp::where_(&inside, (&x - &loc) / &scale, 1.0);
        let log_linear = xlogy(&a - 1.0, &y) - &y;
        let log_probs = log_linear - (gammaln(&a) + jnp::log(&scale));
        outside_support(&jnp::logical_not(&inside), &log_probs)
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(
        x: impl ArrayLike,
        a: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        jnp::exp(&logpdf(x, a, loc, scale))
    }
}

/// The beta distribution with shapes `a` and `b` on `[loc, loc + scale]`
/// (`jax.scipy.stats.beta`): density `y^(a-1) (1-y)^(b-1) / (B(a, b) scale)` at
/// `y = (x - loc) / scale`.
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::beta};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// // Beta(2, 2) has density 6 y (1 - y).
/// let p = beta::pdf(jnp::array([0.25f64]), 2.0, 2.0, 0.0, 1.0).item::<f64>().unwrap();
/// assert!((p - 1.125).abs() < 1e-14);
/// ```
pub mod beta {
    use super::{operands, outside_support};
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::special::{betaln, xlog1py, xlogy};
    use crate::Array;

    /// The log density, `xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - ln(scale)`;
    /// `-inf` outside `[loc, loc + scale]` and NaN where `a`, `b` or `scale` is not positive,
    /// as in JAX.
    #[track_caller]
    pub fn logpdf(
        x: impl ArrayLike,
        a: impl ArrayLike,
        b: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        let op = "beta.logpdf";
        let [x, a, b, loc, scale] = operands(
            op,
            [
                x.into_operand(op),
                a.into_operand(op),
                b.into_operand(op),
                loc.into_operand(op),
                scale.into_operand(op),
            ],
        );
        let y = (&x - &loc) / &scale;
        let log_linear = xlogy(&a - 1.0, &y) + xlog1py(&b - 1.0, -&y);
        let log_probs = -betaln(&a, &b) + log_linear - jnp::log(&scale);
        let outside = jnp::logical_or(x.gt(&loc + &scale), x.lt(&loc));
        let result = outside_support(&outside, &log_probs);
        let bad = jnp::logical_or(jnp::logical_or(a.le(0.0), b.le(0.0)), scale.le(0.0));
        jnp::where_(&bad, f64::NAN, &result)
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(
        x: impl ArrayLike,
        a: impl ArrayLike,
        b: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        jnp::exp(&logpdf(x, a, b, loc, scale))
    }
}

/// The Poisson distribution with mean `mu`, shifted by `loc` (`jax.scipy.stats.poisson`):
/// probability `mu^k e^-mu / k!` at the integers `k - loc >= 0`.
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::poisson};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let p = poisson::pmf(jnp::array([2.0f64]), 3.0, 0.0).item::<f64>().unwrap();
/// assert!((p - 4.5 * (-3.0f64).exp()).abs() < 1e-15);
/// ```
pub mod poisson {
    use super::{operands, outside_support};
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::special::{gammaln, xlogy};
    use crate::Array;

    /// The log probability, `xlogy(k, mu) - gammaln(k + 1) - mu` at `k - loc`; `-inf` below
    /// `loc` and at non-integer `k`.
    #[track_caller]
    pub fn logpmf(k: impl ArrayLike, mu: impl ArrayLike, loc: impl ArrayLike) -> Array {
        let op = "poisson.logpmf";
        let [k, mu, loc] =
            operands(op, [k.into_operand(op), mu.into_operand(op), loc.into_operand(op)]);
        let x = &k - &loc;
        let log_probs = xlogy(&x, &mu) - gammaln(&x + 1.0) - &mu;
        let outside = jnp::logical_or(x.lt(0.0), jnp::round(&k).ne(&k));
        outside_support(&outside, &log_probs)
    }

    /// The probability, `exp(logpmf)`.
    #[track_caller]
    pub fn pmf(k: impl ArrayLike, mu: impl ArrayLike, loc: impl ArrayLike) -> Array {
        jnp::exp(&logpmf(k, mu, loc))
    }
}

/// The Bernoulli distribution: 1 with probability `p`, 0 with `1 - p`
/// (`jax.scipy.stats.bernoulli`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::bernoulli};
/// let k = jnp::array([0.0f32, 1.0]);
/// assert_eq!(bernoulli::pmf(&k, 0.25, 0.0).to_vec::<f32>().unwrap(), vec![0.75, 0.25]);
/// ```
pub mod bernoulli {
    use super::{operands, outside_support};
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::special::{xlog1py, xlogy};
    use crate::Array;

    /// The log probability at `x = k - loc`, `xlogy(x, p) + xlog1py(1 - x, -p)`, `-inf`
    /// outside `[0, 1]` (like JAX, `x` between 0 and 1 is not rejected).
    #[track_caller]
    pub fn logpmf(k: impl ArrayLike, p: impl ArrayLike, loc: impl ArrayLike) -> Array {
        let op = "bernoulli.logpmf";
        let [k, p, loc] =
            operands(op, [k.into_operand(op), p.into_operand(op), loc.into_operand(op)]);
        let x = &k - &loc;
        let log_probs = xlogy(&x, &p) + xlog1py(jnp::subtract(1.0, &x), -&p);
        outside_support(&jnp::logical_or(x.lt(0.0), x.gt(1.0)), &log_probs)
    }

    /// The probability, `exp(logpmf)`.
    #[track_caller]
    pub fn pmf(k: impl ArrayLike, p: impl ArrayLike, loc: impl ArrayLike) -> Array {
        jnp::exp(&logpmf(k, p, loc))
    }

    /// The cumulative distribution: 0 below 0, `1 - p` on `[0, 1)`, 1 from 1 on; NaN where
    /// `k` or `p` is NaN or `p` is outside `[0, 1]`.
    #[track_caller]
    pub fn cdf(k: impl ArrayLike, p: impl ArrayLike) -> Array {
        let op = "bernoulli.cdf";
        let [k, p] = operands(op, [k.into_operand(op), p.into_operand(op)]);
        let invalid = invalid_p(&p, &jnp::isnan(&k));
        let middle = jnp::where_(k.ge(1.0), 1.0, 0.0);
        let middle =
            jnp::where_(jnp::logical_and(k.ge(0.0), k.lt(1.0)), jnp::subtract(1.0, &p), middle);
        let below = jnp::where_(k.lt(0.0), 0.0, &middle);
        jnp::where_(&invalid, f64::NAN, &below)
    }

    /// The quantile function: 0 for `q <= 1 - p`, else 1; NaN where `q` or `p` is NaN or
    /// outside `[0, 1]`.
    #[track_caller]
    pub fn ppf(q: impl ArrayLike, p: impl ArrayLike) -> Array {
        let op = "bernoulli.ppf";
        let [q, p] = operands(op, [q.into_operand(op), p.into_operand(op)]);
        let q_invalid = jnp::logical_or(jnp::isnan(&q), jnp::logical_or(q.lt(0.0), q.gt(1.0)));
        let invalid = invalid_p(&p, &q_invalid);
        let value = jnp::where_(q.le(jnp::subtract(1.0, &p)), 0.0, 1.0);
        jnp::where_(&invalid, f64::NAN, jnp::astype(&value, p.dtype()))
    }

    /// `also`, or `p` NaN or outside `[0, 1]`.
    fn invalid_p(p: &Array, also: &Array) -> Array {
        let p_invalid = jnp::logical_or(jnp::isnan(p), jnp::logical_or(p.lt(0.0), p.gt(1.0)));
        jnp::logical_or(also, &p_invalid)
    }
}

/// Student's t distribution with `df` degrees of freedom (`jax.scipy.stats.t`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::t};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// // One degree of freedom is the Cauchy distribution: 1 / (pi (1 + x^2)).
/// let p = t::pdf(jnp::array([1.0f64]), 1.0, 0.0, 1.0).item::<f64>().unwrap();
/// assert!((p - 0.5 / std::f64::consts::PI).abs() < 1e-15);
/// ```
pub mod t {
    use super::operands;
    use crate::jnp::{self, ArrayLike};
    use crate::lax::lgamma;
    use crate::Array;

    /// The log density at `y = (x - loc) / scale`:
    /// `-(lgamma(df/2) + ln(pi df scale^2)/2 - lgamma((df+1)/2) + (df+1)/2 ln(1 + y^2/df))`.
    #[track_caller]
    pub fn logpdf(
        x: impl ArrayLike,
        df: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        let op = "t.logpdf";
        let [x, df, loc, scale] = operands(
            op,
            [x.into_operand(op), df.into_operand(op), loc.into_operand(op), scale.into_operand(op)],
        );
        let y = (&x - &loc) / &scale;
        let half_df = &df / 2.0;
        let half_df_plus_half = &half_df + 0.5;
        let normalize_const = &scale * &scale * std::f64::consts::PI;
        let normalize = lgamma(&half_df) + jnp::log(&(normalize_const * &df)) / 2.0
            - lgamma(&half_df_plus_half);
        let quadratic = &y * &y / &df;
        -(normalize + half_df_plus_half * jnp::log1p(&quadratic))
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(
        x: impl ArrayLike,
        df: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> Array {
        jnp::exp(&logpdf(x, df, loc, scale))
    }
}

/// The uniform distribution on `[loc, loc + scale]` (`jax.scipy.stats.uniform`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::uniform};
/// let x = jnp::array([-1.0f32, 1.0, 5.0]);
/// assert_eq!(uniform::pdf(&x, 0.0, 4.0).to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.0]);
/// assert_eq!(uniform::cdf(&x, 0.0, 4.0).to_vec::<f32>().unwrap(), vec![0.0, 0.25, 1.0]);
/// ```
pub mod uniform {
    use super::{operands, outside_support};
    use crate::jnp::{self, ArrayLike};
    use crate::Array;

    /// The log density, `-ln(scale)` on `[loc, loc + scale]`, `-inf` outside.
    #[track_caller]
    pub fn logpdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "uniform.logpdf";
        let [x, loc, scale] =
            operands(op, [x.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        let outside = jnp::logical_or(x.gt(&loc + &scale), x.lt(&loc));
        outside_support(&outside, &-jnp::log(&scale))
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        jnp::exp(&logpdf(x, loc, scale))
    }

    /// The cumulative distribution: 0 below `loc`, `(x - loc) / scale` on the support, 1
    /// above it (and 0 at NaN, as JAX's `select` falls through).
    #[track_caller]
    pub fn cdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "uniform.cdf";
        let [x, loc, scale] =
            operands(op, [x.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        let hi = &loc + &scale;
        let inside = jnp::logical_and(x.ge(&loc), x.le(&hi));
        let value = jnp::where_(&inside, (&x - &loc) / &scale, 0.0);
        let value = jnp::where_(x.gt(&hi), 1.0, &value);
        jnp::where_(x.lt(&loc), 0.0, &value)
    }

    /// The quantile function `loc + scale q`; NaN where `q` is NaN or outside `[0, 1]`.
    #[track_caller]
    pub fn ppf(q: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "uniform.ppf";
        let [q, loc, scale] =
            operands(op, [q.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        let invalid = jnp::logical_or(jnp::isnan(&q), jnp::logical_or(q.lt(0.0), q.gt(1.0)));
        jnp::where_(&invalid, f64::NAN, &loc + &scale * &q)
    }
}

/// The Laplace (double exponential) distribution, density `e^(-|x - loc| / scale) / (2 scale)`
/// (`jax.scipy.stats.laplace`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::laplace};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let c = laplace::cdf(jnp::array([0.0f64]), 0.0, 1.0).item::<f64>().unwrap();
/// assert_eq!(c, 0.5);
/// ```
pub mod laplace {
    use super::operands;
    use crate::jnp::{self, ArrayLike};
    use crate::Array;

    /// The log density, `-|x - loc| / scale - ln(2 scale)`.
    #[track_caller]
    pub fn logpdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "laplace.logpdf";
        let [x, loc, scale] =
            operands(op, [x.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        -(jnp::abs(&(&x - &loc)) / &scale + jnp::log(&(&scale * 2.0)))
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        jnp::exp(&logpdf(x, loc, scale))
    }

    /// The cumulative distribution: `e^y / 2` for `y = (x - loc) / scale <= 0`, else
    /// `1 - e^-y / 2`.
    #[track_caller]
    pub fn cdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "laplace.cdf";
        let [x, loc, scale] =
            operands(op, [x.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        let y = (&x - &loc) / &scale;
        let lower = jnp::exp(&y) * 0.5;
        let upper = jnp::subtract(1.0, jnp::exp(&-&y) * 0.5);
        jnp::where_(y.le(0.0), &lower, &upper)
    }
}

/// The logistic distribution, with cumulative distribution `expit((x - loc) / scale)`
/// (`jax.scipy.stats.logistic`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::logistic};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let p = logistic::pdf(jnp::array([0.0f64]), 0.0, 1.0).item::<f64>().unwrap();
/// assert!((p - 0.25).abs() < 1e-16);
/// ```
pub mod logistic {
    use super::operands;
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::special::{expit, logit};
    use crate::Array;

    /// `(x - loc) / scale` and `scale`, promoted.
    #[track_caller]
    fn standardized(
        op: &str,
        x: impl ArrayLike,
        loc: impl ArrayLike,
        scale: impl ArrayLike,
    ) -> (Array, Array) {
        let [x, loc, scale] =
            operands(op, [x.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        ((x - loc) / &scale, scale)
    }

    /// The log density at `y = (x - loc) / scale`, `-2 logaddexp(y/2, -y/2) - ln(scale)`
    /// (finite for large `|y|`).
    #[track_caller]
    pub fn logpdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let (y, scale) = standardized("logistic.logpdf", x, loc, scale);
        let half = &y / 2.0;
        jnp::logaddexp(&half, -&half) * -2.0 - jnp::log(&scale)
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        jnp::exp(&logpdf(x, loc, scale))
    }

    /// The cumulative distribution, `expit((x - loc) / scale)`.
    #[track_caller]
    pub fn cdf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let (y, _) = standardized("logistic.cdf", x, loc, scale);
        expit(&y)
    }

    /// The survival function `1 - cdf`, as `expit(-(x - loc) / scale)`.
    #[track_caller]
    pub fn sf(x: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let (y, _) = standardized("logistic.sf", x, loc, scale);
        expit(-&y)
    }

    /// The quantile function, `logit(q) scale + loc`.
    #[track_caller]
    pub fn ppf(q: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "logistic.ppf";
        let [q, loc, scale] =
            operands(op, [q.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        logit(&q) * &scale + &loc
    }

    /// The inverse survival function, `-logit(q) scale + loc`.
    #[track_caller]
    pub fn isf(q: impl ArrayLike, loc: impl ArrayLike, scale: impl ArrayLike) -> Array {
        let op = "logistic.isf";
        let [q, loc, scale] =
            operands(op, [q.into_operand(op), loc.into_operand(op), scale.into_operand(op)]);
        -logit(&q) * &scale + &loc
    }
}

/// The multivariate normal distribution with mean `mean` (`[..., n]`) and covariance `cov`
/// (`[..., n, n]`, symmetric positive definite) (`jax.scipy.stats.multivariate_normal`).
/// As in JAX, a scalar `mean` makes it the univariate normal with variance `cov`, and a
/// scalar `cov` with a vector `mean` the isotropic one, `cov` times the identity.
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::multivariate_normal};
/// rjax_runtime::config::enable_x64(true); // 64-bit types, as JAX's jax_enable_x64
/// let x = jnp::array([1.0f64, 2.0]);
/// let mean = jnp::array([1.0f64, 2.0]);
/// let cov = jnp::array([[2.0f64, 0.0], [0.0, 0.5]]);
/// let p = multivariate_normal::pdf(&x, &mean, &cov).item::<f64>().unwrap();
/// // 1 / (2 pi sqrt(det cov)) with det cov = 1.
/// assert!((p - 0.5 / std::f64::consts::PI).abs() < 1e-15);
/// ```
pub mod multivariate_normal {
    use super::operands;
    use crate::jnp::{self, ArrayLike};
    use crate::scipy::linalg::{solve_triangular, Trans};
    use crate::shape::{broadcast_shapes, ShapeDisplay};
    use crate::Array;

    /// The log density `-(y.y + n ln(2 pi))/2 - sum(ln diag L)`, where `L` is the Cholesky
    /// factor of `cov` and `y = L^-1 (x - mean)`; leading axes of `x`, `mean` and `cov`
    /// broadcast. A `cov` whose last two axes are not `n x n` panics, naming the shapes.
    #[track_caller]
    pub fn logpdf(x: impl ArrayLike, mean: impl ArrayLike, cov: impl ArrayLike) -> Array {
        let op = "multivariate_normal.logpdf";
        let (x, mean, cov) = (x.into_operand(op), mean.into_operand(op), cov.into_operand(op));
        let promoted = jnp::promote_inexact(&[x, mean, cov]);
        let [x, mean, cov]: [Array; 3] =
            promoted.try_into().unwrap_or_else(|_| unreachable!("three operands"));
        let log_2pi = (2.0 * std::f64::consts::PI).ln();
        if mean.ndim() == 0 {
            let [x, mean, cov] = operands(op, [x, mean, cov]);
            return jnp::square(&(&x - &mean)) / &cov * -0.5 - (jnp::log(&cov) + log_2pi) * 0.5;
        }
        let n = mean.shape()[mean.ndim() - 1];
        let y = difference(op, &x, &mean);
        if cov.ndim() == 0 {
            return (&y * &y).sum_axes(-1, false) / &cov * -0.5
                - (jnp::log(&cov) + log_2pi) * (n as f64 / 2.0);
        }
        let fits = cov.ndim() >= 2 && cov.shape()[cov.ndim() - 2..] == [n, n];
        let batch = fits
            .then(|| broadcast_shapes(&cov.shape()[..cov.ndim() - 2], &y.shape()[..y.ndim() - 1]))
            .flatten();
        let Some(batch) = batch else {
            panic!(
                "{op}: incompatible shapes: x {}, mean {} and cov {} (cov must be [..., {n}, {n}] \
                 for a mean of {n} elements, leading axes broadcasting)",
                ShapeDisplay(x.shape()),
                ShapeDisplay(mean.shape()),
                ShapeDisplay(cov.shape())
            )
        };
        let full = |a: &Array, tail: &[usize]| jnp::broadcast_to(a, [&batch[..], tail].concat());
        let l = jnp::linalg::cholesky(&full(&cov, &[n, n]));
        let z = solve_triangular(&l, &full(&y, &[n]), Trans::N, true, false);
        let log_det = jnp::log(&jnp::diagonal(&l, 0, -1, -2)).sum_axes(-1, false);
        (&z * &z).sum_axes(-1, false) * -0.5 - log_2pi * (n as f64 / 2.0) - log_det
    }

    /// The density, `exp(logpdf)`.
    #[track_caller]
    pub fn pdf(x: impl ArrayLike, mean: impl ArrayLike, cov: impl ArrayLike) -> Array {
        jnp::exp(&logpdf(x, mean, cov))
    }

    /// `x - mean`, panicking with both shapes when they do not broadcast.
    #[track_caller]
    fn difference(op: &str, x: &Array, mean: &Array) -> Array {
        if broadcast_shapes(x.shape(), mean.shape()).is_none() {
            panic!(
                "{op}: x of shape {} does not broadcast against mean of shape {}",
                ShapeDisplay(x.shape()),
                ShapeDisplay(mean.shape())
            );
        }
        x - mean
    }
}
