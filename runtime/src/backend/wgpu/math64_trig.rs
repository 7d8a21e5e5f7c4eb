//! WGSL `float64` trigonometric functions, for [`super::math64`]: musl's (fdlibm's) `sin`,
//! `cos`, `tan`, `asin`, `acos`, `atan` and `atan2`, on the bits of their arguments through
//! `bitcast<u64>` (`SHADER_INT64`).
//!
//! Arguments are reduced modulo pi/2 as musl does below 2^20 pi/2 (Cody-Waite: pi/2 in three
//! 33-bit pieces whose products with the quotient are exact), and above that by Payne-Hanek:
//! the product of the argument with 2/pi is formed exactly, in 24-bit limbs of musl's table of
//! 2/pi's bits, for the limbs whose weight is below 8, so the quotient modulo 8 and some 200
//! bits of the fraction are exact whatever the argument's size.

// The constants are musl's as published (more digits than an f64 holds), so that they can be
// checked against the source.
#![allow(clippy::excessive_precision, clippy::unreadable_literal, clippy::approx_constant)]

use super::math64::{fill, NAN_F64};

/// The functions `name` calls, for the names this module defines.
pub(super) fn deps(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "sin_f64" | "cos_f64" => &["rem_pio2_f64", "k_sin_f64", "k_cos_f64", "is_nan_f64"],
        "tan_f64" => &["rem_pio2_f64", "k_tan_f64", "is_nan_f64"],
        "rem_pio2_f64" => &["rem_pio2_medium_f64", "rem_pio2_large_f64"],
        "rem_pio2_medium_f64" | "rem_pio2_large_f64" => &["reduced_f64", "bits_f64"],
        "k_tan_f64" => &["bits_f64"],
        "asin_f64" | "acos_f64" => &["asin_r_f64", "bits_f64", "is_nan_f64"],
        "atan_f64" => &["bits_f64", "is_nan_f64"],
        "atan2_f64" => &["atan_f64", "bits_f64", "is_nan_f64"],
        "reduced_f64" | "bits_f64" | "k_sin_f64" | "k_cos_f64" | "asin_r_f64" => &[],
        _ => return None,
    })
}

/// The WGSL source of `name`, for the names this module defines.
pub(super) fn source(name: &str) -> Option<String> {
    Some(match name {
        "bits_f64" => BITS.to_string(),
        "reduced_f64" => "struct Reduced64 {\n    n: i32,\n    y0: f64,\n    y1: f64,\n}\n".into(),
        "rem_pio2_f64" => REM_PIO2.to_string(),
        "rem_pio2_medium_f64" => fill(REM_PIO2_MEDIUM, MEDIUM_CONSTANTS),
        "rem_pio2_large_f64" => rem_pio2_large(),
        "k_sin_f64" => fill(K_SIN, K_SIN_CONSTANTS),
        "k_cos_f64" => fill(K_COS, K_COS_CONSTANTS),
        "k_tan_f64" => k_tan(),
        "sin_f64" => sin_cos("sin", ("0x3e500000u", "x"), ["s", "c", "-s", "-c"]),
        "cos_f64" => sin_cos("cos", ("0x3e46a09eu", "1.0lf"), ["c", "-s", "-c", "s"]),
        "tan_f64" => fill(TAN, &[]),
        "asin_r_f64" => fill(ASIN_R, ASIN_R_CONSTANTS),
        "asin_f64" => fill(ASIN, PIO2_CONSTANTS),
        "acos_f64" => fill(ACOS, PIO2_CONSTANTS),
        "atan_f64" => atan(),
        "atan2_f64" => {
            fill(ATAN2, &[("PI", 3.1415926535897931160E+00), ("PI_LO", 1.2246467991473531772E-16)])
        }
        _ => return None,
    })
}

/// The high and low 32 bits of an f64, and an f64 from them.
const BITS: &str = "fn hi_f64(x: f64) -> u32 {
    return u32(bitcast<u64>(x) >> 32u);
}

fn lo_f64(x: f64) -> u32 {
    return u32(bitcast<u64>(x) & 0xfffffffflu);
}

fn from_words_f64(hi: u32, lo: u32) -> f64 {
    return bitcast<f64>((u64(hi) << 32u) | u64(lo));
}
";

/// `x = n pi/2 + y0 + y1` with `|y0 + y1| <= pi/4` (about), `y1` below half an ulp of `y0`.
const REM_PIO2: &str = "fn rem_pio2_f64(x: f64) -> Reduced64 {
    if ((hi_f64(x) & 0x7fffffffu) < 0x413921fbu) {
        return rem_pio2_medium_f64(x);
    }
    return rem_pio2_large_f64(x);
}
";

const MEDIUM_CONSTANTS: &[(&str, f64)] = &[
    ("INV_PIO2", 6.36619772367581382433e-01),
    ("PIO2_1", 1.57079632673412561417e+00),
    ("PIO2_1T", 6.07710050650619224932e-11),
    ("PIO2_2", 6.07710050630396597660e-11),
    ("PIO2_2T", 2.02226624879595063154e-21),
    ("PIO2_3", 2.02226624871116645580e-21),
    ("PIO2_3T", 8.47842766036889956997e-32),
];

/// musl's medium case: `n = round(x 2/pi)` (below 2^20) times pi/2 in up to three pieces,
/// a further piece taken only when the previous difference cancelled.
const REM_PIO2_MEDIUM: &str = "fn rem_pio2_medium_f64(x: f64) -> Reduced64 {
    let k = round(x * $INV_PIO2);
    var r = x - k * $PIO2_1;
    var w = k * $PIO2_1T;
    var y0 = r - w;
    let ex = i32((hi_f64(x) >> 20u) & 0x7ffu);
    if (ex - i32((hi_f64(y0) >> 20u) & 0x7ffu) > 16) {
        let t = r;
        w = k * $PIO2_2;
        r = t - w;
        w = k * $PIO2_2T - ((t - r) - w);
        y0 = r - w;
        if (ex - i32((hi_f64(y0) >> 20u) & 0x7ffu) > 49) {
            let t3 = r;
            w = k * $PIO2_3;
            r = t3 - w;
            w = k * $PIO2_3T - ((t3 - r) - w);
            y0 = r - w;
        }
    }
    return Reduced64(i32(k), y0, (r - y0) - w);
}
";

/// musl's 2/pi in 24-bit pieces (the first 66: enough for any f64 argument).
const TWO_OVER_PI: [u32; 66] = [
    0xA2F983, 0x6E4E44, 0x1529FC, 0x2757D1, 0xF534DD, 0xC0DB62, 0x95993C, 0x439041, 0xFE5163,
    0xABDEBB, 0xC561B7, 0x246E3A, 0x424DD2, 0xE00649, 0x2EEA09, 0xD1921C, 0xFE1DEB, 0x1CB129,
    0xA73EE8, 0x8235F5, 0x2EBB44, 0x84E99C, 0x7026B4, 0x5F7E41, 0x3991D6, 0x398353, 0x39F49C,
    0x845F8B, 0xBDF928, 0x3B1FF8, 0x97FFDE, 0x05980F, 0xEF2F11, 0x8B5A0A, 0x6D1F6D, 0x367ECF,
    0x27CB09, 0xB74F46, 0x3F669E, 0x5FEA2D, 0x7527BA, 0xC7EBE5, 0xF17B3D, 0x0739F7, 0x8A5292,
    0xEA6BFB, 0x5FB11F, 0x8D5D08, 0x560330, 0x46FC7B, 0x6BABF0, 0xCFBC20, 0x9AF436, 0x1DA9E3,
    0x91615E, 0xE61B08, 0x659985, 0x5F14A0, 0x68408D, 0xFFD880, 0x4D7327, 0x310606, 0x1556CA,
    0x73A8C9, 0x60E27B, 0xC08C6B,
];

/// musl's pi/2 in 24-bit pieces, each with its weight.
const PIO2_PIECES: [f64; 8] = [
    1.57079625129699707031e+00,
    7.54978941586159635335e-08,
    5.39030252995776476554e-15,
    3.28200341580791294123e-22,
    1.27065575308067607349e-29,
    1.22933308981111328932e-36,
    2.73370053816464559624e-44,
    2.16741683877804819444e-51,
];

/// Payne-Hanek for `|x| >= 2^20 pi/2` (finite). `x = m 2^e` with `m` an integer below 2^53;
/// with `e = 24 q + s`, `m 2^s` is split into four 24-bit limbs `a[j]`, so
/// `x 2/pi = sum a[j] c[i] 2^(-24 (i + 1 - j - q))` over the pieces `c[i]` of 2/pi. Terms of
/// weight `2^24` and above are multiples of 8 and are left out; the rest, grouped by weight
/// `2^(-24 k)` for `k` in `0..=L`, are exact in `u64` and carried into 24-bit limbs: `n` is
/// the integer limb modulo 8 and the fraction limbs follow. A fraction of at least 1/2 is
/// taken as `fraction - 1` (so `n` rounds to nearest), and its limbs times pi/2's pieces,
/// each product exact, are summed from the smallest into `y0 + y1`, as musl does.
fn rem_pio2_large() -> String {
    const LIMBS: usize = 10;
    let table: Vec<String> = TWO_OVER_PI.iter().map(|c| format!("{c:#x}u")).collect();
    let pieces: Vec<String> = PIO2_PIECES.iter().map(|&p| super::math64::lit(p)).collect();
    format!(
        "fn rem_pio2_large_f64(x: f64) -> Reduced64 {{
    var c = array<u32, 66>({table});
    var pio2 = array<f64, 8>({pieces});
    let bits = bitcast<u64>(x);
    let e = i32((bits >> 52u) & 0x7fflu) - 1075;
    let m = (bits & 0xffffffffffffflu) | 0x10000000000000lu;
    let q = select(e / 24, (e - 23) / 24, e < 0);
    let s = u32(e - 24 * q);
    let top = m >> (24u - s);
    var a = array<u64, 4>((m << s) & 0xfffffflu, top & 0xfffffflu, (top >> 24u) & 0xfffffflu, top >> 48u);
    var limb: array<u64, {len}>;
    for (var k = 0; k <= {L}; k++) {{
        var p = 0lu;
        for (var j = 0; j < 4; j++) {{
            let i = k + j + q - 1;
            if (i >= 0 && i < 66) {{
                p += a[j] * u64(c[i]);
            }}
        }}
        limb[k] = p;
    }}
    var carry = 0lu;
    for (var k = {L}; k >= 1; k--) {{
        let v = limb[k] + carry;
        limb[k] = v & 0xfffffflu;
        carry = v >> 24u;
    }}
    var n = i32((limb[0] + carry) & 7lu);
    let negative = limb[1] >= 0x800000lu;
    if (negative) {{
        n += 1;
        var borrow = 0lu;
        for (var k = {L}; k >= 1; k--) {{
            let v = limb[k] + borrow;
            limb[k] = select(0x1000000lu - v, 0lu, v == 0lu);
            borrow = select(1lu, 0lu, v == 0lu);
        }}
    }}
    var fq: array<f64, {terms}>;
    var scale = 1.0lf;
    for (var k = 1; k <= {L}; k++) {{
        scale *= {inv_2p24};
        let part = f64(limb[k]) * scale;
        for (var i = 0; i < 8; i++) {{
            fq[k - 1 + i] += pio2[i] * part;
        }}
    }}
    var sum = 0.0lf;
    var err = 0.0lf;
    for (var t = {last}; t >= 0; t--) {{
        let total = sum + fq[t];
        let b = total - sum;
        err += (sum - (total - b)) + (fq[t] - b);
        sum = total;
    }}
    var y0 = sum + err;
    var y1 = err - (y0 - sum);
    if (negative) {{
        y0 = -y0;
        y1 = -y1;
    }}
    if (x < 0.0lf) {{
        return Reduced64(-n, -y0, -y1);
    }}
    return Reduced64(n, y0, y1);
}}
",
        table = table.join(", "),
        pieces = pieces.join(", "),
        len = LIMBS + 1,
        L = LIMBS,
        terms = LIMBS + 7,
        last = LIMBS + 6,
        inv_2p24 = super::math64::lit(2f64.powi(-24)),
    )
}

const K_SIN_CONSTANTS: &[(&str, f64)] = &[
    ("S1", -1.66666666666666324348e-01),
    ("S2", 8.33333333332248946124e-03),
    ("S3", -1.98412698298579493134e-04),
    ("S4", 2.75573137070700676789e-06),
    ("S5", -2.50507602534068634195e-08),
    ("S6", 1.58969099521155010221e-10),
];

/// musl's `__sin(x, y, iy)`: sin(x + y) on `|x| <= pi/4`, `y` the tail of `x`.
const K_SIN: &str = "fn k_sin_f64(x: f64, y: f64, iy: i32) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = $S2 + z * ($S3 + z * $S4) + z * w * ($S5 + z * $S6);
    let v = z * x;
    if (iy == 0) {
        return x + v * ($S1 + z * r);
    }
    return x - ((z * (0.5lf * y - v * r) - y) - v * $S1);
}
";

const K_COS_CONSTANTS: &[(&str, f64)] = &[
    ("C1", 4.16666666666666019037e-02),
    ("C2", -1.38888888888741095749e-03),
    ("C3", 2.48015872894767294178e-05),
    ("C4", -2.75573143513906633035e-07),
    ("C5", 2.08757232129817482790e-09),
    ("C6", -1.13596475577881948265e-11),
];

/// musl's `__cos(x, y)`: cos(x + y) on `|x| <= pi/4`.
const K_COS: &str = "fn k_cos_f64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * ($C1 + z * ($C2 + z * $C3)) + w * w * ($C4 + z * ($C5 + z * $C6));
    let hz = 0.5lf * z;
    let v = 1.0lf - hz;
    return v + (((1.0lf - v) - hz) + (z * r - x * y));
}
";

const TAN_T: [f64; 13] = [
    3.33333333333334091986e-01,
    1.33333333333201242699e-01,
    5.39682539762260521377e-02,
    2.18694882948595424599e-02,
    8.86323982359930005737e-03,
    3.59207910759131235356e-03,
    1.45620945432529025516e-03,
    5.88041240820264096874e-04,
    2.46463134818469906812e-04,
    7.81794442939557092300e-05,
    7.14072491382608190305e-05,
    -1.85586374855275456654e-05,
    2.59073051863633712884e-05,
];

/// musl's `__tan(x, y, odd)`: tan(x + y), or -1/tan(x + y) when `odd` is 1, on `|x| <= pi/4`;
/// above 0.6744 through tan(pi/4 - x), and the reciprocal computed with a split divisor.
fn k_tan() -> String {
    let names = ["T0", "T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11", "T12"];
    let mut constants: Vec<(&str, f64)> = names.iter().copied().zip(TAN_T).collect();
    constants.push(("PIO4", 7.85398163397448278999e-01));
    constants.push(("PIO4_LO", 3.06161699786838301793e-17));
    fill(
        "fn k_tan_f64(x0: f64, y0: f64, odd: i32) -> f64 {
    var x = x0;
    var y = y0;
    let hx = hi_f64(x);
    let big = (hx & 0x7fffffffu) >= 0x3fe59428u;
    let negative = (hx >> 31u) != 0u;
    if (big) {
        if (negative) {
            x = -x;
            y = -y;
        }
        x = ($PIO4 - x) + ($PIO4_LO - y);
        y = 0.0lf;
    }
    let z = x * x;
    let w = z * z;
    let r = $T1 + w * ($T3 + w * ($T5 + w * ($T7 + w * ($T9 + w * $T11))));
    let v = z * ($T2 + w * ($T4 + w * ($T6 + w * ($T8 + w * ($T10 + w * $T12)))));
    let s = z * x;
    let rr = y + z * (s * (r + v) + y) + s * $T0;
    let ww = x + rr;
    if (big) {
        let sg = 1.0lf - 2.0lf * f64(odd);
        let vv = sg - 2.0lf * (x + (rr - ww * ww / (ww + sg)));
        return select(vv, -vv, negative);
    }
    if (odd == 0) {
        return ww;
    }
    let w0 = bitcast<f64>(bitcast<u64>(ww) & 0xffffffff00000000lu);
    let v0 = rr - (w0 - x);
    let a = -1.0lf / ww;
    let a0 = bitcast<f64>(bitcast<u64>(a) & 0xffffffff00000000lu);
    return a0 + a * (1.0lf + a0 * w0 + a0 * v0);
}
",
        &constants,
    )
}

/// musl's `sin` and `cos`: `tiny.1` below the high word `tiny.0`, the kernel directly below
/// pi/4, else by the reduced argument's quadrant (`quadrants` over `s = __sin(y0, y1, 1)`
/// and `c = __cos(y0, y1)`).
fn sin_cos(name: &str, tiny: (&str, &str), quadrants: [&str; 4]) -> String {
    let small = if name == "sin" { "k_sin_f64(x, 0.0lf, 0)" } else { "k_cos_f64(x, 0.0lf)" };
    format!(
        "fn {name}_f64(x: f64) -> f64 {{
    let ix = hi_f64(x) & 0x7fffffffu;
    if (ix <= 0x3fe921fbu) {{
        if (ix < {bound}) {{
            return {value};
        }}
        return {small};
    }}
    if (ix >= 0x7ff00000u) {{
        return {NAN_F64};
    }}
    let r = rem_pio2_f64(x);
    let q = r.n & 3;
    let s = k_sin_f64(r.y0, r.y1, 1);
    let c = k_cos_f64(r.y0, r.y1);
    if (q == 0) {{
        return {q0};
    }}
    if (q == 1) {{
        return {q1};
    }}
    if (q == 2) {{
        return {q2};
    }}
    return {q3};
}}
",
        bound = tiny.0,
        value = tiny.1,
        q0 = quadrants[0],
        q1 = quadrants[1],
        q2 = quadrants[2],
        q3 = quadrants[3],
    )
}

/// musl's `tan`.
const TAN: &str = "fn tan_f64(x: f64) -> f64 {
    let ix = hi_f64(x) & 0x7fffffffu;
    if (ix <= 0x3fe921fbu) {
        if (ix < 0x3e400000u) {
            return x;
        }
        return k_tan_f64(x, 0.0lf, 0);
    }
    if (ix >= 0x7ff00000u) {
        return $NAN;
    }
    let r = rem_pio2_f64(x);
    return k_tan_f64(r.y0, r.y1, r.n & 1);
}
";

const ASIN_R_CONSTANTS: &[(&str, f64)] = &[
    ("PS0", 1.66666666666666657415e-01),
    ("PS1", -3.25565818622400915405e-01),
    ("PS2", 2.01212532134862925881e-01),
    ("PS3", -4.00555345006794114027e-02),
    ("PS4", 7.91534994289814532176e-04),
    ("PS5", 3.47933107596021167570e-05),
    ("QS1", -2.40339491173441421878e+00),
    ("QS2", 2.02094576023350569471e+00),
    ("QS3", -6.88283971605453293030e-01),
    ("QS4", 7.70381505559019352791e-02),
];

/// musl's rational approximation `R(z)` of `(asin(x) - x) / x^3` in `z = x^2`.
const ASIN_R: &str = "fn asin_r_f64(z: f64) -> f64 {
    let p = z * ($PS0 + z * ($PS1 + z * ($PS2 + z * ($PS3 + z * ($PS4 + z * $PS5)))));
    let q = 1.0lf + z * ($QS1 + z * ($QS2 + z * ($QS3 + z * $QS4)));
    return p / q;
}
";

const PIO2_CONSTANTS: &[(&str, f64)] =
    &[("PIO2_HI", 1.57079632679489655800e+00), ("PIO2_LO", 6.12323399573676603587e-17)];

/// musl's `asin`.
const ASIN: &str = "fn asin_f64(x: f64) -> f64 {
    let hx = hi_f64(x);
    let ix = hx & 0x7fffffffu;
    if (ix >= 0x3ff00000u) {
        if (((ix - 0x3ff00000u) | lo_f64(x)) == 0u) {
            return x * $PIO2_HI;
        }
        return $NAN;
    }
    if (ix < 0x3fe00000u) {
        if (ix < 0x3e500000u) {
            return x;
        }
        return x + x * asin_r_f64(x * x);
    }
    let z = (1.0lf - abs(x)) * 0.5lf;
    let s = sqrt(z);
    let r = asin_r_f64(z);
    var y: f64;
    if (ix >= 0x3fef3333u) {
        y = $PIO2_HI - (2.0lf * (s + s * r) - $PIO2_LO);
    } else {
        let f = bitcast<f64>(bitcast<u64>(s) & 0xffffffff00000000lu);
        let c = (z - f * f) / (s + f);
        y = 0.5lf * $PIO2_HI - (2.0lf * s * r - ($PIO2_LO - 2.0lf * c) - (0.5lf * $PIO2_HI - 2.0lf * f));
    }
    return select(y, -y, (hx >> 31u) != 0u);
}
";

/// musl's `acos`.
const ACOS: &str = "fn acos_f64(x: f64) -> f64 {
    let hx = hi_f64(x);
    let ix = hx & 0x7fffffffu;
    if (ix >= 0x3ff00000u) {
        if (((ix - 0x3ff00000u) | lo_f64(x)) == 0u) {
            return select(0.0lf, 2.0lf * $PIO2_HI, (hx >> 31u) != 0u);
        }
        return $NAN;
    }
    if (ix < 0x3fe00000u) {
        if (ix <= 0x3c600000u) {
            return $PIO2_HI;
        }
        return $PIO2_HI - (x - ($PIO2_LO - x * asin_r_f64(x * x)));
    }
    if ((hx >> 31u) != 0u) {
        let z = (1.0lf + x) * 0.5lf;
        let s = sqrt(z);
        let w = asin_r_f64(z) * s - $PIO2_LO;
        return 2.0lf * ($PIO2_HI - (s + w));
    }
    let z = (1.0lf - x) * 0.5lf;
    let s = sqrt(z);
    let df = bitcast<f64>(bitcast<u64>(s) & 0xffffffff00000000lu);
    let c = (z - df * df) / (s + df);
    let w = asin_r_f64(z) * s + c;
    return 2.0lf * (df + w);
}
";

/// musl's `atan`: one of four reference points `atan(0.5)`, `atan(1)`, `atan(1.5)`,
/// `atan(inf)` (each as hi + lo), and a polynomial in the transformed argument.
fn atan() -> String {
    let hi = [
        4.63647609000806093515e-01,
        7.85398163397448278999e-01,
        9.82793723247329054082e-01,
        1.57079632679489655800e+00,
    ];
    let lo = [
        2.26987774529616870924e-17,
        3.06161699786838301793e-17,
        1.39033110312309984516e-17,
        6.12323399573676603587e-17,
    ];
    let at = [
        3.33333333333329318027e-01,
        -1.99999999998764832476e-01,
        1.42857142725034663711e-01,
        -1.11111104054623557880e-01,
        9.09088713343650656196e-02,
        -7.69187620504482999495e-02,
        6.66107313738753120669e-02,
        -5.83357013379057348645e-02,
        4.97687799461593236017e-02,
        -3.65315727442169155270e-02,
        1.62858201153657823623e-02,
    ];
    let names = ["AT0", "AT1", "AT2", "AT3", "AT4", "AT5", "AT6", "AT7", "AT8", "AT9", "AT10"];
    let mut constants: Vec<(&str, f64)> = names.iter().copied().zip(at).collect();
    constants.extend([("HI0", hi[0]), ("HI1", hi[1]), ("HI2", hi[2]), ("HI3", hi[3])]);
    constants.extend([("LO0", lo[0]), ("LO1", lo[1]), ("LO2", lo[2]), ("LO3", lo[3])]);
    fill(
        "fn atan_f64(x0: f64) -> f64 {
    if (is_nan_f64(x0)) {
        return x0;
    }
    let hx = hi_f64(x0);
    let ix = hx & 0x7fffffffu;
    let negative = (hx >> 31u) != 0u;
    if (ix >= 0x44100000u) {
        return select($HI3, -$HI3, negative);
    }
    var x = x0;
    var id = -1;
    if (ix < 0x3fdc0000u) {
        if (ix < 0x3e400000u) {
            return x0;
        }
    } else {
        x = abs(x0);
        if (ix < 0x3ff30000u) {
            if (ix < 0x3fe60000u) {
                x = (2.0lf * x - 1.0lf) / (2.0lf + x);
                id = 0;
            } else {
                x = (x - 1.0lf) / (x + 1.0lf);
                id = 1;
            }
        } else if (ix < 0x40038000u) {
            x = (x - 1.5lf) / (1.0lf + 1.5lf * x);
            id = 2;
        } else {
            x = -1.0lf / x;
            id = 3;
        }
    }
    let z = x * x;
    let w = z * z;
    let s1 = z * ($AT0 + w * ($AT2 + w * ($AT4 + w * ($AT6 + w * ($AT8 + w * $AT10)))));
    let s2 = w * ($AT1 + w * ($AT3 + w * ($AT5 + w * ($AT7 + w * $AT9))));
    if (id < 0) {
        return x - x * (s1 + s2);
    }
    var hi = array<f64, 4>($HI0, $HI1, $HI2, $HI3);
    var lo = array<f64, 4>($LO0, $LO1, $LO2, $LO3);
    let r = hi[id] - (x * (s1 + s2) - lo[id] - x);
    return select(r, -r, negative);
}
",
        &constants,
    )
}

/// musl's `atan2(y, x)`: the signed zeros, infinities and extreme ratios by the quadrant
/// `m = 2 sign(x) + sign(y)`, else `atan(|y / x|)` moved into that quadrant.
const ATAN2: &str = "fn atan2_f64(y: f64, x: f64) -> f64 {
    if (is_nan_f64(x) || is_nan_f64(y)) {
        return $NAN;
    }
    let hx = hi_f64(x);
    let hy = hi_f64(y);
    if (hx == 0x3ff00000u && lo_f64(x) == 0u) {
        return atan_f64(y);
    }
    let m = ((hy >> 31u) & 1u) | ((hx >> 30u) & 2u);
    let ix = hx & 0x7fffffffu;
    let iy = hy & 0x7fffffffu;
    let half_pi = select(0.5lf * $PI, -0.5lf * $PI, (m & 1u) != 0u);
    if ((iy | lo_f64(y)) == 0u) {
        if (m < 2u) {
            return y;
        }
        return select($PI, -$PI, m == 3u);
    }
    if ((ix | lo_f64(x)) == 0u) {
        return half_pi;
    }
    if (ix == 0x7ff00000u) {
        var q: f64;
        if (iy == 0x7ff00000u) {
            q = select(0.25lf * $PI, 0.75lf * $PI, m >= 2u);
        } else {
            q = select(0.0lf, $PI, m >= 2u);
        }
        return select(q, -q, (m & 1u) != 0u);
    }
    if (ix + (64u << 20u) < iy || iy == 0x7ff00000u) {
        return half_pi;
    }
    var z: f64;
    if ((m & 2u) != 0u && iy + (64u << 20u) < ix) {
        z = 0.0lf;
    } else {
        z = atan_f64(abs(y / x));
    }
    if (m == 0u) {
        return z;
    }
    if (m == 1u) {
        return -z;
    }
    if (m == 2u) {
        return $PI - (z - $PI_LO);
    }
    return (z - $PI_LO) - $PI;
}
";
