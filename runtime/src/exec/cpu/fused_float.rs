//! The fast path of fused groups over f32 or f64 whose ops all have slice forms
//! ([`crate::primitives::SliceOp`]): each op of a tile runs as one loop reading its operands
//! where they are (the inputs' own buffers, earlier ops' tile buffers, a scalar) and writing
//! straight into its destination (a tile buffer, or its place in an output), so a tile's data
//! crosses memory once on the way in and once on the way out.

use std::slice;

use rayon::prelude::*;

use super::pool;
use crate::array::Array;
use crate::dtype::Element;
use crate::exec::fusion::{FusedGroup, Load, Value, TILE};
use crate::primitives::binary::{self, Scalar};
use crate::primitives::unary::{self, Real};
use crate::primitives::{SliceOp, Src};

/// Where a tile finds one input.
enum Source<'a, T> {
    Full(&'a [T]),
    Scalar(T),
    Strided(&'a [T], &'a [usize]),
}

/// An output's storage, written by tiles on several threads at disjoint ranges.
#[derive(Clone, Copy)]
struct Sink<T>(*mut T);
// SAFETY: tiles write disjoint ranges of the output while `run` keeps it alive.
unsafe impl<T> Send for Sink<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Sink<T> {}

/// Runs `group` (whose [`FusedGroup::slice_dtype`] is `T`) on its inputs.
pub(crate) fn run<T: Real + Scalar>(group: &FusedGroup, inputs: &[Array]) -> Vec<Array> {
    fn typed<T: Element>(a: &Array) -> &[T] {
        a.as_slice::<T>().expect("the group's inputs are all T")
    }
    let n = group.len();
    let sources: Vec<Source<T>> = inputs
        .iter()
        .zip(&group.inputs)
        .map(|(a, (_, load))| match load {
            Load::Full => Source::Full(typed(a)),
            Load::Scalar => Source::Scalar(typed(a)[0]),
            Load::Strided(strides) => Source::Strided(typed(a), strides),
        })
        .collect();
    let mut outputs: Vec<Vec<T>> =
        group.outputs.iter().map(|_| pool::take_for_overwrite(n, T::from_i64(0))).collect();
    let sinks: Vec<Sink<T>> = outputs.iter_mut().map(|v| Sink(v.as_mut_ptr())).collect();
    let tile_len = tile_len::<T>(group);
    let tiles = n.div_ceil(tile_len);
    let tile = |t: usize| {
        let start = t * tile_len;
        let len = tile_len.min(n - start);
        // SAFETY (of `run_tile`'s contract): tiles cover disjoint ranges inside `0..n`.
        unsafe { run_tile(group, &sources, &sinks, start, len) }
    };
    if n < 2 * TILE {
        (0..tiles).for_each(tile);
    } else {
        (0..tiles).into_par_iter().for_each(tile);
    }
    outputs
        .into_iter()
        .zip(&group.outputs)
        .map(|(v, (_, _, aval))| Array::from_buffer(aval.shape.clone(), T::wrap(v), aval.weak))
        .collect()
}

/// The tile values of a slice group (its ops' results and gathered inputs) take about this
/// much memory together, so that a tile never leaves the core's L1 and L2 caches.
const TILE_BYTES: usize = 96 << 10;
/// Tiles are at least this long, so that per-tile work stays small beside the loops.
const MIN_TILE: usize = 1024;

/// Elements per tile of `group`: fewer for groups with many live values (a slice group has
/// no reduction, so its tiles need not hold whole rows).
fn tile_len<T>(group: &FusedGroup) -> usize {
    let gathered = group.inputs.iter().filter(|(_, l)| matches!(l, Load::Strided(_))).count();
    let values = (group.arena_slots + gathered).max(1);
    (TILE_BYTES / (values * std::mem::size_of::<T>()) / 64 * 64).clamp(MIN_TILE, TILE)
}

/// Outputs at least this large are written with non-temporal stores (smaller ones are
/// likely read again soon, from cache).
const STREAM_MIN_BYTES: usize = 4 << 20;

/// Computes elements `start..start + len` of every output.
///
/// # Safety
/// Each sink has room for the group's length, and no other thread touches this range of it.
unsafe fn run_tile<T: Real + Scalar>(
    group: &FusedGroup,
    sources: &[Source<T>],
    sinks: &[Sink<T>],
    start: usize,
    len: usize,
) {
    let strided = sources.iter().any(|s| matches!(s, Source::Strided(..)));
    let gathered: Vec<Option<Vec<T>>> = match strided {
        false => Vec::new(),
        true => sources
            .iter()
            .map(|s| match s {
                Source::Strided(v, strides) => {
                    Some(super::fused::gather(v, strides, &group.shape, start, len))
                }
                _ => None,
            })
            .collect(),
    };
    let input = |k: usize| -> Src<T> {
        match &sources[k] {
            Source::Full(v) => Src::Slice(&v[start..start + len]),
            Source::Scalar(x) => Src::Scalar(*x),
            Source::Strided(..) => Src::Slice(gathered[k].as_deref().expect("gathered above")),
        }
    };
    let stream = group.len() * std::mem::size_of::<T>() >= STREAM_MIN_BYTES;
    // Each op's tile result is in its slot of the arena (`TileOp::slot`): one allocation
    // per tile.
    let mut arena: Vec<T> = pool::take_for_overwrite(len * group.arena_slots, T::from_i64(0));
    let base = arena.as_mut_ptr();
    // Where each op's tile result is: its part of the arena, or (unless outputs are streamed)
    // its range of the output it is, written there directly.
    let mut at: Vec<*mut T> = Vec::with_capacity(group.ops.len());
    for op in &group.ops {
        let operand = |v: Value| match v {
            Value::Input(k) => input(k),
            // SAFETY: an earlier op `j` wrote its `len` elements at `at[j]`, which nothing writes
            // again before op `j`'s last reader has run (its arena slot is reused only
            // after that).
            Value::Op(j) => Src::Slice(unsafe { slice::from_raw_parts(at[j], len) }),
        };
        let first = operand(op.inputs[0]);
        let second = op.inputs.get(1).map(|&v| operand(v));
        let direct = op.output.filter(|_| !stream);
        let place = match direct {
            // SAFETY: this tile's range of output `o`, which only this tile writes (the
            // caller's contract); outputs are allocations separate from the arena and inputs.
            Some(o) => unsafe { sinks[o].0.add(start) },
            // SAFETY: this op's slot of the arena, holding `len` elements; the value there
            // before, if any, has had its last reader.
            None => unsafe { base.add(op.slot * len) },
        };
        // SAFETY: `place` holds `len` elements that no operand of this op reads.
        let dst = unsafe { slice::from_raw_parts_mut(place, len) };
        apply_widest(op.slice.expect("slice groups have slice ops"), first, second, dst);
        if let (Some(o), None) = (op.output, direct) {
            // SAFETY: as for a direct output above.
            let out = unsafe { slice::from_raw_parts_mut(sinks[o].0.add(start), len) };
            stream::copy(dst, out);
        }
        at.push(place);
    }
    // Outputs that are inputs read through a broadcast.
    for (o, (value, _, _)) in group.outputs.iter().enumerate() {
        if let Value::Input(k) = *value {
            // SAFETY: as for the op outputs above.
            let dst = unsafe { slice::from_raw_parts_mut(sinks[o].0.add(start), len) };
            match input(k) {
                Src::Slice(s) => dst.copy_from_slice(s),
                Src::Scalar(x) => dst.fill(x),
            }
        }
    }
    if stream {
        stream::fence();
    }
    // Back to this thread's cache of tile buffers.
    drop(T::wrap(arena));
    for v in gathered.into_iter().flatten() {
        drop(T::wrap(v));
    }
}

/// [`apply`] compiled for AVX2 when the CPU has it (the crate's baseline is SSE2).
fn apply_widest<T: Real + Scalar>(
    op: SliceOp,
    first: Src<T>,
    second: Option<Src<T>>,
    dst: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { apply_avx2(op, first, second, dst) };
    }
    apply(op, first, second, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn apply_avx2<T: Real + Scalar>(
    op: SliceOp,
    first: Src<T>,
    second: Option<Src<T>>,
    dst: &mut [T],
) {
    apply(op, first, second, dst)
}

/// One op's loop; inlined (with the ops' loops) into [`apply_avx2`] to be compiled for AVX2.
#[inline(always)]
fn apply<T: Real + Scalar>(op: SliceOp, first: Src<T>, second: Option<Src<T>>, dst: &mut [T]) {
    match op {
        SliceOp::Unary(op) => match first {
            Src::Slice(x) => unary::float_op_into(op, x, dst),
            Src::Scalar(x) => {
                let x = vec![x; dst.len()];
                unary::float_op_into(op, &x, dst)
            }
        },
        SliceOp::Binary(op) => {
            let second = second.expect("a binary op has two operands");
            binary::float_op_into(op, first, second, dst)
        }
    }
}

/// Copies to outputs with non-temporal stores: an output is written once and read later by
/// another op, so caching it only evicts the inputs, and a regular store would first read the
/// destination line from memory.
mod stream {
    /// Copies `src` into `dst` (of equal length).
    pub fn copy<T: Copy>(src: &[T], dst: &mut [T]) {
        #[cfg(target_arch = "x86_64")]
        if std::mem::size_of::<T>().is_multiple_of(4) {
            // SAFETY: both slices are valid for `size_of_val(src)` bytes and do not overlap
            // (`dst` is borrowed mutably); the bytes are plain data of a `Copy` type.
            unsafe {
                let bytes = std::mem::size_of_val(src);
                copy_words(src.as_ptr().cast(), dst.as_mut_ptr().cast(), bytes / 4);
            }
            return;
        }
        dst.copy_from_slice(src);
    }

    /// Copies `words` 4-byte words, streaming the 16-byte-aligned middle of the destination.
    ///
    /// # Safety
    /// `src` and `dst` are valid for `words` 4-byte reads and writes and do not overlap.
    #[cfg(target_arch = "x86_64")]
    unsafe fn copy_words(src: *const f32, dst: *mut f32, words: usize) {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        let head = ((16 - (dst as usize % 16)) % 16 / 4).min(words);
        // SAFETY: every offset below is `< words`, inside both ranges (the caller's contract);
        // `_mm_stream_ps` gets 16-byte-aligned addresses (`head` aligns `dst`; `dst` is at least
        // 4-aligned, as an `f32`/`f64` buffer is), and SSE is part of x86-64.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            let mut i = head;
            while i + 4 <= words {
                _mm_stream_ps(dst.add(i), _mm_loadu_ps(src.add(i)));
                i += 4;
            }
            std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), words - i);
        }
    }

    /// Orders the streamed stores before whatever reads the outputs next.
    pub fn fence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` has no preconditions; SSE is part of x86-64.
        unsafe {
            std::arch::x86_64::_mm_sfence()
        }
    }
}
