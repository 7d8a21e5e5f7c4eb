//! Copy kernels for the shape and indexing primitives: strided reads (slice, rev, broadcast),
//! cache-tiled transposes, concatenation, padding, and gathers and scatters along one axis.
//!
//! Every kernel writes its output in row-major order, in contiguous chunks that rayon fills in
//! parallel once the output is large, reading the source wherever each element comes from.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::elementwise::{build, build_chunked, PARALLEL_THRESHOLD};
use super::float_mode::Flushing;
use crate::dtype::Element;
use crate::shape::contiguous_strides;

/// Elements per parallel task for row-structured kernels.
const TASK_ELEMENTS: usize = 1 << 14;
/// Output rows a transpose moves at a time (its tiles span whole rows). At power-of-two row
/// lengths the lines of a tile fall into few L1 sets, and 32-row tiles overflow them:
/// transposing 512x512 f32 took 76 us with 32x32 tiles and 42 us with 16x16 ones (256x256: 8.5
/// and 7 us).
const TILE: usize = 16;

/// Builds a `Vec` of `rows * row_len` elements by letting `fill(first_row, out)` write every
/// element of each chunk `out`, which holds whole rows starting at `first_row`. Chunks hold a
/// multiple of `align` rows (so tiled kernels get whole tiles) and run in parallel when large.
fn build_rows<D: Element>(
    rows: usize,
    row_len: usize,
    align: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<D>]) + Sync,
) -> Vec<D> {
    if rows * row_len == 0 {
        return Vec::new();
    }
    let per_task = (TASK_ELEMENTS / row_len).max(1).div_ceil(align) * align;
    build_chunked(rows * row_len, per_task * row_len, |start, out| fill(start / row_len, out))
}

/// Calls `f(pos, idx, len)` for each run of consecutive elements along the last axis of a
/// row-major array of `shape` (rank >= 1, no zero extents) that together cover the flat
/// elements `start..start + count`: `idx` is the multi-index of the run's first element and
/// `pos` its flat position relative to `start`.
fn for_each_run(
    shape: &[usize],
    start: usize,
    count: usize,
    mut f: impl FnMut(usize, &[usize], usize),
) {
    let rank = shape.len();
    let last = shape[rank - 1];
    let mut idx = vec![0usize; rank];
    let mut rem = start;
    for ax in (0..rank).rev() {
        idx[ax] = rem % shape[ax];
        rem /= shape[ax];
    }
    let mut pos = 0;
    while pos < count {
        let len = (last - idx[rank - 1]).min(count - pos);
        f(pos, &idx, len);
        pos += len;
        idx[rank - 1] += len;
        let mut ax = rank - 1;
        while ax > 0 && idx[ax] == shape[ax] {
            idx[ax] = 0;
            idx[ax - 1] += 1;
            ax -= 1;
        }
    }
}

/// Drops extent-1 axes of a strided view and merges neighbours that step through memory as one
/// axis, so runs are as long as possible. The result has at least one axis.
fn simplify(shape: &[usize], strides: &[isize]) -> (Vec<usize>, Vec<isize>) {
    let mut dims: Vec<usize> = Vec::new();
    let mut steps: Vec<isize> = Vec::new();
    for (&n, &s) in shape.iter().zip(strides) {
        if n == 1 {
            continue;
        }
        match (dims.last_mut(), steps.last_mut()) {
            (Some(d), Some(st)) if *st == s * n as isize => {
                *d *= n;
                *st = s;
            }
            _ => {
                dims.push(n);
                steps.push(s);
            }
        }
    }
    if dims.is_empty() {
        dims.push(1);
        steps.push(0);
    }
    (dims, steps)
}

fn dot(idx: &[usize], strides: &[isize]) -> isize {
    idx.iter().zip(strides).map(|(&i, &s)| i as isize * s).sum()
}

/// The elements of the view of `src` that starts at `offset` and steps `strides[ax]` elements
/// (negative to walk backwards, zero to repeat) along each axis of `shape`, in row-major order.
/// The caller guarantees every element of the view lies inside `src`.
pub fn strided_copy<T: Element>(
    src: &[T],
    offset: usize,
    strides: &[isize],
    shape: &[usize],
) -> Vec<T> {
    let n: usize = shape.iter().product();
    if n == 0 {
        return Vec::new();
    }
    let (dims, steps) = simplify(shape, strides);
    let inner = *steps.last().unwrap();
    build(n, |start, out| {
        for_each_run(&dims, start, out.len(), |pos, idx, len| {
            let base = offset as isize + dot(idx, &steps);
            let dst = &mut out[pos..pos + len];
            match inner {
                // Contiguous runs: a plain copy, which compiles to memcpy.
                1 => {
                    let b = base as usize;
                    for (o, &x) in dst.iter_mut().zip(&src[b..b + len]) {
                        o.write(x);
                    }
                }
                0 => {
                    let x = src[base as usize];
                    dst.iter_mut().for_each(|o| {
                        o.write(x);
                    });
                }
                s => {
                    for (k, o) in dst.iter_mut().enumerate() {
                        o.write(src[(base + k as isize * s) as usize]);
                    }
                }
            }
        })
    })
}

/// Asks the caches for the lines of `values`, ahead of a read the hardware prefetchers would
/// not foresee (they follow a stream, and stop at a page's end).
pub fn prefetch<T>(values: &[T]) {
    let line = (64 / std::mem::size_of::<T>()).max(1);
    for i in (0..values.len()).step_by(line) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `i < values.len()`; a prefetch has no other effect than on the caches.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(values.as_ptr().add(i).cast());
        }
    }
}

/// The row-major contents of the transpose of a contiguous array of `shape` by `perm` (output
/// axis `i` is input axis `perm[i]`).
///
/// Axes that stay neighbours are merged first; when the output's innermost axis then reads the
/// source with a stride, the copy moves square tiles so both sides stay in cache.
pub fn transpose<T: Element>(src: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let own = contiguous_strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let strides: Vec<isize> = perm.iter().map(|&p| own[p] as isize).collect();
    if out_shape.contains(&0) {
        return Vec::new();
    }
    let (dims, steps) = simplify(&out_shape, &strides);
    let unit = steps.iter().position(|&s| s == 1);
    match unit {
        Some(a) if a + 1 < dims.len() => tiled_transpose(src, &dims, &steps, a),
        _ => strided_copy(src, 0, &strides, &out_shape),
    }
}

/// Transpose of a simplified view whose axis `a` (not the last) has source stride 1.
///
/// Output rows are the index pairs (axes before `a`, axis `a`); each row holds the elements of
/// the axes after `a`. Groups of up to [`TILE`] rows with the same leading index are copied
/// whole: a source line holds at most a tile's width of a group's rows, so it is used up within
/// the group, and one tile per group keeps the per-tile work small beside the copying (256x256
/// f32 ran 15-25% faster than with square 16x16 tiles, 1024x1024 about 17%).
fn tiled_transpose<T: Element>(src: &[T], dims: &[usize], steps: &[isize], a: usize) -> Vec<T> {
    let last = dims.len() - 1;
    let row_len: usize = dims[a + 1..].iter().product();
    let rows: usize = dims[..=a].iter().product();
    let (lead_dims, lead_steps) = (&dims[..a], &steps[..a]);
    let (mid_dims, mid_steps) = (&dims[a + 1..last], &steps[a + 1..last]);
    let (cols, col_step) = (dims[last], steps[last]);
    let n_a = dims[a];
    build_rows(rows, row_len, TILE, |first_row, out| {
        let chunk_rows = out.len() / row_len;
        let mut r = first_row;
        while r < first_row + chunk_rows {
            // Rows r..r_end share their leading index and form at most one tile.
            let (lead, i0) = (r / n_a, r % n_a);
            let i_end = (i0 + TILE).min(n_a).min(i0 + first_row + chunk_rows - r);
            let lead_idx = unravel(lead, lead_dims);
            let lead_off = dot(&lead_idx, lead_steps);
            let block = &mut out[(r - first_row) * row_len..(r - first_row + i_end - i0) * row_len];
            let mid_count: usize = mid_dims.iter().product();
            for m in 0..mid_count {
                let mid_off = dot(&unravel(m, mid_dims), mid_steps);
                let base = lead_off + mid_off;
                let tile = Tile { rows: i0..i_end, cols: 0..cols, base, col_step, row_len };
                tile.copy(src, &mut block[m * cols..]);
            }
            r += i_end - i0;
        }
    })
}

/// One tile of a transpose: output rows `rows` (each `row_len` apart in the output), columns
/// `cols`, where output element `(i, j)` is source element `base + i + j * col_step`.
struct Tile {
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
    base: isize,
    col_step: isize,
    row_len: usize,
}

/// Side of the blocks a tile moves through a small local array: reads of `MICRO` contiguous
/// source elements and writes of `MICRO` contiguous output elements, instead of one strided
/// read per element.
const MICRO: usize = 8;

impl Tile {
    /// Copies the tile into `out`, whose first element is output element `(rows.start, 0)`.
    fn copy<T: Element>(&self, src: &[T], out: &mut [MaybeUninit<T>]) {
        if self.rows.is_empty() || self.cols.is_empty() {
            return;
        }
        let last = (self.rows.end - 1 - self.rows.start) * self.row_len + self.cols.end - 1;
        assert!(last < out.len(), "a tile's output lies inside `out`");
        // SAFETY: every element the tile writes lies at or before `last`, inside `out`, which
        // is borrowed mutably.
        unsafe { self.copy_to(src, out.as_mut_ptr().cast()) }
    }

    /// Copies the tile to `out`, which points to output element `(rows.start, 0)`.
    ///
    /// # Safety
    /// `out` is valid for writes of every element `(i - rows.start) * row_len + j` of the tile,
    /// and nothing else reads or writes them meanwhile.
    unsafe fn copy_to<T: Element>(&self, src: &[T], out: *mut T) {
        let (i0, j0) = (self.rows.start, self.cols.start);
        let whole = |r: &std::ops::Range<usize>| r.start + (r.end - r.start) / MICRO * MICRO;
        let (i_whole, j_whole) = (whole(&self.rows), whole(&self.cols));
        if avx_moves::<T>() {
            // SAFETY: `avx_moves` checked that the CPU has AVX and `T` is 4 bytes; the
            // caller's contract.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                self.blocks_avx(src, out, i_whole, j_whole)
            };
        } else {
            for j in (j0..j_whole).step_by(MICRO) {
                for i in (i0..i_whole).step_by(MICRO) {
                    // SAFETY: the caller's contract.
                    unsafe { self.micro(src, out, i, j) };
                }
            }
        }
        // The ragged right and bottom edges, element by element.
        for i in self.rows.clone() {
            let j_from = if i < i_whole { j_whole } else { j0 };
            for j in j_from..self.cols.end {
                // SAFETY: element `(i, j)` of the tile (the caller's contract).
                unsafe { out.add((i - i0) * self.row_len + j).write(src[self.source(i, j)]) };
            }
        }
    }

    /// The `MICRO x MICRO` block at output `(i, j)`: source rows in, output rows out.
    ///
    /// # Safety
    /// As [`Tile::copy_to`]'s, for a block inside the tile.
    #[inline(always)]
    unsafe fn micro<T: Element>(&self, src: &[T], out: *mut T, i: usize, j: usize) {
        let first = src[self.source(i, j)];
        let mut block = [[first; MICRO]; MICRO];
        for (jj, line) in block.iter_mut().enumerate() {
            let s = self.source(i, j + jj);
            line.copy_from_slice(&src[s..s + MICRO]);
        }
        for ii in 0..MICRO {
            let at = (i + ii - self.rows.start) * self.row_len + j;
            for (jj, line) in block.iter().enumerate() {
                // SAFETY: element `(i + ii, j + jj)` of the tile (the caller's contract).
                unsafe { out.add(at + jj).write(line[ii]) };
            }
        }
    }

    /// The whole `MICRO x MICRO` blocks of the tile, up to output `(i_whole, j_whole)`: eight
    /// source lines at a time in AVX registers, transposed there and stored as eight output
    /// lines (the loads and stores move bits only, so this serves every 4-byte element type).
    /// The bounds are checked once per tile rather than per line: this loop is what a
    /// transpose costs.
    ///
    /// # Safety
    /// The CPU has AVX and `T` is 4 bytes; as [`Tile::copy_to`]'s.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx")]
    unsafe fn blocks_avx<T: Element>(
        &self,
        src: &[T],
        out: *mut T,
        i_whole: usize,
        j_whole: usize,
    ) {
        use std::arch::x86_64::{_mm256_loadu_ps, _mm256_storeu_ps};
        let (i0, j0) = (self.rows.start, self.cols.start);
        if i_whole == i0 || j_whole == j0 {
            return;
        }
        let step = usize::try_from(self.col_step).expect("a transpose reads forward");
        // Element (i, j) is read at `source(i, j)`, which grows with both: the last element of
        // the last block bounds them all.
        assert!(self.source(i_whole - 1, j_whole - 1) < src.len());
        let (from, to) = (src.as_ptr().cast::<f32>(), out.cast::<f32>());
        // Output columns outermost: the eight source lines a column block reads are used up
        // (every row block of the tile) before the next eight are read.
        for j in (j0..j_whole).step_by(MICRO) {
            for i in (i0..i_whole).step_by(MICRO) {
                // SAFETY: the eight lines of eight elements read here lie inside `src` (asserted
                // above), and the eight written are the tile's (the caller's contract); `T` is 4
                // bytes like f32 (the caller's contract), and unaligned loads and stores accept
                // any address.
                unsafe {
                    let at = from.add(self.source(i, j));
                    let lines = std::array::from_fn(|k| _mm256_loadu_ps(at.add(k * step)));
                    let at = to.add((i - i0) * self.row_len + j);
                    for (k, row) in transpose_8x8(lines).into_iter().enumerate() {
                        _mm256_storeu_ps(at.add(k * self.row_len), row);
                    }
                }
            }
        }
    }

    fn source(&self, i: usize, j: usize) -> usize {
        (self.base + i as isize + j as isize * self.col_step) as usize
    }
}

/// Writes elements `start..start + values.len()` of a row-major `[rows, cols]` matrix, given
/// in order in `values`, to their places in its `[cols, rows]` transpose at `out`: the rows
/// the range covers move as tiles, each partial first or last row as a tile of its own.
///
/// # Safety
/// `out` is valid for writes of `rows * cols` elements, and nothing else reads or writes the
/// places of this range meanwhile (ranges of other threads may share cache lines with it).
pub(crate) unsafe fn write_transposed<T: Element>(
    values: &[T],
    start: usize,
    rows: usize,
    cols: usize,
    out: *mut T,
) {
    let end = start + values.len();
    assert!(end <= rows * cols, "the range lies inside the matrix");
    let mut flat = start;
    while flat < end {
        let (r, c) = (flat / cols, flat % cols);
        let (r_end, c_end) = match (end - flat) / cols {
            whole if c == 0 && whole > 0 => (r + whole, cols),
            _ => (r + 1, cols.min(c + end - flat)),
        };
        // Output row `i` is column `i` of the matrix, and output column `j` its row `j`,
        // whose element `i` is `values[j * cols + i - start]`.
        let tile = Tile {
            rows: c..c_end,
            cols: r..r_end,
            base: -(start as isize),
            col_step: cols as isize,
            row_len: rows,
        };
        // SAFETY: the tile writes output rows `c..c_end`, columns `r..r_end`: elements of this
        // range's places, inside `rows * cols` (the caller's contract).
        unsafe { tile.copy_to(values, out.add(c * rows)) };
        flat += (r_end - r) * (c_end - c);
    }
}

/// A block of a matrix read by columns: element `(i, j)` of the block, for `i < rows` and
/// `j < cols`, is `src[base + i + j * col_step]` (so each of its columns lies contiguous).
pub(crate) struct Block {
    pub base: usize,
    pub rows: usize,
    pub cols: usize,
    pub col_step: usize,
}

impl Block {
    /// Writes the block row-major into `out`, its rows `out_row` elements apart, through the
    /// square register tiles of a transpose.
    ///
    /// # Panics
    /// Panics if the block reaches past `src` or its rows past `out`.
    pub(crate) fn transpose_into<T: Element>(&self, src: &[T], out: &mut [T], out_row: usize) {
        if self.rows == 0 || self.cols == 0 {
            return;
        }
        assert!(self.cols <= out_row, "a row of the block fits a row of `out`");
        assert!(self.base + self.rows - 1 + (self.cols - 1) * self.col_step < src.len());
        assert!((self.rows - 1) * out_row + self.cols <= out.len());
        let tile = Tile {
            rows: 0..self.rows,
            cols: 0..self.cols,
            base: self.base as isize,
            col_step: self.col_step as isize,
            row_len: out_row,
        };
        // SAFETY: the tile writes elements `i * out_row + j` for `i < rows`, `j < cols`, all
        // inside `out` (asserted), which is borrowed mutably; it reads inside `src` (asserted).
        unsafe { tile.copy_to(src, out.as_mut_ptr()) };
    }
}

/// Whether transposes of `T` move their blocks through AVX registers.
fn avx_moves<T>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::mem::size_of::<T>() == 4 && std::is_x86_feature_detected!("avx")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// The transpose of an 8x8 block of 32-bit lanes held as eight rows: pairs of rows interleave,
/// then pairs of pairs, then the 128-bit halves swap into place.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn transpose_8x8(r: [std::arch::x86_64::__m256; MICRO]) -> [std::arch::x86_64::__m256; MICRO] {
    use std::arch::x86_64::{
        _mm256_permute2f128_ps as halves, _mm256_shuffle_ps as pick, _mm256_unpackhi_ps as hi,
        _mm256_unpacklo_ps as lo,
    };
    // t: rows a, b interleaved, lanes (a0 b0 a1 b1 | a4 b4 a5 b5) and (a2 b2 a3 b3 | a6 ...).
    let t = [lo(r[0], r[1]), hi(r[0], r[1]), lo(r[2], r[3]), hi(r[2], r[3])];
    let t2 = [lo(r[4], r[5]), hi(r[4], r[5]), lo(r[6], r[7]), hi(r[6], r[7])];
    // u: columns c and c + 4 of four rows (columns 0/4, 1/5, 2/6, 3/7).
    let u = [
        pick::<0x44>(t[0], t[2]),
        pick::<0xEE>(t[0], t[2]),
        pick::<0x44>(t[1], t[3]),
        pick::<0xEE>(t[1], t[3]),
    ];
    let u2 = [
        pick::<0x44>(t2[0], t2[2]),
        pick::<0xEE>(t2[0], t2[2]),
        pick::<0x44>(t2[1], t2[3]),
        pick::<0xEE>(t2[1], t2[3]),
    ];
    let low = |c: usize| halves::<0x20>(u[c], u2[c]);
    let high = |c: usize| halves::<0x31>(u[c], u2[c]);
    [low(0), low(1), low(2), low(3), high(0), high(1), high(2), high(3)]
}

/// The multi-index of flat position `flat` in a row-major array of `dims`.
fn unravel(mut flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; dims.len()];
    for ax in (0..dims.len()).rev() {
        idx[ax] = flat % dims[ax];
        flat /= dims[ax];
    }
    idx
}

/// Concatenation: the output has `outer` rows, and row `r` is, for each part in turn, the
/// part's elements `r * run .. (r + 1) * run` where `run` is that part's row length.
pub fn concatenate<T: Element>(parts: &[(&[T], usize)], outer: usize) -> Vec<T> {
    let row_len: usize = parts.iter().map(|p| p.1).sum();
    build_rows(outer, row_len, 1, |first_row, out| {
        for (k, row) in out.chunks_mut(row_len).enumerate() {
            let r = first_row + k;
            let mut at = 0;
            for &(data, run) in parts {
                for (o, &x) in row[at..at + run].iter_mut().zip(&data[r * run..(r + 1) * run]) {
                    o.write(x);
                }
                at += run;
            }
        }
    })
}

/// How one axis of a padded array maps to its source: `low` elements of padding before the
/// first source element (negative to crop), then the source elements `interior + 1` apart.
#[derive(Clone, Copy, Debug)]
pub struct PadAxis {
    /// Padding before the first source element (negative crops).
    pub low: i64,
    /// Padding between neighbouring source elements.
    pub interior: usize,
    /// The source extent.
    pub len: usize,
}

impl PadAxis {
    /// The source index output position `o` reads, or `None` where it is padding.
    #[inline]
    fn source(self, o: usize) -> Option<usize> {
        let p = o as i64 - self.low;
        let step = self.interior as i64 + 1;
        if p < 0 || p % step != 0 || (p / step) as usize >= self.len {
            None
        } else {
            Some((p / step) as usize)
        }
    }
}

/// The padded array of `out_shape` (rank >= 1): each output element is the source element its
/// position maps to through `axes`, or `value`.
pub fn pad<T: Element>(src: &[T], axes: &[PadAxis], out_shape: &[usize], value: T) -> Vec<T> {
    let n: usize = out_shape.iter().product();
    if n == 0 {
        return Vec::new();
    }
    let src_strides = contiguous_strides(&axes.iter().map(|a| a.len).collect::<Vec<_>>());
    let last = axes.len() - 1;
    build(n, |start, out| {
        for_each_run(out_shape, start, out.len(), |pos, idx, len| {
            let dst = &mut out[pos..pos + len];
            // The source row this output row reads, if it is not a row of padding.
            let row = (0..last)
                .try_fold(0, |acc, ax| axes[ax].source(idx[ax]).map(|i| acc + i * src_strides[ax]));
            match row {
                None => dst.iter_mut().for_each(|o| {
                    o.write(value);
                }),
                Some(base) => {
                    let ax = axes[last];
                    for (k, o) in dst.iter_mut().enumerate() {
                        o.write(ax.source(idx[last] + k).map_or(value, |i| src[base + i]));
                    }
                }
            }
        })
    })
}

/// The position along an axis of extent `n` that index `i` selects: negative indices count
/// from the end (once, as in NumPy), then out-of-range ones are clamped (`clip`) or rejected.
#[inline]
pub fn resolve_index(i: i64, n: usize, clip: bool) -> Option<usize> {
    let n = n as i64;
    let i = if i < 0 { i + n } else { i };
    if (0..n).contains(&i) {
        Some(i as usize)
    } else if clip && n > 0 {
        Some(i.clamp(0, n - 1) as usize)
    } else {
        None
    }
}

/// The layout of a gather or scatter along one axis: the source is `(outer, n, inner)` and the
/// indexed side is `(outer, indices.len(), inner)`.
#[derive(Clone, Copy, Debug)]
pub struct AxisLayout {
    /// Elements of the axes before the indexed one.
    pub outer: usize,
    /// Extent of the indexed axis.
    pub n: usize,
    /// Elements of the axes after the indexed one.
    pub inner: usize,
}

/// `out[o, j, :] = src[o, indices[j], :]`, with indices resolved by [`resolve_index`]; rows
/// whose index does not resolve are `fill`.
pub fn gather_axis<T: Element>(
    src: &[T],
    layout: AxisLayout,
    indices: &[i64],
    clip: bool,
    fill: T,
) -> Vec<T> {
    let AxisLayout { outer, n, inner } = layout;
    let m = indices.len();
    let resolved: Vec<Option<usize>> = indices.iter().map(|&i| resolve_index(i, n, clip)).collect();
    build_rows(outer * m, inner, 1, |first_row, out| {
        for (k, row) in out.chunks_mut(inner).enumerate() {
            let (o, j) = ((first_row + k) / m, (first_row + k) % m);
            match resolved[j] {
                Some(i) => {
                    let from = (o * n + i) * inner;
                    for (d, &x) in row.iter_mut().zip(&src[from..from + inner]) {
                        d.write(x);
                    }
                }
                None => row.iter_mut().for_each(|d| {
                    d.write(fill);
                }),
            }
        }
    })
}

/// `dst[o, indices[j], :] = combine(dst[o, indices[j], :], updates[o, j, :])` for every `j` in
/// order, so repeated indices accumulate; indices that do not resolve (see [`resolve_index`])
/// drop their updates. Independent outer slices are updated in parallel.
pub fn scatter_axis<T: Element>(
    dst: &mut [T],
    layout: AxisLayout,
    indices: &[i64],
    updates: &[T],
    clip: bool,
    combine: impl Fn(T, T) -> T + Sync,
) {
    let AxisLayout { outer, n, inner } = layout;
    let m = indices.len();
    let (slab, upd_slab) = (n * inner, m * inner);
    if dst.is_empty() || upd_slab == 0 {
        return;
    }
    let resolved: Vec<Option<usize>> = indices.iter().map(|&i| resolve_index(i, n, clip)).collect();
    let one = |d: &mut [T], u: &[T]| {
        for (j, r) in resolved.iter().enumerate() {
            if let Some(i) = *r {
                let row = &mut d[i * inner..(i + 1) * inner];
                for (x, &y) in row.iter_mut().zip(&u[j * inner..(j + 1) * inner]) {
                    *x = combine(*x, y);
                }
            }
        }
    };
    if outer > 1 && outer * upd_slab >= PARALLEL_THRESHOLD {
        dst.par_chunks_mut(slab)
            .zip(updates.par_chunks(upd_slab))
            .flushing()
            .for_each(|(d, u)| one(d, u));
    } else {
        dst.chunks_mut(slab).zip(updates.chunks(upd_slab)).for_each(|(d, u)| one(d, u));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transpose by definition: output multi-index `o` reads input `o` permuted back.
    fn naive_transpose<T: Copy>(src: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let own = contiguous_strides(shape);
        let n: usize = shape.iter().product();
        (0..n)
            .map(|flat| {
                let o = unravel(flat, &out_shape);
                let at: usize = o.iter().zip(perm).map(|(&i, &p)| i * own[p]).sum();
                src[at]
            })
            .collect()
    }

    #[test]
    fn transposes_match_the_definition() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[3, 5], &[1, 0]),
            (&[70, 45], &[1, 0]),
            (&[300, 257], &[1, 0]),
            (&[2, 3, 4], &[2, 0, 1]),
            (&[4, 33, 40], &[0, 2, 1]),
            (&[5, 6, 7, 8], &[3, 1, 0, 2]),
            (&[40, 3, 50, 2], &[2, 1, 3, 0]),
            (&[9, 1, 7], &[2, 1, 0]),
            (&[16, 16, 300], &[1, 0, 2]),
        ];
        for (shape, perm) in cases {
            let n: usize = shape.iter().product();
            let src: Vec<i64> = (0..n as i64).collect();
            assert_eq!(
                transpose(&src, shape, perm),
                naive_transpose(&src, shape, perm),
                "{shape:?} {perm:?}"
            );
            // 4-byte elements move through vector registers: every bit pattern, NaNs
            // included, must arrive unchanged.
            let bits: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9E37_79B9)).collect();
            let floats: Vec<f32> = bits.iter().map(|&b| f32::from_bits(b)).collect();
            let moved: Vec<u32> =
                transpose(&floats, shape, perm).iter().map(|x| x.to_bits()).collect();
            assert_eq!(moved, naive_transpose(&bits, shape, perm), "f32 {shape:?} {perm:?}");
            let ints: Vec<i32> = (0..n as i32).collect();
            assert_eq!(transpose(&ints, shape, perm), naive_transpose(&ints, shape, perm));
        }
    }

    #[test]
    fn strided_copy_walks_backwards_and_repeats() {
        let src: Vec<i32> = (0..6).collect();
        // rows reversed, columns 0 and 2
        assert_eq!(strided_copy(&src, 3, &[-3, 2], &[2, 2]), vec![3, 5, 0, 2]);
        assert_eq!(strided_copy(&src, 1, &[0, 3], &[3, 2]), vec![1, 4, 1, 4, 1, 4]);
    }

    #[test]
    fn pad_with_interior_and_negative_low() {
        let src = [1, 2, 3];
        let axis = PadAxis { low: -1, interior: 1, len: 3 };
        // interior-padded: 1 0 2 0 3; cropped by one at the front, plus one at the back
        assert_eq!(pad(&src, &[axis], &[5], 0), vec![0, 2, 0, 3, 0]);
    }

    #[test]
    fn gather_and_scatter_along_an_axis() {
        let src = [1, 2, 3, 4, 5, 6];
        let layout = AxisLayout { outer: 2, n: 3, inner: 1 };
        assert_eq!(
            gather_axis(&src, layout, &[2, -1, 7, -9], true, 0),
            vec![3, 3, 3, 1, 6, 6, 6, 4]
        );
        assert_eq!(gather_axis(&src, layout, &[7], false, -1), vec![-1, -1]);
        let mut dst = src;
        scatter_axis(&mut dst, layout, &[0, 0, 5], &[10, 10, 10, 20, 20, 20], false, |a, b| a + b);
        assert_eq!(dst, [21, 2, 3, 44, 5, 6]);
    }
}
