"""Computes tests/data/stax.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/stax.py > tests/data/stax.json  # with jax[cpu] 0.10.2

Networks built with `jax.example_libraries.stax`, in JAX's default 32-bit mode: each case
holds the key seed and input shape given to `init_fun`, the output shape and parameters it
gives (leaves in pytree order), an input, the output of `apply_fun` (with an `rng` key where
the network draws) and the gradient of `sum(output * weights)` with respect to every
parameter.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np
from jax.example_libraries import stax


def leaf(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "dtype": str(a.dtype),
            "data": [float(v) for v in a.ravel().astype(np.float64)]}


def networks():
    return {
        "mlp": (stax.serial(stax.Dense(16), stax.Relu, stax.Dense(10), stax.LogSoftmax),
                (-1, 12), (4, 12), None),
        "cnn": (stax.serial(
            stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
            stax.MaxPool((2, 2), strides=(2, 2)),
            stax.Conv(6, (3, 3), (1, 1), "VALID"), stax.Elu,
            stax.AvgPool((2, 2), padding="SAME"), stax.Flatten, stax.Dense(5),
            stax.LogSoftmax), (-1, 8, 8, 1), (3, 8, 8, 1), None),
        "pools": (stax.serial(
            stax.Conv(3, (2, 2), strides=(2, 1), padding="VALID"), stax.Tanh,
            stax.SumPool((2, 3), strides=(1, 2), padding="SAME"), stax.Sigmoid,
            stax.AvgPool((3, 2)), stax.Flatten, stax.Dense(4), stax.Softmax),
            (-1, 9, 7, 2), (2, 9, 7, 2), None),
        "branches": (stax.serial(
            stax.Dense(6), stax.FanOut(3),
            stax.parallel(stax.Dense(4), stax.serial(stax.Dense(4), stax.Gelu), stax.Identity),
            stax.parallel(stax.Softplus, stax.Selu, stax.Dense(4)),
            stax.FanInSum, stax.LeakyRelu, stax.Dense(3), stax.Exp), (-1, 5), (3, 5), None),
        "concat": (stax.serial(
            stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Dense(2)),
            stax.FanInConcat(), stax.Dense(2)), (-1, 4), (2, 4), None),
        "dropout_train": (stax.serial(stax.Dense(8), stax.Dropout(0.7), stax.Dense(2)),
                          (-1, 6), (5, 6), 3),
        "dropout_test": (stax.serial(stax.Dense(8), stax.Dropout(0.7, mode="test"),
                                     stax.Dense(2)), (-1, 6), (5, 6), 3),
    }


def main():
    cases = {}
    for seed, (name, (net, init_shape, x_shape, rng)) in enumerate(networks().items()):
        init_fun, apply_fun = net
        out_shape, params = init_fun(jax.random.PRNGKey(seed), init_shape)
        n = int(np.prod(x_shape))
        x = (np.sin(np.arange(n) * 0.37 + seed) * 1.3).reshape(x_shape).astype(np.float32)
        key = None if rng is None else jax.random.PRNGKey(rng)
        apply = lambda p, x: apply_fun(p, x, rng=key)
        y = apply(params, x)
        w = (np.arange(y.size) % 5 - 1.5).reshape(y.shape).astype(np.float32)
        grads = jax.grad(lambda p: jnp.sum(apply(p, x) * w))(params)
        cases[name] = {
            "seed": seed,
            "init_shape": list(init_shape),
            "out_shape": [int(d) for d in out_shape],
            "params": [leaf(p) for p in jax.tree_util.tree_leaves(params)],
            "x": leaf(x),
            "rng": rng,
            "y": leaf(y),
            "grads": [leaf(g) for g in jax.tree_util.tree_leaves(grads)],
        }
    print(json.dumps({"jax": jax.__version__, "cases": cases}))


main()
