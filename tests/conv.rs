//! `lax::conv_general_dilated`: JAX's conv cases (tests/data/golden.json) eagerly and inside
//! `#[jit]`, numerical gradient checks in f64 over strides, paddings, dilations, groups and
//! layouts, vmap against a loop of per-example convolutions, and the errors bad arguments give.

mod common;

use common::{assert_close, assert_golden, input, panic_text};
use proptest::prelude::*;
use rjax::ad::api::{grad_of, jvp_of, vjp_of, Flat};
use rjax::lax::{ConvOptions, Padding};
use rjax::prelude::*;
use rjax::transform::batch::api::{vmap, BatchAxes, Vmap};

const NCH: (&str, &str, &str) = ("NCH", "OIH", "NCH");
const NCHW: (&str, &str, &str) = ("NCHW", "OIHW", "NCHW");

// ---- JAX's cases ----

fn conv1d(x: &Array, k: &Array, strides: usize, padding: &str) -> Array {
    lax::conv_general_dilated(x, k, [strides], padding, NCH)
}

#[jit]
fn conv1d_jit(x: &Array, k: &Array) -> (Array, Array) {
    let valid = lax::conv_general_dilated(x, k, [1], "VALID", ("NCH", "OIH", "NCH"));
    let same = lax::conv_general_dilated(x, k, [2], "SAME", ("NCH", "OIH", "NCH"));
    (valid, same)
}

#[grad(argnums = (0, 1))]
fn conv1d_grads(x: &Array, k: &Array) -> (Array, Array) {
    lax::conv_general_dilated(x, k, [1], "VALID", ("NCH", "OIH", "NCH")).sin().sum()
}

#[jit]
#[grad(argnums = (0, 1))]
fn conv1d_grads_jit(x: &Array, k: &Array) -> (Array, Array) {
    lax::conv_general_dilated(x, k, [1], "VALID", ("NCH", "OIH", "NCH")).sin().sum()
}

#[test]
fn conv1d_cases_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, k) = (input("conv1d_valid", "x"), input("conv1d_valid", "k"));
    assert_golden("conv1d_valid", 0, &conv1d(&x, &k, 1, "VALID"));
    assert_golden("conv1d_same_stride2", 0, &conv1d(&x, &k, 2, "SAME"));
    let (valid, same) = conv1d_jit(&x, &k);
    assert_golden("conv1d_valid", 0, &valid);
    assert_golden("conv1d_same_stride2", 0, &same);
    let (x, k) = (input("conv1d_grads", "x"), input("conv1d_grads", "k"));
    for (dx, dk) in [conv1d_grads(&x, &k), conv1d_grads_jit(&x, &k)] {
        assert_golden("conv1d_grads", 0, &dx);
        assert_golden("conv1d_grads", 1, &dk);
    }
}

#[jit]
fn conv2d_forward_jit(x: &Array, k: &Array) -> (Array, Array) {
    let valid = lax::conv_general_dilated(x, k, [1, 1], "VALID", ("NCHW", "OIHW", "NCHW"));
    let default =
        lax::conv_general_dilated(x, k, [1, 1], [(1, 0), (0, 1)], lax::ConvOptions::default());
    (valid, default)
}

#[jit]
fn conv2d_transposed_jit(x: &Array, k: &Array) -> Array {
    let options = lax::ConvOptions::default().lhs_dilation([2, 2]);
    lax::conv_general_dilated(x, k, [1, 1], [(1, 1), (2, 2)], options)
}

#[test]
fn conv2d_forward_cases_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "conv2d_valid";
    let (x, k) = (input(c, "x"), input(c, "k"));
    assert_golden(c, 0, &lax::conv_general_dilated(&x, &k, [1, 1], "VALID", NCHW));
    let c = "conv2d_default_dimension_numbers";
    let (x2, k2) = (input(c, "x"), input(c, "k"));
    let default = ConvOptions::default();
    assert_golden(c, 0, &lax::conv_general_dilated(&x2, &k2, [1, 1], [(1, 0), (0, 1)], default));
    let c = "conv2d_lhs_dilation_transposed";
    let (x3, k3) = (input(c, "x"), input(c, "k"));
    let dilated = ConvOptions::default().lhs_dilation([2, 2]).dimension_numbers(NCHW);
    assert_golden(c, 0, &lax::conv_general_dilated(&x3, &k3, [1, 1], [(1, 1), (2, 2)], dilated));
    assert_golden(
        c,
        0,
        &lax::conv_with_general_padding(&x3, &k3, [1, 1], [(1, 1), (2, 2)], [2, 2], [1, 1]),
    );

    let (valid, default) = conv2d_forward_jit(&x, &k);
    assert_golden("conv2d_valid", 0, &valid);
    assert_golden("conv2d_default_dimension_numbers", 0, &default);
    assert_golden("conv2d_lhs_dilation_transposed", 0, &conv2d_transposed_jit(&x3, &k3));
    let listing = conv2d_forward_jit::jaxpr(&x, &k).to_string();
    assert!(listing.contains("conv_general_dilated["), "{listing}");
}

#[grad(argnums = (0, 1))]
fn conv2d_grads(x: &Array, k: &Array) -> (Array, Array) {
    lax::conv_general_dilated(x, k, [1, 1], "SAME", ("NCHW", "OIHW", "NCHW")).powi(2).sum()
}

#[jit]
#[grad(argnums = (0, 1))]
fn conv2d_grads_jit(x: &Array, k: &Array) -> (Array, Array) {
    lax::conv_general_dilated(x, k, [1, 1], "SAME", ("NCHW", "OIHW", "NCHW")).powi(2).sum()
}

#[jit]
fn stride2_value_and_grads(x: &Array, k: &Array) -> (Array, (Array, Array)) {
    let out = lax::conv(x, k, [2, 2], "VALID");
    (out, stride2_grads(x, k))
}

#[traceable]
#[grad(argnums = (0, 1))]
fn stride2_grads(x: &Array, k: &Array) -> (Array, Array) {
    lax::conv(x, k, [2, 2], "VALID").tanh().sum()
}

#[test]
fn conv2d_gradient_cases_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "conv2d_grads";
    let (x, k) = (input(c, "x"), input(c, "k"));
    for (dx, dk) in [conv2d_grads(&x, &k), conv2d_grads_jit(&x, &k)] {
        assert_golden(c, 0, &dx);
        assert_golden(c, 1, &dk);
    }
    let c = "conv2d_stride2_grads_batch2";
    let (x, k) = (input(c, "x"), input(c, "k"));
    let (out, (dx, dk)) = stride2_value_and_grads(&x, &k);
    assert_golden(c, 0, &out);
    assert_golden(c, 1, &dx);
    assert_golden(c, 2, &dk);
    let (dx, dk) = stride2_grads(&x, &k);
    assert_golden(c, 1, &dx);
    assert_golden(c, 2, &dk);
}

// ---- numerical gradients (f64) ----

/// xorshift64*: deterministic data, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn array(&mut self, shape: &[usize]) -> Array {
        let n: usize = shape.iter().product();
        Array::from_shape_vec(shape, (0..n).map(|_| self.unit()).collect::<Vec<f64>>())
    }
}

/// A convolution configuration with its operand shapes.
struct Config {
    name: &'static str,
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    strides: Vec<usize>,
    padding: Padding,
    options: ConvOptions,
}

impl Config {
    fn apply(&self, x: &Array, k: &Array) -> Array {
        let padding = self.padding.clone();
        lax::conv_general_dilated(x, k, &self.strides, padding, self.options.clone())
    }
}

fn config(
    name: &'static str,
    lhs: &[usize],
    rhs: &[usize],
    strides: &[usize],
    padding: impl Into<Padding>,
    options: ConvOptions,
) -> Config {
    let (lhs, rhs, strides) = (lhs.to_vec(), rhs.to_vec(), strides.to_vec());
    Config { name, lhs, rhs, strides, padding: padding.into(), options }
}

fn configs() -> Vec<Config> {
    let default = ConvOptions::default;
    let nhwc = || ConvOptions::from(("NHWC", "HWIO", "NHWC"));
    vec![
        config("1-d stride 2 SAME", &[2, 3, 9], &[4, 3, 3], &[2], "SAME", default()),
        config("2-d explicit", &[1, 2, 6, 5], &[3, 2, 3, 2], &[2, 1], [(1, 2), (0, 1)], default()),
        config(
            "negative padding",
            &[2, 2, 7, 6],
            &[2, 2, 2, 3],
            &[1, 1],
            [(-1, 1), (2, -1)],
            default(),
        ),
        config("SAME_LOWER", &[1, 2, 6, 7], &[2, 2, 2, 4], &[2, 3], "SAME_LOWER", default()),
        config(
            "lhs dilation",
            &[1, 2, 4, 3],
            &[2, 2, 3, 2],
            &[1, 1],
            [(2, 1), (1, 1)],
            default().lhs_dilation([2, 3]),
        ),
        config(
            "rhs dilation",
            &[2, 2, 8, 7],
            &[3, 2, 2, 3],
            &[1, 2],
            "VALID",
            default().rhs_dilation([3, 2]),
        ),
        config(
            "all dilations and strides",
            &[1, 2, 5, 5],
            &[2, 2, 2, 2],
            &[2, 3],
            [(1, 0), (0, 2)],
            default().lhs_dilation([2, 1]).rhs_dilation([2, 2]),
        ),
        config(
            "feature groups",
            &[2, 4, 5, 5],
            &[6, 2, 3, 3],
            &[1, 1],
            "SAME",
            default().feature_group_count(2),
        ),
        config(
            "depthwise",
            &[1, 3, 6, 5],
            &[6, 1, 2, 2],
            &[2, 1],
            [(1, 1), (0, 0)],
            default().feature_group_count(3),
        ),
        config(
            "batch groups",
            &[4, 3, 5, 4],
            &[4, 3, 2, 2],
            &[1, 1],
            "VALID",
            default().batch_group_count(2),
        ),
        config("NHWC stride 2 SAME", &[2, 7, 6, 3], &[3, 3, 3, 4], &[2, 2], "SAME", nhwc()),
        config(
            "NHWC groups and dilation",
            &[1, 6, 7, 4],
            &[2, 3, 2, 6],
            &[1, 2],
            [(1, 1), (2, 0)],
            nhwc().feature_group_count(2).rhs_dilation([2, 1]),
        ),
        config(
            "channels-first kernel last",
            &[1, 5, 2, 4],
            &[3, 2, 2, 3],
            &[1, 1],
            "VALID",
            ConvOptions::from(("NHCW", "HWIO", "NCHW")),
        ),
        config("3-d", &[1, 2, 4, 3, 4], &[2, 2, 2, 2, 3], &[1, 1, 2], "SAME", default()),
        config("no spatial dimensions", &[3, 4], &[5, 4], &[], Padding::Valid, default()),
    ]
}

/// `(f(x + eps v) - f(x - eps v)) / (2 eps)`.
fn central_difference(f: &dyn Fn(&Array) -> Array, x: &Array, v: &Array) -> Array {
    let eps = 1e-5;
    (f(&(x + &(v * eps))) - f(&(x - &(v * eps)))) / (2.0 * eps)
}

fn inner(a: &Array, b: &Array) -> f64 {
    (a * b).sum().item::<f64>().unwrap()
}

/// jvp against central differences and vjp against jvp (`<vjp(u), v> = <u, jvp(v)>`).
fn check_linear(label: &str, f: &dyn Fn(&Array) -> Array, x: &Array, rng: &mut Rng) {
    let v = rng.array(x.shape());
    let (y, t) = jvp_of(f, x, &v);
    assert_close(&y, &f(x), 1e-12, 1e-12);
    let numerical = central_difference(f, x, &v);
    assert!(t.shape() == numerical.shape(), "{label}: tangent shape");
    assert_close(&t, &numerical, 1e-7, 1e-7);
    let u = rng.array(y.shape());
    let ct = vjp_of(f, x, &u);
    assert_eq!(ct.shape(), x.shape(), "{label}: cotangent shape");
    let (lhs, rhs) = (inner(&ct, &v), inner(&u, &t));
    assert!((lhs - rhs).abs() <= 1e-9 * (1.0 + lhs.abs()), "{label}: {lhs} vs {rhs}");
}

#[test]
fn gradients_match_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(7);
    for c in configs() {
        let (x, k) = (rng.array(&c.lhs), rng.array(&c.rhs));
        check_linear(&format!("{} wrt lhs", c.name), &|x| c.apply(x, &k), &x, &mut rng);
        check_linear(&format!("{} wrt rhs", c.name), &|k| c.apply(&x, k), &k, &mut rng);
    }
}

/// Second derivatives go through the transposes' own transposes (and their batch groups).
#[test]
fn second_derivatives_match_finite_differences() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(8);
    for c in configs() {
        let (x, k) = (rng.array(&c.lhs), rng.array(&c.rhs));
        let w = rng.array(c.apply(&x, &k).shape());
        let loss = |x: &Array, k: &Array| (c.apply(x, k).tanh() * &w).sum();
        let dx = |x: &Array| grad_of(|x| loss(x, &k), x);
        let dk = |k: &Array| grad_of(|k| loss(&x, k), k);
        for (label, g, at) in [("lhs", &dx as &dyn Fn(&Array) -> Array, &x), ("rhs", &dk, &k)] {
            let v = rng.array(at.shape());
            let (_, hv) = jvp_of(g, at, &v);
            let numerical = central_difference(g, at, &v);
            assert!(hv.shape() == numerical.shape(), "{} {label}", c.name);
            assert_close(&hv, &numerical, 1e-6, 1e-6);
            let u = rng.array(at.shape());
            let (a, b) = (inner(&vjp_of(g, at, &u), &v), inner(&u, &hv));
            assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{} {label}: {a} vs {b}", c.name);
        }
    }
}

/// The kernel gradient of a mixed-variable function: conv in both operands at once.
#[test]
fn gradients_in_both_operands_at_once() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(9);
    for c in configs() {
        let (x, k) = (rng.array(&c.lhs), rng.array(&c.rhs));
        let n = x.size();
        let packed = jnp::concatenate(&[x.ravel(), k.ravel()], 0);
        let f = |p: &Array| {
            let x = p.slice(s![0..n]).reshape(&c.lhs[..]);
            let k = p.slice(s![n..]).reshape(&c.rhs[..]);
            c.apply(&x, &k).sin()
        };
        let v = rng.array(packed.shape());
        let (_, t) = jvp_of(f, &packed, &v);
        assert_close(&t, &central_difference(&f, &packed, &v), 1e-6, 1e-6);
        let u = rng.array(t.shape());
        let (a, b) = (inner(&vjp_of(f, &packed, &u), &v), inner(&u, &t));
        assert!((a - b).abs() <= 1e-9 * (1.0 + a.abs()), "{}: {a} vs {b}", c.name);
    }
}

// ---- vmap ----

/// `vmap` of `f` over `xs` mapped at `in_axes` (`None`: unmapped), output batched at 0.
fn vmapped(
    f: &dyn Fn(&Array, &Array) -> Array,
    args: [&Array; 2],
    in_axes: [Option<isize>; 2],
) -> Array {
    let axes: Vec<BatchAxes> =
        in_axes.iter().map(|a| a.map_or(BatchAxes::None, BatchAxes::Axis)).collect();
    let spec = Vmap {
        names: &["lhs", "rhs"],
        in_axes: &axes,
        out_axes: &BatchAxes::Axis(0),
        axis_name: None,
    };
    let params: Vec<Flat> = args.iter().map(|a| Flat::of(*a)).collect();
    vmap(spec, params, |ps| {
        let mut ps = ps.into_iter();
        let x: Array = ps.next().unwrap().into_tree();
        let k: Array = ps.next().unwrap().into_tree();
        f(&x, &k)
    })
    .into_tree()
}

/// Per-example operands stacked at `axis`, and the per-example results stacked at 0.
fn check_vmap(c: &Config, size: usize, mapped: [bool; 2], axes: [usize; 2], seed: u64) {
    let mut rng = Rng::new(seed);
    let examples: Vec<[Array; 2]> = (0..size)
        .map(|_| [rng.array(&c.lhs).astype(DType::F32), rng.array(&c.rhs).astype(DType::F32)])
        .collect();
    let pick = |b: usize, i: usize| if mapped[i] { &examples[b][i] } else { &examples[0][i] };
    let want: Vec<Array> = (0..size).map(|b| c.apply(pick(b, 0), pick(b, 1))).collect();
    let want = jnp::stack(&want, 0);
    // Where each mapped operand carries its examples: any of its axes, or after the last.
    let axis = |i: usize| (axes[i] % (examples[0][i].ndim() + 1)) as isize;
    let stacked: Vec<Array> = (0..2)
        .map(|i| {
            let lanes: Vec<&Array> = (0..size).map(|b| pick(b, i)).collect();
            if mapped[i] {
                jnp::stack(&lanes, axis(i))
            } else {
                lanes[0].clone()
            }
        })
        .collect();
    let in_axes = [0, 1].map(|i| mapped[i].then(|| axis(i)));
    let got = vmapped(&|x, k| c.apply(x, k), [&stacked[0], &stacked[1]], in_axes);
    assert_close(&got, &want, 1e-4, 1e-4);
    // Per-example gradients batch the transposed convolutions.
    let grads = |x: &Array, k: &Array| {
        grad_of(|k| (c.apply(x, k).tanh()).sum(), k)
            + grad_of(|x| c.apply(x, k).sin().sum(), x).sum()
    };
    let want: Vec<Array> = (0..size).map(|b| grads(pick(b, 0), pick(b, 1))).collect();
    let got = vmapped(&grads, [&stacked[0], &stacked[1]], in_axes);
    assert_close(&got, &jnp::stack(&want, 0), 1e-4, 1e-4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn vmap_equals_a_loop_of_convolutions(
        size in 1usize..4,
        which in 0u8..3,
        axes in [0usize..6, 0usize..6],
        seed in 0u64..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        let mapped = [which != 1, which != 0];
        for c in configs() {
            let run = std::panic::catch_unwind(|| check_vmap(&c, size, mapped, axes, seed));
            if let Err(e) = run {
                let text = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("{} (mapped {mapped:?}, axes {axes:?}): {text}", c.name);
            }
        }
    }
}

#[test]
fn vmap_over_an_empty_batch_keeps_the_shape() {
    let c = &configs()[1];
    let x = jnp::zeros([0, c.lhs[0], c.lhs[1], c.lhs[2], c.lhs[3]]);
    let k = jnp::ones(&c.rhs[..]);
    let got = vmapped(&|x, k| c.apply(x, k), [&x, &k], [Some(0), None]);
    let one = c.apply(&jnp::zeros(&c.lhs[..]), &k);
    assert_eq!(got.shape(), &[&[0][..], one.shape()].concat()[..]);
}

// ---- composition through the attributes ----

#[traceable]
fn layer(x: &Array, k: &Array) -> Array {
    lax::conv_general_dilated(x, k, [1, 1], "SAME", ("NHWC", "HWIO", "NHWC")).tanh()
}

#[jit]
#[vmap(in_axes = (0, None))]
#[grad(argnums = 1)]
fn per_example_kernel_grads(x: &Array, k: &Array) -> Array {
    layer(x, k).sum()
}

#[jit]
#[value_and_grad(argnums = (0, 1))]
fn loss_and_grads(x: &Array, k: &Array) -> (Array, (Array, Array)) {
    layer(x, k).square().sum()
}

#[test]
fn composes_with_jit_vmap_and_grad() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(3);
    let x = rng.array(&[4, 1, 6, 5, 3]).astype(DType::F32);
    let k = rng.array(&[3, 3, 3, 2]).astype(DType::F32);
    let got = per_example_kernel_grads(&x, &k);
    assert_eq!(got.shape(), &[4, 3, 3, 3, 2]);
    for b in 0..4 {
        let want = grad_of(|k| layer(&x.slice(s![b]), k).sum(), &k);
        assert_close(&got.slice(s![b]), &want, 1e-5, 1e-5);
    }
    let xs = x.reshape([4, 6, 5, 3]);
    let (value, (dx, dk)) = loss_and_grads(&xs, &k);
    assert_close(&value, &layer(&xs, &k).square().sum(), 1e-5, 1e-5);
    assert_close(&dx, &grad_of(|x| layer(x, &k).square().sum(), &xs), 1e-5, 1e-5);
    assert_close(&dk, &grad_of(|k| layer(&xs, k).square().sum(), &k), 1e-5, 1e-5);
}

#[test]
fn other_float_dtypes_compute_in_their_own_type() {
    let _x64 = rjax::config::x64_scope(true);
    let mut rng = Rng::new(4);
    let (x, k) = (rng.array(&[2, 3, 5, 5]), rng.array(&[4, 3, 3, 3]));
    let want = lax::conv(&x, &k, [1, 1], "SAME");
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let got = lax::conv(&x.astype(dtype), &k.astype(dtype), [1, 1], "SAME");
        assert_eq!(got.dtype(), dtype);
        assert_close(&got.astype(DType::F64), &want, 0.05, 0.05);
    }
}

// ---- errors ----

#[track_caller]
fn assert_panics_with(f: impl FnOnce(), needles: &[&str]) {
    let text = panic_text(f);
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in {text:?}");
    }
}

#[test]
fn bad_arguments_name_the_operation_and_the_shapes() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::ones([1, 3, 5, 5]);
    let k = jnp::ones([4, 3, 3, 3]);
    let shapes = ["conv_general_dilated", "float32(1, 3, 5, 5)", "float32(4, 3, 3, 3)"];
    let with = |extra: &'static [&'static str]| [&shapes[..], extra].concat();
    let conv =
        |x: &Array, k: &Array, o: ConvOptions| lax::conv_general_dilated(x, k, [1, 1], "VALID", o);
    assert_panics_with(
        || drop(lax::conv(&x, &k, [1, 1], "SAMEE")),
        &["conv_general_dilated", "\"SAMEE\""],
    );
    assert_panics_with(|| drop(lax::conv(&x, &k, [1], "SAME")), &with(&["window_strides needs 2"]));
    assert_panics_with(|| drop(lax::conv(&x, &k, [1, 1], [(1, 1)])), &with(&["padding needs 2"]));
    let bad = || ConvOptions::from(("NCHW", "OIH", "NCHW"));
    assert_panics_with(|| drop(bad()), &["conv_general_dilated", "same spatial dimensions"]);
    let twice = || ConvOptions::from(("NNHW", "OIHW", "NCHW"));
    assert_panics_with(|| drop(twice()), &["conv_general_dilated", "exactly once"]);
    let rank3 = ConvOptions::from(NCH);
    assert_panics_with(|| drop(conv(&x, &k, rank3)), &with(&["rank 3"]));
    let k2 = jnp::ones([4, 2, 3, 3]);
    assert_panics_with(
        || drop(lax::conv(&x, &k2, [1, 1], "VALID")),
        &["3 features", "2 input features", "float32(4, 2, 3, 3)"],
    );
    let groups = ConvOptions::default().feature_group_count(2);
    assert_panics_with(
        || drop(conv(&x, &k, groups)),
        &with(&["feature_group_count 2 must divide"]),
    );
    let (x4, k3) = (jnp::ones([1, 4, 5, 5]), jnp::ones([3, 2, 3, 3]));
    let groups = ConvOptions::default().feature_group_count(2);
    assert_panics_with(
        || drop(conv(&x4, &k3, groups)),
        &["multiple of feature_group_count 2", "float32(3, 2, 3, 3)"],
    );
    let big = jnp::ones([4, 3, 7, 3]);
    assert_panics_with(
        || drop(lax::conv(&x, &big, [1, 1], "VALID")),
        &["spans 7 elements", "padded input", "float32(4, 3, 7, 3)"],
    );
    assert_panics_with(
        || drop(lax::conv(&x, &k, [1, 1], [(-3, -3), (0, 0)])),
        &with(&["crops more than"]),
    );
    assert_panics_with(
        || drop(lax::conv(&x, &k.astype(DType::F64), [1, 1], "SAME")),
        &["same dtype", "float64(4, 3, 3, 3)"],
    );
    assert_panics_with(
        || drop(lax::conv(&x, &jnp::ones([4, 3, 3]), [1], "SAME")),
        &["same rank", "float32(4, 3, 3)"],
    );
    let ints = jnp::ones([1, 3, 5, 5]).astype(DType::I32);
    assert_panics_with(
        || drop(lax::conv(&ints, &k.astype(DType::I32), [1, 1], "SAME")),
        &["floating-point", "int32(1, 3, 5, 5)"],
    );
    let dilated = ConvOptions::default().lhs_dilation([2, 2]);
    assert_panics_with(
        || drop(lax::conv_general_dilated(&x, &k, [1, 1], "SAME", dilated)),
        &with(&["input dilation"]),
    );
    let both = ConvOptions::default().feature_group_count(3).batch_group_count(2);
    assert_panics_with(|| drop(conv(&x, &k, both)), &with(&["at most one"]));
}

#[jit]
fn mismatched_in_jit(x: &Array, k: &Array) -> Array {
    lax::conv(x, k, [1, 1], "VALID")
}

#[test]
fn errors_in_traced_code_point_at_the_call() {
    let text =
        panic_text(|| drop(mismatched_in_jit(&jnp::ones([1, 3, 5, 5]), &jnp::ones([2, 4, 3, 3]))));
    assert!(text.contains("conv_general_dilated") && text.contains("in traced code at"), "{text}");
    assert!(text.contains("tests/conv.rs"), "{text}");
}
