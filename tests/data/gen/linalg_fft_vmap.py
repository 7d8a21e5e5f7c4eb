"""Computes tests/data/linalg_fft_vmap.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/linalg_fft_vmap.py > tests/data/linalg_fft_vmap.json

`vmap` of every `jnp.linalg`, `jax.scipy.linalg` and `jnp.fft` function, with the batch on an
axis other than the first where the function allows it, and `vmap` of the gradients of scalar
functions of their outputs (sums against fixed weights), in float32/complex64 and
float64/complex128. Eigenvectors, QR factors and singular vectors are determined only up to
sign, so only sign-invariant quantities (magnitudes, squares) are kept for them. Complex
values are written as `[re, im]` pairs.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        data = [[float(z.real), float(z.imag)] for z in a.ravel()]
    elif a.dtype.kind == "f":
        data = [v if np.isfinite(v) else str(v).replace("nan", "NaN").replace("inf", "Infinity")
                for v in a.ravel().astype(np.float64).tolist()]
    else:
        data = a.astype(np.int32).ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


rng = np.random.default_rng(11)


def rand(*shape):
    return rng.uniform(-1.0, 1.0, shape)


def weights(shape):
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5) / 2


def wsum(x):
    return jnp.sum(x * weights(x.shape).astype(x.dtype))


# Stacks of three matrices (the batch on axis 0 unless said otherwise).
M = rand(3, 4, 4)
SPD = M @ np.swapaxes(M, -1, -2) + 4 * np.eye(4)
G = rand(3, 4, 4) + 2 * np.eye(4)
SYM = (lambda s: (s + np.swapaxes(s, -1, -2)) / 2)(rand(3, 4, 4))
TALL = rand(3, 5, 3)
LOWER = np.tril(rand(3, 4, 4)) + 2 * np.eye(4)
B = rand(4, 2)
BB = rand(3, 4, 2)
B5 = rand(3, 5, 2)
# Signals: three rows of each (the batch on axis 1 for the transforms).
XR = rng.standard_normal((6, 3, 8))
ZR = rng.standard_normal((6, 3, 8)) + 1j * rng.standard_normal((6, 3, 8))
Z3 = rng.standard_normal((2, 3, 4, 6)) + 1j * rng.standard_normal((2, 3, 4, 6))

cases = {}


def put(name, **fields):
    cases[name] = {k: leaf(v) for k, v in fields.items()}


def vmap_grad(f, x, in_axes=0):
    return jax.vmap(jax.grad(lambda a: f(a)), in_axes)(x)


for dt, cdt in [("float32", "complex64"), ("float64", "complex128")]:
    f = lambda x: jnp.asarray(x, dt)
    spd, g, sym, tall, low, b, bb, b5 = map(f, (SPD, G, SYM, TALL, LOWER, B, BB, B5))
    # The same stacks with the batch moved to the last axis.
    g_last = jnp.moveaxis(g, 0, -1)
    spd_mid = jnp.moveaxis(spd, 0, 1)

    chol = jnp.linalg.cholesky
    put(f"cholesky_{dt}", spd_mid=spd_mid, vmap=jax.vmap(chol, 1)(spd_mid),
        vmap_grad=vmap_grad(lambda a: wsum(chol(a)), spd))
    solve = jnp.linalg.solve
    bb_last = jnp.moveaxis(bb, 0, 2)
    put(f"solve_{dt}", g=g, b=b, bb=bb, bb_last=bb_last,
        vmap_b=jax.vmap(solve, (None, 2), 2)(g[0], bb_last),
        vmap_both=jax.vmap(solve)(g, bb),
        vmap_grad=vmap_grad(lambda a: wsum(solve(a, b)), g))
    put(f"inv_{dt}", g_last=g_last, vmap=jax.vmap(jnp.linalg.inv, 2)(g_last),
        vmap_grad=vmap_grad(lambda a: wsum(jnp.linalg.inv(a)), g))
    sl = jnp.linalg.slogdet
    put(f"det_{dt}", g=g, vmap=jax.vmap(jnp.linalg.det)(g),
        vmap_sign=jax.vmap(lambda a: sl(a)[0])(g), vmap_logdet=jax.vmap(lambda a: sl(a)[1])(g),
        vmap_grad=vmap_grad(jnp.linalg.det, g),
        vmap_grad_logdet=vmap_grad(lambda a: sl(a)[1], g))
    eig_f = lambda a: (lambda wv: wsum(wv[0]) + wsum(wv[1] ** 2))(jnp.linalg.eigh(a))
    put(f"eigh_{dt}", sym=sym, vmap_w=jax.vmap(lambda a: jnp.linalg.eigh(a)[0])(sym),
        vmap_vabs=jax.vmap(lambda a: jnp.abs(jnp.linalg.eigh(a)[1]))(sym),
        vmap_grad=vmap_grad(eig_f, sym))
    qr_f = lambda a: (lambda qr: wsum(qr[0] ** 2) + wsum(qr[1] ** 2))(jnp.linalg.qr(a))
    put(f"qr_{dt}", tall=tall, vmap_qabs=jax.vmap(lambda a: jnp.abs(jnp.linalg.qr(a)[0]))(tall),
        vmap_rabs=jax.vmap(lambda a: jnp.abs(jnp.linalg.qr(a)[1]))(tall),
        vmap_rcabs=jax.vmap(lambda a: jnp.abs(jnp.linalg.qr(a, mode="complete")[1]))(tall),
        vmap_grad=vmap_grad(qr_f, tall),
        vmap_grad_complete=vmap_grad(
            lambda a: (lambda qr: wsum(qr[0] ** 2) + wsum(qr[1] ** 2))(
                jnp.linalg.qr(a, mode="complete")), g))
    svd = lambda a: jnp.linalg.svd(a, full_matrices=False)
    svd_f = lambda a: (lambda usv: wsum(usv[0] ** 2) + wsum(usv[1]) + wsum(usv[2] ** 2))(svd(a))
    put(f"svd_{dt}", tall=tall, vmap_s=jax.vmap(lambda a: svd(a)[1])(tall),
        vmap_uabs=jax.vmap(lambda a: jnp.abs(svd(a)[0]))(tall),
        vmap_vhabs=jax.vmap(lambda a: jnp.abs(svd(a)[2]))(tall),
        vmap_ufull_sq=jax.vmap(lambda a: jnp.linalg.svd(a)[0] ** 2 @ jnp.ones(5, dt))(tall),
        vmap_grad=vmap_grad(svd_f, tall),
        vmap_grad_svdvals=vmap_grad(lambda a: wsum(jnp.linalg.svd(a, compute_uv=False)), tall))
    norm = jnp.linalg.norm
    put(f"norm_{dt}", tall=tall, vmap_fro=jax.vmap(lambda a: norm(a, "fro"))(tall),
        vmap_nuc=jax.vmap(lambda a: norm(a, "nuc"))(tall),
        vmap_inf=jax.vmap(lambda a: norm(a, np.inf), 2)(tall),
        vmap_vec3=jax.vmap(lambda a: norm(a, 3, axis=0), 1)(tall),
        vmap_grad_2=vmap_grad(lambda a: norm(a, 2), tall))
    put(f"lstsq_{dt}", tall=tall, b5=b5,
        vmap=jax.vmap(lambda a, b: jnp.linalg.lstsq(a, b)[0])(tall, b5),
        vmap_grad=vmap_grad(lambda a: wsum(jnp.linalg.lstsq(a, b5[0])[0]), tall))
    put(f"pinv_{dt}", tall=tall, vmap=jax.vmap(jnp.linalg.pinv, 2)(jnp.moveaxis(tall, 0, 2)),
        vmap_grad=vmap_grad(lambda a: wsum(jnp.linalg.pinv(a)), tall))
    mp = jnp.linalg.matrix_power
    put(f"matrix_power_{dt}", g=g, vmap_p3=jax.vmap(lambda a: mp(a, 3))(g),
        vmap_pm2=jax.vmap(lambda a: mp(a, -2))(g),
        vmap_grad=vmap_grad(lambda a: wsum(mp(a, 3)), g))
    st = lambda a, b: jsl.solve_triangular(a, b, lower=True)
    stt = lambda a, b: jsl.solve_triangular(a, b, trans=1, lower=False, unit_diagonal=True)
    put(f"solve_triangular_{dt}", low=low, b=b, bb=bb, vmap_a=jax.vmap(st, (0, None))(low, b),
        vmap_both=jax.vmap(stt)(jnp.swapaxes(low, -1, -2), bb),
        vmap_grad_a=vmap_grad(lambda a: wsum(st(a, b)), low),
        vmap_grad_b=vmap_grad(lambda b: wsum(stt(low[0].T, b)), bb))
    lu_f = lambda a: (lambda plu: wsum(plu[1]) + wsum(plu[2]))(jsl.lu(a))
    put(f"lu_{dt}", g=g, tall=tall, vmap_p=jax.vmap(lambda a: jsl.lu(a)[0])(g),
        vmap_l=jax.vmap(lambda a: jsl.lu(a)[1])(tall),
        vmap_u=jax.vmap(lambda a: jsl.lu(a)[2])(tall),
        vmap_grad=vmap_grad(lu_f, g))

    x, z, z3 = jnp.asarray(XR, dt), jnp.asarray(ZR, cdt), jnp.asarray(Z3, cdt)
    fft = jnp.fft
    put(f"fft_{dt}", x=x, z=z, z3=z3,
        fft=jax.vmap(lambda v: fft.fft(v, n=6), 1)(z),
        ifft=jax.vmap(lambda v: fft.ifft(v, axis=0, norm="ortho"), 1, 2)(z),
        rfft=jax.vmap(fft.rfft, 1)(x),
        irfft=jax.vmap(lambda v: fft.irfft(v, n=9), 1)(z),
        fft2=jax.vmap(fft.fft2, 1)(z3),
        ifft2=jax.vmap(lambda v: fft.ifft2(v, axes=(0, 2)), 1)(z3),
        fftn=jax.vmap(lambda v: fft.fftn(v, s=(4, 5)), 1)(z3),
        ifftn=jax.vmap(fft.ifftn, 1)(z3),
        grad_rfft=jax.vmap(jax.grad(lambda v: jnp.sum(jnp.abs(fft.rfft(v)) ** 2)), 1)(x),
        grad_irfft=jax.vmap(jax.grad(lambda v: wsum(fft.irfft(fft.rfft(v) * 1j, n=8))), 1)(x),
        grad_fft2=jax.vmap(jax.grad(lambda v: jnp.sum(jnp.abs(fft.fft2(v.astype(cdt))))), 1)(x),
        grad_ifftn=jax.vmap(jax.grad(lambda v: wsum(jnp.real(fft.ifftn(v * (1 + 2j))))), 1)(x))

print(json.dumps({"jax_version": jax.__version__, "cases": cases}, indent=None))
