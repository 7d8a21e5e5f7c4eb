"""Computes tests/data/jacobian_argnums.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/jacobian_argnums.py > tests/data/jacobian_argnums.json  # with jax[cpu]

Jacobians and hessians of functions of two arguments with tuple argnums, in float32: JAX's
nesting is one block per argument (a tuple), and for hessian a tuple of tuples. Each block is
written in order, flattened as `jax.tree.leaves` gives them.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np


def leaf(a):
    a = np.asarray(a)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": a.ravel().astype(np.float64).tolist()}


def f(x, y):
    # R^3 x R^2 -> R^2
    return jnp.tanh(x).sum() * y + jnp.exp(y) * jnp.sum(x**2)


def g(x, y):
    # R^3 x R^2 -> R
    return jnp.sum(jnp.sin(x) * x) * jnp.sum(y**3) + jnp.sum(jnp.tanh(x)) * jnp.sum(y)


x = jnp.array([0.3, -1.2, 0.7], jnp.float32)
y = jnp.array([0.5, -0.4], jnp.float32)

cases = {
    "jacfwd_argnums_01": jax.jacfwd(f, argnums=(0, 1))(x, y),
    "jacrev_argnums_01": jax.jacrev(f, argnums=(0, 1))(x, y),
    "jacrev_argnums_10": jax.jacrev(f, argnums=(1, 0))(x, y),
    "jacfwd_argnums_1": jax.jacfwd(f, argnums=1)(x, y),
    "hessian_argnums_01": jax.hessian(g, argnums=(0, 1))(x, y),
    "hessian_argnums_1": jax.hessian(g, argnums=1)(x, y),
    "grad_argnums_01": jax.grad(g, argnums=(0, 1))(x, y),
}
out = {
    "inputs": {"x": leaf(x), "y": leaf(y)},
    "cases": {name: [leaf(l) for l in jax.tree.leaves(v)] for name, v in cases.items()},
    "structure": {name: str(jax.tree.structure(v)) for name, v in cases.items()},
}
print(json.dumps(out, indent=1))
