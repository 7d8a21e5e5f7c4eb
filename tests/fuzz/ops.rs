//! The operations under test: one [`Op`] value per call, with its parameters as plain data,
//! how to draw it (with its inputs), how to run it on arrays, the names its error messages may
//! use, and what its result's shape must be where that is simple to say.

use proptest::prelude::*;
use proptest::sample::select;
use rjax::jnp::{IndexMode, Sections, TensordotAxes};
use rjax::lax::{ConvOptions, Padding};
use rjax::prelude::*;
use rjax::primitives as p;

use crate::draw::{self, elements, valid_shape, Input, F, HUGE};

/// One call of the public API: the operation and its input arrays.
#[derive(Clone)]
pub struct Case {
    pub op: Op,
    pub inputs: Vec<Input>,
}

impl std::fmt::Debug for Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} on [", self.op)?;
        for (i, x) in self.inputs.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{x:?}")?;
        }
        f.write_str("]")
    }
}

/// Axes arguments of reductions: the all-axes function (`jnp::sum(&x)`), `Axes::All`, or a
/// list, written with `isize`s or with `usize`s (as axes computed from lengths are).
#[derive(Clone, Debug)]
pub enum AxesArg {
    Full,
    All,
    List(Vec<isize>),
    Usizes(Vec<usize>),
}

impl AxesArg {
    fn axes(&self) -> Axes {
        match self {
            AxesArg::Full | AxesArg::All => Axes::All,
            AxesArg::List(l) => Axes::from(l.clone()),
            AxesArg::Usizes(l) => Axes::from(l.clone()),
        }
    }
}

/// One entry of an index expression; `Array(k)` is input `k`.
#[derive(Clone, Debug)]
pub enum Index {
    At(isize),
    /// A position written as a `usize` (`s![i]` for `i: usize`).
    AtUsize(usize),
    Range(Option<isize>, Option<isize>, isize),
    NewAxis,
    Ellipsis,
    Array(usize),
}

impl Index {
    fn elem(&self, xs: &[Array]) -> SliceElem {
        match *self {
            Index::At(i) => SliceElem::Index(i),
            Index::AtUsize(i) => SliceElem::from(i),
            Index::Range(start, end, step) => SliceElem::Range { start, end, step },
            Index::NewAxis => SliceElem::NewAxis,
            Index::Ellipsis => SliceElem::Ellipsis,
            Index::Array(k) => SliceElem::Array(xs[k].clone()),
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub enum Update {
    Set,
    Add,
    Mul,
    Min,
    Max,
}

#[derive(Clone, Debug)]
pub enum ConvPadding {
    Named(&'static str),
    Explicit(Vec<(i64, i64)>),
}

/// The arguments of `lax::conv_general_dilated` besides the operands.
#[derive(Clone, Debug)]
pub struct Conv {
    pub strides: Vec<usize>,
    pub padding: ConvPadding,
    pub lhs_dilation: Option<Vec<usize>>,
    pub rhs_dilation: Option<Vec<usize>>,
    pub numbers: Option<(&'static str, &'static str, &'static str)>,
    pub feature_groups: usize,
    pub batch_groups: usize,
}

/// The `random` functions; input 0 is the key's data, input 1 (where used) an array operand.
#[derive(Clone, Debug)]
pub enum Sampler {
    Normal(Vec<usize>, DType),
    Uniform(Vec<usize>, DType),
    UniformRange(Vec<usize>, F, F),
    Randint(Vec<usize>, i64, i64, DType),
    Bernoulli(F, Vec<usize>),
    BernoulliArray(Vec<usize>),
    Categorical(isize),
    CategoricalShape(isize, Vec<usize>),
    Permutation(usize),
    PermutationArray(isize, bool),
    Choice(usize, Vec<usize>, bool),
    Split(usize),
    FoldIn(u32),
    Bits(Vec<usize>),
    TruncatedNormal(F, F, Vec<usize>),
    Gumbel(Vec<usize>),
    Exponential(Vec<usize>),
}

impl Sampler {
    fn name(&self) -> &'static str {
        match self {
            Sampler::Normal(..) => "normal",
            Sampler::Uniform(..) | Sampler::UniformRange(..) => "uniform",
            Sampler::Randint(..) => "randint",
            Sampler::Bernoulli(..) | Sampler::BernoulliArray(..) => "bernoulli",
            Sampler::Categorical(..) | Sampler::CategoricalShape(..) => "categorical",
            Sampler::Permutation(..) | Sampler::PermutationArray(..) => "permutation",
            Sampler::Choice(..) => "choice",
            Sampler::Split(..) => "split",
            Sampler::FoldIn(..) => "fold_in",
            Sampler::Bits(..) => "bits",
            Sampler::TruncatedNormal(..) => "truncated_normal",
            Sampler::Gumbel(..) => "gumbel",
            Sampler::Exponential(..) => "exponential",
        }
    }

    fn shape(&self) -> Option<&[usize]> {
        match self {
            Sampler::Normal(s, _)
            | Sampler::Uniform(s, _)
            | Sampler::UniformRange(s, ..)
            | Sampler::Randint(s, ..)
            | Sampler::Bernoulli(_, s)
            | Sampler::Bits(s)
            | Sampler::TruncatedNormal(_, _, s)
            | Sampler::Gumbel(s)
            | Sampler::Exponential(s) => Some(s),
            _ => None,
        }
    }
}

/// Primitives bound directly with `rjax::primitives::bind`, where no `jnp` check stands
/// between the parameters and the shape rule.
#[derive(Clone, Debug)]
pub enum Prim {
    Reshape(Vec<usize>),
    BroadcastInDim(Vec<usize>, Vec<usize>),
    Transpose(Vec<usize>),
    Slice(Vec<usize>, Vec<usize>, Vec<usize>),
    Pad(Vec<i64>, Vec<i64>, Vec<usize>),
    Iota(DType, Vec<usize>, usize),
    Concatenate(usize),
    Rev(Vec<usize>),
    Reduce(p::ReduceOp, Vec<usize>),
    ArgReduce(p::ArgOp, usize),
    Cumulative(p::CumOp, usize, bool),
    Gather(usize, bool),
    Scatter(usize, p::ScatterOp, bool),
    DotGeneral(Vec<usize>, Vec<usize>, Vec<usize>, Vec<usize>),
    Convert(DType, bool),
}

impl Prim {
    fn primitive(&self) -> Box<dyn p::Primitive> {
        let mode = |clip: bool| if clip { IndexMode::Clip } else { IndexMode::FillOrDrop };
        match self.clone() {
            Prim::Reshape(new_sizes) => Box::new(p::Reshape { new_sizes }),
            Prim::BroadcastInDim(shape, broadcast_dimensions) => {
                Box::new(p::BroadcastInDim { shape, broadcast_dimensions })
            }
            Prim::Transpose(permutation) => Box::new(p::Transpose { permutation }),
            Prim::Slice(start_indices, limit_indices, strides) => {
                Box::new(p::Slice { start_indices, limit_indices, strides })
            }
            Prim::Pad(low, high, interior) => Box::new(p::Pad { low, high, interior }),
            Prim::Iota(dtype, shape, dimension) => Box::new(p::Iota { dtype, shape, dimension }),
            Prim::Concatenate(dimension) => Box::new(p::Concatenate { dimension }),
            Prim::Rev(dimensions) => Box::new(p::Rev { dimensions }),
            Prim::Reduce(op, axes) => Box::new(p::Reduce { op, axes }),
            Prim::ArgReduce(op, axis) => Box::new(p::ArgReduce { op, axis }),
            Prim::Cumulative(op, axis, reverse) => Box::new(p::Cumulative { op, axis, reverse }),
            Prim::Gather(axis, clip) => Box::new(p::Gather { axis, mode: mode(clip) }),
            Prim::Scatter(axis, op, clip) => Box::new(p::Scatter { axis, op, mode: mode(clip) }),
            Prim::DotGeneral(lhs_contract, rhs_contract, lhs_batch, rhs_batch) => {
                Box::new(p::DotGeneral { lhs_contract, rhs_contract, lhs_batch, rhs_batch })
            }
            Prim::Convert(dtype, weak) => Box::new(p::Convert { dtype, weak }),
        }
    }
}

/// One operation of the public API with its non-array arguments.
#[derive(Clone, Debug)]
pub enum Op {
    // Creation (no inputs, except `FullLike`).
    Zeros(Vec<usize>),
    Ones(Vec<usize>),
    FullDtype(Vec<usize>, F, DType),
    Eye(usize),
    EyeDtype(usize, usize, isize, DType),
    Arange(i64),
    ArangeFloat(F),
    ArangeStep(F, F, F, DType),
    Linspace(F, F, usize),
    /// `Array::from_shape_vec(shape, vec![0.0f32; len])`.
    FromShapeVec(Vec<usize>, usize),
    /// `Array::try_from_shape_vec(shape, vec![0.0f32; len])`: never panics.
    TryFromShapeVec(Vec<usize>, usize),
    FullLike(F),
    // Shapes.
    Reshape(Vec<isize>),
    ReshapeUsize(Vec<usize>),
    BroadcastTo(Vec<usize>),
    Transpose(Option<Vec<isize>>),
    Swapaxes(isize, isize),
    Moveaxis(Vec<isize>, Vec<isize>),
    ExpandDims(Vec<isize>),
    Squeeze(Option<Vec<isize>>),
    Flip(Option<Vec<isize>>),
    Tile(Vec<usize>),
    Repeat(usize, Option<isize>),
    Pad(Vec<(usize, usize)>, F),
    Concatenate(isize),
    Stack(isize),
    SplitEqual(usize, isize),
    SplitAt(Vec<isize>, isize),
    Ravel,
    Astype(DType),
    // Indexing: input 0 is the array, input 1 the index array, input 2 (for `At` without a
    // scalar) the values.
    Slice(Vec<Index>),
    At(Vec<Index>, Update, Option<F>),
    Take(Option<isize>, bool),
    TakeAlongAxis(isize),
    OneHot(usize),
    // Elementwise.
    Unary(&'static str),
    Powi(i32),
    Clip(F, F),
    Binary(&'static str),
    /// A binary op with a Rust `usize` as its right operand (a weakly typed integer).
    BinaryUsize(&'static str, usize),
    Where,
    // Reductions.
    Reduce(&'static str, AxesArg, bool),
    VarDdof(AxesArg, bool, usize),
    Arg(&'static str, Option<isize>, bool),
    Cumulative(&'static str, Option<isize>),
    Softmax(&'static str, AxesArg),
    // Sorting and order statistics: the function, its axis (`None`: flattened, or all axes),
    // a flag (`descending`, `keepdims` or `side=right`) and a count (`k`, `n` or `size`).
    Order(&'static str, Option<isize>, bool, usize),
    // Products.
    Dot,
    Matmul,
    Einsum(&'static str),
    Tensordot(usize),
    Outer,
    // Convolution.
    Conv(Conv),
    // Random numbers.
    Random(Sampler),
    // Primitives.
    Prim(Prim),
}

pub const UNARY: [&str; 35] = [
    "negative",
    "abs",
    "sign",
    "square",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "cbrt",
    "reciprocal",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "sigmoid",
    "softplus",
    "erf",
    "erfinv",
    "floor",
    "ceil",
    "round",
    "isnan",
    "isfinite",
    "logical_not",
];

pub const BINARY: [&str; 24] = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "pow",
    "maximum",
    "minimum",
    "atan2",
    "floor_divide",
    "remainder",
    "fmod",
    "trunc_divide",
    "logaddexp",
    "nextafter",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "%",
];

pub const REDUCTIONS: [&str; 10] =
    ["sum", "prod", "max", "min", "mean", "var", "std", "logsumexp", "all", "any"];

/// Einsum specifications with the extents of their operands in terms of `m, k, n, b`
/// (`i = m`, `j = k`, `k = n`, `b = b`, `l = 2`), malformed ones included.
const EINSUM: [&str; 22] = [
    "ij,jk->ik",
    "ij,jk",
    "bij,bjk->bik",
    "ij,kj->ik",
    "ii->i",
    "ii",
    "i,i->",
    "i,j->ij",
    "ij->",
    "ij->ji",
    "ij->j",
    "...ij,jk->...ik",
    "ij,jk->ikk",
    "ij,jk->iz",
    "ij,jk,kl->il",
    "",
    "->",
    "ij->i->j",
    "i.j,jk",
    "ij,jk->ik,",
    "IJ,JK->IK",
    "ij,jk->",
];

impl Op {
    /// Runs the operation on `xs` (the case's inputs, built): the same code runs eagerly and
    /// inside `#[jit]`, where the inputs are traced.
    pub fn apply(&self, xs: &[Array]) -> Vec<Array> {
        let x = || &xs[0];
        let one = |a: Array| vec![a];
        match self {
            Op::Zeros(s) => one(jnp::zeros(s)),
            Op::Ones(s) => one(jnp::ones(s)),
            Op::FullDtype(s, v, d) => one(jnp::full_dtype(s, v.0, *d)),
            Op::Eye(n) => one(jnp::eye(*n)),
            Op::EyeDtype(n, m, k, d) => one(jnp::eye_dtype(*n, *m, *k, *d)),
            Op::Arange(stop) => one(jnp::arange(*stop)),
            Op::ArangeFloat(stop) => one(jnp::arange(stop.0)),
            Op::ArangeStep(a, b, s, d) => one(jnp::arange_step(a.0, b.0, s.0, *d)),
            Op::Linspace(a, b, n) => one(jnp::linspace(a.0, b.0, *n)),
            Op::FromShapeVec(s, len) => one(Array::from_shape_vec(s, vec![0.0f32; *len])),
            Op::TryFromShapeVec(s, len) => {
                Array::try_from_shape_vec(s, vec![0.0f32; *len]).into_iter().collect()
            }
            Op::FullLike(v) => one(jnp::full_like(x(), v.0)),

            Op::Reshape(d) => one(jnp::reshape(x(), d.clone())),
            Op::ReshapeUsize(d) => one(x().reshape(d.clone())),
            Op::BroadcastTo(s) => one(jnp::broadcast_to(x(), s)),
            Op::Transpose(a) => one(jnp::transpose(x(), a.as_deref())),
            Op::Swapaxes(a, b) => one(jnp::swapaxes(x(), *a, *b)),
            Op::Moveaxis(s, d) => one(jnp::moveaxis(x(), s.clone(), d.clone())),
            Op::ExpandDims(a) => one(jnp::expand_dims(x(), a.clone())),
            Op::Squeeze(None) => one(jnp::squeeze(x(), Axes::All)),
            Op::Squeeze(Some(a)) => one(jnp::squeeze(x(), a.clone())),
            Op::Flip(None) => one(jnp::flip(x(), Axes::All)),
            Op::Flip(Some(a)) => one(jnp::flip(x(), a.clone())),
            Op::Tile(r) => one(jnp::tile(x(), r)),
            Op::Repeat(n, a) => one(jnp::repeat(x(), *n, *a)),
            Op::Pad(w, v) => one(jnp::pad(x(), w.clone(), v.0)),
            Op::Concatenate(a) => one(jnp::concatenate(xs, *a)),
            Op::Stack(a) => one(jnp::stack(xs, *a)),
            Op::SplitEqual(k, a) => jnp::split(x(), Sections::Equal(*k), *a),
            Op::SplitAt(at, a) => jnp::split(x(), Sections::At(at.clone()), *a),
            Op::Ravel => one(x().ravel()),
            Op::Astype(d) => one(x().astype(*d)),

            Op::Slice(index) => {
                one(x().slice(index.iter().map(|i| i.elem(xs)).collect::<Vec<_>>()))
            }
            Op::At(index, update, value) => {
                let index: Vec<SliceElem> = index.iter().map(|i| i.elem(xs)).collect();
                let at = x().at(index);
                let value = match value {
                    Some(v) => Array::weak_scalar(v.0),
                    None => xs[2].clone(),
                };
                one(match update {
                    Update::Set => at.set(value),
                    Update::Add => at.add(value),
                    Update::Mul => at.mul(value),
                    Update::Min => at.min(value),
                    Update::Max => at.max(value),
                })
            }
            Op::Take(axis, false) => one(jnp::take(x(), &xs[1], *axis)),
            Op::Take(axis, true) => one(jnp::take_mode(x(), &xs[1], *axis, IndexMode::Clip)),
            Op::TakeAlongAxis(axis) => one(jnp::take_along_axis(x(), &xs[1], *axis)),
            Op::OneHot(n) => one(jnp::one_hot(&xs[1], *n)),

            Op::Unary(name) => one(unary(name, x())),
            Op::Powi(n) => one(x().powi(*n)),
            Op::Clip(lo, hi) => one(jnp::clip(x(), lo.0, hi.0)),
            Op::Binary(name) => one(binary(name, x(), &xs[1])),
            Op::BinaryUsize(name, n) => one(match *name {
                "add" => jnp::add(x(), *n),
                "multiply" => jnp::multiply(x(), *n),
                "maximum" => jnp::maximum(x(), *n),
                _ => jnp::less(x(), *n),
            }),
            Op::Where => one(jnp::where_(x(), &xs[1], &xs[2])),

            Op::Reduce(name, axes, keepdims) => one(reduce(name, x(), axes, *keepdims)),
            Op::VarDdof(axes, keepdims, ddof) => {
                one(jnp::var_ddof(x(), axes.axes(), *keepdims, *ddof))
            }
            Op::Arg(name, axis, keepdims) => one(match (*name, axis) {
                ("argmax", None) => jnp::argmax(x()),
                ("argmin", None) => jnp::argmin(x()),
                ("argmax", Some(a)) => jnp::argmax_axis(x(), *a, *keepdims),
                (_, Some(a)) => jnp::argmin_axis(x(), *a, *keepdims),
                _ => unreachable!("argmax or argmin"),
            }),
            Op::Cumulative(name, axis) => one(match *name {
                "cumsum" => jnp::cumsum(x(), *axis),
                "cumprod" => jnp::cumprod(x(), *axis),
                "cummax" => jnp::cummax(x(), *axis),
                _ => jnp::cummin(x(), *axis),
            }),
            Op::Softmax(name, axes) => one(match *name {
                "softmax" => jnp::softmax(x(), axes.axes()),
                _ => jnp::log_softmax(x(), axes.axes()),
            }),
            Op::Order(name, axis, flag, count) => order(name, x(), *axis, *flag, *count),

            Op::Dot => one(jnp::dot(x(), &xs[1])),
            Op::Matmul => one(x().matmul(&xs[1])),
            Op::Einsum(spec) => one(jnp::einsum(spec, &xs.iter().collect::<Vec<_>>())),
            Op::Tensordot(n) => one(jnp::tensordot(x(), &xs[1], TensordotAxes::Count(*n))),
            Op::Outer => one(jnp::outer(x(), &xs[1])),

            Op::Conv(c) => {
                let mut options = ConvOptions::default()
                    .feature_group_count(c.feature_groups)
                    .batch_group_count(c.batch_groups);
                if let Some(d) = &c.lhs_dilation {
                    options = options.lhs_dilation(d);
                }
                if let Some(d) = &c.rhs_dilation {
                    options = options.rhs_dilation(d);
                }
                if let Some(numbers) = c.numbers {
                    options = options.dimension_numbers(numbers);
                }
                let padding = match &c.padding {
                    ConvPadding::Named(name) => Padding::from(*name),
                    ConvPadding::Explicit(pairs) => Padding::Explicit(pairs.clone()),
                };
                one(lax::conv_general_dilated(x(), &xs[1], &c.strides, padding, options))
            }

            Op::Random(s) => {
                let key = random::wrap_key_data(x());
                one(match s {
                    Sampler::Normal(shape, d) => random::normal_dtype(&key, shape, *d),
                    Sampler::Uniform(shape, d) => random::uniform_dtype(&key, shape, *d),
                    Sampler::UniformRange(shape, lo, hi) => {
                        random::uniform_range(&key, shape, lo.0, hi.0)
                    }
                    Sampler::Randint(shape, lo, hi, d) => {
                        random::randint_dtype(&key, shape, *lo, *hi, *d)
                    }
                    Sampler::Bernoulli(p, shape) => random::bernoulli(&key, p.0, shape),
                    Sampler::BernoulliArray(shape) => random::bernoulli(&key, &xs[1], shape),
                    Sampler::Categorical(axis) => random::categorical(&key, &xs[1], *axis),
                    Sampler::CategoricalShape(axis, shape) => {
                        random::categorical_shape(&key, &xs[1], *axis, shape)
                    }
                    Sampler::Permutation(n) => random::permutation(&key, *n),
                    Sampler::PermutationArray(axis, independent) => {
                        random::permutation_array(&key, &xs[1], *axis, *independent)
                    }
                    Sampler::Choice(n, shape, replace) => random::choice(&key, *n, shape, *replace),
                    Sampler::Split(n) => random::key_data(&random::split(&key, *n)),
                    Sampler::FoldIn(d) => random::key_data(&random::fold_in(&key, *d)),
                    Sampler::Bits(shape) => random::bits(&key, shape),
                    Sampler::TruncatedNormal(lo, hi, shape) => {
                        random::truncated_normal(&key, lo.0, hi.0, shape)
                    }
                    Sampler::Gumbel(shape) => random::gumbel(&key, shape),
                    Sampler::Exponential(shape) => random::exponential(&key, shape),
                })
            }

            Op::Prim(prim) => p::bind(&*prim.primitive(), &xs.iter().collect::<Vec<_>>()),
        }
    }

    /// The names a refusal may give for the operation: the function called and the primitives
    /// it binds. A panic that names none of them does not say what went wrong where.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = match self {
            Op::Zeros(_) => vec!["zeros"],
            Op::Ones(_) => vec!["ones"],
            Op::FullDtype(..) => vec!["full"],
            Op::Eye(_) | Op::EyeDtype(..) => vec!["eye"],
            Op::Arange(_) | Op::ArangeFloat(_) | Op::ArangeStep(..) => vec!["arange"],
            Op::Linspace(..) => vec!["linspace"],
            Op::FromShapeVec(..) | Op::TryFromShapeVec(..) => vec!["from_shape_vec"],
            Op::FullLike(_) => vec!["full_like"],
            Op::Reshape(_) | Op::ReshapeUsize(_) => vec!["reshape"],
            Op::BroadcastTo(_) => vec!["broadcast_to", "broadcast_in_dim"],
            Op::Transpose(_) => vec!["transpose"],
            Op::Swapaxes(..) => vec!["swapaxes"],
            Op::Moveaxis(..) => vec!["moveaxis"],
            Op::ExpandDims(_) => vec!["expand_dims"],
            Op::Squeeze(_) => vec!["squeeze"],
            Op::Flip(_) => vec!["flip", "rev"],
            Op::Tile(_) => vec!["tile", "broadcast_in_dim"],
            Op::Repeat(..) => vec!["repeat", "broadcast_in_dim"],
            Op::Pad(..) => vec!["pad"],
            Op::Concatenate(_) => vec!["concatenate"],
            Op::Stack(_) => vec!["stack", "concatenate"],
            Op::SplitEqual(..) | Op::SplitAt(..) => vec!["split", "slice"],
            Op::Ravel => vec!["ravel", "reshape"],
            Op::Astype(_) => vec!["astype", "convert_element_type"],
            Op::Slice(_) => vec!["slice", "gather"],
            Op::At(..) => vec!["at", "scatter", "gather", "slice"],
            Op::Take(..) => vec!["take", "gather"],
            Op::TakeAlongAxis(_) => vec!["take_along_axis", "gather"],
            Op::OneHot(_) => vec!["one_hot", "iota"],
            Op::Unary(name) => vec![name, primitive_of_unary(name)],
            Op::Powi(_) => vec!["powi", "integer_pow"],
            Op::Clip(..) => vec!["clip", "max", "min"],
            // `floor_divide` binds `div` and `rem`, `logaddexp` starts with a `max`.
            Op::Binary("floor_divide") => vec!["floor_divide", "div", "rem"],
            Op::Binary("logaddexp") => vec!["logaddexp", "max"],
            Op::Binary(name) | Op::BinaryUsize(name, _) => vec![name, primitive_of_binary(name)],
            Op::Where => vec!["where", "select"],
            Op::Reduce(name, ..) => vec![name, primitive_of_reduction(name)],
            Op::VarDdof(..) => vec!["var", "reduce_sum"],
            Op::Arg(name, ..) => vec![name],
            Op::Cumulative(name, _) => vec![name],
            Op::Softmax(name, _) => vec![name],
            Op::Order("argsort", ..) => vec!["argsort", "sort"],
            Op::Order("searchsorted", ..) => vec!["searchsorted", "sort"],
            Op::Order(name, ..) => vec![name, "sort"],
            Op::Dot => vec!["dot", "dot_general"],
            Op::Matmul => vec!["matmul", "dot_general"],
            Op::Einsum(_) => vec!["einsum", "dot_general"],
            Op::Tensordot(_) => vec!["tensordot", "dot_general"],
            Op::Outer => vec!["outer", "dot_general"],
            Op::Conv(_) => vec!["conv_general_dilated"],
            Op::Random(s) => vec![s.name(), "wrap_key_data"],
            Op::Prim(prim) => return vec![prim_name(prim)],
        };
        names.retain(|n| !n.is_empty());
        names
    }

    /// What the (single) result must be, where the arguments alone say: its shape, or no
    /// result at all when the shape they ask for cannot exist. A result of another shape is
    /// wrong however it came about (a wrapped count, a truncated or reinterpreted argument).
    pub fn expected(&self, inputs: &[Input]) -> Option<Expect> {
        let x = || inputs[0].shape.clone();
        let shape = |s: &[usize]| Some(Expect::Shape(s.to_vec()));
        match self {
            Op::Zeros(s) | Op::Ones(s) | Op::FullDtype(s, ..) => shape(s),
            Op::Eye(n) => shape(&[*n, *n]),
            Op::EyeDtype(n, m, ..) => shape(&[*n, *m]),
            Op::Linspace(_, _, n) => shape(&[*n]),
            Op::FromShapeVec(s, _) | Op::TryFromShapeVec(s, _) => shape(s),
            Op::FullLike(_) | Op::Unary(_) | Op::Powi(_) | Op::Clip(..) | Op::Astype(_) => {
                shape(&x())
            }
            Op::ReshapeUsize(s) | Op::BroadcastTo(s) => shape(s),
            Op::Reshape(dims) => Some(reshaped(&x(), dims)),
            Op::Ravel => elements(&x()).and_then(|n| shape(&[n])),
            Op::Tile(reps) => Some(tiled(&x(), reps)),
            Op::Repeat(n, axis) => repeated(&x(), *n, *axis),
            Op::Pad(widths, _) => padded(&x(), widths),
            Op::OneHot(n) => shape(&[inputs[1].shape.clone(), vec![*n]].concat()),
            Op::Random(Sampler::Permutation(n)) => shape(&[*n]),
            Op::Random(Sampler::Split(n)) => shape(&[*n, 2]),
            Op::Random(s) => s.shape().and_then(shape),
            Op::Prim(Prim::Reshape(s)) => shape(s),
            Op::Prim(Prim::BroadcastInDim(s, _)) => shape(s),
            Op::Prim(Prim::Iota(_, s, _)) => shape(s),
            // An axis past the rank is refused however it is written.
            Op::Reduce(_, AxesArg::Usizes(axes), _)
            | Op::VarDdof(AxesArg::Usizes(axes), ..)
            | Op::Softmax(_, AxesArg::Usizes(axes))
                if axes.iter().any(|&a| a >= x().len()) =>
            {
                Some(Expect::Refusal)
            }
            _ => None,
        }
    }

    /// For `x.slice(s![i])` of a non-empty 1-D `x`: the flat position the result must hold
    /// (an integer index out of bounds clamps, as the indexing docs say).
    pub fn expected_position(&self, inputs: &[Input]) -> Option<usize> {
        let Op::Slice(index) = self else { return None };
        let n = match inputs[0].shape.as_slice() {
            &[n] if n > 0 => n,
            _ => return None,
        };
        let last = n as i128 - 1;
        let clamp = |i: i128| i.clamp(0, last) as usize;
        match index.as_slice() {
            [Index::At(i)] => {
                let i = *i as i128;
                Some(clamp(if i < 0 { i + n as i128 } else { i }))
            }
            [Index::AtUsize(i)] => Some(clamp(*i as i128)),
            _ => None,
        }
    }

    /// For `try_from_shape_vec`, whether it must succeed (it returns no array when it fails).
    pub fn must_succeed(&self) -> Option<bool> {
        match self {
            Op::TryFromShapeVec(s, len) => {
                Some(valid_shape(s, DType::F32) && elements(s) == Some(*len))
            }
            _ => None,
        }
    }

    /// Whether the operation runs on the host and so cannot take traced operands: the index
    /// arithmetic of `randint`, `permutation`, `choice` and `categorical` (see `rjax::random`).
    pub fn host_only(&self) -> bool {
        matches!(
            self,
            Op::Random(
                Sampler::Randint(..)
                    | Sampler::Permutation(_)
                    | Sampler::PermutationArray(..)
                    | Sampler::Choice(..)
                    | Sampler::Categorical(_)
                    | Sampler::CategoricalShape(..)
            )
        )
    }

    /// Whether the operation has no array operands, so building it under `#[jit]` runs it
    /// while tracing (its parameters alone bound what it allocates).
    pub fn is_creation(&self) -> bool {
        matches!(
            self,
            Op::Zeros(_)
                | Op::Ones(_)
                | Op::FullDtype(..)
                | Op::Eye(_)
                | Op::EyeDtype(..)
                | Op::Arange(_)
                | Op::ArangeFloat(_)
                | Op::ArangeStep(..)
                | Op::Linspace(..)
                | Op::FromShapeVec(..)
                | Op::TryFromShapeVec(..)
        )
    }

    /// How `vmap` over a leading axis of every input relates to stacking the examples'
    /// results: `Some(true)` when the two must agree bit for bit (elementwise maps, extrema,
    /// integer results), `Some(false)` within float rounding (sums, which may add in another
    /// order), `None` when the operation is not checked under `vmap`.
    pub fn vmap_exact(&self) -> Option<bool> {
        match self {
            Op::Unary(_) | Op::Powi(_) | Op::Clip(..) | Op::Binary(_) | Op::Where => Some(true),
            Op::Reduce(name, AxesArg::List(_) | AxesArg::Usizes(_) | AxesArg::All, _) => {
                Some(matches!(*name, "max" | "min" | "all" | "any"))
            }
            Op::Arg(_, Some(_), _) => Some(true),
            Op::Cumulative(name, Some(_)) => Some(matches!(*name, "cummax" | "cummin")),
            Op::Softmax(..) => Some(false),
            Op::Order(name, Some(_), ..) => Some(!matches!(*name, "median" | "quantile")),
            _ => None,
        }
    }

    /// Whether the op sums floats in a reduction `#[jit]` may fuse with its neighbours (and
    /// so add in another order than op by op).
    pub fn fuses_a_float_sum(&self) -> bool {
        match self {
            Op::Reduce(name, ..) => {
                matches!(*name, "sum" | "prod" | "mean" | "var" | "std" | "logsumexp")
            }
            Op::VarDdof(..) | Op::Softmax(..) => true,
            _ => false,
        }
    }

    /// Whether `grad` of the sum of the result with respect to input 0 is checked.
    pub fn differentiable(&self) -> bool {
        match self {
            Op::Unary(name) => !matches!(*name, "isnan" | "isfinite" | "logical_not"),
            Op::Powi(_) | Op::Clip(..) | Op::Softmax(..) => true,
            Op::Binary(name) => matches!(
                *name,
                "add"
                    | "subtract"
                    | "multiply"
                    | "divide"
                    | "pow"
                    | "maximum"
                    | "minimum"
                    | "atan2"
                    | "logaddexp"
            ),
            Op::Reduce(name, ..) => !matches!(*name, "all" | "any"),
            Op::Cumulative(..) => true,
            Op::Order(name, ..) => !matches!(*name, "argsort" | "searchsorted"),
            _ => false,
        }
    }
}

/// What an op's arguments say of its result.
pub enum Expect {
    /// A result of this shape.
    Shape(Vec<usize>),
    /// A refusal: the result asked for has no shape (a count past `usize`, a negative extent).
    Refusal,
}

fn expect_product(dims: impl IntoIterator<Item = Option<usize>>) -> Expect {
    dims.into_iter().collect::<Option<Vec<usize>>>().map_or(Expect::Refusal, Expect::Shape)
}

/// NumPy's `reshape` of an array of `shape` to `dims` (one may be `-1`).
fn reshaped(shape: &[usize], dims: &[isize]) -> Expect {
    let n = elements(shape).expect("inputs have countable shapes");
    let inferred = dims.iter().filter(|&&d| d == -1).count();
    if inferred > 1 || dims.iter().any(|&d| d < -1) {
        return Expect::Refusal;
    }
    let known =
        dims.iter().filter(|&&d| d >= 0).try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
    match (known, inferred) {
        (Some(k), 0) if k == n => Expect::Shape(dims.iter().map(|&d| d as usize).collect()),
        (Some(k), 1) if k != 0 && n.is_multiple_of(k) => {
            Expect::Shape(dims.iter().map(|&d| if d == -1 { n / k } else { d as usize }).collect())
        }
        _ => Expect::Refusal,
    }
}

/// `np.tile(x, reps)` for `x` of `shape`.
fn tiled(shape: &[usize], reps: &[usize]) -> Expect {
    let d = shape.len().max(reps.len());
    let pad = |v: &[usize]| [vec![1; d - v.len()], v.to_vec()].concat();
    expect_product(pad(shape).iter().zip(pad(reps)).map(|(&s, r)| s.checked_mul(r)))
}

/// `np.repeat(x, n, axis)` for `x` of `shape` (`None` when the axis is out of range).
fn repeated(shape: &[usize], n: usize, axis: Option<isize>) -> Option<Expect> {
    let Some(axis) = axis else {
        return Some(expect_product([elements(shape).and_then(|e| e.checked_mul(n))]));
    };
    let rank = shape.len() as isize;
    if !(-rank..rank).contains(&axis) {
        return None;
    }
    let a = axis.rem_euclid(rank) as usize;
    Some(expect_product(shape.iter().enumerate().map(|(i, &d)| {
        if i == a {
            d.checked_mul(n)
        } else {
            Some(d)
        }
    })))
}

/// `np.pad(x, widths)` for `x` of `shape` (`None` when the widths do not fit the rank).
fn padded(shape: &[usize], widths: &[(usize, usize)]) -> Option<Expect> {
    let widths = match widths.len() {
        1 => vec![widths[0]; shape.len()],
        n if n == shape.len() => widths.to_vec(),
        _ => return None,
    };
    let grown = shape.iter().zip(&widths).map(|(&d, &(lo, hi))| d.checked_add(lo)?.checked_add(hi));
    Some(expect_product(grown))
}

fn primitive_of_unary(name: &str) -> &'static str {
    match name {
        "negative" => "neg",
        "sigmoid" => "logistic",
        "erfinv" => "erf_inv",
        "isnan" => "is_nan",
        "isfinite" => "is_finite",
        "logical_not" => "not",
        "softplus" => "logaddexp",
        _ => "",
    }
}

fn primitive_of_binary(name: &str) -> &'static str {
    match name {
        "subtract" => "sub",
        "multiply" => "mul",
        "divide" | "trunc_divide" => "div",
        "remainder" | "fmod" | "%" => "rem",
        "maximum" => "max",
        "minimum" => "min",
        "equal" => "eq",
        "not_equal" => "ne",
        "less" => "lt",
        "less_equal" => "le",
        "greater" => "gt",
        "greater_equal" => "ge",
        "logical_and" => "and",
        "logical_or" => "or",
        "logical_xor" => "xor",
        _ => "",
    }
}

fn primitive_of_reduction(name: &str) -> &'static str {
    match name {
        "sum" | "mean" | "var" | "std" => "reduce_sum",
        "prod" => "reduce_prod",
        "max" | "logsumexp" => "reduce_max",
        "min" => "reduce_min",
        "all" => "reduce_and",
        _ => "reduce_or",
    }
}

fn prim_name(prim: &Prim) -> &'static str {
    match prim {
        Prim::Reshape(_) => "reshape",
        Prim::BroadcastInDim(..) => "broadcast_in_dim",
        Prim::Transpose(_) => "transpose",
        Prim::Slice(..) => "slice",
        Prim::Pad(..) => "pad",
        Prim::Iota(..) => "iota",
        Prim::Concatenate(_) => "concatenate",
        Prim::Rev(_) => "rev",
        Prim::Reduce(op, _) => op.op_name(),
        Prim::ArgReduce(p::ArgOp::Max, _) => "argmax",
        Prim::ArgReduce(p::ArgOp::Min, _) => "argmin",
        Prim::Cumulative(p::CumOp::Sum, ..) => "cumsum",
        Prim::Cumulative(p::CumOp::Prod, ..) => "cumprod",
        Prim::Cumulative(p::CumOp::Max, ..) => "cummax",
        Prim::Cumulative(p::CumOp::Min, ..) => "cummin",
        Prim::Gather(..) => "gather",
        Prim::Scatter(..) => "scatter",
        Prim::DotGeneral(..) => "dot_general",
        Prim::Convert(..) => "convert_element_type",
    }
}

fn unary(name: &str, x: &Array) -> Array {
    match name {
        "negative" => jnp::negative(x),
        "abs" => jnp::abs(x),
        "sign" => jnp::sign(x),
        "square" => jnp::square(x),
        "exp" => jnp::exp(x),
        "exp2" => jnp::exp2(x),
        "log" => jnp::log(x),
        "log1p" => jnp::log1p(x),
        "expm1" => jnp::expm1(x),
        "sqrt" => jnp::sqrt(x),
        "rsqrt" => jnp::rsqrt(x),
        "cbrt" => jnp::cbrt(x),
        "reciprocal" => jnp::reciprocal(x),
        "sin" => jnp::sin(x),
        "cos" => jnp::cos(x),
        "tan" => jnp::tan(x),
        "asin" => jnp::asin(x),
        "acos" => jnp::acos(x),
        "atan" => jnp::atan(x),
        "sinh" => jnp::sinh(x),
        "cosh" => jnp::cosh(x),
        "tanh" => jnp::tanh(x),
        "asinh" => jnp::asinh(x),
        "acosh" => jnp::acosh(x),
        "atanh" => jnp::atanh(x),
        "sigmoid" => jnp::sigmoid(x),
        "softplus" => jnp::softplus(x),
        "erf" => jnp::erf(x),
        "erfinv" => jnp::erfinv(x),
        "floor" => jnp::floor(x),
        "ceil" => jnp::ceil(x),
        "round" => jnp::round(x),
        "isnan" => jnp::isnan(x),
        "isfinite" => jnp::isfinite(x),
        "logical_not" => jnp::logical_not(x),
        _ => unreachable!("unknown unary op {name}"),
    }
}

fn binary(name: &str, a: &Array, b: &Array) -> Array {
    match name {
        "add" => jnp::add(a, b),
        "subtract" => jnp::subtract(a, b),
        "multiply" => jnp::multiply(a, b),
        "divide" => jnp::divide(a, b),
        "pow" => jnp::pow(a, b),
        "maximum" => jnp::maximum(a, b),
        "minimum" => jnp::minimum(a, b),
        "atan2" => jnp::atan2(a, b),
        "floor_divide" => jnp::floor_divide(a, b),
        "remainder" => jnp::remainder(a, b),
        "fmod" => jnp::fmod(a, b),
        "trunc_divide" => jnp::trunc_divide(a, b),
        "logaddexp" => jnp::logaddexp(a, b),
        "nextafter" => jnp::nextafter(a, b),
        "equal" => jnp::equal(a, b),
        "not_equal" => jnp::not_equal(a, b),
        "less" => jnp::less(a, b),
        "less_equal" => jnp::less_equal(a, b),
        "greater" => jnp::greater(a, b),
        "greater_equal" => jnp::greater_equal(a, b),
        "logical_and" => jnp::logical_and(a, b),
        "logical_or" => jnp::logical_or(a, b),
        "logical_xor" => jnp::logical_xor(a, b),
        "%" => a % b,
        _ => unreachable!("unknown binary op {name}"),
    }
}

fn reduce(name: &str, x: &Array, axes: &AxesArg, keepdims: bool) -> Array {
    if let AxesArg::Full = axes {
        return match name {
            "sum" => jnp::sum(x),
            "prod" => jnp::prod(x),
            "max" => jnp::max(x),
            "min" => jnp::min(x),
            "mean" => jnp::mean(x),
            "var" => jnp::var(x),
            "std" => jnp::std(x),
            "logsumexp" => jnp::logsumexp(x),
            "all" => jnp::all(x),
            _ => jnp::any(x),
        };
    }
    let a = axes.axes();
    match name {
        "sum" => jnp::sum_axes(x, a, keepdims),
        "prod" => jnp::prod_axes(x, a, keepdims),
        "max" => jnp::max_axes(x, a, keepdims),
        "min" => jnp::min_axes(x, a, keepdims),
        "mean" => jnp::mean_axes(x, a, keepdims),
        "var" => jnp::var_axes(x, a, keepdims),
        "std" => jnp::std_axes(x, a, keepdims),
        "logsumexp" => jnp::logsumexp_axes(x, a, keepdims),
        "all" => jnp::all_axes(x, a, keepdims),
        _ => jnp::any_axes(x, a, keepdims),
    }
}

/// The sorting functions (`Op::Order`).
fn order(name: &str, x: &Array, axis: Option<isize>, flag: bool, count: usize) -> Vec<Array> {
    let axes = || axis.map_or(Axes::All, Axes::from);
    let one = |a: Array| vec![a];
    match name {
        "sort" => one(jnp::sort_axis(x, axis, flag)),
        "argsort" => one(jnp::argsort_axis(x, axis, flag)),
        "top_k" => {
            let (values, indices) = lax::top_k_axis(x, count, axis.unwrap_or(-1));
            vec![values, indices]
        }
        "searchsorted" => {
            let side = if flag { jnp::Side::Right } else { jnp::Side::Left };
            one(jnp::searchsorted_side(&jnp::sort_axis(x, None, false), x, side))
        }
        "diff" => one(jnp::diff(x, count, axis.unwrap_or(-1))),
        "unique" => one(jnp::unique_size(x, count)),
        "median" => one(jnp::median_axes(x, axes(), flag)),
        _ => one(jnp::quantile_axes(x, 0.3, axes(), flag)),
    }
}

// --- Drawing cases ---------------------------------------------------------------------------

/// Every case the suite draws: one family chosen by weight, then its parameters and inputs.
pub fn case() -> BoxedStrategy<Case> {
    prop_oneof![
        8 => creation(),
        14 => shape_ops(),
        10 => indexing(),
        10 => unary_ops(),
        12 => binary_ops(),
        12 => reductions(),
        6 => products(),
        5 => convolutions(),
        8 => samplers(),
        10 => primitives(),
    ]
    .boxed()
}

fn case_of(op: Op, inputs: Vec<Input>) -> Case {
    Case { op, inputs }
}

/// Whether asking for an array of `shape` is harmless: it is refused (invalid), small, or so
/// large that no allocation can succeed (so nothing is touched before it fails). Shapes
/// between those would really allocate, which the suite must never do.
pub fn harmless(shape: &[usize], dtype: DType) -> bool {
    if !valid_shape(shape, dtype) {
        return true;
    }
    match draw::bytes(shape, dtype) {
        Some(b) => b <= draw::MAX_RESULT_BYTES || b >= UNALLOCATABLE,
        None => true,
    }
}

/// Bytes no machine can allocate: a request this large fails at once.
pub const UNALLOCATABLE: usize = 1 << 50;

fn nan_or(v: impl Strategy<Value = f64> + 'static) -> BoxedStrategy<F> {
    prop_oneof![6 => v, 1 => draw::f64_value()].prop_map(F).boxed()
}

fn creation() -> BoxedStrategy<Case> {
    let shaped = |dtype: DType| {
        draw::target_shape(0, 4).prop_filter("harmless", move |s| harmless(s, dtype))
    };
    let eye_n = || select(vec![0usize, 1, 2, 3, 5, 1 << 26, 1 << 31, 1 << 32, usize::MAX / 2]);
    let any_dtype = || select(DType::ALL.to_vec());
    let stop = select(vec![-3i64, 0, 1, 5, 11, 1 << 50, 1 << 62, i64::MAX, i64::MIN]);
    let float_stop = prop_oneof![
        3 => (-3.0f64..12.0).prop_map(|v| v.round()),
        1 => select(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, 2f64.powi(62), 0.5, -0.0]),
    ];
    let bound = || {
        prop_oneof![
            4 => (-5i32..=5).prop_map(f64::from),
            1 => select(vec![f64::MAX, f64::MIN, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300]),
        ]
    };
    let step = select(vec![
        1.0,
        -1.0,
        0.5,
        0.25,
        3.0,
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        1e-300,
        -1e-300,
    ]);
    let range = (bound(), bound(), step, any_dtype()).prop_filter("harmless", |(a, b, s, d)| {
        let n = ((b - a) / s).ceil().max(0.0) as usize;
        harmless(&[n], *d)
    });
    let data_len = |s: &Vec<usize>| match elements(s) {
        Some(n) if n <= 1024 => vec![n, n + 1, n.saturating_sub(1), 0],
        _ => vec![0, 1, 4],
    };
    let with_len = draw::target_shape(0, 4)
        .prop_flat_map(move |s| (Just(s.clone()), select(data_len(&s))))
        .boxed();
    prop_oneof![
        shaped(DType::F32).prop_map(|s| case_of(Op::Zeros(s), vec![])),
        shaped(DType::F32).prop_map(|s| case_of(Op::Ones(s), vec![])),
        (any_dtype(), draw::target_shape(0, 4), draw::f64_value())
            .prop_filter("harmless", |(d, s, _)| harmless(s, *d))
            .prop_map(|(d, s, v)| case_of(Op::FullDtype(s, F(v), d), vec![])),
        eye_n().prop_map(|n| case_of(Op::Eye(n), vec![])),
        (eye_n(), eye_n(), draw::isize_param(), any_dtype())
            .prop_filter("harmless", |(n, m, _, d)| harmless(&[*n, *m], *d))
            .prop_map(|(n, m, k, d)| case_of(Op::EyeDtype(n, m, k, d), vec![])),
        stop.prop_map(|s| case_of(Op::Arange(s), vec![])),
        float_stop.prop_map(|s| case_of(Op::ArangeFloat(F(s)), vec![])),
        range.prop_map(|(a, b, s, d)| case_of(Op::ArangeStep(F(a), F(b), F(s), d), vec![])),
        (bound(), bound(), draw::count())
            .prop_filter("harmless", |(_, _, n)| harmless(&[*n], DType::F32))
            .prop_map(|(a, b, n)| case_of(Op::Linspace(F(a), F(b), n), vec![])),
        with_len.clone().prop_map(|(s, n)| case_of(Op::FromShapeVec(s, n), vec![])),
        with_len.prop_map(|(s, n)| case_of(Op::TryFromShapeVec(s, n), vec![])),
        (draw::input(0, 4), nan_or(-3.0f64..3.0))
            .prop_map(|(x, v)| case_of(Op::FullLike(v), vec![x])),
    ]
    .boxed()
}

/// Axis lists: mostly valid for rank up to 4, with out-of-range, negative and repeated ones.
fn axis_list() -> impl Strategy<Value = Vec<isize>> {
    prop::collection::vec(draw::axis(), 0..=4)
}

/// A permutation-like list for an array of `rank`: a true permutation (with some axes spelled
/// negative) most of the time, or anything.
fn permutation_of(rank: usize) -> BoxedStrategy<Vec<isize>> {
    let perm =
        Just((0..rank as isize).collect::<Vec<_>>()).prop_shuffle().prop_flat_map(move |p| {
            prop::collection::vec(any::<bool>(), rank).prop_map(move |neg| {
                p.iter().zip(&neg).map(|(&a, &n)| if n { a - rank as isize } else { a }).collect()
            })
        });
    prop_oneof![3 => perm, 1 => axis_list()].boxed()
}

/// Target shapes for reshaping an array of `shape`: its own extents reordered, with one
/// replaced by `-1`, `[-1]`, small random ones, and enormous or negative ones.
fn reshape_dims(shape: Vec<usize>) -> BoxedStrategy<Vec<isize>> {
    let own: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    let n = own.len();
    let reordered = Just(own.clone()).prop_shuffle();
    let inferred = (Just(own), 0..n.max(1)).prop_map(move |(mut d, i)| {
        if n > 0 {
            d[i] = -1;
        }
        d
    });
    let enormous = prop::collection::vec(
        prop_oneof![2 => select(HUGE.to_vec()).prop_map(|d| d as isize), 1 => -2isize..=4],
        1..=3,
    );
    prop_oneof![
        2 => reordered,
        2 => inferred,
        1 => Just(vec![-1]),
        2 => prop::collection::vec(-2isize..=6, 0..=4),
        2 => enormous,
    ]
    .boxed()
}

/// Targets for broadcasting an array of `shape`: compatible ones (extent-1 axes widened,
/// leading axes added, enormous ones included) and arbitrary ones.
fn broadcast_target(shape: Vec<usize>) -> BoxedStrategy<Vec<usize>> {
    let extent = || prop_oneof![4 => 0usize..=3, 1 => select(HUGE.to_vec())];
    let compatible = (prop::collection::vec(extent(), 0..=2), prop::collection::vec(extent(), 4))
        .prop_map(move |(lead, widths)| {
            let own = shape.iter().zip(&widths).map(|(&d, &w)| if d == 1 { w } else { d });
            lead.into_iter().chain(own).collect()
        });
    prop_oneof![3 => compatible, 1 => draw::target_shape(0, 4)].boxed()
}

fn pad_widths() -> impl Strategy<Value = Vec<(usize, usize)>> {
    prop::collection::vec((draw::count(), draw::count()), 0..=4)
}

fn shape_ops() -> BoxedStrategy<Case> {
    let x = || draw::input(0, 4);
    let single = |op: BoxedStrategy<Op>| (op, x()).prop_map(|(op, x)| case_of(op, vec![x])).boxed();
    let dependent = |f: fn(Vec<usize>) -> BoxedStrategy<Op>| {
        x().prop_flat_map(move |x| (f(x.shape.clone()), Just(x)))
            .prop_map(|(op, x)| case_of(op, vec![x]))
            .boxed()
    };
    prop_oneof![
        3 => dependent(|s| reshape_dims(s).prop_map(Op::Reshape).boxed()),
        1 => single(draw::target_shape(0, 4).prop_map(Op::ReshapeUsize).boxed()),
        3 => dependent(|s| broadcast_target(s).prop_map(Op::BroadcastTo).boxed()),
        2 => dependent(|s| {
            prop::option::weighted(0.8, permutation_of(s.len())).prop_map(Op::Transpose).boxed()
        }),
        1 => single((draw::axis(), draw::axis()).prop_map(|(a, b)| Op::Swapaxes(a, b)).boxed()),
        1 => single((axis_list(), axis_list()).prop_map(|(a, b)| Op::Moveaxis(a, b)).boxed()),
        1 => single(axis_list().prop_map(Op::ExpandDims).boxed()),
        1 => single(prop::option::of(axis_list()).prop_map(Op::Squeeze).boxed()),
        1 => single(prop::option::of(axis_list()).prop_map(Op::Flip).boxed()),
        2 => single(prop::collection::vec(draw::count(), 0..=4).prop_map(Op::Tile).boxed()),
        2 => single(
            (draw::count(), prop::option::of(draw::axis()))
                .prop_map(|(n, a)| Op::Repeat(n, a))
                .boxed()
        ),
        3 => single((pad_widths(), nan_or(-2.0f64..2.0)).prop_map(|(w, v)| Op::Pad(w, v)).boxed()),
        3 => joined(),
        // Few sections: on an empty axis any count divides, and an enormous one is a valid
        // request for that many arrays.
        1 => single((0usize..=6, draw::axis()).prop_map(|(k, a)| Op::SplitEqual(k, a)).boxed()),
        1 => single(
            (prop::collection::vec(draw::isize_param(), 0..=3), draw::axis())
                .prop_map(|(at, a)| Op::SplitAt(at, a))
                .boxed()
        ),
        1 => single(Just(Op::Ravel).boxed()),
        2 => single(select(DType::ALL.to_vec()).prop_map(Op::Astype).boxed()),
    ]
    .boxed()
}

/// `concatenate` and `stack`: 1 to 3 arrays that agree except along the axis (and now and
/// then in rank, extents or dtype).
fn joined() -> BoxedStrategy<Case> {
    (draw::input_shape(0, 3), draw::axis(), 1usize..=3, any::<bool>(), 0u8..8)
        .prop_flat_map(|(base, axis, n, stack, spoil)| {
            let rank = base.len() as isize;
            let ax = if (0..rank).contains(&axis) {
                Some(axis as usize)
            } else if (-rank..0).contains(&axis) {
                Some((axis + rank) as usize)
            } else {
                None
            };
            let shapes: Vec<BoxedStrategy<Vec<usize>>> = (0..n)
                .map(|i| {
                    let base = base.clone();
                    (0usize..=3)
                        .prop_map(move |extent| {
                            let mut s = base.clone();
                            if let (Some(a), false) = (ax, stack) {
                                s[a] = extent;
                            }
                            // Spoil one operand now and then: another rank or extent.
                            match (spoil, i) {
                                (0, 1) => s.push(2),
                                (1, 1) if !s.is_empty() => s[0] += 1,
                                _ => {}
                            }
                            s
                        })
                        .boxed()
                })
                .collect();
            let dtypes = prop::collection::vec(
                prop_oneof![6 => Just(None), 1 => draw::dtype().prop_map(Some)],
                n,
            );
            (shapes, draw::dtype(), dtypes, Just(axis), Just(stack))
        })
        .prop_flat_map(|(shapes, dtype, dtypes, axis, stack)| {
            let inputs: Vec<BoxedStrategy<Input>> = shapes
                .into_iter()
                .zip(dtypes)
                .map(|(s, d)| draw::input_of(s, d.unwrap_or(dtype)))
                .collect();
            let op = if stack { Op::Stack(axis) } else { Op::Concatenate(axis) };
            (Just(op), inputs)
        })
        .prop_map(|(op, inputs)| case_of(op, inputs))
        .boxed()
}

/// Entries of index expressions; `arrays` allows integer index arrays (input 1).
fn index_entry(arrays: bool) -> BoxedStrategy<Index> {
    let step = select(vec![1isize, 1, 1, -1, 2, -2, 3, 0, isize::MIN, isize::MAX]);
    let bound = || prop::option::weighted(0.7, draw::isize_param());
    let plain = prop_oneof![
        8 => draw::isize_param().prop_map(Index::At),
        2 => draw::count().prop_map(Index::AtUsize),
        8 => (bound(), bound(), step).prop_map(|(a, b, s)| Index::Range(a, b, s)),
        2 => Just(Index::NewAxis),
        1 => Just(Index::Ellipsis),
    ];
    if arrays {
        prop_oneof![19 => plain, 3 => Just(Index::Array(1))].boxed()
    } else {
        plain.boxed()
    }
}

fn indexing() -> BoxedStrategy<Case> {
    let index = |arrays| prop::collection::vec(index_entry(arrays), 0..=5);
    let update = select(vec![Update::Set, Update::Add, Update::Mul, Update::Min, Update::Max]);
    // Arrays with an enormous empty axis only where the op is a slice: index arrays, updates
    // and `take_along_axis` build position arrays of the selected shape while tracing, so
    // there a valid selection would be a large array made before any check could skip it.
    let x = || draw::input(0, 4);
    let small = || draw::small_input(0, 4);
    let idx = || draw::index_input(0, 2);
    prop_oneof![
        2 => (index(false), x(), idx())
            .prop_map(|(i, x, k)| case_of(Op::Slice(i), vec![x, k])),
        2 => (index(true), small(), idx())
            .prop_map(|(i, x, k)| case_of(Op::Slice(i), vec![x, k])),
        3 => (index(true), update, prop::option::weighted(0.6, nan_or(-2.0f64..2.0)), small(), idx(), draw::input(0, 2))
            .prop_map(|(i, u, v, x, k, values)| case_of(Op::At(i, u, v), vec![x, k, values])),
        2 => (prop::option::weighted(0.7, draw::axis()), any::<bool>(), x(), idx())
            .prop_map(|(a, clip, x, k)| case_of(Op::Take(a, clip), vec![x, k])),
        1 => (draw::axis(), small()).prop_flat_map(|(a, x)| {
            let rank = x.shape.len();
            let shape = prop::collection::vec(0usize..=3, rank..=rank);
            (Just(a), Just(x), shape.prop_flat_map(|s| draw::input_of(s, DType::I32)))
        })
        .prop_map(|(a, x, k)| case_of(Op::TakeAlongAxis(a), vec![x, k])),
        // One integer position into a vector, whose element the result must be.
        1 => (prop_oneof![draw::isize_param().prop_map(Index::At), draw::count().prop_map(Index::AtUsize)], draw::small_input(1, 1), idx())
            .prop_map(|(i, x, k)| case_of(Op::Slice(vec![i]), vec![x, k])),
        1 => (select(vec![0usize, 1, 3, 5, 1 << 50, (1 << 62) + 1, usize::MAX / 2, usize::MAX]), x(), idx())
            .prop_map(|(n, x, k)| case_of(Op::OneHot(n), vec![x, k])),
    ]
    .boxed()
}

fn unary_ops() -> BoxedStrategy<Case> {
    let powi = prop_oneof![4 => -3i32..=7, 1 => select(vec![i32::MIN, i32::MAX, 64, -64])];
    prop_oneof![
        8 => (select(UNARY.to_vec()), draw::input(0, 3))
            .prop_map(|(name, x)| case_of(Op::Unary(name), vec![x])),
        1 => (powi, draw::input(0, 3)).prop_map(|(n, x)| case_of(Op::Powi(n), vec![x])),
        1 => (nan_or(-2.0f64..2.0), nan_or(-2.0f64..2.0), draw::input(0, 3))
            .prop_map(|(lo, hi, x)| case_of(Op::Clip(lo, hi), vec![x])),
    ]
    .boxed()
}

/// Shapes for `n` operands that broadcast together (extent-1 and dropped leading axes), or
/// now and then do not.
fn broadcast_shapes(n: usize) -> BoxedStrategy<Vec<Vec<usize>>> {
    (
        draw::input_shape(0, 3),
        prop::collection::vec((prop::collection::vec(0u8..4, 3), 0usize..=3), n),
        0u8..10,
    )
        .prop_map(|(out, masks, spoil)| {
            let mut shapes: Vec<Vec<usize>> = masks
                .iter()
                .map(|(mask, drop)| {
                    let s: Vec<usize> = out
                        .iter()
                        .zip(mask.iter().chain(std::iter::repeat(&3)))
                        .map(|(&d, &m)| if m == 0 { 1 } else { d })
                        .collect();
                    s[(*drop).min(s.len())..].to_vec()
                })
                .collect();
            if spoil == 0 {
                if let Some(d) = shapes[0].first_mut() {
                    *d += 2;
                }
            }
            shapes
        })
        .boxed()
}

fn operands(n: usize) -> BoxedStrategy<Vec<Input>> {
    let dtypes = prop_oneof![
        // One dtype for all half the time, so every op runs on every dtype unpromoted.
        draw::dtype().prop_map(move |d| vec![d; n]),
        prop::collection::vec(draw::dtype(), n),
    ];
    (broadcast_shapes(n), dtypes)
        .prop_flat_map(|(shapes, dtypes)| {
            shapes.into_iter().zip(dtypes).map(|(s, d)| draw::input_of(s, d)).collect::<Vec<_>>()
        })
        .boxed()
}

fn binary_ops() -> BoxedStrategy<Case> {
    prop_oneof![
        10 => (select(BINARY.to_vec()), operands(2))
            .prop_map(|(name, xs)| case_of(Op::Binary(name), xs)),
        2 => operands(3).prop_map(|xs| case_of(Op::Where, xs)),
        1 => (select(vec!["add", "multiply", "maximum", "less"]), draw::count(), draw::input(0, 3))
            .prop_map(|(name, n, x)| case_of(Op::BinaryUsize(name, n), vec![x])),
    ]
    .boxed()
}

fn axes_arg() -> impl Strategy<Value = AxesArg> {
    prop_oneof![
        2 => Just(AxesArg::Full),
        1 => Just(AxesArg::All),
        4 => axis_list().prop_map(AxesArg::List),
        1 => prop::collection::vec(prop_oneof![4 => 0usize..=4, 1 => select(HUGE.to_vec())], 0..=3)
            .prop_map(AxesArg::Usizes),
    ]
}

fn reductions() -> BoxedStrategy<Case> {
    let x = || draw::input(0, 4);
    let ddof = prop_oneof![3 => 0usize..=3, 1 => select(HUGE.to_vec())];
    let arg = prop::option::weighted(0.7, draw::axis());
    let cum = prop::option::weighted(0.7, draw::axis());
    prop_oneof![
        8 => (select(REDUCTIONS.to_vec()), axes_arg(), any::<bool>(), x())
            .prop_map(|(n, a, k, x)| case_of(Op::Reduce(n, a, k), vec![x])),
        1 => (axes_arg(), any::<bool>(), ddof, x())
            .prop_map(|(a, k, d, x)| case_of(Op::VarDdof(a, k, d), vec![x])),
        3 => (select(vec!["argmax", "argmin"]), arg, any::<bool>(), x())
            .prop_map(|(n, a, k, x)| case_of(Op::Arg(n, a, k), vec![x])),
        3 => (select(vec!["cumsum", "cumprod", "cummax", "cummin"]), cum, x())
            .prop_map(|(n, a, x)| case_of(Op::Cumulative(n, a), vec![x])),
        2 => (select(vec!["softmax", "log_softmax"]), axes_arg(), x())
            .prop_map(|(n, a, x)| case_of(Op::Softmax(n, a), vec![x])),
        4 => order_cases(),
    ]
    .boxed()
}

fn order_cases() -> BoxedStrategy<Case> {
    const NAMES: [&str; 8] =
        ["sort", "argsort", "top_k", "searchsorted", "diff", "unique", "median", "quantile"];
    let axis = prop::option::weighted(0.8, draw::axis());
    (select(NAMES.to_vec()), axis, any::<bool>(), draw::count(), draw::input(0, 4))
        // `unique` makes index arrays of `size` elements.
        .prop_filter("harmless", |(n, _, _, c, _)| *n != "unique" || harmless(&[*c], DType::I64))
        .prop_map(|(n, a, f, c, x)| case_of(Op::Order(n, a, f, c), vec![x]))
        .boxed()
}

/// Operand shapes of a product from extents `m, k, n` and a batch `b`: `(m, k) @ (k, n)`
/// variants for `einsum` specs, vectors and batches for `matmul`.
fn product_shapes(op: &Op, m: usize, k: usize, n: usize, b: usize) -> Vec<Vec<usize>> {
    match op {
        Op::Einsum(spec) => match *spec {
            "bij,bjk->bik" => vec![vec![b, m, k], vec![b, k, n]],
            "ij,kj->ik" => vec![vec![m, k], vec![n, k]],
            "ii->i" | "ii" => vec![vec![m, m]],
            "i,i->" => vec![vec![k], vec![k]],
            "i,j->ij" => vec![vec![m], vec![n]],
            "ij->" | "ij->ji" | "ij->j" => vec![vec![m, k]],
            "...ij,jk->...ik" => vec![vec![b, m, k], vec![k, n]],
            "ij,jk,kl->il" => vec![vec![m, k], vec![k, n], vec![n, 2]],
            _ => vec![vec![m, k], vec![k, n]],
        },
        Op::Matmul => match b % 4 {
            0 => vec![vec![k], vec![k, n]],
            1 => vec![vec![m, k], vec![k]],
            2 => vec![vec![b, m, k], vec![k, n]],
            _ => vec![vec![m, k], vec![k, n]],
        },
        Op::Dot => match b % 3 {
            0 => vec![vec![k], vec![k]],
            1 => vec![vec![m, k], vec![k]],
            _ => vec![vec![m, k], vec![k, n]],
        },
        Op::Outer => vec![vec![m], vec![n]],
        _ => vec![vec![b, m, k], vec![k, n]],
    }
}

fn products() -> BoxedStrategy<Case> {
    let op = prop_oneof![
        2 => Just(Op::Dot),
        3 => Just(Op::Matmul),
        4 => select(EINSUM.to_vec()).prop_map(Op::Einsum),
        1 => (0usize..=3).prop_map(Op::Tensordot),
        1 => Just(Op::Outer),
    ];
    // Either small extents, or enormous ones arranged so that every operand is empty: the
    // result is then empty or too large to exist, never a large array that must be made.
    let small = (0usize..=4, 0usize..=4, 0usize..=4, 0usize..=3);
    let huge = || select(vec![1usize << 31, 1 << 32, (1 << 62) + 1]);
    let enormous =
        (huge(), huge(), prop_oneof![Just(0usize), huge()]).prop_map(|(m, n, b)| (m, 0usize, n, b));
    let extents = prop_oneof![6 => small, 1 => enormous];
    let dtypes = prop_oneof![
        4 => Just((DType::F32, DType::F32)),
        1 => Just((DType::F64, DType::F64)),
        1 => Just((DType::I32, DType::I32)),
        1 => (draw::dtype(), draw::dtype()),
    ];
    (op, extents, dtypes, 0u8..12)
        .prop_flat_map(|(op, (m, k, n, b), (da, db), spoil)| {
            let mut shapes = product_shapes(&op, m, k, n, b);
            if spoil == 0 {
                shapes[0].push(2);
            } else if spoil == 1 {
                if let Some(d) = shapes[0].last_mut() {
                    *d += 1;
                }
            }
            let inputs: Vec<BoxedStrategy<Input>> = shapes
                .into_iter()
                .enumerate()
                .map(|(i, s)| draw::input_of(s, if i == 0 { da } else { db }))
                .collect();
            (Just(op), inputs)
        })
        .prop_map(|(op, inputs)| case_of(op, inputs))
        .boxed()
}

fn convolutions() -> BoxedStrategy<Case> {
    let enormous = || select(vec![(1usize << 62) + 1, usize::MAX, 1 << 40]);
    let factor = move || prop_oneof![6 => 1usize..=3, 1 => Just(0usize), 1 => enormous()];
    let padding = prop_oneof![
        4 => select(vec!["VALID", "SAME", "SAME_LOWER", "valid", "FULL"]).prop_map(ConvPadding::Named),
        3 => prop::collection::vec(
            (
                prop_oneof![4 => -2i64..=3, 1 => select(vec![i64::MIN, i64::MAX, -(1 << 40)])],
                prop_oneof![4 => -2i64..=3, 1 => select(vec![i64::MIN, i64::MAX, -(1 << 40)])],
            ),
            0..=3
        )
        .prop_map(ConvPadding::Explicit),
    ];
    let numbers = prop::option::weighted(
        0.3,
        select(vec![
            ("NCH", "OIH", "NCH"),
            ("NHC", "HIO", "NHC"),
            ("NCHW", "OIHW", "NCHW"),
            ("NHWC", "HWIO", "NHWC"),
            ("NCC", "OIH", "NCH"),
            ("NC", "OI", "NC"),
            ("NCHW", "OIHW", "NHW"),
            ("ABC", "DEF", "GHI"),
        ]),
    );
    let groups = || prop_oneof![6 => Just(1usize), 2 => 0usize..=3, 1 => select(HUGE.to_vec())];
    (
        0usize..=2,
        (0usize..=2, 0usize..=3, 0usize..=3),
        prop::collection::vec((0usize..=5, 0usize..=3), 2),
        (groups(), groups()),
        (padding, numbers),
        prop::collection::vec(factor(), 0..=3),
        (
            prop::option::weighted(0.3, prop::collection::vec(factor(), 0..=3)),
            prop::option::weighted(0.3, prop::collection::vec(factor(), 0..=3)),
        ),
        (draw::float_dtype(), 0u8..10),
    )
        .prop_flat_map(
            |(
                spatial,
                (batch, c, o),
                extents,
                (fg, bg),
                (padding, numbers),
                strides,
                (ld, rd),
                (dtype, spoil),
            )| {
                // Features for up to 3 groups; more groups than features is for the op to refuse.
                let groups = fg.clamp(1, 3);
                let mut lhs = vec![batch, c * groups];
                let mut rhs = vec![o * groups, c];
                for &(input, window) in &extents[..spatial] {
                    lhs.push(input);
                    rhs.push(window);
                }
                // A strides list of the right length most of the time.
                let strides = if spoil == 0 {
                    strides
                } else {
                    strides.into_iter().chain(std::iter::repeat(1)).take(spatial).collect()
                };
                if spoil == 1 {
                    rhs.push(1);
                }
                let rhs_dtype = if spoil == 2 { DType::I32 } else { dtype };
                let conv = Conv {
                    strides,
                    padding,
                    lhs_dilation: ld,
                    rhs_dilation: rd,
                    numbers,
                    feature_groups: fg,
                    batch_groups: bg,
                };
                (
                    Just(Op::Conv(conv)),
                    vec![draw::input_of(lhs, dtype), draw::input_of(rhs, rhs_dtype)],
                )
            },
        )
        .prop_map(|(op, inputs)| case_of(op, inputs))
        .boxed()
}

/// Key data: a valid `uint32[2]` key most of the time, or data `wrap_key_data` must refuse.
fn key_data() -> BoxedStrategy<Input> {
    let shape = prop_oneof![
        12 => Just(vec![2usize]),
        1 => Just(vec![3usize]),
        1 => Just(vec![2usize, 2]),
        1 => Just(vec![]),
    ];
    let dtype = prop_oneof![12 => Just(DType::U32), 1 => Just(DType::I32)];
    (shape, dtype).prop_flat_map(|(s, d)| draw::input_of(s, d)).boxed()
}

fn samplers() -> BoxedStrategy<Case> {
    let shape =
        || draw::target_shape(0, 3).prop_filter("harmless", |s| harmless(s, DType::F64)).boxed();
    let float = || prop_oneof![5 => Just(DType::F32), 1 => Just(DType::F64), 1 => Just(DType::I32)];
    let int_dtype =
        select(vec![DType::I32, DType::U32, DType::I8, DType::U8, DType::I64, DType::F32]);
    let int_bound = || {
        prop_oneof![
            4 => -5i64..=10,
            1 => select(vec![i64::from(i32::MIN), i64::from(i32::MAX), i64::MIN, i64::MAX, 1 << 40]),
        ]
    };
    let n = || {
        prop_oneof![
            6 => 0usize..=6,
            1 => select(vec![(1usize << 62) + 1, usize::MAX / 2, usize::MAX, 1 << 63]),
        ]
    };
    let sampler = prop_oneof![
        (shape(), float()).prop_map(|(s, d)| Sampler::Normal(s, d)),
        (shape(), float()).prop_map(|(s, d)| Sampler::Uniform(s, d)),
        (shape(), nan_or(-2.0f64..2.0), nan_or(-2.0f64..2.0))
            .prop_map(|(s, a, b)| Sampler::UniformRange(s, a, b)),
        (shape(), int_bound(), int_bound(), int_dtype)
            .prop_map(|(s, a, b, d)| Sampler::Randint(s, a, b, d)),
        (nan_or(0.0f64..1.0), shape()).prop_map(|(p, s)| Sampler::Bernoulli(p, s)),
        shape().prop_map(Sampler::Bits),
        (nan_or(-3.0f64..0.0), nan_or(0.0f64..3.0), shape())
            .prop_map(|(a, b, s)| Sampler::TruncatedNormal(a, b, s)),
        shape().prop_map(Sampler::Gumbel),
        shape().prop_map(Sampler::Exponential),
        n().prop_map(Sampler::Permutation),
        (n(), shape(), any::<bool>()).prop_map(|(n, s, r)| Sampler::Choice(n, s, r)),
        n().prop_map(Sampler::Split),
        any::<u32>().prop_map(Sampler::FoldIn),
    ];
    let with_operand = prop_oneof![
        (draw::axis(), draw::input(0, 3)).prop_map(|(a, x)| (Sampler::Categorical(a), x)),
        (draw::axis(), shape(), draw::input(0, 3))
            .prop_map(|(a, s, x)| (Sampler::CategoricalShape(a, s), x)),
        (draw::axis(), any::<bool>(), draw::input(0, 3))
            .prop_map(|(a, i, x)| (Sampler::PermutationArray(a, i), x)),
        (shape(), draw::input(0, 3)).prop_map(|(s, x)| (Sampler::BernoulliArray(s), x)),
    ];
    prop_oneof![
        3 => (sampler, key_data()).prop_map(|(s, k)| case_of(Op::Random(s), vec![k])),
        1 => (with_operand, key_data())
            .prop_map(|((s, x), k)| case_of(Op::Random(s), vec![k, x])),
    ]
    .boxed()
}

fn usizes(len: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![8 => 0usize..=4, 1 => select(HUGE.to_vec())], len)
}

fn primitives() -> BoxedStrategy<Case> {
    let x = || draw::input(0, 4);
    let single = |prim: BoxedStrategy<Prim>| {
        (prim, x()).prop_map(|(p, x)| case_of(Op::Prim(p), vec![x])).boxed()
    };
    let i64s = || {
        prop::collection::vec(
            prop_oneof![6 => -3i64..=3, 1 => select(vec![i64::MIN, i64::MAX, -(1 << 40), 1 << 62])],
            0..=4,
        )
    };
    let reduce_op = select(vec![
        p::ReduceOp::Sum,
        p::ReduceOp::Prod,
        p::ReduceOp::Max,
        p::ReduceOp::Min,
        p::ReduceOp::And,
        p::ReduceOp::Or,
    ]);
    let cum_op = select(vec![p::CumOp::Sum, p::CumOp::Prod, p::CumOp::Max, p::CumOp::Min]);
    let arg_op = select(vec![p::ArgOp::Max, p::ArgOp::Min]);
    let scatter_op = select(vec![
        p::ScatterOp::Set,
        p::ScatterOp::Add,
        p::ScatterOp::Mul,
        p::ScatterOp::Min,
        p::ScatterOp::Max,
    ]);
    let pad_value = |x: &Input| draw::input_of(vec![], x.dtype());
    prop_oneof![
        2 => single(draw::target_shape(0, 4).prop_map(Prim::Reshape).boxed()),
        2 => single((draw::target_shape(0, 4), usizes(0..=4)).prop_map(|(s, d)| Prim::BroadcastInDim(s, d)).boxed()),
        1 => single(usizes(0..=4).prop_map(Prim::Transpose).boxed()),
        2 => single((usizes(0..=4), usizes(0..=4), usizes(0..=4)).prop_map(|(a, b, c)| Prim::Slice(a, b, c)).boxed()),
        2 => (i64s(), i64s(), usizes(0..=4), x())
            .prop_flat_map(move |(l, h, i, x)| (Just(Prim::Pad(l, h, i)), pad_value(&x), Just(x)))
            .prop_map(|(p, v, x)| case_of(Op::Prim(p), vec![x, v])),
        1 => (select(DType::ALL.to_vec()), draw::target_shape(0, 4), prop_oneof![0usize..=4, select(HUGE.to_vec())])
            .prop_filter("harmless", |(d, s, _)| harmless(s, *d))
            .prop_map(|(d, s, a)| case_of(Op::Prim(Prim::Iota(d, s, a)), vec![])),
        1 => (prop_oneof![0usize..=4, select(HUGE.to_vec())], operands(2))
            .prop_map(|(a, xs)| case_of(Op::Prim(Prim::Concatenate(a)), xs)),
        1 => single(usizes(0..=3).prop_map(Prim::Rev).boxed()),
        2 => single((reduce_op, usizes(0..=3)).prop_map(|(o, a)| Prim::Reduce(o, a)).boxed()),
        1 => single((arg_op, prop_oneof![0usize..=4, select(HUGE.to_vec())]).prop_map(|(o, a)| Prim::ArgReduce(o, a)).boxed()),
        1 => single((cum_op, prop_oneof![0usize..=4, select(HUGE.to_vec())], any::<bool>()).prop_map(|(o, a, r)| Prim::Cumulative(o, a, r)).boxed()),
        1 => (prop_oneof![0usize..=3, select(HUGE.to_vec())], any::<bool>(), x(), draw::index_input(0, 2))
            .prop_map(|(a, c, x, k)| case_of(Op::Prim(Prim::Gather(a, c)), vec![x, k])),
        1 => (prop_oneof![0usize..=3, select(HUGE.to_vec())], scatter_op, any::<bool>(), x(), draw::index_input(0, 2), draw::input(0, 3))
            .prop_map(|(a, o, c, x, k, u)| case_of(Op::Prim(Prim::Scatter(a, o, c)), vec![x, k, u])),
        2 => (usizes(0..=2), usizes(0..=2), usizes(0..=1), usizes(0..=1), operands(2))
            .prop_map(|(lc, rc, lb, rb, xs)| case_of(Op::Prim(Prim::DotGeneral(lc, rc, lb, rb)), xs)),
        1 => single((select(DType::ALL.to_vec()), any::<bool>()).prop_map(|(d, w)| Prim::Convert(d, w)).boxed()),
    ]
    .boxed()
}
