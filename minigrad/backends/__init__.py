"""Where the speed lives: one setting, one registry of implementations, one way to pick one.

A fused op (linear, embedding, gelu, layer_norm, cross_entropy, dropout, scaled_dot_product_attention,
conv's grouped products, AdamW's update) is defined once, in nn/_functional/<op>.py (nn/optim/adam.py
for AdamW): its argument checks, its semantics and its plain array code (numpy on the CPU, cupy on a
GPU), one `Function` whose forward and backward run that code. Its reference, written from
minigrad's primitive ops and differentiated by autograd, is in nn/_functional/reference.py.

Which code runs is one setting, `MINIGRAD_KERNELS` in the environment or `set_kernels` here:

    reference   the references (a graph of primitive nodes: slow, for reading)
    numpy       the ops' own array code, and the registrations eligible under 'numpy'
    fast        (default) the registered implementations that take the arguments, else the ops' code

How an op runs (the only places that look at the setting are `pick` and `find`, here):

    pick(fused, reference)   nn.functional's function calls `pick(op, reference)(*args)`: the reference
                             (nn/_functional/reference.py) under 'reference', else the op (its checks,
                             then its Function); both take the same arguments
    find(op, *args)          inside the Function: the registered implementation of `op` that takes
                             these arrays, or None, and then the op runs its own array code

The registration protocol. An implementation is a module (or any object) that defines

    supports(*args) -> bool    whether it takes these arguments: array types and dtypes, layout, sizes,
                               options. Cheap, and with no side effect: it is asked on every call.
    forward(*args)             the op's forward, on exactly the arguments supports() accepted; it never
                               declines (no None or False meaning "not here")
    backward(*args)            the op's backward (where the op's backward runs on it)

and is registered with `register(op, module, device, kernels)`:

    op        the op's name ("gelu"); `find(op, *args)` is asked with the arguments `supports` takes
    module    a dotted path under this package ("cpu.gelu"), imported on first use (so importing
              minigrad imports neither numba nor cupy), or an object
    device    "cpu" (numpy arrays) or "cuda" (cupy arrays): what the first argument must be
    kernels   the settings under which it is eligible: ("fast",) for compiled kernels; ("numpy",
              "fast") for code that is the array library's own way of doing the op (cupyx's scatter-add)

`find` walks the op's registrations in order and returns the first eligible one whose `supports`
accepts; an implementation found at forward also runs that Function's backward (the op keeps it on
ctx), so `supports` vouches for both. What each op passes to supports/forward/backward is written in
the op's file next to its `find` call, and in each backend module. The CPU registrations need numba
(they are skipped without it); the thread team and BLAS they use are minigrad/backends/cpu/team.py's.

To add a fused op: write its Function with plain array code and its reference; call
`pick(op, reference)` from its public function and `find("name", ...)` where a backend can take over;
register each backend module below (or from your own code: `register("name", module, "cpu")`).

Also here: `tune_process()`, `set_num_threads(n)`, `get_num_threads()` (minigrad/backends/process.py)
and `arrays` (where numpy and cupy differ in the ops' array code).
"""
import contextlib
import importlib
import os

from .cpu import team as _team
from .process import get_num_threads, set_num_threads, tune_process  # noqa: F401

KERNELS = ("reference", "numpy", "fast")
FAST = ("fast",)
_registry = {}  # op -> [(module or dotted path, device, kernels)] in the order they are asked
_loaded = {}  # dotted path -> module, once imported
_eligible = {}  # (op, array type, setting) -> registrations find asks: ((module, needs numba), ...)


def register(op, module, device, kernels=FAST, first=False):
    """Add an implementation of `op` (the module docstring's protocol), asked after the op's earlier
    registrations, or before them with first=True."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"register: device must be 'cpu' or 'cuda', got {device!r}")
    kernels = tuple(kernels)
    if not set(kernels) <= {"numpy", "fast"}:
        raise ValueError(f"register: kernels must be among 'numpy', 'fast', got {kernels!r}")
    registrations = _registry.setdefault(op, [])
    registrations.insert(0 if first else len(registrations), (module, device, kernels))
    _eligible.clear()


register("linear", "cpu.linear", "cpu")
register("embedding", "cpu.embedding", "cpu")
register("embedding", "cuda.embedding", "cuda", ("numpy", "fast"))
register("gelu", "cpu.gelu", "cpu")
register("gelu", "cuda.gelu", "cuda")
register("layer_norm", "cpu.layer_norm", "cpu")
register("layer_norm", "cuda.layer_norm", "cuda")
register("cross_entropy", "cpu.cross_entropy", "cpu")
register("cross_entropy", "cuda.cross_entropy", "cuda")
register("dropout", "cuda.dropout", "cuda")
register("attention", "cpu.attention", "cpu")
register("attention", "cuda.attention", "cuda")
register("adamw", "cpu.adamw", "cpu")
register("adamw", "cuda.adamw", "cuda")
register("grouped_matmul", "cpu.conv", "cpu")


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


def pick(fused, reference):
    """The function a fused op's call runs: `reference` under MINIGRAD_KERNELS=reference (None: the op
    has no reference for these arguments), else `fused` (the op's Function.apply)."""
    return reference if _kernels == "reference" and reference is not None else fused


def find(op, *args):
    """The registered implementation of `op` that takes `args` (its `supports(*args)` is true), among
    those eligible under the setting and made for the first argument's device; None: the op runs its
    own array code."""
    key = (op, type(args[0]), _kernels)
    eligible = _eligible.get(key)
    if eligible is None:
        eligible = _eligible[key] = _eligible_for(op, _device_of(args[0]))
    for module, cpu in eligible:
        impl = _load(module, cpu)
        if impl is not None and impl.supports(*args):
            return impl
    return None


def _eligible_for(op, device):
    return tuple((module, device == "cpu") for module, where, kernels in _registry.get(op, ())
                 if where == device and _kernels in kernels)


def _device_of(a):
    kind = type(a)
    if kind.__module__ == "numpy":
        return "cpu"
    return "cuda" if kind.__module__.startswith("cupy") else None


def _load(module, cpu):
    if cpu and not _team.available():  # no numba: the CPU kernels cannot run
        return None
    if not isinstance(module, str):
        return module
    impl = _loaded.get(module)
    if impl is None:
        impl = _loaded[module] = importlib.import_module(f".{module}", __name__)
    return impl
