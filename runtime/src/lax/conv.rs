//! `lax::conv_general_dilated` (JAX's general convolution) and its shortcuts [`conv`] and
//! [`conv_with_general_padding`].

use crate::array::Array;
use crate::primitives::{bind1, ConvDimensionNumbers, ConvGeneralDilated};

/// How a convolution pads its input, as JAX's `padding` argument: `"VALID"`, `"SAME"`,
/// `"SAME_LOWER"` (any case), or explicit `(low, high)` pairs, one per spatial dimension.
///
/// ```
/// use rjax_runtime::lax::Padding;
/// assert_eq!(Padding::from("SAME"), Padding::Same);
/// assert_eq!(Padding::from([(1, 0), (0, 1)]), Padding::Explicit(vec![(1, 0), (0, 1)]));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Padding {
    /// No padding: only the windows that fit in the input.
    Valid,
    /// Enough padding for `ceil(input / stride)` outputs per dimension, split evenly with the
    /// odd element at the end.
    Same,
    /// As [`Padding::Same`], with the odd element at the start.
    SameLower,
    /// `(low, high)` elements of padding per spatial dimension; negative values crop.
    Explicit(Vec<(i64, i64)>),
}

impl From<&str> for Padding {
    /// Parses `"VALID"`, `"SAME"` or `"SAME_LOWER"`, in any case.
    ///
    /// # Panics
    ///
    /// Panics on any other string.
    #[track_caller]
    fn from(name: &str) -> Padding {
        match name.to_ascii_uppercase().as_str() {
            "VALID" => Padding::Valid,
            "SAME" => Padding::Same,
            "SAME_LOWER" => Padding::SameLower,
            _ => panic!(
                "conv_general_dilated: unknown padding {name:?}; expected \"VALID\", \"SAME\", \
                 \"SAME_LOWER\" or (low, high) pairs"
            ),
        }
    }
}

impl From<Vec<(i64, i64)>> for Padding {
    fn from(pairs: Vec<(i64, i64)>) -> Padding {
        Padding::Explicit(pairs)
    }
}

impl From<&[(i64, i64)]> for Padding {
    fn from(pairs: &[(i64, i64)]) -> Padding {
        Padding::Explicit(pairs.to_vec())
    }
}

impl<const N: usize> From<[(i64, i64); N]> for Padding {
    fn from(pairs: [(i64, i64); N]) -> Padding {
        Padding::Explicit(pairs.to_vec())
    }
}

impl Padding {
    /// The `(low, high)` pairs for spatial inputs of extents `input`, windows spanning
    /// `window` elements (dilation included) and `strides` (JAX's `padtype_to_pads`).
    #[track_caller]
    pub fn pairs(&self, input: &[usize], window: &[usize], strides: &[usize]) -> Vec<(i64, i64)> {
        let same = |d: usize, lower: bool| {
            // In i128, where nothing overflows; the total is below the window's span, so it
            // fits an i64 whenever the span does.
            let (input, window, stride) =
                (input[d] as i128, window[d] as i128, strides[d].max(1) as i128);
            let out = (input + stride - 1) / stride;
            let total = ((out - 1) * stride + window - input).max(0);
            let total = i64::try_from(total).unwrap_or(i64::MAX);
            let (small, large) = (total / 2, total - total / 2);
            if lower {
                (large, small)
            } else {
                (small, large)
            }
        };
        match self {
            Padding::Valid => vec![(0, 0); input.len()],
            Padding::Same => (0..input.len()).map(|d| same(d, false)).collect(),
            Padding::SameLower => (0..input.len()).map(|d| same(d, true)).collect(),
            Padding::Explicit(pairs) => pairs.clone(),
        }
    }
}

impl From<(&str, &str, &str)> for ConvDimensionNumbers {
    /// Parses JAX's string form, such as `("NCHW", "OIHW", "NCHW")` (see
    /// [`ConvDimensionNumbers::parse`]).
    ///
    /// # Panics
    ///
    /// Panics if the strings are malformed.
    #[track_caller]
    fn from((lhs, rhs, out): (&str, &str, &str)) -> ConvDimensionNumbers {
        match ConvDimensionNumbers::parse(lhs, rhs, out) {
            Ok(numbers) => numbers,
            Err(e) => panic!("conv_general_dilated: {e}"),
        }
    }
}

/// The optional arguments of [`conv_general_dilated`], with JAX's defaults: no dilation, the
/// dimension numbers `NCHW`/`OIHW`/`NCHW` (for the operands' rank), one feature group and one
/// batch group.
///
/// Build it with its methods, or convert dimension numbers into it directly:
///
/// ```
/// use rjax_runtime::lax::ConvOptions;
/// let nhwc = ConvOptions::from(("NHWC", "HWIO", "NHWC"));
/// let dilated = ConvOptions::default().rhs_dilation([2, 2]).dimension_numbers(("NHWC", "HWIO", "NHWC"));
/// assert_eq!(dilated.dimension_numbers, nhwc.dimension_numbers);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvOptions {
    /// Input dilation per spatial dimension (a transposed convolution); `None`: all 1.
    pub lhs_dilation: Option<Vec<usize>>,
    /// Kernel dilation per spatial dimension (an atrous convolution); `None`: all 1.
    pub rhs_dilation: Option<Vec<usize>>,
    /// Where the operands keep their dimensions; `None`: `NCHW`/`OIHW`/`NCHW`.
    pub dimension_numbers: Option<ConvDimensionNumbers>,
    /// Groups the input features are split into (depthwise convolutions use one per feature).
    pub feature_group_count: usize,
    /// Groups the input batch is split into.
    pub batch_group_count: usize,
}

impl Default for ConvOptions {
    fn default() -> ConvOptions {
        ConvOptions {
            lhs_dilation: None,
            rhs_dilation: None,
            dimension_numbers: None,
            feature_group_count: 1,
            batch_group_count: 1,
        }
    }
}

impl ConvOptions {
    /// With this input dilation.
    #[track_caller]
    pub fn lhs_dilation(mut self, dilation: impl AsRef<[usize]>) -> ConvOptions {
        self.lhs_dilation = Some(dilation.as_ref().to_vec());
        self
    }

    /// With this kernel dilation.
    #[track_caller]
    pub fn rhs_dilation(mut self, dilation: impl AsRef<[usize]>) -> ConvOptions {
        self.rhs_dilation = Some(dilation.as_ref().to_vec());
        self
    }

    /// With these dimension numbers (a [`ConvDimensionNumbers`] or JAX's three strings).
    #[track_caller]
    pub fn dimension_numbers(mut self, numbers: impl Into<ConvDimensionNumbers>) -> ConvOptions {
        self.dimension_numbers = Some(numbers.into());
        self
    }

    /// With this many feature groups.
    #[track_caller]
    pub fn feature_group_count(mut self, count: usize) -> ConvOptions {
        self.feature_group_count = count;
        self
    }

    /// With this many batch groups.
    #[track_caller]
    pub fn batch_group_count(mut self, count: usize) -> ConvOptions {
        self.batch_group_count = count;
        self
    }
}

impl From<ConvDimensionNumbers> for ConvOptions {
    fn from(numbers: ConvDimensionNumbers) -> ConvOptions {
        ConvOptions { dimension_numbers: Some(numbers), ..ConvOptions::default() }
    }
}

impl From<(&str, &str, &str)> for ConvOptions {
    /// The defaults with these dimension numbers.
    #[track_caller]
    fn from(numbers: (&str, &str, &str)) -> ConvOptions {
        ConvOptions::default().dimension_numbers(numbers)
    }
}

/// `lax.conv_general_dilated(lhs, rhs, window_strides, padding, ...)`: the general
/// convolution, with the optional arguments in `options` ([`ConvOptions`], or just the
/// dimension numbers).
///
/// Under the default dimension numbers `lhs` is `(batch, in features, spatial...)`, `rhs`
/// `(out features, in features / feature_group_count, spatial...)` and the result
/// `(batch, out features, spatial...)`. `window_strides` and explicit padding have one entry
/// per spatial dimension, in the order the kernel's dimension numbers list them. String
/// padding is for undilated inputs only, as in JAX. Differentiable in both operands and
/// batchable in either.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let x = jnp::arange(16.0).reshape([1, 1, 4, 4]);
/// let k = jnp::ones([1, 1, 2, 2]);
/// let y = lax::conv_general_dilated(&x, &k, [2, 2], "VALID", lax::ConvOptions::default());
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![10.0, 18.0, 42.0, 50.0]);
///
/// // Channels last: (N, H, W, C) input, (H, W, I, O) kernel.
/// let x = jnp::ones([2, 5, 5, 3]);
/// let k = jnp::ones([3, 3, 3, 8]);
/// let y = lax::conv_general_dilated(&x, &k, [1, 1], "SAME", ("NHWC", "HWIO", "NHWC"));
/// assert_eq!(y.shape(), &[2, 5, 5, 8]);
/// ```
///
/// # Panics
///
/// Panics, naming the operation and the operands' shapes, on operands of different dtypes or
/// ranks, on parameters of the wrong length, on malformed dimension numbers, on features that
/// the groups do not divide, and on windows larger than the padded input.
#[track_caller]
pub fn conv_general_dilated(
    lhs: &Array,
    rhs: &Array,
    window_strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
    options: impl Into<ConvOptions>,
) -> Array {
    let (padding, options) = (padding.into(), options.into());
    // A match, not a closure: the panic must point at the caller's line.
    let prim = match primitive(lhs, rhs, window_strides.as_ref(), &padding, options) {
        Ok(prim) => prim,
        Err(e) => {
            panic!("conv_general_dilated: {e}; got lhs {} and rhs {}", lhs.aval(), rhs.aval())
        }
    };
    bind1(&prim, &[lhs, rhs])
}

/// `lax.conv(lhs, rhs, window_strides, padding)`: [`conv_general_dilated`] with the default
/// options (`NCHW` input, `OIHW` kernel, no dilation, no groups).
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// let y = lax::conv(&jnp::ones([1, 2, 6]), &jnp::ones([4, 2, 3]), [2], "SAME");
/// assert_eq!(y.shape(), &[1, 4, 3]);
/// assert_eq!(y.to_vec::<f32>().unwrap()[..3], [6.0, 6.0, 4.0]);
/// ```
#[track_caller]
pub fn conv(
    lhs: &Array,
    rhs: &Array,
    window_strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
) -> Array {
    conv_general_dilated(lhs, rhs, window_strides, padding, ConvOptions::default())
}

/// `lax.conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation,
/// rhs_dilation)`: [`conv_general_dilated`] with dilations and the default dimension numbers.
///
/// ```
/// use rjax_runtime::{jnp, lax};
/// // A transposed convolution: the input dilated by 2, then a full 3-wide window.
/// let y = lax::conv_with_general_padding(&jnp::ones([1, 1, 3]), &jnp::ones([1, 1, 3]), [1], [(2, 2)], [2], [1]);
/// assert_eq!(y.to_vec::<f32>().unwrap(), vec![1.0, 1.0, 2.0, 1.0, 2.0, 1.0, 1.0]);
/// ```
#[track_caller]
pub fn conv_with_general_padding(
    lhs: &Array,
    rhs: &Array,
    window_strides: impl AsRef<[usize]>,
    padding: impl Into<Padding>,
    lhs_dilation: impl AsRef<[usize]>,
    rhs_dilation: impl AsRef<[usize]>,
) -> Array {
    let options = ConvOptions::default().lhs_dilation(lhs_dilation).rhs_dilation(rhs_dilation);
    conv_general_dilated(lhs, rhs, window_strides, padding, options)
}

/// The primitive for these arguments, or what is wrong with them.
#[track_caller]
fn primitive(
    lhs: &Array,
    rhs: &Array,
    window_strides: &[usize],
    padding: &Padding,
    options: ConvOptions,
) -> Result<ConvGeneralDilated, String> {
    let rank = lhs.ndim();
    if rank != rhs.ndim() || rank < 2 {
        return Err("lhs and rhs must have the same rank, at least 2 (batch and features)".into());
    }
    let numbers =
        options.dimension_numbers.unwrap_or_else(|| ConvDimensionNumbers::canonical(rank));
    if numbers.lhs_spec.len() != rank {
        return Err(format!(
            "the dimension numbers are for rank {}, the operands have rank {rank}",
            numbers.lhs_spec.len()
        ));
    }
    let spatial = rank - 2;
    let ones = || vec![1; spatial];
    let lhs_dilation = options.lhs_dilation.unwrap_or_else(ones);
    let rhs_dilation = options.rhs_dilation.unwrap_or_else(ones);
    let lengths = [
        ("window_strides", window_strides.len()),
        ("lhs_dilation", lhs_dilation.len()),
        ("rhs_dilation", rhs_dilation.len()),
    ];
    for (name, len) in lengths.into_iter().chain(explicit_len(padding)) {
        if len != spatial {
            return Err(format!(
                "{name} needs {spatial} entries (one per spatial dimension), got {len}"
            ));
        }
    }
    let padding =
        resolve_padding(padding, lhs, rhs, &numbers, window_strides, &lhs_dilation, &rhs_dilation)?;
    Ok(ConvGeneralDilated {
        window_strides: window_strides.to_vec(),
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers: numbers,
        feature_group_count: options.feature_group_count,
        batch_group_count: options.batch_group_count,
    })
}

#[track_caller]
fn explicit_len(padding: &Padding) -> Option<(&'static str, usize)> {
    match padding {
        Padding::Explicit(pairs) => Some(("padding", pairs.len())),
        _ => None,
    }
}

/// Explicit padding for the operands, as JAX's `padtype_to_pads` computes it.
#[track_caller]
fn resolve_padding(
    padding: &Padding,
    lhs: &Array,
    rhs: &Array,
    numbers: &ConvDimensionNumbers,
    strides: &[usize],
    lhs_dilation: &[usize],
    rhs_dilation: &[usize],
) -> Result<Vec<(i64, i64)>, String> {
    if let Padding::Explicit(pairs) = padding {
        return Ok(pairs.clone());
    }
    if lhs_dilation.iter().any(|&d| d != 1) {
        return Err(format!(
            "{padding:?} padding is not defined for an input dilation of {lhs_dilation:?}; give \
             the padding explicitly"
        ));
    }
    if strides.contains(&0) {
        return Err(format!("window_strides {strides:?} must be positive"));
    }
    let (ls, rs) = (&numbers.lhs_spec, &numbers.rhs_spec);
    let in_range = |spec: &[usize]| spec.iter().all(|&a| a < lhs.ndim());
    if !in_range(ls) || !in_range(rs) {
        // The primitive's shape rule reports malformed dimension numbers.
        return Ok(vec![(0, 0); strides.len()]);
    }
    let input: Vec<usize> = ls[2..].iter().map(|&a| lhs.shape()[a]).collect();
    let window: Vec<usize> = rs[2..]
        .iter()
        .zip(rhs_dilation)
        .map(|(&a, &d)| match rhs.shape()[a] {
            0 => Some(0),
            k => (k - 1)
                .checked_mul(d)
                .and_then(|w| w.checked_add(1))
                .filter(|&w| w <= i64::MAX as usize),
        })
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| {
            format!(
                "the kernel's window, dilated by rhs_dilation {rhs_dilation:?}, spans more \
                 positions than can be indexed (i64::MAX)"
            )
        })?;
    Ok(padding.pairs(&input, &window, strides))
}
