//! Fusion: programs planned with fused groups give what the same programs give one equation
//! at a time — bit for bit for elementwise work, within a stated tolerance where a fused
//! reduction adds its tiles' partial results in another order — on hand-written programs and
//! on randomly generated ones over every dtype family; and the same bits on every run and
//! thread count.

use proptest::prelude::*;
use rjax::exec::{trace_function, Plan};
use rjax::prelude::*;
use rjax::{jnp, DType};

/// Traces `f` on `args` and runs the simplified program fused and unfused.
fn both(args: &[Array], f: impl FnOnce(&[Array]) -> Vec<Array>) -> (Vec<Array>, Vec<Array>, Plan) {
    let traced = trace_function("fusion test", args, |leaves, _| f(&leaves));
    let fused = Plan::new(traced.simplified.clone());
    let unfused = Plan::unfused(traced.simplified);
    (fused.run(args.to_vec()), unfused.run(args.to_vec()), fused)
}

/// Whether two results agree: exactly, or (for float results of fused reductions) within
/// `rtol` relative to the largest magnitude of the reference.
fn agree(a: &Array, b: &Array, rtol: f64) -> Result<(), String> {
    if a.shape() != b.shape() || a.dtype() != b.dtype() {
        return Err(format!("{:?} {} vs {:?} {}", a.shape(), a.dtype(), b.shape(), b.dtype()));
    }
    let x = a.astype(DType::F64).to_vec::<f64>().unwrap();
    let y = b.astype(DType::F64).to_vec::<f64>().unwrap();
    let scale = y.iter().filter(|v| v.is_finite()).fold(1.0f64, |m, v| m.max(v.abs()));
    for (i, (p, q)) in x.iter().zip(&y).enumerate() {
        let same = p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan());
        let close = (p - q).abs() <= rtol * scale;
        if !same && !close {
            return Err(format!("element {i}: fused {p} vs unfused {q}"));
        }
    }
    Ok(())
}

/// `f`'s result on a pool of `threads` threads.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    // The pool's thread computes in this thread's dtype mode.
    let x64 = rjax::config::x64_enabled();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(move || rjax::config::with_x64(x64, f))
}

/// Each result's elements as the bits of `f64`s (exact for every float dtype).
fn result_bits(results: &[Array]) -> Vec<Vec<u64>> {
    let values = |a: &Array| a.astype(DType::F64).to_vec::<f64>().unwrap();
    results.iter().map(|a| values(a).iter().map(|v| v.to_bits()).collect()).collect()
}

fn random(shape: &[usize], seed: u32) -> Array {
    rjax::random::normal(&rjax::random::key(i64::from(seed)), shape)
}

#[test]
fn the_seed_example_becomes_one_group_with_the_same_bits() {
    let x = random(&[300, 200], 0);
    let (fused, unfused, plan) = both(&[x], |a| vec![&a[0] * &a[0] + &a[0] * 2.0]);
    assert_eq!(plan.fused_groups(), vec![3]);
    assert_eq!(fused[0].to_vec::<f32>().unwrap(), unfused[0].to_vec::<f32>().unwrap());
}

#[test]
fn broadcasts_fold_into_the_group_that_reads_them() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, b) = (random(&[130, 257], 1), random(&[257], 2));
    let (fused, unfused, plan) = both(&[x, b], |a| {
        let bias = jnp::broadcast_to(&a[1], [130, 257]);
        vec![jnp::maximum(&(&a[0] + &bias), 0.0).tanh()]
    });
    assert_eq!(plan.fused_groups().len(), 1, "{:?}", plan.fused_groups());
    agree(&fused[0], &unfused[0], 0.0).unwrap();
}

#[test]
fn every_way_of_reading_a_broadcast_gives_the_unfused_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // Tiles read broadcast inputs in three ways: a repeating pattern gathered once per tile
    // (row vectors; a block repeated over a leading axis), in place by sub-tiles that stop at
    // row ends (column vectors, when rows are long), or gathered per sub-tile (short rows).
    // Each shape below takes another of them, with sub-tiles and tiles that cut rows anywhere.
    for (rows, cols, seed) in
        [(67, 300, 20), (5, 3000, 21), (37, 1, 22), (300, 37, 23), (1, 9000, 24)]
    {
        let x = random(&[rows, cols], seed);
        let (row, col) = (random(&[cols], seed + 100), random(&[rows, 1], seed + 200));
        let (fused, unfused, plan) = both(&[x, row, col], |a| {
            let r = jnp::broadcast_to(&a[1], [rows, cols]);
            let c = jnp::broadcast_to(&a[2], [rows, cols]);
            let y = (&a[0] * &r).tanh() + &c;
            vec![&y * &c - &r, (&c * 2.0).exp() + &r * 3.0]
        });
        assert_eq!(plan.fused_groups().len(), 1, "{rows}x{cols}: {:?}", plan.fused_groups());
        for (f, u) in fused.iter().zip(&unfused) {
            agree(f, u, 0.0).unwrap_or_else(|e| panic!("{rows}x{cols}: {e}"));
        }
    }
    // A [3, 40] block repeated over the leading axis: a period of 120 along the flat order.
    let (x, block) = (random(&[50, 3, 40], 25), random(&[3, 40], 26));
    let (fused, unfused, _) =
        both(&[x, block], |a| vec![(&a[0] - &jnp::broadcast_to(&a[1], [50, 3, 40])).sin()]);
    agree(&fused[0], &unfused[0], 0.0).unwrap();
}

#[test]
fn streamed_groups_give_the_unfused_bits_when_run_in_chunks() {
    let _x64 = rjax::config::x64_scope(true);
    // Groups over more than 4 MiB stream their outputs to memory a chunk at a time. These
    // lengths end inside a chunk and inside a tile; the chain reuses tile buffers, one output
    // is an op's value read again later and one is an input.
    for (dtype, side) in [(DType::F32, 1031), (DType::F64, 733)] {
        let x = random(&[side, side], 30).astype(dtype);
        let s = random(&[], 31).astype(dtype);
        let (fused, unfused, plan) = both(&[x, s], |a| {
            let t = a[0].tanh();
            let u = &t * &a[1] + 1.0;
            let v = (&u * &u - &t).exp();
            vec![&v / &(jnp::abs(&u) + 1.0), u, jnp::broadcast_to(&a[1], [side, side])]
        });
        assert_eq!(plan.fused_groups().len(), 1, "{dtype}: {:?}", plan.fused_groups());
        for (f, u) in fused.iter().zip(&unfused) {
            agree(f, u, 0.0).unwrap_or_else(|e| panic!("{dtype}: {e}"));
        }
    }
}

/// Whether large groups of plain arithmetic compile to machine code here (x86-64 Linux with
/// AVX-512F; see `rjax::exec::cpu::native`).
fn compiles_loops() -> bool {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        std::env::var("RJAX_NATIVE_LOOPS").map_or(true, |v| v != "0")
            && std::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    false
}

/// Two arrays of `len` values drawn from a normal distribution, in which every pair of the
/// edge cases of `max`, `min`, `sqrt` and division (NaN, infinities, signed zeros, a
/// subnormal) meets again and again along the arrays.
fn edge_case_pairs(len: usize, dtype: DType) -> (Array, Array) {
    let edges = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, -1.0, 1e-40];
    let mut x = random(&[len], 40).to_vec::<f32>().unwrap();
    let mut y = random(&[len], 41).to_vec::<f32>().unwrap();
    for i in (0..len).filter(|i| i % 997 < 2 * 49 && i % 2 == 0) {
        let pair = i % 997 / 2;
        (x[i], y[i]) = (edges[pair % 7], edges[pair / 7]);
    }
    let array = |v| Array::from_shape_vec([len], v).astype(dtype);
    (array(x), array(y))
}

#[test]
fn arithmetic_groups_compiled_to_machine_code_give_the_unfused_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // Lengths that end inside a loop trip; f64 streams from half as many elements as f32.
    // Every op's value leaves the group, so that each op's edge cases show.
    for (dtype, len) in [(DType::F32, (1 << 20) + 13), (DType::F64, (1 << 19) + 77)] {
        let (x, y) = edge_case_pairs(len, dtype);
        let s = random(&[], 42).astype(dtype);
        let (fused, unfused, plan) = both(&[x, y, s], |a| {
            let (x, y, s) = (&a[0], &a[1], &a[2]);
            let (high, low) = (jnp::maximum(x, y), jnp::minimum(x, y));
            let root = jnp::abs(x).sqrt() / (y - s);
            let spread = -jnp::reciprocal(&jnp::square(&(&high - &low)));
            let mixed = &spread * &root + &low * s;
            vec![high, low, root, spread, mixed, jnp::broadcast_to(s, [len])]
        });
        assert_eq!(plan.fused_groups().len(), 1, "{dtype}: {:?}", plan.fused_groups());
        assert_eq!(plan.compiled_groups(), vec![compiles_loops()], "{dtype}");
        for (o, (f, u)) in fused.iter().zip(&unfused).enumerate() {
            // Bit for bit: signed zeros and NaN payloads too.
            let bits = |a: &Array| a.astype(DType::F64).to_vec::<f64>().unwrap();
            let (f, u) = (bits(f), bits(u));
            if let Some(i) = f.iter().zip(&u).position(|(p, q)| p.to_bits() != q.to_bits()) {
                panic!("{dtype} output {o} element {i}: fused {:?} vs unfused {:?}", f[i], u[i]);
            }
        }
    }
}

/// `len` f32 values: normals spread over [-100, 100], and every few hundred elements one of
/// the edge cases of `exp`, `log`, `tanh` and `logistic` (NaNs with payloads and signs, a
/// signalling one, infinities, signed zeros, subnormals, the thresholds where each function's
/// clamps and selects switch, and the values either side of them).
fn transcendental_edge_cases(len: usize) -> Array {
    let nan = |bits: u32| f32::from_bits(bits);
    let edges = [
        f32::NAN,
        nan(0x7fc0_1234),
        nan(0xffc0_0001),
        nan(0x7f80_0001),
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e-40,
        -1e-40,
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        -87.8,
        -87.9,
        -87.3,
        88.8,
        88.72,
        88.73,
        0.0004,
        0.000_399_99,
        -0.0004,
        20.0,
        19.999_998,
        -20.0,
        7.998_811_7,
        -7.998_811_7,
        std::f32::consts::FRAC_1_SQRT_2,
        f32::from_bits(std::f32::consts::FRAC_1_SQRT_2.to_bits() - 1),
        1.0,
        -1.0,
        0.5,
        2.0,
    ];
    let mut x = random(&[len], 60).to_vec::<f32>().unwrap();
    for (i, v) in x.iter_mut().enumerate() {
        *v = if i % 331 < edges.len() { edges[i % 331] } else { *v * 30.0 };
    }
    Array::from_shape_vec([len], x)
}

#[test]
fn transcendental_groups_compiled_to_machine_code_give_the_unfused_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // f32 `exp`, `log`, `tanh` and `logistic` compile (XLA's approximations, op for op), and
    // `rsqrt` in both widths; every op's value leaves the group. The f64 functions call the
    // C library, so an f64 group with `exp` stays interpreted.
    let len = (1 << 20) + 13;
    let x = transcendental_edge_cases(len);
    let y = random(&[len], 61);
    let (fused, unfused, plan) = both(&[x, y], |a| {
        let (x, y) = (&a[0], &a[1]);
        let (e, l, t, s) = (jnp::exp(x), jnp::log(x), jnp::tanh(x), jnp::sigmoid(x));
        let r = jnp::rsqrt(x);
        // Several functions live at once, and one function of another's value.
        let mixed = &t * &jnp::exp(&-y) + jnp::log(&jnp::abs(x)) * jnp::sigmoid(&(&e - y));
        vec![e, l, t, s, r, mixed]
    });
    // (Functions of `x` alone join the group that reads `x` too.)
    assert_eq!(plan.fused_groups(), vec![14]);
    assert!(plan.compiled_groups().iter().all(|&c| c == compiles_loops()));
    for (o, (f, u)) in fused.iter().zip(&unfused).enumerate() {
        let (f, u) = (f.to_vec::<f32>().unwrap(), u.to_vec::<f32>().unwrap());
        if let Some(i) = f.iter().zip(&u).position(|(p, q)| p.to_bits() != q.to_bits()) {
            panic!("output {o} element {i}: fused {:?} vs unfused {:?}", f[i], u[i]);
        }
    }
    for (f, compiled) in [(jnp::exp as fn(&Array) -> Array, false), (jnp::rsqrt, true)] {
        let x = random(&[1 << 19], 62).astype(DType::F64);
        let (fused, unfused, plan) = both(&[x], |a| vec![f(&(&a[0] * 2.0)) + 1.0]);
        assert_eq!(plan.compiled_groups(), vec![compiled && compiles_loops()]);
        agree(&fused[0], &unfused[0], 0.0).unwrap();
    }
}

#[test]
fn ops_reading_the_same_input_share_an_open_group_and_a_closed_group_takes_none() {
    let _x64 = rjax::config::x64_scope(true);
    let x = random(&[300, 200], 80);
    let y = random(&[300, 200], 81);
    // `exp(x)` and `log(x)` read `x` in one pass; `y * 2.0` shares no input with them.
    let (fused, unfused, plan) =
        both(&[x.clone(), y], |a| vec![jnp::exp(&a[0]), jnp::log(&a[0]), &a[1] * 2.0]);
    assert_eq!(plan.fused_groups(), vec![2]);
    assert_eq!(result_bits(&fused), result_bits(&unfused));
    // A comparison (bool, with no slice form) joins no float group, nor a float op a group
    // holding one: `x * 3.0` joins `exp(x)`, `x > 0` runs on its own.
    let (fused, unfused, plan) = both(std::slice::from_ref(&x), |a| {
        vec![jnp::exp(&a[0]), jnp::greater(&a[0], 0.0), &a[0] * 3.0]
    });
    assert_eq!(plan.fused_groups(), vec![2]);
    assert_eq!(result_bits(&fused), result_bits(&unfused));
    // A reduction closes `x * 2`'s group; `x + 1` reads `x` after that and starts its own.
    let (fused, unfused, plan) = both(&[x], |a| {
        let doubled = &a[0] * 2.0;
        let total = jnp::sum(&doubled);
        vec![total, &a[0] + 1.0, doubled]
    });
    assert_eq!(plan.fused_groups(), vec![2]);
    agree(&fused[0], &unfused[0], 1e-6).unwrap();
    assert_eq!(result_bits(&fused[1..]), result_bits(&unfused[1..]));
}

#[test]
fn a_large_float_op_on_its_own_is_a_group_of_one_with_the_same_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // Like a softmax's last division, a subtraction of the row sums, which a reduction ended
    // another group with: the subtraction is alone. Over 4 MiB of floats it runs as a group of
    // one (compiled, where loops compile, reading the sums as per-row scalars); smaller, and
    // for integers, it runs on its own.
    for (rows, dtype, grouped) in [
        (1024, DType::F32, true),
        (512, DType::F64, true),
        (512, DType::F32, false),
        (1024, DType::I32, false),
    ] {
        let x = (random(&[rows, 1024], 70) * 4.0).astype(dtype);
        let (fused, unfused, plan) = both(&[x], |a| {
            let e = &a[0] + &a[0];
            vec![&e - &jnp::sum_axes(&e, 1, true)]
        });
        let want = if grouped { vec![2, 1] } else { vec![2] };
        assert_eq!(plan.fused_groups(), want, "{rows} rows of {dtype}");
        if grouped && compiles_loops() {
            assert_eq!(plan.compiled_groups(), vec![true, true]);
        }
        assert_eq!(result_bits(&fused), result_bits(&unfused), "{rows} rows of {dtype}");
    }
}

#[test]
fn reductions_of_all_elements_fold_in_compiled_loops_within_tolerance_and_deterministically() {
    let _x64 = rjax::config::x64_scope(true);
    // A loss-like group (`sum((p - t)**2)`, the difference also an output) and every float
    // fold, on lengths that end inside a tile and a loop trip, with NaNs and infinities for
    // max and min; the same bits on every thread count. (Each product of 70 001 factors
    // carries ~1e-5 relative rounding error in f32, whatever the order of the folds.)
    for (dtype, rtol, len) in [(DType::F32, 1e-4, 70_001), (DType::F64, 1e-12, 33_333)] {
        let (x, y) = edge_case_pairs(len, dtype);
        let (p, t) = (random(&[len], 43).astype(dtype), random(&[len], 44).astype(dtype));
        let losses = |a: &[Array]| {
            let (x, y, p, t) = (&a[0], &a[1], &a[2], &a[3]);
            let d = p - t;
            vec![
                jnp::sum(&(&d * &d)),
                d,
                jnp::prod(&(p * 1e-3 + 1.0)),
                jnp::max(&(x * 2.0)),
                jnp::min(&(y - x)),
                jnp::max(&(p - 1.0)),
                jnp::min(&(t * 3.0)),
            ]
        };
        let args = [x.clone(), y.clone(), p.clone(), t.clone()];
        let compiled = vec![compiles_loops(); 6];
        check_compiled_folds(&args, losses, compiled, rtol, &dtype.to_string());
    }
}

#[test]
fn row_reductions_fold_in_compiled_loops_within_tolerance_and_deterministically() {
    let _x64 = rjax::config::x64_scope(true);
    // Rows that end inside a loop trip (1031, 4099 elements) or on one (2048), each folded by
    // its own run of the loop, with a value of the group also an output and NaNs and
    // infinities for max and min; rows shorter than 1024 stay on the slice path. The same bits
    // on every thread count.
    let shapes = [(37, 1031, true), (5, 4099, true), (9, 2048, true), (40, 1000, false)];
    for (dtype, rtol) in [(DType::F32, 1e-4), (DType::F64, 1e-12)] {
        for (rows, inner, long) in shapes {
            let shape = [rows, inner];
            let (x, y) = edge_case_pairs(rows * inner, dtype);
            let (x, y) = (x.reshape(shape), y.reshape(shape));
            let (p, t) = (random(&shape, 45).astype(dtype), random(&shape, 46).astype(dtype));
            let reductions = |a: &[Array]| {
                let (x, y, p, t) = (&a[0], &a[1], &a[2], &a[3]);
                let d = p - t;
                vec![
                    jnp::sum_axes(&(&d * &d), 1, false),
                    d,
                    jnp::prod_axes(&(p * 1e-3 + 1.0), 1, false),
                    jnp::max_axes(&(x * 2.0), 1, false),
                    jnp::min_axes(&(y - x), 1, false),
                ]
            };
            let args = [x.clone(), y.clone(), p.clone(), t.clone()];
            let compiled = vec![long && compiles_loops(); 4];
            check_compiled_folds(
                &args,
                reductions,
                compiled,
                rtol,
                &format!("{dtype} {rows}x{inner}"),
            );
        }
    }
}

#[test]
fn broadcast_inputs_are_read_by_rows_in_compiled_loops_with_the_unfused_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // A bias added to every row (and a broadcast over the two trailing axes) repeats with a
    // period of at least 1024 elements: the loop runs once per row, reading the broadcast
    // input from its start each time. Rows of 1031 (not a whole number of 64-byte lines, so
    // stored plainly, each ending in the masked trip) and 2048 elements (streamed); edge
    // cases in both the rows and the bias; every op's value leaves the group.
    let cases = [
        (DType::F32, vec![1030, 1031], 1, true),
        (DType::F32, vec![520, 2048], 1, true),
        (DType::F64, vec![260, 2048], 1, true),
        (DType::F32, vec![4, 300, 1024], 2, true),
        // Periods under 1024 elements stay on the slice path.
        (DType::F32, vec![1100, 1000], 1, false),
    ];
    for (dtype, shape, broadcast_axes, compiled) in cases {
        let len: usize = shape.iter().product();
        let period: usize = shape[shape.len() - broadcast_axes..].iter().product();
        let (x, _) = edge_case_pairs(len, dtype);
        let (_, b) = edge_case_pairs(period, dtype);
        let (x, b) = (x.reshape(shape.clone()), b.reshape(&shape[shape.len() - broadcast_axes..]));
        let s = random(&[], 47).astype(dtype);
        let (fused, unfused, plan) = both(&[x, b, s], |a| {
            let (x, b, s) = (&a[0], &a[1], &a[2]);
            // Each op reads the one before (ops on the same inputs alone would be groups of
            // their own, as would ops of the bias alone, over its own shape).
            let biased = x + b;
            let high = jnp::maximum(&biased, b);
            let low = jnp::minimum(&(&high - s), b);
            let scaled = jnp::abs(&(&low * b)).sqrt() / (&biased - s);
            let spread = -jnp::reciprocal(&jnp::square(&(&scaled - b)));
            vec![biased, high, low, scaled, spread]
        });
        let case = format!("{dtype} {shape:?}");
        assert_eq!(plan.fused_groups().len(), 1, "{case}: {:?}", plan.fused_groups());
        assert_eq!(plan.compiled_groups(), vec![compiled && compiles_loops()], "{case}");
        assert_eq!(result_bits(&fused), result_bits(&unfused), "{case}");
    }
}

#[test]
fn broadcast_inputs_fold_by_rows_in_compiled_loops_and_other_broadcasts_do_not_compile() {
    let _x64 = rjax::config::x64_scope(true);
    // `sum((x + b)**2, axis=1)` with a bias the length of the reduced rows compiles, and so
    // does `sum((x + b) * c, axis=1)` with a value per row `c`; the same loss over all
    // elements does not, nor a per-row value also broadcast along a leading axis.
    for (dtype, rtol) in [(DType::F32, 1e-4), (DType::F64, 1e-12)] {
        let (rows, inner) = (33, 2051);
        let x = random(&[rows, inner], 48).astype(dtype);
        let b = random(&[inner], 49).astype(dtype);
        let c = random(&[rows, 1], 50).astype(dtype);
        let per_row = |a: &[Array]| {
            let d = &a[0] + &a[1];
            vec![jnp::sum_axes(&(&d * &d), 1, false), d]
        };
        let args = [x.clone(), b.clone()];
        check_compiled_folds(&args, per_row, vec![compiles_loops()], rtol, &format!("{dtype}"));
        let total = |a: &[Array]| vec![jnp::sum(&jnp::square(&(&a[0] + &a[1])))];
        check_compiled_folds(&args, total, vec![false], rtol, &format!("{dtype} total"));
        let scaled = |a: &[Array]| vec![jnp::sum_axes(&(&(&a[0] + &a[1]) * &a[2]), -1, false)];
        let args = [x.clone(), b.clone(), c.clone()];
        check_compiled_folds(&args, scaled, vec![compiles_loops()], rtol, &format!("{dtype} c"));
        let stacked = jnp::stack(&[x.clone(), -&x], 0);
        let args = [stacked, b, c];
        check_compiled_folds(&args, scaled, vec![false], rtol, &format!("{dtype} stacked"));
    }
}

#[test]
fn per_row_inputs_are_scalars_of_compiled_loops_run_by_rows_with_the_unfused_bits() {
    let _x64 = rjax::config::x64_scope(true);
    // A layer norm's elementwise part, `(x - mean) * rstd * g + b`: the mean and the
    // reciprocal deviation hold one value per row (set as scalars for each run of the loop),
    // the scale and shift repeat every row. Rows that end inside a loop trip and rows of a
    // 3-d array; a per-row value also broadcast along a leading axis, and rows under 1024
    // elements, stay on the slice path.
    let cases = [
        (DType::F32, vec![1030, 1031], vec![1030, 1], true),
        (DType::F64, vec![260, 2048], vec![260, 1], true),
        (DType::F32, vec![4, 300, 1024], vec![4, 300, 1], true),
        (DType::F32, vec![4, 300, 1024], vec![300, 1], false),
        (DType::F32, vec![1100, 1000], vec![1100, 1], false),
    ];
    for (dtype, shape, stats, compiled) in cases {
        let (len, row) = (shape.iter().product(), shape[shape.len() - 1]);
        let (x, _) = edge_case_pairs(len, dtype);
        let x = x.reshape(shape.clone());
        let (mean, rstd) = (random(&stats, 51).astype(dtype), random(&stats, 52).astype(dtype));
        let (g, b) = (random(&[row], 53).astype(dtype), random(&[row], 54).astype(dtype));
        let (fused, unfused, plan) = both(&[x, mean, rstd, g, b], |a| {
            let centered = &a[0] - &a[1];
            vec![&(&(&centered * &a[2]) * &a[3]) + &a[4], centered]
        });
        let case = format!("{dtype} {shape:?} with {stats:?}");
        assert_eq!(plan.fused_groups().len(), 1, "{case}: {:?}", plan.fused_groups());
        assert_eq!(plan.compiled_groups(), vec![compiled && compiles_loops()], "{case}");
        assert_eq!(result_bits(&fused), result_bits(&unfused), "{case}");
    }
    // The variance, `sum((x - mean)**2, axis=-1)`, folds each row in its run of the loop.
    for (dtype, rtol) in [(DType::F32, 1e-4), (DType::F64, 1e-12)] {
        let (rows, inner) = (33, 2051);
        let x = random(&[rows, inner], 55).astype(dtype);
        let mean = jnp::mean_axes(&x, 1, true);
        let variance = |a: &[Array]| vec![jnp::sum_axes(&jnp::square(&(&a[0] - &a[1])), 1, false)];
        let args = [x, mean];
        check_compiled_folds(&args, variance, vec![compiles_loops()], rtol, &format!("{dtype}"));
    }
}

/// Runs `f` on `args` fused and unfused on two threads: the plan's groups compile as
/// `compiled` says, every result agrees within `rtol`, and one and three threads give the
/// fused results' bits.
fn check_compiled_folds(
    args: &[Array],
    f: impl Fn(&[Array]) -> Vec<Array> + Copy + Send + Sync,
    compiled: Vec<bool>,
    rtol: f64,
    case: &str,
) {
    let run = |threads| on_threads(threads, || both(args, f));
    let (fused, unfused, plan) = run(2);
    assert_eq!(plan.compiled_groups(), compiled, "{case}");
    for (k, (f, u)) in fused.iter().zip(&unfused).enumerate() {
        agree(f, u, rtol).unwrap_or_else(|e| panic!("{case} #{k}: {e}"));
    }
    for threads in [1, 3] {
        let again = run(threads).0;
        assert_eq!(result_bits(&again), result_bits(&fused), "{case}, {threads} threads");
    }
}

#[test]
fn compiled_groups_with_many_live_values_unroll_less_and_groups_past_the_registers_do_not_compile()
{
    let _x64 = rjax::config::x64_scope(true);
    // `a[0] - sum of products`, every product live until the sum. Products of neighbours of
    // ten inputs (nine live values: fewer vectors per value) compile; eleven inputs and an
    // output need more pointer registers than there are, and the 36 products of all pairs of
    // nine inputs more vector registers.
    let neighbours = |a: &[Array]| -> Vec<Array> { a.windows(2).map(|w| &w[0] * &w[1]).collect() };
    let pairs = |a: &[Array]| -> Vec<Array> {
        let pairs = (0..a.len()).flat_map(|i| (i + 1..a.len()).map(move |j| (i, j)));
        pairs.map(|(i, j)| &a[i] * &a[j]).collect()
    };
    type Products = fn(&[Array]) -> Vec<Array>;
    let cases: [(usize, Products, bool); 3] =
        [(10, neighbours, compiles_loops()), (11, neighbours, false), (9, pairs, false)];
    for (inputs, products, compiled) in cases {
        let args: Vec<Array> = (0..inputs as u32).map(|k| random(&[1 << 20], 50 + k)).collect();
        let (fused, unfused, plan) =
            both(&args, |a| vec![products(a).iter().fold(a[0].clone(), |acc, p| acc - p)]);
        assert_eq!(plan.compiled_groups(), vec![compiled], "{inputs} inputs");
        agree(&fused[0], &unfused[0], 0.0).unwrap();
    }
}

#[test]
fn matrix_transposes_of_group_values_are_written_by_the_group() {
    let _x64 = rjax::config::x64_scope(true);
    for (dtype, rows, cols) in [(DType::F32, 300, 257), (DType::F64, 37, 300), (DType::I32, 70, 90)]
    {
        let (x, y) = (random(&[rows, cols], 14).astype(dtype), random(&[cols], 15).astype(dtype));
        let (fused, unfused, plan) = both(&[x, y], |a| {
            let b = jnp::broadcast_to(&a[1], [rows, cols]);
            let t = &(&a[0] * &b) + 1.0;
            let u = -&t;
            // `t` leaves both in order and transposed; `b` (an input) only transposed.
            vec![t.transpose(None), u.transpose(None), t, b.transpose(None)]
        });
        // (Adding 1.0 to integers converts them first: one equation more.)
        let equations = if dtype.is_float() { 7 } else { 8 };
        assert_eq!(plan.fused_groups(), vec![equations], "{dtype}");
        for (f, u) in fused.iter().zip(&unfused) {
            agree(f, u, 0.0).unwrap_or_else(|e| panic!("{dtype} {rows}x{cols}: {e}"));
        }
        assert_eq!(fused[0].shape(), &[cols, rows]);
    }
}

#[test]
fn transposes_that_merge_into_a_matrix_transpose_fuse_and_others_run_alone() {
    let _x64 = rjax::config::x64_scope(true);
    let x = random(&[12, 1, 35, 40], 16);
    let (fused, unfused, plan) = both(&[x], |a| {
        let t = a[0].tanh();
        // Axes (0, 1, 2) stay neighbours: a [420, 40] matrix transposed. The batched
        // transpose of the last two axes is not a matrix transpose.
        vec![
            jnp::transpose(&t, Some(&[3, 0, 1, 2])),
            jnp::transpose(&(&t * 2.0), Some(&[0, 1, 3, 2])),
        ]
    });
    // `t * 2.0` runs alone: the transpose ended `t`'s group.
    assert_eq!(plan.fused_groups(), vec![2]);
    for (f, u) in fused.iter().zip(&unfused) {
        agree(f, u, 0.0).unwrap();
    }
    // A group too large for the caches: the other outputs stream, the transpose is staged.
    let x = random(&[1031, 1031], 17);
    let (fused, unfused, plan) = both(&[x], |a| {
        let t = &a[0] * 3.0;
        vec![(&t + 1.0).transpose(None), t]
    });
    assert_eq!(plan.fused_groups(), vec![3]);
    for (f, u) in fused.iter().zip(&unfused) {
        agree(f, u, 0.0).unwrap();
    }
}

#[test]
fn long_chains_reading_early_values_late_keep_them_intact() {
    let _x64 = rjax::config::x64_scope(true);
    // Dead tile values give their buffers to later ops; live ones must not be overwritten.
    let x = random(&[300, 257], 13);
    let (fused, unfused, plan) = both(&[x], |a| {
        let t = a[0].tanh();
        let b = &t * 2.0;
        let c = &b + 1.0;
        let d = &c * &c;
        let e = (&d - &t).exp();
        let f = &e * &b;
        let g = (&f + &d).sin();
        vec![&g - &t, c]
    });
    assert_eq!(plan.fused_groups(), vec![10]);
    for (f, u) in fused.iter().zip(&unfused) {
        agree(f, u, 0.0).unwrap();
    }
}

#[test]
fn unit_axis_reshapes_stay_in_their_group() {
    let _x64 = rjax::config::x64_scope(true);
    let (x, z) = (random(&[64, 32], 10), random(&[64, 1, 32], 11));
    let (fused, unfused, plan) = both(&[x, z], |a| {
        let t = a[0].tanh();
        let r = jnp::reshape(&t, [64, 1, 32]);
        let back = jnp::reshape(&(&r * &a[1]), [64, 32]);
        // `r` and `t` are the same tile values under two shapes, both written out.
        vec![&back + &t, r, t]
    });
    assert_eq!(plan.fused_groups(), vec![5]);
    for (f, u) in fused.iter().zip(&unfused) {
        agree(f, u, 0.0).unwrap();
    }
    assert_eq!(fused[1].shape(), &[64, 1, 32]);
    assert_eq!(fused[2].shape(), &[64, 32]);
}

#[test]
fn a_reduction_of_a_reshaped_value_fuses_with_its_unit_axes_dropped() {
    let _x64 = rjax::config::x64_scope(true);
    let x = random(&[64, 300], 12);
    let (fused, unfused, plan) = both(&[x], |a| {
        let r = jnp::reshape(&a[0].exp(), [64, 1, 300]);
        vec![jnp::sum_axes(&r, 2, false), jnp::sum_axes(&(&r * 2.0), 0, true)]
    });
    assert!(plan.fused_groups().contains(&3), "{:?}", plan.fused_groups());
    for (f, u) in fused.iter().zip(&unfused) {
        assert_eq!(f.shape(), u.shape());
        agree(f, u, 1e-5).unwrap();
    }
}

#[test]
fn a_loss_reduces_in_the_same_pass_and_softmax_fuses_its_rows() {
    let _x64 = rjax::config::x64_scope(true);
    let (p, t) = (random(&[512, 300], 3), random(&[512, 300], 4));
    let (fused, unfused, plan) = both(&[p.clone(), t], |a| {
        let d = &a[0] - &a[1];
        vec![jnp::sum(&(&d * &d)), jnp::softmax(&a[0], -1), jnp::sum_axes(&a[0].exp(), 0, false)]
    });
    assert!(plan.fused_groups().contains(&3), "{:?}", plan.fused_groups());
    for (f, u) in fused.iter().zip(&unfused) {
        agree(f, u, 1e-5).unwrap();
    }
    let rows = jnp::sum_axes(&fused[1], 1, false).to_vec::<f32>().unwrap();
    assert!(rows.iter().all(|s| (s - 1.0).abs() < 1e-5));
}

#[test]
fn float_reductions_fold_tile_by_tile_within_tolerance_for_every_layout() {
    let _x64 = rjax::config::x64_scope(true);
    // Rows longer than a sub-tile (5000), rows that straddle sub-tile ends (333), and folds
    // over leading axes, large enough for parallel tiles, with a broadcast bias, in f32 and
    // f64 and for every float fold.
    for (dtype, rtol) in [(DType::F32, 1e-5), (DType::F64, 1e-12)] {
        for (rows, cols) in [(37, 5000), (300, 333)] {
            let x = random(&[rows, cols], 7).astype(dtype);
            let b = random(&[cols], 8).astype(dtype);
            let (fused, unfused, plan) = both(&[x, b], |a| {
                let y = (&a[0] + &a[1]).tanh() * 1.5;
                vec![
                    jnp::sum(&(&y * &y)),
                    jnp::sum_axes(&y, 1, false),
                    jnp::max_axes(&y, 1, false),
                    jnp::min_axes(&(&y * 2.0), 0, false),
                    jnp::sum_axes(&y.exp(), 0, false),
                    jnp::prod_axes(&(&y * 0.01 + 1.0), 1, false),
                ]
            });
            assert!(!plan.fused_groups().is_empty());
            for (k, (f, u)) in fused.iter().zip(&unfused).enumerate() {
                agree(f, u, rtol).unwrap_or_else(|e| panic!("{dtype} {rows}x{cols} #{k}: {e}"));
            }
        }
    }
}

#[test]
fn results_are_the_same_bits_on_every_run_and_thread_count() {
    let _x64 = rjax::config::x64_scope(true);
    let x = random(&[700, 300], 5);
    let run = |threads: usize| {
        on_threads(threads, || {
            let (fused, _, _) = both(std::slice::from_ref(&x), |a| {
                let y = (&a[0] * 3.0).sin() + &a[0];
                vec![jnp::sum(&y), jnp::sum_axes(&y, 0, false), jnp::max_axes(&y, 1, false), y]
            });
            fused.iter().map(|a| a.astype(DType::F64).to_vec::<f64>().unwrap()).collect::<Vec<_>>()
        })
    };
    let one = run(1);
    assert_eq!(one, run(1));
    assert_eq!(one, run(3));
    assert_eq!(one, run(8));
}

#[test]
fn an_input_read_last_by_a_group_may_be_overwritten_in_place() {
    let _x64 = rjax::config::x64_scope(true);
    // `y` dies in the second group, which may write its result into y's buffer; `x` is the
    // caller's and must stay intact.
    let x = random(&[400, 300], 6);
    let before = x.to_vec::<f32>().unwrap();
    let (fused, unfused, _) = both(std::slice::from_ref(&x), |a| {
        let y = jnp::matmul(&(&a[0] + 1.0), &jnp::ones([300, 300]));
        vec![(&y * 2.0).exp() - &y]
    });
    agree(&fused[0], &unfused[0], 0.0).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), before);
}

/// One step of a generated program: an operation on earlier values (indices taken modulo
/// the number of values so far).
#[derive(Clone, Debug)]
enum Gen {
    Unary(u8, usize),
    Binary(u8, usize, usize),
    Select(usize, usize, usize),
    Broadcast(usize),
    Reduce(u8, usize),
    /// An op on a value given a leading unit axis and back: written out under both shapes
    /// when the flag is set.
    Reshape(usize, bool),
    /// A value broadcast to the full shape, negated and transposed.
    Transpose(usize),
}

fn gen_step() -> impl Strategy<Value = Gen> {
    prop_oneof![
        (0u8..8, any::<usize>()).prop_map(|(o, a)| Gen::Unary(o, a)),
        (0u8..6, any::<usize>(), any::<usize>()).prop_map(|(o, a, b)| Gen::Binary(o, a, b)),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(p, a, b)| Gen::Select(p, a, b)),
        any::<usize>().prop_map(Gen::Broadcast),
        (0u8..6, any::<usize>()).prop_map(|(o, a)| Gen::Reduce(o, a)),
        (any::<usize>(), any::<bool>()).prop_map(|(a, both)| Gen::Reshape(a, both)),
        any::<usize>().prop_map(Gen::Transpose),
    ]
}

/// Shapes that broadcast together, with the full one large enough for several tiles.
/// The inputs' shapes: the full shape first, then shapes that broadcast to it.
type Shapes = [&'static [usize]; 5];
/// Groups of many tiles and sub-tiles.
const SHAPES: Shapes = [&[150, 130], &[130], &[150, 1], &[1, 130], &[]];
/// Groups small enough to run on the stack, in one pass without tiles.
const SMALL_SHAPES: Shapes = [&[3, 4], &[4], &[3, 1], &[1, 4], &[]];

/// Applies a generated program to `inputs` (one per shape of `shapes`), keeping values of
/// the full shape or broadcastable to it.
fn apply(steps: &[Gen], inputs: &[Array], dtype: DType, shapes: Shapes) -> Vec<Array> {
    let full = shapes[0];
    let float = dtype.is_float();
    let mut values: Vec<Array> = inputs.to_vec();
    let mut outs = Vec::new();
    let pick = |values: &[Array], i: usize| values[i % values.len()].clone();
    for step in steps {
        let v = match step {
            Gen::Unary(op, a) => {
                let x = pick(&values, *a);
                match (op, float) {
                    (0, _) => -&x,
                    (1, _) => jnp::abs(&x),
                    (2, _) => &x * &x,
                    (3, true) => x.tanh(),
                    (4, true) => (&x * 0.5).exp(),
                    (5, true) => x.sin(),
                    (6, _) => x.astype(DType::F32).astype(dtype),
                    _ => jnp::maximum(&x, 0.0),
                }
            }
            Gen::Binary(op, a, b) => {
                let (x, y) = (pick(&values, *a), pick(&values, *b));
                match op {
                    0 => &x + &y,
                    1 => &x - &y,
                    2 => &x * &y,
                    3 => jnp::maximum(&x, &y),
                    4 => jnp::minimum(&x, &y),
                    _ if float => &x / &(jnp::abs(&y) + 1.0),
                    _ => &x + &y,
                }
            }
            Gen::Select(p, a, b) => {
                let (c, x, y) = (pick(&values, *p), pick(&values, *a), pick(&values, *b));
                jnp::where_(c.lt(&x), &x, &y)
            }
            Gen::Broadcast(a) => jnp::broadcast_to(&pick(&values, *a), full),
            Gen::Reshape(a, both) => {
                let x = pick(&values, *a);
                let unit: Vec<usize> = [1].iter().chain(x.shape()).copied().collect();
                let y = jnp::reshape(&jnp::reshape(&x, unit.clone()).neg(), x.shape().to_vec());
                if *both {
                    outs.push(jnp::reshape(&y, unit));
                }
                y
            }
            Gen::Reduce(op, a) => {
                let x = jnp::broadcast_to(&pick(&values, *a), full) + 0.0;
                let r = match op {
                    0 => jnp::sum(&x),
                    1 => jnp::sum_axes(&x, 0, false),
                    2 => jnp::sum_axes(&x, 1, true),
                    3 => jnp::max_axes(&x, 1, true),
                    4 => jnp::min_axes(&x, 0, true),
                    _ => jnp::max(&x),
                };
                // Reductions are outputs only: a later op would amplify the rounding of a
                // reordered sum (sin of a large sum), which says nothing about fusion.
                outs.push(r);
                continue;
            }
            Gen::Transpose(a) => {
                // An output only: its shape does not broadcast with the others.
                let x = jnp::broadcast_to(&pick(&values, *a), full);
                outs.push((-&x).transpose(None));
                continue;
            }
        };
        values.push(v);
    }
    // Every third value and the last one leave the program; the rest live only in tiles.
    let computed = values.len() - inputs.len();
    outs.extend(
        values
            .into_iter()
            .skip(inputs.len())
            .enumerate()
            .filter(|(i, _)| i % 3 == 0 || i + 1 == computed)
            .map(|(_, v)| v),
    );
    outs
}

fn inputs_of(dtype: DType, seed: u32, shapes: Shapes) -> Vec<Array> {
    shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let x = random(s, seed * 8 + i as u32) * 3.0;
            if dtype.is_float() {
                x.astype(dtype)
            } else {
                jnp::floor(&x).astype(dtype)
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn generated_programs_agree_fused_and_unfused(
        steps in proptest::collection::vec(gen_step(), 1..14),
        family in 0usize..6,
        seed in 0u32..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        agree_fused_and_unfused(&steps, family, seed, SHAPES)?;
    }

    #[test]
    fn small_generated_programs_agree_fused_and_unfused(
        steps in proptest::collection::vec(gen_step(), 1..14),
        family in 0usize..6,
        seed in 0u32..1000,
    ) {
        let _x64 = rjax::config::x64_scope(true);
        agree_fused_and_unfused(&steps, family, seed, SMALL_SHAPES)?;
    }
}

/// Runs the generated program on inputs of `shapes` in `family`'s dtype, fused and unfused.
fn agree_fused_and_unfused(
    steps: &[Gen],
    family: usize,
    seed: u32,
    shapes: Shapes,
) -> Result<(), TestCaseError> {
    let dtype = [DType::F32, DType::F64, DType::I32, DType::F16, DType::BF16, DType::I64][family];
    let inputs = inputs_of(dtype, seed, shapes);
    let (fused, unfused, plan) = both(&inputs, |a| apply(steps, a, dtype, shapes));
    prop_assert_eq!(fused.len(), unfused.len());
    for (i, (f, u)) in fused.iter().zip(&unfused).enumerate() {
        // Fused reductions add partial sums in tile order. An f32 sum of ~20 000 terms of
        // size ~3 then moves by about sqrt(20 000) * 6e-8 * 3 = 3e-5, which is more than the
        // last bits when the terms cancel to a sum near 1. Halves never fuse reductions;
        // integer sums are exact. (Elementwise outputs agree bit for bit at any rtol: a
        // wrong element is off by far more.)
        let rtol = match u.dtype() {
            DType::F32 => 2e-4,
            DType::F64 => 1e-12,
            _ => 0.0,
        };
        if let Err(e) = agree(f, u, rtol) {
            prop_assert!(false, "output {} of {:?}: {}\n{:?}", i, steps, e, plan.fused_groups());
        }
    }
    Ok(())
}

/// A layer's backward pass: `x.T @ g` for its weights and `g @ w.T` for its input read the
/// same cotangent and not each other, so they run side by side; a product of one of them, or
/// of twice the other's size, runs on its own. Every schedule and thread count gives the
/// bits of the unfused plan, which runs one product at a time over all threads.
#[test]
fn independent_products_of_like_size_run_side_by_side_with_the_same_bits() {
    let _x64 = rjax::config::x64_scope(true);
    let args = [
        random(&[128, 512], 11), // g
        random(&[128, 512], 12), // x
        random(&[512, 512], 13), // w
        random(&[512, 1024], 14),
        random(&[512, 32], 15),
    ];
    let program = |a: &[Array]| {
        let weights = jnp::einsum("bi,bj->ij", &[&a[1], &a[0]]);
        let input = jnp::einsum("bj,ij->bi", &[&a[0], &a[2]]);
        let next = input.tanh().dot(&a[2]);
        let wide = a[0].dot(&a[3]);
        // Products small enough for the unpacked kernel when they run on one thread.
        let (narrow_g, narrow_x) = (a[0].dot(&a[4]), a[1].dot(&a[4]));
        vec![weights, input, next, wide, narrow_g, narrow_x]
    };
    let mut reference = None;
    for threads in [1, 2, 3] {
        let (paired, unfused, plan) = on_threads(threads, || both(&args, program));
        assert_eq!(plan.side_by_side().len(), 2, "{threads} threads");
        let [a, b] = plan.side_by_side()[0];
        let names = |e: usize| plan.program().equations[e].prim.name();
        assert_eq!((names(a), names(b)), ("dot_general".into(), "dot_general".into()));
        assert_eq!(result_bits(&paired), result_bits(&unfused), "{threads} threads");
        let bits = result_bits(&paired);
        assert_eq!(reference.get_or_insert_with(|| bits.clone()), &bits, "{threads} threads");
    }
}
