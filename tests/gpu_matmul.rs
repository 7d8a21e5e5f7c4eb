//! Matrix products and the threefry hash on the GPU (feature `gpu`) against the CPU:
//! `dot_general` for every dimension pattern the tiled kernel must handle (edges, `k = 0`,
//! batches, contracting and free axes in any position), the `jnp` products, a gradient
//! through products, and `threefry2x32` bit for bit.
//!
//! Float tolerance: both devices sum `k` products of values in `[-4, 4)` in f32, in different
//! orders (the GPU one product at a time, the CPU with gemm's SIMD kernels and FMA), so results differ by
//! rounding. The rounding error of such a sum grows like `sqrt(k)` ulps of the partial sums
//! (random-walk accumulation), and the partial sums are of the order of the largest output
//! (the scale `assert_matches_cpu` measures against), so `1e-6 * sqrt(k)` of that scale
//! (about `8 * f32::EPSILON * sqrt(k)`) leaves an order of magnitude of room while any
//! indexing error (a wrong or missing product, of the order of the scale itself) fails.
//!
//! Without a GPU adapter each test prints why and passes, unless `RJAX_REQUIRE_GPU=1`.
#![cfg(feature = "gpu")]

mod common;
use common::gpu::{assert_matches_cpu, gpu, panic_of, Rng};

use rjax::device::{device_put, Device};
use rjax::prelude::*;
use rjax::primitives::random::Threefry2x32;
use rjax::primitives::{bind, bind1, DotGeneral};
use rjax::{jnp, Array, DType};

/// The relative tolerance of an f32 contraction over `k` elements (see the module docs).
fn tolerance(k: usize) -> f32 {
    1e-6 * (k.max(1) as f32).sqrt()
}

/// `dot_general` with contracting axes `(lhs, rhs)` and batch axes `(lhs, rhs)`.
fn dot(contract: (&[usize], &[usize]), batch: (&[usize], &[usize])) -> DotGeneral {
    DotGeneral {
        lhs_contract: contract.0.to_vec(),
        rhs_contract: contract.1.to_vec(),
        lhs_batch: batch.0.to_vec(),
        rhs_batch: batch.1.to_vec(),
    }
}

/// Checks `prim` on random operands of these shapes and `dtype` against the CPU.
fn check(gpu: Device, prim: &DotGeneral, dtype: DType, shapes: (&[usize], &[usize]), seed: u64) {
    let mut rng = Rng(seed);
    let args = [rng.array(dtype, shapes.0), rng.array(dtype, shapes.1)];
    let k = prim.lhs_contract.iter().map(|&a| shapes.0[a]).product();
    let what = format!("{prim:?} {dtype} {:?} x {:?}", shapes.0, shapes.1);
    assert_matches_cpu(&what, gpu, &args, tolerance(k), |a| vec![bind1(prim, &[&a[0], &a[1]])]);
}

/// A plain `[m, k] x [k, n]` product in each kernel dtype.
fn check_matrix(gpu: Device, m: usize, k: usize, n: usize) {
    let prim = dot((&[1], &[0]), (&[], &[]));
    for (s, dtype) in [DType::F32, DType::I32, DType::U32].into_iter().enumerate() {
        check(gpu, &prim, dtype, (&[m, k], &[k, n]), 7 + s as u64 + (m * k * n) as u64);
    }
}

#[test]
fn matrix_products_of_any_size() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    for (m, k, n) in [(1, 1, 1), (2, 3, 4), (37, 53, 19), (64, 16, 64), (65, 17, 63)] {
        check_matrix(gpu, m, k, n);
    }
}

#[test]
fn matrix_products_larger_than_a_tile() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    check_matrix(gpu, 130, 257, 65);
    check_matrix(gpu, 3, 1000, 200);
}

#[test]
fn empty_contractions_give_zeros_and_empty_outputs_nothing() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    check_matrix(gpu, 5, 0, 7);
    check_matrix(gpu, 0, 4, 3);
    check_matrix(gpu, 3, 4, 0);
    let zeros = bind1(
        &dot((&[1], &[0]), (&[], &[])),
        &[&device_put(&jnp::ones([3, 0]), gpu), &device_put(&jnp::ones([0, 2]), gpu)],
    );
    assert_eq!(zeros.device(), gpu);
    assert_eq!(zeros.to_vec::<f32>().unwrap(), vec![0.0; 6]);
}

#[test]
fn batched_products_with_axes_in_any_position() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    // lhs [2, 3, 4, 5]: contract (3, 1), batch 0, free 2; rhs [5, 2, 6, 3]: contract (0, 3),
    // batch 1, free 2.
    let prim = dot((&[3, 1], &[0, 3]), (&[0], &[1]));
    check(gpu, &prim, DType::F32, (&[2, 3, 4, 5], &[5, 2, 6, 3]), 1);
    check(gpu, &prim, DType::I32, (&[2, 3, 4, 5], &[5, 2, 6, 3]), 2);
    // Two batch axes in swapped order and two free axes on each side.
    let prim = dot((&[2], &[1]), (&[4, 0], &[0, 3]));
    check(gpu, &prim, DType::F32, (&[3, 2, 7, 5, 4], &[4, 7, 6, 3, 2]), 3);
    // A batch larger than one workgroup row, with odd matrices.
    let prim = dot((&[2], &[1]), (&[0], &[0]));
    check(gpu, &prim, DType::F32, (&[9, 33, 70], &[9, 70, 66]), 4);
    check(gpu, &prim, DType::U32, (&[9, 33, 70], &[9, 70, 66]), 5);
}

#[test]
fn matrix_vector_and_vector_vector_products() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mv = dot((&[1], &[0]), (&[], &[]));
    check(gpu, &mv, DType::F32, (&[70, 300], &[300]), 1);
    let vm = dot((&[0], &[0]), (&[], &[]));
    check(gpu, &vm, DType::F32, (&[300], &[300, 70]), 2);
    let vv = dot((&[0], &[0]), (&[], &[]));
    check(gpu, &vv, DType::F32, (&[513], &[513]), 3);
    check(gpu, &vv, DType::I32, (&[513], &[513]), 4);
    let outer = dot((&[], &[]), (&[], &[]));
    check(gpu, &outer, DType::F32, (&[17], &[9]), 5);
}

#[test]
fn integer_products_wrap() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(11);
    let big = |rng: &mut Rng, n: usize| -> Vec<i32> { (0..n).map(|_| rng.next() as i32).collect() };
    let args = [
        Array::from_shape_vec([5, 40], big(&mut rng, 200)),
        Array::from_shape_vec([40, 6], big(&mut rng, 240)),
    ];
    assert_matches_cpu("wrapping i32", gpu, &args, 0.0, |a| vec![jnp::matmul(&a[0], &a[1])]);
}

#[test]
fn jnp_products_run_on_the_gpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(21);
    for dtype in [DType::F32, DType::I32] {
        let args = [
            rng.array(dtype, &[4, 1, 10, 24]),
            rng.array(dtype, &[3, 24, 7]),
            rng.array(dtype, &[24]),
        ];
        assert_matches_cpu(&format!("jnp products {dtype}"), gpu, &args, tolerance(24), |a| {
            vec![
                jnp::matmul(&a[0], &a[1]),
                a[0].dot(&a[2]),
                a[0].matmul(&a[1]),
                jnp::dot(&a[2], &a[2]),
                jnp::matmul(&a[2], &a[1]),
            ]
        });
    }
}

#[grad(argnums = (0, 1))]
fn grad_through_products(x: &Array, w: &Array, u: &Array, v: &Array) -> (Array, Array) {
    // Vector products make the loss a scalar without a reduction.
    u.dot(&jnp::matmul(x, w).tanh()).dot(v)
}

#[test]
fn gradients_through_products_match_the_cpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(31);
    let args = [
        &rng.array(DType::F32, &[12, 40]) * 0.1,
        &rng.array(DType::F32, &[40, 9]) * 0.1,
        rng.array(DType::F32, &[12]),
        rng.array(DType::F32, &[9]),
    ];
    assert_matches_cpu("grad through matmul", gpu, &args, tolerance(40), |a| {
        let (dx, dw) = grad_through_products(&a[0], &a[1], &a[2], &a[3]);
        vec![dx, dw]
    });
}

#[test]
fn a_dtype_without_a_product_kernel_says_so() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let t = device_put(&jnp::array([true, false]), gpu);
    let message = panic_of(|| jnp::dot(&t, &t));
    assert!(message.contains("dot_general") && message.contains("bool"), "{message}");
}

/// Random `uint32` words over their whole range.
fn words(rng: &mut Rng, shape: &[usize]) -> Array {
    let n = shape.iter().product();
    Array::from_shape_vec(shape, (0..n).map(|_| rng.next() as u32).collect::<Vec<u32>>())
}

#[test]
fn threefry_is_bit_exact() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    let mut rng = Rng(41);
    let cases: [[&[usize]; 4]; 4] = [
        [&[1000], &[1000], &[1000], &[1000]],
        [&[], &[], &[3, 500], &[3, 500]],
        [&[3, 1], &[1], &[7], &[3, 7]],
        [&[0], &[], &[0], &[1]],
    ];
    for shapes in cases {
        let args: Vec<Array> = shapes.iter().map(|s| words(&mut rng, s)).collect();
        assert_matches_cpu(&format!("threefry {shapes:?}"), gpu, &args, 0.0, |a| {
            bind(&Threefry2x32, &[&a[0], &a[1], &a[2], &a[3]])
        });
    }
}

#[test]
fn threefry_known_answer_on_the_gpu() {
    let _x64 = rjax::config::x64_scope(true);
    let Some((gpu, _lock)) = gpu() else { return };
    // The Random123 known-answer test (also the host's doctest).
    let put = |v: u32| device_put(&Array::from_shape_vec([1], vec![v]), gpu);
    let y = bind(
        &Threefry2x32,
        &[&put(0x1319_8A2E), &put(0x0370_7344), &put(0x243F_6A88), &put(0x85A3_08D3)],
    );
    assert_eq!(y[0].to_vec::<u32>().unwrap(), vec![0xC492_3A9C]);
    assert_eq!(y[1].to_vec::<u32>().unwrap(), vec![0x483D_F7A0]);
}
