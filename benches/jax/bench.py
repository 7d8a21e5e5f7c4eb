"""JAX side of the rjax benchmarks, timed on request so the Rust bench can alternate with it.

    python3 benches/jax/bench.py w1|w2|w3w5|w4|w6|w7|random|scan|conv|reduce|linalg|fft

builds the workload's jitted functions, prints `ready NAME...`, then answers each line
`NAME RUNS` read from stdin with `NAME SECONDS`: the median seconds per call over RUNS timed
calls (after one untimed call). `w8_child` instead runs one W3 step and exits (W8 times the
whole process).
"""
import os
import sys
import time

if sys.argv[1:] == ["w7"]:
    # W7 runs on 8 virtual CPU devices; XLA reads the flag when its backend starts.
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import jax
import jax.numpy as jnp


class PerCall:
    """A function timed as `calls` back-to-back calls, reported per call (for microseconds)."""

    def __init__(self, f, calls):
        self.f, self.calls = f, calls

    def __call__(self):
        for _ in range(self.calls):
            self.f()


def median_time(f, runs):
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return sorted(times)[runs // 2] / getattr(f, "calls", 1)


def serve(functions):
    print("ready", *functions, flush=True)
    for line in sys.stdin:
        name, runs = line.split()
        print(name, median_time(functions[name], int(runs)), flush=True)


def w1():
    x = jnp.ones((5000, 5000), jnp.float32)
    slow_f = lambda x: x * x + x * 2.0
    fast_f = jax.jit(slow_f)
    b = jnp.arange(5000, dtype=jnp.float32) * 1e-4 - 0.25
    bias_relu = jax.jit(lambda x, b: jnp.maximum(x + b, 0.0))
    gelu = jax.jit(lambda x: jax.nn.gelu(x, approximate=True))
    softmax = jax.jit(lambda x: jax.nn.softmax(x, axis=-1))
    return {"jax_w1_op_by_op": lambda: slow_f(x).block_until_ready(),
            "jax_w1_jit": lambda: fast_f(x).block_until_ready(),
            "jax_w1_bias_relu": lambda: bias_relu(x, b).block_until_ready(),
            "jax_w1_gelu": lambda: gelu(x).block_until_ready(),
            "jax_w1_softmax": lambda: softmax(x).block_until_ready()}


def w2():
    a = jnp.ones((2048, 2048), jnp.float32) * 0.5
    b = jnp.ones((2048, 2048), jnp.float32) * 0.25
    mm = jax.jit(jnp.matmul)
    return {"jax_w2_matmul": lambda: mm(a, b).block_until_ready()}


def w6():
    # Per-call dispatch of a cached jitted scalar function, result synchronised each call.
    g = jax.jit(lambda x: x * x + 1.0)
    x = jnp.float32(3.0)
    g(x).block_until_ready()
    return {"jax_w6_jit_scalar_per_call": PerCall(lambda: g(x).block_until_ready(), 20_000)}


def mlp():
    """The MLP of W3 and W4 (benches/common/mlp.rs): parameters, batch and loss."""
    sizes = [784, 512, 512, 10]
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    params = [(jax.random.normal(keys[l], (sizes[l], sizes[l + 1])) * 0.05, jnp.zeros(sizes[l + 1]))
              for l in range(3)]
    inputs = jax.random.normal(keys[4], (128, sizes[0]))
    targets = jax.random.normal(keys[5], (128, sizes[3]))

    def loss(params, x, y):
        out = x
        for w, b in params:
            out = jnp.dot(x, w) + b
            x = jnp.tanh(out)
        return jnp.sum((out - y) ** 2)

    return params, inputs, targets, loss


def w3w5():
    params, inputs, targets, loss = mlp()
    step = jax.jit(jax.grad(loss))
    h = jax.jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) * x ** 2)))
    v = jnp.linspace(-1.0, 1.0, 256)
    return {"jax_w3_jit_grad_step": lambda: jax.block_until_ready(step(params, inputs, targets)),
            "jax_w5_jit_hessian_256": lambda: h(v).block_until_ready()}


def w4():
    params, inputs, targets, loss = mlp()
    step = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    return {"jax_w4_jit_vmap_grad": lambda: jax.block_until_ready(step(params, inputs, targets))}


def random():
    # jax.random samplers are jitted internally: one fused XLA kernel per call.
    key = jax.random.PRNGKey(0)
    n = 10_000_000
    return {"jax_random_normal_10M": lambda: jax.random.normal(key, (n,)).block_until_ready(),
            "jax_random_uniform_10M": lambda: jax.random.uniform(key, (n,)).block_until_ready()}


def reduce():
    p = jnp.ones((5000, 5000), jnp.float32) * 0.5
    t = jnp.ones((5000, 5000), jnp.float32) * 0.25
    loss = jax.jit(lambda p, t: jnp.sum((p - t) ** 2))
    rows = jax.jit(lambda x: jnp.sum(x * x, axis=1))
    total = jax.jit(jnp.sum)
    return {"jax_reduce_loss": lambda: loss(p, t).block_until_ready(),
            "jax_reduce_rows": lambda: rows(p).block_until_ready(),
            "jax_reduce_sum": lambda: total(p).block_until_ready()}


def w7():
    """The seed's pmap example on 8 devices (benches/w7_pmap.rs): per-device normal
    matrices, x @ x.T on each, and each device's mean."""
    assert jax.device_count() == 8
    draw = jax.pmap(lambda key: jax.random.normal(key, W7_SHAPE))
    gram = jax.pmap(lambda x: jnp.dot(x, x.T))
    mean = jax.pmap(jnp.mean)
    keys = jax.random.split(jax.random.PRNGKey(0), 8)
    return {"jax_w7_pmap": lambda: mean(gram(draw(keys))).block_until_ready()}


W7_SHAPE = (500, 600)


def scan():
    """A 1000-step scan of a tanh RNN cell (benches/scan_rnn.rs): the loss, and the loss
    with its gradient w.r.t. the cell."""
    steps, batch, inp, hidden = 1000, 16, 32, 64
    wave = lambda n, scale: jnp.sin(jnp.arange(n, dtype=jnp.float32) * 0.37) * scale
    cell = (wave(hidden * hidden, 0.1).reshape(hidden, hidden),
            wave(inp * hidden, 0.2).reshape(inp, hidden), jnp.zeros(hidden))
    h0 = jnp.zeros((batch, hidden))
    xs = wave(steps * batch * inp, 1.0).reshape(steps, batch, inp)

    def loss(cell, h0, xs):
        wh, wx, b = cell
        def step(h, x):
            h = jnp.tanh(h @ wh + x @ wx + b)
            return h, h
        _, hs = jax.lax.scan(step, h0, xs)
        return jnp.mean(hs ** 2)

    value = jax.jit(loss)
    both = jax.jit(jax.value_and_grad(loss))
    return {"jax_scan_rnn_value": lambda: value(cell, h0, xs).block_until_ready(),
            "jax_scan_rnn_value_and_grad": lambda: jax.block_until_ready(both(cell, h0, xs))}


def conv():
    """benches/conv.rs: a 3x3 SAME convolution, batch 32, 3 -> 32 channels, 32x32, f32, NCHW."""
    kx, kk = jax.random.split(jax.random.PRNGKey(0))
    x = jax.random.normal(kx, (32, 3, 32, 32))
    k = jax.random.normal(kk, (32, 3, 3, 3)) * 0.1
    dn = ("NCHW", "OIHW", "NCHW")
    f = lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn)
    forward = jax.jit(f)
    both = jax.jit(jax.value_and_grad(lambda x, k: jnp.sum(f(x, k)), argnums=(0, 1)))
    return {"jax_conv_forward": lambda: forward(x, k).block_until_ready(),
            "jax_conv_forward_backward": lambda: jax.block_until_ready(both(x, k))}


def linalg():
    """benches/linalg.rs: factorizations of 512x512 f32 matrices (LAPACK on CPU)."""
    n = 512
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
    spd = a @ a.T / n + jnp.eye(n, dtype=jnp.float32)
    sym = (a + a.T) * 0.5
    b = jnp.ones(n, jnp.float32)
    cholesky, solve = jax.jit(jnp.linalg.cholesky), jax.jit(jnp.linalg.solve)
    eigh, svd = jax.jit(jnp.linalg.eigh), jax.jit(jnp.linalg.svd)
    return {"jax_linalg_cholesky": lambda: cholesky(spd).block_until_ready(),
            "jax_linalg_solve": lambda: solve(a, b).block_until_ready(),
            "jax_linalg_eigh": lambda: jax.block_until_ready(eigh(sym)),
            "jax_linalg_svd": lambda: jax.block_until_ready(svd(a))}


def fft():
    """benches/fft.rs: the FFT of 2^20 complex64 points; rfft of 1024 rows of 1024 f32."""
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    n = 1 << 20
    z = jax.lax.complex(jax.random.normal(k1, (n,)), jax.random.normal(k2, (n,)))
    x = jax.random.normal(k3, (1024, 1024))
    fft1, rfft = jax.jit(jnp.fft.fft), jax.jit(jnp.fft.rfft)
    return {"jax_fft_1m": lambda: fft1(z).block_until_ready(),
            "jax_rfft_batch": lambda: rfft(x).block_until_ready()}


def w8_child():
    # W8's child process: one jit(grad) step of the W3 MLP and a number out. The rjax bench
    # times this whole process, from spawn (so the JAX import counts) to exit.
    params, inputs, targets, loss = mlp()
    grads = jax.jit(jax.grad(loss))(params, inputs, targets)
    print(float(jnp.sum(grads[0][0])))


if sys.argv[1] == "w8_child":
    w8_child()
else:
    serve({"w1": w1, "w2": w2, "w3w5": w3w5, "w4": w4, "w6": w6, "w7": w7, "random": random,
           "scan": scan, "conv": conv, "reduce": reduce, "linalg": linalg,
           "fft": fft}[sys.argv[1]]())
