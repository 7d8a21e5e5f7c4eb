"""Computes tests/data/complex.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/complex.py > tests/data/complex.json  # with jax[cpu]

Complex dtypes: type promotion with complex64/complex128 (weak Python scalars included),
complex arithmetic and functions, reductions, `real`/`imag`/`conj`/`abs`/`angle`,
`lax.complex`, `astype`, gradients of real-valued functions through complex values (JAX's
convention: `grad` of a real function of a complex input is the conjugate of its steepest
ascent) and `vmap`. Complex values are written as `[re, im]` pairs.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def num(v):
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def leaf(a):
    weak = bool(getattr(jax.typeof(a), "weak_type", False)) if isinstance(a, jax.Array) else False
    a = np.asarray(a)
    if a.dtype.kind == "c":
        data = [[num(z.real), num(z.imag)] for z in a.ravel()]
    elif a.dtype.kind == "f":
        data = [num(v) for v in a.ravel()]
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data, "weak_type": weak}


out = {}

# --- promotion ------------------------------------------------------------------------------
DTYPES = ["bool", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
WEAK = {"int": 1, "float": 1.5, "complex": 1.5 + 0.5j}
promo = []
for a in DTYPES:
    for b in DTYPES + ["weak_int", "weak_float", "weak_complex"]:
        x = jnp.zeros((), a)
        if b.startswith("weak_"):
            y = WEAK[b[5:]]
        else:
            y = jnp.zeros((), b)
        r = jnp.add(x, y) if a != "bool" or b != "bool" else jnp.logical_or(x, y)
        promo.append({"a": a, "b": b, "dtype": str(r.dtype), "weak": bool(jax.typeof(r).weak_type)})
# Two weak operands.
for b in ["weak_int", "weak_float", "weak_complex"]:
    r = jnp.add(WEAK["complex"], WEAK[b[5:]])
    promo.append({"a": "weak_complex", "b": b, "dtype": str(r.dtype), "weak": bool(jax.typeof(r).weak_type)})
out["promotion"] = promo

# --- values ---------------------------------------------------------------------------------
ZR = np.array([[0.3, -1.2, 2.0], [0.7, -0.4, 1.1]])
ZI = np.array([[1.5, 0.25, -0.6], [-2.0, 0.9, 0.05]])
WR = np.array([[1.1, 0.5, -0.8], [0.2, 1.4, -1.3]])
WI = np.array([[-0.3, 0.7, 0.4], [1.2, -0.5, 0.9]])

UNARY = {
    "neg": jnp.negative, "exp": jnp.exp, "log": jnp.log, "sqrt": jnp.sqrt, "sin": jnp.sin,
    "cos": jnp.cos, "tan": jnp.tan, "sinh": jnp.sinh, "cosh": jnp.cosh, "tanh": jnp.tanh,
    "square": jnp.square, "reciprocal": jnp.reciprocal, "abs": jnp.abs, "sign": jnp.sign,
    "angle": jnp.angle, "real": jnp.real, "imag": jnp.imag, "conj": jnp.conj,
    "cube": lambda z: z ** 3, "rsqrt": jax.lax.rsqrt,
}
BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": jnp.divide,
    "pow": jnp.power, "eq": jnp.equal, "ne": jnp.not_equal,
}
REDUCE = {
    "sum": jnp.sum, "prod": jnp.prod, "mean": jnp.mean, "var": jnp.var,
    "sum_axis0": lambda z: jnp.sum(z, axis=0), "prod_axis1": lambda z: jnp.prod(z, axis=1),
    "mean_axis1": lambda z: jnp.mean(z, axis=1), "cumsum": lambda z: jnp.cumsum(z, axis=1),
}
for dt, rdt in (("complex64", "float32"), ("complex128", "float64")):
    z = jnp.asarray(ZR + 1j * ZI, dt)
    w = jnp.asarray(WR + 1j * WI, dt)
    # Equal elements, so eq/ne see both answers.
    w = w.at[0, 1].set(z[0, 1])
    c = {"z": leaf(z), "w": leaf(w), "x": leaf(jnp.asarray(WR, rdt))}
    for k, f in UNARY.items():
        c[k] = leaf(f(z))
    for k, f in BINARY.items():
        c[k] = leaf(f(z, w))
    for k, f in REDUCE.items():
        c[k] = leaf(f(z))
    x = jnp.asarray(WR, rdt)
    c["add_real"] = leaf(z + x)
    c["mul_real"] = leaf(x * z)
    c["add_weak_float"] = leaf(z + 2.5)
    c["mul_weak_complex"] = leaf(z * (0.5 - 2j))
    c["real_pow_weak"] = leaf(z ** 0.5)
    c["complex_xy"] = leaf(jax.lax.complex(x, jnp.asarray(ZI, rdt)))
    c["astype_real"] = leaf(z.astype(rdt))
    c["astype_complex"] = leaf(x.astype(dt))
    c["angle_real"] = leaf(jnp.angle(x))
    out[dt] = c

# Mixed precision: float64 + complex64 -> complex128; int32 + complex64 -> complex64.
z64 = jnp.asarray(ZR + 1j * ZI, "complex64")
out["mixed"] = {
    "z64": leaf(z64),
    "x64": leaf(jnp.asarray(WR, "float64")),
    "i32": leaf(jnp.asarray([[1, -2, 3], [4, 0, -1]], "int32")),
    "f64_plus_c64": leaf(jnp.asarray(WR, "float64") + z64),
    "i32_times_c64": leaf(jnp.asarray([[1, -2, 3], [4, 0, -1]], "int32") * z64),
}

# --- gradients (float64) -----------------------------------------------------------------------
x = jnp.asarray(ZR)
y = jnp.asarray(ZI)
z = jnp.asarray(ZR + 1j * ZI)
w = jnp.asarray(WR + 1j * WI)

REAL_FNS = {
    # f(x, y) of real inputs through complex intermediates.
    "abs_sq_exp": lambda x, y: jnp.sum(jnp.abs(jax.lax.complex(x, y) ** 2 * jnp.exp(jax.lax.complex(x, y)))),
    "real_sin_conj": lambda x, y: jnp.sum(jnp.real(jnp.sin(jax.lax.complex(x, y)) * jnp.conj(jax.lax.complex(x, y)))),
    "angle_log": lambda x, y: jnp.sum(jnp.angle(jax.lax.complex(x, y)) + jnp.imag(jnp.log(jax.lax.complex(x, y)))),
    "sqrt_tanh_div": lambda x, y: jnp.sum(jnp.real(jnp.sqrt(jax.lax.complex(x, y))) + jnp.imag(jnp.tanh(jax.lax.complex(y, x)) / jax.lax.complex(x, 1.0 + y * y))),
    "astype_cos": lambda x, y: jnp.sum(jnp.cos(x.astype(jnp.complex128) * jax.lax.complex(y, x)).astype(jnp.float64)),
    "mean_prod": lambda x, y: jnp.abs(jnp.mean(jax.lax.complex(x, y))) + jnp.real(jnp.prod(jax.lax.complex(1.0 + x, y))),
}
g = {"x": leaf(x), "y": leaf(y), "z": leaf(z), "w": leaf(w)}
for k, f in REAL_FNS.items():
    gx, gy = jax.grad(f, argnums=(0, 1))(x, y)
    g[k + "_value"] = leaf(f(x, y))
    g[k + "_dx"] = leaf(gx)
    g[k + "_dy"] = leaf(gy)
    g[k + "_vmap"] = leaf(jax.vmap(f)(x, y))

COMPLEX_IN = {
    # f(z) real-valued of a complex input: grad is complex (JAX's convention).
    "abs_sq": lambda z: jnp.sum(jnp.abs(z) ** 2),
    "real_mul_w": lambda z: jnp.sum(jnp.real(z * w)),
    "imag_exp": lambda z: jnp.sum(jnp.imag(jnp.exp(z))),
    "abs_div": lambda z: jnp.sum(jnp.abs(z / w)),
    "real_pow": lambda z: jnp.sum(jnp.real(z ** w)),
    "conj_sq": lambda z: jnp.sum(jnp.real(jnp.conj(z) * jnp.square(z))),
}
for k, f in COMPLEX_IN.items():
    g[k + "_dz"] = leaf(jax.grad(f)(z))
# vjp of a complex-valued function with a complex cotangent.
_, pull = jax.vjp(lambda z: jnp.sin(z) * w, z)
g["vjp_sin_mul"] = leaf(pull(jnp.conj(w))[0])
_, tan = jax.jvp(lambda z: jnp.log(z) * z, (z,), (w,))
g["jvp_log_mul"] = leaf(tan)
out["grad"] = g

print(json.dumps(out))
