//! NumPy-style printing: `Display` is `str(np_array)` (plus the dtype when it is not `float32`),
//! `Debug` is JAX's `repr` (`Array([1., 2.], dtype=float32)`).

use std::fmt;

use super::Array;
use crate::dtype::{DType, Element};

/// Arrays with more elements than this print the first and last 3 entries of each axis.
const SUMMARIZE_ABOVE: usize = 1000;
const EDGE_ITEMS: usize = 3;
/// Most fractional digits shown, as NumPy's default `precision=8`.
const PRECISION: usize = 8;

impl fmt::Display for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_traced() {
            return write_tracer(f, self);
        }
        let cells = match format_elements(self) {
            Ok(cells) => cells,
            Err(e) => return write!(f, "<{e}>"),
        };
        write_nested(f, self.shape(), &cells, 0, 0, self.size() > SUMMARIZE_ABOVE, " ")?;
        if self.dtype() != DType::F32 {
            write!(f, " dtype={}", self.dtype())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Array {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_traced() {
            return write_tracer(f, self);
        }
        let cells = match format_elements(self) {
            Ok(cells) => cells,
            Err(e) => return write!(f, "Array(<{e}>, dtype={})", self.dtype()),
        };
        f.write_str("Array(")?;
        write_nested(f, self.shape(), &cells, 0, 6, self.size() > SUMMARIZE_ABOVE, ", ")?;
        write!(f, ", dtype={}", self.dtype())?;
        if self.is_weak() {
            f.write_str(", weak_type=True")?;
        }
        f.write_str(")")
    }
}

/// A traced array has no values to show: JAX prints `Traced<float32[3]>`.
fn write_tracer(f: &mut fmt::Formatter<'_>, a: &Array) -> fmt::Result {
    write!(f, "Traced<{}>", a.aval())
}

/// Every element formatted and aligned to a common width, as NumPy does (copied from the
/// device first for an array on a GPU, which can fail).
fn format_elements(a: &Array) -> Result<Vec<String>, crate::Error> {
    use crate::array::Buffer;
    let host = a.host_buffer()?;
    let raw: Vec<String> = match &*host {
        Buffer::Bool(v) => v.iter().map(|&b| bool_text(b)).collect(),
        Buffer::F16(v) => format_floats(v),
        Buffer::BF16(v) => format_floats(v),
        Buffer::F32(v) => format_floats(v),
        Buffer::F64(v) => format_floats(v),
        Buffer::C64(v) => format_complex(v),
        Buffer::C128(v) => format_complex(v),
        other => {
            crate::with_buffer!(other, |v: T| v.iter().map(|x: &T| format!("{x:?}")).collect())
        }
    };
    let width = raw.iter().map(String::len).max().unwrap_or(0);
    Ok(raw.into_iter().map(|s| format!("{s:>width$}")).collect())
}

/// NumPy's complex style, `1.+2.j`: the real parts formatted as floats, then the imaginary
/// parts (formatted together) with their sign.
fn format_complex<F>(values: &[num_complex::Complex<F>]) -> Vec<String>
where
    F: Element + fmt::Display + fmt::LowerExp,
{
    let re: Vec<F> = values.iter().map(|z| z.re).collect();
    let im: Vec<F> = values.iter().map(|z| z.im).collect();
    let (re, im) = (format_floats(&re), format_floats(&im));
    re.iter()
        .zip(&im)
        .map(|(r, i)| {
            let i = i.trim();
            let sign = if i.starts_with('-') { "" } else { "+" };
            format!("{}{sign}{i}j", r.trim())
        })
        .collect()
}

fn bool_text(b: bool) -> String {
    if b { "True" } else { "False" }.to_string()
}

/// NumPy's float style: the shortest text that round-trips in the element's own precision,
/// decimal points aligned; scientific notation when magnitudes are very large, very small or
/// spread over more than three decades.
fn format_floats<T: Element + fmt::Display + fmt::LowerExp>(values: &[T]) -> Vec<String> {
    let finite: Vec<f64> = values.iter().map(|v| v.to_f64()).filter(|v| v.is_finite()).collect();
    let abs_nonzero: Vec<f64> = finite.iter().map(|v| v.abs()).filter(|v| *v != 0.0).collect();
    let max = abs_nonzero.iter().fold(0.0f64, |m, v| m.max(*v));
    let min = abs_nonzero.iter().fold(f64::INFINITY, |m, v| m.min(*v));
    let scientific = !abs_nonzero.is_empty() && (max >= 1e8 || min < 1e-4 || max / min > 1e3);
    let texts: Vec<Option<(String, String, String)>> = values
        .iter()
        .map(|v| {
            if !v.to_f64().is_finite() {
                return None;
            }
            let s = if scientific { format!("{v:e}") } else { format!("{v}") };
            // NumPy shows at most 8 fractional digits (of the mantissa, in scientific mode).
            let s = match s.split_once('.') {
                Some((_, frac)) if frac.split('e').next().unwrap().len() > PRECISION => {
                    let rounded = if scientific {
                        format!("{v:.PRECISION$e}")
                    } else {
                        format!("{v:.PRECISION$}")
                    };
                    trim_fraction_zeros(&rounded)
                }
                _ => s,
            };
            let (mantissa, exponent) = match s.split_once('e') {
                Some((m, e)) => (m.to_string(), format_exponent(e)),
                None => (s, String::new()),
            };
            let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
            Some((int.to_string(), frac.to_string(), exponent))
        })
        .collect();
    let frac_width = texts.iter().flatten().map(|(_, f, _)| f.len()).max().unwrap_or(0);
    let int_width = texts.iter().flatten().map(|(i, _, _)| i.len()).max().unwrap_or(0);
    values
        .iter()
        .zip(texts)
        .map(|(v, t)| match t {
            None => non_finite_text(v.to_f64()),
            Some((int, frac, exponent)) => {
                // Scientific mantissas are padded with zeros, positional fractions with spaces.
                let frac = if scientific {
                    format!("{frac:0<frac_width$}")
                } else {
                    format!("{frac:<frac_width$}")
                };
                format!("{int:>int_width$}.{frac}{exponent}")
            }
        })
        .collect()
}

fn format_exponent(e: &str) -> String {
    let value: i32 = e.parse().expect("Rust's LowerExp writes an integer exponent");
    let sign = if value < 0 { '-' } else { '+' };
    format!("e{sign}{:02}", value.abs())
}

fn non_finite_text(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v > 0.0 {
        "inf".to_string()
    } else {
        "-inf".to_string()
    }
}

/// Writes the nested brackets of `shape` over `cells` (row-major), starting at flat `offset`.
fn write_nested(
    f: &mut fmt::Formatter<'_>,
    shape: &[usize],
    cells: &[String],
    offset: usize,
    indent: usize,
    summarize: bool,
    sep: &str,
) -> fmt::Result {
    let Some((&n, rest)) = shape.split_first() else {
        return f.write_str(cells[offset].trim_start());
    };
    let inner: usize = rest.iter().product();
    f.write_str("[")?;
    let shown: Vec<Option<usize>> = if summarize && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).map(Some).chain([None]).chain((n - EDGE_ITEMS..n).map(Some)).collect()
    } else {
        (0..n).map(Some).collect()
    };
    let row_sep = if sep == ", " { "," } else { "" };
    for (k, i) in shown.iter().enumerate() {
        if k > 0 {
            if rest.is_empty() {
                f.write_str(sep)?;
            } else {
                // Blank lines between blocks of rank >= 3, as NumPy prints them.
                f.write_str(row_sep)?;
                f.write_str(&"\n".repeat(rest.len()))?;
                f.write_str(&" ".repeat(indent + 1))?;
            }
        }
        match i {
            Some(i) if rest.is_empty() => f.write_str(&cells[offset + i])?,
            Some(i) => {
                write_nested(f, rest, cells, offset + i * inner, indent + 1, summarize, sep)?
            }
            None => f.write_str("...")?,
        }
    }
    f.write_str("]")
}

/// `0.50000000` -> `0.5`, `1.20000000e-3` -> `1.2e-3`.
fn trim_fraction_zeros(s: &str) -> String {
    let (mantissa, exponent) = match s.split_once('e') {
        Some((m, e)) => (m, format!("e{e}")),
        None => (s, String::new()),
    };
    let mantissa = if mantissa.contains('.') { mantissa.trim_end_matches('0') } else { mantissa };
    format!("{mantissa}{exponent}")
}
