//! Special functions that neither `std` nor `libm` provide.

/// The inverse error function in f32, with XLA's polynomial (M. Giles, "Approximating the erfinv
/// function", 2010), so that samplers built on it match JAX's numbers.
pub fn erf_inv_f32(x: f32) -> f32 {
    if x.abs() == 1.0 {
        return x * f32::INFINITY;
    }
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let (w, coefficients): (f32, &[f32]) = if w < 5.0 {
        (
            w - 2.5,
            &[
                2.810_226_4e-8,
                3.432_739_4e-7,
                -3.523_387_7e-6,
                -4.391_506_5e-6,
                2.185_808_7e-4,
                -1.253_725e-3,
                -4.177_681_6e-3,
                2.466_407_3e-1,
                1.501_409_4,
            ],
        )
    } else {
        (
            w.sqrt() - 3.0,
            &[
                -2.002_142_6e-4,
                1.009_505_6e-4,
                1.349_343_2e-3,
                -3.673_428_4e-3,
                5.739_507_7e-3,
                -7.622_461_3e-3,
                9.438_870_5e-3,
                1.001_674,
                2.832_976_8,
            ],
        )
    };
    let p = coefficients[1..].iter().fold(coefficients[0], |p, &c| c + p * w);
    p * x
}

/// The inverse error function in f64: the f32 approximation refined by Newton steps on
/// `erf(y) - x` to full double precision inside (-1, 1).
pub fn erf_inv_f64(x: f64) -> f64 {
    if x.is_nan() || x.abs() > 1.0 {
        return f64::NAN;
    }
    if x.abs() == 1.0 {
        return x * f64::INFINITY;
    }
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    let start = erf_inv_f32(x as f32) as f64;
    // Where x rounds to +-1 in f32, start from the tail asymptote sqrt(-ln(1 - x^2)) instead.
    let mut y =
        if start.is_finite() { start } else { x.signum() * (-((1.0 - x) * (1.0 + x)).ln()).sqrt() };
    // Near +-1 the f32 start is off by up to ~1e-2 (erf is flat there); Newton converges
    // quadratically, so a handful of steps always suffice.
    for _ in 0..6 {
        let step = (libm::erf(y) - x) / (two_over_sqrt_pi * (-y * y).exp());
        y -= step;
        if step.abs() <= f64::EPSILON * y.abs() {
            break;
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_inv_inverts_erf() {
        for &y in &[-3.5, -2.0, -0.7, -1e-3, 0.0, 0.3, 1.1, 2.9, 4.0] {
            // Near +-1 erf is flat, so judge the inverse by its residual: a few ulps of x.
            let x = libm::erf(y);
            let residual = (libm::erf(erf_inv_f64(x)) - x).abs();
            assert!(residual <= 4.0 * f64::EPSILON * x.abs(), "{y}: residual {residual}");
        }
        for &x in &[-0.999, -0.5, -1e-3, 0.0, 0.3, 0.9, 0.999_9] {
            assert!((libm::erff(erf_inv_f32(x)) - x).abs() < 1e-6, "{x}");
        }
        assert_eq!(erf_inv_f32(1.0), f32::INFINITY);
        assert_eq!(erf_inv_f64(-1.0), f64::NEG_INFINITY);
    }
}
