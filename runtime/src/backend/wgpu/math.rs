//! WGSL functions the elementwise kernels call, each emitted only into the shaders that use
//! it (with the functions it calls).
//!
//! The `*_xla` ones are the CPU backend's f32 functions (`exec/cpu/xla_math.rs`, which are
//! XLA's) step for step, with their constants read from there, so the two backends compute
//! the same operations in the same order; a device that fuses a multiply and an add the CPU
//! keeps apart can still differ in the last bit. The rest are exact where the CPU's result is
//! exact (`fmod`, `nextafter`, `max`, conversions) and otherwise within a few ulps, built on
//! those and on WGSL's builtins (see the GPU tests for the measured bounds).
//!
//! WGSL has no NaN or infinity literals and leaves `clamp`, `min` and `max` of a NaN to the
//! device, so NaN tests are bit tests and each function passes NaN through explicitly.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::exec::cpu::xla_math as xla;

/// A WGSL literal with exactly `x`'s value: the shortest decimal that round-trips an f64
/// (which every f32 is), so parsing it as WGSL's abstract float and narrowing is exact.
fn lit(x: f32) -> String {
    let text = format!("{:?}", x as f64);
    if x.is_sign_negative() {
        format!("({text})")
    } else {
        text
    }
}

/// `var {acc} = c[0];` then `{acc} = <step>;` for each further coefficient, where `step` is a
/// template over `{acc}` and `{c}`: Horner's rule in the CPU's order of operands.
fn poly(acc: &str, coefficients: &[f32], step: &str) -> String {
    let mut s = format!("    var {acc} = {};\n", lit(coefficients[0]));
    for &c in &coefficients[1..] {
        let _ = writeln!(s, "    {acc} = {};", step.replace("{acc}", acc).replace("{c}", &lit(c)));
    }
    s
}

const NAN: &str = "bitcast<f32>(0x7fc00000u)";
const INF: &str = "bitcast<f32>(0x7f800000u)";

/// The functions `name` calls.
fn deps(name: &str) -> &'static [&'static str] {
    match name {
        "log_xla" | "tanh_xla" | "erf_xla" | "max_f32" | "min_f32" | "next_after_f32"
        | "f32_to_i32" | "f32_to_u32" | "fmod_f32" | "cbrt_f32" => &["is_nan"],
        "exp_xla" => &["is_nan", "kept"],
        "sin_f32" | "cos_f32" | "tan_f32" => &["reduce_pio2", "is_finite"],
        "reduce_pio2" => &["kept"],
        "acos_f32" => &["asin_f32"],
        "atan2_f32" => &["atan_f32", "is_nan"],
        "asin_f32" => &["is_nan"],
        "exp2_parts" => &["exp_xla"],
        "exp2_f32" => &["exp2_parts", "kept", "is_nan"],
        "pow_f32" => &["is_nan", "log_xla", "exp2_parts", "kept"],
        "log1p_xla" => &["log_xla"],
        "erf_inv_xla" => &["log1p_xla"],
        "logistic_xla" => &["exp_xla"],
        "expm1_f32" => &["exp_xla", "is_nan"],
        "sinh_f32" => &["expm1_f32", "exp_xla"],
        "cosh_f32" => &["exp_xla"],
        "asinh_f32" | "acosh_f32" => &["log1p_xla", "log_xla"],
        "atanh_f32" => &["log1p_xla"],
        _ if name.ends_with("_f64") => super::math64::deps(name),
        _ => &[],
    }
}

/// `names` and everything they call, each after the functions it calls.
pub(super) fn closure(names: &BTreeSet<&'static str>) -> Vec<&'static str> {
    crate::backend::in_call_order(names, deps)
}

/// The WGSL source of helper `name`.
pub(super) fn source(name: &str) -> String {
    let min_positive = lit(f32::MIN_POSITIVE);
    match name {
        "is_nan" => "fn is_nan(x: f32) -> bool {\n    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;\n}\n".to_string(),
        "is_finite" => "fn is_finite(x: f32) -> bool {\n    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;\n}\n".to_string(),
        // NumPy's sign: 0 stays (signed) 0, NaN stays NaN.
        "sign_f32" => "fn sign_f32(x: f32) -> f32 {\n    return select(select(x, -1.0, x < 0.0), 1.0, x > 0.0);\n}\n".to_string(),
        // NaN propagates; between equal operands (+0 and -0 too) the first is kept.
        "max_f32" => "fn max_f32(a: f32, b: f32) -> f32 {\n    return select(a, b, !is_nan(a) & (is_nan(b) | (b > a)));\n}\n".to_string(),
        "min_f32" => "fn min_f32(a: f32, b: f32) -> f32 {\n    return select(a, b, !is_nan(a) & (is_nan(b) | (b < a)));\n}\n".to_string(),
        "exp_xla" => exp_xla(&min_positive),
        "log_xla" => log_xla(&min_positive),
        "log1p_xla" => log1p_xla(&min_positive),
        "tanh_xla" => tanh_xla(),
        "erf_xla" => erf_xla(),
        "erf_inv_xla" => erf_inv_xla(),
        "logistic_xla" => format!(
            "fn logistic_xla(x: f32) -> f32 {{
    let y = 1.0 / (1.0 + exp_xla(-x));
    return select(y, 0.0, y < {min_positive});
}}
"
        ),
        "expm1_f32" => expm1_f32(),
        // 2^round(x) times e^((x - round(x)) ln 2): the fraction is exact, so the error is
        // exp's.
        "exp2_f32" => "fn exp2_f32(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    let c = clamp(x, -300.0, 300.0);
    let n = round(c);
    return exp2_parts(n, kept(c - n));
}
"
        .to_string(),
        // 2^n e^(r ln 2) for integral n and |r| <= 1/2, scaled by two exact powers of two so
        // that a result below the normal range is rounded once.
        "exp2_parts" => "fn exp2_parts(n: f32, r: f32) -> f32 {
    let m = exp_xla(r * 0.6931471805599453);
    let k = clamp(n, -252.0, 254.0);
    let half = floor(0.5 * k);
    let low = bitcast<f32>(u32(i32(half) + 127) << 23u);
    let high = bitcast<f32>(u32(i32(k - half) + 127) << 23u);
    return (m * low) * high;
}
"
        .to_string(),
        // A GPU compiler may reassociate floating-point operations (Mesa turns
        // `(x - n*a) - n*b` into `x - n*(a + b)`, undoing a Cody-Waite reduction): a value
        // passed through here is multiplied by a 1 the compiler cannot see (threads run only
        // while `i < params[0]`), which keeps the steps on either side apart.
        "kept" => "fn kept(x: f32) -> f32 {
    return x * select(1.0, 0.5, params[0] == 0u);
}
"
        .to_string(),
        // Builtins reduce large arguments poorly (lavapipe's sin(3e38) is -1): these reduce
        // exactly at any magnitude.
        "sin_f32" | "cos_f32" | "tan_f32" => sin_cos_tan(name),
        "reduce_pio2" => reduce_pio2(),
        // The inverse trigonometric functions are Cephes' (asinf, acosf, atanf): builtins
        // may be far less accurate (lavapipe's asin is off by thousands of ulps).
        "asin_f32" => asin_f32(),
        "acos_f32" => "fn acos_f32(x: f32) -> f32 {
    if (x < -0.5) {
        return 3.1415927 - 2.0 * asin_f32(sqrt(0.5 * (1.0 + x)));
    }
    if (x > 0.5) {
        return 2.0 * asin_f32(sqrt(0.5 * (1.0 - x)));
    }
    return 1.5707964 - asin_f32(x);
}
"
        .to_string(),
        "atan_f32" => atan_f32(),
        // C99's atan2, signed zeros and infinities included.
        "atan2_f32" => format!(
            "fn atan2_f32(y: f32, x: f32) -> f32 {{
    if (is_nan(x) || is_nan(y)) {{
        return {NAN};
    }}
    let ax = abs(x);
    let ay = abs(y);
    let x_negative = (bitcast<u32>(x) >> 31u) == 1u;
    var r: f32;
    if (ay == {INF}) {{
        r = select(select(1.5707964, 0.7853982, ax == {INF}), 2.3561945, ax == {INF} && x_negative);
    }} else if (ax == {INF} || ay == 0.0) {{
        r = select(0.0, 3.1415927, x_negative);
    }} else if (ax == 0.0) {{
        r = 1.5707964;
    }} else {{
        let z = atan_f32(ay / ax);
        r = select(z, 3.1415927 - z, x_negative);
    }}
    return select(r, -r, (bitcast<u32>(y) >> 31u) == 1u);
}}
"
        ),
        // sinh(a) = (E + E / (E + 1)) / 2 with E = expm1(a) keeps small arguments exact; from
        // 88 on e^a overflows before sinh does, so it is squared from e^(a/2).
        "sinh_f32" => "fn sinh_f32(x: f32) -> f32 {
    let a = abs(x);
    var r: f32;
    if (a < 1.0) {
        let e = expm1_f32(a);
        r = 0.5 * (e + e / (e + 1.0));
    } else if (a < 88.0) {
        let e = exp_xla(a);
        r = 0.5 * e - 0.5 / e;
    } else {
        let h = exp_xla(0.5 * a);
        r = (0.5 * h) * h;
    }
    return select(r, -r, (bitcast<u32>(x) >> 31u) == 1u);
}
"
        .to_string(),
        "cosh_f32" => "fn cosh_f32(x: f32) -> f32 {
    let a = abs(x);
    if (a < 88.0) {
        let e = exp_xla(a);
        return 0.5 * e + 0.5 / e;
    }
    let h = exp_xla(0.5 * a);
    return (0.5 * h) * h;
}
"
        .to_string(),
        // asinh(a) = log1p(a + a^2 / (1 + sqrt(1 + a^2))), exact near 0; ln(2a) where a^2
        // would overflow.
        "asinh_f32" => "fn asinh_f32(x: f32) -> f32 {
    let a = abs(x);
    var r: f32;
    if (a > 4096.0) {
        r = log_xla(a) + 0.6931471805599453;
    } else {
        r = log1p_xla(a + a * a / (1.0 + sqrt(1.0 + a * a)));
    }
    return select(r, -r, (bitcast<u32>(x) >> 31u) == 1u);
}
"
        .to_string(),
        // acosh(1 + t) = log1p(t + sqrt(2t + t^2)), exact near 1; ln(2x) where x^2 would
        // overflow; NaN below 1.
        "acosh_f32" => "fn acosh_f32(x: f32) -> f32 {
    if (x < 1.0) {
        return bitcast<f32>(0x7fc00000u);
    }
    if (x > 4096.0) {
        return log_xla(x) + 0.6931471805599453;
    }
    let t = x - 1.0;
    return log1p_xla(t + sqrt(2.0 * t + t * t));
}
"
        .to_string(),
        // atanh(a) = log1p(2a / (1 - a)) / 2.
        "atanh_f32" => "fn atanh_f32(x: f32) -> f32 {
    let a = abs(x);
    let r = 0.5 * log1p_xla(2.0 * a / (1.0 - a));
    return select(r, -r, (bitcast<u32>(x) >> 31u) == 1u);
}
"
        .to_string(),
        "cbrt_f32" => format!(
            // A first guess from exp2/log2, then one Newton step.
            "fn cbrt_f32(x: f32) -> f32 {{
    let a = abs(x);
    if (a == 0.0 || a == {INF} || is_nan(x)) {{
        return x;
    }}
    var y = exp2(log2(a) / 3.0);
    y = y - (y * y * y - a) / (3.0 * y * y);
    return select(y, -y, x < 0.0);
}}
"
        ),
        "pow_f32" => pow_f32(),
        "fmod_f32" => fmod_f32(),
        "next_after_f32" => format!(
            "fn next_after_f32(x: f32, y: f32) -> f32 {{
    if (is_nan(x) || is_nan(y)) {{
        return {NAN};
    }}
    if (x == y) {{
        return y;
    }}
    if (x == 0.0) {{
        return select(-bitcast<f32>(1u), bitcast<f32>(1u), y > 0.0);
    }}
    let b = bitcast<u32>(x);
    return bitcast<f32>(select(b - 1u, b + 1u, (y > x) == (x > 0.0)));
}}
"
        ),
        "ipow_i32" => "fn ipow_i32(base: i32, e: i32) -> i32 {
    if (e < 0) {
        if (base == 1) {
            return 1;
        }
        if (base == -1) {
            return select(-1, 1, (e & 1) == 0);
        }
        return 0;
    }
    var acc = 1;
    var b = base;
    var k = e;
    while (k > 0) {
        if ((k & 1) == 1) {
            acc = acc * b;
        }
        b = b * b;
        k = k >> 1u;
    }
    return acc;
}
"
        .to_string(),
        "ipow_u32" => "fn ipow_u32(base: u32, e: u32) -> u32 {
    var acc = 1u;
    var b = base;
    var k = e;
    while (k > 0u) {
        if ((k & 1u) == 1u) {
            acc = acc * b;
        }
        b = b * b;
        k = k >> 1u;
    }
    return acc;
}
"
        .to_string(),
        "f32_to_i32" => "fn f32_to_i32(x: f32) -> i32 {
    if (is_nan(x)) {
        return 0;
    }
    if (x >= 2147483648.0) {
        return 2147483647;
    }
    if (x <= -2147483648.0) {
        return -2147483647 - 1;
    }
    return i32(x);
}
"
        .to_string(),
        "f32_to_u32" => "fn f32_to_u32(x: f32) -> u32 {
    if (is_nan(x) || x < 1.0) {
        return 0u;
    }
    if (x >= 4294967296.0) {
        return 0xffffffffu;
    }
    return u32(x);
}
"
        .to_string(),
        _ if name.ends_with("_f64") => super::math64::source(name),
        other => unreachable!("no WGSL helper {other}"),
    }
}

fn reduce_pio2() -> String {
    // x = r + q pi/2 with |r| <= pi/4. Up to 8192, Cody-Waite: pi/2 in three parts, the first
    // two short enough that their products with q (at most 13 bits) are exact. Beyond,
    // Payne-Hanek: the 32-bit mantissa of x times a 96-bit window of the bits of 2/pi
    // (those that matter modulo 4), in integer arithmetic.
    "struct Reduced {
    r: f32,
    q: u32,
}

// The 64-bit product of two 32-bit words, as (low, high).
fn mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    let low = (p00 & 0xffffu) | (mid << 16u);
    let high = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
    return vec2<u32>(low, high);
}

// Bits 1.. of 2/pi, after two words of zeros.
const TWO_OVER_PI = array<u32, 8>(0u, 0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
    0xdb629599u, 0x3c439041u);

fn reduce_pio2(x: f32) -> Reduced {
    let a = abs(x);
    if (a <= 8192.0) {
        let j = round(x * 0.63661975);
        let r1 = kept(x - j * 1.5703125);
        let r2 = kept(r1 - j * 4.837512969970703125e-4);
        return Reduced(r2 - j * 7.549789954891882e-8, u32(i32(j)) & 3u);
    }
    let bits = bitcast<u32>(a);
    let m = ((bits & 0x007fffffu) | 0x00800000u) << 8u;
    // a = m 2^e; bits of 2/pi from number e - 1 on decide (x 2/pi) mod 4.
    let e = i32(bits >> 23u) - 158;
    let at = u32(e - 1 + 63);
    let word = at / 32u;
    let shift = at % 32u;
    var w: array<u32, 3>;
    for (var k = 0u; k < 3u; k = k + 1u) {
        let first = TWO_OVER_PI[word + k];
        let next = TWO_OVER_PI[min(word + k + 1u, 7u)];
        w[k] = select((first << shift) | (next >> (32u - shift)), first, shift == 0u);
    }
    let p0 = mul_wide(m, w[2]);
    let p1 = mul_wide(m, w[1]);
    let p2 = mul_wide(m, w[0]);
    let s1 = p0.y + p1.x;
    let c1 = select(0u, 1u, s1 < p0.y);
    let s2 = p1.y + p2.x + c1;
    // s2:s1:p0.x is (x 2/pi mod 4) 2^94: two bits of quadrant, then the fraction.
    var q = s2 >> 30u;
    var high = (s2 << 2u) | (s1 >> 30u);
    var low = (s1 << 2u) | (p0.x >> 30u);
    var negative = false;
    if (high >= 0x80000000u) {
        q = q + 1u;
        negative = true;
        low = ~low + 1u;
        high = ~high + select(0u, 1u, low == 0u);
    }
    var scale = 0;
    if (high == 0u) {
        high = low;
        low = 0u;
        scale = -32;
    }
    let lz = countLeadingZeros(high);
    let top = select((high << lz) | (low >> (32u - lz)), high, lz == 0u);
    let f = f32(top >> 8u) * bitcast<f32>(u32(scale - 24 - i32(lz) + 127) << 23u);
    var r = f * 1.5707964;
    if (negative) {
        r = -r;
    }
    if (x < 0.0) {
        return Reduced(-r, (4u - (q & 3u)) & 3u);
    }
    return Reduced(r, q & 3u);
}

// Cephes' sinf and cosf polynomials, for |r| <= pi/4.
fn sin_poly(r: f32) -> f32 {
    let z = r * r;
    return r + r * z * ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1);
}

fn cos_poly(r: f32) -> f32 {
    let z = r * r;
    return 1.0 - 0.5 * z
        + z * z * ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2);
}
"
    .to_string()
}

fn sin_cos_tan(name: &str) -> String {
    let quadrants = match name {
        "sin_f32" => {
            "    switch (t.q) {
        case 0u: {
            return sin_poly(t.r);
        }
        case 1u: {
            return cos_poly(t.r);
        }
        case 2u: {
            return -sin_poly(t.r);
        }
        default: {
            return -cos_poly(t.r);
        }
    }"
        }
        "cos_f32" => {
            "    switch (t.q) {
        case 0u: {
            return cos_poly(t.r);
        }
        case 1u: {
            return -sin_poly(t.r);
        }
        case 2u: {
            return -cos_poly(t.r);
        }
        default: {
            return sin_poly(t.r);
        }
    }"
        }
        _ => {
            "    let s = sin_poly(t.r);
    let c = cos_poly(t.r);
    return select(s / c, -c / s, (t.q & 1u) == 1u);"
        }
    };
    format!(
        "fn {name}(x: f32) -> f32 {{
    if (!is_finite(x)) {{
        return {NAN};
    }}
    let t = reduce_pio2(x);
{quadrants}
}}
"
    )
}

fn asin_f32() -> String {
    format!(
        "fn asin_f32(x: f32) -> f32 {{
    let a = abs(x);
    if (a > 1.0 || is_nan(x)) {{
        return {NAN};
    }}
    if (a < 1.0e-4) {{
        return x;
    }}
    var z: f32;
    var t: f32;
    let wide = a > 0.5;
    if (wide) {{
        z = 0.5 * (1.0 - a);
        t = sqrt(z);
    }} else {{
        t = a;
        z = a * a;
    }}
    var r = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z
        + 7.4953002686e-2) * z + 1.6666752422e-1) * z * t + t;
    if (wide) {{
        r = 1.5707964 - (r + r);
    }}
    return select(r, -r, x < 0.0);
}}
"
    )
}

fn atan_f32() -> String {
    "fn atan_f32(x: f32) -> f32 {
    var a = abs(x);
    var base = 0.0;
    if (a > 2.4142137) {
        base = 1.5707964;
        a = -1.0 / a;
    } else if (a > 0.41421357) {
        base = 0.7853982;
        a = (a - 1.0) / (a + 1.0);
    }
    let z = a * a;
    let r = base + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
        - 3.33329491539e-1) * z * a + a);
    return select(r, -r, x < 0.0);
}
"
    .to_string()
}

fn exp_xla(min_positive: &str) -> String {
    let mut s = format!(
        "fn exp_xla(x0: f32) -> f32 {{
    if (is_nan(x0)) {{
        return x0;
    }}
    let x = clamp(x0, {lo}, {hi});
    let n = clamp(floor(fma(x, {log2e}, 0.5)), -127.0, 127.0);
    let r0 = fma({neg_ln2_high}, n, x);
    let r = fma({neg_ln2_low}, n, kept(r0));
",
        lo = lit(xla::EXP_LOWEST),
        hi = lit(xla::EXP_HIGHEST),
        log2e = lit(std::f32::consts::LOG2_E),
        neg_ln2_high = lit(-xla::LN2_HIGH),
        neg_ln2_low = lit(-xla::LN2_LOW),
    );
    s.push_str(&poly("p", &xla::EXP_POLYNOMIAL, "fma({acc}, r, {c})"));
    let _ = write!(
        s,
        "    let e_r = 1.0 + fma(p, r * r, r);
    let two_n = bitcast<f32>(bitcast<u32>(n + 8388735.0) << 23u);
    let y = e_r * two_n;
    return select(y, 0.0, y < {min_positive});
}}
"
    );
    s
}

fn log_xla(min_positive: &str) -> String {
    let p = xla::LOG_POLYNOMIAL.map(lit);
    format!(
        "fn log_xla(x: f32) -> f32 {{
    let bits = bitcast<u32>(max(x, {min_positive}));
    let m = bitcast<f32>((bits & 0x807fffffu) | 0x3f000000u);
    var e = 1.0 + f32(i32(bits >> 23u) - 127);
    let small = m < {sqrt_half};
    let t = (m - 1.0) + select(0.0, m, small);
    e = e - select(0.0, 1.0, small);
    let t2 = t * t;
    let t3 = t2 * t;
    var y = fma(t, {p0}, {p1});
    var y1 = fma(t, {p3}, {p4});
    var y2 = fma(t, {p6}, {p7});
    y = fma(y, t, {p2});
    y1 = fma(y1, t, {p5});
    y2 = fma(y2, t, {p8});
    y = fma(y, t3, y1);
    y = fma(y, t3, y2);
    y = fma(y, t3, {q1} * e);
    let r = ((t - 0.5 * t2) + y) + {q2} * e;
    if (abs(x) < {min_positive}) {{
        return -{INF};
    }}
    if (x == {INF}) {{
        return x;
    }}
    if (x < 0.0 || is_nan(x)) {{
        return {NAN};
    }}
    return r;
}}
",
        sqrt_half = lit(std::f32::consts::FRAC_1_SQRT_2),
        p0 = p[0],
        p1 = p[1],
        p2 = p[2],
        p3 = p[3],
        p4 = p[4],
        p5 = p[5],
        p6 = p[6],
        p7 = p[7],
        p8 = p[8],
        q1 = lit(xla::LN2_LOW),
        q2 = lit(xla::LN2_HIGH),
    )
}

fn log1p_xla(min_positive: &str) -> String {
    let f32s = |c: &[f64]| c.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    let mut s = "fn log1p_xla(x: f32) -> f32 {\n    let x2 = x * x;\n".to_string();
    // Horner from 0 as the CPU's `horner`: the first step is 0 * x + c0.
    let mut num = vec![0.0];
    num.extend(f32s(&xla::LOG1P_NUMERATOR));
    let mut den = vec![0.0];
    den.extend(f32s(&xla::LOG1P_DENOMINATOR));
    s.push_str(&poly("num", &num, "fma({acc}, x, {c})"));
    s.push_str(&poly("den", &den, "fma({acc}, x, {c})"));
    let _ = write!(
        s,
        "    let ratio = num / den;
    let for_small = x + (-0.5 * x2 + (x * x2) * ratio);
    let for_large = log_xla(x + 1.0);
    if (abs(x) < {min_positive}) {{
        return x * 0.0;
    }}
    if (abs(x) < {split}) {{
        return for_small;
    }}
    return for_large;
}}
",
        split = lit((std::f64::consts::SQRT_2 - 1.0) as f32),
    );
    s
}

fn tanh_xla() -> String {
    let mut s = format!(
        "fn tanh_xla(x: f32) -> f32 {{
    if (is_nan(x)) {{
        return x;
    }}
    let c = clamp(x, {lo}, {hi});
    let x2 = c * c;
",
        lo = lit(-xla::TANH_CLAMP),
        hi = lit(xla::TANH_CLAMP),
    );
    s.push_str(&poly("p", &xla::TANH_NUMERATOR, "fma(x2, {acc}, {c})"));
    s.push_str(&poly("q", &xla::TANH_DENOMINATOR, "fma(x2, {acc}, {c})"));
    let _ = write!(
        s,
        "    if (abs(x) < {tiny}) {{
        return x;
    }}
    if (abs(x) >= {saturated}) {{
        return select(1.0, -1.0, x < 0.0);
    }}
    return c * p / q;
}}
",
        tiny = lit(xla::TANH_TINY),
        saturated = lit(xla::TANH_SATURATED),
    );
    s
}

fn erf_xla() -> String {
    let mut s = "fn erf_xla(x: f32) -> f32 {\n    let x2 = x * x;\n".to_string();
    s.push_str(&poly("p", &xla::ERF_ALPHA, "fma(x2, {acc}, {c})"));
    s.push_str(&poly("q", &xla::ERF_BETA, "fma(x2, {acc}, {c})"));
    let _ = write!(
        s,
        "    if ({clamp} <= abs(x)) {{
        return select(1.0, -1.0, (bitcast<u32>(x) >> 31u) == 1u);
    }}
    return (x * p) / q;
}}
",
        clamp = lit(xla::ERF_CLAMP),
    );
    s
}

fn erf_inv_xla() -> String {
    let mut s = "fn erf_inv_xla(x: f32) -> f32 {
    let w0 = -log1p_xla(x * -x);
    var p: f32;
    if (w0 < 5.0) {
        let w = w0 - 2.5;
"
    .to_string();
    let indent = |t: String| t.lines().map(|l| format!("    {l}\n")).collect::<String>();
    s.push_str(&indent(poly("c", &xla::ERF_INV_CENTRAL, "fma({acc}, w, {c})")));
    s.push_str("        p = c;\n    } else {\n        let w = sqrt(w0) - 3.0;\n");
    s.push_str(&indent(poly("c", &xla::ERF_INV_TAIL, "fma({acc}, w, {c})")));
    let _ = write!(
        s,
        "        p = c;
    }}
    if (abs(x) == 1.0) {{
        return x * {INF};
    }}
    return p * x;
}}
"
    );
    s
}

fn expm1_f32() -> String {
    // Below |x| = 1/2 the Taylor series to x^9 (its next term is under 3e-10 of the value);
    // above, e^x - 1 loses at most a bit or two to the subtraction.
    let mut inverse_factorials: Vec<f32> = Vec::new();
    let mut f = 1.0f64;
    for k in 2..=9 {
        f *= k as f64;
        inverse_factorials.push((1.0 / f) as f32);
    }
    inverse_factorials.reverse();
    let mut s = "fn expm1_f32(x: f32) -> f32 {
    if (is_nan(x)) {
        return x;
    }
    if (abs(x) < 0.5) {
"
    .to_string();
    let body = poly("q", &inverse_factorials, "fma({acc}, x, {c})");
    s.extend(body.lines().map(|l| format!("    {l}\n")));
    s.push_str(
        "        return fma(x * x, q, x);
    }
    return exp_xla(x) - 1.0;
}
",
    );
    s
}

fn pow_f32() -> String {
    // C99's special cases (which the CPU's powf follows), then |x|^y = 2^(y log2 |x|) with
    // |x| = 2^e m, m in [sqrt(1/2), sqrt(2)): y e is summed exactly (the high and the low 12
    // significant bits of y, each times e, are exact products), so the error is that of
    // y log2(m), where |log2 m| <= 1/2, rather than of y log2 |x|. The sign is that of an odd
    // integer power of a negative base.
    format!(
        "fn pow_f32(x: f32, y: f32) -> f32 {{
    if (y == 0.0 || x == 1.0) {{
        return 1.0;
    }}
    if (is_nan(x) || is_nan(y)) {{
        return {NAN};
    }}
    let ax = abs(x);
    let ay = abs(y);
    if (ay == {INF}) {{
        if (ax == 1.0) {{
            return 1.0;
        }}
        return select(0.0, {INF}, (ax > 1.0) == (y > 0.0));
    }}
    let integral = floor(y) == y;
    let odd = integral && ay < 16777216.0 && fract(0.5 * ay) != 0.0;
    let negative = (bitcast<u32>(x) >> 31u) == 1u;
    if (negative && ax != 0.0 && ax != {INF} && !integral) {{
        return {NAN};
    }}
    var m: f32;
    if (ax == 0.0) {{
        m = select(0.0, {INF}, y < 0.0);
    }} else if (ax == {INF}) {{
        m = select(0.0, {INF}, y > 0.0);
    }} else {{
        var a = ax;
        var e = 0.0;
        if (a < {min_positive}) {{
            a = a * 16777216.0;
            e = -24.0;
        }}
        let bits = bitcast<u32>(a);
        var f = bitcast<f32>((bits & 0x007fffffu) | 0x3f800000u);
        e = e + f32(i32(bits >> 23u) - 127);
        if (f > {sqrt2}) {{
            f = 0.5 * f;
            e = e + 1.0;
        }}
        let l = log_xla(f) * {log2e};
        // Beyond |y| = 1e30 every |x| != 1 gives 0 or infinity; clamped, y e cannot
        // overflow.
        let yc = clamp(y, -1.0e30, 1.0e30);
        let y_high = bitcast<f32>(bitcast<u32>(yc) & 0xfffff000u);
        let y_low = yc - y_high;
        let a1 = y_high * e;
        let b1 = y_low * e;
        let n1 = round(a1);
        let n2 = round(b1);
        let t = kept(a1 - n1) + kept(b1 - n2) + yc * l;
        let n3 = round(t);
        m = exp2_parts((n1 + n2) + n3, kept(t - n3));
    }}
    return select(m, -m, negative && odd);
}}
",
        min_positive = lit(f32::MIN_POSITIVE),
        sqrt2 = lit(std::f32::consts::SQRT_2),
        log2e = lit(std::f32::consts::LOG2_E),
    )
}

fn fmod_f32() -> String {
    // musl's fmodf on the bits: exact, as the remainder always is.
    format!(
        "fn fmod_f32(x: f32, y: f32) -> f32 {{
    var uxi = bitcast<u32>(x);
    var uyi = bitcast<u32>(y);
    var ex = i32((uxi >> 23u) & 0xffu);
    var ey = i32((uyi >> 23u) & 0xffu);
    let sx = uxi & 0x80000000u;
    if ((uyi << 1u) == 0u || is_nan(y) || ex == 0xff) {{
        return {NAN};
    }}
    if ((uxi << 1u) <= (uyi << 1u)) {{
        if ((uxi << 1u) == (uyi << 1u)) {{
            return bitcast<f32>(sx);
        }}
        return x;
    }}
    if (ex == 0) {{
        var i = uxi << 9u;
        while ((i >> 31u) == 0u) {{
            ex = ex - 1;
            i = i << 1u;
        }}
        uxi = uxi << u32(-ex + 1);
    }} else {{
        uxi = (uxi & 0x007fffffu) | 0x00800000u;
    }}
    if (ey == 0) {{
        var i = uyi << 9u;
        while ((i >> 31u) == 0u) {{
            ey = ey - 1;
            i = i << 1u;
        }}
        uyi = uyi << u32(-ey + 1);
    }} else {{
        uyi = (uyi & 0x007fffffu) | 0x00800000u;
    }}
    while (ex > ey) {{
        let i = uxi - uyi;
        if ((i >> 31u) == 0u) {{
            if (i == 0u) {{
                return bitcast<f32>(sx);
            }}
            uxi = i;
        }}
        uxi = uxi << 1u;
        ex = ex - 1;
    }}
    let i = uxi - uyi;
    if ((i >> 31u) == 0u) {{
        if (i == 0u) {{
            return bitcast<f32>(sx);
        }}
        uxi = i;
    }}
    while ((uxi >> 23u) == 0u) {{
        uxi = uxi << 1u;
        ex = ex - 1;
    }}
    if (ex > 0) {{
        uxi = (uxi - 0x00800000u) | (u32(ex) << 23u);
    }} else {{
        uxi = uxi >> u32(-ex + 1);
    }}
    return bitcast<f32>(uxi | sx);
}}
"
    )
}
