//! How an elementwise kernel reads its operands: NumPy broadcasting reduced to the fewest
//! axes, and the split of a large output into windows a device can bind at once.
//!
//! A kernel is generated per *pattern* (its rank and how each operand is read), not per
//! shape: the extents and strides are passed at run time, so `[1000, 3] + [3]` and
//! `[7, 5] + [5]` share one kernel.

// Device-neutral, so it is built (and its tests run) without a backend feature, when nothing
// uses it.
#![cfg_attr(not(feature = "gpu"), allow(dead_code))]

/// How one operand is read for each output element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Access {
    /// The operand holds the output's elements in the output's order: element `i` for
    /// output `i`.
    Same,
    /// Its one element, for every output element.
    Scalar,
    /// Broadcast along some axes: element `sum(coord[k] * strides[k])`, where `strides[k]`
    /// is 0 along the axes it is broadcast over.
    Strided(Vec<usize>),
}

/// The output's shape with axes of extent 1 dropped and neighbouring axes that every operand
/// reads alike merged, and how each operand is read over it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// The merged extents (empty for one element).
    pub dims: Vec<usize>,
    /// One per operand.
    pub operands: Vec<Access>,
}

/// A part of the output a kernel launch covers: extents over the layout's axes (1 on the axes
/// before the one it is split along), and for each operand, then the output, the first
/// element it touches and how many elements from there the window spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub dims: Vec<usize>,
    pub spans: Vec<(usize, usize)>,
}

/// How a kernel reads the operand, for the comment that opens its source: `same`, `scalar`
/// or `along axis 1` (the axes it varies along).
impl std::fmt::Display for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Access::Same => write!(f, "same"),
            Access::Scalar => write!(f, "scalar"),
            Access::Strided(strides) => {
                let axes: Vec<String> = (0..strides.len())
                    .filter(|&k| strides[k] != 0)
                    .map(|k| k.to_string())
                    .collect();
                let noun = if axes.len() == 1 { "axis" } else { "axes" };
                write!(f, "along {noun} {}", axes.join(" "))
            }
        }
    }
}

impl Window {
    /// Elements written.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }
}

impl Layout {
    /// The layout of operands of shapes `operands` broadcast to `out` (which NumPy's rules
    /// give them: each operand axis, aligned from the right, is 1 or the output's extent).
    pub fn new(out: &[usize], operands: &[&[usize]]) -> Layout {
        let rank = out.len();
        // Whether operand `i` varies along output axis `k`.
        let varies = |shape: &[usize], k: usize| {
            let lead = rank - shape.len();
            k >= lead && shape[k - lead] == out[k]
        };
        let mut groups: Vec<(usize, Vec<bool>)> = Vec::new();
        for k in (0..rank).filter(|&k| out[k] != 1) {
            let pattern: Vec<bool> = operands.iter().map(|s| varies(s, k)).collect();
            match groups.last_mut() {
                Some((extent, last)) if *last == pattern => *extent *= out[k],
                _ => groups.push((out[k], pattern)),
            }
        }
        let dims: Vec<usize> = groups.iter().map(|(extent, _)| *extent).collect();
        let operands = (0..operands.len())
            .map(|i| {
                if groups.iter().all(|(_, p)| p[i]) {
                    return Access::Same;
                }
                if groups.iter().all(|(_, p)| !p[i]) {
                    return Access::Scalar;
                }
                let mut strides = vec![0; groups.len()];
                let mut step = 1;
                for (k, (extent, p)) in groups.iter().enumerate().rev() {
                    if p[i] {
                        strides[k] = step;
                        step *= extent;
                    }
                }
                Access::Strided(strides)
            })
            .collect();
        Layout { dims, operands }
    }

    /// Output elements.
    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }

    /// Windows covering the output in order, each spanning at most `max` elements of every
    /// operand and of the output (`max >= 1`). One window when everything fits.
    pub fn windows(&self, max: usize) -> Vec<Window> {
        assert!(max >= 1, "a window holds at least one element");
        let total = self.len();
        if total == 0 {
            return Vec::new();
        }
        let rank = self.dims.len();
        if total <= max {
            let mut spans: Vec<(usize, usize)> =
                self.operands.iter().map(|a| self.whole(a)).collect();
            spans.push((0, total));
            return vec![Window { dims: self.dims.clone(), spans }];
        }
        // Split along the first axis whose inner block fits, `rows` of its indices at a
        // time, for every index of the axes before it: every window is then a box, and
        // each operand's elements in it lie within a span no longer than the box.
        let split = (0..rank).find(|&k| self.dims[k + 1..].iter().product::<usize>() <= max);
        let split = split.expect("the last axis has an empty inner block");
        let inner: usize = self.dims[split + 1..].iter().product();
        let rows = (max / inner).max(1);
        let outer: usize = self.dims[..split].iter().product();
        let mut windows = Vec::new();
        for prefix in 0..outer {
            let coords = unravel(prefix, &self.dims[..split]);
            let mut start = 0;
            while start < self.dims[split] {
                let count = rows.min(self.dims[split] - start);
                let mut dims = vec![1; split];
                dims.push(count);
                dims.extend_from_slice(&self.dims[split + 1..]);
                let mut spans: Vec<(usize, usize)> = self
                    .operands
                    .iter()
                    .map(|access| match access {
                        Access::Scalar => (0, 1),
                        Access::Same => {
                            ((prefix * self.dims[split] + start) * inner, count * inner)
                        }
                        Access::Strided(strides) => {
                            let first: usize =
                                coords.iter().zip(strides).map(|(c, s)| c * s).sum::<usize>()
                                    + start * strides[split];
                            let reach: usize = (split + 1..rank)
                                .map(|m| (self.dims[m] - 1) * strides[m])
                                .sum::<usize>()
                                + (count - 1) * strides[split];
                            (first, reach + 1)
                        }
                    })
                    .collect();
                spans.push(((prefix * self.dims[split] + start) * inner, count * inner));
                windows.push(Window { dims, spans });
                start += count;
            }
        }
        windows
    }

    /// The span of the whole of an operand read as `access`.
    fn whole(&self, access: &Access) -> (usize, usize) {
        match access {
            Access::Same => (0, self.len()),
            Access::Scalar => (0, 1),
            Access::Strided(strides) => {
                let reach: usize = self.dims.iter().zip(strides).map(|(d, s)| (d - 1) * s).sum();
                (0, reach + 1)
            }
        }
    }
}

/// The coordinates of row-major index `index` in `dims`.
fn unravel(mut index: usize, dims: &[usize]) -> Vec<usize> {
    let mut coords = vec![0; dims.len()];
    for (k, &d) in dims.iter().enumerate().rev() {
        coords[k] = index % d;
        index /= d;
    }
    coords
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_merges_axes_read_alike() {
        let l = Layout::new(&[2, 3, 4], &[&[2, 3, 4], &[4], &[]]);
        assert_eq!(l.dims, vec![6, 4]);
        assert_eq!(l.operands, vec![Access::Same, Access::Strided(vec![0, 1]), Access::Scalar]);
        let l = Layout::new(&[5, 1, 7], &[&[5, 1, 1], &[1, 1, 7]]);
        assert_eq!(l.dims, vec![5, 7]);
        assert_eq!(l.operands, vec![Access::Strided(vec![1, 0]), Access::Strided(vec![0, 1])]);
        let l = Layout::new(&[], &[&[], &[]]);
        assert_eq!((l.dims.len(), l.len()), (0, 1));
        assert_eq!(l.operands, vec![Access::Same, Access::Same]);
        // A size-1 operand of the same rank is a scalar, one of equal size is the same.
        let l = Layout::new(&[1, 3], &[&[1, 1], &[3]]);
        assert_eq!(l.operands, vec![Access::Scalar, Access::Same]);
    }

    /// Every window's elements, read through its spans, are the ones the whole output reads.
    #[test]
    fn windows_cover_the_output_once_within_their_spans() {
        let cases: [(&[usize], &[&[usize]]); 4] = [
            (&[10, 7], &[&[10, 7], &[7], &[10, 1]]),
            (&[3, 4, 5], &[&[3, 1, 5], &[4, 1], &[]]),
            (&[101], &[&[101], &[1]]),
            (&[2, 9, 3], &[&[2, 9, 3], &[9, 3]]),
        ];
        for (out, ops) in cases {
            let layout = Layout::new(out, ops);
            let total = layout.len();
            for max in [1, 2, 5, 6, 13, 40, total] {
                let windows = layout.windows(max);
                let mut written = 0;
                for w in &windows {
                    for (k, &(start, len)) in w.spans.iter().enumerate() {
                        assert!(len <= max, "{out:?} max {max}: span {len}");
                        let access = layout.operands.get(k).unwrap_or(&Access::Same);
                        for i in 0..w.len() {
                            let coords = unravel(i, &w.dims);
                            let at = match access {
                                Access::Same => i,
                                Access::Scalar => 0,
                                Access::Strided(s) => {
                                    coords.iter().zip(s).map(|(c, s)| c * s).sum()
                                }
                            };
                            assert!(at < len, "{out:?} max {max}: element {i} reads past its span");
                            // The same element the unsplit layout reads for this output index.
                            let global = unravel(written + i, &layout.dims);
                            let want = match access {
                                Access::Same => written + i,
                                Access::Scalar => 0,
                                Access::Strided(s) => {
                                    global.iter().zip(s).map(|(c, s)| c * s).sum()
                                }
                            };
                            assert_eq!(start + at, want, "{out:?} max {max} operand {k}");
                        }
                    }
                    written += w.len();
                }
                assert_eq!(written, total);
            }
        }
    }
}
