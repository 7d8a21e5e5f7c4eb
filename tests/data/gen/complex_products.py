"""Computes tests/data/complex_products.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/complex_products.py > tests/data/complex_products.json  # with jax[cpu]

Complex matrix products: `dot_general` through `jnp.matmul`, `jnp.dot`, `jnp.einsum`,
`jnp.tensordot` and `jax.lax.dot_general` on complex64 and complex128 operands (and real
operands promoted to complex), their gradients under JAX's convention for real-valued
functions of complex values, `vjp`/`jvp` with complex tangents, and `vmap`. Complex values are
written as `[re, im]` pairs. The large operands are built from a formula the tests repeat
(`wave`), and only a strided sample of their products plus the total is stored.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def num(v):
    return float(v)


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        data = [[num(z.real), num(z.imag)] for z in a.ravel()]
    elif a.dtype.kind == "f":
        data = [num(v) for v in a.ravel()]
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


def wave(shape, salt):
    """sin(0.37 i + 0.11 j + salt) + 1j cos(0.23 i - 0.19 j + salt) over a row-major index."""
    n = int(np.prod(shape))
    cols = shape[-1]
    idx = np.arange(n)
    i, j = idx // cols, idx % cols
    re = np.sin(0.37 * i + 0.11 * j + salt)
    im = np.cos(0.23 * i - 0.19 * j + salt)
    return (re + 1j * im).reshape(shape)


def sample(a):
    """The stored part of a large result: every 9th row and 7th column of its last two axes."""
    return a[..., ::9, ::7]


A = np.array([[0.3 + 1.5j, -1.2 + 0.25j, 2.0 - 0.6j], [0.7 - 2.0j, -0.4 + 0.9j, 1.1 + 0.05j]])
B = np.array(
    [
        [1.1 - 0.3j, 0.5 + 0.7j, -0.8 + 0.4j, 0.2 - 0.1j],
        [0.2 + 1.2j, 1.4 - 0.5j, -1.3 + 0.9j, 0.6 + 0.3j],
        [-0.5 + 0.8j, 0.9 + 0.1j, 0.3 - 1.1j, -0.7 - 0.2j],
    ]
)
V = np.array([0.4 - 0.9j, -1.3 + 0.2j, 0.8 + 0.6j])
BATCH = wave((2, 2, 3), 0.5)  # a batch of two 2x3 matrices
R = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # real, 2x3

out = {}

for dt, rdt in (("complex64", "float32"), ("complex128", "float64")):
    a, b, v = jnp.asarray(A, dt), jnp.asarray(B, dt), jnp.asarray(V, dt)
    batch, r = jnp.asarray(BATCH, dt), jnp.asarray(R, rdt)
    c = {"a": leaf(a), "b": leaf(b), "v": leaf(v), "batch": leaf(batch), "r": leaf(r)}
    c["matmul"] = leaf(a @ b)
    c["matmul_vec"] = leaf(a @ v)
    c["vec_matmul"] = leaf(v @ b)
    c["dot_vv"] = leaf(jnp.dot(v, v))
    c["matmul_batch"] = leaf(batch @ b)
    c["at_a"] = leaf(a.T @ a)
    c["a_bt"] = leaf(a @ jnp.conj(a).T)
    c["einsum_bij_jk"] = leaf(jnp.einsum("bij,jk->bik", batch, b))
    c["einsum_ij_ij"] = leaf(jnp.einsum("ij,ij->", a, a))
    c["einsum_outer"] = leaf(jnp.einsum("i,j->ij", v, v))
    c["tensordot"] = leaf(jnp.tensordot(batch, b, axes=1))
    c["real_matmul"] = leaf(r @ b)  # real operand promoted to complex
    c["dot_general_batch"] = leaf(
        jax.lax.dot_general(batch, batch, (((2,), (2,)), ((0,), (0,))))
    )
    big_a = jnp.asarray(wave((128, 64), 0.0), dt)
    big_b = jnp.asarray(wave((64, 128), 1.0), dt)
    big = big_a @ big_b
    c["big_sample"] = leaf(sample(big))
    c["big_sum"] = leaf(jnp.sum(big))
    batched = jnp.asarray(wave((8, 48, 64), 2.0), dt) @ jnp.asarray(wave((8, 64, 48), 3.0), dt)
    c["batched_sample"] = leaf(sample(batched))
    c["batched_sum"] = leaf(jnp.sum(batched))
    out[dt] = c

# --- gradients (complex128) ----------------------------------------------------------------------
a, b, v = jnp.asarray(A), jnp.asarray(B), jnp.asarray(V)
w = jnp.asarray(wave((2, 4), 0.25))  # weights for the product's entries
x, y = jnp.asarray(A.real), jnp.asarray(A.imag)

LOSSES = {
    "real_sum": lambda a, b: jnp.real(jnp.sum(a @ b)),
    "abs_sq": lambda a, b: jnp.sum(jnp.abs(a @ b) ** 2),
    "imag_weighted": lambda a, b: jnp.imag(jnp.sum(w * (a @ b))),
    "einsum_abs": lambda a, b: jnp.sum(jnp.abs(jnp.einsum("ij,jk->ik", a, b))),
    "dot_conj": lambda a, b: jnp.real(jnp.sum(jnp.dot(jnp.conj(a), b) * w)),
}
g = {"a": leaf(a), "b": leaf(b), "v": leaf(v), "w": leaf(w), "x": leaf(x), "y": leaf(y)}
for k, f in LOSSES.items():
    ga, gb = jax.grad(f, argnums=(0, 1))(a, b)
    g[k + "_value"] = leaf(f(a, b))
    g[k + "_da"] = leaf(ga)
    g[k + "_db"] = leaf(gb)
# A real loss of real inputs through a complex product.
real_in = lambda x, y: jnp.sum(jnp.abs(jax.lax.complex(x, y) @ b) ** 2)
gx, gy = jax.grad(real_in, argnums=(0, 1))(x, y)
g["real_in_value"] = leaf(real_in(x, y))
g["real_in_dx"] = leaf(gx)
g["real_in_dy"] = leaf(gy)
# vjp and jvp of the product itself, with complex cotangents and tangents.
_, pull = jax.vjp(lambda a, b: a @ b, a, b)
ca, cb = pull(w)
g["vjp_da"] = leaf(ca)
g["vjp_db"] = leaf(cb)
_, t = jax.jvp(lambda a, b: a @ b, (a, b), (jnp.conj(a), b * 1j))
g["jvp"] = leaf(t)
# Second order: the Hessian-vector product of abs_sq in a.
hvp = jax.jvp(jax.grad(lambda a: LOSSES["abs_sq"](a, b)), (a,), (jnp.conj(a),))[1]
g["abs_sq_hvp"] = leaf(hvp)
out["grad"] = g

# --- vmap (complex128) ---------------------------------------------------------------------------
batch = jnp.asarray(BATCH)
other = jnp.asarray(wave((2, 3, 4), 1.5))
out["vmap"] = {
    "batch": leaf(batch),
    "other": leaf(other),
    "b": leaf(b),
    "v": leaf(v),
    "both": leaf(jax.vmap(jnp.matmul)(batch, other)),
    "lhs_only": leaf(jax.vmap(jnp.matmul, in_axes=(0, None))(batch, b)),
    "rhs_only": leaf(jax.vmap(jnp.matmul, in_axes=(None, 0))(v, other)),
    "axis1": leaf(jax.vmap(jnp.dot, in_axes=(1, None))(batch, v)),
    "grad": leaf(jax.vmap(jax.grad(lambda a, b: jnp.sum(jnp.abs(a @ b) ** 2)), in_axes=(0, None))(batch, b)),
}

print(json.dumps(out))
