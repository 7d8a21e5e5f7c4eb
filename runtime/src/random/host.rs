//! The index operations the discrete samplers need: stable sorts by keys, arg-max, gathers
//! along an axis, cumulative sums, binary search and top-k, with the semantics of the `lax`
//! operations JAX uses (`sort_key_val`, `argmax`, `take`, `cumsum`, `searchsorted`, `top_k`).
//! They run on host memory until `lax` has them as primitives.

use std::cmp::Ordering;
use std::ops::Add;

use crate::array::Array;
use crate::dtype::Element;

/// `(outer, n, inner)` for walking `shape` along `axis`: element `(o, j, k)` is at flat index
/// `(o * n + j) * inner + k`.
fn lanes(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

/// `lax.sort_key_val(keys, x, axis)[1]`: `x` reordered along `axis` by a stable sort of `keys`
/// (which has `x`'s shape).
pub(super) fn sort_by_keys(keys: &[u32], x: &Array, axis: usize) -> Array {
    let (outer, n, inner) = lanes(x.shape(), axis);
    let buffer = crate::with_buffer!(x.buffer(), |v: T| {
        let mut out: Vec<T> = v.clone();
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for o in 0..outer {
            for k in 0..inner {
                let at = |j: usize| (o * n + j) * inner + k;
                order.clear();
                order.extend(0..n);
                order.sort_by_key(|&j| keys[at(j)]);
                for (j, &src) in order.iter().enumerate() {
                    out[at(j)] = v[at(src)];
                }
            }
        }
        <T as Element>::wrap(out)
    });
    Array::from_buffer(x.shape(), buffer, x.is_weak())
}

/// `jnp.take(x, idx, axis)` for a flat list of in-range indices: the result has `x`'s shape
/// with `axis` of length `idx.len()`.
pub(super) fn take_axis(x: &Array, idx: &[usize], axis: usize) -> Array {
    let (outer, n, inner) = lanes(x.shape(), axis);
    let buffer = crate::with_buffer!(x.buffer(), |v: T| {
        let mut out: Vec<T> = Vec::with_capacity(outer * idx.len() * inner);
        for o in 0..outer {
            for &j in idx {
                let start = (o * n + j) * inner;
                out.extend_from_slice(&v[start..start + inner]);
            }
        }
        <T as Element>::wrap(out)
    });
    let mut shape = x.shape().to_vec();
    shape[axis] = idx.len();
    Array::from_buffer(&shape, buffer, x.is_weak())
}

/// `jnp.argmax(v, axis)` as `int32`: the first index of the maximum of each lane, or of its
/// first NaN.
pub(super) fn argmax_axis<T: PartialOrd + Copy>(v: &[T], shape: &[usize], axis: usize) -> Vec<i32> {
    let (outer, n, inner) = lanes(shape, axis);
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for k in 0..inner {
            let at = |j: usize| v[(o * n + j) * inner + k];
            let mut best = 0;
            for j in 1..n {
                let (x, b) = (at(j), at(best));
                // `b != b` is NaN: once the best is NaN it stays; a NaN beats any number.
                #[allow(clippy::eq_op)]
                if b == b && (x > b || x != x) {
                    best = j;
                }
            }
            out.push(best as i32);
        }
    }
    out
}

/// Sequential cumulative sum (`jnp.cumsum`, which XLA's CPU backend sums in order).
pub(super) fn cumsum<T: Add<Output = T> + Copy>(v: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for (i, &x) in v.iter().enumerate() {
        out.push(if i == 0 { x } else { out[i - 1] + x });
    }
    out
}

/// `jnp.searchsorted(sorted, q, side="left")` by JAX's default method, a fixed number of
/// bisection steps (for a sorted array: the first index whose value is `>= q`).
pub(super) fn searchsorted_left<T: PartialOrd + Copy>(sorted: &[T], q: T) -> usize {
    let n = sorted.len();
    let levels = usize::BITS - n.leading_zeros(); // ceil(log2(n + 1))
    let (mut low, mut high) = (0usize, n);
    for _ in 0..levels {
        let mid = (low + high) / 2;
        // A gather past the end clamps to the last element, as XLA's does.
        if q <= sorted[mid.min(n.saturating_sub(1))] {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

/// `lax.top_k(v, k)[1]`: the indices of the `k` largest values, largest first, ties in index
/// order.
pub(super) fn top_k<T: PartialOrd + Copy>(v: &[T], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[b].partial_cmp(&v[a]).unwrap_or(Ordering::Equal));
    order.truncate(k);
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_gathers_and_searches() {
        let x = Array::from_shape_vec([2, 3], vec![1, 2, 3, 4, 5, 6]);
        let sorted = sort_by_keys(&[3, 1, 2, 9, 9, 0], &x, 1);
        assert_eq!(sorted.to_vec::<i32>().unwrap(), vec![2, 3, 1, 6, 4, 5]);
        let taken = take_axis(&x, &[1, 1, 0], 0);
        assert_eq!(taken.shape(), &[3, 3]);
        assert_eq!(taken.to_vec::<i32>().unwrap(), vec![4, 5, 6, 4, 5, 6, 1, 2, 3]);
        assert_eq!(argmax_axis(&[1.0, 3.0, 3.0, 3.0], &[2, 2], 1), vec![1, 0]); // ties: first
        assert_eq!(argmax_axis(&[1.0, f32::NAN, 5.0], &[3], 0), vec![1]);
        assert_eq!(cumsum(&[1, 2, 3]), vec![1, 3, 6]);
        let c = [0.1, 0.3, 0.3, 1.0];
        let found: Vec<usize> = [0.0, 0.1, 0.2, 0.3, 0.99, 1.0, 2.0]
            .iter()
            .map(|&q| searchsorted_left(&c, q))
            .collect();
        assert_eq!(found, vec![0, 0, 1, 1, 3, 3, 4]);
        assert_eq!(top_k(&[1.0, 5.0, 5.0, 2.0], 3), vec![1, 2, 3]);
    }
}
