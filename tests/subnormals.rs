//! XLA's float semantics on CPU: subnormal operands count as zeros and subnormal results flush
//! to zero in every operation, eagerly and under `#[jit]`, on the calling thread and on the
//! rayon threads rjax's kernels use, while Rust code outside rjax keeps IEEE subnormals.
//!
//! Golden values: `tests/data/subnormals.json`, made by `tests/data/gen/subnormals.py` from JAX
//! 0.10.2 under `jax.jit` (op by op JAX agrees on every case but an ulp of one `exp`).

use std::hint::black_box;
use std::sync::OnceLock;

use half::{bf16, f16};
use rjax::exec::cpu::float_mode::{flushes_denormals, FlushDenormals};
use rjax::prelude::*;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/subnormals.json")).unwrap())
}

/// A golden leaf as an array holding exactly its bits (made from Rust values, which keeps
/// subnormals, as NumPy does for JAX's inputs).
fn leaf(v: &Value) -> Array {
    let shape: Vec<usize> =
        v["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = v["data"].as_array().unwrap();
    let bits = || data.iter().map(|b| b.as_u64().unwrap());
    match v["dtype"].as_str().unwrap() {
        "float32" => {
            Array::from_shape_vec(&shape, bits().map(|b| f32::from_bits(b as u32)).collect())
        }
        "float64" => Array::from_shape_vec(&shape, bits().map(f64::from_bits).collect()),
        "float16" => {
            Array::from_shape_vec(&shape, bits().map(|b| f16::from_bits(b as u16)).collect())
        }
        "bfloat16" => {
            Array::from_shape_vec(&shape, bits().map(|b| bf16::from_bits(b as u16)).collect())
        }
        "bool" => {
            Array::from_shape_vec(&shape, data.iter().map(|b| b.as_bool().unwrap()).collect())
        }
        _ => Array::from_shape_vec(&shape, data.iter().map(|b| b.as_i64().unwrap()).collect()),
    }
}

/// Bits of a float array, widened to `u64`, with the number of mantissa bits of its dtype.
fn float_bits(x: &Array) -> Option<(Vec<u64>, u32)> {
    Some(match x.dtype() {
        DType::F32 => (x.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits() as u64).collect(), 23),
        DType::F64 => (x.to_vec::<f64>().unwrap().iter().map(|v| v.to_bits()).collect(), 52),
        DType::F16 => (x.to_vec::<f16>().unwrap().iter().map(|v| v.to_bits() as u64).collect(), 10),
        DType::BF16 => {
            (x.to_vec::<bf16>().unwrap().iter().map(|v| v.to_bits() as u64).collect(), 7)
        }
        _ => return None,
    })
}

/// `got` against JAX's `want`: the same dtype; zeros and subnormals (on either side) bit for
/// bit, sign included; NaN where JAX has NaN; other floats within a few ulps (JAX's and rjax's
/// transcendental functions differ by that much on normal numbers). Integer results compare
/// by value (JAX's x64 mode gives `int64` indices where rjax gives `int32`).
fn mismatch(got: &Array, want: &Array) -> Option<String> {
    if got.shape() != want.shape() {
        return Some(format!("shape {:?}, JAX {:?}", got.shape(), want.shape()));
    }
    let Some((want_bits, mantissa)) = float_bits(want) else {
        if want.dtype() == DType::Bool {
            let (g, w) = (got.to_vec::<bool>().ok()?, want.to_vec::<bool>().unwrap());
            return (g != w).then(|| format!("{g:?}, JAX {w:?}"));
        }
        let g = got.astype(DType::I64).to_vec::<i64>().unwrap();
        let w = want.to_vec::<i64>().unwrap();
        return (g != w).then(|| format!("{g:?}, JAX {w:?}"));
    };
    if got.dtype() != want.dtype() {
        return Some(format!("dtype {}, JAX {}", got.dtype(), want.dtype()));
    }
    let (got_bits, _) = float_bits(got).unwrap();
    let exponent_bits = match mantissa {
        23 => 8,
        52 => 11,
        10 => 5,
        _ => 8,
    };
    let magnitude = |b: u64| b & !(1 << (mantissa + exponent_bits));
    let exponent = |b: u64| magnitude(b) >> mantissa;
    let nan = |b: u64| {
        exponent(b) == (1 << exponent_bits) - 1 && magnitude(b) & ((1 << mantissa) - 1) != 0
    };
    let ulps = if mantissa == 52 { 1 << 12 } else { 8 };
    for (k, (&g, &w)) in got_bits.iter().zip(&want_bits).enumerate() {
        let same = if exponent(g) == 0 || exponent(w) == 0 {
            g == w
        } else if nan(w) || nan(g) {
            nan(w) && nan(g)
        } else {
            (g >> (mantissa + exponent_bits)) == (w >> (mantissa + exponent_bits))
                && magnitude(g).abs_diff(magnitude(w)) <= ulps
        };
        if !same {
            return Some(format!("element {k} of {}: bits {g:#x}, JAX {w:#x}", got_bits.len()));
        }
    }
    None
}

fn unary(name: &str) -> fn(&Array) -> Array {
    match name {
        "negative" => jnp::negative,
        "abs" => jnp::abs,
        "sign" => jnp::sign,
        "square" => jnp::square,
        "exp" => jnp::exp,
        "exp2" => jnp::exp2,
        "log" => jnp::log,
        "log1p" => jnp::log1p,
        "expm1" => jnp::expm1,
        "sqrt" => jnp::sqrt,
        "rsqrt" => jnp::rsqrt,
        "cbrt" => jnp::cbrt,
        "reciprocal" => jnp::reciprocal,
        "sin" => jnp::sin,
        "cos" => jnp::cos,
        "tan" => jnp::tan,
        "asin" => jnp::asin,
        "acos" => jnp::acos,
        "atan" => jnp::atan,
        "sinh" => jnp::sinh,
        "cosh" => jnp::cosh,
        "tanh" => jnp::tanh,
        "asinh" => jnp::asinh,
        "acosh" => jnp::acosh,
        "atanh" => jnp::atanh,
        "sigmoid" => jnp::sigmoid,
        "erf" => jnp::erf,
        "erfinv" => jnp::erfinv,
        "floor" => jnp::floor,
        "ceil" => jnp::ceil,
        "round" => jnp::round,
        "isnan" => jnp::isnan,
        "isfinite" => jnp::isfinite,
        "powi2" => |x| jnp::powi(x, 2),
        "powi3" => |x| jnp::powi(x, 3),
        "times_half" => |x| x * 0.5,
        "plus_weak_tiny" => |x| x + 1e-45,
        "times_weak_tiny" => |x| x * 1e-30,
        other => panic!("no unary op {other}"),
    }
}

fn binary(name: &str) -> fn(&Array, &Array) -> Array {
    match name {
        "add" => |a, b| jnp::add(a, b),
        "subtract" => |a, b| jnp::subtract(a, b),
        "multiply" => |a, b| jnp::multiply(a, b),
        "divide" => |a, b| jnp::divide(a, b),
        "maximum" => |a, b| jnp::maximum(a, b),
        "minimum" => |a, b| jnp::minimum(a, b),
        "atan2" => |a, b| jnp::atan2(a, b),
        "nextafter" => |a, b| jnp::nextafter(a, b),
        "pow" => |a, b| jnp::pow(a, b),
        "equal" => |a, b| jnp::equal(a, b),
        "not_equal" => |a, b| jnp::not_equal(a, b),
        "less" => |a, b| jnp::less(a, b),
        "less_equal" => |a, b| jnp::less_equal(a, b),
        "greater" => |a, b| jnp::greater(a, b),
        "greater_equal" => |a, b| jnp::greater_equal(a, b),
        "remainder" => |a, b| jnp::remainder(a, b),
        "fmod" => |a, b| jnp::fmod(a, b),
        "floor_divide" => |a, b| jnp::floor_divide(a, b),
        "logaddexp" => |a, b| jnp::logaddexp(a, b),
        other => panic!("no binary op {other}"),
    }
}

fn reduction(name: &str) -> fn(&Array) -> Array {
    match name {
        "sum" => jnp::sum,
        "prod" => jnp::prod,
        "max" => jnp::max,
        "min" => jnp::min,
        "mean" => jnp::mean,
        "cumsum" => |x| jnp::cumsum(x, None),
        "cumprod" => |x| jnp::cumprod(x, None),
        "cummax" => |x| jnp::cummax(x, Some(0)),
        "argmax" => jnp::argmax,
        "argmin" => jnp::argmin,
        "dot" => |x| x.dot(x),
        "matmul" => |x| x.reshape([-1, 1]).matmul(&x.reshape([1, -1])),
        "sum_axis0" => |x| jnp::sum_axes(&x.reshape([2, -1]), 0, false),
        "logsumexp" => jnp::logsumexp,
        other => panic!("no reduction {other}"),
    }
}

/// A conversion case: `<from>_to_<dtype>[_narrowing]` or `<from>_times_two`.
fn cast(name: &str) -> Box<dyn Fn(&Array) -> Array> {
    if name.ends_with("_times_two") {
        return Box::new(|x| x * 2.0);
    }
    let to = name.split_once("_to_").unwrap().1.trim_end_matches("_narrowing");
    let dtype = DType::from_name(to).unwrap();
    Box::new(move |x| x.astype(dtype))
}

fn program(name: &str) -> fn(&Array) -> Array {
    let (name, dtype) = name.rsplit_once('_').unwrap();
    let f64 = dtype == "float64";
    match (name, f64) {
        ("square_of_exp", _) => |x| x.exp().square(),
        ("ratio_of_squares", _) => |x| {
            let y = x * x;
            jnp::divide(&y, &y)
        },
        ("normalize", _) => |x| x / (x * x).sum().sqrt(),
        ("where_weak_subnormal", false) => |x| jnp::where_(jnp::greater(x, 0.5), x, 1e-45),
        ("where_weak_subnormal", true) => |x| jnp::where_(jnp::greater(x, 0.5), x, 5e-324),
        ("full_subnormal", false) => {
            |x| jnp::full_dtype(x.shape(), f32::MIN_POSITIVE as f64 / 4.0, DType::F32)
        }
        ("full_subnormal", true) => {
            |x| jnp::full_dtype(x.shape(), f64::MIN_POSITIVE / 4.0, DType::F64)
        }
        _ => panic!("no program {name}"),
    }
}

/// Cases where rjax does not give XLA's answer, each with why.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[(
    "cbrt_float32",
    "XLA's float32 cbrt gives -5.6e-16 for every subnormal operand (its range reduction \
     meets the flushed zero); rjax gives the zero of the operand's sign",
)];

/// Each case of `section` run op by op and under `rjax::jit`, against JAX's jitted result.
/// Returns how many cases ran.
fn check_section(
    section: &str,
    inputs: &[&str],
    f: impl Fn(&str) -> Box<dyn Fn(&[Array]) -> Array>,
) -> usize {
    let cases = data()[section].as_object().unwrap();
    let mut failures = Vec::new();
    for (key, case) in cases {
        if KNOWN_DIFFERENCES.iter().any(|(case, _)| case == key) {
            continue;
        }
        let args: Vec<Array> = inputs.iter().map(|i| leaf(&case[*i])).collect();
        let want = leaf(&case["jit"]);
        let run = f(key);
        let eager = run(&args);
        let jitted = rjax::jit(|args: &Vec<Array>| run(args))(&args);
        for (how, got) in [("eager", &eager), ("jit", &jitted)] {
            if let Some(why) = mismatch(got, &want) {
                failures.push(format!("{key} ({how}): {why}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from JAX:\n{}",
        failures.len(),
        cases.len() * 2,
        failures.join("\n")
    );
    cases.len()
}

/// The name of a case without its dtype suffix (and without the input's name for reductions).
fn op_name(key: &str, parts: usize) -> &str {
    let mut name = key;
    for _ in 0..parts {
        name = name.rsplit_once('_').unwrap().0;
    }
    name
}

#[test]
fn elementwise_unary_ops_flush_subnormals_as_jax_does() {
    let _x64 = rjax::config::x64_scope(true);
    let n = check_section("unary", &["x"], |key| {
        let f = unary(op_name(key, 1));
        Box::new(move |args| f(&args[0]))
    });
    assert_eq!(n, 76);
}

#[test]
fn elementwise_binary_ops_flush_subnormals_as_jax_does() {
    let _x64 = rjax::config::x64_scope(true);
    let n = check_section("binary", &["a", "b"], |key| {
        let f = binary(op_name(key, 1));
        Box::new(move |args| f(&args[0], &args[1]))
    });
    assert_eq!(n, 38);
}

#[test]
fn reductions_and_products_flush_subnormals_as_jax_does() {
    let _x64 = rjax::config::x64_scope(true);
    let n = check_section("reduce", &["x"], |key| {
        let f = reduction(op_name(key, 2));
        Box::new(move |args| f(&args[0]))
    });
    assert_eq!(n, 84);
}

#[test]
fn conversions_flush_as_xla_converts() {
    let _x64 = rjax::config::x64_scope(true);
    let n = check_section("cast", &["x"], |key| {
        let f = cast(key);
        Box::new(move |args| f(&args[0]))
    });
    assert_eq!(n, 13);
}

#[test]
fn programs_at_the_edge_and_arrays_from_rust_scalars_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let n = check_section("program", &["x"], |key| {
        let f = program(key);
        Box::new(move |args| f(&args[0]))
    });
    assert_eq!(n, 10);
}

#[jit]
fn square_of_exp(x: &Array) -> Array {
    x.exp().square()
}

/// The example: `jnp.square(jnp.exp(-51.77))` is 0 in JAX, not `1e-45`.
#[test]
fn the_square_of_a_tiny_exp_is_zero_eagerly_and_under_jit() {
    let x = Array::from(-51.77f32);
    assert_eq!(x.exp().square().item::<f32>().unwrap().to_bits(), 0);
    assert_eq!(square_of_exp(&x).item::<f32>().unwrap().to_bits(), 0);
    // Plain Rust on this thread still has IEEE subnormals.
    assert!(black_box((-51.77f32).exp()).powi(2) > 0.0);
}

#[jit]
fn tiny_step(x: &Array) -> Array {
    (x * 0.5).sum()
}

/// A thread's control register is what it was before rjax ran: without the modes, and with
/// them when the caller had set them itself.
#[test]
fn the_calling_thread_gets_its_float_modes_back() {
    let x = jnp::array([f32::MIN_POSITIVE, 1.0]);
    assert!(!flushes_denormals());
    let eager = (&x * 0.5).to_vec::<f32>().unwrap();
    assert!(!flushes_denormals());
    let jitted = tiny_step(&x).item::<f32>().unwrap();
    assert!(!flushes_denormals());
    assert_eq!((eager[0], jitted), (0.0, 0.5));
    assert_eq!(black_box(f32::MIN_POSITIVE) * 0.5, f32::MIN_POSITIVE / 2.0);
    {
        let _modes = FlushDenormals::new();
        assert!(flushes_denormals());
        let _ = tiny_step(&x);
        let _ = &x * 0.5;
        assert!(flushes_denormals(), "rjax must leave a caller's own modes set");
    }
    assert!(!flushes_denormals());
}

#[jit]
fn scaled_sum(x: &Array) -> Array {
    (x * 3.0).sum()
}

#[jit]
fn plain_sum(x: &Array) -> Array {
    x.sum()
}

/// A large reduction and a large elementwise op split over rayon's threads: each piece flushes
/// (else a thread's share of `n * 1e-40` would be a normal number), and every thread of the
/// pool gets its own modes back.
#[test]
fn rayon_threads_flush_while_they_run_rjax_kernels() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
    let n = 1 << 22;
    let x = Array::from_shape_vec([n], vec![1e-40f32; n]);
    let unflushed: f32 = x.to_vec::<f32>().unwrap().iter().sum();
    assert!(unflushed > 1e-35, "IEEE sum {unflushed}");
    let (sums, doubled, restored) = pool.install(|| {
        let sums = [
            x.sum().item::<f32>().unwrap(),
            plain_sum(&x).item::<f32>().unwrap(),
            scaled_sum(&x).item::<f32>().unwrap(),
            x.reshape([64, -1]).sum_axes(1, false).sum().item::<f32>().unwrap(),
        ];
        let doubled = (&x * 2.0).to_vec::<f32>().unwrap();
        let restored = pool.broadcast(|_| !flushes_denormals());
        (sums, doubled, restored)
    });
    assert_eq!(sums, [0.0; 4]);
    assert!(doubled.iter().all(|v| v.to_bits() == 0));
    assert!(restored.iter().all(|&r| r), "pool threads kept the modes: {restored:?}");
    // Called from outside any pool, the kernels use rayon's global pool. (Its threads are not
    // checked for their modes afterwards: a thread starts with its creator's, and the global
    // pool starts on first use, which may be inside an rjax operation.)
    assert_eq!(x.sum().item::<f32>().unwrap(), 0.0);
}
