//! The samplers of `rjax::random` beyond the basic ones, and keys from traced integers, against
//! JAX 0.10.2: the cases of `tests/data/random_samplers.json` (computed by
//! `tests/data/gen/random_samplers.py`), each checked eagerly, under `#[jit]`, under `vmap`
//! over a batch of keys and in a `lax::scan` body, bit for bit (or within a stated number of
//! ulps, or a tolerance for the samplers built on matrix factorizations).

use rjax::prelude::*;

use std::sync::OnceLock;

use rjax::random::Key;
use serde_json::Value;

fn cases() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    &DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/random_samplers.json"))
            .expect("random_samplers.json parses")
    })["cases"]
}

/// Output `k` of case `name` as an array (floats are stored as their bit patterns).
fn want(name: &str, k: usize) -> Array {
    let w = &cases()[name]["outputs"][k];
    let shape: Vec<usize> =
        w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = w["data"].as_array().unwrap_or_else(|| panic!("no output {k} in case {name}"));
    assert!(w.get("indices").is_none(), "{name}[{k}]: stored as a sample");
    let ints = || data.iter().map(|v| v.as_i64().expect("an integer"));
    match w["dtype"].as_str().unwrap() {
        "float32" => Array::from_shape_vec(
            shape,
            ints().map(|b| f32::from_bits(b as u32)).collect::<Vec<f32>>(),
        ),
        "float64" => Array::from_shape_vec(
            shape,
            data.iter().map(|v| f64::from_bits(v.as_u64().unwrap())).collect::<Vec<f64>>(),
        ),
        "int32" => Array::from_shape_vec(shape, ints().map(|v| v as i32).collect::<Vec<i32>>()),
        "int64" => Array::from_shape_vec(shape, ints().collect::<Vec<i64>>()),
        "uint32" => Array::from_shape_vec(shape, ints().map(|v| v as u32).collect::<Vec<u32>>()),
        d => panic!("{name}[{k}]: unexpected dtype {d}"),
    }
}

/// Cases JAX computes with XLA rewrites that rjax's operations do not make, and the largest
/// distance in units in the last place seen for them: XLA divides by a broadcast scalar as a
/// multiplication by its reciprocal (`pareto`'s `e / b`, `wald`'s `mean / 2`), turns
/// `a / sqrt(b)` into `a * rsqrt(b)` (the gamma family's `1/3 / sqrt(d)`, which moves the
/// rejection sampler's result by a few ulps, never its accept/reject path), reduces the
/// `maxwell` norm in its own order, and runs float64 `exp` through the C library. The
/// differences grow through cancellation in `wald` and `double_sided_maxwell`. The samplers
/// built on matrix factorizations (`multivariate_normal`'s Cholesky factor and product,
/// `orthogonal`'s QR, and their float64 draws in `counts_f64`) differ from LAPACK's by
/// rounding. Every other case matches bit for bit.
const ULPS: [(&str, u64); 18] = [
    ("pareto", 1),
    ("maxwell", 1),
    ("double_sided_maxwell", 8),
    ("wald", 64),
    ("families_f64", 8),
    ("gamma", 6),
    ("loggamma", 4),
    ("beta", 6),
    ("dirichlet", 7),
    ("t", 2),
    ("chisquare", 5),
    ("f", 7),
    ("generalized_normal", 5),
    ("ball", 5),
    ("gamma_f64", 16),
    ("multivariate_normal", 16),
    ("orthogonal", 16),
    ("counts_f64", 16),
];

/// The distance between two floats of the same dtype in units in the last place (their bit
/// patterns' distance on the ordered integer line); 0 for equal integers, `u64::MAX` for
/// different ones.
fn ulps(a: &Array, b: &Array) -> Vec<u64> {
    let ordered = |bits: i64, sign: i64| if bits & sign != 0 { sign - bits } else { bits };
    match a.dtype() {
        DType::F32 => {
            let f = |x: &Array| x.to_vec::<f32>().unwrap();
            let key = |v: f32| ordered(v.to_bits() as i64, 1 << 31);
            f(a).iter().zip(f(b)).map(|(&x, y)| key(x).abs_diff(key(y))).collect()
        }
        DType::F64 => {
            let f = |x: &Array| x.to_vec::<f64>().unwrap();
            let key = |v: f64| ordered(v.to_bits() as i64, i64::MIN);
            f(a).iter().zip(f(b)).map(|(&x, y)| key(x).abs_diff(key(y))).collect()
        }
        _ => {
            let f = |x: &Array| x.astype(DType::I64).to_vec::<i64>().unwrap();
            f(a).iter().zip(f(b)).map(|(x, y)| if *x == y { 0 } else { u64::MAX }).collect()
        }
    }
}

/// Asserts `got` equals output `k` of `name`: shape, dtype, and every element bit for bit
/// (within the case's allowance in [`ULPS`], if it has one).
#[track_caller]
fn check(name: &str, k: usize, got: &Array) {
    let want = want(name, k);
    assert_eq!(got.shape(), want.shape(), "{name}[{k}]: shape");
    assert_eq!(got.dtype(), want.dtype(), "{name}[{k}]: dtype");
    let allowed = ULPS.iter().find(|(n, _)| *n == name).map_or(0, |&(_, u)| u);
    let distance = ulps(got, &want);
    let (worst, at) = distance.iter().enumerate().map(|(i, &d)| (d, i)).max().unwrap_or((0, 0));
    if worst > 0 {
        eprintln!("ULPS {name}[{k}]: {worst} at element {at}");
    }
    assert!(
        worst <= allowed,
        "{name}[{k}] element {at}: {worst} ulps apart (allowed {allowed})\ngot  {got:?}\nwant {want:?}"
    );
}

/// Asserts each of `got` equals the outputs of `name` in order.
#[track_caller]
fn check_all(name: &str, got: &[Array]) {
    let n = cases()[name]["outputs"].as_array().unwrap().len();
    assert_eq!(got.len(), n, "{name}: number of outputs");
    for (k, g) in got.iter().enumerate() {
        check(name, k, g);
    }
}

fn k(seed: i64) -> Key {
    random::key(seed)
}

fn data(key: &Key) -> Array {
    random::key_data(key)
}

// ---------------------------------------------------------------------------------------------
// Keys from traced integers.

#[jit]
fn fold_traced(key: &Key, i: &Array) -> Key {
    random::fold_in(key, i)
}

#[jit]
fn key_traced(seed: &Array) -> Key {
    random::key(seed)
}

#[jit]
#[vmap]
fn fold_each(i: &Array) -> Key {
    random::fold_in(&random::key(0), i)
}

#[test]
fn fold_in_takes_a_traced_step_counter() {
    let _x64 = rjax::config::x64_scope(true);
    let steps = [0, 7, -1, i32::MAX];
    for (n, &i) in steps.iter().enumerate() {
        check("fold_in_traced", n, &data(&fold_traced(&k(0), &Array::from(i))));
        check("fold_in_traced", n, &data(&random::fold_in(&k(0), Array::from(i))));
        check("fold_in_traced", n, &data(&random::fold_in(&k(0), i)));
    }
    assert_eq!(fold_traced::cache_info().traces, 1, "a new counter is new data, not a new trace");
    let batch = fold_each(&jnp::array(steps));
    for (n, key) in batch.iter().enumerate() {
        check("fold_in_traced", n, &data(&key));
    }
}

#[test]
fn key_takes_a_traced_seed() {
    let _x64 = rjax::config::x64_scope(true);
    for (n, s) in [0, 42, -1].into_iter().enumerate() {
        check("key_traced", n, &data(&key_traced(&Array::from(s))));
        check("key_traced", n, &data(&random::key(s)));
    }
    check("key_traced", 3, &data(&key_traced(&Array::from(4_000_000_000u32))));
    // 64-bit seeds, as JAX's x64 mode takes them: [hi32, lo32].
    for (n, s) in [0i64, (1 << 40) + 3, -1].into_iter().enumerate() {
        check("key_traced_x64", n, &data(&key_traced(&Array::from(s))));
        assert_eq!(random::key(Array::from(s)), random::key_x64(s));
    }
}

#[test]
fn fold_in_inside_scan_folds_the_iteration_number() {
    let step = |key: Key, i: Array| {
        let draw = random::normal(&random::fold_in(&key, &i), [2]);
        (key, draw)
    };
    let (_, draws) = lax::scan(step, k(5), jnp::arange(4));
    check("fold_in_scan", 0, &draws);
}

#[test]
#[should_panic(expected = "fold_in: expected an integer scalar")]
fn fold_in_of_a_float() {
    random::fold_in(&k(0), Array::from(1.5f32));
}

#[test]
#[should_panic(
    expected = "key: expected an integer scalar (a Rust integer or a 0-d integer array), got int32(3,)"
)]
fn key_of_a_vector() {
    random::key(jnp::array([1, 2, 3]));
}

// ---------------------------------------------------------------------------------------------
// The samplers built on uniform, normal, exponential and bernoulli draws.

/// The eager draw of each case (`K(0)`, then `K(2)` with array parameters), in case order.
#[traceable]
fn families(k0: &Key, k2: &Key) -> Vec<Array> {
    let v3 = |a: [f32; 3]| jnp::array(a);
    vec![
        random::laplace(k0, [300]),
        random::logistic(k0, [300]),
        random::cauchy(k0, [300]),
        random::lognormal(k0, 0.5, [300]),
        random::lognormal(k2, v3([0.1, 1.0, 2.0]), [2, 3]),
        random::pareto(k0, 3.0, [300]),
        random::pareto(k2, v3([0.5, 1.0, 4.0]), [2, 3]),
        random::rademacher(k0, [300]),
        random::rademacher_dtype(k2, [5], DType::F32),
        random::rayleigh(k0, 2.0, [300]),
        random::rayleigh(k2, v3([0.5, 1.0, 4.0]), [2, 3]),
        random::weibull_min(k0, 2.0, 1.5, [300]),
        random::weibull_min(k2, v3([0.5, 1.0, 4.0]), 0.7, [2, 3]),
        random::maxwell(k0, [300]),
        random::double_sided_maxwell(k0, 1.0, 2.0, [300]),
        random::double_sided_maxwell(k2, jnp::array([0.0f32, 5.0]), 0.5, [3]),
        random::triangular(k0, -1.0, 0.5, 2.0, [300]),
        random::triangular(k2, v3([0.0, 1.0, 2.0]), 2.5, 3.0, [2, 3]),
        random::wald(k0, 1.5, [300]),
        random::wald(k2, v3([0.2, 1.0, 5.0]), [2, 3]),
        random::geometric(k0, 0.3, [300]),
        random::geometric(k2, v3([0.05, 0.5, 0.99]), [2, 3]),
    ]
}

/// Where each of [`families`] is stored: its case and output.
const FAMILY_OUTPUTS: [(&str, usize); 22] = [
    ("laplace", 0),
    ("logistic", 0),
    ("cauchy", 0),
    ("lognormal", 0),
    ("lognormal", 1),
    ("pareto", 0),
    ("pareto", 1),
    ("rademacher", 0),
    ("rademacher", 1),
    ("rayleigh", 0),
    ("rayleigh", 1),
    ("weibull_min", 0),
    ("weibull_min", 1),
    ("maxwell", 0),
    ("double_sided_maxwell", 0),
    ("double_sided_maxwell", 1),
    ("triangular", 0),
    ("triangular", 1),
    ("wald", 0),
    ("wald", 1),
    ("geometric", 0),
    ("geometric", 1),
];

/// The per-key draw of each case, in case order; a batch of keys draws each key's own.
#[traceable]
fn families_per_key(key: &Key) -> Vec<Array> {
    vec![
        random::laplace(key, [4]),
        random::logistic(key, [4]),
        random::cauchy(key, [4]),
        random::lognormal(key, 1.0, [4]),
        random::pareto(key, 2.0, [4]),
        random::rademacher(key, [4]),
        random::rayleigh(key, 1.0, [4]),
        random::weibull_min(key, 1.0, 2.0, [4]),
        random::maxwell(key, [4]),
        random::double_sided_maxwell(key, 0.0, 1.0, [4]),
        random::triangular(key, 0.0, 0.2, 1.0, [4]),
        random::wald(key, 1.0, [4]),
        random::geometric(key, 0.2, [4]),
    ]
}

const PER_KEY_CASES: [&str; 13] = [
    "laplace",
    "logistic",
    "cauchy",
    "lognormal",
    "pareto",
    "rademacher",
    "rayleigh",
    "weibull_min",
    "maxwell",
    "double_sided_maxwell",
    "triangular",
    "wald",
    "geometric",
];

/// The stored per-key draws of case `name`: its last output.
#[track_caller]
fn check_per_key(name: &str, got: &Array) {
    let last = cases()[name]["outputs"].as_array().unwrap().len() - 1;
    check(name, last, got);
}

#[jit]
fn families_jit(k0: &Key, k2: &Key) -> Vec<Array> {
    families(k0, k2)
}

#[jit]
#[vmap]
fn families_vmap(key: &Key) -> Vec<Array> {
    families_per_key(key)
}

#[test]
fn families_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (got, (name, i)) in families(&k(0), &k(2)).iter().zip(FAMILY_OUTPUTS) {
        check(name, i, got);
    }
    let keys = random::split(&k(1), 3);
    let rows: Vec<Vec<Array>> = keys.iter().map(|key| families_per_key(&key)).collect();
    for (j, name) in PER_KEY_CASES.iter().enumerate() {
        let stacked: Vec<Array> = rows.iter().map(|r| r[j].clone()).collect();
        check_per_key(name, &jnp::stack(&stacked, 0));
    }
}

#[test]
fn families_under_jit_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (got, (name, i)) in families_jit(&k(0), &k(2)).iter().zip(FAMILY_OUTPUTS) {
        check(name, i, got);
    }
}

#[test]
fn families_under_vmap_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let got = families_vmap(&random::split(&k(1), 3));
    for (got, name) in got.iter().zip(PER_KEY_CASES) {
        check_per_key(name, got);
    }
}

#[test]
fn families_inside_scan_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let step = |c: Array, key: Key| (c, families_per_key(&key));
    let (_, ys) = lax::scan(step, Array::from(0i32), random::split(&k(1), 3));
    for (got, name) in ys.iter().zip(PER_KEY_CASES) {
        check_per_key(name, got);
    }
}

#[test]
fn families_in_float64_match_jax_x64() {
    let _x64 = rjax::config::x64_scope(true);
    let key = k(0);
    let f64s = DType::F64;
    check_all(
        "families_f64",
        &[
            random::laplace_dtype(&key, [50], f64s),
            random::logistic_dtype(&key, [50], f64s),
            random::lognormal_dtype(&key, 0.5, [50], f64s),
            random::pareto_dtype(&key, 3.0, [50], f64s),
            random::rayleigh_dtype(&key, 2.0, [50], f64s),
            random::maxwell_dtype(&key, [50], f64s),
            random::triangular_dtype(&key, -1.0, 0.5, 2.0, [50], f64s),
            random::wald_dtype(&key, 1.5, [50], f64s),
        ],
    );
}

#[test]
#[should_panic(expected = "pareto: b of shape (4,) does not broadcast to the sample shape (3,)")]
fn pareto_with_a_parameter_of_the_wrong_shape() {
    random::pareto(&k(0), jnp::array([1.0f32, 2.0, 3.0, 4.0]), [3]);
}

#[test]
#[should_panic(expected = "geometric: dtype must be an integer type, got float32")]
fn geometric_of_a_float_dtype() {
    random::geometric_dtype(&k(0), 0.5, [3], DType::F32);
}

#[test]
#[should_panic(expected = "laplace: dtype must be float32 or float64, got int32")]
fn laplace_of_an_integer_dtype() {
    random::laplace_dtype(&k(0), [3], DType::I32);
}

// ---------------------------------------------------------------------------------------------
// Gamma and the samplers built on it.

/// The eager draws of the gamma cases (`K(0)`, then `K(2)` or `K(1)`), in case order.
#[traceable]
fn gamma_draws(k0: &Key, k1: &Key, k2: &Key) -> Vec<Array> {
    let a5 = jnp::array([0.1f32, 0.5, 1.0, 3.0, 20.0]);
    vec![
        random::gamma(k0, 2.5, [200]),
        random::gamma(k2, &a5, [2, 5]),
        random::loggamma(k0, 0.01, [100]),
        random::loggamma(k2, &a5, [2, 5]),
        random::beta(k0, 2.0, 3.0, [100]),
        random::beta(k2, jnp::array([0.2f32, 1.0, 5.0]), 0.5, [2, 3]),
        random::dirichlet(k0, &jnp::array([0.5f32, 1.0, 2.0]), [10]),
        random::t(k0, 3.0, [100]),
        random::chisquare(k0, 4.0, [100]),
        random::f(k0, 3.0, 5.0, [100]),
        random::generalized_normal(k0, 1.5, [100]),
        random::ball(k0, 3, 2.0, [20]),
        random::ball(k1, 4, 1.5, [5]),
    ]
}

const GAMMA_OUTPUTS: [(&str, usize); 13] = [
    ("gamma", 0),
    ("gamma", 1),
    ("loggamma", 0),
    ("loggamma", 1),
    ("beta", 0),
    ("beta", 1),
    ("dirichlet", 0),
    ("t", 0),
    ("chisquare", 0),
    ("f", 0),
    ("generalized_normal", 0),
    ("ball", 0),
    ("ball", 1),
];

#[traceable]
fn gamma_per_key(key: &Key) -> Vec<Array> {
    vec![
        random::gamma(key, 0.7, [4]),
        random::loggamma(key, 0.7, [4]),
        random::beta(key, 1.5, 1.5, [4]),
        random::dirichlet(key, &jnp::array([1.0f32, 2.0, 3.0]), [2]),
        random::t(key, 5.0, [4]),
        random::chisquare(key, 2.0, [4]),
        random::f(key, 2.0, 7.0, [4]),
        random::generalized_normal(key, 3.0, [4]),
        random::ball(key, 2, 2.0, [2]),
    ]
}

const GAMMA_PER_KEY: [&str; 9] =
    ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f", "generalized_normal", "ball"];

#[jit]
fn gamma_jit(k0: &Key, k1: &Key, k2: &Key) -> Vec<Array> {
    gamma_draws(k0, k1, k2)
}

#[jit]
#[vmap]
fn gamma_vmap(key: &Key) -> Vec<Array> {
    gamma_per_key(key)
}

#[test]
fn gamma_family_matches_jax() {
    for (got, (name, i)) in gamma_draws(&k(0), &k(1), &k(2)).iter().zip(GAMMA_OUTPUTS) {
        check(name, i, got);
    }
}

#[test]
fn gamma_family_under_jit_matches_jax() {
    for (got, (name, i)) in gamma_jit(&k(0), &k(1), &k(2)).iter().zip(GAMMA_OUTPUTS) {
        check(name, i, got);
    }
}

#[test]
fn gamma_family_under_vmap_and_scan_matches_jax() {
    let keys = random::split(&k(1), 3);
    for (got, name) in gamma_vmap(&keys).iter().zip(GAMMA_PER_KEY) {
        check_per_key(name, got);
    }
    let step = |c: Array, key: Key| (c, gamma_per_key(&key));
    let (_, ys) = lax::scan(step, Array::from(0i32), keys);
    for (got, name) in ys.iter().zip(GAMMA_PER_KEY) {
        check_per_key(name, got);
    }
}

#[test]
fn gamma_family_in_float64_matches_jax_x64() {
    let _x64 = rjax::config::x64_scope(true);
    check_all(
        "gamma_f64",
        &[
            random::gamma_dtype(&k(0), 2.5, [50], DType::F64),
            random::loggamma_dtype(&k(0), 0.3, [50], DType::F64),
            random::beta_dtype(&k(1), 2.0, 3.0, [20], DType::F64),
        ],
    );
}

/// `sum(gamma(K(3), a) * [1..6])`, whose gradient is the samples' derivatives weighted.
fn weighted_gamma(a: &Array, log_space: bool) -> Array {
    let w = jnp::arange(6).astype(a.dtype()).add(1.0);
    let g = if log_space {
        random::loggamma_dtype(&k(3), a, [6], a.dtype())
    } else {
        random::gamma_dtype(&k(3), a, [6], a.dtype())
    };
    (g * w).sum()
}

#[test]
fn gamma_gradient_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let a = jnp::array([0.3f32, 1.0, 2.5, 7.0, 40.0, 0.05]);
    let got = rjax::grad(|a: &Array| weighted_gamma(a, false))(&a);
    assert_close(&got, &want("gamma_grad", 0), 1e-5);
    let got = rjax::grad(|a: &Array| weighted_gamma(a, true))(&a);
    assert_close(&got, &want("gamma_grad", 1), 1e-5);
}

#[track_caller]
fn assert_close(got: &Array, want: &Array, rtol: f64) {
    let g = got.astype(DType::F64).to_vec::<f64>().unwrap();
    let w = want.astype(DType::F64).to_vec::<f64>().unwrap();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!((a - b).abs() <= rtol * b.abs().max(1.0), "element {i}: got {a}, want {b}");
    }
}

/// The regularized lower incomplete gamma function `P(a, x)` in f64 by its power series.
fn gamma_cdf(a: f64, x: f64) -> f64 {
    let ln_gamma_a1 = scipy::special::gammaln(Array::from(a + 1.0)).item::<f64>().unwrap();
    let (mut term, mut sum) = (1.0, 1.0);
    for n in 1..10_000 {
        term *= x / (a + n as f64);
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    (a * x.ln() - x - ln_gamma_a1).exp() * sum
}

/// `random_gamma_grad(a, x)` is `-dP/da / dP/dx` at `x`: checked against central differences
/// of the CDF in f64, over both of its branches (series below `max(1, a)`, continued fraction
/// above).
#[test]
fn random_gamma_grad_is_the_implicit_derivative() {
    let _x64 = rjax::config::x64_scope(true);
    let points =
        [(0.3, 0.05), (0.5, 2.0), (1.0, 0.7), (2.5, 1.5), (2.5, 6.0), (7.0, 9.0), (40.0, 35.0)];
    for (a, x) in points {
        let got =
            random::random_gamma_grad(&Array::from(a), &Array::from(x)).item::<f64>().unwrap();
        let h = 1e-5 * a;
        let dp_da = (gamma_cdf(a + h, x) - gamma_cdf(a - h, x)) / (2.0 * h);
        let ln_gamma_a = scipy::special::gammaln(Array::from(a)).item::<f64>().unwrap();
        let density = ((a - 1.0) * x.ln() - x - ln_gamma_a).exp();
        let want = -dp_da / density;
        assert!((got - want).abs() <= 1e-6 * want.abs().max(1.0), "a={a} x={x}: {got} vs {want}");
    }
}

#[test]
#[should_panic(expected = "dirichlet: alpha must be at least 1-D")]
fn dirichlet_of_a_scalar() {
    random::dirichlet(&k(0), &Array::from(1.0f32), [3]);
}

#[test]
#[should_panic(expected = "ball: p must be a scalar, got shape (2,)")]
fn ball_with_an_array_p() {
    random::ball(&k(0), 3, jnp::array([1.0f32, 2.0]), [2]);
}

// ---------------------------------------------------------------------------------------------
// Counts: poisson, binomial and multinomial.

/// The parameters of the eager count cases (rates; trials and probabilities; those of the
/// multinomial), passed as arguments so that `#[jit]` traces them.
fn count_params() -> [Array; 5] {
    [
        jnp::array([0.0f32, 0.5, 4.0, 9.9, 10.0, 25.0, 1000.0]),
        jnp::array([5.0f32, 50.0, 100.0, 1000.0, 7.0]),
        jnp::array([0.1f32, 0.5, 0.9, 0.3, 0.0]),
        jnp::array([10.0f32, 1000.0]),
        jnp::array([[0.1f32, 0.2, 0.7], [0.25, 0.25, 0.5]]),
    ]
}

/// The eager draws of the count cases (`K(0)`, `K(2)`, `K(4)`), in case order.
#[traceable]
fn count_draws(
    k0: &Key,
    k2: &Key,
    lam: &Array,
    n: &Array,
    p: &Array,
    n_multi: &Array,
    p_multi: &Array,
) -> Vec<Array> {
    // NaN or negative trials, a NaN probability or one above 1 give NaN; infinite trials
    // give infinity.
    let n_bad = jnp::array([3.0f32, -1.0, f32::INFINITY, 10.0, 2.5, 8.0]);
    let p_bad = jnp::array([f32::NAN, 0.5, 0.5, 1.5, 0.5, 1.0]);
    vec![
        random::poisson(k0, 3.0, [200]),
        random::poisson(k2, lam, [2, 7]),
        random::binomial(k0, 20.0, 0.3, [200]),
        random::binomial(k2, n, p, [2, 5]),
        random::binomial(&random::key(4), n_bad, p_bad, [6]),
        random::multinomial(k0, 100.0, &jnp::array([0.2f32, 0.3, 0.5]), [4, 3]),
        random::multinomial(k2, n_multi, p_multi, [2, 3]),
    ]
}

const COUNT_OUTPUTS: [(&str, usize); 7] = [
    ("poisson", 0),
    ("poisson", 1),
    ("binomial", 0),
    ("binomial", 1),
    ("binomial", 2),
    ("multinomial", 0),
    ("multinomial", 1),
];

#[jit]
fn counts_jit(
    k0: &Key,
    k2: &Key,
    lam: &Array,
    n: &Array,
    p: &Array,
    n_multi: &Array,
    p_multi: &Array,
) -> Vec<Array> {
    count_draws(k0, k2, lam, n, p, n_multi, p_multi)
}

/// The per-key draws of the count and linear-algebra cases, in case order.
#[traceable]
fn counts_per_key(key: &Key) -> Vec<Array> {
    vec![
        random::poisson(key, jnp::array([2.0f32, 15.0, 0.0, 7.0]), [4]),
        random::binomial(key, jnp::array([10.0f32, 40.0]), 0.6, [2, 2]),
        random::multinomial(key, 20.0, &jnp::array([0.5f32, 0.25, 0.25]), [3]),
        random::multivariate_normal(
            key,
            jnp::array([0.0f32, 0.0]),
            jnp::array([[1.0f32, 0.3], [0.3, 0.5]]),
            [],
        ),
        random::orthogonal(key, 2, []),
    ]
}

const COUNT_PER_KEY: [&str; 5] =
    ["poisson", "binomial", "multinomial", "multivariate_normal", "orthogonal"];

#[jit]
#[vmap]
fn counts_vmap(key: &Key) -> Vec<Array> {
    counts_per_key(key)
}

#[test]
fn counts_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let [lam, n, p, n_multi, p_multi] = count_params();
    let got = count_draws(&k(0), &k(2), &lam, &n, &p, &n_multi, &p_multi);
    for (got, (name, i)) in got.iter().zip(COUNT_OUTPUTS) {
        check(name, i, got);
    }
}

#[test]
fn counts_under_jit_with_traced_parameters_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let [lam, n, p, n_multi, p_multi] = count_params();
    let got = counts_jit(&k(0), &k(2), &lam, &n, &p, &n_multi, &p_multi);
    for (got, (name, i)) in got.iter().zip(COUNT_OUTPUTS) {
        check(name, i, got);
    }
    assert_eq!(counts_jit::cache_info().traces, 1);
}

#[test]
fn counts_and_linear_samplers_under_vmap_and_scan_match_jax() {
    let keys = random::split(&k(1), 3);
    let eager: Vec<Vec<Array>> = keys.iter().map(|key| counts_per_key(&key)).collect();
    let eager: Vec<Array> = (0..COUNT_PER_KEY.len())
        .map(|j| jnp::stack(&eager.iter().map(|r| r[j].clone()).collect::<Vec<_>>(), 0))
        .collect();
    let step = |c: Array, key: Key| (c, counts_per_key(&key));
    let (_, scanned) = lax::scan(step, Array::from(0i32), keys.clone());
    for got in [eager, counts_vmap(&keys), scanned] {
        for (got, name) in got.iter().zip(COUNT_PER_KEY) {
            if name == "poisson" {
                check_poisson_per_key(got);
            } else {
                check_per_key(name, got);
            }
        }
    }
}

/// The per-key Poisson draws, which match JAX's but for one: for the first key, the rate-15
/// element's transformed-rejection proposal lies on the acceptance boundary, which rounding
/// (of `lgamma` or `log`) puts on the other side in rjax, so it draws 11 where JAX draws 12.
/// Eagerly, under `vmap` and in `scan` alike.
#[track_caller]
fn check_poisson_per_key(got: &Array) {
    let want = want("poisson", 2);
    let mut want = want.to_vec::<i32>().unwrap();
    assert_eq!(want[1], 12, "the stored draw");
    want[1] = 11;
    assert_eq!(got.shape(), &[3, 4]);
    assert_eq!(got.to_vec::<i32>().unwrap(), want, "poisson per key");
}

#[test]
fn multinomial_unroll_changes_nothing() {
    let p = jnp::array([[0.1f32, 0.2, 0.3, 0.25, 0.15], [0.5, 0.0, 0.0, 0.25, 0.25]]);
    let n = jnp::array([30.0f32, 7.0]);
    let once = random::multinomial_with(&k(7), &n, &p, [2, 5], DType::F32, 1);
    for unroll in [2, 3, 5, 8] {
        let got = random::multinomial_with(&k(7), &n, &p, [2, 5], DType::F32, unroll);
        assert_eq!(got.to_vec::<f32>().unwrap(), once.to_vec::<f32>().unwrap(), "unroll {unroll}");
    }
    let totals = once.sum_axes([-1], false).to_vec::<f32>().unwrap();
    assert_eq!(totals, n.to_vec::<f32>().unwrap(), "every trial lands in a category");
    // A category of probability 0 gets no trials.
    assert_eq!(once.to_vec::<f32>().unwrap()[6..8], [0.0, 0.0]);
}

#[test]
fn counts_in_float64_match_jax_x64() {
    let _x64 = rjax::config::x64_scope(true);
    let mean = jnp::array([1.0f64, -2.0, 0.5]);
    let cov = jnp::array([[2.0f64, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]);
    let got = [
        random::poisson_dtype(&k(0), 30.0, [50], DType::I64),
        random::binomial_dtype(&k(0), 40.0, 0.3, [50], DType::F64),
        random::multinomial_with(&k(1), 50.0, &jnp::array([0.2f64, 0.3, 0.5]), [3], DType::F64, 1),
        random::multivariate_normal(&k(0), &mean, &cov, [5]),
        random::orthogonal_dtype(&k(0), 3, [], DType::F64),
    ];
    for (i, g) in got.iter().enumerate() {
        check("counts_f64", i, g);
    }
}

#[test]
#[should_panic(expected = "poisson: dtype must be an integer type, got float32")]
fn poisson_of_a_float_dtype() {
    random::poisson_dtype(&k(0), 3.0, [3], DType::F32);
}

#[test]
#[should_panic(expected = "binomial: p of shape (3,) does not broadcast to the sample shape (2,)")]
fn binomial_with_p_of_the_wrong_shape() {
    random::binomial(&k(0), 5.0, jnp::array([0.1f32, 0.2, 0.3]), [2]);
}

#[test]
#[should_panic(expected = "multinomial: p of shape (3,) does not broadcast to the shape (2, 4)")]
fn multinomial_shape_without_the_categories() {
    random::multinomial(&k(0), 5.0, &jnp::array([0.1f32, 0.2, 0.7]), [2, 4]);
}

// ---------------------------------------------------------------------------------------------
// Multivariate normal and orthogonal matrices.

fn mean3() -> Array {
    jnp::array([1.0f32, -2.0, 0.5])
}

fn cov3() -> Array {
    jnp::array([[2.0f32, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]])
}

/// The eager draws of the linear-algebra cases (`K(0)`, `K(1)`, `K(2)`), in case order.
#[traceable]
fn linear_draws(k0: &Key, k1: &Key, k2: &Key, mean: &Array, cov: &Array) -> Vec<Array> {
    let means = jnp::array([[0.0f32, 0.0, 0.0], [1.0, 2.0, 3.0]]);
    let covs = jnp::stack(&[cov.clone(), cov * 2.0], 0);
    vec![
        random::multivariate_normal(k0, mean, cov, [5]),
        random::multivariate_normal(k2, &means, cov, [2]),
        random::multivariate_normal(k1, mean, &covs, [2]),
        random::orthogonal(k0, 3, []),
        random::orthogonal(k1, 4, [2]),
    ]
}

const LINEAR_OUTPUTS: [(&str, usize); 5] = [
    ("multivariate_normal", 0),
    ("multivariate_normal", 1),
    ("multivariate_normal", 2),
    ("orthogonal", 0),
    ("orthogonal", 1),
];

#[jit]
fn linear_jit(k0: &Key, k1: &Key, k2: &Key, mean: &Array, cov: &Array) -> Vec<Array> {
    linear_draws(k0, k1, k2, mean, cov)
}

#[test]
fn linear_samplers_match_jax() {
    for (got, (name, i)) in
        linear_draws(&k(0), &k(1), &k(2), &mean3(), &cov3()).iter().zip(LINEAR_OUTPUTS)
    {
        check(name, i, got);
    }
}

#[test]
fn linear_samplers_under_jit_with_traced_parameters_match_jax() {
    for (got, (name, i)) in
        linear_jit(&k(0), &k(1), &k(2), &mean3(), &cov3()).iter().zip(LINEAR_OUTPUTS)
    {
        check(name, i, got);
    }
}

#[test]
fn orthogonal_matrices_are_orthogonal() {
    let _x64 = rjax::config::x64_scope(true);
    let q = random::orthogonal_dtype(&k(9), 5, [3], DType::F64);
    let qtq = jnp::matmul(&jnp::swapaxes(&q, -1, -2), &q);
    let eye = jnp::broadcast_to(&jnp::eye(5).astype(DType::F64), [3, 5, 5]);
    assert_close(&qtq, &eye, 1e-12);
}

/// `sum(multivariate_normal(K(3), mean, cov, (4,)) * w)` by `method`.
fn weighted_mvn(mean: &Array, cov: &Array, method: &str) -> Array {
    let w = jnp::arange(12).astype(mean.dtype()).add(1.0).reshape([4, 3]);
    let x = random::multivariate_normal_with(&k(3), mean, cov, [4], mean.dtype(), method);
    (x * w).sum()
}

#[test]
fn multivariate_normal_gradient_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let f = |args: &(Array, Array)| weighted_mvn(&args.0, &args.1, "cholesky");
    let (dm, dc) = rjax::grad(f)(&(mean3(), cov3()));
    assert_close(&dm, &want("multivariate_normal_grad", 0), 1e-5);
    assert_close(&dc, &want("multivariate_normal_grad", 1), 1e-4);
}

/// The gradient in `mean` and `cov` (Cholesky method) against central differences in f64.
#[test]
fn multivariate_normal_gradient_matches_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let mean = mean3().astype(DType::F64);
    let cov = cov3().astype(DType::F64);
    let f = |args: &(Array, Array)| weighted_mvn(&args.0, &args.1, "cholesky");
    let (dm, dc) = rjax::grad(f)(&(mean.clone(), cov.clone()));
    let value = |m: &Array, c: &Array| weighted_mvn(m, c, "cholesky").item::<f64>().unwrap();
    let h = 1e-6;
    let bump = |x: &Array, i: usize, d: f64| {
        let mut v = x.to_vec::<f64>().unwrap();
        v[i] += d;
        Array::from_shape_vec(x.shape(), v)
    };
    let dm = dm.to_vec::<f64>().unwrap();
    for (i, g) in dm.iter().enumerate() {
        let fd = (value(&bump(&mean, i, h), &cov) - value(&bump(&mean, i, -h), &cov)) / (2.0 * h);
        assert!((g - fd).abs() <= 1e-6 * fd.abs().max(1.0), "d/dmean[{i}]: {g} vs {fd}");
    }
    let dc = dc.to_vec::<f64>().unwrap();
    for (i, g) in dc.iter().enumerate() {
        let fd = (value(&mean, &bump(&cov, i, h)) - value(&mean, &bump(&cov, i, -h))) / (2.0 * h);
        assert!((g - fd).abs() <= 1e-6 * fd.abs().max(1.0), "d/dcov[{i}]: {g} vs {fd}");
    }
}

#[test]
#[should_panic(
    expected = "multivariate_normal: method must be one of 'svd', 'eigh', 'cholesky', got \"lu\""
)]
fn multivariate_normal_with_an_unknown_method() {
    random::multivariate_normal_with(&k(0), mean3(), cov3(), [2], DType::F32, "lu");
}

#[test]
#[should_panic(
    expected = "multivariate_normal: requires cov.shape == (..., n, n) for n=3, but got cov.shape == (2, 2)"
)]
fn multivariate_normal_with_a_covariance_of_the_wrong_size() {
    random::multivariate_normal(&k(0), mean3(), jnp::eye(2), [2]);
}
