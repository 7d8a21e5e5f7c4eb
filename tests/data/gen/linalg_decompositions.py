"""Computes tests/data/linalg_decompositions.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/linalg_decompositions.py > tests/data/linalg_decompositions.json

`jnp.linalg` (cholesky, solve, inv, det, slogdet, eigh, qr, svd, norm, lstsq, pinv,
matrix_power) and `jax.scipy.linalg` (solve_triangular, lu) on fixed matrices in float32 and
float64: values, gradients of scalar functions of the outputs (sums against fixed weights)
and `vmap` over a leading batch. Eigenvectors, QR factors and singular vectors are determined
only up to sign, so the scalar functions use sign-invariant quantities (squares of the
factors, reconstructions); the tests compare those.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        data = []
        for v in a.ravel().astype(np.float64):
            if np.isnan(v):
                data.append("NaN")
            elif np.isinf(v):
                data.append("Infinity" if v > 0 else "-Infinity")
            else:
                data.append(float(v))
    elif a.dtype.kind == "b":
        data = a.ravel().tolist()
    else:
        a = a.astype(np.int32)
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


rng = np.random.default_rng(7)


def rand(*shape):
    return rng.uniform(-1.0, 1.0, shape)


M = rand(4, 4)
SPD = M @ M.T + 4 * np.eye(4)
MB = rand(2, 3, 3)
SPD_B = MB @ np.swapaxes(MB, -1, -2) + 3 * np.eye(3)
G = rand(4, 4) + 2 * np.eye(4)
G_B = rand(2, 3, 3) + 2 * np.eye(3)
G5 = rand(5, 5) + 2 * np.eye(5)
TALL = rand(5, 3)
WIDE = rand(3, 5)
SYM = (lambda s: (s + s.T) / 2)(rand(4, 4))
B = rand(4, 2)
BV = rand(4)
B5 = rand(5, 2)
LOWER = np.tril(rand(4, 4)) + 2 * np.eye(4)
X3 = rand(2, 3, 4)
V6 = np.array([0.5, -1.5, 0.0, 2.0, -0.25, 1.0])


def weights(shape):
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5) / 2


def wsum(x):
    return jnp.sum(x * weights(x.shape).astype(x.dtype))


cases = {}


def put(name, **fields):
    cases[name] = {k: leaf(v) for k, v in fields.items()}


for dt in ["float32", "float64"]:
    f = lambda x: jnp.asarray(x, dt)
    spd, g, g5, tall, wide, sym = f(SPD), f(G), f(G5), f(TALL), f(WIDE), f(SYM)
    b, bv, b5, low, x3, v6 = f(B), f(BV), f(B5), f(LOWER), f(X3), f(V6)
    spd_b, g_b = f(SPD_B), f(G_B)

    chol = lambda a: wsum(jnp.linalg.cholesky(a))
    put(f"cholesky_{dt}", a=spd, l=jnp.linalg.cholesky(spd), grad=jax.grad(chol)(spd),
        batch=spd_b, vmap=jax.vmap(jnp.linalg.cholesky)(spd_b),
        notpd=jnp.linalg.cholesky(sym))

    put(f"solve_{dt}", a=g, b=b, bv=bv, x=jnp.linalg.solve(g, b), xv=jnp.linalg.solve(g, bv),
        grad_a=jax.grad(lambda a: wsum(jnp.linalg.solve(a, b)))(g),
        grad_b=jax.grad(lambda b: wsum(jnp.linalg.solve(g, b)))(b),
        batch=g_b, vmap=jax.vmap(jnp.linalg.solve, (0, None))(g_b, b[:3]),
        singular=jnp.linalg.solve(f([[1.0, 2.0], [2.0, 4.0]]), f([1.0, 1.0])))

    put(f"inv_{dt}", a=g, inv=jnp.linalg.inv(g), grad=jax.grad(lambda a: wsum(jnp.linalg.inv(a)))(g),
        batch=g_b, vmap=jax.vmap(jnp.linalg.inv)(g_b))

    sl = lambda a: jnp.linalg.slogdet(a)
    put(f"det_{dt}", a=g, a5=g5, det=jnp.linalg.det(g), det5=jnp.linalg.det(g5),
        det3=jnp.linalg.det(g_b), det2=jnp.linalg.det(g[:2, :2]),
        grad=jax.grad(jnp.linalg.det)(g), grad5=jax.grad(jnp.linalg.det)(g5),
        grad3=jax.grad(lambda a: jnp.sum(jnp.linalg.det(a)))(g_b),
        sign=sl(g5)[0], logdet=sl(g5)[1], sign_neg=sl(-g5)[0],
        grad_logdet=jax.grad(lambda a: sl(a)[1])(g5),
        vmap_logdet=jax.vmap(lambda a: sl(a)[1])(g_b),
        singular_sign=sl(f(np.zeros((4, 4))))[0], singular_logdet=sl(f(np.zeros((4, 4))))[1])

    w, v = jnp.linalg.eigh(sym)
    eig_f = lambda a: (lambda wv: wsum(wv[0]) + wsum(wv[1] ** 2))(jnp.linalg.eigh(a))
    put(f"eigh_{dt}", a=sym, w=w, vabs=jnp.abs(v), grad=jax.grad(eig_f)(sym),
        batch=spd_b, vmap_w=jax.vmap(lambda a: jnp.linalg.eigh(a)[0])(spd_b))

    q, r = jnp.linalg.qr(tall)
    qr_f = lambda a: (lambda qr: wsum(qr[0] ** 2) + wsum(qr[1] ** 2))(jnp.linalg.qr(a))
    qc, rc = jnp.linalg.qr(tall, mode="complete")
    put(f"qr_{dt}", a=tall, qabs=jnp.abs(q), rabs=jnp.abs(r), grad=jax.grad(qr_f)(tall),
        rcabs=jnp.abs(rc), qcshape=jnp.zeros(qc.shape), grad_square=jax.grad(qr_f)(g))

    u, s, vh = jnp.linalg.svd(tall, full_matrices=False)
    svd_f = lambda a: (lambda usv: wsum(usv[0] ** 2) + wsum(usv[1]) + wsum(usv[2] ** 2))(
        jnp.linalg.svd(a, full_matrices=False))
    uf, sf, vhf = jnp.linalg.svd(wide, full_matrices=True)
    put(f"svd_{dt}", a=tall, wide=wide, s=s, uabs=jnp.abs(u), vhabs=jnp.abs(vh),
        grad=jax.grad(svd_f)(tall), grad_wide=jax.grad(svd_f)(wide), grad_square=jax.grad(svd_f)(g),
        s_wide=sf, ufshape=jnp.zeros(uf.shape), vhfshape=jnp.zeros(vhf.shape),
        svdvals_grad=jax.grad(lambda a: wsum(jnp.linalg.svd(a, compute_uv=False)))(wide),
        batch=g_b, vmap_s=jax.vmap(lambda a: jnp.linalg.svd(a, compute_uv=False))(g_b))

    norms = {}
    for name, o in [("none", None), ("inf", np.inf), ("ninf", -np.inf), ("0", 0), ("1", 1),
                    ("2", 2), ("3", 3), ("0.5", 0.5), ("n1", -1)]:
        norms[f"vec_{name}"] = jnp.linalg.norm(v6, ord=o)
    for name, o in [("none", None), ("fro", "fro"), ("nuc", "nuc"), ("1", 1), ("n1", -1),
                    ("2", 2), ("n2", -2), ("inf", np.inf), ("ninf", -np.inf)]:
        norms[f"mat_{name}"] = jnp.linalg.norm(wide, ord=o)
        norms[f"axes_{name}"] = jnp.linalg.norm(x3, ord=o, axis=(2, 0))
        norms[f"keep_{name}"] = jnp.linalg.norm(x3, ord=o, axis=(0, 2), keepdims=True)
    norms["flat"] = jnp.linalg.norm(x3)
    norms["axis1_keep"] = jnp.linalg.norm(x3, ord=3, axis=1, keepdims=True)
    norms["grad_vec3"] = jax.grad(lambda x: jnp.linalg.norm(x, ord=3))(v6)
    norms["grad_fro"] = jax.grad(lambda x: jnp.linalg.norm(x, ord="fro"))(wide)
    norms["grad_nuc"] = jax.grad(lambda x: jnp.linalg.norm(x, ord="nuc"))(wide)
    norms["grad_2"] = jax.grad(lambda x: jnp.linalg.norm(x, ord=2))(wide)
    norms["grad_1"] = jax.grad(lambda x: jnp.linalg.norm(x, ord=1))(wide)
    norms["vmap_2"] = jax.vmap(lambda x: jnp.linalg.norm(x, ord=2))(x3)
    put(f"norm_{dt}", v=v6, wide=wide, x3=x3, **norms)

    x, resid, rank, s = jnp.linalg.lstsq(tall, b5)
    xv, residv, _, _ = jnp.linalg.lstsq(tall, b5[:, 0])
    put(f"lstsq_{dt}", a=tall, b=b5, x=x, resid=resid, rank=rank, s=s, xv=xv, residv=residv,
        grad=jax.grad(lambda a: wsum(jnp.linalg.lstsq(a, b5)[0]))(tall),
        x_wide=jnp.linalg.lstsq(wide, b5[:3])[0], rank_def=jnp.linalg.lstsq(
            f(np.outer(TALL[:, 0], [1.0, 2.0, 3.0])), b5)[2])

    put(f"pinv_{dt}", a=tall, wide=wide, pinv=jnp.linalg.pinv(tall), pinv_wide=jnp.linalg.pinv(wide),
        grad=jax.grad(lambda a: wsum(jnp.linalg.pinv(a)))(tall),
        batch=g_b, vmap=jax.vmap(jnp.linalg.pinv)(g_b))

    mp = {f"p{n}".replace("-", "m"): jnp.linalg.matrix_power(g, n) for n in [0, 1, 2, 3, 5, 6, -2]}
    put(f"matrix_power_{dt}", a=g, grad5=jax.grad(lambda a: wsum(jnp.linalg.matrix_power(a, 5)))(g), **mp)

    st = {}
    for trans in [0, 1]:
        for lower in [True, False]:
            for unit in [False, True]:
                a = low if lower else low.T
                key = f"t{trans}_{'l' if lower else 'u'}_{int(unit)}"
                fn = lambda a, b: jsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
                st[key] = fn(a, b)
                st[key + "_v"] = fn(a, bv)
                st[key + "_ga"] = jax.grad(lambda a: wsum(fn(a, b)))(a)
                st[key + "_gb"] = jax.grad(lambda b: wsum(fn(a, b)))(b)
    st["vmap"] = jax.vmap(lambda b: jsl.solve_triangular(low, b, lower=True), 1, 1)(b)
    put(f"solve_triangular_{dt}", low=low, b=b, bv=bv, **st)

    lus = {}
    for name, a in [("square", g), ("tall", tall), ("wide", wide)]:
        p, l, u = jsl.lu(a)
        lus[f"{name}_p"], lus[f"{name}_l"], lus[f"{name}_u"] = p, l, u
        lus[f"{name}_grad"] = jax.grad(lambda a: (lambda plu: wsum(plu[1]) + wsum(plu[2]))(jsl.lu(a)))(a)
    lus["vmap_u"] = jax.vmap(lambda a: jsl.lu(a)[2])(g_b)
    put(f"lu_{dt}", square=g, tall=tall, wide=wide, batch=g_b, **lus)

print(json.dumps({"jax_version": jax.__version__, "cases": cases}, indent=None))
