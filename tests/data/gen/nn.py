"""Computes tests/data/nn.json with JAX (run once; the tests read the JSON).

    python tests/data/gen/nn.py > tests/data/nn.json  # in a virtualenv with jax[cpu]

For every `jax.nn` function: its value on fixed inputs (kinks and large magnitudes among them),
the gradient of a weighted sum, the second derivative where it is defined, and `vmap` over
rows, in float32 and float64.
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
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


# Kinks (0, +-1, 6), tiny steps either side of 0, and magnitudes where naive forms overflow.
X = np.array([-100.0, -30.0, -5.0, -2.5, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.5, 5.0,
              6.0, 30.0, 100.0])
# Rows for vmap: a 4 x 4 reshaping of X.
ROWS = X.reshape(4, 4)

ELEMENTWISE = {
    "relu": jax.nn.relu,
    "relu6": jax.nn.relu6,
    "hard_sigmoid": jax.nn.hard_sigmoid,
    "hard_silu": jax.nn.hard_silu,
    "sigmoid": jax.nn.sigmoid,
    "silu": jax.nn.silu,
    "swish": jax.nn.swish,
    "softplus": jax.nn.softplus,
    "log_sigmoid": jax.nn.log_sigmoid,
    "gelu_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_erf": lambda x: jax.nn.gelu(x, approximate=False),
    "elu": lambda x: jax.nn.elu(x, 0.7),
    "celu": lambda x: jax.nn.celu(x, 1.3),
    "selu": jax.nn.selu,
    "leaky_relu": lambda x: jax.nn.leaky_relu(x, 0.05),
    "hard_tanh": jax.nn.hard_tanh,
}

# Functions over axes: (function of (x, axis), axis, input rows).
MAT = np.array([[1.0, 2.0, 3.0, 4.0],
                [1000.0, 1000.0, -1000.0, 0.0],
                [-0.5, 0.25, -3.0, 2.0]])
NEG_INF_ROWS = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0], [np.inf, 0.0, 1.0]])
AXES = {
    "softmax": (lambda x, a: jax.nn.softmax(x, axis=a), -1, MAT),
    "softmax_axis0": (lambda x, a: jax.nn.softmax(x, axis=a), 0, MAT),
    "softmax_all": (lambda x, a: jax.nn.softmax(x, axis=a), (0, 1), MAT[[0, 2]]),
    "log_softmax": (lambda x, a: jax.nn.log_softmax(x, axis=a), -1, MAT),
    "log_softmax_axis0": (lambda x, a: jax.nn.log_softmax(x, axis=a), 0, MAT),
    "logsumexp": (lambda x, a: jax.nn.logsumexp(x, axis=a), -1, MAT),
    "logsumexp_axis0": (lambda x, a: jax.nn.logsumexp(x, axis=a), 0, MAT),
    "logsumexp_keepdims": (lambda x, a: jax.nn.logsumexp(x, axis=a, keepdims=True), -1, MAT),
    "logsumexp_inf_rows": (lambda x, a: jax.nn.logsumexp(x, axis=a), -1, NEG_INF_ROWS),
    "log_softmax_inf_rows": (lambda x, a: jax.nn.log_softmax(x, axis=a), -1, NEG_INF_ROWS),
    "softmax_inf_rows": (lambda x, a: jax.nn.softmax(x, axis=a), -1, NEG_INF_ROWS),
    "standardize": (lambda x, a: jax.nn.standardize(x, axis=a, epsilon=1e-5), -1, MAT[[0, 2]]),
    "standardize_axis0": (lambda x, a: jax.nn.standardize(x, axis=a, epsilon=1e-3), 0, MAT),
}


def weights(shape, dt):
    """Fixed weights for the summed output whose gradient is recorded."""
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5).astype(dt)


cases = {}
for dt in ("float32", "float64"):
    for name, f in ELEMENTWISE.items():
        x = jnp.asarray(X.astype(dt))
        g = jax.grad(lambda v: f(v).sum())
        cases[f"{name}_{dt}"] = {
            "x": leaf(x),
            "out": leaf(f(x)),
            "grad": leaf(g(x)),
            "grad2": leaf(jax.grad(lambda v: g(v).sum())(x)),
            "rows": leaf(ROWS.astype(dt)),
            "vmap": leaf(jax.vmap(f)(ROWS.astype(dt))),
            "vmap_grad": leaf(jax.vmap(jax.grad(f))(X.astype(dt))),
        }
    for name, (f, axis, m) in AXES.items():
        x = jnp.asarray(m.astype(dt))
        out = f(x, axis)
        w = weights(out.shape, dt)
        row = lambda r: f(r, -1)
        cases[f"{name}_{dt}"] = {
            "x": leaf(x),
            "axis": list(axis) if isinstance(axis, tuple) else [axis],
            "out": leaf(out),
            "weights": leaf(w),
            "grad": leaf(jax.grad(lambda v: (f(v, axis) * w).sum())(x)),
            "vmap": leaf(jax.vmap(row)(x)),
        }

cases["one_hot"] = {
    "x": leaf(np.array([0, 2, -1, 3, 5], np.int32)),
    "out": leaf(jax.nn.one_hot(np.array([0, 2, -1, 3, 5], np.int32), 4, dtype=jnp.float32)),
}
print(json.dumps({"jax_version": jax.__version__, "cases": cases}))
