"""Computes tests/data/optax.json with Optax (run once; the tests read the JSON).

    python3 tests/data/gen/optax_golden.py > tests/data/optax.json

Each case runs an optimizer for a few steps on a small pytree (a list of a matrix and a
vector, float32) with fixed gradients per step, and records the parameters after every
step. Schedules are recorded at a range of step counts.
"""
import json

import jax.numpy as jnp
import numpy as np
import optax

PARAMS = [
    np.array([[0.5, -1.0, 1.5], [0.25, -0.75, 2.0]], np.float32),
    np.array([0.1, -0.2, 0.3], np.float32),
]
# Gradients for each step: different signs and scales, some zeros.
GRADS = [
    [np.array([[0.3, -0.2, 0.0], [1.5, 0.1, -0.7]], np.float32), np.array([0.05, -0.4, 0.9], np.float32)],
    [np.array([[-0.1, 0.4, 0.2], [0.3, -1.2, 0.0]], np.float32), np.array([0.0, 0.3, -0.5], np.float32)],
    [np.array([[2.0, 0.0, -0.3], [-0.6, 0.2, 0.8]], np.float32), np.array([-0.7, 0.1, 0.2], np.float32)],
    [np.array([[0.05, -0.05, 0.6], [0.0, 0.9, -0.1]], np.float32), np.array([0.2, 0.0, -0.3], np.float32)],
]

OPTIMIZERS = {
    "sgd": optax.sgd(0.1),
    "sgd_momentum": optax.sgd(0.1, momentum=0.9),
    "sgd_nesterov": optax.sgd(0.1, momentum=0.9, nesterov=True),
    "adam": optax.adam(0.01),
    "adam_b1_eps_root": optax.adam(0.05, b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-8),
    "adamw": optax.adamw(0.01, weight_decay=0.1),
    "rmsprop": optax.rmsprop(0.01),
    "rmsprop_momentum": optax.rmsprop(0.01, decay=0.8, momentum=0.5),
    "adagrad": optax.adagrad(0.1),
    "clip_then_sgd": optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1)),
    "adam_cosine": optax.adam(optax.cosine_decay_schedule(0.01, 3, alpha=0.1)),
}

SCHEDULES = {
    "exponential_decay": optax.exponential_decay(0.1, 3, 0.5),
    "exponential_decay_staircase_begin_end": optax.exponential_decay(
        0.1, 2, 0.5, transition_begin=2, staircase=True, end_value=0.02),
    "cosine_decay": optax.cosine_decay_schedule(0.1, 8, alpha=0.2),
    "linear": optax.linear_schedule(0.0, 1.0, 5, transition_begin=1),
    "warmup_cosine_decay": optax.warmup_cosine_decay_schedule(0.0, 0.1, 3, 10, end_value=0.01),
}
COUNTS = list(range(0, 13))


def run(opt):
    params = [jnp.asarray(p) for p in PARAMS]
    state = opt.init(params)
    trajectory = []
    for grads in GRADS:
        updates, state = opt.update([jnp.asarray(g) for g in grads], state, params)
        params = optax.apply_updates(params, updates)
        trajectory.append([np.asarray(p).ravel().astype(np.float64).tolist() for p in params])
    return trajectory


out = {
    "params": [{"shape": list(p.shape), "data": p.ravel().tolist()} for p in PARAMS],
    "grads": [[g.ravel().astype(np.float64).tolist() for g in step] for step in GRADS],
    "optimizers": {name: run(opt) for name, opt in OPTIMIZERS.items()},
    "schedules": {
        name: [float(s(jnp.asarray(c, jnp.int32))) for c in COUNTS] for name, s in SCHEDULES.items()
    },
    "counts": COUNTS,
    "optax_version": optax.__version__,
}
print(json.dumps(out, indent=1))
