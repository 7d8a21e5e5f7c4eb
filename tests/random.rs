//! `rjax::random` against JAX 0.10.2: the golden PRNG cases of `tests/data/golden.json`, the
//! cases of `tests/data/random.json` (computed by `tests/data/gen/random.py`), statistical
//! sanity on a million draws per sampler, and the panics for bad input.

mod common;
use common::*;
use rjax::prelude::*;

use std::sync::OnceLock;

use rjax::random::{init, Key};
use serde_json::Value;

// ---------------------------------------------------------------------------------------------
// Helpers for tests/data/random.json.

fn random_json() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/random.json")).expect("random.json parses")
    })
}

fn outputs(name: &str) -> &'static [Value] {
    random_json()["cases"][name]["outputs"]
        .as_array()
        .unwrap_or_else(|| panic!("no case named {name} in random.json"))
}

/// An array's elements as exact integers (ints and bools) or as f64 (floats).
enum Flat {
    Ints(Vec<i128>),
    Floats(Vec<f64>),
}

fn flat(a: &Array) -> Flat {
    match a.dtype() {
        d if d.is_float() => Flat::Floats(a.astype(DType::F64).to_vec::<f64>().unwrap()),
        DType::U64 => Flat::Ints(a.to_vec::<u64>().unwrap().into_iter().map(i128::from).collect()),
        DType::Bool => {
            Flat::Ints(a.to_vec::<bool>().unwrap().into_iter().map(|b| b as i128).collect())
        }
        _ => Flat::Ints(
            a.astype(DType::I64).to_vec::<i64>().unwrap().into_iter().map(i128::from).collect(),
        ),
    }
}

fn json_int(v: &Value) -> i128 {
    match v {
        Value::Bool(b) => *b as i128,
        v => v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from)).expect("an integer"),
    }
}

/// A stored float: its bit pattern, as `uint32` for float32 and `uint64` for float64.
fn json_float(v: &Value, dtype: &str) -> f64 {
    let bits = v.as_u64().expect("float data are stored as bit patterns");
    match dtype {
        "float32" => f32::from_bits(bits as u32) as f64,
        _ => f64::from_bits(bits),
    }
}

/// Asserts each of `got` matches the corresponding output of `name`: shape, dtype, and the
/// stored elements (all, or the sampled `indices` of large arrays plus their checksum), exactly
/// for integers and within `|got - want| <= atol + rtol * |want|` for floats.
#[track_caller]
fn check_close(name: &str, got: &[Array], rtol: f64, atol: f64) {
    let want = outputs(name);
    assert_eq!(got.len(), want.len(), "{name}: number of outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let shape: Vec<usize> =
            w["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        assert_eq!(g.shape(), &shape[..], "{name}[{k}]: shape");
        let dtype = w["dtype"].as_str().unwrap();
        assert_eq!(g.dtype().name(), dtype, "{name}[{k}]: dtype");
        let data = w["data"].as_array().unwrap();
        let picks: Vec<usize> = match w.get("indices") {
            Some(idx) => {
                idx.as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as usize).collect()
            }
            None => (0..data.len()).collect(),
        };
        assert_eq!(picks.len(), data.len(), "{name}[{k}]: stored elements");
        match flat(g) {
            Flat::Ints(v) => {
                for (&i, d) in picks.iter().zip(data) {
                    assert_eq!(v[i], json_int(d), "{name}[{k}] element {i}");
                }
                if let Some(sum) = w.get("checksum") {
                    assert_eq!(v.iter().sum::<i128>(), json_int(sum), "{name}[{k}]: checksum");
                }
            }
            Flat::Floats(v) => {
                for (&i, d) in picks.iter().zip(data) {
                    let (a, b) = (v[i], json_float(d, dtype));
                    let ok = if b.is_nan() {
                        a.is_nan()
                    } else {
                        a == b || (a - b).abs() <= atol + rtol * b.abs()
                    };
                    assert!(ok, "{name}[{k}] element {i}: got {a:e}, want {b:e}");
                }
                if let Some(sum) = w.get("checksum") {
                    let (a, b) = (v.iter().sum::<f64>(), sum.as_f64().unwrap());
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                        "{name}[{k}]: checksum {a} vs {b}"
                    );
                }
            }
        }
    }
}

/// [`check_close`] with no tolerance: every bit must match.
#[track_caller]
fn check(name: &str, got: &[Array]) {
    check_close(name, got, 0.0, 0.0);
}

fn k(seed: i64) -> Key {
    random::key(seed)
}

fn stack_keys(keys: &[Key]) -> Vec<Array> {
    keys.iter().map(random::key_data).collect()
}

// ---------------------------------------------------------------------------------------------
// tests/data/golden.json, feature "prng" (and the PRNG leaves of x64_prng and pmap cases).

#[test]
fn golden_prngkey_data() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("prngkey_0_data", 0, &random::key_data(&k(0)));
    assert_golden("prngkey_42_data", 0, &random::key_data(&k(42)));
    assert_golden("prngkey_negative_seed", 0, &random::key_data(&k(-1)));
    assert_golden("prngkey_negative_seed", 1, &random::key_data(&k(i32::MAX as i64)));
}

#[test]
fn golden_threefry2x32_known_answer() {
    let _x64 = rjax::config::x64_scope(true);
    let key = jnp::array([0x1319_8A2Eu32, 0x0370_7344]);
    let count = jnp::array([0x243F_6A88u32, 0x85A3_08D3]);
    assert_golden("threefry2x32_known_answer", 0, &random::threefry_2x32(&key, &count));
}

#[test]
fn golden_split_and_fold_in() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("split_default", 0, &random::key_data(&random::split(&k(0), 2)));
    assert_golden("split_8", 0, &random::key_data(&random::split(&k(0), 8)));
    assert_golden("fold_in", 0, &random::key_data(&random::fold_in(&k(0), 1)));
    assert_golden("fold_in", 1, &random::key_data(&random::fold_in(&k(42), 7)));
    assert_golden("fold_in", 2, &random::key_data(&random::fold_in(&k(0), 0)));
}

#[test]
fn golden_bits() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("bits_uint32", 0, &random::bits(&k(0), [4]));
    assert_golden("bits_uint32", 1, &random::bits(&k(0), [3]));
    assert_golden("bits_uint32", 2, &random::bits(&k(0), [2, 3]));
}

#[test]
fn golden_normal_and_uniform() {
    let _x64 = rjax::config::x64_scope(true);
    assert_golden("normal_key0_shape4", 0, &random::normal(&k(0), [4]));
    assert_golden("uniform_minval_maxval", 0, &random::uniform_range(&k(42), [2, 3], -2.0, 3.0));
}

#[test]
fn golden_normal_from_split_subkey() {
    let _x64 = rjax::config::x64_scope(true);
    let keys = random::split(&k(0), 2);
    let (key, subkey) = (keys.get(0), keys.get(1));
    let name = "normal_from_split_subkey";
    assert_golden(name, 0, &random::key_data(&key));
    assert_golden(name, 1, &random::key_data(&subkey));
    assert_golden(name, 2, &random::normal(&subkey, [3]));
    assert_golden(name, 3, &random::normal(&key, [2, 2]));
}

#[test]
fn golden_uniform_normal_from_bits() {
    let _x64 = rjax::config::x64_scope(true);
    let key = k(0);
    let name = "uniform_normal_from_bits";
    assert_golden(name, 0, &random::bits(&key, [4]));
    assert_golden(name, 1, &random::uniform(&key, [4]));
    // u: the uniform on [nextafter(-1, 0), 1) behind the normal.
    let lo = jnp::nextafter(Array::from(-1.0f32), Array::from(0.0f32));
    assert_golden(name, 2, &random::uniform_range(&key, [4], &lo, 1.0));
    assert_golden(name, 3, &random::normal(&key, [4]));
    // The golden values are bit-exact here, not only within the case's tolerance.
    check_exact(&random::normal(&key, [4]), &output(name, 3));
}

#[track_caller]
fn check_exact(got: &Array, want: &Array) {
    assert_close(got, want, 0.0, 0.0);
}

#[test]
fn golden_randint_and_per_key_normal() {
    let _x64 = rjax::config::x64_scope(true);
    let key = k(7);
    let name = "randint_and_vmap_normal";
    assert_golden(name, 0, &random::randint(&key, [6], 0, 10));
    // vmap(lambda k: normal(k, (2,)))(keys) is the per-key draws stacked.
    let keys = random::split(&key, 3);
    let rows: Vec<f32> =
        keys.iter().flat_map(|k| random::normal(&k, [2]).to_vec::<f32>().unwrap()).collect();
    assert_golden(name, 1, &Array::from_shape_vec([3, 2], rows));
}

#[test]
fn golden_x64_prng() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "x64_prng";
    let key = k(0);
    assert_golden(name, 0, &random::key_data(&key));
    assert_golden(name, 1, &random::key_data(&random::key_x64((1 << 40) + 3)));
    assert_golden(name, 2, &random::key_data(&random::key_x64(-1)));
    assert_golden(name, 3, &random::normal_dtype(&key, [4], DType::F64));
    assert_golden(name, 4, &random::uniform_dtype(&key, [4], DType::F64));
    let b = random::bits_dtype(&key, [2], DType::U64);
    assert_eq!(b.to_vec::<u64>().unwrap(), vec![7719171245655871230, 3989946895414531357]);
}

#[test]
fn golden_pmap_random_normal_mats() {
    let _x64 = rjax::config::x64_scope(true);
    let name = "pmap_mean_of_random_normal_mats";
    let keys = random::split(&k(0), 8);
    assert_golden(name, 0, &random::key_data(&keys));
    let mats: Vec<f32> =
        keys.iter().flat_map(|k| random::normal(&k, [5, 6]).to_vec::<f32>().unwrap()).collect();
    assert_golden(name, 1, &Array::from_shape_vec([8, 5, 6], mats));
}

// ---------------------------------------------------------------------------------------------
// tests/data/random.json: keys.

#[test]
fn keys_from_seeds() {
    let _x64 = rjax::config::x64_scope(true);
    let seeds = [0, 1, 42, -1, (1 << 31) - 1, -(1 << 31), 123456789, (1 << 40) + 3];
    let got: Vec<Array> = seeds.iter().map(|&s| random::key_data(&k(s))).collect();
    check("key_seeds", &got);
    let seeds = [0, -1, (1 << 40) + 3, -(1 << 40), i64::MAX];
    let got: Vec<Array> = seeds.iter().map(|&s| random::key_data(&random::key_x64(s))).collect();
    check("key_seeds_x64", &got);
    check("typed_key_data", &[random::key_data(&k(42))]);
}

#[test]
fn splits() {
    let _x64 = rjax::config::x64_scope(true);
    check("split_2", &[random::key_data(&random::split(&k(0), 2))]);
    check("split_5", &[random::key_data(&random::split(&k(42), 5))]);
    check("split_shape_2x3", &[random::key_data(&random::split_shape(&k(1), [2, 3]))]);
    check(
        "split_of_split",
        &[random::key_data(&random::split(&random::split(&k(1), 3).get(2), 4))],
    );
    check("split_1000", &[random::key_data(&random::split(&k(9), 1000))]);
}

#[test]
fn fold_ins() {
    let _x64 = rjax::config::x64_scope(true);
    let mut keys: Vec<Key> =
        [0, 1, 7, 1 << 31, u32::MAX].iter().map(|&d| random::fold_in(&k(0), d)).collect();
    keys.push(random::fold_in(&k(42), 12345));
    check("fold_in_values", &stack_keys(&keys));
    check("fold_in_chain", &[random::key_data(&random::fold_in(&random::fold_in(&k(3), 1), 2))]);
}

#[test]
fn fold_in_is_an_element_of_split() {
    let key = k(5);
    let keys = random::split(&key, 10);
    for i in 0..10 {
        assert_eq!(random::fold_in(&key, i as u32), keys.get(i));
    }
}

#[test]
fn key_arrays_behave_like_typed_keys() {
    let keys = random::split_shape(&k(1), [2, 3]);
    assert_eq!(keys.shape(), &[2, 3]);
    assert_eq!((keys.ndim(), keys.size(), keys.len()), (2, 6, 2));
    assert_eq!(random::key_data(&keys).shape(), &[2, 3, 2]);
    let row = keys.get(1);
    assert_eq!(row.shape(), &[3]);
    let all: Vec<Key> = keys.iter().flat_map(|r| r.iter().collect::<Vec<_>>()).collect();
    assert_eq!(all.len(), 6);
    assert_eq!(all[4], row.get(1));
    assert_eq!(random::wrap_key_data(&random::key_data(&keys)), keys);
    assert_eq!(k(42).shape(), &[] as &[usize]);
    assert_eq!(format!("{:?}", k(42)), "Key(shape=(), data=[0, 42])");
    let mut n = 0;
    for key in &random::split(&k(0), 4) {
        assert_eq!(key.ndim(), 0);
        n += 1;
    }
    assert_eq!(n, 4);
}

#[test]
fn threefry_known_answers() {
    let h = |key: [u32; 2], count: [u32; 2]| {
        random::threefry_2x32(&jnp::array(key), &jnp::array(count)).to_vec::<u32>().unwrap()
    };
    // Random123's known-answer vectors for threefry2x32_20.
    assert_eq!(h([0, 0], [0, 0]), vec![0x6B20_0159, 0x99BA_4EFE]);
    assert_eq!(h([!0, !0], [!0, !0]), vec![0x1CB9_96FC, 0xBB00_2BE7]);
    // An odd count is padded with a zero: element 0 pairs with element 2, 1 with the pad.
    let odd = random::threefry_2x32(&jnp::array([1u32, 2]), &jnp::array([10u32, 11, 12]));
    let [a, b] = [h([1, 2], [10, 12]), h([1, 2], [11, 0])];
    assert_eq!(odd.to_vec::<u32>().unwrap(), vec![a[0], b[0], a[1]]);
}

// ---------------------------------------------------------------------------------------------
// tests/data/random.json: bits.

#[test]
fn bits_small_shapes() {
    let _x64 = rjax::config::x64_scope(true);
    let shapes: [&[usize]; 5] = [&[], &[1], &[5], &[2, 3], &[0]];
    let got: Vec<Array> = shapes.iter().map(|s| random::bits(&k(0), s)).collect();
    check("bits_small", &got);
}

#[test]
fn bits_counter_layout_beyond_2_pow_16() {
    let _x64 = rjax::config::x64_scope(true);
    check("bits_large_1d", &[random::bits(&k(5), [70000])]);
    check("bits_large_2d", &[random::bits(&k(6), [300, 301])]);
}

#[test]
fn bits_of_every_width() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "bits_narrow",
        &[random::bits_dtype(&k(2), [10], DType::U8), random::bits_dtype(&k(2), [10], DType::U16)],
    );
    check(
        "bits_u64",
        &[
            random::bits_dtype(&k(0), [2], DType::U64),
            random::bits_dtype(&k(11), [1000], DType::U64),
        ],
    );
}

#[test]
fn bits_prefix_property() {
    let long = random::bits(&k(3), [100]).to_vec::<u32>().unwrap();
    let short = random::bits(&k(3), [37]).to_vec::<u32>().unwrap();
    assert_eq!(&long[..37], &short[..]);
}

// ---------------------------------------------------------------------------------------------
// tests/data/random.json: float samplers, bit-exact in f32 and f64.

#[test]
fn uniform_values() {
    let _x64 = rjax::config::x64_scope(true);
    let shapes: [&[usize]; 3] = [&[], &[5], &[3, 4]];
    check("uniform_shapes", &shapes.map(|s| random::uniform(&k(0), s)));
    check(
        "uniform_range",
        &[
            random::uniform_range(&k(42), [2, 3], -2.0, 3.0),
            random::uniform_range(&k(1), [1000], 0.1, 0.7),
        ],
    );
    let lo = Array::from_shape_vec([3, 1], vec![0.0f32, 1.0, -5.0]);
    let hi = jnp::array([1.0f32, 2.0, 3.0, 4.0]);
    check("uniform_array_bounds", &[random::uniform_range(&k(3), [3, 4], &lo, &hi)]);
    check("uniform_large", &[random::uniform_range(&k(7), [1 << 17], -1.5, 2.5)]);
}

#[test]
fn uniform_values_f64() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "uniform_f64",
        &[
            random::uniform_dtype(&k(0), [4], DType::F64),
            random::uniform_range_dtype(&k(4), [500], DType::F64, -3.0, 0.5),
        ],
    );
}

#[test]
fn normal_values() {
    let _x64 = rjax::config::x64_scope(true);
    check("normal_1000", &[random::normal(&k(0), [1000])]);
    check("normal_2d", &[random::normal(&k(8), [7, 9])]);
    check("normal_large", &[random::normal(&k(1), [1 << 17])]);
    check(
        "normal_f64",
        &[
            random::normal_dtype(&k(0), [4], DType::F64),
            random::normal_dtype(&k(2), [500], DType::F64),
        ],
    );
}

#[test]
fn truncated_normal_values() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "truncated_normal",
        &[
            random::truncated_normal(&k(0), -2.0, 2.0, [1000]),
            random::truncated_normal(&k(1), -1.0, 0.5, [50]),
        ],
    );
    let lower = Array::from_shape_vec([3, 1], vec![-1.0f32, 0.0, -3.0]);
    let upper = jnp::array([1.0f32, 2.0, 0.5, 3.0]);
    check(
        "truncated_normal_array_bounds",
        &[random::truncated_normal(&k(2), &lower, &upper, [3, 4])],
    );
    check(
        "truncated_normal_f64",
        &[random::truncated_normal_dtype(&k(0), -2.0, 2.0, [300], DType::F64)],
    );
}

#[test]
fn exponential_and_gumbel_values() {
    let _x64 = rjax::config::x64_scope(true);
    check("exponential", &[random::exponential(&k(0), [1000])]);
    check("gumbel", &[random::gumbel(&k(0), [1000])]);
    let f64s = [random::exponential_dtype(&k(1), [300], DType::F64)];
    check("exponential_f64", &f64s);
    check("gumbel_f64", &[random::gumbel_dtype(&k(1), [300], DType::F64)]);
}

#[test]
fn bernoulli_values() {
    let _x64 = rjax::config::x64_scope(true);
    let p = jnp::array([0.1f32, 0.5, 0.9, 1.0]);
    check(
        "bernoulli",
        &[
            random::bernoulli(&k(0), 0.3, [200]),
            random::bernoulli(&k(1), &p, [3, 4]),
            random::bernoulli(&k(0), 0.5, [4]),
        ],
    );
    check("bernoulli_f64", &[random::bernoulli(&k(5), Array::from(0.25f64), [100])]);
}

// ---------------------------------------------------------------------------------------------
// tests/data/random.json: categorical, integers, permutations, choice.

/// `x` with a new shape of the same size (f32 or i32 data).
fn reshape(x: Array, shape: &[usize]) -> Array {
    match x.dtype() {
        DType::F32 => Array::from_shape_vec(shape, x.to_vec::<f32>().unwrap()),
        _ => Array::from_shape_vec(shape, x.to_vec::<i32>().unwrap()),
    }
}

fn sin_range(n: usize) -> Array {
    jnp::arange(n as i32).astype(DType::F32).sin()
}

#[test]
fn categorical_values() {
    let _x64 = rjax::config::x64_scope(true);
    let logits = jnp::array([0.1f32, 0.2, 0.3, 0.4]).log();
    check("categorical_1d", &[random::categorical_shape(&k(0), &logits, -1, [50])]);
    let logits = reshape(sin_range(15), &[3, 5]);
    check(
        "categorical_batch",
        &[random::categorical(&k(1), &logits, -1), random::categorical(&k(2), &logits, 0)],
    );
    let logits = reshape(jnp::arange(12).astype(DType::F32).cos(), &[3, 4]);
    check("categorical_shape_prefix", &[random::categorical_shape(&k(3), &logits, -1, [7, 3])]);
    let logits = jnp::linspace_dtype(-1.0, 1.0, 6, DType::F64);
    // JAX's x64 mode returns its default int, int64; rjax's default int is int32.
    let got = random::categorical_shape(&k(4), &logits, -1, [40]);
    check("categorical_f64", &[got.astype(DType::I64)]);
}

#[test]
fn randint_values() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "randint_small",
        &[random::randint(&k(7), [6], 0, 10), random::randint(&k(1), [1000], -5, 5)],
    );
    check(
        "randint_wide",
        &[
            random::randint(&k(2), [200], 0, i32::MAX),
            random::randint(&k(3), [200], i32::MIN, i32::MAX),
            random::randint(&k(4), [5], 3, 3),
        ],
    );
    let lo = Array::from_shape_vec([3, 1], vec![0i32, -10, -100]);
    let hi = jnp::array([1i32, 5, 20, 1000]);
    check("randint_array_bounds", &[random::randint(&k(5), [3, 4], &lo, &hi)]);
}

#[test]
fn randint_values_of_other_dtypes() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "randint_narrow",
        &[
            random::randint_dtype(&k(6), [50], 0, 256, DType::U8),
            random::randint_dtype(&k(6), [50], -128, 128, DType::I8),
            random::randint_dtype(&k(6), [50], -1000, 1000, DType::I16),
            random::randint_dtype(&k(6), [50], 0, 70000, DType::U16),
        ],
    );
    check("randint_uint32", &[random::randint_dtype(&k(8), [50], 0, i32::MAX, DType::U32)]);
    check(
        "randint_x64",
        &[
            random::randint_dtype(&k(7), [6], 0, 10, DType::I64),
            random::randint_dtype(&k(9), [100], -(1i64 << 40), 1i64 << 40, DType::I64),
            random::randint_dtype(&k(9), [100], 0, 1i64 << 62, DType::U64),
        ],
    );
}

#[test]
fn permutation_values() {
    let _x64 = rjax::config::x64_scope(true);
    check("permutation_int", &[random::permutation(&k(0), 10), random::permutation(&k(1), 2000)]);
    let x = reshape(jnp::arange(12).astype(DType::F32), &[4, 3]);
    let xi = reshape(jnp::arange(12), &[4, 3]);
    check(
        "permutation_array",
        &[
            random::permutation_array(&k(2), &x, 0, false),
            random::permutation_array(&k(2), &xi, 1, false),
            random::permutation_array(&k(3), &xi, 1, true),
        ],
    );
}

#[test]
fn choice_values() {
    let _x64 = rjax::config::x64_scope(true);
    check(
        "choice_range",
        &[
            random::choice(&k(0), 10, [5], true),
            random::choice(&k(0), 10, [5], false),
            random::choice(&k(1), 1000, [2, 3], false),
        ],
    );
    let p = jnp::array([0.1f32, 0.05, 0.5, 0.2, 0.15]);
    let p7 = jnp::arange(7).astype(DType::F32).add(1.0).sin().square();
    check(
        "choice_weighted",
        &[
            random::choice_weighted(&k(2), 5, [20], true, &p),
            random::choice_weighted(&k(3), 5, [3], false, &p),
            random::choice_weighted(&k(4), 7, [30], true, &p7),
        ],
    );
    let p64 = p.astype(DType::F64);
    let got = random::choice_weighted(&k(2), 5, [20], true, &p64);
    check("choice_weighted_f64", &[got.astype(DType::I64)]);
}

#[test]
fn choice_from_arrays() {
    let _x64 = rjax::config::x64_scope(true);
    let a = reshape(jnp::arange(10).astype(DType::F32), &[5, 2]);
    let ai = reshape(jnp::arange(10), &[5, 2]);
    let b = reshape(jnp::arange(12), &[3, 4]);
    let p = jnp::array([0.4f32, 0.3, 0.2, 0.1]);
    check(
        "choice_array",
        &[
            random::choice_array(&k(5), &a, [3], true, None, 0),
            random::choice_array(&k(5), &ai, [2, 2], false, None, 0),
            random::choice_array(&k(6), &b, [2], true, None, 1),
            random::choice_array(&k(7), &b, [5], true, Some(&p), 1),
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// tests/data/random.json: initializers.

#[test]
fn initializers_match_jax_nn_initializers() {
    let _x64 = rjax::config::x64_scope(true);
    check("init_glorot_uniform", &[init::glorot_uniform().init(&k(0), [4, 5])]);
    check("init_glorot_normal", &[init::glorot_normal().init(&k(0), [4, 5])]);
    check("init_he_normal_conv", &[init::he_normal().init(&k(1), [3, 3, 2, 4])]);
    check("init_he_uniform", &[init::he_uniform().init(&k(1), [6, 3])]);
    check("init_lecun_normal", &[init::lecun_normal().init(&k(2), [6, 2])]);
    check("init_lecun_uniform", &[init::lecun_uniform().init(&k(2), [6, 2])]);
    check("init_normal", &[init::normal(0.02).init(&k(3), [3, 3])]);
    check("init_uniform", &[init::uniform(0.1).init(&k(3), [3, 3])]);
    check("init_truncated_normal", &[init::truncated_normal(0.5).init(&k(3), [3, 3])]);
    let vs = init::variance_scaling(0.5, init::FanMode::FanOut, init::Distribution::Normal)
        .with_axes([0], [1, 2], []);
    check("init_variance_scaling_axes", &[vs.init(&k(4), [3, 4, 5])]);
    let w = init::glorot_normal().with_dtype(DType::F64).init(&k(0), [4, 5]);
    check("init_glorot_normal_f64", &[w]);
}

// ---------------------------------------------------------------------------------------------
// Statistical sanity: a million draws per sampler, fixed seeds.

const N: usize = 1_000_000;

fn moments(a: &Array) -> (f64, f64) {
    let v = a.astype(DType::F64).to_vec::<f64>().unwrap();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var)
}

#[track_caller]
fn assert_moments(a: &Array, mean: f64, var: f64, tol_mean: f64, tol_var: f64) {
    let (m, v) = moments(a);
    assert!((m - mean).abs() < tol_mean, "mean {m}, expected {mean}");
    assert!((v - var).abs() < tol_var, "variance {v}, expected {var}");
}

fn frequencies(a: &Array, classes: usize) -> Vec<f64> {
    let mut counts = vec![0usize; classes];
    for i in a.astype(DType::I64).to_vec::<i64>().unwrap() {
        counts[i as usize] += 1;
    }
    counts.iter().map(|&c| c as f64 / a.size() as f64).collect()
}

#[test]
fn stats_uniform_and_normal() {
    let _x64 = rjax::config::x64_scope(true);
    let u = random::uniform(&k(100), [N]);
    assert_moments(&u, 0.5, 1.0 / 12.0, 2e-3, 1e-3);
    let u = random::uniform_range(&k(101), [N], -3.0, 5.0);
    assert_moments(&u, 1.0, 64.0 / 12.0, 2e-2, 2e-2);
    assert_moments(&random::uniform_dtype(&k(102), [N], DType::F64), 0.5, 1.0 / 12.0, 2e-3, 1e-3);
    assert_moments(&random::normal(&k(103), [N]), 0.0, 1.0, 5e-3, 5e-3);
    assert_moments(&random::normal_dtype(&k(104), [N], DType::F64), 0.0, 1.0, 5e-3, 5e-3);
}

#[test]
fn stats_truncated_exponential_gumbel() {
    let _x64 = rjax::config::x64_scope(true);
    // A standard normal truncated to (-2, 2) has variance 0.7737413.
    let t = random::truncated_normal(&k(105), -2.0, 2.0, [N]);
    assert_moments(&t, 0.0, 0.773_741_3, 5e-3, 5e-3);
    assert!(t.to_vec::<f32>().unwrap().iter().all(|v| v.abs() < 2.0));
    assert_moments(&random::exponential(&k(106), [N]), 1.0, 1.0, 5e-3, 1e-2);
    let euler_gamma = 0.577_215_664_9;
    let pi2_6 = std::f64::consts::PI.powi(2) / 6.0;
    assert_moments(&random::gumbel(&k(107), [N]), euler_gamma, pi2_6, 5e-3, 2e-2);
}

#[test]
fn stats_bernoulli_and_randint() {
    let _x64 = rjax::config::x64_scope(true);
    assert_moments(&random::bernoulli(&k(108), 0.3, [N]), 0.3, 0.21, 2e-3, 2e-3);
    let r = random::randint(&k(109), [N], 0, 10);
    assert_moments(&r, 4.5, 8.25, 1e-2, 3e-2);
    for f in frequencies(&r, 10) {
        assert!((f - 0.1).abs() < 2e-3, "randint frequency {f}");
    }
    let r = random::randint_dtype(&k(110), [N], -(1i64 << 40), 1i64 << 40, DType::I64);
    let (m, _) = moments(&r);
    assert!(m.abs() < 2e-3 * (1u64 << 40) as f64, "wide randint mean {m}");
}

#[test]
fn stats_categorical_and_choice() {
    let _x64 = rjax::config::x64_scope(true);
    let p = [0.1f32, 0.2, 0.3, 0.4];
    let logits = jnp::array(p).log();
    let c = random::categorical_shape(&k(111), &logits, 0, [N]);
    for (f, want) in frequencies(&c, 4).iter().zip(p) {
        assert!((f - want as f64).abs() < 3e-3, "categorical frequency {f} vs {want}");
    }
    let w = random::choice_weighted(&k(112), 4, [N], true, &jnp::array(p));
    for (f, want) in frequencies(&w, 4).iter().zip(p) {
        assert!((f - want as f64).abs() < 3e-3, "choice frequency {f} vs {want}");
    }
    let no_repeat = random::choice(&k(113), N, [1000], false).to_vec::<i32>().unwrap();
    let mut sorted = no_repeat.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 1000, "choice without replacement repeated an element");
}

#[test]
fn stats_permutation_is_a_permutation() {
    let p = random::permutation(&k(114), N).to_vec::<i32>().unwrap();
    let mut sorted = p.clone();
    sorted.sort();
    assert!(sorted.iter().enumerate().all(|(i, &v)| v == i as i32));
    // Fixed points of a random permutation average 1.
    let fixed = p.iter().enumerate().filter(|&(i, &v)| v == i as i32).count();
    assert!(fixed < 10, "{fixed} fixed points");
    let displacement = p.iter().enumerate().map(|(i, &v)| (v as f64 - i as f64).abs()).sum::<f64>();
    let mean = displacement / N as f64;
    assert!((mean - N as f64 / 3.0).abs() < 0.01 * N as f64, "mean displacement {mean}");
}

#[test]
fn stats_initializers() {
    let _x64 = rjax::config::x64_scope(true);
    // Glorot uniform on (1000, 1000): variance 1 / fan_avg = 1e-3.
    let w = init::glorot_uniform().init(&k(115), [1000, 1000]);
    assert_moments(&w, 0.0, 1e-3, 1e-4, 2e-5);
    // He normal on (500, 2000): variance 2 / fan_in = 4e-3 (truncated normal rescaled).
    let w = init::he_normal().init(&k(116), [500, 2000]);
    assert_moments(&w, 0.0, 4e-3, 2e-4, 8e-5);
    let w = init::lecun_normal().init(&k(117), [1000, 1000]);
    assert_moments(&w, 0.0, 1e-3, 1e-4, 2e-5);
    let w = init::normal(0.02).init(&k(118), [N]);
    assert_moments(&w, 0.0, 4e-4, 1e-4, 4e-6);
}

// ---------------------------------------------------------------------------------------------
// Bad input panics with a message naming the operation.

#[test]
#[should_panic(
    expected = "wrap_key_data: key data must be uint32 with a trailing axis of length 2"
)]
fn key_data_of_wrong_dtype() {
    random::wrap_key_data(&jnp::array([1.0f32, 2.0]));
}

#[test]
#[should_panic(
    expected = "wrap_key_data: key data must be uint32 with a trailing axis of length 2"
)]
fn key_data_of_wrong_shape() {
    random::wrap_key_data(&jnp::array([1u32, 2, 3]));
}

#[test]
#[should_panic(expected = "normal: expected a single key, but got a key array of shape (3,)")]
fn sampler_given_a_key_array() {
    random::normal(&random::split(&k(0), 3), [2]);
}

#[test]
#[should_panic(expected = "split: expected a single key")]
fn split_of_a_key_array() {
    random::split(&random::split(&k(0), 3), 2);
}

#[test]
#[should_panic(expected = "fold_in: expected a single key")]
fn fold_in_of_a_key_array() {
    random::fold_in(&random::split(&k(0), 3), 2);
}

#[test]
#[should_panic(expected = "Key::get: index 3 is out of range for a key array of shape (3,)")]
fn key_index_out_of_range() {
    random::split(&k(0), 3).get(3);
}

#[test]
#[should_panic(expected = "Key::len: a single key has no axis")]
fn indexing_a_single_key() {
    k(0).get(0);
}

#[test]
#[should_panic(expected = "uniform: minval > maxval (2 > 1 at flat index 0)")]
fn uniform_with_minval_above_maxval() {
    random::uniform_range(&k(0), [3], 2.0, 1.0);
}

#[test]
#[should_panic(
    expected = "uniform: minval of shape (3,) does not broadcast to the sample shape (2,)"
)]
fn uniform_with_bounds_of_the_wrong_shape() {
    random::uniform_range(&k(0), [2], jnp::zeros([3]), 1.0);
}

#[test]
fn randint_with_minval_above_maxval_gives_minval() {
    // As in JAX, an empty range is not an error (tests/edges.rs has JAX's numbers).
    let r = random::randint(&k(0), [3], jnp::array([0i32, 5, 0]), 4);
    assert_eq!(r.to_vec::<i32>().unwrap()[1], 5);
}

#[test]
#[should_panic(expected = "truncated_normal: lower > upper")]
fn truncated_normal_with_lower_above_upper() {
    random::truncated_normal(&k(0), 1.0, -1.0, [3]);
}

#[test]
#[should_panic(
    expected = "choice: cannot take a larger sample (size 6) than the population (size 5)"
)]
fn choice_without_replacement_of_too_many() {
    random::choice(&k(0), 5, [2, 3], false);
}

#[test]
#[should_panic(expected = "choice: the population must not be empty")]
fn choice_from_nothing() {
    random::choice(&k(0), 0, [1], true);
}

#[test]
#[should_panic(expected = "choice: p must be a 1-D array with one probability per candidate (5)")]
fn choice_with_probabilities_of_the_wrong_length() {
    random::choice_weighted(&k(0), 5, [2], true, &jnp::ones([4]));
}

#[test]
#[should_panic(expected = "bits: dtype must be an unsigned integer type, got int32")]
fn bits_of_a_signed_dtype() {
    random::bits_dtype(&k(0), [2], DType::I32);
}

#[test]
#[should_panic(expected = "uniform: dtype must be float32 or float64, got int32")]
fn uniform_of_an_integer_dtype() {
    random::uniform_dtype(&k(0), [2], DType::I32);
}

#[test]
#[should_panic(expected = "normal: dtype must be float32 or float64, got float16")]
fn normal_in_half_precision() {
    random::normal_dtype(&k(0), [2], DType::F16);
}

#[test]
#[should_panic(expected = "randint: dtype must be an integer type, got float32")]
fn randint_of_a_float_dtype() {
    random::randint_dtype(&k(0), [2], 0, 3, DType::F32);
}

#[test]
#[should_panic(expected = "bernoulli: the probability p must have a floating dtype, got int32")]
fn bernoulli_with_integer_p() {
    random::bernoulli(&k(0), jnp::array([1i32]), [1]);
}

#[test]
#[should_panic(expected = "categorical: logits must be floating point, got int32")]
fn categorical_of_integer_logits() {
    random::categorical(&k(0), &jnp::arange(3), -1);
}

#[test]
#[should_panic(expected = "categorical: axis 2 is out of bounds for an array of rank 2")]
fn categorical_on_a_missing_axis() {
    random::categorical(&k(0), &jnp::zeros([2, 3]), 2);
}

#[test]
#[should_panic(expected = "permutation: x must be at least 1-D")]
fn permutation_of_a_scalar() {
    random::permutation_array(&k(0), &Array::from(3.0f32), 0, false);
}

#[test]
#[should_panic(expected = "variance_scaling: cannot compute fans of a weights array of shape (5,)")]
fn glorot_of_a_vector() {
    init::glorot_normal().init(&k(0), [5]);
}

#[jit]
fn jitted_draws(key: &Array) -> (Array, Array, Array) {
    let key = random::wrap_key_data(key);
    let keys = random::split(&key, 2);
    (random::normal(&keys.get(0), [4]), random::uniform(&keys.get(1), [3]), random::key_data(&keys))
}

#[jit]
#[vmap]
fn per_key_normals(key: &Key) -> Array {
    random::normal(key, [2])
}

/// Keys inside a struct: the key is one leaf of the tree, next to the arrays.
#[derive(Clone, Tree)]
struct Noisy {
    key: Key,
    scale: Array,
}

#[jit]
fn noisy_draw(state: &Noisy) -> (Array, Key) {
    let keys = random::split(&state.key, 2);
    (random::normal(&keys.get(0), [3]) * &state.scale, keys.get(1))
}

#[test]
fn samplers_inside_jit_and_vmap_give_the_eager_numbers() {
    let _x64 = rjax::config::x64_scope(true);
    let key = k(7);
    let (normal, uniform, keys) = jitted_draws(&random::key_data(&key));
    let split = random::split(&key, 2);
    assert_eq!(keys.to_vec::<u32>().unwrap(), random::key_data(&split).to_vec::<u32>().unwrap());
    assert_eq!(
        normal.to_vec::<f32>().unwrap(),
        random::normal(&split.get(0), [4]).to_vec::<f32>().unwrap()
    );
    assert_eq!(
        uniform.to_vec::<f32>().unwrap(),
        random::uniform(&split.get(1), [3]).to_vec::<f32>().unwrap()
    );
    // vmap over a batch of keys draws each key's own stream (the golden per-key rows).
    assert_golden("randint_and_vmap_normal", 1, &per_key_normals(&random::split(&key, 3)));
}

#[test]
fn keys_are_pytrees_that_jit_takes_and_returns() {
    let state = Noisy { key: k(3), scale: Array::from(2.0f32) };
    let (draw, next) = noisy_draw(&state);
    let split = random::split(&k(3), 2);
    let eager = random::normal(&split.get(0), [3]) * 2.0f32;
    assert_eq!(draw.to_vec::<f32>().unwrap(), eager.to_vec::<f32>().unwrap());
    assert_eq!(next, split.get(1));
    let (_, again) = noisy_draw(&Noisy { key: next, scale: Array::from(2.0f32) });
    assert_eq!(again, random::split(&split.get(1), 2).get(1));
    assert_eq!(noisy_draw::cache_info().traces, 1, "a new key is new data, not a new trace");
    let (leaves, def) = rjax::tree::flatten(&state.key);
    assert_eq!((leaves.len(), def.to_string()), (1, "Key { data: * }".to_string()));
}

// ---------------------------------------------------------------------------------------------
// The discrete samplers traced: under #[jit], vmap and lax::scan they are array operations
// (tests/data/random.json, cases computed under jax.jit, jax.vmap and lax.scan).

fn p5() -> Array {
    jnp::array([0.1f32, 0.05, 0.5, 0.2, 0.15])
}

#[jit]
fn discrete_draws(key: &Key) -> Vec<Array> {
    let logits = sin_range(15).reshape([3, 5]);
    let xi = jnp::arange(12).reshape([4, 3]);
    let xf = jnp::arange(12).astype(DType::F32).reshape([4, 3]);
    vec![
        random::categorical(key, &logits, -1),
        random::randint(key, [7], -3, 9),
        random::permutation(key, 20),
        random::permutation_array(key, &xi, 1, true),
        random::permutation_array(key, &xf, 0, false),
        random::choice(key, 10, [4], false),
        random::choice_weighted(key, 5, [6], true, &p5()),
        random::choice_weighted(key, 5, [3], false, &p5()),
        random::choice_array(key, &jnp::arange(10).reshape([5, 2]), [2], false, None, 0),
        random::bernoulli(key, 0.3, [8]),
    ]
}

#[jit]
fn randint_traced_bounds(key: &Key, lo: &Array, hi: &Array) -> Array {
    random::randint(key, [5], lo, hi)
}

#[jit]
#[vmap]
fn discrete_per_key(key: &Key) -> Vec<Array> {
    vec![
        random::categorical(key, &sin_range(15).reshape([3, 5]), -1),
        random::randint(key, [4], 0, 1000),
        random::permutation(key, 9),
        random::choice(key, 10, [3], false),
        random::choice_weighted(key, 5, [4], true, &p5()),
        random::bernoulli(key, 0.6, [5]),
    ]
}

#[test]
fn discrete_samplers_under_jit_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let draws = discrete_draws(&k(11));
    check("jit_discrete", &draws);
    let lo = jnp::array([-5, 0, 7, i32::MIN, 3]);
    let hi = jnp::array([3, 10, 100, i32::MAX, 3]);
    check("jit_randint_traced_bounds", &[randint_traced_bounds(&k(14), &lo, &hi)]);
    assert_eq!(discrete_draws::cache_info().traces, 1);
}

#[test]
fn discrete_samplers_under_vmap_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    check("vmap_discrete", &discrete_per_key(&random::split(&k(12), 3)));
}

#[test]
fn discrete_samplers_under_scan_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let logits = jnp::array([0.1f32, 0.2, 0.3, 0.4]).log();
    let step = |c: Array, key: Key| {
        let draws = vec![
            random::randint(&key, [4], 0, 100),
            random::permutation(&key, 6),
            random::categorical(&key, &logits, -1),
            random::choice(&key, 7, [3], false),
        ];
        (c, draws)
    };
    let (_, ys) = lax::scan(step, Array::from(0i32), random::split(&k(13), 4));
    check("scan_discrete", &ys);
}
