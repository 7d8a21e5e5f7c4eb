//! The generated CUDA C run on the host: every kernel of the table is compiled by the host's
//! C++ compiler against a small header that defines CUDA's built-ins as PTX documents them
//! (one thread that walks every element; saturating float-to-integer conversions with NaN
//! giving 0), run on edge-case inputs, and compared with the CPU backend's kernels bit for bit.
//!
//! This checks what the generator decides — indexing and broadcasts, integer wrapping and
//! division, conversions, NaN handling, the ports of XLA's functions — on real values. It does
//! not check CUDA's own math library or hardware: functions the kernels take from CUDA are the
//! host C library's here, as they are the CPU backend's (Rust's `std` calls the same C library),
//! except the few the CPU takes from elsewhere, which are compared to within a few ulps.

use std::ffi::c_void;
use std::fmt::Write as _;
use std::process::Command;

use super::codegen;
use crate::array::{Array, Buffer};
use crate::backend::layout::Layout;
use crate::backend::{CopyRegion, DeviceOp, ElementwiseOp};
use crate::dtype::DType;
use crate::primitives::{bind1, Convert, Primitive, Select, UnaryOp};
use crate::with_buffer;

/// CUDA's built-ins for a host compiler, with PTX's semantics.
const SHIM: &str = r#"
#include <math.h>
#include <string.h>
#include <algorithm>
#include <cmath>
using std::isnan; using std::isfinite; using std::min; using std::max;
struct dim3 { unsigned int x, y, z; };
static const dim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0}, blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
static inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline double __longlong_as_double(long long u) { double f; memcpy(&f, &u, 8); return f; }
// cvt.rzi.s64.f64 and cvt.rzi.u64.f64: truncate, saturate, NaN gives 0.
static inline long long __double2ll_rz(double x) {
    if (isnan(x)) return 0;
    if (x >= 9223372036854775808.0) return 0x7fffffffffffffffLL;
    if (x <= -9223372036854775808.0) return (long long)0x8000000000000000ULL;
    return (long long)x;
}
static inline unsigned long long __double2ull_rz(double x) {
    if (isnan(x) || x <= 0) return 0;
    if (x >= 18446744073709551616.0) return 0xffffffffffffffffULL;
    return (unsigned long long)x;
}
"#;

/// Inputs of `dtype` with the edges its operations treat specially.
fn values(dtype: DType) -> Buffer {
    let floats = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.5,
        -3.7,
        10.0,
        -10.0,
        88.0,
        -87.0,
        // The smallest normal range: the CPU backend's rules for subnormal operands (XLA's
        // per operation) are not the generated kernels' yet.
        3e-38,
        -3e-38,
        1e30,
        -1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.999,
        -0.999,
        1e-5,
        100.5,
        0.41,
        1.5e9,
        -2.2e9,
        300.0,
        -129.5,
        255.7,
        9.3e18,
        -9.3e18,
        1.9e19,
        1e300,
        3.0,
    ];
    let ints: [i64; 16] =
        [0, 1, -1, 2, -2, 3, 7, -7, 100, 13, -128, 255, i64::MIN, i64::MAX, i32::MIN as i64, 65536];
    match dtype {
        DType::Bool => Buffer::Bool(vec![false, true]),
        DType::F64 => Buffer::F64(floats.to_vec()),
        DType::F32 => Buffer::F32(floats.iter().map(|&x| x as f32).collect()),
        // Integers wrap into the narrower types, as `astype` does.
        int => Buffer::I64(ints.to_vec()).cast(int),
    }
}

/// Operations the CPU computes with functions of its own rather than the C library's:
/// compared within `ulps` rather than bit for bit.
fn tolerance(op: ElementwiseOp, dtype: DType) -> u64 {
    use UnaryOp::*;
    match op {
        ElementwiseOp::Unary(Erfc | Lgamma | Cbrt | Asinh | Acosh) => 4,
        // Rust's `atanh` is `ln_1p(2x / (1 - x)) / 2`, which loses digits near +-1 where the
        // C library's does not: at -0.999, 76 ulps in f32 and 169 in f64.
        ElementwiseOp::Unary(Atanh) => 256,
        ElementwiseOp::Unary(Erf) if dtype == DType::F64 => 4,
        _ => 0,
    }
}

/// One kernel to run: its source, operands (with shapes), the outputs' shape, and the values
/// the CPU computes for each output.
struct Case {
    name: String,
    source: String,
    operands: Vec<(Buffer, Vec<usize>)>,
    shape: Vec<usize>,
    expected: Vec<Buffer>,
    ulps: u64,
}

fn host(buffer: &Buffer, shape: &[usize]) -> Array {
    Array::from_buffer(shape, buffer.clone(), false)
}

/// Each element of `values` repeated `times` times in a row (`rows`) or the whole list
/// repeated (`tiled`): the operands of an all-pairs product as full arrays.
fn spread(b: &Buffer, times: usize, tiled: bool) -> Buffer {
    with_buffer!(b, |v: T| {
        let n = v.len();
        let out: Vec<T> =
            (0..n * times).map(|k| if tiled { v[k % n] } else { v[k / times] }).collect();
        <T as crate::dtype::Element>::wrap(out)
    })
}

fn case(
    name: String,
    op: ElementwiseOp,
    prim: &dyn Primitive,
    operands: Vec<(Buffer, Vec<usize>)>,
    full: Vec<Buffer>,
    out_shape: Vec<usize>,
) -> Option<Case> {
    let full_arrays: Vec<Array> = full.iter().map(|b| host(b, &out_shape)).collect();
    let refs: Vec<&Array> = full_arrays.iter().collect();
    let expected = bind1(prim, &refs);
    let shapes: Vec<(DType, &[usize])> =
        operands.iter().map(|(b, s)| (b.dtype(), s.as_slice())).collect();
    let out = (expected.dtype(), out_shape.as_slice());
    let source = super::elementwise_source(op, &shapes, out).ok()?;
    let ulps = tolerance(op, shapes[0].0);
    let expected = vec![expected.buffer().clone()];
    Some(Case { name, source, operands, shape: out_shape, expected, ulps })
}

fn accepts(p: &dyn Primitive, dtypes: &[DType]) -> bool {
    let avals: Vec<_> = dtypes
        .iter()
        .map(|&dtype| crate::primitives::Aval { shape: vec![2], dtype, weak: false })
        .collect();
    p.abstract_eval(&avals).is_ok()
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let dtypes: Vec<DType> = DType::ALL.into_iter().filter(|&d| codegen::computes(d)).collect();
    for &d in &dtypes {
        let v = values(d);
        let n = v.len();
        for op in super::tests::unary_ops() {
            if accepts(&op, &[d]) {
                let e = ElementwiseOp::Unary(op);
                let operands = vec![(v.clone(), vec![n])];
                cases.extend(case(
                    format!("{op:?} {d}"),
                    e,
                    &op,
                    operands,
                    vec![v.clone()],
                    vec![n],
                ));
            }
        }
        // All pairs: a column against a row.
        let (rows, cols) = (spread(&v, n, false), spread(&v, n, true));
        for op in super::tests::binary_ops() {
            if accepts(&op, &[d, d]) {
                let e = ElementwiseOp::Binary(op);
                let operands = vec![(v.clone(), vec![n, 1]), (v.clone(), vec![1, n])];
                let full = vec![rows.clone(), cols.clone()];
                cases.extend(case(format!("{op:?} {d}"), e, &op, operands, full, vec![n, n]));
            }
        }
        let pred = Buffer::Bool((0..n).map(|k| k % 3 == 0).collect());
        let first = with_buffer!(&v, |s: T| <T as crate::dtype::Element>::wrap(vec![s[1]]));
        let operands =
            vec![(pred.clone(), vec![n, 1]), (v.clone(), vec![1, n]), (first.clone(), vec![])];
        let full = vec![spread(&pred, n, false), cols.clone(), spread(&first, n * n, true)];
        let e = ElementwiseOp::Select;
        cases.extend(case(format!("select {d}"), e, &Select, operands, full, vec![n, n]));
        for &to in &dtypes {
            let convert = Convert { dtype: to, weak: false };
            let operands = vec![(v.clone(), vec![n])];
            let name = format!("convert {d} -> {to}");
            let e = ElementwiseOp::Convert;
            cases.extend(case(name, e, &convert, operands, vec![v.clone()], vec![n]));
        }
    }
    cases.extend(threefry_cases());
    cases
}

/// The hash of a few keys and counters, each kernel's operands broadcast as
/// [`super::tests::threefry_cases`] lays them out, against the host's function.
fn threefry_cases() -> Vec<Case> {
    let shape = vec![4, 3];
    super::tests::threefry_cases()
        .into_iter()
        .map(|(name, shapes)| {
            // Distinct words for each operand's elements, with high bits set.
            let operand = |k: u32, s: &[usize]| {
                let len: usize = s.iter().product();
                (0..len as u32)
                    .map(|i| k.wrapping_mul(0x9E37_79B9) ^ i.wrapping_mul(0x85EB_CA6B))
                    .collect::<Vec<u32>>()
            };
            let ops: Vec<Vec<u32>> =
                shapes.iter().enumerate().map(|(k, s)| operand(k as u32 + 1, s)).collect();
            let full: Vec<Vec<u32>> = shapes
                .iter()
                .zip(&ops)
                .map(|(s, v)| {
                    let a = host(&Buffer::U32(v.clone()), s);
                    crate::jnp::broadcast_to(&a, &shape).to_vec::<u32>().unwrap()
                })
                .collect();
            let (mut w0, mut w1) = (Vec::new(), Vec::new());
            let words = full[0].iter().zip(&full[1]).zip(&full[2]).zip(&full[3]);
            for (((&k0, &k1), &c0), &c1) in words {
                let [a, b] = crate::exec::cpu::threefry::threefry2x32([k0, k1], [c0, c1]);
                w0.push(a);
                w1.push(b);
            }
            Case {
                name: name.to_string(),
                source: super::threefry_source(&shapes, &shape).unwrap(),
                operands: shapes
                    .iter()
                    .zip(ops)
                    .map(|(s, v)| (Buffer::U32(v), s.to_vec()))
                    .collect(),
                shape: shape.clone(),
                expected: vec![Buffer::U32(w0), Buffer::U32(w1)],
                ulps: 0,
            }
        })
        .collect()
}

/// What `prim`'s `Assemble` does to operands of these shapes, run as the fill and copy
/// kernels a launch would run (fill first, then each region), against the CPU's evaluation.
fn assemble_case(
    name: &str,
    prim: &dyn Primitive,
    operands: Vec<(Buffer, Vec<usize>)>,
) -> Assembly {
    let avals: Vec<crate::primitives::Aval> = operands
        .iter()
        .map(|(b, s)| crate::primitives::Aval { shape: s.clone(), dtype: b.dtype(), weak: false })
        .collect();
    let Some(DeviceOp::Assemble { fill, regions }) = prim.device_op(&avals) else {
        panic!("{name}: not an assembly");
    };
    let arrays: Vec<Array> = operands.iter().map(|(b, s)| host(b, s)).collect();
    let expected = bind1(prim, &arrays.iter().collect::<Vec<_>>());
    Assembly { name: name.to_string(), fill, regions, operands, expected }
}

/// An `Assemble` to run: its fill operand, regions, operands and the CPU's result.
struct Assembly {
    name: String,
    fill: Option<usize>,
    regions: Vec<CopyRegion>,
    operands: Vec<(Buffer, Vec<usize>)>,
    expected: Array,
}

fn assemblies() -> Vec<Assembly> {
    use crate::primitives::{Concatenate, Pad, Rev, Slice, Transpose};
    let iota = |dtype: DType, shape: &[usize]| {
        let n: usize = shape.iter().product();
        // Distinct values (booleans in an uneven pattern), so a misplaced element shows.
        let value = |i: usize| {
            if dtype == DType::Bool {
                i.is_multiple_of(3) as u8 as f64
            } else {
                i as f64 + 1.0
            }
        };
        (Buffer::F64((0..n).map(value).collect()).cast(dtype), shape.to_vec())
    };
    let mut cases = Vec::new();
    for dtype in
        [DType::Bool, DType::I8, DType::F16, DType::F32, DType::I64, DType::F64, DType::C128]
    {
        let transpose = Transpose { permutation: vec![2, 0, 1] };
        cases.push(assemble_case("transpose", &transpose, vec![iota(dtype, &[2, 3, 4])]));
        let rev = Rev { dimensions: vec![0, 2] };
        cases.push(assemble_case("rev", &rev, vec![iota(dtype, &[3, 2, 5])]));
        let slice =
            Slice { start_indices: vec![1, 0], limit_indices: vec![5, 7], strides: vec![2, 3] };
        cases.push(assemble_case("slice", &slice, vec![iota(dtype, &[6, 7])]));
        let pad = Pad { low: vec![1, -1], high: vec![2, 1], interior: vec![1, 0] };
        let value = (Buffer::F64(vec![9.0]).cast(dtype), vec![]);
        cases.push(assemble_case("pad", &pad, vec![iota(dtype, &[3, 4]), value]));
        let concatenate = Concatenate { dimension: 1 };
        let parts = vec![iota(dtype, &[2, 3]), iota(dtype, &[2, 1]), iota(dtype, &[2, 2])];
        cases.push(assemble_case("concatenate", &concatenate, parts));
    }
    cases
}

#[test]
fn running_folds_run_on_the_host_give_the_cpu_backends_results() {
    use crate::primitives::{CumOp, Cumulative};
    let shape = [3usize, 5, 4];
    let mut cases = Vec::new();
    for dtype in DType::ALL.into_iter().filter(|&d| codegen::computes(d)) {
        // The edge values cycled over the array, so the folds meet NaN, -0 and the bounds.
        let x = cycled(dtype, &shape);
        for op in [CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Min] {
            for (axis, reverse) in [(0, false), (1, true), (2, false), (2, true)] {
                let prim = Cumulative { op, axis, reverse };
                if !accepts(&prim, &[dtype]) {
                    continue;
                }
                let source = codegen::cumulative(op, dtype, reverse).unwrap();
                let expected = bind1(&prim, &[&x]);
                let (outer, inner) = outer_inner(&shape, axis);
                let words = vec![(outer * inner) as u64, shape[axis] as u64, inner as u64];
                let name = format!("{op:?} {dtype} axis {axis} reverse {reverse}");
                cases.push((name, source, words, x.clone(), expected));
            }
        }
    }
    run_row_cases(&cases);
}

#[test]
fn arg_reductions_run_on_the_host_give_the_cpu_backends_results() {
    use crate::primitives::{ArgOp, ArgReduce};
    let shape = [3usize, 5, 4];
    let mut cases = Vec::new();
    for dtype in DType::ALL.into_iter().filter(|&d| codegen::computes(d)) {
        let x = cycled(dtype, &shape);
        for op in [ArgOp::Max, ArgOp::Min] {
            for axis in 0..3 {
                let prim = ArgReduce { op, axis };
                if !accepts(&prim, &[dtype]) {
                    continue;
                }
                let source = codegen::arg_reduce(op, dtype).unwrap();
                let expected = bind1(&prim, &[&x]);
                let (outer, inner) = outer_inner(&shape, axis);
                let words = vec![(outer * inner) as u64, shape[axis] as u64, inner as u64];
                cases.push((
                    format!("{op:?} {dtype} axis {axis}"),
                    source,
                    words,
                    x.clone(),
                    expected,
                ));
            }
        }
    }
    run_row_cases(&cases);
}

/// The elements before and after `axis`.
fn outer_inner(shape: &[usize], axis: usize) -> (usize, usize) {
    (shape[..axis].iter().product(), shape[axis + 1..].iter().product())
}

/// An array of `shape` holding `dtype`'s edge values, cycled.
fn cycled(dtype: DType, shape: &[usize]) -> Array {
    let v = values(dtype);
    let n: usize = shape.iter().product();
    let cycled = spread(&v, n.div_ceil(v.len()), true);
    host(&with_buffer!(&cycled, |c: T| <T as crate::dtype::Element>::wrap(c[..n].to_vec())), shape)
}

/// A kernel over rows of one operand: name, source, words, operand, the CPU's result.
type RowCase = (String, String, Vec<u64>, Array, Array);

/// Runs each case's kernel on its operand and compares with the CPU's result, bit for bit.
fn run_row_cases(cases: &[RowCase]) {
    let kernels: Vec<Kernel> = cases
        .iter()
        .map(|(_, source, _, x, e)| {
            let buffers =
                vec![format!("const {}*", storage(x.dtype())), format!("{}*", storage(e.dtype()))];
            (source.clone(), buffers)
        })
        .collect();
    let Some(library) = build(&kernels) else { return };
    for (k, (name, _, words, src, expected)) in cases.iter().enumerate() {
        let mut out = Buffer::F64(vec![0.0; expected.size()]).cast(expected.dtype());
        let pointers = [
            with_buffer!(src.buffer(), |v: T| v.as_ptr() as *mut c_void),
            with_buffer!(&mut out, |v: T| v.as_mut_ptr() as *mut c_void),
        ];
        // SAFETY: the words cover the operand's rows; the output holds one element per row
        // (a reduction) or per element (a scan), as the kernel writes.
        unsafe { launch(&library, k, words, &pointers) };
        let case = Case {
            name: name.clone(),
            source: String::new(),
            operands: Vec::new(),
            shape: expected.shape().to_vec(),
            expected: vec![expected.buffer().clone()],
            ulps: 0,
        };
        if let Some(failure) = compare(&case, &out, expected.buffer()) {
            panic!("{failure}");
        }
    }
}

/// One launch of an assembly: the kernel, its words, and the operand it reads.
type Step = (usize, Vec<u64>, Option<usize>);

#[test]
fn strided_copies_run_on_the_host_give_the_cpu_backends_results() {
    let cases = assemblies();
    let mut sources: Vec<Kernel> = Vec::new();
    // The kernels each case launches, in order, with their words and operands.
    let mut launches: Vec<Vec<Step>> = Vec::new();
    for case in &cases {
        let dtype = case.expected.dtype();
        let n = case.expected.size();
        let mut steps = Vec::new();
        let word = codegen_word(dtype);
        let buffers = || vec![format!("const {word}*"), format!("{word}*")];
        if let Some(f) = case.fill {
            sources.push((codegen::fill(dtype), buffers()));
            steps.push((sources.len() - 1, vec![n as u64], Some(f)));
        }
        for region in &case.regions {
            sources.push((codegen::copy(dtype, region.extents.len()), buffers()));
            steps.push((sources.len() - 1, codegen::copy_words(region), Some(region.operand)));
        }
        launches.push(steps);
    }
    let Some(library) = build(&sources) else { return };
    for (case, steps) in cases.iter().zip(&launches) {
        let mut out = Buffer::F64(vec![0.0; case.expected.size()]).cast(case.expected.dtype());
        for (kernel, words, operand) in steps {
            let src = &case.operands[operand.expect("every step reads an operand")].0;
            let pointers = [
                with_buffer!(src, |v: T| v.as_ptr() as *mut c_void),
                with_buffer!(&mut out, |v: T| v.as_mut_ptr() as *mut c_void),
            ];
            // SAFETY: the kernel reads the operand and writes the output within the bounds
            // the primitive's regions give, which its shape rule checked.
            unsafe { launch(&library, *kernel, words, &pointers) };
        }
        let got = host(&out, case.expected.shape());
        let (g, e) = (format!("{:?}", got.buffer()), format!("{:?}", case.expected.buffer()));
        assert_eq!(g, e, "{} of {}", case.name, case.expected.dtype());
    }
}

/// The unsigned type of `dtype`'s width, which the copy kernels move.
fn codegen_word(dtype: DType) -> &'static str {
    ["unsigned char", "unsigned short", "unsigned int", "unsigned long long", "w128"]
        [dtype.size_of().trailing_zeros() as usize]
}

fn storage(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool | DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::U16 => "unsigned short",
        DType::I32 => "int",
        DType::U32 => "unsigned int",
        DType::I64 => "long long",
        DType::U64 => "unsigned long long",
        DType::F32 => "float",
        DType::F64 => "double",
        other => unreachable!("no kernels for {other}"),
    }
}

/// A kernel source and the C types of the buffers it takes, in order.
type Kernel = (String, Vec<String>);

/// The kernel of an elementwise case and its buffers' types: operands, then outputs.
fn kernel_of(case: &Case) -> Kernel {
    let operands = case.operands.iter().map(|(b, _)| format!("const {}*", storage(b.dtype())));
    let outputs = case.expected.iter().map(|b| format!("{}*", storage(b.dtype())));
    (case.source.clone(), operands.chain(outputs).collect())
}

/// One translation unit holding every kernel in its own namespace, each with an `extern "C"`
/// entry `run_{k}(words, buffers)` that calls it as a launch would.
fn translation_unit(kernels: &[Kernel]) -> String {
    let mut s = SHIM.to_string();
    for (k, (source, buffers)) in kernels.iter().enumerate() {
        let kernel = source.replace("extern \"C\" ", "");
        let _ = writeln!(s, "namespace k{k} {{\n{kernel}\n}}");
        let mut args = vec!["p".to_string()];
        // The 16-byte word type is the kernel's own.
        let own = |t: &str| t.replace("w128", &format!("k{k}::w128"));
        args.extend(buffers.iter().enumerate().map(|(i, t)| format!("({})b[{i}]", own(t))));
        let _ = writeln!(
            s,
            "extern \"C\" void run_{k}(const unsigned long long* w, void* const* b) {{\n    \
             k{k}::Params p;\n    memcpy(p.w, w, sizeof p.w);\n    k{k}::rjax_kernel({});\n}}",
            args.join(", ")
        );
    }
    s
}

/// The kernels compiled by the host's C++ compiler and loaded, or `None` (the test skips,
/// saying why) where there is no compiler.
fn build(kernels: &[Kernel]) -> Option<libloading::Library> {
    static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("rjax-cuda-host-{}-{build}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cpp, lib) = (dir.join("kernels.cpp"), dir.join("kernels.so"));
    std::fs::write(&cpp, translation_unit(kernels)).unwrap();
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_string());
    let built = Command::new(&compiler)
        .args(["-O1", "-std=c++17", "-shared", "-fPIC", "-ffp-contract=off", "-w", "-o"])
        .arg(&lib)
        .arg(&cpp)
        .output();
    let built = match built {
        Ok(out) => out,
        Err(e) => {
            eprintln!("skipping: no C++ compiler ({compiler}): {e}");
            return None;
        }
    };
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    // SAFETY: the library is the one just built from the kernels; nothing in it runs on load.
    let library = unsafe { libloading::Library::new(&lib) }.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(library)
}

/// Runs kernel `k` of `library` over `words` and `buffers`, as a launch of one thread would.
///
/// # Safety
/// The words must be the kernel's parameters and each buffer must hold every element the
/// kernel reads or writes through it, in the type it takes.
unsafe fn launch(library: &libloading::Library, k: usize, words: &[u64], buffers: &[*mut c_void]) {
    type Run = unsafe extern "C" fn(*const u64, *const *mut c_void);
    // The kernels run with the float modes the CPU backend computes with (XLA's, which flush
    // subnormals), so that the two differ only where the kernels' logic does.
    let _modes = crate::exec::cpu::float_mode::FlushDenormals::new();
    // SAFETY: `run_{k}` has this signature (see `translation_unit`); the caller vouches for
    // the words and buffers.
    unsafe {
        let run: libloading::Symbol<Run> = library.get(format!("run_{k}").as_bytes()).unwrap();
        run(words.as_ptr(), buffers.as_ptr());
    }
}

/// The launch's parameter words: count, extents, bases (all 0), then each strided operand's
/// strides.
fn words(case: &Case) -> Vec<u64> {
    let shapes: Vec<&[usize]> = case.operands.iter().map(|(_, s)| s.as_slice()).collect();
    let layout = Layout::new(&case.shape, &shapes);
    let n: usize = case.shape.iter().product();
    let mut w = vec![n as u64];
    w.extend(layout.dims.iter().map(|&d| d as u64));
    w.extend(std::iter::repeat_n(0, case.operands.len() + case.expected.len()));
    for access in &layout.operands {
        if let crate::backend::layout::Access::Strided(strides) = access {
            w.extend(strides.iter().map(|&s| s as u64));
        }
    }
    w
}

/// How far apart two floats are in units in the last place of their width (`u64::MAX` where
/// one is NaN and the other is not): the distance of their bit patterns, read as
/// sign-magnitude integers on one line.
fn ulps_apart(a: f64, b: f64, single: bool) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
    }
    let key = |x: f64| -> i128 {
        let (bits, sign) = if single {
            ((x as f32).to_bits() as i128 & 0x7fff_ffff, x.is_sign_negative())
        } else {
            (x.to_bits() as i128 & 0x7fff_ffff_ffff_ffff, x.is_sign_negative())
        };
        if sign {
            -bits
        } else {
            bits
        }
    };
    u64::try_from(key(a).abs_diff(key(b))).unwrap_or(u64::MAX)
}

/// The first element where the kernel's output differs from the CPU's by more than the case
/// allows, described.
fn compare(case: &Case, got: &Buffer, expected: &Buffer) -> Option<String> {
    let float = |b: &Buffer, i: usize| match b {
        Buffer::F32(v) => Some((v[i] as f64, true)),
        Buffer::F64(v) => Some((v[i], false)),
        _ => None,
    };
    let text = |b: &Buffer, i: usize| with_buffer!(b, |v: T| format!("{:?}", v[i]));
    (0..got.len()).find_map(|i| {
        let apart = match (float(got, i), float(expected, i)) {
            (Some((g, single)), Some((e, _))) => ulps_apart(g, e, single),
            _ => u64::from(text(got, i) != text(expected, i)) * u64::MAX,
        };
        (apart > case.ulps).then(|| {
            let (g, e) = (text(got, i), text(expected, i));
            format!("{}: element {i}: kernel {g}, CPU {e} ({apart} ulps apart)", case.name)
        })
    })
}

#[test]
fn kernels_run_on_the_host_give_the_cpu_backends_results() {
    let cases = cases();
    assert!(cases.len() > 300, "only {} cases", cases.len());
    let kernels: Vec<Kernel> = cases.iter().map(kernel_of).collect();
    let Some(library) = build(&kernels) else { return };
    let mut failures = Vec::new();
    for (k, case) in cases.iter().enumerate() {
        let n: usize = case.shape.iter().product();
        let mut outs: Vec<Buffer> =
            case.expected.iter().map(|e| Buffer::F64(vec![0.0; n]).cast(e.dtype())).collect();
        let mut pointers: Vec<*mut c_void> = case
            .operands
            .iter()
            .map(|(b, _)| with_buffer!(b, |v: T| v.as_ptr() as *mut c_void))
            .collect();
        for out in &mut outs {
            pointers.push(with_buffer!(out, |v: T| v.as_mut_ptr() as *mut c_void));
        }
        // SAFETY: the words are the kernel's parameters, and every buffer holds the elements
        // its operand's (or the output's) shape says, in the dtype the kernel reads or writes.
        unsafe { launch(&library, k, &words(case), &pointers) };
        for (got, expected) in outs.iter().zip(&case.expected) {
            failures.extend(compare(case, got, expected));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} kernels differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{} kernels agree with the CPU backend", cases.len());
}
