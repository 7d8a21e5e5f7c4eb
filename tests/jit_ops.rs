//! Every op family of the foundation inside `#[jit]` gives exactly the eager result: the same
//! shape, dtype, weak type and bits, on random shapes and values (NaNs, infinities and signed
//! zeros included). Each case is one body compiled twice, as a plain function and as a
//! `#[jit]` function, so the two differ only in how they run.

mod common;
use rjax::prelude::*;

// --- Random inputs ---------------------------------------------------------------------------

/// SplitMix64: a small deterministic generator, so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x1234_5678)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A shape of rank `lo..=hi` with extents 1..=4.
    fn shape(&mut self, lo: usize, hi: usize) -> Vec<usize> {
        let rank = lo + self.below(hi - lo + 1);
        (0..rank).map(|_| 1 + self.below(4)).collect()
    }

    /// Floats in `[-3, 3]`, with about one in twelve a special value.
    fn floats_f64(&mut self, n: usize) -> Vec<f64> {
        const SPECIAL: [f64; 7] =
            [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0, -1.0];
        (0..n)
            .map(|_| {
                if self.below(12) == 0 {
                    SPECIAL[self.below(SPECIAL.len())]
                } else {
                    self.uniform(-3.0, 3.0)
                }
            })
            .collect()
    }

    fn f32s(&mut self, shape: &[usize]) -> Array {
        let n = shape.iter().product();
        let data: Vec<f32> = self.floats_f64(n).into_iter().map(|v| v as f32).collect();
        Array::from_shape_vec(shape, data)
    }

    /// Finite floats only (for ops whose inputs must be ordinary numbers, like matmul).
    fn finite_f32s(&mut self, shape: &[usize]) -> Array {
        let n = shape.iter().product();
        let data: Vec<f32> = (0..n).map(|_| self.uniform(-2.0, 2.0) as f32).collect();
        Array::from_shape_vec(shape, data)
    }

    /// Floats of `dtype` (`F32`, `F64`, or a weakly typed `F32`).
    fn floats(&mut self, shape: &[usize], dtype: DType, weak: bool) -> Array {
        let n = shape.iter().product();
        let a = Array::from_shape_vec(shape, self.floats_f64(n)).astype(dtype);
        a.with_weak_type(weak)
    }

    fn i32s(&mut self, shape: &[usize], lo: i32, hi: i32) -> Array {
        let n = shape.iter().product();
        let data: Vec<i32> =
            (0..n).map(|_| lo + self.below((hi - lo + 1) as usize) as i32).collect();
        Array::from_shape_vec(shape, data)
    }

    /// Integers in `lo..=hi` without zero (safe divisors).
    fn nonzero_i32s(&mut self, shape: &[usize], lo: i32, hi: i32) -> Array {
        let n = shape.iter().product();
        let data: Vec<i32> = (0..n)
            .map(|_| loop {
                let v = lo + self.below((hi - lo + 1) as usize) as i32;
                if v != 0 {
                    break v;
                }
            })
            .collect();
        Array::from_shape_vec(shape, data)
    }

    fn bools(&mut self, shape: &[usize]) -> Array {
        let n = shape.iter().product();
        let data: Vec<bool> = (0..n).map(|_| self.coin()).collect();
        Array::from_shape_vec(shape, data)
    }

    /// Two shapes that broadcast together: some extents 1, some leading axes dropped.
    fn broadcast_pair(&mut self) -> (Vec<usize>, Vec<usize>) {
        let out = self.shape(0, 3);
        let (mut a, mut b) = (out.clone(), out.clone());
        for d in 0..out.len() {
            match self.below(4) {
                0 => a[d] = 1,
                1 => b[d] = 1,
                _ => {}
            }
        }
        let drop_a = self.below(a.len() + 1).min(1 + self.below(2));
        let drop_b = if drop_a == 0 { self.below(b.len() + 1) } else { 0 };
        (a[drop_a.min(a.len())..].to_vec(), b[drop_b.min(b.len())..].to_vec())
    }
}

/// The bits of every element, widened losslessly to 64 bits.
fn bits(a: &Array) -> Vec<u64> {
    match a.dtype() {
        DType::F32 => a.to_vec::<f32>().unwrap().iter().map(|v| v.to_bits() as u64).collect(),
        DType::F64 => a.to_vec::<f64>().unwrap().iter().map(|v| v.to_bits()).collect(),
        DType::F16 | DType::BF16 => bits(&a.astype(DType::F32)),
        DType::Bool => a.to_vec::<bool>().unwrap().iter().map(|&v| v as u64).collect(),
        DType::U64 => a.to_vec::<u64>().unwrap(),
        _ => a.astype(DType::I64).to_vec::<i64>().unwrap().iter().map(|&v| v as u64).collect(),
    }
}

/// Same shape, dtype, weak type and bits.
#[track_caller]
fn assert_same(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.is_weak(), want.is_weak(), "{what}: weak type");
    assert!(bits(got) == bits(want), "{what}: values\n  jit   {got:?}\n  eager {want:?}");
}

#[track_caller]
fn assert_all_same(got: &[Array], want: &[Array], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: number of outputs");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_same(g, w, &format!("{what} [output {i}]"));
    }
}

/// One body, compiled as `$name::eager` (plain Rust, op by op) and `$name::jitted` (`#[jit]`).
macro_rules! twins {
    ($( $name:ident ( $($params:tt)* ) -> $ret:ty { $($body:tt)* } )*) => {$(
        #[allow(non_snake_case, unused_imports, clippy::redundant_clone)]
        mod $name {
            use super::*;

            pub fn eager($($params)*) -> $ret { $($body)* }

            #[jit]
            pub fn jitted($($params)*) -> $ret { $($body)* }
        }
    )*};
}

type Unary = fn(&Array) -> Array;
type Binary = fn(&Array, &Array) -> Array;
type Arrays = Vec<Array>;

const SEEDS: u64 = 12;

// --- Unary elementwise -----------------------------------------------------------------------

twins! {
    u_neg(x: &Array) -> Array { -x }
    u_negative(x: &Array) -> Array { jnp::negative(x) }
    u_abs(x: &Array) -> Array { x.abs() }
    u_sign(x: &Array) -> Array { x.sign() }
    u_square(x: &Array) -> Array { x.square() }
    u_exp(x: &Array) -> Array { x.exp() }
    u_exp2(x: &Array) -> Array { x.exp2() }
    u_log(x: &Array) -> Array { x.log() }
    u_log1p(x: &Array) -> Array { x.log1p() }
    u_expm1(x: &Array) -> Array { x.expm1() }
    u_sqrt(x: &Array) -> Array { x.sqrt() }
    u_rsqrt(x: &Array) -> Array { x.rsqrt() }
    u_cbrt(x: &Array) -> Array { x.cbrt() }
    u_reciprocal(x: &Array) -> Array { x.reciprocal() }
    u_sin(x: &Array) -> Array { x.sin() }
    u_cos(x: &Array) -> Array { x.cos() }
    u_tan(x: &Array) -> Array { x.tan() }
    u_asin(x: &Array) -> Array { x.asin() }
    u_acos(x: &Array) -> Array { x.acos() }
    u_atan(x: &Array) -> Array { x.atan() }
    u_sinh(x: &Array) -> Array { x.sinh() }
    u_cosh(x: &Array) -> Array { x.cosh() }
    u_tanh(x: &Array) -> Array { x.tanh() }
    u_asinh(x: &Array) -> Array { x.asinh() }
    u_acosh(x: &Array) -> Array { x.acosh() }
    u_atanh(x: &Array) -> Array { x.atanh() }
    u_sigmoid(x: &Array) -> Array { x.sigmoid() }
    u_softplus(x: &Array) -> Array { x.softplus() }
    u_erf(x: &Array) -> Array { x.erf() }
    u_erfinv(x: &Array) -> Array { (x / 3.0).erfinv() }
    u_floor(x: &Array) -> Array { x.floor() }
    u_ceil(x: &Array) -> Array { x.ceil() }
    u_round(x: &Array) -> Array { (x * 2.5).round() }
    u_isnan(x: &Array) -> Array { x.isnan() }
    u_isfinite(x: &Array) -> Array { x.isfinite() }
    u_jnp_fns(x: &Array) -> Array { jnp::tanh(&jnp::sin(x)) + jnp::abs(&jnp::cos(x)) }
    u_powi_0(x: &Array) -> Array { x.powi(0) }
    u_powi_1(x: &Array) -> Array { x.powi(1) }
    u_powi_2(x: &Array) -> Array { x.powi(2) }
    u_powi_3(x: &Array) -> Array { jnp::powi(x, 3) }
    u_powi_7(x: &Array) -> Array { x.powi(7) }
    u_powi_neg1(x: &Array) -> Array { x.powi(-1) }
    u_powi_neg3(x: &Array) -> Array { x.powi(-3) }
    u_clip(x: &Array) -> Array { x.clip(-1.0, 0.5) }
    u_chain(x: &Array) -> Array {
        let y = (x * 2.0 + 1.0).tanh() * x - x.exp().log1p();
        // sigmoid takes floats only; `x * 1.0` is one for integer `x` too.
        y.abs().sqrt() + (x * 1.0).sigmoid() * y.cos()
    }
}

/// Unary ops: name, eager, jitted, and whether integer inputs are allowed.
const UNARY: &[(&str, Unary, Unary, bool)] = &[
    ("neg", u_neg::eager, u_neg::jitted, true),
    ("negative", u_negative::eager, u_negative::jitted, true),
    ("abs", u_abs::eager, u_abs::jitted, true),
    ("sign", u_sign::eager, u_sign::jitted, true),
    ("square", u_square::eager, u_square::jitted, true),
    ("exp", u_exp::eager, u_exp::jitted, true),
    ("exp2", u_exp2::eager, u_exp2::jitted, true),
    ("log", u_log::eager, u_log::jitted, true),
    ("log1p", u_log1p::eager, u_log1p::jitted, true),
    ("expm1", u_expm1::eager, u_expm1::jitted, true),
    ("sqrt", u_sqrt::eager, u_sqrt::jitted, true),
    ("rsqrt", u_rsqrt::eager, u_rsqrt::jitted, false),
    ("cbrt", u_cbrt::eager, u_cbrt::jitted, true),
    ("reciprocal", u_reciprocal::eager, u_reciprocal::jitted, true),
    ("sin", u_sin::eager, u_sin::jitted, true),
    ("cos", u_cos::eager, u_cos::jitted, true),
    ("tan", u_tan::eager, u_tan::jitted, true),
    ("asin", u_asin::eager, u_asin::jitted, true),
    ("acos", u_acos::eager, u_acos::jitted, true),
    ("atan", u_atan::eager, u_atan::jitted, true),
    ("sinh", u_sinh::eager, u_sinh::jitted, true),
    ("cosh", u_cosh::eager, u_cosh::jitted, true),
    ("tanh", u_tanh::eager, u_tanh::jitted, true),
    ("asinh", u_asinh::eager, u_asinh::jitted, true),
    ("acosh", u_acosh::eager, u_acosh::jitted, true),
    ("atanh", u_atanh::eager, u_atanh::jitted, true),
    ("sigmoid", u_sigmoid::eager, u_sigmoid::jitted, false),
    ("softplus", u_softplus::eager, u_softplus::jitted, true),
    ("erf", u_erf::eager, u_erf::jitted, true),
    ("erfinv", u_erfinv::eager, u_erfinv::jitted, true),
    ("floor", u_floor::eager, u_floor::jitted, true),
    ("ceil", u_ceil::eager, u_ceil::jitted, true),
    ("round", u_round::eager, u_round::jitted, true),
    ("isnan", u_isnan::eager, u_isnan::jitted, true),
    ("isfinite", u_isfinite::eager, u_isfinite::jitted, true),
    ("jnp fns", u_jnp_fns::eager, u_jnp_fns::jitted, true),
    ("powi(0)", u_powi_0::eager, u_powi_0::jitted, true),
    ("powi(1)", u_powi_1::eager, u_powi_1::jitted, true),
    ("powi(2)", u_powi_2::eager, u_powi_2::jitted, true),
    ("powi(3)", u_powi_3::eager, u_powi_3::jitted, true),
    ("powi(7)", u_powi_7::eager, u_powi_7::jitted, true),
    ("powi(-1)", u_powi_neg1::eager, u_powi_neg1::jitted, false),
    ("powi(-3)", u_powi_neg3::eager, u_powi_neg3::jitted, false),
    ("clip", u_clip::eager, u_clip::jitted, true),
    ("chain", u_chain::eager, u_chain::jitted, true),
];

#[test]
fn unary_elementwise() {
    let _x64 = rjax::config::x64_scope(true);
    for &(name, eager, jitted, ints) in UNARY {
        let mut rng = Rng::new(1);
        for seed in 0..SEEDS {
            let shape = rng.shape(0, 3);
            let x = match seed % 4 {
                0 | 1 => rng.floats(&shape, DType::F32, false),
                2 => rng.floats(&shape, DType::F64, false),
                _ if ints => rng.i32s(&shape, -4, 4),
                _ => rng.floats(&shape, DType::F32, true),
            };
            assert_same(&jitted(&x), &eager(&x), &format!("{name} on {x:?}"));
        }
    }
}

twins! {
    u_not(x: &Array) -> Array { x.logical_not() }
    u_not_op(x: &Array) -> Array { !x }
}

#[test]
fn logical_not_on_bools_and_ints() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(2);
    for _ in 0..SEEDS {
        let shape = rng.shape(0, 3);
        for x in [rng.bools(&shape), rng.i32s(&shape, -8, 8)] {
            assert_same(&u_not::jitted(&x), &u_not::eager(&x), "logical_not");
            assert_same(&u_not_op::jitted(&x), &u_not_op::eager(&x), "!x");
        }
    }
}

// --- Binary elementwise with broadcasting ----------------------------------------------------

twins! {
    b_add(x: &Array, y: &Array) -> Array { x + y }
    b_sub(x: &Array, y: &Array) -> Array { x - y }
    b_mul(x: &Array, y: &Array) -> Array { x * y }
    b_div(x: &Array, y: &Array) -> Array { x / y }
    b_rem(x: &Array, y: &Array) -> Array { x % y }
    b_owned_ops(x: &Array, y: &Array) -> Array { (x.clone() + y.clone()) * (x - y.clone()) }
    b_jnp_add(x: &Array, y: &Array) -> Array { jnp::add(x, y) }
    b_pow(x: &Array, y: &Array) -> Array { x.pow(y) }
    b_maximum(x: &Array, y: &Array) -> Array { jnp::maximum(x, y) }
    b_minimum(x: &Array, y: &Array) -> Array { x.minimum(y) }
    b_atan2(x: &Array, y: &Array) -> Array { jnp::atan2(x, y) }
    b_floor_divide(x: &Array, y: &Array) -> Array { jnp::floor_divide(x, y) }
    b_remainder(x: &Array, y: &Array) -> Array { jnp::remainder(x, y) }
    b_fmod(x: &Array, y: &Array) -> Array { jnp::fmod(x, y) }
    b_trunc_divide(x: &Array, y: &Array) -> Array { jnp::trunc_divide(x, y) }
    b_logaddexp(x: &Array, y: &Array) -> Array { jnp::logaddexp(x, y) }
    b_nextafter(x: &Array, y: &Array) -> Array { jnp::nextafter(x, y) }
    b_eq(x: &Array, y: &Array) -> Array { x.eq(y) }
    b_ne(x: &Array, y: &Array) -> Array { x.ne(y) }
    b_lt(x: &Array, y: &Array) -> Array { x.lt(y) }
    b_le(x: &Array, y: &Array) -> Array { jnp::less_equal(x, y) }
    b_gt(x: &Array, y: &Array) -> Array { x.gt(y) }
    b_ge(x: &Array, y: &Array) -> Array { x.ge(y) }
    b_where(x: &Array, y: &Array) -> Array { jnp::where_(x.gt(y), x, y) }
    b_where_scalars(x: &Array, y: &Array) -> Array {
        jnp::where_(x.lt(y), 1.0, -1.0) + jnp::where_(x.ge(0.0), y, 0.0)
    }
    b_where_nonbool(x: &Array, y: &Array) -> Array { jnp::where_(x.floor(), x, y) }
}

/// Binary ops: name, eager, jitted, and which operand kinds they take.
#[derive(Clone, Copy, PartialEq)]
enum Kinds {
    /// Floats and integers (zero divisors and negative exponents included: integer division
    /// by zero and negative powers have XLA's defined results).
    Numeric,
    /// Floats only.
    Float,
}

const BINARY: &[(&str, Binary, Binary, Kinds)] = &[
    ("+", b_add::eager, b_add::jitted, Kinds::Numeric),
    ("-", b_sub::eager, b_sub::jitted, Kinds::Numeric),
    ("*", b_mul::eager, b_mul::jitted, Kinds::Numeric),
    ("/", b_div::eager, b_div::jitted, Kinds::Numeric),
    ("%", b_rem::eager, b_rem::jitted, Kinds::Numeric),
    ("owned operands", b_owned_ops::eager, b_owned_ops::jitted, Kinds::Numeric),
    ("jnp::add", b_jnp_add::eager, b_jnp_add::jitted, Kinds::Numeric),
    ("pow", b_pow::eager, b_pow::jitted, Kinds::Numeric),
    ("maximum", b_maximum::eager, b_maximum::jitted, Kinds::Numeric),
    ("minimum", b_minimum::eager, b_minimum::jitted, Kinds::Numeric),
    ("atan2", b_atan2::eager, b_atan2::jitted, Kinds::Numeric),
    ("floor_divide", b_floor_divide::eager, b_floor_divide::jitted, Kinds::Numeric),
    ("remainder", b_remainder::eager, b_remainder::jitted, Kinds::Numeric),
    ("fmod", b_fmod::eager, b_fmod::jitted, Kinds::Numeric),
    ("trunc_divide", b_trunc_divide::eager, b_trunc_divide::jitted, Kinds::Numeric),
    ("logaddexp", b_logaddexp::eager, b_logaddexp::jitted, Kinds::Numeric),
    ("nextafter", b_nextafter::eager, b_nextafter::jitted, Kinds::Float),
    ("eq", b_eq::eager, b_eq::jitted, Kinds::Numeric),
    ("ne", b_ne::eager, b_ne::jitted, Kinds::Numeric),
    ("lt", b_lt::eager, b_lt::jitted, Kinds::Numeric),
    ("le", b_le::eager, b_le::jitted, Kinds::Numeric),
    ("gt", b_gt::eager, b_gt::jitted, Kinds::Numeric),
    ("ge", b_ge::eager, b_ge::jitted, Kinds::Numeric),
    ("where", b_where::eager, b_where::jitted, Kinds::Numeric),
    ("where with scalars", b_where_scalars::eager, b_where_scalars::jitted, Kinds::Numeric),
    ("where on a float condition", b_where_nonbool::eager, b_where_nonbool::jitted, Kinds::Float),
];

#[test]
fn binary_elementwise_with_broadcasting() {
    let _x64 = rjax::config::x64_scope(true);
    for &(name, eager, jitted, kinds) in BINARY {
        let mut rng = Rng::new(3);
        for seed in 0..SEEDS {
            let (sa, sb) = rng.broadcast_pair();
            let (x, y) = match (seed % 4, kinds) {
                (3, Kinds::Numeric) => (rng.i32s(&sa, -5, 5), rng.i32s(&sb, -5, 5)),
                (2, _) => (rng.floats(&sa, DType::F64, false), rng.floats(&sb, DType::F32, false)),
                (1, _) => (rng.floats(&sa, DType::F32, true), rng.floats(&sb, DType::F32, false)),
                _ => (rng.floats(&sa, DType::F32, false), rng.floats(&sb, DType::F32, false)),
            };
            let what = format!("{name} on {x:?} and {y:?}");
            assert_same(&jitted(&x, &y), &eager(&x, &y), &what);
            assert_same(&jitted(&y, &x), &eager(&y, &x), &what);
        }
    }
}

twins! {
    l_and(x: &Array, y: &Array) -> Array { jnp::logical_and(x, y) }
    l_or(x: &Array, y: &Array) -> Array { x.logical_or(y) }
    l_xor(x: &Array, y: &Array) -> Array { x.logical_xor(y) }
    l_ops(x: &Array, y: &Array) -> Array { (x & y) | (x ^ y) }
}

#[test]
fn logical_binary_ops() {
    let _x64 = rjax::config::x64_scope(true);
    let ops: [(&str, Binary, Binary); 4] = [
        ("and", l_and::eager, l_and::jitted),
        ("or", l_or::eager, l_or::jitted),
        ("xor", l_xor::eager, l_xor::jitted),
        ("& | ^", l_ops::eager, l_ops::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(4);
        for seed in 0..SEEDS {
            let (sa, sb) = rng.broadcast_pair();
            let (x, y) = if seed % 2 == 0 {
                (rng.bools(&sa), rng.bools(&sb))
            } else {
                (rng.i32s(&sa, -9, 9), rng.i32s(&sb, -9, 9))
            };
            assert_same(&jitted(&x, &y), &eager(&x, &y), name);
        }
    }
}

// --- Rust scalars on either side ---------------------------------------------------------------

twins! {
    s_add_right(x: &Array) -> Array { x + 2.5 }
    s_add_left(x: &Array) -> Array { 2.5 + x }
    s_sub_left(x: &Array) -> Array { 1.0 - x }
    s_mul_int_left(x: &Array) -> Array { 3 * x }
    s_mul_int_right(x: &Array) -> Array { x * 3 }
    s_div_left(x: &Array) -> Array { 1.0 / x }
    s_div_right(x: &Array) -> Array { x / 4.0 }
    s_rem(x: &Array) -> Array { x % 2.0 }
    s_rem_left(x: &Array) -> Array { 7.5 % x }
    s_f32_suffix(x: &Array) -> Array { x * 0.1f32 + 2i64 }
    s_f64_suffix(x: &Array) -> Array { x - 1e-3f64 }
    s_pow(x: &Array) -> Array { x.pow(2.0) + jnp::pow(2.0, x) }
    s_max_min(x: &Array) -> Array { jnp::maximum(x, 0.0) + jnp::minimum(1, x) }
    s_compare(x: &Array) -> Array { x.gt(0.5) }
    s_compare_left(x: &Array) -> Array { jnp::less(0.5, x) }
    s_chain(x: &Array) -> Array { (2.0 * x - 1.0) * (x + 1) / 3.0 }
    s_assign_ops(x: &Array) -> Array {
        let mut y = x.clone();
        y += 1.0;
        y *= x;
        y -= 2;
        y /= 3.0;
        y
    }
}

#[test]
fn rust_scalars_on_either_side() {
    let _x64 = rjax::config::x64_scope(true);
    let ops: [(&str, Unary, Unary); 17] = [
        ("x + 2.5", s_add_right::eager, s_add_right::jitted),
        ("2.5 + x", s_add_left::eager, s_add_left::jitted),
        ("1.0 - x", s_sub_left::eager, s_sub_left::jitted),
        ("3 * x", s_mul_int_left::eager, s_mul_int_left::jitted),
        ("x * 3", s_mul_int_right::eager, s_mul_int_right::jitted),
        ("1.0 / x", s_div_left::eager, s_div_left::jitted),
        ("x / 4.0", s_div_right::eager, s_div_right::jitted),
        ("x % 2.0", s_rem::eager, s_rem::jitted),
        ("7.5 % x", s_rem_left::eager, s_rem_left::jitted),
        ("suffixed f32 and i64", s_f32_suffix::eager, s_f32_suffix::jitted),
        ("suffixed f64", s_f64_suffix::eager, s_f64_suffix::jitted),
        ("pow", s_pow::eager, s_pow::jitted),
        ("maximum/minimum", s_max_min::eager, s_max_min::jitted),
        ("x > 0.5", s_compare::eager, s_compare::jitted),
        ("0.5 < x", s_compare_left::eager, s_compare_left::jitted),
        ("chain", s_chain::eager, s_chain::jitted),
        ("compound assignment", s_assign_ops::eager, s_assign_ops::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(5);
        for seed in 0..SEEDS {
            let shape = rng.shape(0, 3);
            let x = match seed % 4 {
                0 => rng.floats(&shape, DType::F32, false),
                1 => rng.floats(&shape, DType::F64, false),
                2 => rng.floats(&shape, DType::F32, true),
                _ => rng.nonzero_i32s(&shape, -4, 4),
            };
            assert_same(&jitted(&x), &eager(&x), &format!("{name} on {x:?}"));
        }
    }
}

// --- Comparison operators and && / || (traced code only) -----------------------------------

#[jit]
fn comparison_operators(x: &Array, y: &Array) -> (Array, Array, Array, Array, Array, Array) {
    (x > y, x <= y, x == y, x != y, x >= 0.0, 0.5 < x)
}

#[jit]
fn logical_operators(x: &Array, y: &Array) -> (Array, Array) {
    (x > 0.0 && y < 0.0, x.isnan() || y > x)
}

#[test]
fn comparison_and_logical_operators() {
    let mut rng = Rng::new(6);
    for _ in 0..SEEDS {
        let (sa, sb) = rng.broadcast_pair();
        let (x, y) = (rng.f32s(&sa), rng.f32s(&sb));
        let got = comparison_operators(&x, &y);
        let want = [x.gt(&y), x.le(&y), x.eq(&y), x.ne(&y), x.ge(0.0), jnp::less(0.5, &x)];
        assert_all_same(&tree::leaves(&got), &want, "comparison operators");
        let (and, or) = logical_operators(&x, &y);
        assert_same(&and, &jnp::logical_and(x.gt(0.0), y.lt(0.0)), "&&");
        assert_same(&or, &jnp::logical_or(x.isnan(), y.gt(&x)), "||");
    }
}

// --- Type promotion --------------------------------------------------------------------------

#[jit]
fn golden_promotions(i: &Array, h: &Array, u: &Array) -> (Array, Array, Array, Array) {
    (i + 1.5, i * 2, h + 1.0, u + 300)
}

#[test]
fn golden_int_array_plus_python_float() {
    let _x64 = rjax::config::x64_scope(true);
    let i = jnp::array([1, 2]);
    let h = jnp::array([1.0f32]).astype(DType::F16);
    let u = jnp::array([1u8]);
    let (a, b, c, d) = golden_promotions(&i, &h, &u);
    for (k, got) in [a, b, c, d].iter().enumerate() {
        common::assert_golden("int_array_plus_python_float", k, got);
    }
}

twins! {
    p_add(x: &Array, y: &Array) -> Array { x + y }
    p_mul_where(x: &Array, y: &Array) -> Array { jnp::where_(x.ne(y), x * y, y) }
    p_concat(x: &Array, y: &Array) -> Array { jnp::concatenate(&[x.reshape([-1]), y.reshape([-1])], 0) }
    p_max(x: &Array, y: &Array) -> Array { jnp::maximum(x, y) }
}

#[test]
fn type_promotion_matches_eager() {
    let _x64 = rjax::config::x64_scope(true);
    let kinds: [(DType, bool); 9] = [
        (DType::Bool, false),
        (DType::I32, false),
        (DType::I32, true),
        (DType::I64, false),
        (DType::U32, false),
        (DType::U8, false),
        (DType::F32, false),
        (DType::F32, true),
        (DType::F64, false),
    ];
    let ops: [(&str, Binary, Binary); 4] = [
        ("+", p_add::eager, p_add::jitted),
        ("where(x != y, x * y, y)", p_mul_where::eager, p_mul_where::jitted),
        ("concatenate", p_concat::eager, p_concat::jitted),
        ("maximum", p_max::eager, p_max::jitted),
    ];
    let mut rng = Rng::new(7);
    for &(da, wa) in &kinds {
        for &(db, wb) in &kinds {
            let (sa, sb) = rng.broadcast_pair();
            let x = rng.i32s(&sa, 0, 3).astype(da).with_weak_type(wa);
            let y = rng.i32s(&sb, 0, 3).astype(db).with_weak_type(wb);
            for (name, eager, jitted) in ops {
                let arithmetic = name != "concatenate" && name != "maximum";
                if arithmetic && da == DType::Bool && db == DType::Bool {
                    continue;
                }
                let what = format!("{name} on {da:?}(weak={wa}) and {db:?}(weak={wb})");
                assert_same(&jitted(&x, &y), &eager(&x, &y), &what);
            }
        }
    }
}

// --- Reductions ------------------------------------------------------------------------------

twins! {
    r_sum(x: &Array, axis: isize, keepdims: bool) -> Array { x.sum_axes(axis, keepdims) }
    r_mean(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::mean_axes(x, axis, keepdims) }
    r_max(x: &Array, axis: isize, keepdims: bool) -> Array { x.max_axes(axis, keepdims) }
    r_min(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::min_axes(x, axis, keepdims) }
    r_prod(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::prod_axes(x, axis, keepdims) }
    r_var(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::var_axes(x, axis, keepdims) }
    r_var_ddof(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::var_ddof(x, axis, keepdims, 1) }
    r_std(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::std_axes(x, axis, keepdims) }
    r_logsumexp(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::logsumexp_axes(x, axis, keepdims) }
    r_argmax(x: &Array, axis: isize, keepdims: bool) -> Array { x.argmax_axis(axis, keepdims) }
    r_argmin(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::argmin_axis(x, axis, keepdims) }
    r_all(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::all_axes(&x.gt(0.0), axis, keepdims) }
    r_any(x: &Array, axis: isize, keepdims: bool) -> Array { jnp::any_axes(&x.lt(-1.0), axis, keepdims) }
    r_softmax(x: &Array, axis: isize, keepdims: bool) -> Array {
        let _ = keepdims;
        jnp::softmax(x, axis)
    }
    r_log_softmax(x: &Array, axis: isize, keepdims: bool) -> Array {
        let _ = keepdims;
        jnp::log_softmax(x, axis)
    }
    r_cumsum(x: &Array, axis: isize, keepdims: bool) -> Array {
        if keepdims { x.cumsum(Some(axis)) } else { jnp::cumsum(x, None) }
    }
    r_cumprod(x: &Array, axis: isize, keepdims: bool) -> Array {
        if keepdims { x.cumprod(Some(axis)) } else { jnp::cumprod(x, None) }
    }
    r_cummax(x: &Array, axis: isize, keepdims: bool) -> Array {
        if keepdims { jnp::cummax(x, Some(axis)) } else { jnp::cummin(x, Some(axis)) }
    }
    r_normalize(x: &Array, axis: isize, keepdims: bool) -> Array {
        let _ = keepdims;
        let m = x.mean_axes(axis, true);
        let s = jnp::std_axes(x, axis, true);
        (x - m) / (s + 1e-5)
    }
}

type Reduction = fn(&Array, isize, bool) -> Array;

/// Reductions: name, eager, jitted, and whether integer inputs are allowed.
const REDUCTIONS: &[(&str, Reduction, Reduction, bool)] = &[
    ("sum", r_sum::eager, r_sum::jitted, true),
    ("mean", r_mean::eager, r_mean::jitted, true),
    ("max", r_max::eager, r_max::jitted, true),
    ("min", r_min::eager, r_min::jitted, true),
    ("prod", r_prod::eager, r_prod::jitted, false),
    ("var", r_var::eager, r_var::jitted, true),
    ("var ddof=1", r_var_ddof::eager, r_var_ddof::jitted, false),
    ("std", r_std::eager, r_std::jitted, true),
    ("logsumexp", r_logsumexp::eager, r_logsumexp::jitted, true),
    ("argmax", r_argmax::eager, r_argmax::jitted, true),
    ("argmin", r_argmin::eager, r_argmin::jitted, true),
    ("all", r_all::eager, r_all::jitted, true),
    ("any", r_any::eager, r_any::jitted, true),
    ("softmax", r_softmax::eager, r_softmax::jitted, false),
    ("log_softmax", r_log_softmax::eager, r_log_softmax::jitted, false),
    ("cumsum", r_cumsum::eager, r_cumsum::jitted, true),
    ("cumprod", r_cumprod::eager, r_cumprod::jitted, false),
    ("cummax/cummin", r_cummax::eager, r_cummax::jitted, true),
    ("normalize", r_normalize::eager, r_normalize::jitted, false),
];

#[test]
fn reductions_over_one_axis() {
    let _x64 = rjax::config::x64_scope(true);
    for &(name, eager, jitted, ints) in REDUCTIONS {
        let mut rng = Rng::new(8);
        for seed in 0..SEEDS {
            let shape = rng.shape(1, 3);
            let rank = shape.len() as isize;
            let axis = rng.below(2 * shape.len()) as isize - rank;
            let keepdims = rng.coin();
            let x = match seed % 3 {
                0 => rng.floats(&shape, DType::F32, false),
                1 => rng.floats(&shape, DType::F64, false),
                _ if ints => rng.i32s(&shape, -3, 3),
                _ => rng.finite_f32s(&shape),
            };
            let what = format!("{name} over axis {axis} (keepdims {keepdims}) of {x:?}");
            assert_same(&jitted(&x, axis, keepdims), &eager(&x, axis, keepdims), &what);
        }
    }
}

/// The axes whose bit is set in `mask`.
fn mask_axes(rank: usize, mask: usize) -> Vec<isize> {
    (0..rank).filter(|a| mask >> a & 1 == 1).map(|a| a as isize).collect()
}

twins! {
    m_sum(x: &Array, mask: usize, keepdims: bool) -> Array {
        jnp::sum_axes(x, mask_axes(x.ndim(), mask), keepdims)
    }
    m_mean(x: &Array, mask: usize, keepdims: bool) -> Array {
        x.mean_axes(mask_axes(x.ndim(), mask), keepdims)
    }
    m_max(x: &Array, mask: usize, keepdims: bool) -> Array {
        jnp::max_axes(x, mask_axes(x.ndim(), mask), keepdims)
    }
    m_logsumexp(x: &Array, mask: usize, keepdims: bool) -> Array {
        jnp::logsumexp_axes(x, mask_axes(x.ndim(), mask), keepdims)
    }
    m_var(x: &Array, mask: usize, keepdims: bool) -> Array {
        jnp::var_axes(x, mask_axes(x.ndim(), mask), keepdims)
    }
    m_softmax(x: &Array, mask: usize, keepdims: bool) -> Array {
        let _ = keepdims;
        jnp::softmax(x, mask_axes(x.ndim(), mask))
    }
}

type MaskReduction = fn(&Array, usize, bool) -> Array;

#[test]
fn reductions_over_several_axes() {
    let ops: [(&str, MaskReduction, MaskReduction); 6] = [
        ("sum", m_sum::eager, m_sum::jitted),
        ("mean", m_mean::eager, m_mean::jitted),
        ("max", m_max::eager, m_max::jitted),
        ("logsumexp", m_logsumexp::eager, m_logsumexp::jitted),
        ("var", m_var::eager, m_var::jitted),
        ("softmax", m_softmax::eager, m_softmax::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(9);
        for _ in 0..SEEDS {
            let shape = rng.shape(1, 4);
            let mask = 1 + rng.below((1 << shape.len()) - 1);
            let keepdims = rng.coin();
            let x = rng.f32s(&shape);
            let what = format!("{name} over axes {:?} of {x:?}", mask_axes(shape.len(), mask));
            assert_same(&jitted(&x, mask, keepdims), &eager(&x, mask, keepdims), &what);
        }
    }
}

twins! {
    full_reductions(x: &Array) -> Arrays {
        vec![
            x.sum(),
            x.mean(),
            jnp::max(x),
            x.min(),
            jnp::prod(x),
            x.argmax(),
            jnp::argmin(x),
            jnp::var(x),
            jnp::std(x),
            jnp::logsumexp(x),
            jnp::all(&x.isfinite()),
            jnp::any(&x.isnan()),
        ]
    }
}

#[test]
fn reductions_over_all_axes() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(10);
    for seed in 0..SEEDS {
        let shape = rng.shape(0, 3);
        let x =
            if seed % 2 == 0 { rng.f32s(&shape) } else { rng.floats(&shape, DType::F64, false) };
        assert_all_same(
            &full_reductions::jitted(&x),
            &full_reductions::eager(&x),
            "full reductions",
        );
    }
}

// --- Shape ops -------------------------------------------------------------------------------

/// A target shape for `x` with one `-1`, chosen by `kind`.
fn target_shape(shape: &[usize], kind: usize) -> Vec<isize> {
    let n: usize = shape.iter().product();
    match kind % 4 {
        0 => vec![-1],
        1 => vec![1, -1, 1],
        2 if !shape.is_empty() => vec![-1, *shape.last().unwrap() as isize],
        _ => {
            let mut s: Vec<isize> = shape.iter().rev().map(|&d| d as isize).collect();
            if let Some(first) = s.first_mut() {
                *first = -1;
            }
            if s.is_empty() {
                s.push(n as isize);
            }
            s
        }
    }
}

/// Axes `0..rank` rotated left by `k`.
fn rotated(rank: usize, k: usize) -> Vec<isize> {
    (0..rank).map(|i| ((i + k) % rank.max(1)) as isize).collect()
}

/// `shape` with a new leading axis of 2 and its extents of 1 widened to 3.
fn widened(shape: &[usize]) -> Vec<usize> {
    std::iter::once(2).chain(shape.iter().map(|&d| if d == 1 { 3 } else { d })).collect()
}

twins! {
    sh_reshape(x: &Array, kind: usize) -> Array { x.reshape(target_shape(x.shape(), kind)) }
    sh_ravel(x: &Array, kind: usize) -> Array {
        let _ = kind;
        x.ravel() + jnp::ravel(x) * 2.0 + x.flatten()
    }
    sh_transpose(x: &Array, kind: usize) -> Array { x.transpose(Some(rotated(x.ndim(), kind).as_slice())) }
    sh_transpose_default(x: &Array, kind: usize) -> Array {
        let _ = kind;
        jnp::transpose(x, None)
    }
    sh_t(x: &Array, kind: usize) -> Array {
        let _ = kind;
        x.t() * 2.0
    }
    sh_permute(x: &Array, kind: usize) -> Array { jnp::permute_dims(x, rotated(x.ndim(), kind + 1)) }
    sh_swapaxes(x: &Array, kind: usize) -> Array {
        let r = x.ndim().max(1) as isize;
        x.swapaxes(kind as isize % r, -1)
    }
    sh_moveaxis(x: &Array, kind: usize) -> Array {
        let r = x.ndim().max(1) as isize;
        jnp::moveaxis(x, 0, kind as isize % r)
    }
    sh_broadcast(x: &Array, kind: usize) -> Array {
        let _ = kind;
        x.broadcast_to(widened(x.shape()))
    }
    sh_expand_squeeze(x: &Array, kind: usize) -> Array {
        let axis = (kind % (x.ndim() + 1)) as isize;
        let e = x.expand_dims(axis);
        (e.squeeze(axis) + 1.0).expand_dims(-1) * jnp::expand_dims(x, [0, -1]).squeeze(0)
    }
    sh_flip(x: &Array, kind: usize) -> Array { x.flip(mask_axes(x.ndim(), kind)) }
    sh_pad(x: &Array, kind: usize) -> Array {
        let widths: Vec<(usize, usize)> = (0..x.ndim()).map(|a: usize| (a % 2, (a + kind) % 3)).collect();
        jnp::pad(x, widths, -1.5)
    }
    sh_tile(x: &Array, kind: usize) -> Array { x.tile([1 + kind % 2, 2]) }
    sh_repeat(x: &Array, kind: usize) -> Array {
        if x.ndim() == 0 { x.repeat(3, None) } else { x.repeat(1 + kind % 3, Some(-1)) }
    }
}

type ShapeOp = fn(&Array, usize) -> Array;

const SHAPE_OPS: &[(&str, ShapeOp, ShapeOp, usize)] = &[
    ("reshape", sh_reshape::eager, sh_reshape::jitted, 0),
    ("ravel", sh_ravel::eager, sh_ravel::jitted, 0),
    ("transpose", sh_transpose::eager, sh_transpose::jitted, 0),
    ("transpose(None)", sh_transpose_default::eager, sh_transpose_default::jitted, 0),
    ("t", sh_t::eager, sh_t::jitted, 0),
    ("permute_dims", sh_permute::eager, sh_permute::jitted, 0),
    ("swapaxes", sh_swapaxes::eager, sh_swapaxes::jitted, 1),
    ("moveaxis", sh_moveaxis::eager, sh_moveaxis::jitted, 1),
    ("broadcast_to", sh_broadcast::eager, sh_broadcast::jitted, 0),
    ("expand_dims/squeeze", sh_expand_squeeze::eager, sh_expand_squeeze::jitted, 0),
    ("flip", sh_flip::eager, sh_flip::jitted, 0),
    ("pad", sh_pad::eager, sh_pad::jitted, 0),
    ("tile", sh_tile::eager, sh_tile::jitted, 0),
    ("repeat", sh_repeat::eager, sh_repeat::jitted, 0),
];

#[test]
fn shape_ops() {
    let _x64 = rjax::config::x64_scope(true);
    for &(name, eager, jitted, min_rank) in SHAPE_OPS {
        let mut rng = Rng::new(11);
        for seed in 0..SEEDS {
            let shape = rng.shape(min_rank, 4);
            let kind = rng.below(16);
            let x = match seed % 3 {
                0 => rng.f32s(&shape),
                1 => rng.i32s(&shape, -9, 9),
                _ => rng.floats(&shape, DType::F32, true),
            };
            let what = format!("{name} (kind {kind}) of {x:?}");
            assert_same(&jitted(&x, kind), &eager(&x, kind), &what);
        }
    }
}

twins! {
    sh_concatenate(xs: &[Array], axis: isize) -> Array { jnp::concatenate(xs, axis) }
    sh_stack(xs: &[Array], axis: isize) -> Array { jnp::stack(xs, axis) }
    sh_split(x: &Array, axis: isize) -> Arrays {
        let n = x.shape()[axis.rem_euclid(x.ndim() as isize) as usize];
        let mut parts = jnp::split(x, [1, n as isize - 1], axis);
        parts.extend(jnp::split(x, 1, axis));
        parts
    }
    sh_concat_literal(xs: &[Array], axis: isize) -> Array {
        let _ = axis;
        let first = &xs[0];
        jnp::concatenate(&[first.clone(), first * 2.0, jnp::zeros_like(first)], 0)
    }
}

#[test]
fn joining_and_splitting() {
    let mut rng = Rng::new(12);
    for _ in 0..SEEDS {
        let shape = rng.shape(1, 3);
        let rank = shape.len();
        let axis = rng.below(rank);
        let count = 1 + rng.below(3);
        let parts: Vec<Array> = (0..count)
            .map(|_| {
                let mut s = shape.clone();
                s[axis] = 1 + rng.below(3);
                rng.f32s(&s)
            })
            .collect();
        let ax = axis as isize - if rng.coin() { rank as isize } else { 0 };
        let what = format!("concatenate along {ax} of {parts:?}");
        assert_same(&sh_concatenate::jitted(&parts, ax), &sh_concatenate::eager(&parts, ax), &what);
        let same: Vec<Array> = (0..count).map(|_| rng.f32s(&shape)).collect();
        let sax = rng.below(rank + 1) as isize;
        let what = format!("stack along {sax} of {same:?}");
        assert_same(&sh_stack::jitted(&same, sax), &sh_stack::eager(&same, sax), &what);
        assert_same(
            &sh_concat_literal::jitted(&same, 0),
            &sh_concat_literal::eager(&same, 0),
            "concatenate with constants",
        );
        let x = rng.f32s(&shape);
        let what = format!("split along {ax} of {x:?}");
        assert_all_same(&sh_split::jitted(&x, ax), &sh_split::eager(&x, ax), &what);
    }
}

twins! {
    sl_rows(x: &Array) -> Array { x.slice(s![1.., ..;2]) }
    sl_reversed(x: &Array) -> Array { x.slice(s![..;-1, NewAxis, 0]) }
    sl_ellipsis(x: &Array) -> Array { x.slice(s![..., 1..3]) }
    sl_last(x: &Array) -> Array { x.slice(s![-1]) }
    sl_clamped(x: &Array) -> Array { x.slice(s![10, -7..=20]) }
    sl_stepped(x: &Array) -> Array { x.slice(s![0..4;-1, 1..;3]) }
    sl_gather(x: &Array) -> Array { x.slice(s![&jnp::array([2, 0, -1, 7]), ..]) }
    sl_mixed(x: &Array) -> Array { x.slice(s![.., &jnp::array([1, 1, 0])]) + x.slice(s![0, NewAxis, ..1]) }
}

#[test]
fn slicing_with_s() {
    let ops: [(&str, Unary, Unary); 8] = [
        ("s![1.., ..;2]", sl_rows::eager, sl_rows::jitted),
        ("s![..;-1, NewAxis, 0]", sl_reversed::eager, sl_reversed::jitted),
        ("s![..., 1..3]", sl_ellipsis::eager, sl_ellipsis::jitted),
        ("s![-1]", sl_last::eager, sl_last::jitted),
        ("s![10, -7..=20]", sl_clamped::eager, sl_clamped::jitted),
        ("s![0..4;-1, 1..;3]", sl_stepped::eager, sl_stepped::jitted),
        ("s![&idx, ..]", sl_gather::eager, sl_gather::jitted),
        ("s![.., &idx] + s![0, NewAxis, ..1]", sl_mixed::eager, sl_mixed::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(13);
        for _ in 0..SEEDS {
            let shape = rng.shape(2, 3);
            let x = rng.f32s(&shape);
            assert_same(&jitted(&x), &eager(&x), &format!("{name} of {x:?}"));
        }
    }
}

// --- Indexing --------------------------------------------------------------------------------

twins! {
    ix_take(x: &Array, idx: &Array) -> Array { x.take(idx, Some(0)) }
    ix_take_flat(x: &Array, idx: &Array) -> Array { jnp::take(x, idx, None) }
    ix_take_clip(x: &Array, idx: &Array) -> Array { jnp::take_mode(x, idx, Some(-1), jnp::IndexMode::Clip) }
    ix_take_const(x: &Array, idx: &Array) -> Array {
        let _ = idx;
        x.take(jnp::array([0, 0, 1]), Some(0))
    }
    ix_take_along(x: &Array, idx: &Array) -> Array {
        let i = jnp::broadcast_to(&idx.reshape([-1, 1]), [idx.size(), x.shape()[1]]);
        jnp::take_along_axis(&x.slice(s![..1, ..]).broadcast_to([idx.size(), x.shape()[1]]), &i.remainder(x.shape()[1] as i32), 1)
    }
    ix_set(x: &Array, idx: &Array) -> Array { x.at(s![&idx.remainder(x.shape()[0] as i32)]).set(-5.0) }
    ix_add(x: &Array, idx: &Array) -> Array { x.at(s![idx]).add(1.0) }
    ix_mul(x: &Array, idx: &Array) -> Array { x.at(s![idx, 0]).mul(3.0) }
    ix_min_max(x: &Array, idx: &Array) -> Array { x.at(s![idx]).min(0.0) - x.at(s![idx]).max(0.5) }
    ix_set_range(x: &Array, idx: &Array) -> Array {
        let v = idx.astype(DType::F32).sum() * x.slice(s![0]);
        x.at(s![1..3]).set(&v)
    }
    ix_set_column(x: &Array, idx: &Array) -> Array {
        let _ = idx;
        x.at(s![.., 0]).set(x.slice(s![.., 1]).exp())
    }
    ix_get(x: &Array, idx: &Array) -> Array { x.at(s![idx]).get() }
    ix_one_hot(x: &Array, idx: &Array) -> Array { jnp::one_hot(idx, x.shape()[0]) }
}

#[test]
fn indexing() {
    let ops: [(&str, Binary, Binary); 13] = [
        ("take axis 0", ix_take::eager, ix_take::jitted),
        ("take flat", ix_take_flat::eager, ix_take_flat::jitted),
        ("take clip", ix_take_clip::eager, ix_take_clip::jitted),
        ("take constant indices", ix_take_const::eager, ix_take_const::jitted),
        ("take_along_axis", ix_take_along::eager, ix_take_along::jitted),
        ("at[].set", ix_set::eager, ix_set::jitted),
        ("at[].add", ix_add::eager, ix_add::jitted),
        ("at[, 0].mul", ix_mul::eager, ix_mul::jitted),
        ("at[].min/max", ix_min_max::eager, ix_min_max::jitted),
        ("at[1..3].set", ix_set_range::eager, ix_set_range::jitted),
        ("at[.., 0].set", ix_set_column::eager, ix_set_column::jitted),
        ("at[].get", ix_get::eager, ix_get::jitted),
        ("one_hot", ix_one_hot::eager, ix_one_hot::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(14);
        for _ in 0..SEEDS {
            let shape = vec![1 + rng.below(5), 2 + rng.below(3)];
            let x = rng.f32s(&shape);
            let n = 1 + rng.below(6);
            // Duplicates, negatives and out-of-bounds positions included.
            let idx = rng.i32s(&[n], -(shape[0] as i32) - 1, shape[0] as i32 + 1);
            let what = format!("{name} of {x:?} at {idx:?}");
            assert_same(&jitted(&x, &idx), &eager(&x, &idx), &what);
        }
    }
}

// --- Matrix products -------------------------------------------------------------------------

twins! {
    mm_matmul(a: &Array, b: &Array) -> Array { a.matmul(b) }
    mm_dot(a: &Array, b: &Array) -> Array { jnp::dot(a, b) }
    mm_dot_t(a: &Array, b: &Array) -> Array { a.t().t().dot(b) + 1.0 }
    mm_einsum(a: &Array, b: &Array) -> Array { jnp::einsum("ij,jk->ik", &[a, b]) }
    mm_einsum_sum(a: &Array, b: &Array) -> Array { jnp::einsum("ij,jk", &[a, b]).sum() }
    mm_tensordot(a: &Array, b: &Array) -> Array { jnp::tensordot(a, b, 1) }
    mm_epilogue(a: &Array, b: &Array) -> Array { (a.matmul(b) + b.sum_axes(0, false)).tanh() }
}

#[test]
fn matrix_products() {
    let _x64 = rjax::config::x64_scope(true);
    let ops: [(&str, Binary, Binary); 7] = [
        ("matmul", mm_matmul::eager, mm_matmul::jitted),
        ("dot", mm_dot::eager, mm_dot::jitted),
        ("t().t().dot", mm_dot_t::eager, mm_dot_t::jitted),
        ("einsum ij,jk->ik", mm_einsum::eager, mm_einsum::jitted),
        ("einsum ij,jk", mm_einsum_sum::eager, mm_einsum_sum::jitted),
        ("tensordot", mm_tensordot::eager, mm_tensordot::jitted),
        ("matmul epilogue", mm_epilogue::eager, mm_epilogue::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(15);
        for seed in 0..SEEDS {
            let (m, k, n) = (1 + rng.below(6), 1 + rng.below(6), 1 + rng.below(6));
            let (a, b) = match seed % 3 {
                0 => (rng.finite_f32s(&[m, k]), rng.finite_f32s(&[k, n])),
                1 => (rng.finite_f32s(&[m, k]).astype(DType::F64), rng.finite_f32s(&[k, n])),
                _ => (rng.i32s(&[m, k], -3, 3), rng.i32s(&[k, n], -3, 3)),
            };
            let what = format!("{name} of {a:?} and {b:?}");
            assert_same(&jitted(&a, &b), &eager(&a, &b), &what);
        }
    }
}

twins! {
    mm_batched(a: &Array, b: &Array) -> Array { jnp::matmul(a, b) }
    mm_batched_einsum(a: &Array, b: &Array) -> Array { jnp::einsum("bij,bjk->bik", &[a, b]) }
    mm_vectors(a: &Array, b: &Array) -> Arrays {
        let u = a.slice(s![0, 0, ..]);
        let v = b.slice(s![0, .., 0]);
        vec![
            jnp::dot(&u, &v),
            jnp::outer(&u, &v),
            jnp::einsum("i,j->ij", &[&u, &v]),
            jnp::einsum("ij->ji", &[&a.slice(s![0])]),
            jnp::einsum("ij,ij->", &[&a.slice(s![0]), &a.slice(s![0])]),
            a.slice(s![0]).matmul(&v),
            u.matmul(&b.slice(s![0])),
        ]
    }
}

#[test]
fn batched_and_vector_products() {
    let mut rng = Rng::new(16);
    for _ in 0..SEEDS {
        let (bsz, m, k, n) =
            (1 + rng.below(3), 1 + rng.below(4), 1 + rng.below(4), 1 + rng.below(4));
        let a = rng.finite_f32s(&[bsz, m, k]);
        let b = rng.finite_f32s(&[bsz, k, n]);
        assert_same(&mm_batched::jitted(&a, &b), &mm_batched::eager(&a, &b), "batched matmul");
        let b2 = b.slice(s![0]);
        assert_same(&mm_batched::jitted(&a, &b2), &mm_batched::eager(&a, &b2), "broadcast matmul");
        assert_same(
            &mm_batched_einsum::jitted(&a, &b),
            &mm_batched_einsum::eager(&a, &b),
            "bij,bjk",
        );
        let b3 = rng.finite_f32s(&[bsz, k, k]);
        let a3 = rng.finite_f32s(&[bsz, k, k]);
        assert_all_same(&mm_vectors::jitted(&a3, &b3), &mm_vectors::eager(&a3, &b3), "vectors");
    }
}

// --- Conversions and constants ---------------------------------------------------------------

twins! {
    cv_astype(x: &Array, to: DType) -> Array { x.astype(to) }
    cv_round_trip(x: &Array, to: DType) -> Array { x.astype(to).astype(x.dtype()) * 2 }
    cv_constants(x: &Array, to: DType) -> Array {
        let n = x.shape().last().copied().unwrap_or(1);
        let ramp = jnp::arange(n as i32).astype(to);
        x.astype(to) + ramp + jnp::ones_like(x).astype(to) + jnp::full_like(x, 2.0).astype(to)
    }
}

twins! {
    cv_weak(x: &Array) -> Array { x.with_weak_type(true) * 2.0 }
    cv_strong(x: &Array) -> Array { (x * 2.0).with_weak_type(false) + 1 }
    cv_weak_sum(x: &Array) -> Array { x.with_weak_type(true).sum() + x.with_weak_type(true) }
}

#[test]
fn weak_type_changes() {
    let ops: [(&str, Unary, Unary); 3] = [
        ("with_weak_type(true)", cv_weak::eager, cv_weak::jitted),
        ("with_weak_type(false)", cv_strong::eager, cv_strong::jitted),
        ("weak sum", cv_weak_sum::eager, cv_weak_sum::jitted),
    ];
    for (name, eager, jitted) in ops {
        let mut rng = Rng::new(19);
        for seed in 0..SEEDS {
            let shape = rng.shape(0, 2);
            let x = rng.floats(
                &shape,
                if seed % 2 == 0 { DType::F32 } else { DType::F64 },
                seed % 3 == 0,
            );
            assert_same(&jitted(&x), &eager(&x), &format!("{name} of {x:?}"));
        }
    }
}

#[test]
fn astype_and_constants() {
    let _x64 = rjax::config::x64_scope(true);
    let targets = [
        DType::Bool,
        DType::I8,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U32,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];
    let mut rng = Rng::new(17);
    for &to in &targets {
        for seed in 0..4 {
            let shape = rng.shape(0, 3);
            let x = match seed {
                0 => rng.finite_f32s(&shape),
                1 => rng.i32s(&shape, -200, 300),
                2 => rng.bools(&shape),
                _ => rng.floats(&shape, DType::F64, false),
            };
            let what = format!("{x:?} as {to:?}");
            assert_same(&cv_astype::jitted(&x, to), &cv_astype::eager(&x, to), &what);
            if to != DType::Bool && x.dtype() != DType::Bool {
                assert_same(&cv_round_trip::jitted(&x, to), &cv_round_trip::eager(&x, to), &what);
                assert_same(&cv_constants::jitted(&x, to), &cv_constants::eager(&x, to), &what);
            }
        }
    }
}

// --- A plan runs many times ------------------------------------------------------------------

#[test]
fn one_plan_many_inputs() {
    // One shape, many values: the cached plan must give the eager result every time.
    let mut rng = Rng::new(18);
    let before = u_chain::jitted::cache_info().traces;
    for _ in 0..50 {
        let x = rng.f32s(&[3, 5]);
        assert_same(&u_chain::jitted(&x), &u_chain::eager(&x), "chain");
    }
    let info = u_chain::jitted::cache_info();
    assert!(info.traces <= before + 1, "{info:?}");
    assert!(info.hits >= 49, "{info:?}");
}
