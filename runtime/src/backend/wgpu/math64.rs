//! WGSL functions of `float64` values (adapters with `SHADER_F64`), emitted like those of
//! [`super::math`], whose `deps` and `source` hand every name ending in `_f64` to here.
//!
//! Vulkan's extended instructions (GLSL.std.450) take only 16- and 32-bit floats for `exp`,
//! `log`, `sin` and the other transcendental functions, so they are written here in f64
//! arithmetic: musl's (fdlibm's) `exp`, `log`, `expm1` and `tanh`, and XLA's `log1p` as the
//! CPU backend computes it. Exponents are taken apart and put together with `frexp` (whose
//! exponent is an `i64` for an f64: these kernels also need `SHADER_INT64`) and `ldexp`.
//! The results are within a few ulps of the CPU's (see the GPU tests).

// The constants are musl's as published (more digits than an f64 holds), so that they can be
// checked against the source.
#![allow(clippy::excessive_precision)]

use std::fmt::Write as _;

use crate::exec::cpu::xla_math as xla;

/// A WGSL `f64` literal with exactly `x`'s value (Rust's shortest round-trip decimal).
pub(super) fn lit(x: f64) -> String {
    let text = format!("{x:?}lf");
    if x.is_sign_negative() {
        format!("({text})")
    } else {
        text
    }
}

/// `f64` infinity and NaN, converted from `f32` bits (WGSL has no literals for them, and
/// a compiler may fold `inf - inf` to 0).
const INF: &str = "f64(bitcast<f32>(0x7f800000u))";
const NAN: &str = "f64(bitcast<f32>(0x7fc00000u))";
pub(super) const NAN_F64: &str = NAN;

/// `template` with `$NAN`, `$INF` and `$NAME` for each of `constants` replaced by their WGSL
/// literals (longer names first, so that `$T1` does not take the start of `$T12`).
pub(super) fn fill(template: &str, constants: &[(&str, f64)]) -> String {
    let mut sorted = constants.to_vec();
    sorted.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
    let mut s = template.replace("$NAN", NAN).replace("$INF", INF);
    for (name, value) in sorted {
        s = s.replace(&format!("${name}"), &lit(value));
    }
    debug_assert!(!s.contains('$'), "a constant is missing from {s}");
    s
}

/// The functions `name` calls.
pub(super) fn deps(name: &str) -> &'static [&'static str] {
    match name {
        "max_f64" | "min_f64" | "to_i32_f64" | "to_u32_f64" | "fmod_f64" => &["is_nan_f64"],
        "exp_f64" => &["is_nan_f64", "kept_f64", "scale_f64"],
        "log_f64" => &["is_nan_f64", "kept_f64"],
        "is_finite_f64" => &["is_nan_f64"],
        "log1p_f64" => &["log_f64"],
        "expm1_f64" => &["is_nan_f64", "kept_f64", "scale_f64"],
        "tanh_f64" => &["expm1_f64", "is_nan_f64"],
        "logistic_f64" => &["exp_f64"],
        "exp2_f64" => &["exp_f64", "scale_f64", "is_nan_f64"],
        "sinh_f64" | "cosh_f64" => &["expm1_f64", "exp_f64"],
        _ => super::math64_trig::deps(name)
            .or_else(|| super::math64_special::deps(name))
            .unwrap_or(&[]),
    }
}

/// The WGSL source of helper `name` (one ending in `_f64`).
pub(super) fn source(name: &str) -> String {
    let min_positive = lit(f64::MIN_POSITIVE);
    match name {
        // NaN stays NaN in float32, where its bits can be tested: a compiler may take
        // `x == x` to be true.
        "is_nan_f64" => "fn is_nan_f64(x: f64) -> bool {
    return (bitcast<u32>(f32(x)) & 0x7fffffffu) > 0x7f800000u;
}
"
        .into(),
        "is_finite_f64" => format!(
            "fn is_finite_f64(x: f64) -> bool {{\n    return !is_nan_f64(x) && abs(x) <= {};\n}}\n",
            lit(f64::MAX)
        ),
        "kept_f64" => "fn kept_f64(x: f64) -> f64 {
    return x * select(1.0lf, 0.5lf, params[0] == 0u);
}
"
        .into(),
        // x 2^k for any k a result can need, in two exact steps and one rounding.
        "scale_f64" => "fn scale_f64(x: f64, k: i32) -> f64 {
    let half = k / 2;
    return ldexp(ldexp(x, half), k - half);
}
"
        .into(),
        "sign_f64" => "fn sign_f64(x: f64) -> f64 {
    return select(select(x, -1.0lf, x < 0.0lf), 1.0lf, x > 0.0lf);
}
"
        .into(),
        "max_f64" => "fn max_f64(a: f64, b: f64) -> f64 {
    return select(a, b, !is_nan_f64(a) & (is_nan_f64(b) | (b > a)));
}
"
        .into(),
        "min_f64" => "fn min_f64(a: f64, b: f64) -> f64 {
    return select(a, b, !is_nan_f64(a) & (is_nan_f64(b) | (b < a)));
}
"
        .into(),
        "to_i32_f64" => "fn to_i32_f64(x: f64) -> i32 {
    if (is_nan_f64(x)) {
        return 0;
    }
    if (x >= 2147483648.0lf) {
        return 2147483647;
    }
    if (x <= -2147483649.0lf) {
        return -2147483647 - 1;
    }
    return i32(x);
}
"
        .into(),
        "to_u32_f64" => "fn to_u32_f64(x: f64) -> u32 {
    if (is_nan_f64(x) || x < 1.0lf) {
        return 0u;
    }
    if (x >= 4294967296.0lf) {
        return 0xffffffffu;
    }
    return u32(x);
}
"
        .into(),
        "exp_f64" => exp(),
        "log_f64" => log(),
        "log1p_f64" => log1p(),
        "expm1_f64" => expm1(),
        "tanh_f64" => tanh(),
        "logistic_f64" => format!(
            "fn logistic_f64(x: f64) -> f64 {{
    let y = 1.0lf / (1.0lf + exp_f64(-x));
    return select(y, 0.0lf, y < {min_positive});
}}
"
        ),
        // 2^n e^(r ln 2) with n = round(x): the fraction r is exact, so the error is exp's
        // and the rounding of r ln 2.
        "exp2_f64" => format!(
            "fn exp2_f64(x: f64) -> f64 {{
    if (is_nan_f64(x)) {{
        return x;
    }}
    let c = clamp(x, -1100.0lf, 1100.0lf);
    let n = round(c);
    return scale_f64(exp_f64((c - n) * {ln2}), i32(n));
}}
",
            ln2 = lit(std::f64::consts::LN_2)
        ),
        // musl's sinh and cosh; beyond ln(DBL_MAX) e^|x| overflows before they do, so they
        // are squared from e^(|x|/2).
        "sinh_f64" => format!(
            "fn sinh_f64(x: f64) -> f64 {{
    let a = abs(x);
    var r: f64;
    if (a < 709.0lf) {{
        let t = expm1_f64(a);
        if (a < 1.0lf) {{
            if (a < {tiny}) {{
                return x;
            }}
            r = 0.5lf * (2.0lf * t - t * t / (t + 1.0lf));
        }} else {{
            r = 0.5lf * (t + t / (t + 1.0lf));
        }}
    }} else {{
        let h = exp_f64(0.5lf * a);
        r = (0.5lf * h) * h;
    }}
    return select(r, -r, x < 0.0lf);
}}
",
            tiny = lit(2f64.powi(-26))
        ),
        "cosh_f64" => format!(
            "fn cosh_f64(x: f64) -> f64 {{
    let a = abs(x);
    if (a < {ln2}) {{
        if (a < {tiny}) {{
            return 1.0lf;
        }}
        let t = expm1_f64(a);
        return 1.0lf + t * t / (2.0lf * (1.0lf + t));
    }}
    if (a < 709.0lf) {{
        let t = exp_f64(a);
        return 0.5lf * (t + 1.0lf / t);
    }}
    let h = exp_f64(0.5lf * a);
    return (0.5lf * h) * h;
}}
",
            ln2 = lit(std::f64::consts::LN_2),
            tiny = lit(2f64.powi(-26))
        ),
        "fmod_f64" => fmod(),
        other => super::math64_trig::source(other)
            .or_else(|| super::math64_special::source(other))
            .unwrap_or_else(|| unreachable!("no WGSL helper {other}")),
    }
}

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const INV_LN2: f64 = std::f64::consts::LOG2_E;

/// musl's `exp`: `x = k ln2 + r` with `|r| <= ln2 / 2` (the product `k ln2_hi` is exact),
/// then a rational approximation of `e^r` and a scaling by `2^k`.
fn exp() -> String {
    let p = [
        1.66666666666666019037e-01,
        -2.77777777770155933842e-03,
        6.61375632143793436117e-05,
        -1.65339022054652515390e-06,
        4.13813679705723846039e-08,
    ]
    .map(lit);
    format!(
        "fn exp_f64(x: f64) -> f64 {{
    if (is_nan_f64(x)) {{
        return x;
    }}
    if (x > 709.782712893383973096lf) {{
        return {INF};
    }}
    if (x < -745.13321910194110842lf) {{
        return 0.0lf;
    }}
    let k = round(x * {inv_ln2});
    let hi = kept_f64(x - k * {ln2_hi});
    let lo = k * {ln2_lo};
    let r = kept_f64(hi - lo);
    let t = r * r;
    let c = r - t * ({p0} + t * ({p1} + t * ({p2} + t * ({p3} + t * {p4}))));
    let y = 1.0lf - ((lo - (r * c) / (2.0lf - c)) - hi);
    return scale_f64(y, i32(k));
}}
",
        inv_ln2 = lit(INV_LN2),
        ln2_hi = lit(LN2_HI),
        ln2_lo = lit(LN2_LO),
        p0 = p[0],
        p1 = p[1],
        p2 = p[2],
        p3 = p[3],
        p4 = p[4],
    )
}

/// musl's `log`: `x = 2^k (1 + f)` with `1 + f` in `[sqrt(2)/2, sqrt(2))`, then
/// `log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2))` with `s = f / (2 + f)`.
fn log() -> String {
    let lg = [
        6.666666666666735130e-01,
        3.999999999940941908e-01,
        2.857142874366239149e-01,
        2.222219843214978396e-01,
        1.818357216161805012e-01,
        1.531383769920937332e-01,
        1.479819860511658591e-01,
    ]
    .map(lit);
    format!(
        "fn log_f64(x: f64) -> f64 {{
    if (is_nan_f64(x) || x < 0.0lf) {{
        return {NAN};
    }}
    if (x == 0.0lf) {{
        return -{INF};
    }}
    if (x == {INF}) {{
        return x;
    }}
    let parts = frexp(x);
    var m = parts.fract;
    var k = f64(i32(parts.exp));
    if (m < {sqrt_half}) {{
        m = 2.0lf * m;
        k = k - 1.0lf;
    }}
    let f = m - 1.0lf;
    let hfsq = 0.5lf * f * f;
    let s = f / (2.0lf + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * ({lg2} + w * ({lg4} + w * {lg6}));
    let t2 = z * ({lg1} + w * ({lg3} + w * ({lg5} + w * {lg7})));
    let r = t2 + t1;
    return kept_f64(s * (hfsq + r) + k * {ln2_lo} - hfsq + f) + k * {ln2_hi};
}}
",
        sqrt_half = lit(std::f64::consts::FRAC_1_SQRT_2),
        lg1 = lg[0],
        lg2 = lg[1],
        lg3 = lg[2],
        lg4 = lg[3],
        lg5 = lg[4],
        lg6 = lg[5],
        lg7 = lg[6],
        ln2_hi = lit(LN2_HI),
        ln2_lo = lit(LN2_LO),
    )
}

/// XLA's f64 `log1p`, as the CPU backend computes it (`exec/cpu/xla_math.rs`): a rational
/// approximation below `sqrt(2) - 1`, `log(1 + x)` above.
fn log1p() -> String {
    let horner = |acc: &str, c: &[f64]| {
        let mut s = format!("    var {acc} = 0.0lf;\n");
        for &k in c {
            let _ = writeln!(s, "    {acc} = fma({acc}, x, {});", lit(k));
        }
        s
    };
    let mut s = "fn log1p_f64(x: f64) -> f64 {\n    let x2 = x * x;\n".to_string();
    s.push_str(&horner("num", &xla::LOG1P_NUMERATOR));
    s.push_str(&horner("den", &xla::LOG1P_DENOMINATOR));
    let _ = write!(
        s,
        "    if (abs(x) < {split}) {{
        return x + (-0.5lf * x2 + (x * x2) * (num / den));
    }}
    return log_f64(x + 1.0lf);
}}
",
        split = lit(0.41421356237309504880)
    );
    s
}

/// musl's `expm1`: `x = k ln2 + r` (with the rounding error `c` of `r` kept), a rational
/// approximation of `e^r - 1`, and `2^k (e^r - 1) + 2^k - 1` assembled so as not to cancel.
fn expm1() -> String {
    let q = [
        -3.33333333333331316428e-02,
        1.58730158725481460165e-03,
        -7.93650757867487942473e-05,
        4.00821782732936239552e-06,
        -2.01099218183624371326e-07,
    ]
    .map(lit);
    format!(
        "fn expm1_f64(x0: f64) -> f64 {{
    if (is_nan_f64(x0)) {{
        return x0;
    }}
    if (x0 > 709.782712893383973096lf) {{
        return {INF};
    }}
    if (x0 < -38.816242111356935lf) {{
        return -1.0lf;
    }}
    let ax = abs(x0);
    var x = x0;
    var k = 0;
    var c = 0.0lf;
    if (ax > 0.5lf * {ln2}) {{
        var hi: f64;
        var lo: f64;
        if (ax < 1.5lf * {ln2}) {{
            k = select(-1, 1, x0 > 0.0lf);
            hi = kept_f64(x0 - f64(k) * {ln2_hi});
            lo = f64(k) * {ln2_lo};
        }} else {{
            let t = trunc({inv_ln2} * x0 + select(0.5lf, -0.5lf, x0 < 0.0lf));
            k = i32(t);
            hi = kept_f64(x0 - t * {ln2_hi});
            lo = t * {ln2_lo};
        }}
        x = kept_f64(hi - lo);
        c = kept_f64(hi - x) - lo;
    }} else if (ax < {tiny}) {{
        return x0;
    }}
    let hfx = 0.5lf * x;
    let hxs = x * hfx;
    let r1 = 1.0lf + hxs * ({q1} + hxs * ({q2} + hxs * ({q3} + hxs * ({q4} + hxs * {q5}))));
    let t = 3.0lf - r1 * hfx;
    var e = hxs * ((r1 - t) / (6.0lf - x * t));
    if (k == 0) {{
        return x - (x * e - hxs);
    }}
    e = x * (e - c) - c;
    e = e - hxs;
    if (k == -1) {{
        return 0.5lf * (x - e) - 0.5lf;
    }}
    if (k == 1) {{
        if (x < -0.25lf) {{
            return -2.0lf * (e - (x + 0.5lf));
        }}
        return 1.0lf + 2.0lf * (x - e);
    }}
    if (k < 0 || k > 56) {{
        let y = x - e + 1.0lf;
        return scale_f64(y, k) - 1.0lf;
    }}
    let inv = ldexp(1.0lf, -k);
    if (k < 20) {{
        return ldexp(x - e + (1.0lf - inv), k);
    }}
    return ldexp(x - (e + inv) + 1.0lf, k);
}}
",
        ln2 = lit(std::f64::consts::LN_2),
        ln2_hi = lit(LN2_HI),
        ln2_lo = lit(LN2_LO),
        inv_ln2 = lit(INV_LN2),
        tiny = lit(2f64.powi(-54)),
        q1 = q[0],
        q2 = q[1],
        q3 = q[2],
        q4 = q[3],
        q5 = q[4],
    )
}

/// musl's `tanh`, on `expm1`. Its thresholds compare the high word of `|x|`: `w > W` is
/// `|x|` at least the double whose high word is `W + 1`.
fn tanh() -> String {
    let above = |w: u64| lit(f64::from_bits((w + 1) << 32));
    format!(
        "fn tanh_f64(x: f64) -> f64 {{
    let a = abs(x);
    var t: f64;
    if (is_nan_f64(x)) {{
        return x;
    }}
    if (a >= {log3_half}) {{
        if (a >= {twenty}) {{
            t = 1.0lf;
        }} else {{
            let e = expm1_f64(2.0lf * a);
            t = 1.0lf - 2.0lf / (e + 2.0lf);
        }}
    }} else if (a >= {log53_half}) {{
        let e = expm1_f64(2.0lf * a);
        t = e / (e + 2.0lf);
    }} else if (a >= {min_positive}) {{
        let e = expm1_f64(-2.0lf * a);
        t = -e / (e + 2.0lf);
    }} else {{
        t = a;
    }}
    return select(t, -t, x < 0.0lf);
}}
",
        log3_half = above(0x3fe193ea),
        twenty = above(0x40340000),
        log53_half = above(0x3fd058ae),
        min_positive = lit(f64::MIN_POSITIVE),
    )
}

/// The exact remainder `x - trunc(x / y) y`: `|y|` scaled by the largest power of two that
/// fits is taken away from `|x|` until less than `|y|` is left; each subtraction is exact,
/// since what is taken is at least half of what is left.
fn fmod() -> String {
    format!(
        "fn fmod_f64(x: f64, y: f64) -> f64 {{
    let ax = abs(x);
    let ay = abs(y);
    if (is_nan_f64(x) || is_nan_f64(y) || ay == 0.0lf || ax == {INF}) {{
        return {NAN};
    }}
    if (ax < ay) {{
        return x;
    }}
    var r = ax;
    let ey = i32(frexp(ay).exp);
    while (r >= ay) {{
        var t = ldexp(ay, i32(frexp(r).exp) - ey);
        if (t > r) {{
            t = 0.5lf * t;
        }}
        r = r - t;
    }}
    return select(r, -r, x < 0.0lf);
}}
"
    )
}
