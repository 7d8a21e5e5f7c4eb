"""Computes tests/data/random_samplers.json with JAX 0.10.2 (run once; the tests read the JSON).

    python3 tests/data/gen/random_samplers.py > tests/data/random_samplers.json

The samplers of `jax.random` beyond the basic ones, under JAX's default config (threefry2x32,
`jax_threefry_partitionable=True`, 32-bit mode) or with `jax_enable_x64` (`config: x64`).
Each case is a Python expression (`program`) evaluated with `jax`, `jnp`, `random` and `np` in
scope; `K` is `random.PRNGKey` and `V(f, seed)` is `jax.vmap(f)` over `random.split(K(seed),
3)`, so a case gives the eager draw and the per-key draws of a batch of keys. Outputs use the
format of tests/data/random.json (see tests/data/gen/random.py, whose `leaf` writes them):
float data as bit patterns, large arrays as a strided sample plus a checksum.
"""
import importlib.util
import json
import os
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    "random_gen", os.path.join(os.path.dirname(os.path.abspath(__file__)), "random.py"))
_random_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_random_gen)
leaf = _random_gen.leaf

CASES = [
    # Fold-in and key from traced integers (a jitted step counter).
    ("fold_in_traced", "default", "[jax.jit(lambda k, i: random.fold_in(k, i))(K(0), jnp.int32(i)) for i in (0, 7, -1, 2**31 - 1)]"),
    ("key_traced", "default", "[jax.jit(lambda s: random.PRNGKey(s))(jnp.int32(s)) for s in (0, 42, -1)] + [jax.jit(lambda s: random.PRNGKey(s))(jnp.uint32(4000000000))]"),
    ("key_traced_x64", "x64", "[jax.jit(lambda s: random.PRNGKey(s))(jnp.int64(s)) for s in (0, 2**40 + 3, -1)]"),
    ("fold_in_scan", "default", "jax.lax.scan(lambda k, i: (k, random.normal(random.fold_in(k, i), (2,))), K(5), jnp.arange(4))[1]"),
    # Location-scale families built on uniform, normal and exponential draws.
    ("laplace", "default", "[random.laplace(K(0), (300,)), V(lambda k: random.laplace(k, (4,)), 1)]"),
    ("logistic", "default", "[random.logistic(K(0), (300,)), V(lambda k: random.logistic(k, (4,)), 1)]"),
    ("cauchy", "default", "[random.cauchy(K(0), (300,)), V(lambda k: random.cauchy(k, (4,)), 1)]"),
    ("lognormal", "default", "[random.lognormal(K(0), 0.5, (300,)), random.lognormal(K(2), jnp.array([0.1, 1.0, 2.0]), (2, 3)), V(lambda k: random.lognormal(k, 1.0, (4,)), 1)]"),
    ("pareto", "default", "[random.pareto(K(0), 3.0, (300,)), random.pareto(K(2), jnp.array([0.5, 1.0, 4.0]), (2, 3)), V(lambda k: random.pareto(k, 2.0, (4,)), 1)]"),
    ("rademacher", "default", "[random.rademacher(K(0), (300,)), random.rademacher(K(2), (5,), jnp.float32), V(lambda k: random.rademacher(k, (4,)), 1)]"),
    ("rayleigh", "default", "[random.rayleigh(K(0), 2.0, (300,)), random.rayleigh(K(2), jnp.array([0.5, 1.0, 4.0]), (2, 3)), V(lambda k: random.rayleigh(k, 1.0, (4,)), 1)]"),
    ("weibull_min", "default", "[random.weibull_min(K(0), 2.0, 1.5, (300,)), random.weibull_min(K(2), jnp.array([0.5, 1.0, 4.0]), 0.7, (2, 3)), V(lambda k: random.weibull_min(k, 1.0, 2.0, (4,)), 1)]"),
    ("maxwell", "default", "[random.maxwell(K(0), (300,)), V(lambda k: random.maxwell(k, (4,)), 1)]"),
    ("double_sided_maxwell", "default", "[random.double_sided_maxwell(K(0), 1.0, 2.0, (300,)), random.double_sided_maxwell(K(2), jnp.array([0.0, 5.0]), 0.5, (3,)), V(lambda k: random.double_sided_maxwell(k, 0.0, 1.0, (4,)), 1)]"),
    ("triangular", "default", "[random.triangular(K(0), -1.0, 0.5, 2.0, (300,)), random.triangular(K(2), jnp.array([0.0, 1.0, 2.0]), 2.5, 3.0, (2, 3)), V(lambda k: random.triangular(k, 0.0, 0.2, 1.0, (4,)), 1)]"),
    ("wald", "default", "[random.wald(K(0), 1.5, (300,)), random.wald(K(2), jnp.array([0.2, 1.0, 5.0]), (2, 3)), V(lambda k: random.wald(k, 1.0, (4,)), 1)]"),
    ("geometric", "default", "[random.geometric(K(0), 0.3, (300,)), random.geometric(K(2), jnp.array([0.05, 0.5, 0.99]), (2, 3)), V(lambda k: random.geometric(k, 0.2, (4,)), 1)]"),
    ("families_f64", "x64", "[random.laplace(K(0), (50,)), random.logistic(K(0), (50,)), random.lognormal(K(0), 0.5, (50,)), random.pareto(K(0), 3.0, (50,)), random.rayleigh(K(0), 2.0, (50,)), random.maxwell(K(0), (50,)), random.triangular(K(0), -1.0, 0.5, 2.0, (50,)), random.wald(K(0), 1.5, (50,))]"),
    # Gamma (Marsaglia-Tsang rejection per element) and the samplers built on it.
    ("gamma", "default", "[random.gamma(K(0), 2.5, (200,)), random.gamma(K(2), jnp.array([0.1, 0.5, 1.0, 3.0, 20.0]), (2, 5)), V(lambda k: random.gamma(k, 0.7, (4,)), 1)]"),
    ("loggamma", "default", "[random.loggamma(K(0), 0.01, (100,)), random.loggamma(K(2), jnp.array([0.1, 0.5, 1.0, 3.0, 20.0]), (2, 5)), V(lambda k: random.loggamma(k, 0.7, (4,)), 1)]"),
    ("gamma_grad", "default", "[jax.grad(lambda a: (random.gamma(K(3), a, (6,)) * jnp.arange(1.0, 7.0)).sum())(jnp.array([0.3, 1.0, 2.5, 7.0, 40.0, 0.05])), jax.grad(lambda a: (random.loggamma(K(3), a, (6,)) * jnp.arange(1.0, 7.0)).sum())(jnp.array([0.3, 1.0, 2.5, 7.0, 40.0, 0.05]))]"),
    ("beta", "default", "[random.beta(K(0), 2.0, 3.0, (100,)), random.beta(K(2), jnp.array([0.2, 1.0, 5.0]), 0.5, (2, 3)), V(lambda k: random.beta(k, 1.5, 1.5, (4,)), 1)]"),
    ("dirichlet", "default", "[random.dirichlet(K(0), jnp.array([0.5, 1.0, 2.0]), (10,)), V(lambda k: random.dirichlet(k, jnp.array([1.0, 2.0, 3.0]), (2,)), 1)]"),
    ("t", "default", "[random.t(K(0), 3.0, (100,)), V(lambda k: random.t(k, 5.0, (4,)), 1)]"),
    ("chisquare", "default", "[random.chisquare(K(0), 4.0, (100,)), V(lambda k: random.chisquare(k, 2.0, (4,)), 1)]"),
    ("f", "default", "[random.f(K(0), 3.0, 5.0, (100,)), V(lambda k: random.f(k, 2.0, 7.0, (4,)), 1)]"),
    ("generalized_normal", "default", "[random.generalized_normal(K(0), 1.5, (100,)), V(lambda k: random.generalized_normal(k, 3.0, (4,)), 1)]"),
    ("ball", "default", "[random.ball(K(0), 3, 2, (20,)), random.ball(K(1), 4, 1.5, (5,)), V(lambda k: random.ball(k, 2, 2, (2,)), 1)]"),
    ("gamma_f64", "x64", "[random.gamma(K(0), 2.5, (50,)), random.loggamma(K(0), 0.3, (50,)), random.beta(K(1), 2.0, 3.0, (20,))]"),
    # Counts: poisson (Knuth below rate 10, transformed rejection above), binomial (inversion
    # below n * min(p, 1 - p) = 10, BTRS above) and multinomial (a scan of binomials).
    ("poisson", "default", "[random.poisson(K(0), 3.0, (200,)), random.poisson(K(2), jnp.array([0.0, 0.5, 4.0, 9.9, 10.0, 25.0, 1000.0]), (2, 7)), V(lambda k: random.poisson(k, jnp.array([2.0, 15.0, 0.0, 7.0]), (4,)), 1)]"),
    ("binomial", "default", "[random.binomial(K(0), 20.0, 0.3, (200,)), random.binomial(K(2), jnp.array([5.0, 50.0, 100.0, 1000.0, 7.0]), jnp.array([0.1, 0.5, 0.9, 0.3, 0.0]), (2, 5)), random.binomial(K(4), jnp.array([3.0, -1.0, jnp.inf, 10.0, 2.5, 8.0]), jnp.array([jnp.nan, 0.5, 0.5, 1.5, 0.5, 1.0]), (6,)), V(lambda k: random.binomial(k, jnp.array([10.0, 40.0]), 0.6, (2, 2)), 1)]"),
    ("multinomial", "default", "[random.multinomial(K(0), 100.0, jnp.array([0.2, 0.3, 0.5]), shape=(4, 3)), random.multinomial(K(2), jnp.array([10.0, 1000.0]), jnp.array([[0.1, 0.2, 0.7], [0.25, 0.25, 0.5]])), V(lambda k: random.multinomial(k, 20.0, jnp.array([0.5, 0.25, 0.25])), 1)]"),
    # Linear-algebra samplers: the factor of the covariance by each method, and QR of a normal
    # matrix with the signs of R's diagonal moved into Q.
    ("multivariate_normal", "default", "[random.multivariate_normal(K(0), jnp.array([1.0, -2.0, 0.5]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]), (5,)), random.multivariate_normal(K(2), jnp.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]])), random.multivariate_normal(K(1), jnp.array([1.0, -2.0, 0.5]), jnp.stack([jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]), 2.0 * jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]])])), V(lambda k: random.multivariate_normal(k, jnp.zeros(2), jnp.array([[1.0, 0.3], [0.3, 0.5]])), 1)]"),
    ("multivariate_normal_eigh", "default", "[random.multivariate_normal(K(0), jnp.array([1.0, -2.0, 0.5]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]), (5,), method='eigh'), random.multivariate_normal(K(0), jnp.array([1.0, -2.0, 0.5]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]), (5,), method='svd')]"),
    ("multivariate_normal_grad", "default", "jax.grad(lambda m, c: (random.multivariate_normal(K(3), m, c, (4,)) * jnp.arange(1.0, 13.0).reshape(4, 3)).sum(), argnums=(0, 1))(jnp.array([1.0, -2.0, 0.5]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]))"),
    ("orthogonal", "default", "[random.orthogonal(K(0), 3), random.orthogonal(K(1), 4, (2,)), V(lambda k: random.orthogonal(k, 2), 1)]"),
    ("counts_f64", "x64", "[random.poisson(K(0), 30.0, (50,)), random.binomial(K(0), 40.0, 0.3, (50,)), random.multinomial(K(1), 50.0, jnp.array([0.2, 0.3, 0.5])), random.multivariate_normal(K(0), jnp.array([1.0, -2.0, 0.5]), jnp.array([[2.0, 0.5, 0.3], [0.5, 1.0, -0.2], [0.3, -0.2, 0.8]]), (5,)), random.orthogonal(K(0), 3)]"),
]


def run(config):
    import jax

    if config == "x64":
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    from jax import random

    def V(f, seed):
        return jax.vmap(f)(random.split(random.PRNGKey(seed), 3))

    scope = {"jax": jax, "jnp": jnp, "random": random, "np": np, "K": random.PRNGKey, "V": V}
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
        text = subprocess.run([sys.executable, "-P", __file__, config], check=True, capture_output=True, text=True).stdout
        cases.update(json.loads(text))
    ordered = {name: cases[name] for name, _, _ in CASES}
    doc = {
        "jax_version": jax.__version__,
        "generator": "tests/data/gen/random_samplers.py",
        "note": "threefry2x32, jax_threefry_partitionable=True; large arrays keep a strided sample",
        "cases": ordered,
    }
    json.dump(doc, sys.stdout, indent=None, separators=(",", ":"))
    sys.stdout.write("\n")
