//! Reduction CPU kernels: folds over axes, cumulative scans along an axis, and the index of the
//! largest/smallest element along an axis.
//!
//! Buffers are contiguous and row-major, so nothing is ever transposed. Adjacent reduced axes
//! merge into one group, and folding one group is an `(outer, reduced, inner)` problem: with
//! `inner == 1` each output folds a contiguous row (in 32 independent lanes, which vectorize);
//! otherwise the rows of `inner` contiguous elements are folded into an accumulator vector,
//! column by column. Separated groups (`[0, 2]` of a rank-3 array) are folded one at a time,
//! innermost first.
//!
//! Folds combine in a tree (pairwise summation: rounding error grows with the logarithm of the
//! length, not the length) whose shape depends only on the array's shape. Rayon decides which
//! thread computes which subtree, never how the tree looks, so results are bitwise identical on
//! every run and for every thread count.

use rayon::prelude::*;

use super::elementwise::PARALLEL_THRESHOLD;
use super::float_mode::{self, Flushing};

/// Elements a row leaf folds in its lanes (16 per lane, as NumPy's pairwise sum folds 16
/// per accumulator).
const LEAF: usize = 1024;
/// Independent accumulators in a row leaf: several vector registers' worth, so the folds of
/// consecutive elements do not wait on each other (with one register's worth, a sum of a
/// long row waited on the adder's latency: 0.5 elements per cycle). With 32 lanes (and
/// leaves of 512) a sum of 25M `f32` read memory at about 60% of the speed of one loop of
/// four 512-bit accumulators; with 64 it reads at about 90% (best of 30 runs: 4.0 and 2.35
/// ms against 2.1 ms), for the baseline build (SSE2) and for AVX-512 alike.
const LANES: usize = 64;
/// Rows shorter than this fold in one sequence (lanes do not pay off).
const SHORT_ROW: usize = 16;
/// Fewest rows a column leaf folds sequentially before splitting in halves.
const LEAF_ROWS: usize = 16;
/// Elements a column leaf folds at least: narrow column blocks fold more rows per leaf so a
/// leaf still does real work (at most 256 sequential steps per column, for 2 columns).
const COLUMN_LEAF: usize = 512;
/// Columns one task folds or scans: each row piece is 8 KiB of `f32`, long enough for the
/// prefetcher to stream it, while the accumulators stay in L1.
const COLS: usize = 2048;
/// Widths up to this keep their spare accumulators on the stack.
const STACK_COLS: usize = 64;
/// Elements per parallel task when many small independent outputs are computed.
const TASK: usize = 1 << 14;

/// A fold: `load` turns a source element into an accumulator (`f16` into `f32`, say) and
/// `combine` is associative with `identity` as its neutral element.
pub struct Fold<A, L, C> {
    pub identity: A,
    pub load: L,
    pub combine: C,
}

/// `(outer, extent, inner)`: the element counts before, along and after `axis`.
#[track_caller]
pub fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (shape[..axis].iter().product(), shape[axis], shape[axis + 1..].iter().product())
}

/// Folds a row-major buffer of `shape` over `axes` (unique, in range, any order). The result
/// holds the remaining axes in row-major order; an empty reduction gives `identity`.
#[track_caller]
pub fn reduce<S, A, L, C>(
    src: &[S],
    shape: &[usize],
    axes: &[usize],
    fold: &Fold<A, L, C>,
) -> Vec<A>
where
    S: Copy + Sync,
    A: Copy + Send + Sync,
    L: Fn(S) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let kept = shape.iter().enumerate().filter(|(ax, _)| !axes.contains(ax));
    let out_len: usize = kept.map(|(_, &d)| d).product();
    if src.is_empty() {
        return super::alloc::filled(out_len, fold.identity);
    }
    let mut groups = merge(shape.iter().enumerate().map(|(ax, &d)| (d, axes.contains(&ax))));
    let Some(g) = last_reduced(&groups) else {
        // Nothing to reduce (every reduced axis has length 1): just load each element.
        let loaded = src.par_iter().with_min_len(PARALLEL_THRESHOLD).map(|&x| (fold.load)(x));
        return super::alloc::par_collect(loaded);
    };
    let mut acc = fold.pass(src, around(&groups, g));
    groups.remove(g);
    groups = merge(groups);
    // Later passes fold accumulators, so `f16` data keeps its `f32` partial results.
    let again = Fold { identity: fold.identity, load: |a: A| a, combine: &fold.combine };
    while let Some(g) = last_reduced(&groups) {
        acc = again.pass(&acc, around(&groups, g));
        groups.remove(g);
        groups = merge(groups);
    }
    acc
}

/// Merges adjacent axes that are both reduced or both kept; length-1 axes are dropped since
/// they change nothing about the memory order.
fn merge(dims: impl IntoIterator<Item = (usize, bool)>) -> Vec<(usize, bool)> {
    let mut out: Vec<(usize, bool)> = Vec::new();
    for (extent, reduced) in dims {
        if extent == 1 {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.1 == reduced => last.0 *= extent,
            _ => out.push((extent, reduced)),
        }
    }
    out
}

fn last_reduced(groups: &[(usize, bool)]) -> Option<usize> {
    groups.iter().rposition(|&(_, reduced)| reduced)
}

/// `(outer, reduced, inner)` around group `g`.
fn around(groups: &[(usize, bool)], g: usize) -> (usize, usize, usize) {
    let extent = |gs: &[(usize, bool)]| gs.iter().map(|&(d, _)| d).product::<usize>();
    (extent(&groups[..g]), groups[g].0, extent(&groups[g + 1..]))
}

impl<A, L, C> Fold<A, L, C>
where
    A: Copy + Send + Sync,
    C: Fn(A, A) -> A + Sync,
{
    /// Folds the middle axis of an `(outer, red, inner)` buffer, giving `(outer, inner)`.
    fn pass<S: Copy + Sync>(&self, src: &[S], (outer, red, inner): (usize, usize, usize)) -> Vec<A>
    where
        L: Fn(S) -> A + Sync,
    {
        let mut out = super::alloc::filled(outer * inner, self.identity);
        let parallel = src.len() >= PARALLEL_THRESHOLD;
        if inner == 1 {
            let per_row = |(o, row): (&mut A, &[S])| *o = self.row(row);
            if parallel {
                let rows = out.par_iter_mut().zip(src.par_chunks(red));
                rows.with_min_len(TASK.div_ceil(red)).flushing().for_each(per_row);
            } else {
                out.iter_mut().zip(src.chunks(red)).for_each(per_row);
            }
        } else {
            let per_slab = |(o, slab): (&mut [A], &[S])| self.slab(slab, red, inner, o, parallel);
            if parallel {
                out.par_chunks_mut(inner)
                    .zip(src.par_chunks(red * inner))
                    .flushing()
                    .for_each(per_slab);
            } else {
                out.chunks_mut(inner).zip(src.chunks(red * inner)).for_each(per_slab);
            }
        }
        out
    }

    /// Pairwise fold of a contiguous row: halves are folded separately (in parallel when large)
    /// down to leaves of `LEAF` elements.
    pub fn row<S: Copy + Sync>(&self, x: &[S]) -> A
    where
        L: Fn(S) -> A + Sync,
    {
        if x.len() < SHORT_ROW {
            // Too short for lanes to pay off.
            let c = &self.combine;
            return x.iter().fold(self.identity, |acc, &v| c(acc, (self.load)(v)));
        }
        if x.len() <= LEAF {
            return self.leaf(x);
        }
        // Split on a lane boundary, so every leaf but the last is a whole number of lane rounds.
        let mid = x.len() / 2 / LANES * LANES;
        let (a, b) = x.split_at(mid);
        let (ra, rb) = if x.len() >= PARALLEL_THRESHOLD {
            float_mode::join(|| self.row(a), || self.row(b))
        } else {
            (self.row(a), self.row(b))
        };
        (self.combine)(ra, rb)
    }

    /// Folds up to [`LEAF`] elements in [`LANES`] independent accumulators.
    ///
    /// On a CPU with AVX-512F the lanes' loop is compiled for it (the same operations in the
    /// same order, so the same bits): a `max` over rows of 25M `f32`, a compare and a select per
    /// element, took 5.0 ms in the baseline build's 4-lane vectors and about 2.5 in 16 lanes.
    #[inline]
    fn leaf<S: Copy>(&self, x: &[S]) -> A
    where
        L: Fn(S) -> A,
    {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { self.leaf_avx512(x) };
        }
        self.leaf_lanes(x)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn leaf_avx512<S: Copy>(&self, x: &[S]) -> A
    where
        L: Fn(S) -> A,
    {
        self.leaf_lanes(x)
    }

    #[inline(always)]
    fn leaf_lanes<S: Copy>(&self, x: &[S]) -> A
    where
        L: Fn(S) -> A,
    {
        let c = &self.combine;
        let mut lanes = [self.identity; LANES];
        let mut chunks = x.chunks_exact(LANES);
        for chunk in &mut chunks {
            for (l, &v) in lanes.iter_mut().zip(chunk) {
                *l = c(*l, (self.load)(v));
            }
        }
        for (l, &v) in lanes.iter_mut().zip(chunks.remainder()) {
            *l = c(*l, (self.load)(v));
        }
        // The lanes in a balanced tree: each half onto the other.
        let mut width = LANES;
        while width > 1 {
            width /= 2;
            let (low, high) = lanes.split_at_mut(width);
            for (l, &h) in low.iter_mut().zip(&*high) {
                *l = c(*l, h);
            }
        }
        lanes[0]
    }

    /// Folds the `red` rows of one `(red, inner)` slab into `out` (`inner` long), in tasks of
    /// [`COLS`] columns.
    fn slab<S: Copy + Sync>(&self, slab: &[S], red: usize, inner: usize, out: &mut [A], par: bool)
    where
        L: Fn(S) -> A + Sync,
    {
        let task = |(k, o): (usize, &mut [A])| self.columns(slab, (0, red), inner, k * COLS, o);
        if par {
            out.par_chunks_mut(COLS).enumerate().flushing().for_each(task);
        } else {
            out.chunks_mut(COLS).enumerate().for_each(task);
        }
    }

    /// Folds rows `lo..hi` of columns `c0..c0 + out.len()` into `out`, pairwise over rows.
    fn columns<S: Copy + Sync>(
        &self,
        src: &[S],
        (lo, hi): (usize, usize),
        inner: usize,
        c0: usize,
        out: &mut [A],
    ) where
        L: Fn(S) -> A + Sync,
    {
        let w = out.len();
        if hi - lo <= LEAF_ROWS.max(COLUMN_LEAF / w) {
            self.column_leaf(src, (lo, hi), inner, c0, out);
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let (mut on_stack, mut on_heap) = ([self.identity; STACK_COLS], Vec::new());
        let spare = if w <= STACK_COLS {
            &mut on_stack[..w]
        } else {
            on_heap.resize(w, self.identity);
            &mut on_heap[..]
        };
        if (hi - lo) * w >= PARALLEL_THRESHOLD {
            float_mode::join(
                || self.columns(src, (lo, mid), inner, c0, out),
                || self.columns(src, (mid, hi), inner, c0, spare),
            );
        } else {
            self.columns(src, (lo, mid), inner, c0, out);
            self.columns(src, (mid, hi), inner, c0, spare);
        }
        for (o, &s) in out.iter_mut().zip(spare.iter()) {
            *o = (self.combine)(*o, s);
        }
    }

    /// Folds rows `lo..hi` of columns `c0..c0 + out.len()` into `out` sequentially. Rows are
    /// taken four at a time so `out` is loaded and stored once per four rows; the order of the
    /// combines is the same as one row at a time.
    #[inline]
    fn column_leaf<S: Copy>(
        &self,
        src: &[S],
        (lo, hi): (usize, usize),
        inner: usize,
        c0: usize,
        out: &mut [A],
    ) where
        L: Fn(S) -> A,
    {
        let (c, load) = (&self.combine, &self.load);
        let w = out.len();
        let row = |r: usize| &src[r * inner + c0..][..w];
        out.fill(self.identity);
        let mut r = lo;
        while r + 4 <= hi {
            let (r0, r1, r2, r3) = (row(r), row(r + 1), row(r + 2), row(r + 3));
            for (j, o) in out.iter_mut().enumerate() {
                *o = c(c(c(c(*o, load(r0[j])), load(r1[j])), load(r2[j])), load(r3[j]));
            }
            r += 4;
        }
        for r in r..hi {
            for (o, &x) in out.iter_mut().zip(row(r)) {
                *o = c(*o, load(x));
            }
        }
    }

    /// Replaces each element of `row` by the fold of `acc` and it, carrying `acc` forward.
    #[inline]
    fn step<T: Copy>(&self, acc: &mut [A], row: &mut [T], store: &impl Fn(A) -> T)
    where
        L: Fn(T) -> A,
    {
        for (a, x) in acc.iter_mut().zip(row) {
            *a = (self.combine)(*a, (self.load)(*x));
            *x = store(*a);
        }
    }
}

/// Inclusive scan along `axis` of a row-major buffer of `shape` (`cumsum` and friends): each
/// output is the fold of the elements up to it (from it to the end when `reverse`), converted
/// back with `store`. Folds run sequentially along the axis, as NumPy's do.
#[track_caller]
pub fn scan<T, A, L, C>(
    src: &[T],
    shape: &[usize],
    axis: usize,
    reverse: bool,
    fold: &Fold<A, L, C>,
    store: impl Fn(A) -> T + Sync,
) -> Vec<T>
where
    T: Copy + Send + Sync,
    A: Copy + Send + Sync,
    L: Fn(T) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    let (_, n, inner) = split_at_axis(shape, axis);
    let mut out = super::alloc::copy_of(src);
    if out.is_empty() {
        return out;
    }
    let slab_len = n * inner;
    let per_slab = |slab: &mut [T]| scan_slab(slab, inner, reverse, fold, &store);
    if out.len() >= PARALLEL_THRESHOLD {
        out.par_chunks_mut(slab_len)
            .with_min_len(TASK.div_ceil(slab_len))
            .flushing()
            .for_each(per_slab);
    } else {
        out.chunks_mut(slab_len).for_each(per_slab);
    }
    out
}

/// Scans one `(n, inner)` slab in place along its first axis.
fn scan_slab<T, A, L, C>(
    slab: &mut [T],
    inner: usize,
    reverse: bool,
    fold: &Fold<A, L, C>,
    store: &(impl Fn(A) -> T + Sync),
) where
    T: Copy + Send + Sync,
    A: Copy + Send + Sync,
    L: Fn(T) -> A + Sync,
    C: Fn(A, A) -> A + Sync,
{
    if inner == 1 {
        let mut acc = fold.identity;
        let step = |x: &mut T| {
            acc = (fold.combine)(acc, (fold.load)(*x));
            *x = store(acc);
        };
        if reverse {
            slab.iter_mut().rev().for_each(step);
        } else {
            slab.iter_mut().for_each(step);
        }
        return;
    }
    let parallel = slab.len() >= PARALLEL_THRESHOLD;
    // Each task scans a block of columns down all rows, so the work splits without sharing.
    let mut blocks: Vec<Vec<&mut [T]>> = Vec::new();
    for row in slab.chunks_mut(inner) {
        for (k, piece) in row.chunks_mut(COLS).enumerate() {
            if k == blocks.len() {
                blocks.push(Vec::new());
            }
            blocks[k].push(piece);
        }
    }
    let scan_block = |rows: Vec<&mut [T]>| {
        let mut acc = [fold.identity; COLS];
        let acc = &mut acc[..rows[0].len()];
        if reverse {
            rows.into_iter().rev().for_each(|row| fold.step(acc, row, store));
        } else {
            rows.into_iter().for_each(|row| fold.step(acc, row, store));
        }
    };
    if parallel && blocks.len() > 1 {
        blocks.into_par_iter().flushing().for_each(scan_block);
    } else {
        blocks.into_iter().for_each(scan_block);
    }
}

/// For each position of the other axes, the index along `axis` of the element that is
/// `better` than all before it and not beaten by any after it: with a strict `better`, the
/// first of tied elements. The axis must not be empty.
#[track_caller]
pub fn arg_reduce<T, B>(src: &[T], shape: &[usize], axis: usize, better: B) -> Vec<i32>
where
    T: Copy + Send + Sync,
    B: Fn(T, T) -> bool + Sync,
{
    let (outer, n, inner) = split_at_axis(shape, axis);
    assert!(n > 0, "arg_reduce over an empty axis");
    let mut out = super::alloc::filled(outer * inner, 0i32);
    if out.is_empty() {
        return out;
    }
    let parallel = src.len() >= PARALLEL_THRESHOLD;
    if inner == 1 {
        let per_row = |(o, row): (&mut i32, &[T])| *o = arg_row(row, &better) as i32;
        if parallel {
            let rows = out.par_iter_mut().zip(src.par_chunks(n));
            rows.with_min_len(TASK.div_ceil(n)).flushing().for_each(per_row);
        } else {
            out.iter_mut().zip(src.chunks(n)).for_each(per_row);
        }
        return out;
    }
    let per_slab = |(o, slab): (&mut [i32], &[T])| {
        let task = |(k, o): (usize, &mut [i32])| arg_columns(slab, inner, k * COLS, o, &better);
        if parallel {
            o.par_chunks_mut(COLS).enumerate().flushing().for_each(task);
        } else {
            o.chunks_mut(COLS).enumerate().for_each(task);
        }
    };
    if parallel {
        out.par_chunks_mut(inner).zip(src.par_chunks(n * inner)).flushing().for_each(per_slab);
    } else {
        out.chunks_mut(inner).zip(src.chunks(n * inner)).for_each(per_slab);
    }
    out
}

/// Index of the first best element of a non-empty row; long rows are searched in fixed blocks
/// in parallel, then the blocks' winners are compared in order.
fn arg_row<T: Copy + Send + Sync>(row: &[T], better: &(impl Fn(T, T) -> bool + Sync)) -> usize {
    if row.len() < PARALLEL_THRESHOLD {
        return first_best(row, better);
    }
    let winners = super::alloc::par_collect(
        row.par_chunks(TASK).enumerate().map(|(b, c)| b * TASK + first_best(c, better)),
    );
    // A later block's winner replaces an earlier one only if strictly better, keeping the first.
    winners.into_iter().reduce(|best, i| if better(row[i], row[best]) { i } else { best }).unwrap()
}

fn first_best<T: Copy>(row: &[T], better: &impl Fn(T, T) -> bool) -> usize {
    let (mut best_i, mut best) = (0, row[0]);
    for (i, &x) in row.iter().enumerate().skip(1) {
        if better(x, best) {
            (best_i, best) = (i, x);
        }
    }
    best_i
}

/// Arg-reduces columns `c0..c0 + out.len()` of one `(n, inner)` slab down its rows.
fn arg_columns<T: Copy>(
    slab: &[T],
    inner: usize,
    c0: usize,
    out: &mut [i32],
    better: &impl Fn(T, T) -> bool,
) {
    let w = out.len();
    let mut best: Vec<T> = super::alloc::copy_of(&slab[c0..c0 + w]);
    out.fill(0);
    for (r, row) in slab.chunks(inner).enumerate().skip(1) {
        for ((o, b), &x) in out.iter_mut().zip(best.iter_mut()).zip(&row[c0..c0 + w]) {
            if better(x, *b) {
                (*o, *b) = (r as i32, x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum_fold() -> Fold<f64, impl Fn(f64) -> f64 + Sync, impl Fn(f64, f64) -> f64 + Sync> {
        Fold { identity: 0.0, load: |x: f64| x, combine: |a: f64, b: f64| a + b }
    }

    /// Naive reference: sums the elements whose index is equal on the kept axes.
    fn naive_sum(src: &[f64], shape: &[usize], axes: &[usize]) -> Vec<f64> {
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let out_len: usize = kept.iter().map(|&a| shape[a]).product();
        let mut out = vec![0.0; out_len];
        for (flat, &x) in src.iter().enumerate() {
            let mut idx = vec![0; shape.len()];
            let mut rem = flat;
            for ax in (0..shape.len()).rev() {
                idx[ax] = rem % shape[ax];
                rem /= shape[ax];
            }
            let o = kept.iter().fold(0, |acc, &a| acc * shape[a] + idx[a]);
            out[o] += x;
        }
        out
    }

    fn data(n: usize) -> Vec<f64> {
        (0..n).map(|i| ((i * 7919) % 1000) as f64 - 500.0).collect()
    }

    #[test]
    fn reduce_matches_naive_on_every_axis_subset() {
        let shape = [3, 1, 4, 5, 2];
        let src = data(120);
        for mask in 0u32..32 {
            let axes: Vec<usize> = (0..5).filter(|a| mask & (1 << a) != 0).collect();
            let got = reduce(&src, &shape, &axes, &sum_fold());
            assert_eq!(got, naive_sum(&src, &shape, &axes), "axes {axes:?}");
        }
    }

    #[test]
    fn large_reductions_match_naive() {
        // Big enough to take the parallel and pairwise paths in each layout.
        for (shape, axes) in [
            (vec![300, 700], vec![1]),
            (vec![300, 700], vec![0]),
            (vec![3, 200_000], vec![1]),
            (vec![40_000, 3], vec![0]),
            (vec![30, 50, 70], vec![0, 2]),
            (vec![30, 50, 70], vec![1]),
            (vec![100_000], vec![0]),
        ] {
            let src = data(shape.iter().product());
            let got = reduce(&src, &shape, &axes, &sum_fold());
            assert_eq!(got, naive_sum(&src, &shape, &axes), "{shape:?} over {axes:?}");
        }
    }

    #[test]
    fn empty_reduction_gives_identity() {
        assert_eq!(reduce(&[], &[3, 0], &[1], &sum_fold()), vec![0.0; 3]);
        assert_eq!(reduce(&[], &[0, 3], &[1], &sum_fold()), Vec::<f64>::new());
        assert_eq!(reduce(&[2.0], &[], &[], &sum_fold()), vec![2.0]);
    }

    #[test]
    fn f32_sums_are_pairwise_accurate() {
        let n = 10_000_000;
        let src = vec![0.1f32; n];
        let fold = Fold { identity: 0.0f32, load: |x: f32| x, combine: |a: f32, b: f32| a + b };
        let got = reduce(&src, &[n], &[0], &fold)[0] as f64;
        let want = 0.1f32 as f64 * n as f64;
        // Sequential f32 summation is off by several percent here.
        assert!((got - want).abs() / want < 1e-6, "got {got}, want {want}");
        let cols = reduce(&src, &[n / 4, 4], &[0], &fold);
        for c in cols {
            assert!((c as f64 - want / 4.0).abs() / want < 1e-6, "column sum {c}");
        }
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let src: Vec<f32> = (0..3_000_000).map(|i| ((i as f32) * 0.37).sin()).collect();
        let fold = Fold { identity: 0.0f32, load: |x: f32| x, combine: |a: f32, b: f32| a + b };
        let run = |threads: usize, shape: &[usize], axes: &[usize]| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| reduce(&src, shape, axes, &fold))
        };
        for (shape, axes) in [
            (vec![3_000_000], vec![0]),
            (vec![1000, 3000], vec![0]),
            (vec![3, 1_000_000], vec![1]),
            (vec![100, 30, 1000], vec![0, 2]),
        ] {
            let one = run(1, &shape, &axes);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&one), bits(&run(2, &shape, &axes)), "{shape:?} over {axes:?}");
            assert_eq!(bits(&one), bits(&run(3, &shape, &axes)), "{shape:?} over {axes:?}");
        }
    }

    #[test]
    fn loads_widen_before_combining() {
        let src = [200u8, 100, 50];
        let fold = Fold { identity: 0u32, load: |x: u8| x as u32, combine: |a: u32, b| a + b };
        assert_eq!(reduce(&src, &[3], &[0], &fold), vec![350]);
    }

    #[test]
    fn scans_run_forward_and_backward() {
        let src = [1, 2, 3, 4, 5, 6];
        let fold = Fold { identity: 0, load: |x: i32| x, combine: |a: i32, b| a + b };
        assert_eq!(scan(&src, &[2, 3], 1, false, &fold, |a| a), vec![1, 3, 6, 4, 9, 15]);
        assert_eq!(scan(&src, &[2, 3], 1, true, &fold, |a| a), vec![6, 5, 3, 15, 11, 6]);
        assert_eq!(scan(&src, &[2, 3], 0, false, &fold, |a| a), vec![1, 2, 3, 5, 7, 9]);
        assert_eq!(scan(&src, &[2, 3], 0, true, &fold, |a| a), vec![5, 7, 9, 4, 5, 6]);
        assert_eq!(scan(&[] as &[i32], &[0, 3], 0, false, &fold, |a| a), Vec::<i32>::new());
    }

    #[test]
    fn large_scans_match_sequential() {
        let (n, inner) = (300, 700);
        let src: Vec<i64> = (0..(n * inner) as i64).map(|i| i % 13 - 6).collect();
        let fold = Fold { identity: 0i64, load: |x: i64| x, combine: |a: i64, b| a + b };
        let got = scan(&src, &[n, inner], 0, false, &fold, |a| a);
        for c in [0, 255, 256, 699] {
            let mut acc = 0;
            for r in 0..n {
                acc += src[r * inner + c];
                assert_eq!(got[r * inner + c], acc);
            }
        }
        let rows = scan(&src, &[n, inner], 1, true, &fold, |a| a);
        let mut acc = 0;
        for c in (0..inner).rev() {
            acc += src[7 * inner + c];
            assert_eq!(rows[7 * inner + c], acc);
        }
    }

    fn argmax_better(c: f32, b: f32) -> bool {
        c > b || (c.is_nan() && !b.is_nan())
    }

    #[test]
    fn arg_reduce_takes_first_of_ties_and_first_nan() {
        let src = [1.0, 3.0, 3.0, 2.0, f32::NAN, 5.0, f32::NAN, 0.0];
        assert_eq!(arg_reduce(&src, &[2, 4], 1, argmax_better), vec![1, 0]);
        assert_eq!(arg_reduce(&src, &[2, 4], 0, argmax_better), vec![1, 1, 1, 0]);
        assert_eq!(arg_reduce(&src, &[8], 0, argmax_better), vec![4]);
    }

    #[test]
    fn long_arg_reduce_rows_keep_first_ties_across_blocks() {
        let mut src = vec![0.0f32; 200_000];
        src[50_000] = 7.0;
        src[150_000] = 7.0;
        assert_eq!(arg_reduce(&src, &[200_000], 0, argmax_better), vec![50_000]);
        src[180_000] = f32::NAN;
        assert_eq!(arg_reduce(&src, &[200_000], 0, argmax_better), vec![180_000]);
        let cols = arg_reduce(&src, &[2, 100_000], 0, argmax_better);
        assert_eq!((cols[50_000], cols[80_000], cols[0]), (0, 1, 0));
    }
}
