//! `jax.numpy` and `jax.lax` functions composed of other operations, against JAX
//! (`tests/data/jnp_functions.json`, made by `tests/data/gen/jnp_functions.py`): diagonals,
//! traces, triangles, rolls, rotations, stacking, `atleast_*d`, `array_split`, `meshgrid`,
//! predicates, NaN-skipping reductions, statistics, products, convolutions, `polyval`,
//! `interp`, `digitize` and `bincount`; `lax`'s slices at traced positions, `slice`, `pad`,
//! `clamp`, `select_n` and window reductions. Every case runs eagerly, under `jit` (which must
//! agree bit for bit) and under `vmap` (a batch of two equals the two calls); the
//! differentiable ones also against JAX's gradient of `sum(output * weights)`, and a few
//! rules against f64 finite differences.

mod common;

use std::sync::OnceLock;

use common::gradcheck::check_grads;
use common::{assert_close_as, leaf_to_array, panic_text};
use rjax::jnp::{ConvMode, Indexing};
use rjax::lax::WindowOp;
use rjax::prelude::*;
use serde_json::Value;

fn cases() -> &'static serde_json::Map<String, Value> {
    static DATA: OnceLock<Value> = OnceLock::new();
    let data = DATA.get_or_init(|| {
        serde_json::from_str(include_str!("data/jnp_functions.json")).expect("parses")
    });
    data["cases"].as_object().expect("a table of cases")
}

type Program = fn(&[Array]) -> Vec<Array>;

/// The rjax program of each golden case, by the case's name without its dtype suffix.
fn program(base: &str) -> Option<Program> {
    let p: Program = match base {
        "diag_vec_k-1" => |x| vec![jnp::diag(&x[0], -1)],
        "diag_vec_k0" => |x| vec![jnp::diag(&x[0], 0)],
        "diag_vec_k2" => |x| vec![jnp::diag(&x[0], 2)],
        "diag_mat_k-2" => |x| vec![jnp::diag(&x[0], -2)],
        "diag_mat_k0" | "diag_int32" => |x| vec![jnp::diag(&x[0], 0)],
        "diag_mat_k1" => |x| vec![jnp::diag(&x[0], 1)],
        "diag_mat_k5" => |x| vec![jnp::diag(&x[0], 5)],
        "diagonal" => |x| vec![jnp::diagonal(&x[0], 0, 0, 1)],
        "diagonal_m1" => |x| vec![jnp::diagonal(&x[0], -1, 0, 1)],
        "diagonal_3d" => |x| vec![jnp::diagonal(&x[0], 1, 0, 2)],
        "trace" | "trace_int32" => |x| vec![jnp::trace(&x[0], 0, 0, 1)],
        "trace_k1" => |x| vec![jnp::trace(&x[0], 1, 0, 1)],
        "trace_3d" => |x| vec![jnp::trace(&x[0], 0, 1, 2)],
        "tril" | "tril_int32" => |x| vec![jnp::tril(&x[0], 0)],
        "tril_m1" => |x| vec![jnp::tril(&x[0], -1)],
        "triu_1" => |x| vec![jnp::triu(&x[0], 1)],
        "tril_3d" => |x| vec![jnp::tril(&x[0], 1)],
        "roll_flat" => |x| vec![jnp::roll(&x[0], 2, None)],
        "roll_axis0" => |x| vec![jnp::roll(&x[0], -1, Some(0))],
        "roll_axis1" => |x| vec![jnp::roll(&x[0], 5, Some(1))],
        "roll_int32" => |x| vec![jnp::roll(&x[0], 1, Some(1))],
        "rot90_1" => |x| vec![jnp::rot90(&x[0], 1, (0, 1))],
        "rot90_2" => |x| vec![jnp::rot90(&x[0], 2, (0, 1))],
        "rot90_3" => |x| vec![jnp::rot90(&x[0], 3, (0, 1))],
        "rot90_-1" => |x| vec![jnp::rot90(&x[0], -1, (0, 1))],
        "rot90_axes12" => |x| vec![jnp::rot90(&x[0], 1, (1, 2))],
        "hstack_vec" | "hstack_mat" => |x| vec![jnp::hstack(x)],
        "vstack_vec" | "vstack_mat" => |x| vec![jnp::vstack(x)],
        "column_stack_vec" | "column_stack_mat" => |x| vec![jnp::column_stack(x)],
        "atleast_1d_scalar" | "atleast_1d_vec" | "atleast_1d_mat" => {
            |x| vec![jnp::atleast_1d(&x[0])]
        }
        "atleast_2d_scalar" | "atleast_2d_vec" | "atleast_2d_mat" => {
            |x| vec![jnp::atleast_2d(&x[0])]
        }
        "atleast_3d_scalar" | "atleast_3d_vec" | "atleast_3d_mat" => {
            |x| vec![jnp::atleast_3d(&x[0])]
        }
        "array_split" => |x| jnp::array_split(&x[0], 3, 0),
        "array_split_axis1" => |x| jnp::array_split(&x[0], 3, 1),
        "meshgrid_xy" => |x| jnp::meshgrid(&[&x[0], &x[1]], Indexing::Xy),
        "meshgrid_ij" => |x| jnp::meshgrid(&[&x[0], &x[1]], Indexing::Ij),
        "isinf" | "isinf_int32" => |x| vec![jnp::isinf(&x[0])],
        "isneginf" => |x| vec![jnp::isneginf(&x[0])],
        "isposinf" => |x| vec![jnp::isposinf(&x[0])],
        "heaviside" => |x| vec![jnp::heaviside(&x[0], 0.5)],
        "isclose" => |x| vec![jnp::isclose(&x[0], &x[1], 1e-5, 1e-8, false)],
        "isclose_nan" => |x| vec![jnp::isclose(&x[0], &x[1], 1e-3, 1e-6, true)],
        "allclose_false" => |x| vec![jnp::allclose(&x[0], &x[1], 1e-5, 1e-8, false)],
        "allclose_true" => |x| vec![jnp::allclose(&x[0], &x[1], 1e-2, 1e-8, false)],
        "array_equal_true" | "array_equal_false" | "array_equal_shapes" => {
            |x| vec![jnp::array_equal(&x[0], &x[1], false)]
        }
        "nansum_all" | "nansum_allnan" => |x| vec![jnp::nansum(&x[0])],
        "nansum_axis0" | "nansum_int32" => |x| vec![jnp::nansum_axes(&x[0], 0, false)],
        "nansum_axis1_keep" => |x| vec![jnp::nansum_axes(&x[0], 1, true)],
        "nanprod_all" => |x| vec![jnp::nanprod(&x[0])],
        "nanprod_axis0" => |x| vec![jnp::nanprod_axes(&x[0], 0, false)],
        "nanprod_axis1_keep" => |x| vec![jnp::nanprod_axes(&x[0], 1, true)],
        "nanmax_all" | "nanmax_allnan" => |x| vec![jnp::nanmax(&x[0])],
        "nanmax_axis0" => |x| vec![jnp::nanmax_axes(&x[0], 0, false)],
        "nanmax_axis1_keep" => |x| vec![jnp::nanmax_axes(&x[0], 1, true)],
        "nanmin_all" => |x| vec![jnp::nanmin(&x[0])],
        "nanmin_axis0" => |x| vec![jnp::nanmin_axes(&x[0], 0, false)],
        "nanmin_axis1_keep" => |x| vec![jnp::nanmin_axes(&x[0], 1, true)],
        "nanmean_all" | "nanmean_allnan" => |x| vec![jnp::nanmean(&x[0])],
        "nanmean_axis0" => |x| vec![jnp::nanmean_axes(&x[0], 0, false)],
        "nanmean_axis1_keep" => |x| vec![jnp::nanmean_axes(&x[0], 1, true)],
        "average" => |x| vec![jnp::average(&x[0], Axes::All, None, false)],
        "average_axis1" => |x| vec![jnp::average(&x[0], 1, None, false)],
        "average_int32" => |x| vec![jnp::average(&x[0], 0, None, false)],
        "average_weights" => |x| vec![jnp::average(&x[0], 1, Some(&x[1]), false)],
        "average_weights_all" => |x| vec![jnp::average(&x[0], Axes::All, Some(&x[1]), false)],
        "ptp" => |x| vec![jnp::ptp(&x[0], Axes::All, false)],
        "ptp_axis0" => |x| vec![jnp::ptp(&x[0], 0, false)],
        "ptp_int32" => |x| vec![jnp::ptp(&x[0], 1, false)],
        "cov" | "cov_vec" => |x| vec![jnp::cov(&x[0], true)],
        "cov_cols" => |x| vec![jnp::cov(&x[0], false)],
        "corrcoef" => |x| vec![jnp::corrcoef(&x[0], true)],
        "corrcoef_cols" => |x| vec![jnp::corrcoef(&x[0], false)],
        "inner_vec" | "inner_mat" => |x| vec![jnp::inner(&x[0], &x[1])],
        "vdot" => |x| vec![jnp::vdot(&x[0], &x[1])],
        "kron" | "kron_vec_mat" | "kron_int32" => |x| vec![jnp::kron(&x[0], &x[1])],
        "cross" | "cross_bcast" | "cross_int32" => |x| vec![jnp::cross(&x[0], &x[1])],
        "polyval" => |x| vec![jnp::polyval(&x[0], &x[1])],
        "convolve_full" => |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Full)],
        "convolve_same" | "convolve_long_kernel" => {
            |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Same)]
        }
        "convolve_valid" => |x| vec![jnp::convolve(&x[0], &x[1], ConvMode::Valid)],
        "correlate_full" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Full)],
        "correlate_same" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Same)],
        "correlate_valid" => |x| vec![jnp::correlate(&x[0], &x[1], ConvMode::Valid)],
        "digitize" | "digitize_desc" => |x| vec![jnp::digitize(&x[0], &x[1], false)],
        "digitize_right" => |x| vec![jnp::digitize(&x[0], &x[1], true)],
        "interp" => |x| vec![jnp::interp(&x[0], &x[1], &x[2], None, None)],
        "interp_left_right" => |x| vec![jnp::interp(&x[0], &x[1], &x[2], Some(-7.0), Some(9.0))],
        "bincount" => |x| vec![jnp::bincount(&x[0], None, 7)],
        "bincount_short" => |x| vec![jnp::bincount(&x[0], None, 3)],
        "bincount_weights" => |x| vec![jnp::bincount(&x[0], Some(&x[1]), 6)],
        "lax_dynamic_slice" => |x| vec![lax::dynamic_slice(&x[0], &x[1..3], [2, 2])],
        "lax_dynamic_slice_clamped" => |x| vec![lax::dynamic_slice(&x[0], &x[1..3], [2, 3])],
        "lax_dynamic_slice_int32" => {
            |x| vec![lax::dynamic_slice(&x[0], &[x[1].clone(), x[1].clone()], [2, 3])]
        }
        "lax_dynamic_update_slice" | "lax_dynamic_update_slice_neg" => {
            |x| vec![lax::dynamic_update_slice(&x[0], &x[1], &x[2..4])]
        }
        "lax_dynamic_index_in_dim" => |x| vec![lax::dynamic_index_in_dim(&x[0], &x[1], 1, false)],
        "lax_dynamic_slice_in_dim" => |x| vec![lax::dynamic_slice_in_dim(&x[0], &x[1], 2, 0)],
        "lax_dynamic_update_index_in_dim" => {
            |x| vec![lax::dynamic_update_index_in_dim(&x[0], &x[1], &x[2], 0)]
        }
        "lax_slice" => |x| vec![lax::slice(&x[0], [0, 1], [3, 4], Some(&[2, 2][..]))],
        "lax_pad" => |x| vec![lax::pad(&x[0], 0.5, &[(1, -1, 1), (0, 2, 0)])],
        "lax_pad_interior" => |x| vec![lax::pad(&x[0], -1.0, &[(-1, 2, 2), (2, -2, 1)])],
        "lax_clamp" => |x| vec![lax::clamp(-0.5, &x[0], 0.7)],
        "lax_select_n" => |x| vec![lax::select_n(&x[0], &x[1..4])],
        "lax_reduce_window_sum" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Sum, [1, 1, 2, 2], [1, 1, 2, 2], "VALID")]
        }
        "lax_reduce_window_max_same" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Max, [1, 1, 3, 3], [1, 1, 2, 2], "SAME")]
        }
        "lax_reduce_window_min_explicit" => |x| {
            let pads = [(0, 0), (0, 0), (1, 0), (0, 1)];
            vec![lax::reduce_window(&x[0], WindowOp::Min, [1, 1, 2, 3], [1, 1, 1, 2], pads)]
        },
        "lax_max_pool" => |x| vec![lax::max_pool(&x[0], [2, 2], [2, 2], "VALID")],
        "lax_avg_pool" => |x| vec![lax::avg_pool(&x[0], [3, 3], [1, 1], "SAME")],
        "lax_reduce_window_max_int32" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Max, [2, 2], [1, 2], "SAME")]
        }
        "lax_reduce_window_min_uint8" => {
            |x| vec![lax::reduce_window(&x[0], WindowOp::Min, [3, 2], [2, 2], "SAME")]
        }
        "nanvar_all" | "nanvar_allnan" => |x| vec![jnp::nanvar(&x[0])],
        "nanvar_axis0" | "nanvar_int32" => |x| vec![jnp::nanvar_axes(&x[0], 0, false)],
        "nanvar_axis1_keep" => |x| vec![jnp::nanvar_axes(&x[0], 1, true)],
        "nanvar_ddof1" => |x| vec![jnp::nanvar_ddof(&x[0], 1, false, 1)],
        "nanstd_all" => |x| vec![jnp::nanstd(&x[0])],
        "nanstd_axis0" => |x| vec![jnp::nanstd_axes(&x[0], 0, false)],
        "nanstd_axis1_keep" => |x| vec![jnp::nanstd_axes(&x[0], 1, true)],
        "nanstd_ddof3" => |x| vec![jnp::nanstd_ddof(&x[0], 1, false, 3)],
        "nanmedian_all" | "nanmedian_allnan" => |x| vec![jnp::nanmedian(&x[0])],
        "nanmedian_axis0" => |x| vec![jnp::nanmedian_axes(&x[0], 0, false)],
        "nanmedian_axis1_keep" => |x| vec![jnp::nanmedian_axes(&x[0], 1, true)],
        "nanmedian_int32" => |x| vec![jnp::nanmedian_axes(&x[0], 1, false)],
        "nanmedian_axes01" => |x| vec![jnp::nanmedian_axes(&x[0], [0, 1], false)],
        "nanquantile_axis1" => |x| vec![jnp::nanquantile_axes(&x[0], 0.3, 1, false)],
        "nanquantile_vec_q" => |x| {
            let q = jnp::array([0.1f64, 0.5, 0.9]).astype(x[0].dtype());
            vec![jnp::nanquantile_axes(&x[0], &q, 0, true)]
        },
        "nanpercentile" => |x| vec![jnp::nanpercentile(&x[0], 75.0)],
        "histogram" => |x| pair(jnp::histogram(&x[0], 5, None, None, false)),
        "histogram_range" => |x| pair(jnp::histogram(&x[0], 4, Some((-1.0, 1.0)), None, false)),
        "histogram_weights" => |x| pair(jnp::histogram(&x[0], 3, None, Some(&x[1]), false)),
        "histogram_density" => |x| pair(jnp::histogram(&x[0], 6, None, None, true)),
        "histogram_edges" => |x| pair(jnp::histogram(&x[0], &x[1], None, None, false)),
        "histogram_flat" => |x| pair(jnp::histogram(&x[0], 2, None, None, false)),
        "histogram_int32" => |x| pair(jnp::histogram(&x[0], 3, None, None, false)),
        "nonzero" => |x| jnp::nonzero(&x[0], None, None),
        "nonzero_bool" => |x| jnp::nonzero(&jnp::greater(&x[0], 1), None, None),
        "nonzero_size" => |x| jnp::nonzero(&x[0], Some(5), Some(-1)),
        "nonzero_size_short" => |x| jnp::nonzero(&x[0], Some(2), None),
        "nonzero_int32" => |x| jnp::nonzero(&x[0], Some(6), Some(9)),
        "argwhere" => |x| vec![jnp::argwhere(&x[0], None, None)],
        "argwhere_size" => |x| vec![jnp::argwhere(&x[0], Some(4), Some(7))],
        "flatnonzero" => |x| vec![jnp::flatnonzero(&x[0], None, None)],
        "flatnonzero_size" => |x| vec![jnp::flatnonzero(&x[0], Some(6), None)],
        "lax_cumsum" => |x| vec![lax::cumsum(&x[0], 0, false)],
        "lax_cumsum_reverse" => |x| vec![lax::cumsum(&x[0], 1, true)],
        "lax_cumsum_int32" => |x| vec![lax::cumsum(&x[0], 1, true)],
        "lax_cumprod" => |x| vec![lax::cumprod(&x[0], 0, false)],
        "lax_cumprod_reverse" => |x| vec![lax::cumprod(&x[0], 1, true)],
        "lax_cummax" => |x| vec![lax::cummax(&x[0], 0, false)],
        "lax_cummax_reverse" => |x| vec![lax::cummax(&x[0], 1, true)],
        "lax_cummin" => |x| vec![lax::cummin(&x[0], 0, false)],
        "lax_cummin_reverse" => |x| vec![lax::cummin(&x[0], 1, true)],
        "lax_cumlogsumexp" => |x| vec![lax::cumlogsumexp(&x[0], 0, false)],
        "lax_cumlogsumexp_reverse" => |x| vec![lax::cumlogsumexp(&x[0], 1, true)],
        "lax_associative_scan_add" | "lax_associative_scan_one" => {
            |x| vec![lax::associative_scan(|a: Array, b: Array| a + b, x[0].clone(), false, 0)]
        }
        "lax_associative_scan_max_axis1" => |x| {
            vec![lax::associative_scan(
                |a: Array, b: Array| jnp::maximum(&a, &b),
                x[0].clone(),
                false,
                1,
            )]
        },
        "lax_associative_scan_affine" => |x| affine_scan(x, false),
        "lax_associative_scan_affine_reverse" => |x| affine_scan(x, true),
        "fmax" => |x| vec![jnp::fmax(&x[0], &x[1])],
        "fmin" => |x| vec![jnp::fmin(&x[0], &x[1])],
        "hypot" => |x| vec![jnp::hypot(&x[0], &x[1])],
        "log2" => |x| vec![jnp::log2(&x[0])],
        "log10" => |x| vec![jnp::log10(&x[0])],
        "logaddexp2" => |x| vec![jnp::logaddexp2(&x[0], &x[1])],
        "deg2rad" => |x| vec![jnp::deg2rad(&x[0])],
        "radians" => |x| vec![jnp::radians(&x[0])],
        "rad2deg" => |x| vec![jnp::rad2deg(&x[0])],
        "degrees" => |x| vec![jnp::degrees(&x[0])],
        "rint" | "rint_int32" => |x| vec![jnp::rint(&x[0])],
        "trunc" | "trunc_int32" => |x| vec![jnp::trunc(&x[0])],
        "sinc" => |x| vec![jnp::sinc(&x[0])],
        "fabs" | "fabs_int32" => |x| vec![jnp::fabs(&x[0])],
        "positive" | "positive_int32" => |x| vec![jnp::positive(&x[0])],
        "divmod" => |x| {
            let (q, r) = jnp::divmod(&x[0], &x[1]);
            vec![q, r]
        },
        "absolute" => |x| vec![jnp::absolute(&x[0])],
        "arcsin" => |x| vec![jnp::arcsin(&x[0])],
        "arccos" => |x| vec![jnp::arccos(&x[0])],
        "arctan" => |x| vec![jnp::arctan(&x[0])],
        "arcsinh" => |x| vec![jnp::arcsinh(&x[0])],
        "arctanh" => |x| vec![jnp::arctanh(&x[0])],
        "arccosh" => |x| vec![jnp::arccosh(&x[0])],
        "around" => |x| vec![jnp::around(&x[0])],
        "amax" => |x| vec![jnp::amax(&x[0])],
        "amin" => |x| vec![jnp::amin(&x[0])],
        "arctan2" => |x| vec![jnp::arctan2(&x[0], &x[1])],
        "power" => |x| vec![jnp::power(&x[0], &x[1])],
        "true_divide" => |x| vec![jnp::true_divide(&x[0], &x[1])],
        "mod" | "mod_int32" => |x| vec![jnp::mod_(&x[0], &x[1])],
        "concat" => |x| vec![jnp::concat(&x[0..2], 1)],
        "bitwise_and_int32" => |x| vec![jnp::bitwise_and(&x[0], &x[1])],
        "bitwise_or_int32" => |x| vec![jnp::bitwise_or(&x[0], &x[1])],
        "bitwise_xor_int32" => |x| vec![jnp::bitwise_xor(&x[0], &x[1])],
        "bitwise_not_int32" => |x| vec![jnp::bitwise_not(&x[0])],
        "bitwise_invert_int32" => |x| vec![jnp::bitwise_invert(&x[0])],
        "invert_int32" => |x| vec![jnp::invert(&x[0])],
        "count_nonzero" => |x| vec![jnp::count_nonzero(&x[0], 1, true)],
        "count_nonzero_int32" => |x| vec![jnp::count_nonzero(&x[0], Axes::All, false)],
        "nancumsum" => |x| vec![jnp::nancumsum(&x[0], Some(1))],
        "nancumsum_flat" => |x| vec![jnp::nancumsum(&x[0], None)],
        "nancumprod" => |x| vec![jnp::nancumprod(&x[0], Some(0))],
        "nanargmax" => |x| vec![jnp::nanargmax(&x[0])],
        "nanargmax_axis0" => |x| vec![jnp::nanargmax_axis(&x[0], 0, false)],
        "nanargmax_int32" => |x| vec![jnp::nanargmax_axis(&x[0], 1, false)],
        "nanargmin_axis1_keep" => |x| vec![jnp::nanargmin_axis(&x[0], 1, true)],
        "nanargmin_allnan" => |x| vec![jnp::nanargmin(&x[0])],
        "cumulative_sum" => |x| vec![jnp::cumulative_sum(&x[0], Some(1), true)],
        "cumulative_sum_vec" => |x| vec![jnp::cumulative_sum(&x[0], None, false)],
        "cumulative_prod" => |x| vec![jnp::cumulative_prod(&x[0], Some(0), true)],
        "fliplr" => |x| vec![jnp::fliplr(&x[0])],
        "flipud" => |x| vec![jnp::flipud(&x[0])],
        "dstack" | "dstack_mat" => |x| vec![jnp::dstack(x)],
        "hsplit" => |x| jnp::hsplit(&x[0], 2),
        "vsplit" => |x| jnp::vsplit(&x[0], 3),
        "dsplit" => |x| jnp::dsplit(&x[0], 2),
        "unstack" => |x| jnp::unstack(&x[0], 1),
        "tri" => |_| vec![jnp::tri(3, Some(4), 1, None)],
        "tri_square" => |_| vec![jnp::tri(3, None, -1, None)],
        "tril_indices" => |_| {
            let (i, j) = jnp::tril_indices(3, 1, Some(4));
            vec![i, j]
        },
        "triu_indices" => |_| {
            let (i, j) = jnp::triu_indices(4, -1, None);
            vec![i, j]
        },
        "diag_indices" => |_| jnp::diag_indices(3, 2),
        "identity" => |_| vec![jnp::identity(3, DType::F32)],
        "empty" => |_| vec![jnp::empty([2, 3])],
        _ => return None,
    };
    Some(p)
}

/// The two outputs of `histogram`.
fn pair((counts, edges): (Array, Array)) -> Vec<Array> {
    vec![counts, edges]
}

/// A linear recurrence `h_t = a_t h_(t-1) + b_t` as an associative scan of affine maps.
fn affine_scan(x: &[Array], reverse: bool) -> Vec<Array> {
    let compose = |p: (Array, Array), q: (Array, Array)| (&p.0 * &q.0, &p.1 * &q.0 + &q.1);
    let (a, b) = lax::associative_scan(compose, (x[0].clone(), x[1].clone()), reverse, 0);
    vec![a, b]
}

/// Cases whose output length depends on the data (no `size`): eager only, as in JAX.
const DATA_DEPENDENT: &[&str] = &["nonzero", "nonzero_bool", "argwhere", "flatnonzero"];

/// A case's name without its dtype suffix.
fn base(name: &str) -> &str {
    name.strip_suffix("_float32").or_else(|| name.strip_suffix("_float64")).unwrap_or(name)
}

fn leaves(case: &Value, key: &str) -> Vec<Array> {
    case[key].as_array().map_or_else(Vec::new, |l| l.iter().map(leaf_to_array).collect())
}

/// Tolerances for compositions of a few roundings (XLA may order them differently).
fn tolerance(x: &Array) -> (f64, f64) {
    match x.dtype() {
        DType::F32 => (1e-5, 1e-6),
        _ => (1e-12, 1e-13),
    }
}

/// Bit-for-bit equality, NaNs equal to NaNs.
#[track_caller]
fn assert_identical(what: &str, got: &Array, want: &Array) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    let g = got.astype(DType::F64).to_vec::<f64>().unwrap();
    let w = want.astype(DType::F64).to_vec::<f64>().unwrap();
    let same =
        g.iter().zip(&w).all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
    assert!(same, "{what}: got {g:?}, want {w:?}");
}

#[test]
fn every_golden_case_has_a_program() {
    let missing: Vec<&String> = cases().keys().filter(|n| program(base(n)).is_none()).collect();
    assert!(missing.is_empty(), "golden cases without a program: {missing:?}");
    assert!(cases().len() > 250, "{} cases", cases().len());
}

#[test]
fn values_match_jax_eagerly_and_under_jit() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, case) in cases() {
        let f = program(base(name)).expect("checked above");
        let inputs = leaves(case, "inputs");
        let want = leaves(case, "outputs");
        let got = f(&inputs);
        assert_eq!(got.len(), want.len(), "{name}: output count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let (rtol, atol) = tolerance(w);
            assert_close_as(&format!("{name}[{i}]"), g, w, rtol, atol);
        }
        if DATA_DEPENDENT.contains(&base(name)) {
            continue;
        }
        let jitted = rjax::jit(move |xs: &Vec<Array>| f(xs))(&inputs);
        for (i, (j, g)) in jitted.iter().zip(&got).enumerate() {
            assert_identical(&format!("{name}[{i}] under jit"), j, g);
        }
    }
}

#[test]
fn gradients_match_jax() {
    let _x64 = rjax::config::x64_scope(true);
    let mut checked = 0;
    for (name, case) in cases() {
        if case["grads"].is_null() {
            continue;
        }
        let f = program(base(name)).expect("checked above");
        let inputs = leaves(case, "inputs");
        let weights = leaves(case, "weights");
        let floats: Vec<usize> =
            (0..inputs.len()).filter(|&i| inputs[i].dtype().is_float()).collect();
        let at: Vec<Array> = floats.iter().map(|&i| inputs[i].clone()).collect();
        let (all, positions, ws) = (inputs.clone(), floats.clone(), weights.clone());
        let loss = move |fl: &Vec<Array>| {
            let mut args = all.clone();
            for (&i, v) in positions.iter().zip(fl) {
                args[i] = v.clone();
            }
            let outs = f(&args);
            let terms: Vec<Array> = outs.iter().zip(&ws).map(|(o, w)| (o * w).sum()).collect();
            terms.iter().skip(1).fold(terms[0].clone(), |acc, t| acc + t)
        };
        let grads = rjax::grad(loss)(&at);
        let want = leaves(case, "grads");
        assert_eq!(grads.len(), want.len(), "{name}: gradient count");
        for (i, (g, w)) in grads.iter().zip(&want).enumerate() {
            let (rtol, atol) = tolerance(w);
            assert_close_as(&format!("{name}: gradient {i}"), g, w, rtol, atol);
        }
        checked += 1;
    }
    assert!(checked > 100, "{checked} gradients checked");
}

/// A second example for a batch: floats scaled by 1.5 (exact, keeping order, NaNs and
/// infinities), integers and bools as they are.
fn second_example(x: &Array) -> Array {
    if x.dtype().is_float() {
        x * 1.5
    } else {
        x.clone()
    }
}

#[test]
fn vmap_equals_each_example() {
    let _x64 = rjax::config::x64_scope(true);
    for (name, case) in cases() {
        let first = leaves(case, "inputs");
        if DATA_DEPENDENT.contains(&base(name)) || first.is_empty() {
            continue;
        }
        let f = program(base(name)).expect("checked above");
        let second: Vec<Array> = first.iter().map(second_example).collect();
        let batch: Vec<Array> =
            first.iter().zip(&second).map(|(a, b)| jnp::stack(&[a, b], 0)).collect();
        let batched = rjax::vmap(move |xs: &Vec<Array>| f(xs), 0, 0)(&batch);
        let (one, two) = (f(&first), f(&second));
        for (i, b) in batched.iter().enumerate() {
            let want = jnp::stack(&[&one[i], &two[i]], 0);
            let (rtol, atol) = tolerance(&want);
            assert_close_as(&format!("{name}[{i}] under vmap"), b, &want, rtol, atol);
        }
    }
}

#[test]
fn derivative_rules_pass_finite_differences_in_f64() {
    let _x64 = rjax::config::x64_scope(true);
    let x = jnp::array([[0.3f64, -1.2, 0.7, 2.0], [1.1, 0.4, -0.6, 0.9], [-0.2, 1.7, 0.5, -1.4]]);
    let v = jnp::array([0.8f64, -0.3, 1.2]);
    let kernel = jnp::array([1.0f64, -2.0, 0.5]);
    let third = jnp::array([0.2f64, 0.9, -0.4]);
    let block = jnp::array([[1.0f64, 2.0], [-1.0, 0.5]]);
    let (xp, xi) = (jnp::array([-1.0f64, 0.0, 1.5]), jnp::array([-0.5f64, 0.7]));
    let tol = 1e-6;
    check_grads("corrcoef", &|x| jnp::corrcoef(x, true), &x, tol);
    check_grads("cov", &|x| jnp::cov(x, false), &x, tol);
    check_grads("diag of diagonal", &|x| jnp::diag(&jnp::diagonal(x, 1, 0, 1), -1), &x, tol);
    check_grads("convolve", &|x| jnp::convolve(&x.ravel(), &kernel, ConvMode::Same), &x, tol);
    check_grads("cross", &|x| jnp::cross(&x.slice(s![.., 0..3]), &third), &x, tol);
    check_grads("nanmean", &|x| jnp::nanmean_axes(x, 1, false), &x, tol);
    check_grads("kron", &|v| jnp::kron(v, &block), &v, tol);
    check_grads("polyval", &|v| jnp::polyval(&jnp::array([0.5f64, -1.0, 2.0]), v), &v, tol);
    check_grads("interp", &|v| jnp::interp(&xi, &xp, v, None, None), &v, tol);
    let at = [Array::from(1i32), Array::from(2i32)];
    check_grads("dynamic_slice", &|x| lax::dynamic_slice(x, &at, [2, 2]), &x, tol);
    let patch = jnp::array([[0.5f64, -1.0], [2.0, 0.25]]);
    check_grads("dynamic_update_slice", &|x| lax::dynamic_update_slice(x, &patch, &at), &x, tol);
    check_grads(
        "reduce_window",
        &|x| lax::reduce_window(x, WindowOp::Max, [2, 2], [1, 2], "SAME"),
        &x,
        tol,
    );
    check_grads("pad", &|x| lax::pad(x, 0.0, &[(1, -1, 1), (0, 1, 2)]), &x, tol);
    check_grads("nanvar", &|x| jnp::nanvar_ddof(x, 0, false, 1), &x, tol);
    check_grads("nanmedian", &|x| jnp::nanmedian_axes(x, 1, false), &x, tol);
    check_grads("nanquantile", &|x| jnp::nanquantile_axes(x, 0.3, 0, false), &x, tol);
    check_grads("cumlogsumexp", &|x| lax::cumlogsumexp(x, 1, true), &x, tol);
    check_grads("cummax", &|x| lax::cummax(x, 1, true), &x, tol);
    check_grads("cummin", &|x| jnp::cummin(x, Some(0)), &x, tol);
    check_grads("hypot", &|x| jnp::hypot(x, x.flip(1)), &x, tol);
    check_grads("logaddexp2", &|x| jnp::logaddexp2(x, 0.5), &x, tol);
    check_grads("sinc", &|x| jnp::sinc(x), &x, tol);
    check_grads("fmax", &|x| jnp::fmax(x, 0.35), &x, tol);
    check_grads("nancumprod", &|x| jnp::nancumprod(x, Some(1)), &x, tol);
    check_grads("cumulative_sum", &|x| jnp::cumulative_sum(x, Some(0), true), &x, tol);
    // sinc's derivatives at 0 follow its Maclaurin series: 0, then -pi^2 / 3.
    let zero = Array::from(0.0f64);
    let d1 = rjax::grad(|x: &Array| jnp::sinc(x))(&zero).item::<f64>().unwrap();
    let d2 = rjax::grad(|x: &Array| rjax::grad(|y: &Array| jnp::sinc(y))(x))(&zero);
    let d2 = d2.item::<f64>().unwrap();
    assert_eq!(d1, 0.0);
    assert!((d2 + std::f64::consts::PI.powi(2) / 3.0).abs() < 1e-12, "{d2}");
    check_grads(
        "associative_scan",
        &|x| lax::associative_scan(|a: Array, b: Array| &a * &b, x.clone(), false, 1),
        &x,
        tol,
    );
    let w = jnp::array([0.5f64, 1.0, 2.0, 0.25, 1.5, 0.75, 1.25, 2.5, 0.1, 0.2, 0.3, 0.4]);
    let data = x.ravel();
    check_grads("histogram weights", &|w| jnp::histogram(&data, 3, None, Some(w), true).0, &w, tol);
}

#[test]
fn data_dependent_lengths_need_size_under_jit() {
    let x = jnp::array([0.0f32, 1.0, 0.0, 2.0]);
    let text = panic_text(|| drop(rjax::jit(|x: &Array| jnp::nonzero(x, None, None))(&x)));
    assert!(text.contains("nonzero") && text.contains("pass `size`"), "{text}");
    let sized = rjax::jit(|x: &Array| jnp::argwhere(x, Some(3), Some(-1)))(&x);
    assert_eq!(sized.to_vec::<i32>().unwrap(), vec![1, 3, -1]);
}

/// A call that must panic.
type Refusal<'a> = Box<dyn Fn() + 'a>;

#[test]
fn bad_input_is_refused_naming_the_function() {
    let m = jnp::ones([2, 3]);
    let cases: [(&str, Refusal<'_>); 12] = [
        (
            "dynamic_slice: an operand of shape (2, 3) needs 2 start indices",
            Box::new(|| drop(lax::dynamic_slice(&m, &[Array::from(0i32)], [1, 1]))),
        ),
        (
            "reduce_window: an operand of shape (2, 3) needs 2 positive window dimensions",
            Box::new(|| drop(lax::reduce_window(&m, WindowOp::Max, [0, 1], [1, 1], "VALID"))),
        ),
        (
            "select_n: every case must have one shape and dtype",
            Box::new(|| drop(lax::select_n(&Array::from(0i32), &[m.clone(), jnp::ones([3])]))),
        ),
        ("diagonal: axis1 and axis2 must differ", Box::new(|| drop(jnp::diagonal(&m, 0, 1, -1)))),
        (
            "diag: the input must be 1-D or 2-D",
            Box::new(|| drop(jnp::diag(&jnp::ones([2, 2, 2]), 0))),
        ),
        (
            "trace: requires an array of at least 2 axes",
            Box::new(|| drop(jnp::trace(&jnp::ones([3]), 0, 0, 1))),
        ),
        ("roll: axis 2 is out of bounds", Box::new(|| drop(jnp::roll(&m, 1, Some(2))))),
        (
            "array_split: the number of sections must be positive",
            Box::new(|| drop(jnp::array_split(&m, 0, 0))),
        ),
        ("convolve: only 1-D inputs", Box::new(|| drop(jnp::convolve(&m, &m, ConvMode::Full)))),
        (
            "cross: the last axes must have 2 or 3 components",
            Box::new(|| drop(jnp::cross(&m, &jnp::ones([4])))),
        ),
        (
            "bincount: x must be a 1-D array of integers",
            Box::new(|| drop(jnp::bincount(&m, None, 3))),
        ),
        (
            "average: weights of shape (2,)",
            Box::new(|| drop(jnp::average(&m, 1, Some(&jnp::ones([2])), false))),
        ),
    ];
    for (expected, f) in cases {
        let text = panic_text(f);
        assert!(text.contains(expected), "expected {expected:?}, got {text:?}");
    }
}
