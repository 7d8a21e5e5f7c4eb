//! `lax::scan` and `lax::map`: loops with a static trip count over the leading axis of their
//! inputs, as one `scan` equation whose body is traced once. Unlike `while_loop` they are
//! differentiable in reverse mode.

use std::sync::Arc;

use super::loops::check_carry;
use crate::array::Array;
use crate::ir::trace;
use crate::primitives::{bind, Aval, Scan};
use crate::tree::{self, Unflatten};

/// Options of [`scan_with`]: JAX's `length` and `reverse` arguments.
///
/// ```
/// use rjax_runtime::lax::ScanOptions;
/// let options = ScanOptions::default().length(5).reverse(true);
/// assert_eq!((options.length, options.reverse), (Some(5), true));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// The number of steps: needed when `xs` has no arrays (`()`), otherwise it must equal
    /// their leading axis.
    pub length: Option<usize>,
    /// Run from the last index to the first; `ys[i]` still comes from `xs[i]`.
    pub reverse: bool,
}

impl ScanOptions {
    /// Sets the number of steps.
    #[track_caller]
    pub fn length(self, length: usize) -> ScanOptions {
        ScanOptions { length: Some(length), ..self }
    }

    /// Sets the direction.
    #[track_caller]
    pub fn reverse(self, reverse: bool) -> ScanOptions {
        ScanOptions { reverse, ..self }
    }
}

/// `lax.scan(f, init, xs)`: `carry = init; for x in xs { (carry, y) = f(carry, x) }`,
/// returning the final carry and every `y` stacked along a new leading axis.
///
/// `xs` is a tree of arrays sharing a leading axis; `f` gets one slice of each. The body is
/// traced once into a `scan` equation, so it must return a carry of the structure, shapes and
/// dtypes it was given (a weakly typed Rust literal adopts the carry's dtype). Forward and
/// reverse-mode differentiation, `vmap` and `jit` all work through it: the reverse pass stores
/// each step's carry and recomputes the rest of the step.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let xs = jnp::array([1.0f32, 2.0, 3.0]);
/// let (total, running) = lax::scan(|c: Array, x: Array| (&c + &x, &c + &x), Array::from(0.0f32), xs);
/// assert_eq!(total.item::<f32>().unwrap(), 6.0);
/// assert_eq!(running.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 6.0]);
/// ```
#[track_caller]
pub fn scan<C, X, Y>(f: impl Fn(C, X) -> (C, Y), init: C, xs: X) -> (C, Y)
where
    C: Unflatten,
    X: Unflatten,
    Y: Unflatten,
{
    scan_with(f, init, xs, ScanOptions::default())
}

/// [`scan`] with JAX's `length` and `reverse` options: `length` lets a scan run without `xs`
/// (pass `()`), `reverse` runs it from the end.
///
/// ```
/// use rjax_runtime::lax::{self, ScanOptions};
/// use rjax_runtime::Array;
/// let (last, seen) = lax::scan_with(
///     |c: Array, (): ()| (&c * 2.0 + 1.0, c),
///     Array::from(1.0f32),
///     (),
///     ScanOptions::default().length(5),
/// );
/// assert_eq!(last.item::<f32>().unwrap(), 63.0);
/// assert_eq!(seen.to_vec::<f32>().unwrap(), vec![1.0, 3.0, 7.0, 15.0, 31.0]);
/// ```
#[track_caller]
pub fn scan_with<C, X, Y>(
    f: impl Fn(C, X) -> (C, Y),
    init: C,
    xs: X,
    options: ScanOptions,
) -> (C, Y)
where
    C: Unflatten,
    X: Unflatten,
    Y: Unflatten,
{
    let (carry, carry_def) = tree::flatten(&init);
    let (x_leaves, x_def) = tree::flatten(&xs);
    let length = scan_length(&x_leaves, options.length);
    let carry_avals: Vec<Aval> = carry.iter().map(Array::aval).collect();
    let mut avals = carry_avals.clone();
    avals.extend(x_leaves.iter().map(slice_aval));
    let traced = trace::trace_with(&avals, |inputs| {
        let (c, x) = inputs.split_at(carry.len());
        let (next, y) =
            f(tree::unflatten(&carry_def, c.to_vec()), tree::unflatten(&x_def, x.to_vec()));
        let (mut leaves, next_def) = tree::flatten(&next);
        let (y_leaves, y_def) = tree::flatten(&y);
        leaves.extend(y_leaves);
        (leaves, (next_def, y_def))
    });
    let trace::Traced { program, captured, extra: (next_def, y_def) } = traced;
    let mut carry_trace = trace::Traced { program, captured, extra: next_def };
    check_carry("scan", &carry_def, &carry_avals, &mut carry_trace);
    let prim = Scan {
        body: Arc::new(carry_trace.program),
        length,
        reverse: options.reverse,
        carry: carry.len(),
        xs: x_leaves.len(),
    };
    let mut inputs: Vec<&Array> = carry.iter().chain(&x_leaves).collect();
    inputs.extend(carry_trace.captured.iter());
    let mut outs = bind(&prim, &inputs);
    let ys = outs.split_off(carry.len());
    (tree::unflatten(&carry_def, outs), tree::unflatten(&y_def, ys))
}

/// `lax.map(f, xs)`: `f` applied to each slice of `xs` along its leading axis, the results
/// stacked — a [`scan`] without a carry, so the body is traced once however long `xs` is.
///
/// ```
/// use rjax_runtime::{jnp, lax, Array};
/// let xs = jnp::arange(6.0).reshape([3, 2]);
/// let sums: Array = lax::map(|row: Array| row.sum(), xs);
/// assert_eq!(sums.to_vec::<f32>().unwrap(), vec![1.0, 5.0, 9.0]);
/// ```
#[track_caller]
pub fn map<X: Unflatten, Y: Unflatten>(f: impl Fn(X) -> Y, xs: X) -> Y {
    scan(|(), x| ((), f(x)), (), xs).1
}

/// The steps a scan takes: the xs' shared leading axis, or `length` when there are none.
#[track_caller]
fn scan_length(xs: &[Array], length: Option<usize>) -> usize {
    let mut first = None;
    for (i, x) in xs.iter().enumerate() {
        let Some(&n) = x.shape().first() else {
            panic!(
                "scan: every xs leaf needs a leading axis to scan over, but leaf {i} is {}",
                x.aval()
            );
        };
        match first {
            None => first = Some(n),
            Some(f) if f != n => panic!(
                "scan: every xs leaf needs the same leading axis, but leaf 0 has {f} and leaf {i} has {n}"
            ),
            Some(_) => {}
        }
    }
    match (first, length) {
        (None, Some(length)) => length,
        (None, None) => {
            panic!("scan: with no xs, give the number of steps: ScanOptions::default().length(n)")
        }
        (Some(n), Some(length)) if n != length => {
            panic!("scan: length is {length} but the xs have a leading axis of {n}")
        }
        (Some(n), _) => n,
    }
}

#[track_caller]
fn slice_aval(x: &Array) -> Aval {
    let mut aval = x.aval();
    aval.shape.remove(0);
    aval
}
