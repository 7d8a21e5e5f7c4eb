//! The operations every backend runs: what a primitive is, as far as a device is concerned.
//!
//! Each primitive that can run on a device says which of these it is in its own file
//! (`Primitive::device_op`), computing the parameters from its own (the strides of a
//! transpose, the regions of a pad); the backends implement the vocabulary once, and
//! `dispatch` connects the two. A new backend implements `super::Backend` and touches no
//! primitive; a new primitive picks an operation here and touches no backend.

use super::ElementwiseOp;
use crate::dtype::DType;
use crate::primitives::{ArgOp, CumOp, IndexMode, ReduceOp, ScatterOp};

/// An affine map from a multi-index to an element position: index `i` (over some extents)
/// is element `offset + Σ i[d] * strides[d]` of a row-major buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Strided {
    /// The position of index 0.
    pub offset: usize,
    /// The step per unit of each index (0 repeats; negative walks backwards).
    pub strides: Vec<isize>,
}

impl Strided {
    /// The row-major layout of `shape`: index `i` is element `i` in row-major order.
    pub fn row_major(shape: &[usize]) -> Strided {
        Strided { offset: 0, strides: row_major_strides(shape) }
    }
}

/// The element strides of a row-major array of `shape`.
pub fn row_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        // An array's element count fits in isize (see `crate::shape`), so this cannot wrap.
        step *= n.max(1) as isize;
    }
    strides
}

/// One region of an [`DeviceOp::Assemble`]: for every multi-index over `extents`, the output
/// element at `dst` takes operand `operand`'s element at `src`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CopyRegion {
    /// Which operand is read.
    pub operand: usize,
    /// The index space walked.
    pub extents: Vec<usize>,
    /// Where each index reads in the operand.
    pub src: Strided,
    /// Where each index writes in the output.
    pub dst: Strided,
}

/// A convolution with its dimension numbers applied (see
/// [`crate::primitives::ConvGeneralDilated`]): output element `(n, o, p...)` (its position
/// in the output buffer given by `out_strides`) is the sum over the group's input features
/// `i` and kernel taps `k...` of `lhs[image, channel, q...] * rhs[o, i, k...]`, where
/// `q = (p * window_stride + k * rhs_dilation - padding_lo) / lhs_dilation` when that
/// divides exactly and lands in the input. Strides list the batch (output features for the
/// kernel), feature, then each spatial dimension's element stride in its buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvWindows {
    /// Output batch and feature extents.
    pub out_batch: usize,
    pub out_features: usize,
    /// Input features each group reads, and output features each group writes.
    pub group_in: usize,
    pub group_out: usize,
    /// Whether groups split the input's features (`feature_group_count > 1`) or its batch
    /// (`batch_group_count > 1`); at most one is set.
    pub feature_grouped: bool,
    pub batch_grouped: bool,
    /// Per spatial dimension: output, input and kernel extents, window step, padding before
    /// the dilated input, and the dilations.
    pub output: Vec<usize>,
    pub input: Vec<usize>,
    pub window: Vec<usize>,
    pub window_strides: Vec<usize>,
    pub padding_lo: Vec<i64>,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    /// Element strides of the input, the kernel and the output.
    pub lhs_strides: Vec<usize>,
    pub rhs_strides: Vec<usize>,
    pub out_strides: Vec<usize>,
}

/// A value inside an [`ElementwiseGroup`]: one of the group's operands, or the result of one
/// of its earlier operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupValue {
    Operand(usize),
    Op(usize),
}

/// One operation of an [`ElementwiseGroup`]: what it computes, from which values, in which
/// dtype.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupOp {
    pub op: ElementwiseOp,
    pub args: Vec<GroupValue>,
    pub dtype: DType,
}

/// Elementwise operations over one output shape run as one kernel (a fused group of a
/// `#[jit]` plan): the operands broadcast to that shape, the operations run in order on each
/// element, and each of `outputs` is written to a new buffer of that shape. A group may end
/// in a `reduction` of one of its values, whose result is one more output, after `outputs`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ElementwiseGroup {
    pub ops: Vec<GroupOp>,
    pub outputs: Vec<GroupValue>,
    pub reduction: Option<GroupReduction>,
}

/// The reduction that closes an [`ElementwiseGroup`]: `op` folds `axes` of the value `input`
/// (which has the group's shape) away, in the fixed order of [`DeviceOp::Reduce`], so the
/// group's values are computed as the fold reads them and never stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupReduction {
    pub op: ReduceOp,
    pub axes: Vec<usize>,
    pub input: GroupValue,
    /// The group's shape: the input's, which the operands broadcast to.
    pub shape: Vec<usize>,
}

/// One operation of the device vocabulary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeviceOp {
    /// An elementwise operation over operands broadcast to the output's shape.
    Elementwise(ElementwiseOp),
    /// The output is the operand's buffer under a new shape (reshape): no work, no copy.
    Alias,
    /// The output is assembled from copies of operand regions (transpose, broadcast, slice,
    /// rev, concatenate, pad): first every element is set to the 0-d operand `fill`, when
    /// there is one, then each region is copied in order. Regions write distinct elements.
    Assemble { fill: Option<usize>, regions: Vec<CopyRegion> },
    /// Folds `axes` of the one operand away, in a fixed order (the same result every run).
    Reduce { op: ReduceOp, axes: Vec<usize> },
    /// The `int32` index of the first largest (smallest) element along `axis`, NaN first.
    ArgReduce { op: ArgOp, axis: usize },
    /// Running folds along `axis`, from the end when `reverse`.
    Cumulative { op: CumOp, axis: usize, reverse: bool },
    /// A batched matrix product `[b, m, k] x [b, k, n] -> [b, m, n]` of operands that are
    /// first brought to those layouts by transposing them with `lhs_perm` and `rhs_perm`
    /// (output axis `i` is operand axis `perm[i]`; the identity needs no copy) and reading
    /// them as 3-d. The output's row-major order is `[b, m, n]`'s.
    Matmul { lhs_perm: Vec<usize>, rhs_perm: Vec<usize>, b: usize, m: usize, k: usize, n: usize },
    /// `gather(operand, indices)` along `axis` (see [`crate::primitives::Gather`]): the
    /// operand's axis replaced by the integer index array's shape; negative indices count
    /// from the end once, and `mode` says what the ones still out of bounds read.
    Gather { axis: usize, mode: IndexMode },
    /// `scatter(operand, indices, updates)` along `axis` (see [`crate::primitives::Scatter`]):
    /// a copy of the operand with each update combined by `op` into the element its index
    /// names, in index order (repeated indices accumulate in that order).
    Scatter { axis: usize, op: ScatterOp, mode: IndexMode },
    /// `conv_general_dilated`: every output element summed over its window in a fixed order.
    Conv(Box<ConvWindows>),
    /// The threefry-2x32 block cipher of `(key0, key1, x0, x1)` (all `uint32`, broadcast),
    /// giving two `uint32` outputs, bit for bit as on the host.
    Threefry2x32,
    /// A fused group of elementwise operations (see [`ElementwiseGroup`]), one output per
    /// group output.
    Fused(Box<ElementwiseGroup>),
    /// The primitive is made of other primitives (control flow, custom rules): its own
    /// evaluation binds them, each of which runs where its operands are, and reads values
    /// (a loop's predicate) only through [`Array::item`](crate::Array::item) and friends.
    Composite,
}

impl DeviceOp {
    /// The assembly that transposes an operand of `shape`: output axis `i` is axis `perm[i]`.
    pub fn transpose(shape: &[usize], perm: &[usize]) -> DeviceOp {
        DeviceOp::Assemble { fill: None, regions: vec![transpose_region(shape, perm)] }
    }
}

/// The region copying an operand of `shape` transposed by `perm` into a row-major output.
pub fn transpose_region(shape: &[usize], perm: &[usize]) -> CopyRegion {
    let strides = row_major_strides(shape);
    let extents: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    CopyRegion {
        operand: 0,
        src: Strided { offset: 0, strides: perm.iter().map(|&p| strides[p]).collect() },
        dst: Strided::row_major(&extents),
        extents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_strides_count_elements() {
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(row_major_strides(&[]), Vec::<isize>::new());
        // An empty axis leaves the others' strides as they would be.
        assert_eq!(row_major_strides(&[0, 5]), vec![5, 1]);
    }

    #[test]
    fn transpose_reads_the_permuted_strides() {
        let r = transpose_region(&[2, 3], &[1, 0]);
        assert_eq!(r.extents, vec![3, 2]);
        assert_eq!(r.src.strides, vec![1, 3]);
        assert_eq!(r.dst.strides, vec![2, 1]);
    }
}
