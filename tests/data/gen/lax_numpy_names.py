"""Computes tests/data/lax_numpy_names.json with JAX (run once; the tests read the JSON).

    python -P tests/data/gen/lax_numpy_names.py > tests/data/lax_numpy_names.json  # with jax[cpu]

`jax.lax`'s elementwise operations (which do not promote), reductions, shape operations,
constructors and products, and `jax.numpy`'s names that are compositions of other operations.
Each case holds its inputs, JAX's outputs and, for the differentiable ones, the gradient of
`sum(output * weights)` with respect to every float input, in float32 and float64
(`jax_enable_x64` on, so float64 stays float64; int64 outputs are written as int32).
"""
import json

import jax

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax import lax


def number(v):
    v = float(v)
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def leaf(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        data = [number(v) for v in a.ravel().astype(np.float64)]
    elif a.dtype.kind == "c":
        data = [[number(v.real), number(v.imag)] for v in a.ravel()]
    elif a.dtype.kind == "b":
        data = [bool(v) for v in a.ravel()]
    else:
        if a.dtype == np.int64:
            a = a.astype(np.int32)
        data = a.ravel().tolist()
    return {"shape": list(a.shape), "dtype": str(a.dtype), "data": data}


def weights(shape, dt):
    n = int(np.prod(shape))
    return (np.arange(n).reshape(shape) % 5 - 1.5).astype(dt)


def smooth(shape, dt, seed=0):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.7 + seed) * 1.5 + 0.1 * seed).reshape(shape).astype(dt)


cases = {}


def case(name, f, inputs, grad=True):
    """`f` of the arrays `inputs`; the output is an array or a list of them."""
    xs = [jnp.asarray(x) for x in inputs]
    out = f(*xs)
    c = {"inputs": [leaf(x) for x in xs]}
    outs = out if isinstance(out, (list, tuple)) else [out]
    c["outputs"] = [leaf(o) for o in outs]
    if grad:
        floats = [i for i, x in enumerate(xs) if x.dtype.kind == "f"]
        ws = [jnp.asarray(weights(o.shape, o.dtype)) for o in outs]
        c["weights"] = [leaf(w) for w in ws]

        def loss(*fl):
            args = list(xs)
            for i, v in zip(floats, fl):
                args[i] = v
            o = f(*args)
            o = o if isinstance(o, (list, tuple)) else [o]
            return sum((a * w).sum() for a, w in zip(o, ws))

        gs = jax.grad(loss, argnums=tuple(range(len(floats))))(*[xs[i] for i in floats])
        c["grads"] = [leaf(g) for g in gs]
    cases[name] = c


NAN, INF = np.nan, np.inf
I = np.array([[-7, 3, 0, 12], [5, -2, 9, -1], [4, 4, -8, 6]], np.int32)
J = np.array([[2, 3, 1, 5], [5, 7, 9, 1], [3, 4, 2, 6]], np.int32)
B = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, True]])
for dt in ("float32", "float64"):
    s = f"_{dt}"
    A = smooth((3, 4), dt)
    A2 = smooth((3, 4), dt, 1)
    U = (np.abs(smooth((3, 4), dt, 2)) * 0.6 + 0.05).astype(dt)  # in (0, 1)
    P = (np.abs(smooth((3, 4), dt, 3)) + 1.1).astype(dt)  # above 1
    H = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -3.7, 4.2, 0.0, -0.0, INF, NAN], dt)
    ups = [
        ("abs", lax.abs, A), ("neg", lax.neg, A), ("sign", lax.sign, A), ("square", lax.square, A),
        ("reciprocal", lax.reciprocal, P), ("exp", lax.exp, A), ("exp2", lax.exp2, A),
        ("expm1", lax.expm1, A), ("log", lax.log, P), ("log1p", lax.log1p, A2 * 0.5 + 0.3),
        ("logistic", lax.logistic, A), ("sqrt", lax.sqrt, P), ("rsqrt", lax.rsqrt, P),
        ("cbrt", lax.cbrt, A), ("sin", lax.sin, A), ("cos", lax.cos, A), ("tan", lax.tan, U),
        ("asin", lax.asin, U), ("acos", lax.acos, U), ("atan", lax.atan, A),
        ("sinh", lax.sinh, A), ("cosh", lax.cosh, A), ("tanh", lax.tanh, A),
        ("asinh", lax.asinh, A), ("acosh", lax.acosh, P), ("atanh", lax.atanh, U),
        ("erf", lax.erf, A), ("erfc", lax.erfc, A), ("erf_inv", lax.erf_inv, U),
        ("bessel_i0e", lax.bessel_i0e, A), ("bessel_i1e", lax.bessel_i1e, A),
        ("integer_pow3", lambda x: lax.integer_pow(x, 3), A),
        ("integer_pow_m2", lambda x: lax.integer_pow(x, -2), P),
    ]
    for name, f, x in ups:
        case(f"lax_{name}{s}", f, [np.asarray(x, dt)])
    for name, f in [("floor", lax.floor), ("ceil", lax.ceil), ("is_finite", lax.is_finite)]:
        case(f"lax_{name}{s}", f, [H], grad=False)
    case(f"lax_round{s}", lax.round, [H], grad=False)
    case(f"lax_round_even{s}", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), [H], grad=False)
    bps = [
        ("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("max", lax.max), ("min", lax.min),
        ("atan2", lax.atan2),
    ]
    for name, f in bps:
        case(f"lax_{name}{s}", f, [A, A2])
    case(f"lax_add_bcast{s}", lax.add, [A, A2[:1]])
    case(f"lax_add_scalar{s}", lax.add, [A, np.asarray(0.25, dt)])
    case(f"lax_pow{s}", lax.pow, [P, A2])
    case(f"lax_pow_int{s}", lax.pow, [A, J], grad=False)
    case(f"lax_nextafter{s}", lax.nextafter, [A, A2], grad=False)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        case(f"lax_{name}{s}", getattr(lax, name), [A, jnp.where(jnp.arange(4) % 2 == 0, A, A2)], grad=False)
    case(f"lax_complex_parts{s}", lambda x, y: [lax.real(lax.complex(x, y)), lax.imag(lax.conj(lax.complex(x, y)))], [A, A2])
    case(f"lax_complex{s}", lax.complex, [A, A2], grad=False)
    case(f"lax_conj_real{s}", lax.conj, [A], grad=False)
    case(f"lax_convert_element_type{s}", lambda x: lax.convert_element_type(x * 3, jnp.int32), [A], grad=False)
    # Reductions.
    case(f"lax_reduce_sum{s}", lambda x: lax.reduce_sum(x, (1,)), [A])
    case(f"lax_reduce_sum_all{s}", lambda x: lax.reduce_sum(x, (0, 1)), [A])
    case(f"lax_reduce_prod{s}", lambda x: lax.reduce_prod(x, (0,)), [A])
    case(f"lax_reduce_max{s}", lambda x: lax.reduce_max(x, (1,)), [A])
    case(f"lax_reduce_min{s}", lambda x: lax.reduce_min(x, (0,)), [A])
    case(f"lax_argmax{s}", lambda x: lax.argmax(x, 1, jnp.int32), [A], grad=False)
    case(f"lax_argmin{s}", lambda x: lax.argmin(x, 0, jnp.int32), [A], grad=False)
    # Shapes.
    v = smooth((3,), dt, 4)
    case(f"lax_broadcast{s}", lambda x: lax.broadcast(x, (2,)), [A])
    case(f"lax_broadcast_in_dim{s}", lambda x: lax.broadcast_in_dim(x, (3, 2, 4), (0, 2)), [A])
    case(f"lax_broadcast_to_rank{s}", lambda x: lax.broadcast_to_rank(x, 3), [v])
    case(f"lax_expand_dims{s}", lambda x: lax.expand_dims(x, (-1, 0)), [A])
    case(f"lax_squeeze{s}", lambda x: lax.squeeze(x, (-1,)), [A[:, :1]])
    case(f"lax_reshape{s}", lambda x: lax.reshape(x, (2, 6)), [A])
    case(f"lax_reshape_dims{s}", lambda x: lax.reshape(x, (6, 2), (1, 0)), [A])
    case(f"lax_rev{s}", lambda x: lax.rev(x, (0, 1)), [A])
    case(f"lax_transpose{s}", lambda x: lax.transpose(x, (1, 0)), [A])
    case(f"lax_concatenate{s}", lambda x, y: lax.concatenate([x, y], 1), [A, A2[:, :2]])
    case(f"lax_stack{s}", lambda x, y: lax.stack([x, y], -1), [A, A2])
    case(f"lax_unstack{s}", lambda x: list(lax.unstack(x, 1)), [A])
    case(f"lax_full_like{s}", lambda x: lax.full_like(x, 2.5), [A], grad=False)
    case(f"lax_dot_mv{s}", lax.dot, [A, smooth((4,), dt, 5)])
    case(f"lax_dot_mm{s}", lax.dot, [A, smooth((4, 2), dt, 5)])
    case(f"lax_dot_general{s}", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), [smooth((2, 3, 4), dt), smooth((2, 4, 5), dt, 1)])
    case(f"lax_index_in_dim{s}", lambda x: lax.index_in_dim(x, -1, 1, False), [A])
    case(f"lax_index_in_dim_keep{s}", lambda x: lax.index_in_dim(x, 1, 0), [A])
    case(f"lax_slice_in_dim{s}", lambda x: lax.slice_in_dim(x, -3, None, 2, 1), [A])
    case(f"lax_dynamic_update_slice_in_dim{s}", lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 1), [A, A2[:, :2], np.int32(3)])
    case(f"lax_split{s}", lambda x: lax.split(x, (1, 3), 1), [A])
    case(f"lax_tile{s}", lambda x: lax.tile(x, (2, 1)), [A])
    case(f"lax_collapse{s}", lambda x: lax.collapse(x, 0, 2), [smooth((2, 3, 4), dt)])
    case(f"lax_collapse_neg{s}", lambda x: lax.collapse(x, -2), [smooth((2, 3, 4), dt)])

# Integer and bool operands.
case("lax_abs_int32", lax.abs, [I], grad=False)
case("lax_neg_int32", lax.neg, [I], grad=False)
case("lax_sign_int32", lax.sign, [I], grad=False)
case("lax_square_int32", lax.square, [I], grad=False)
case("lax_integer_pow3_int32", lambda x: lax.integer_pow(x, 3), [I], grad=False)
case("lax_add_int32", lax.add, [I, J], grad=False)
case("lax_mul_int32", lax.mul, [I, J], grad=False)
case("lax_max_int32", lax.max, [I, J], grad=False)
case("lax_lt_int32", lax.lt, [I, J], grad=False)
case("lax_bitwise_and_int32", lax.bitwise_and, [I, J], grad=False)
case("lax_bitwise_or_int32", lax.bitwise_or, [I, J], grad=False)
case("lax_bitwise_xor_int32", lax.bitwise_xor, [I, J], grad=False)
case("lax_bitwise_not_int32", lax.bitwise_not, [I], grad=False)
case("lax_bitwise_and_bool", lax.bitwise_and, [B, B[::-1]], grad=False)
case("lax_bitwise_not_bool", lax.bitwise_not, [B], grad=False)
case("lax_reduce_sum_int32", lambda x: lax.reduce_sum(x, (0,)), [I], grad=False)
case("lax_reduce_max_int32", lambda x: lax.reduce_max(x, (1,)), [I], grad=False)
case("lax_reduce_and_bool", lambda x: lax.reduce_and(x, (1,)), [B], grad=False)
case("lax_reduce_or_bool", lambda x: lax.reduce_or(x, (0,)), [B], grad=False)
case("lax_reduce_xor_bool", lambda x: lax.reduce_xor(x, (1,)), [B], grad=False)
case("lax_reduce_xor_bool_all", lambda x: lax.reduce_xor(x, (0, 1)), [B], grad=False)
case("lax_convert_element_type_int32", lambda x: lax.convert_element_type(x, jnp.float32), [I], grad=False)
case("lax_iota", lambda: lax.iota(jnp.float32, 5), [], grad=False)
case("lax_broadcasted_iota", lambda: lax.broadcasted_iota(jnp.int32, (2, 3), 1), [], grad=False)
case("lax_full", lambda: lax.full((2, 3), 1.5, jnp.int32), [], grad=False)
case("lax_full_like_int32", lambda x: lax.full_like(x, 7, jnp.float32), [I], grad=False)
case("lax_tile_int32", lambda x: lax.tile(x, (1, 2)), [I], grad=False)

# jax.numpy compositions.
for dt in ("float32", "float64"):
    s = f"_{dt}"
    A = smooth((3, 4), dt)
    A2 = smooth((3, 4), dt, 1)
    P = (np.abs(smooth((3, 4), dt, 3)) + 1.1).astype(dt)
    B3 = smooth((2, 3, 4), dt, 1)
    v3, v4 = smooth((3,), dt, 4), smooth((4,), dt, 5)
    Z = np.array([1.5, -0.0, NAN, INF, -INF, -NAN, 3.0, 1e30], dt)
    case(f"float_power{s}", jnp.float_power, [P, A2])
    case(f"nan_to_num{s}", lambda x: jnp.nan_to_num(x, nan=0.0, neginf=-9.0), [Z])
    case(f"nan_to_num_default{s}", lambda x: jnp.nan_to_num(x, nan=2.5), [Z], grad=False)
    case(f"append{s}", lambda x, y: jnp.append(x, y), [A, v3])
    case(f"append_axis0{s}", lambda x, y: jnp.append(x, y, axis=0), [A, A2[:1]])
    case(f"diagflat{s}", lambda x: jnp.diagflat(x, 1), [A[:2, :2]])
    case(f"diag_indices_from{s}", lambda x: list(jnp.diag_indices_from(x)), [np.zeros((3, 3), dt)], grad=False)
    case(f"tril_indices_from{s}", lambda x: list(jnp.tril_indices_from(x, 1)), [A], grad=False)
    case(f"triu_indices_from{s}", lambda x: list(jnp.triu_indices_from(x, -1)), [A], grad=False)
    case(f"ediff1d{s}", lambda x, e, b: jnp.ediff1d(x, to_end=e, to_begin=b), [A, v3[:2], v4[:1]])
    case(f"ediff1d_plain{s}", lambda x: jnp.ediff1d(x), [v4])
    case(f"broadcast_arrays{s}", lambda x, y: list(jnp.broadcast_arrays(x, y)), [A[:, :1], v4])
    case(f"matrix_transpose{s}", jnp.matrix_transpose, [B3])
    case(f"matvec{s}", jnp.matvec, [B3, v4])
    case(f"vecmat{s}", jnp.vecmat, [v3, B3])
    case(f"vecdot{s}", lambda x, y: jnp.vecdot(x, y), [A, A2])
    case(f"vecdot_axis0{s}", lambda x, y: jnp.vecdot(x, y, axis=0), [A, v3[:, None]])
    case(f"rollaxis{s}", lambda x: jnp.rollaxis(x, 2), [B3])
    case(f"rollaxis_end{s}", lambda x: jnp.rollaxis(x, 0, 3), [B3])
    case(f"select{s}", lambda x, y: jnp.select([x > 0.5, x < -1], [x, y], 0.25), [A, A2])
    case(f"trapezoid{s}", lambda y: jnp.trapezoid(y, dx=0.5), [A])
    case(f"trapezoid_x{s}", lambda y, x: jnp.trapezoid(y, x, axis=0), [A, v3])
    case(f"trapezoid_xfull{s}", lambda y, x: jnp.trapezoid(y, x, axis=1), [A, A2])
    case(f"vander{s}", lambda x: jnp.vander(x), [v4])
    case(f"vander_increasing{s}", lambda x: jnp.vander(x, 3, increasing=True), [v4])
    case(f"copy{s}", jnp.copy, [A])
    case(f"iscomplex{s}", jnp.iscomplex, [A], grad=False)
    case(f"fftshift{s}", lambda x: jnp.fft.fftshift(x), [B3])
    case(f"ifftshift{s}", lambda x: jnp.fft.ifftshift(x, axes=(1,)), [B3])
    case(f"rfft2{s}", lambda x: jnp.fft.rfft2(x), [B3], grad=False)
    case(f"rfftn{s}", lambda x: jnp.fft.rfftn(x), [B3], grad=False)
    case(f"rfftn_axes{s}", lambda x: jnp.fft.rfftn(x, axes=(0, 2)), [B3], grad=False)
    case(f"irfft2{s}", lambda x: jnp.fft.irfft2(jnp.fft.rfft2(x)), [B3])
    case(f"irfftn{s}", lambda x: jnp.fft.irfftn(jnp.fft.rfftn(x), s=(2, 3, 4)), [B3])

C = np.array([1 + 0j, 2 - 1j, 0 + 3j, -1.5 + 0j], np.complex64)
case("iscomplex_complex64", jnp.iscomplex, [C], grad=False)
case("isreal_complex64", jnp.isreal, [C], grad=False)
case("nan_to_num_complex64", lambda x: jnp.nan_to_num(x, nan=1.0), [np.array([complex(NAN, 1), complex(INF, -INF), 2 + 3j], np.complex64)], grad=False)
case("float_power_int32", jnp.float_power, [I, J], grad=False)
case("nan_to_num_int32", jnp.nan_to_num, [I], grad=False)
case("vander_int32", lambda x: jnp.vander(x, 3), [I[0]], grad=False)
case("ediff1d_int32", lambda x: jnp.ediff1d(x, to_begin=jnp.array([7.9])), [I], grad=False)
case("select_int32", lambda x, y: jnp.select([x > 2, y > 4], [x, y], -1), [I, J], grad=False)
case("indices", lambda: jnp.indices((2, 3), dtype=jnp.int32), [], grad=False)
# rjax's default float type is float32 in both modes (see rjax::dtype::default_float): the
# functions that create floats without a dtype are compared with JAX's 32-bit mode.
jax.config.update("jax_enable_x64", False)
case("logspace", lambda: jnp.logspace(0.5, 2.5, 5), [], grad=False)
case("logspace_base2", lambda: jnp.logspace(-1.0, 3.0, 4, endpoint=False, base=2.0, dtype=jnp.float32), [], grad=False)
for m in (1, 5, 6):
    case(f"bartlett_{m}", lambda m=m: jnp.bartlett(m), [], grad=False)
    case(f"blackman_{m}", lambda m=m: jnp.blackman(m), [], grad=False)
    case(f"hamming_{m}", lambda m=m: jnp.hamming(m), [], grad=False)
    case(f"hanning_{m}", lambda m=m: jnp.hanning(m), [], grad=False)
jax.config.update("jax_enable_x64", True)

json.dump({"jax_version": jax.__version__, "cases": cases}, __import__("sys").stdout, indent=None)
