//! `conv_general_dilated`: XLA's general convolution (JAX's `lax.conv_general_dilated`), with
//! its shape rule, CPU evaluation, jvp, transposes and batching rule.
//!
//! Ignoring the spatial dimensions a convolution contracts like a matrix product, `[n, c] x
//! [c, o] -> [n, o]`, so its rules are those of one: the jvp is bilinear, the input's cotangent
//! is a convolution of the output's cotangent with the (spatially flipped) kernel, and the
//! kernel's cotangent a convolution of the input with the output's cotangent. Feature groups
//! (`[n, g c] x [c, g o] -> [n, g o]`) turn into batch groups when the roles are exchanged, and
//! back, which is why the primitive carries both counts.

use super::{bind1, describe, expect_arity, tuple, Aval, Primitive, Rev};
use crate::array::Array;
use crate::exec::cpu::conv::{conv, ConvGeometry};
use crate::shape::contiguous_strides;
use crate::transform::ad::ops::{self, reshape, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{move_axis, one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// Where a convolution's operands and output keep their dimensions (JAX's
/// `ConvDimensionNumbers`): `lhs_spec` lists the input's batch axis, feature axis, then its
/// spatial axes; `rhs_spec` the kernel's output-feature axis, input-feature axis, then its
/// spatial axes; `out_spec` the output's batch axis, feature axis, then its spatial axes.
/// Spatial dimension `i` is the `i`-th of each list, and window strides, padding and dilations
/// are given in that order.
///
/// `("NCHW", "OIHW", "NCHW")` converts into this (as in JAX, spatial dimensions are matched by
/// letter and ordered as the kernel's string lists them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvDimensionNumbers {
    pub lhs_spec: Vec<usize>,
    pub rhs_spec: Vec<usize>,
    pub out_spec: Vec<usize>,
}

impl ConvDimensionNumbers {
    /// The default for operands of `rank`: `(N, C, spatial...)`, `(O, I, spatial...)`,
    /// `(N, C, spatial...)`, i.e. `NCHW`/`OIHW`/`NCHW` in two dimensions.
    pub fn canonical(rank: usize) -> ConvDimensionNumbers {
        let iota: Vec<usize> = (0..rank).collect();
        ConvDimensionNumbers { lhs_spec: iota.clone(), rhs_spec: iota.clone(), out_spec: iota }
    }

    /// Parses JAX's string form, such as `("NHWC", "HWIO", "NHWC")`: `N` and `C` mark the
    /// input's and output's batch and feature dimensions, `O` and `I` the kernel's output and
    /// input features, and every other letter a spatial dimension shared by all three.
    pub fn parse(lhs: &str, rhs: &str, out: &str) -> Result<ConvDimensionNumbers, String> {
        let specs = [(lhs, ['N', 'C']), (rhs, ['O', 'I']), (out, ['N', 'C'])];
        let spatial = |s: &str, pair: [char; 2]| -> Vec<char> {
            let mut v: Vec<char> = s.chars().filter(|c| !pair.contains(c)).collect();
            v.sort_unstable();
            v
        };
        for (i, (s, pair)) in specs.iter().enumerate() {
            let mut chars: Vec<char> = s.chars().collect();
            let once = pair.iter().all(|p| chars.iter().filter(|c| *c == p).count() == 1);
            chars.sort_unstable();
            chars.dedup();
            if !once || chars.len() != s.chars().count() {
                return Err(format!(
                    "dimension_numbers[{i}] {s:?} must hold '{}' and '{}' exactly once and no \
                     letter twice",
                    pair[0], pair[1]
                ));
            }
            if spatial(s, *pair) != spatial(rhs, ['O', 'I']) {
                return Err(format!(
                    "dimension_numbers ({lhs:?}, {rhs:?}, {out:?}) must name the same spatial \
                     dimensions in all three"
                ));
            }
        }
        let kernel_spatial: Vec<char> = rhs.chars().filter(|c| !"OI".contains(*c)).collect();
        let perm = |s: &str, pair: [char; 2]| -> Vec<usize> {
            let at = |c: char| s.chars().position(|x| x == c).expect("checked above");
            let mut perm = vec![at(pair[0]), at(pair[1])];
            perm.extend(kernel_spatial.iter().map(|&c| at(c)));
            perm
        };
        Ok(ConvDimensionNumbers {
            lhs_spec: perm(lhs, ['N', 'C']),
            rhs_spec: perm(rhs, ['O', 'I']),
            out_spec: perm(out, ['N', 'C']),
        })
    }

    /// The same with each spec's first two entries exchanged (batch and features of the
    /// input and output, output and input features of the kernel), as the transposes use.
    fn swapped(spec: &[usize]) -> Vec<usize> {
        let mut s = spec.to_vec();
        s.swap(0, 1);
        s
    }

    fn check(&self, rank: usize) -> Result<(), String> {
        let specs = [("lhs_spec", &self.lhs_spec), ("rhs_spec", &self.rhs_spec)];
        for (name, spec) in specs.into_iter().chain([("out_spec", &self.out_spec)]) {
            if !super::shape_ops::is_permutation(spec, rank) {
                return Err(format!(
                    "dimension_numbers {name} {} must order the {rank} axes of the operands",
                    tuple(spec)
                ));
            }
        }
        Ok(())
    }
}

/// `conv_general_dilated(lhs, rhs)`: slides the kernel `rhs` over the spatial dimensions of
/// `lhs` (XLA's `Conv`). The input is dilated (`lhs_dilation - 1` zeros between elements),
/// padded (`padding[i] = (low, high)`, negative crops), and for each output position the
/// window of the dilated kernel (`rhs_dilation`) is contracted with it over the input
/// features, the window moving by `window_strides`. `feature_group_count` splits the input
/// features and the kernel's output features into that many groups convolved separately;
/// `batch_group_count` does the same with the input's batch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConvGeneralDilated {
    pub window_strides: Vec<usize>,
    pub padding: Vec<(i64, i64)>,
    pub lhs_dilation: Vec<usize>,
    pub rhs_dilation: Vec<usize>,
    pub dimension_numbers: ConvDimensionNumbers,
    pub feature_group_count: usize,
    pub batch_group_count: usize,
}

/// `(size - 1) * dilation + 1`: the extent of `size` elements with `dilation - 1` zeros between
/// neighbours (0 stays 0).
fn dilate(size: usize, dilation: usize) -> usize {
    if size == 0 {
        0
    } else {
        (size - 1) * dilation + 1
    }
}

/// The extents of the spatial dimensions of `shape`, whose axes `spec` lists (batch/feature
/// axes first).
fn spatial(spec: &[usize], shape: &[usize]) -> Vec<usize> {
    spec[2..].iter().map(|&a| shape[a]).collect()
}

impl ConvGeneralDilated {
    fn specs(&self) -> (&[usize], &[usize], &[usize]) {
        let d = &self.dimension_numbers;
        (&d.lhs_spec, &d.rhs_spec, &d.out_spec)
    }

    /// Checks the parameters against operands of `rank`.
    fn check_params(&self, rank: usize) -> Result<(), String> {
        self.dimension_numbers.check(rank)?;
        let n = rank - 2;
        let lengths = [
            ("window_strides", self.window_strides.len()),
            ("padding", self.padding.len()),
            ("lhs_dilation", self.lhs_dilation.len()),
            ("rhs_dilation", self.rhs_dilation.len()),
        ];
        for (name, len) in lengths {
            if len != n {
                return Err(format!(
                    "{name} has {len} entries, but the operands have {n} spatial dimensions"
                ));
            }
        }
        let positive = [
            ("window_strides", &self.window_strides),
            ("lhs_dilation", &self.lhs_dilation),
            ("rhs_dilation", &self.rhs_dilation),
        ];
        for (name, values) in positive {
            if values.contains(&0) {
                return Err(format!("{name} {} must be positive", tuple(values)));
            }
        }
        let (fg, bg) = (self.feature_group_count, self.batch_group_count);
        if fg == 0 || bg == 0 {
            return Err(format!(
                "feature_group_count ({fg}) and batch_group_count ({bg}) must be positive"
            ));
        }
        if fg > 1 && bg > 1 {
            return Err(format!(
                "at most one of feature_group_count ({fg}) and batch_group_count ({bg}) may \
                 exceed 1"
            ));
        }
        Ok(())
    }

    /// Checks the features and batch against the group counts.
    fn check_groups(&self, lhs: &[usize], rhs: &[usize]) -> Result<(), String> {
        let (ls, rs, _) = self.specs();
        let (batch, features) = (lhs[ls[0]], lhs[ls[1]]);
        let (outs, ins) = (rhs[rs[0]], rhs[rs[1]]);
        let (fg, bg) = (self.feature_group_count, self.batch_group_count);
        if !features.is_multiple_of(fg) {
            return Err(format!(
                "feature_group_count {fg} must divide the lhs's {features} features (axis {})",
                ls[1]
            ));
        }
        if features / fg != ins {
            return Err(format!(
                "the lhs's {features} features (axis {}) / feature_group_count {fg} must equal \
                 the rhs's {ins} input features (axis {})",
                ls[1], rs[1]
            ));
        }
        for (name, count) in [("feature_group_count", fg), ("batch_group_count", bg)] {
            if !outs.is_multiple_of(count) {
                return Err(format!(
                    "the rhs's {outs} output features (axis {}) must be a multiple of {name} \
                     {count}",
                    rs[0]
                ));
            }
        }
        if !batch.is_multiple_of(bg) {
            return Err(format!(
                "batch_group_count {bg} must divide the lhs's batch of {batch} (axis {})",
                ls[0]
            ));
        }
        Ok(())
    }

    /// The output extent of spatial dimension `d`, or why the window does not fit.
    ///
    /// Computed in `i128`, where no sum or product of these 64-bit values overflows; the
    /// dilated and padded input, the window's span and the output must each count at most
    /// `i64::MAX` positions, so that the kernels' position arithmetic (in `i64`) is exact.
    fn output_extent(&self, d: usize, input: usize, window: usize) -> Result<usize, String> {
        let (lo, hi) = self.padding[d];
        let dilate =
            |n: usize, by: usize| if n == 0 { 0 } else { (n as i128 - 1) * by as i128 + 1 };
        let dilated = dilate(input, self.lhs_dilation[d]);
        let padded = dilated + lo as i128 + hi as i128;
        let span = dilate(window, self.rhs_dilation[d]);
        let limit = i64::MAX as i128;
        if dilated > limit || padded > limit || span > limit {
            return Err(format!(
                "spatial dimension {d} is too long to index: the input of {input} elements, \
                 dilated by {} and padded by ({lo}, {hi}), spans {padded} positions, and the \
                 window of {window} dilated by {} spans {span}; at most {limit} are possible",
                self.lhs_dilation[d], self.rhs_dilation[d]
            ));
        }
        if padded < 0 {
            return Err(format!(
                "padding ({lo}, {hi}) of spatial dimension {d} crops more than its {dilated} \
                 input elements"
            ));
        }
        if span > padded {
            return Err(format!(
                "the kernel's window in spatial dimension {d} spans {span} elements (size \
                 {window}, rhs_dilation {}), more than the {padded} of the padded input",
                self.rhs_dilation[d]
            ));
        }
        Ok(((padded - span) / self.window_strides[d] as i128 + 1) as usize)
    }

    /// The convolution's geometry for operands of these shapes, or why they do not fit.
    fn geometry(&self, lhs: &[usize], rhs: &[usize]) -> Result<ConvGeometry, String> {
        self.check_groups(lhs, rhs)?;
        let (ls, rs, os) = self.specs();
        let (input, window) = (spatial(ls, lhs), spatial(rs, rhs));
        let output = (0..input.len())
            .map(|d| self.output_extent(d, input[d], window[d]))
            .collect::<Result<Vec<usize>, String>>()?;
        let strides = contiguous_strides(lhs);
        Ok(ConvGeometry {
            batch: lhs[ls[0]],
            in_features: lhs[ls[1]],
            out_features: rhs[rs[0]],
            feature_groups: self.feature_group_count,
            batch_groups: self.batch_group_count,
            lhs_strides: ls.iter().map(|&a| strides[a]).collect(),
            rhs_shape: rhs.to_vec(),
            rhs_spec: rs.to_vec(),
            out_spec: os.to_vec(),
            input,
            window,
            output,
            window_strides: self.window_strides.clone(),
            padding_lo: self.padding.iter().map(|p| p.0).collect(),
            lhs_dilation: self.lhs_dilation.clone(),
            rhs_dilation: self.rhs_dilation.clone(),
        })
    }

    /// The output shape of a geometry, laid out as `out_spec` says.
    fn out_shape(&self, g: &ConvGeometry) -> Vec<usize> {
        let canonical = [&[g.batch / g.batch_groups, g.out_features][..], &g.output].concat();
        let mut shape = vec![0; canonical.len()];
        for (j, &axis) in self.dimension_numbers.out_spec.iter().enumerate() {
            shape[axis] = canonical[j];
        }
        shape
    }
}

impl Primitive for ConvGeneralDilated {
    fn device_op(&self, inputs: &[Aval]) -> Option<crate::backend::DeviceOp> {
        let g = self.geometry(&inputs[0].shape, &inputs[1].shape).ok()?;
        let groups = g.feature_groups.max(g.batch_groups);
        let rhs_strides = contiguous_strides(&g.rhs_shape);
        let out_strides = contiguous_strides(&self.out_shape(&g));
        let windows = crate::backend::ConvWindows {
            out_batch: g.batch / g.batch_groups,
            out_features: g.out_features,
            group_in: g.in_features / g.feature_groups,
            group_out: g.out_features / groups,
            feature_grouped: g.feature_groups > 1,
            batch_grouped: g.batch_groups > 1,
            lhs_strides: g.lhs_strides.clone(),
            rhs_strides: g.rhs_spec.iter().map(|&a| rhs_strides[a]).collect(),
            out_strides: g.out_spec.iter().map(|&a| out_strides[a]).collect(),
            output: g.output,
            input: g.input,
            window: g.window,
            window_strides: g.window_strides,
            padding_lo: g.padding_lo,
            lhs_dilation: g.lhs_dilation,
            rhs_dilation: g.rhs_dilation,
        };
        Some(crate::backend::DeviceOp::Conv(Box::new(windows)))
    }

    fn name(&self) -> String {
        "conv_general_dilated".to_string()
    }

    fn params(&self) -> String {
        let (ls, rs, os) = self.specs();
        let pads: Vec<String> = self.padding.iter().map(|(l, h)| format!("({l}, {h})")).collect();
        format!(
            "batch_group_count={} dimension_numbers=ConvDimensionNumbers(lhs_spec={}, \
             rhs_spec={}, out_spec={}) feature_group_count={} lhs_dilation={} padding={} \
             rhs_dilation={} window_strides={}",
            self.batch_group_count,
            tuple(ls),
            tuple(rs),
            tuple(os),
            self.feature_group_count,
            tuple(&self.lhs_dilation),
            tuple(&pads),
            tuple(&self.rhs_dilation),
            tuple(&self.window_strides)
        )
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 2)?;
        let (lhs, rhs) = (&inputs[0], &inputs[1]);
        let operands = describe(inputs);
        if lhs.dtype != rhs.dtype {
            return Err(format!("lhs and rhs must have the same dtype, got {operands}"));
        }
        if !lhs.dtype.is_float() {
            return Err(format!("the operands must be floating-point, got {operands}"));
        }
        let rank = lhs.shape.len();
        if rank != rhs.shape.len() || rank < 2 {
            return Err(format!(
                "lhs and rhs must have the same rank, at least 2 (batch and features), got \
                 {operands}"
            ));
        }
        let geometry = self
            .check_params(rank)
            .and_then(|()| self.geometry(&lhs.shape, &rhs.shape))
            .map_err(|e| format!("{e}; got {operands}"))?;
        let shape = self.out_shape(&geometry);
        Ok(vec![Aval { shape, dtype: lhs.dtype, weak: lhs.weak && rhs.weak }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let (lhs, rhs) = (inputs[0], inputs[1]);
        let geometry =
            self.geometry(lhs.shape(), rhs.shape()).expect("the shape rule accepted these shapes");
        let buffer = conv(lhs.buffer(), rhs.buffer(), &geometry);
        vec![Array::from_buffer(&outputs[0].shape, buffer, outputs[0].weak)]
    }

    /// Bilinear: `conv(dx, k) + conv(x, dk)`.
    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        let (x, k) = (&primals[0], &primals[1]);
        let out = bind1(self, &[x, k]);
        let from_x = tangents[0].as_ref().map(|t| bind1(self, &[t, k]));
        let from_k = tangents[1].as_ref().map(|t| bind1(self, &[x, t]));
        Ok((vec![out], vec![ops::add_tangents(from_x, from_k)]))
    }

    fn transpose(&self, cts: &[Tangent], args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None, None]) };
        match (args[0].known(), args[1].known()) {
            (None, Some(k)) => Ok(vec![Some(self.transpose_lhs(ct, &args[0].aval(), k)), None]),
            (Some(x), None) => Ok(vec![None, Some(self.transpose_rhs(ct, x, &args[1].aval()))]),
            _ => Err("a convolution of two differentiated values is not linear".to_string()),
        }
    }

    fn batch(&self, args: &[Array], dims: &[BatchDim], axis: &BatchAxis) -> Batched {
        if axis.size == 0 {
            return self.batch_empty(args, dims);
        }
        match (dims[0], dims[1]) {
            (Some(l), Some(r)) => self.batch_both(&args[0], l, &args[1], r, axis.size),
            (Some(l), None) => self.batch_lhs(&args[0], l, &args[1], axis.size),
            (None, Some(r)) => self.batch_rhs(&args[0], &args[1], r, axis.size),
            (None, None) => unreachable!("batching rules run with a batched operand"),
        }
    }
}

/// `x` with axis `src` merged into axis `dst` (numbered without `src`), `src` the major part.
fn merge_axis(src: usize, dst: usize, x: &Array) -> Array {
    let moved = move_axis(x, src, dst);
    let mut shape = moved.shape().to_vec();
    let major = shape.remove(dst);
    shape[dst] *= major;
    reshape(&moved, &shape)
}

/// `x` with axis `axis` split into `(major, rest)`.
fn split_axis(axis: usize, major: usize, x: &Array) -> Array {
    let mut shape = x.shape().to_vec();
    let rest = shape[axis] / major;
    shape.splice(axis..=axis, [major, rest]);
    reshape(x, &shape)
}

/// The padding of the convolution giving the input's cotangent (the output's cotangent,
/// dilated by the strides, against the flipped kernel), per spatial dimension.
fn vjp_lhs_padding(
    c: &ConvGeneralDilated,
    input: &[usize],
    window: &[usize],
    out: &[usize],
) -> Vec<(i64, i64)> {
    (0..input.len())
        .map(|d| {
            let lhs = dilate(input[d], c.lhs_dilation[d]) as i64;
            let rhs = dilate(window[d], c.rhs_dilation[d]) as i64;
            let out = dilate(out[d], c.window_strides[d]) as i64;
            let before = rhs - c.padding[d].0 - 1;
            (before, lhs + rhs - 1 - out - before)
        })
        .collect()
}

/// The padding of the convolution giving the kernel's cotangent (the input against the
/// output's cotangent dilated by the strides), per spatial dimension.
fn vjp_rhs_padding(
    c: &ConvGeneralDilated,
    input: &[usize],
    window: &[usize],
    out: &[usize],
) -> Vec<(i64, i64)> {
    (0..input.len())
        .map(|d| {
            let lhs = dilate(input[d], c.lhs_dilation[d]) as i64;
            let rhs = dilate(window[d], c.rhs_dilation[d]) as i64;
            let out = dilate(out[d], c.window_strides[d]) as i64;
            let lo = c.padding[d].0;
            (lo, out - lhs + rhs - lo - 1)
        })
        .collect()
}

impl ConvGeneralDilated {
    /// The input's cotangent: the output's cotangent `ct` convolved with the kernel `rhs`
    /// flipped in space and with its feature roles exchanged, dilated by the forward strides
    /// (JAX's `_conv_general_dilated_transpose_lhs`).
    fn transpose_lhs(&self, ct: &Array, lhs: &Aval, rhs: &Array) -> Array {
        if lhs.shape.contains(&0) || ct.size() == 0 {
            return ops::zeros(lhs);
        }
        let (ls, rs, os) = self.specs();
        let groups = self.feature_group_count.max(self.batch_group_count);
        // Each group's kernel slice becomes the kernel of its own group of output features:
        // the group moves from the kernel's output features to its input features.
        let mut kernel = rhs.clone();
        if groups > 1 {
            kernel = merge_axis(rs[0], rs[1], &split_axis(rs[0], groups, &kernel));
        }
        if rs.len() > 2 {
            kernel = bind1(&Rev { dimensions: rs[2..].to_vec() }, &[&kernel]);
        }
        let padding = vjp_lhs_padding(
            self,
            &spatial(ls, &lhs.shape),
            &spatial(rs, rhs.shape()),
            &spatial(os, ct.shape()),
        );
        let conv = ConvGeneralDilated {
            window_strides: self.lhs_dilation.clone(),
            padding,
            lhs_dilation: self.window_strides.clone(),
            rhs_dilation: self.rhs_dilation.clone(),
            dimension_numbers: ConvDimensionNumbers {
                lhs_spec: os.to_vec(),
                rhs_spec: ConvDimensionNumbers::swapped(rs),
                out_spec: ls.to_vec(),
            },
            feature_group_count: groups,
            batch_group_count: 1,
        };
        let out = bind1(&conv, &[ct, &kernel]);
        if self.batch_group_count > 1 {
            // The batch groups came out as feature groups: put them back in the batch.
            let bg = self.batch_group_count;
            return merge_axis(ls[1], ls[0], &split_axis(ls[1], bg, &out));
        }
        out
    }

    /// The kernel's cotangent: the input `lhs` convolved with the output's cotangent `ct`,
    /// batch and features exchanged, feature groups becoming batch groups and back (JAX's
    /// `_conv_general_dilated_transpose_rhs`).
    fn transpose_rhs(&self, ct: &Array, lhs: &Array, rhs: &Aval) -> Array {
        if rhs.shape.contains(&0) || ct.size() == 0 {
            return ops::zeros(rhs);
        }
        let (ls, rs, os) = self.specs();
        let (fg, bg) = (self.feature_group_count, self.batch_group_count);
        let padding = vjp_rhs_padding(
            self,
            &spatial(ls, lhs.shape()),
            &spatial(rs, &rhs.shape),
            &spatial(os, ct.shape()),
        );
        let conv = ConvGeneralDilated {
            window_strides: self.rhs_dilation.clone(),
            padding,
            lhs_dilation: self.lhs_dilation.clone(),
            rhs_dilation: self.window_strides.clone(),
            dimension_numbers: ConvDimensionNumbers {
                lhs_spec: ConvDimensionNumbers::swapped(ls),
                rhs_spec: ConvDimensionNumbers::swapped(os),
                out_spec: ConvDimensionNumbers::swapped(rs),
            },
            feature_group_count: bg,
            batch_group_count: fg,
        };
        bind1(&conv, &[lhs, ct])
    }
}

impl ConvGeneralDilated {
    /// Both operands batched: the examples become feature groups (batch groups, when the
    /// convolution has them) of one convolution.
    fn batch_both(&self, lhs: &Array, l: usize, rhs: &Array, r: usize, size: usize) -> Batched {
        let (ls, rs, os) = self.specs();
        let mut conv = self.clone();
        let lhs = if self.batch_group_count > 1 {
            conv.batch_group_count *= size;
            merge_axis(l, ls[0], lhs)
        } else {
            conv.feature_group_count *= size;
            merge_axis(l, ls[1], lhs)
        };
        let out = bind1(&conv, &[&lhs, &merge_axis(r, rs[0], rhs)]);
        one(split_axis(os[1], size, &out), Some(os[1]))
    }

    /// A batched input: the examples join its batch, inside each batch group.
    fn batch_lhs(&self, lhs: &Array, l: usize, rhs: &Array, size: usize) -> Batched {
        let (ls, _, os) = self.specs();
        let bg = self.batch_group_count;
        let lhs = if bg == 1 {
            merge_axis(l, ls[0], lhs)
        } else {
            // [.., size, .., bg * n, ..] -> [.., bg, size * n, ..] -> [.., bg * size * n, ..]
            let split = split_axis(ls[0] + usize::from(l <= ls[0]), bg, lhs);
            let inner = merge_axis(l + usize::from(ls[0] < l), ls[0] + 1, &split);
            merge_axis(ls[0], ls[0], &inner)
        };
        let out = bind1(self, &[&lhs, rhs]);
        one(split_axis(os[0], size, &out), Some(os[0]))
    }

    /// A batched kernel: the examples join its output features, inside each group.
    fn batch_rhs(&self, lhs: &Array, rhs: &Array, r: usize, size: usize) -> Batched {
        let (_, rs, os) = self.specs();
        let groups = self.feature_group_count.max(self.batch_group_count);
        if groups == 1 {
            let out = bind1(self, &[lhs, &merge_axis(r, rs[0], rhs)]);
            return one(split_axis(os[1], size, &out), Some(os[1]));
        }
        // [.., size, .., g * o, ..] -> [.., g, size * o, ..] -> [.., g * size * o, ..]
        let split = split_axis(rs[0] + usize::from(r <= rs[0]), groups, rhs);
        let inner = merge_axis(r + usize::from(rs[0] < r), rs[0] + 1, &split);
        let out = bind1(self, &[lhs, &merge_axis(rs[0], rs[0], &inner)]);
        // The output's features come out as [g, size, o]: move the examples out in front.
        let out = split_axis(os[1] + 1, size, &split_axis(os[1], groups, &out));
        one(merge_axis(os[1], os[1] + 1, &out), Some(os[1]))
    }

    /// An empty batch: nothing to compute, only the shape of the result.
    fn batch_empty(&self, args: &[Array], dims: &[BatchDim]) -> Batched {
        let example = |x: &Array, d: BatchDim| {
            let mut aval = x.aval();
            if let Some(d) = d {
                aval.shape.remove(d);
            }
            aval
        };
        let avals = [example(&args[0], dims[0]), example(&args[1], dims[1])];
        let mut out = self.abstract_eval(&avals)?.remove(0);
        out.shape.insert(0, 0);
        one(ops::zeros(&out), Some(0))
    }
}
