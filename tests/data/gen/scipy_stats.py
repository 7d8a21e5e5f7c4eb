"""Computes tests/data/scipy_stats.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/scipy_stats.py > tests/data/scipy_stats.json  # with jax[cpu]

For each `jax.scipy.stats` function rjax has: values at points inside the support, the
gradient of their sum with respect to every operand (the point and each parameter, passed as
arrays of the point's shape) and `vmap` over all operands, in float32 and float64; and values
only at the edges (outside the support, invalid parameters, NaN), where derivatives are not
meaningful.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.scipy import stats


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
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


nan, inf = np.nan, np.inf

# name -> (function, operands inside the support, operands at the edges or None).
CASES = {
    "gamma_logpdf": (stats.gamma.logpdf, [
        [0.3, 1.0, 2.5, 4.0, 7.0, 0.05],     # x
        [0.5, 1.0, 2.0, 3.5, 5.0, 1.5],      # a
        [0.0, 0.1, -0.5, 0.5, 1.0, 0.0],     # loc
        [1.0, 2.0, 0.5, 1.5, 3.0, 0.2],      # scale
    ], [[-1.0, 0.0, 0.0, 2.0], [2.0, 1.0, 0.5, 2.0], [0.0, 0.0, 0.0, 3.0], [1.0, 1.0, 1.0, 1.0]]),
    "beta_logpdf": (stats.beta.logpdf, [
        [0.1, 0.3, 0.5, 0.8, 0.95, 1.4],     # x
        [0.5, 2.0, 1.0, 3.0, 5.0, 2.5],      # a
        [0.7, 2.0, 1.5, 1.0, 0.9, 4.0],      # b
        [0.0, 0.0, -0.5, 0.2, 0.0, 1.0],     # loc
        [1.0, 1.0, 2.0, 0.7, 1.0, 0.5],      # scale
    ], [[-0.5, 1.5, 0.0, 1.0, 0.5, 0.5], [2.0, 2.0, 1.0, 2.0, -1.0, 2.0],
        [2.0, 2.0, 3.0, 1.0, 2.0, 2.0], [0.0] * 6, [1.0, 1.0, 1.0, 1.0, 1.0, -1.0]]),
    "poisson_logpmf": (stats.poisson.logpmf, [
        [0.0, 1.0, 2.0, 5.0, 10.0, 3.0],     # k
        [0.5, 1.0, 2.0, 4.0, 8.0, 3.0],      # mu
        [0.0, 0.0, 1.0, 0.0, 2.0, -1.0],     # loc
    ], [[2.5, -1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0], [0.0, 0.0, 2.0, 0.0]]),
    "bernoulli_logpmf": (stats.bernoulli.logpmf, [
        [0.0, 1.0, 0.0, 1.0, 2.0],           # k
        [0.2, 0.7, 0.5, 0.9, 0.35],          # p
        [0.0, 0.0, 0.0, 0.0, 1.0],           # loc
    ], [[-1.0, 2.0, 0.5, 0.0, 1.0], [0.3, 0.3, 0.3, 0.0, 1.0], [0.0] * 5]),
    "bernoulli_cdf": (stats.bernoulli.cdf, [
        [-1.0, 0.0, 0.5, 1.0, 2.5],          # k
        [0.3, 0.6, 0.25, 0.9, 0.5],          # p
    ], [[0.5, nan, 0.5, 0.5, -2.0], [1.5, 0.5, nan, -0.1, 0.0]]),
    "bernoulli_ppf": (stats.bernoulli.ppf, [
        [0.1, 0.5, 0.7, 0.95, 0.3],          # q
        [0.3, 0.6, 0.25, 0.9, 0.5],          # p
    ], [[0.5, nan, 0.5, 1.5, -0.1, 0.0, 1.0], [1.5, 0.5, nan, 0.5, 0.5, 0.5, 0.5]]),
    "t_logpdf": (stats.t.logpdf, [
        [-3.0, -0.5, 0.0, 1.2, 4.0, 10.0],   # x
        [1.0, 2.5, 5.0, 0.7, 30.0, 3.0],     # df
        [0.0, 0.5, -1.0, 0.0, 1.0, 2.0],     # loc
        [1.0, 2.0, 0.5, 1.5, 1.0, 3.0],      # scale
    ], None),
    "uniform_logpdf": (stats.uniform.logpdf, [
        [0.5, 1.0, -0.3, 2.9],               # x
        [0.0, 0.5, -1.0, 2.0],               # loc
        [1.0, 2.0, 3.0, 0.5],                # scale
    ], [[-0.5, 1.5, 0.0, 1.0, nan], [0.0] * 5, [1.0] * 5]),
    "uniform_cdf": (stats.uniform.cdf, [
        [0.5, 1.0, -0.3, 2.9],
        [0.0, 0.5, -1.0, 2.0],
        [1.0, 2.0, 3.0, 1.5],
    ], [[-0.5, 1.5, 0.0, 1.0, nan], [0.0] * 5, [1.0] * 5]),
    "uniform_ppf": (stats.uniform.ppf, [
        [0.1, 0.5, 0.75, 0.99],              # q
        [0.0, 0.5, -1.0, 2.0],
        [1.0, 2.0, 3.0, 1.5],
    ], [[-0.1, 1.1, nan, 0.0, 1.0], [0.0] * 5, [2.0] * 5]),
    "laplace_logpdf": (stats.laplace.logpdf, [
        [-3.0, -0.5, 0.3, 1.2, 4.0],
        [0.0, 0.5, -1.0, 0.0, 1.0],
        [1.0, 2.0, 0.5, 1.5, 1.0],
    ], [[0.0, 1.0], [0.0, 1.0], [1.0, 2.0]]),
    "laplace_cdf": (stats.laplace.cdf, [
        [-3.0, -0.5, 0.3, 1.2, 40.0],
        [0.0, 0.5, -1.0, 0.0, 1.0],
        [1.0, 2.0, 0.5, 1.5, 1.0],
    ], [[0.0, 1.0, -800.0], [0.0, 1.0, 0.0], [1.0, 2.0, 1.0]]),
    "logistic_logpdf": (stats.logistic.logpdf, [
        [-30.0, -0.5, 0.3, 1.2, 4.0, 100.0],
        [0.0, 0.5, -1.0, 0.0, 1.0, 0.0],
        [1.0, 2.0, 0.5, 1.5, 1.0, 1.0],
    ], None),
    "logistic_cdf": (stats.logistic.cdf, [
        [-30.0, -0.5, 0.3, 1.2, 4.0, 100.0],
        [0.0, 0.5, -1.0, 0.0, 1.0, 0.0],
        [1.0, 2.0, 0.5, 1.5, 1.0, 1.0],
    ], None),
    "logistic_sf": (stats.logistic.sf, [
        [-30.0, -0.5, 0.3, 1.2, 4.0, 100.0],
        [0.0, 0.5, -1.0, 0.0, 1.0, 0.0],
        [1.0, 2.0, 0.5, 1.5, 1.0, 1.0],
    ], None),
    "logistic_ppf": (stats.logistic.ppf, [
        [0.01, 0.2, 0.5, 0.7, 0.999],
        [0.0, 0.5, -1.0, 0.0, 1.0],
        [1.0, 2.0, 0.5, 1.5, 1.0],
    ], [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]),
    "logistic_isf": (stats.logistic.isf, [
        [0.01, 0.2, 0.5, 0.7, 0.999],
        [0.0, 0.5, -1.0, 0.0, 1.0],
        [1.0, 2.0, 0.5, 1.5, 1.0],
    ], [[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]]),
    "norm_sf": (stats.norm.sf, [
        [-3.0, -0.5, 0.3, 1.2, 4.0, 15.0],
        [0.0, 0.5, -1.0, 0.0, 1.0, 0.0],
        [1.0, 2.0, 0.5, 1.5, 1.0, 1.0],
    ], None),
}
# pdf/pmf are exp of the log densities; check them on the same operands.
for dist, log_name, name in [("gamma", "logpdf", "pdf"), ("beta", "logpdf", "pdf"),
                             ("poisson", "logpmf", "pmf"), ("bernoulli", "logpmf", "pmf"),
                             ("t", "logpdf", "pdf"), ("uniform", "logpdf", "pdf"),
                             ("laplace", "logpdf", "pdf"), ("logistic", "logpdf", "pdf")]:
    _, ops, edges = CASES[f"{dist}_{log_name}"]
    CASES[f"{dist}_{name}"] = (getattr(getattr(stats, dist), name), ops, edges)


def spd(rng, n, batch):
    a = rng.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


cases = {}
for dt in ("float32", "float64"):
    for name, (f, ops, edges) in CASES.items():
        args = [jnp.asarray(np.array(o, dt)) for o in ops]
        grads = jax.grad(lambda *a: f(*a).sum(), argnums=tuple(range(len(args))))(*args)
        cases[f"{name}_{dt}"] = {
            "args": [leaf(a) for a in args], "out": leaf(f(*args)),
            "grads": [leaf(g) for g in grads], "vmap": leaf(jax.vmap(f)(*args)),
        }
        if edges is not None:
            args = [jnp.asarray(np.array(o, dt)) for o in edges]
            cases[f"{name}_edges_{dt}"] = {"args": [leaf(a) for a in args], "out": leaf(f(*args))}
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3)).astype(dt)
    mean = rng.normal(size=(4, 3)).astype(dt)
    cov = spd(rng, 3, (4,)).astype(dt)
    for fname in ("logpdf", "pdf"):
        f = getattr(stats.multivariate_normal, fname)
        args = [jnp.asarray(x), jnp.asarray(mean), jnp.asarray(cov)]
        grads = jax.grad(lambda *a: f(*a).sum(), argnums=(0, 1, 2))(*args)
        cases[f"multivariate_normal_{fname}_{dt}"] = {
            "args": [leaf(a) for a in args], "out": leaf(f(*args)),
            "grads": [leaf(g) for g in grads], "vmap": leaf(jax.vmap(f)(*args)),
        }
    # Broadcasting: a batch of points against one mean and covariance; a scalar (isotropic)
    # covariance; a scalar mean (the univariate normal, variance cov).
    f = stats.multivariate_normal.logpdf
    one_cov = spd(rng, 3, ()).astype(dt)
    for label, args in [("broadcast", [x, mean[0], one_cov]),
                        ("scalar_cov", [x, mean, np.array(1.7, dt)]),
                        ("scalar_mean", [x[:, 0], np.array(0.3, dt), np.array(2.5, dt)])]:
        args = [jnp.asarray(a) for a in args]
        grads = jax.grad(lambda *a: f(*a).sum(), argnums=(0, 1, 2))(*args)
        cases[f"multivariate_normal_{label}_{dt}"] = {
            "args": [leaf(a) for a in args], "out": leaf(f(*args)),
            "grads": [leaf(g) for g in grads],
        }
print(json.dumps({"jax_version": jax.__version__, "cases": cases}))
