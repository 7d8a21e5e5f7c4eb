"""Computes tests/data/sorting.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/sorting.py > tests/data/sorting.json  # with jax[cpu]

Sorting, searching and order statistics: `jnp.sort`/`argsort` (ties, NaNs of both signs,
signed zeros, any axis, descending), `lax.top_k`, `jnp.searchsorted`, `jnp.diff`,
`jnp.unique(size=)`, `jnp.median`/`quantile`/`percentile`, their gradients (first and second
order) and `vmap`, in float32 and float64. Index outputs are written as int32, the dtype JAX
gives them without `jax_enable_x64` (enabled here for the float64 cases).
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
                data.append("-NaN" if np.signbit(v) else "NaN")
            elif np.isinf(v):
                data.append("Infinity" if v > 0 else "-Infinity")
            else:
                data.append(float(v))
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


def idx(a):
    """Index outputs as JAX's 32-bit mode gives them."""
    return leaf(np.asarray(a).astype(np.int32))


NEG_NAN = -np.float64(np.nan)
# Ties, NaNs of both signs, signed zeros and infinities.
X1 = np.array([3.0, np.nan, -0.0, 0.0, -np.inf, 1.0, NEG_NAN, np.inf, 0.0, -0.0, 1.0, 2.5])
X2 = np.array([[2.0, 1.0, 2.0, -1.0], [0.5, np.nan, 0.5, 3.0], [-2.0, 1.0, 1.0, 1.0]])
X3 = np.arange(24.0).reshape(2, 3, 4) % 7 - 3.0
# Smooth points (no ties) for gradients, and points with ties.
S = np.array([[0.3, -1.2, 2.2, 0.7, -0.4], [1.1, 0.9, -2.5, 0.2, 1.7], [-0.8, 0.05, 0.6, -1.9, 2.8]])
T = np.array([[1.0, 2.0, 1.0, 3.0, 2.0], [0.5, 0.5, 0.5, -1.0, 4.0], [2.0, -2.0, 0.0, 2.0, 1.0]])
INTS = np.array([[3, 1, 3, -2, 0], [5, 5, -7, 1, 5]], np.int32)


def weights(shape, dt):
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5).astype(dt)


cases = {}


def sort_cases(name, x):
    x = jnp.asarray(x)
    c = {"x": leaf(x)}
    axes = [None] + list(range(-x.ndim, x.ndim))
    for ax in axes:
        key = "none" if ax is None else str(ax)
        for desc in (False, True):
            d = "desc" if desc else "asc"
            c[f"sort_{key}_{d}"] = leaf(jnp.sort(x, axis=ax, descending=desc))
            c[f"argsort_{key}_{d}"] = idx(jnp.argsort(x, axis=ax, descending=desc))
    cases[name] = c


for dt in ("float32", "float64"):
    sort_cases(f"sort1_{dt}", X1.astype(dt))
    sort_cases(f"sort2_{dt}", X2.astype(dt))
    sort_cases(f"sort3_{dt}", X3.astype(dt))
sort_cases("sort_int32", INTS)
sort_cases("sort_uint32", np.array([[4, 0, 4294967295, 7], [1, 1, 0, 2]], np.uint32))
sort_cases("sort_bool", np.array([True, False, True, False, False]))

# top_k: last axis and axis 0.
for dt in ("float32", "float64"):
    x = jnp.asarray(np.stack([X1, X1[::-1]]).astype(dt))
    c = {"x": leaf(x)}
    for k in (0, 1, 5, 12):
        v, i = jax.lax.top_k(x, k)
        c[f"values_{k}"], c[f"indices_{k}"] = leaf(v), idx(i)
    v, i = jax.lax.top_k(x, 2, axis=0)
    c["values_axis0"], c["indices_axis0"] = leaf(v), idx(i)
    cases[f"top_k_{dt}"] = c
v, i = jax.lax.top_k(jnp.asarray(INTS), 3)
cases["top_k_int32"] = {"x": leaf(INTS), "values_3": leaf(v), "indices_3": idx(i)}

# searchsorted.
for dt in ("float32", "float64"):
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.5, np.inf, np.nan]).astype(dt)
    v = np.array([[-np.inf, -2.0, -1.0, -0.0, 0.0, 0.5], [1.0, 2.5, 3.0, np.inf, np.nan, NEG_NAN]]).astype(dt)
    unsorted = np.array([3.0, 1.0, 2.0, 0.0, 5.0, 4.0]).astype(dt)
    cases[f"searchsorted_{dt}"] = {
        "a": leaf(a), "v": leaf(v), "unsorted": leaf(unsorted),
        "left": idx(jnp.searchsorted(a, v)),
        "right": idx(jnp.searchsorted(a, v, side="right")),
        "unsorted_left": idx(jnp.searchsorted(unsorted, v)),
        "unsorted_right": idx(jnp.searchsorted(unsorted, v, side="right")),
        "empty": idx(jnp.searchsorted(a[:0], v)),
    }
ai = np.array([1, 2, 2, 5], np.int32)
vf = np.array([2.0, 2.5, -1.0, 5.0], np.float32)
cases["searchsorted_mixed"] = {
    "a": leaf(ai), "v": leaf(vf),
    "left": idx(jnp.searchsorted(ai, vf)), "right": idx(jnp.searchsorted(ai, vf, side="right")),
}

# diff.
for dt in ("float32", "float64"):
    x = X3.astype(dt) * (X3.astype(dt) + 0.5)
    cases[f"diff_{dt}"] = {
        "x": leaf(x),
        "n1_last": leaf(jnp.diff(x)),
        "n2_axis0": leaf(jnp.diff(x, n=2, axis=0)),
        "n3_axis1": leaf(jnp.diff(x, n=3, axis=1)),
        "n5_last": leaf(jnp.diff(x, n=5, axis=-1)),
    }
b = np.array([[True, False, False, True], [True, True, False, False]])
cases["diff_bool"] = {"x": leaf(b), "n1_last": leaf(jnp.diff(b)), "n2_axis0": leaf(jnp.diff(b, n=1, axis=0))}
u = np.array([1, 4, 9, 3], np.uint32)
cases["diff_uint32"] = {"x": leaf(u), "n1_last": leaf(jnp.diff(u)), "n2_last": leaf(jnp.diff(u, n=2))}
cases["diff_int32"] = {"x": leaf(INTS), "n1_last": leaf(jnp.diff(INTS)), "n1_axis0": leaf(jnp.diff(INTS, axis=0))}

# unique with a static size.
for dt in ("float32", "float64"):
    x = np.array([[3.0, 1.0, np.nan, 1.0], [np.nan, 2.0, -0.0, 0.0]]).astype(dt)
    cases[f"unique_{dt}"] = {
        "x": leaf(x),
        "size8": leaf(jnp.unique(x, size=8)),
        "size8_fill": leaf(jnp.unique(x, size=8, fill_value=-1.5)),
        "size2": leaf(jnp.unique(x, size=2)),
        "size0": leaf(jnp.unique(x, size=0)),
    }
cases["unique_int32"] = {
    "x": leaf(INTS),
    "size9": leaf(jnp.unique(INTS, size=9)),
    "size9_fill": leaf(jnp.unique(INTS, size=9, fill_value=100)),
    "all": leaf(jnp.unique(INTS)),
}

# median, quantile, percentile: (name, function of x).
Q = np.array([0.0, 0.25, 0.5, 0.9, 1.0])
P = np.array([5.0, 50.0, 99.0])
STATS = {
    "median_all": lambda x: jnp.median(x),
    "median_axis0": lambda x: jnp.median(x, axis=0),
    "median_axis1_keep": lambda x: jnp.median(x, axis=1, keepdims=True),
    "median_all_keep": lambda x: jnp.median(x, keepdims=True),
    "quantile_scalar": lambda x: jnp.quantile(x, 0.3),
    "quantile_axis1": lambda x: jnp.quantile(x, 0.3, axis=1),
    "quantile_vec_axis0": lambda x: jnp.quantile(x, Q.astype(x.dtype), axis=0),
    "quantile_vec_axis1_keep": lambda x: jnp.quantile(x, Q.astype(x.dtype), axis=1, keepdims=True),
    "quantile_vec_all": lambda x: jnp.quantile(x, Q.astype(x.dtype)),
    "percentile_vec_last": lambda x: jnp.percentile(x, P.astype(x.dtype), axis=-1),
    "percentile_scalar_axis0_keep": lambda x: jnp.percentile(x, 37.5, axis=0, keepdims=True),
}
STATS3 = {
    "median_axes02": lambda x: jnp.median(x, axis=(0, 2)),
    "median_axes02_keep": lambda x: jnp.median(x, axis=(0, 2), keepdims=True),
    "quantile_vec_axes12": lambda x: jnp.quantile(x, Q.astype(x.dtype), axis=(1, 2)),
    "quantile_vec_axes20_keep": lambda x: jnp.quantile(x, Q.astype(x.dtype), axis=(2, 0), keepdims=True),
}
for dt in ("float32", "float64"):
    for label, x in (("smooth", S), ("ties", T), ("nan", X2)):
        x = jnp.asarray(x.astype(dt))
        c = {"x": leaf(x)}
        for name, f in STATS.items():
            out = f(x)
            c[name] = leaf(out)
            if label != "nan":
                w = weights(out.shape, dt)
                c[name + "_weights"] = leaf(w)
                c[name + "_grad"] = leaf(jax.grad(lambda v: (f(v) * w).sum())(x))
        cases[f"stats_{label}_{dt}"] = c
    x3 = jnp.asarray((np.arange(24.0).reshape(2, 3, 4) * 0.37 % 1.3).astype(dt))
    c = {"x": leaf(x3)}
    for name, f in STATS3.items():
        out = f(x3)
        w = weights(out.shape, dt)
        c[name], c[name + "_weights"] = leaf(out), leaf(w)
        c[name + "_grad"] = leaf(jax.grad(lambda v: (f(v) * w).sum())(x3))
    cases[f"stats3_{dt}"] = c
    q = jnp.asarray(np.array([0.1, 0.35, 0.8]).astype(dt))
    xs = jnp.asarray(S.astype(dt))
    cases[f"quantile_q_grad_{dt}"] = {
        "x": leaf(xs), "q": leaf(q),
        "grad_q": leaf(jax.grad(lambda q: jnp.quantile(xs, q, axis=1).sum())(q)),
    }
ints = np.array([[4, 1, 3, 2], [7, 7, 0, 5]], np.int32)
cases["stats_int32"] = {
    "x": leaf(ints),
    "median_all": leaf(jnp.median(ints)),
    "median_axis1": leaf(jnp.median(ints, axis=1)),
    "percentile_axis0": leaf(jnp.percentile(ints, 40, axis=0)),
}

# Gradients of sort and top_k (weighted sums), second derivatives, and vmap.
for dt in ("float32", "float64"):
    for label, x in (("smooth", S), ("ties", T)):
        x = jnp.asarray(x.astype(dt))
        w = weights(x.shape, dt)
        wk = weights((3, 3), dt)
        wk0 = weights((2, 5), dt)
        cubed = lambda v: (jnp.sort(v, axis=0) ** 3 * w).sum()
        cases[f"grad_{label}_{dt}"] = {
            "x": leaf(x), "w": leaf(w), "wk": leaf(wk), "wk0": leaf(wk0),
            "sort_last": leaf(jax.grad(lambda v: (jnp.sort(v) * w).sum())(x)),
            "sort_axis0_desc": leaf(jax.grad(lambda v: (jnp.sort(v, axis=0, descending=True) * w).sum())(x)),
            "sort_flat": leaf(jax.grad(lambda v: (jnp.sort(v, axis=None) * w.ravel()).sum())(x)),
            "top_k": leaf(jax.grad(lambda v: (jax.lax.top_k(v, 3)[0] * wk).sum())(x)),
            "top_k_axis0": leaf(jax.grad(lambda v: (jax.lax.top_k(v, 2, axis=0)[0] * wk0).sum())(x)),
            "sort_cubed_grad2": leaf(jax.grad(lambda v: jax.grad(cubed)(v).sum())(x)),
            "diff_grad": leaf(jax.grad(lambda v: (jnp.diff(v, n=2) ** 2).sum())(x)),
            "unique_grad": leaf(jax.grad(lambda v: (jnp.unique(v, size=6) * jnp.arange(6.0)).sum())(x)),
        }
    # vmap over axis 1 of a (5, 3) array: each example is a column.
    x = jnp.asarray(S.T.astype(dt))
    xt = jnp.asarray(T.T.astype(dt))
    sorted_rows = jnp.sort(jnp.asarray(S.astype(dt)), axis=1)
    cases[f"vmap_{dt}"] = {
        "x": leaf(x), "xt": leaf(xt), "sorted_rows": leaf(sorted_rows),
        "sort": leaf(jax.vmap(jnp.sort, in_axes=1)(x)),
        "argsort_desc": idx(jax.vmap(lambda r: jnp.argsort(r, descending=True), in_axes=1)(xt)),
        "top_k_values": leaf(jax.vmap(lambda r: jax.lax.top_k(r, 2)[0], in_axes=1)(xt)),
        "top_k_indices": idx(jax.vmap(lambda r: jax.lax.top_k(r, 2)[1], in_axes=1)(xt)),
        "median": leaf(jax.vmap(jnp.median, in_axes=1)(xt)),
        "quantile_q": leaf(jax.vmap(lambda q: jnp.quantile(xt, q, axis=0))(jnp.asarray(np.array([0.2, 0.5, 0.7]).astype(dt)))),
        "searchsorted_both": idx(jax.vmap(jnp.searchsorted)(sorted_rows, x.T[:, :2])),
        "searchsorted_a": idx(jax.vmap(lambda a: jnp.searchsorted(a, jnp.asarray(np.array([0.0, 1.0]).astype(dt))))(sorted_rows)),
        "searchsorted_v": idx(jax.vmap(lambda v: jnp.searchsorted(sorted_rows[0], v, side="right"), in_axes=1)(x)),
        "unique": leaf(jax.vmap(lambda r: jnp.unique(r, size=4, fill_value=9.0), in_axes=1)(xt)),
        "diff": leaf(jax.vmap(lambda r: jnp.diff(r, n=2), in_axes=1)(xt)),
        "grad_median": leaf(jax.vmap(jax.grad(jnp.median), in_axes=1)(xt)),
        "grad_sort": leaf(jax.vmap(jax.grad(lambda r: (jnp.sort(r) * jnp.arange(r.shape[0])).sum()), in_axes=1)(xt)),
    }

print(json.dumps({"jax_version": jax.__version__, "cases": cases}))
