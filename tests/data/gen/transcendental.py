"""Computes tests/data/transcendental.json with JAX (run once; the tests read the JSON).

    python3 tests/data/gen/transcendental.py > tests/data/transcendental.json

f32 inputs and JAX CPU's results for the transcendental functions rjax reproduces bit for bit
(`jax.nn.sigmoid` among them, which XLA expands to `1 / (1 + exp(-x))`),
as IEEE bit patterns (decimal text would round): a sweep of each function's domain, its
overflow and underflow edges, infinities and NaN.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np

rng = np.random.default_rng(0)
edges = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.4e38, 88.3, 88.37,
         88.38, 88.5, 88.72, 88.73, 88.8, -87.3, -87.34, -87.4, -87.8, -88.0, -103.0, -0.999999, 1e-5]
SWEEPS = {
    "exp": np.concatenate([np.linspace(-90, 90, 1500), rng.normal(size=500) * 3]),
    "log": np.concatenate([np.exp(rng.uniform(-87, 88, 1500)), rng.uniform(0, 2, 500)]),
    "log1p": np.concatenate([rng.uniform(-1, 1, 1000), np.exp(rng.uniform(-20, 20, 1000))]),
    "tanh": np.concatenate([np.linspace(-10, 10, 1500), rng.normal(size=500) * 1e-3]),
    "sigmoid": np.concatenate([np.linspace(-100, 100, 1500), rng.normal(size=500) * 4]),
}
FUNCTIONS = {"sigmoid": jax.nn.sigmoid}

cases = {}
for name, sweep in SWEEPS.items():
    x = np.concatenate([sweep, edges]).astype(np.float32)
    y = np.asarray(jax.jit(FUNCTIONS.get(name) or getattr(jnp, name))(x))
    cases[name] = {"x": x.view(np.uint32).tolist(), "out": y.view(np.uint32).tolist()}
print(json.dumps(cases))
