//! The GPU backend (feature `gpu`) against the CPU one: every elementwise operation it runs,
//! for every dtype it runs it in, on random shapes with broadcasting; placement and its
//! errors; windows over arrays larger than one binding; buffer reuse; one generated shader.
//!
//! Without a GPU adapter (no Vulkan driver: install `mesa-vulkan-drivers libvulkan1` for
//! lavapipe) each test prints why and passes, unless `RJAX_REQUIRE_GPU=1`, where it fails.
#![cfg(feature = "gpu")]

use std::panic::{catch_unwind, AssertUnwindSafe};

use rjax::backend::ElementwiseOp;
use rjax::device::{self, device_put, Device};
use rjax::primitives::{bind1, BinaryOp, Convert, Primitive, Select, UnaryOp};
use rjax::{jnp, Array, DType};

mod common;
use common::gpu::{gpu, panic_text, Rng};

/// Float values over `[lo, hi]`, with halves and integers, and one of each special value.
fn floats(rng: &mut Rng, n: usize, (lo, hi): (f64, f64)) -> Vec<f32> {
    const SPECIAL: [f32; 13] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -2.5,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-30,
        -3e-20,
        3.0e38,
        -1.5e38,
    ];
    (0..n)
        .map(|i| match rng.below(10) {
            0 => SPECIAL[i % SPECIAL.len()],
            1 => ((lo + (hi - lo) * rng.unit()) * 2.0).round() as f32 / 2.0,
            _ => (lo + (hi - lo) * rng.unit()) as f32,
        })
        .collect()
}

fn ints(rng: &mut Rng, n: usize, small: i64) -> Vec<i32> {
    (0..n)
        .map(|_| match rng.below(8) {
            0 => [0, 1, -1, i32::MIN, i32::MAX][rng.below(5)],
            1 | 2 => rng.next() as i32,
            _ => (rng.below(2 * small as usize + 1) as i64 - small) as i32,
        })
        .collect()
}

fn uints(rng: &mut Rng, n: usize, small: usize) -> Vec<u32> {
    (0..n)
        .map(|_| match rng.below(8) {
            0 => [0, 1, u32::MAX][rng.below(3)],
            1 | 2 => rng.next() as u32,
            _ => rng.below(small + 1) as u32,
        })
        .collect()
}

/// An array of `shape` with values of `dtype` for an operation wanting `range` (floats) or
/// integers up to `small` in magnitude (mostly).
fn random(rng: &mut Rng, dtype: DType, shape: &[usize], range: (f64, f64), small: i64) -> Array {
    let n = shape.iter().product();
    match dtype {
        DType::F32 => Array::from_shape_vec(shape, floats(rng, n, range)),
        DType::I32 => Array::from_shape_vec(shape, ints(rng, n, small)),
        DType::U32 => Array::from_shape_vec(shape, uints(rng, n, small as usize)),
        DType::Bool => Array::from_shape_vec(shape, (0..n).map(|_| rng.below(2) == 1).collect()),
        other => unreachable!("no kernels for {other}"),
    }
}

/// Operand shapes that broadcast together: equal, with leading axes dropped, with axes of
/// extent 1, 0-d, and empty.
fn shapes(rng: &mut Rng, operands: usize) -> Vec<Vec<usize>> {
    let rank = rng.below(5);
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

/// Distance in units in the last place (0 for equal values, `+0` and `-0` 0 apart).
fn ulps(a: f32, b: f32) -> u64 {
    let ordered = |x: f32| {
        let i = x.to_bits() as i32 as i64;
        if i < 0 {
            i64::from(i32::MIN) - i
        } else {
            i
        }
    };
    (ordered(a) - ordered(b)).unsigned_abs()
}

/// How far, in ulps, a float result may be from the CPU's.
type Tolerance = u64;

const EXACT: Tolerance = 0;

fn within(got: f32, want: f32, tol: Tolerance) -> bool {
    // Below the normal range one side may flush to zero: XLA's GPU backend flushes, as the
    // CPU does (XLA's CPU modes), and a Vulkan device may keep subnormals.
    let flushed = (want.abs() < f32::MIN_POSITIVE && got == 0.0)
        || (got.abs() < f32::MIN_POSITIVE && want == 0.0);
    flushed
        || (got.is_nan() && want.is_nan())
        || got.to_bits() == want.to_bits()
        || (got == want && want != 0.0)
        || (!got.is_nan() && !want.is_nan() && ulps(got, want) <= tol)
}

/// The inputs behind element `k` of the result, for messages.
fn inputs_at(args: &[Array], shape: &[usize], k: usize) -> Vec<String> {
    args.iter()
        .map(|a| {
            let all = jnp::broadcast_to(a, shape).astype(DType::F64);
            format!("{:e}", all.to_vec::<f64>().unwrap()[k])
        })
        .collect()
}

/// Runs `prim` on `args` on the CPU and on `gpu`, checks the GPU's result has the CPU's
/// dtype, shape and weak type, stays on the GPU, and agrees within `tol` ulps (floats) or bit
/// for bit. Returns the largest float difference in ulps.
///
/// Where a tolerance is allowed, a float result may instead be within it of the CPU's result
/// in float64 rounded to float32, whichever is nearer: some of the CPU's float32 functions
/// are less accurate than the GPU's (the C library's formulas for `atanh` lose digits near
/// -1, and `asinh` and `acosh` overflow past 1.7e38).
fn compare(prim: &dyn Primitive, args: &[Array], gpu: Device, tol: Tolerance) -> u64 {
    let refs: Vec<&Array> = args.iter().collect();
    let want = bind1(prim, &refs);
    let wide = (tol > 0 && args.iter().all(|a| a.dtype() == DType::F32)).then(|| {
        let wide: Vec<Array> = args.iter().map(|a| a.astype(DType::F64)).collect();
        let wide_refs: Vec<&Array> = wide.iter().collect();
        bind1(prim, &wide_refs).astype(DType::F32).to_vec::<f32>().unwrap()
    });
    let placed: Vec<Array> = args.iter().map(|a| device_put(a, gpu)).collect();
    let placed_refs: Vec<&Array> = placed.iter().collect();
    let got = bind1(prim, &placed_refs);
    let what = || {
        let operands: Vec<String> =
            args.iter().map(|a| format!("{}{:?}", a.dtype(), a.shape())).collect();
        format!("{} of {}", prim.name(), operands.join(", "))
    };
    assert_eq!(got.device(), gpu, "{}: the result left the GPU", what());
    assert_eq!(
        (got.dtype(), got.shape(), got.is_weak()),
        (want.dtype(), want.shape(), want.is_weak()),
        "{}",
        what()
    );
    match want.dtype() {
        DType::F32 => {
            let (g, w) = (got.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
            let mut worst = 0;
            for (k, (&g, &w0)) in g.iter().zip(&w).enumerate() {
                let w = match &wide {
                    Some(wide)
                        if !g.is_nan()
                            && !wide[k].is_nan()
                            && (w0.is_nan() || ulps(g, wide[k]) < ulps(g, w0)) =>
                    {
                        wide[k]
                    }
                    _ => w0,
                };
                assert!(
                    within(g, w, tol),
                    "{}: element {k} of inputs {:?}: GPU {g:e} ({:#x}), CPU {w:e} ({:#x}), {} ulps",
                    what(),
                    inputs_at(args, want.shape(), k),
                    g.to_bits(),
                    w.to_bits(),
                    ulps(g, w)
                );
                let flushed = w.abs() < f32::MIN_POSITIVE && g == 0.0;
                if !(flushed || g.is_nan() && w.is_nan()) {
                    worst = worst.max(ulps(g, w));
                }
            }
            worst
        }
        DType::I32 => {
            assert_eq!(got.to_vec::<i32>().unwrap(), want.to_vec::<i32>().unwrap(), "{}", what());
            0
        }
        DType::U32 => {
            assert_eq!(got.to_vec::<u32>().unwrap(), want.to_vec::<u32>().unwrap(), "{}", what());
            0
        }
        DType::Bool => {
            assert_eq!(got.to_vec::<bool>().unwrap(), want.to_vec::<bool>().unwrap(), "{}", what());
            0
        }
        other => unreachable!("{other}"),
    }
}

const KERNEL_DTYPES: [DType; 4] = [DType::F32, DType::I32, DType::U32, DType::Bool];

/// Where a unary op's float inputs come from, and how close (in ulps) it must come to the
/// CPU. The bounds are what lavapipe gives with some margin (its `fma` is a multiply and an
/// add, which costs the XLA ports a few ulps where the CPU fuses them).
fn unary_case(op: UnaryOp) -> ((f64, f64), Tolerance) {
    use UnaryOp::*;
    match op {
        Neg | Abs | Sign | Square | Floor | Ceil | Round | IsNan | IsFinite | Not => {
            ((-10.0, 10.0), EXACT)
        }
        IntegerPow(_) => ((-3.0, 3.0), EXACT),
        Erfc | Lgamma | Digamma | BesselI0e | BesselI1e => {
            unreachable!("{} has no GPU kernel (see the unsupported test)", op.op_name())
        }
        // Correctly rounded on lavapipe; Vulkan allows real GPUs 2.5 ulps for division.
        Reciprocal | Sqrt | Rsqrt => ((-1.0, 100.0), EXACT),
        // XLA's functions, ported.
        Exp | Logistic => ((-90.0, 90.0), 4),
        Tanh | Erf => ((-10.0, 10.0), 6),
        Log | Log1p => ((-1.0, 100.0), 4),
        ErfInv => ((-1.0, 1.0), 4),
        // Built on those, or Cephes' float functions.
        Expm1 | Sinh | Cosh => ((-12.0, 12.0), 4),
        Asinh => ((-50.0, 50.0), 4),
        Acosh => ((1.0, 50.0), 4),
        Atanh => ((-1.0, 1.0), 4),
        Exp2 => ((-30.0, 30.0), 4),
        Cbrt => ((-100.0, 100.0), 4),
        Sin | Cos | Tan => ((-10.0, 10.0), 4),
        Asin | Acos => ((-1.0, 1.0), 4),
        Atan => ((-50.0, 50.0), 4),
    }
}

const UNARY: [UnaryOp; 36] = {
    use UnaryOp::*;
    [
        Neg,
        Abs,
        Sign,
        Square,
        Not,
        Exp,
        Exp2,
        Log,
        Log1p,
        Expm1,
        Sqrt,
        Rsqrt,
        Cbrt,
        Reciprocal,
        Sin,
        Cos,
        Tan,
        Asin,
        Acos,
        Atan,
        Sinh,
        Cosh,
        Tanh,
        Asinh,
        Acosh,
        Atanh,
        Logistic,
        Erf,
        ErfInv,
        Floor,
        Ceil,
        Round,
        IsNan,
        IsFinite,
        IntegerPow(2),
        IntegerPow(-3),
    ]
};

/// Every unary op the shape rules allow, in every kernel dtype, on random shapes: the GPU's
/// results are the CPU's (bit for bit, or within the op's tolerance for transcendentals).
#[test]
fn unary_ops_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = 0;
    let mut report = Vec::new();
    for op in UNARY.into_iter().chain([UnaryOp::IntegerPow(0), UnaryOp::IntegerPow(7)]) {
        let (range, tol) = unary_case(op);
        for dtype in KERNEL_DTYPES {
            let aval = rjax::primitives::Aval { shape: vec![], dtype, weak: false };
            if op.abstract_eval(&[aval]).is_err() {
                continue;
            }
            let mut worst = 0;
            for _ in 0..6 {
                let shape = &shapes(&mut rng, 1)[0];
                let x = random(&mut rng, dtype, shape, range, 40);
                worst = worst.max(compare(&op, &[x], gpu, tol));
                cases += 1;
            }
            // A large operand too, for the spread of values.
            let x = random(&mut rng, dtype, &[4099], range, 40);
            worst = worst.max(compare(&op, &[x], gpu, tol));
            cases += 1;
            // Trigonometric functions reduce arguments past 8192 another way.
            if matches!(op, UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan) {
                let x = random(&mut rng, dtype, &[4099], (-1e9, 1e9), 40);
                worst = worst.max(compare(&op, &[x], gpu, tol));
                cases += 1;
            }
            report.push(format!("{}[{dtype}]: {worst}", op.name()));
        }
    }
    eprintln!("unary: {cases} cases; worst ulps per op: {}", report.join(", "));
}

fn binary_case(op: BinaryOp) -> ((f64, f64), Tolerance) {
    use BinaryOp::*;
    match op {
        Pow => ((-4.0, 4.0), 4),
        Atan2 => ((-10.0, 10.0), 4),
        _ => ((-10.0, 10.0), EXACT),
    }
}

const BINARY: [BinaryOp; 19] = {
    use BinaryOp::*;
    [Add, Sub, Mul, Div, Rem, Pow, Max, Min, Atan2, NextAfter, Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor]
};

/// Every binary op in every kernel dtype its shape rule allows, on random broadcasting
/// shapes, including integer division by zero and overflow.
#[test]
fn binary_ops_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut cases = 0;
    let mut report = Vec::new();
    for op in BINARY {
        let (range, tol) = binary_case(op);
        for dtype in KERNEL_DTYPES {
            let aval = rjax::primitives::Aval { shape: vec![], dtype, weak: false };
            if op.abstract_eval(&[aval.clone(), aval]).is_err() {
                continue;
            }
            let small = if op == BinaryOp::Pow { 12 } else { 40 };
            let mut worst = 0;
            for round in 0..8 {
                let mut s = shapes(&mut rng, 2);
                if round == 0 {
                    s = vec![vec![4099], vec![4099]];
                }
                let a = random(&mut rng, dtype, &s[0], range, small);
                let b = random(&mut rng, dtype, &s[1], range, small);
                worst = worst.max(compare(&op, &[a, b], gpu, tol));
                cases += 1;
            }
            report.push(format!("{}[{dtype}]: {worst}", op.op_name()));
        }
    }
    eprintln!("binary: {cases} cases; worst ulps per op: {}", report.join(", "));
}

/// Integer division and remainder at their edges, as the CPU (XLA) defines them: x / 0 is
/// all ones, x % 0 is x, MIN / -1 wraps.
#[test]
fn integer_division_edges_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let a = jnp::array([7, -7, i32::MIN, i32::MIN, 5, 0, i32::MAX]);
    let b = jnp::array([0, 0, -1, 0, -2, 0, -1]);
    for op in [BinaryOp::Div, BinaryOp::Rem, BinaryOp::Pow] {
        compare(&op, &[a.clone(), b.clone()], gpu, EXACT);
    }
    let a = jnp::array([7u32, 0, u32::MAX, 9]);
    let b = jnp::array([0u32, 0, 3, 2]);
    for op in [BinaryOp::Div, BinaryOp::Rem, BinaryOp::Pow] {
        compare(&op, &[a.clone(), b.clone()], gpu, EXACT);
    }
    let got = bind1(&BinaryOp::Div, &[&device_put(&a, gpu), &device_put(&b, gpu)]);
    assert_eq!(got.to_vec::<u32>().unwrap(), vec![u32::MAX, u32::MAX, u32::MAX / 3, 4]);
    let got = bind1(&BinaryOp::Rem, &[&device_put(&a, gpu), &device_put(&b, gpu)]);
    assert_eq!(got.to_vec::<u32>().unwrap(), vec![7, 0, 0, 1]);
}

/// `select` for every branch dtype and `convert_element_type` between every pair of kernel
/// dtypes (NaN, infinities and out-of-range floats into integers among the values).
#[test]
fn select_and_convert_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let mut rng = Rng(7);
    let mut cases = 0;
    for dtype in KERNEL_DTYPES {
        for _ in 0..8 {
            let s = shapes(&mut rng, 3);
            let p = random(&mut rng, DType::Bool, &s[0], (0.0, 1.0), 1);
            let t = random(&mut rng, dtype, &s[1], (-10.0, 10.0), 40);
            let f = random(&mut rng, dtype, &s[2], (-10.0, 10.0), 40);
            compare(&Select, &[p, t, f], gpu, EXACT);
            cases += 1;
        }
        for to in KERNEL_DTYPES {
            for _ in 0..4 {
                let s = &shapes(&mut rng, 1)[0];
                let x = random(&mut rng, dtype, s, (-5e9, 5e9), 40);
                compare(&Convert { dtype: to, weak: false }, &[x], gpu, EXACT);
                cases += 1;
            }
            let wide = random(&mut rng, dtype, &[2000], (-3.0, 3.0), 1 << 30);
            compare(&Convert { dtype: to, weak: true }, &[wide], gpu, EXACT);
            cases += 1;
        }
    }
    eprintln!("select and convert: {cases} cases");
}

/// Values survive a trip to the GPU and back, for every dtype (stored as bytes), and the
/// array says where it is; reading a GPU array (to_vec, item, printing) copies to the host.
#[test]
fn device_put_round_trips_every_dtype() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let mut rng = Rng(11);
    let dtypes = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];
    for dtype in dtypes {
        for shape in [vec![], vec![0], vec![1], vec![3], vec![5, 7], vec![2, 3, 1, 5]] {
            let n: usize = shape.iter().product();
            let bits: Vec<f64> =
                (0..n).map(|_| (rng.next() >> 8) as f64 - (1u64 << 55) as f64).collect();
            let x = Array::from_shape_vec(&shape, bits).astype(dtype);
            let g = device_put(&x, gpu);
            assert_eq!((g.device(), x.device()), (gpu, Device::Cpu(0)));
            assert!(g.is_committed() && !x.is_committed());
            assert_eq!((g.dtype(), g.shape()), (dtype, x.shape()));
            let back = device_put(&g, Device::Cpu(0));
            assert_eq!(back.device(), Device::Cpu(0));
            assert_eq!(format!("{back:?}"), format!("{x:?}"), "{dtype}{shape:?}");
            assert_eq!(format!("{g}"), format!("{x}"), "{dtype}{shape:?}: printing a GPU array");
            // Bit for bit, NaN payloads included.
            let as_bits = |a: &Array| a.astype(DType::F64).to_vec::<f64>().unwrap();
            let (got, want) = (as_bits(&back), as_bits(&x));
            assert!(got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()));
        }
    }
    let x = jnp::array([1.5f32, -2.0, 3.25]);
    let g = device_put(&x, gpu);
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![1.5, -2.0, 3.25]);
    assert!(g.to_vec::<i32>().is_err());
    assert_eq!(device_put(&Array::from(7i32), gpu).item::<i32>().unwrap(), 7);
    // Between GPUs and back onto the same one.
    assert_eq!(device_put(&g, gpu).to_vec::<f32>().unwrap(), x.to_vec::<f32>().unwrap());
}

/// Committed operands on different devices are an error naming both; uncommitted ones (Rust
/// scalars, arrays made by jnp) follow the GPU operand there.
#[test]
fn operands_on_different_devices_are_an_error_naming_both() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let g = device_put(&jnp::arange(4.0), gpu);
    let c = device_put(&jnp::ones([4]), Device::Cpu(0));
    let err = catch_unwind(AssertUnwindSafe(|| &g + &c)).expect_err("mixing devices must fail");
    let msg = panic_text(&err);
    assert!(msg.contains("add") && msg.contains("gpu:0") && msg.contains("cpu:0"), "{msg}");
    // Uncommitted: uploaded.
    let y = (&g * 2.0 + jnp::ones([4])) - 1;
    assert_eq!(y.device(), gpu);
    assert!(!y.is_weak());
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![0.0, 2.0, 4.0, 6.0]);
    assert_eq!(jnp::exp(&g).device(), gpu);
}

/// A primitive defined outside rjax with host rules only (no `device_op`).
#[derive(Clone, Debug)]
struct HostOnly;

impl Primitive for HostOnly {
    fn name(&self) -> String {
        "host_only".to_string()
    }
    fn abstract_eval(
        &self,
        inputs: &[rjax::primitives::Aval],
    ) -> Result<Vec<rjax::primitives::Aval>, String> {
        Ok(inputs.to_vec())
    }
    fn eval(&self, inputs: &[&Array], _outputs: &[rjax::primitives::Aval]) -> Vec<Array> {
        vec![inputs[0].clone()]
    }
}

/// An operation without a GPU kernel, or a dtype without one, panics naming the operation,
/// the dtype and the device; nothing is copied to the host behind the caller's back.
#[test]
fn unsupported_ops_and_dtypes_name_op_dtype_and_device() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let g = device_put(&jnp::arange(6.0), gpu);
    let msg = panic_text(&catch_unwind(AssertUnwindSafe(|| bind1(&HostOnly, &[&g]))).unwrap_err());
    assert!(msg.contains("host_only: no GPU kernel yet for float32 on gpu:0"), "{msg}");
    // The special functions have host kernels only, so far.
    let lgamma = || bind1(&UnaryOp::Lgamma, &[&g]);
    let msg = panic_text(&catch_unwind(AssertUnwindSafe(lgamma)).unwrap_err());
    assert!(msg.contains("lgamma: no GPU kernel yet for float32 on gpu:0"), "{msg}");
    assert!(msg.contains("gpu:0") && msg.contains("device_put(&x, Device::Cpu(0))"), "{msg}");
    let wide = device_put(&jnp::arange(3.0).astype(DType::I64), gpu);
    let msg = panic_text(&catch_unwind(AssertUnwindSafe(|| -&wide)).unwrap_err());
    assert!(msg.contains("neg: no GPU kernel yet for int64 on gpu:0"), "{msg}");
    // The explicit way: move, then reduce.
    assert_eq!(device_put(&g, Device::Cpu(0)).sum().item::<f32>().unwrap(), 15.0);
}

#[rjax::jit]
fn double(x: &Array) -> Array {
    x * 2.0
}

/// A 300 MB array, past lavapipe's 128 MiB binding limit: the kernels run in windows, each
/// binding the part of every operand it reads (a broadcast row included).
#[test]
fn arrays_larger_than_one_binding_run_in_windows() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let (rows, cols) = (3, 25_000_000);
    let x = jnp::arange((rows * cols) as f64).reshape([rows as isize, cols as isize]);
    let row = jnp::arange(cols as f64) * -0.5;
    let (gx, grow) = (device_put(&x, gpu), device_put(&row, gpu));
    let start = std::time::Instant::now();
    let sum = &gx + &grow;
    let scaled = &gx * 2.0;
    let got_sum = sum.to_vec::<f32>().unwrap();
    let got_scaled = scaled.to_vec::<f32>().unwrap();
    let gpu_time = start.elapsed();
    let want_sum = (&x + &row).to_vec::<f32>().unwrap();
    let want_scaled = (&x * 2.0).to_vec::<f32>().unwrap();
    assert!(got_sum == want_sum, "broadcast add over windows differs");
    assert!(got_scaled == want_scaled, "scaling over windows differs");
    eprintln!("300 MB: add with a broadcast row and a scaling, read back: {gpu_time:?}");
}

/// An operation repeated 100 times creates no buffers after its first iterations: freed
/// results, uploaded scalars, parameters and read-back buffers are reused.
#[test]
fn repeated_ops_reuse_buffers() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let g = device_put(&jnp::arange(1000.0), gpu);
    let step = |i: usize| {
        let y = (&g * 2.0 + i as f64).sin();
        assert_eq!(y.to_vec::<f32>().unwrap().len(), 1000);
    };
    step(0);
    step(1);
    let before = device::memory_stats(gpu).expect("gpu:0 is open");
    let start = std::time::Instant::now();
    for i in 2..100 {
        step(i);
    }
    let per_step = start.elapsed() / 98;
    let after = device::memory_stats(gpu).unwrap();
    assert_eq!(after.buffers_created, before.buffers_created, "{before:?} -> {after:?}");
    assert!(after.bytes_cached > 0);
    eprintln!("3 ops and a read-back of 1000 floats: {per_step:?} per step; {after:?}");
}

/// The shader of one kernel, as generated: `add` of a float32 matrix and a broadcast row.
#[test]
fn generated_wgsl_snapshot() {
    let _x64 = rjax::config::x64_scope(true);
    let wgsl = rjax::backend::elementwise_wgsl(
        ElementwiseOp::Binary(BinaryOp::Add),
        &[(DType::F32, &[4, 3]), (DType::F32, &[3])],
        (DType::F32, &[4, 3]),
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gpu_add_row.wgsl");
    if std::env::var("RJAX_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(path, &wgsl).unwrap();
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(
        wgsl, want,
        "the generated shader changed; rerun with RJAX_UPDATE_SNAPSHOTS=1 to accept it"
    );
}

/// With a GPU, the default platform is the GPU's (accelerators first), unless
/// RJAX_PLATFORMS says otherwise; arrays are still made on the host.
#[test]
fn devices_list_gpus_first() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _one)) = gpu() else { return };
    let cpu_first =
        std::env::var("RJAX_PLATFORMS").is_ok_and(|p| p.trim_start().starts_with("cpu"));
    let default = device::devices()[0];
    assert_eq!(default, if cpu_first { Device::Cpu(0) } else { gpu });
    assert_eq!(jnp::ones([2]).device(), Device::Cpu(0));
    assert_eq!(gpu.to_string(), "gpu:0");
}
