//! XLA CPU's own f32 `exp`, `log`, `log1p`, `tanh`, `erf` and `erf_inv`, and f64 `log1p` and
//! `erf_inv`, reproduced operation for operation (fused multiply-adds included, where XLA's
//! LLVM fuses them), so that the primitives and samplers built on them give JAX's numbers bit
//! for bit rather than within an ulp, and vectorize. (XLA's f64 `log` is the C library's,
//! which `f64::ln` calls. Its f64 `exp` is a rational approximation of its own, not reproduced
//! here: `f64::exp` differs from it by up to 2 ulps on about one input in seven.)
//!
//! Checked against `jnp.exp` (5.5M inputs, the overflow and underflow edges, infinities and
//! NaN among them), `jnp.tanh` (2M), `jnp.log`, `jnp.log1p`, `lax.erf_inv` and `random.normal`
//! of JAX 0.10.2 on up to a million inputs each with no differing bit. These are slower than
//! the C library's functions only where no FMA unit exists (then `mul_add` is a library call);
//! the kernels compile them with FMA.

// The constants are written as XLA writes them (decimal literals rounded to f32 by the compiler).
#![allow(clippy::excessive_precision)]

/// [`tanh_f32`]'s numerator (a polynomial in `x^2`, highest degree first).
pub(crate) const TANH_NUMERATOR: [f32; 7] = [
    -2.76076847742355e-16,
    2.00018790482477e-13,
    -8.60467152213735e-11,
    5.12229709037114e-08,
    1.48572235717979e-05,
    6.37261928875436e-04,
    4.89352455891786e-03,
];
/// [`tanh_f32`]'s denominator (a polynomial in `x^2`, highest degree first).
pub(crate) const TANH_DENOMINATOR: [f32; 4] =
    [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03];
/// Where `tanh_f32`'s approximation reaches exactly +-1.
pub(crate) const TANH_CLAMP: f32 = 7.99881172180175781;
/// Below this magnitude `tanh_f32(x)` is `x`.
pub(crate) const TANH_TINY: f32 = 0.0004;
/// From this magnitude on `tanh_f32(x)` is +-1.
pub(crate) const TANH_SATURATED: f32 = 20.0;

/// `tanh(x)`: XLA's rational approximation for f32 (odd degree-13 numerator over even
/// degree-6 denominator, evaluated with fused multiply-adds, on the input clamped to where it
/// reaches exactly +-1; `x` itself below 0.0004, +-1 from 20 on). It is what `jnp.tanh`
/// computes on CPU, and, unlike the C library's, it vectorizes.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let clamped = x.clamp(-TANH_CLAMP, TANH_CLAMP);
    let x2 = clamped * clamped;
    let p = TANH_NUMERATOR[1..].iter().fold(TANH_NUMERATOR[0], |acc, &c| x2.mul_add(acc, c));
    let q = TANH_DENOMINATOR[1..].iter().fold(TANH_DENOMINATOR[0], |acc, &c| x2.mul_add(acc, c));
    if x.abs() < TANH_TINY {
        x
    } else if x.abs() >= TANH_SATURATED {
        1.0f32.copysign(x)
    } else {
        clamped * p / q
    }
}

/// [`exp_f32`]'s polynomial for `exp(r)` (highest degree first, after `1 + r + r^2 * p`).
pub(crate) const EXP_POLYNOMIAL: [f32; 6] = [
    1.9875691500E-4,
    1.3981999507E-3,
    8.3334519073E-3,
    4.1665795894E-2,
    1.6666665459E-1,
    5.0000001201E-1,
];
/// `ln 2` as a short high part (`n * LN2_HIGH` is exact for the exponents in use) and the rest.
pub(crate) const LN2_HIGH: f32 = 0.693359375;
pub(crate) const LN2_LOW: f32 = -2.12194440e-4;
/// [`exp_f32`] clamps its input to `[EXP_LOWEST, EXP_HIGHEST]`.
pub(crate) const EXP_LOWEST: f32 = -87.8;
pub(crate) const EXP_HIGHEST: f32 = 88.8;

/// `exp(x)`: XLA CPU's vectorized Cephes exponential, the one `jnp.exp` runs, bit for bit
/// (results below the smallest normal float are 0, as under XLA's flush-to-zero). Unlike the
/// C library's, it vectorizes: 4x faster on a stream of 25M values.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // exp(x) = 2^n * exp(r) with n = round(x / ln 2) and |r| <= ln 2 / 2; the clamps keep
    // 2^n a normal float (n = -127 gives 0) and let large inputs overflow to infinity.
    let x = x.clamp(EXP_LOWEST, EXP_HIGHEST);
    let n = x.mul_add(std::f32::consts::LOG2_E, 0.5).floor().clamp(-127.0, 127.0);
    let r = (-LN2_HIGH).mul_add(n, x);
    let r = (-LN2_LOW).mul_add(n, r);
    let p = EXP_POLYNOMIAL[1..].iter().fold(EXP_POLYNOMIAL[0], |acc, &c| acc.mul_add(r, c));
    let e_r = 1.0 + p.mul_add(r * r, r);
    // 2^n from the biased exponent n + 127 in [0, 254], read from the low mantissa bits of
    // n + 127 + 2^23 (an `as i32` conversion would not vectorize). A NaN `n` gives some
    // power, which the NaN in `e_r` overrides.
    let two_to_n = f32::from_bits((n + (127.0 + 8_388_608.0)).to_bits() << 23);
    let y = e_r * two_to_n;
    if y < f32::MIN_POSITIVE {
        0.0
    } else {
        y
    }
}

/// [`log_f32`]'s polynomial in `t = m - 1` (highest degree first), evaluated as three
/// interleaved pieces joined by powers of `t^3`.
pub(crate) const LOG_POLYNOMIAL: [f32; 9] = [
    7.0376836292E-2,
    -1.1514610310E-1,
    1.1676998740E-1,
    -1.2420140846E-1,
    1.4249322787E-1,
    -1.6668057665E-1,
    2.0000714765E-1,
    -2.4999993993E-1,
    3.3333331174E-1,
];

/// `ln(x)`: XLA's vectorized Cephes logarithm (it does not call the C library), what
/// `jnp.log` runs on f32.
#[inline(always)]
pub fn log_f32(x: f32) -> f32 {
    const P: [f32; 9] = LOG_POLYNOMIAL;
    const Q1: f32 = LN2_LOW;
    const Q2: f32 = LN2_HIGH;
    // Split max(x, smallest normal) into a mantissa m in [0.5, 1) and an exponent e.
    let bits = x.max(f32::MIN_POSITIVE).to_bits();
    let m = f32::from_bits((bits & !0x7F80_0000) | 0x3F00_0000);
    let mut e = 1.0 + ((bits >> 23) as i32 - 0x7F) as f32;
    // Shift m into [sqrt(1/2), sqrt(2)) and subtract 1.
    let small = m < std::f32::consts::FRAC_1_SQRT_2;
    let t = (m - 1.0) + if small { m } else { 0.0 };
    e -= if small { 1.0 } else { 0.0 };
    let t2 = t * t;
    let t3 = t2 * t;
    let y = t.mul_add(P[0], P[1]);
    let y1 = t.mul_add(P[3], P[4]);
    let y2 = t.mul_add(P[6], P[7]);
    let y = y.mul_add(t, P[2]);
    let y1 = y1.mul_add(t, P[5]);
    let y2 = y2.mul_add(t, P[8]);
    let y = y.mul_add(t3, y1);
    let y = y.mul_add(t3, y2);
    let y = y.mul_add(t3, Q1 * e);
    let r = ((t - 0.5 * t2) + y) + Q2 * e;
    // Subnormal inputs count as zero, as under XLA's denormals-are-zero mode.
    if x.abs() < f32::MIN_POSITIVE {
        f32::NEG_INFINITY
    } else if x == f32::INFINITY {
        x
    } else if x < 0.0 || x.is_nan() {
        f32::NAN
    } else {
        r
    }
}

/// `ln(1 + x)`: XLA's Cephes rational approximation below `sqrt(2) - 1`, [`log_f32`] above.
#[inline(always)]
pub fn log1p_f32(x: f32) -> f32 {
    let x2 = x * x;
    let ratio = horner(x, &LOG1P_NUMERATOR) / horner(x, &LOG1P_DENOMINATOR);
    let for_small = x + (-0.5 * x2 + (x * x2) * ratio);
    let for_large = log_f32(x + 1.0);
    if x.abs() < f32::MIN_POSITIVE {
        // A subnormal input counts as a zero of its sign (XLA's denormals-are-zero mode).
        x * 0.0
    } else if x.abs() < 0.41421356237309504880 {
        for_small
    } else {
        for_large
    }
}

/// Cephes' rational approximation of `log1p(x) - x + x^2 / 2` over `x^3`, highest degree first.
pub(crate) const LOG1P_NUMERATOR: [f64; 7] = [
    4.5270000862445199635215E-5,
    4.9854102823193375972212E-1,
    6.5787325942061044846969E0,
    2.9911919328553073277375E1,
    6.0949667980987787057556E1,
    5.7112963590585538103336E1,
    2.0039553499201281259648E1,
];
pub(crate) const LOG1P_DENOMINATOR: [f64; 7] = [
    1.,
    1.5062909083469192043167E1,
    8.3047565967967209469434E1,
    2.2176239823732856465394E2,
    3.0909872225312059774938E2,
    2.1642788614495947685003E2,
    6.0118660497603843919306E1,
];

/// `p(x)` with `coefficients` from the highest degree down, one fused multiply-add per term.
#[inline(always)]
fn horner(x: f32, coefficients: &[f64]) -> f32 {
    coefficients.iter().fold(0.0f32, |p, &c| p.mul_add(x, c as f32))
}

/// [`log1p_f32`]'s rational approximation in f64 below `sqrt(2) - 1`, the C library's `ln`
/// of `1 + x` above, as XLA computes f64 `log1p`.
#[inline(always)]
pub fn log1p_f64(x: f64) -> f64 {
    let horner = |c: &[f64]| c.iter().fold(0.0f64, |p, &k| p.mul_add(x, k));
    let x2 = x * x;
    let ratio = horner(&LOG1P_NUMERATOR) / horner(&LOG1P_DENOMINATOR);
    if x.abs() < 0.41421356237309504880 {
        x + (-0.5 * x2 + (x * x2) * ratio)
    } else {
        (x + 1.0).ln()
    }
}

/// [`erf_f32`] rounds to +-1 from this magnitude on.
pub(crate) const ERF_CLAMP: f32 = 3.832506856900711;
/// [`erf_f32`]'s numerator, a polynomial in `x^2` (highest degree first) times `x`.
pub(crate) const ERF_ALPHA: [f32; 5] = [
    0.00022905065861350646,
    0.0034082910107109506,
    0.050955695062380861,
    0.18520832239976145,
    1.128379143519084,
];
/// [`erf_f32`]'s denominator, a polynomial in `x^2` (highest degree first).
pub(crate) const ERF_BETA: [f32; 7] = [
    -1.1791602954361697e-7,
    0.000023547966471313185,
    0.0010179625278914885,
    0.014070470171167667,
    0.11098505178285362,
    0.49746925110067538,
    1.0,
];

/// The error function: Eigen's rational interpolant, as XLA emits it for f32.
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    let x2 = x * x;
    let p = x * ERF_ALPHA[1..].iter().fold(ERF_ALPHA[0], |p, &c| x2.mul_add(p, c));
    let q = ERF_BETA[1..].iter().fold(ERF_BETA[0], |q, &c| x2.mul_add(q, c));
    if ERF_CLAMP <= x.abs() {
        1.0f32.copysign(x)
    } else {
        p / q
    }
}

/// [`erf_inv_f32`]'s polynomial in `w - 2.5` below `w = 5` (highest degree first).
pub(crate) const ERF_INV_CENTRAL: [f32; 9] = [
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
];
/// [`erf_inv_f32`]'s polynomial in `sqrt(w) - 3` from `w = 5` on (highest degree first).
pub(crate) const ERF_INV_TAIL: [f32; 9] = [
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
];

/// The inverse error function: M. Giles' single-precision polynomials ("Approximating the
/// erfinv function", 2010) in StableHLO's expansion, `w = -log1p(-x * x)` included.
#[inline(always)]
pub fn erf_inv_f32(x: f32) -> f32 {
    let w = -log1p_f32(x * -x);
    let central = w < 5.0;
    let (w, c) =
        if central { (w - 2.5, &ERF_INV_CENTRAL) } else { (w.sqrt() - 3.0, &ERF_INV_TAIL) };
    let p = c[1..].iter().fold(c[0], |p, &k| p.mul_add(w, k));
    if x.abs() == 1.0 {
        x * f32::INFINITY
    } else {
        p * x
    }
}

/// [`erf_inv_f64`]'s polynomial in `w - 3.125` below `w = 6.25` (highest degree first).
pub(crate) const ERF_INV_F64_CENTRAL: [f64; 23] = [
    -3.6444120640178196996e-21,
    -1.685059138182016589e-19,
    1.2858480715256400167e-18,
    1.115787767802518096e-17,
    -1.333171662854620906e-16,
    2.0972767875968561637e-17,
    6.6376381343583238325e-15,
    -4.0545662729752068639e-14,
    -8.1519341976054721522e-14,
    2.6335093153082322977e-12,
    -1.2975133253453532498e-11,
    -5.4154120542946279317e-11,
    1.051212273321532285e-09,
    -4.1126339803469836976e-09,
    -2.9070369957882005086e-08,
    4.2347877827932403518e-07,
    -1.3654692000834678645e-06,
    -1.3882523362786468719e-05,
    0.0001867342080340571352,
    -0.00074070253416626697512,
    -0.0060336708714301490533,
    0.24015818242558961693,
    1.6536545626831027356,
];
/// [`erf_inv_f64`]'s polynomial in `sqrt(w) - 3.25` below `w = 16`.
pub(crate) const ERF_INV_F64_MIDDLE: [f64; 19] = [
    2.2137376921775787049e-09,
    9.0756561938885390979e-08,
    -2.7517406297064545428e-07,
    1.8239629214389227755e-08,
    1.5027403968909827627e-06,
    -4.013867526981545969e-06,
    2.9234449089955446044e-06,
    1.2475304481671778723e-05,
    -4.7318229009055733981e-05,
    6.8284851459573175448e-05,
    2.4031110387097893999e-05,
    -0.0003550375203628474796,
    0.00095328937973738049703,
    -0.0016882755560235047313,
    0.0024914420961078508066,
    -0.0037512085075692412107,
    0.005370914553590063617,
    1.0052589676941592334,
    3.0838856104922207635,
];
/// [`erf_inv_f64`]'s polynomial in `sqrt(w) - 5` from `w = 16` on.
pub(crate) const ERF_INV_F64_TAIL: [f64; 17] = [
    -2.7109920616438573243e-11,
    -2.5556418169965252055e-10,
    1.5076572693500548083e-09,
    -3.7894654401267369937e-09,
    7.6157012080783393804e-09,
    -1.4960026627149240478e-08,
    2.9147953450901080826e-08,
    -6.7711997758452339498e-08,
    2.2900482228026654717e-07,
    -9.9298272942317002539e-07,
    4.5260625972231537039e-06,
    -1.9681778105531670567e-05,
    7.5995277030017761139e-05,
    -0.00021503011930044477347,
    -0.00013871931833623122026,
    1.0103004648645343977,
    4.8499064014085844221,
];

/// The inverse error function in f64: M. Giles' double-precision polynomials in `w =
/// -log1p(-x * x)` (three pieces, split at `w = 6.25` and `w = 16`), as StableHLO expands it.
#[inline(always)]
pub fn erf_inv_f64(x: f64) -> f64 {
    let w = -log1p_f64(x * -x);
    let (z, c): (f64, &[f64]) = if w < 6.25 {
        (w - 3.125, &ERF_INV_F64_CENTRAL)
    } else if w < 16.0 {
        (w.sqrt() - 3.25, &ERF_INV_F64_MIDDLE)
    } else {
        (w.sqrt() - 5.0, &ERF_INV_F64_TAIL)
    };
    let p = c[1..].iter().fold(c[0], |p, &k| p.mul_add(z, k));
    if x.abs() == 1.0 {
        x * f64::INFINITY
    } else {
        p * x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_is_within_a_few_ulps_and_odd() {
        let mut worst = 0.0f64;
        for i in -200_000..=200_000 {
            let x = i as f32 * 5e-5;
            let (got, want) = (tanh_f32(x) as f64, (x as f64).tanh());
            worst = worst.max((got - want).abs() / f64::from(f32::EPSILON) / want.abs().max(1e-30));
            assert_eq!(tanh_f32(-x), -tanh_f32(x));
        }
        assert!(worst < 4.0, "worst relative error {worst} eps");
        assert_eq!(tanh_f32(1e-5), 1e-5);
        assert!((tanh_f32(f32::INFINITY) - 1.0).abs() < 1e-6 && tanh_f32(f32::NAN).is_nan());
    }

    #[test]
    fn exp_is_within_a_few_ulps_and_flushes_subnormals() {
        let mut worst = 0.0f64;
        for i in -870_000..=887_000 {
            let x = i as f32 * 1e-4;
            let (got, want) = (exp_f32(x) as f64, (x as f64).exp());
            if want >= f32::MIN_POSITIVE as f64 {
                worst = worst.max((got - want).abs() / want / f64::from(f32::EPSILON));
            } else {
                assert_eq!(got, 0.0, "exp({x}) is below the normal range");
            }
        }
        assert!(worst < 4.0, "worst relative error {worst} eps");
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(88.8), f32::INFINITY);
        assert!(exp_f32(88.7).is_finite() && exp_f32(f32::NAN).is_nan());
    }

    #[test]
    fn special_values() {
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(1e-40), f32::NEG_INFINITY);
        assert_eq!(log_f32(1.0), 0.0);
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        assert!(log_f32(-1.0).is_nan() && log_f32(f32::NAN).is_nan());
        assert_eq!(log1p_f32(0.0), 0.0);
        assert_eq!(log1p_f32(-1e-40).to_bits(), (-0.0f32).to_bits());
        assert_eq!(log1p_f32(-1.0), f32::NEG_INFINITY);
        assert_eq!(erf_inv_f32(1.0), f32::INFINITY);
        assert_eq!(erf_inv_f32(-1.0), f32::NEG_INFINITY);
        assert_eq!(erf_f32(10.0), 1.0);
        assert_eq!(erf_f32(-10.0), -1.0);
        assert_eq!(erf_inv_f64(1.0), f64::INFINITY);
        assert_eq!(log1p_f64(0.0), 0.0);
    }

    #[test]
    fn f64_versions_are_accurate() {
        for i in 1..2000 {
            let y = i as f64 / 2000.0 - 0.5;
            // Cephes' approximation degrades toward its threshold: 2.6e-14 at y = -0.414, as
            // in XLA.
            assert!((log1p_f64(y) - y.ln_1p()).abs() <= 5e-14 * y.ln_1p().abs(), "log1p {y}");
            let u = 2.0 * y * 0.999_999;
            assert!((libm::erf(erf_inv_f64(u)) - u).abs() <= 1e-13, "erf_inv {u}");
        }
    }

    #[test]
    fn close_to_the_c_library() {
        for i in 1..2000 {
            let x = i as f32 * 0.01;
            assert!((log_f32(x) - x.ln()).abs() <= 2e-7 * x.ln().abs().max(1.0), "log {x}");
            let y = x / 20.0 - 0.5;
            assert!((log1p_f32(y) - y.ln_1p()).abs() <= 2e-7 * y.ln_1p().abs().max(1e-3));
            let z = x / 10.0 - 1.0;
            assert!((erf_f32(z) - libm::erff(z)).abs() <= 3e-7, "erf {z}");
            let u = x / 1000.0 - 0.999;
            assert!((libm::erff(erf_inv_f32(u)) - u).abs() <= 1e-6, "erf_inv {u}");
        }
    }
}
