//! The fast path of fused groups over f32 or f64 whose ops all have slice forms
//! ([`crate::primitives::SliceOp`]): each op of a tile runs as one loop reading its operands
//! where they are (the inputs' own buffers, earlier ops' tile buffers, a scalar) and writing
//! straight into its destination (a tile buffer, or its place in an output), so a tile's data
//! crosses memory once on the way in and once on the way out. Groups too large for the
//! caches whose inputs are all read in place run in short chunks instead of tiles and
//! sub-tiles (`Chunks`), and groups of a few elements run on the stack (`run_small`).
//! A group that ends in a reduction folds each sub-tile of the reduced value as it is
//! computed (`TileFold`).

use std::mem::MaybeUninit;
use std::ops::Range;
use std::slice;

use rayon::prelude::*;

use super::float_mode::Flushing;
use super::native::NativeLoop;
use super::parts::DisjointOut;
use super::pool;
use crate::array::Array;
use crate::dtype::Element;
use crate::exec::fusion::{FusedGroup, Layout, Load, Output, ReduceLayout, Reduction, Value, TILE};
use crate::primitives::binary::{self, Scalar};
use crate::primitives::reduce::{combiner, fold_numbers, fold_run, Identities};
use crate::primitives::unary::{self, Real};
use crate::primitives::{ReduceOp, SliceOp, Src};

/// Where a tile finds one input.
enum Source<'a, T> {
    Full(&'a [T]),
    Scalar(T),
    /// Read through strides, gathered per sub-tile into the given scratch slot.
    Strided(&'a [T], &'a [usize], usize),
    /// Read through strides that repeat with a period dividing the sub-tile length: gathered
    /// into its scratch slot once per tile, since every sub-tile of a tile reads the same.
    Periodic(&'a [T], &'a [usize], usize),
    /// Read through strides whose last one is 0 or 1, by sub-tiles that stay inside one row of
    /// the iteration shape: a sub-tile reads a run of the input in place, or one element of
    /// it, with no gather.
    InRow(&'a [T], &'a [usize]),
}

/// Runs `group` (whose [`FusedGroup::slice_dtype`] is `T`) on its inputs.
pub(crate) fn run<T: Real + Scalar + Identities>(
    group: &FusedGroup,
    inputs: &[Array],
    results: &mut Vec<Array>,
) {
    if run_small::<T>(group, inputs, results) {
        return;
    }
    let n = group.len();
    let (reads, layout) = plan_reads::<T>(group);
    let mut gathered = 0;
    let sources: Vec<Source<T>> = inputs
        .iter()
        .zip(&group.inputs)
        .map(|(a, (_, load))| {
            let strides = match load {
                Load::Strided(strides) => &strides[..],
                Load::Full | Load::Scalar => &[],
            };
            match reads.read(load, &mut gathered) {
                Read::Full => Source::Full(typed(a)),
                Read::Scalar => Source::Scalar(typed(a)[0]),
                Read::Gather(slot) => Source::Strided(typed(a), strides, slot),
                Read::Periodic(slot) => Source::Periodic(typed(a), strides, slot),
                Read::InRow => Source::InRow(typed(a), strides),
            }
        })
        .collect();
    let mut outputs: Vec<Vec<T>> =
        group.outputs.iter().map(|_| pool::take_for_overwrite(n, T::from_i64(0))).collect();
    // Tiles write disjoint ranges of each output.
    let sinks: Vec<DisjointOut<T>> = outputs.iter_mut().map(|v| DisjointOut::new(v)).collect();
    if let Some(r) = &group.reduction {
        let partials = run_reducing(group, r, &sources, &sinks, layout);
        wrap_outputs(group, outputs, results);
        results.push(super::fused::combine(r, partials));
        return;
    }
    // Streamed groups that read their inputs in place run chunk by chunk (see `Chunks`).
    let in_place = sources.iter().all(|s| matches!(s, Source::Full(_) | Source::Scalar(_)));
    let in_order = group.outputs.iter().all(|o| o.layout == Layout::RowMajor);
    let chunks = (streams::<T>(group) && in_place && in_order).then_some(Chunks {
        group,
        input: |k: usize, range: Range<usize>| match sources[k] {
            Source::Full(v) => Src::Slice(&v[range]),
            Source::Scalar(x) => Src::Scalar(x),
            _ => unreachable!("chunked groups read their inputs in place"),
        },
        sink: |o: usize| sinks[o].get(),
        stream: true,
    });
    let streamed = streams::<T>(group) && in_order;
    let native = streamed.then(|| group.native.get(group, std::mem::size_of::<T>())).flatten();
    // A loop that reads broadcast inputs runs once per row, in tasks of whole rows.
    let by_rows = native.and_then(|native| Some((native, native.row()?)));
    let task_len = match (by_rows, &chunks) {
        (Some((_, row)), _) => (STREAMED_TASK_LEN / row).max(1) * row,
        (None, Some(_)) => STREAMED_TASK_LEN,
        (None, None) => TASK_LEN,
    };
    let tiles = n.div_ceil(task_len);
    let tile = |t: usize| {
        let start = t * task_len;
        let len = task_len.min(n - start);
        // SAFETY (of `run_tile`'s, `Chunks::run_tile`'s, `run_compiled`'s and
        // `run_compiled_rows`' contracts): tiles cover disjoint ranges inside `0..n`, whole
        // rows when run by rows.
        unsafe {
            match (&chunks, native, by_rows) {
                (_, _, Some((native, row))) => {
                    run_compiled_rows(native, group, &sources, &sinks, start, len, row)
                }
                (Some(chunks), Some(native), None) => {
                    run_compiled(native, chunks, &sources, &sinks, start, len)
                }
                (Some(chunks), None, None) => chunks.run_tile(start, len),
                (None, _, None) => drop(run_tile(group, &sources, &sinks, layout, start, len)),
            }
        }
    };
    if n < 2 * TILE {
        (0..tiles).for_each(tile);
    } else {
        (0..tiles).into_par_iter().flushing().for_each(tile);
    }
    wrap_outputs(group, outputs, results);
}

/// Computes elements `start..start + len` of a streamed group (see [`Chunks`]) with its
/// compiled loop: from the outputs' first 64-byte boundary on, streamed (or, if the outputs
/// lie differently against those boundaries, plainly stored from `start` on), the few elements
/// before that boundary by `chunks`.
///
/// # Safety
/// As [`Chunks::run`]'s; `sources` are all read in place, and `native` is the group's loop.
unsafe fn run_compiled<'a, T, I, O>(
    native: &NativeLoop,
    chunks: &Chunks<'_, I, O>,
    sources: &[Source<T>],
    sinks: &[DisjointOut<T>],
    start: usize,
    len: usize,
) where
    T: Real + Scalar + 'a,
    I: Fn(usize, Range<usize>) -> Src<'a, T>,
    O: Fn(usize) -> *mut T,
{
    let head = streamed_head(sinks, start);
    let (stream, head) = (head.is_some(), head.unwrap_or(0).min(len));
    let (blocks, rest) = ((len - head) / native.block(), (len - head) % native.block());
    // SAFETY: `start + head` is inside each output (the caller's contract).
    let args = unsafe { LoopArgs::new(chunks.group, sources, sinks, start + head, None) };
    // SAFETY: the head and the loop's blocks and rest cover `start..start + len`, which this
    // task alone writes (the caller's contract); the blocks start at a 64-byte boundary of
    // every output when streamed, and the inputs (in place, as long as the outputs) cover
    // them.
    unsafe {
        if head > 0 {
            chunks.run_tile(start, head);
        }
        args.run(native, stream, blocks, rest);
    }
    if stream {
        stream::fence();
    }
}

/// How many elements from `at` on precede the outputs' first 64-byte boundary, from which a
/// compiled loop streams them; `None` when the outputs lie differently against those
/// boundaries (they are then stored plainly).
fn streamed_head<T>(sinks: &[DisjointOut<T>], at: usize) -> Option<usize> {
    let size = std::mem::size_of::<T>();
    let offset = |s: &DisjointOut<T>| (s.get() as usize + at * size) % 64;
    let first = sinks.first().map_or(0, offset);
    sinks.iter().all(|s| offset(s) == first).then_some((64 - first) % 64 / size)
}

/// Computes the whole rows `start..start + len` of a streamed group with broadcast inputs
/// (see [`NativeLoop::row`]) with its compiled loop, once per row: each row from its outputs'
/// first 64-byte boundary on streamed, the few elements before it stored plainly (or, if the
/// outputs lie differently against those boundaries, the whole row plainly).
///
/// # Safety
/// As [`run_tile`]'s; `start` and `len` are whole rows of `row` elements, the loop's period.
unsafe fn run_compiled_rows<T: Copy>(
    native: &NativeLoop,
    group: &FusedGroup,
    sources: &[Source<T>],
    sinks: &[DisjointOut<T>],
    start: usize,
    len: usize,
    row: usize,
) {
    let (row_bytes, block) = (row * std::mem::size_of::<T>(), native.block());
    let stream = streamed_head(sinks, start).is_some();
    // SAFETY: `start` starts a row inside each output (the caller's contract).
    let mut args = unsafe { LoopArgs::new(group, sources, sinks, start, Some(row)) };
    for r in 0..len / row {
        // SAFETY (both runs): the row lies in this task's range, which it alone writes (the
        // caller's contract); the inputs read in place are as long as the outputs, the
        // broadcast ones hold a row (checked by `LoopArgs::new`). A head shorter than a
        // vector is a block's masked trip; the rest starts on a 64-byte boundary of every
        // output when streamed.
        unsafe {
            match streamed_head(sinks, start + r * row) {
                Some(head) => {
                    let (head, head_bytes) = (head.min(row), head * std::mem::size_of::<T>());
                    if head > 0 {
                        args.run(native, false, 0, head);
                    }
                    args.shift(head_bytes, true, usize::wrapping_add);
                    args.run(native, true, (row - head) / block, (row - head) % block);
                    args.shift(head_bytes, true, usize::wrapping_sub);
                }
                None => args.run(native, false, row / block, row % block),
            }
        }
        args.next_row(row_bytes);
    }
    if stream {
        stream::fence();
    }
}

/// A compiled loop's arguments (see [`NativeLoop::run`]) from one element on, moved on a row
/// at a time for loops run once per row.
struct LoopArgs<'a, T> {
    inputs: Vec<*const u8>,
    /// Per in-memory input, whether it moves on with the rows: a broadcast input (see
    /// [`NativeLoop::row`]) is read from its start for every row.
    moves: Vec<bool>,
    scalars: Vec<T>,
    /// The scalars that hold an input's value for the current row: their index in
    /// `scalars`, and the input (one value per row).
    per_row: Vec<(usize, &'a [T])>,
    /// The current row (in the whole iteration order), for loops run by rows.
    row_index: usize,
    /// The outputs' pointers, then, for a loop that folds, the partials' (which stays).
    outputs: Vec<*mut u8>,
    moving_outputs: usize,
}

impl<'a, T: Copy> LoopArgs<'a, T> {
    /// The arguments of `group`'s loop from element `at` on.
    ///
    /// # Safety
    /// `at` is at most each output's length; `sources` are read in place or are broadcast
    /// inputs following rows of `row` elements (the loop's [`NativeLoop::row`]), in which case
    /// `at` starts a row.
    unsafe fn new(
        group: &FusedGroup,
        sources: &[Source<'a, T>],
        sinks: &[DisjointOut<T>],
        at: usize,
        row: Option<usize>,
    ) -> Self {
        let row_index = row.map_or(0, |row| at / row);
        let mut args = LoopArgs {
            inputs: Vec::with_capacity(sources.len()),
            moves: Vec::with_capacity(sources.len()),
            scalars: Vec::new(),
            per_row: Vec::new(),
            row_index,
            // SAFETY: `at` is inside or just past each output (the caller's contract).
            outputs: sinks.iter().map(|s| unsafe { s.get().add(at) }.cast()).collect(),
            moving_outputs: sinks.len(),
        };
        for (source, (_, load)) in sources.iter().zip(&group.inputs) {
            match *source {
                Source::Full(v) => args.push_input(v[at..].as_ptr(), true),
                Source::Scalar(x) => args.scalars.push(x),
                Source::Strided(v, ..) | Source::Periodic(v, ..) | Source::InRow(v, ..) => {
                    let row = row.expect("a compiled loop reads broadcast inputs by rows");
                    assert!(at.is_multiple_of(row), "a broadcast input read by rows");
                    if load.period(&group.shape).is_some() {
                        // The loop reads a row's worth of it, from its first element.
                        assert!(v.len() >= row, "a broadcast input repeating every row");
                        args.push_input(v.as_ptr(), false);
                    } else {
                        args.per_row.push((args.scalars.len(), v));
                        args.scalars.push(v[row_index]);
                    }
                }
            }
        }
        args
    }

    fn push_input(&mut self, at: *const T, moves: bool) {
        self.inputs.push(at.cast());
        self.moves.push(moves);
    }

    /// Adds the pointer where a folding loop leaves its partials.
    fn with_partials(mut self, partials: &mut [T]) -> Self {
        self.outputs.push(partials.as_mut_ptr().cast());
        self
    }

    /// Moves the pointers that move on with the rows `row_bytes` further, to the next row, and
    /// sets the per-row scalars to its values (past the last row, they keep the last ones).
    fn next_row(&mut self, row_bytes: usize) {
        self.shift(row_bytes, false, usize::wrapping_add);
        self.row_index += 1;
        for &(slot, values) in &self.per_row {
            if let Some(&value) = values.get(self.row_index) {
                self.scalars[slot] = value;
            }
        }
    }

    /// Applies `by(pointer, bytes)` to every pointer that moves with the rows, and with
    /// `within_row` to the broadcast inputs' too (a run that starts inside a row).
    fn shift(&mut self, bytes: usize, within_row: bool, by: fn(usize, usize) -> usize) {
        let moving = self.inputs.iter_mut().zip(&self.moves);
        for (p, _) in moving.filter(|(_, &moves)| moves || within_row) {
            *p = by(*p as usize, bytes) as *const u8;
        }
        for p in &mut self.outputs[..self.moving_outputs] {
            *p = by(*p as usize, bytes) as *mut u8;
        }
    }

    /// Runs `native` over `blocks` blocks and `rest` more elements from these pointers.
    ///
    /// # Safety
    /// As [`NativeLoop::run`]'s, for these pointers.
    unsafe fn run(&self, native: &NativeLoop, stream: bool, blocks: usize, rest: usize) {
        let scalars = self.scalars.as_ptr().cast();
        // SAFETY: the caller's contract.
        unsafe { native.run(stream, &self.inputs, &self.outputs, scalars, blocks, rest) }
    }
}

/// Runs a group that ends with a reduction in tiles of whole rows of its layout
/// ([`FusedGroup::row_tiles`]), each tile's ops reading the inputs in place and its
/// sub-tiles folded as they are computed (see [`TileFold`]); returns the tiles' partial
/// reductions in tile order.
fn run_reducing<T: Real + Scalar + Identities>(
    group: &FusedGroup,
    r: &Reduction,
    sources: &[Source<T>],
    sinks: &[DisjointOut<T>],
    layout: TileLayout,
) -> Vec<Array> {
    let n = group.len();
    // (A group whose loop compiled reads its inputs in place, or by rows: see `LoopArgs`.)
    let native = group.native.get(group, std::mem::size_of::<T>());
    // A compiled loop folds a row (or, reducing all elements, any run of them) at a time, so
    // its tasks hold whole rows, as many as make about `FOLDED_TASK_LEN` elements.
    let (tile_len, tiles) = match (native, r.layout) {
        (Some(_), ReduceLayout::Rows { inner }) => {
            let len = (FOLDED_TASK_LEN / inner).max(1) * inner;
            (len, n.div_ceil(len))
        }
        (Some(_), ReduceLayout::Columns { .. }) => (FOLDED_TASK_LEN, n.div_ceil(FOLDED_TASK_LEN)),
        (None, _) => group.row_tiles(),
    };
    let tile = |t: usize| {
        let start = t * tile_len;
        let len = tile_len.min(n - start);
        // SAFETY (of `run_tile`'s and `fold_compiled`'s contracts): tiles cover disjoint
        // ranges inside `0..n`.
        let partial = unsafe {
            match native {
                Some(native) => fold_compiled(native, group, sources, sinks, layout, start, len),
                None => run_tile(group, sources, sinks, layout, start, len)
                    .expect("a reducing group's tiles fold its reduction"),
            }
        };
        Array::from_buffer(&[partial.len()], T::wrap(partial), r.aval.weak)
    };
    if n < 2 * TILE {
        (0..tiles).map(tile).collect()
    } else {
        (0..tiles).into_par_iter().flushing().map(tile).collect()
    }
}

/// Computes elements `start..start + len` of a group that ends in a reduction of all its
/// elements, or of rows of at least `native::MIN_ROW_LEN` (then `start` and `len`
/// are whole rows), with its compiled loop, outputs stored plainly; returns the task's partial
/// reduction: one value, or one per row. The loop runs once per row, whose lane partials are
/// folded like a row of the reduction. Reducing all elements, it runs once over the task's
/// whole blocks, and the rest runs on [`run_tile`] and is combined after: a group shorter than
/// a block then gives the slice path's bits, as the eager reduction does.
///
/// # Safety
/// As [`run_tile`]'s; `sources` are all read in place, and `native` is the group's loop.
unsafe fn fold_compiled<T: Real + Scalar + Identities>(
    native: &NativeLoop,
    group: &FusedGroup,
    sources: &[Source<T>],
    sinks: &[DisjointOut<T>],
    layout: TileLayout,
    start: usize,
    len: usize,
) -> Vec<T> {
    let r = group.reduction.as_ref().expect("a reducing group");
    let (row, rows) = match r.layout {
        ReduceLayout::Rows { inner } => (inner, true),
        ReduceLayout::Columns { .. } => (len, false),
    };
    let (combine, identity) = combiner::<T>(r.op);
    let (blocks, rest) = (row / native.block(), row % native.block());
    let mut partials = vec![identity; native.block()];
    // SAFETY: `start` is inside each output, starting a row when the loop runs by rows (the
    // caller's contract).
    let args = unsafe { LoopArgs::new(group, sources, sinks, start, native.row()) };
    let mut args = args.with_partials(&mut partials);
    let step = row * std::mem::size_of::<T>();
    let mut results = Vec::with_capacity(len / row);
    for _ in 0..len / row {
        let masked = if rows { rest } else { 0 };
        // SAFETY: the row (or the task's whole blocks) lies in this task's range, which it
        // alone writes (the caller's contract), and the inputs (in place, as long as the
        // outputs, or broadcast inputs holding a row) cover it; `partials` holds a block of
        // elements, the first the identity.
        unsafe { args.run(native, false, blocks, masked) };
        results.push(fold_run(r.op, &partials));
        partials[0] = identity;
        // The next row's first elements (past the task's end after its last row, unused).
        args.next_row(step);
    }
    if !rows && rest > 0 {
        let done = blocks * native.block();
        // SAFETY: the rest of this task's range (the caller's contract).
        let tail = unsafe { run_tile(group, sources, sinks, layout, start + done, rest) };
        let tail = tail.expect("a reducing group's tiles fold its reduction")[0];
        results[0] = combine(results[0], tail);
    }
    results
}

/// One tile's part of its group's reduction, folded sub-tile by sub-tile while the values are
/// in L1, so that the tile's reads from memory are not interrupted by a pass over the tile.
/// Every piece of a row is folded pairwise (the reduction's own kernel for a row) and the
/// pieces of a row are combined in order; where rows fold onto each other (a reduction over
/// leading axes), the tile's values are kept and folded by the reduction's kernel at the end,
/// pairwise over rows, since a running fold over thousands of rows would lose accuracy.
struct TileFold<T> {
    op: ReduceOp,
    /// The op whose value is reduced.
    value: usize,
    how: FoldInto<T>,
}

enum FoldInto<T> {
    /// Each row of `inner` elements to one result.
    Rows { inner: usize, results: Vec<T> },
    /// Every element to one result.
    One(T),
    /// Rows of `kept` elements onto each other, at the tile's end.
    Columns { kept: usize, values: Vec<T> },
}

impl<T: Identities> TileFold<T> {
    /// The fold of a tile of `len` elements of `r`'s input, an op's value (see `slice_dtype`).
    fn new(r: &Reduction, len: usize) -> TileFold<T> {
        let Value::Op(value) = r.input else { unreachable!("slice groups reduce an op's value") };
        let identity = combiner::<T>(r.op).1;
        let how = match r.layout {
            ReduceLayout::Rows { inner } => {
                FoldInto::Rows { inner, results: vec![identity; len / inner] }
            }
            ReduceLayout::Columns { kept: 1 } => FoldInto::One(identity),
            ReduceLayout::Columns { kept } => {
                FoldInto::Columns { kept, values: pool::take_for_overwrite(len, identity) }
            }
        };
        TileFold { op: r.op, value, how }
    }

    /// Folds in `values`, the tile's elements from `at` on.
    fn add(&mut self, at: usize, values: &[T]) {
        let (combine, _) = combiner::<T>(self.op);
        match &mut self.how {
            FoldInto::Rows { inner, results } => {
                let mut pos = at;
                for piece in row_pieces(values, at, *inner) {
                    let r = &mut results[pos / *inner];
                    *r = combine(*r, fold_run(self.op, piece));
                    pos += piece.len();
                }
            }
            FoldInto::One(result) => *result = combine(*result, fold_run(self.op, values)),
            FoldInto::Columns { values: kept, .. } => {
                kept[at..at + values.len()].copy_from_slice(values)
            }
        }
    }

    /// The tile's partial result.
    fn finish(self) -> Vec<T> {
        match self.how {
            FoldInto::Rows { results, .. } => results,
            FoldInto::One(result) => vec![result],
            FoldInto::Columns { kept, values } => {
                let rows = values.len() / kept;
                let partial = fold_numbers(self.op, &values, &[rows, kept], &[0], |x: T| x);
                drop(T::wrap(values));
                partial
            }
        }
    }
}

/// The pieces of `values` (a tile's elements from `at` on) that lie in one row of `row`
/// elements each.
fn row_pieces<T>(values: &[T], at: usize, row: usize) -> impl Iterator<Item = &[T]> {
    let (head, rest) = values.split_at((row - at % row).min(values.len()));
    std::iter::once(head).filter(|h| !h.is_empty()).chain(rest.chunks(row))
}

/// The group's input `a`, of the group's dtype `T`.
fn typed<T: Element>(a: &Array) -> &[T] {
    a.as_slice::<T>().expect("the group's inputs are all T")
}

/// Groups of at most this many elements, with at most [`SMALL_SLOTS`] tile buffers, at most
/// [`SMALL_OUTPUTS`] outputs and no broadcast input run on the stack (see [`run_small`]).
const SMALL_LEN: usize = 16;
const SMALL_SLOTS: usize = 16;
const SMALL_OUTPUTS: usize = 8;

/// Runs a small group (see [`SMALL_LEN`]) on the calling thread, its values in buffers on the
/// stack, and appends its outputs to `results`; returns false, doing nothing, for other
/// groups. On a jitted scalar function the tile machinery of [`run`] (read plans, scratch
/// buffers from the pool, the parallel loop) costs more than the ops themselves.
fn run_small<T: Real + Scalar>(
    group: &FusedGroup,
    inputs: &[Array],
    results: &mut Vec<Array>,
) -> bool {
    let n = group.len();
    let broadcast = group.inputs.iter().any(|(_, load)| matches!(load, Load::Strided(_)));
    if n > SMALL_LEN
        || group.reduction.is_some()
        || group.arena_slots > SMALL_SLOTS
        || group.outputs.len() > SMALL_OUTPUTS
        || broadcast
    {
        return false;
    }
    let mut outputs: [Vec<T>; SMALL_OUTPUTS] = Default::default();
    for (values, _) in outputs.iter_mut().zip(&group.outputs) {
        *values = vec![T::from_i64(0); n];
    }
    let base = outputs.as_mut_ptr();
    let chunks = Chunks {
        group,
        input: |k: usize, range: Range<usize>| match group.inputs[k].1 {
            Load::Scalar => Src::Scalar(typed::<T>(&inputs[k])[0]),
            _ => Src::Slice(&typed::<T>(&inputs[k])[range]),
        },
        // SAFETY: `o` indexes `outputs`, which outlives `chunks` and is not otherwise used
        // meanwhile.
        sink: |o: usize| unsafe { (*base.add(o)).as_mut_ptr() },
        stream: false,
    };
    // Only the slots' first `n` elements are used: set those (the whole array is 1-2 KiB).
    let mut values = [const { MaybeUninit::<T>::uninit() }; SMALL_LEN * SMALL_SLOTS];
    let values = &mut values[..n * group.arena_slots];
    values.fill(MaybeUninit::new(T::from_i64(0)));
    // SAFETY: every element of `values` was initialized just above, and `MaybeUninit<T>` has
    // the layout of `T`.
    let values = unsafe { &mut *(values as *mut [MaybeUninit<T>] as *mut [T]) };
    // SAFETY: each output holds `n` elements; nothing else touches them meanwhile.
    unsafe { chunks.run_widest(values, n, 0, n) };
    for (output, values) in group.outputs.iter().zip(&mut outputs) {
        if let Layout::Transposed { rows, cols } = output.layout {
            *values = super::copy::transpose(values, &[rows, cols], &[1, 0]);
        }
    }
    wrap_outputs(group, outputs, results);
    true
}

/// Bytes per value in a chunk of a streamed group whose inputs are all read in place (see
/// [`Chunks`]). On W1, chunks of 128 to 256 f32 ran 10% faster than 64 or 32 (more loop
/// overhead) and 25% faster than 1024 (memory idles).
const CHUNK_BYTES: usize = 1 << 10;

/// A group run chunk by chunk: each op in turn over a few cache lines of every value, the
/// values in a small buffer that stays in L1, the outputs written as each chunk is done.
///
/// Large groups stream their outputs to memory with non-temporal stores. Between those
/// stores, a chunk's ops are short enough that the core keeps reading the inputs from memory
/// while it computes; over longer sub-tiles, memory idles while the ops pass over cached data.
struct Chunks<'g, I, O> {
    group: &'g FusedGroup,
    /// Input `k` over an element range: its slice, or its scalar.
    input: I,
    /// Where output `o`'s element 0 is.
    sink: O,
    /// Whether outputs are written with non-temporal stores.
    stream: bool,
}

impl<'a, 'g, T, I, O> Chunks<'g, I, O>
where
    T: Real + Scalar + 'a,
    I: Fn(usize, Range<usize>) -> Src<'a, T>,
    O: Fn(usize) -> *mut T,
{
    /// Computes elements `start..start + len` of a streamed group's outputs.
    ///
    /// # Safety
    /// As [`Chunks::run`]'s.
    unsafe fn run_tile(&self, start: usize, len: usize) {
        let chunk = CHUNK_BYTES / std::mem::size_of::<T>();
        // At least the size this thread's cache of tile buffers keeps: freeing a smaller one
        // to the system allocator for every tile took a tenth of W1's time.
        let cached = pool::MIN_CACHED_BYTES / std::mem::size_of::<T>();
        let slots = chunk * self.group.arena_slots;
        let mut values = pool::take_for_overwrite(slots.max(cached), T::from_i64(0));
        // SAFETY: the caller's contract.
        unsafe { self.run_widest(&mut values[..slots], chunk, start, len) };
        stream::fence();
        // Back to this thread's cache of tile buffers.
        drop(T::wrap(values));
    }

    /// [`Chunks::run`] compiled for AVX-512 or AVX2 and FMA when the CPU has them (see
    /// [`apply_widest`]).
    ///
    /// # Safety
    /// As [`Chunks::run`]'s.
    unsafe fn run_widest(&self, values: &mut [T], chunk: usize, start: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above); the caller's contract.
                return unsafe { self.run_avx512(values, chunk, start, len) };
            }
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above); the caller's
                // contract.
                return unsafe { self.run_avx2(values, chunk, start, len) };
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.run(values, chunk, start, len) }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn run_avx512(&self, values: &mut [T], chunk: usize, start: usize, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.run(values, chunk, start, len) }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn run_avx2(&self, values: &mut [T], chunk: usize, start: usize, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.run(values, chunk, start, len) }
    }

    /// Computes elements `start..start + len` of every output, `chunk` elements at a time;
    /// `values` holds a buffer of `chunk` elements for each of the group's slots. Outputs are
    /// written in the iteration order, whatever their layout.
    ///
    /// # Safety
    /// Each sink has room for `start + len` elements, and no other thread touches this range
    /// of it; sinks are allocations separate from the inputs.
    #[inline(always)]
    unsafe fn run(&self, values: &mut [T], chunk: usize, start: usize, len: usize) {
        let group = self.group;
        assert!(values.len() >= chunk * group.arena_slots, "a buffer per slot");
        let values = values.as_mut_ptr();
        let mut from = start;
        while from < start + len {
            let n = chunk.min(start + len - from);
            let range = from..from + n;
            for op in &group.ops {
                let operand = |v: Value| match v {
                    Value::Input(k) => (self.input)(k, range.clone()),
                    // SAFETY: op `j` wrote its `n` elements to its slot, which no op writes
                    // again before op `j`'s last reader has run.
                    Value::Op(j) => Src::Slice(unsafe {
                        slice::from_raw_parts(values.add(group.ops[j].slot * chunk), n)
                    }),
                };
                let first = operand(op.inputs[0]);
                let second = op.inputs.get(1).map(|&v| operand(v));
                // SAFETY: this op's slot, which none of its operands is (see `assign_slots`).
                let dst = unsafe { slice::from_raw_parts_mut(values.add(op.slot * chunk), n) };
                apply(op.slice.expect("slice groups have slice ops"), first, second, dst);
                if let Some(o) = op.output {
                    // SAFETY: this range of output `o` (the caller's contract).
                    self.write(dst, unsafe { at_range((self.sink)(o), &range) });
                }
            }
            // Outputs that are inputs (a scalar broadcast to the group's shape), and those not
            // written above (values with another layout).
            for (o, output) in group.outputs.iter().enumerate() {
                let value = match output.value {
                    Value::Input(k) => (self.input)(k, range.clone()),
                    // SAFETY: op `j`'s value in its slot, kept until the chunk's end since it
                    // is an output.
                    Value::Op(j) if group.ops[j].output != Some(o) => Src::Slice(unsafe {
                        slice::from_raw_parts(values.add(group.ops[j].slot * chunk), n)
                    }),
                    Value::Op(_) => continue,
                };
                // SAFETY: as for the op outputs above.
                value.write_to(unsafe { at_range((self.sink)(o), &range) });
            }
            from += n;
        }
    }

    fn write(&self, value: &[T], out: &mut [T]) {
        if self.stream {
            stream::copy(value, out);
        } else {
            out.copy_from_slice(value);
        }
    }
}

/// The elements `range` of the buffer at `base`.
///
/// # Safety
/// They are valid for writes, and nothing else reads or writes them while the slice lives.
unsafe fn at_range<'x, T>(base: *mut T, range: &Range<usize>) -> &'x mut [T] {
    // SAFETY: the caller's contract.
    unsafe { slice::from_raw_parts_mut(base.add(range.start), range.len()) }
}

/// The group's outputs as arrays.
fn wrap_outputs<T: Real + Scalar>(
    group: &FusedGroup,
    outputs: impl IntoIterator<Item = Vec<T>>,
    results: &mut Vec<Array>,
) {
    let wrap =
        |(v, o): (Vec<T>, &Output)| Array::from_buffer(&o.aval.shape, T::wrap(v), o.aval.weak);
    results.extend(outputs.into_iter().zip(&group.outputs).map(wrap));
}

/// Elements per parallel task: enough that per-task work (taking the scratch buffer, the
/// store fence) stays small beside the loops.
const TASK_LEN: usize = TILE;

/// Elements per parallel task of a group that folds all its elements in a compiled loop. On
/// `sum((p - t)**2)` over 25M f32, tasks of 8 * [`TILE`] took 7.0 ms where [`TILE`] took
/// 8.5 (each task collects its partial result as an array, and the partials are combined in
/// order); 32 * [`TILE`] was no faster. Each lane of the loop folds at most 1/64 of a task's
/// elements in sequence (f32), the lanes then pairwise.
const FOLDED_TASK_LEN: usize = 8 * TILE;

/// Elements per parallel task of a group run in [`Chunks`]: each task ends with a store
/// fence, which stalls the core until its streamed stores have drained (with a fence every
/// [`TASK_LEN`] elements, W1 spent a tenth of its time there).
const STREAMED_TASK_LEN: usize = 8 * TILE;

/// A tile's ops run over sub-tiles whose values (the ops' results and gathered inputs)
/// take at most this much memory together, so they stay in L1 or close to it while the ops
/// pass over them. (On the W5 hessian, 64 KiB ran 6% faster than 32 KiB: fewer, longer loops.)
const SUB_TILE_BYTES: usize = 64 << 10;
/// Sub-tiles hold at most this many bytes per value. Short sub-tiles interleave reading the
/// inputs from memory, computing and writing the outputs finely, which keeps the memory
/// busy; a whole tile at a time reads, then computes in cache, then writes.
const MAX_SUB_VALUE_BYTES: usize = 4 << 10;
/// Sub-tiles are at least this long, so that dispatching each op stays small beside its loop.
const MIN_SUB_TILE: usize = 256;

/// Elements per sub-tile of `group` when `gathered` of its inputs are gathered: fewer for
/// groups with many live values.
fn sub_tile_len<T>(group: &FusedGroup, gathered: usize) -> usize {
    let size = std::mem::size_of::<T>();
    let values = (group.arena_slots + gathered).max(1);
    (SUB_TILE_BYTES / (values * size)).clamp(MIN_SUB_TILE, MAX_SUB_VALUE_BYTES / size) / 64 * 64
}

/// How a group's tiles are cut into sub-tiles.
#[derive(Clone, Copy)]
struct TileLayout {
    /// The longest sub-tile.
    sub: usize,
    /// When set, sub-tiles stop at the ends of rows of this length (the iteration shape's
    /// last axis), so that [`Source::InRow`] inputs need no gather.
    row: Option<usize>,
    /// How many inputs are gathered into scratch slots.
    gathered: usize,
}

/// How a tile reads one input of a group.
#[derive(Clone, Copy)]
enum Read {
    Full,
    Scalar,
    /// Gathered per sub-tile into this scratch slot.
    Gather(usize),
    /// Gathered once per tile into this scratch slot (see [`Source::Periodic`]).
    Periodic(usize),
    /// Read in place by sub-tiles that stay inside a row (see [`Source::InRow`]).
    InRow,
}

/// Decides how `group`'s tiles read their broadcast inputs, and how they are cut.
///
/// Broadcasts are what make fused groups slow: gathered afresh for every sub-tile, each costs
/// as much as an op. When every broadcast input repeats with a short period (a bias added to
/// every row), sub-tiles are made a multiple of the period and each input is gathered once per
/// tile. Otherwise, when rows are long, sub-tiles stop at row ends, and inputs that are
/// broadcast along a row or contiguous in it are read in place. Only what remains is gathered
/// per sub-tile.
fn plan_reads<T>(group: &FusedGroup) -> (ReadPlan, TileLayout) {
    let strided = || group.inputs.iter().map(|(_, l)| l).filter(|l| matches!(l, Load::Strided(_)));
    let base = sub_tile_len::<T>(group, strided().count());
    let period = strided().try_fold(1, |l, load| lcm(l, load.period(&group.shape)?, base));
    let row = group.shape.last().copied().filter(|&r| r >= MIN_SUB_TILE);
    let plan = ReadPlan { period, row };
    let (mut gathered, mut in_row) = (0, false);
    for (_, load) in &group.inputs {
        in_row |= matches!(plan.read(load, &mut gathered), Read::InRow);
    }
    let layout = match period {
        Some(period) => TileLayout { sub: base / period * period, row: None, gathered },
        None => TileLayout {
            sub: sub_tile_len::<T>(group, gathered),
            row: row.filter(|_| in_row),
            gathered,
        },
    };
    (plan, layout)
}

/// What [`plan_reads`] decided, from which each input's [`Read`] follows.
#[derive(Clone, Copy)]
struct ReadPlan {
    /// The period every broadcast input repeats with, if they all do (and it is short).
    period: Option<usize>,
    /// The row length, if rows are long enough for sub-tiles cut at their ends.
    row: Option<usize>,
}

impl ReadPlan {
    /// How an input is read; `gathered` counts the inputs given scratch slots so far.
    fn read(self, load: &Load, gathered: &mut usize) -> Read {
        let mut slot = || {
            *gathered += 1;
            *gathered - 1
        };
        match load {
            Load::Full => Read::Full,
            Load::Scalar => Read::Scalar,
            Load::Strided(_) if self.period.is_some() => Read::Periodic(slot()),
            Load::Strided(s) if self.row.is_some() && read_in_row(s) => Read::InRow,
            Load::Strided(_) => Read::Gather(slot()),
        }
    }
}

/// The least common multiple of `a` and `b`, if it is at most `max`.
fn lcm(a: usize, b: usize, max: usize) -> Option<usize> {
    let gcd = |mut x: usize, mut y: usize| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    Some(a / gcd(a, b) * b).filter(|&l| l <= max)
}

/// Whether a broadcast input reads one run or one element per row (its last stride is 0 or 1).
fn read_in_row(strides: &[usize]) -> bool {
    strides.last().is_some_and(|&s| s <= 1)
}

/// The position in a broadcast input of element `flat` of the iteration shape.
fn strided_offset(shape: &[usize], strides: &[usize], mut flat: usize) -> usize {
    let mut offset = 0;
    for (&extent, &stride) in shape.iter().zip(strides).rev() {
        offset += flat % extent * stride;
        flat /= extent;
    }
    offset
}

/// Groups at least this large read their inputs from memory and write their outputs with
/// non-temporal stores (smaller ones are likely in cache, and read again soon). Their inputs
/// are left to the hardware prefetchers: asking for them four sub-tiles ahead in software
/// made W1 10% slower, and groups of two and three inputs no faster.
pub(crate) const STREAM_MIN_BYTES: usize = 4 << 20;

/// Whether `group` writes its outputs with non-temporal stores (see [`STREAM_MIN_BYTES`]).
fn streams<T>(group: &FusedGroup) -> bool {
    group.len() * std::mem::size_of::<T>() >= STREAM_MIN_BYTES
}

/// Computes elements `start..start + len` of every output, a sub-tile at a time, and returns
/// the tile's part of the group's reduction, if it has one (see [`TileFold`]).
///
/// # Safety
/// Each sink has room for the group's length, and no other thread touches this range of it.
unsafe fn run_tile<T: Real + Scalar + Identities>(
    group: &FusedGroup,
    sources: &[Source<T>],
    sinks: &[DisjointOut<T>],
    layout: TileLayout,
    start: usize,
    len: usize,
) -> Option<Vec<T>> {
    let stream = streams::<T>(group);
    let sub = layout.sub.min(len);
    // One scratch buffer per tile: a sub-tile slot per op value (`TileOp::slot`), then one
    // per gathered input.
    let slots = group.arena_slots + layout.gathered;
    let mut arena: Vec<T> = pool::take_for_overwrite(sub * slots, T::from_i64(0));
    let (values, gathers) = arena.split_at_mut(sub * group.arena_slots);
    // Every sub-tile starts a whole number of periods after `start`, so reads the same values.
    for source in sources {
        if let Source::Periodic(v, strides, slot) = source {
            let dst = &mut gathers[slot * sub..(slot + 1) * sub];
            super::fused::gather_into(v, strides, &group.shape, start, dst);
        }
    }
    let mut scratch = Scratch { at: Vec::with_capacity(group.ops.len()), offsets: Vec::new() };
    if layout.row.is_some() {
        scratch.offsets.resize(sources.len(), 0);
    }
    // Outputs written in another order are staged in order for the whole tile, then moved to
    // their places while the tile is still in cache.
    let mut staged: Vec<Option<Vec<T>>> = group
        .outputs
        .iter()
        .map(|o| match o.layout {
            Layout::RowMajor => None,
            Layout::Transposed { .. } => Some(pool::take_for_overwrite(len, T::from_i64(0))),
        })
        .collect();
    let mut places = Vec::with_capacity(group.outputs.len());
    let mut fold = group.reduction.as_ref().map(|r| TileFold::<T>::new(r, len));
    let mut from = 0;
    while from < len {
        let mut n = sub.min(len - from);
        if let Some(row) = layout.row {
            n = n.min(row - (start + from) % row);
        }
        places.clear();
        places.extend(staged.iter_mut().zip(sinks).map(|(staged, sink)| match staged {
            Some(staged) => Place { at: staged[from..].as_mut_ptr(), stream: false },
            // SAFETY: inside the output (the caller's contract).
            None => Place { at: unsafe { sink.get().add(start + from) }, stream },
        }));
        let (values, gathers) = (values.as_mut_ptr(), &mut *gathers);
        // SAFETY: the caller's contract, for the sub-range `start + from..start + from + n`;
        // the places hold `n` elements each.
        unsafe {
            run_sub_tile(
                group,
                sources,
                &places,
                start + from,
                n,
                sub,
                values,
                gathers,
                &mut scratch,
            )
        };
        if let Some(fold) = &mut fold {
            // SAFETY: the reduced op wrote its `n` elements at `at[value]`, kept until the
            // sub-tile's end since the reduction reads it.
            fold.add(from, unsafe { slice::from_raw_parts(scratch.at[fold.value], n) });
        }
        from += n;
    }
    if stream {
        stream::fence();
    }
    for ((output, staged), sink) in group.outputs.iter().zip(staged).zip(sinks) {
        if let (Layout::Transposed { rows, cols }, Some(staged)) = (output.layout, staged) {
            // SAFETY: the output holds the group's `rows * cols` elements, and this tile's
            // range of places is its own (the caller's contract).
            unsafe { super::copy::write_transposed(&staged, start, rows, cols, sink.get()) };
            drop(T::wrap(staged));
        }
    }
    // Back to this thread's cache of tile buffers.
    drop(T::wrap(arena));
    fold.map(TileFold::finish)
}

/// Where a sub-tile writes an output's elements.
struct Place<T> {
    /// The output's first element of the sub-tile.
    at: *mut T,
    /// Whether it is written with non-temporal stores.
    stream: bool,
}

/// Per-tile bookkeeping that sub-tiles reuse.
struct Scratch<T> {
    /// Where each op's value of the current sub-tile lies.
    at: Vec<*mut T>,
    /// For each [`Source::InRow`] input, where the current sub-tile's run of it starts.
    offsets: Vec<usize>,
}

/// Computes elements `start..start + len` of every output, writing output `o` at
/// `places[o]`. `values` holds a slot of `stride` elements per op value, `gathers` one per
/// gathered input.
///
/// # Safety
/// Each place is valid for writes of `len` elements that nothing else touches meanwhile, and
/// lies outside the inputs and scratch; `values` points to `stride * arena_slots` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn run_sub_tile<T: Real + Scalar>(
    group: &FusedGroup,
    sources: &[Source<T>],
    places: &[Place<T>],
    start: usize,
    len: usize,
    stride: usize,
    values: *mut T,
    gathers: &mut [T],
    scratch: &mut Scratch<T>,
) {
    for (k, source) in sources.iter().enumerate() {
        match source {
            Source::Strided(v, strides, slot) => {
                let dst = &mut gathers[slot * stride..slot * stride + len];
                super::fused::gather_into(v, strides, &group.shape, start, dst);
            }
            Source::InRow(_, strides) => {
                scratch.offsets[k] = strided_offset(&group.shape, strides, start)
            }
            Source::Full(_) | Source::Scalar(_) | Source::Periodic(..) => {}
        }
    }
    let (gathers, offsets, at) = (&*gathers, &scratch.offsets, &mut scratch.at);
    let input = |k: usize| match &sources[k] {
        Source::Full(v) => Src::Slice(&v[start..start + len]),
        Source::Scalar(x) => Src::Scalar(*x),
        Source::Strided(.., slot) | Source::Periodic(.., slot) => {
            Src::Slice(&gathers[slot * stride..slot * stride + len])
        }
        Source::InRow(v, strides) => match strides.last() {
            Some(0) => Src::Scalar(v[offsets[k]]),
            _ => Src::Slice(&v[offsets[k]..offsets[k] + len]),
        },
    };
    at.clear();
    for op in &group.ops {
        let operand = |v: Value| match v {
            Value::Input(k) => input(k),
            // SAFETY: an earlier op `j` wrote its `len` elements at `at[j]`, which nothing writes
            // again before op `j`'s last reader has run (its slot is reused only after that).
            Value::Op(j) => Src::Slice(unsafe { slice::from_raw_parts(at[j], len) }),
        };
        let first = operand(op.inputs[0]);
        let second = op.inputs.get(1).map(|&v| operand(v));
        let direct = op.output.filter(|&o| !places[o].stream);
        let place = match direct {
            // Output `o`'s place (the caller's contract).
            Some(o) => places[o].at,
            // SAFETY: this op's slot of the scratch, holding `stride >= len` elements; the
            // value there before, if any, has had its last reader.
            None => unsafe { values.add(op.slot * stride) },
        };
        // SAFETY: `place` holds `len` elements that no operand of this op reads.
        let dst = unsafe { slice::from_raw_parts_mut(place, len) };
        apply_widest(op.slice.expect("slice groups have slice ops"), first, second, dst);
        if let (Some(o), None) = (op.output, direct) {
            // SAFETY: output `o`'s place (the caller's contract).
            stream::copy(dst, unsafe { slice::from_raw_parts_mut(places[o].at, len) });
        }
        at.push(place);
    }
    // Outputs that are inputs read through a broadcast, and those not written above (values
    // staged for another layout).
    for (o, output) in group.outputs.iter().enumerate() {
        let value = match output.value {
            Value::Input(k) => input(k),
            // SAFETY: op `j` wrote its `len` elements at `at[j]`, kept until the sub-tile's end
            // since its value is an output.
            Value::Op(j) if group.ops[j].output != Some(o) => {
                Src::Slice(unsafe { slice::from_raw_parts(at[j], len) })
            }
            Value::Op(_) => continue,
        };
        // SAFETY: output `o`'s place (the caller's contract).
        value.write_to(unsafe { slice::from_raw_parts_mut(places[o].at, len) });
    }
}

/// [`apply`] compiled for AVX-512 or AVX2 and FMA when the CPU has them (the crate's baseline
/// is SSE2; with FMA, the `mul_add`s of XLA's functions are instructions, not library calls).
fn apply_widest<T: Real + Scalar>(
    op: SliceOp,
    first: Src<T>,
    second: Option<Src<T>>,
    dst: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { apply_avx512(op, first, second, dst) };
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { apply_avx2(op, first, second, dst) };
        }
    }
    apply(op, first, second, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn apply_avx512<T: Real + Scalar>(
    op: SliceOp,
    first: Src<T>,
    second: Option<Src<T>>,
    dst: &mut [T],
) {
    apply(op, first, second, dst)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
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
                // The same per-element function as the slice loop, so the same bits.
                let mut y = [x];
                unary::float_op_into(op, &[x], &mut y);
                dst.fill(y[0])
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

    /// Copies `words` 4-byte words, streaming the aligned middle of the destination: whole
    /// 64-byte lines with AVX-512, 16-byte pieces otherwise.
    ///
    /// # Safety
    /// `src` and `dst` are valid for `words` 4-byte reads and writes and do not overlap.
    #[cfg(target_arch = "x86_64")]
    unsafe fn copy_words(src: *const f32, dst: *mut f32, words: usize) {
        use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
        let avx512 = std::is_x86_feature_detected!("avx512f");
        // Words up to the first 16-byte and 64-byte boundaries of `dst`.
        let to_boundary = |align: usize| ((align - (dst as usize % align)) % align / 4).min(words);
        let head = to_boundary(16);
        // SAFETY: every offset below is `< words`, inside both ranges (the caller's contract);
        // the streaming stores get addresses aligned to their width (`head` aligns `dst` to
        // 16 bytes, the loop before `lines` to 64; `dst` is at least 4-aligned, as an
        // `f32`/`f64` buffer is); SSE is part of x86-64 and AVX-512F was detected before
        // `lines` is called.
        unsafe {
            // (Guarded: the calls cost more than the chunks of a streamed group they copy.)
            if head > 0 {
                std::ptr::copy_nonoverlapping(src, dst, head);
            }
            let mut i = head;
            if avx512 {
                // The start of a partly written line is streamed too: a plain store there
                // would read the line from memory first (on one Xeon that made W1 4x slower
                // when buffers started 16 bytes past a line).
                let line = to_boundary(64);
                while i + 4 <= line {
                    _mm_stream_ps(dst.add(i), _mm_loadu_ps(src.add(i)));
                    i += 4;
                }
                i += lines(src.add(i), dst.add(i), (words - i) / 16) * 16;
            }
            while i + 4 <= words {
                _mm_stream_ps(dst.add(i), _mm_loadu_ps(src.add(i)));
                i += 4;
            }
            if i < words {
                std::ptr::copy_nonoverlapping(src.add(i), dst.add(i), words - i);
            }
        }
    }

    /// Streams `count` 64-byte lines to the 64-byte-aligned `dst`; returns `count`.
    ///
    /// # Safety
    /// The CPU has AVX-512F; `src` and `dst` are valid for `16 * count` 4-byte reads and
    /// writes and do not overlap.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn lines(src: *const f32, dst: *mut f32, count: usize) -> usize {
        use std::arch::x86_64::{_mm512_loadu_ps, _mm512_stream_ps};
        for l in 0..count {
            // SAFETY: inside both ranges, and `dst + 16 * l` is 64-byte aligned (the caller's
            // contract).
            unsafe { _mm512_stream_ps(dst.add(16 * l), _mm512_loadu_ps(src.add(16 * l))) };
        }
        count
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
