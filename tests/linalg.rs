//! Matrix products against JAX goldens, NumPy values (computed once) and naive loops.

mod common;

use common::*;
use proptest::prelude::*;
use rjax::prelude::*;

#[test]
fn dot_matmul_einsum_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "dot_matmul_einsum";
    let (a, b, v) = (input(c, "A"), input(c, "B"), input(c, "v"));
    assert_golden(c, 0, &jnp::dot(&a, &b));
    assert_golden(c, 1, &a.matmul(&b));
    assert_golden(c, 2, &jnp::einsum("ij,jk->ik", &[&a, &b]));
    assert_golden(c, 3, &jnp::einsum("ij,ij->", &[&a, &a]));
    assert_golden(c, 4, &jnp::einsum("ij->ji", &[&a]));
    assert_golden(c, 5, &v.dot(&v));
    assert_golden(c, 6, &jnp::outer(&v, &v));
    assert_golden(c, 7, &jnp::matmul(&a, &v));
    assert_golden(c, 8, &jnp::matmul(&v, &b));
}

#[test]
fn batched_matmul_and_einsum_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let c = "batched_matmul_einsum_and_grad";
    let (a, b) = (input(c, "A"), input(c, "B"));
    assert_golden(c, 0, &jnp::matmul(&a, &b));
    assert_golden(c, 1, &jnp::einsum("bij,bjk->bik", &[&a, &b]));
}

fn iota(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    Array::from_shape_vec(shape, (0..n as i64).collect::<Vec<i64>>())
}

#[test]
fn matmul_broadcasts_batches_and_handles_vectors() {
    let _x64 = rjax::config::x64_scope(true);
    let m = iota(&[2, 1, 3, 4]);
    let n = iota(&[5, 4, 2]);
    let out = jnp::matmul(&m, &n);
    assert_eq!(out.shape(), &[2, 5, 3, 2]);
    assert_eq!(out.to_vec::<i64>().unwrap()[..5], [28, 34, 76, 98, 124]);
    let out = jnp::matmul(&iota(&[3]), &iota(&[2, 3, 2]));
    assert_eq!(out.to_vec::<i64>().unwrap(), vec![10, 13, 28, 31]);
}

#[test]
fn tensordot_and_einsum_forms_match_numpy() {
    let _x64 = rjax::config::x64_scope(true);
    let a = iota(&[2, 3, 4]);
    let b = iota(&[4, 3]);
    let t = jnp::tensordot(&a, &b, ([1, 2], [1, 0]));
    assert_eq!(t.to_vec::<i64>().unwrap(), vec![440, 1232]);
    let t = jnp::tensordot(&a, &b, 1);
    assert_eq!(t.shape(), &[2, 3, 3]);
    assert_eq!(t.to_vec::<i64>().unwrap()[..6], [42, 48, 54, 114, 136, 158]);
    let x = iota(&[2, 3]);
    let y = iota(&[4, 3]);
    let want = vec![5, 14, 23, 32, 14, 50, 86, 122];
    assert_eq!(jnp::einsum("ij,kj->ik", &[&x, &y]).to_vec::<i64>().unwrap(), want);
    assert_eq!(jnp::einsum("ij,jk", &[&x, &y.t()]).to_vec::<i64>().unwrap(), want);
    let r = jnp::einsum("ij,k->ik", &[&x, &iota(&[2])]);
    assert_eq!(r.to_vec::<i64>().unwrap(), vec![0, 3, 0, 12]);
    assert_eq!(jnp::einsum("ij->j", &[&x]).to_vec::<i64>().unwrap(), vec![3, 5, 7]);
    let r = jnp::einsum("bi,bj->bij", &[&x, &x]);
    assert_eq!(r.to_vec::<i64>().unwrap()[..9], [0, 0, 0, 0, 1, 2, 0, 2, 4]);
}

#[test]
fn every_dtype_multiplies() {
    let _x64 = rjax::config::x64_scope(true);
    for dtype in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I8,
        DType::I32,
        DType::U32,
        DType::I64,
    ] {
        let a = iota(&[3, 4]).astype(dtype);
        let b = iota(&[4, 2]).astype(dtype);
        let got = a.matmul(&b).astype(DType::I64).to_vec::<i64>().unwrap();
        // int8 wraps around, as it does in JAX
        let last = if dtype == DType::I8 { 162 - 256 } else { 162 };
        assert_eq!(got, vec![28, 34, 76, 98, 124, last], "{dtype}");
    }
    let t = jnp::array([true, false]).reshape([1, 2]);
    let f = jnp::array([false, true]).reshape([2, 1]);
    assert_eq!(t.matmul(&f).to_vec::<bool>().unwrap(), vec![false]);
    // mixed dtypes promote first
    assert_eq!(iota(&[2, 2]).astype(DType::I32).matmul(&jnp::ones([2, 2])).dtype(), DType::F32);
}

fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0f64; m * n];
    for i in 0..m {
        for p in 0..k {
            for j in 0..n {
                out[i * n + j] += a[i * k + p] as f64 * b[p * n + j] as f64;
            }
        }
    }
    out
}

fn values(n: usize, seed: f32) -> Vec<f32> {
    (0..n).map(|i| ((i as f32 + seed) * 0.731).sin()).collect()
}

#[test]
fn large_products_use_the_tuned_kernel_and_stay_accurate() {
    let (m, k, n) = (130, 300, 90);
    let (va, vb) = (values(m * k, 0.0), values(k * n, 1.0));
    let got = Array::from_shape_vec([m, k], va.clone())
        .matmul(&Array::from_shape_vec([k, n], vb.clone()))
        .to_vec::<f32>()
        .unwrap();
    for (g, w) in got.iter().zip(naive(&va, &vb, m, k, n)) {
        assert!((*g as f64 - w).abs() < 1e-4 * (1.0 + w.abs()), "{g} vs {w}");
    }
}

/// Transposed operands (as reverse mode produces them) are read in place by the kernel: every
/// layout of both operands gives the naive product, in f32 and f64, single- and multi-threaded
/// sizes alike.
#[test]
fn products_of_transposed_operands_read_in_place_are_exact() {
    let _x64 = rjax::config::x64_scope(true);
    for (m, k, n) in [(37, 53, 29), (130, 300, 90)] {
        let (va, vb) = (values(m * k, 0.25), values(k * n, 1.5));
        let want = naive(&va, &vb, m, k, n);
        let a = Array::from_shape_vec([m, k], va.clone());
        let b = Array::from_shape_vec([k, n], vb.clone());
        // Each operand as stored, or materialized as its transpose and contracted as such.
        let (at, bt) = (a.t().reshape([k, m]), b.t().reshape([n, k]));
        for dtype in [DType::F32, DType::F64] {
            let (a, b, at, bt) =
                (a.astype(dtype), b.astype(dtype), at.astype(dtype), bt.astype(dtype));
            for (spec, x, y) in [
                ("ik,kn->in", &a, &b),
                ("ki,kn->in", &at, &b),
                ("ik,nk->in", &a, &bt),
                ("ki,nk->in", &at, &bt),
            ] {
                let got = jnp::einsum(spec, &[x, y]).astype(DType::F64).to_vec::<f64>().unwrap();
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-4 * (1.0 + w.abs()), "{spec} {dtype:?}: {g} vs {w}");
                }
            }
        }
    }
}

proptest! {
    #[test]
    fn dot_of_random_shapes_matches_a_naive_loop(m in 1usize..9, k in 0usize..9, n in 1usize..9) {
        let (va, vb) = (values(m * k, 0.5), values(k * n, 2.5));
        let got = jnp::dot(&Array::from_shape_vec([m, k], va.clone()), &Array::from_shape_vec([k, n], vb.clone()));
        let got = got.to_vec::<f32>().unwrap();
        for (g, w) in got.iter().zip(naive(&va, &vb, m, k, n)) {
            prop_assert!((*g as f64 - w).abs() < 1e-5 * (1.0 + w.abs()));
        }
    }

    #[test]
    fn transposed_operands_give_the_same_product(m in 1usize..7, k in 1usize..7, n in 1usize..7) {
        let a = Array::from_shape_vec([m, k], values(m * k, 0.0));
        let b = Array::from_shape_vec([k, n], values(k * n, 3.0));
        let direct = a.matmul(&b).to_vec::<f32>().unwrap();
        let via_einsum = jnp::einsum("ki,nk->in", &[&a.t(), &b.t()]).to_vec::<f32>().unwrap();
        for (x, y) in direct.iter().zip(&via_einsum) {
            prop_assert!((x - y).abs() < 1e-5 * (1.0 + x.abs()));
        }
    }
}

#[test]
#[should_panic(expected = "matmul: contracted dimensions differ: shapes (2, 3) and (4, 5)")]
fn matmul_with_mismatched_inner_dimensions_panics() {
    let _ = jnp::matmul(&jnp::ones([2, 3]), &jnp::ones([4, 5]));
}

#[test]
#[should_panic(
    expected = "matmul: batch dimensions do not broadcast: shapes (2, 3, 4) and (3, 4, 5)"
)]
fn matmul_with_incompatible_batches_panics() {
    let _ = jnp::matmul(&jnp::ones([2, 3, 4]), &jnp::ones([3, 4, 5]));
}

#[test]
#[should_panic(expected = "dot: contracted dimensions differ: shapes (3,) and (4,)")]
fn dot_of_mismatched_vectors_panics() {
    let _ = jnp::dot(&jnp::ones([3]), &jnp::ones([4]));
}

#[test]
#[should_panic(
    expected = "einsum: \"ij,jk->ik\": operand ij has 2 letters for an array of shape (3,)"
)]
fn einsum_with_wrong_rank_panics() {
    let _ = jnp::einsum("ij,jk->ik", &[&jnp::ones([3]), &jnp::ones([3, 2])]);
}

#[test]
#[should_panic(expected = "a letter repeated within one operand (a diagonal) is not supported")]
fn einsum_diagonal_is_refused_clearly() {
    let _ = jnp::einsum("ii->i", &[&jnp::ones([3, 3])]);
}
