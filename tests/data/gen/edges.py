"""Computes tests/data/edges.json with JAX 0.10.2 (run once; the tests read the JSON).

    python3 tests/data/gen/edges.py > tests/data/edges.json

JAX's answers at the edges of the ops: reductions over empty axes, integer division and
remainder by zero, `randint` bounds outside the dtype or in the wrong order, empty category and
population axes, integer inputs to rounding and float-only functions, and malformed einsum specs.

`cases` are Python expressions (`program`) evaluated with `jax`, `jnp`, `lax`, `random`, `np` and
`K` (`random.PRNGKey`) in scope, under JAX's default 32-bit mode (`config: default`) or with
`jax_enable_x64` (`config: x64`); their outputs are the leaves of the value in the format of
tests/data/random.json ({shape, dtype, data}, float data as bit patterns: uint32 for float32).
`errors` are expressions JAX refuses; each records the exception JAX raised (`error`), which
the tests check before checking that rjax panics there too.
"""
import json
import os
import subprocess
import sys

# This directory holds random.py, which would shadow the standard library's `random` that numpy
# imports.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

I32_MIN, I32_MAX = -2**31, 2**31 - 1
# Dividends and divisors: zero divisors of every sign of dividend, the extremes, and
# INT_MIN by -1 (the one overflowing quotient).
I32_A = f"jnp.array([7, -7, 0, 1, -1, {I32_MIN}, {I32_MAX}, {I32_MIN}, {I32_MIN}, 5, -5, 7], jnp.int32)"
I32_B = "jnp.array([0, 0, 0, 0, 0, 0, 0, -1, 1, -1, 3, -3], jnp.int32)"
U32_A = f"jnp.array([7, 0, 1, {2**32 - 1}, 5, {2**32 - 1}], jnp.uint32)"
U32_B = "jnp.array([0, 0, 0, 0, 3, 2], jnp.uint32)"

CASES = [
    # Reductions without an identity are fine over non-empty axes of an otherwise empty array.
    ("max_over_nonempty_axes", "default", "[jnp.max(jnp.zeros((0, 3)), axis=1), jnp.max(jnp.zeros((0, 3)), axis=1, keepdims=True), jnp.min(jnp.zeros((3, 0)), axis=0), jnp.max(jnp.zeros((0, 3), jnp.int32), axis=1), jnp.max(jnp.zeros((2, 0, 3)), axis=(0, 2)), jnp.min(jnp.zeros((2, 0, 3)), axis=2)]"),
    ("argmax_over_nonempty_axes", "default", "[jnp.argmax(jnp.zeros((0, 3)), axis=1), jnp.argmin(jnp.zeros((3, 0)), axis=0)]"),
    # Integer division and remainder by zero, and INT_MIN by -1.
    ("int32_division", "default", f"[f({I32_A}, {I32_B}) for f in (jnp.remainder, jnp.fmod, jnp.floor_divide, lax.rem, lax.div)]"),
    ("uint32_division", "default", f"[f({U32_A}, {U32_B}) for f in (jnp.remainder, jnp.fmod, jnp.floor_divide, lax.rem, lax.div)]"),
    ("division_by_weak_zero", "default", f"[jnp.remainder({I32_A}, 0), jnp.fmod({I32_A}, 0), jnp.floor_divide({I32_A}, 0), jnp.remainder({U32_A}, 0)]"),
    # randint: bounds outside the dtype are clipped to it, and a maxval above its maximum still
    # reaches the maximum. Out-of-range integer bounds need x64 (in 32-bit mode JAX rejects the
    # Python ints); 8- and 16-bit samples convert their bounds to int32 first, wrapping.
    ("randint_clip_32", "x64", "[random.randint(K(0), (64,), 0, 2**40, jnp.int32), random.randint(K(1), (64,), -2**40, 5, jnp.int32), random.randint(K(2), (64,), 2**31 - 3, 2**31 + 10, jnp.int32), random.randint(K(3), (64,), -2**40, 2**40, jnp.int32), random.randint(K(4), (64,), -5, 10, jnp.uint32), random.randint(K(5), (64,), 0, 2**32, jnp.uint32), random.randint(K(6), (64,), 2**32 - 3, 2**40, jnp.uint32), random.randint(K(7), (64,), -2**40, 2**40, jnp.uint32)]"),
    ("randint_clip_64", "x64", "[random.randint(K(8), (64,), 2**63 - 3, jnp.array(2**64 - 1, jnp.uint64), jnp.int64), random.randint(K(9), (64,), jnp.array(2**63, jnp.uint64), jnp.array(2**64 - 1, jnp.uint64), jnp.uint64), random.randint(K(10), (64,), -5, 2**62, jnp.uint64)]"),
    ("randint_clip_narrow", "x64", "[random.randint(K(11), (64,), 0, 1000, jnp.uint8), random.randint(K(12), (64,), 250, 1000, jnp.uint8), random.randint(K(13), (64,), -5, 3, jnp.uint8), random.randint(K(14), (64,), -1000, -120, jnp.int8), random.randint(K(15), (64,), 32760, 70000, jnp.int16), random.randint(K(16), (64,), 120, 2**32 + 5, jnp.int8), random.randint(K(17), (64,), -70000, 2**40 + 7, jnp.uint16)]"),
    ("randint_float_bounds", "x64", "[random.randint(K(23), (64,), 0.0, 1e10, jnp.int32), random.randint(K(24), (64,), -1e10, 0.0, jnp.int32), random.randint(K(25), (64,), 0.5, 9.9, jnp.int32)]"),
    ("randint_clip_default", "default", f"[random.randint(K(18), (64,), 2**31 - 3, jnp.array({2**32 - 1}, jnp.uint32)), random.randint(K(19), (64,), -5, 10, jnp.uint32), random.randint(K(20), (64,), 0, 1000, jnp.uint8)]"),
    # An empty range (maxval <= minval) gives minval.
    ("randint_empty_range", "default", "[random.randint(K(21), (8,), 5, 3), random.randint(K(22), (2, 4), jnp.array([[5], [0]]), jnp.array([3, 10, -3, 8])), random.randint(K(0), (0,), 5, 3)]"),
    # Empty categories and populations are fine when nothing is drawn from them.
    ("categorical_empty_batch", "default", "random.categorical(K(0), jnp.zeros((3, 0)), axis=0)"),
    ("choice_nothing_from_nothing", "default", "[random.choice(K(0), 0, (0,)), random.choice(K(0), 0, (0,), replace=False), random.choice(K(0), jnp.zeros((0, 3)), (2,), axis=1)]"),
    # Rounding keeps integers (and bools, except in round) as they are.
    ("rounding_integers", "default", "[jnp.floor(jnp.array([1, -2, 3], jnp.int32)), jnp.ceil(jnp.array([1, -2, 3], jnp.int32)), jnp.round(jnp.array([1, -2, 3], jnp.int32)), jnp.floor(jnp.array([1, 2, 4294967295], jnp.uint32)), jnp.round(jnp.array([-7, 7], jnp.int8)), jnp.floor(jnp.array([True, False])), jnp.ceil(jnp.array([True, False]))]"),
    # The float functions that are not float-only promote integers to float32.
    ("float_functions_promote", "default", "[f(jnp.array([1, -2, 3], jnp.int32)) for f in (jnp.exp, jnp.tanh, jnp.log1p, jnp.arctan, jax.scipy.special.erf, jax.nn.softplus)]"),
    # An einsum letter of size 1 broadcasts against a longer one.
    ("einsum_broadcasts_size_1", "default", "[jnp.einsum('ij,jk->ik', jnp.array([[1.0], [2.0]]), jnp.arange(12.0).reshape(3, 4)), jnp.einsum('ij,ij->ij', jnp.array([[1.0], [2.0]]), jnp.arange(8.0).reshape(2, 4)), jnp.einsum('ij->j', jnp.ones((1, 3)))]"),
]

ERRORS = [
    ("max_of_empty", "default", "jnp.max(jnp.zeros((0,)))"),
    ("max_over_empty_axis", "default", "jnp.max(jnp.zeros((0, 3)), axis=0)"),
    ("max_all_of_empty_2d", "default", "jnp.max(jnp.zeros((0, 3)))"),
    ("min_over_empty_axis", "default", "jnp.min(jnp.zeros((3, 0)), axis=1)"),
    ("max_of_empty_bool", "default", "jnp.max(jnp.zeros((0,), bool))"),
    ("max_of_empty_jit", "default", "jax.jit(jnp.max)(jnp.zeros((0,)))"),
    ("argmax_of_empty", "default", "jnp.argmax(jnp.zeros((0,)))"),
    ("argmax_over_empty_axis", "default", "jnp.argmax(jnp.zeros((0, 3)), axis=0)"),
    ("categorical_no_classes", "default", "random.categorical(K(0), jnp.zeros((0,)))"),
    ("categorical_no_classes_batch", "default", "random.categorical(K(0), jnp.zeros((3, 0)))"),
    ("categorical_no_classes_axis_0", "default", "random.categorical(K(0), jnp.zeros((0, 3)), axis=0)"),
    ("categorical_no_classes_no_samples", "default", "random.categorical(K(0), jnp.zeros((0,)), shape=(0,))"),
    ("choice_from_nothing", "default", "random.choice(K(0), 0, (3,))"),
    ("choice_from_empty_axis", "default", "random.choice(K(0), jnp.zeros((3, 0)), (2,), axis=1)"),
    ("sigmoid_of_int32", "default", "jax.nn.sigmoid(jnp.array([1, 2], jnp.int32))"),
    ("sigmoid_of_bool", "default", "jax.nn.sigmoid(jnp.array([True]))"),
    ("sigmoid_of_int32_jit", "default", "jax.jit(jax.nn.sigmoid)(jnp.array([1, 2], jnp.int32))"),
    ("rsqrt_of_int32", "default", "lax.rsqrt(jnp.array([1, 4], jnp.int32))"),
    ("round_of_bool", "default", "jnp.round(jnp.array([True, False]))"),
    ("einsum_repeated_output", "default", "jnp.einsum('ij,jk->ikk', jnp.ones((2, 3)), jnp.ones((3, 4)))"),
    ("einsum_unknown_output", "default", "jnp.einsum('ij,jk->ikz', jnp.ones((2, 3)), jnp.ones((3, 4)))"),
    ("einsum_size_mismatch", "default", "jnp.einsum('ij,jk->ik', jnp.ones((2, 3)), jnp.ones((2, 4)))"),
    ("einsum_rank_mismatch", "default", "jnp.einsum('ijk,jk->ik', jnp.ones((2, 3)), jnp.ones((3, 4)))"),
    ("einsum_operand_count", "default", "jnp.einsum('ij,jk->ik', jnp.ones((2, 3)))"),
]


def leaf(a):
    import numpy as np

    a = np.asarray(a)
    flat = a.ravel()
    out = {"shape": list(a.shape), "dtype": str(a.dtype)}
    if a.dtype.kind == "f":
        # Bit patterns, so that parsing cannot round them: uint32 for float32, uint64 for float64.
        out["data"] = [int(v) for v in flat.view(np.uint32 if a.dtype == np.float32 else np.uint64)]
    elif a.dtype.kind == "b":
        out["data"] = [bool(v) for v in flat]
    else:
        out["data"] = [int(v) for v in flat]
    return out


def run(config):
    import jax

    if config == "x64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    from jax import lax, random

    scope = {"jax": jax, "jnp": jnp, "lax": lax, "random": random, "np": np, "K": random.PRNGKey}
    cases, errors = {}, {}
    for name, cfg, program in CASES:
        if cfg == config:
            leaves = jax.tree_util.tree_leaves(eval(program, scope))
            cases[name] = {"config": cfg, "program": program, "outputs": [leaf(x) for x in leaves]}
    for name, cfg, program in ERRORS:
        if cfg != config:
            continue
        try:
            eval(program, scope)
        except Exception as e:  # noqa: BLE001 - any exception is JAX's answer here
            message = str(e).strip().splitlines()[0]
            errors[name] = {"config": cfg, "program": program, "error": f"{type(e).__name__}: {message}"}
        else:
            raise AssertionError(f"{name}: JAX accepted {program}")
    return {"cases": cases, "errors": errors}


if __name__ == "__main__":
    if len(sys.argv) > 1:
        json.dump(run(sys.argv[1]), sys.stdout)
        sys.exit(0)
    import jax

    cases, errors = {}, {}
    for config in ("default", "x64"):
        text = subprocess.run([sys.executable, __file__, config], check=True, capture_output=True, text=True).stdout
        part = json.loads(text)
        cases.update(part["cases"])
        errors.update(part["errors"])
    doc = {
        "jax_version": jax.__version__,
        "generator": "tests/data/gen/edges.py",
        "cases": {name: cases[name] for name, _, _ in CASES},
        "errors": {name: errors[name] for name, _, _ in ERRORS},
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
