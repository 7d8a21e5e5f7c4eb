//! Scalar special functions for the `digamma`, `bessel_i0e` and `bessel_i1e` primitives, in
//! f64 (f32 evaluates them in f64 and rounds once, which is at least as accurate as XLA's f32
//! kernels). `lgamma` and `erfc` are the `libm` crate's.
//!
//! They are written from the defining series rather than from fitted tables: digamma by the
//! recurrence `psi(x) = psi(x + 1) - 1/x` up to 10 and its asymptotic (Bernoulli) series there,
//! with the reflection formula below 1/2; the scaled Bessel functions by their power series up
//! to 30 and Hankel's asymptotic series beyond. Checked against JAX (`tests/scipy_special.rs`)
//! to within a few f64 ulps on the tested ranges.

use std::f64::consts::PI;

/// Where digamma switches from the recurrence to its asymptotic series: the series' first
/// omitted term is below `B_16 / (16 x^16)`, about `4e-17` here.
const DIGAMMA_ASYMPTOTIC_FROM: f64 = 10.0;

/// `B_2k / (2k)` for k = 1..7: the coefficients of `x^-2k` in digamma's asymptotic series.
const DIGAMMA_SERIES: [f64; 7] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
];

/// The digamma function `psi(x) = d/dx ln(Gamma(x))`. NaN at the poles (0 and the negative
/// integers) and at `-inf`, as XLA computes it; `+inf` at `+inf`.
pub(crate) fn digamma(x: f64) -> f64 {
    if x.is_nan() || x == f64::NEG_INFINITY || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return x;
    }
    let (mut x, mut acc) = (x, 0.0);
    if x < 0.5 {
        // psi(1 - x) - psi(x) = pi cot(pi x); cot has period 1, so reduce x first to keep
        // pi * x's rounding error small.
        acc = -PI / (PI * (x - x.round())).tan();
        x = 1.0 - x;
    }
    while x < DIGAMMA_ASYMPTOTIC_FROM {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let z = 1.0 / (x * x);
    let tail = DIGAMMA_SERIES.iter().rev().fold(0.0, |sum, &c| sum * z + c) * z;
    acc + x.ln() - 0.5 / x - tail
}

/// Below this, the scaled Bessel functions are their power series times `e^-|x|`; above, the
/// asymptotic series' terms fall below 1e-17 of the sum before they start to grow.
const BESSEL_SERIES_UP_TO: f64 = 30.0;

/// `e^-|x| I_n(x)` for `n` = 0 or 1, from the power series
/// `I_n(x) = sum_k (x/2)^(2k+n) / (k! (k+n)!)` (all terms positive, so no cancellation).
fn bessel_scaled_series(n: u32, x: f64) -> f64 {
    let half = 0.5 * x.abs();
    let q = half * half;
    let mut term = if n == 0 { 1.0 } else { half };
    let mut sum = term;
    let mut k = 1.0;
    while term > sum * 1e-18 {
        term *= q / (k * (k + n as f64));
        sum += term;
        k += 1.0;
    }
    sum * (-x.abs()).exp()
}

/// `e^-x I_n(x)` for large `x > 0`, from Hankel's expansion
/// `1/sqrt(2 pi x) sum_k (-1)^k a_k(n) / x^k` with `a_k = prod_{j<=k} (4n^2 - (2j-1)^2) / (8 j)`.
fn bessel_scaled_asymptotic(n: u32, x: f64) -> f64 {
    let mu = 4.0 * (n * n) as f64;
    let (mut term, mut sum) = (1.0, 1.0);
    for j in 1..60 {
        let odd = (2 * j - 1) as f64;
        let next = -term * (mu - odd * odd) / (8.0 * j as f64 * x);
        if next.abs() >= term.abs() || next == 0.0 {
            break;
        }
        term = next;
        sum += term;
    }
    sum / (2.0 * PI * x).sqrt()
}

fn bessel_scaled(n: u32, x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return x;
    }
    if a.is_infinite() {
        return 0.0;
    }
    if a <= BESSEL_SERIES_UP_TO {
        bessel_scaled_series(n, x)
    } else {
        bessel_scaled_asymptotic(n, a)
    }
}

/// `i0e(x) = e^-|x| I_0(x)`, even in `x`: 1 at 0, 0 at the infinities.
pub(crate) fn bessel_i0e(x: f64) -> f64 {
    bessel_scaled(0, x)
}

/// `i1e(x) = e^-|x| I_1(x)`, odd in `x`: 0 at 0 and at the infinities (with their sign).
pub(crate) fn bessel_i1e(x: f64) -> f64 {
    let y = bessel_scaled(1, x);
    if x < 0.0 {
        -y
    } else if x.is_infinite() {
        0.0
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 4e-15 * b.abs().max(1e-300)
    }

    #[test]
    fn digamma_matches_known_values() {
        // psi(1) = -gamma, psi(1/2) = -gamma - 2 ln 2.
        let euler = 0.5772156649015329;
        assert!(close(digamma(1.0), -euler));
        assert!(close(digamma(0.5), -euler - 2.0 * std::f64::consts::LN_2));
        assert!(close(digamma(2.0), 1.0 - euler));
        assert!(digamma(0.0).is_nan() && digamma(-3.0).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn bessel_series_and_asymptotic_agree_where_they_meet() {
        for n in [0, 1] {
            let (s, a) = (bessel_scaled_series(n, 30.0), bessel_scaled_asymptotic(n, 30.0));
            assert!((s - a).abs() < 1e-15, "n = {n}: {s} vs {a}");
        }
        assert_eq!(bessel_i0e(0.0), 1.0);
        assert_eq!(bessel_i1e(0.0), 0.0);
        assert_eq!(bessel_i1e(-2.0), -bessel_i1e(2.0));
    }
}
