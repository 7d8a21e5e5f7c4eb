"""Computes tests/data/jnp_functions.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/jnp_functions.py > tests/data/jnp_functions.json  # with jax[cpu]

`jax.numpy` functions that are compositions of other operations: construction and shape
(`diag`, `diagonal`, `trace`, `tril`, `triu`, `roll`, `rot90`, `hstack`, `vstack`,
`column_stack`, `atleast_*d`, `array_split`, `meshgrid`), predicates (`isinf`, `isneginf`,
`isposinf`, `isclose`, `allclose`, `array_equal`, `heaviside`), NaN-ignoring reductions,
statistics (`average`, `ptp`, `cov`, `corrcoef`), products (`inner`, `vdot`, `kron`,
`cross`, `polyval`), signals (`convolve`, `correlate`) and binning (`digitize`, `interp`,
`bincount`, `histogram`), the NaN-skipping `nanvar`/`nanstd`/`nanmedian`/`nanquantile`,
`nonzero`/`argwhere`/`flatnonzero` (with and without `size`), and from `jax.lax` the slices at traced positions (`dynamic_slice` and its
relatives), `slice`, `pad` with interior padding, `clamp`, `select_n` and `reduce_window`
(sum, max, min; pooling), the cumulative reductions and `associative_scan`. Each case holds its inputs, JAX's output and, for the differentiable ones, the
gradient of `sum(output * weights)` with respect to every float input, in float32 and
float64 (`jax_enable_x64` on, so float64 stays float64; index outputs are written as int32,
JAX's dtype without x64).
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        data = []
        for v in a.ravel().astype(np.float64):
            if np.isnan(v):
                data.append("NaN")
            elif np.isinf(v):
                data.append("Infinity" if v > 0 else "-Infinity")
            else:
                data.append(float(v))
    elif a.dtype.kind == "b":
        data = [bool(v) for v in a.ravel()]
    else:
        if a.dtype == np.int64:
            a = a.astype(np.int32)
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


def weights(shape, dt):
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5).astype(dt)


def smooth(shape, dt, seed=0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.7 + seed) * 1.5 + 0.1 * seed).reshape(shape).astype(dt)


cases = {}


def case(name, f, inputs, grad=True):
    """`f` of the float or integer arrays `inputs`; the output is an array or a list of them."""
    xs = [jnp.asarray(x) for x in inputs]
    out = f(*xs)
    c = {"inputs": [leaf(x) for x in xs]}
    outs = out if isinstance(out, (list, tuple)) else [out]
    c["outputs"] = [leaf(o) for o in outs]
    if grad:
        floats = [i for i, x in enumerate(xs) if x.dtype.kind == "f"]
        ws = [jnp.asarray(weights(o.shape, o.dtype)) for o in outs]
        c["weights"] = [leaf(w) for w in ws]

        def loss(*fl):
            args = list(xs)
            for i, v in zip(floats, fl):
                args[i] = v
            o = f(*args)
            o = o if isinstance(o, (list, tuple)) else [o]
            return sum((a * w).sum() for a, w in zip(o, ws))

        gs = jax.grad(loss, argnums=tuple(range(len(floats))))(*[xs[i] for i in floats])
        c["grads"] = [leaf(g) for g in gs]
    cases[name] = c


NAN = np.nan
INF = np.inf
for dt in ("float32", "float64"):
    A = smooth((3, 4), dt)
    B3 = smooth((2, 3, 4), dt, 1)
    v = smooth((4,), dt, 2)
    s = f"_{dt}"
    for k in (-1, 0, 2):
        case(f"diag_vec_k{k}{s}", lambda x, k=k: jnp.diag(x, k), [v])
    for k in (-2, 0, 1, 5):
        case(f"diag_mat_k{k}{s}", lambda x, k=k: jnp.diag(x, k), [A])
    case(f"diagonal{s}", lambda x: jnp.diagonal(x), [A])
    case(f"diagonal_m1{s}", lambda x: jnp.diagonal(x, -1), [A])
    case(f"diagonal_3d{s}", lambda x: jnp.diagonal(x, 1, 0, 2), [B3])
    case(f"trace{s}", lambda x: jnp.trace(x), [A])
    case(f"trace_k1{s}", lambda x: jnp.trace(x, 1), [A])
    case(f"trace_3d{s}", lambda x: jnp.trace(x, 0, 1, 2), [B3])
    case(f"tril{s}", lambda x: jnp.tril(x), [A])
    case(f"tril_m1{s}", lambda x: jnp.tril(x, -1), [A])
    case(f"triu_1{s}", lambda x: jnp.triu(x, 1), [A])
    case(f"tril_3d{s}", lambda x: jnp.tril(x, 1), [B3])
    case(f"roll_flat{s}", lambda x: jnp.roll(x, 2), [A])
    case(f"roll_axis0{s}", lambda x: jnp.roll(x, -1, 0), [A])
    case(f"roll_axis1{s}", lambda x: jnp.roll(x, 5, 1), [A])
    for k in (1, 2, 3, -1):
        case(f"rot90_{k}{s}", lambda x, k=k: jnp.rot90(x, k), [A])
    case(f"rot90_axes12{s}", lambda x: jnp.rot90(x, 1, (1, 2)), [B3])
    case(f"hstack_vec{s}", lambda a, b: jnp.hstack([a, b]), [v, v * 2])
    case(f"hstack_mat{s}", lambda a, b: jnp.hstack([a, b]), [A, A * 2])
    case(f"vstack_vec{s}", lambda a, b: jnp.vstack([a, b]), [v, v * 2])
    case(f"vstack_mat{s}", lambda a, b: jnp.vstack([a, b]), [A, A[:1]])
    case(f"column_stack_vec{s}", lambda a, b: jnp.column_stack([a, b]), [v, v * 2])
    case(f"column_stack_mat{s}", lambda a, b: jnp.column_stack([a, b]), [A, A[:, :1]])
    for n in (1, 2, 3):
        f = {1: jnp.atleast_1d, 2: jnp.atleast_2d, 3: jnp.atleast_3d}[n]
        case(f"atleast_{n}d_scalar{s}", f, [np.asarray(1.5, dt)])
        case(f"atleast_{n}d_vec{s}", f, [v])
        case(f"atleast_{n}d_mat{s}", f, [A])
    case(f"array_split{s}", lambda x: jnp.array_split(x, 3), [smooth((7,), dt)])
    case(f"array_split_axis1{s}", lambda x: jnp.array_split(x, 3, axis=1), [A])
    xg, yg = smooth((3,), dt, 3), smooth((2,), dt, 4)
    case(f"meshgrid_xy{s}", lambda a, b: jnp.meshgrid(a, b), [xg, yg])
    case(f"meshgrid_ij{s}", lambda a, b: jnp.meshgrid(a, b, indexing="ij"), [xg, yg])
    # No subnormals: XLA flushes them to zero on the CPU, which rjax does not (yet).
    sp = np.array([0.0, -0.0, 1.0, -2.5, INF, -INF, NAN, 1e-30, 3.0e38]).astype(dt)
    case(f"isinf{s}", jnp.isinf, [sp], grad=False)
    case(f"isneginf{s}", jnp.isneginf, [sp], grad=False)
    case(f"isposinf{s}", jnp.isposinf, [sp], grad=False)
    case(f"heaviside{s}", lambda x: jnp.heaviside(x, 0.5), [sp], grad=False)
    a1 = np.array([1.0, 1.0, NAN, INF, -INF, 0.0, 1e-9, 100.0]).astype(dt)
    b1 = np.array([1.0 + 1e-6, 1.001, NAN, INF, INF, 1e-9, 0.0, 100.001]).astype(dt)
    case(f"isclose{s}", lambda a, b: jnp.isclose(a, b), [a1, b1], grad=False)
    case(f"isclose_nan{s}", lambda a, b: jnp.isclose(a, b, 1e-3, 1e-6, equal_nan=True), [a1, b1], grad=False)
    case(f"allclose_false{s}", lambda a, b: jnp.allclose(a, b), [a1, b1], grad=False)
    case(f"allclose_true{s}", lambda a, b: jnp.allclose(a, b, 1e-2), [A, A * (1 + 1e-3)], grad=False)
    case(f"array_equal_true{s}", lambda a, b: jnp.array_equal(a, b), [A, A], grad=False)
    case(f"array_equal_false{s}", lambda a, b: jnp.array_equal(a, b), [A, A + 1e-3], grad=False)
    case(f"array_equal_shapes{s}", lambda a, b: jnp.array_equal(a, b), [A, A[:2]], grad=False)
    N = A.copy()
    N[0, 1] = NAN
    N[2, 3] = NAN
    allnan = np.full((2,), NAN, dt)
    for fn in ("nansum", "nanmean", "nanmax", "nanmin", "nanprod"):
        f = getattr(jnp, fn)
        case(f"{fn}_all{s}", lambda x, f=f: f(x), [N])
        case(f"{fn}_axis0{s}", lambda x, f=f: f(x, axis=0), [N])
        case(f"{fn}_axis1_keep{s}", lambda x, f=f: f(x, axis=1, keepdims=True), [N])
    case(f"nanmax_allnan{s}", lambda x: jnp.nanmax(x), [allnan], grad=False)
    case(f"nansum_allnan{s}", lambda x: jnp.nansum(x), [allnan], grad=False)
    case(f"nanmean_allnan{s}", lambda x: jnp.nanmean(x), [allnan], grad=False)
    case(f"average{s}", lambda x: jnp.average(x), [A])
    case(f"average_axis1{s}", lambda x: jnp.average(x, axis=1), [A])
    w4 = np.array([0.5, 1.0, 2.0, 0.25], dt)
    case(f"average_weights{s}", lambda x, w: jnp.average(x, axis=1, weights=w), [A, w4])
    case(f"average_weights_all{s}", lambda x, w: jnp.average(x, weights=w), [A, np.abs(A) + 0.5])
    case(f"ptp{s}", lambda x: jnp.ptp(x), [A])
    case(f"ptp_axis0{s}", lambda x: jnp.ptp(x, axis=0), [A])
    case(f"cov{s}", lambda x: jnp.cov(x), [A])
    case(f"cov_cols{s}", lambda x: jnp.cov(x, rowvar=False), [A])
    case(f"cov_vec{s}", lambda x: jnp.cov(x), [v])
    case(f"corrcoef{s}", lambda x: jnp.corrcoef(x), [A])
    case(f"corrcoef_cols{s}", lambda x: jnp.corrcoef(x, rowvar=False), [A])
    case(f"inner_vec{s}", jnp.inner, [v, v * 0.5 + 1])
    case(f"inner_mat{s}", jnp.inner, [A, B3])
    case(f"vdot{s}", jnp.vdot, [A, A * 0.5 + 1])
    case(f"kron{s}", jnp.kron, [smooth((2, 2), dt, 5), smooth((2, 3), dt, 6)])
    case(f"kron_vec_mat{s}", jnp.kron, [smooth((3,), dt, 5), smooth((2, 2), dt, 6)])
    case(f"cross{s}", jnp.cross, [smooth((2, 3), dt, 7), smooth((2, 3), dt, 8)])
    case(f"cross_bcast{s}", jnp.cross, [smooth((4, 3), dt, 7), smooth((3,), dt, 8)])
    case(f"polyval{s}", jnp.polyval, [smooth((4,), dt, 9), smooth((2, 3), dt, 10)])
    sig, ker = smooth((7,), dt, 11), smooth((3,), dt, 12)
    for mode in ("full", "same", "valid"):
        case(f"convolve_{mode}{s}", lambda a, b, m=mode: jnp.convolve(a, b, mode=m), [sig, ker])
        case(f"correlate_{mode}{s}", lambda a, b, m=mode: jnp.correlate(a, b, mode=m), [sig, ker])
    case(f"convolve_long_kernel{s}", lambda a, b: jnp.convolve(a, b, mode="same"), [ker, sig])
    bins = np.array([-1.0, 0.0, 0.5, 2.0]).astype(dt)
    xd = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.9, 2.0, 5.0, NAN]).astype(dt)
    case(f"digitize{s}", lambda x, b: jnp.digitize(x, b), [xd, bins], grad=False)
    case(f"digitize_right{s}", lambda x, b: jnp.digitize(x, b, right=True), [xd, bins], grad=False)
    case(f"digitize_desc{s}", lambda x, b: jnp.digitize(x, b), [xd, bins[::-1].copy()], grad=False)
    xp = np.array([0.0, 1.0, 2.5, 4.0]).astype(dt)
    fp = np.array([1.0, -1.0, 3.0, 0.5]).astype(dt)
    xi = np.array([-1.0, 0.0, 0.3, 1.0, 2.0, 3.9, 4.0, 7.0]).astype(dt)
    case(f"interp{s}", jnp.interp, [xi, xp, fp])
    case(f"interp_left_right{s}", lambda x, a, b: jnp.interp(x, a, b, left=-7.0, right=9.0), [xi, xp, fp])
    for fn in ("nanvar", "nanstd", "nanmedian"):
        f = getattr(jnp, fn)
        case(f"{fn}_all{s}", lambda x, f=f: f(x), [N])
        case(f"{fn}_axis0{s}", lambda x, f=f: f(x, axis=0), [N])
        case(f"{fn}_axis1_keep{s}", lambda x, f=f: f(x, axis=1, keepdims=True), [N])
    case(f"nanvar_ddof1{s}", lambda x: jnp.nanvar(x, axis=1, ddof=1), [N])
    case(f"nanstd_ddof3{s}", lambda x: jnp.nanstd(x, axis=1, ddof=3), [N], grad=False)
    case(f"nanvar_allnan{s}", lambda x: jnp.nanvar(x), [allnan], grad=False)
    case(f"nanmedian_allnan{s}", lambda x: jnp.nanmedian(x), [allnan], grad=False)
    case(f"nanmedian_axes01{s}", lambda x: jnp.nanmedian(x, axis=(0, 1)), [B3])
    q3 = np.array([0.1, 0.5, 0.9], dt)
    case(f"nanquantile_axis1{s}", lambda x: jnp.nanquantile(x, 0.3, axis=1), [N])
    case(f"nanquantile_vec_q{s}", lambda x: jnp.nanquantile(x, q3, axis=0, keepdims=True), [N])
    case(f"nanpercentile{s}", lambda x: jnp.nanpercentile(x, 75.0), [N])
    H = smooth((20,), dt, 13)
    Hw = (np.abs(smooth((20,), dt, 14)) + 0.1).astype(dt)
    case(f"histogram{s}", lambda x: jnp.histogram(x, 5), [H])
    case(f"histogram_range{s}", lambda x: jnp.histogram(x, 4, range=(-1.0, 1.0)), [H])
    case(f"histogram_weights{s}", lambda x, w: jnp.histogram(x, 3, weights=w), [H, Hw])
    case(f"histogram_density{s}", lambda x: jnp.histogram(x, 6, density=True), [H])
    edges = np.array([-2.0, -0.5, 0.0, 0.3, 2.0], dt)
    case(f"histogram_edges{s}", lambda x, e: jnp.histogram(x, e), [H, edges])
    case(f"histogram_flat{s}", lambda x: jnp.histogram(x, 2), [np.full((4,), 0.5, dt)])
    Z = np.array([[0.0, 1.5, 0.0], [NAN, 0.0, -2.0]], dt)
    case(f"nonzero{s}", lambda x: jnp.nonzero(x), [Z], grad=False)
    case(f"nonzero_size{s}", lambda x: jnp.nonzero(x, size=5, fill_value=-1), [Z], grad=False)
    case(f"nonzero_size_short{s}", lambda x: jnp.nonzero(x, size=2), [Z], grad=False)
    case(f"argwhere{s}", lambda x: jnp.argwhere(x), [Z], grad=False)
    case(f"argwhere_size{s}", lambda x: jnp.argwhere(x, size=4, fill_value=7), [Z], grad=False)
    case(f"flatnonzero{s}", lambda x: jnp.flatnonzero(x), [Z], grad=False)
    case(f"flatnonzero_size{s}", lambda x: jnp.flatnonzero(x, size=6), [Z], grad=False)
    U = smooth((6,), dt, 15)
    V = smooth((6,), dt, 16)
    U[1] = NAN
    V[3] = NAN
    case(f"fmax{s}", jnp.fmax, [U, V])
    case(f"fmin{s}", jnp.fmin, [U, V])
    B = smooth((3, 4), dt, 17)
    case(f"hypot{s}", jnp.hypot, [A, B])
    P = (np.abs(A) + 0.1).astype(dt)
    case(f"log2{s}", jnp.log2, [P])
    case(f"log10{s}", jnp.log10, [P])
    case(f"logaddexp2{s}", jnp.logaddexp2, [A, B])
    case(f"deg2rad{s}", jnp.deg2rad, [A])
    case(f"radians{s}", jnp.radians, [A])
    case(f"rad2deg{s}", jnp.rad2deg, [A])
    case(f"degrees{s}", jnp.degrees, [A])
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.7]).astype(dt)
    case(f"rint{s}", jnp.rint, [halves])
    case(f"trunc{s}", jnp.trunc, [halves])
    case(f"sinc{s}", jnp.sinc, [np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 2.3]).astype(dt)])
    case(f"fabs{s}", jnp.fabs, [A])
    case(f"positive{s}", jnp.positive, [A])
    case(f"divmod{s}", jnp.divmod, [A * 3, (np.abs(B) + 0.5).astype(dt)])
    S = np.sin(A).astype(dt)
    for fn in ("absolute", "arcsin", "arccos", "arctan", "arcsinh", "arctanh", "around", "amax", "amin"):
        case(f"{fn}{s}", getattr(jnp, fn), [S * 0.9])
    case(f"arccosh{s}", jnp.arccosh, [(P + 1).astype(dt)])
    case(f"arctan2{s}", jnp.arctan2, [A, B])
    case(f"power{s}", jnp.power, [P, B])
    case(f"true_divide{s}", jnp.true_divide, [A, P])
    case(f"mod{s}", jnp.mod, [A * 3, P])
    case(f"concat{s}", lambda a, b: jnp.concat([a, b], axis=1), [A, B])
    case(f"count_nonzero{s}", lambda x: jnp.count_nonzero(x, axis=1, keepdims=True), [np.where(A > 0.2, A, 0).astype(dt)], grad=False)
    case(f"nancumsum{s}", lambda x: jnp.nancumsum(x, axis=1), [N])
    case(f"nancumsum_flat{s}", lambda x: jnp.nancumsum(x), [N])
    case(f"nancumprod{s}", lambda x: jnp.nancumprod(x, axis=0), [N])
    case(f"nanargmax{s}", lambda x: jnp.nanargmax(x), [N], grad=False)
    case(f"nanargmax_axis0{s}", lambda x: jnp.nanargmax(x, axis=0), [N], grad=False)
    case(f"nanargmin_axis1_keep{s}", lambda x: jnp.nanargmin(x, axis=1, keepdims=True), [N], grad=False)
    case(f"nanargmin_allnan{s}", lambda x: jnp.nanargmin(x), [allnan], grad=False)
    case(f"cumulative_sum{s}", lambda x: jnp.cumulative_sum(x, axis=1, include_initial=True), [A])
    case(f"cumulative_sum_vec{s}", lambda x: jnp.cumulative_sum(x), [v])
    case(f"cumulative_prod{s}", lambda x: jnp.cumulative_prod(x, axis=0, include_initial=True), [A])
    case(f"fliplr{s}", jnp.fliplr, [A])
    case(f"flipud{s}", jnp.flipud, [A])
    case(f"dstack{s}", lambda a, b: jnp.dstack([a, b]), [v, v * 2])
    case(f"dstack_mat{s}", lambda a, b: jnp.dstack([a, b]), [A, B])
    case(f"hsplit{s}", lambda x: jnp.hsplit(x, 2), [A])
    case(f"vsplit{s}", lambda x: jnp.vsplit(x, 3), [A])
    case(f"dsplit{s}", lambda x: jnp.dsplit(x, 2), [B3])
    case(f"unstack{s}", lambda x: jnp.unstack(x, axis=1), [A])
ints = np.array([0, 3, 1, 3, 5, 0, 3], np.int32)
case("bincount", lambda x: jnp.bincount(x, length=7), [ints], grad=False)
case("bincount_short", lambda x: jnp.bincount(x, length=3), [ints], grad=False)
wts = np.array([0.5, 1.0, 2.0, -1.0, 0.25, 4.0, 1.5], np.float32)
case("bincount_weights", lambda x, w: jnp.bincount(x, w, length=6), [ints, wts])
im = np.array([[3, -1, 0], [7, 2, 2]], np.int32)
case("diag_int32", lambda x: jnp.diag(x), [im], grad=False)
case("tril_int32", lambda x: jnp.tril(x), [im], grad=False)
case("roll_int32", lambda x: jnp.roll(x, 1, 1), [im], grad=False)
case("ptp_int32", lambda x: jnp.ptp(x, axis=1), [im], grad=False)
case("trace_int32", lambda x: jnp.trace(x), [im], grad=False)
case("cross_int32", jnp.cross, [np.array([1, 2, 3], np.int32), np.array([4, -5, 6], np.int32)], grad=False)
case("kron_int32", jnp.kron, [im, np.array([[1, 2]], np.int32)], grad=False)
case("isinf_int32", jnp.isinf, [im], grad=False)
case("average_int32", lambda x: jnp.average(x, axis=0), [im], grad=False)
case("nansum_int32", lambda x: jnp.nansum(x, axis=0), [im], grad=False)
im2 = np.array([[5, 6, -7], [1, 12, 3]], np.int32)
for fn in ("bitwise_and", "bitwise_or", "bitwise_xor", "mod"):
    case(f"{fn}_int32", getattr(jnp, fn), [im, im2], grad=False)
for fn in ("bitwise_not", "bitwise_invert", "invert", "trunc", "positive"):
    case(f"{fn}_int32", getattr(jnp, fn), [im], grad=False)
# Integers become the default float: float32 without x64 (this script runs with x64 on).
case("rint_int32", lambda x: jnp.rint(x).astype(jnp.float32), [im], grad=False)
case("fabs_int32", lambda x: jnp.fabs(x).astype(jnp.float32), [im], grad=False)
case("count_nonzero_int32", lambda x: jnp.count_nonzero(x), [im], grad=False)
case("nanargmax_int32", lambda x: jnp.nanargmax(x, axis=1), [im], grad=False)
case("tri", lambda: jnp.tri(3, 4, 1, dtype=jnp.float32), [], grad=False)
case("tri_square", lambda: jnp.tri(3, k=-1, dtype=jnp.float32), [], grad=False)
case("tril_indices", lambda: jnp.tril_indices(3, 1, 4), [], grad=False)
case("triu_indices", lambda: jnp.triu_indices(4, -1), [], grad=False)
case("diag_indices", lambda: jnp.diag_indices(3, 2), [], grad=False)
case("identity", lambda: jnp.identity(3, dtype=jnp.float32), [], grad=False)
case("empty", lambda: jnp.empty((2, 3), dtype=jnp.float32), [], grad=False)
case("nanvar_int32", lambda x: jnp.nanvar(x, axis=0), [im], grad=False)
case("nanmedian_int32", lambda x: jnp.nanmedian(x, axis=1), [im], grad=False)
case("nonzero_int32", lambda x: jnp.nonzero(x, size=6, fill_value=9), [im], grad=False)
case("nonzero_bool", lambda x: jnp.nonzero(x > 1), [im], grad=False)
case("histogram_int32", lambda x: jnp.histogram(x, 3), [im], grad=False)


# jax.lax: slices at traced positions, general padding, selection, window reductions.
from jax import lax

I = lambda v: np.asarray(v, np.int32)
for dt in ("float32", "float64"):
    s = f"_{dt}"
    A = smooth((3, 4), dt)
    case(f"lax_dynamic_slice{s}", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), [A, I(1), I(2)])
    case(f"lax_dynamic_slice_clamped{s}", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), [A, I(2), I(-3)])
    upd = smooth((2, 2), dt, 3)
    case(f"lax_dynamic_update_slice{s}", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), [A, upd, I(1), I(3)])
    case(f"lax_dynamic_update_slice_neg{s}", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), [A, upd, I(-2), I(1)])
    case(f"lax_dynamic_index_in_dim{s}", lambda x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False), [A, I(2)])
    case(f"lax_dynamic_slice_in_dim{s}", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 0), [A, I(5)])
    row = smooth((4,), dt, 4)
    case(f"lax_dynamic_update_index_in_dim{s}", lambda x, r, i: lax.dynamic_update_index_in_dim(x, r, i, 0), [A, row, I(1)])
    case(f"lax_slice{s}", lambda x: lax.slice(x, (0, 1), (3, 4), (2, 2)), [A])
    case(f"lax_pad{s}", lambda x: lax.pad(x, np.asarray(0.5, dt), [(1, -1, 1), (0, 2, 0)]), [A])
    case(f"lax_pad_interior{s}", lambda x: lax.pad(x, np.asarray(-1.0, dt), [(-1, 2, 2), (2, -2, 1)]), [A])
    case(f"lax_clamp{s}", lambda x: lax.clamp(np.asarray(-0.5, dt), x, np.asarray(0.7, dt)), [A])
    which = I([[0, 1, 2, 1], [2, 2, 0, 0], [1, 0, 1, 2]])
    case(f"lax_select_n{s}", lambda w, a, b, c: lax.select_n(w, a, b, c), [which, A, A * 2, -A])
    X = smooth((2, 3, 5, 6), dt, 5)
    case(f"lax_reduce_window_sum{s}", lambda x: lax.reduce_window(x, np.asarray(0, dt), lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"), [X])
    case(f"lax_reduce_window_max_same{s}", lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"), [X])
    case(f"lax_reduce_window_min_explicit{s}", lambda x: lax.reduce_window(x, np.inf, lax.min, (1, 1, 2, 3), (1, 1, 1, 2), [(0, 0), (0, 0), (1, 0), (0, 1)]), [X])
    case(f"lax_max_pool{s}", lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"), [X])
    case(f"lax_avg_pool{s}", lambda x: lax.reduce_window(x, np.asarray(0, dt), lax.add, (1, 1, 3, 3), (1, 1, 1, 1), "SAME") / 9, [X])
    C = smooth((5, 3), dt, 6)
    for red in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        f = getattr(lax, red)
        case(f"lax_{red}{s}", lambda x, f=f: f(x, axis=0), [C])
        case(f"lax_{red}_reverse{s}", lambda x, f=f: f(x, axis=1, reverse=True), [C])
    L = smooth((7, 2), dt, 7)
    case(f"lax_associative_scan_add{s}", lambda x: lax.associative_scan(jnp.add, x), [L])
    case(f"lax_associative_scan_max_axis1{s}", lambda x: lax.associative_scan(jnp.maximum, x, axis=1), [smooth((2, 6), dt, 8)])
    # A linear recurrence h_t = a_t h_{t-1} + b_t as a scan of affine maps (a pytree of two).
    def affine(p, q):
        return (p[0] * q[0], p[1] * q[0] + q[1])
    A8, B8 = smooth((8,), dt, 9) * 0.5, smooth((8,), dt, 10)
    case(f"lax_associative_scan_affine{s}", lambda a, b: lax.associative_scan(affine, (a, b)), [A8, B8])
    case(f"lax_associative_scan_affine_reverse{s}", lambda a, b: lax.associative_scan(affine, (a, b), reverse=True), [A8, B8])
    case(f"lax_associative_scan_one{s}", lambda x: lax.associative_scan(jnp.add, x), [smooth((1, 3), dt, 11)])
XI = (np.arange(30).reshape(5, 6) * 7 % 11 - 5).astype(np.int32)
case("lax_reduce_window_max_int32", lambda x: lax.reduce_window(x, np.int32(np.iinfo(np.int32).min), lax.max, (2, 2), (1, 2), "SAME"), [XI], grad=False)
case("lax_reduce_window_min_uint8", lambda x: lax.reduce_window(x, np.uint8(255), lax.min, (3, 2), (2, 2), "SAME"), [XI.astype(np.uint8)], grad=False)
case("lax_cumsum_int32", lambda x: lax.cumsum(x, axis=1, reverse=True), [XI], grad=False)
case("lax_dynamic_slice_int32", lambda x, i: lax.dynamic_slice(x, (i, i), (2, 3)), [XI, I(4)], grad=False)

json.dump({"jax_version": jax.__version__, "cases": cases}, __import__("sys").stdout, indent=None)
