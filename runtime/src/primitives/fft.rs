//! `fft`: discrete Fourier transforms over an array's trailing axes (JAX's `lax.fft`), run
//! with `rustfft` (complex transforms) and `realfft` (real-to-complex and back).
//!
//! The four kinds are JAX's: `FFT` and `IFFT` map complex arrays to complex arrays of the same
//! shape, `RFFT` maps a real array whose trailing axes are `fft_lengths` to the non-negative
//! frequencies (the last axis becomes `n / 2 + 1` long), and `IRFFT` maps those back to a real
//! array. The inverse transforms are scaled by `1 / prod(fft_lengths)`, as XLA's are.
//!
//! All four are linear. Their transposes are JAX's (whose convention pairs complex values
//! without conjugation): `FFT` and `IFFT` are their own transposes (the DFT matrix is
//! symmetric); `RFFT`'s is `N irfft(conj(ct) / mask)` and `IRFFT`'s is
//! `conj(mask rfft(ct)) / N`, where `mask` is 1 at the frequencies that appear once in the
//! full spectrum (0, and `n / 2` for even `n`) and 2 at the others.

use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use num_complex::Complex;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::{FftDirection, FftNum, FftPlanner};

use super::{bind1, expect_arity, Aval, Primitive};
use crate::array::{Array, Buffer};
use crate::dtype::{DType, Element};
use crate::exec::cpu::float_mode::Flushing;
use crate::exec::cpu::{alloc, pool};
use crate::shape::ShapeDisplay;
use crate::transform::ad::ops::{broadcast_to, convert, div, linear_jvp, mul, single_ct};
use crate::transform::ad::{LinearArg, Tangent};
use crate::transform::batch::ops::{move_axis, one, Batched};
use crate::transform::batch::{BatchAxis, BatchDim};

/// Which transform an [`Fft`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FftType {
    /// Forward complex-to-complex transform.
    Fft,
    /// Inverse complex-to-complex transform (scaled by `1 / N`).
    Ifft,
    /// Forward real-to-complex transform (the non-negative frequencies).
    Rfft,
    /// Inverse of [`FftType::Rfft`]: complex-to-real, scaled by `1 / N`.
    Irfft,
}

impl FftType {
    fn name(self) -> &'static str {
        match self {
            FftType::Fft => "FFT",
            FftType::Ifft => "IFFT",
            FftType::Rfft => "RFFT",
            FftType::Irfft => "IRFFT",
        }
    }
}

/// A discrete Fourier transform over the trailing `fft_lengths.len()` axes (1 to 3 of them).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fft {
    /// Which of the four transforms.
    pub fft_type: FftType,
    /// The transform's length along each trailing axis (for `IRFFT`, the output's lengths).
    pub fft_lengths: Vec<usize>,
}

impl Fft {
    /// The number of points the inverse transforms divide by.
    fn points(&self) -> usize {
        self.fft_lengths.iter().product()
    }

    /// Why `x` does not fit this transform, if it does not.
    fn check(&self, x: &Aval) -> Result<(), String> {
        let (k, lengths) = (self.fft_lengths.len(), &self.fft_lengths);
        if k == 0 || k > 3 {
            return Err(format!("expected 1 to 3 fft_lengths, got {lengths:?}"));
        }
        if k > x.shape.len() {
            return Err(format!("the operand {x} has fewer axes than fft_lengths {lengths:?}"));
        }
        if let Some(n) = lengths.iter().find(|&&n| n < 1) {
            return Err(format!("invalid number of FFT data points ({n}) in {lengths:?}"));
        }
        let minor = &x.shape[x.shape.len() - k..];
        let want_dtype = match self.fft_type {
            FftType::Rfft => matches!(x.dtype, DType::F32 | DType::F64),
            _ => x.dtype.is_complex(),
        };
        if !want_dtype {
            let wants = match self.fft_type {
                FftType::Rfft => "float32 or float64",
                _ => "complex64 or complex128",
            };
            return Err(format!("{} input must be {wants}, got {x}", self.fft_type.name()));
        }
        let fits = match self.fft_type {
            FftType::Irfft => {
                minor[..k - 1] == lengths[..k - 1] && minor[k - 1] == lengths[k - 1] / 2 + 1
            }
            _ => minor == &lengths[..],
        };
        if !fits {
            return Err(format!(
                "{} input {x}: its trailing axes {} do not fit fft_lengths {lengths:?}",
                self.fft_type.name(),
                ShapeDisplay(minor)
            ));
        }
        Ok(())
    }
}

impl Primitive for Fft {
    fn name(&self) -> String {
        "fft".to_string()
    }

    fn params(&self) -> String {
        format!("fft_type={} fft_lengths={:?}", self.fft_type.name(), self.fft_lengths)
    }

    fn abstract_eval(&self, inputs: &[Aval]) -> Result<Vec<Aval>, String> {
        expect_arity(inputs, 1)?;
        let x = &inputs[0];
        self.check(x)?;
        let mut shape = x.shape.clone();
        let last = shape.len() - 1;
        let dtype = match self.fft_type {
            FftType::Fft | FftType::Ifft => x.dtype,
            FftType::Rfft => {
                shape[last] = self.fft_lengths[self.fft_lengths.len() - 1] / 2 + 1;
                x.dtype.to_complex()
            }
            FftType::Irfft => {
                shape[last] = self.fft_lengths[self.fft_lengths.len() - 1];
                x.dtype.to_real()
            }
        };
        Ok(vec![Aval { shape, dtype, weak: false }])
    }

    fn eval(&self, inputs: &[&Array], outputs: &[Aval]) -> Vec<Array> {
        let x = inputs[0];
        let (lengths, k) = (&self.fft_lengths[..], self.fft_lengths.len());
        let buffer = match x.buffer() {
            Buffer::C64(v) => complex_input(self.fft_type, v, x.shape(), lengths),
            Buffer::C128(v) => complex_input(self.fft_type, v, x.shape(), lengths),
            Buffer::F32(v) => Complex::<f32>::wrap(rfft(v, x.shape(), k)),
            Buffer::F64(v) => Complex::<f64>::wrap(rfft(v, x.shape(), k)),
            _ => unreachable!("the shape rule admits complex or (for RFFT) real operands"),
        };
        vec![Array::from_buffer(&outputs[0].shape, buffer, false)]
    }

    fn jvp(
        &self,
        primals: &[Array],
        tangents: &[Tangent],
    ) -> Result<(Vec<Array>, Vec<Tangent>), String> {
        linear_jvp(self, primals, tangents)
    }

    fn transpose(&self, cts: &[Tangent], _args: &[LinearArg]) -> Result<Vec<Tangent>, String> {
        let Some(ct) = single_ct(cts) else { return Ok(vec![None]) };
        let back = match self.fft_type {
            FftType::Fft | FftType::Ifft => bind1(self, &[ct]),
            FftType::Rfft => {
                let inverse = Fft { fft_type: FftType::Irfft, ..self.clone() };
                let halved = div(&crate::primitives::complex::conj(ct), &self.mask(ct));
                let n = self.points() as f64;
                crate::transform::ad::ops::scale(&bind1(&inverse, &[&halved]), n)
            }
            FftType::Irfft => {
                let forward = Fft { fft_type: FftType::Rfft, ..self.clone() };
                let spectrum = mul(&bind1(&forward, &[ct]), &self.mask_like(ct));
                let scaled =
                    crate::transform::ad::ops::scale(&spectrum, 1.0 / self.points() as f64);
                crate::primitives::complex::conj(&scaled)
            }
        };
        Ok(vec![Some(back)])
    }

    /// The transform works on trailing axes, so the batch axis goes in front.
    fn batch(&self, args: &[Array], dims: &[BatchDim], _axis: &BatchAxis) -> Batched {
        let d = dims[0].expect("batching rules run with a batched operand");
        one(bind1(self, &[&move_axis(&args[0], d, 0)]), Some(0))
    }
}

impl Fft {
    /// The Hermitian mask over the half spectrum `spectrum` (complex, last axis `n / 2 + 1`),
    /// broadcast to its shape, in its dtype.
    fn mask(&self, spectrum: &Array) -> Array {
        let n = self.fft_lengths[self.fft_lengths.len() - 1];
        let m = n / 2 + 1;
        let values: Vec<f64> = (0..m)
            .map(|j| if j == 0 || (n.is_multiple_of(2) && j == m - 1) { 1.0 } else { 2.0 })
            .collect();
        let mask = convert(&Array::from_shape_vec([m], values), spectrum.dtype());
        broadcast_to(&mask, spectrum.shape())
    }

    /// [`Fft::mask`] for the spectrum of the real array `x` (the RFFT of `x`).
    fn mask_like(&self, x: &Array) -> Array {
        let mut shape = x.shape().to_vec();
        let last = shape.len() - 1;
        shape[last] = self.fft_lengths[self.fft_lengths.len() - 1] / 2 + 1;
        let like = crate::transform::ad::ops::zeros(&Aval {
            shape,
            dtype: x.dtype().to_complex(),
            weak: false,
        });
        self.mask(&like)
    }
}

/// A complex-input transform (`FFT`, `IFFT` or `IRFFT`) of `v` (of `shape`) over its last
/// `lengths.len()` axes.
fn complex_input<F: Float + Element>(
    fft_type: FftType,
    v: &[Complex<F>],
    shape: &[usize],
    lengths: &[usize],
) -> Buffer
where
    Complex<F>: Element,
{
    let (rank, k) = (shape.len(), lengths.len());
    // A pooled buffer: a fresh one of this size would page-fault in every page first.
    let mut data = pool::take(v.len());
    data.extend_from_slice(v);
    match fft_type {
        FftType::Fft | FftType::Ifft => {
            let direction = match fft_type {
                FftType::Fft => FftDirection::Forward,
                _ => FftDirection::Inverse,
            };
            for axis in rank - k..rank {
                along(&mut data, shape, axis, direction);
            }
            if fft_type == FftType::Ifft {
                scale_by_points(&mut data, shape[rank - k..].iter().product());
            }
            Complex::<F>::wrap(data)
        }
        FftType::Irfft => {
            for axis in rank - k..rank - 1 {
                along(&mut data, shape, axis, FftDirection::Inverse);
            }
            F::wrap(irfft_last(data, shape, lengths))
        }
        FftType::Rfft => unreachable!("RFFT takes a real operand"),
    }
}

/// Divides every element by `points`.
fn scale_by_points<F: FftNum>(data: &mut [Complex<F>], points: usize) {
    let s = F::one() / F::from_usize(points).expect("a count fits a float");
    data.par_iter_mut().flushing().for_each(|z| *z = *z * s);
}

/// The element types the transforms run in (`f32` and `f64`), each with the process's
/// planners.
trait Float: FftNum {
    /// Planning a length (choosing its algorithm, computing its twiddle factors) costs about
    /// as much as one transform of that length, so the planners live as long as the process
    /// and keep every plan they made for the transforms that follow.
    fn planners() -> &'static Planners<Self>;
}

/// One complex and one real planner.
struct Planners<F: FftNum> {
    complex: Mutex<FftPlanner<F>>,
    real: Mutex<RealFftPlanner<F>>,
}

impl<F: FftNum> Planners<F> {
    fn new() -> Self {
        Planners { complex: Mutex::new(FftPlanner::new()), real: Mutex::new(RealFftPlanner::new()) }
    }
}

impl Float for f32 {
    fn planners() -> &'static Planners<f32> {
        static PLANNERS: LazyLock<Planners<f32>> = LazyLock::new(Planners::new);
        &PLANNERS
    }
}

impl Float for f64 {
    fn planners() -> &'static Planners<f64> {
        static PLANNERS: LazyLock<Planners<f64>> = LazyLock::new(Planners::new);
        &PLANNERS
    }
}

/// The complex transform of `n` points in direction `dir`.
fn complex_plan<F: Float>(n: usize, dir: FftDirection) -> Arc<dyn rustfft::Fft<F>> {
    // A panic while planning leaves the planner's caches as they were: safe to use.
    let mut planner = F::planners().complex.lock().unwrap_or_else(PoisonError::into_inner);
    planner.plan_fft(n, dir)
}

/// The real-to-complex transform of `n` points.
fn real_forward_plan<F: Float>(n: usize) -> Arc<dyn RealToComplex<F>> {
    F::planners().real.lock().unwrap_or_else(PoisonError::into_inner).plan_fft_forward(n)
}

/// The complex-to-real transform of `n` points.
fn real_inverse_plan<F: Float>(n: usize) -> Arc<dyn ComplexToReal<F>> {
    F::planners().real.lock().unwrap_or_else(PoisonError::into_inner).plan_fft_inverse(n)
}

/// How many lines of `n` points one parallel task transforms: about 32K points, enough to
/// outweigh handing the task to a thread.
fn lines_per_task(n: usize) -> usize {
    (1usize << 15).div_ceil(n.max(1))
}

/// `len` complex zeros, in a fallibly allocated buffer.
#[track_caller]
fn zeros<F: FftNum>(len: usize) -> Vec<Complex<F>> {
    alloc::filled(len, Complex::new(F::zero(), F::zero()))
}

/// The unnormalized 1-d transforms of the consecutive lines of `n` points in `data`, in
/// place, spread over the threads.
fn lines<F: Float>(data: &mut [Complex<F>], n: usize, dir: FftDirection) {
    let plan = complex_plan::<F>(n, dir);
    let scratch = plan.get_inplace_scratch_len();
    data.par_chunks_mut(n * lines_per_task(n)).flushing().for_each_init(
        || zeros(scratch),
        |scratch, chunk| plan.process_with_scratch(chunk, scratch),
    );
}

/// `dst` (`cols x rows`, row-major) becomes the transpose of `src` (`rows x cols`).
fn transpose<T: Copy + Send + Sync>(src: &[T], dst: &mut [T], rows: usize, cols: usize) {
    dst.par_chunks_mut(rows).enumerate().flushing().for_each(|(c, line)| {
        for (r, d) in line.iter_mut().enumerate() {
            *d = src[r * cols + c];
        }
    });
}

/// The unnormalized 1-d transform of every line of `data` (of `shape`) along `axis`, in place.
fn along<F: Float>(data: &mut [Complex<F>], shape: &[usize], axis: usize, dir: FftDirection)
where
    Complex<F>: Element,
{
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    if data.is_empty() || n == 0 {
        return;
    }
    if inner == 1 {
        return lines(data, n, dir);
    }
    // The lines along an inner axis are strided: each block `[n, inner]` is transposed so
    // that they are consecutive, transformed, and transposed back.
    let mut lined = pool::take_for_overwrite(data.len(), Complex::new(F::zero(), F::zero()));
    for (block, out) in data.chunks_exact(n * inner).zip(lined.chunks_exact_mut(n * inner)) {
        transpose(block, out, n, inner);
    }
    lines(&mut lined, n, dir);
    for (block, out) in lined.chunks_exact(n * inner).zip(data.chunks_exact_mut(n * inner)) {
        transpose(block, out, inner, n);
    }
    // Back to the pool for the next transform.
    drop(Complex::<F>::wrap(lined));
}

/// `RFFT` of the real `v` (of `shape`) over its last `k` axes.
fn rfft<F: Float>(v: &[F], shape: &[usize], k: usize) -> Vec<Complex<F>>
where
    Complex<F>: Element,
{
    let rank = shape.len();
    let n = shape[rank - 1];
    let m = n / 2 + 1;
    let rows = v.len() / n.max(1);
    // Every spectrum is written whole below, so a pooled buffer need not be cleared first.
    let mut out = pool::take_for_overwrite(rows * m, Complex::new(F::zero(), F::zero()));
    if !v.is_empty() {
        let plan = real_forward_plan::<F>(n);
        let per_task = lines_per_task(n);
        v.par_chunks(n * per_task).zip(out.par_chunks_mut(m * per_task)).flushing().for_each_init(
            || (alloc::filled(n, F::zero()), zeros(plan.get_scratch_len())),
            |(input, scratch), (signals, spectra)| {
                for (row, spectrum) in signals.chunks_exact(n).zip(spectra.chunks_exact_mut(m)) {
                    // The transform uses its input as scratch space: `v` stays unchanged.
                    input.copy_from_slice(row);
                    plan.process_with_scratch(input, spectrum, scratch)
                        .expect("buffers of the planned lengths");
                }
            },
        );
    }
    let mut half = shape.to_vec();
    half[rank - 1] = m;
    for axis in rank - k..rank - 1 {
        along(&mut out, &half, axis, FftDirection::Forward);
    }
    out
}

/// The unnormalized complex-to-real transform of the last axis of `data` (of `shape`, whose
/// last axis is `n / 2 + 1` long for `n = lengths[-1]`), divided by the points of all the
/// transformed axes (`prod(lengths)`).
fn irfft_last<F: Float>(mut data: Vec<Complex<F>>, shape: &[usize], lengths: &[usize]) -> Vec<F> {
    let m = shape[shape.len() - 1];
    let n = lengths[lengths.len() - 1];
    let rows = data.len() / m;
    let mut out = alloc::filled(rows * n, F::zero());
    if out.is_empty() {
        return out;
    }
    let plan = real_inverse_plan::<F>(n);
    let points: usize = lengths.iter().product();
    let s = F::one() / F::from_usize(points).expect("a count fits a float");
    let per_task = lines_per_task(n);
    data.par_chunks_mut(m * per_task)
        .zip(out.par_chunks_mut(n * per_task))
        .flushing()
        .for_each_init(
            || zeros(plan.get_scratch_len()),
            |scratch, (spectra, signals)| {
                for (spectrum, row) in spectra.chunks_exact_mut(m).zip(signals.chunks_exact_mut(n))
                {
                    // A real signal's spectrum is real at 0 (and at n / 2 for even n): the
                    // imaginary parts there do not contribute, as in XLA.
                    spectrum[0].im = F::zero();
                    if n.is_multiple_of(2) {
                        spectrum[m - 1].im = F::zero();
                    }
                    plan.process_with_scratch(spectrum, row, scratch)
                        .expect("buffers of the planned lengths, real end points");
                    for x in row.iter_mut() {
                        *x = *x * s;
                    }
                }
            },
        );
    out
}
