"""Where the speed lives: one switch for the whole process and one dispatch point for every fused op.

The fused ops of nn.functional (linear, embedding, gelu, layer_norm, cross_entropy, dropout,
scaled_dot_product_attention) and AdamW's update are each written three times:

- the reference (nn/_functional/reference.py): minigrad's primitive ops, differentiated by autograd;
- the op (nn/_functional/<op>.py): one Function whose forward and backward are plain array code;
- the backends (this package): compiled CPU kernels on a thread team (cpu/) and CUDA kernels (cuda/).

Which ones run is one setting, `MINIGRAD_KERNELS` in the environment or `set_kernels` here:

    reference   nn.functional calls the reference (a graph of primitive nodes: slow, for reading)
    numpy       the ops' own array code (numpy on the CPU, cupy on a GPU), no backend
    fast        (default) the backends where they take the arrays, else the ops' array code

An op asks `lookup(op, *arrays)` for its backend module; None means: run your own array code.
Importing this package imports neither numba nor cupy (the backends load on first use).
"""
import contextlib
import importlib
import os

KERNELS = ("reference", "numpy", "fast")

# op -> (CPU module, CUDA module) under this package, None where that backend has none
_BACKENDS = {
    "linear": ("cpu.linear", None),
    "embedding": ("cpu.embedding", None),
    "gelu": ("cpu.gelu", "cuda.gelu"),
    "layer_norm": ("cpu.layer_norm", "cuda.layer_norm"),
    "cross_entropy": ("cpu.cross_entropy", "cuda.cross_entropy"),
    "dropout": (None, "cuda.dropout"),
    "attention": ("cpu.attention", "cuda.attention"),
    "adamw": ("cpu.adamw", "cuda.adamw"),
}
_modules = {}


def _checked(name):
    name = str(name).strip().lower()
    if name not in KERNELS:
        raise ValueError(f"MINIGRAD_KERNELS must be one of {', '.join(KERNELS)}, got {name!r}")
    return name


_kernels = _checked(os.environ.get("MINIGRAD_KERNELS", "fast") or "fast")


def set_kernels(name):
    """Switch the whole process to 'reference', 'numpy' or 'fast' (see the module docstring)."""
    global _kernels
    _kernels = _checked(name)


def get_kernels():
    """'reference', 'numpy' or 'fast': what the fused ops run now."""
    return _kernels


@contextlib.contextmanager
def kernels(name):
    """`with minigrad.backends.kernels("numpy"):` the block runs on that setting, then it is restored."""
    before = get_kernels()
    set_kernels(name)
    try:
        yield
    finally:
        set_kernels(before)


def lookup(op, *arrays):
    """The backend module that runs `op` on these arrays, or None (then the op's own array code runs).

    CPU: numpy float32 / float64 arrays, when numba imports. CUDA: cupy float32 / float64 arrays.
    Only under the 'fast' setting."""
    if _kernels != "fast":
        return None
    a = arrays[0]
    cuda = type(a).__module__.startswith("cupy")
    if not all(_float(b) and type(b) is type(a) for b in arrays):
        return None
    name = _BACKENDS[op][1 if cuda else 0]
    if name is None:
        return None
    if not cuda and not _numba_imports():
        return None
    module = _modules.get(name)
    if module is None:
        module = _modules[name] = importlib.import_module(f".{name}", __name__)
    return module


def _numba_imports():
    from .cpu import team

    return team.available()


def _float(a):
    dtype = getattr(a, "dtype", None)
    return dtype is not None and dtype.kind == "f" and dtype.itemsize in (4, 8) and hasattr(a, "shape")
