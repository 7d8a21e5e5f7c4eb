//! Random-number primitives: JAX's `threefry2x32` hash, the key operations built on it
//! (`random_bits`, `random_split`, `random_fold_in`), and `random_sample`, JAX's float samplers
//! fused into the hashing pass.
//!
//! Keys appear here as their data, `uint32` arrays of shape `(2,)`; the typed
//! [`Key`](crate::random::Key) is the front end's. Element `i` of every draw hashes the counter
//! `(hi32(i), lo32(i))`, as JAX does with `jax_threefry_partitionable` (its default), so a draw
//! of shape `(3,)` is a prefix of one of shape `(4,)` and any element can be computed alone.

use std::marker::PhantomData;

use super::{describe, expect_arity, Aval, Primitive};
use crate::array::Array;
use crate::backend::DeviceOp;
use crate::dtype::{DType, Element};
use crate::exec::cpu::elementwise::zip;
use crate::exec::cpu::samplers::{
    truncated_normal_range, Bits32, Bits64, BitsNarrow, Exponential, Gumbel, Normal, PerElement,
    Same, SampleFloat, TruncatedNormal, Uniform,
};
use crate::exec::cpu::threefry::{hash_each, map_counters, threefry2x32};
use crate::shape::{broadcast_shapes, size, ShapeDisplay};
use crate::transform::batch::ops::{elementwise, per_lane, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// `threefry2x32(k0, k1, x0, x1) -> (y0, y1)`: the hash, elementwise over four `uint32` operands
/// that broadcast together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Threefry2x32;

impl Primitive for Threefry2x32 {
    /// The hash is elementwise over broadcast operands: a device runs it as it is.
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Threefry2x32)
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        elementwise(self, args, dims)
    }

    fn name(&self) -> String {
        "threefry2x32".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 4)?;
        if inputs.iter().any(|a| a.dtype != DType::U32) {
            return Err(format!("operands must be uint32, got {}", describe(inputs)));
        }
        let shape = inputs[1..]
            .iter()
            .try_fold(inputs[0].shape.clone(), |s, a| broadcast_shapes(&s, &a.shape))
            .ok_or_else(|| format!("shapes do not broadcast together: {}", describe(inputs)))?;
        let out = Aval { shape, dtype: DType::U32, weak: false };
        Ok(vec![out.clone(), out])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let shape = &outputs[0].shape;
        let [k0, k1, x0, x1] = [0, 1, 2, 3].map(|i| broadcast_to::<u32>(inputs[i], shape));
        let (y0, y1) = hash_each(&k0, &k1, &x0, &x1);
        vec![Array::from_shape_vec(shape, y0), Array::from_shape_vec(shape, y1)]
    }
}

/// `random_bits`: uniformly random unsigned integers of `dtype` (8, 16, 32 or 64 bits) and
/// `shape` from one key. 32 bits are `y0 ^ y1`, 64 bits `(y0 << 32) | y1`, 8 and 16 bits the
/// low bits of `y0 ^ y1`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RandomBits {
    /// The shape of the draw.
    pub shape: Vec<usize>,
    /// `U8`, `U16`, `U32` or `U64`.
    pub dtype: DType,
}

impl Primitive for RandomBits {
    /// 32-bit draws hash their counters on the device as `threefry2x32` (see
    /// `on_device`); the other widths have no device kernels yet.
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        (self.dtype == DType::U32).then_some(DeviceOp::Composite)
    }

    /// The kernel takes one key: each example draws from its own.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        per_lane(self, args, dims, axis)
    }

    fn name(&self) -> String {
        format!(
            "random_bits[bit_width={},shape={}]",
            self.dtype.size_of() * 8,
            ShapeDisplay(&self.shape)
        )
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        check_key(&inputs[0])?;
        if !self.dtype.is_unsigned_int() {
            return Err(format!("draws unsigned integers, not {}", self.dtype));
        }
        Ok(vec![Aval { shape: self.shape.clone(), dtype: self.dtype, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], _: &[Aval]) -> Vec<Array> {
        if !inputs[0].device().is_host() {
            let (y0, y1) = on_device::hash_counters(inputs[0], size(&self.shape));
            let bits = super::bind1(&super::BinaryOp::Xor, &[&y0, &y1]);
            return vec![on_device::reshape(&bits, &self.shape)];
        }
        let key = key_words(inputs[0]);
        let n = size(&self.shape);
        let shape = &self.shape;
        let out = match self.dtype {
            DType::U8 => {
                Array::from_shape_vec(shape, map_counters(key, n, &BitsNarrow::<u8>(PhantomData)))
            }
            DType::U16 => {
                Array::from_shape_vec(shape, map_counters(key, n, &BitsNarrow::<u16>(PhantomData)))
            }
            DType::U32 => Array::from_shape_vec(shape, map_counters(key, n, &Bits32)),
            DType::U64 => Array::from_shape_vec(shape, map_counters(key, n, &Bits64)),
            d => unreachable!("{d} is rejected by the shape rule"),
        };
        vec![out]
    }
}

/// `random_split`: the keys of `shape` derived from one key; key `i` (flat index) is the hash
/// `(y0, y1)` of counter `i`. The output is their data, of shape `(*shape, 2)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RandomSplit {
    /// The shape of the key array produced.
    pub shape: Vec<usize>,
}

impl Primitive for RandomSplit {
    /// On a device, the hash of its counters runs there as `threefry2x32` (see
    /// `on_device`).
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Composite)
    }

    /// The kernel takes one key: each example draws from its own.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        per_lane(self, args, dims, axis)
    }

    fn name(&self) -> String {
        format!("random_split[shape={}]", ShapeDisplay(&self.shape))
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        check_key(&inputs[0])?;
        let mut shape = self.shape.clone();
        shape.push(2);
        Ok(vec![Aval { shape, dtype: DType::U32, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        if !inputs[0].device().is_host() {
            let (y0, y1) = on_device::hash_counters(inputs[0], size(&self.shape));
            return vec![on_device::pairs(&y0, &y1, &outputs[0].shape)];
        }
        let key = key_words(inputs[0]);
        let packed = map_counters(key, size(&self.shape), &Bits64);
        let data: Vec<u32> = packed.iter().flat_map(|&w| [(w >> 32) as u32, w as u32]).collect();
        vec![Array::from_shape_vec(&outputs[0].shape, data)]
    }
}

/// `random_fold_in(key, data)`: the key for `data` (a `uint32` scalar), the hash of the counter
/// `(0, data)`; equal to key `data` of a split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RandomFoldIn;

impl Primitive for RandomFoldIn {
    /// On a device, the hash of its counters runs there as `threefry2x32` (see
    /// `on_device`).
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        Some(DeviceOp::Composite)
    }

    /// The kernel takes one key: each example draws from its own.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        per_lane(self, args, dims, axis)
    }

    fn name(&self) -> String {
        "random_fold_in".to_string()
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        check_key(&inputs[0])?;
        let data = &inputs[1];
        if data.dtype != DType::U32 || !data.shape.is_empty() {
            return Err(format!("folds in a uint32 scalar, got {data}"));
        }
        Ok(vec![Aval { shape: vec![2], dtype: DType::U32, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        if !inputs[0].device().is_host() || !inputs[1].device().is_host() {
            let (y0, y1) = on_device::hash(inputs[0], &Array::from(0u32), inputs[1]);
            return vec![on_device::pairs(&y0, &y1, &outputs[0].shape)];
        }
        let key = key_words(inputs[0]);
        let data = inputs[1].as_slice::<u32>().expect("checked by the shape rule")[0];
        vec![Array::from_shape_vec([2], threefry2x32(key, [0, data]).to_vec())]
    }
}

/// Which float sampler [`RandomSample`] runs, and the operands it takes after the key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sampler {
    /// `uniform(key, minval, maxval)`: `max(minval, u * (maxval - minval) + minval)`.
    Uniform,
    /// `normal(key)`: `sqrt(2) * erf_inv(u)`, `u` uniform on `[nextafter(-1, 0), 1)`.
    Normal,
    /// `truncated_normal(key, lower, upper)`.
    TruncatedNormal,
    /// `exponential(key)`: `-log1p(-u)`.
    Exponential,
    /// `gumbel(key)` (JAX's mode `"low"`): `-log(-log(u))`, `u` uniform on `[tiny, 1)`.
    Gumbel,
}

impl Sampler {
    fn op_name(self) -> &'static str {
        match self {
            Sampler::Uniform => "uniform",
            Sampler::Normal => "normal",
            Sampler::TruncatedNormal => "truncated_normal",
            Sampler::Exponential => "exponential",
            Sampler::Gumbel => "gumbel",
        }
    }

    /// Operands after the key: bounds, of the sample dtype, that broadcast to the sample shape.
    fn num_params(self) -> usize {
        match self {
            Sampler::Uniform | Sampler::TruncatedNormal => 2,
            _ => 0,
        }
    }
}

/// `random_sample`: a float sampler of JAX's, from the key's bits to the values in one pass.
///
/// JAX composes these from `random_bits` and elementwise `lax` ops inside one `jit`, which XLA
/// fuses into one loop; this primitive is that loop, with the same arithmetic.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RandomSample {
    /// Which sampler, and so which operands follow the key.
    pub sampler: Sampler,
    /// The shape of the sample.
    pub shape: Vec<usize>,
    /// `F32` or `F64`.
    pub dtype: DType,
}

impl Primitive for RandomSample {
    /// On a device, float32 samples are the host's arithmetic bound op by op where the
    /// operands are (see `on_device::sample`); float64 has no device kernels.
    fn device_op(&self, _inputs: &[Aval]) -> Option<DeviceOp> {
        (self.dtype == DType::F32).then_some(DeviceOp::Composite)
    }

    /// The kernel takes one key: each example draws from its own.
    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        per_lane(self, args, dims, axis)
    }

    fn name(&self) -> String {
        format!(
            "random_sample[{},shape={},dtype={}]",
            self.sampler.op_name(),
            ShapeDisplay(&self.shape),
            self.dtype
        )
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1 + self.sampler.num_params())?;
        check_key(&inputs[0])?;
        if !matches!(self.dtype, DType::F32 | DType::F64) {
            return Err(format!("samples float32 or float64, not {}", self.dtype));
        }
        for p in &inputs[1..] {
            if p.dtype != self.dtype {
                return Err(format!(
                    "bounds must be {}, got {}",
                    self.dtype,
                    describe(&inputs[1..])
                ));
            }
            if broadcast_shapes(&p.shape, &self.shape).as_deref() != Some(&self.shape[..]) {
                return Err(format!(
                    "bounds of shape {} do not broadcast to the sample shape {}",
                    ShapeDisplay(&p.shape),
                    ShapeDisplay(&self.shape)
                ));
            }
        }
        Ok(vec![Aval { shape: self.shape.clone(), dtype: self.dtype, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], _: &[Aval]) -> Vec<Array> {
        if inputs.iter().any(|x| !x.device().is_host()) {
            let (key, bounds) = (inputs[0], &inputs[1..]);
            return vec![on_device::sample(self.sampler, key, bounds, &self.shape)];
        }
        let key = key_words(inputs[0]);
        let out = match self.dtype {
            DType::F32 => Array::from_shape_vec(&self.shape, self.sample::<f32>(key, &inputs[1..])),
            DType::F64 => Array::from_shape_vec(&self.shape, self.sample::<f64>(key, &inputs[1..])),
            d => unreachable!("{d} is rejected by the shape rule"),
        };
        vec![out]
    }
}

impl RandomSample {
    fn sample<T: SampleFloat>(&self, key: [u32; 2], params: &[&Array]) -> Vec<T> {
        let n = size(&self.shape);
        match self.sampler {
            Sampler::Normal => map_counters(key, n, &Normal::<T>(PhantomData)),
            Sampler::Exponential => map_counters(key, n, &Exponential::<T>(PhantomData)),
            Sampler::Gumbel => map_counters(key, n, &Gumbel::<T>(PhantomData)),
            Sampler::Uniform => self.uniform(key, params[0], params[1]),
            Sampler::TruncatedNormal => self.truncated_normal(key, params[0], params[1]),
        }
    }

    fn uniform<T: SampleFloat>(&self, key: [u32; 2], lo: &Array, hi: &Array) -> Vec<T> {
        let n = size(&self.shape);
        if lo.size() == 1 && hi.size() == 1 {
            // The common case gets its own kernel: constant bounds keep the loop vectorized.
            let bounds = Same(scalar::<T>(lo), scalar::<T>(hi));
            return map_counters(key, n, &Uniform(bounds, PhantomData));
        }
        let (lo, hi) = (broadcast_to::<T>(lo, &self.shape), broadcast_to::<T>(hi, &self.shape));
        map_counters(key, n, &Uniform(PerElement(&lo, &hi), PhantomData))
    }

    fn truncated_normal<T: SampleFloat>(
        &self,
        key: [u32; 2],
        lower: &Array,
        upper: &Array,
    ) -> Vec<T> {
        let n = size(&self.shape);
        if lower.size() == 1 && upper.size() == 1 {
            let [a, b, lo, hi] = truncated_normal_range(scalar::<T>(lower), scalar::<T>(upper));
            return map_counters(key, n, &TruncatedNormal(Same(a, b), Same(lo, hi), PhantomData));
        }
        let lower = broadcast_to::<T>(lower, &self.shape);
        let upper = broadcast_to::<T>(upper, &self.shape);
        let ranges: Vec<[T; 4]> =
            lower.iter().zip(&upper).map(|(&l, &u)| truncated_normal_range(l, u)).collect();
        let column = |j: usize| ranges.iter().map(|r| r[j]).collect::<Vec<T>>();
        let (a, b, lo, hi) = (column(0), column(1), column(2), column(3));
        let draw = TruncatedNormal(PerElement(&a, &b), PerElement(&lo, &hi), PhantomData);
        map_counters(key, n, &draw)
    }
}

/// Checks that an operand is one key's data.
fn check_key(key: &Aval) -> Result<(), String> {
    if key.dtype == DType::U32 && key.shape == [2] {
        Ok(())
    } else {
        Err(format!("expected one key's data (uint32 of shape (2,)), got {key}"))
    }
}

/// The two words of a key whose aval passed [`check_key`].
fn key_words(key: &Array) -> [u32; 2] {
    let data = key.as_slice::<u32>().expect("checked by the shape rule");
    [data[0], data[1]]
}

/// The only element of a one-element array of type `T`.
fn scalar<T: Element>(x: &Array) -> T {
    x.as_slice::<T>().expect("checked by the shape rule")[0]
}

/// The elements of `x` (of type `T`) broadcast to `shape` and laid out row-major.
pub(crate) fn broadcast_to<T: Element>(x: &Array, shape: &[usize]) -> Vec<T> {
    let v = x.as_slice::<T>().expect("the caller checked the dtype");
    zip((v, x.shape()), (&[()][..], &[][..]), shape, |a, _| a)
}

/// The key operations on a device: the same hashes as the host kernels, bound as primitives
/// (`threefry2x32` over the counters, then `xor` or an interleaving) so they run where the
/// key is, bit for bit as on the host.
mod on_device {
    use super::super::{
        bind, bind1, BinaryOp, Concatenate, Convert, Iota, Reshape, Slice, UnaryOp,
    };
    use super::{Sampler, Threefry2x32};
    use crate::array::Array;
    use crate::dtype::DType;
    use crate::exec::cpu::samplers::SampleFloat;
    use crate::shape::size;

    /// A float32 draw of `shape` under `key`, by the host kernel's arithmetic (see
    /// `exec/cpu/samplers.rs`) bound op by op. Every step rounds as the host's does except
    /// the multiply-add of the affine map, which the host fuses and this does not: the
    /// standard samplers' maps are exact either way (their `hi - lo` is 1 or 2), so only
    /// `uniform` and `truncated_normal` with other bounds can differ, by an ulp.
    pub(super) fn sample(
        sampler: Sampler,
        key: &Array,
        bounds: &[&Array],
        shape: &[usize],
    ) -> Array {
        let unit = reshape(&unit_f32(key, size(shape)), shape);
        let c = |x: f32| Array::from_shape_vec([], vec![x]);
        let sqrt2 = c(f32::SQRT2);
        match sampler {
            Sampler::Uniform => affine(&unit, bounds[0], bounds[1]),
            Sampler::Normal => {
                let u = affine(&unit, &c(f32::NEG_ONE_UP), &c(1.0));
                binary(BinaryOp::Mul, &sqrt2, &unary(UnaryOp::ErfInv, &u))
            }
            Sampler::Exponential => {
                let u = affine(&unit, &c(0.0), &c(1.0));
                unary(UnaryOp::Neg, &unary(UnaryOp::Log1p, &unary(UnaryOp::Neg, &u)))
            }
            Sampler::Gumbel => {
                let u = affine(&unit, &c(f32::TINY), &c(1.0));
                let inner = unary(UnaryOp::Neg, &unary(UnaryOp::Log, &u));
                unary(UnaryOp::Neg, &unary(UnaryOp::Log, &inner))
            }
            Sampler::TruncatedNormal => {
                // `truncated_normal_range`, elementwise: the erf bounds and the open interval.
                let erf_of = |x: &Array| unary(UnaryOp::Erf, &binary(BinaryOp::Div, x, &sqrt2));
                let next = |x: &Array, to: f32| binary(BinaryOp::NextAfter, x, &c(to));
                let (a, b) = (erf_of(bounds[0]), erf_of(bounds[1]));
                let (lo, hi) = (next(bounds[0], f32::INFINITY), next(bounds[1], f32::NEG_INFINITY));
                let u = affine(&unit, &a, &b);
                let normal = binary(BinaryOp::Mul, &sqrt2, &unary(UnaryOp::ErfInv, &u));
                binary(BinaryOp::Min, &hi, &binary(BinaryOp::Max, &lo, &normal))
            }
        }
    }

    /// `[0, 1)` from 32 random bits, as `f32::unit`: the top 23 bits over 2^23. (The host
    /// sets them as the mantissa of `[1, 2)` and subtracts 1; both are exact, so they agree.)
    fn unit_f32(key: &Array, n: usize) -> Array {
        let (y0, y1) = hash_counters(key, n);
        let bits = binary(BinaryOp::Xor, &y0, &y1);
        let mantissa = binary(BinaryOp::Div, &bits, &Array::from_shape_vec([], vec![512u32]));
        let float = bind1(&Convert { dtype: DType::F32, weak: false }, &[&mantissa]);
        binary(BinaryOp::Mul, &float, &Array::from_shape_vec([], vec![2f32.powi(-23)]))
    }

    /// JAX's `_uniform` map: `max(lo, u * (hi - lo) + lo)`.
    fn affine(u: &Array, lo: &Array, hi: &Array) -> Array {
        let scaled = binary(BinaryOp::Mul, u, &binary(BinaryOp::Sub, hi, lo));
        binary(BinaryOp::Max, lo, &binary(BinaryOp::Add, &scaled, lo))
    }

    fn unary(op: UnaryOp, x: &Array) -> Array {
        bind1(&op, &[x])
    }

    fn binary(op: BinaryOp, x: &Array, y: &Array) -> Array {
        bind1(&op, &[x, y])
    }

    /// `x` under `shape`.
    pub(super) fn reshape(x: &Array, shape: &[usize]) -> Array {
        bind1(&Reshape { new_sizes: shape.to_vec() }, &[x])
    }

    /// `(y0, y1)`: the hash of `(x0, x1)` under `key`'s two words.
    pub(super) fn hash(key: &Array, x0: &Array, x1: &Array) -> (Array, Array) {
        let word = |i: usize| {
            let s = Slice { start_indices: vec![i], limit_indices: vec![i + 1], strides: vec![1] };
            reshape(&bind1(&s, &[key]), &[])
        };
        let mut out = bind(&Threefry2x32, &[&word(0), &word(1), x0, x1]);
        let y1 = out.pop().expect("threefry2x32 has two outputs");
        (out.pop().expect("threefry2x32 has two outputs"), y1)
    }

    /// The hashes of the counters `(hi32(i), lo32(i))` for `i` in `0..n`.
    ///
    /// # Panics
    /// When `n` passes `u32::MAX`, which no device binding holds.
    pub(super) fn hash_counters(key: &Array, n: usize) -> (Array, Array) {
        assert!(
            u32::try_from(n).is_ok(),
            "random draws of {n} elements on a device: at most 2^32 - 1 per draw"
        );
        let low = bind1(&Iota { dtype: DType::U32, shape: vec![n], dimension: 0 }, &[]);
        hash(key, &Array::from(0u32), &low)
    }

    /// Keys from hashes: `[y0[i], y1[i]]` for each `i`, under `shape` (whose last axis is 2).
    pub(super) fn pairs(y0: &Array, y1: &Array, shape: &[usize]) -> Array {
        let n = y0.size();
        let (a, b) = (reshape(y0, &[n, 1]), reshape(y1, &[n, 1]));
        reshape(&bind1(&Concatenate { dimension: 1 }, &[&a, &b]), shape)
    }
}
