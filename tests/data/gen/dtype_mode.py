"""Computes tests/data/dtype_mode.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/dtype_mode.py > tests/data/dtype_mode.json  # with jax[cpu]

JAX's two dtype modes side by side: each program runs once with `jax_enable_x64` off (JAX's
default) and once with it on, and records its result's dtype, weak-type flag and values. The
programs are the places where the modes differ: default types of creation functions, NumPy
data of 64-bit types, promotion of mixed integer types, Python scalars, `astype` to 64-bit
types, reductions of small integers, the PRNG's default dtypes and gradients of Python floats.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np


def leaf(a):
    weak = bool(getattr(a, "weak_type", False))
    a = np.asarray(a)
    if a.dtype.kind in "fc":
        data = [float(v) for v in a.real.ravel().astype(np.float64)]
    elif a.dtype.kind == "b":
        data = [bool(v) for v in a.ravel()]
    else:
        data = [int(v) for v in a.ravel()]
    return {"shape": list(a.shape), "dtype": str(a.dtype), "weak": weak, "data": data}


def programs():
    u32 = np.array([1, 2, 3], np.uint32)
    i32 = np.array([-1, 5, 7], np.int32)
    i8 = np.array([100, 100, 100], np.int8)
    f32 = np.array([0.5, 1.25, -2.0], np.float32)
    return {
        "arange_int": lambda: jnp.arange(4),
        "arange_float": lambda: jnp.arange(4.0),
        "zeros_default": lambda: jnp.zeros(3),
        "ones_default": lambda: jnp.ones(2),
        "eye_default": lambda: jnp.eye(2),
        "linspace_default": lambda: jnp.linspace(0.0, 1.0, 5),
        "array_f64_data": lambda: jnp.asarray(np.array([0.1, 2.5], np.float64)),
        "array_i64_data": lambda: jnp.asarray(np.array([3, -4], np.int64)),
        "array_u64_data": lambda: jnp.asarray(np.array([3, 4], np.uint64)),
        "u32_plus_i32": lambda: jnp.asarray(u32) + jnp.asarray(i32),
        "i32_plus_float_scalar": lambda: jnp.asarray(i32) + 1.5,
        "f32_plus_float_scalar": lambda: jnp.asarray(f32) + 0.1,
        "scalar_times_scalar": lambda: jnp.asarray(2.5) * 3,
        "astype_f64": lambda: jnp.asarray(f32).astype(jnp.float64),
        "astype_i64": lambda: jnp.asarray(i32).astype(jnp.int64),
        "zeros_f64": lambda: jnp.zeros(2, jnp.float64),
        "sum_i8": lambda: jnp.sum(jnp.asarray(i8)),
        "mean_i32": lambda: jnp.mean(jnp.asarray(i32)),
        "f32_times_f64_data": lambda: jnp.asarray(f32) * jnp.asarray(np.array(3.0, np.float64)),
        "grad_of_python_float": lambda: jax.grad(lambda x: x * x * 0.5 + jnp.sin(x))(0.3),
        "jit_of_python_float": lambda: jax.jit(lambda x: x / 3)(1.0),
        "uniform_default": lambda: jax.random.uniform(jax.random.key(0), (3,)),
        "normal_f64": lambda: jax.random.normal(jax.random.key(1), (3,), jnp.float64),
        "randint_default": lambda: jax.random.randint(jax.random.key(2), (4,), 0, 10),
        "one_hot_default": lambda: jax.nn.one_hot(jnp.array([0, 2]), 3),
    }


cases = {}
for x64 in (False, True):
    jax.config.update("jax_enable_x64", x64)
    for name, program in programs().items():
        cases.setdefault(name, {})["x64" if x64 else "default"] = leaf(program())

print(json.dumps({"jax": jax.__version__, "cases": cases}, indent=0))
