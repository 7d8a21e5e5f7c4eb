//! Elementwise CPU kernels: maps and broadcasting zips over contiguous buffers.
//!
//! Inner loops run over contiguous runs with unit or zero strides, which the compiler
//! vectorizes; work is split over cores with rayon once it is large enough to pay for it.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::float_mode::Flushing;
use super::pool;
use crate::dtype::Element;
use crate::shape::broadcast_strides;

/// Below this many elements a kernel runs on the calling thread.
pub const PARALLEL_THRESHOLD: usize = 1 << 16;
/// Elements per parallel task: big enough to amortize scheduling, small enough to balance.
const CHUNK: usize = 1 << 14;

/// Builds a `Vec` of `n` elements by letting `fill(start, out)` write every element of each
/// chunk `out` that begins at flat index `start`; chunks run in parallel for large `n`.
pub fn build<D: Element>(n: usize, fill: impl Fn(usize, &mut [MaybeUninit<D>]) + Sync) -> Vec<D> {
    build_chunked(n, CHUNK, fill)
}

/// [`build`] with chunks of `chunk` elements (the last may be shorter), for kernels that need
/// chunks aligned to their rows or tiles.
pub fn build_chunked<D: Element>(
    n: usize,
    chunk: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<D>]) + Sync,
) -> Vec<D> {
    let mut out: Vec<D> = pool::take(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    if n < PARALLEL_THRESHOLD {
        wide::fill(&fill, 0, spare);
    } else {
        spare
            .par_chunks_mut(chunk.max(1))
            .enumerate()
            .flushing()
            .for_each(|(i, part)| wide::fill(&fill, i * chunk.max(1), part));
    }
    // SAFETY: every caller's `fill` writes each element of the chunk it is given, and the chunks
    // cover `0..n` exactly, so the first `n` elements are initialized.
    unsafe { out.set_len(n) };
    out
}

/// `f` applied to every element.
pub fn map<S: Copy + Sync, D: Element>(src: &[S], f: impl Fn(S) -> D + Sync) -> Vec<D> {
    build(src.len(), |start, out| {
        let len = out.len();
        for (o, &x) in out.iter_mut().zip(&src[start..start + len]) {
            o.write(f(x));
        }
    })
}

/// `f` applied elementwise to `a` and `b` broadcast to `out_shape` (NumPy rules; the caller has
/// checked the shapes are compatible).
pub fn zip<A: Copy + Sync, B: Copy + Sync, D: Element>(
    a: (&[A], &[usize]),
    b: (&[B], &[usize]),
    out_shape: &[usize],
    f: impl Fn(A, B) -> D + Sync,
) -> Vec<D> {
    let (av, ash) = a;
    let (bv, bsh) = b;
    let n: usize = out_shape.iter().product();
    if ash == out_shape && bsh == out_shape {
        return build(n, |s, out| {
            let len = out.len();
            let (a, b) = (&av[s..s + len], &bv[s..s + len]);
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                o.write(f(x, y));
            }
        });
    }
    // `move`: the closure holds the scalar itself, not a reference the loop would reload.
    if bv.len() == 1 && ash == out_shape {
        let y = bv[0];
        return map(av, move |x| f(x, y));
    }
    if av.len() == 1 && bsh == out_shape {
        let x = av[0];
        return map(bv, move |y| f(x, y));
    }
    let strides = [broadcast_strides(ash, out_shape), broadcast_strides(bsh, out_shape)];
    let walk = Walk::new(out_shape, &strides);
    build(n, |start, out| {
        walk.for_runs(start, out.len(), |pos, len, off| {
            let (ia, ib) = (off[0], off[1]);
            let (sa, sb) = (walk.inner[0], walk.inner[1]);
            let dst = &mut out[pos..pos + len];
            // Unit/zero inner strides get their own loops so each one vectorizes.
            match (sa, sb) {
                (1, 1) => run(dst, |k| f(av[ia + k], bv[ib + k])),
                (1, 0) => run(dst, |k| f(av[ia + k], bv[ib])),
                (0, 1) => run(dst, |k| f(av[ia], bv[ib + k])),
                _ => run(dst, |k| f(av[ia + k * sa], bv[ib + k * sb])),
            }
        });
    })
}

/// `f` applied elementwise to three operands broadcast to `out_shape`.
pub fn zip3<A: Copy + Sync, B: Copy + Sync, C: Copy + Sync, D: Element>(
    a: (&[A], &[usize]),
    b: (&[B], &[usize]),
    c: (&[C], &[usize]),
    out_shape: &[usize],
    f: impl Fn(A, B, C) -> D + Sync,
) -> Vec<D> {
    let n: usize = out_shape.iter().product();
    let strides = [
        broadcast_strides(a.1, out_shape),
        broadcast_strides(b.1, out_shape),
        broadcast_strides(c.1, out_shape),
    ];
    let walk = Walk::new(out_shape, &strides);
    build(n, |start, out| {
        walk.for_runs(start, out.len(), |pos, len, off| {
            let s = &walk.inner;
            run(&mut out[pos..pos + len], |k| {
                f(a.0[off[0] + k * s[0]], b.0[off[1] + k * s[1]], c.0[off[2] + k * s[2]])
            });
        });
    })
}

/// Runs kernel loops with the widest vector instructions the CPU has, chosen at run time:
/// the crate is built for baseline x86-64 (SSE2), as users' builds are, and the loops inlined
/// here are compiled again with AVX2 and FMA. Neither contracts `a * b + c` into an FMA, so
/// both give the same bits; FMA makes the explicit `mul_add`s of XLA's functions (`exp`,
/// `tanh`, `erf`) instructions rather than library calls.
pub(crate) mod wide {
    use std::mem::MaybeUninit;

    #[inline(always)]
    pub fn fill<D>(
        f: &impl Fn(usize, &mut [MaybeUninit<D>]),
        start: usize,
        out: &mut [MaybeUninit<D>],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            return unsafe { fill_avx2(f, start, out) };
        }
        f(start, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn fill_avx2<D>(
        f: &impl Fn(usize, &mut [MaybeUninit<D>]),
        start: usize,
        out: &mut [MaybeUninit<D>],
    ) {
        f(start, out)
    }
}

#[inline(always)]
fn run<D>(dst: &mut [MaybeUninit<D>], f: impl Fn(usize) -> D) {
    for (k, o) in dst.iter_mut().enumerate() {
        o.write(f(k));
    }
}

/// Walks a row-major output in contiguous runs along its (collapsed) last axis, tracking each
/// operand's offset through its own strides (zero on broadcast axes).
struct Walk {
    /// Output extents after merging axes that every operand walks contiguously.
    dims: Vec<usize>,
    /// Per operand, the stride of each merged axis.
    strides: Vec<Vec<usize>>,
    /// Per operand, the stride along the innermost merged axis.
    inner: Vec<usize>,
}

impl Walk {
    fn new(shape: &[usize], strides: &[Vec<usize>]) -> Walk {
        let mut dims: Vec<usize> = Vec::new();
        let mut merged: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
        for (ax, &extent) in shape.iter().enumerate() {
            if extent == 1 {
                continue;
            }
            let can_merge = !dims.is_empty()
                && strides.iter().zip(&merged).all(|(s, m)| *m.last().unwrap() == s[ax] * extent);
            if can_merge {
                *dims.last_mut().unwrap() *= extent;
                for (s, m) in strides.iter().zip(&mut merged) {
                    *m.last_mut().unwrap() = s[ax];
                }
            } else {
                dims.push(extent);
                for (s, m) in strides.iter().zip(&mut merged) {
                    m.push(s[ax]);
                }
            }
        }
        if dims.is_empty() {
            dims.push(1);
            merged.iter_mut().for_each(|m| m.push(0));
        }
        let inner = merged.iter().map(|m| *m.last().unwrap()).collect();
        Walk { dims, strides: merged, inner }
    }

    /// Calls `f(pos, len, offsets)` for each contiguous run covering output elements
    /// `start..start + count`; `pos` is relative to `start`.
    fn for_runs(&self, start: usize, count: usize, mut f: impl FnMut(usize, usize, &[usize])) {
        // An empty output may have zero extents, which the index decomposition cannot divide by.
        if count == 0 {
            return;
        }
        let last = *self.dims.last().unwrap();
        let rank = self.dims.len();
        // Decompose `start` into a multi-index.
        let mut idx = vec![0usize; rank];
        let mut rem = start;
        for ax in (0..rank).rev() {
            idx[ax] = rem % self.dims[ax];
            rem /= self.dims[ax];
        }
        let mut offsets: Vec<usize> =
            self.strides.iter().map(|s| idx.iter().zip(s).map(|(i, st)| i * st).sum()).collect();
        let mut pos = 0;
        while pos < count {
            let len = (last - idx[rank - 1]).min(count - pos);
            f(pos, len, &offsets);
            pos += len;
            // Advance the multi-index by `len` (which ends a row unless this was the last run).
            idx[rank - 1] += len;
            for (o, s) in offsets.iter_mut().zip(&self.strides) {
                *o += len * s[rank - 1];
            }
            let mut ax = rank - 1;
            while ax > 0 && idx[ax] == self.dims[ax] {
                for (o, s) in offsets.iter_mut().zip(&self.strides) {
                    *o -= idx[ax] * s[ax];
                    *o += s[ax - 1];
                }
                idx[ax] = 0;
                idx[ax - 1] += 1;
                ax -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zip_broadcasts_rows_and_columns() {
        let a = [1, 2, 3];
        let b = [10, 20];
        let out = zip((&a, &[3, 1]), (&b, &[1, 2]), &[3, 2], |x, y| x + y);
        assert_eq!(out, vec![11, 21, 12, 22, 13, 23]);
    }

    #[test]
    fn zip_large_broadcast_matches_loop() {
        let a: Vec<i64> = (0..300 * 400).collect();
        let b: Vec<i64> = (0..400).map(|v| v * 1000).collect();
        let out = zip((&a, &[300, 400]), (&b, &[400]), &[300, 400], |x, y| x + y);
        for i in 0..300 {
            for j in 0..400 {
                assert_eq!(out[i * 400 + j], a[i * 400 + j] + b[j]);
            }
        }
        let col: Vec<i64> = (0..300).collect();
        let out = zip((&col, &[300, 1]), (&b, &[1, 400]), &[300, 400], |x, y| x + y);
        assert_eq!(out[401], 1 + 1000);
    }
}
