//! The samplers of `rjax::random` beyond the basic ones, and keys from traced integers, against
//! JAX 0.10.2: the cases of `tests/data/random_samplers.json` (computed by
//! `tests/data/gen/random_samplers.py`), each checked eagerly, under `#[jit]`, under `vmap`
//! over a batch of keys and in a `lax::scan` body, bit for bit.

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
/// differences grow through cancellation in `wald` and `double_sided_maxwell`. Every other
/// case matches bit for bit.
const ULPS: [(&str, u64); 15] = [
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
    for (got, (name, i)) in families_jit(&k(0), &k(2)).iter().zip(FAMILY_OUTPUTS) {
        check(name, i, got);
    }
}

#[test]
fn families_under_vmap_match_jax() {
    let got = families_vmap(&random::split(&k(1), 3));
    for (got, name) in got.iter().zip(PER_KEY_CASES) {
        check_per_key(name, got);
    }
}

#[test]
fn families_inside_scan_match_jax() {
    let step = |c: Array, key: Key| (c, families_per_key(&key));
    let (_, ys) = lax::scan(step, Array::from(0i32), random::split(&k(1), 3));
    for (got, name) in ys.iter().zip(PER_KEY_CASES) {
        check_per_key(name, got);
    }
}

#[test]
fn families_in_float64_match_jax_x64() {
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
