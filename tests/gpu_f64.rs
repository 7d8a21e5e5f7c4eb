//! `float64` on the GPU backend (feature `gpu`; adapters with `SHADER_F64`, as lavapipe)
//! against the CPU: every elementwise operation with a float64 kernel, with the tolerance in
//! ulps each is held to; conversions to and from every other kernel dtype; reductions, scans,
//! shape operations, indexing, products and convolutions; and programs under `#[jit]` and
//! `grad`. Operations without a float64 kernel yet fail naming the op, dtype and device.
//!
//! On an adapter without `SHADER_F64` (Apple's GPUs) each test prints why and passes; that
//! case is tested in `gpu_without_f64.rs`.
#![cfg(feature = "gpu")]

use rjax::device::{device_put, Device};
use rjax::prelude::*;
use rjax::primitives::{bind1, BinaryOp, Convert, Primitive, Select, UnaryOp};

mod common;
use common::gpu::{assert_matches_cpu, gpu, panic_of, Rng};

/// `gpu:0` and the test lock when the adapter computes in float64.
fn f64_gpu() -> Option<(Device, std::sync::MutexGuard<'static, ()>)> {
    let (gpu, lock) = gpu()?;
    let x = device_put(&jnp::array([1.0f64]), gpu);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (-&x).to_vec::<f64>())) {
        Ok(_) => Some((gpu, lock)),
        Err(e) => {
            eprintln!("skipped: {}", common::gpu::panic_text(&e));
            None
        }
    }
}

/// Float64 values over `[lo, hi]`, with halves and integers, and special values.
fn floats(rng: &mut Rng, n: usize, (lo, hi): (f64, f64)) -> Vec<f64> {
    const SPECIAL: [f64; 13] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-300,
        -3e-200,
        1.0e300,
        -1.5e300,
    ];
    (0..n)
        .map(|i| match rng.below(10) {
            0 => SPECIAL[i % SPECIAL.len()],
            1 => ((lo + (hi - lo) * rng.unit()) * 2.0).round() / 2.0,
            _ => lo + (hi - lo) * rng.unit(),
        })
        .collect()
}

fn array(rng: &mut Rng, shape: &[usize], range: (f64, f64)) -> Array {
    let n = shape.iter().product();
    Array::from_shape_vec(shape, floats(rng, n, range))
}

/// Distance in units in the last place (`+0` and `-0` 0 apart).
fn ulps(a: f64, b: f64) -> u64 {
    let ordered = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i64::MIN.wrapping_sub(i)
        } else {
            i
        }
    };
    ordered(a).wrapping_sub(ordered(b)).unsigned_abs()
}

/// Runs `prim` on the CPU and on `gpu`; the results have the same dtype, shape and weak
/// type, and floats agree within `tol` ulps (a result below the normal range may be flushed
/// to zero), everything else bit for bit. Returns the largest difference in ulps.
fn compare(prim: &dyn Primitive, args: &[Array], gpu: Device, tol: u64) -> u64 {
    let refs: Vec<&Array> = args.iter().collect();
    let want = bind1(prim, &refs);
    let placed: Vec<Array> = args.iter().map(|a| device_put(a, gpu)).collect();
    let placed_refs: Vec<&Array> = placed.iter().collect();
    let got = bind1(prim, &placed_refs);
    let what =
        format!("{} of {:?}", prim.name(), args.iter().map(|a| a.dtype()).collect::<Vec<_>>());
    assert_eq!(got.device(), gpu, "{what}: the result left the GPU");
    assert_eq!((got.dtype(), got.shape()), (want.dtype(), want.shape()), "{what}");
    assert_eq!(got.is_weak(), want.is_weak(), "{what}");
    let host = |a: &Array| device_put(a, Device::Cpu(0));
    let inputs = |k: usize| -> Vec<String> {
        args.iter()
            .map(|a| {
                let b = jnp::broadcast_to(a, want.shape()).astype(DType::F64);
                format!("{:e}", b.to_vec::<f64>().unwrap()[k])
            })
            .collect()
    };
    if want.dtype() != DType::F64 {
        let (g, w) = (host(&got).astype(DType::F64), want.astype(DType::F64));
        let (g, w) = (g.to_vec::<f64>().unwrap(), w.to_vec::<f64>().unwrap());
        for (k, (g, w)) in g.iter().zip(&w).enumerate() {
            let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
            assert!(same, "{what}: element {k} of {:?}: GPU {g:e}, CPU {w:e}", inputs(k));
        }
        return 0;
    }
    let (g, w) = (got.to_vec::<f64>().unwrap(), want.to_vec::<f64>().unwrap());
    // The CPU reads a subnormal operand as zero (XLA's CPU modes); a Vulkan device need not,
    // so elements computed from one are not compared.
    let operands: Vec<Vec<f64>> = args
        .iter()
        .map(|a| jnp::broadcast_to(a, want.shape()).astype(DType::F64).to_vec::<f64>().unwrap())
        .collect();
    let from_subnormal = |k: usize| operands.iter().any(|o| o[k].is_subnormal());
    let mut worst = 0;
    for (k, (&g, &w)) in g.iter().zip(&w).enumerate() {
        if from_subnormal(k) {
            continue;
        }
        // Below the normal range one side may flush to zero (the CPU does, as XLA's).
        let flushed =
            (w.abs() < f64::MIN_POSITIVE && g == 0.0) || (g.abs() < f64::MIN_POSITIVE && w == 0.0);
        let same = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
        if flushed || same {
            continue;
        }
        let d = if g.is_nan() || w.is_nan() { u64::MAX } else { ulps(g, w) };
        assert!(
            d <= tol,
            "{what}: element {k} of {:?}: GPU {g:e} ({:#x}), CPU {w:e} ({:#x}), {d} ulps",
            inputs(k),
            g.to_bits(),
            w.to_bits()
        );
        worst = worst.max(d);
    }
    worst
}

/// Shapes that broadcast together: equal, with leading axes dropped, with axes of extent
/// 1, 0-d, and empty.
fn shapes(rng: &mut Rng, operands: usize) -> Vec<Vec<usize>> {
    let rank = rng.below(4);
    let mut out: Vec<usize> = (0..rank).map(|_| 1 + rng.below(9)).collect();
    if rank > 0 && rng.below(12) == 0 {
        out[rng.below(rank)] = 0;
    }
    (0..operands)
        .map(|_| {
            let drop = if rng.below(3) == 0 { rng.below(rank + 1) } else { 0 };
            out[drop..].iter().map(|&d| if rng.below(4) == 0 { 1 } else { d }).collect()
        })
        .collect()
}

/// Each unary op with a float64 kernel: where its inputs come from and how many ulps from
/// the CPU's result (Rust's std, the C library's functions) it may be. The ports of musl's
/// functions are within an ulp or two of correctly rounded; the bounds leave some margin.
const UNARY: [(UnaryOp, (f64, f64), u64); 35] = {
    use UnaryOp::*;
    [
        (Neg, (-10.0, 10.0), 0),
        (Abs, (-10.0, 10.0), 0),
        (Sign, (-10.0, 10.0), 0),
        (Square, (-10.0, 10.0), 0),
        (Floor, (-10.0, 10.0), 0),
        (Ceil, (-10.0, 10.0), 0),
        (Round, (-10.0, 10.0), 0),
        (IsNan, (-10.0, 10.0), 0),
        (IsFinite, (-10.0, 10.0), 0),
        (Sqrt, (-1.0, 100.0), 0),
        (Rsqrt, (-1.0, 100.0), 0),
        (Reciprocal, (-1.0, 100.0), 0),
        (IntegerPow(3), (-3.0, 3.0), 0),
        (IntegerPow(-2), (-3.0, 3.0), 0),
        (Exp, (-750.0, 750.0), 2),
        (Exp2, (-1080.0, 1030.0), 2),
        (Log, (-1.0, 1e6), 2),
        (Log1p, (-1.0, 100.0), 2),
        (Expm1, (-40.0, 40.0), 2),
        (Tanh, (-25.0, 25.0), 2),
        (Logistic, (-40.0, 40.0), 2),
        (Sinh, (-720.0, 720.0), 3),
        (Cosh, (-720.0, 720.0), 3),
        (Cbrt, (-1e6, 1e6), 2),
        (Sin, (-1e4, 1e4), 2),
        (Cos, (-1e4, 1e4), 2),
        (Tan, (-1e4, 1e4), 2),
        (Asin, (-1.1, 1.1), 2),
        (Acos, (-1.1, 1.1), 2),
        (Atan, (-1e3, 1e3), 2),
        // Rust's std formulas on both backends, on musl's log1p and log on the GPU and the C
        // library's on the CPU.
        (Asinh, (-1e6, 1e6), 2),
        (Acosh, (0.5, 1e6), 2),
        (Atanh, (-1.1, 1.1), 3),
        (Erf, (-7.0, 7.0), 2),
        (ErfInv, (-1.1, 1.1), 2),
    ]
};

#[test]
fn unary_ops_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0001);
    let mut report = Vec::new();
    for (op, range, tol) in UNARY {
        let mut worst = 0;
        for _ in 0..5 {
            let shape = &shapes(&mut rng, 1)[0];
            worst = worst.max(compare(&op, &[array(&mut rng, shape, range)], gpu, tol));
        }
        // Small arguments, where the functions switch formulas.
        let tiny = array(&mut rng, &[2000], (-1e-3, 1e-3));
        worst = worst.max(compare(&op, &[tiny], gpu, tol));
        worst = worst.max(compare(&op, &[array(&mut rng, &[4099], range)], gpu, tol));
        report.push(format!("{}: {worst}", op.name()));
    }
    eprintln!("float64 unary, worst ulps per op: {}", report.join(", "));
}

#[test]
fn binary_ops_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use BinaryOp::*;
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0002);
    for op in [Add, Sub, Mul, Div, Rem, Max, Min, Eq, Ne, Lt, Le, Gt, Ge] {
        for round in 0..8 {
            let s = if round == 0 { vec![vec![4099]; 2] } else { shapes(&mut rng, 2) };
            let range = if op == Rem && round == 1 { (-1e300, 1e300) } else { (-10.0, 10.0) };
            let a = array(&mut rng, &s[0], range);
            let b = array(&mut rng, &s[1], (-10.0, 10.0));
            compare(&op, &[a, b], gpu, 0);
        }
    }
}

/// `select` of float64 branches, and `convert_element_type` between float64 and every other
/// kernel dtype both ways (NaN, infinities and out-of-range values into integers).
#[test]
fn select_and_convert_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0003);
    for _ in 0..6 {
        let s = shapes(&mut rng, 3);
        let p = Array::from_shape_vec(
            &s[0][..],
            (0..s[0].iter().product()).map(|_| rng.below(2) == 1).collect::<Vec<bool>>(),
        );
        let (t, f) = (array(&mut rng, &s[1], (-9.0, 9.0)), array(&mut rng, &s[2], (-9.0, 9.0)));
        compare(&Select, &[p, t, f], gpu, 0);
    }
    let edges =
        [2147483647.5, 2147483648.0, -2147483648.9, -2147483649.0, 4294967295.9, 4294967296.0];
    for to in [DType::F32, DType::I32, DType::U32, DType::Bool] {
        for range in [(-5e9, 5e9), (-3.0, 3.0), (-1e39, 1e39)] {
            let x = array(&mut rng, &[3001], range);
            compare(&Convert { dtype: to, weak: false }, &[x], gpu, 0);
        }
        compare(&Convert { dtype: to, weak: false }, &[jnp::array(edges)], gpu, 0);
        let back = rng.array(to, &[2000]);
        compare(&Convert { dtype: DType::F64, weak: false }, &[back], gpu, 0);
    }
    // Near the halfway points of float32.
    let halfway: Vec<f64> = (0..2000).map(|i| 1.0 + (i as f64 + 0.5) * 2f64.powi(-23)).collect();
    compare(&Convert { dtype: DType::F32, weak: false }, &[jnp::array(halfway)], gpu, 0);
}

/// The f64 nearest a multiple of pi/2, 6381956970095103 2^797 (its remainder is about 2^-61
/// of pi/2).
const NEAREST_TO_PI_2: f64 = 5.319372648326541e255;

/// Arguments where the reduction modulo pi/2 is hard: huge ones (Payne-Hanek), multiples of
/// pi/2 rounded to f64 and their neighbours on either side of the 2^20 pi/2 switch, and the
/// largest finite value.
fn hard_trig_arguments() -> Vec<f64> {
    let mut xs = vec![1e300, -1e300, 1e22, 1e15, f64::MAX, -f64::MAX];
    for k in [1.0, 2.0, 3.0, 4.0, 5.0, 100.0, 1e5, 1e6, 1e7, 1e10, 1e15, 3e17] {
        let x: f64 = k * std::f64::consts::FRAC_PI_2;
        for d in [-2i64, -1, 0, 1, 2] {
            let y = f64::from_bits((x.to_bits() as i64 + d) as u64);
            xs.extend([y, -y]);
        }
    }
    for e in [20, 21, 30, 60, 100, 200, 500, 900, 1000, 1023] {
        xs.extend([1.2345 * 2f64.powi(e), -0.9876 * 2f64.powi(e)]);
    }
    xs
}

#[test]
fn trigonometry_reduces_huge_arguments_as_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use UnaryOp::*;
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let xs = jnp::array(hard_trig_arguments());
    assert_eq!(NEAREST_TO_PI_2, 6381956970095103.0 * 2f64.powi(797));
    let nearest = jnp::array([NEAREST_TO_PI_2, -NEAREST_TO_PI_2]);
    for op in [Sin, Cos, Tan] {
        let worst = compare(&op, std::slice::from_ref(&xs), gpu, 2);
        // There the GPU's cos and tan are correctly rounded (checked with 2000-bit
        // arithmetic: cos is -0x1.14ae72e6ba22fp-61) and the C library's are 8 and 14 ulps
        // away.
        let hardest = compare(&op, std::slice::from_ref(&nearest), gpu, 16);
        eprintln!("{} of hard arguments: worst {worst} ulps, {hardest} at the hardest", op.name());
    }
}

#[test]
fn pow_atan2_and_nextafter_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use BinaryOp::*;
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0007);
    // pow: fdlibm's against the C library's, both within an ulp of correctly rounded.
    for (op, tol) in [(Pow, 2), (Atan2, 2), (NextAfter, 0)] {
        let mut worst = 0;
        for round in 0..8 {
            let s = if round == 0 { vec![vec![4099]; 2] } else { shapes(&mut rng, 2) };
            let range = if round == 1 { (-1e300, 1e300) } else { (-10.0, 10.0) };
            let a = array(&mut rng, &s[0], range);
            let b = array(&mut rng, &s[1], (-10.0, 10.0));
            worst = worst.max(compare(&op, &[a, b], gpu, tol));
        }
        // Every pairing of the special values, and pow near overflow and underflow.
        let special = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 2.0, -3.0, 1e-310, 1e-300, -3e-200, 1e300]
            .into_iter()
            .chain([-1.5e300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN])
            .collect::<Vec<f64>>();
        let n = special.len();
        let a = Array::from_shape_vec([n, 1], special.clone());
        let b = Array::from_shape_vec([1, n], special);
        worst = worst.max(compare(&op, &[a, b], gpu, tol));
        let a = jnp::array([2.0f64, 2.0, 10.0, 0.5, -2.0, 1.0000001, 0.9999999]);
        let b = jnp::array([1023.9, -1074.5, 308.2, 1074.0, 1023.0, 1e10, -1e10]);
        worst = worst.max(compare(&op, &[a, b], gpu, tol));
        eprintln!("{}: worst {worst} ulps", op.name());
    }
}

#[test]
fn special_functions_without_a_gpu_kernel_say_so() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let x = device_put(&jnp::array([0.5f64, 1.0]), gpu);
    let msg = panic_of(|| bind1(&UnaryOp::Lgamma, &[&x]).to_vec::<f64>());
    assert!(msg.contains("lgamma") && msg.contains("gpu:0"), "{msg}");
}

#[test]
fn reductions_and_scans_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0004);
    let x = rng.array(DType::F64, &[6, 700, 3]);
    assert_matches_cpu("float64 reductions", gpu, &[x], 1e-12, |a| {
        let x = &a[0];
        vec![
            x.sum(),
            jnp::sum_axes(x, [0, 2], false),
            jnp::max_axes(x, [2, 0], false),
            jnp::min(x),
            jnp::prod_axes(&(x / 16.0 + 1.0), 2, false),
            jnp::argmax(x),
            jnp::argmin_axis(x, 1, false),
            jnp::cumsum(x, Some(1)),
            jnp::cummax(x, None),
            x.cumprod(Some(2)),
        ]
    });
    let nans = jnp::array([1.0, f64::NAN, 3.0, -f64::INFINITY]);
    assert_matches_cpu("float64 NaN", gpu, &[nans], 0.0, |a| {
        vec![jnp::max(&a[0]), jnp::min(&a[0]), jnp::argmax(&a[0]), jnp::cummin(&a[0], None)]
    });
}

#[test]
fn shape_ops_indexing_products_and_convolutions_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    use rjax::primitives::{ConvDimensionNumbers, ConvGeneralDilated};
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0005);
    let x = rng.array(DType::F64, &[3, 5, 4]);
    let idx = jnp::array([2, -1, 0, 9]);
    assert_matches_cpu("float64 shape ops", gpu, &[x, idx], 0.0, |a| {
        let x = &a[0];
        vec![
            x.transpose(None),
            x.reshape([5, 12]).flip(0),
            jnp::concatenate(&[x, &x.flip(2)], 1),
            jnp::pad(x, vec![(1, 2), (0, 0), (2, 1)], 0.5),
            x.slice(s![1.., ..;2]),
            jnp::broadcast_to(&x.slice(s![0, 0]), [2, 4]),
            x.take(&a[1], Some(1)),
            x.at(s![.., &a[1]]).add(1.5),
            x.at(s![1]).set(-2.0),
        ]
    });
    let (a, b) = (rng.array(DType::F64, &[70, 33]), rng.array(DType::F64, &[33, 65]));
    assert_matches_cpu("float64 matmul", gpu, &[a, b], 1e-13, |a| vec![jnp::matmul(&a[0], &a[1])]);
    let conv = ConvGeneralDilated {
        window_strides: vec![1, 2],
        padding: vec![(1, 0), (0, 1)],
        lhs_dilation: vec![1, 1],
        rhs_dilation: vec![1, 2],
        dimension_numbers: ConvDimensionNumbers::parse("NCHW", "OIHW", "NCHW").unwrap(),
        feature_group_count: 1,
        batch_group_count: 1,
    };
    let (lhs, rhs) = (rng.array(DType::F64, &[2, 3, 9, 8]), rng.array(DType::F64, &[4, 3, 3, 2]));
    assert_matches_cpu("float64 conv", gpu, &[lhs, rhs], 1e-13, |a| {
        vec![bind1(&conv, &[&a[0], &a[1]])]
    });
}

#[jit]
fn step(w: &Array, x: &Array) -> Array {
    let y = (jnp::matmul(x, w).tanh() * 0.5 + 1.0).log();
    (y.exp() - 1.0).sum()
}

#[grad]
fn loss(w: &Array, x: &Array) -> Array {
    (jnp::matmul(x, w).tanh() * 0.5 + 1.0).log().sum()
}

#[test]
fn jit_grad_and_control_flow_run_in_float64() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let mut rng = Rng(0x64_0006);
    let (w, x) = (rng.array(DType::F64, &[5, 3]), rng.array(DType::F64, &[7, 5]));
    assert_matches_cpu("jit and grad", gpu, &[w, x], 1e-12, |a| {
        let carried =
            lax::while_loop(|c: &Array| c.sum().lt(100.0), |c: Array| c * 2.0 + 1.0, a[0].abs());
        vec![step(&a[0], &a[1]), loss(&a[0], &a[1]), carried]
    });
}

/// Checks the GPU result of a whole program against an independent f64 finite difference:
/// the derivative rules of the float64 kernels hold there too.
#[test]
fn float64_gradients_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let w = device_put(&jnp::array([[0.3f64, -0.2], [0.1, 0.4], [-0.5, 0.25]]), gpu);
    let x = device_put(&jnp::array([[1.0f64, -2.0, 0.5]]), gpu);
    let g = loss(&w, &x).to_vec::<f64>().unwrap();
    let f = |w: &Array| (jnp::matmul(&x, w).tanh() * 0.5 + 1.0).log().sum().item::<f64>().unwrap();
    let base = w.to_vec::<f64>().unwrap();
    let h = 1e-6;
    for k in 0..base.len() {
        let shifted = |d: f64| {
            let mut v = base.clone();
            v[k] += d;
            device_put(&Array::from_shape_vec([3, 2], v), gpu)
        };
        let numeric = (f(&shifted(h)) - f(&shifted(-h))) / (2.0 * h);
        assert!((numeric - g[k]).abs() < 1e-8, "element {k}: grad {}, numeric {numeric}", g[k]);
    }
}

#[grad]
fn trig_loss(x: &Array) -> Array {
    let y = x.sin() * jnp::pow(&(x.abs() + 1.0), &(x.cos() + 2.0));
    (y + jnp::atan2(x, &(x * x + 0.5)).tan()).sum()
}

/// The derivatives of the newly ported functions (sin, cos, pow, atan2, tan) under `grad`
/// on the GPU, against an f64 finite difference computed on the GPU.
#[test]
fn trigonometric_gradients_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = f64_gpu() else { return };
    let base = vec![0.3f64, -1.2, 2.5, 7.0, -0.05];
    let x = device_put(&jnp::array(base.clone()), gpu);
    let g = trig_loss(&x);
    assert_eq!(g.device(), gpu);
    let g = g.to_vec::<f64>().unwrap();
    let f = |x: &Array| {
        let y = x.sin() * jnp::pow(&(x.abs() + 1.0), &(x.cos() + 2.0));
        (y + jnp::atan2(x, &(x * x + 0.5)).tan()).sum().item::<f64>().unwrap()
    };
    let h = 1e-6;
    for k in 0..base.len() {
        let shifted = |d: f64| {
            let mut v = base.clone();
            v[k] += d;
            device_put(&jnp::array(v), gpu)
        };
        let numeric = (f(&shifted(h)) - f(&shifted(-h))) / (2.0 * h);
        let tol = 1e-7 * numeric.abs().max(1.0);
        assert!((numeric - g[k]).abs() < tol, "element {k}: grad {}, numeric {numeric}", g[k]);
    }
}
