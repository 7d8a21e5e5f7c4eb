"""Computes tests/data/scipy_special.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/scipy_special.py > tests/data/scipy_special.json  # with jax[cpu]

For each `jax.scipy.special` function and `jax.scipy.stats.norm`: values on fixed inputs (poles,
tails and zeros among them), first and second derivatives and `vmap`, in float32 and float64.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.scipy import special, stats


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


UNARY = {
    "erf": (special.erf, [-6, -3, -1, -0.3, 0, 0.2, 1, 2.5, 5, 10]),
    "erfc": (special.erfc, [-6, -3, -1, -0.3, 0, 0.2, 1, 2.5, 5, 10]),
    "erfinv": (special.erfinv, [-0.999, -0.7, -0.2, 0, 0.1, 0.5, 0.9, 0.9999]),
    "logit": (special.logit, [1e-6, 0.01, 0.3, 0.5, 0.7, 0.99, 0.999]),
    "expit": (special.expit, [-100, -20, -2, 0, 1, 5, 30, 100]),
    "ndtr": (special.ndtr, [-40, -20, -5, -1, -0.5, 0, 0.3, 1, 5, 10]),
    "ndtri": (special.ndtri, [0.02, 0.1, 0.3, 0.5, 0.6, 0.9, 0.98]),
    "gammaln": (special.gammaln, [0.1, 0.5, 1, 1.5, 2, 3.7, 10, 50, 150, -0.5, -2.5]),
    "digamma": (special.digamma, [1e-3, 0.1, 0.5, 1, 1.5, 2, 3.7, 10, 50, -0.5, -2.5]),
    "i0e": (special.i0e, [-40, -10, -3, -1, -1e-3, 0, 0.5, 2, 7.9, 8.1, 25, 40, 100]),
    "i1e": (special.i1e, [-40, -10, -3, -1, -1e-3, 0, 0.5, 2, 7.9, 8.1, 25, 40, 100]),
}

# Values only: poles and the ends of domains, where derivatives are infinite or undefined.
EDGES = {
    "gammaln": [0, -1, -2, np.inf, np.nan],
    "digamma": [0, -1, -2, np.inf, -np.inf],
    "erfinv": [-1, 1],
    "ndtri": [0, 1],
    "logit": [0, 1],
    "i0e": [np.inf, -np.inf],
    "i1e": [np.inf, -np.inf],
}

BINARY = {
    "xlogy": (special.xlogy, [0, 0, 1, 2, -1, 0.5, 0], [0, 1, 0.5, 3, 2, 0.1, np.nan]),
    "xlog1py": (special.xlog1py, [0, 0, 1, 2, -1, 0.5], [-1, 0, -0.5, 3, 2, 0.1]),
    "betaln": (special.betaln, [0.5, 1, 2, 3.5, 10, 50], [0.5, 2, 1, 7, 3, 20]),
}

cases = {}
for dt in ("float32", "float64"):
    for name, (f, xs) in UNARY.items():
        x = jnp.asarray(np.array(xs, dt))
        g = jax.grad(f)
        cases[f"{name}_{dt}"] = {
            "x": leaf(x),
            "out": leaf(f(x)),
            "grad": leaf(jax.grad(lambda v: f(v).sum())(x)),
            "grad2": leaf(jax.vmap(jax.grad(g))(x)),
            "vmap_grad": leaf(jax.vmap(g)(x)),
        }
    for name, xs in EDGES.items():
        x = jnp.asarray(np.array(xs, dt))
        cases[f"{name}_edges_{dt}"] = {"x": leaf(x), "out": leaf(UNARY[name][0](x))}
    for name, (f, xs, ys) in BINARY.items():
        x, y = jnp.asarray(np.array(xs, dt)), jnp.asarray(np.array(ys, dt))
        gx, gy = jax.grad(lambda a, b: f(a, b).sum(), argnums=(0, 1))(x, y)
        cases[f"{name}_{dt}"] = {
            "x": leaf(x), "y": leaf(y), "out": leaf(f(x, y)), "grad_x": leaf(gx),
            "grad_y": leaf(gy), "vmap": leaf(jax.vmap(f)(x, y)),
        }
    a = np.array([[1, 2, 3], [0, 0, 0], [-np.inf, -np.inf, -np.inf], [1, 2, 3]], dt)
    b = np.array([[1, 1, 1], [1, -3, 1], [1, 1, 1], [0, 2, 0]], dt)
    w = np.array([1.0, -2.0, 0.5, 3.0], dt)
    lse = lambda v: special.logsumexp(v, axis=-1, b=b)
    cases[f"logsumexp_b_{dt}"] = {
        "x": leaf(a), "b": leaf(b), "out": leaf(lse(a)), "weights": leaf(w),
        "grad": leaf(jax.grad(lambda v: (lse(v)[jnp.array([0, 3])] * w[jnp.array([0, 3])]).sum())(a)),
        "vmap": leaf(jax.vmap(lambda r, s: special.logsumexp(r, b=s))(a, b)),
    }
    cases[f"logsumexp_axis0_{dt}"] = {
        "x": leaf(a[[0, 1, 3]]), "out": leaf(special.logsumexp(a[[0, 1, 3]], axis=0)),
        "grad": leaf(jax.grad(lambda v: special.logsumexp(v, axis=0).sum())(a[[0, 1, 3]])),
    }
    x = jnp.asarray(np.array([-3, -1, 0, 0.5, 2, 10], dt))
    for name, f in (("pdf", stats.norm.pdf), ("logpdf", stats.norm.logpdf),
                    ("cdf", stats.norm.cdf)):
        h = lambda v: f(v, 0.5, 2.0)
        cases[f"norm_{name}_{dt}"] = {
            "x": leaf(x), "out": leaf(h(x)), "grad": leaf(jax.grad(lambda v: h(v).sum())(x)),
            "vmap": leaf(jax.vmap(h)(x)),
        }
print(json.dumps({"jax_version": jax.__version__, "cases": cases}))
