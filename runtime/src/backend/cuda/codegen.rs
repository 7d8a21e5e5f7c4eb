//! CUDA C for elementwise kernels and fused groups: one `__global__` function per operation
//! (or group), operand dtypes and broadcast pattern (see [`crate::backend::layout`]), the
//! element count, extents, bases and strides passed by value as 64-bit words in the layout of
//! the WGSL kernels' parameter buffer.
//!
//! Every dtype but the 16-bit floats has kernels; `bool` is stored as one byte, 0 or 1, as on
//! the host. Results follow the CPU kernels': integer arithmetic wraps (it runs on unsigned
//! types, where C defines wrapping), `x / 0` gives all ones and `x % 0` gives `x` (as XLA),
//! `MIN / -1` wraps, float to integer conversions truncate and saturate with NaN giving 0,
//! `max`/`min` propagate NaN and keep the first of equal operands, and the functions XLA
//! approximates itself are ported from the CPU's (see [`super::math`]).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::math;
use crate::backend::layout::Access;
use crate::backend::{ElementwiseGroup, ElementwiseOp, GroupValue};
use crate::dtype::DType;
use crate::exec::cpu::threefry;
use crate::primitives::{ArgOp, BinaryOp, CumOp, UnaryOp};

/// The name of every generated kernel's entry point.
pub(crate) const ENTRY: &str = "rjax_kernel";

/// Type names for every stored dtype, so that kernels read like the dtypes they run.
const PRELUDE: &str = "typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
struct w128 {
    u64 lo, hi;
};
";

/// What one kernel computes: the operation, its operands' dtypes and how each is read, the
/// output dtype, and the rank of the layout.
pub(crate) struct Kernel<'a> {
    pub op: ElementwiseOp,
    pub inputs: Vec<(DType, &'a Access)>,
    pub out: DType,
    pub rank: usize,
}

/// The dtypes kernels exist for (every dtype can still be stored and copied).
pub(crate) fn computes(dtype: DType) -> bool {
    !matches!(dtype, DType::F16 | DType::BF16) && !dtype.is_complex()
}

/// The C type a dtype's elements are stored as.
fn storage(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "u8",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::F16 | DType::BF16 | DType::C64 | DType::C128 => {
            unreachable!("no CUDA kernels for {dtype}")
        }
        int => int.short_name(),
    }
}

/// The C type a value of `dtype` has inside a kernel.
fn value_type(dtype: DType) -> &'static str {
    if dtype == DType::Bool {
        "bool"
    } else {
        storage(dtype)
    }
}

/// How many 64-bit parameter words a kernel over `rank` axes with these operands and
/// `outputs` outputs takes: the element count, the extents, one base per operand and output,
/// and the strides of each strided operand.
pub(crate) fn param_words(inputs: &[(DType, &Access)], rank: usize, outputs: usize) -> usize {
    let strided = inputs.iter().filter(|(_, a)| matches!(a, Access::Strided(_))).count();
    1 + rank + inputs.len() + outputs + strided * rank
}

/// The source of the kernel running `kernel`, or why there is none (the operation has no
/// CUDA kernel for these dtypes).
pub(crate) fn elementwise(kernel: &Kernel<'_>) -> Result<String, String> {
    let mut helpers = BTreeSet::new();
    let mut private = String::new();
    let value = expression(kernel, &mut helpers, &mut private)?;
    let mut s = format!(
        "// rjax elementwise kernel: {:?} of {} -> {} (rank {})\n",
        kernel.op,
        describe(&kernel.inputs),
        kernel.out,
        kernel.rank
    );
    s.push_str(PRELUDE);
    push_helpers(&mut s, &helpers);
    s.push_str(&private);
    let outs = [kernel.out];
    s.push_str(&entry_point(&kernel.inputs, kernel.rank, &outs));
    s.push_str(&load_operands(&kernel.inputs, kernel.rank, 1));
    let _ = writeln!(s, "        {}\n    }}\n}}", store(0, kernel.out, &value, base(kernel, 0)));
    Ok(s)
}

/// The word holding output `j`'s base.
fn base(kernel: &Kernel<'_>, j: usize) -> usize {
    1 + kernel.rank + kernel.inputs.len() + j
}

fn store(j: usize, dtype: DType, value: &str, base: usize) -> String {
    let value = if dtype == DType::Bool { format!("(u8)({value} ? 1 : 0)") } else { value.into() };
    format!("out{j}[p.w[{base}] + i] = {value};")
}

/// How each operand is read, for the kernel's leading comment.
fn describe(inputs: &[(DType, &Access)]) -> String {
    let described: Vec<String> = inputs.iter().map(|(d, a)| format!("{d}[{a}]")).collect();
    described.join(", ")
}

fn push_helpers(s: &mut String, helpers: &BTreeSet<&'static str>) {
    for name in math::closure(helpers) {
        s.push('\n');
        s.push_str(&math::source(name));
    }
}

/// The kernel's signature and the grid-stride loop over its elements, up to the loop body.
fn entry_point(inputs: &[(DType, &Access)], rank: usize, outs: &[DType]) -> String {
    let words = param_words(inputs, rank, outs.len());
    let mut args = vec!["const Params p".to_string()];
    for (i, (dtype, _)) in inputs.iter().enumerate() {
        args.push(format!("const {}* __restrict__ in{i}", storage(*dtype)));
    }
    for (j, dtype) in outs.iter().enumerate() {
        args.push(format!("{}* __restrict__ out{j}", storage(*dtype)));
    }
    format!(
        "
struct Params {{
    u64 w[{words}];
}};

extern \"C\" __global__ void {ENTRY}({}) {{
    const u64 n = p.w[0];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {{
",
        args.join(", ")
    )
}

/// The statements that load each operand's element for output element `i` as `x0`, `x1`, ...
/// (bools as `bool`), from `in0`, `in1`, ... read as their accesses say, with the parameter
/// words of [`param_words`] over `rank` axes and `outputs` output bases.
fn load_operands(inputs: &[(DType, &Access)], rank: usize, outputs: usize) -> String {
    let mut s = String::new();
    let nin = inputs.len();
    if inputs.iter().any(|(_, a)| matches!(a, Access::Strided(_))) {
        s.push_str("        u64 rest = i;\n");
        for k in (1..rank).rev() {
            let d = 1 + k;
            let _ = writeln!(
                s,
                "        const u64 c{k} = rest % p.w[{d}];\n        rest = rest / p.w[{d}];"
            );
        }
        s.push_str("        const u64 c0 = rest;\n");
    }
    // Strides follow every operand's and output's base.
    let mut stride_word = 1 + rank + nin + outputs;
    for (i, (dtype, access)) in inputs.iter().enumerate() {
        let base = 1 + rank + i;
        let index = match access {
            Access::Same => format!("p.w[{base}] + i"),
            Access::Scalar => format!("p.w[{base}]"),
            Access::Strided(strides) => {
                let mut terms = vec![format!("p.w[{base}]")];
                for (k, &stride) in strides.iter().enumerate() {
                    // The pattern fixes the axes the operand is broadcast over: no term.
                    if stride != 0 {
                        terms.push(format!("c{k} * p.w[{}]", stride_word + k));
                    }
                }
                stride_word += rank;
                terms.join(" + ")
            }
        };
        let load = format!("in{i}[{index}]");
        let load = if *dtype == DType::Bool { format!("({load} != 0)") } else { load };
        let _ = writeln!(s, "        const {} x{i} = {load};", value_type(*dtype));
    }
    s
}

/// The C expression of the kernel's value from the loaded operands `x0`, `x1`, `x2`, noting
/// the device functions it calls in `helpers` and writing ones made for this kernel alone
/// into `private`.
fn expression(
    kernel: &Kernel<'_>,
    helpers: &mut BTreeSet<&'static str>,
    private: &mut String,
) -> Result<String, String> {
    let dtype = kernel.inputs[0].0;
    for d in kernel.inputs.iter().map(|(d, _)| *d).chain([kernel.out]) {
        if !computes(d) {
            return Err(format!("no CUDA kernels for {d}"));
        }
    }
    let mut call = |name: &'static str, args: &str| {
        helpers.insert(name);
        format!("{name}({args})")
    };
    match kernel.op {
        ElementwiseOp::Unary(op) => unary(op, dtype, &mut call, private),
        ElementwiseOp::Binary(op) => binary(op, dtype, &mut call),
        ElementwiseOp::Select => Ok("(x0 ? x1 : x2)".to_string()),
        ElementwiseOp::Convert => Ok(convert(dtype, kernel.out)),
    }
}

type Call<'a> = dyn FnMut(&'static str, &str) -> String + 'a;

/// The unsigned type integer arithmetic of `dtype` wraps in (C's own wrapping arithmetic;
/// narrower types are promoted, and truncate back on the store).
fn unsigned_of(dtype: DType) -> &'static str {
    if dtype.size_of() == 8 {
        "u64"
    } else {
        "u32"
    }
}

fn refused(op: &str, dtype: DType) -> Result<String, String> {
    Err(format!("{op} has no CUDA kernel for {dtype}"))
}

fn unary(
    op: UnaryOp,
    dtype: DType,
    call: &mut Call<'_>,
    private: &mut String,
) -> Result<String, String> {
    if let UnaryOp::IntegerPow(n) = op {
        if dtype == DType::Bool {
            return refused(op.op_name(), dtype);
        }
        private.push_str(&integer_pow(n, dtype));
        return Ok("powi(x0)".to_string());
    }
    match dtype {
        DType::F32 | DType::F64 => float_unary(op, dtype == DType::F32, call),
        DType::Bool if op == UnaryOp::Not => Ok("!x0".to_string()),
        DType::Bool => refused(op.op_name(), dtype),
        int => int_unary(op, int),
    }
}

fn float_unary(op: UnaryOp, single: bool, call: &mut Call<'_>) -> Result<String, String> {
    use UnaryOp::*;
    // CUDA's function of this name for the kernel's precision.
    let libm = |name: &str| if single { format!("{name}f(x0)") } else { format!("{name}(x0)") };
    let pick = |f32_helper: &'static str, f64_form: String, call: &mut Call<'_>| {
        if single {
            call(f32_helper, "x0")
        } else {
            f64_form
        }
    };
    let one = if single { "1.0f" } else { "1.0" };
    Ok(match op {
        Neg => "-x0".to_string(),
        Abs => libm("fabs"),
        Sign => call(if single { "sign_f32" } else { "sign_f64" }, "x0"),
        Square => "x0 * x0".to_string(),
        Exp => pick("exp_xla", libm("exp"), call),
        Exp2 => libm("exp2"),
        Log => pick("log_xla", libm("log"), call),
        Log1p => pick("log1p_xla", call("log1p_f64", "x0"), call),
        Expm1 => libm("expm1"),
        Sqrt => libm("sqrt"),
        Rsqrt => format!("{one} / {}", libm("sqrt")),
        Cbrt => libm("cbrt"),
        Reciprocal => format!("{one} / x0"),
        Sin => libm("sin"),
        Cos => libm("cos"),
        Tan => libm("tan"),
        Asin => libm("asin"),
        Acos => libm("acos"),
        Atan => libm("atan"),
        Sinh => libm("sinh"),
        Cosh => libm("cosh"),
        Tanh => pick("tanh_xla", libm("tanh"), call),
        Asinh => libm("asinh"),
        Acosh => libm("acosh"),
        Atanh => libm("atanh"),
        Logistic => pick("logistic_xla", call("logistic_f64", "x0"), call),
        Erf => pick("erf_xla", libm("erf"), call),
        Erfc => libm("erfc"),
        ErfInv => pick("erf_inv_xla", call("erf_inv_f64", "x0"), call),
        Lgamma => libm("lgamma"),
        Floor => libm("floor"),
        Ceil => libm("ceil"),
        // rint rounds halves to even under the default rounding mode, as jnp.round does.
        Round => libm("rint"),
        IsNan => "isnan(x0)".to_string(),
        IsFinite => "isfinite(x0)".to_string(),
        // The CPU sums these series in f64; CUDA has no such functions to match them with.
        Digamma | BesselI0e | BesselI1e | Not | IntegerPow(_) => {
            return refused(op.op_name(), if single { DType::F32 } else { DType::F64 })
        }
    })
}

fn int_unary(op: UnaryOp, dtype: DType) -> Result<String, String> {
    use UnaryOp::*;
    let (t, u) = (storage(dtype), unsigned_of(dtype));
    let signed = dtype.is_signed_int();
    Ok(match op {
        Neg => format!("({t})(({u})0 - ({u})x0)"),
        Abs if signed => format!("(x0 < 0 ? ({t})(({u})0 - ({u})x0) : x0)"),
        Abs => "x0".to_string(),
        Sign if signed => format!("({t})((x0 > 0) - (x0 < 0))"),
        Sign => format!("({t})(x0 > 0)"),
        Square => format!("({t})(({u})x0 * ({u})x0)"),
        Not => format!("({t})~x0"),
        _ => return refused(op.op_name(), dtype),
    })
}

/// `powi(x) = x ** n`. For floats, compiler-rt's `__powisf2` as the CPU's `powi` computes it
/// (square and multiply over the bits of `|n|`, then one reciprocal for negative `n`),
/// unrolled for this `n`. For integers the same products in wrapping arithmetic, with negative
/// powers 0, as the CPU's integer kernel (its shape rule refuses them for user code).
fn integer_pow(n: i32, dtype: DType) -> String {
    let ty = storage(dtype);
    let float = dtype.is_float();
    let mul_type = if float { ty } else { unsigned_of(dtype) };
    let bits = if float { n.unsigned_abs() } else { n.max(0) as u32 };
    let mut body = format!(
        "\nstatic __device__ {ty} powi({ty} x) {{\n    {mul_type} a = ({mul_type})x;\n    {mul_type} r = 1;\n"
    );
    let mut bits = bits;
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
    if float && n < 0 {
        let _ = writeln!(body, "    return ({ty})1 / r;\n}}");
    } else {
        let _ = writeln!(body, "    return ({ty})r;\n}}");
    }
    body
}

fn binary(op: BinaryOp, dtype: DType, call: &mut Call<'_>) -> Result<String, String> {
    match dtype {
        DType::F32 | DType::F64 => float_binary(op, dtype, call),
        DType::Bool => bool_binary(op),
        int => int_binary(op, int, call),
    }
}

fn float_binary(op: BinaryOp, dtype: DType, call: &mut Call<'_>) -> Result<String, String> {
    use BinaryOp::*;
    let single = dtype == DType::F32;
    let libm = |name: &str| {
        if single {
            format!("{name}f(x0, x1)")
        } else {
            format!("{name}(x0, x1)")
        }
    };
    let infix = |sym: &str| format!("x0 {sym} x1");
    Ok(match op {
        Add => infix("+"),
        Sub => infix("-"),
        Mul => infix("*"),
        Div => infix("/"),
        Rem => libm("fmod"),
        Pow => libm("pow"),
        Max => call(if single { "max_f32" } else { "max_f64" }, "x0, x1"),
        Min => call(if single { "min_f32" } else { "min_f64" }, "x0, x1"),
        Atan2 => libm("atan2"),
        NextAfter => libm("nextafter"),
        Eq => infix("=="),
        // A negated equality: true for NaN operands.
        Ne => "!(x0 == x1)".to_string(),
        Lt => infix("<"),
        Le => infix("<="),
        Gt => infix(">"),
        Ge => infix(">="),
        And | Or | Xor => return refused(op.op_name(), dtype),
    })
}

fn int_binary(op: BinaryOp, dtype: DType, call: &mut Call<'_>) -> Result<String, String> {
    use BinaryOp::*;
    let (t, u) = (storage(dtype), unsigned_of(dtype));
    let wrapping = |sym: &str| format!("({t})(({u})x0 {sym} ({u})x1)");
    let infix = |sym: &str| format!("x0 {sym} x1");
    let signed = dtype.is_signed_int();
    Ok(match op {
        Add => wrapping("+"),
        Sub => wrapping("-"),
        Mul => wrapping("*"),
        // XLA's integer division: x / 0 is all ones, MIN / -1 wraps (C leaves it undefined,
        // so it is a negation here).
        Div if signed => {
            format!("(x1 == 0 ? ({t})-1 : (x1 == -1 ? ({t})(({u})0 - ({u})x0) : ({t})(x0 / x1)))")
        }
        Div => format!("(x1 == 0 ? ({t})~({u})0 : ({t})(x0 / x1))"),
        // x % 0 is x; MIN % -1 is 0.
        Rem if signed => format!("(x1 == 0 ? x0 : (x1 == -1 ? ({t})0 : ({t})(x0 % x1)))"),
        Rem => format!("(x1 == 0 ? x0 : ({t})(x0 % x1))"),
        Pow => call(ipow_name(dtype), "x0, x1"),
        Max => "(x1 > x0 ? x1 : x0)".to_string(),
        Min => "(x1 < x0 ? x1 : x0)".to_string(),
        And => format!("({t})(x0 & x1)"),
        Or => format!("({t})(x0 | x1)"),
        Xor => format!("({t})(x0 ^ x1)"),
        Eq => infix("=="),
        Ne => infix("!="),
        Lt => infix("<"),
        Le => infix("<="),
        Gt => infix(">"),
        Ge => infix(">="),
        Atan2 | NextAfter => return refused(op.op_name(), dtype),
    })
}

/// The device function raising integers of `dtype` to integer powers (see [`math::source`]).
fn ipow_name(dtype: DType) -> &'static str {
    match dtype {
        DType::I8 => "ipow_i8",
        DType::I16 => "ipow_i16",
        DType::I32 => "ipow_i32",
        DType::I64 => "ipow_i64",
        DType::U8 => "ipow_u8",
        DType::U16 => "ipow_u16",
        DType::U32 => "ipow_u32",
        DType::U64 => "ipow_u64",
        other => unreachable!("{other} is not an integer dtype"),
    }
}

/// The CPU's arithmetic on booleans (`+` is or, `*` is and, `x ** y` is `x | !y`, ...).
fn bool_binary(op: BinaryOp) -> Result<String, String> {
    use BinaryOp::*;
    Ok(match op {
        Add | Max | Or => "x0 | x1",
        Sub | Xor | Ne => "x0 != x1",
        Mul | Div | Min | And => "x0 & x1",
        Rem => "false",
        Pow => "x0 | !x1",
        Eq => "x0 == x1",
        Lt => "!x0 & x1",
        Le => "!x0 | x1",
        Gt => "x0 & !x1",
        Ge => "x0 | !x1",
        Atan2 | NextAfter => return refused(op.op_name(), DType::Bool),
    }
    .to_string())
}

/// `astype` with the CPU's rules: floats truncate toward zero and saturate into integers (NaN
/// gives 0), integers wrap, anything nonzero (NaN too) is true, and integers become floats
/// through f64, as the CPU converts them.
fn convert(from: DType, to: DType) -> String {
    let t = value_type(to);
    if from == to {
        return "x0".to_string();
    }
    if to == DType::Bool {
        return if from.is_float() { "!(x0 == 0)".to_string() } else { "x0 != 0".to_string() };
    }
    if from == DType::Bool {
        return format!("({t})(x0 ? 1 : 0)");
    }
    match (from.is_float(), to.is_float()) {
        (true, true) => format!("({t})x0"),
        (false, true) => format!("({t})(double)x0"),
        (true, false) => float_to_int(to),
        (false, false) => format!("({t})x0"),
    }
}

/// A float `x0` truncated into integer dtype `to`, saturating at its bounds, NaN giving 0:
/// CUDA's conversions to 64-bit integers saturate and take NaN to 0; narrower types clamp.
fn float_to_int(to: DType) -> String {
    let t = storage(to);
    match to {
        DType::I64 => "__double2ll_rz((double)x0)".to_string(),
        DType::U64 => "__double2ull_rz((double)x0)".to_string(),
        DType::U8 | DType::U16 | DType::U32 => {
            let max = (1u64 << (8 * to.size_of())) - 1;
            format!("({t})min((u64){max}ull, __double2ull_rz((double)x0))")
        }
        _ => {
            let bits = 8 * to.size_of() - 1;
            let (lo, hi) = (-(1i64 << bits), (1i64 << bits) - 1);
            format!("({t})max((i64)({lo}ll), min((i64){hi}ll, __double2ll_rz((double)x0)))")
        }
    }
}

/// The source of a fused group's kernel: each thread loads its element of every operand (read
/// as `inputs` say, over `rank` axes), runs the group's operations in order — each a device
/// function `op{k}` made from the same expressions as the one-operation kernels, so fused and
/// unfused results agree bit for bit — and stores the outputs.
pub(crate) fn fused(
    group: &ElementwiseGroup,
    inputs: &[(DType, &Access)],
    rank: usize,
) -> Result<String, String> {
    let nin = inputs.len();
    let mut helpers = BTreeSet::new();
    let mut functions = String::new();
    let same = Access::Same;
    let dtype_of = |v: GroupValue| match v {
        GroupValue::Operand(i) => inputs[i].0,
        GroupValue::Op(k) => group.ops[k].dtype,
    };
    for (k, op) in group.ops.iter().enumerate() {
        let kernel = Kernel {
            op: op.op,
            inputs: op.args.iter().map(|&a| (dtype_of(a), &same)).collect(),
            out: op.dtype,
            rank,
        };
        let mut private = String::new();
        let value = expression(&kernel, &mut helpers, &mut private)?;
        // Each operation's own helper (an integer power) gets the operation's name.
        let own = format!("powi{k}(");
        functions.push_str(&private.replace("powi(", &own));
        let params: Vec<String> = kernel
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (d, _))| format!("{} x{i}", value_type(*d)))
            .collect();
        let _ = write!(
            functions,
            "\nstatic __device__ __forceinline__ {} op{k}({}) {{\n    return {};\n}}\n",
            value_type(op.dtype),
            params.join(", "),
            value.replace("powi(", &own)
        );
    }
    let outs: Vec<DType> = group.outputs.iter().map(|&v| dtype_of(v)).collect();
    let mut s = format!("// rjax fused kernel: {} operations\n", group.ops.len());
    s.push_str(PRELUDE);
    push_helpers(&mut s, &helpers);
    s.push_str(&functions);
    s.push_str(&entry_point(inputs, rank, &outs));
    s.push_str(&load_operands(inputs, rank, outs.len()));
    let name = |v: GroupValue| match v {
        GroupValue::Operand(i) => format!("x{i}"),
        GroupValue::Op(k) => format!("v{k}"),
    };
    for (k, op) in group.ops.iter().enumerate() {
        let args: Vec<String> = op.args.iter().map(|&a| name(a)).collect();
        let ty = value_type(op.dtype);
        let _ = writeln!(s, "        const {ty} v{k} = op{k}({});", args.join(", "));
    }
    for (j, (&v, &dtype)) in group.outputs.iter().zip(&outs).enumerate() {
        let _ = writeln!(s, "        {}", store(j, dtype, &name(v), 1 + rank + nin + j));
    }
    s.push_str("    }\n}\n");
    Ok(s)
}

/// The source of the threefry-2x32 kernel (see
/// [`DeviceOp::Threefry2x32`](crate::backend::DeviceOp::Threefry2x32)) over `uint32` operands
/// `key0, key1, x0, x1` read as `inputs` say: the host's key schedule, rotations and wrapping
/// adds (`exec::cpu::threefry`), with its constants, the rounds unrolled.
pub(crate) fn threefry(inputs: &[(DType, &Access)], rank: usize) -> Result<String, String> {
    if let Some((d, _)) = inputs.iter().find(|(d, _)| *d != DType::U32) {
        return Err(format!("threefry2x32 takes uint32 operands, not {d}"));
    }
    let mut s = format!("// rjax threefry2x32 kernel (rank {rank})\n{PRELUDE}");
    s.push_str("\nstatic __device__ __forceinline__ u32 rotl(u32 x, u32 r) {\n");
    s.push_str("    return (x << r) | (x >> (32u - r));\n}\n");
    s.push_str(&entry_point(inputs, rank, &[DType::U32, DType::U32]));
    s.push_str(&load_operands(inputs, rank, 2));
    let _ =
        writeln!(s, "        const u32 ks[3] = {{x0, x1, x0 ^ x1 ^ {:#x}u}};", threefry::PARITY);
    s.push_str("        u32 a = x2 + ks[0];\n        u32 b = x3 + ks[1];\n");
    for group in 0..5 {
        for r in threefry::ROTATIONS[group % 2] {
            let _ = writeln!(s, "        a += b;\n        b = rotl(b, {r}u) ^ a;");
        }
        let _ = writeln!(
            s,
            "        a += ks[{}];\n        b += ks[{}] + {}u;",
            (group + 1) % 3,
            (group + 2) % 3,
            group + 1
        );
    }
    let base = 1 + rank + inputs.len();
    let _ = writeln!(s, "        out0[p.w[{base}] + i] = a;");
    let _ = writeln!(s, "        out1[p.w[{}] + i] = b;\n    }}\n}}", base + 1);
    Ok(s)
}

/// The C type that moves elements of `dtype` without looking at them: an unsigned integer of
/// its width.
fn word_type(dtype: DType) -> &'static str {
    match dtype.size_of() {
        1 => "u8",
        2 => "u16",
        4 => "u32",
        8 => "u64",
        _ => "w128",
    }
}

/// The source of the kernel setting `p.w[0]` elements of `dst` to `value[0]` (a pad's
/// background, see [`DeviceOp::Assemble`](crate::backend::DeviceOp::Assemble)).
// Run by the tests on the host; the launcher that runs them on a GPU comes with `Device::Cuda`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn fill(dtype: DType) -> String {
    let t = word_type(dtype);
    format!(
        "// rjax fill kernel: {dtype}\n{PRELUDE}
struct Params {{
    u64 w[1];
}};

extern \"C\" __global__ void {ENTRY}(const Params p, const {t}* __restrict__ value, {t}* __restrict__ dst) {{
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.w[0]; i += step) {{
        dst[i] = value[0];
    }}
}}
"
    )
}

/// The source of the kernel copying a region of `rank` axes (see
/// [`CopyRegion`](crate::backend::CopyRegion)): element `i` of the region, row-major over its
/// extents, goes from `src[src_offset + Σ c_k * src_stride_k]` to the same in `dst`, with the
/// words of [`copy_words`]. Strides may be negative; positions are computed in 64 bits.
// Run by the tests on the host; the launcher that runs them on a GPU comes with `Device::Cuda`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn copy(dtype: DType, rank: usize) -> String {
    let t = word_type(dtype);
    let mut s = format!(
        "// rjax strided copy kernel: {dtype}, rank {rank}\n{PRELUDE}
struct Params {{
    u64 w[{}];
}};

extern \"C\" __global__ void {ENTRY}(const Params p, const {t}* __restrict__ src, {t}* __restrict__ dst) {{
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < p.w[0]; i += step) {{
        u64 rest = i;
        i64 read = (i64)p.w[{}];
        i64 write = (i64)p.w[{}];
",
        3 * rank + 3,
        rank + 1,
        2 * rank + 2
    );
    for k in (0..rank).rev() {
        let _ = writeln!(
            s,
            "        {{\n            const i64 c = (i64)(rest % p.w[{e}]);\n            rest /= p.w[{e}];\n            read += c * (i64)p.w[{src}];\n            write += c * (i64)p.w[{dst}];\n        }}",
            e = 1 + k,
            src = rank + 2 + k,
            dst = 2 * rank + 3 + k
        );
    }
    s.push_str("        dst[write] = src[read];\n    }\n}\n");
    s
}

/// The parameter words of a [`copy`] of `region`: element count, extents, the source's
/// offset and strides, the destination's (strides as two's complement).
// Run by the tests on the host; the launcher that runs them on a GPU comes with `Device::Cuda`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn copy_words(region: &crate::backend::CopyRegion) -> Vec<u64> {
    let n: usize = region.extents.iter().product();
    let mut words = vec![n as u64];
    words.extend(region.extents.iter().map(|&e| e as u64));
    for view in [&region.src, &region.dst] {
        words.push(view.offset as u64);
        words.extend(view.strides.iter().map(|&s| s as i64 as u64));
    }
    words
}

/// The identity of `op`'s fold over `dtype`, as a C expression of its value type.
fn identity(op: CumOp, dtype: DType) -> String {
    let t = value_type(dtype);
    let (lowest, highest) = match dtype {
        DType::Bool => ("false".to_string(), "true".to_string()),
        DType::F32 => ("__int_as_float(0xff800000)".into(), "__int_as_float(0x7f800000)".into()),
        DType::F64 => (
            "__longlong_as_double(0xfff0000000000000LL)".into(),
            "__longlong_as_double(0x7ff0000000000000LL)".into(),
        ),
        int if int.is_signed_int() => {
            let bits = 8 * int.size_of() - 1;
            (
                format!("({t})(-{}ll - 1)", (1u64 << bits) - 1),
                format!("({t}){}ll", (1u64 << bits) - 1),
            )
        }
        unsigned => ("0".to_string(), format!("({t})~({})0", unsigned_of(unsigned))),
    };
    match op {
        CumOp::Sum => format!("({t})0"),
        CumOp::Prod => format!("({t})1"),
        CumOp::Max => lowest,
        CumOp::Min => highest,
    }
}

/// The source of a running fold ([`DeviceOp::Cumulative`](crate::backend::DeviceOp::Cumulative))
/// over `dtype`: one thread per row along the axis, folding from the identity in order (from
/// the end when `reverse`) exactly as the host's scan does, with the elementwise kernels'
/// `+`, `*`, `max` and `min`. Words: rows (`outer * inner`), the axis's length `n`, `inner`.
// Run by the tests on the host; the launcher that runs them on a GPU comes with `Device::Cuda`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn cumulative(op: CumOp, dtype: DType, reverse: bool) -> Result<String, String> {
    if !computes(dtype) {
        return Err(format!("no CUDA kernels for {dtype}"));
    }
    let binary_op = match op {
        CumOp::Sum => BinaryOp::Add,
        CumOp::Prod => BinaryOp::Mul,
        CumOp::Max => BinaryOp::Max,
        CumOp::Min => BinaryOp::Min,
    };
    let mut helpers = BTreeSet::new();
    let mut call = |name: &'static str, args: &str| {
        helpers.insert(name);
        format!("{name}({args})")
    };
    let combined = binary(binary_op, dtype, &mut call)?;
    let (t, v) = (storage(dtype), value_type(dtype));
    let mut s =
        format!("// rjax cumulative kernel: {op:?} of {dtype}, reverse {reverse}\n{PRELUDE}");
    push_helpers(&mut s, &helpers);
    let _ = write!(
        s,
        "
static __device__ __forceinline__ {v} combine({v} x0, {v} x1) {{
    return {combined};
}}

struct Params {{
    u64 w[3];
}};

extern \"C\" __global__ void {ENTRY}(const Params p, const {t}* __restrict__ src, {t}* __restrict__ dst) {{
    const u64 n = p.w[1], inner = p.w[2];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r < p.w[0]; r += step) {{
        const u64 base = (r / inner) * n * inner + r % inner;
        {v} acc = {};
        for (u64 k = 0; k < n; k++) {{
            const u64 at = base + ({}) * inner;
            acc = combine(acc, {});
            dst[at] = {};
        }}
    }}
}}
",
        identity(op, dtype),
        if reverse { "n - 1 - k" } else { "k" },
        if dtype == DType::Bool { "src[at] != 0" } else { "src[at]" },
        if dtype == DType::Bool { "(u8)(acc ? 1 : 0)" } else { "acc" },
    );
    Ok(s)
}

/// The source of `argmax`/`argmin` along an axis
/// ([`DeviceOp::ArgReduce`](crate::backend::DeviceOp::ArgReduce)) over `dtype`: one thread per
/// output, walking the axis in order and keeping the first best element, a NaN beating
/// everything (as on the host); the `int32` index is written. Words: outputs (`outer *
/// inner`), the axis's length `n`, `inner`.
// Run by the tests on the host; the launcher that runs them on a GPU comes with `Device::Cuda`.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn arg_reduce(op: ArgOp, dtype: DType) -> Result<String, String> {
    if !computes(dtype) {
        return Err(format!("no CUDA kernels for {dtype}"));
    }
    let (t, v) = (storage(dtype), value_type(dtype));
    let better = if op == ArgOp::Max { "x > best" } else { "x < best" };
    // Once the best is NaN nothing replaces it; a NaN replaces anything else.
    let better = if dtype.is_float() {
        format!("!isnan(best) && (isnan(x) || {better})")
    } else {
        better.to_string()
    };
    let load = |at: &str| {
        if dtype == DType::Bool {
            format!("(src[{at}] != 0)")
        } else {
            format!("src[{at}]")
        }
    };
    Ok(format!(
        "// rjax arg reduction: {op:?} of {dtype}\n{PRELUDE}
struct Params {{
    u64 w[3];
}};

extern \"C\" __global__ void {ENTRY}(const Params p, const {t}* __restrict__ src, i32* __restrict__ dst) {{
    const u64 n = p.w[1], inner = p.w[2];
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 r = (u64)blockIdx.x * blockDim.x + threadIdx.x; r < p.w[0]; r += step) {{
        const u64 base = (r / inner) * n * inner + r % inner;
        {v} best = {};
        i32 index = 0;
        for (u64 k = 1; k < n; k++) {{
            const {v} x = {};
            if ({better}) {{
                best = x;
                index = (i32)k;
            }}
        }}
        dst[r] = index;
    }}
}}
",
        load("base"),
        load("base + k * inner"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_pow_follows_compiler_rt_for_floats_and_wraps_for_integers() {
        // 5 = 0b101: r = a, then a = a^2, a = a^4, r = a * a^4.
        let s = integer_pow(5, DType::F32);
        assert_eq!(s.matches("r = r * a").count(), 2);
        assert_eq!(s.matches("a = a * a").count(), 2);
        assert!(integer_pow(-2, DType::F64).contains("return (double)1 / r"));
        let int = integer_pow(3, DType::I8);
        assert!(int.contains("u32 a = (u32)x"), "{int}");
        assert!(!integer_pow(-3, DType::I32).contains("r = r * a"));
    }

    #[test]
    fn conversions_saturate_into_narrow_integers() {
        assert_eq!(
            float_to_int(DType::I8),
            "(i8)max((i64)(-128ll), min((i64)127ll, __double2ll_rz((double)x0)))"
        );
        assert_eq!(
            float_to_int(DType::U16),
            "(u16)min((u64)65535ull, __double2ull_rz((double)x0))"
        );
        assert_eq!(convert(DType::I64, DType::F32), "(float)(double)x0");
        assert_eq!(convert(DType::F32, DType::Bool), "!(x0 == 0)");
    }

    #[test]
    fn refusals_name_the_operation_and_dtype() {
        let same = Access::Same;
        let kernel = Kernel {
            op: ElementwiseOp::Unary(UnaryOp::Digamma),
            inputs: vec![(DType::F32, &same)],
            out: DType::F32,
            rank: 1,
        };
        let err = elementwise(&kernel).unwrap_err();
        assert!(err.contains("digamma") && err.contains("float32"), "{err}");
        let half = Kernel { inputs: vec![(DType::F16, &same)], out: DType::F16, ..kernel };
        assert!(elementwise(&half).unwrap_err().contains("float16"));
    }
}
