"""Compiled CPU kernels (numba) for the ops that numpy can only run as many passes over memory.

numpy has one ufunc per elementary operation, so GELU's erf rational is 27 passes over its block
and a layer norm about ten; PyTorch's CPU kernels make one. Written as plain loops and compiled by
numba, each becomes one loop that LLVM vectorizes (AVX2 / AVX-512): GELU's forward at (768, 512)
float32 went from 0.58 ms to 0.14 ms here (PyTorch: 0.10; bench/kernels_bench.py times each op).
The kernels sit in the op's own file, beside the numpy passes they replace, marked
`@cpu_kernels.kernel`:

    @cpu_kernels.kernel
    def _gelu_fwd_compiled(out, x): ...                       # a plain loop over one block

    if cpu_kernels.use(x): blockwise(_gelu_fwd_compiled, ...)  # in the op: numpy arrays, kernels on
    else: ...the numpy passes...

`use(a)` is true for numpy float32 / float64 arrays when numba imports and the kernels are
enabled (MINIGRAD_CPU_KERNELS=0 turns them off; the numpy passes are then used everywhere, as on a
machine without numba). Kernels are compiled on first call, once per argument types, and cached
on disk by numba (`cache=True`: __pycache__, or numba's user cache directory when that is read-only).
They release the GIL, so the ops still run them block by block on all cores (`_common.for_blocks`).

Compiler flags: fused multiply-add, reassociation (vectorized sums) and reciprocal division are
allowed; NaN and infinity semantics are kept (no `nnan`/`ninf`), so a NaN input still gives NaN.
Division never raises (numpy's error model: 0/0 is NaN, as in the numpy passes).
"""
import threading

import numpy as np

from ._common import KernelSwitch

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_OPTIONS = dict(nogil=True, cache=True, error_model="numpy", fastmath={"contract", "reassoc", "arcp", "nsz"})
switch = KernelSwitch("MINIGRAD_CPU_KERNELS")
set_enabled, enabled = switch.set, switch.enabled  # `with cpu_kernels.enabled(False):` runs the numpy passes
_numba = None  # the module once imported; False when it is not installed
_lock = threading.RLock()  # reentrant: compiling a kernel imports numba under it


def available():
    """True when numba imports (it is imported on the first call, not with minigrad)."""
    global _numba
    if _numba is None:
        with _lock:
            if _numba is None:
                try:
                    import numba
                    _numba = numba
                except ImportError:
                    _numba = False
    return _numba is not False


def use(a):
    """True when `a` is a numpy float32 / float64 array and the compiled kernels are enabled."""
    return switch.on and type(a) is np.ndarray and a.dtype in _FLOATS and available()


def is_enabled():
    return switch.on


class kernel:
    """A function compiled by numba on its first call (callers check `use` first)."""

    def __init__(self, fn):
        self.py_func = fn
        self._compiled = None
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __call__(self, *args):
        c = self._compiled
        if c is None:
            # the lock guards making the dispatcher; numba compiles each signature on its first call
            # (under its own lock, so threads calling a new kernel at once are safe)
            with _lock:
                if self._compiled is None:
                    available()
                    try:
                        self._compiled = _numba.njit(**_OPTIONS)(self.py_func)
                    except RuntimeError:  # no writable place for numba's cache: compile for this process only
                        self._compiled = _numba.njit(**dict(_OPTIONS, cache=False))(self.py_func)
            c = self._compiled
        return c(*args)
