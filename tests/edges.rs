//! JAX's answers at the edges of the ops, from `tests/data/edges.json` (computed with JAX 0.10.2
//! by `tests/data/gen/edges.py`): reductions without an identity over empty axes, integer
//! division and remainder by zero, `randint` bounds outside the dtype or in the wrong order,
//! empty category and population axes, integer inputs to rounding and to float-only functions,
//! and malformed einsum specs.
//!
//! Values are compared bit for bit with JAX's. Where JAX raises, the JSON records its error; the
//! tests check that it did and that rjax panics there too, with a message naming the op and the
//! shapes or dtypes, at the caller's line. Ops that can run traced are checked both eagerly and
//! under `#[jit]`, from one body written twice.

mod common;

use std::cell::RefCell;
use std::sync::{Once, OnceLock};

use common::panic_text;
use rjax::prelude::*;
use rjax::random::Key;
use serde_json::Value;

// --- tests/data/edges.json -------------------------------------------------------------------

fn edges_json() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/edges.json")).expect("edges.json parses")
    })
}

/// The outputs JAX gave for value case `name`, as arrays.
fn jax_outputs(name: &str) -> Vec<Array> {
    let outputs = edges_json()["cases"][name]["outputs"]
        .as_array()
        .unwrap_or_else(|| panic!("no case named {name} in edges.json"));
    outputs.iter().map(leaf_array).collect()
}

/// The exception JAX raised for error case `name` (`"ValueError: ..."`).
fn jax_error(name: &str) -> &'static str {
    edges_json()["errors"][name]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error case named {name} in edges.json"))
}

/// A stored leaf: `{shape, dtype, data}`, float data as bit patterns.
fn leaf_array(leaf: &Value) -> Array {
    let shape: Vec<usize> =
        leaf["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
    let data = leaf["data"].as_array().unwrap();
    let ints = || -> Vec<i128> {
        data.iter()
            .map(|v| v.as_i64().map(i128::from).or_else(|| v.as_u64().map(i128::from)).unwrap())
            .collect()
    };
    macro_rules! typed {
        ($t:ty) => {
            Array::from_shape_vec(&shape, ints().into_iter().map(|v| v as $t).collect::<Vec<$t>>())
        };
    }
    match leaf["dtype"].as_str().unwrap() {
        "float32" => typed!(u32).bitcast_f32(),
        "bool" => {
            Array::from_shape_vec(&shape, data.iter().map(|v| v.as_bool().unwrap()).collect())
        }
        "int8" => typed!(i8),
        "int16" => typed!(i16),
        "int32" => typed!(i32),
        "int64" => typed!(i64),
        "uint8" => typed!(u8),
        "uint16" => typed!(u16),
        "uint32" => typed!(u32),
        "uint64" => typed!(u64),
        d => panic!("edges.json holds no {d} leaves"),
    }
}

/// Reinterprets `uint32` bit patterns as `float32`.
trait BitcastF32 {
    fn bitcast_f32(&self) -> Array;
}

impl BitcastF32 for Array {
    fn bitcast_f32(&self) -> Array {
        let bits = self.to_vec::<u32>().unwrap();
        Array::from_shape_vec(self.shape(), bits.into_iter().map(f32::from_bits).collect())
    }
}

/// An array's elements exactly: integers and bools as `i128`, floats as their bits.
fn exact(a: &Array) -> Vec<i128> {
    match a.dtype() {
        DType::F32 => a.to_vec::<f32>().unwrap().into_iter().map(|v| v.to_bits() as i128).collect(),
        DType::U64 => a.to_vec::<u64>().unwrap().into_iter().map(i128::from).collect(),
        DType::Bool => a.to_vec::<bool>().unwrap().into_iter().map(i128::from).collect(),
        d if d.is_int() => {
            a.astype(DType::I64).to_vec::<i64>().unwrap().into_iter().map(i128::from).collect()
        }
        d => panic!("no exact form for {d}"),
    }
}

/// `got` has JAX's shape, dtype and bits for output `i` of case `name`.
#[track_caller]
fn assert_jax(name: &str, i: usize, got: &Array) {
    let want = &jax_outputs(name)[i];
    assert_eq!(got.shape(), want.shape(), "{name}[{i}]: shape of {got:?}");
    assert_eq!(got.dtype(), want.dtype(), "{name}[{i}]: dtype of {got:?}");
    assert_eq!(exact(got), exact(want), "{name}[{i}]: got {got:?}, JAX gave {want:?}");
}

/// Every output of case `name`, in order.
#[track_caller]
fn assert_jax_all(name: &str, got: &[Array]) {
    assert_eq!(got.len(), jax_outputs(name).len(), "{name}: number of outputs");
    for (i, g) in got.iter().enumerate() {
        assert_jax(name, i, g);
    }
}

/// JAX raised for error case `name` with a message containing `jax_says`, and `f` panics with a
/// message containing each of `ours`.
#[track_caller]
fn assert_both_refuse(name: &str, jax_says: &str, f: impl FnOnce(), ours: &[&str]) {
    let theirs = jax_error(name);
    assert!(theirs.contains(jax_says), "{name}: JAX said {theirs:?}");
    let msg = panic_text(f);
    for part in ours {
        assert!(msg.contains(part), "{name}: {part:?} is not in the panic {msg:?}");
    }
}

thread_local! {
    static PANIC_AT: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// Runs `f`, which must panic, and returns its message and the file and line it panicked at.
fn panic_site(f: impl FnOnce()) -> (String, (String, u32)) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Some(l) = info.location() {
                PANIC_AT.with(|p| *p.borrow_mut() = Some((l.file().to_string(), l.line())));
            }
            previous(info);
        }));
    });
    PANIC_AT.with(|p| p.borrow_mut().take());
    let text = panic_text(f);
    let at = PANIC_AT.with(|p| p.borrow_mut().take()).expect("the hook saw the panic");
    (text, at)
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

fn k(seed: i64) -> Key {
    random::key(seed)
}

// --- 1. max and min have no identity ---------------------------------------------------------

twins! {
    max_all(x: &Array) -> Array { jnp::max(x) }
    max_axis_0(x: &Array) -> Array { jnp::max_axes(x, 0, false) }
    min_axis_1(x: &Array) -> Array { x.min_axes(1, true) }
    max_method(x: &Array) -> Array { x.max() }
    nonempty_axes(e03: &Array, e30: &Array, e203: &Array) -> Vec<Array> {
        vec![
            jnp::max_axes(e03, 1, false),
            jnp::max_axes(e03, 1, true),
            jnp::min_axes(e30, 0, false),
            jnp::max_axes(&e03.astype(DType::I32), -1, false),
            jnp::max_axes(e203, [0, 2], false),
            e203.min_axes(2, false),
        ]
    }
    argmax_nonempty(e03: &Array, e30: &Array) -> Vec<Array> {
        vec![jnp::argmax_axis(e03, 1, false), e30.argmin_axis(0, false)]
    }
    argmax_axis_0(x: &Array) -> Array { jnp::argmax_axis(x, 0, false) }
}

#[test]
fn max_and_min_over_an_empty_axis_panic_eagerly_and_under_jit() {
    let says = "zero-size array to reduction operation";
    let e0 = jnp::zeros([0]);
    let e03 = jnp::zeros([0, 3]);
    let e30 = jnp::zeros([3, 0]);
    let max_of = |shape: &str, axes: &str| {
        format!(
            "max: zero-size array to reduction operation max which has no identity \
             (shape {shape}, axes {axes})"
        )
    };
    for f in [max_all::eager, max_all::jitted, max_method::eager, max_method::jitted] {
        let want = max_of("(0,)", "(0,)");
        assert_both_refuse("max_of_empty", says, || drop(f(&e0)), &[&want]);
        let want = max_of("(0, 3)", "(0, 1)");
        assert_both_refuse("max_all_of_empty_2d", says, || drop(f(&e03)), &[&want]);
        let bools = e0.astype(DType::Bool);
        assert_both_refuse("max_of_empty_bool", says, || drop(f(&bools)), &["max: zero-size"]);
    }
    assert!(jax_error("max_of_empty_jit").contains(says));
    for f in [max_axis_0::eager, max_axis_0::jitted] {
        let want = max_of("(0, 3)", "(0,)");
        assert_both_refuse("max_over_empty_axis", says, || drop(f(&e03)), &[&want]);
    }
    for f in [min_axis_1::eager, min_axis_1::jitted] {
        let want = "min: zero-size array to reduction operation min which has no identity \
                    (shape (3, 0), axes (1,))";
        assert_both_refuse("min_over_empty_axis", says, || drop(f(&e30)), &[want]);
    }
}

#[test]
fn max_and_min_over_nonempty_axes_of_empty_arrays_are_empty() {
    let _x64 = rjax::config::x64_scope(true);
    let (e03, e30, e203) = (jnp::zeros([0, 3]), jnp::zeros([3, 0]), jnp::zeros([2, 0, 3]));
    assert_jax_all("max_over_nonempty_axes", &nonempty_axes::eager(&e03, &e30, &e203));
    assert_jax_all("max_over_nonempty_axes", &nonempty_axes::jitted(&e03, &e30, &e203));
    assert_jax_all("argmax_over_nonempty_axes", &argmax_nonempty::eager(&e03, &e30));
    assert_jax_all("argmax_over_nonempty_axes", &argmax_nonempty::jitted(&e03, &e30));
    // Reducing no axes reduces nothing, empty or not.
    assert_eq!(jnp::max_axes(&e03, Vec::<i32>::new(), false).shape(), &[0, 3]);
}

#[test]
fn argmax_of_an_empty_axis_panics_eagerly_and_under_jit() {
    let says = "attempt to get argmax of an empty sequence";
    let e03 = jnp::zeros([0, 3]);
    assert_both_refuse(
        "argmax_of_empty",
        says,
        || drop(jnp::argmax(&jnp::zeros([0]))),
        &["argmax: attempt to get argmax of an empty array of shape (0,)"],
    );
    for f in [argmax_axis_0::eager, argmax_axis_0::jitted] {
        assert_both_refuse(
            "argmax_over_empty_axis",
            says,
            || drop(f(&e03)),
            &["argmax", "attempt to get argmax of an empty sequence", "(0, 3)"],
        );
    }
}

#[jit]
fn max_in_jit(x: &Array) -> Array {
    jnp::max(x) * 2.0 // <- max in jit
}

/// The 1-based line of this file holding `marker` (besides the lookup itself).
fn line_of(marker: &str) -> u32 {
    let source = include_str!("edges.rs");
    let hits: Vec<usize> = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(marker) && !l.contains("line_of("))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "marker {marker:?} must mark one line");
    hits[0] as u32
}

#[test]
fn the_panics_point_at_the_callers_line() {
    let e = jnp::zeros([0, 2]);
    let (msg, at) = panic_site(|| drop(jnp::max(&e)));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
    let (msg, at) = panic_site(|| drop(e.min_axes(0, false)));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
    let (msg, at) = panic_site(|| drop(max_in_jit(&e)));
    assert_eq!(at, (file!().to_string(), line_of("// <- max in jit")), "{msg}");
    let i = jnp::array([1i32, 2]);
    let (msg, at) = panic_site(|| drop(jnp::sigmoid(&i)));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
    let (msg, at) = panic_site(|| drop(jnp::round(&jnp::array([true]))));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
    let (a, b) = (jnp::ones([2, 3]), jnp::ones([2, 4]));
    let (msg, at) = panic_site(|| drop(jnp::einsum("ij,jk->ik", &[&a, &b])));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
    let (msg, at) = panic_site(|| drop(random::categorical(&k(0), &jnp::zeros([0]), -1)));
    assert_eq!(at, (file!().to_string(), line!() - 1), "{msg}");
}

// --- 2. Integer division and remainder by zero -----------------------------------------------

twins! {
    divisions(a: &Array, b: &Array) -> Vec<Array> {
        vec![
            jnp::remainder(a, b),
            jnp::fmod(a, b),
            jnp::floor_divide(a, b),
            lax::rem(a, b),
            lax::div(a, b),
        ]
    }
    by_weak_zero(a: &Array, u: &Array) -> Vec<Array> {
        vec![jnp::remainder(a, 0), jnp::fmod(a, 0), jnp::floor_divide(a, 0), u.remainder(0)]
    }
}

fn int32_operands() -> (Array, Array) {
    let a = jnp::array([7i32, -7, 0, 1, -1, i32::MIN, i32::MAX, i32::MIN, i32::MIN, 5, -5, 7]);
    let b = jnp::array([0i32, 0, 0, 0, 0, 0, 0, -1, 1, -1, 3, -3]);
    (a, b)
}

fn uint32_operands() -> (Array, Array) {
    (jnp::array([7u32, 0, 1, u32::MAX, 5, u32::MAX]), jnp::array([0u32, 0, 0, 0, 3, 2]))
}

#[test]
fn int32_division_and_remainder_by_zero_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (a, b) = int32_operands();
    assert_jax_all("int32_division", &divisions::eager(&a, &b));
    assert_jax_all("int32_division", &divisions::jitted(&a, &b));
}

#[test]
fn uint32_division_and_remainder_by_zero_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (a, b) = uint32_operands();
    assert_jax_all("uint32_division", &divisions::eager(&a, &b));
    assert_jax_all("uint32_division", &divisions::jitted(&a, &b));
}

#[test]
fn division_by_a_weak_zero_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (a, _) = int32_operands();
    let (u, _) = uint32_operands();
    assert_jax_all("division_by_weak_zero", &by_weak_zero::eager(&a, &u));
    assert_jax_all("division_by_weak_zero", &by_weak_zero::jitted(&a, &u));
}

// --- 3. Empty categories and populations -----------------------------------------------------

#[test]
fn categorical_over_no_classes_panics() {
    let says = "attempt to get argmax of an empty sequence";
    // (error case, logits, axis, sample shape, where the classes are missing)
    type Case = (&'static str, Array, isize, Option<&'static [usize]>, &'static str);
    let cases: [Case; 4] = [
        ("categorical_no_classes", jnp::zeros([0]), -1, None, "axis 0 of the logits of shape (0,)"),
        (
            "categorical_no_classes_batch",
            jnp::zeros([3, 0]),
            -1,
            None,
            "axis 1 of the logits of shape (3, 0)",
        ),
        (
            "categorical_no_classes_axis_0",
            jnp::zeros([0, 3]),
            0,
            None,
            "axis 0 of the logits of shape (0, 3)",
        ),
        (
            "categorical_no_classes_no_samples",
            jnp::zeros([0]),
            -1,
            Some(&[0][..]),
            "axis 0 of the logits of shape (0,)",
        ),
    ];
    for (name, logits, axis, shape, where_) in cases {
        let draw = || {
            drop(match shape {
                None => random::categorical(&k(0), &logits, axis),
                Some(s) => random::categorical_shape(&k(0), &logits, axis, s),
            })
        };
        assert_both_refuse(
            name,
            says,
            draw,
            &["categorical: attempt to draw from 0 classes", where_],
        );
    }
}

#[test]
fn categorical_over_an_empty_batch_is_empty() {
    let _x64 = rjax::config::x64_scope(true);
    let got = random::categorical(&k(0), &jnp::zeros([3, 0]), 0);
    assert_jax("categorical_empty_batch", 0, &got);
}

#[test]
fn choice_from_an_empty_population() {
    let _x64 = rjax::config::x64_scope(true);
    let says = "a must be greater than 0 unless no samples are taken";
    let ours = "choice: the population must not be empty unless no samples are taken";
    let draw = || drop(random::choice(&k(0), 0, [3], true));
    assert_both_refuse("choice_from_nothing", says, draw, &[ours, "0..0, sample shape (3,)"]);
    let a = jnp::zeros([3, 0]);
    let draw = || drop(random::choice_array(&k(0), &a, [2], true, None, 1));
    let at = "axis 1 of shape (3, 0), sample shape (2,)";
    assert_both_refuse("choice_from_empty_axis", says, draw, &[ours, at]);
    // Taking nothing from nothing is fine.
    let got = [
        random::choice(&k(0), 0, [0], true),
        random::choice(&k(0), 0, [0], false),
        random::choice_array(&k(0), &jnp::zeros([0, 3]), [2], true, None, 1),
    ];
    assert_jax_all("choice_nothing_from_nothing", &got);
}

// --- 4. randint bounds -----------------------------------------------------------------------

#[test]
fn randint_clips_32_bit_bounds_to_the_dtype() {
    let _x64 = rjax::config::x64_scope(true);
    let (i32_, u32_) = (DType::I32, DType::U32);
    let got = [
        random::randint_dtype(&k(0), [64], 0, 1i64 << 40, i32_),
        random::randint_dtype(&k(1), [64], -(1i64 << 40), 5, i32_),
        random::randint_dtype(&k(2), [64], (1i64 << 31) - 3, (1i64 << 31) + 10, i32_),
        random::randint_dtype(&k(3), [64], -(1i64 << 40), 1i64 << 40, i32_),
        random::randint_dtype(&k(4), [64], -5, 10, u32_),
        random::randint_dtype(&k(5), [64], 0, 1i64 << 32, u32_),
        random::randint_dtype(&k(6), [64], (1i64 << 32) - 3, 1i64 << 40, u32_),
        random::randint_dtype(&k(7), [64], -(1i64 << 40), 1i64 << 40, u32_),
    ];
    assert_jax_all("randint_clip_32", &got);
    // The top of the range stays reachable: (2^31 - 3) + 13 values clip to the last three.
    let top = got[2].to_vec::<i32>().unwrap();
    assert!(top.contains(&i32::MAX) && top.iter().all(|&v| v >= i32::MAX - 2));
}

#[test]
fn randint_clips_64_bit_bounds_to_the_dtype() {
    let _x64 = rjax::config::x64_scope(true);
    let got = [
        random::randint_dtype(&k(8), [64], i64::MAX - 2, jnp::array([u64::MAX]), DType::I64),
        random::randint_dtype(
            &k(9),
            [64],
            jnp::array([1u64 << 63]),
            jnp::array([u64::MAX]),
            DType::U64,
        ),
        random::randint_dtype(&k(10), [64], -5, 1i64 << 62, DType::U64),
    ];
    assert_jax_all("randint_clip_64", &got);
}

#[test]
fn randint_of_narrow_dtypes_converts_bounds_as_jax_does() {
    let _x64 = rjax::config::x64_scope(true);
    let got = [
        random::randint_dtype(&k(11), [64], 0, 1000, DType::U8),
        random::randint_dtype(&k(12), [64], 250, 1000, DType::U8),
        random::randint_dtype(&k(13), [64], -5, 3, DType::U8),
        random::randint_dtype(&k(14), [64], -1000, -120, DType::I8),
        random::randint_dtype(&k(15), [64], 32760, 70000, DType::I16),
        // JAX converts the bounds to int32 first, so 2^32 + 5 becomes 5: an empty range.
        random::randint_dtype(&k(16), [64], 120, (1i64 << 32) + 5, DType::I8),
        random::randint_dtype(&k(17), [64], -70000, (1i64 << 40) + 7, DType::U16),
    ];
    assert_jax_all("randint_clip_narrow", &got);
}

#[test]
fn randint_truncates_float_bounds() {
    let _x64 = rjax::config::x64_scope(true);
    let got = [
        random::randint_dtype(&k(23), [64], 0.0, 1e10, DType::I32),
        random::randint_dtype(&k(24), [64], -1e10, 0.0, DType::I32),
        random::randint_dtype(&k(25), [64], 0.5, 9.9, DType::I32),
    ];
    assert_jax_all("randint_float_bounds", &got);
}

#[test]
fn randint_clips_unsigned_array_bounds() {
    let _x64 = rjax::config::x64_scope(true);
    let got = [
        random::randint(&k(18), [64], (1i64 << 31) - 3, jnp::array([u32::MAX])),
        random::randint_dtype(&k(19), [64], -5, 10, DType::U32),
        random::randint_dtype(&k(20), [64], 0, 1000, DType::U8),
    ];
    assert_jax_all("randint_clip_default", &got);
}

#[test]
fn randint_of_an_empty_range_gives_minval() {
    let _x64 = rjax::config::x64_scope(true);
    let lo = Array::from_shape_vec([2, 1], vec![5i32, 0]);
    let hi = jnp::array([3i32, 10, -3, 8]);
    let got = [
        random::randint(&k(21), [8], 5, 3),
        random::randint(&k(22), [2, 4], &lo, &hi),
        random::randint(&k(0), [0], 5, 3),
    ];
    assert_jax_all("randint_empty_range", &got);
}

// --- 5. Functions JAX defines for floats only ------------------------------------------------

twins! {
    sigmoid_of(x: &Array) -> Array { jnp::sigmoid(x) }
    sigmoid_method(x: &Array) -> Array { x.sigmoid() }
    rsqrt_of(x: &Array) -> Array { x.rsqrt() }
    promoting(x: &Array) -> Vec<Array> {
        vec![jnp::exp(x), jnp::tanh(x), jnp::log1p(x), jnp::atan(x), jnp::erf(x), jnp::softplus(x)]
    }
}

#[test]
fn sigmoid_and_rsqrt_of_integers_and_bools_panic() {
    let says = "does not accept dtype";
    let ints = jnp::array([1i32, 2]);
    let bools = jnp::array([true]);
    for f in [sigmoid_of::eager, sigmoid_of::jitted, sigmoid_method::eager, sigmoid_method::jitted]
    {
        let want = "sigmoid: logistic does not accept dtype int32";
        assert_both_refuse("sigmoid_of_int32", says, || drop(f(&ints)), &[want, "shape (2,)"]);
        let want = "sigmoid: logistic does not accept dtype bool";
        assert_both_refuse("sigmoid_of_bool", says, || drop(f(&bools)), &[want]);
    }
    assert!(jax_error("sigmoid_of_int32_jit").contains(says));
    for f in [rsqrt_of::eager, rsqrt_of::jitted] {
        let x = jnp::array([1i32, 4]);
        let want = "rsqrt: rsqrt does not accept dtype int32";
        assert_both_refuse("rsqrt_of_int32", says, || drop(f(&x)), &[want]);
    }
}

#[test]
fn the_other_float_functions_promote_integers() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([1i32, -2, 3]);
    for got in [promoting::eager(&x), promoting::jitted(&x)] {
        let want = jax_outputs("float_functions_promote");
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            // Same dtype, values within an ulp or two (the functions' own accuracy is the
            // subject of tests/elementwise.rs); NaN where JAX gives NaN.
            common::assert_close(g, w, 3e-7, 0.0);
        }
    }
}

// --- 6. Rounding integers --------------------------------------------------------------------

twins! {
    roundings(i: &Array, u: &Array, i8_: &Array, b: &Array) -> Vec<Array> {
        vec![
            jnp::floor(i),
            jnp::ceil(i),
            jnp::round(i),
            u.floor(),
            jnp::round(i8_),
            jnp::floor(b),
            b.ceil(),
        ]
    }
    round_of(x: &Array) -> Array { jnp::round(x) }
}

#[test]
fn rounding_keeps_integers_and_bools() {
    let _x64 = rjax::config::x64_scope(true);
    let i = jnp::array([1i32, -2, 3]);
    let u = jnp::array([1u32, 2, u32::MAX]);
    let i8_ = jnp::array([-7i8, 7]);
    let b = jnp::array([true, false]);
    assert_jax_all("rounding_integers", &roundings::eager(&i, &u, &i8_, &b));
    assert_jax_all("rounding_integers", &roundings::jitted(&i, &u, &i8_, &b));
    // A weakly typed integer stays weak, as JAX returns its input.
    let w = Array::weak_scalar(3i32);
    assert!(jnp::floor(&w).is_weak() && jnp::floor(&w).dtype() == DType::I32);
}

#[test]
fn round_of_bools_panics() {
    let b = jnp::array([true, false]);
    for f in [round_of::eager, round_of::jitted] {
        let want = "round: data type bool is not inexact";
        assert_both_refuse("round_of_bool", "not inexact", || drop(f(&b)), &[want, "(2,)"]);
    }
}

// --- 7. einsum specs -------------------------------------------------------------------------

twins! {
    einsum_of(a: &Array, b: &Array, spec: &str) -> Array { jnp::einsum(spec, &[a, b]) }
    einsum_broadcasts(a: &Array, b: &Array, c: &Array, d: &Array) -> Vec<Array> {
        vec![
            jnp::einsum("ij,jk->ik", &[a, b]),
            jnp::einsum("ij,ij->ij", &[a, c]),
            jnp::einsum("ij->j", &[d]),
        ]
    }
}

#[test]
fn malformed_einsum_specs_panic_naming_einsum() {
    let (a, b) = (jnp::ones([2, 3]), jnp::ones([3, 4]));
    for f in [einsum_of::eager, einsum_of::jitted] {
        let spec = "ij,jk->ikk";
        assert_both_refuse(
            "einsum_repeated_output",
            "appeared more than once in the output",
            || drop(f(&a, &b, spec)),
            &["einsum: \"ij,jk->ikk\": output letter k appears more than once in the output ikk"],
        );
        let spec = "ij,jk->ikz";
        assert_both_refuse(
            "einsum_unknown_output",
            "did not appear in the input",
            || drop(f(&a, &b, spec)),
            &["einsum: \"ij,jk->ikz\": output letter z appears in no operand"],
        );
        let spec = "ij,jk->ik";
        let wrong = jnp::ones([2, 4]);
        assert_both_refuse(
            "einsum_size_mismatch",
            "Size of label 'j'",
            || drop(f(&a, &wrong, spec)),
            &["einsum: \"ij,jk->ik\": letter j has size 3 in operand 0 (ij, shape (2, 3)) but \
               size 2 in operand 1 (jk, shape (2, 4))"],
        );
        let spec = "ijk,jk->ik";
        assert_both_refuse(
            "einsum_rank_mismatch",
            "does not contain the correct number of indices",
            || drop(f(&a, &b, spec)),
            &["einsum: \"ijk,jk->ik\": operand ijk has 3 letters for an array of shape (2, 3)"],
        );
    }
    assert_both_refuse(
        "einsum_operand_count",
        "must be equal to the number of operands",
        || drop(jnp::einsum("ij,jk->ik", &[&a])),
        &["einsum: \"ij,jk->ik\" names 2 operands but 1 were given"],
    );
}

#[test]
fn einsum_broadcasts_letters_of_size_1() {
    let a = jnp::array([1.0f32, 2.0]).reshape([2, 1]);
    let b = jnp::arange(12).astype(DType::F32).reshape([3, 4]);
    let c = jnp::arange(8).astype(DType::F32).reshape([2, 4]);
    let d = jnp::ones([1, 3]);
    assert_jax_all("einsum_broadcasts_size_1", &einsum_broadcasts::eager(&a, &b, &c, &d));
    assert_jax_all("einsum_broadcasts_size_1", &einsum_broadcasts::jitted(&a, &b, &c, &d));
}
