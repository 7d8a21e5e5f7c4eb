//! No undefined behaviour, abort or hang from the safe API: shapes whose element count or byte
//! size would overflow are refused where they are made, out of memory is an error (or an
//! unwinding panic naming the operation) that leaves the process usable, and a panic inside a
//! parallel kernel reaches the caller.

mod common;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rjax::prelude::*;
use rjax::{try_run, Error};

/// The message of the panic `f` raises (it must raise one).
#[track_caller]
fn panic_message<R>(f: impl FnOnce() -> R) -> String {
    let payload = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(_) => panic!("expected a panic"),
        Err(payload) => payload,
    };
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else {
        panic!("a panic without a message")
    }
}

/// Asserts that `f` panics with a message naming `op` and saying the shape cannot exist.
#[track_caller]
fn refused<R>(op: &str, f: impl FnOnce() -> R) {
    let msg = panic_message(f);
    assert!(msg.starts_with(op), "expected an error from {op}, got: {msg}");
    assert!(msg.contains("isize::MAX bytes"), "expected a size error, got: {msg}");
}

const HUGE: usize = 1 << 32;

#[test]
fn a_reshape_whose_element_count_wraps_is_refused() {
    // 2^62 + 1 rows of 4 f32: the plain product is 2^64 + 4, which wraps to the 4 elements
    // the array has. It used to be accepted, and its transpose read memory it did not own.
    let x = jnp::ones([4]);
    refused("reshape", || x.reshape([(1usize << 62) + 1, 4]));
    let msg = panic_message(|| x.reshape([-1isize, 1 << 62, 1 << 62]));
    assert!(msg.starts_with("reshape:"), "{msg}");
}

#[test]
fn creating_an_array_too_large_to_exist_is_refused() {
    refused("zeros", || jnp::zeros([HUGE, HUGE]));
    refused("ones", || jnp::ones([usize::MAX / 2, 4]));
    refused("Array::from_shape_vec", || Array::from_shape_vec([HUGE, HUGE], Vec::<f32>::new()));
    refused("eye", || jnp::eye(HUGE));
    let key = random::key(0);
    refused("normal", || random::normal(&key, [HUGE, HUGE]));
    refused("uniform", || random::uniform(&key, [HUGE, HUGE]));
    let err = Array::try_from_shape_vec([HUGE, HUGE], Vec::<f32>::new()).unwrap_err();
    assert!(err.to_string().contains("isize::MAX bytes"), "{err}");
    // Empty, yet its rows would not fit in memory: strides over it would overflow.
    refused("zeros", || jnp::zeros([0, 1 << 62, 1 << 62]));
    let msg = panic_message(|| jnp::arange(1e300));
    assert!(msg.starts_with("arange:"), "{msg}");
}

#[test]
fn a_broadcast_too_large_to_exist_is_refused_eagerly_and_traced() {
    let one = jnp::ones([1]);
    refused("broadcast_in_dim", || jnp::broadcast_to(&one, [HUGE, HUGE]).sum());

    #[jit]
    fn broadcast_sum(x: &Array) -> Array {
        jnp::broadcast_to(x, [1 << 32, 1 << 32]).sum()
    }
    let msg = panic_message(|| broadcast_sum(&one));
    assert!(msg.starts_with("broadcast_in_dim:") && msg.contains("isize::MAX bytes"), "{msg}");
    assert!(msg.contains("in traced code at tests/safety.rs"), "{msg}");
}

#[test]
fn empty_shapes_that_fit_still_work() {
    let x = jnp::zeros([0, 5]);
    assert_eq!(x.sum_axes(0, false).shape(), &[5]);
    assert_eq!(jnp::ones([3, 0]).reshape([0, 7]).shape(), &[0, 7]);
    assert_eq!(jnp::zeros([0]).to_vec::<f32>().unwrap(), Vec::<f32>::new());
}

#[test]
fn out_of_memory_is_an_error_and_the_process_goes_on() {
    // 2^60 f32 is 4 EiB: a valid shape that no machine can allocate.
    let err = try_run(|| jnp::zeros([1 << 30, 1 << 30])).unwrap_err();
    match &err {
        Error::OutOfMemory { op, bytes, .. } => {
            assert_eq!(*bytes, 1 << 62);
            assert!(op.contains("zeros") && op.contains("(1073741824, 1073741824)"), "{op}");
        }
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(err.to_string().contains("out of memory"), "{err}");

    // The same inside a kernel: an op's result that cannot be allocated names the op.
    let x = jnp::ones([1 << 20]);
    let msg = panic_message(|| jnp::broadcast_to(&x, [1 << 40, 1 << 20]));
    assert!(msg.contains("out of memory"), "{msg}");
    assert!(msg.starts_with("broadcast_in_dim"), "{msg}");
    let err = try_run(|| jnp::broadcast_to(&x, [1 << 40, 1 << 20])).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(try_run(|| jnp::arange(1e18)).is_err());

    // A #[jit] function whose result cannot be allocated, called fallibly, twice (the plan
    // is cached after the first failure and fails the same way).
    for _ in 0..2 {
        let err = try_run(|| huge_result(&x)).unwrap_err();
        match err {
            Error::OutOfMemory { op, .. } => assert!(op.contains("huge_result"), "{op}"),
            other => panic!("expected OutOfMemory, got {other:?}"),
        }
    }
    assert_eq!(huge_result_small(&x).shape(), &[4, 1 << 20]);

    // Other panics pass through try_run untouched.
    let msg = panic_message(|| try_run(|| jnp::ones([2]).reshape([3])));
    assert!(msg.starts_with("reshape:"), "{msg}");

    // Then a normal training step, eager and under #[jit], with the pool and jit cache intact.
    let (params, inputs, targets) = small_mlp();
    let before = common::mlp::loss(&params, &inputs, &targets).item::<f32>().unwrap();
    let grads = grad_loss(&params, &inputs, &targets);
    let stepped: Vec<(Array, Array)> = params
        .iter()
        .zip(&grads)
        .map(|((w, b), (gw, gb))| (w - gw * 0.01, b - gb * 0.01))
        .collect();
    let after = common::mlp::loss(&stepped, &inputs, &targets).item::<f32>().unwrap();
    assert!(after < before, "a training step after the failures lowers the loss");
    let fallible = try_run(|| grad_loss(&params, &inputs, &targets)).unwrap();
    assert_eq!(fallible[0].0.to_vec::<f32>().unwrap(), grads[0].0.to_vec::<f32>().unwrap());
}

#[jit]
fn huge_result(x: &Array) -> Array {
    jnp::broadcast_to(x, [1 << 40, x.shape()[0]]) * 2.0
}

#[jit]
fn huge_result_small(x: &Array) -> Array {
    jnp::broadcast_to(x, [4, x.shape()[0]]) * 2.0
}

#[jit]
#[grad]
fn grad_loss(params: &[(Array, Array)], inputs: &Array, targets: &Array) -> Vec<(Array, Array)> {
    common::mlp::loss(params, inputs, targets)
}

/// A two-layer MLP's parameters and a small batch.
fn small_mlp() -> (Vec<(Array, Array)>, Array, Array) {
    let w1 = random::normal(&random::key(1), [8, 16]) * 0.3;
    let w2 = random::normal(&random::key(2), [16, 4]) * 0.3;
    let params = vec![(w1, jnp::zeros([16])), (w2, jnp::zeros([4]))];
    let inputs = random::normal(&random::key(3), [32, 8]);
    let targets = random::normal(&random::key(4), [32, 4]);
    (params, inputs, targets)
}

#[test]
fn a_failing_op_reaches_the_caller_on_any_thread_count() {
    let x = jnp::ones([4]);
    for threads in 1..=3 {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            // The case that used to hang: one half of a parallel reduction panicked while the
            // other folded 2^62 rows.
            refused("reshape", || x.reshape([(1usize << 62) + 1, 4]).sum_axes(0, false));
            // Out of memory inside a kernel running on the pool.
            let big = jnp::ones([1 << 16]);
            let err = try_run(|| jnp::broadcast_to(&big, [1 << 44, 1 << 16])).unwrap_err();
            assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
            // And the pool still works.
            let y = jnp::ones([1000, 300]).sum_axes(0, false);
            assert_eq!(y.to_vec::<f32>().unwrap(), vec![1000.0; 300]);
        });
    }
}

// ---------------------------------------------------------------------------------------------
// Findings of the fuzz suite (tests/fuzz.rs), each fixed and kept so here.

#[test]
fn a_rust_integer_outside_int64_is_refused_naming_the_op() {
    let x = jnp::ones([2]);
    for (op, msg) in [
        ("add", panic_message(|| jnp::add(&x, usize::MAX))),
        ("less", panic_message(|| jnp::less(&x, u64::MAX))),
        ("maximum", panic_message(|| jnp::maximum(&x, usize::MAX))),
        ("multiply", panic_message(|| jnp::multiply(usize::MAX, &x))),
        ("where", panic_message(|| jnp::where_(true, &x, u64::MAX))),
    ] {
        assert!(msg.starts_with(&format!("{op}: the integer 18446744073709551615")), "{msg}");
        assert!(msg.contains("does not fit in int64"), "{msg}");
    }
    // In range, a Rust integer is a weakly typed operand as before.
    assert_eq!(jnp::add(&x, 3usize).to_vec::<f32>().unwrap(), vec![4.0, 4.0]);
}

#[jit]
fn extreme_steps(x: &Array) -> (Array, Array, Array, Array) {
    let back = SliceElem::Range { start: None, end: None, step: isize::MIN };
    let forward = SliceElem::Range { start: None, end: None, step: isize::MAX };
    (
        x.slice(vec![back.clone()]),
        x.slice(vec![forward]),
        x.slice(vec![SliceElem::from(1usize << 63)]),
        x.at(vec![back]).set(100),
    )
}

#[test]
fn slices_with_extreme_steps_give_numpys_answers() {
    // NumPy: x[::-2**63] is [x[-1]], x[::2**63 - 1] is [x[0]]; an index past isize::MAX is
    // past the end, so a read clamps to the last element.
    let x = jnp::arange(8);
    let want = |v: (Array, Array, Array, Array)| {
        assert_eq!(v.0.to_vec::<i32>().unwrap(), vec![7]);
        assert_eq!(v.1.to_vec::<i32>().unwrap(), vec![0]);
        assert_eq!(v.2.item::<i32>().unwrap(), 7);
        assert_eq!(v.3.to_vec::<i32>().unwrap(), vec![0, 1, 2, 3, 4, 5, 6, 100]);
    };
    let back = SliceElem::Range { start: None, end: None, step: isize::MIN };
    let forward = SliceElem::Range { start: None, end: None, step: isize::MAX };
    want((
        x.slice(vec![back.clone()]),
        x.slice(vec![forward]),
        x.slice(vec![SliceElem::from(1usize << 63)]),
        x.at(vec![back]).set(100),
    ));
    want(extreme_steps(&x));
}

#[test]
fn samplers_refuse_extreme_counts_naming_themselves() {
    let key = random::key(0);
    refused("randint", || random::randint(&key, [(1usize << 62) + 1, 2], 0, 10));
    refused("randint", || random::randint(&key, [0, usize::MAX, 1 << 31], 0, 10));
    refused("choice", || random::choice(&key, 3, [(1usize << 62) + 1], true));
    refused("choice", || random::choice(&key, 0, [0, usize::MAX, 1 << 62], false));
    refused("bernoulli", || random::bernoulli(&key, 0.5, [HUGE, HUGE]));
    let msg = panic_message(|| random::bernoulli(&random::split(&key, 2), 0.5, [2]));
    assert!(msg.starts_with("bernoulli: expected a single key"), "{msg}");
    // Indices are int32: a population or range past i32::MAX is refused, not wrapped.
    let msg = panic_message(|| random::permutation(&key, (1usize << 62) + 1));
    assert!(msg.starts_with("permutation:") && msg.contains("int32"), "{msg}");
    let msg = panic_message(|| random::choice(&key, usize::MAX >> 1, [2], false));
    assert!(msg.starts_with("choice:") && msg.contains("int32"), "{msg}");
    // No samples of an enormous number of classes: an empty result, as JAX gives.
    let empty = Array::from_shape_vec([0, HUGE], Vec::<f32>::new());
    assert_eq!(random::categorical(&key, &empty, -1).shape(), &[0]);
    assert_eq!(random::choice(&key, 5, [0, 3], false).shape(), &[0, 3]);
    let a = jnp::ones([4, 2]);
    let none = random::choice_array(&key, &a, [0], true, None, 1);
    assert_eq!(none.shape(), &[4, 0], "the population's other axes stay");
}

#[test]
fn a_promotion_too_large_to_exist_names_the_product() {
    let wide = Array::from_shape_vec([(1usize << 62) + 1, 0], Vec::<bool>::new());
    let floats = Array::from_shape_vec([0, 2], Vec::<f32>::new());
    refused("dot", || jnp::dot(&wide, &floats));
    refused("matmul", || jnp::matmul(&wide, &floats));
    refused("einsum", || jnp::einsum("ij,jk->ik", &[&wide, &floats]));
}

#[test]
fn padding_and_convolution_arithmetic_is_checked() {
    let x = jnp::ones([3]);
    let msg = panic_message(|| jnp::pad(&x, (usize::MAX, 1usize), 0.0));
    assert!(msg.starts_with("pad: widths (18446744073709551615, 1)"), "{msg}");
    let msg = panic_message(|| jnp::pad(&x, (i64::MAX as usize, i64::MAX as usize), 0.0));
    assert!(msg.starts_with("pad:") && msg.contains("longer than any array"), "{msg}");

    let lhs = jnp::ones([1, 3, 4, 1]);
    let rhs = jnp::ones([2, 3, 3, 1]);
    let explicit = [(3, i64::MAX), (-(1i64 << 40), -1)];
    let msg = panic_message(|| {
        lax::conv_general_dilated(&lhs, &rhs, [1, 1], explicit, lax::ConvOptions::default())
    });
    assert!(msg.starts_with("conv_general_dilated:"), "{msg}");
    // A window of 3 dilated past i64::MAX; one of 1 takes no dilation and still works.
    let options = lax::ConvOptions::default().rhs_dilation([usize::MAX, 1]);
    let msg = panic_message(|| lax::conv_general_dilated(&lhs, &rhs, [1, 2], "SAME", options));
    assert!(msg.starts_with("conv_general_dilated:"), "{msg}");
    let options = lax::ConvOptions::default().rhs_dilation([1, usize::MAX]);
    let y = lax::conv_general_dilated(&lhs, &rhs, [1, 2], "SAME", options);
    assert_eq!(y.shape(), &[1, 2, 4, 1]);
    let options = lax::ConvOptions::default().lhs_dilation([usize::MAX, 1]);
    let msg =
        panic_message(|| lax::conv_general_dilated(&lhs, &rhs, [1, 1], [(0, 0), (0, 0)], options));
    assert!(msg.starts_with("conv_general_dilated:") && msg.contains("too long"), "{msg}");
}

#[jit]
fn jitted_pad(x: &Array) -> Array {
    jnp::pad(x, (3usize, 2usize), 0)
}

#[test]
fn out_of_memory_inside_a_jit_names_the_op_and_its_line() {
    // Valid, but 1.4 PB: the failing allocation is pad's, at the traced line.
    let z = jnp::zeros_dtype([3, 3, 1 << 40, 0], DType::U32);
    let msg = panic_message(|| jitted_pad(&z));
    assert!(msg.starts_with("pad (result uint32(8, 8, 1099511627781, 5)"), "{msg}");
    assert!(msg.contains("in traced code at tests/safety.rs") && msg.contains("out of memory"));
}

#[jit]
fn times_one(x: &Array) -> Array {
    x * 1.0
}

#[test]
fn multiplying_a_signalling_nan_by_one_quiets_it_eagerly_and_passes_it_under_jit_as_xla() {
    let snan = Array::from(f32::from_bits(0x7f80_0001));
    let eager = (&snan * 1.0).item::<f32>().unwrap().to_bits();
    assert_eq!(eager, 0x7fc0_0001, "the product quiets the NaN");
    // `#[jit]` drops the product, as XLA does: the same NaN, its quiet bit still clear.
    assert_eq!(times_one(&snan).item::<f32>().unwrap().to_bits(), 0x7f80_0001);
}
