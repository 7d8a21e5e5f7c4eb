//! `dot_general`: the contraction every matrix product is made of (JAX's `lax.dot_general`).

use super::Transpose;
use super::{bind1, describe, expect_arity, tuple, Aval, Primitive};
use crate::array::Array;
use crate::backend::DeviceOp;
use crate::dtype::Element;
use crate::exec::cpu::copy::transpose;
use crate::exec::cpu::matmul::{batched_matmul, matmul_in_place, Layout, MatmulElement};
use crate::transform::ad::ops::{self, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{batched_axis, one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// Contracts `lhs` and `rhs` over paired axes, with paired batch axes. The output holds the
/// batch axes, then `lhs`'s remaining axes, then `rhs`'s remaining axes, in order.
///
/// Complex operands multiply without conjugation, and the transposes do not conjugate either
/// (JAX's convention for linear maps of complex values), so `grad` of a real-valued function
/// of complex operands is JAX's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DotGeneral {
    pub lhs_contract: Vec<usize>,
    pub rhs_contract: Vec<usize>,
    pub lhs_batch: Vec<usize>,
    pub rhs_batch: Vec<usize>,
}

impl DotGeneral {
    /// The axes of an operand of `rank` that are neither batch nor contracted, in order.
    fn free(rank: usize, batch: &[usize], contract: &[usize]) -> Vec<usize> {
        free_axes(rank, batch, contract).collect()
    }

    fn check_axes(&self, lhs: &Aval, rhs: &Aval) -> Result<(), String> {
        let (lr, rr) = (lhs.shape.len(), rhs.shape.len());
        let all_l = self.lhs_batch.iter().chain(&self.lhs_contract);
        let all_r = self.rhs_batch.iter().chain(&self.rhs_contract);
        if all_l.clone().any(|&a| a >= lr) || all_r.clone().any(|&a| a >= rr) {
            return Err(format!(
                "axis out of range in {self:?} for {}",
                describe(&[lhs.clone(), rhs.clone()])
            ));
        }
        let mut seen_l: Vec<usize> = all_l.copied().collect();
        let mut seen_r: Vec<usize> = all_r.copied().collect();
        seen_l.sort_unstable();
        seen_r.sort_unstable();
        if seen_l.windows(2).any(|w| w[0] == w[1]) || seen_r.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("an axis appears twice in {self:?}"));
        }
        if self.lhs_contract.len() != self.rhs_contract.len()
            || self.lhs_batch.len() != self.rhs_batch.len()
        {
            return Err(format!("lhs and rhs must pair the same number of axes, got {self:?}"));
        }
        let pairs = self.lhs_contract.iter().zip(&self.rhs_contract);
        for (&a, &b) in pairs.chain(self.lhs_batch.iter().zip(&self.rhs_batch)) {
            if lhs.shape[a] != rhs.shape[b] {
                return Err(format!(
                    "paired axes differ in size: lhs axis {a} has {} and rhs axis {b} has {}, for {}",
                    lhs.shape[a],
                    rhs.shape[b],
                    describe(&[lhs.clone(), rhs.clone()])
                ));
            }
        }
        Ok(())
    }
}

impl DotGeneral {
    /// The cotangent of the left operand (of shape `lhs`) given the output's cotangent `ct` and
    /// the right operand `rhs`; `swapped` when this is the rule for the right operand with the
    /// operands' roles exchanged (the output then holds `rhs`'s free axes first).
    fn transpose_lhs(&self, ct: &Array, lhs: &[usize], rhs: &Array, swapped: bool) -> Array {
        let lhs_free = Self::free(lhs.len(), &self.lhs_batch, &self.lhs_contract);
        let rhs_free = Self::free(rhs.ndim(), &self.rhs_batch, &self.rhs_contract);
        let nb = self.lhs_batch.len();
        let ct_batch: Vec<usize> = (0..nb).collect();
        // Where the output keeps the right operand's free axes.
        let ct_rhs_free: Vec<usize> = if swapped {
            (nb..nb + rhs_free.len()).collect()
        } else {
            (nb + lhs_free.len()..nb + lhs_free.len() + rhs_free.len()).collect()
        };
        // ct . rhs, contracting the right operand's free axes, gives the batch axes, the left
        // operand's free axes, then its contracted ones in the right operand's axis order.
        let product = DotGeneral {
            lhs_contract: ct_rhs_free,
            rhs_contract: rhs_free,
            lhs_batch: ct_batch,
            rhs_batch: self.rhs_batch.clone(),
        };
        let mut order: Vec<usize> = (0..self.rhs_contract.len()).collect();
        order.sort_by_key(|&i| self.rhs_contract[i]);
        let contracted: Vec<usize> = order.iter().map(|&i| self.lhs_contract[i]).collect();
        // `rhs . ct` gives the contracted axes before the free ones: when that is the left
        // operand's own order (an outer product's cotangent), no transpose is needed.
        let flipped: Vec<usize> = [&self.lhs_batch[..], &contracted, &lhs_free].concat();
        if flipped.iter().enumerate().all(|(i, &a)| i == a) {
            let flipped_product = DotGeneral {
                lhs_contract: product.rhs_contract,
                rhs_contract: product.lhs_contract,
                lhs_batch: product.rhs_batch,
                rhs_batch: product.lhs_batch,
            };
            return bind1(&flipped_product, &[rhs, ct]);
        }
        let raw = bind1(&product, &[ct, rhs]);
        let mut layout: Vec<usize> = self.lhs_batch.clone();
        layout.extend(&lhs_free);
        layout.extend(&contracted);
        // `raw` axis k is lhs axis layout[k]; put them back in order.
        let mut permutation = vec![0; layout.len()];
        for (k, &axis) in layout.iter().enumerate() {
            permutation[axis] = k;
        }
        if permutation.iter().enumerate().all(|(i, &p)| i == p) {
            return raw;
        }
        bind1(&Transpose { permutation }, &[&raw])
    }
}

impl DotGeneral {
    /// The batching rule (see [`Primitive::batch`] below).
    fn batch_operands(&self, args: &[Array], dims: &[BatchDim]) -> Batched {
        let map = |axes: &[usize], d: BatchDim| -> Vec<usize> {
            axes.iter().map(|&a| d.map_or(a, |d| batched_axis(a, d))).collect()
        };
        let (dl, dr) = (dims[0], dims[1]);
        if let (None, Some(_)) = (dl, dr) {
            let rhs_free = Self::free(args[1].ndim() - 1, &self.rhs_batch, &self.rhs_contract);
            if rhs_free.is_empty() {
                // The batched operand has no other free axes: with the operands swapped its
                // batch axis comes right after the batch axes instead of after the left
                // operand's free axes, and the per-example layout is the same.
                let swapped = DotGeneral {
                    lhs_contract: self.rhs_contract.clone(),
                    rhs_contract: self.lhs_contract.clone(),
                    lhs_batch: self.rhs_batch.clone(),
                    rhs_batch: self.lhs_batch.clone(),
                };
                return swapped.batch_operands(&[args[1].clone(), args[0].clone()], &[dr, dl]);
            }
        }
        let mut dot = DotGeneral {
            lhs_contract: map(&self.lhs_contract, dl),
            rhs_contract: map(&self.rhs_contract, dr),
            lhs_batch: map(&self.lhs_batch, dl),
            rhs_batch: map(&self.rhs_batch, dr),
        };
        let nb = dot.lhs_batch.len();
        let (lr, rr) = (args[0].ndim(), args[1].ndim());
        let out_dim = match (dl, dr) {
            (Some(l), Some(r)) => {
                dot.lhs_batch.insert(0, l);
                dot.rhs_batch.insert(0, r);
                0
            }
            (Some(l), None) => {
                let free = Self::free(lr, &dot.lhs_batch, &dot.lhs_contract);
                nb + free.iter().position(|&a| a == l).expect("the batch axis is free")
            }
            (None, Some(r)) => {
                let lhs_free = Self::free(lr, &dot.lhs_batch, &dot.lhs_contract).len();
                let free = Self::free(rr, &dot.rhs_batch, &dot.rhs_contract);
                nb + lhs_free + free.iter().position(|&a| a == r).expect("the batch axis is free")
            }
            (None, None) => unreachable!("batching rules run with a batched operand"),
        };
        one(bind1(&dot, &[&args[0], &args[1]]), Some(out_dim))
    }
}

impl Primitive for DotGeneral {
    /// One batched matrix product: `lhs` read as `[batch, free, contracted]` and `rhs` as
    /// `[batch, contracted, free]` (each axis group in the order the product pairs them), so
    /// the output, `[batch, lhs free, rhs free]`, is `[b, m, n]` row-major as it is.
    fn device_op(&self, inputs: &[Aval]) -> Option<DeviceOp> {
        let (lshape, rshape) = (&inputs[0].shape, &inputs[1].shape);
        let lfree = Self::free(lshape.len(), &self.lhs_batch, &self.lhs_contract);
        let rfree = Self::free(rshape.len(), &self.rhs_batch, &self.rhs_contract);
        let size = |shape: &[usize], axes: &[usize]| extent(shape, axes.iter().copied());
        Some(DeviceOp::Matmul {
            lhs_perm: [&self.lhs_batch[..], &lfree, &self.lhs_contract].concat(),
            rhs_perm: [&self.rhs_batch[..], &self.rhs_contract, &rfree].concat(),
            b: size(lshape, &self.lhs_batch),
            m: size(lshape, &lfree),
            k: size(lshape, &self.lhs_contract),
            n: size(rshape, &rfree),
        })
    }

    /// Both operands batched: their batch axes become a new leading batch pair. One batched:
    /// its batch axis is one more free axis, so the product needs no transposes.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        self.batch_operands(args, dims)
    }

    fn params(&self) -> String {
        format!(
            "dimension_numbers=(({}, {}), ({}, {}))",
            tuple(&self.lhs_contract),
            tuple(&self.rhs_contract),
            tuple(&self.lhs_batch),
            tuple(&self.rhs_batch)
        )
    }

    fn name(&self) -> String {
        "dot_general".to_string()
    }

    /// One per output element and contracted index.
    fn multiply_adds(&self, inputs: &[Aval]) -> Option<usize> {
        let out = self.abstract_eval(inputs).ok()?.pop()?;
        let contracted: usize = self.lhs_contract.iter().map(|&a| inputs[0].shape[a]).product();
        Some(out.shape.iter().product::<usize>().saturating_mul(contracted))
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (lhs, rhs) = (&inputs[0], &inputs[1]);
        if lhs.dtype != rhs.dtype {
            return Err(format!("operands must have the same dtype, got {}", describe(inputs)));
        }
        self.check_axes(lhs, rhs)?;
        let lfree = Self::free(lhs.shape.len(), &self.lhs_batch, &self.lhs_contract);
        let rfree = Self::free(rhs.shape.len(), &self.rhs_batch, &self.rhs_contract);
        let shape = (self.lhs_batch.iter().map(|&a| lhs.shape[a]))
            .chain(lfree.iter().map(|&a| lhs.shape[a]))
            .chain(rfree.iter().map(|&a| rhs.shape[a]))
            .collect();
        Ok(vec![Aval { shape, dtype: lhs.dtype, weak: lhs.weak && rhs.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (lhs, rhs) = (inputs[0], inputs[1]);
        let buffer = crate::with_buffer!(lhs.buffer(), |l: T| {
            let r = rhs.as_slice::<T>().expect("the shape rule checked the dtypes agree");
            T::wrap(self.contract(l, lhs.shape(), r, rhs.shape()))
        });
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (a, b) = (&primals[0], &primals[1]);
        let out = bind1(self, &[a, b]);
        let from_a = tangents[0].as_ref().map(|t| bind1(self, &[t, b]));
        let from_b = tangents[1].as_ref().map(|t| bind1(self, &[a, t]));
        Ok((vec![out], vec![ops::add_tangents(from_a, from_b)]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None, None]) };
        match (args[0].known(), args[1].known()) {
            (None, Some(b)) => {
                Ok(vec![Some(self.transpose_lhs(ct, &args[0].aval().shape, b, false)), None])
            }
            (Some(a), None) => {
                let swapped = DotGeneral {
                    lhs_contract: self.rhs_contract.clone(),
                    rhs_contract: self.lhs_contract.clone(),
                    lhs_batch: self.rhs_batch.clone(),
                    rhs_batch: self.lhs_batch.clone(),
                };
                Ok(vec![None, Some(swapped.transpose_lhs(ct, &args[1].aval().shape, a, true))])
            }
            _ => Err("a product of two differentiated values is not linear".to_string()),
        }
    }
}

/// A contraction that is one matrix product of its operands' buffers as they lie.
struct MatrixProduct {
    /// How each operand holds its matrix.
    layout: [Layout; 2],
    /// `[m, k, n]`: the product is `(m x k) @ (k x n)`.
    dims: [usize; 3],
}

impl DotGeneral {
    /// The contraction of operands of these shapes as one matrix product of their buffers, if
    /// it is one: no batch (or a batch of one), and each operand's free and contracted axes in
    /// memory as a row-major matrix or its transpose. A transposed operand (as reverse mode
    /// makes them) then needs no transpose equation.
    ///
    /// Every product a program runs asks this, so it allocates nothing.
    fn matrix_product(&self, lshape: &[usize], rshape: &[usize]) -> Option<MatrixProduct> {
        if extent(lshape, self.lhs_batch.iter().copied()) != 1 {
            return None;
        }
        let lfree = free_axes(lshape.len(), &self.lhs_batch, &self.lhs_contract);
        let rfree = free_axes(rshape.len(), &self.rhs_batch, &self.rhs_contract);
        let lcontract = self.lhs_contract.iter().copied();
        let rcontract = self.rhs_contract.iter().copied();
        let layout = [
            layout_of(lshape, lfree.clone(), lcontract.clone())?,
            layout_of(rshape, rcontract, rfree.clone())?,
        ];
        let dims = [extent(lshape, lfree), extent(lshape, lcontract), extent(rshape, rfree)];
        Some(MatrixProduct { layout, dims })
    }

    /// Lays `lhs` out as `[batch, free, contract]` and `rhs` as `[batch, contract, free]`
    /// (copying only when the axes are not already in that order), then runs one batched
    /// matrix product.
    fn contract<T: Element + MatmulElement>(
        &self,
        l: &[T],
        lshape: &[usize],
        r: &[T],
        rshape: &[usize],
    ) -> Vec<T> {
        if let Some(product) = self.matrix_product(lshape, rshape) {
            let ([a, b], [m, k, n]) = (product.layout, product.dims);
            if let Some(out) = matmul_in_place(l, r, [a, b], m, k, n) {
                return out;
            }
        }
        let lfree = Self::free(lshape.len(), &self.lhs_batch, &self.lhs_contract);
        let rfree = Self::free(rshape.len(), &self.rhs_batch, &self.rhs_contract);
        let size = |shape: &[usize], axes: &[usize]| extent(shape, axes.iter().copied());
        let batch: usize = size(lshape, &self.lhs_batch);
        let m: usize = size(lshape, &lfree);
        let k: usize = size(lshape, &self.lhs_contract);
        let n: usize = size(rshape, &rfree);
        let lperm: Vec<usize> = [&self.lhs_batch[..], &lfree, &self.lhs_contract].concat();
        let rperm: Vec<usize> = [&self.rhs_batch[..], &self.rhs_contract, &rfree].concat();
        let l = arrange(l, lshape, &lperm);
        let r = arrange(r, rshape, &rperm);
        batched_matmul(&l, &r, batch, m, k, n, m * k, k * n)
    }
}

/// The axes of an operand of `rank` that are neither batch nor contracted, in order.
fn free_axes<'a>(
    rank: usize,
    batch: &'a [usize],
    contract: &'a [usize],
) -> impl Iterator<Item = usize> + Clone + 'a {
    (0..rank).filter(move |a| !batch.contains(a) && !contract.contains(a))
}

/// The number of elements along `axes` of `shape`.
fn extent(shape: &[usize], axes: impl Iterator<Item = usize>) -> usize {
    axes.map(|a| shape[a]).product()
}

/// How an operand whose matrix reads axes `first` as rows and `second` as columns is stored:
/// row-major when its memory order is `first` then `second`, transposed when it is `second`
/// then `first`, `None` otherwise (batch axes of extent 1 and unit axes are ignored).
fn layout_of<I, J>(shape: &[usize], first: I, second: J) -> Option<Layout>
where
    I: Iterator<Item = usize> + Clone,
    J: Iterator<Item = usize> + Clone,
{
    if in_memory_order(shape, first.clone().chain(second.clone())) {
        Some(Layout::RowMajor)
    } else if in_memory_order(shape, second.chain(first)) {
        Some(Layout::Transposed)
    } else {
        None
    }
}

/// Whether reading the axes of a row-major array of `shape` in `order` walks its memory in
/// order: axes of extent 1 can move freely without changing the layout.
fn in_memory_order(shape: &[usize], order: impl Iterator<Item = usize>) -> bool {
    let mut moved = order.filter(|&a| shape[a] != 1);
    let Some(mut last) = moved.next() else { return true };
    moved.all(|a| {
        let in_order = a > last;
        last = a;
        in_order
    })
}

/// [`in_memory_order`] for a permutation.
fn keeps_layout(shape: &[usize], order: &[usize]) -> bool {
    in_memory_order(shape, order.iter().copied())
}

/// `src` with its axes permuted, borrowed when the permutation keeps the layout.
fn arrange<'a, T: Element>(
    src: &'a [T],
    shape: &[usize],
    perm: &[usize],
) -> std::borrow::Cow<'a, [T]> {
    if keeps_layout(shape, perm) {
        std::borrow::Cow::Borrowed(src)
    } else {
        std::borrow::Cow::Owned(transpose(src, shape, perm))
    }
}
