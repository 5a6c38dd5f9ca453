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

from .process import get_num_threads, set_num_threads, tune_process  # noqa: F401

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
    "conv": ("cpu.conv", None),
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
    kind = type(arrays[0])
    for b in arrays:
        if type(b) is not kind or b.dtype.char not in _FLOATS:
            return None
    key = (op, kind)
    module = _modules.get(key)
    if module is None:
        cuda = kind.__module__.startswith("cupy")
        name = _BACKENDS[op][1 if cuda else 0]
        if name is None or not (cuda or (kind.__module__ == "numpy" and kind.__name__ == "ndarray")):
            return None
        module = _modules[key] = importlib.import_module(f".{name}", __name__)
    if module.__name__.startswith(_CPU) and not _cpu_team().available():  # numba did not import
        return None
    return module


_CPU = __name__ + ".cpu."
_FLOATS = ("f", "d")  # float32, float64 (numpy's and cupy's dtype characters)
_team = None


def _cpu_team():
    global _team
    if _team is None:
        from .cpu import team as _team_module

        _team = _team_module
    return _team
