//! What the cases are made of: dtypes, shapes (small, empty with enormous extents, enormous),
//! element values with the awkward ones over-represented, axes, and the input arrays built
//! from them. Every input a case holds is described by plain data, so a failing case prints as
//! Rust that rebuilds it.

use std::fmt;

use proptest::prelude::*;
use proptest::sample::select;
use rjax::prelude::*;

/// Extents far beyond any memory: each breaks a product in its own way (`2^31` and `2^32` at
/// the 32-bit boundaries, `2^62 + 1` wraps to 4 when multiplied by 4, `usize::MAX / 2` is
/// `isize::MAX`, `usize::MAX` is `-1` when cast to `isize`, `2^63` is `isize::MIN`).
pub const HUGE: [usize; 7] =
    [1 << 31, 1 << 32, (1 << 32) + 3, (1 << 62) + 1, usize::MAX / 2, usize::MAX, 1 << 63];

/// Largest result, in bytes, that a case may produce and still run: valid arrays stay small,
/// so a mistake can never make the suite allocate much.
pub const MAX_RESULT_BYTES: usize = 4 << 20;

pub fn dtype() -> impl Strategy<Value = DType> {
    prop_oneof![
        4 => Just(DType::F32),
        2 => Just(DType::F64),
        2 => Just(DType::I32),
        1 => Just(DType::U32),
        1 => Just(DType::Bool),
    ]
}

pub fn float_dtype() -> impl Strategy<Value = DType> {
    prop_oneof![3 => Just(DType::F32), 1 => Just(DType::F64)]
}

/// Elements of `shape`, or `None` when the product overflows (a 0 extent makes it 0).
pub fn elements(shape: &[usize]) -> Option<usize> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The rule rjax holds shapes to: the product of the extents, a 0 extent counted as 1, times
/// the element size, is at most `isize::MAX` (so every offset into the array, and every
/// partial product of its extents, fits).
pub fn valid_shape(shape: &[usize], dtype: DType) -> bool {
    shape
        .iter()
        .try_fold(dtype.size_of(), |acc, &d| acc.checked_mul(d.max(1)))
        .is_some_and(|bytes| bytes <= isize::MAX as usize)
}

/// Bytes an array of `shape` actually holds (`None` past `usize`).
pub fn bytes(shape: &[usize], dtype: DType) -> Option<usize> {
    elements(shape)?.checked_mul(dtype.size_of())
}

/// A shape of rank `lo..=hi` with extents 0..=4 (0 now and then).
pub fn small_shape(lo: usize, hi: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![1 => Just(0usize), 9 => 1usize..=4], lo..=hi)
}

/// An empty shape that is still valid for every dtype: one extent 0, at most one of the
/// others enormous (`2^31`, `2^32` or `2^40`).
pub fn empty_enormous_shape(lo: usize, hi: usize) -> impl Strategy<Value = Vec<usize>> {
    let lo = lo.max(2);
    (
        prop::collection::vec(0usize..=3, lo..=hi),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        select(vec![1usize << 31, 1 << 32, 1 << 40]),
    )
        .prop_map(|(mut shape, zero, big, extent)| {
            let z = zero.index(shape.len());
            let b = big.index(shape.len());
            for d in shape.iter_mut() {
                *d = (*d).max(1);
            }
            shape[b] = extent;
            shape[z] = 0;
            shape
        })
}

/// Shapes for arrays that exist: mostly small, sometimes empty with an enormous extent.
pub fn input_shape(lo: usize, hi: usize) -> BoxedStrategy<Vec<usize>> {
    if hi < 2 {
        return small_shape(lo, hi).boxed();
    }
    prop_oneof![9 => small_shape(lo, hi), 1 => empty_enormous_shape(lo, hi)].boxed()
}

/// Shapes an op is asked to produce: small ones, empty ones with enormous extents (valid or
/// not), and enormous ones that no array can have.
pub fn target_shape(lo: usize, hi: usize) -> BoxedStrategy<Vec<usize>> {
    let hi = hi.max(1);
    let enormous = prop::collection::vec(
        prop_oneof![2 => select(HUGE.to_vec()), 1 => 0usize..=3],
        lo.max(1)..=hi,
    );
    prop_oneof![6 => small_shape(lo, hi), 2 => enormous, 1 => empty_enormous_shape(lo, hi)].boxed()
}

/// A float that prints as the Rust that makes it (NaN payloads and signs included), so case
/// descriptions are repro code.
#[derive(Clone, Copy, PartialEq)]
pub struct F(pub f64);

impl fmt::Debug for F {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_f64(self.0, f)
    }
}

fn fmt_f64(v: f64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if v.is_nan() {
        write!(f, "f64::from_bits({:#x})", v.to_bits())
    } else if v.is_infinite() {
        f.write_str(if v > 0.0 { "f64::INFINITY" } else { "f64::NEG_INFINITY" })
    } else {
        write!(f, "{v:?}")
    }
}

fn fmt_f32(v: f32, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if v.is_nan() {
        write!(f, "f32::from_bits({:#x})", v.to_bits())
    } else if v.is_infinite() {
        f.write_str(if v > 0.0 { "f32::INFINITY" } else { "f32::NEG_INFINITY" })
    } else {
        write!(f, "{v:?}")
    }
}

/// Floats: ordinary values, special ones (signed zeros, infinities, NaNs with payloads,
/// subnormals, extremes), and arbitrary bit patterns.
pub fn f64_value() -> impl Strategy<Value = f64> {
    let special = select(vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0001),
        f64::from_bits(0x7ff8_0000_dead_beef),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 4.0,
        -f64::from_bits(1),
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        2f64.powi(53) + 1.0,
        1e300,
        -1e-300,
    ]);
    prop_oneof![6 => -4.0f64..4.0, 3 => special, 1 => any::<u64>().prop_map(f64::from_bits)]
}

pub fn f32_value() -> impl Strategy<Value = f32> {
    let special = select(vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0x7fc0_beef),
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::MIN_POSITIVE / 4.0,
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        f32::EPSILON,
        16_777_217.0,
        1e38,
        -1e-38,
    ]);
    prop_oneof![6 => -4.0f32..4.0, 3 => special, 1 => any::<u32>().prop_map(f32::from_bits)]
}

pub fn i32_value() -> impl Strategy<Value = i32> {
    let special = select(vec![i32::MIN, i32::MIN + 1, i32::MAX, -1, 0, 1, 1 << 16, -(1 << 24)]);
    prop_oneof![6 => -5i32..=5, 3 => special, 1 => any::<i32>()]
}

pub fn u32_value() -> impl Strategy<Value = u32> {
    let special = select(vec![0, 1, u32::MAX, u32::MAX - 1, 1 << 31, 1 << 24]);
    prop_oneof![6 => 0u32..=6, 3 => special, 1 => any::<u32>()]
}

/// Integers for the `isize` parameters of ops (axes, positions, steps): mostly near zero.
pub fn isize_param() -> impl Strategy<Value = isize> {
    let extreme = select(vec![
        isize::MIN,
        isize::MIN + 1,
        isize::MAX,
        i32::MIN as isize,
        i32::MAX as isize,
        1 << 32,
        -(1 << 40),
    ]);
    prop_oneof![12 => -6isize..=6, 1 => extreme]
}

/// Axes of an array of rank up to 4: in range, negative, out of range, and extreme.
pub fn axis() -> impl Strategy<Value = isize> {
    prop_oneof![
        10 => -4isize..=3,
        2 => prop_oneof![-9isize..=-5, 4isize..=8],
        1 => select(vec![isize::MIN, isize::MAX, i32::MIN as isize, 1 << 40]),
    ]
}

/// Counts (`usize` parameters): small, or enormous.
pub fn count() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 0usize..=5, 1 => select(HUGE.to_vec())]
}

/// The elements of an input array.
#[derive(Clone, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    Bool(Vec<bool>),
}

impl Data {
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::I32(_) => DType::I32,
            Data::U32(_) => DType::U32,
            Data::Bool(_) => DType::Bool,
        }
    }

    /// The same values in reverse order (a second example of the same shape for `vmap`).
    pub fn reversed(&self) -> Data {
        fn rev<T: Clone>(v: &[T]) -> Vec<T> {
            v.iter().rev().cloned().collect()
        }
        match self {
            Data::F32(v) => Data::F32(rev(v)),
            Data::F64(v) => Data::F64(rev(v)),
            Data::I32(v) => Data::I32(rev(v)),
            Data::U32(v) => Data::U32(rev(v)),
            Data::Bool(v) => Data::Bool(rev(v)),
        }
    }
}

impl fmt::Debug for Data {
    /// `Vec::<f32>::from([1.0, f32::NAN])`: Rust that rebuilds the elements exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list<T>(
            f: &mut fmt::Formatter<'_>,
            ty: &str,
            items: &[T],
            item: fn(&T, &mut fmt::Formatter<'_>) -> fmt::Result,
        ) -> fmt::Result {
            write!(f, "Vec::<{ty}>::from([")?;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                item(v, f)?;
            }
            f.write_str("])")
        }
        match self {
            Data::F32(v) => list(f, "f32", v, |x, f| fmt_f32(*x, f)),
            Data::F64(v) => list(f, "f64", v, |x, f| fmt_f64(*x, f)),
            Data::I32(v) => list(f, "i32", v, |x, f| write!(f, "{x}")),
            Data::U32(v) => list(f, "u32", v, |x, f| write!(f, "{x}")),
            Data::Bool(v) => list(f, "bool", v, |x, f| write!(f, "{x}")),
        }
    }
}

pub fn data(dtype: DType, n: usize) -> BoxedStrategy<Data> {
    use prop::collection::vec;
    match dtype {
        DType::F32 => vec(f32_value(), n).prop_map(Data::F32).boxed(),
        DType::F64 => vec(f64_value(), n).prop_map(Data::F64).boxed(),
        DType::I32 => vec(i32_value(), n).prop_map(Data::I32).boxed(),
        DType::U32 => vec(u32_value(), n).prop_map(Data::U32).boxed(),
        _ => vec(any::<bool>(), n).prop_map(Data::Bool).boxed(),
    }
}

/// An input array: its shape, elements and weak-type flag.
#[derive(Clone, PartialEq)]
pub struct Input {
    pub shape: Vec<usize>,
    pub data: Data,
    pub weak: bool,
}

impl Input {
    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    /// The array (panics, naming `from_shape_vec`, if rjax refuses the shape).
    pub fn build(&self) -> Array {
        let a = match &self.data {
            Data::F32(v) => Array::from_shape_vec(&self.shape, v.clone()),
            Data::F64(v) => Array::from_shape_vec(&self.shape, v.clone()),
            Data::I32(v) => Array::from_shape_vec(&self.shape, v.clone()),
            Data::U32(v) => Array::from_shape_vec(&self.shape, v.clone()),
            Data::Bool(v) => Array::from_shape_vec(&self.shape, v.clone()),
        };
        if self.weak {
            a.with_weak_type(true)
        } else {
            a
        }
    }

    /// Whether the array is small, non-empty and float: what `grad` and `vmap` checks take.
    pub fn is_plain_float(&self) -> bool {
        self.dtype().is_float() && elements(&self.shape).is_some_and(|n| (1..=64).contains(&n))
    }

    /// The same shape and dtype with other values.
    pub fn with_data(&self, data: Data) -> Input {
        Input { data, ..self.clone() }
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Array::from_shape_vec({:?}, {:?})", self.shape, self.data)?;
        if self.weak {
            f.write_str(".with_weak_type(true)")?;
        }
        Ok(())
    }
}

/// Largest input the suite draws, in elements.
const MAX_INPUT: usize = 4096;

/// `shape` made fit for an input: a shape that is invalid or holds more than [`MAX_INPUT`]
/// elements (as the strategies' edits of an empty shape with an enormous extent can make it)
/// becomes empty again, with its enormous extent capped to `2^31` and the others to 4.
fn input_shape_fix(mut shape: Vec<usize>, dtype: DType) -> Vec<usize> {
    if valid_shape(&shape, dtype) && elements(&shape).is_some_and(|n| n <= MAX_INPUT) {
        return shape;
    }
    let big = shape.iter().position(|&d| d > 4).unwrap_or(0);
    for (i, d) in shape.iter_mut().enumerate() {
        *d = if i == big { (*d).min(1 << 31) } else { (*d).min(4) };
    }
    let zero = if big == 0 { shape.len() - 1 } else { 0 };
    shape[zero] = 0;
    shape
}

/// An input of `shape` and `dtype` with drawn elements; weakly typed now and then.
pub fn input_of(shape: Vec<usize>, dtype: DType) -> BoxedStrategy<Input> {
    let shape = input_shape_fix(shape, dtype);
    let n = elements(&shape).expect("a fixed shape is countable");
    let weak_ok = matches!(dtype, DType::F32 | DType::I32);
    (data(dtype, n), prop::bool::weighted(if weak_ok { 0.1 } else { 0.0 }))
        .prop_map(move |(data, weak)| Input { shape: shape.clone(), data, weak })
        .boxed()
}

/// An input with a drawn shape (rank `lo..=hi`) and dtype.
pub fn input(lo: usize, hi: usize) -> BoxedStrategy<Input> {
    (input_shape(lo, hi), dtype()).prop_flat_map(|(s, d)| input_of(s, d)).boxed()
}

/// An input with a small shape (no enormous extents).
pub fn small_input(lo: usize, hi: usize) -> BoxedStrategy<Input> {
    (small_shape(lo, hi), dtype()).prop_flat_map(|(s, d)| input_of(s, d)).boxed()
}

/// Integer index arrays: mostly `int32` (in and out of bounds, negative, extreme), sometimes
/// another dtype that index operations must refuse or convert.
pub fn index_input(lo: usize, hi: usize) -> BoxedStrategy<Input> {
    let dtype =
        prop_oneof![8 => Just(DType::I32), 1 => Just(DType::U32), 1 => Just(DType::F32)].boxed();
    (small_shape(lo, hi), dtype).prop_flat_map(|(s, d)| input_of(s, d)).boxed()
}
