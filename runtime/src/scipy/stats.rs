//! Probability distributions, like `jax.scipy.stats`.

/// The normal distribution with mean `loc` and standard deviation `scale`
/// (`jax.scipy.stats.norm`).
///
/// ```
/// use rjax_runtime::{jnp, scipy::stats::norm};
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
}
