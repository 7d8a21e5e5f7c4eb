//! WGSL `float64` functions for [`super::math64`] beyond the exponentials and trigonometry:
//! `pow` (fdlibm's, as musl has it), `cbrt` (FreeBSD's), `erf` (musl's, as the CPU backend
//! computes it through the `libm` crate), XLA's `erf_inv` (as `exec/cpu/xla_math.rs`), the
//! inverse hyperbolic functions by the formulas of Rust's std (which the CPU backend calls)
//! on musl's `log1p`, and `nextafter` on the bits. Bits are read through `bitcast<u64>`.

// The constants are the sources' as published (more digits than an f64 holds), so that they
// can be checked against them.
#![allow(clippy::excessive_precision, clippy::unreadable_literal, clippy::approx_constant)]

use std::fmt::Write as _;

use super::math64::{fill, lit};
use crate::exec::cpu::xla_math as xla;

/// The functions `name` calls, for the names this module defines.
pub(super) fn deps(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "next_after_f64" => &["is_nan_f64"],
        "cbrt_f64" => &["bits_f64"],
        "erf_f64" => &["bits_f64", "exp_f64", "is_nan_f64"],
        "erf_inv_f64" => &["log1p_f64"],
        "hypot1_f64" => &[],
        "asinh_f64" => &["hypot1_f64", "log1p_c_f64"],
        "acosh_f64" => &["log_f64"],
        "atanh_f64" => &["log1p_c_f64"],
        "log1p_c_f64" => &["bits_f64", "is_nan_f64"],
        "pow_f64" => &["bits_f64", "is_nan_f64", "scale_f64"],
        _ => return None,
    })
}

/// The WGSL source of `name`, for the names this module defines.
pub(super) fn source(name: &str) -> Option<String> {
    Some(match name {
        "next_after_f64" => fill(NEXT_AFTER, &[]),
        "cbrt_f64" => fill(CBRT, CBRT_CONSTANTS),
        "erf_f64" => fill(ERF, ERF_CONSTANTS),
        "erf_inv_f64" => fill(&erf_inv(), &[]),
        "hypot1_f64" => HYPOT1.to_string(),
        "log1p_c_f64" => fill(LOG1P_C, LOG1P_C_CONSTANTS),
        "asinh_f64" => ASINH.to_string(),
        "acosh_f64" => fill(ACOSH, &[]),
        "atanh_f64" => ATANH.to_string(),
        "pow_f64" => fill(POW, POW_CONSTANTS),
        _ => return None,
    })
}

/// The next f64 after `x` toward `y`, on the bits, as the CPU computes it.
const NEXT_AFTER: &str = "fn next_after_f64(x: f64, y: f64) -> f64 {
    if (is_nan_f64(x) || is_nan_f64(y)) {
        return $NAN;
    }
    if (x == y) {
        return y;
    }
    if (x == 0.0lf) {
        return bitcast<f64>(select(0x8000000000000001lu, 1lu, y > 0.0lf));
    }
    let b = bitcast<u64>(x);
    return bitcast<f64>(select(b - 1lu, b + 1lu, (y > x) == (x > 0.0lf)));
}
";

const CBRT_CONSTANTS: &[(&str, f64)] = &[
    ("P0", 1.87595182427177009643),
    ("P1", -1.88497979543377169875),
    ("P2", 1.621429720105354466140),
    ("P3", -0.758397934778766047437),
    ("P4", 0.145996192886612446982),
    ("TWO54", 18014398509481984.0),
];

/// FreeBSD's (and musl's former) `cbrt`: a first guess from a third of the exponent bits,
/// a polynomial step to 23 bits, rounding to 21 bits so that the square is exact, and one
/// Newton step, within an ulp.
const CBRT: &str = "fn cbrt_f64(x: f64) -> f64 {
    var hx = hi_f64(x) & 0x7fffffffu;
    if (hx >= 0x7ff00000u) {
        return x;
    }
    var u = bitcast<u64>(x);
    if (hx < 0x00100000u) {
        u = bitcast<u64>(x * $TWO54);
        hx = u32(u >> 32u) & 0x7fffffffu;
        if (hx == 0u) {
            return x;
        }
        hx = hx / 3u + 696219795u;
    } else {
        hx = hx / 3u + 715094163u;
    }
    u = (u & 0x8000000000000000lu) | (u64(hx) << 32u);
    var t = bitcast<f64>(u);
    var r = (t * t) * (t / x);
    t = t * (($P0 + r * ($P1 + r * $P2)) + ((r * r) * r) * ($P3 + r * $P4));
    t = bitcast<f64>((bitcast<u64>(t) + 0x80000000lu) & 0xffffffffc0000000lu);
    let s = t * t;
    r = x / s;
    let w = t + t;
    r = (r - t) / (w + r);
    return t + t * r;
}
";

const ERF_CONSTANTS: &[(&str, f64)] = &[
    ("ERX", 8.45062911510467529297e-01),
    ("EFX8", 1.02703333676410069053e+00),
    ("PP0", 1.28379167095512558561e-01),
    ("PP1", -3.25042107247001499370e-01),
    ("PP2", -2.84817495755985104766e-02),
    ("PP3", -5.77027029648944159157e-03),
    ("PP4", -2.37630166566501626084e-05),
    ("QQ1", 3.97917223959155352819e-01),
    ("QQ2", 6.50222499887672944485e-02),
    ("QQ3", 5.08130628187576562776e-03),
    ("QQ4", 1.32494738004321644526e-04),
    ("QQ5", -3.96022827877536812320e-06),
    ("PA0", -2.36211856075265944077e-03),
    ("PA1", 4.14856118683748331666e-01),
    ("PA2", -3.72207876035701323847e-01),
    ("PA3", 3.18346619901161753674e-01),
    ("PA4", -1.10894694282396677476e-01),
    ("PA5", 3.54783043256182359371e-02),
    ("PA6", -2.16637559486879084300e-03),
    ("QA1", 1.06420880400844228286e-01),
    ("QA2", 5.40397917702171048937e-01),
    ("QA3", 7.18286544141962662868e-02),
    ("QA4", 1.26171219808761642112e-01),
    ("QA5", 1.36370839120290507362e-02),
    ("QA6", 1.19844998467991074170e-02),
    ("RA0", -9.86494403484714822705e-03),
    ("RA1", -6.93858572707181764372e-01),
    ("RA2", -1.05586262253232909814e+01),
    ("RA3", -6.23753324503260060396e+01),
    ("RA4", -1.62396669462573470355e+02),
    ("RA5", -1.84605092906711035994e+02),
    ("RA6", -8.12874355063065934246e+01),
    ("RA7", -9.81432934416914548592e+00),
    ("SA1", 1.96512716674392571292e+01),
    ("SA2", 1.37657754143519042600e+02),
    ("SA3", 4.34565877475229228821e+02),
    ("SA4", 6.45387271733267880336e+02),
    ("SA5", 4.29008140027567833386e+02),
    ("SA6", 1.08635005541779435134e+02),
    ("SA7", 6.57024977031928170135e+00),
    ("SA8", -6.04244152148580987438e-02),
    ("RB0", -9.86494292470009928597e-03),
    ("RB1", -7.99283237680523006574e-01),
    ("RB2", -1.77579549177547519889e+01),
    ("RB3", -1.60636384855821916062e+02),
    ("RB4", -6.37566443368389627722e+02),
    ("RB5", -1.02509513161107724954e+03),
    ("RB6", -4.83519191608651397019e+02),
    ("SB1", 3.03380607434824582924e+01),
    ("SB2", 3.25792512996573918826e+02),
    ("SB3", 1.53672958608443695994e+03),
    ("SB4", 3.19985821950859553908e+03),
    ("SB5", 2.55305040643316442583e+03),
    ("SB6", 4.74528541206955367215e+02),
    ("SB7", -2.24409524465858183362e+01),
];

/// musl's `erf`: a rational approximation below 0.84375, `1 - erx - P/Q` in `|x| - 1` below
/// 1.25, `1 - exp(-x^2 - 0.5625 + R/S) / x` (with `x^2` split so that it is exact) below 6,
/// and 1 above.
const ERF: &str = "fn erf_f64(x: f64) -> f64 {
    if (is_nan_f64(x)) {
        return x;
    }
    let hx = hi_f64(x);
    let ix = hx & 0x7fffffffu;
    var y: f64;
    if (ix < 0x3feb0000u) {
        if (ix < 0x3e300000u) {
            return 0.125lf * (8.0lf * x + $EFX8 * x);
        }
        let z = x * x;
        let r = $PP0 + z * ($PP1 + z * ($PP2 + z * ($PP3 + z * $PP4)));
        let s = 1.0lf + z * ($QQ1 + z * ($QQ2 + z * ($QQ3 + z * ($QQ4 + z * $QQ5))));
        return x + x * (r / s);
    } else if (ix < 0x3ff40000u) {
        let s = abs(x) - 1.0lf;
        let p = $PA0 + s * ($PA1 + s * ($PA2 + s * ($PA3 + s * ($PA4 + s * ($PA5 + s * $PA6)))));
        let q = 1.0lf + s * ($QA1 + s * ($QA2 + s * ($QA3 + s * ($QA4 + s * ($QA5 + s * $QA6)))));
        y = 1.0lf - (1.0lf - $ERX - p / q);
    } else if (ix < 0x40180000u) {
        let a = abs(x);
        let s = 1.0lf / (a * a);
        var r: f64;
        var big_s: f64;
        if (ix < 0x4006db6du) {
            r = $RA0 + s * ($RA1 + s * ($RA2 + s * ($RA3 + s * ($RA4 + s * ($RA5 + s * ($RA6 + s * $RA7))))));
            big_s = 1.0lf + s * ($SA1 + s * ($SA2 + s * ($SA3 + s * ($SA4 + s * ($SA5 + s * ($SA6 + s * ($SA7 + s * $SA8)))))));
        } else {
            r = $RB0 + s * ($RB1 + s * ($RB2 + s * ($RB3 + s * ($RB4 + s * ($RB5 + s * $RB6)))));
            big_s = 1.0lf + s * ($SB1 + s * ($SB2 + s * ($SB3 + s * ($SB4 + s * ($SB5 + s * ($SB6 + s * $SB7))))));
        }
        let z = bitcast<f64>(bitcast<u64>(a) & 0xffffffff00000000lu);
        y = 1.0lf - exp_f64(-z * z - 0.5625lf) * exp_f64((z - a) * (z + a) + r / big_s) / a;
    } else {
        y = 1.0lf;
    }
    return select(y, -y, (hx >> 31u) != 0u);
}
";

/// XLA's f64 `erf_inv` (M. Giles' polynomials in `w = -log1p(-x^2)`), as the CPU backend.
fn erf_inv() -> String {
    let horner = |s: &mut String, acc: &str, z: &str, c: &[f64]| {
        let _ = writeln!(s, "        {acc} = {};", lit(c[0]));
        for &k in &c[1..] {
            let _ = writeln!(s, "        {acc} = fma({acc}, {z}, {});", lit(k));
        }
    };
    let mut s = "fn erf_inv_f64(x: f64) -> f64 {
    let w = -log1p_f64(x * -x);
    var p: f64;
    if (w < 6.25lf) {
        let z = w - 3.125lf;
"
    .to_string();
    horner(&mut s, "p", "z", &xla::ERF_INV_F64_CENTRAL);
    s.push_str("    } else if (w < 16.0lf) {\n        let z = sqrt(w) - 3.25lf;\n");
    horner(&mut s, "p", "z", &xla::ERF_INV_F64_MIDDLE);
    s.push_str("    } else {\n        let z = sqrt(w) - 5.0lf;\n");
    horner(&mut s, "p", "z", &xla::ERF_INV_F64_TAIL);
    s.push_str(
        "    }
    if (abs(x) == 1.0lf) {
        return select(-$INF, $INF, x > 0.0lf);
    }
    return p * x;
}
",
    );
    s
}

const LOG1P_C_CONSTANTS: &[(&str, f64)] = &[
    ("LN2_HI", 6.93147180369123816490e-01),
    ("LN2_LO", 1.90821492927058770002e-10),
    ("LG1", 6.666666666666735130e-01),
    ("LG2", 3.999999999940941908e-01),
    ("LG3", 2.857142874366239149e-01),
    ("LG4", 2.222219843214978396e-01),
    ("LG5", 1.818357216161805012e-01),
    ("LG6", 1.531383769920937332e-01),
    ("LG7", 1.479819860511658591e-01),
];

/// musl's `log1p` (within an ulp, as the C library's `log1p` that Rust's `ln_1p` calls),
/// for the inverse hyperbolic functions; `jnp.log1p` itself is XLA's, as on the CPU.
/// `1 + x = 2^k (1 + f)` with the rounding error of `1 + x` kept in `c`.
const LOG1P_C: &str = "fn log1p_c_f64(x: f64) -> f64 {
    if (is_nan_f64(x)) {
        return x;
    }
    let hx = hi_f64(x);
    var k = 1;
    var f = 0.0lf;
    var c = 0.0lf;
    if (hx < 0x3fda827au || (hx >> 31u) > 0u) {
        if (hx >= 0xbff00000u) {
            if (x == -1.0lf) {
                return -$INF;
            }
            return $NAN;
        }
        if ((hx << 1u) < (0x3ca00000u << 1u)) {
            return x;
        }
        if (hx <= 0xbfd2bec4u) {
            k = 0;
            f = x;
        }
    } else if (hx >= 0x7ff00000u) {
        return x;
    }
    if (k > 0) {
        let u = 1.0lf + x;
        var hu = hi_f64(u);
        hu += 0x3ff00000u - 0x3fe6a09eu;
        k = i32(hu >> 20u) - 0x3ff;
        if (k < 54) {
            c = select(x - (u - 1.0lf), 1.0lf - (u - x), k >= 2);
            c /= u;
        }
        hu = (hu & 0x000fffffu) + 0x3fe6a09eu;
        f = from_words_f64(hu, lo_f64(u)) - 1.0lf;
    }
    let hfsq = 0.5lf * f * f;
    let s = f / (2.0lf + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * ($LG2 + w * ($LG4 + w * $LG6));
    let t2 = z * ($LG1 + w * ($LG3 + w * ($LG5 + w * $LG7)));
    let r = t2 + t1;
    let dk = f64(k);
    return s * (hfsq + r) + (dk * $LN2_LO + c) - hfsq + f + dk * $LN2_HI;
}
";

/// `hypot(1, t)` for `t >= 0`, scaled so that neither square overflows.
const HYPOT1: &str = "fn hypot1_f64(t: f64) -> f64 {
    let a = max(t, 1.0lf);
    let b = min(t, 1.0lf);
    let q = b / a;
    return a * sqrt(1.0lf + q * q);
}
";

/// Rust's `f64::asinh`: `log1p(|x| + |x| / (hypot(1, 1/|x|) + 1/|x|))` with `x`'s sign.
const ASINH: &str = "fn asinh_f64(x: f64) -> f64 {
    let ax = abs(x);
    let ix = 1.0lf / ax;
    let y = log1p_c_f64(ax + ax / (hypot1_f64(ix) + ix));
    return select(y, -y, x < 0.0lf || (x == 0.0lf && (bitcast<u64>(x) >> 63u) != 0lu));
}
";

/// Rust's `f64::acosh`: NaN below 1, else `ln(x + sqrt(x - 1) sqrt(x + 1))`.
const ACOSH: &str = "fn acosh_f64(x: f64) -> f64 {
    if (x < 1.0lf) {
        return $NAN;
    }
    return log_f64(x + sqrt(x - 1.0lf) * sqrt(x + 1.0lf));
}
";

/// Rust's `f64::atanh`: `log1p(2x / (1 - x)) / 2`.
const ATANH: &str = "fn atanh_f64(x: f64) -> f64 {
    return 0.5lf * log1p_c_f64((2.0lf * x) / (1.0lf - x));
}
";

const POW_CONSTANTS: &[(&str, f64)] = &[
    ("DP_H1", 5.84962487220764160156e-01),
    ("DP_L1", 1.35003920212974897128e-08),
    ("TWO53", 9007199254740992.0),
    ("L1", 5.99999999999994648725e-01),
    ("L2", 4.28571428578550184252e-01),
    ("L3", 3.33333329818377432918e-01),
    ("L4", 2.72728123808534006489e-01),
    ("L5", 2.30660745775561754067e-01),
    ("L6", 2.06975017800338417784e-01),
    ("P1", 1.66666666666666019037e-01),
    ("P2", -2.77777777770155933842e-03),
    ("P3", 6.61375632143793436117e-05),
    ("P4", -1.65339022054652515390e-06),
    ("P5", 4.13813679705723846039e-08),
    ("LG2", 6.93147180559945286227e-01),
    ("LG2_H", 6.93147182464599609375e-01),
    ("LG2_L", -1.90465429995776804525e-09),
    ("OVT", 8.0085662595372944372e-17),
    ("CP", 9.61796693925975554329e-01),
    ("CP_H", 9.61796700954437255859e-01),
    ("CP_L", -7.02846165095275826516e-09),
    ("IVLN2", 1.44269504088896338700e+00),
    ("IVLN2_H", 1.44269502162933349609e+00),
    ("IVLN2_L", 1.92596299112661746887e-08),
];

/// fdlibm's `pow` (musl's until 2018): the special cases on the bits, then `log2(|x|)` to
/// about 64 bits as `t1 + t2`, times `y` split into two halves, and `2^(y log2|x|)`, with the
/// sign of a negative `x` raised to an odd integer.
const POW: &str = "fn set_low_f64(x: f64, lo: u32) -> f64 {
    return from_words_f64(hi_f64(x), lo);
}

fn pow_f64(x: f64, y: f64) -> f64 {
    let hx = bitcast<i32>(hi_f64(x));
    let lx = lo_f64(x);
    let hy = bitcast<i32>(hi_f64(y));
    let ly = lo_f64(y);
    var ix = hx & 0x7fffffff;
    let iy = hy & 0x7fffffff;
    if ((u32(iy) | ly) == 0u) {
        return 1.0lf;
    }
    if (hx == 0x3ff00000 && lx == 0u) {
        return 1.0lf;
    }
    if (is_nan_f64(x) || is_nan_f64(y)) {
        return $NAN;
    }
    var yisint = 0;
    if (hx < 0) {
        if (iy >= 0x43400000) {
            yisint = 2;
        } else if (iy >= 0x3ff00000) {
            let k = (iy >> 20u) - 0x3ff;
            if (k > 20) {
                let j = ly >> u32(52 - k);
                if ((j << u32(52 - k)) == ly) {
                    yisint = 2 - i32(j & 1u);
                }
            } else if (ly == 0u) {
                let j = iy >> u32(20 - k);
                if ((j << u32(20 - k)) == iy) {
                    yisint = 2 - (j & 1);
                }
            }
        }
    }
    if (ly == 0u) {
        if (iy == 0x7ff00000) {
            if (((ix - 0x3ff00000) | bitcast<i32>(lx)) == 0) {
                return 1.0lf;
            }
            if (ix >= 0x3ff00000) {
                return select(0.0lf, y, hy >= 0);
            }
            return select(0.0lf, -y, hy < 0);
        }
        if (iy == 0x3ff00000) {
            return select(1.0lf / x, x, hy >= 0);
        }
        if (hy == 0x40000000) {
            return x * x;
        }
        if (hy == 0x3fe00000 && hx >= 0) {
            return sqrt(x);
        }
    }
    var ax = abs(x);
    if (lx == 0u && (ix == 0x7ff00000 || ix == 0 || ix == 0x3ff00000)) {
        var z = ax;
        if (hy < 0) {
            z = 1.0lf / z;
        }
        if (hx < 0) {
            if (((ix - 0x3ff00000) | yisint) == 0) {
                return $NAN;
            } else if (yisint == 1) {
                z = -z;
            }
        }
        return z;
    }
    var s = 1.0lf;
    if (hx < 0) {
        if (yisint == 0) {
            return $NAN;
        }
        if (yisint == 1) {
            s = -1.0lf;
        }
    }
    var t1: f64;
    var t2: f64;
    if (iy > 0x41e00000) {
        if (iy > 0x43f00000) {
            if (ix <= 0x3fefffff) {
                return select(0.0lf, $INF, hy < 0);
            }
            if (ix >= 0x3ff00000) {
                return select(0.0lf, $INF, hy > 0);
            }
        }
        if (ix < 0x3fefffff) {
            return s * select(0.0lf, $INF, hy < 0);
        }
        if (ix > 0x3ff00000) {
            return s * select(0.0lf, $INF, hy > 0);
        }
        let t = ax - 1.0lf;
        let w = (t * t) * (0.5lf - t * (0.3333333333333333333333lf - t * 0.25lf));
        let u = $IVLN2_H * t;
        let v = t * $IVLN2_L - w * $IVLN2;
        t1 = set_low_f64(u + v, 0u);
        t2 = v - (t1 - u);
    } else {
        var n = 0;
        if (ix < 0x00100000) {
            ax *= $TWO53;
            n -= 53;
            ix = bitcast<i32>(hi_f64(ax));
        }
        n += (ix >> 20u) - 0x3ff;
        let j = ix & 0x000fffff;
        var k = 0;
        ix = j | 0x3ff00000;
        if (j <= 0x3988e) {
            k = 0;
        } else if (j < 0xbb67a) {
            k = 1;
        } else {
            n += 1;
            ix -= 0x00100000;
        }
        ax = from_words_f64(u32(ix), lo_f64(ax));
        let bp = select(1.0lf, 1.5lf, k == 1);
        let dp_h = select(0.0lf, $DP_H1, k == 1);
        let dp_l = select(0.0lf, $DP_L1, k == 1);
        let u = ax - bp;
        let v = 1.0lf / (ax + bp);
        let ss = u * v;
        let s_h = set_low_f64(ss, 0u);
        var t_h = from_words_f64(((u32(ix) >> 1u) | 0x20000000u) + 0x00080000u + (u32(k) << 18u), 0u);
        var t_l = ax - (t_h - bp);
        let s_l = v * ((u - s_h * t_h) - s_h * t_l);
        var s2 = ss * ss;
        var r = s2 * s2 * ($L1 + s2 * ($L2 + s2 * ($L3 + s2 * ($L4 + s2 * ($L5 + s2 * $L6)))));
        r += s_l * (s_h + ss);
        s2 = s_h * s_h;
        t_h = set_low_f64(3.0lf + s2 + r, 0u);
        t_l = r - ((t_h - 3.0lf) - s2);
        let uu = s_h * t_h;
        let vv = s_l * t_h + t_l * ss;
        let p_h = set_low_f64(uu + vv, 0u);
        let p_l = vv - (p_h - uu);
        let z_h = $CP_H * p_h;
        let z_l = $CP_L * p_h + p_l * $CP + dp_l;
        let t = f64(n);
        t1 = set_low_f64(((z_h + z_l) + dp_h) + t, 0u);
        t2 = z_l - (((t1 - t) - dp_h) - z_h);
    }
    let y1 = set_low_f64(y, 0u);
    let p_l = (y - y1) * t1 + y * t2;
    var p_h = y1 * t1;
    var z = p_l + p_h;
    var j = bitcast<i32>(hi_f64(z));
    let i = bitcast<i32>(lo_f64(z));
    if (j >= 0x40900000) {
        if (((j - 0x40900000) | i) != 0) {
            return s * $INF;
        }
        if (p_l + $OVT > z - p_h) {
            return s * $INF;
        }
    } else if ((j & 0x7fffffff) >= 0x4090cc00) {
        if (((u32(j) - 0xc090cc00u) | u32(i)) != 0u) {
            return s * 0.0lf;
        }
        if (p_l <= z - p_h) {
            return s * 0.0lf;
        }
    }
    let ij = j & 0x7fffffff;
    var k = (ij >> 20u) - 0x3ff;
    var n = 0;
    if (ij > 0x3fe00000) {
        n = j + (0x00100000 >> u32(k + 1));
        k = ((n & 0x7fffffff) >> 20u) - 0x3ff;
        let t = from_words_f64(u32(n & ~(0x000fffff >> u32(k))), 0u);
        n = ((n & 0x000fffff) | 0x00100000) >> u32(20 - k);
        if (j < 0) {
            n = -n;
        }
        p_h -= t;
    }
    let t = set_low_f64(p_l + p_h, 0u);
    let u = t * $LG2_H;
    let v = (p_l - (t - p_h)) * $LG2 + t * $LG2_L;
    z = u + v;
    let w = v - (z - u);
    let tt = z * z;
    let tz = z - tt * ($P1 + tt * ($P2 + tt * ($P3 + tt * ($P4 + tt * $P5))));
    let r = (z * tz) / (tz - 2.0lf) - (w + z * w);
    z = 1.0lf - (r - z);
    return s * scale_f64(z, n);
}
";
