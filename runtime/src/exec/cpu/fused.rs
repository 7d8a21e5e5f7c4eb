//! Running a fused group on the CPU, tile by tile.
//!
//! Groups of f32 or f64 whose ops all have slice forms (with or without a reduction at their
//! end) take the fast path of [`super::fused_float`]; this module runs every other group
//! (other dtypes, comparisons, selects, conversions, and reductions of those) with the ops'
//! own kernels.
//!
//! The iteration shape is cut into tiles of whole rows of about [`TILE`] elements. For each
//! tile, every input is read into a tile-sized array (a copy of its range, a gather through
//! broadcast strides, or a shared scalar), each op runs its ordinary kernel on the tile —
//! the same vectorized loops as op by op, so elementwise results are bit-identical — and the
//! values the program needs are copied to their place in the outputs. Intermediates never
//! leave the cache. Tiles run in parallel on rayon; the partial results of a reduction are
//! combined in tile order, so the result does not depend on the thread count.
//!
//! An output may take over the buffer of an input of the same dtype that dies in this group
//! and has no other owner: each tile reads its range before writing the same range.

use rayon::prelude::*;

use super::float_mode::Flushing;
use super::pool;
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::exec::fusion::{FusedGroup, Layout, Load, Output, ReduceLayout, Reduction, Value, TILE};
use crate::primitives::{Aval, Primitive, Reduce, Transpose};

/// Runs `group` on its inputs (in [`FusedGroup::inputs`] order; an input passed with no other
/// owner may lend its buffer to an output) and appends to `results` the outputs, then the
/// reduction's result. The caller clears `inputs` afterwards (both are vectors reused from
/// run to run).
pub fn run(group: &FusedGroup, inputs: &mut Vec<Array>, results: &mut Vec<Array>) {
    match group.slice_dtype {
        Some(DType::F32) => super::fused_float::run::<f32>(group, inputs, results),
        Some(DType::F64) => super::fused_float::run::<f64>(group, inputs, results),
        _ => results.extend(run_generic(group, std::mem::take(inputs))),
    }
}

/// Runs a group with the ops' own kernels, tile by tile.
fn run_generic(group: &FusedGroup, inputs: Vec<Array>) -> Vec<Array> {
    let (n, row) = (group.len(), group.row_len());
    let (tile_len, tiles) = group.row_tiles();
    if tiles == 1 {
        return run_whole(group, inputs);
    }
    let mut inputs: Vec<Option<Array>> = inputs.into_iter().map(Some).collect();
    let (donated, donors) = donate_buffers(group, &mut inputs);
    let mut outputs: Vec<Buffer> = donated
        .into_iter()
        .zip(&group.outputs)
        .map(|(buf, o)| buf.unwrap_or_else(|| uninit(o.aval.dtype, n)))
        .collect();
    let sinks: Vec<RawBuf> = outputs.iter_mut().map(RawBuf::of).collect();
    let reads: Vec<Read> = group
        .inputs
        .iter()
        .zip(&inputs)
        .enumerate()
        .map(|(k, ((_, load), input))| match (donors.iter().position(|&d| d == Some(k)), input) {
            // A donated buffer is read through the output that took it.
            (Some(o), _) => Read::Full(sinks[o], group.outputs[o].aval.weak),
            (None, Some(input)) => Read::new(load, input),
            (None, None) => unreachable!("only donated inputs are taken"),
        })
        .collect();
    let tile = |t: usize| -> Option<Array> {
        let start = t * tile_len;
        let len = tile_len.min(n - start);
        run_tile(group, &reads, &sinks, start, len, len / row)
    };
    let partials: Vec<Option<Array>> = if n < 2 * TILE {
        (0..tiles).map(tile).collect()
    } else {
        (0..tiles).into_par_iter().flushing().map(tile).collect()
    };
    let mut results: Vec<Array> = outputs
        .into_iter()
        .zip(&group.outputs)
        .map(|(buf, o)| lay_out(o, Array::from_buffer(&group.shape, buf, o.aval.weak)))
        .collect();
    if let Some(r) = &group.reduction {
        results.push(combine(r, partials.into_iter().flatten().collect()));
    }
    results
}

/// Gives each output, where it can, the buffer of an input it can overwrite: one read in
/// full, of the output's dtype, that nothing else owns. Returns the buffers and, per output,
/// the input that gave it.
type Donations = (Vec<Option<Buffer>>, Vec<Option<usize>>);
fn donate_buffers(group: &FusedGroup, inputs: &mut [Option<Array>]) -> Donations {
    let mut buffers = vec![None; group.outputs.len()];
    let mut donors = vec![None; group.outputs.len()];
    for (o, Output { aval, .. }) in group.outputs.iter().enumerate() {
        for (k, (_, load)) in group.inputs.iter().enumerate() {
            let fits =
                *load == Load::Full && inputs[k].as_ref().is_some_and(|a| a.dtype() == aval.dtype);
            if !fits {
                continue;
            }
            let array = inputs[k].take().expect("checked above");
            match array.into_unique_buffer() {
                Ok(buffer) => {
                    buffers[o] = Some(buffer);
                    donors[o] = Some(k);
                    break;
                }
                Err(array) => inputs[k] = Some(array),
            }
        }
    }
    (buffers, donors)
}

/// A group small enough for one tile runs on its whole arrays: inputs are read in place and
/// the ops' results are the outputs, with nothing copied.
fn run_whole(group: &FusedGroup, inputs: Vec<Array>) -> Vec<Array> {
    let shape = match group.reduction {
        Some(_) => tile_shape(group, group.len() / group.row_len(), group.len()),
        None => group.shape.clone(),
    };
    let tiles = group
        .inputs
        .iter()
        .zip(&inputs)
        .map(|((_, load), input)| match load {
            Load::Full => input.with_shape(shape.clone()),
            Load::Scalar => input.with_shape(Vec::new()),
            Load::Strided(strides) => Read::Strided(input.clone(), strides.clone()).tile(
                &group.shape,
                0,
                group.len(),
                &shape,
            ),
        })
        .map(Some)
        .collect();
    let (inputs, values) = eval_tile(group, tiles, &shape);
    let mut results: Vec<Array> = group
        .outputs
        .iter()
        .map(|o| {
            let value = read_value(o.value, &inputs, &values).with_shape(group.shape.clone());
            lay_out(o, value.with_weak_type(o.aval.weak))
        })
        .collect();
    if let Some(r) = &group.reduction {
        let partial = reduce_tile(r, &inputs, &values, shape[0]);
        results.push(partial.with_shape(r.aval.shape.clone()));
    }
    results
}

/// An output computed in the iteration order (`value`, of the iteration shape), in its own
/// layout and shape.
fn lay_out(output: &Output, value: Array) -> Array {
    let value = match output.layout {
        Layout::RowMajor => value,
        Layout::Transposed { rows, cols } => {
            let aval = Aval { shape: vec![cols, rows], ..output.aval.clone() };
            let transpose = Transpose { permutation: vec![1, 0] };
            transpose.eval(&[&value.with_shape(vec![rows, cols])], &[aval]).remove(0)
        }
    };
    value.with_shape(output.aval.shape.clone())
}

/// The shape a tile of `rows` rows (`len` elements) is computed in: 2-D rows for a group that
/// ends with a reduction, flat otherwise (the whole iteration shape for a single tile).
fn tile_shape(group: &FusedGroup, rows: usize, len: usize) -> Vec<usize> {
    match group.reduction {
        Some(_) => vec![rows, group.row_len()],
        None => vec![len],
    }
}

/// Runs the group's ops on one tile's inputs (all shaped `shape`, or scalars), returning the
/// inputs and op results still alive at the end.
fn eval_tile(
    group: &FusedGroup,
    mut inputs: Vec<Option<Array>>,
    shape: &[usize],
) -> (Vec<Option<Array>>, Vec<Option<Array>>) {
    let mut values: Vec<Option<Array>> = vec![None; group.ops.len()];
    for (i, op) in group.ops.iter().enumerate() {
        let args: Vec<Array> = op.inputs.iter().map(|&v| read_value(v, &inputs, &values)).collect();
        let refs: Vec<&Array> = args.iter().collect();
        let aval = Aval { shape: shape.to_vec(), dtype: op.dtype, weak: op.weak };
        let out = op.prim.eval(&refs, std::slice::from_ref(&aval));
        values[i] = out.into_iter().next();
        for &dead in &op.release {
            match dead {
                Value::Input(k) => inputs[k] = None,
                Value::Op(k) => values[k] = None,
            }
        }
    }
    (inputs, values)
}

fn read_value(v: Value, inputs: &[Option<Array>], values: &[Option<Array>]) -> Array {
    let slot = match v {
        Value::Input(k) => &inputs[k],
        Value::Op(k) => &values[k],
    };
    slot.clone().expect("tile values are computed before they are read")
}

/// Computes one tile: `len` elements from flat index `start`, `rows` rows of the layout.
/// Returns the tile's partial reduction, if the group ends with one.
fn run_tile(
    group: &FusedGroup,
    reads: &[Read],
    sinks: &[RawBuf],
    start: usize,
    len: usize,
    rows: usize,
) -> Option<Array> {
    let shape = tile_shape(group, rows, len);
    let tiles = reads.iter().map(|r| Some(r.tile(&group.shape, start, len, &shape))).collect();
    let (inputs, values) = eval_tile(group, tiles, &shape);
    for (output, sink) in group.outputs.iter().zip(sinks) {
        let tile = read_value(output.value, &inputs, &values);
        // SAFETY: each tile writes only its own range `start..start + len` of an output of the
        // group's length, and tiles' ranges are disjoint.
        unsafe { sink.write(start, tile.buffer()) };
    }
    let r = group.reduction.as_ref()?;
    Some(reduce_tile(r, &inputs, &values, rows))
}

/// A tile's reduction: its rows' results (trailing axes reduced) or its partial result over
/// the kept columns (leading axes reduced).
fn reduce_tile(
    r: &Reduction,
    inputs: &[Option<Array>],
    values: &[Option<Array>],
    rows: usize,
) -> Array {
    let tile = read_value(r.input, inputs, values);
    let (axis, out_len) = match r.layout {
        ReduceLayout::Rows { .. } => (1, rows),
        ReduceLayout::Columns { kept } => (0, kept),
    };
    let reduce = Reduce { op: r.op, axes: vec![axis] };
    let aval = Aval { shape: vec![out_len], dtype: r.aval.dtype, weak: r.aval.weak };
    reduce.eval(&[&tile], std::slice::from_ref(&aval)).remove(0)
}

/// Combines the tiles' partial reductions, in tile order, into the reduction's result.
pub(super) fn combine(r: &Reduction, partials: Vec<Array>) -> Array {
    let dtype = r.aval.dtype;
    let parts: Vec<&Buffer> = partials.iter().map(Array::buffer).collect();
    let joined = concat(dtype, &parts);
    match r.layout {
        ReduceLayout::Rows { .. } => Array::from_buffer(&r.aval.shape, joined, r.aval.weak),
        ReduceLayout::Columns { kept } => {
            let stacked = Array::from_buffer(&[partials.len(), kept], joined, r.aval.weak);
            let reduce = Reduce { op: r.op, axes: vec![0] };
            let aval = Aval { shape: vec![kept], dtype, weak: r.aval.weak };
            let flat = reduce.eval(&[&stacked], std::slice::from_ref(&aval)).remove(0);
            Array::from_buffer(&r.aval.shape, flat.buffer().clone(), r.aval.weak)
        }
    }
}

fn concat(dtype: DType, parts: &[&Buffer]) -> Buffer {
    crate::with_dtype!(dtype, |T| {
        let mut v: Vec<T> = super::alloc::with_capacity(parts.iter().map(|p| p.len()).sum());
        for p in parts {
            v.extend_from_slice(T::slice(p).expect("partials share the reduction's dtype"));
        }
        T::wrap(v)
    })
}

/// A buffer of `n` elements of `dtype` whose contents the group overwrites.
fn uninit(dtype: DType, n: usize) -> Buffer {
    crate::with_dtype!(dtype, |T| T::wrap(pool::take_for_overwrite::<T>(n, zero::<T>())))
}

fn zero<T: Element>() -> T {
    T::from_i64(0)
}

/// How a tile reads one input.
enum Read {
    /// A contiguous range of a buffer of the iteration shape (and the input's weak flag).
    Full(RawBuf, bool),
    /// The same one-element array for every tile.
    Scalar(Array),
    /// A gather through per-axis strides from a broadcast operand.
    Strided(Array, Vec<usize>),
}

impl Read {
    fn new(load: &Load, input: &Array) -> Read {
        match load {
            Load::Full => Read::Full(RawBuf::reading(input.buffer()), input.is_weak()),
            Load::Scalar => {
                Read::Scalar(Array::from_buffer(&[], input.buffer().clone(), input.is_weak()))
            }
            Load::Strided(strides) => Read::Strided(input.clone(), strides.clone()),
        }
    }

    /// The tile of this input over flat range `start..start + len`, shaped `shape`.
    fn tile(&self, full: &[usize], start: usize, len: usize, shape: &[usize]) -> Array {
        match self {
            Read::Full(raw, weak) => Array::from_buffer(shape, raw.read(start, len), *weak),
            Read::Scalar(a) => a.clone(),
            Read::Strided(a, strides) => {
                let buffer = crate::with_buffer!(a.buffer(), |v: T| {
                    T::wrap(gather(v, strides, full, start, len))
                });
                Array::from_buffer(shape, buffer, a.is_weak())
            }
        }
    }
}

/// Elements `start..start + len` (flat, row-major over `shape`) of an operand read through
/// `strides`.
pub(super) fn gather<T: Element>(
    src: &[T],
    strides: &[usize],
    shape: &[usize],
    start: usize,
    len: usize,
) -> Vec<T> {
    let mut out: Vec<T> = pool::take_for_overwrite(len, zero::<T>());
    gather_into(src, strides, shape, start, &mut out);
    out
}

/// Fills `out` with elements `start..start + out.len()` (flat, row-major over `shape`) of an
/// operand read through `strides`.
pub(super) fn gather_into<T: Copy>(
    src: &[T],
    strides: &[usize],
    shape: &[usize],
    start: usize,
    out: &mut [T],
) {
    let rank = shape.len();
    let mut idx = vec![0usize; rank];
    let mut rem = start;
    for a in (0..rank).rev() {
        idx[a] = rem % shape[a];
        rem /= shape[a];
    }
    let mut offset: usize = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
    let (last, inner) = (shape[rank - 1], strides[rank - 1]);
    let mut pos = 0;
    while pos < out.len() {
        let run = (last - idx[rank - 1]).min(out.len() - pos);
        let dst = &mut out[pos..pos + run];
        match inner {
            0 => dst.fill(src[offset]),
            1 => dst.copy_from_slice(&src[offset..offset + run]),
            s => dst.iter_mut().enumerate().for_each(|(k, d)| *d = src[offset + k * s]),
        }
        pos += run;
        idx[rank - 1] += run;
        offset += run * inner;
        let mut a = rank - 1;
        while a > 0 && idx[a] == shape[a] {
            offset -= idx[a] * strides[a];
            idx[a] = 0;
            idx[a - 1] += 1;
            offset += strides[a - 1];
            a -= 1;
        }
    }
}

/// A buffer's storage seen as raw memory, so tiles on several threads can read and write
/// disjoint ranges of it (and an output can overwrite the input whose buffer it took).
#[derive(Clone, Copy)]
struct RawBuf {
    ptr: *mut u8,
    len: usize,
    dtype: DType,
}

// SAFETY: a `RawBuf` is only used while the buffer it points into is alive and not otherwise
// accessed (the group owns or borrows it for the duration of `run`), and tiles touch disjoint
// ranges.
unsafe impl Send for RawBuf {}
// SAFETY: as above.
unsafe impl Sync for RawBuf {}

impl RawBuf {
    fn of(buffer: &mut Buffer) -> RawBuf {
        let dtype = buffer.dtype();
        let len = buffer.len();
        let ptr = crate::with_buffer!(buffer, |v: T| v.as_mut_ptr().cast::<u8>());
        RawBuf { ptr, len, dtype }
    }

    fn reading(buffer: &Buffer) -> RawBuf {
        let dtype = buffer.dtype();
        let len = buffer.len();
        let ptr = crate::with_buffer!(buffer, |v: T| v.as_ptr().cast::<u8>().cast_mut());
        RawBuf { ptr, len, dtype }
    }

    /// A copy of elements `start..start + len`.
    fn read(&self, start: usize, len: usize) -> Buffer {
        assert!(start + len <= self.len, "a tile reads inside its input");
        crate::with_dtype!(self.dtype, |T| {
            let mut v: Vec<T> = pool::take(len);
            // SAFETY: `start + len <= self.len` elements of `T` live at `ptr` (checked above);
            // the destination has capacity `len`, and the ranges cannot overlap (fresh memory).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (self.ptr as *const T).add(start),
                    v.as_mut_ptr(),
                    len,
                );
                v.set_len(len);
            }
            T::wrap(v)
        })
    }

    /// Writes `tile` at `start`.
    ///
    /// # Safety
    /// No other thread reads or writes `start..start + tile.len()` meanwhile.
    unsafe fn write(&self, start: usize, tile: &Buffer) {
        let len = tile.len();
        assert!(
            start + len <= self.len && tile.dtype() == self.dtype,
            "a tile writes inside its output"
        );
        crate::with_buffer!(tile, |v: T| {
            // SAFETY: the range is inside the buffer (checked above), of the same element type,
            // and no one else touches it (the caller's contract); `v` is a separate allocation.
            unsafe {
                std::ptr::copy_nonoverlapping(v.as_ptr(), (self.ptr as *mut T).add(start), len)
            }
        })
    }
}
