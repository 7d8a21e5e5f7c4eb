//! Numerical gradient checks for every differentiable primitive, in the manner of
//! `jax.test_util.check_grads`: in f64, at random points away from kinks, forward mode (`jvp`)
//! is compared with central differences, reverse mode (`vjp`) with forward mode through
//! `<vjp(u), v> == <u, jvp(v)>`, and second derivatives are checked the same way on the
//! functions `x -> jvp(f, x, v)` and `x -> vjp(f, x, u)` (forward-over-forward,
//! reverse-over-forward, forward-over-reverse and reverse-over-reverse), plus nested `grad`.
//! Derivatives at kinks are checked against JAX's conventions.

use rjax::prelude::*;
use rjax::transform::ad::api::{grad_of, jacobian_of, jvp_of, vjp_of};

/// Central-difference step.
const EPS: f64 = 1e-5;
/// Tolerance, relative to `max(1, |expected|)`.
const TOL: f64 = 1e-6;
/// Random directions tried at each level of a check.
const DIRECTIONS: usize = 2;

type Fun<'a> = &'a dyn Fn(&Array) -> Array;
/// Bands of values to draw from: `[(lo, hi), ..]`.
type Bands = &'static [(f64, f64)];

/// xorshift64*: a small deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, 1)`.
    fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform over one of `bands`, picked at random.
    fn banded(&mut self, bands: &[(f64, f64)]) -> f64 {
        let (lo, hi) = bands[(self.next_u64() % bands.len() as u64) as usize];
        self.range(lo, hi)
    }

    /// An f64 array of `shape` with elements drawn from `bands`.
    fn array(&mut self, shape: &[usize], bands: &[(f64, f64)]) -> Array {
        let n: usize = shape.iter().product();
        Array::from_shape_vec(shape, (0..n).map(|_| self.banded(bands)).collect::<Vec<f64>>())
    }

    /// A random direction (elements in `[-1, 1)`) of `x`'s shape.
    fn like(&mut self, x: &Array) -> Array {
        self.array(x.shape(), &[(-1.0, 1.0)])
    }
}

fn vals(a: &Array) -> Vec<f64> {
    assert_eq!(a.dtype(), DType::F64, "expected an f64 array, got {:?}", a.aval());
    a.to_vec::<f64>().unwrap()
}

fn f64s(shape: &[usize], data: &[f64]) -> Array {
    Array::from_shape_vec(shape, data.to_vec())
}

fn inner(a: &Array, b: &Array) -> f64 {
    assert_eq!(a.shape(), b.shape());
    vals(a).iter().zip(vals(b)).map(|(x, y)| x * y).sum()
}

fn close(got: f64, want: f64, tol: f64) -> bool {
    if got.is_infinite() || want.is_infinite() {
        return got == want;
    }
    (got - want).abs() <= tol * want.abs().max(1.0)
}

#[track_caller]
fn assert_all_close(what: &str, got: &Array, want: &Array, tol: f64) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    let (g, w) = (vals(got), vals(want));
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            close(*a, *b, tol),
            "{what}: element {i} is {a}, expected {b}\n got {g:?}\nwant {w:?}"
        );
    }
}

/// `(f(x + eps v) - f(x - eps v)) / (2 eps)`.
fn numerical_jvp(f: Fun, x: &Array, v: &Array) -> Array {
    let plus = f(&(x + &(v * EPS)));
    let minus = f(&(x - &(v * EPS)));
    (&plus - &minus) / (2.0 * EPS)
}

/// First-order checks of `f` at `x`: jvp against central differences, its primal output
/// against `f(x)`, and vjp against jvp.
fn check_first(label: &str, f: Fun, x: &Array, rng: &mut Rng) {
    let y = f(x);
    assert!(vals(&y).iter().all(|v| v.is_finite()), "{label}: f(x) is not finite: {y:?}");
    for _ in 0..DIRECTIONS {
        let v = rng.like(x);
        let (y_jvp, t) = jvp_of(f, x, &v);
        assert_all_close(&format!("{label}: jvp primal"), &y_jvp, &y, 1e-12);
        assert_all_close(&format!("{label}: jvp"), &t, &numerical_jvp(f, x, &v), TOL);
        let u = rng.like(&y);
        let ct = vjp_of(f, x, &u);
        assert_eq!(ct.shape(), x.shape(), "{label}: vjp shape");
        let (lhs, rhs) = (inner(&ct, &v), inner(&u, &t));
        let scale: f64 = vals(&ct).iter().zip(vals(&v)).map(|(a, b)| (a * b).abs()).sum();
        assert!(
            (lhs - rhs).abs() <= 1e-9 * scale.max(1.0),
            "{label}: <vjp(u), v> = {lhs} but <u, jvp(v)> = {rhs}"
        );
    }
}

/// `check_grads(f, (x,), order)`: first-order checks, then the same checks applied to the
/// directional derivatives `x -> jvp(f, x, v)` and `x -> vjp(f, x, u)` up to `order`.
fn check_grads(label: &str, f: Fun, x: &Array, order: usize, rng: &mut Rng) {
    check_first(label, f, x, rng);
    if order < 2 {
        return;
    }
    let v = rng.like(x);
    let u = rng.like(&f(x));
    let fwd = |y: &Array| jvp_of(f, y, &v).1;
    check_grads(&format!("{label} [d jvp]"), &fwd, x, order - 1, rng);
    let rev = |y: &Array| vjp_of(f, y, &u);
    check_grads(&format!("{label} [d vjp]"), &rev, x, order - 1, rng);
    // Nested grad: the gradient of <w, grad <u, f>> against central differences of grad.
    let s = |y: &Array| jnp::sum(&(&f(y) * &u));
    let g = |y: &Array| grad_of(s, y);
    assert_all_close(&format!("{label}: grad"), &g(x), &vjp_of(f, x, &u), 1e-12);
    let w = rng.like(x);
    let gg = grad_of(|y| jnp::sum(&(&g(y) * &w)), x);
    let dir = rng.like(x);
    let num = inner(&numerical_jvp(&g, x, &dir), &w);
    let got = inner(&gg, &dir);
    assert!(
        close(got, num, TOL),
        "{label}: grad of grad along a direction is {got}, numerically {num}"
    );
}

fn check2(label: &str, f: impl Fn(&Array) -> Array, x: &Array, rng: &mut Rng) {
    check_grads(label, &f, x, 2, rng);
}

/// The checker itself: a function whose derivative is wrong (rounding to 1e-12 has slope 0
/// by the rules but slope 1 at the scale of the differences) must be caught.
#[test]
#[should_panic(expected = "jvp")]
fn checker_catches_wrong_derivatives() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(0);
    let x = rng.array(&[3], POS);
    check2("rounded identity", |x| (x * 1e12).round() / 1e12, &x, &mut rng);
}

// ---- unary ----

const ANY: Bands = &[(-2.0, 2.0)];
const POS: Bands = &[(0.3, 3.0)];
const NONZERO: Bands = &[(-2.5, -0.3), (0.3, 2.5)];
const UNIT: Bands = &[(-0.8, 0.8)];

#[test]
fn unary_ops() {
    let _x64 = rjax::config::x64_scope(true);
    type Op = fn(&Array) -> Array;
    let cases: Vec<(&str, Op, Bands)> = vec![
        ("neg", |x| x.neg(), ANY),
        ("neg op", |x| -x, ANY),
        ("abs", |x| x.abs(), NONZERO),
        ("square", |x| x.square(), ANY),
        ("exp", |x| x.exp(), ANY),
        ("exp2", |x| x.exp2(), ANY),
        ("log", |x| x.log(), POS),
        ("log1p", |x| x.log1p(), &[(-0.6, 2.0)]),
        ("expm1", |x| x.expm1(), ANY),
        ("sqrt", |x| x.sqrt(), POS),
        ("rsqrt", |x| x.rsqrt(), POS),
        ("cbrt", |x| x.cbrt(), NONZERO),
        ("reciprocal", |x| x.reciprocal(), NONZERO),
        ("sin", |x| x.sin(), &[(-3.0, 3.0)]),
        ("cos", |x| x.cos(), &[(-3.0, 3.0)]),
        ("tan", |x| x.tan(), &[(-1.2, 1.2)]),
        ("asin", |x| x.asin(), UNIT),
        ("acos", |x| x.acos(), UNIT),
        ("atan", |x| x.atan(), &[(-3.0, 3.0)]),
        ("sinh", |x| x.sinh(), ANY),
        ("cosh", |x| x.cosh(), ANY),
        ("tanh", |x| x.tanh(), ANY),
        ("asinh", |x| x.asinh(), &[(-3.0, 3.0)]),
        ("acosh", |x| x.acosh(), &[(1.2, 3.0)]),
        ("atanh", |x| x.atanh(), UNIT),
        ("sigmoid", |x| x.sigmoid(), &[(-4.0, 4.0)]),
        ("softplus", |x| x.softplus(), &[(-4.0, 4.0)]),
        ("erf", |x| x.erf(), ANY),
        ("erfinv", |x| x.erfinv(), UNIT),
        ("powi 0", |x| x.powi(0), NONZERO),
        ("powi 1", |x| x.powi(1), NONZERO),
        ("powi 2", |x| x.powi(2), NONZERO),
        ("powi 3", |x| x.powi(3), NONZERO),
        ("powi 5", |x| x.powi(5), NONZERO),
        ("powi -1", |x| x.powi(-1), NONZERO),
        ("powi -2", |x| x.powi(-2), NONZERO),
        ("powi -3", |x| jnp::powi(x, -3), NONZERO),
        // Piecewise constant: zero derivative away from the jumps.
        ("floor", |x| x.floor() * x, &[(0.1, 0.9), (1.1, 1.9)]),
        ("round", |x| x.round() * x, &[(0.1, 0.4), (0.6, 1.4)]),
        ("sign", |x| x.sign() * x.square(), NONZERO),
    ];
    let mut rng = Rng::new(1);
    for (name, op, bands) in cases {
        let x = rng.array(&[2, 3], bands);
        check2(name, op, &x, &mut rng);
        let s = rng.array(&[], bands);
        check2(&format!("{name} (0-d)"), op, &s, &mut rng);
    }
}

#[test]
fn unary_compositions() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(2);
    let x = rng.array(&[3, 2], &[(0.4, 1.5)]);
    check2("tanh(exp(x)) * log(x)", |x| x.exp().tanh() * x.log(), &x, &mut rng);
    check2("sqrt(x) / (1 + x^2)", |x| x.sqrt() / (x.square() + 1.0), &x, &mut rng);
    check2("sin(cos(x)) ^ 3", |x| x.cos().sin().powi(3), &x, &mut rng);
    // Third order, forward and reverse in every combination.
    let x = rng.array(&[2], &[(0.4, 1.5)]);
    check_grads("third order", &|x: &Array| x.sin() * x.exp(), &x, 3, &mut rng);
}

// ---- binary ----

type BinOp = fn(&Array, &Array) -> Array;

/// Draws operands of the given shapes whose broadcast pairs satisfy `ok`.
fn operands(
    rng: &mut Rng,
    shapes: (&[usize], &[usize]),
    bands: (Bands, Bands),
    ok: fn(f64, f64) -> bool,
) -> (Array, Array) {
    for _ in 0..1000 {
        let a = rng.array(shapes.0, bands.0);
        let b = rng.array(shapes.1, bands.1);
        let out = jnp::add(&a, &b);
        let pa = vals(&jnp::broadcast_to(&a, out.shape()));
        let pb = vals(&jnp::broadcast_to(&b, out.shape()));
        if pa.iter().zip(&pb).all(|(&x, &y)| ok(x, y)) {
            return (a, b);
        }
    }
    panic!("could not draw operands");
}

/// Checks `op` in each operand alone (the other held constant) and in both at once.
fn check_binary(name: &str, op: BinOp, a: &Array, b: &Array, rng: &mut Rng) {
    let shapes = format!("{:?} {:?}", a.shape(), b.shape());
    check2(&format!("{name} {shapes} wrt a"), |x| op(x, b), a, rng);
    check2(&format!("{name} {shapes} wrt b"), |y| op(a, y), b, rng);
    let (na, sa, sb) = (a.size(), a.shape().to_vec(), b.shape().to_vec());
    let packed = jnp::concatenate(&[a.ravel(), b.ravel()], 0);
    let both = move |p: &Array| {
        let x = p.slice(s![0..na]).reshape(&sa[..]);
        let y = p.slice(s![na..]).reshape(&sb[..]);
        op(&x, &y)
    };
    check2(&format!("{name} {shapes} wrt both"), both, &packed, rng);
}

fn any_pair(_: f64, _: f64) -> bool {
    true
}

fn no_tie(a: f64, b: f64) -> bool {
    (a - b).abs() > 0.05
}

/// `a / b` is not near an integer, away from `fmod`'s and `remainder`'s jumps.
fn off_integer(a: f64, b: f64) -> bool {
    let q = a / b;
    let frac = q - q.floor();
    frac > 0.05 && frac < 0.95
}

#[test]
fn binary_ops() {
    let _x64 = rjax::config::x64_scope(true);
    let shape_pairs: [(&[usize], &[usize]); 4] =
        [(&[2, 3], &[2, 3]), (&[3, 1], &[1, 4]), (&[2, 3], &[]), (&[4], &[2, 1])];
    type Case = (&'static str, BinOp, Bands, Bands, fn(f64, f64) -> bool);
    let cases: Vec<Case> = vec![
        ("add", |a, b| a + b, ANY, ANY, any_pair),
        ("sub", |a, b| a - b, ANY, ANY, any_pair),
        ("mul", |a, b| a * b, ANY, ANY, any_pair),
        ("div", |a, b| a / b, ANY, NONZERO, any_pair),
        ("pow", |a, b| a.pow(b), POS, &[(-1.5, 2.5)], any_pair),
        ("maximum", |a, b| a.maximum(b), ANY, ANY, no_tie),
        ("minimum", |a, b| a.minimum(b), ANY, ANY, no_tie),
        ("atan2", |a, b| a.atan2(b), NONZERO, NONZERO, any_pair),
        ("fmod", |a, b| jnp::fmod(a, b), &[(-3.0, 3.0)], NONZERO, off_integer),
        ("remainder", |a, b| a % b, &[(-3.0, 3.0)], NONZERO, off_integer),
        ("logaddexp", |a, b| jnp::logaddexp(a, b), ANY, ANY, no_tie),
        ("mul sin", |a, b| (a * b).sin() * a, ANY, ANY, any_pair),
    ];
    let mut rng = Rng::new(3);
    for (name, op, ba, bb, ok) in cases {
        for shapes in shape_pairs {
            let (a, b) = operands(&mut rng, shapes, (ba, bb), ok);
            check_binary(name, op, &a, &b, &mut rng);
        }
    }
}

#[test]
fn binary_with_scalars() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(4);
    let x = rng.array(&[2, 3], POS);
    check2("x + 2", |x| x + 2.0, &x, &mut rng);
    check2("2 - x", |x| 2.0 - x, &x, &mut rng);
    check2("x * 3", |x| x * 3.0, &x, &mut rng);
    check2("1 / x", |x| 1.0 / x, &x, &mut rng);
    check2("x / 4", |x| x / 4.0, &x, &mut rng);
    check2("x ** 1.7", |x| x.pow(1.7), &x, &mut rng);
    check2("2.5 ** x", |x| jnp::pow(2.5, x), &x, &mut rng);
    check2("x ** x", |x| x.pow(x), &x, &mut rng);
    check2("x * x", |x| x * x, &x, &mut rng);
    check2("x / x.sin()", |x| x / x.sin(), &x, &mut rng);
}

#[test]
fn select_where() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(5);
    let x = rng.array(&[3, 4], &[(-2.0, 0.2), (0.4, 2.0)]);
    check2(
        "where(x > .3, sin, 3 x^2)",
        |x| jnp::where_(x.gt(0.3), x.sin(), x.square() * 3.0),
        &x,
        &mut rng,
    );
    check2("where(x > .3, x, 0.)", |x| jnp::where_(x.gt(0.3), x, 0.0), &x, &mut rng);
    // Broadcast predicate and branches: (3, 1), (3, 4) and (1, 4).
    let c = f64s(&[3, 1], &[1.0, -1.0, 1.0]).gt(0.0);
    check2(
        "where broadcast",
        move |x| jnp::where_(&c, x.sin(), x.slice(s![0..1, ..]).exp()),
        &x,
        &mut rng,
    );
    check2("clip inside", |x| x.clip(-1.5, 1.5) * x, &x.clip(-1.4, 1.4), &mut rng);
}

// ---- JAX's conventions at kinks ----

fn grad_at(f: impl FnOnce(&Array) -> Array, x: &[f64]) -> Vec<f64> {
    vals(&grad_of(|x| jnp::sum(&f(x)), &f64s(&[x.len()], x)))
}

#[test]
fn kinks_follow_jax() {
    let _x64 = rjax::config::x64_scope(true);
    // d|x|/dx at 0 is 1 (select(x >= 0, g, -g)).
    assert_eq!(grad_at(|x| x.abs(), &[0.0, -1.0, 2.0]), vec![1.0, -1.0, 1.0]);
    // maximum / minimum split ties equally.
    assert_eq!(grad_at(|x| x.maximum(0.0), &[0.0, -1.0, 2.0]), vec![0.5, 0.0, 1.0]);
    assert_eq!(grad_at(|x| x.minimum(0.0), &[0.0, -1.0, 2.0]), vec![0.5, 1.0, 0.0]);
    assert_eq!(grad_at(|x| x.maximum(x), &[0.5, -1.0]), vec![1.0, 1.0]);
    assert_eq!(grad_at(|x| jnp::maximum(1.0, x), &[1.0]), vec![0.5]);
    // clip is minimum(maximum(x, lo), hi): half a slope at either bound.
    assert_eq!(grad_at(|x| x.clip(0.0, 1.0), &[0.0, 0.5, 1.0, 2.0]), vec![0.5, 1.0, 0.5, 0.0]);
    // Tied extremes of a reduction share the slope.
    assert_eq!(grad_at(jnp::max, &[1.0, 3.0, 3.0, 2.0]), vec![0.0, 0.5, 0.5, 0.0]);
    assert_eq!(grad_at(jnp::min, &[2.0, 1.0, 1.0, 3.0]), vec![0.0, 0.5, 0.5, 0.0]);
    assert_eq!(grad_at(jnp::max, &[3.0, 3.0, 3.0]), vec![1.0 / 3.0; 3]);
    let m = f64s(&[2, 2], &[1.0, 1.0, 2.0, 0.0]);
    assert_eq!(vals(&grad_of(|x| x.max_axes(1, false).sum(), &m)), vec![0.5, 0.5, 1.0, 0.0]);
    // sqrt'(0) = inf; cbrt'(0) = inf is not promised (x / 0 * 0).
    assert_eq!(grad_at(|x| x.sqrt(), &[0.0]), vec![f64::INFINITY]);
    // pow: x ** 0 has slope 0 at x = 0, and 0 ** y has slope 0 in y.
    assert_eq!(grad_at(|x| x.pow(0.0), &[0.0, 2.0]), vec![0.0, 0.0]);
    assert_eq!(grad_at(|y| jnp::pow(0.0, y), &[2.0]), vec![0.0]);
    // Piecewise-constant ops have zero derivative everywhere.
    assert_eq!(
        grad_at(|x| x.floor() + x.ceil() + x.round() + x.sign(), &[0.0, 0.5, 1.5]),
        vec![0.0; 3]
    );
    // jvp agrees at the kinks.
    let x = f64s(&[3], &[0.0, 1.0, -1.0]);
    let t = f64s(&[3], &[1.0, 1.0, 1.0]);
    assert_eq!(vals(&jvp_of(|x| x.maximum(0.0), &x, &t).1), vec![0.5, 1.0, 0.0]);
    assert_eq!(vals(&jvp_of(|x| x.abs(), &x, &t).1), vec![1.0, 1.0, -1.0]);
}

// ---- reductions ----

#[test]
fn reductions() {
    let _x64 = rjax::config::x64_scope(true);
    type Op = fn(&Array) -> Array;
    let cases: Vec<(&str, Op)> = vec![
        ("sum", jnp::sum),
        ("sum axis 0", |x| x.sum_axes(0, false)),
        ("sum axes [0, 2] keepdims", |x| x.sum_axes([0, 2], true)),
        ("sum axis -1", |x| jnp::sum_axes(x, -1, false)),
        ("max", jnp::max),
        ("max axis 1", |x| jnp::max_axes(x, 1, false)),
        ("min", jnp::min),
        ("min axes [0, 1] keepdims", |x| jnp::min_axes(x, [0, 1], true)),
        ("prod", jnp::prod),
        ("prod axis 1", |x| jnp::prod_axes(x, 1, false)),
        ("prod axes [0, 2]", |x| jnp::prod_axes(x, [0, 2], true)),
        ("mean", jnp::mean),
        ("mean axis 2", |x| jnp::mean_axes(x, 2, false)),
        ("var", jnp::var),
        ("std axis 1", |x| jnp::std_axes(x, 1, false)),
        ("logsumexp", jnp::logsumexp),
        ("logsumexp axis 1", |x| jnp::logsumexp_axes(x, 1, true)),
        ("softmax", |x| jnp::softmax(x, -1)),
        ("softmax axes [0, 1]", |x| jnp::softmax(x, [0, 1])),
        ("log_softmax", |x| jnp::log_softmax(x, 1)),
        ("cumsum axis 1", |x| jnp::cumsum(x, Some(1))),
        ("cumsum axis -1", |x| x.cumsum(Some(-1))),
        ("cumsum flat", |x| jnp::cumsum(x, None)),
        ("cumprod axis 1", |x| jnp::cumprod(x, Some(1))),
        ("cumprod axis 2", |x| x.cumprod(Some(2))),
        ("cumprod flat", |x| jnp::cumprod(x, None)),
    ];
    let mut rng = Rng::new(6);
    // Distinct magnitudes near 1, so max and min have no ties and products stay moderate.
    let mut data: Vec<f64> = (0..24).map(|i| 0.6 + 0.05 * i as f64).collect();
    for i in (1..data.len()).rev() {
        data.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    for (k, d) in data.iter_mut().enumerate() {
        if k % 3 == 0 {
            *d = -*d;
        }
    }
    let x = f64s(&[2, 3, 4], &data);
    for (name, op) in cases {
        check2(name, op, &x, &mut rng);
        check2(&format!("{name} of sin, squared"), |x| op(&x.sin()).square(), &x, &mut rng);
    }
    // Products are smooth at zeros too, where dividing by the element would fail.
    let z = f64s(&[2, 3], &[2.0, 0.0, 3.0, 0.0, 0.0, -1.5]);
    assert_eq!(vals(&grad_of(jnp::prod, &z)), vec![0.0; 6]);
    let z1 = f64s(&[3], &[2.0, 0.0, 3.0]);
    assert_eq!(vals(&grad_of(jnp::prod, &z1)), vec![0.0, 6.0, 0.0]);
    check2("prod with zeros", jnp::prod, &z, &mut rng);
    check2("prod axis 1 with zeros", |x| jnp::prod_axes(x, 1, false), &z, &mut rng);
    check2("cumprod with zeros", |x| jnp::cumprod(x, Some(1)), &z, &mut rng);
}

// ---- shape ops ----

#[test]
fn shape_ops() {
    let _x64 = rjax::config::x64_scope(true);
    type Op = fn(&Array) -> Array;
    let cases: Vec<(&str, Op)> = vec![
        ("reshape", |x| x.reshape([4, -1])),
        ("ravel", |x| x.ravel()),
        ("transpose", |x| x.transpose(None)),
        ("transpose perm", |x| x.transpose(Some(&[1, 2, 0][..]))),
        ("swapaxes", |x| x.swapaxes(0, 2)),
        ("moveaxis", |x| x.moveaxis(0, -1)),
        ("broadcast_to", |x| x.slice(s![.., 0..1, ..]).broadcast_to([3, 2, 3, 4])),
        ("broadcast scalar", |x| x.slice(s![1, 2, 3]).broadcast_to([2, 2])),
        ("expand_dims", |x| x.expand_dims([0, 2])),
        ("squeeze", |x| x.slice(s![.., 1..2, ..]).squeeze(1)),
        ("concatenate", |x| jnp::concatenate(&[x.clone(), x.sin()], 1)),
        ("concatenate 3", |x| {
            jnp::concatenate(
                &[x.slice(s![.., 0, ..]), x.square().slice(s![.., 2, ..]), x.slice(s![.., 1, ..])],
                0,
            )
        }),
        ("stack", |x| jnp::stack(&[x.clone(), x.cos()], 0)),
        ("split", |x| jnp::split(x, 2, 2).remove(1)),
        ("slice range", |x| x.slice(s![1.., 0..2, ..])),
        ("slice step", |x| x.slice(s![.., ..;2, 1..;2])),
        ("slice negative step", |x| x.slice(s![..;-1, 1, 0..3;-1])),
        ("slice int", |x| x.slice(s![1, -1])),
        ("slice newaxis ellipsis", |x| x.slice(s![NewAxis, ..., 2])),
        ("flip", |x| x.flip(1)),
        ("flip all", |x| jnp::flip(x, Axes::All)),
        ("flip two", |x| x.flip([0, 2])),
        ("pad", |x| jnp::pad(x, [(1, 0), (0, 2), (1, 1)], 0.0)),
        ("pad value from x", |x| jnp::pad(x, (1, 2), x.slice(s![0, 0, 0]).sin())),
        ("tile", |x| x.tile([2, 1, 1])),
        ("repeat", |x| x.repeat(2, Some(1))),
        ("repeat flat", |x| x.repeat(2, None)),
    ];
    let mut rng = Rng::new(7);
    let x = rng.array(&[2, 3, 4], ANY);
    for (name, op) in cases {
        check2(name, op, &x, &mut rng);
        check2(
            &format!("{name}, times its sine"),
            |x| {
                let y = op(x);
                &y * &y.sin()
            },
            &x,
            &mut rng,
        );
    }
}

// ---- indexing ----

#[test]
fn indexing() {
    let _x64 = rjax::config::x64_scope(true);
    type Op = Box<dyn Fn(&Array) -> Array>;
    let idx = jnp::array([2i32, 0, 2, -1]);
    let idx2 = Array::from_shape_vec([2, 2], vec![1i64, 3, 3, 0]);
    let oob = jnp::array([1i32, 7, -9, 0]);
    let cases: Vec<(&str, Op)> = vec![
        (
            "take flat",
            Box::new({
                let i = idx.clone();
                move |x: &Array| x.take(&i, None)
            }),
        ),
        (
            "take axis 1",
            Box::new({
                let i = idx.clone();
                move |x: &Array| x.take(&i, Some(1))
            }),
        ),
        (
            "take 2-d indices",
            Box::new({
                let i = idx2.clone();
                move |x: &Array| jnp::take(x, &i, Some(0))
            }),
        ),
        (
            "take clip",
            Box::new({
                let i = oob.clone();
                move |x: &Array| jnp::take_mode(x, &i, Some(1), jnp::IndexMode::Clip)
            }),
        ),
        (
            "slice with array",
            Box::new({
                let i = idx.clone();
                move |x: &Array| x.slice(s![.., &i])
            }),
        ),
        (
            "slice array and int",
            Box::new({
                let i = idx2.clone();
                move |x: &Array| x.slice(s![&i, 1])
            }),
        ),
        (
            "slice out of bounds clamps",
            Box::new({
                let i = oob.clone();
                move |x: &Array| x.slice(s![1, &i])
            }),
        ),
        (
            "take_along_axis",
            Box::new({
                let i = Array::from_shape_vec([4, 2], vec![0i32, 4, 4, 1, 2, 2, 3, 0]);
                move |x: &Array| jnp::take_along_axis(x, &i, 1)
            }),
        ),
        ("at get", Box::new(|x: &Array| x.at(s![1.., 2]).get())),
        ("at set range", Box::new(|x: &Array| x.at(s![1..3, ..]).set(x.slice(s![0..2, ..]).sin()))),
        ("at set scalar", Box::new(|x: &Array| x.at(s![2, 3]).set(1.5))),
        (
            "at set repeated",
            Box::new({
                let i = idx.clone();
                move |x: &Array| x.at(s![.., &i]).set(x.slice(s![.., 0..4]).exp())
            }),
        ),
        (
            "at set dropped",
            Box::new({
                let i = oob.clone();
                move |x: &Array| x.at(s![&i]).set(x.slice(s![0..4, ..]) * 2.0)
            }),
        ),
        ("at add", Box::new(|x: &Array| x.at(s![.., 1]).add(x.slice(s![.., 2]).square()))),
        (
            "at add repeated",
            Box::new({
                let i = idx.clone();
                move |x: &Array| x.at(s![&i, ..]).add(x.slice(s![0..4, ..]).cos())
            }),
        ),
        (
            "at add dropped",
            Box::new({
                let i = oob.clone();
                move |x: &Array| x.at(s![2, &i]).add(x.slice(s![3, 1..5]))
            }),
        ),
    ];
    let mut rng = Rng::new(8);
    let x = rng.array(&[4, 5], ANY);
    for (name, op) in &cases {
        check2(name, op, &x, &mut rng);
        check2(
            &format!("{name}, times its sine"),
            |x| {
                let y = op(x);
                &y * &y.sin()
            },
            &x,
            &mut rng,
        );
    }
}

// ---- linear algebra ----

#[test]
fn linalg() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(9);
    let a = rng.array(&[3, 4], ANY);
    let b = rng.array(&[4, 2], ANY);
    let v = rng.array(&[4], ANY);
    let w = rng.array(&[4], ANY);
    let batch = rng.array(&[2, 3, 4], ANY);
    let batch_r = rng.array(&[2, 4, 2], ANY);
    check_binary("dot mat mat", |a, b| jnp::dot(a, b), &a, &b, &mut rng);
    check_binary("dot mat vec", |a, b| a.dot(b), &a, &v, &mut rng);
    check_binary("dot vec vec", |a, b| a.dot(b), &v, &w, &mut rng);
    check_binary("dot vec mat", |a, b| a.dot(b), &v, &b, &mut rng);
    check_binary("matmul", |a, b| a.matmul(b), &a, &b, &mut rng);
    check_binary("matmul batched lhs", |a, b| jnp::matmul(a, b), &batch, &b, &mut rng);
    check_binary("matmul batched both", |a, b| jnp::matmul(a, b), &batch, &batch_r, &mut rng);
    check_binary("matmul vec", |a, b| jnp::matmul(a, b), &batch, &v, &mut rng);
    check_binary("outer", |a, b| jnp::outer(a, b), &v, &b.ravel(), &mut rng);
    check_binary("tensordot 1", |a, b| jnp::tensordot(a, b, 1), &batch, &b, &mut rng);
    check_binary("einsum ij,jk->ik", |a, b| jnp::einsum("ij,jk->ik", &[a, b]), &a, &b, &mut rng);
    check_binary(
        "einsum ij,kj->ki",
        |a, b| jnp::einsum("ij,kj->ki", &[a, b]),
        &a,
        &b.t().reshape([2, 4]),
        &mut rng,
    );
    check_binary(
        "einsum bij,bkj->bik",
        |a, b| jnp::einsum("bij,bkj->bik", &[a, b]),
        &batch,
        &batch_r.swapaxes(1, 2),
        &mut rng,
    );
    check_binary(
        "einsum bij,jk->bki",
        |a, b| jnp::einsum("bij,jk->bki", &[a, b]),
        &batch,
        &b,
        &mut rng,
    );
    check_binary(
        "einsum ijk,kj->i",
        |a, b| jnp::einsum("ijk,kj->i", &[a, b]),
        &batch.swapaxes(0, 1),
        &rng.array(&[4, 2], ANY),
        &mut rng,
    );
    check_binary("einsum ij,ij->", |a, b| jnp::einsum("ij,ij->", &[a, b]), &a, &a.cos(), &mut rng);
    check2("einsum ij->ji", |x| jnp::einsum("ij->ji", &[x]), &a, &mut rng);
    check2("einsum ij->j", |x| jnp::einsum("ij->j", &[x]), &a, &mut rng);
    check2("x @ x.T", |x| x.matmul(&x.t()), &a, &mut rng);
    check2("x.T @ tanh(x)", |x| x.t().matmul(&x.tanh()), &a, &mut rng);
    check2("v . v", |x| x.dot(x), &v, &mut rng);
}

#[test]
fn jacobians_match_numerical() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(10);
    let x = rng.array(&[3], ANY);
    let f = |x: &Array| jnp::concatenate(&[x.sin() * x.sum(), x.slice(s![0..2]).exp()], 0);
    let fwd = jacobian_of(f, &x, false);
    let rev = jacobian_of(f, &x, true);
    assert_eq!(fwd.shape(), &[5, 3]);
    let mut columns = Vec::new();
    for i in 0..3 {
        let mut e = vec![0.0; 3];
        e[i] = 1.0;
        columns.push(numerical_jvp(&f, &x, &f64s(&[3], &e)));
    }
    let num = jnp::stack(&columns, 1);
    assert_all_close("jacfwd", &fwd, &num, TOL);
    assert_all_close("jacrev", &rev, &num, TOL);
    // Hessian, forward over reverse, against differences of the gradient.
    let s = |x: &Array| (x.sin() * x.square()).sum();
    let h = jacobian_of(|y| jacobian_of(s, y, true), &x, false);
    let g = |y: &Array| grad_of(s, y);
    for i in 0..3 {
        let mut e = vec![0.0; 3];
        e[i] = 1.0;
        let col = numerical_jvp(&g, &x, &f64s(&[3], &e));
        assert_all_close("hessian column", &h.slice(s![.., i]), &col, TOL);
    }
}

// ---- control flow ----

#[test]
fn cond_both_modes() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(11);
    let f = |x: &Array| {
        lax::cond(x.sum().gt(0.0), |x: Array| x.sin() * 2.0, |x: Array| x.cos() * &x, x.clone())
    };
    let pos = rng.array(&[2, 2], &[(0.2, 1.5)]);
    let neg = rng.array(&[2, 2], &[(-1.5, -0.2)]);
    check2("cond true branch", f, &pos, &mut rng);
    check2("cond false branch", f, &neg, &mut rng);
    // Branches that capture outer values and return a different shape than the operand.
    let c = rng.array(&[3], ANY);
    let g = move |x: &Array| {
        lax::cond(
            x.slice(s![0]).gt(0.0),
            |x: Array| (x.exp() * x.sum()).slice(s![0..3]) * &c,
            |x: Array| x.slice(s![1..4]).square(),
            x.clone(),
        )
    };
    let xs = rng.array(&[4], &[(0.2, 1.5)]);
    check2("cond captures, true", &g, &xs, &mut rng);
    let xs = rng.array(&[4], &[(-1.5, -0.2)]);
    check2("cond captures, false", &g, &xs, &mut rng);
}

#[test]
fn switch_both_modes() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(13);
    let f = |x: &Array| {
        let i = x.sum().floor().astype(DType::I32);
        let a = |x: Array| x.sin();
        let b = |x: Array| x.square() * &x;
        let c = |x: Array| x.exp() / 4.0;
        lax::switch(i, &[&a, &b, &c], x.clone())
    };
    for (lo, hi) in [(-0.5, -0.1), (0.55, 0.95), (1.05, 1.45)] {
        let x = rng.array(&[2], &[(lo, hi)]);
        check2(&format!("switch at sum {}", vals(&x).iter().sum::<f64>()), f, &x, &mut rng);
    }
}

/// Scans in every mode and to second order: a recurrent cell with a captured weight (the
/// argument is both the initial carry and, reshaped, the xs), a reverse scan with an integer
/// counter in its carry, `map`, and `fori_loop` with static bounds.
#[test]
fn scan_both_modes() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(14);
    let w = rng.array(&[3, 3], ANY);
    let cell = |x: &Array| {
        let xs = x.reshape([2, 3]) * 0.7;
        let step = |h: Array, x: Array| {
            let h = (w.dot(&h) * 0.5 + &x * &h + x).tanh();
            (h.clone(), h.sin() * &h)
        };
        let (h, hs) = lax::scan(step, x.slice(s![0..3]), xs);
        hs * h
    };
    check2("scan cell", cell, &rng.array(&[6], ANY), &mut rng);
    let counted = |x: &Array| {
        let options = lax::ScanOptions::default().reverse(true);
        let step = |(i, c): (Array, Array), x: Array| {
            let c = c.sin() * &x + i.astype(DType::F64) * &c;
            ((i + 1, c.clone()), c.exp())
        };
        let (_, ys) = lax::scan_with(step, (Array::from(0), x.sum()), x.clone(), options);
        ys
    };
    check2("reverse scan, integer carry", counted, &rng.array(&[4], ANY), &mut rng);
    let mapped = |x: &Array| lax::map(|row: Array| row.exp() * row.sum(), x.clone());
    check2("map", mapped, &rng.array(&[3, 2], ANY), &mut rng);
    let fori = |x: &Array| {
        lax::fori_loop(1, 4, |i, y: Array| y.sin() + i.astype(DType::F64) * &y * 0.3, x.clone())
    };
    check2("fori_loop, static bounds", fori, &rng.array(&[3], ANY), &mut rng);
}

/// A while loop whose trip count depends on the carry's value: `x <- x * sin(x) + x` until
/// the counter reaches 3, plus a loop that runs while a value stays small.
fn looped(x: &Array) -> Array {
    let (_, y) = lax::while_loop(
        |(i, _): &(Array, Array)| i.lt(3),
        |(i, y): (Array, Array)| (i + 1, &y * &y.sin() + &y * 0.5),
        (Array::from(0), x.clone()),
    );
    y
}

fn looped_by_value(x: &Array) -> Array {
    let (_, y) = lax::while_loop(
        |(n, _): &(Array, Array)| n.lt(4.0),
        |(n, y): (Array, Array)| (&n + 1.0, y.tanh() + &y * 0.3),
        (x.sum().floor(), x.clone()),
    );
    y
}

fn check_forward(label: &str, f: Fun, x: &Array, rng: &mut Rng) {
    for _ in 0..DIRECTIONS {
        let v = rng.like(x);
        let (y, t) = jvp_of(f, x, &v);
        assert_all_close(&format!("{label}: jvp primal"), &y, &f(x), 1e-12);
        assert_all_close(&format!("{label}: jvp"), &t, &numerical_jvp(f, x, &v), TOL);
    }
}

#[test]
fn while_loop_forward_mode() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(12);
    let x = rng.array(&[3], &[(0.3, 1.2)]);
    check_forward("while", &looped, &x, &mut rng);
    check_forward("while by value", &looped_by_value, &x, &mut rng);
    let fori = |x: &Array| {
        lax::fori_loop(0, 4, |i, y: Array| y.sin() + i.astype(DType::F64) * &y, x.clone())
    };
    check_forward("fori_loop", &fori, &x, &mut rng);
    // Forward over forward.
    let v = rng.like(&x);
    let d = |y: &Array| jvp_of(looped, y, &v).1;
    check_forward("while, second order", &d, &x, &mut rng);
}

fn panic_message(err: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = err.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = err.downcast_ref::<&str>() {
        s.to_string()
    } else {
        String::from("(non-string panic)")
    }
}

#[test]
fn while_loop_reverse_mode_panics() {
    let x = f64s(&[3], &[0.5, 0.7, 0.9]);
    let want = "Reverse-mode differentiation does not work for lax.while_loop";
    type Attempt = Box<dyn Fn()>;
    let attempts: Vec<(&str, Attempt)> = vec![
        (
            "grad",
            Box::new({
                let x = x.clone();
                move || {
                    grad_of(|y| looped(y).sum(), &x);
                }
            }),
        ),
        (
            "vjp",
            Box::new({
                let x = x.clone();
                move || {
                    vjp_of(looped, &x, &x);
                }
            }),
        ),
        (
            "jacrev",
            Box::new({
                let x = x.clone();
                move || {
                    jacobian_of(looped, &x, true);
                }
            }),
        ),
    ];
    for (name, attempt) in attempts {
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(attempt)).expect_err(name);
        let msg = panic_message(err);
        assert!(msg.contains(want), "{name}: unexpected panic message: {msg}");
    }
}
