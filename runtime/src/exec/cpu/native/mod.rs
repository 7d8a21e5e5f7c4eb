//! Fused elementwise groups compiled to machine code.
//!
//! A large group whose inputs are read in place and whose ops are all plain arithmetic runs
//! best as one loop that loads its inputs into registers, computes every op there and streams
//! its outputs to memory. W1 (`x*x + x*2.0` over 25M f32) runs at 1.1-1.2x the machine's copy
//! time as such a loop, against 1.45-1.6x as passes of each op over short chunks
//! ([`super::fused_float`]); `sum((p - t)**2)` takes about 0.7x the time of the passes. A
//! group's loop depends on its ops, known only once the program is specialized, so on x86-64
//! Linux CPUs with AVX-512F it is assembled then (with `iced-x86`), once per cached plan, into
//! a page of executable memory.
//!
//! A group that ends in a reduction of all its elements (a loss such as `sum((p - t)**2)`)
//! folds the reduced value into registers as it goes: `NativeLoop::run` leaves one partial
//! result per lane of each unrolled vector, which the caller folds like a row of the
//! reduction. A reduction over trailing axes whose rows hold at least `MIN_ROW_LEN` elements
//! (`sum(x*x, axis=1)`) runs the loop once per row. (Their bits differ from the slice path's
//! pairwise fold; they are the same on every run and thread count.) The elements after the
//! last whole trip run in one more trip whose loads, stores and folds are masked to them.
//!
//! Broadcast inputs that repeat every row of at least `MIN_ROW_LEN` elements (a bias added
//! to every row of `x @ w`) are read in place too: the loop runs once per row, and each such
//! input's pointer starts at its first element for every row; inputs that hold one value per
//! row (a row's mean in a layer norm) are scalars set for each row (see `NativeLoop::row`). On
//! `max(x + b, 0)` over 5000 x 5000 f32 this takes 4.7-5.1 ms against 8.3-8.6 ms on the slice
//! path, which gathers the bias into every tile.
//!
//! Each op maps to the instruction that computes the same IEEE operation as its scalar
//! function (`vaddps` for `+`, `vsqrtps` for `sqrt`, `max`/`min` with the scalar functions'
//! NaN rule), or, for the f32 `exp`, `log`, `tanh` and `logistic`, to the scalar function's
//! operations one by one (`math`), so a compiled loop's outputs have the slice path's bits.
//! Groups with other ops, other broadcasts (along rows, or repeating more often), transposed
//! outputs, reductions over leading axes or short rows (or of all elements, with broadcast
//! inputs), or more live values than registers are not compiled and run as before.
//!
//! Setting the environment variable `RJAX_NATIVE_LOOPS=0` turns compiled loops off (to compare
//! the two paths).

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use iced_x86::code_asm::*;

use crate::exec::fusion::{FusedGroup, Layout, Load, ReduceLayout, Value};
use crate::primitives::binary::BinaryOp;
use crate::primitives::unary::UnaryOp;
use crate::primitives::{ReduceOp, SliceOp};

mod math;

/// A group's compiled loop, made on first use (see `NativeCache::get`).
#[derive(Default)]
pub struct NativeCache(OnceLock<Option<NativeLoop>>);

impl fmt::Debug for NativeCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match self.0.get() {
            None => "not compiled yet",
            Some(None) => "not compilable",
            Some(Some(_)) => "compiled",
        };
        write!(f, "NativeCache({state})")
    }
}

impl NativeCache {
    /// `group`'s loop over elements of `elem_bytes` bytes (4 or 8: the group's
    /// [`FusedGroup::slice_dtype`]), compiled on the first call; `None` when the group or the
    /// CPU does not suit one.
    pub(crate) fn get(&self, group: &FusedGroup, elem_bytes: usize) -> Option<&NativeLoop> {
        self.0.get_or_init(|| compile(group, elem_bytes)).as_ref()
    }

    /// Whether the group's loop has been compiled.
    pub fn compiled(&self) -> bool {
        matches!(self.0.get(), Some(Some(_)))
    }
}

/// A group's loop, in two forms: streaming its outputs to memory (non-temporal stores, which
/// need each output's pointer aligned to 64 bytes) and storing them plainly.
pub(crate) struct NativeLoop {
    streaming: Code,
    plain: Code,
    /// Elements each trip of the loop computes.
    block: usize,
    /// How many inputs are read from memory (the others are scalars).
    in_memory: usize,
    elem_bytes: usize,
    row: Option<usize>,
}

/// The loop's signature: pointers to each in-memory input's first element, pointers to each
/// output's (in the group's order; then, for a loop that folds, to its partials; then to the
/// masks of the trip after the whole blocks), a pointer to the scalar inputs' values (in the
/// group's order), and the number of whole blocks.
type Entry = unsafe extern "sysv64" fn(*const *const u8, *const *mut u8, *const u8, usize);

impl NativeLoop {
    /// Elements each trip of the loop computes: [`NativeLoop::run`] computes whole blocks and
    /// up to a block less one more.
    pub(crate) fn block(&self) -> usize {
        self.block
    }

    /// For a group with broadcast inputs, the length of the rows they follow, at least
    /// [`MIN_ROW_LEN`]: each repeats every `row` elements of the iteration order (a bias added
    /// to every row, [`Load::period`]) or holds one value per row ([`Load::per_row`]). The
    /// caller then runs the loop once per row, passing a repeating input's first element every
    /// time while the other pointers move on by a row, and a per-row input's value for the
    /// row among the scalars.
    pub(crate) fn row(&self) -> Option<usize> {
        self.row
    }

    /// Computes `blocks * self.block + rest` elements of every output (`rest` below a block:
    /// a last trip with masked loads and stores, which touch no element past them). The loop
    /// of a group that reduces takes one more pointer after the outputs': `block` elements, the
    /// first holding the reduction's identity, where it leaves its `block` partial results
    /// (element `i` folds elements `i`, `i + block`, `i + 2 * block`, ... of the reduced
    /// value, in order).
    ///
    /// With `stream` the outputs are written with non-temporal stores, which are weakly
    /// ordered: the caller issues a store fence after its last run, before anything reads
    /// them. (Fenced in every run, a group run once per row of a thousand elements took 1.7x
    /// as long.)
    ///
    /// # Safety
    /// `inputs` holds [`NativeLoop::in_memory`] pointers, each valid for reads of that many
    /// elements; `outputs` one pointer per output of the group, each valid for writes of that
    /// many elements, not overlapping the inputs, and with `stream` each aligned to 64 bytes,
    /// then for a group that reduces, the partials' pointer, valid for reads and writes of
    /// `block` elements; `scalars` points to one value per scalar input.
    pub(crate) unsafe fn run(
        &self,
        stream: bool,
        inputs: &[*const u8],
        outputs: &[*mut u8],
        scalars: *const u8,
        blocks: usize,
        rest: usize,
    ) {
        debug_assert_eq!(inputs.len(), self.in_memory);
        debug_assert!(rest < self.block);
        let lanes = 64 / self.elem_bytes;
        let masks: [u16; 4] = std::array::from_fn(|u| {
            let on = rest.saturating_sub(u * lanes).min(lanes);
            ((1u32 << on) - 1) as u16
        });
        let mut pointers = [std::ptr::null_mut::<u8>(); POINTER_REGISTERS.len() + 1];
        pointers[..outputs.len()].copy_from_slice(outputs);
        pointers[outputs.len()] = masks.as_ptr().cast_mut().cast();
        let code = if stream { &self.streaming } else { &self.plain };
        // SAFETY: `code` holds a function assembled for this signature (`assemble`), which
        // reads and writes only the ranges the caller vouches for: the masks select the
        // `rest` elements after the blocks.
        unsafe {
            let entry: Entry = std::mem::transmute::<*const u8, Entry>(code.ptr);
            entry(inputs.as_ptr(), pointers.as_ptr(), scalars, blocks)
        }
    }
}

/// Compiles `group`'s loop, or says why not (as `None`).
fn compile(group: &FusedGroup, elem_bytes: usize) -> Option<NativeLoop> {
    if !enabled() || !std::is_x86_feature_detected!("avx512f") {
        return None;
    }
    let width = match elem_bytes {
        4 => Width::F32,
        8 => Width::F64,
        _ => return None,
    };
    let shape = Shape::of(group, width)?;
    // Four vectors per value and trip where registers allow: independent instructions to
    // overlap, and fewer trips.
    let (streaming, unroll) = [4, 2, 1]
        .into_iter()
        .find_map(|unroll| Some((assemble(group, &shape, width, unroll, true)?, unroll)))?;
    let plain = assemble(group, &shape, width, unroll, false)?;
    Some(NativeLoop {
        streaming: Code::new(&streaming)?,
        plain: Code::new(&plain)?,
        block: unroll * width.lanes(),
        in_memory: shape.in_memory,
        elem_bytes,
        row: shape.row,
    })
}

/// Whether compiled loops are on (`RJAX_NATIVE_LOOPS=0` turns them off).
fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("RJAX_NATIVE_LOOPS").map_or(true, |v| v != "0"))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    F32,
    F64,
}

impl Width {
    fn lanes(self) -> usize {
        match self {
            Width::F32 => 16,
            Width::F64 => 8,
        }
    }

    fn bytes(self) -> usize {
        64 / self.lanes()
    }
}

/// What a group's loop reads and computes, checked to suit a compiled loop.
struct Shape {
    /// Per input of the group: where the loop finds it.
    inputs: Vec<InputAt>,
    in_memory: usize,
    /// Per value: the index of the last op that reads it.
    last_use: HashMap<Value, usize>,
    /// Constants the ops need in registers.
    constants: Vec<Constant>,
    /// The reduction of all elements that ends the group, and the op whose value it folds.
    fold: Option<(ReduceOp, usize)>,
    /// The period of the group's broadcast inputs (all the same, see [`NativeLoop::row`]).
    row: Option<usize>,
}

#[derive(Clone, Copy)]
enum InputAt {
    /// The `k`-th in-memory input.
    Memory(usize),
    /// The `k`-th scalar.
    Scalar(usize),
}

/// A value every lane of a register holds, as the bits of one element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Constant {
    SignBit,
    AllButSign,
    One,
}

impl Constant {
    fn bits(self, width: Width) -> u64 {
        match (self, width) {
            (Constant::SignBit, Width::F32) => 0x8000_0000,
            (Constant::AllButSign, Width::F32) => 0x7fff_ffff,
            (Constant::One, Width::F32) => u64::from(1f32.to_bits()),
            (Constant::SignBit, Width::F64) => 1 << 63,
            (Constant::AllButSign, Width::F64) => !(1 << 63),
            (Constant::One, Width::F64) => 1f64.to_bits(),
        }
    }
}

/// Rows of a reduction over trailing axes at least this long compile: the caller runs the loop
/// once per row, which costs a call and a fold of the lane partials (tens of nanoseconds),
/// small against reading a row of a thousand elements or more from memory.
pub(crate) const MIN_ROW_LEN: usize = 1024;

/// The mask registers of a trip's unrolled vectors in the masked trip that ends the loop
/// (`k1` is scratch for `max` and `min`).
const TAIL_MASKS: [AsmRegisterK; 4] = [k2, k3, k4, k5];

/// The registers that hold the in-memory inputs' and the outputs' pointers (`rax` holds the
/// byte offset of the current block, `rcx` the blocks left, `rdi` and `rsi` the pointer
/// arrays).
const POINTER_REGISTERS: [AsmRegister64; 11] =
    [r8, r9, r10, r11, rdx, rbx, rbp, r12, r13, r14, r15];

/// Of [`POINTER_REGISTERS`], those the called function must restore.
const CALLEE_SAVED: [AsmRegister64; 6] = [rbx, rbp, r12, r13, r14, r15];

const ZMM: [AsmRegisterZmm; 32] = [
    zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13, zmm14,
    zmm15, zmm16, zmm17, zmm18, zmm19, zmm20, zmm21, zmm22, zmm23, zmm24, zmm25, zmm26, zmm27,
    zmm28, zmm29, zmm30, zmm31,
];

impl Shape {
    fn of(group: &FusedGroup, width: Width) -> Option<Shape> {
        if group.outputs.iter().any(|o| o.layout != Layout::RowMajor) {
            return None;
        }
        let fold = match &group.reduction {
            None => None,
            Some(r) => {
                let whole = match r.layout {
                    ReduceLayout::Columns { kept } => kept == 1,
                    ReduceLayout::Rows { inner } => inner >= MIN_ROW_LEN,
                };
                match (whole, r.input, r.op) {
                    (
                        true,
                        Value::Op(j),
                        ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min,
                    ) => Some((r.op, j)),
                    _ => return None,
                }
            }
        };
        let (mut in_memory, mut scalars) = (0, 0);
        let mut inputs = Vec::with_capacity(group.inputs.len());
        let mut row = None;
        for (_, load) in &group.inputs {
            inputs.push(match load {
                Load::Full => (InputAt::Memory(in_memory), in_memory += 1).0,
                Load::Scalar => (InputAt::Scalar(scalars), scalars += 1).0,
                Load::Strided(_) => {
                    // Read in place from its start for every row, or one value per row held
                    // as a scalar (the caller's runs, once per row, see `NativeLoop::row`).
                    let period = load.period(&group.shape);
                    let len = period.or_else(|| load.per_row(&group.shape));
                    let len = len.filter(|&len| len >= MIN_ROW_LEN)?;
                    if *row.get_or_insert(len) != len {
                        return None;
                    }
                    match period {
                        Some(_) => (InputAt::Memory(in_memory), in_memory += 1).0,
                        None => (InputAt::Scalar(scalars), scalars += 1).0,
                    }
                }
            });
        }
        let rows_reduced = group.reduction.as_ref().map(|r| r.layout);
        if row.is_some_and(|inner| rows_reduced.is_some_and(|l| l != ReduceLayout::Rows { inner }))
        {
            // A loop run once per row folds whole rows of the reduction only.
            return None;
        }
        let pointers = in_memory + group.outputs.len() + usize::from(fold.is_some());
        if pointers > POINTER_REGISTERS.len() {
            return None;
        }
        // A `max` or `min` fold combines with the binary op's code, which needs its constant.
        let mut constants = match fold {
            Some((ReduceOp::Max | ReduceOp::Min, _)) => vec![Constant::One],
            _ => Vec::new(),
        };
        let mut last_use = HashMap::new();
        for (j, op) in group.ops.iter().enumerate() {
            let constant = constant_of(op.slice?, width)?;
            if let Some(c) = constant.filter(|c| !constants.contains(c)) {
                constants.push(c);
            }
            for &v in &op.inputs {
                last_use.insert(v, j);
            }
        }
        Some(Shape { inputs, in_memory, last_use, constants, fold, row })
    }
}

/// Whether `op` compiles for elements of `width`, and the constant it needs in a register,
/// if any. (The transcendental functions of [`math`] read theirs from memory.)
fn constant_of(op: SliceOp, width: Width) -> Option<Option<Constant>> {
    use BinaryOp::{Add, Div, Max, Min, Mul, Sub};
    use UnaryOp::{Abs, Neg, Reciprocal, Rsqrt, Sqrt, Square};
    match op {
        SliceOp::Binary(Add | Sub | Mul | Div) => Some(None),
        // `max` and `min` flush what they pick by multiplying it by 1.
        SliceOp::Binary(Max | Min) => Some(Some(Constant::One)),
        SliceOp::Unary(Square | Sqrt) => Some(None),
        SliceOp::Unary(Neg) => Some(Some(Constant::SignBit)),
        SliceOp::Unary(Abs) => Some(Some(Constant::AllButSign)),
        SliceOp::Unary(Reciprocal | Rsqrt) => Some(Some(Constant::One)),
        SliceOp::Unary(u) if width == Width::F32 && math::compiles(u) => Some(None),
        _ => None,
    }
}

/// Assembles the loop with `unroll` vectors per value and trip; `None` when its values need
/// more registers than there are.
fn assemble(
    group: &FusedGroup,
    shape: &Shape,
    width: Width,
    unroll: usize,
    stream: bool,
) -> Option<Vec<u8>> {
    let mut emitter = Emitter::new(group, shape, width, unroll, stream).ok()?;
    emitter.function().ok()?;
    emitter.asm.assemble(0).ok()
}

/// Why assembling stopped: the encoder refused an instruction, or the registers ran out.
enum Stop {
    Encoder,
    OutOfRegisters,
}

impl From<IcedError> for Stop {
    fn from(_: IcedError) -> Stop {
        Stop::Encoder
    }
}

struct Emitter<'a> {
    asm: CodeAssembler,
    group: &'a FusedGroup,
    shape: &'a Shape,
    width: Width,
    unroll: usize,
    stream: bool,
    /// Vector registers not holding anything.
    free: Vec<usize>,
    /// The registers that hold a value in this trip (one per unrolled vector; a scalar's
    /// register repeated).
    held: HashMap<Value, Vec<usize>>,
    /// Per group input, the register holding its scalar.
    scalar_registers: HashMap<usize, usize>,
    constant_registers: Vec<(Constant, usize)>,
    input_pointers: Vec<AsmRegister64>,
    output_pointers: Vec<AsmRegister64>,
    /// For a loop that folds: the partials' pointer, and the accumulators.
    fold: Option<(AsmRegister64, Vec<usize>)>,
    /// Whether the trip being emitted is the masked one after the whole blocks.
    masked: bool,
    /// Constants read from memory (by [`math`]'s sequences), each with the label of its place
    /// after the code.
    pool: Vec<(u32, CodeLabel)>,
}

impl<'a> Emitter<'a> {
    fn new(
        group: &'a FusedGroup,
        shape: &'a Shape,
        width: Width,
        unroll: usize,
        stream: bool,
    ) -> Result<Emitter<'a>, Stop> {
        let mut pointers = POINTER_REGISTERS.into_iter();
        let input_pointers = pointers.by_ref().take(shape.in_memory).collect();
        let output_pointers = pointers.by_ref().take(group.outputs.len()).collect();
        let fold = shape.fold.map(|_| (pointers.next().expect("counted in Shape::of"), vec![]));
        Ok(Emitter {
            asm: CodeAssembler::new(64)?,
            group,
            shape,
            width,
            unroll,
            stream,
            free: (0..ZMM.len()).rev().collect(),
            held: HashMap::new(),
            scalar_registers: HashMap::new(),
            constant_registers: Vec::new(),
            input_pointers,
            output_pointers,
            fold,
            masked: false,
            pool: Vec::new(),
        })
    }

    /// The whole function: save registers, set up pointers, scalars and constants, the loop,
    /// restore and return.
    fn function(&mut self) -> Result<(), Stop> {
        let used = |r: &AsmRegister64| {
            self.input_pointers.contains(r)
                || self.output_pointers.contains(r)
                || self.fold.as_ref().is_some_and(|(p, _)| p == r)
        };
        let saved: Vec<AsmRegister64> = CALLEE_SAVED.into_iter().filter(used).collect();
        for &r in &saved {
            self.asm.push(r)?;
        }
        self.load_scalars()?;
        self.load_constants()?;
        for (k, &p) in self.input_pointers.clone().iter().enumerate() {
            self.asm.mov(p, qword_ptr(rdi + 8 * k as i32))?;
        }
        for (o, &p) in self.output_pointers.clone().iter().enumerate() {
            self.asm.mov(p, qword_ptr(rsi + 8 * o as i32))?;
        }
        self.start_fold()?;
        let mut done = self.asm.create_label();
        let mut trip = self.asm.create_label();
        self.asm.xor(eax, eax)?;
        self.asm.test(rcx, rcx)?;
        self.asm.jz(done)?;
        self.asm.set_label(&mut trip)?;
        self.body()?;
        self.asm.add(rax, (64 * self.unroll) as i32)?;
        self.asm.dec(rcx)?;
        self.asm.jnz(trip)?;
        self.asm.set_label(&mut done)?;
        self.masked_trip()?;
        self.end_fold()?;
        // (No store fence after streamed stores: see `NativeLoop::run`.)
        self.asm.vzeroupper()?;
        for &r in saved.iter().rev() {
            self.asm.pop(r)?;
        }
        self.asm.ret()?;
        self.emit_pool()?;
        Ok(())
    }

    /// The trip after the whole blocks: the same body with the masks the caller passed (after
    /// the outputs' and partials' pointers), skipped when the first vector's mask is empty.
    fn masked_trip(&mut self) -> Result<(), Stop> {
        let index = self.output_pointers.len() + usize::from(self.fold.is_some());
        self.asm.mov(rcx, qword_ptr(rsi + 8 * index as i32))?;
        for (u, &k) in TAIL_MASKS.iter().take(self.unroll).enumerate() {
            self.asm.kmovw(k, word_ptr(rcx + 2 * u as i32))?;
        }
        let mut skip = self.asm.create_label();
        self.asm.kortestw(TAIL_MASKS[0], TAIL_MASKS[0])?;
        self.asm.jz(skip)?;
        self.masked = true;
        self.body()?;
        self.masked = false;
        self.asm.set_label(&mut skip)?;
        // A label needs an instruction after it; `end_fold` may emit none.
        self.asm.nop()?;
        Ok(())
    }

    /// Loads the partials' pointer and sets every accumulator to the reduction's identity.
    fn start_fold(&mut self) -> Result<(), Stop> {
        let Some((pointer, _)) = self.fold else { return Ok(()) };
        let at = rsi + 8 * self.output_pointers.len() as i32;
        self.asm.mov(pointer, qword_ptr(at))?;
        let accumulators: Vec<usize> =
            (0..self.unroll).map(|_| self.take()).collect::<Result<_, _>>()?;
        for &r in &accumulators {
            match self.width {
                Width::F32 => self.asm.vbroadcastss(ZMM[r], dword_ptr(pointer))?,
                Width::F64 => self.asm.vbroadcastsd(ZMM[r], qword_ptr(pointer))?,
            }
        }
        self.fold = Some((pointer, accumulators));
        Ok(())
    }

    /// `accumulator = op(accumulator, value)` for each unrolled vector.
    fn fold_in(&mut self, values: &[usize]) -> Result<(), Stop> {
        let (op, _) = self.shape.fold.expect("a loop that folds");
        let combine = match op {
            ReduceOp::Sum => SliceOp::Binary(BinaryOp::Add),
            ReduceOp::Prod => SliceOp::Binary(BinaryOp::Mul),
            ReduceOp::Max => SliceOp::Binary(BinaryOp::Max),
            ReduceOp::Min => SliceOp::Binary(BinaryOp::Min),
            ReduceOp::And | ReduceOp::Or => unreachable!("checked in Shape::of"),
        };
        let accumulators = self.fold.as_ref().expect("started").1.clone();
        for (u, (&acc, &v)) in accumulators.iter().zip(values).enumerate() {
            let (acc, v) = (ZMM[acc], ZMM[v]);
            if !self.masked {
                self.op(combine, acc, &[acc, v])?;
                continue;
            }
            // Only the lanes the mask selects fold in: combine into a scratch register, then
            // move those lanes over.
            let scratch = self.take()?;
            self.op(combine, ZMM[scratch], &[acc, v])?;
            let moved = masked(acc, TAIL_MASKS[u]);
            match self.width {
                Width::F32 => self.asm.vmovaps(moved, ZMM[scratch])?,
                Width::F64 => self.asm.vmovapd(moved, ZMM[scratch])?,
            }
            self.free.push(scratch);
        }
        Ok(())
    }

    /// Stores the accumulators to the partials.
    fn end_fold(&mut self) -> Result<(), Stop> {
        let Some((pointer, accumulators)) = self.fold.clone() else { return Ok(()) };
        for (u, &r) in accumulators.iter().enumerate() {
            let at = zmmword_ptr(pointer + 64 * u as i32);
            match self.width {
                Width::F32 => self.asm.vmovups(at, ZMM[r])?,
                Width::F64 => self.asm.vmovupd(at, ZMM[r])?,
            }
        }
        Ok(())
    }

    /// Broadcasts each scalar input into a register of its own, for the whole loop.
    fn load_scalars(&mut self) -> Result<(), Stop> {
        for (k, at) in self.shape.inputs.iter().enumerate() {
            if let InputAt::Scalar(s) = *at {
                let r = self.take()?;
                let at = rdx + (s * self.width.bytes()) as i32;
                match self.width {
                    Width::F32 => self.asm.vbroadcastss(ZMM[r], dword_ptr(at))?,
                    Width::F64 => self.asm.vbroadcastsd(ZMM[r], qword_ptr(at))?,
                }
                self.scalar_registers.insert(k, r);
            }
        }
        Ok(())
    }

    fn load_constants(&mut self) -> Result<(), Stop> {
        for &c in &self.shape.constants {
            let r = self.take()?;
            let bits = c.bits(self.width);
            match self.width {
                Width::F32 => {
                    self.asm.mov(eax, bits as u32)?;
                    self.asm.vpbroadcastd(ZMM[r], eax)?;
                }
                Width::F64 => {
                    self.asm.mov(rax, bits)?;
                    self.asm.vpbroadcastq(ZMM[r], rax)?;
                }
            }
            self.constant_registers.push((c, r));
        }
        Ok(())
    }

    /// One trip: outputs that are inputs, then each op, each output stored as soon as it is
    /// computed and each register freed after its value's last reader.
    fn body(&mut self) -> Result<(), Stop> {
        for (o, output) in self.group.outputs.iter().enumerate() {
            if let Value::Input(_) = output.value {
                let registers = self.operand(output.value)?;
                self.store(o, &registers)?;
                self.release_if_unused(output.value, None);
            }
        }
        for (j, op) in self.group.ops.iter().enumerate() {
            let operands: Vec<Vec<usize>> =
                op.inputs.iter().map(|&v| self.operand(v)).collect::<Result<_, _>>()?;
            let dst: Vec<usize> =
                (0..self.unroll).map(|_| self.take()).collect::<Result<_, _>>()?;
            for u in 0..self.unroll {
                let xs: Vec<AsmRegisterZmm> = operands.iter().map(|r| ZMM[r[u]]).collect();
                self.op(op.slice.expect("checked in Shape::of"), ZMM[dst[u]], &xs)?;
            }
            for (o, output) in self.group.outputs.iter().enumerate() {
                if output.value == Value::Op(j) {
                    self.store(o, &dst)?;
                }
            }
            if self.shape.fold.is_some_and(|(_, value)| value == j) {
                self.fold_in(&dst)?;
            }
            self.held.insert(Value::Op(j), dst);
            for &v in &op.inputs {
                self.release_if_unused(v, Some(j));
            }
            self.release_if_unused(Value::Op(j), Some(j));
        }
        debug_assert!(self.held.is_empty(), "every value released within the trip");
        Ok(())
    }

    /// The registers holding `v` in this trip, loading an in-memory input on its first use.
    fn operand(&mut self, v: Value) -> Result<Vec<usize>, Stop> {
        if let Some(registers) = self.held.get(&v) {
            return Ok(registers.clone());
        }
        let Value::Input(k) = v else { unreachable!("ops run in program order") };
        let registers = match self.shape.inputs[k] {
            // Held for the whole loop, not in `held`.
            InputAt::Scalar(_) => return Ok(vec![self.scalar_registers[&k]; self.unroll]),
            InputAt::Memory(m) => {
                let pointer = self.input_pointers[m];
                let mut registers = Vec::with_capacity(self.unroll);
                for (u, &mask) in TAIL_MASKS.iter().take(self.unroll).enumerate() {
                    let r = self.take()?;
                    let at = zmmword_ptr(pointer + rax + 64 * u as i32);
                    // The masked trip reads only the selected lanes (the others are zero).
                    let d = if self.masked { masked(ZMM[r], mask).z() } else { ZMM[r] };
                    match self.width {
                        Width::F32 => self.asm.vmovups(d, at)?,
                        Width::F64 => self.asm.vmovupd(d, at)?,
                    }
                    registers.push(r);
                }
                registers
            }
        };
        self.held.insert(v, registers.clone());
        Ok(registers)
    }

    /// Frees `v`'s registers if no op after `at` (or none at all, for `None`) reads it.
    /// Scalars keep theirs for the whole loop.
    fn release_if_unused(&mut self, v: Value, at: Option<usize>) {
        let later = self.shape.last_use.get(&v).is_some_and(|&last| Some(last) > at);
        let scalar = matches!(v, Value::Input(k) if self.scalar_registers.contains_key(&k));
        if later || scalar {
            return;
        }
        if let Some(registers) = self.held.remove(&v) {
            self.free.extend(registers);
        }
    }

    fn take(&mut self) -> Result<usize, Stop> {
        self.free.pop().ok_or(Stop::OutOfRegisters)
    }

    fn constant(&self, c: Constant) -> AsmRegisterZmm {
        let (_, r) = self.constant_registers.iter().find(|(k, _)| *k == c).expect("loaded");
        ZMM[*r]
    }

    fn store(&mut self, output: usize, registers: &[usize]) -> Result<(), Stop> {
        let pointer = self.output_pointers[output];
        for (u, &r) in registers.iter().enumerate() {
            let at = zmmword_ptr(pointer + rax + 64 * u as i32);
            if self.masked {
                // Plain stores of the selected lanes (there are no masked streaming stores).
                let at = masked_memory(at, TAIL_MASKS[u]);
                match self.width {
                    Width::F32 => self.asm.vmovups(at, ZMM[r])?,
                    Width::F64 => self.asm.vmovupd(at, ZMM[r])?,
                }
                continue;
            }
            match (self.width, self.stream) {
                (Width::F32, true) => self.asm.vmovntps(at, ZMM[r])?,
                (Width::F32, false) => self.asm.vmovups(at, ZMM[r])?,
                (Width::F64, true) => self.asm.vmovntpd(at, ZMM[r])?,
                (Width::F64, false) => self.asm.vmovupd(at, ZMM[r])?,
            }
        }
        Ok(())
    }

    /// `d = op(xs)`, the same IEEE operations as the op's scalar function.
    fn op(&mut self, op: SliceOp, d: AsmRegisterZmm, xs: &[AsmRegisterZmm]) -> Result<(), Stop> {
        use BinaryOp::{Add, Div, Max, Min, Mul, Sub};
        use UnaryOp::{Abs, Neg, Reciprocal, Rsqrt, Sqrt, Square};
        if let SliceOp::Unary(u) = op {
            if math::compiles(u) {
                return self.math(u, d, xs[0]);
            }
        }
        let f32 = self.width == Width::F32;
        let constant = constant_of(op, self.width).flatten().map(|c| self.constant(c));
        let c = || constant.expect("the op's constant is loaded");
        let a = &mut self.asm;
        macro_rules! pick {
            ($ps:ident, $pd:ident, $($arg:expr),*) => {
                if f32 { a.$ps($($arg),*)? } else { a.$pd($($arg),*)? }
            };
        }
        if let SliceOp::Binary(extreme @ (Max | Min)) = op {
            // As the scalar functions: NaN wins, a subnormal counts as the zero of its sign
            // (the loops run under the denormals-are-zero mode), and -0 is below +0.
            const EQUAL: i32 = 0x00;
            let (x, y) = (xs[0], xs[1]);
            // The lanes where the operands are equal, read first: `d` may be `x`.
            pick!(vcmpps, vcmppd, k1, x, y, EQUAL);
            // `y > x ? y : x` (`y < x ? y : x`), which is `x` where either is NaN or they are
            // equal (zeros and subnormals included).
            match extreme {
                Max => pick!(vmaxps, vmaxpd, d, y, x),
                _ => pick!(vminps, vminpd, d, y, x),
            }
            // Between equal operands the AND (OR) of their bits: +0 over -0 (-0 over +0); equal
            // normal numbers have the same bits.
            match extreme {
                Max => pick!(vpandd, vpandq, d.k1(), d, y),
                _ => pick!(vpord, vporq, d.k1(), d, y),
            }
            // A subnormal picked, or left by the AND (OR), becomes the zero of its sign.
            pick!(vmulps, vmulpd, d, d, c());
            return self.take_where_nan(d, y);
        }
        match op {
            SliceOp::Binary(Add) => pick!(vaddps, vaddpd, d, xs[0], xs[1]),
            SliceOp::Binary(Sub) => pick!(vsubps, vsubpd, d, xs[0], xs[1]),
            SliceOp::Binary(Mul) => pick!(vmulps, vmulpd, d, xs[0], xs[1]),
            SliceOp::Binary(Div) => pick!(vdivps, vdivpd, d, xs[0], xs[1]),
            SliceOp::Unary(Square) => pick!(vmulps, vmulpd, d, xs[0], xs[0]),
            SliceOp::Unary(Sqrt) => pick!(vsqrtps, vsqrtpd, d, xs[0]),
            SliceOp::Unary(Neg) => pick!(vpxord, vpxorq, d, xs[0], c()),
            SliceOp::Unary(Abs) => pick!(vpandd, vpandq, d, xs[0], c()),
            SliceOp::Unary(Reciprocal) => pick!(vdivps, vdivpd, d, c(), xs[0]),
            SliceOp::Unary(Rsqrt) => {
                pick!(vsqrtps, vsqrtpd, d, xs[0]);
                pick!(vdivps, vdivpd, d, c(), d);
            }
            _ => unreachable!("checked in Shape::of"),
        }
        Ok(())
    }

    /// `d = x` in the lanes where `x` is NaN.
    fn take_where_nan(&mut self, d: AsmRegisterZmm, x: AsmRegisterZmm) -> Result<(), Stop> {
        const UNORDERED: i32 = 3;
        if self.width == Width::F32 {
            self.asm.vcmpps(k1, x, x, UNORDERED)?;
            self.asm.vmovaps(d.k1(), x)?;
        } else {
            self.asm.vcmppd(k1, x, x, UNORDERED)?;
            self.asm.vmovapd(d.k1(), x)?;
        }
        Ok(())
    }
}

/// `$operand` (a register or a memory operand) under mask register `$k`, one of
/// [`TAIL_MASKS`]: written, read or stored only in the lanes it selects.
macro_rules! under_mask {
    ($operand:expr, $k:expr) => {
        match $k {
            k if k == k2 => $operand.k2(),
            k if k == k3 => $operand.k3(),
            k if k == k4 => $operand.k4(),
            _ => $operand.k5(),
        }
    };
}

/// `r` written only in the lanes mask register `k` selects.
fn masked(r: AsmRegisterZmm, k: AsmRegisterK) -> AsmRegisterZmm {
    under_mask!(r, k)
}

/// `at` accessed only in the lanes mask register `k` selects.
fn masked_memory(at: AsmMemoryOperand, k: AsmRegisterK) -> AsmMemoryOperand {
    under_mask!(at, k)
}

/// Machine code in pages of its own, mapped executable and never written again.
struct Code {
    ptr: *const u8,
    len: usize,
}

// SAFETY: the pages are only read and executed after `Code::new` returns, from any thread.
unsafe impl Send for Code {}
// SAFETY: as for `Send`.
unsafe impl Sync for Code {}

impl Code {
    /// Maps `bytes` into fresh executable pages; `None` if the system refuses.
    fn new(bytes: &[u8]) -> Option<Code> {
        let len = bytes.len().next_multiple_of(4096);
        // SAFETY: an anonymous private mapping touches no existing memory; the result is
        // checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let code = Code { ptr: ptr.cast_const().cast(), len };
        // SAFETY: the mapping is `len >= bytes.len()` writable bytes, just made and not shared;
        // `mprotect` then makes it read-only and executable (on failure `code` unmaps it).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast(), bytes.len());
            if libc::mprotect(ptr, len, libc::PROT_READ | libc::PROT_EXEC) != 0 {
                return None;
            }
        }
        Some(code)
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `Code::new`, no longer referenced (loops borrow their
        // `NativeLoop`).
        unsafe { libc::munmap(self.ptr.cast_mut().cast(), self.len) };
    }
}
