//! Convolutions on the CPU (XLA's, as JAX's `conv_general_dilated` binds them): im2col and
//! gemm, one output image and feature group at a time.
//!
//! For output image `n` and group `g`, the input values the kernel's window sees are copied
//! into a patch matrix with one row per (input feature, window tap) and one column per output
//! position (im2col), and the group's kernel, an `O/G x (C/G * window)` matrix, multiplies it
//! straight into the output. When the window is wider than the output along the last spatial
//! dimension (the kernel gradient of a convolution is such a convolution) the patch matrix is
//! built transposed instead, so that the runs copied from the input are the longer ones.
//! Padding, input (lhs) dilation and kernel (rhs) dilation only change which input element,
//! if any, each entry of the patch matrix reads: they are worked out once per spatial
//! dimension into index tables. A 1x1 convolution that reads every input position in order
//! multiplies the input itself, with no copy.
//!
//! When the output has few features and the input many (the input gradient of a convolution
//! is such a convolution), copying `C/G` patch rows per tap costs more than the products:
//! the kernel multiplies the input first instead, giving one row per (output feature, tap)
//! over the input positions, and each output sums the entries its taps read from those rows
//! (col2im, read through the same tables). That also skips the zeros of an input dilation.
//!
//! Work is spread over rayon's pool by (image, group) when there are enough of them, and
//! otherwise inside each gemm. `f16` and `bf16` are computed in `f32` and rounded once.

use rayon::prelude::*;

use super::copy::transpose;
use super::float_mode::Flushing;
use super::matmul::{
    gemm_strided, parallelism, Dims, GemmFloat, MatMut, MatRef, PARALLEL_MIN_MACS,
};
use crate::array::Buffer;
use crate::dtype::{DType, Element};

/// Patch matrices larger than this many elements are built and multiplied a block of output
/// positions (or output features) at a time, so the scratch stays a few MiB whatever the
/// input size.
#[cfg(not(test))]
const PATCH_BLOCK_ELEMENTS: usize = 1 << 20;
/// Small blocks in tests, so that small convolutions go through the blocking too.
#[cfg(test)]
const PATCH_BLOCK_ELEMENTS: usize = 1 << 12;

/// A convolution with its dimension numbers applied: the operands' features, batch and
/// spatial dimensions located, spatial parameters listed in the kernel's spatial order.
///
/// The output is `(batch / batch_groups, out_features, output...)` laid out as `out_spec`
/// says (as JAX's `out_spec`: the output axes of the batch, feature and spatial dimensions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvGeometry {
    /// Extent of the input's batch dimension (before batch grouping).
    pub batch: usize,
    /// Extent of the input's feature dimension.
    pub in_features: usize,
    /// Extent of the kernel's output-feature dimension (the output's features).
    pub out_features: usize,
    /// Groups the input features are split into, each seen by its own kernel slice.
    pub feature_groups: usize,
    /// Groups the input batch is split into, each seen by its own kernel slice.
    pub batch_groups: usize,
    /// Element strides in the input buffer of its batch dimension, feature dimension, then
    /// each spatial dimension.
    pub lhs_strides: Vec<usize>,
    /// The kernel's shape as stored.
    pub rhs_shape: Vec<usize>,
    /// The kernel's axes holding its output features, input features, then each spatial
    /// dimension.
    pub rhs_spec: Vec<usize>,
    /// The output's axes holding its batch, features, then each spatial dimension.
    pub out_spec: Vec<usize>,
    /// Input extent per spatial dimension (before dilation and padding).
    pub input: Vec<usize>,
    /// Kernel extent per spatial dimension (before dilation).
    pub window: Vec<usize>,
    /// Output extent per spatial dimension.
    pub output: Vec<usize>,
    /// Step of the window between output positions, per spatial dimension.
    pub window_strides: Vec<usize>,
    /// Padding before the (dilated) input, per spatial dimension; negative crops.
    pub padding_lo: Vec<i64>,
    /// Input dilation per spatial dimension (`d - 1` zeros between input elements).
    pub lhs_dilation: Vec<usize>,
    /// Kernel dilation per spatial dimension (`d - 1` zeros between kernel taps).
    pub rhs_dilation: Vec<usize>,
}

impl ConvGeometry {
    /// Groups of either kind (at most one of the two counts exceeds 1).
    fn groups(&self) -> usize {
        self.feature_groups.max(self.batch_groups)
    }

    /// Input features each group reads (the kernel's input-feature extent).
    fn group_in(&self) -> usize {
        self.in_features / self.feature_groups
    }

    /// Output features each group writes.
    fn group_out(&self) -> usize {
        self.out_features / self.groups()
    }

    fn out_batch(&self) -> usize {
        self.batch / self.batch_groups
    }

    fn positions(&self) -> usize {
        self.output.iter().product()
    }

    fn window_size(&self) -> usize {
        self.window.iter().product()
    }

    /// The gemm depth: entries of one column of the patch matrix.
    fn depth(&self) -> usize {
        self.group_in() * self.window_size()
    }

    fn out_len(&self) -> usize {
        self.out_batch() * self.out_features * self.positions()
    }

    /// The canonical output shape `(batch, features, spatial...)`.
    fn canonical_out_shape(&self) -> Vec<usize> {
        [&[self.out_batch(), self.out_features][..], &self.output].concat()
    }

    /// The same convolution with at least one spatial dimension: a convolution without any
    /// is one with a single position of extent 1.
    fn with_spatial_dim(&self) -> ConvGeometry {
        let mut g = self.clone();
        if g.input.is_empty() {
            g.lhs_strides.push(0);
            for v in [&mut g.input, &mut g.window, &mut g.output, &mut g.window_strides] {
                v.push(1);
            }
            g.padding_lo.push(0);
            g.lhs_dilation.push(1);
            g.rhs_dilation.push(1);
        }
        g
    }
}

/// Runs the convolution on `lhs` (laid out as `geometry.lhs_strides` says) and `rhs`
/// (`geometry.rhs_shape`, dimensions at `geometry.rhs_spec`), giving the output laid out as
/// `geometry.out_spec` says. Both operands have the same floating-point dtype.
///
/// # Panics
///
/// Panics if the operands are not of one floating-point dtype or are too short for the
/// geometry (the shape rule of `conv_general_dilated` rules both out).
pub fn conv(lhs: &Buffer, rhs: &Buffer, geometry: &ConvGeometry) -> Buffer {
    match (lhs, rhs) {
        (Buffer::F32(l), Buffer::F32(r)) => Buffer::F32(conv_typed(l, r, geometry)),
        (Buffer::F64(l), Buffer::F64(r)) => Buffer::F64(conv_typed(l, r, geometry)),
        (Buffer::F16(_), Buffer::F16(_)) | (Buffer::BF16(_), Buffer::BF16(_)) => {
            let widened = |b: &Buffer| b.cast(DType::F32);
            let (l, r) = (widened(lhs), widened(rhs));
            conv(&l, &r, geometry).cast(lhs.dtype())
        }
        _ => panic!(
            "conv: operands must share a floating-point dtype, got {} and {}",
            lhs.dtype(),
            rhs.dtype()
        ),
    }
}

fn conv_typed<T: GemmFloat + Element>(lhs: &[T], rhs: &[T], geometry: &ConvGeometry) -> Vec<T> {
    // The kernel as `(out features, in features, spatial...)`, so each group's slice is a
    // row-major matrix with one row per output feature.
    let rhs = canonical(rhs, &geometry.rhs_shape, &geometry.rhs_spec);
    let out = canonical_conv(lhs, &rhs, &geometry.with_spatial_dim());
    let cshape = geometry.canonical_out_shape();
    let mut to_layout = vec![0; cshape.len()];
    for (j, &axis) in geometry.out_spec.iter().enumerate() {
        to_layout[axis] = j;
    }
    if is_identity(&to_layout, &cshape) {
        out
    } else {
        transpose(&out, &cshape, &to_layout)
    }
}

/// `src` (of `shape`) with axis `perm[i]` moved to position `i`, borrowed when that keeps the
/// element order.
fn canonical<'a, T: Element>(
    src: &'a [T],
    shape: &[usize],
    perm: &[usize],
) -> std::borrow::Cow<'a, [T]> {
    if is_identity(perm, shape) {
        std::borrow::Cow::Borrowed(src)
    } else {
        std::borrow::Cow::Owned(transpose(src, shape, perm))
    }
}

/// Whether permuting axes by `perm` keeps the row-major element order (axes of extent 1 may
/// move freely).
fn is_identity(perm: &[usize], shape: &[usize]) -> bool {
    let moved: Vec<usize> = perm.iter().copied().filter(|&a| shape[a] != 1).collect();
    moved.windows(2).all(|w| w[0] < w[1])
}

/// The output in canonical order, from the kernel in canonical order; `g` has a spatial
/// dimension.
fn canonical_conv<T: GemmFloat + Element>(lhs: &[T], rhs: &[T], g: &ConvGeometry) -> Vec<T> {
    let out_len = g.out_len();
    if out_len == 0 {
        return Vec::new();
    }
    if g.depth() == 0 {
        return super::alloc::zeroed(out_len, T::ZERO);
    }
    let plan = Plan::new(g);
    let rhs = plan.arrange_kernel(rhs);
    // Every element is written by exactly one work item, so a recycled buffer needs no
    // zeroing.
    let mut out = super::pool::take_for_overwrite(out_len, T::ZERO);
    let item_len = g.group_out() * g.positions();
    let items = out_len / item_len;
    let macs = plan.macs();
    let threads = super::parts::threads();
    if threads > 1 && items >= threads && macs.saturating_mul(items) >= PARALLEL_MIN_MACS {
        out.par_chunks_mut(item_len)
            .enumerate()
            .flushing()
            .for_each_init(Vec::new, |scratch, (i, dst)| plan.item(lhs, &rhs, i, dst, scratch, 1));
    } else {
        let threads = if macs >= PARALLEL_MIN_MACS { threads } else { 1 };
        let mut scratch = Vec::new();
        for (i, dst) in out.chunks_exact_mut(item_len).enumerate() {
            plan.item(lhs, &rhs, i, dst, &mut scratch, threads);
        }
    }
    out
}

/// How one work item (an output image and group) is computed.
struct Plan<'g> {
    g: &'g ConvGeometry,
    method: Method<'g>,
}

enum Method<'g> {
    /// A 1x1 window reading every input position in order (the input's element step
    /// between them): the input is the patch matrix.
    Direct(usize),
    /// im2col: the patch matrix is copied out of the input, then multiplied by the kernel.
    Gather(Taps<'g>),
    /// The kernel times the input (an element step apart between positions) first, one row
    /// per (output feature, window tap); each output then sums the rows' entries its window
    /// reads (as `Taps` locates them). Copies `O/G` rows per tap instead of `C/G`, and
    /// never multiplies the zeros of an input dilation.
    Scatter(Taps<'g>, usize),
}

/// Per copied element, the multiply-adds it costs as much as (a rough measure for choosing
/// between [`Method::Gather`] and [`Method::Scatter`]).
const COPY_COST: usize = 8;

impl<'g> Plan<'g> {
    fn new(g: &'g ConvGeometry) -> Plan<'g> {
        let gather = Taps::new(g, &g.lhs_strides[2..], true);
        let method = match (direct_step(g, &gather.tables), linear_step(g)) {
            (Some(step), _) => Method::Direct(step),
            (None, Some(step)) if scatter_is_cheaper(g) => {
                let strides = crate::shape::contiguous_strides(&g.input);
                Method::Scatter(Taps::new(g, &strides, false), step)
            }
            _ => Method::Gather(gather),
        };
        Plan { g, method }
    }

    /// Multiply-adds of one work item.
    fn macs(&self) -> usize {
        let g = self.g;
        let per_position = g.group_out().saturating_mul(g.depth());
        match self.method {
            Method::Scatter(..) => per_position.saturating_mul(g.input.iter().product()),
            _ => per_position.saturating_mul(g.positions()),
        }
    }

    /// The canonical kernel as the method reads it: `(out, in, window)`, or for
    /// [`Method::Scatter`] `(out, window, in)` so each group's slice is a matrix with one row
    /// per (output feature, tap).
    fn arrange_kernel<'a, T: Element>(&self, rhs: &'a [T]) -> std::borrow::Cow<'a, [T]> {
        let g = self.g;
        match self.method {
            Method::Scatter(..) => {
                let shape = [g.out_features, g.group_in(), g.window_size()];
                std::borrow::Cow::Owned(transpose(rhs, &shape, &[0, 2, 1]))
            }
            _ => std::borrow::Cow::Borrowed(rhs),
        }
    }

    /// Computes work item `i` (output image `i / groups`, group `i % groups`) into `dst`, its
    /// `group_out x positions` block of the output.
    fn item<T: GemmFloat + Element>(
        &self,
        lhs: &[T],
        rhs: &[T],
        i: usize,
        dst: &mut [T],
        scratch: &mut Vec<T>,
        threads: usize,
    ) {
        let g = self.g;
        let (n, group) = (i / g.groups(), i % g.groups());
        let image = if g.batch_groups > 1 { n + group * g.out_batch() } else { n };
        let channel = if g.feature_groups > 1 { group * g.group_in() } else { 0 };
        let at = Item {
            base: image * g.lhs_strides[0] + channel * g.lhs_strides[1],
            kernel: &rhs[group * g.group_out() * g.depth()..][..g.group_out() * g.depth()],
            parallelism: parallelism(threads),
        };
        match &self.method {
            Method::Scatter(taps, step) => self.scatter(taps, *step, lhs, &at, dst, scratch),
            _ => self.gather(lhs, &at, dst, scratch),
        }
    }

    /// `dst = kernel @ patches`, a block of output positions at a time.
    fn gather<T: GemmFloat + Element>(
        &self,
        lhs: &[T],
        at: &Item<'_, T>,
        dst: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        let g = self.g;
        let (rows, depth, positions) = (g.group_out(), g.depth(), g.positions());
        let kernel = MatRef { data: at.kernel, row_stride: depth, col_stride: 1 };
        let block = (PATCH_BLOCK_ELEMENTS / depth).clamp(1, positions);
        for p0 in (0..positions).step_by(block) {
            let p1 = (p0 + block).min(positions);
            let cols = p1 - p0;
            let patches = match &self.method {
                Method::Direct(step) => MatRef {
                    data: &lhs[at.base + p0 * step..],
                    row_stride: g.lhs_strides[1],
                    col_stride: *step,
                },
                Method::Gather(taps) => {
                    super::alloc::resize(scratch, depth * cols, T::ZERO);
                    let scratch = &mut scratch[..depth * cols];
                    if taps.transposed {
                        taps.fill_by_position(lhs, at.base, p0, scratch);
                        MatRef { data: scratch, row_stride: 1, col_stride: depth }
                    } else {
                        taps.fill_by_tap(lhs, at.base, p0, p1, scratch);
                        MatRef { data: scratch, row_stride: cols, col_stride: 1 }
                    }
                }
                Method::Scatter(..) => unreachable!("scattered items are not gathered"),
            };
            let out = MatMut { data: &mut dst[p0..], row_stride: positions, col_stride: 1 };
            let dims = Dims { m: rows, k: depth, n: cols };
            gemm_strided(out, kernel, patches, dims, at.parallelism);
        }
    }

    /// `products = kernel @ input` (one row per output feature and tap, one column per input
    /// position), a block of output features at a time, then each output position sums what
    /// its window's taps read from those rows.
    fn scatter<T: GemmFloat + Element>(
        &self,
        taps: &Taps<'_>,
        step: usize,
        lhs: &[T],
        at: &Item<'_, T>,
        dst: &mut [T],
        scratch: &mut Vec<T>,
    ) {
        let g = self.g;
        let (rows, features, window) = (g.group_out(), g.group_in(), g.window_size());
        let (positions, inputs) = (g.positions(), g.input.iter().product::<usize>());
        let input =
            MatRef { data: &lhs[at.base..], row_stride: g.lhs_strides[1], col_stride: step };
        let block = (PATCH_BLOCK_ELEMENTS / (window * inputs).max(1)).clamp(1, rows);
        for o0 in (0..rows).step_by(block) {
            let o1 = (o0 + block).min(rows);
            let len = (o1 - o0) * window * inputs;
            super::alloc::resize(scratch, len, T::ZERO);
            let products = &mut scratch[..len];
            let kernel = MatRef {
                data: &at.kernel[o0 * window * features..],
                row_stride: features,
                col_stride: 1,
            };
            let out = MatMut { data: &mut products[..], row_stride: inputs, col_stride: 1 };
            let dims = Dims { m: (o1 - o0) * window, k: features, n: inputs };
            gemm_strided(out, kernel, input, dims, at.parallelism);
            for (o, row) in (o0..o1).zip(products.chunks_exact(window * inputs)) {
                let out = &mut dst[o * positions..][..positions];
                out.fill(T::ZERO);
                for (k, tap) in row.chunks_exact(inputs).enumerate() {
                    taps.accumulate(out, tap, k);
                }
            }
        }
    }
}

/// What one work item reads: where its input image and features start, its kernel slice,
/// and the threads its products may use.
struct Item<'a, T> {
    base: usize,
    kernel: &'a [T],
    parallelism: gemm::Parallelism,
}

/// Whether [`Method::Scatter`] costs less than [`Method::Gather`] for `g`, by multiply-adds
/// plus copied elements ([`COPY_COST`]): it copies `O/G` rows per tap rather than `C/G`, and
/// multiplies every input position rather than every output position.
fn scatter_is_cheaper(g: &ConvGeometry) -> bool {
    let (o, c, k) = (g.group_out(), g.group_in(), g.window_size());
    let (p, i) = (g.positions(), g.input.iter().product::<usize>());
    let mul = |xs: &[usize]| xs.iter().fold(1usize, |acc, &x| acc.saturating_mul(x));
    let gather = mul(&[o, c, k, p]).saturating_add(mul(&[COPY_COST, c, k, p]));
    let scatter = mul(&[o, c, k, i]).saturating_add(mul(&[COPY_COST, o, k, i.saturating_add(p)]));
    scatter < gather
}

/// The element step between consecutive input positions (row-major over the spatial
/// dimensions), when the input's spatial dimensions are laid out that way.
fn linear_step(g: &ConvGeometry) -> Option<usize> {
    let n = g.input.len();
    let step = g.lhs_strides[1 + n];
    let mut span = step;
    for d in (0..n).rev() {
        if g.lhs_strides[2 + d] != span && g.input[d] > 1 {
            return None;
        }
        span *= g.input[d];
    }
    Some(step)
}

/// Where window taps read the input, for patch matrices and sums over taps.
struct Taps<'g> {
    g: &'g ConvGeometry,
    /// Per spatial dimension, `window x output` entries: the element offset (within one
    /// input image and feature) that window tap `k` reads at output position `o`, at
    /// `[k * output + o]`, or -1 where it reads padding or a dilation hole.
    tables: Vec<Vec<i64>>,
    /// The runs along the last spatial dimension: by window tap over output positions, or
    /// (transposed) by output position over window taps.
    lanes: Vec<Lane>,
    /// Whether the patch matrix has one row per output position.
    transposed: bool,
}

impl<'g> Taps<'g> {
    /// The taps of `g` over an input whose spatial dimensions are `strides` elements apart;
    /// `transposable` allows a patch matrix with one row per output position.
    fn new(g: &'g ConvGeometry, strides: &[usize], transposable: bool) -> Taps<'g> {
        let n = g.input.len();
        let tables: Vec<Vec<i64>> = (0..n).map(|d| table(g, d, strides[d])).collect();
        let last = n - 1;
        let (kl, ol) = (g.window[last], g.output[last]);
        let transposed = transposable && kl > ol;
        let lanes = if transposed {
            (0..ol).map(|o| Lane::new((0..kl).map(|k| tables[last][k * ol + o]))).collect()
        } else {
            (0..kl).map(|k| Lane::new(tables[last][k * ol..(k + 1) * ol].iter().copied())).collect()
        };
        Taps { g, tables, lanes, transposed }
    }

    /// Adds to `out` (one entry per output position) what window tap `k` reads from `src`
    /// (one entry per input position) at each of them.
    fn accumulate<T: GemmFloat>(&self, out: &mut [T], src: &[T], k: usize) {
        let g = self.g;
        let last = g.output.len() - 1;
        let (kl, ol) = (g.window[last], g.output[last]);
        let lane = &self.lanes[k % kl];
        for (outer, seg) in out.chunks_exact_mut(ol).enumerate() {
            if let Some(offset) = self.outer_offset(k / kl, outer) {
                lane.add(seg, src, offset);
            }
        }
    }

    /// The patch matrix for output positions `p0..p1`, one row per (feature, window tap):
    /// `out` is `depth x (p1 - p0)`.
    fn fill_by_tap<T: Element>(&self, lhs: &[T], base: usize, p0: usize, p1: usize, out: &mut [T]) {
        let g = self.g;
        let (cols, taps) = (p1 - p0, g.window_size());
        let last = g.output.len() - 1;
        let (kl, ol) = (g.window[last], g.output[last]);
        let zero = T::from_f64(0.0);
        for (row, dst) in out.chunks_exact_mut(cols).enumerate() {
            let (c, k) = (row / taps, row % taps);
            let lane = &self.lanes[k % kl];
            let feature = base + c * g.lhs_strides[1];
            let mut p = p0;
            while p < p1 {
                let (outer, j0) = (p / ol, p % ol);
                let len = (ol - j0).min(p1 - p);
                let seg = &mut dst[p - p0..][..len];
                match self.outer_offset(k / kl, outer) {
                    Some(offset) => lane.fill(seg, lhs, feature + offset, j0, zero),
                    None => seg.fill(zero),
                }
                p += len;
            }
        }
    }

    /// The transposed patch matrix for output positions from `p0`, one row per position:
    /// `out` is `(positions in the block) x depth`.
    fn fill_by_position<T: Element>(&self, lhs: &[T], base: usize, p0: usize, out: &mut [T]) {
        let g = self.g;
        let taps = g.window_size();
        let last = g.output.len() - 1;
        let (kl, ol) = (g.window[last], g.output[last]);
        let zero = T::from_f64(0.0);
        for (i, dst) in out.chunks_exact_mut(g.depth()).enumerate() {
            let (outer, o) = ((p0 + i) / ol, (p0 + i) % ol);
            let lane = &self.lanes[o];
            for k_outer in 0..taps / kl {
                let offset = self.outer_offset(k_outer, outer);
                for c in 0..g.group_in() {
                    let seg = &mut dst[c * taps + k_outer * kl..][..kl];
                    match offset {
                        Some(offset) => {
                            lane.fill(seg, lhs, base + c * g.lhs_strides[1] + offset, 0, zero)
                        }
                        None => seg.fill(zero),
                    }
                }
            }
        }
    }

    /// The offset contributed by every spatial dimension but the last, for the window taps
    /// and output positions whose flat indices over those dimensions are `k_outer` and
    /// `o_outer`; `None` when one of them reads padding or a hole.
    fn outer_offset(&self, mut k_outer: usize, mut o_outer: usize) -> Option<usize> {
        let g = self.g;
        let mut offset = 0;
        for d in (0..g.output.len() - 1).rev() {
            let (k, o) = (k_outer % g.window[d], o_outer % g.output[d]);
            k_outer /= g.window[d];
            o_outer /= g.output[d];
            let entry = self.tables[d][k * g.output[d] + o];
            if entry < 0 {
                return None;
            }
            offset += entry as usize;
        }
        Some(offset)
    }
}

/// The offsets table of spatial dimension `d` (see [`Taps::tables`]), whose input elements
/// are `stride` apart.
fn table(g: &ConvGeometry, d: usize, stride: usize) -> Vec<i64> {
    let (input, window, output) = (g.input[d], g.window[d], g.output[d]);
    let (ld, rd, ws) = (g.lhs_dilation[d] as i64, g.rhs_dilation[d] as i64, g.window_strides[d]);
    let dilated = if input == 0 { 0 } else { (input as i64 - 1) * ld + 1 };
    let stride = stride as i64;
    let mut entries = Vec::with_capacity(window * output);
    for k in 0..window as i64 {
        for o in 0..output as i64 {
            // Position in the padded, dilated input.
            let at = o * ws as i64 + k * rd - g.padding_lo[d];
            let reads = at >= 0 && at < dilated && at % ld == 0;
            entries.push(if reads { at / ld * stride } else { -1 });
        }
    }
    entries
}

/// The input's element step between consecutive output positions, when every window is one
/// element wide and output position `p` reads input position `p * step` with no padding.
fn direct_step(g: &ConvGeometry, tables: &[Vec<i64>]) -> Option<usize> {
    if g.window.iter().any(|&k| k != 1) || tables.iter().flatten().any(|&e| e < 0) {
        return None;
    }
    // With one-wide windows, table `d` holds the offset of each output position along `d`;
    // the step is the offset of the second position in row-major order.
    let inner = (0..tables.len()).rev().find(|&d| g.output[d] > 1);
    let step = inner.map_or(0, |d| tables[d][1] as usize);
    let mut span = step;
    for d in (0..tables.len()).rev() {
        if tables[d].iter().enumerate().any(|(o, &e)| e as usize != o * span) {
            return None;
        }
        span *= g.output[d];
    }
    Some(step)
}

/// One run of patch entries along the last spatial dimension: each entry's input offset
/// (-1: a zero), with the valid entries summarized when they are evenly spaced.
struct Lane {
    offsets: Vec<i64>,
    /// `(start, end, step)`: entries `start..end` read evenly spaced input elements `step`
    /// apart and every other entry is a zero.
    even: Option<(usize, usize, usize)>,
}

impl Lane {
    fn new(offsets: impl Iterator<Item = i64>) -> Lane {
        let offsets: Vec<i64> = offsets.collect();
        let valid: Vec<usize> = (0..offsets.len()).filter(|&j| offsets[j] >= 0).collect();
        let even = match (valid.first(), valid.last()) {
            (None, _) | (_, None) => Some((0, 0, 1)),
            (Some(&start), Some(&end)) => {
                let step = if end > start { offsets[start + 1] - offsets[start] } else { 1 };
                let evenly =
                    (start..=end).all(|j| offsets[j] == offsets[start] + (j - start) as i64 * step);
                (evenly && step > 0).then_some((start, end + 1, step as usize))
            }
        };
        Lane { offsets, even }
    }

    /// Adds the run's entries (reading `src` from `base`) to `seg`, which covers all of them.
    fn add<T: GemmFloat>(&self, seg: &mut [T], src: &[T], base: usize) {
        let Some((start, end, step)) = self.even else {
            for (out, &at) in seg.iter_mut().zip(&self.offsets) {
                if at >= 0 {
                    *out = *out + src[base + at as usize];
                }
            }
            return;
        };
        if start < end {
            let from = base + self.offsets[start] as usize;
            let part = &mut seg[start..end];
            if step == 1 {
                for (out, &x) in part.iter_mut().zip(&src[from..from + (end - start)]) {
                    *out = *out + x;
                }
            } else {
                for (out, &x) in part.iter_mut().zip(src[from..].iter().step_by(step)) {
                    *out = *out + x;
                }
            }
        }
    }

    /// Writes entries `j0..j0 + seg.len()` of the run into `seg`, reading `src` from `base`.
    fn fill<T: Copy>(&self, seg: &mut [T], src: &[T], base: usize, j0: usize, zero: T) {
        let j1 = j0 + seg.len();
        let Some((start, end, step)) = self.even else {
            for (out, &at) in seg.iter_mut().zip(&self.offsets[j0..j1]) {
                *out = if at < 0 { zero } else { src[base + at as usize] };
            }
            return;
        };
        let (a, b) = (start.clamp(j0, j1), end.clamp(j0, j1));
        seg[..a - j0].fill(zero);
        seg[b - j0..].fill(zero);
        if a < b {
            let from = base + self.offsets[a] as usize;
            let part = &mut seg[a - j0..b - j0];
            if step == 1 {
                part.copy_from_slice(&src[from..from + part.len()]);
            } else {
                for (out, &x) in part.iter_mut().zip(src[from..].iter().step_by(step)) {
                    *out = x;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::contiguous_strides;

    /// xorshift64*: deterministic test data in [-1, 1).
    struct Rng(u64);

    impl Rng {
        fn unit(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
            (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// A convolution to test, in canonical terms plus the operands' layouts.
    #[derive(Clone, Debug)]
    struct Case {
        batch: usize,
        in_features: usize,
        out_features: usize,
        feature_groups: usize,
        batch_groups: usize,
        input: Vec<usize>,
        window: Vec<usize>,
        strides: Vec<usize>,
        padding: Vec<(i64, i64)>,
        lhs_dilation: Vec<usize>,
        rhs_dilation: Vec<usize>,
        /// Axes of (batch, feature, spatial...) in the input, (out, in, spatial...) in the
        /// kernel, (batch, feature, spatial...) in the output.
        specs: [Vec<usize>; 3],
    }

    fn case(batch: usize, features: (usize, usize), input: &[usize], window: &[usize]) -> Case {
        let n = input.len();
        let iota: Vec<usize> = (0..n + 2).collect();
        Case {
            batch,
            in_features: features.0,
            out_features: features.1,
            feature_groups: 1,
            batch_groups: 1,
            input: input.to_vec(),
            window: window.to_vec(),
            strides: vec![1; n],
            padding: vec![(0, 0); n],
            lhs_dilation: vec![1; n],
            rhs_dilation: vec![1; n],
            specs: [iota.clone(), iota.clone(), iota],
        }
    }

    fn dilate(size: usize, d: usize) -> i64 {
        if size == 0 {
            0
        } else {
            ((size - 1) * d + 1) as i64
        }
    }

    /// The actual shape of an operand whose canonical shape is `canon`, with canonical
    /// dimension `j` at axis `spec[j]`.
    fn laid_out(canon: &[usize], spec: &[usize]) -> Vec<usize> {
        let mut shape = vec![0; canon.len()];
        for (j, &axis) in spec.iter().enumerate() {
            shape[axis] = canon[j];
        }
        shape
    }

    impl Case {
        fn output(&self) -> Vec<usize> {
            (0..self.input.len())
                .map(|d| {
                    let padded = dilate(self.input[d], self.lhs_dilation[d])
                        + self.padding[d].0
                        + self.padding[d].1;
                    let window = dilate(self.window[d], self.rhs_dilation[d]);
                    ((padded - window) / self.strides[d] as i64 + 1) as usize
                })
                .collect()
        }

        fn lhs_shape(&self) -> Vec<usize> {
            let canon = [&[self.batch, self.in_features][..], &self.input].concat();
            laid_out(&canon, &self.specs[0])
        }

        fn rhs_shape(&self) -> Vec<usize> {
            let groups = self.feature_groups;
            let canon =
                [&[self.out_features, self.in_features / groups][..], &self.window].concat();
            laid_out(&canon, &self.specs[1])
        }

        fn geometry(&self) -> ConvGeometry {
            let strides = contiguous_strides(&self.lhs_shape());
            ConvGeometry {
                batch: self.batch,
                in_features: self.in_features,
                out_features: self.out_features,
                feature_groups: self.feature_groups,
                batch_groups: self.batch_groups,
                lhs_strides: self.specs[0].iter().map(|&a| strides[a]).collect(),
                rhs_shape: self.rhs_shape(),
                rhs_spec: self.specs[1].clone(),
                out_spec: self.specs[2].clone(),
                input: self.input.clone(),
                window: self.window.clone(),
                output: self.output(),
                window_strides: self.strides.clone(),
                padding_lo: self.padding.iter().map(|p| p.0).collect(),
                lhs_dilation: self.lhs_dilation.clone(),
                rhs_dilation: self.rhs_dilation.clone(),
            }
        }
    }

    /// Row-major multi-index of `flat` in `shape`.
    fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
        let mut idx = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
        idx
    }

    fn flat(idx: &[usize], strides: &[usize]) -> usize {
        idx.iter().zip(strides).map(|(i, s)| i * s).sum()
    }

    /// The convolution by its definition (XLA's semantics), one output element at a time.
    fn reference(lhs: &[f64], rhs: &[f64], c: &Case) -> Vec<f64> {
        let g = c.geometry();
        let groups = c.feature_groups.max(c.batch_groups);
        let (out_batch, group_out) = (c.batch / c.batch_groups, c.out_features / groups);
        let group_in = c.in_features / c.feature_groups;
        let cshape = [&[out_batch, c.out_features][..], &g.output].concat();
        let out_shape = laid_out(&cshape, &c.specs[2]);
        let out_strides = contiguous_strides(&out_shape);
        let rhs_strides = contiguous_strides(&c.rhs_shape());
        let mut out = vec![0.0; cshape.iter().product()];
        for e in 0..out.len() {
            let idx = unravel(e, &cshape);
            let (n, o, pos) = (idx[0], idx[1], &idx[2..]);
            let group = o / group_out;
            let image = if c.batch_groups > 1 { n + group * out_batch } else { n };
            let mut acc = 0.0;
            for ci in 0..group_in {
                let channel = if c.feature_groups > 1 { group * group_in + ci } else { ci };
                'taps: for t in 0..c.window.iter().product() {
                    let k = unravel(t, &c.window);
                    let mut at = vec![image, channel];
                    for d in 0..k.len() {
                        let p = (pos[d] * c.strides[d] + k[d] * c.rhs_dilation[d]) as i64
                            - c.padding[d].0;
                        let ld = c.lhs_dilation[d] as i64;
                        if p < 0 || p >= dilate(c.input[d], c.lhs_dilation[d]) || p % ld != 0 {
                            continue 'taps;
                        }
                        at.push((p / ld) as usize);
                    }
                    let kernel_at: Vec<usize> = [&[o, ci][..], &k].concat();
                    let x = lhs[flat(&at, &g.lhs_strides)];
                    let w = rhs[flat(&laid_out(&kernel_at, &c.specs[1]), &rhs_strides)];
                    acc += x * w;
                }
            }
            out[flat(&laid_out(&idx, &c.specs[2]), &out_strides)] = acc;
        }
        out
    }

    fn operands(c: &Case, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
        let lhs = (0..c.lhs_shape().iter().product()).map(|_| rng.unit()).collect();
        let rhs = (0..c.rhs_shape().iter().product()).map(|_| rng.unit()).collect();
        (lhs, rhs)
    }

    #[track_caller]
    fn assert_close(got: &[f64], want: &[f64], tol: f64, c: &Case) {
        assert_eq!(got.len(), want.len(), "{c:?}");
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{c:?}\nelement {i}: {a} vs {b}");
        }
    }

    fn check(c: &Case, seed: u64) {
        let mut rng = Rng(seed * 0x9e37_79b9 + 1);
        let (lhs, rhs) = operands(c, &mut rng);
        let want = reference(&lhs, &rhs, c);
        let g = c.geometry();
        let got = conv(&Buffer::F64(lhs.clone()), &Buffer::F64(rhs.clone()), &g);
        assert_close(got.as_slice::<f64>().unwrap(), &want, 1e-12, c);
        let narrow = |v: &[f64]| Buffer::F32(v.iter().map(|&x| x as f32).collect());
        let got = conv(&narrow(&lhs), &narrow(&rhs), &g).cast(DType::F64);
        assert_close(got.as_slice::<f64>().unwrap(), &want, 1e-4, c);
    }

    fn with(mut c: Case, edit: impl FnOnce(&mut Case)) -> Case {
        edit(&mut c);
        c
    }

    fn nhwc(c: &mut Case) {
        let n = c.input.len();
        let spatial: Vec<usize> = (1..=n).collect();
        let last = n + 1;
        c.specs = [
            [&[0, last][..], &spatial].concat(),
            [&[last, n][..], &(0..n).collect::<Vec<_>>()].concat(),
            [&[0, last][..], &spatial].concat(),
        ];
    }

    fn odd_cases() -> Vec<Case> {
        vec![
            case(2, (3, 4), &[7], &[3]),
            with(case(1, (2, 3), &[6, 5], &[3, 2]), |c| {
                c.strides = vec![2, 2];
                c.padding = vec![(1, 1), (0, 1)];
            }),
            with(case(2, (2, 2), &[8], &[3]), |c| c.padding = vec![(-1, 2)]),
            with(case(1, (2, 1), &[4, 3], &[2, 3]), |c| {
                c.lhs_dilation = vec![2, 3];
                c.padding = vec![(1, 1), (2, 2)];
            }),
            with(case(2, (2, 3), &[9, 8], &[3, 2]), |c| {
                c.rhs_dilation = vec![2, 3];
                c.strides = vec![1, 2];
            }),
            with(case(3, (4, 6), &[5, 5], &[3, 3]), |c| c.feature_groups = 2),
            with(case(2, (6, 6), &[7], &[2]), |c| c.feature_groups = 6),
            with(case(4, (3, 6), &[5, 4], &[2, 2]), |c| c.batch_groups = 2),
            with(case(2, (3, 4), &[6, 5], &[3, 2]), |c| {
                nhwc(c);
                c.padding = vec![(1, 1), (1, 0)];
                c.strides = vec![2, 1];
            }),
            with(case(2, (4, 6), &[6, 5], &[3, 3]), |c| {
                nhwc(c);
                c.feature_groups = 2;
                c.rhs_dilation = vec![1, 2];
                c.padding = vec![(0, 0), (2, 2)];
            }),
            // The window wider than the output: the transposed patch matrix.
            case(2, (3, 2), &[5, 9], &[2, 7]),
            with(case(3, (2, 4), &[6, 10], &[3, 12]), |c| {
                c.batch_groups = 2;
                c.batch = 4;
                c.lhs_dilation = vec![1, 2];
                c.padding = vec![(1, -1), (0, 3)];
            }),
            // 1x1 windows: read in place, with a stride, and in NHWC.
            case(2, (3, 4), &[4, 5], &[1, 1]),
            with(case(2, (3, 4), &[4, 5], &[1, 1]), |c| c.strides = vec![2, 2]),
            with(case(2, (3, 4), &[4, 5], &[1, 1]), nhwc),
            with(case(2, (3, 4), &[6], &[1]), |c| c.strides = vec![3]),
            with(case(1, (3, 2), &[4], &[1]), |c| c.padding = vec![(1, 0)]),
            // No spatial dimensions: a matrix product.
            case(3, (4, 5), &[], &[]),
            // Few output features from many input features: products first, then sums.
            with(case(2, (16, 2), &[6, 5], &[3, 3]), |c| c.padding = vec![(1, 1), (1, 0)]),
            with(case(1, (12, 1), &[4, 5], &[3, 2]), |c| {
                c.lhs_dilation = vec![2, 3];
                c.strides = vec![1, 2];
                c.padding = vec![(2, 1), (-1, 2)];
            }),
            with(case(2, (32, 4), &[5, 6], &[3, 3]), |c| {
                c.feature_groups = 2;
                c.rhs_dilation = vec![2, 1];
                nhwc(c);
            }),
            with(case(4, (16, 2), &[7], &[3]), |c| {
                c.batch_groups = 2;
                c.strides = vec![2];
            }),
            // Three spatial dimensions.
            with(case(1, (2, 2), &[4, 3, 5], &[2, 2, 3]), |c| c.padding = vec![(1, 0); 3]),
            // Empty batch, features and all-padding windows.
            case(0, (2, 3), &[5], &[2]),
            case(2, (0, 3), &[5], &[2]),
            with(case(1, (1, 2), &[2], &[1]), |c| c.padding = vec![(3, 3)]),
        ]
    }

    #[test]
    fn odd_configurations_match_the_definition() {
        for (i, c) in odd_cases().iter().enumerate() {
            check(c, i as u64);
        }
    }

    #[test]
    fn the_cases_cover_every_way_of_building_patches() {
        let cases = odd_cases();
        let geometries: Vec<ConvGeometry> =
            cases.iter().map(|c| c.geometry().with_spatial_dim()).collect();
        let plans: Vec<Plan> = geometries.iter().map(Plan::new).collect();
        let taps = |p: &'_ Plan<'_>| match &p.method {
            Method::Gather(t) | Method::Scatter(t, _) => Some(t.lanes.len()),
            Method::Direct(_) => None,
        };
        let lanes = || {
            plans.iter().flat_map(|p| match &p.method {
                Method::Gather(t) | Method::Scatter(t, _) => t.lanes.iter().collect(),
                Method::Direct(_) => Vec::new(),
            })
        };
        assert!(plans.iter().all(|p| taps(p) != Some(0)));
        assert!(plans.iter().any(|p| matches!(p.method, Method::Direct(_))));
        assert!(plans.iter().any(|p| matches!(&p.method, Method::Gather(t) if t.transposed)));
        assert!(plans.iter().any(|p| matches!(&p.method, Method::Gather(t) if !t.transposed)));
        let scattered = plans.iter().filter(|p| matches!(p.method, Method::Scatter(..)));
        assert!(scattered.count() >= 4);
        assert!(lanes().any(|l| l.even.is_none()));
        assert!(lanes().any(|l| matches!(l.even, Some((_, _, s)) if s > 1)));
    }

    #[test]
    fn large_convolutions_match_the_definition() {
        // Parallel over images; patch blocks that end mid-row, in both orientations.
        let scatter = with(case(2, (64, 30), &[256], &[9]), |c| c.padding = vec![(4, 4)]);
        assert!(scatter_is_cheaper(&scatter.geometry()));
        let cases = [
            case(8, (8, 16), &[20, 20], &[3, 3]),
            with(case(1, (64, 2), &[32, 32], &[5, 5]), |c| c.padding = vec![(2, 2); 2]),
            case(1, (16, 2), &[64, 64], &[40, 40]),
            // Products first, a block of output features at a time.
            scatter,
        ];
        for (i, c) in cases.iter().enumerate() {
            check(c, 100 + i as u64);
        }
    }

    #[test]
    fn half_precision_is_computed_in_f32() {
        let c = with(case(2, (4, 2), &[6, 6], &[3, 3]), |c| c.padding = vec![(1, 1); 2]);
        let mut rng = Rng(5);
        let (lhs, rhs) = operands(&c, &mut rng);
        let want = reference(&lhs, &rhs, &c);
        for dtype in [DType::F16, DType::BF16] {
            let (l, r) =
                (Buffer::F64(lhs.clone()).cast(dtype), Buffer::F64(rhs.clone()).cast(dtype));
            let got = conv(&l, &r, &c.geometry());
            assert_eq!(got.dtype(), dtype);
            assert_close(got.cast(DType::F64).as_slice::<f64>().unwrap(), &want, 0.05, &c);
        }
    }

    #[test]
    fn recycled_outputs_are_overwritten() {
        // A NaN-filled buffer of the output's size waits in the pool.
        let c = case(4, (8, 16), &[32, 32], &[3, 3]);
        let len: usize = 4 * 16 * c.output().iter().product::<usize>();
        drop(Buffer::F32(vec![f32::NAN; len]));
        let mut rng = Rng(9);
        let (lhs, rhs) = operands(&c, &mut rng);
        let narrow = |v: &[f64]| Buffer::F32(v.iter().map(|&x| x as f32).collect());
        let got = conv(&narrow(&lhs), &narrow(&rhs), &c.geometry());
        assert!(got.as_slice::<f32>().unwrap().iter().all(|x| x.is_finite()));
    }

    #[test]
    #[should_panic(expected = "share a floating-point dtype")]
    fn integer_operands_panic() {
        let c = case(1, (1, 1), &[3], &[2]);
        let _ = conv(&Buffer::I32(vec![1; 3]), &Buffer::I32(vec![1; 2]), &c.geometry());
    }
}
