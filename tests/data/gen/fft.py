"""Computes tests/data/fft.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/fft.py > tests/data/fft.json  # with jax[cpu]

`jnp.fft`: `fft`/`ifft`/`rfft`/`irfft` with cropping and padding (`n`), other axes and the
three norms, `fft2`/`ifft2`/`fftn`/`ifftn` with `s` and `axes`, `fftfreq`/`rfftfreq`; the
gradients of real-valued functions of transforms (JAX's convention for complex values) and
`vmap`. Complex values are written as `[re, im]` pairs.
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np


def num(v):
    return float(v)


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        data = [[num(z.real), num(z.imag)] for z in a.ravel()]
    elif a.dtype.kind == "f":
        data = [num(v) for v in a.ravel()]
    else:
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


rng = np.random.default_rng(7)
XR = rng.standard_normal((3, 8))
XO = rng.standard_normal((4, 7))
ZR = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
X3 = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
W8 = rng.standard_normal((3, 8))
W5 = rng.standard_normal((3, 5))

out = {}
for rdt, cdt in (("float32", "complex64"), ("float64", "complex128")):
    x, xo = jnp.asarray(XR, rdt), jnp.asarray(XO, rdt)
    z, z3 = jnp.asarray(ZR, cdt), jnp.asarray(X3, cdt)
    c = {"x": leaf(x), "xo": leaf(xo), "z": leaf(z), "z3": leaf(z3)}
    for norm in ("backward", "ortho", "forward"):
        c[f"fft_{norm}"] = leaf(jnp.fft.fft(z, norm=norm))
        c[f"ifft_{norm}"] = leaf(jnp.fft.ifft(z, norm=norm))
        c[f"rfft_{norm}"] = leaf(jnp.fft.rfft(x, norm=norm))
        c[f"irfft_{norm}"] = leaf(jnp.fft.irfft(z, norm=norm))
        c[f"fft2_{norm}"] = leaf(jnp.fft.fft2(z, norm=norm))
        c[f"ifftn_{norm}"] = leaf(jnp.fft.ifftn(z3, norm=norm))
    c["fft_real_n5"] = leaf(jnp.fft.fft(x, n=5))
    c["fft_n12_axis0"] = leaf(jnp.fft.fft(z, n=12, axis=0))
    c["ifft_n5"] = leaf(jnp.fft.ifft(z, n=5))
    c["rfft_odd"] = leaf(jnp.fft.rfft(xo))
    c["rfft_n6_axis0"] = leaf(jnp.fft.rfft(xo, n=6, axis=0))
    c["rfft_n11"] = leaf(jnp.fft.rfft(x, n=11))
    c["irfft_n7"] = leaf(jnp.fft.irfft(z, n=7))
    c["irfft_n16_axis0"] = leaf(jnp.fft.irfft(z, n=16, axis=0))
    c["roundtrip_odd"] = leaf(jnp.fft.irfft(jnp.fft.rfft(xo), n=7))
    c["fft2_s"] = leaf(jnp.fft.fft2(z, s=(2, 6)))
    c["ifft2_axes"] = leaf(jnp.fft.ifft2(z3, axes=(0, 2)))
    c["fftn_all"] = leaf(jnp.fft.fftn(z3))
    c["fftn_s_axes"] = leaf(jnp.fft.fftn(z3, s=(3, 5), axes=(2, 0)))
    c["fftn_real"] = leaf(jnp.fft.fftn(x))
    c["ifftn_s"] = leaf(jnp.fft.ifftn(z3, s=(4, 2)))
    c["fftfreq_8"] = leaf(jnp.fft.fftfreq(8, dtype=rdt))
    c["fftfreq_7"] = leaf(jnp.fft.fftfreq(7, d=0.1, dtype=rdt))
    c["rfftfreq_8"] = leaf(jnp.fft.rfftfreq(8, dtype=rdt))
    c["rfftfreq_7"] = leaf(jnp.fft.rfftfreq(7, d=0.5, dtype=rdt))
    out[rdt] = c

# Gradients (float64, and float32 for the two named in the issue).
G = {
    "abs_rfft_sq": lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2),
    "real_fft_w": lambda x: jnp.sum(jnp.real(jnp.fft.fft(x)) * W8),
    "irfft_of_rfft": lambda x: jnp.sum(jnp.fft.irfft(jnp.fft.rfft(x) * (1.0 + 0.5j), n=8) * W8),
    "imag_ifft_ortho_n12": lambda x: jnp.sum(jnp.imag(jnp.fft.ifft(x, n=12, norm="ortho")) ** 2),
    "rfft_odd_n5": lambda x: jnp.sum(jnp.real(jnp.fft.rfft(x, n=5) * jnp.conj(jnp.fft.rfft(x, n=5) + 1j))),
    "fft2_abs": lambda x: jnp.sum(jnp.abs(jnp.fft.fft2(x, norm="forward"))),
    "fftn_axis0": lambda x: jnp.sum(jnp.real(jnp.fft.fftn(x, axes=(0,))) * W8),
    "irfft_n7_axis0": lambda x: jnp.sum(jnp.fft.irfft(x, n=7, axis=0) ** 2),
}
g = {}
for rdt in ("float32", "float64"):
    x = jnp.asarray(XR, rdt)
    for k, f in G.items():
        g[f"{k}_{rdt}_value"] = leaf(f(x))
        g[f"{k}_{rdt}_grad"] = leaf(jax.grad(f)(x))
    g[f"x_{rdt}"] = leaf(x)
# With respect to complex inputs.
z = jnp.asarray(ZR)
C = {
    "abs_ifft": lambda z: jnp.sum(jnp.abs(jnp.fft.ifft(z))),
    "irfft_w": lambda z: jnp.sum(jnp.fft.irfft(z, n=8) * W8),
    "irfft_odd_sq": lambda z: jnp.sum(jnp.fft.irfft(z, n=9) ** 2),
    "real_fft2": lambda z: jnp.sum(jnp.real(jnp.fft.fft2(z)) * W8),
}
g["z"] = leaf(z)
g["w"] = leaf(jnp.asarray(W8))
for k, f in C.items():
    g[f"{k}_grad"] = leaf(jax.grad(f)(z))
# vmap.
xv = jnp.asarray(XR)
g["vmap_abs_fft_axis1"] = leaf(jax.vmap(lambda r: jnp.abs(jnp.fft.fft(r)), in_axes=1)(xv))
g["vmap_irfft_rfft"] = leaf(jax.vmap(lambda r: jnp.fft.irfft(jnp.fft.rfft(r) * 2.0, n=8))(xv))
g["vmap_grad_abs_rfft_sq"] = leaf(jax.vmap(jax.grad(G["abs_rfft_sq"]))(xv))
out["grad"] = g
print(json.dumps(out))
