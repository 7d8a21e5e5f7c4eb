"""Writes docs/api/jax_names.json: the public callable names of the JAX modules that rjax mirrors.

Run with a Python that has jax installed (`python -P docs/api/gen_jax_names.py`). A name counts
when it does not start with an underscore, its object is callable, and it is not a class (dtype
scalar types such as `jnp.float32`, `jnp.ndarray`, `lax.Precision` are types, which rjax spells
as `DType`, `Array` and enums, so they are left out), nor a type alias, nor a module. The submodules of
`jax.scipy.stats` (`norm`, `gamma`, ...) are listed as modules of their own.
"""

import importlib
import inspect
import json
import os
import types

import jax

MODULES = [
    "jax.numpy",
    "jax.numpy.linalg",
    "jax.numpy.fft",
    "jax.lax",
    "jax.random",
    "jax.nn",
    "jax.nn.initializers",
    "jax.scipy.special",
    "jax.scipy.linalg",
    "jax.scipy.stats",
]


def public_callables(mod):
    names = []
    for name in dir(mod):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, (type, types.ModuleType, types.GenericAlias)) or not callable(obj):
            continue
        if type(obj).__module__ == "typing":  # type aliases such as `lax.PrecisionLike`
            continue
        names.append(name)
    return sorted(names)


def main():
    modules = {}
    for path in MODULES:
        mod = importlib.import_module(path)
        modules[path] = public_callables(mod)
        if path == "jax.scipy.stats":
            for name in sorted(dir(mod)):
                sub = getattr(mod, name)
                if not name.startswith("_") and inspect.ismodule(sub):
                    modules[f"{path}.{name}"] = public_callables(sub)
    out = {"jax_version": jax.__version__, "modules": modules}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "jax_names.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
