//! Every elementwise operation, dtype and broadcast pattern, and a set of fused groups,
//! generated as CUDA C and compiled by NVRTC to CUBIN for Ampere and Hopper: zero failures.
//! Where NVRTC is not installed the compilations are skipped with the reason printed (CI
//! installs it and sets `RJAX_REQUIRE_NVRTC=1`), and the error it gives is checked instead.

use rayon::prelude::*;

use super::*;
use crate::backend::{GroupOp, GroupValue};
use crate::primitives::{
    ArgOp, ArgReduce, Aval, BinaryOp, Convert, CumOp, Cumulative, Primitive, Select, UnaryOp,
};

const ARCHS: [CudaArch; 2] = [CudaArch::SM_80, CudaArch::SM_90];

/// The dtypes with CUDA kernels.
fn dtypes() -> Vec<DType> {
    DType::ALL.into_iter().filter(|&d| codegen::computes(d)).collect()
}

pub(super) fn unary_ops() -> Vec<UnaryOp> {
    use UnaryOp::*;
    vec![
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
        Erfc,
        ErfInv,
        Lgamma,
        Digamma,
        BesselI0e,
        BesselI1e,
        Floor,
        Ceil,
        Round,
        IsNan,
        IsFinite,
        IntegerPow(0),
        IntegerPow(3),
        IntegerPow(-2),
    ]
}

pub(super) fn binary_ops() -> Vec<BinaryOp> {
    use BinaryOp::*;
    vec![
        Add, Sub, Mul, Div, Rem, Pow, Max, Min, Atan2, NextAfter, Eq, Ne, Lt, Le, Gt, Ge, And, Or,
        Xor,
    ]
}

/// The output dtype of `p` over operands of these dtypes, if its shape rule takes them.
fn accepted(p: &dyn Primitive, dtypes: &[DType]) -> Option<DType> {
    let avals: Vec<Aval> =
        dtypes.iter().map(|&dtype| Aval { shape: vec![4, 3], dtype, weak: false }).collect();
    p.abstract_eval(&avals).ok().map(|out| out[0].dtype)
}

/// Operations the CPU computes that have no CUDA kernel, and say so.
fn without_kernel(op: ElementwiseOp) -> bool {
    use UnaryOp::*;
    matches!(op, ElementwiseOp::Unary(Digamma | BesselI0e | BesselI1e))
}

/// Every kernel source the table covers, with a name for messages.
fn table() -> Vec<(String, String)> {
    let mut sources = Vec::new();
    let mut add = |name: String, source: Result<String, Error>, op: ElementwiseOp| match source {
        Ok(s) => sources.push((name, s)),
        Err(e) => assert!(without_kernel(op), "{name}: {e}"),
    };
    let (full, row, one): (&[usize], &[usize], &[usize]) = (&[4, 3], &[1, 3], &[]);
    for d in dtypes() {
        for op in unary_ops() {
            if let Some(out) = accepted(&op, &[d]) {
                let e = ElementwiseOp::Unary(op);
                add(format!("{op:?} {d}"), elementwise_source(e, &[(d, full)], (out, full)), e);
            }
        }
        for op in binary_ops() {
            if let Some(out) = accepted(&op, &[d, d]) {
                let e = ElementwiseOp::Binary(op);
                let operands = [(d, full), (d, row)];
                add(format!("{op:?} {d}"), elementwise_source(e, &operands, (out, full)), e);
            }
        }
        if accepted(&Select, &[DType::Bool, d, d]).is_some() {
            let operands = [(DType::Bool, &[4usize, 1][..]), (d, full), (d, one)];
            let e = ElementwiseOp::Select;
            add(format!("select {d}"), elementwise_source(e, &operands, (d, full)), e);
        }
        for to in dtypes() {
            let convert = Convert { dtype: to, weak: false };
            if accepted(&convert, &[d]).is_some() {
                let e = ElementwiseOp::Convert;
                add(
                    format!("convert {d} -> {to}"),
                    elementwise_source(e, &[(d, row)], (to, row)),
                    e,
                );
            }
        }
    }
    for dtype in [DType::Bool, DType::F16, DType::F32, DType::F64, DType::C128] {
        sources.push((format!("fill {dtype}"), codegen::fill(dtype)));
        for rank in 0..=4 {
            sources.push((format!("copy {dtype} rank {rank}"), codegen::copy(dtype, rank)));
        }
    }
    for dtype in dtypes() {
        for op in [CumOp::Sum, CumOp::Prod, CumOp::Max, CumOp::Min] {
            if accepted(&Cumulative { op, axis: 0, reverse: false }, &[dtype]).is_some() {
                let name = format!("cumulative {op:?} {dtype}");
                sources.push((name, codegen::cumulative(op, dtype, op == CumOp::Max).unwrap()));
            }
        }
        for op in [ArgOp::Max, ArgOp::Min] {
            if accepted(&ArgReduce { op, axis: 0 }, &[dtype]).is_some() {
                sources.push((format!("{op:?} {dtype}"), codegen::arg_reduce(op, dtype).unwrap()));
            }
        }
    }
    for (name, shapes) in threefry_cases() {
        sources.push((name.to_string(), threefry_source(&shapes, &[4, 3]).unwrap()));
    }
    for (name, group, operands) in groups() {
        let operands: Vec<(DType, &[usize])> =
            operands.iter().map(|(d, s)| (*d, s.as_slice())).collect();
        let source = fused_source(&group, &operands, &[4, 3]).expect(name);
        sources.push((name.to_string(), source));
    }
    sources
}

/// Threefry's operands broadcast to `[4, 3]`: keys shared, counters per element or per row.
pub(super) fn threefry_cases() -> Vec<(&'static str, Vec<&'static [usize]>)> {
    vec![
        ("threefry, one key", vec![&[], &[], &[4, 3], &[4, 3]]),
        ("threefry, a key per row", vec![&[4, 1], &[4, 1], &[1, 3], &[4, 3]]),
    ]
}

fn op(op: ElementwiseOp, args: &[GroupValue], dtype: DType) -> GroupOp {
    GroupOp { op, args: args.to_vec(), dtype }
}

/// A fused group's name, its operations and its operands' dtypes and shapes.
type Case = (&'static str, ElementwiseGroup, Vec<(DType, Vec<usize>)>);

/// Fused groups over `[4, 3]`: broadcasts, several outputs, mixed dtypes, two integer powers.
fn groups() -> Vec<Case> {
    use ElementwiseOp::{Binary, Convert as Cast, Select as Pick, Unary};
    use GroupValue::{Op, Operand};
    let f32s = |shapes: &[&[usize]]| shapes.iter().map(|s| (DType::F32, s.to_vec())).collect();
    vec![
        (
            "tanh(x * w + b) and its square",
            ElementwiseGroup {
                ops: vec![
                    op(Binary(BinaryOp::Mul), &[Operand(0), Operand(1)], DType::F32),
                    op(Binary(BinaryOp::Add), &[Op(0), Operand(2)], DType::F32),
                    op(Unary(UnaryOp::Tanh), &[Op(1)], DType::F32),
                    op(Unary(UnaryOp::IntegerPow(2)), &[Op(2)], DType::F32),
                    op(Unary(UnaryOp::IntegerPow(-3)), &[Op(2)], DType::F32),
                ],
                outputs: vec![Op(2), Op(3), Op(4)],
                reduction: None,
            },
            f32s(&[&[4, 3], &[1, 3], &[]]),
        ),
        (
            "where(x > 0, exp(x), log1p(x)) as f64, and the mask",
            ElementwiseGroup {
                ops: vec![
                    op(Binary(BinaryOp::Gt), &[Operand(0), Operand(1)], DType::Bool),
                    op(Unary(UnaryOp::Exp), &[Operand(0)], DType::F32),
                    op(Unary(UnaryOp::Log1p), &[Operand(0)], DType::F32),
                    op(Pick, &[Op(0), Op(1), Op(2)], DType::F32),
                    op(Cast, &[Op(3)], DType::F64),
                    op(Unary(UnaryOp::ErfInv), &[Op(4)], DType::F64),
                ],
                outputs: vec![Op(5), Op(0)],
                reduction: None,
            },
            f32s(&[&[4, 3], &[]]),
        ),
        (
            "integer arithmetic over a column and a row",
            ElementwiseGroup {
                ops: vec![
                    op(Binary(BinaryOp::Div), &[Operand(0), Operand(1)], DType::I32),
                    op(Binary(BinaryOp::Pow), &[Op(0), Operand(1)], DType::I32),
                    op(Cast, &[Op(1)], DType::U8),
                ],
                outputs: vec![Op(2)],
                reduction: None,
            },
            vec![(DType::I32, vec![4, 1]), (DType::I32, vec![1, 3])],
        ),
    ]
}

/// Whether NVRTC is here to compile with; when it is not, the error names it.
fn nvrtc_present() -> bool {
    match compile("extern \"C\" __global__ void k() {}", CudaArch::SM_80) {
        Ok(_) => true,
        Err(e) => {
            let message = e.to_string();
            assert!(message.contains("NVRTC") && message.contains("cuda"), "{message}");
            assert!(
                std::env::var("RJAX_REQUIRE_NVRTC").as_deref() != Ok("1"),
                "RJAX_REQUIRE_NVRTC=1 but {message}"
            );
            eprintln!("skipping the NVRTC compilations: {message}");
            false
        }
    }
}

#[test]
fn every_kernel_compiles_to_cubin_for_ampere_and_hopper() {
    let sources = table();
    // Every operation and dtype the CPU computes, but the three series functions.
    assert!(sources.len() > 400, "only {} kernels in the table", sources.len());
    if !nvrtc_present() {
        return;
    }
    let failures: Vec<String> = sources
        .par_iter()
        .flat_map(|(name, source)| ARCHS.par_iter().map(move |&arch| (name, source, arch)))
        .filter_map(|(name, source, arch)| match compile(source, arch) {
            Err(e) => Some(format!("{name}: {e}")),
            // An ELF image: NVIDIA's assembler ran.
            Ok(cubin) => (cubin[..4] != *b"\x7fELF").then(|| format!("{name}: not an ELF image")),
        })
        .collect();
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    eprintln!("{} kernels compiled for sm_80 and sm_90", sources.len());
}

#[test]
fn compiled_kernels_are_cached_in_the_process() {
    if !nvrtc_present() {
        return;
    }
    let source = &table()[0].1;
    let first = compile(source, CudaArch::SM_90).unwrap();
    let again = compile(source, CudaArch::SM_90).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
}

#[test]
fn a_compile_error_carries_the_log_and_the_source() {
    if !nvrtc_present() {
        return;
    }
    let err = compile("extern \"C\" __global__ void k() { undeclared(); }", CudaArch::SM_80)
        .unwrap_err()
        .to_string();
    assert!(err.contains("undeclared") && err.contains("sm_80"), "{err}");
}

/// Compares `source` with the snapshot in `snapshots/{name}`; `RJAX_UPDATE_SNAPSHOTS=1`
/// rewrites it.
fn snapshot(name: &str, source: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/backend/cuda/snapshots")
        .join(name);
    if std::env::var("RJAX_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::write(&path, source).unwrap();
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        source, stored,
        "the CUDA C of {name} changed (RJAX_UPDATE_SNAPSHOTS=1 rewrites it)"
    );
}

#[test]
fn generated_sources_match_their_snapshots() {
    let add_row = elementwise_source(
        ElementwiseOp::Binary(BinaryOp::Add),
        &[(DType::F32, &[4, 3]), (DType::F32, &[3])],
        (DType::F32, &[4, 3]),
    )
    .unwrap();
    snapshot("add_row.cu", &add_row);
    let (_, group, operands) = groups().remove(0);
    let operands: Vec<(DType, &[usize])> = operands.iter().map(|(d, s)| (*d, &s[..])).collect();
    snapshot("fused_tanh.cu", &fused_source(&group, &operands, &[4, 3]).unwrap());
    let cast = elementwise_source(ElementwiseOp::Convert, &[(DType::F64, &[8])], (DType::I8, &[8]));
    snapshot("convert_f64_i8.cu", &cast.unwrap());
}

#[test]
fn operands_that_do_not_broadcast_are_an_error() {
    let err = elementwise_source(
        ElementwiseOp::Binary(BinaryOp::Add),
        &[(DType::F32, &[4, 3]), (DType::F32, &[4])],
        (DType::F32, &[4, 3]),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("[4]") && err.contains("[4, 3]"), "{err}");
}

#[test]
fn the_disk_cache_returns_what_was_written_for_the_same_source_only() {
    let dir = std::env::temp_dir().join(format!("rjax-cuda-cache-{}", std::process::id()));
    let entry = nvrtc::DiskEntry::in_dir(&dir, "kernel source", CudaArch::SM_80, (12, 9));
    assert_eq!(entry.read("kernel source"), None);
    entry.write("kernel source", b"\x7fELF bytes");
    assert_eq!(entry.read("kernel source").as_deref(), Some(&b"\x7fELF bytes"[..]));
    // Another source under the same name (a hash collision) is a miss.
    assert_eq!(entry.read("another source"), None);
    let _ = std::fs::remove_dir_all(dir);
}
