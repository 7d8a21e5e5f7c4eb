"""Computes tests/data/elementwise.json with JAX (run once; the tests read the JSON).

    python3 tests/data/gen/elementwise.py > tests/data/elementwise.json
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def leaf(a):
    a = np.asarray(a)
    data = a.ravel().tolist()
    if a.dtype.kind == "f":
        data = [float(v) if np.isfinite(v) else str(v).replace("nan", "NaN").replace("inf", "Infinity") for v in a.ravel().astype(np.float64)]
        data = [("-Infinity" if v == "-Infinity" else v) for v in data]
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


X = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 0.9, 1.7, 3.0], np.float32)
POS = np.array([0.05, 0.3, 0.9, 1.0, 1.5, 2.0, 7.5, 40.0], np.float32)
UNIT = np.array([-0.99, -0.7, -0.2, 0.0, 0.1, 0.5, 0.8, 0.999], np.float32)
GE1 = np.array([1.0, 1.2, 2.0, 3.5, 10.0, 50.0, 1.01, 7.0], np.float32)
HALF = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51], np.float32)

UNARY = {
    "negative": (jnp.negative, X), "abs": (jnp.abs, X), "sign": (jnp.sign, X),
    "square": (jnp.square, X), "exp": (jnp.exp, X), "exp2": (jnp.exp2, X),
    "log": (jnp.log, POS), "log1p": (jnp.log1p, POS), "expm1": (jnp.expm1, X),
    "sqrt": (jnp.sqrt, POS), "rsqrt": (jax.lax.rsqrt, POS), "cbrt": (jnp.cbrt, X),
    "reciprocal": (jnp.reciprocal, POS), "sin": (jnp.sin, X), "cos": (jnp.cos, X),
    "tan": (jnp.tan, X), "asin": (jnp.arcsin, UNIT), "acos": (jnp.arccos, UNIT),
    "atan": (jnp.arctan, X), "sinh": (jnp.sinh, X), "cosh": (jnp.cosh, X),
    "tanh": (jnp.tanh, X), "asinh": (jnp.arcsinh, X), "acosh": (jnp.arccosh, GE1),
    "atanh": (jnp.arctanh, UNIT), "sigmoid": (jax.nn.sigmoid, X * 10),
    "softplus": (jax.nn.softplus, X * 10), "erf": (jax.scipy.special.erf, X),
    "erfinv": (jax.scipy.special.erfinv, UNIT), "floor": (jnp.floor, X), "ceil": (jnp.ceil, X),
    "round": (jnp.round, HALF),
}

out = {"unary": {}, "binary": {}, "int": {}, "promotion": {}}
for name, (f, x) in UNARY.items():
    for dt in ("float32", "float64"):
        xi = x.astype(dt)
        out["unary"][f"{name}_{dt}"] = {"x": leaf(xi), "out": leaf(f(jnp.asarray(xi)))}

A = np.array([[1.5], [-2.0], [0.25]], np.float32)          # (3, 1)
B = np.array([[0.5, -1.25, 2.0, 3.0]], np.float32)         # (1, 4)
BINARY = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply, "divide": jnp.divide,
    "maximum": jnp.maximum, "minimum": jnp.minimum, "atan2": jnp.arctan2,
    "floor_divide": jnp.floor_divide, "remainder": jnp.remainder, "fmod": jnp.fmod,
    "pow": lambda a, b: jnp.power(jnp.abs(a), b), "equal": jnp.equal, "not_equal": jnp.not_equal,
    "less": jnp.less, "less_equal": jnp.less_equal, "greater": jnp.greater,
    "greater_equal": jnp.greater_equal, "logaddexp": jnp.logaddexp,
}
for name, f in BINARY.items():
    for dt in ("float32", "float64"):
        a, b = A.astype(dt), B.astype(dt)
        out["binary"][f"{name}_{dt}"] = {"a": leaf(a), "b": leaf(b), "out": leaf(f(a, b))}

IA = np.array([[-7], [7], [0], [-1]], np.int32)
IB = np.array([[2, -2, 3, -3, 1]], np.int32)
INT = {
    "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
    "floor_divide": jnp.floor_divide, "remainder": jnp.remainder,
    "trunc_divide": jax.lax.div, "fmod": jax.lax.rem, "maximum": jnp.maximum,
    "pow": lambda a, b: jnp.power(a, jnp.abs(b)), "divide": jnp.divide,
    "logical_and": jnp.bitwise_and, "logical_or": jnp.bitwise_or, "logical_xor": jnp.bitwise_xor,
}
for name, f in INT.items():
    out["int"][name] = {"a": leaf(IA), "b": leaf(IB), "out": leaf(f(IA, IB))}

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "bfloat16", "float32", "float64"]
table = {}
for a in DTYPES:
    for b in DTYPES:
        r = jnp.zeros((), a) + jnp.zeros((), b) if "bool" not in (a, b) else None
        weak = bool(r.weak_type) if r is not None else False
        table[f"{a},{b}"] = [str(jnp.result_type(jnp.dtype(a), jnp.dtype(b))), weak]
    for w, scalar in (("int", 1), ("float", 1.0)):
        r = jnp.result_type(jnp.dtype(a), scalar)
        weak = (jnp.zeros((), a) + scalar).weak_type
        table[f"{a},weak_{w}"] = [str(r), bool(weak)]
out["promotion"] = table
print(json.dumps(out))
