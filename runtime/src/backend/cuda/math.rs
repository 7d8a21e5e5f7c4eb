//! CUDA C device functions the elementwise kernels call, each emitted only into the kernels
//! that use it (after the functions it calls).
//!
//! The `*_xla` ones are the CPU backend's functions (`exec/cpu/xla_math.rs`, which are XLA's)
//! step for step, with their constants read from there and their fused multiply-adds written
//! as `fma`: kernels are compiled with `--fmad=false`, so no other multiply and add fuse and
//! the two backends run the same operations in the same order. Functions the CPU takes from
//! the C library (`sin`, `pow`, f64 `exp`, ...) are CUDA's own, which its programming guide
//! bounds at a few ulps.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::exec::cpu::xla_math as xla;

/// A CUDA `float` literal with exactly `x`'s value: the shortest decimal that round-trips an
/// f64 (which every f32 is), which the compiler rounds to `x` itself.
pub(super) fn lit(x: f32) -> String {
    let text = format!("{:?}", x as f64);
    let text = if text.contains(['.', 'e']) { text } else { format!("{text}.0") };
    if x.is_sign_negative() {
        format!("(-{}f)", text.trim_start_matches('-'))
    } else {
        format!("{text}f")
    }
}

/// A CUDA `double` literal with exactly `x`'s value.
fn lit64(x: f64) -> String {
    let text = format!("{x:?}");
    if x.is_sign_negative() {
        format!("({text})")
    } else {
        text
    }
}

/// `{acc} = c[0];` then `{acc} = fma({acc} or x, ...)` per further coefficient: Horner's rule
/// with the operand order of the CPU's `mul_add` fold, given as `step` over `{acc}` and `{c}`.
fn horner(acc: &str, coefficients: &[String], step: &str) -> String {
    let mut s = format!("    {acc} = {};\n", coefficients[0]);
    for c in &coefficients[1..] {
        let _ = writeln!(s, "    {acc} = {};", step.replace("{acc}", acc).replace("{c}", c));
    }
    s
}

fn lits(c: &[f32]) -> Vec<String> {
    c.iter().map(|&x| lit(x)).collect()
}

fn lits64(c: &[f64]) -> Vec<String> {
    c.iter().map(|&x| lit64(x)).collect()
}

/// The functions `name` calls.
fn deps(name: &str) -> &'static [&'static str] {
    match name {
        "log1p_xla" => &["log_xla"],
        "erf_inv_xla" => &["log1p_xla"],
        "logistic_xla" => &["exp_xla"],
        "erf_inv_f64" => &["log1p_f64"],
        _ => &[],
    }
}

/// `names` and everything they call, each after the functions it calls.
pub(super) fn closure(names: &BTreeSet<&'static str>) -> Vec<&'static str> {
    crate::backend::in_call_order(names, deps)
}

/// The definition of the device function `name`.
pub(super) fn source(name: &str) -> String {
    let head = |ret: &str, args: &str| format!("static __device__ {ret} {name}({args}) {{\n");
    let body = match name {
        // NumPy's sign: 0 stays (signed) 0, NaN stays NaN.
        "sign_f32" | "sign_f64" => {
            let t = if name == "sign_f32" { "float" } else { "double" };
            format!(
                "{}    return x > 0 ? ({t})1 : (x < 0 ? ({t})-1 : x);\n",
                head(t, &format!("{t} x"))
            )
        }
        // NaN propagates; between equal operands (+0 and -0 too) the first is kept.
        "max_f32" | "max_f64" | "min_f32" | "min_f64" => {
            let t = if name.ends_with("f32") { "float" } else { "double" };
            let cmp = if name.starts_with("max") { ">" } else { "<" };
            format!(
                "{}    return (!isnan(a) & (isnan(b) | (b {cmp} a))) ? b : a;\n",
                head(t, &format!("{t} a, {t} b"))
            )
        }
        "exp_xla" => exp_xla(),
        "log_xla" => log_xla(),
        "log1p_xla" => log1p_xla(),
        "tanh_xla" => tanh_xla(),
        "erf_xla" => erf_xla(),
        "erf_inv_xla" => erf_inv_xla(),
        "logistic_xla" => format!(
            "{}    float y = 1.0f / (1.0f + exp_xla(-x));\n    return y < {} ? 0.0f : y;\n",
            head("float", "float x"),
            lit(f32::MIN_POSITIVE)
        ),
        "logistic_f64" => format!(
            "{}    double y = 1.0 / (1.0 + exp(-x));\n    return y < {} ? 0.0 : y;\n",
            head("double", "double x"),
            lit64(f64::MIN_POSITIVE)
        ),
        "log1p_f64" => log1p_f64(),
        "erf_inv_f64" => erf_inv_f64(),
        ipow if ipow.starts_with("ipow_") => integer_power(&ipow["ipow_".len()..]),
        other => unreachable!("no CUDA device function {other}"),
    };
    format!("{body}}}\n")
}

/// `ipow_{t}(x, y)`, `x ** y` for integers of C type `t`, as the CPU computes it: by squaring
/// in wrapping (unsigned) arithmetic; a negative power is 0 but for bases 1 and -1.
fn integer_power(t: &str) -> String {
    let u = if t.ends_with("64") { "u64" } else { "u32" };
    let mut s = format!("static __device__ {t} ipow_{t}({t} x, {t} y) {{\n");
    if t.starts_with('i') {
        s.push_str("    if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);\n");
    }
    let _ = writeln!(s, "    {u} acc = 1;\n    {u} b = ({u})x;\n    {u} e = ({u})y;");
    s.push_str("    while (e > 0) {\n        if (e & 1) acc = acc * b;\n        b = b * b;\n        e >>= 1;\n    }\n");
    let _ = writeln!(s, "    return ({t})acc;");
    s
}

/// Clamps `x` into `[lo, hi]` as Rust's `clamp` does: a NaN stays NaN (CUDA's `fminf` and
/// `fmaxf` would drop it).
fn clamp(x: &str, lo: &str, hi: &str) -> String {
    format!("({x} < {lo} ? {lo} : ({x} > {hi} ? {hi} : {x}))")
}

fn exp_xla() -> String {
    let mut s = "static __device__ float exp_xla(float x) {\n".to_string();
    let (lo, hi) = (lit(xla::EXP_LOWEST), lit(xla::EXP_HIGHEST));
    let _ = writeln!(s, "    x = {};", clamp("x", &lo, &hi));
    let n = format!("floorf(fmaf(x, {}, 0.5f))", lit(std::f32::consts::LOG2_E));
    let _ = writeln!(s, "    float n = {n};");
    let _ = writeln!(s, "    n = {};", clamp("n", "(-127.0f)", "127.0f"));
    let _ = writeln!(s, "    float r = fmaf({}, n, x);", lit(-xla::LN2_HIGH));
    let _ = writeln!(s, "    r = fmaf({}, n, r);", lit(-xla::LN2_LOW));
    s.push_str("    float p;\n");
    s.push_str(&horner("p", &lits(&xla::EXP_POLYNOMIAL), "fmaf({acc}, r, {c})"));
    s.push_str("    float e_r = 1.0f + fmaf(p, r * r, r);\n");
    // 2^n from the biased exponent in the low mantissa bits of n + 127 + 2^23.
    s.push_str("    float two_to_n = __uint_as_float(__float_as_uint(n + 8388735.0f) << 23);\n");
    s.push_str("    float y = e_r * two_to_n;\n");
    let _ = writeln!(s, "    return y < {} ? 0.0f : y;", lit(f32::MIN_POSITIVE));
    s
}

fn log_xla() -> String {
    let p = lits(&xla::LOG_POLYNOMIAL);
    let min = lit(f32::MIN_POSITIVE);
    let mut s = "static __device__ float log_xla(float x) {\n".to_string();
    let _ = writeln!(s, "    unsigned int bits = __float_as_uint(fmaxf(x, {min}));");
    s.push_str("    float m = __uint_as_float((bits & ~0x7F800000u) | 0x3F000000u);\n");
    s.push_str("    float e = 1.0f + (float)((int)(bits >> 23) - 0x7F);\n");
    let _ = writeln!(s, "    bool small = m < {};", lit(std::f32::consts::FRAC_1_SQRT_2));
    s.push_str("    float t = (m - 1.0f) + (small ? m : 0.0f);\n");
    s.push_str("    e -= small ? 1.0f : 0.0f;\n");
    s.push_str("    float t2 = t * t;\n    float t3 = t2 * t;\n");
    let _ = writeln!(s, "    float y = fmaf(t, {}, {});", p[0], p[1]);
    let _ = writeln!(s, "    float y1 = fmaf(t, {}, {});", p[3], p[4]);
    let _ = writeln!(s, "    float y2 = fmaf(t, {}, {});", p[6], p[7]);
    let _ = writeln!(s, "    y = fmaf(y, t, {});", p[2]);
    let _ = writeln!(s, "    y1 = fmaf(y1, t, {});", p[5]);
    let _ = writeln!(s, "    y2 = fmaf(y2, t, {});", p[8]);
    s.push_str("    y = fmaf(y, t3, y1);\n    y = fmaf(y, t3, y2);\n");
    let _ = writeln!(s, "    y = fmaf(y, t3, {} * e);", lit(xla::LN2_LOW));
    let _ = writeln!(s, "    float r = ((t - 0.5f * t2) + y) + {} * e;", lit(xla::LN2_HIGH));
    // Subnormal inputs count as zero, as under XLA's denormals-are-zero mode.
    let _ = writeln!(s, "    if (fabsf(x) < {min}) return __int_as_float(0xff800000);");
    s.push_str("    if (x == __int_as_float(0x7f800000)) return x;\n");
    s.push_str("    if (x < 0.0f || isnan(x)) return __int_as_float(0x7fc00000);\n");
    s.push_str("    return r;\n");
    s
}

// The threshold is written as the CPU writes it (an f32 literal of more digits than it keeps).
#[allow(clippy::excessive_precision)]
fn log1p_xla() -> String {
    let num: Vec<String> = xla::LOG1P_NUMERATOR.iter().map(|&c| lit(c as f32)).collect();
    let den: Vec<String> = xla::LOG1P_DENOMINATOR.iter().map(|&c| lit(c as f32)).collect();
    let mut s = "static __device__ float log1p_xla(float x) {\n".to_string();
    s.push_str("    float x2 = x * x;\n    float p = 0.0f;\n    float q = 0.0f;\n");
    for c in &num {
        let _ = writeln!(s, "    p = fmaf(p, x, {c});");
    }
    for c in &den {
        let _ = writeln!(s, "    q = fmaf(q, x, {c});");
    }
    s.push_str("    float ratio = p / q;\n");
    s.push_str("    float for_small = x + (-0.5f * x2 + (x * x2) * ratio);\n");
    let _ = writeln!(s, "    if (fabsf(x) < {}) return x * 0.0f;", lit(f32::MIN_POSITIVE));
    let _ = writeln!(
        s,
        "    if (fabsf(x) < {}) return for_small;",
        lit(0.414_213_562_373_095_048_80_f32)
    );
    s.push_str("    return log_xla(x + 1.0f);\n");
    s
}

fn tanh_xla() -> String {
    let clamp_at = lit(xla::TANH_CLAMP);
    let mut s = "static __device__ float tanh_xla(float x) {\n".to_string();
    let _ = writeln!(s, "    float clamped = {};", clamp("x", &lit(-xla::TANH_CLAMP), &clamp_at));
    s.push_str("    float x2 = clamped * clamped;\n    float p;\n    float q;\n");
    s.push_str(&horner("p", &lits(&xla::TANH_NUMERATOR), "fmaf(x2, {acc}, {c})"));
    s.push_str(&horner("q", &lits(&xla::TANH_DENOMINATOR), "fmaf(x2, {acc}, {c})"));
    let _ = writeln!(s, "    if (fabsf(x) < {}) return x;", lit(xla::TANH_TINY));
    let _ =
        writeln!(s, "    if (fabsf(x) >= {}) return copysignf(1.0f, x);", lit(xla::TANH_SATURATED));
    s.push_str("    return clamped * p / q;\n");
    s
}

fn erf_xla() -> String {
    let mut s = "static __device__ float erf_xla(float x) {\n".to_string();
    s.push_str("    float x2 = x * x;\n    float p;\n    float q;\n");
    s.push_str(&horner("p", &lits(&xla::ERF_ALPHA), "fmaf(x2, {acc}, {c})"));
    s.push_str("    p = x * p;\n");
    s.push_str(&horner("q", &lits(&xla::ERF_BETA), "fmaf(x2, {acc}, {c})"));
    let _ = writeln!(s, "    if ({} <= fabsf(x)) return copysignf(1.0f, x);", lit(xla::ERF_CLAMP));
    s.push_str("    return p / q;\n");
    s
}

fn erf_inv_xla() -> String {
    let mut s = "static __device__ float erf_inv_xla(float x) {\n".to_string();
    s.push_str("    float w = -log1p_xla(x * -x);\n    float p;\n");
    s.push_str("    if (w < 5.0f) {\n        w = w - 2.5f;\n");
    s.push_str(&horner("p", &lits(&xla::ERF_INV_CENTRAL), "fmaf({acc}, w, {c})"));
    s.push_str("    } else {\n        w = sqrtf(w) - 3.0f;\n");
    s.push_str(&horner("p", &lits(&xla::ERF_INV_TAIL), "fmaf({acc}, w, {c})"));
    s.push_str("    }\n");
    s.push_str("    if (fabsf(x) == 1.0f) return x * __int_as_float(0x7f800000);\n");
    s.push_str("    return p * x;\n");
    s
}

fn log1p_f64() -> String {
    let mut s = "static __device__ double log1p_f64(double x) {\n".to_string();
    s.push_str("    double x2 = x * x;\n    double p = 0.0;\n    double q = 0.0;\n");
    for c in lits64(&xla::LOG1P_NUMERATOR) {
        let _ = writeln!(s, "    p = fma(p, x, {c});");
    }
    for c in lits64(&xla::LOG1P_DENOMINATOR) {
        let _ = writeln!(s, "    q = fma(q, x, {c});");
    }
    s.push_str("    double ratio = p / q;\n");
    s.push_str(
        "    if (fabs(x) < 0.41421356237309504880) return x + (-0.5 * x2 + (x * x2) * ratio);\n",
    );
    s.push_str("    return log(x + 1.0);\n");
    s
}

fn erf_inv_f64() -> String {
    let mut s = "static __device__ double erf_inv_f64(double x) {\n".to_string();
    s.push_str("    double w = -log1p_f64(x * -x);\n    double p;\n    double z;\n");
    let pieces = [
        ("w < 6.25", "w - 3.125", &xla::ERF_INV_F64_CENTRAL[..]),
        ("w < 16.0", "sqrt(w) - 3.25", &xla::ERF_INV_F64_MIDDLE[..]),
        ("true", "sqrt(w) - 5.0", &xla::ERF_INV_F64_TAIL[..]),
    ];
    for (k, (condition, z, c)) in pieces.iter().enumerate() {
        let keyword = if k == 0 { "if" } else { "} else if" };
        let _ = writeln!(s, "    {keyword} ({condition}) {{\n        z = {z};");
        s.push_str(&horner("p", &lits64(c), "fma({acc}, z, {c})"));
    }
    s.push_str("    }\n");
    s.push_str("    if (fabs(x) == 1.0) return x * __longlong_as_double(0x7ff0000000000000LL);\n");
    s.push_str("    return p * x;\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_exact_and_typed() {
        assert_eq!(lit(1.0), "1.0f");
        assert_eq!(lit(-0.5), "(-0.5f)");
        assert_eq!(lit(f32::MIN_POSITIVE), "1.1754943508222875e-38f");
        assert_eq!(lit64(-2.0), "(-2.0)");
    }

    #[test]
    fn helpers_follow_the_functions_they_call() {
        let order = closure(&BTreeSet::from(["erf_inv_xla"]));
        assert_eq!(order, ["log_xla", "log1p_xla", "erf_inv_xla"]);
    }
}
