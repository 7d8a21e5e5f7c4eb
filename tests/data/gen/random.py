"""Computes tests/data/random.json with JAX 0.10.2 (run once; the tests read the JSON).

    python3 tests/data/gen/random.py > tests/data/random.json

Each case is a Python expression (`program`) evaluated with `jax`, `jnp`, `random`, `init`
(`jax.nn.initializers`) and `np` in scope, under JAX's default 32-bit mode (`config: default`)
or with `jax_enable_x64` (`config: x64`). Outputs are the leaves of its value in the format of
tests/data/golden.json ({shape, dtype, data}), except that float data are stored as their bit
patterns (uint32 for float32, uint64 for float64) so that no JSON parser can round them. Large
arrays store only the elements at `indices` (flat) plus `checksum`, the sum of all elements as
integers or float64.
"""
import json
import subprocess
import sys

LARGE = 4096  # arrays above this many elements are stored as a strided sample

K = "random.PRNGKey"
CASES = [
    # Keys, split and fold_in.
    ("key_seeds", "default", f"[{K}(s) for s in (0, 1, 42, -1, 2**31 - 1, -2**31, 123456789, 2**40 + 3)]"),
    ("key_seeds_x64", "x64", f"[{K}(s) for s in (0, -1, 2**40 + 3, -2**40, 2**63 - 1)]"),
    ("typed_key_data", "default", "random.key_data(random.key(42))"),
    ("split_2", "default", f"random.split({K}(0))"),
    ("split_5", "default", f"random.split({K}(42), 5)"),
    ("split_shape_2x3", "default", f"random.split({K}(1), (2, 3))"),
    ("split_of_split", "default", f"random.split(random.split({K}(1), 3)[2], 4)"),
    ("split_1000", "default", f"random.split({K}(9), 1000)"),
    ("fold_in_values", "default", f"[random.fold_in({K}(0), d) for d in (0, 1, 7, 2**31, 2**32 - 1)] + [random.fold_in({K}(42), 12345)]"),
    ("fold_in_chain", "default", f"random.fold_in(random.fold_in({K}(3), 1), 2)"),
    # Bits: counter layout, widths.
    ("bits_small", "default", f"[random.bits({K}(0), s) for s in ((), (1,), (5,), (2, 3), (0,))]"),
    ("bits_large_1d", "default", f"random.bits({K}(5), (70000,))"),
    ("bits_large_2d", "default", f"random.bits({K}(6), (300, 301))"),
    ("bits_narrow", "default", f"[random.bits({K}(2), (10,), jnp.uint8), random.bits({K}(2), (10,), jnp.uint16)]"),
    ("bits_u64", "x64", f"[random.bits({K}(0), (2,), jnp.uint64), random.bits({K}(11), (1000,), jnp.uint64)]"),
    # Uniform.
    ("uniform_shapes", "default", f"[random.uniform({K}(0), s) for s in ((), (5,), (3, 4))]"),
    ("uniform_range", "default", f"[random.uniform({K}(42), (2, 3), minval=-2.0, maxval=3.0), random.uniform({K}(1), (1000,), minval=0.1, maxval=0.7)]"),
    ("uniform_array_bounds", "default", f"random.uniform({K}(3), (3, 4), minval=jnp.array([[0.0], [1.0], [-5.0]]), maxval=jnp.array([1.0, 2.0, 3.0, 4.0]))"),
    ("uniform_large", "default", f"random.uniform({K}(7), (1 << 17,), minval=-1.5, maxval=2.5)"),
    ("uniform_f64", "x64", f"[random.uniform({K}(0), (4,)), random.uniform({K}(4), (500,), minval=-3.0, maxval=0.5)]"),
    # Normal and friends.
    ("normal_1000", "default", f"random.normal({K}(0), (1000,))"),
    ("normal_2d", "default", f"random.normal({K}(8), (7, 9))"),
    ("normal_large", "default", f"random.normal({K}(1), (1 << 17,))"),
    ("normal_f64", "x64", f"[random.normal({K}(0), (4,)), random.normal({K}(2), (500,))]"),
    ("truncated_normal", "default", f"[random.truncated_normal({K}(0), -2.0, 2.0, (1000,)), random.truncated_normal({K}(1), -1.0, 0.5, (50,))]"),
    ("truncated_normal_array_bounds", "default", f"random.truncated_normal({K}(2), jnp.array([[-1.0], [0.0], [-3.0]]), jnp.array([1.0, 2.0, 0.5, 3.0]), (3, 4))"),
    ("truncated_normal_f64", "x64", f"random.truncated_normal({K}(0), -2.0, 2.0, (300,))"),
    ("exponential", "default", f"random.exponential({K}(0), (1000,))"),
    ("exponential_f64", "x64", f"random.exponential({K}(1), (300,))"),
    ("gumbel", "default", f"random.gumbel({K}(0), (1000,))"),
    ("gumbel_f64", "x64", f"random.gumbel({K}(1), (300,))"),
    ("bernoulli", "default", f"[random.bernoulli({K}(0), 0.3, (200,)), random.bernoulli({K}(1), jnp.array([0.1, 0.5, 0.9, 1.0]), (3, 4)), random.bernoulli({K}(0), 0.5, (4,))]"),
    ("bernoulli_f64", "x64", f"random.bernoulli({K}(5), jnp.array(0.25), (100,))"),
    # Categorical.
    ("categorical_1d", "default", f"random.categorical({K}(0), jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4])), shape=(50,))"),
    ("categorical_batch", "default", f"[random.categorical({K}(1), jnp.sin(jnp.arange(15.0)).reshape(3, 5)), random.categorical({K}(2), jnp.sin(jnp.arange(15.0)).reshape(3, 5), axis=0)]"),
    ("categorical_shape_prefix", "default", f"random.categorical({K}(3), jnp.cos(jnp.arange(12.0)).reshape(3, 4), axis=-1, shape=(7, 3))"),
    ("categorical_f64", "x64", f"random.categorical({K}(4), jnp.linspace(-1.0, 1.0, 6), shape=(40,))"),
    # Integers.
    ("randint_small", "default", f"[random.randint({K}(7), (6,), 0, 10), random.randint({K}(1), (1000,), -5, 5)]"),
    ("randint_wide", "default", f"[random.randint({K}(2), (200,), 0, 2**31 - 1), random.randint({K}(3), (200,), -2**31, 2**31 - 1), random.randint({K}(4), (5,), 3, 3)]"),
    ("randint_array_bounds", "default", f"random.randint({K}(5), (3, 4), jnp.array([[0], [-10], [-100]]), jnp.array([1, 5, 20, 1000]))"),
    ("randint_narrow", "default", f"[random.randint({K}(6), (50,), 0, 256, jnp.uint8), random.randint({K}(6), (50,), -128, 128, jnp.int8), random.randint({K}(6), (50,), -1000, 1000, jnp.int16), random.randint({K}(6), (50,), 0, 70000, jnp.uint16)]"),
    ("randint_uint32", "default", f"random.randint({K}(8), (50,), 0, 2**31 - 1, jnp.uint32)"),
    ("randint_x64", "x64", f"[random.randint({K}(7), (6,), 0, 10), random.randint({K}(9), (100,), -2**40, 2**40), random.randint({K}(9), (100,), 0, 2**62, jnp.uint64)]"),
    # Permutations.
    ("permutation_int", "default", f"[random.permutation({K}(0), 10), random.permutation({K}(1), 2000)]"),
    ("permutation_array", "default", f"[random.permutation({K}(2), jnp.arange(12.0).reshape(4, 3)), random.permutation({K}(2), jnp.arange(12).reshape(4, 3), axis=1), random.permutation({K}(3), jnp.arange(12).reshape(4, 3), axis=1, independent=True)]"),
    # Choice.
    ("choice_range", "default", f"[random.choice({K}(0), 10, (5,)), random.choice({K}(0), 10, (5,), replace=False), random.choice({K}(1), 1000, (2, 3), replace=False)]"),
    ("choice_weighted", "default", f"[random.choice({K}(2), 5, (20,), p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15])), random.choice({K}(3), 5, (3,), replace=False, p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15])), random.choice({K}(4), 7, (30,), p=jnp.sin(jnp.arange(1.0, 8.0)) ** 2)]"),
    ("choice_array", "default", f"[random.choice({K}(5), jnp.arange(10.0).reshape(5, 2), (3,)), random.choice({K}(5), jnp.arange(10).reshape(5, 2), (2, 2), replace=False), random.choice({K}(6), jnp.arange(12).reshape(3, 4), (2,), axis=1), random.choice({K}(7), jnp.arange(12).reshape(3, 4), (5,), axis=1, p=jnp.array([0.4, 0.3, 0.2, 0.1]))]"),
    ("choice_weighted_f64", "x64", f"random.choice({K}(2), 5, (20,), p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15]))"),
    # The discrete samplers traced: under jit (bounds traced too), vmap over keys, and scan.
    ("jit_discrete", "default", f"jax.jit(lambda k: [random.categorical(k, jnp.sin(jnp.arange(15.0)).reshape(3, 5)), random.randint(k, (7,), -3, 9), random.permutation(k, 20), random.permutation(k, jnp.arange(12).reshape(4, 3), axis=1, independent=True), random.permutation(k, jnp.arange(12.0).reshape(4, 3)), random.choice(k, 10, (4,), replace=False), random.choice(k, 5, (6,), p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15])), random.choice(k, 5, (3,), replace=False, p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15])), random.choice(k, jnp.arange(10).reshape(5, 2), (2,), replace=False), random.bernoulli(k, 0.3, (8,))])({K}(11))"),
    ("jit_randint_traced_bounds", "default", f"jax.jit(lambda k, lo, hi: random.randint(k, (5,), lo, hi))({K}(14), jnp.array([-5, 0, 7, -2**31, 3]), jnp.array([3, 10, 100, 2**31 - 1, 3]))"),
    ("vmap_discrete", "default", f"jax.vmap(lambda k: [random.categorical(k, jnp.sin(jnp.arange(15.0)).reshape(3, 5)), random.randint(k, (4,), 0, 1000), random.permutation(k, 9), random.choice(k, 10, (3,), replace=False), random.choice(k, 5, (4,), p=jnp.array([0.1, 0.05, 0.5, 0.2, 0.15])), random.bernoulli(k, 0.6, (5,))])(random.split({K}(12), 3))"),
    ("scan_discrete", "default", f"jax.lax.scan(lambda c, k: (c, [random.randint(k, (4,), 0, 100), random.permutation(k, 6), random.categorical(k, jnp.log(jnp.array([0.1, 0.2, 0.3, 0.4]))), random.choice(k, 7, (3,), replace=False)]), 0, random.split({K}(13), 4))[1]"),
    # Initializers (jax.nn.initializers).
    ("init_glorot_uniform", "default", f"init.glorot_uniform()({K}(0), (4, 5))"),
    ("init_glorot_normal", "default", f"init.glorot_normal()({K}(0), (4, 5))"),
    ("init_he_normal_conv", "default", f"init.he_normal()({K}(1), (3, 3, 2, 4))"),
    ("init_he_uniform", "default", f"init.he_uniform()({K}(1), (6, 3))"),
    ("init_lecun_normal", "default", f"init.lecun_normal()({K}(2), (6, 2))"),
    ("init_lecun_uniform", "default", f"init.lecun_uniform()({K}(2), (6, 2))"),
    ("init_normal", "default", f"init.normal(0.02)({K}(3), (3, 3))"),
    ("init_uniform", "default", f"init.uniform(0.1)({K}(3), (3, 3))"),
    ("init_truncated_normal", "default", f"init.truncated_normal(0.5)({K}(3), (3, 3))"),
    ("init_variance_scaling_axes", "default", f"init.variance_scaling(0.5, 'fan_out', 'normal', in_axis=0, out_axis=(1, 2))({K}(4), (3, 4, 5))"),
    ("init_glorot_normal_f64", "x64", f"init.glorot_normal()({K}(0), (4, 5), jnp.float64)"),
]


def leaf(a):
    import numpy as np

    a = np.asarray(a)
    flat = a.ravel()
    out = {"shape": list(a.shape), "dtype": str(a.dtype)}
    if a.size > LARGE:
        idx = sorted(set(range(0, a.size, max(1, a.size // 1500))) | {a.size - 2, a.size - 1, 65535, 65536, 65537} & set(range(a.size)))
        out["indices"] = idx
        flat = flat[idx]
        out["checksum"] = float(a.astype(np.float64).sum()) if a.dtype.kind == "f" else int(a.astype(object).sum())
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
    import jax.nn.initializers as init
    import numpy as np
    from jax import random

    scope = {"jax": jax, "jnp": jnp, "random": random, "init": init, "np": np}
    cases = {}
    for name, cfg, program in CASES:
        if cfg != config:
            continue
        out = eval(program, scope)
        leaves = jax.tree_util.tree_leaves(out)
        cases[name] = {"config": cfg, "program": program, "outputs": [leaf(x) for x in leaves]}
    return cases


if __name__ == "__main__":
    if len(sys.argv) > 1:
        json.dump(run(sys.argv[1]), sys.stdout)
        sys.exit(0)
    import jax

    cases = {}
    for config in ("default", "x64"):
        text = subprocess.run([sys.executable, __file__, config], check=True, capture_output=True, text=True).stdout
        cases.update(json.loads(text))
    ordered = {name: cases[name] for name, _, _ in CASES}
    doc = {
        "jax_version": jax.__version__,
        "generator": "tests/data/gen/random.py",
        "note": "threefry2x32, jax_threefry_partitionable=True; large arrays keep a strided sample",
        "cases": ordered,
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
