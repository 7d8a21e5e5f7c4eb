//! WGSL for elementwise kernels: one compute shader per operation, operand dtypes and
//! broadcast pattern (see [`crate::backend::layout`]), the extents and offsets read at run
//! time from a small parameter buffer.
//!
//! Values of dtypes `float32`, `int32` and `uint32` are stored as WGSL's `f32`, `i32` and
//! `u32`; `bool` as one `u32` (0 or 1) per element, since WGSL has no 8-bit storage. Results
//! follow the CPU kernels': integer division by zero gives all ones and `x % 0` gives `x` (as
//! XLA), arithmetic wraps, float `%` is the exact `fmod`, `max`/`min` propagate NaN, and
//! `exp`, `log`, `log1p`, `tanh`, `logistic`, `erf` and `erf_inv` are XLA's own f32
//! approximations, ported operation for operation from `exec/cpu/xla_math.rs` (fused
//! multiply-adds included) so that the two backends agree to the ulp or better.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::math;
use crate::backend::layout::Access;
use crate::backend::{ElementwiseGroup, ElementwiseOp, GroupValue};
use crate::dtype::DType;
use crate::primitives::{BinaryOp, UnaryOp};

/// Invocations per workgroup; a launch of `n` elements is `ceil(n / 256)` workgroups laid out
/// over x and y (each at most 65535).
pub(super) const WORKGROUP: u32 = 256;

/// What one kernel computes: the operation, its operands' dtypes and how each is read, the
/// output dtype, and the rank of the layout.
pub(super) struct Kernel<'a> {
    pub op: ElementwiseOp,
    pub inputs: Vec<(DType, &'a Access)>,
    pub out: DType,
    pub rank: usize,
}

/// The words of a launch's parameter buffer: element count, window extents, each operand's
/// (then the output's) first element in its binding, and the strides of strided operands.
pub(super) fn params(n: usize, dims: &[usize], bases: &[usize], inputs: &[&Access]) -> Vec<u32> {
    let word = |v: usize| u32::try_from(v).expect("a window's offsets fit 32 bits");
    let mut words = vec![word(n)];
    words.extend(dims.iter().map(|&d| word(d)));
    words.extend(bases.iter().map(|&b| word(b)));
    for access in inputs {
        if let Access::Strided(strides) = access {
            words.extend(strides.iter().map(|&s| word(s)));
        }
    }
    words
}

/// The WGSL storage type of a dtype's elements.
pub(super) fn storage(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::I32 => "i32",
        DType::U32 | DType::Bool => "u32",
        other => unreachable!("no WGSL storage for {other}"),
    }
}

/// The dtypes kernels exist for.
pub(super) fn computes(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::I32 | DType::U32 | DType::Bool)
}

/// Why `op` over operands of `dtype` has no kernel, when it has none: the `float64`
/// functions not yet written in f64 arithmetic (Vulkan's built-in ones take 32 bits at most).
pub(super) fn refusal(op: ElementwiseOp, dtype: DType) -> Option<String> {
    if dtype != DType::F64 {
        return None;
    }
    let name = match op {
        ElementwiseOp::Unary(UnaryOp::IntegerPow(_)) => return None,
        ElementwiseOp::Unary(u) if unary_f64(u, &mut |n, _| n.to_string()).is_none() => u.op_name(),
        ElementwiseOp::Binary(b) if binary_f64(b, &mut |n, _| n.to_string()).is_none() => {
            b.op_name()
        }
        _ => return None,
    };
    Some(format!("{name} of float64 has no GPU kernel yet"))
}

/// The shader for `kernel`.
pub(super) fn elementwise(kernel: &Kernel<'_>) -> String {
    let rank = kernel.rank;
    let nin = kernel.inputs.len();
    let mut helpers = BTreeSet::new();
    let mut private = String::new();
    let value = expression(kernel, &mut helpers, &mut private);

    let mut s = String::new();
    let described: Vec<String> = kernel.inputs.iter().map(|(d, a)| format!("{d}[{a}]")).collect();
    let _ = writeln!(
        s,
        "// rjax elementwise kernel: {:?} of {} -> {} (rank {rank})",
        kernel.op,
        described.join(", "),
        kernel.out
    );
    let _ = writeln!(s, "@group(0) @binding(0) var<storage, read> params: array<u32>;");
    for (i, (dtype, _)) in kernel.inputs.iter().enumerate() {
        let _ = writeln!(
            s,
            "@group(0) @binding({}) var<storage, read> in{i}: array<{}>;",
            i + 1,
            storage(*dtype)
        );
    }
    let _ = writeln!(
        s,
        "@group(0) @binding({}) var<storage, read_write> out: array<{}>;",
        nin + 1,
        storage(kernel.out)
    );
    for name in math::closure(&helpers) {
        s.push('\n');
        s.push_str(&math::source(name));
    }
    s.push_str(&private);
    s.push_str(&entry_point("i"));
    s.push_str(&load_operands(&kernel.inputs, rank, 1));
    let base = |k: usize| 1 + rank + k;
    let store = if kernel.out == DType::Bool { format!("select(0u, 1u, {value})") } else { value };
    let _ = writeln!(s, "    out[params[{}] + i] = {store};\n}}", base(nin));
    s
}

/// The opening of a kernel's `main` over one invocation per element: its element number
/// `index` (workgroups of [`WORKGROUP`] laid out over x and y, as `launch` dispatches them),
/// and the return of invocations past the `params[0]` elements.
pub(super) fn entry_point(index: &str) -> String {
    format!(
        "
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>,
        @builtin(local_invocation_index) lane: u32) {{
    let {index} = (wg.y * groups.x + wg.x) * {WORKGROUP}u + lane;
    if ({index} >= params[0]) {{
        return;
    }}
"
    )
}

/// The statements that load each operand's element for output element `i` as `x0`, `x1`, ...
/// (bools as `bool`), from bindings `in0`, `in1`, ... read as `accesses` say, with the
/// parameter layout of [`params`] over `rank` axes with `outputs` output bases.
fn load_operands(inputs: &[(DType, &Access)], rank: usize, outputs: usize) -> String {
    let mut s = String::new();
    let nin = inputs.len();
    let base = |k: usize| 1 + rank + k;
    if inputs.iter().any(|(_, a)| matches!(a, Access::Strided(_))) {
        s.push_str("    var rest = i;\n");
        for k in (1..rank).rev() {
            let _ = writeln!(
                s,
                "    let c{k} = rest % params[{d}];\n    rest = rest / params[{d}];",
                d = 1 + k
            );
        }
        s.push_str("    let c0 = rest;\n");
    }
    // Strides follow every operand's and output's base; outputs after the operands.
    let mut stride_word = 1 + rank + nin + outputs;
    for (i, (dtype, access)) in inputs.iter().enumerate() {
        let index = match access {
            Access::Same => format!("params[{}] + i", base(i)),
            Access::Scalar => format!("params[{}]", base(i)),
            Access::Strided(strides) => {
                let mut terms = vec![format!("params[{}]", base(i))];
                for (k, &stride) in strides.iter().enumerate() {
                    // The pattern fixes which axes the operand is broadcast over: those
                    // terms are left out.
                    if stride != 0 {
                        terms.push(format!("c{k} * params[{}]", stride_word + k));
                    }
                }
                stride_word += rank;
                terms.join(" + ")
            }
        };
        let load = format!("in{i}[{index}]");
        let load = if *dtype == DType::Bool { format!("({load} != 0u)") } else { load };
        let _ = writeln!(s, "    let x{i} = {load};");
    }
    s
}

/// The WGSL expression of the kernel's value, from the loaded operands `x0`, `x1`, `x2`,
/// noting the helper functions it calls in `helpers` and writing ones made for this kernel
/// alone into `private`.
fn expression(
    kernel: &Kernel<'_>,
    helpers: &mut BTreeSet<&'static str>,
    private: &mut String,
) -> String {
    let dtype = kernel.inputs[0].0;
    let mut call = |name: &'static str, args: &str| {
        helpers.insert(name);
        format!("{name}({args})")
    };
    match kernel.op {
        ElementwiseOp::Unary(op) => unary(op, dtype, &mut call, private),
        ElementwiseOp::Binary(op) => binary(op, dtype, &mut call),
        ElementwiseOp::Select => "select(x2, x1, x0)".to_string(),
        ElementwiseOp::Convert => convert(dtype, kernel.out, &mut call),
    }
}

type Call<'a> = dyn FnMut(&'static str, &str) -> String + 'a;

fn unary(op: UnaryOp, dtype: DType, call: &mut Call<'_>, private: &mut String) -> String {
    use UnaryOp::*;
    let x = "x0";
    if let IntegerPow(n) = op {
        private.push_str(&integer_pow(n, dtype));
        return "powi(x0)".to_string();
    }
    match dtype {
        DType::F32 => match op {
            Neg => "-x0".to_string(),
            Abs => "abs(x0)".to_string(),
            Sign => call("sign_f32", x),
            Square => "x0 * x0".to_string(),
            Exp => call("exp_xla", x),
            Exp2 => call("exp2_f32", x),
            Log => call("log_xla", x),
            Log1p => call("log1p_xla", x),
            Expm1 => call("expm1_f32", x),
            Sqrt => "sqrt(x0)".to_string(),
            Rsqrt => "1.0 / sqrt(x0)".to_string(),
            Cbrt => call("cbrt_f32", x),
            Reciprocal => "1.0 / x0".to_string(),
            Sin => call("sin_f32", x),
            Cos => call("cos_f32", x),
            Tan => call("tan_f32", x),
            Asin => call("asin_f32", x),
            Acos => call("acos_f32", x),
            Atan => call("atan_f32", x),
            Sinh => call("sinh_f32", x),
            Cosh => call("cosh_f32", x),
            Tanh => call("tanh_xla", x),
            Asinh => call("asinh_f32", x),
            Acosh => call("acosh_f32", x),
            Atanh => call("atanh_f32", x),
            Logistic => call("logistic_xla", x),
            Erf => call("erf_xla", x),
            ErfInv => call("erf_inv_xla", x),
            Floor => "floor(x0)".to_string(),
            Ceil => "ceil(x0)".to_string(),
            // WGSL's round takes halves to even, as jnp.round does.
            Round => "round(x0)".to_string(),
            IsNan => call("is_nan", x),
            IsFinite => call("is_finite", x),
            Not | IntegerPow(_) => {
                unreachable!("{} of float32 is refused by its shape rule", op.op_name())
            }
            Erfc | Lgamma | Digamma | BesselI0e | BesselI1e => {
                unreachable!("{} has no GPU kernel: its device_op says so", op.op_name())
            }
        },
        DType::F64 => unary_f64(op, call).unwrap_or_else(|| {
            unreachable!("{} of float64 has no GPU kernel: `refusal` says so", op.op_name())
        }),
        DType::I32 => match op {
            Neg => "-x0".to_string(),
            // WGSL's abs of the most negative i32 is itself, as wrapping_abs.
            Abs => "abs(x0)".to_string(),
            Sign => "sign(x0)".to_string(),
            Square => "x0 * x0".to_string(),
            Not => "~x0".to_string(),
            _ => unreachable!("{} of int32 is refused by its shape rule", op.op_name()),
        },
        DType::U32 => match op {
            Neg => "0u - x0".to_string(),
            Abs => "x0".to_string(),
            Sign => "select(0u, 1u, x0 > 0u)".to_string(),
            Square => "x0 * x0".to_string(),
            Not => "~x0".to_string(),
            _ => unreachable!("{} of uint32 is refused by its shape rule", op.op_name()),
        },
        DType::Bool => match op {
            Not => "!x0".to_string(),
            _ => unreachable!("{} of bool is refused by its shape rule", op.op_name()),
        },
        other => unreachable!("no kernels for {other}"),
    }
}

/// The expression of `op` on a `float64` operand, where there is a kernel for it.
fn unary_f64(op: UnaryOp, call: &mut Call<'_>) -> Option<String> {
    use UnaryOp::*;
    let x = "x0";
    Some(match op {
        Neg => "-x0".to_string(),
        Abs => "abs(x0)".to_string(),
        Sign => call("sign_f64", x),
        Square => "x0 * x0".to_string(),
        Exp => call("exp_f64", x),
        Exp2 => call("exp2_f64", x),
        Log => call("log_f64", x),
        Log1p => call("log1p_f64", x),
        Expm1 => call("expm1_f64", x),
        Sqrt => "sqrt(x0)".to_string(),
        Rsqrt => "1.0lf / sqrt(x0)".to_string(),
        Cbrt => call("cbrt_f64", x),
        Reciprocal => "1.0lf / x0".to_string(),
        Sin => call("sin_f64", x),
        Cos => call("cos_f64", x),
        Tan => call("tan_f64", x),
        Asin => call("asin_f64", x),
        Acos => call("acos_f64", x),
        Atan => call("atan_f64", x),
        Asinh => call("asinh_f64", x),
        Acosh => call("acosh_f64", x),
        Atanh => call("atanh_f64", x),
        Erf => call("erf_f64", x),
        ErfInv => call("erf_inv_f64", x),
        Sinh => call("sinh_f64", x),
        Cosh => call("cosh_f64", x),
        Tanh => call("tanh_f64", x),
        Logistic => call("logistic_f64", x),
        Floor => "floor(x0)".to_string(),
        Ceil => "ceil(x0)".to_string(),
        Round => "round(x0)".to_string(),
        IsNan => call("is_nan_f64", x),
        IsFinite => call("is_finite_f64", x),
        _ => return None,
    })
}

/// `powi(x) = x ** n` as the CPU computes it: for floats compiler-rt's `__powisf2` (square
/// and multiply over the bits of `|n|`, then one reciprocal for negative `n`), unrolled for
/// this `n`, so the products are the same ones in the same order; for integers the same
/// products wrap to the same bits as `n` repeated multiplications.
fn integer_pow(n: i32, dtype: DType) -> String {
    let ty = storage(dtype);
    let one = match dtype {
        DType::F32 => "1.0",
        DType::F64 => "1.0lf",
        DType::I32 => "1",
        _ => "1u",
    };
    let mut body =
        format!("\nfn powi(x: {ty}) -> {ty} {{\n    var a = x;\n    var r: {ty} = {one};\n");
    let mut bits = n.unsigned_abs();
    loop {
        if bits & 1 == 1 {
            body.push_str("    r = r * a;\n");
        }
        bits >>= 1;
        if bits == 0 {
            break;
        }
        body.push_str("    a = a * a;\n");
    }
    if n < 0 {
        body.push_str(&format!("    return {one} / r;\n}}\n"));
    } else {
        body.push_str("    return r;\n}\n");
    }
    body
}

fn binary(op: BinaryOp, dtype: DType, call: &mut Call<'_>) -> String {
    use BinaryOp::*;
    let args = "x0, x1";
    let infix = |sym: &str| format!("x0 {sym} x1");
    match dtype {
        DType::F32 => match op {
            Add => infix("+"),
            Sub => infix("-"),
            Mul => infix("*"),
            Div => infix("/"),
            Rem => call("fmod_f32", args),
            Pow => call("pow_f32", args),
            Max => call("max_f32", args),
            Min => call("min_f32", args),
            Atan2 => call("atan2_f32", args),
            NextAfter => call("next_after_f32", args),
            Eq => infix("=="),
            // Written as a negated equality: true for NaN operands, whatever `!=` compiles to.
            Ne => "!(x0 == x1)".to_string(),
            Lt => infix("<"),
            Le => infix("<="),
            Gt => "x1 < x0".to_string(),
            Ge => "x1 <= x0".to_string(),
            And | Or | Xor => {
                unreachable!("{} of float32 is refused by its shape rule", op.op_name())
            }
        },
        DType::F64 => binary_f64(op, call).unwrap_or_else(|| {
            unreachable!("{} of float64 has no GPU kernel: `refusal` says so", op.op_name())
        }),
        DType::I32 | DType::U32 => {
            let (zero, all_ones) =
                if dtype == DType::I32 { ("0", "-1") } else { ("0u", "0xffffffffu") };
            match op {
                Add => infix("+"),
                Sub => infix("-"),
                Mul => infix("*"),
                // XLA's (and the CPU kernels') integer division: x / 0 is all ones, and
                // MIN / -1 wraps to MIN, which WGSL gives too.
                Div => format!("select(x0 / x1, {all_ones}, x1 == {zero})"),
                // x % 0 is x; MIN % -1 is 0 in WGSL as in wrapping_rem.
                Rem => format!("select(x0 % x1, x0, x1 == {zero})"),
                Pow => call(if dtype == DType::I32 { "ipow_i32" } else { "ipow_u32" }, args),
                Max => format!("max({args})"),
                Min => format!("min({args})"),
                And => infix("&"),
                Or => infix("|"),
                Xor => infix("^"),
                Eq => infix("=="),
                Ne => infix("!="),
                Lt => infix("<"),
                Le => infix("<="),
                Gt => infix(">"),
                Ge => infix(">="),
                Atan2 | NextAfter => {
                    unreachable!("{} of integers is refused by its shape rule", op.op_name())
                }
            }
        }
        DType::Bool => match op {
            Max | Or => infix("|"),
            Min | And => infix("&"),
            Xor | Ne => infix("!="),
            Eq => infix("=="),
            Lt => "!x0 & x1".to_string(),
            Le => "!x0 | x1".to_string(),
            Gt => "x0 & !x1".to_string(),
            Ge => "x0 | !x1".to_string(),
            _ => unreachable!("{} of bool is refused by its shape rule", op.op_name()),
        },
        other => unreachable!("no kernels for {other}"),
    }
}

/// The expression of `op` on two `float64` operands, where there is a kernel for it.
fn binary_f64(op: BinaryOp, call: &mut Call<'_>) -> Option<String> {
    use BinaryOp::*;
    let args = "x0, x1";
    let infix = |sym: &str| format!("x0 {sym} x1");
    Some(match op {
        Add => infix("+"),
        Sub => infix("-"),
        Mul => infix("*"),
        Div => infix("/"),
        Rem => call("fmod_f64", args),
        Pow => call("pow_f64", args),
        Atan2 => call("atan2_f64", args),
        NextAfter => call("next_after_f64", args),
        Max => call("max_f64", args),
        Min => call("min_f64", args),
        Eq => infix("=="),
        Ne => "!(x0 == x1)".to_string(),
        Lt => infix("<"),
        Le => infix("<="),
        Gt => "x1 < x0".to_string(),
        Ge => "x1 <= x0".to_string(),
        _ => return None,
    })
}

/// `astype` between the kernel dtypes, with the CPU's rules: floats truncate toward zero and
/// saturate into integers (NaN gives 0), integers wrap, anything nonzero (NaN too) is true,
/// and integers round to the nearest float, ties to even.
fn convert(from: DType, to: DType, call: &mut Call<'_>) -> String {
    use DType::*;
    match (from, to) {
        (F32, I32) => call("f32_to_i32", "x0"),
        (F32, U32) => call("f32_to_u32", "x0"),
        (F32, Bool) => "!(x0 == 0.0)".to_string(),
        // The two 16-bit halves convert exactly and their sum rounds once, to nearest even,
        // however the device rounds a direct conversion.
        (I32, F32) => "f32(x0 >> 16u) * 65536.0 + f32(x0 & 0xffff)".to_string(),
        (U32, F32) => "f32(x0 >> 16u) * 65536.0 + f32(x0 & 0xffffu)".to_string(),
        (I32, U32) => "bitcast<u32>(x0)".to_string(),
        (U32, I32) => "bitcast<i32>(x0)".to_string(),
        (I32, Bool) => "x0 != 0".to_string(),
        (U32, Bool) => "x0 != 0u".to_string(),
        (Bool, F32) => "select(0.0, 1.0, x0)".to_string(),
        (Bool, I32) => "select(0, 1, x0)".to_string(),
        (Bool, U32) => "select(0u, 1u, x0)".to_string(),
        // Every f32, i32 and u32 is an f64; f64 to f32 rounds to nearest even.
        (F32 | I32 | U32, F64) => "f64(x0)".to_string(),
        (F64, F32) => "f32(x0)".to_string(),
        (F64, I32) => call("to_i32_f64", "x0"),
        (F64, U32) => call("to_u32_f64", "x0"),
        (F64, Bool) => "!(x0 == 0.0lf)".to_string(),
        (Bool, F64) => "select(0.0lf, 1.0lf, x0)".to_string(),
        (a, b) => unreachable!("a conversion from {a} to {b} is a relabelling or has no kernel"),
    }
}

/// WGSL for `fn combine(s0, s1)`: binary `op` on two stored values of `dtype`, exactly as the
/// elementwise kernels compute it (bool is stored as `u32` 0 or 1), preceded by the helper
/// functions it calls. Scatters combine updates with it.
pub(super) fn combine_function(op: BinaryOp, dtype: DType) -> String {
    let mut helpers = BTreeSet::new();
    let mut call = |name: &'static str, args: &str| {
        helpers.insert(name);
        format!("{name}({args})")
    };
    let value = binary(op, dtype, &mut call);
    let ty = storage(dtype);
    let (load, store) = if dtype == DType::Bool {
        ("s0 != 0u", format!("select(0u, 1u, {value})"))
    } else {
        ("s0", value)
    };
    let mut s = String::new();
    for name in math::closure(&helpers) {
        s.push_str(&math::source(name));
        s.push('\n');
    }
    let _ = write!(
        s,
        "fn combine(s0: {ty}, s1: {ty}) -> {ty} {{\n    let x0 = {load};\n    let x1 = {};\n    return {store};\n}}\n",
        load.replace("s0", "s1")
    );
    s
}

/// The WGSL type a value of `dtype` has inside a kernel (bools are stored as `u32`).
fn value_type(dtype: DType) -> &'static str {
    if dtype == DType::Bool {
        "bool"
    } else {
        storage(dtype)
    }
}

/// The shader of a fused group: each invocation loads its element of every operand (read as
/// `inputs` say, with [`params`]' layout over `rank` axes and one base per output), runs the
/// group's operations in order — each a function `op{k}` made from the same expressions as
/// the one-operation kernels, so fused and unfused results agree bit for bit — and stores
/// the outputs.
pub(super) fn fused(group: &ElementwiseGroup, inputs: &[(DType, &Access)], rank: usize) -> String {
    let mut s = format!("// rjax fused kernel: {} operations\n", group.ops.len());
    s.push_str(&group_bindings(group, inputs));
    s.push_str(&group_functions(group, inputs, rank, &[]));
    s.push_str(&entry_point("i"));
    s.push_str(&group_body(group, inputs, rank));
    s.push_str("}\n");
    s
}

/// The dtype of a value of `group` whose operands have `inputs`' dtypes.
pub(super) fn group_dtype(
    group: &ElementwiseGroup,
    inputs: &[(DType, &Access)],
    v: GroupValue,
) -> DType {
    match v {
        GroupValue::Operand(i) => inputs[i].0,
        GroupValue::Op(k) => group.ops[k].dtype,
    }
}

/// The bindings of a fused group's kernel: the parameters, then `in0, in1, ...`, then
/// `out0, out1, ...`.
pub(super) fn group_bindings(group: &ElementwiseGroup, inputs: &[(DType, &Access)]) -> String {
    let nin = inputs.len();
    let mut s = "@group(0) @binding(0) var<storage, read> params: array<u32>;\n".to_string();
    for (i, (dtype, _)) in inputs.iter().enumerate() {
        let ty = storage(*dtype);
        let _ = writeln!(s, "@group(0) @binding({}) var<storage, read> in{i}: array<{ty}>;", i + 1);
    }
    for (j, &v) in group.outputs.iter().enumerate() {
        let ty = storage(group_dtype(group, inputs, v));
        let binding = nin + 1 + j;
        let _ = writeln!(
            s,
            "@group(0) @binding({binding}) var<storage, read_write> out{j}: array<{ty}>;"
        );
    }
    s
}

/// The helper functions a fused group's operations call (and `extra` ones, each once),
/// then the operations as functions `op0, op1, ...`.
pub(super) fn group_functions(
    group: &ElementwiseGroup,
    inputs: &[(DType, &Access)],
    rank: usize,
    extra: &[&'static str],
) -> String {
    let mut helpers: BTreeSet<&'static str> = extra.iter().copied().collect();
    let mut functions = String::new();
    let same = Access::Same;
    for (k, op) in group.ops.iter().enumerate() {
        let kernel = Kernel {
            op: op.op,
            inputs: op.args.iter().map(|&a| (group_dtype(group, inputs, a), &same)).collect(),
            out: op.dtype,
            rank,
        };
        let mut private = String::new();
        let value = expression(&kernel, &mut helpers, &mut private);
        // Each operation's own helpers (an integer power's) get the operation's name.
        let own = format!("powi{k}(");
        functions.push_str(&private.replace("powi(", &own));
        let params: Vec<String> = kernel
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (d, _))| format!("x{i}: {}", value_type(*d)))
            .collect();
        let _ = write!(
            functions,
            "\nfn op{k}({}) -> {} {{\n    return {};\n}}\n",
            params.join(", "),
            value_type(op.dtype),
            value.replace("powi(", &own)
        );
    }
    let mut s = String::new();
    for name in math::closure(&helpers) {
        s.push('\n');
        s.push_str(&math::source(name));
    }
    s.push_str(&functions);
    s
}

/// The WGSL name of a group's value inside [`group_body`].
pub(super) fn group_value_name(v: GroupValue) -> String {
    match v {
        GroupValue::Operand(i) => format!("x{i}"),
        GroupValue::Op(k) => format!("v{k}"),
    }
}

/// The statements computing a fused group's values for element `i` of its shape (operand
/// `x{i}`, operation `v{k}`) and storing its outputs.
pub(super) fn group_body(
    group: &ElementwiseGroup,
    inputs: &[(DType, &Access)],
    rank: usize,
) -> String {
    let nin = inputs.len();
    let mut s = load_operands(inputs, rank, group.outputs.len());
    for (k, op) in group.ops.iter().enumerate() {
        let args: Vec<String> = op.args.iter().map(|&a| group_value_name(a)).collect();
        let _ = writeln!(s, "    let v{k} = op{k}({});", args.join(", "));
    }
    for (j, &v) in group.outputs.iter().enumerate() {
        let value = group_value_name(v);
        let store = if group_dtype(group, inputs, v) == DType::Bool {
            format!("select(0u, 1u, {value})")
        } else {
            value
        };
        let _ = writeln!(s, "    out{j}[params[{}] + i] = {store};", 1 + rank + nin + j);
    }
    s
}

/// The bindings of an array read in chunks, from binding `first` on: `{name}0`,
/// `{name}1`, ... of `chunk.elements` elements each but the last, and the functions that
/// read and write its element `i` wherever it lies: `{name}_at(i)` and `{name}_set(i, v)`
/// (with `write`). An array larger than one binding (128 MiB on lavapipe) is read this
/// way, within one kernel.
pub(super) fn chunked_binding(
    name: &str,
    ty: &str,
    first: usize,
    chunks: &super::Chunks,
    write: bool,
) -> String {
    let access = if write { "read_write" } else { "read" };
    let mut s = String::new();
    for c in 0..chunks.count {
        let _ = writeln!(
            s,
            "@group(0) @binding({}) var<storage, {access}> {name}{c}: array<{ty}>;",
            first + c
        );
    }
    let size = chunks.elements;
    let _ = write!(
        s,
        "\nfn {name}_at(i: u32) -> {ty} {{\n    let c = i / {size}u;\n    let k = i % {size}u;\n"
    );
    for c in 1..chunks.count {
        let _ = writeln!(s, "    if (c == {c}u) {{\n        return {name}{c}[k];\n    }}");
    }
    let _ = writeln!(s, "    return {name}0[k];\n}}");
    if write {
        let _ = write!(
            s,
            "\nfn {name}_set(i: u32, v: {ty}) {{\n    let c = i / {size}u;\n    let k = i % {size}u;\n"
        );
        for c in 1..chunks.count {
            let _ = writeln!(
                s,
                "    if (c == {c}u) {{\n        {name}{c}[k] = v;\n        return;\n    }}"
            );
        }
        let _ = writeln!(s, "    {name}0[k] = v;\n}}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_pow_follows_compiler_rt() {
        // 5 = 0b101: r = a, then a = a^2, a = a^4, r = a * a^4.
        let s = integer_pow(5, DType::F32);
        assert_eq!(s.matches("r = r * a").count(), 2);
        assert_eq!(s.matches("a = a * a").count(), 2);
        assert!(integer_pow(-2, DType::F32).contains("return 1.0 / r"));
        assert!(!integer_pow(0, DType::I32).contains("r = r * a"));
    }
}
