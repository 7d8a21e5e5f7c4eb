"""Computes tests/data/subnormals.json with JAX 0.10.2 on CPU (run once; the tests read the JSON).

    python3 tests/data/gen/subnormals.py > tests/data/subnormals.json

XLA runs every CPU computation with denormals-are-zero and flush-to-zero set: a subnormal input
counts as a zero of its sign and a subnormal result becomes one. These are JAX's answers on
inputs that are subnormal or whose results would be: every elementwise op, casts, and the
reductions, in float32 (`config: default`) and float64 (`jax_enable_x64`).

Each case holds its inputs and its outputs under `jax.jit` (`jit`, the reference) and op by op
(`eager`); `eager_differs` marks the cases where the two disagree (in JAX 0.10.2 only by an
ulp of a float64 `exp`: the cases avoid what XLA's simplifier removes under jit, `x + 0.0`
and `x * 1.0`, which pass subnormals through there). Leaves are in the format of
tests/data/edges.json ({shape, dtype, data}, float data as bit patterns: uint16 for float16 and
bfloat16, uint32 for float32, uint64 for float64), so that parsing cannot round them.
"""
import json
import os
import subprocess
import sys

# This directory holds random.py, which would shadow the standard library's `random` that numpy
# imports.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

UNARY = [
    "negative", "abs", "sign", "square", "exp", "exp2", "log", "log1p", "expm1", "sqrt", "rsqrt",
    "cbrt", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "sigmoid", "erf", "erfinv", "floor", "ceil", "round", "isnan",
    "isfinite", "powi2", "powi3", "times_half", "plus_weak_tiny", "times_weak_tiny",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "atan2", "nextafter", "pow",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "remainder", "fmod",
    "floor_divide", "logaddexp",
]
REDUCTIONS = [
    "sum", "prod", "max", "min", "mean", "cumsum", "cumprod", "cummax", "argmax", "argmin",
    "dot", "matmul", "sum_axis0", "logsumexp",
]


def unary_fn(name):
    import jax
    import jax.numpy as jnp
    from jax import lax

    table = {
        "negative": jnp.negative, "abs": jnp.abs, "sign": jnp.sign, "square": jnp.square,
        "exp": jnp.exp, "exp2": jnp.exp2, "log": jnp.log, "log1p": jnp.log1p,
        "expm1": jnp.expm1, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt, "cbrt": jnp.cbrt,
        "reciprocal": jnp.reciprocal, "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan,
        "asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan, "sinh": jnp.sinh,
        "cosh": jnp.cosh, "tanh": jnp.tanh, "asinh": jnp.arcsinh, "acosh": jnp.arccosh,
        "atanh": jnp.arctanh, "sigmoid": jax.nn.sigmoid, "erf": jax.scipy.special.erf,
        "erfinv": jax.scipy.special.erfinv, "floor": jnp.floor, "ceil": jnp.ceil,
        "round": jnp.round, "isnan": jnp.isnan, "isfinite": jnp.isfinite,
        "powi2": lambda x: lax.integer_pow(x, 2), "powi3": lambda x: lax.integer_pow(x, 3),
        # Weak Python scalars (not `x + 0.0` or `x * 1.0`, which XLA's simplifier removes
        # under jit, passing subnormals through, where op by op they flush).
        "times_half": lambda x: x * 0.5, "plus_weak_tiny": lambda x: x + 1e-45,
        "times_weak_tiny": lambda x: x * 1e-30,
    }
    return table[name]


def binary_fn(name):
    import jax.numpy as jnp

    table = {
        "add": jnp.add, "subtract": jnp.subtract, "multiply": jnp.multiply,
        "divide": jnp.divide, "maximum": jnp.maximum, "minimum": jnp.minimum,
        "atan2": jnp.arctan2, "nextafter": jnp.nextafter, "pow": jnp.power,
        "equal": jnp.equal, "not_equal": jnp.not_equal, "less": jnp.less,
        "less_equal": jnp.less_equal, "greater": jnp.greater,
        "greater_equal": jnp.greater_equal, "remainder": jnp.remainder, "fmod": jnp.fmod,
        "floor_divide": jnp.floor_divide, "logaddexp": jnp.logaddexp,
    }
    return table[name]


def reduction_fn(name):
    import jax
    import jax.numpy as jnp

    table = {
        "sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min, "mean": jnp.mean,
        "cumsum": jnp.cumsum, "cumprod": jnp.cumprod,
        "cummax": lambda x: jax.lax.cummax(x, axis=0), "argmax": jnp.argmax,
        "argmin": jnp.argmin, "dot": lambda x: jnp.dot(x, x),
        "matmul": lambda x: jnp.matmul(x.reshape(-1, 1), x.reshape(1, -1)),
        "sum_axis0": lambda x: jnp.sum(x.reshape(2, -1), axis=0),
        "logsumexp": jax.nn.logsumexp,
    }
    return table[name]


def leaf(a):
    import numpy as np

    a = np.asarray(a)
    flat = a.ravel()
    out = {"shape": list(a.shape), "dtype": str(a.dtype)}
    if a.dtype.kind == "f" or str(a.dtype) == "bfloat16":
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        out["data"] = [int(v) for v in flat.view(bits)]
    elif a.dtype.kind == "b":
        out["data"] = [bool(v) for v in flat]
    else:
        out["data"] = [int(v) for v in flat]
    return out


def inputs(np, dt):
    """Unary inputs, binary operand columns and rows, and reduction inputs, of dtype `dt`."""
    f = np.dtype(dt).type
    info = np.finfo(dt)
    tiny = float(info.tiny)  # the smallest normal number
    smallest = float(info.smallest_subnormal)
    sub = 1e-40 if dt == "float32" else 1e-310
    half_range = 1e-20 if dt == "float32" else 1e-160  # squares to a subnormal
    unary = np.array(
        [sub, -sub, tiny / 3, tiny * 0.5, smallest, -smallest, tiny, -tiny, tiny * 1.5,
         half_range, -half_range, 0.0, -0.0, 1.0, tiny * 4, 3 * sub],
        dt,
    )
    a = np.array([[tiny], [sub], [-sub], [tiny * 1.5], [half_range], [1.0], [0.0], [tiny / 3]], dt)
    b = np.array([[0.5, 3.0, 1.0, sub, -sub, tiny, half_range, 0.0, 2.0, -1.0]], dt)
    # Sums of subnormals that would reach normal numbers, products of small normals that
    # underflow on the way, and extremes among subnormals and zeros.
    reduce = np.array([sub, sub, tiny * 0.5, tiny * 0.5, -0.0, sub, tiny / 3, 3 * sub], dt)
    reduce_small = np.array([half_range, half_range, 4.0, 0.25, 1.0, 2.0, 0.5, 1.0], dt)
    reduce_mixed = np.array([0.0, sub, -sub, tiny * 0.5, 0.0, -tiny * 0.5, sub, -0.0], dt)
    return f, unary, a, b, {"tiny": reduce, "small": reduce_small, "mixed": reduce_mixed}


def both(jax, fn, *args):
    """`fn` op by op and under `jax.jit`, as leaves, and whether they differ."""
    import numpy as np

    # On the device first, so that op by op JAX computes (not numpy, for methods and operators).
    args = [jax.device_put(a) for a in args]
    eager = np.asarray(fn(*args))
    jit = np.asarray(jax.jit(fn)(*args))
    same = eager.dtype == jit.dtype and eager.tobytes() == jit.tobytes()
    return {"eager": leaf(eager), "jit": leaf(jit), "eager_differs": not same}


def run(config):
    import jax

    if config == "x64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np

    dt = "float64" if config == "x64" else "float32"
    _, unary, a, b, reduce = inputs(np, dt)
    out = {"unary": {}, "binary": {}, "reduce": {}, "cast": {}}
    for name in UNARY:
        fn = unary_fn(name)
        out["unary"][f"{name}_{dt}"] = {"x": leaf(unary), **both(jax, fn, unary)}
    for name in BINARY:
        fn = binary_fn(name)
        out["binary"][f"{name}_{dt}"] = {"a": leaf(a), "b": leaf(b), **both(jax, fn, a, b)}
    for name in REDUCTIONS:
        fn = reduction_fn(name)
        for which, x in reduce.items():
            out["reduce"][f"{name}_{which}_{dt}"] = {"x": leaf(x), **both(jax, fn, x)}
    # Conversions between float types, from the unary inputs of this mode.
    casts = {"float16": jnp.float16, "bfloat16": jnp.bfloat16, "int32": jnp.int32}
    if config == "x64":
        casts["float32"] = jnp.float32
    for to, target in casts.items():
        fn = lambda x, target=target: x.astype(target)
        out["cast"][f"{dt}_to_{to}"] = {"x": leaf(unary), **both(jax, fn, unary)}
    # float64 values whose float32 conversion is subnormal (or rounds up to the smallest
    # normal number), and subnormal half-precision inputs converted up.
    if config == "x64":
        tiny32 = float(np.finfo(np.float32).tiny)
        narrow = np.array([1e-40, -1e-40, tiny32 * 0.5, tiny32 * 0.99999999, tiny32, 1e-46, 1e-50, 1.0], np.float64)
        out["cast"]["float64_to_float32_narrowing"] = {
            "x": leaf(narrow), **both(jax, lambda x: x.astype(jnp.float32), narrow)}
        _, unary32, _, _, _ = inputs(np, "float32")
        out["cast"]["float32_to_float64"] = {
            "x": leaf(unary32), **both(jax, lambda x: x.astype(jnp.float64), unary32)}
    else:
        halves = {
            "float16": np.array([6e-8, -6e-8, 3e-5, 6.1e-5, 1.0, 0.0], np.float16),
            "bfloat16": np.array([1e-40, -1e-40, 5e-39, 1.2e-38, 1.0, 0.0], jnp.bfloat16),
        }
        for src, x in halves.items():
            fn = lambda x: x.astype(jnp.float32)
            out["cast"][f"{src}_to_float32"] = {"x": leaf(x), **both(jax, fn, x)}
            fn = lambda x: x * x.dtype.type(2.0)
            out["cast"][f"{src}_times_two"] = {"x": leaf(x), **both(jax, fn, x)}
    # Whole programs at the edge, and arrays made from Python scalars (which NumPy converts,
    # keeping subnormals, where computing on them flushes). Not `jnp.zeros_like(x) + tiny / 4`:
    # XLA folds computations on constants alone without flushing, so under jit that keeps its
    # subnormals where op by op it flushes them.
    tiny = float(np.finfo(dt).tiny)
    x = np.array([1e-20 if dt == "float32" else 1e-160, 3e-20 if dt == "float32" else 3e-160, 1.0], dt)
    programs = {
        "square_of_exp": (lambda x: jnp.square(jnp.exp(x)), np.array([-51.77, -44.0, -40.0] if dt == "float32" else [-370.0, -354.0, -300.0], dt)),
        "ratio_of_squares": (lambda x: (x * x) / (x * x), x),
        "normalize": (lambda x: x / jnp.sqrt(jnp.sum(x * x)), x),
        "where_weak_subnormal": (lambda x: jnp.where(x > 0.5, x, 1e-45 if dt == "float32" else 5e-324), x),
        "full_subnormal": (lambda x: jnp.full(x.shape, tiny / 4, dt), x),
    }
    out["program"] = {}
    for name, (fn, x) in programs.items():
        out["program"][f"{name}_{dt}"] = {"x": leaf(x), **both(jax, fn, x)}
    return out


def main():
    if len(sys.argv) > 1:
        json.dump(run(sys.argv[1]), sys.stdout)
        return
    import jax

    merged = {"jax_version": jax.__version__}
    for config in ("default", "x64"):
        text = subprocess.run([sys.executable, "-P", __file__, config], check=True,
                              capture_output=True, text=True).stdout
        for section, cases in json.loads(text).items():
            merged.setdefault(section, {}).update(cases)
    json.dump(merged, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
