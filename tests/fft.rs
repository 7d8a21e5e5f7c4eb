//! `jnp::fft` against JAX (`tests/data/fft.json`, made by `tests/data/gen/fft.py`): the 1-d,
//! 2-d and n-d transforms with cropping, padding, other axes and every norm, eagerly and under
//! `#[jit]`; `fftfreq`/`rfftfreq`; gradients of real-valued functions of transforms (JAX's
//! convention for complex values, with real and complex inputs) and `#[vmap]`; f64
//! finite-difference checks of the `fft` primitive's derivative rules (first and second
//! order); and the errors for bad axes, lengths, norms and dtypes.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, golden_field, panic_text, Weights};
use rjax::prelude::*;
use rjax::transform::ad::api::grad_of;
use rjax::Complex;
use serde_json::Value;

fn data() -> &'static Value {
    static DATA: OnceLock<Value> = OnceLock::new();
    DATA.get_or_init(|| serde_json::from_str(include_str!("data/fft.json")).unwrap())
}

fn field(case: &str, key: &str) -> Array {
    golden_field(data(), case, key)
}

/// Transforms sum many terms in another order than XLA's: a few ulps of the largest term.
#[track_caller]
fn check(what: &str, got: &Array, want: &Array) {
    let (rtol, atol) = match want.dtype() {
        DType::F32 | DType::C64 => (2e-5, 2e-5),
        _ => (1e-12, 1e-12),
    };
    assert_close_as(what, got, want, rtol, atol);
}

const NORMS: [&str; 3] = ["backward", "ortho", "forward"];

#[traceable]
fn norm_cases(x: &Array, z: &Array, z3: &Array, k: usize) -> Vec<Array> {
    let norm = Some(NORMS[k]);
    vec![
        jnp::fft::fft(z, None, -1, norm),
        jnp::fft::ifft(z, None, -1, norm),
        jnp::fft::rfft(x, None, -1, norm),
        jnp::fft::irfft(z, None, -1, norm),
        jnp::fft::fft2(z, None, &[-2, -1], norm),
        jnp::fft::ifftn(z3, None, None, norm),
    ]
}

#[jit]
fn norm_cases_jit(x: &Array, z: &Array, z3: &Array, k: usize) -> Vec<Array> {
    norm_cases(&(x * 1.0), &(z * 1.0), z3, k)
}

const NORM_KEYS: [&str; 6] = ["fft", "ifft", "rfft", "irfft", "fft2", "ifftn"];

#[traceable]
fn shaped_cases(x: &Array, xo: &Array, z: &Array, z3: &Array) -> Vec<Array> {
    vec![
        jnp::fft::fft(x, Some(5), -1, None),
        jnp::fft::fft(z, Some(12), 0, None),
        jnp::fft::ifft(z, Some(5), -1, None),
        jnp::fft::rfft(xo, None, -1, None),
        jnp::fft::rfft(xo, Some(6), 0, None),
        jnp::fft::rfft(x, Some(11), -1, None),
        jnp::fft::irfft(z, Some(7), -1, None),
        jnp::fft::irfft(z, Some(16), 0, None),
        jnp::fft::irfft(&jnp::fft::rfft(xo, None, -1, None), Some(7), -1, None),
        jnp::fft::fft2(z, Some(&[2, 6]), &[-2, -1], None),
        jnp::fft::ifft2(z3, None, &[0, 2], None),
        jnp::fft::fftn(z3, None, None, None),
        jnp::fft::fftn(z3, Some(&[3, 5]), Some(&[2, 0]), None),
        jnp::fft::fftn(x, None, None, None),
        jnp::fft::ifftn(z3, Some(&[4, 2]), None, None),
    ]
}

#[jit]
fn shaped_cases_jit(x: &Array, xo: &Array, z: &Array, z3: &Array) -> Vec<Array> {
    shaped_cases(x, xo, z, z3)
}

const SHAPED_KEYS: [&str; 15] = [
    "fft_real_n5",
    "fft_n12_axis0",
    "ifft_n5",
    "rfft_odd",
    "rfft_n6_axis0",
    "rfft_n11",
    "irfft_n7",
    "irfft_n16_axis0",
    "roundtrip_odd",
    "fft2_s",
    "ifft2_axes",
    "fftn_all",
    "fftn_s_axes",
    "fftn_real",
    "ifftn_s",
];

#[test]
fn transforms_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let (x, xo, z, z3) = (field(dt, "x"), field(dt, "xo"), field(dt, "z"), field(dt, "z3"));
        for (k, norm) in NORMS.into_iter().enumerate() {
            let eager = norm_cases(&x, &z, &z3, k);
            let jitted = norm_cases_jit(&x, &z, &z3, k);
            for (i, key) in NORM_KEYS.into_iter().enumerate() {
                let want = field(dt, &format!("{key}_{norm}"));
                check(&format!("{dt} {key} {norm}"), &eager[i], &want);
                check(&format!("{dt} {key} {norm} jit"), &jitted[i], &want);
            }
        }
        let eager = shaped_cases(&x, &xo, &z, &z3);
        let jitted = shaped_cases_jit(&x, &xo, &z, &z3);
        for (i, key) in SHAPED_KEYS.into_iter().enumerate() {
            check(&format!("{dt} {key}"), &eager[i], &field(dt, key));
            check(&format!("{dt} {key} jit"), &jitted[i], &field(dt, key));
        }
    }
}

#[test]
fn sample_frequencies_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for (dt, dtype) in [("float32", DType::F32), ("float64", DType::F64)] {
        check("fftfreq 8", &jnp::fft::fftfreq(8, 1.0, dtype), &field(dt, "fftfreq_8"));
        check("fftfreq 7", &jnp::fft::fftfreq(7, 0.1, dtype), &field(dt, "fftfreq_7"));
        check("rfftfreq 8", &jnp::fft::rfftfreq(8, 1.0, dtype), &field(dt, "rfftfreq_8"));
        check("rfftfreq 7", &jnp::fft::rfftfreq(7, 0.5, dtype), &field(dt, "rfftfreq_7"));
    }
}

type Real = fn(&Array, &Array) -> Array;

/// Real-valued functions of a real input `x` (`w` is the golden weight array).
fn real_fns() -> Vec<(&'static str, Real)> {
    vec![
        ("abs_rfft_sq", |x, _| jnp::square(&jnp::abs(&jnp::fft::rfft(x, None, -1, None))).sum()),
        ("real_fft_w", |x, w| (jnp::real(&jnp::fft::fft(x, None, -1, None)) * w).sum()),
        ("irfft_of_rfft", |x, w| {
            let y = jnp::fft::rfft(x, None, -1, None) * Complex::new(1.0, 0.5);
            (jnp::fft::irfft(&y, Some(8), -1, None) * w).sum()
        }),
        ("imag_ifft_ortho_n12", |x, _| {
            jnp::square(&jnp::imag(&jnp::fft::ifft(x, Some(12), -1, Some("ortho")))).sum()
        }),
        ("rfft_odd_n5", |x, _| {
            let y = jnp::fft::rfft(x, Some(5), -1, None);
            jnp::real(&(&y * jnp::conj(&(&y + Complex::new(0.0, 1.0))))).sum()
        }),
        ("fft2_abs", |x, _| jnp::abs(&jnp::fft::fft2(x, None, &[-2, -1], Some("forward"))).sum()),
        ("fftn_axis0", |x, w| (jnp::real(&jnp::fft::fftn(x, None, Some(&[0]), None)) * w).sum()),
        ("irfft_n7_axis0", |x, _| jnp::square(&jnp::fft::irfft(x, Some(7), 0, None)).sum()),
    ]
}

#[test]
fn gradients_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let x = field("grad", &format!("x_{dt}"));
        // The generator's weights are float64 (so are the values they give float32 inputs).
        let w = field("grad", "w");
        for (name, f) in real_fns() {
            let key = |k: &str| format!("{name}_{dt}_{k}");
            // A float32 transform's value in float64 carries float32 rounding.
            let (value, want) = (f(&x, &w), field("grad", &key("value")));
            let narrow = |a: &Array| a.astype(x.dtype());
            check(&key("value"), &narrow(&value), &narrow(&want));
            check(&key("grad"), &grad_of(|x| f(x, &w), &x), &field("grad", &key("grad")));
        }
    }
}

type OfComplex = fn(&Array, &Array) -> Array;

#[test]
fn gradients_with_respect_to_complex_inputs_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let z = field("grad", "z");
    let w = field("grad", "w");
    let fns: Vec<(&str, OfComplex)> = vec![
        ("abs_ifft", |z, _| jnp::abs(&jnp::fft::ifft(z, None, -1, None)).sum()),
        ("irfft_w", |z, w| (jnp::fft::irfft(z, Some(8), -1, None) * w).sum()),
        ("irfft_odd_sq", |z, _| jnp::square(&jnp::fft::irfft(z, Some(9), -1, None)).sum()),
        ("real_fft2", |z, w| (jnp::real(&jnp::fft::fft2(z, None, &[-2, -1], None)) * w).sum()),
    ];
    for (name, f) in fns {
        let g = grad_of(|z| f(z, &w), &z);
        check(&format!("{name} grad"), &g, &field("grad", &format!("{name}_grad")));
    }
}

#[jit]
#[grad]
fn abs_rfft_sq_grad_jit(x: &Array) -> Array {
    jnp::square(&jnp::abs(&jnp::fft::rfft(x, None, -1, None))).sum()
}

#[vmap(in_axes = 1)]
fn vmap_abs_fft(r: &Array) -> Array {
    jnp::abs(&jnp::fft::fft(r, None, -1, None))
}

#[vmap]
fn vmap_irfft_rfft(r: &Array) -> Array {
    jnp::fft::irfft(&(jnp::fft::rfft(r, None, -1, None) * 2.0), Some(8), -1, None)
}

#[jit]
#[vmap]
#[grad]
fn vmap_grad_abs_rfft_sq(r: &Array) -> Array {
    jnp::square(&jnp::abs(&jnp::fft::rfft(r, None, -1, None))).sum()
}

#[test]
fn jit_grad_and_vmap_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let x = field("grad", "x_float64");
    check("#[jit] #[grad]", &abs_rfft_sq_grad_jit(&x), &field("grad", "abs_rfft_sq_float64_grad"));
    check("#[vmap] abs fft", &vmap_abs_fft(&x), &field("grad", "vmap_abs_fft_axis1"));
    check("#[vmap] irfft rfft", &vmap_irfft_rfft(&x), &field("grad", "vmap_irfft_rfft"));
    check("#[vmap] #[grad]", &vmap_grad_abs_rfft_sq(&x), &field("grad", "vmap_grad_abs_rfft_sq"));
}

/// A real-valued wrapper: `v` holds the real parts, then the imaginary parts.
fn split(v: &Array, shape: &[usize]) -> Array {
    let n = v.shape()[0] / 2;
    let re = v.slice(s![..n]).reshape(shape);
    let im = v.slice(s![n..]).reshape(shape);
    jnp::complex(&re, &im)
}

/// A named real-valued function of an f64 array, for the finite-difference checks.
type Case = (&'static str, Box<dyn Fn(&Array) -> Array>);

#[test]
fn derivative_rules_agree_with_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let v =
        Array::from_shape_vec([24], (0..24).map(|i| ((i * 7 % 11) as f64) / 5.0 - 1.0).collect());
    // Shifted so that no transformed value is 0, where `abs` has a kink.
    let x = v.slice(s![..12]).reshape([2, 6]) + 0.05;
    let real_cases: Vec<Case> = vec![
        (
            "rfft",
            Box::new(|x| {
                jnp::real(&jnp::fft::rfft(x, None, -1, None))
                    + jnp::imag(&jnp::fft::rfft(x, None, -1, None))
            }),
        ),
        ("rfft odd", Box::new(|x| jnp::imag(&jnp::fft::rfft(x, Some(5), -1, None)))),
        (
            "rfft 2-d",
            Box::new(|x| {
                jnp::abs(&jnp::fft::fftn(
                    &jnp::fft::rfft(x, None, -1, None),
                    None,
                    Some(&[0]),
                    None,
                ))
            }),
        ),
        (
            "fft of real",
            Box::new(|x| jnp::square(&jnp::abs(&jnp::fft::fft(x, None, 0, Some("ortho"))))),
        ),
    ];
    for (name, f) in &real_cases {
        check_grads(name, f.as_ref(), &x, 1e-6);
    }
    let complex_cases: Vec<Case> = vec![
        ("fft", Box::new(|v| jnp::real(&jnp::fft::fft(&split(v, &[2, 6]), None, -1, None)))),
        ("ifft", Box::new(|v| jnp::imag(&jnp::fft::ifft(&split(v, &[2, 6]), None, -1, None)))),
        (
            "fft2",
            Box::new(|v| jnp::abs(&jnp::fft::fft2(&split(v, &[2, 6]), None, &[-2, -1], None))),
        ),
        ("irfft even", Box::new(|v| jnp::fft::irfft(&split(v, &[2, 6]), Some(10), -1, None))),
        ("irfft odd", Box::new(|v| jnp::fft::irfft(&split(v, &[2, 6]), Some(11), -1, None))),
        (
            "irfft 2-d",
            Box::new(|v| {
                jnp::fft::irfft(&jnp::fft::ifft(&split(v, &[2, 6]), None, 0, None), None, -1, None)
            }),
        ),
    ];
    for (name, f) in &complex_cases {
        check_grads(name, f.as_ref(), &v, 1e-6);
    }
}

#[test]
fn bad_input_is_refused_with_the_operation_and_shapes() {
    let x = jnp::array([[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let z = x.astype(DType::C64);
    let msg = panic_text(|| drop(jnp::fft::fft(&x, None, 2, None)));
    assert!(msg.contains("fft") && msg.contains("axis 2") && msg.contains("rank 2"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::rfft(&x, None, -3, None)));
    assert!(msg.contains("rfft") && msg.contains("axis -3"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::irfft(&z, Some(0), -1, None)));
    assert!(msg.contains("irfft") && msg.contains("(0)"), "{msg}");
    let one = jnp::array([Complex::new(1.0f32, 0.0)]);
    let msg = panic_text(|| drop(jnp::fft::irfft(&one, None, -1, None)));
    assert!(msg.contains("irfft") && msg.contains("(0)"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::rfft(&z, None, -1, None)));
    assert!(msg.contains("rfft") && msg.contains("complex64"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::fft(&x, None, -1, Some("unitary"))));
    assert!(msg.contains("fft") && msg.contains("unitary"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::fftn(&x, Some(&[2, 3]), Some(&[0]), None)));
    assert!(msg.contains("fftn") && msg.contains("same length"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::fft2(&x, None, &[1, 1], None)));
    assert!(msg.contains("fft2") && msg.contains("repeated"), "{msg}");
    let msg = panic_text(|| drop(jnp::fft::fftfreq(4, 1.0, DType::I32)));
    assert!(msg.contains("fftfreq") && msg.contains("int32"), "{msg}");
    // The primitive itself names the transform and the shapes.
    use rjax::primitives::{bind1, Fft, FftType};
    let prim = Fft { fft_type: FftType::Fft, fft_lengths: vec![4] };
    let msg = panic_text(|| drop(bind1(&prim, &[&z])));
    assert!(msg.contains("fft") && msg.contains("complex64(2, 3)") && msg.contains("[4]"), "{msg}");
    let prim = Fft { fft_type: FftType::Irfft, fft_lengths: vec![0] };
    let msg = panic_text(|| drop(bind1(&prim, &[&z])));
    assert!(msg.contains("fft") && msg.contains("(0)"), "{msg}");
}

/// `vmap` goldens of every transform and of gradients through them
/// (`tests/data/linalg_fft_vmap.json`, made by `tests/data/gen/linalg_fft_vmap.py`), the
/// batch on axis 1.
fn mapped(dtype: &str, key: &str) -> Array {
    static DATA: OnceLock<Value> = OnceLock::new();
    let data = DATA
        .get_or_init(|| serde_json::from_str(include_str!("data/linalg_fft_vmap.json")).unwrap());
    golden_field(&data["cases"], &format!("fft_{dtype}"), key)
}

#[vmap(in_axes = 1)]
fn vmap_fft_n6(z: &Array) -> Array {
    jnp::fft::fft(z, Some(6), -1, None)
}

#[vmap(in_axes = 1, out_axes = 2)]
fn vmap_ifft_axis0_ortho(z: &Array) -> Array {
    jnp::fft::ifft(z, None, 0, Some("ortho"))
}

#[vmap(in_axes = 1)]
fn vmap_rfft(x: &Array) -> Array {
    jnp::fft::rfft(x, None, -1, None)
}

#[vmap(in_axes = 1)]
fn vmap_irfft_n9(z: &Array) -> Array {
    jnp::fft::irfft(z, Some(9), -1, None)
}

#[vmap(in_axes = 1)]
fn vmap_fft2(z: &Array) -> Array {
    jnp::fft::fft2(z, None, &[-2, -1], None)
}

#[vmap(in_axes = 1)]
fn vmap_ifft2_axes02(z: &Array) -> Array {
    jnp::fft::ifft2(z, None, &[0, 2], None)
}

#[vmap(in_axes = 1)]
fn vmap_fftn_s45(z: &Array) -> Array {
    jnp::fft::fftn(z, Some(&[4, 5]), None, None)
}

#[vmap(in_axes = 1)]
fn vmap_ifftn(z: &Array) -> Array {
    jnp::fft::ifftn(z, None, None, None)
}

/// `x * W` summed, `W` the generator's fixed weights.
#[traceable]
fn wsum(x: &Array) -> Array {
    (x * &Weights::like(x)).sum()
}

#[vmap(in_axes = 1)]
fn vmap_grads(x: &Array) -> (Array, Array, Array, Array) {
    let i = Complex::new(0.0, 1.0);
    let power = rjax::transform::ad::api::grad_of(
        |x| jnp::sum(&jnp::square(&jnp::abs(&jnp::fft::rfft(x, None, -1, None)))),
        x,
    );
    let round_trip = rjax::transform::ad::api::grad_of(
        |x| wsum(&jnp::fft::irfft(&(jnp::fft::rfft(x, None, -1, None) * i), Some(8), -1, None)),
        x,
    );
    let complex_dtype = x.dtype().to_complex();
    let fft2 = rjax::transform::ad::api::grad_of(
        |x| jnp::sum(&jnp::abs(&jnp::fft::fft2(&x.astype(complex_dtype), None, &[-2, -1], None))),
        x,
    );
    let ifftn = rjax::transform::ad::api::grad_of(
        |x| wsum(&jnp::real(&jnp::fft::ifftn(&(x * Complex::new(1.0, 2.0)), None, None, None))),
        x,
    );
    (power, round_trip, fft2, ifftn)
}

#[test]
fn vmap_of_every_transform_and_of_gradients_matches_jax() {
    let _x64 = rjax::config::x64_scope(true);
    for dt in ["float32", "float64"] {
        let (x, z, z3) = (mapped(dt, "x"), mapped(dt, "z"), mapped(dt, "z3"));
        check("vmap fft", &vmap_fft_n6(&z), &mapped(dt, "fft"));
        check("vmap ifft", &vmap_ifft_axis0_ortho(&z), &mapped(dt, "ifft"));
        check("vmap rfft", &vmap_rfft(&x), &mapped(dt, "rfft"));
        check("vmap irfft", &vmap_irfft_n9(&z), &mapped(dt, "irfft"));
        check("vmap fft2", &vmap_fft2(&z3), &mapped(dt, "fft2"));
        check("vmap ifft2", &vmap_ifft2_axes02(&z3), &mapped(dt, "ifft2"));
        check("vmap fftn", &vmap_fftn_s45(&z3), &mapped(dt, "fftn"));
        check("vmap ifftn", &vmap_ifftn(&z3), &mapped(dt, "ifftn"));
        let (power, round_trip, fft2, ifftn) = vmap_grads(&x);
        check("vmap grad rfft", &power, &mapped(dt, "grad_rfft"));
        check("vmap grad irfft", &round_trip, &mapped(dt, "grad_irfft"));
        check("vmap grad fft2", &fft2, &mapped(dt, "grad_fft2"));
        check("vmap grad ifftn", &ifftn, &mapped(dt, "grad_ifftn"));
    }
}
