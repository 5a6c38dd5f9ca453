"""BLAS on the CPU for the compiled kernels: the address of its gemm, and one thread per call.

- `gemm_address(dtype)`: the address of cblas_?gemm, which compiled kernels call (team.gemm), from
  the library `blas_library` chose (numpy's OpenBLAS, or MKL where installed and faster).
- `gemm_found(dtype)`: both at once, (address, ilp64, library name) or None.
- `one_blas_thread()`: a context in which BLAS runs each call on the thread that makes it (the team's
  threads each call gemm on their share).
- `team_gemm_context(dtype)`: the context the team's gemm calls run in: `one_blas_thread()` for
  OpenBLAS's gemm; none for MKL's, which is loaded sequential (setting OpenBLAS's count and back
  costs about 20 us a product in a training step, for nothing there).

OpenBLAS's thread count is read and set here through its own functions (`blas_library.openblas()`),
not threadpoolctl's: the team sets it around every product, and threadpoolctl's context costs more
than a small product. The process-wide count is set with threadpoolctl (minigrad/backends/process.py).
"""
import contextlib
import threading

import numpy as np

from . import blas_library
from .blas_library import blas_thread_setter, blas_threads_now

_gemm_found_for = {}  # {dtype: (blas_library.generation when found, (address, ilp64, library) or None)}


def gemm_address(dtype):
    """(address of the row-major cblas_?gemm for `dtype`, whether its integers are 64-bit), or None
    (no BLAS found, or a dtype without one), from the library blas_library chose for this machine
    (numpy's OpenBLAS, or MKL where installed and faster; MINIGRAD_BLAS, read once, forces one)."""
    found = gemm_found(dtype)
    return None if found is None else found[:2]


def gemm_library(dtype):
    """The name of the library gemm_address(dtype) is from ("openblas", "mkl"), or None."""
    found = gemm_found(dtype)
    return None if found is None else found[2]


def gemm_found(dtype):
    """(address, ilp64, library name) of gemm for `dtype`, or None; looked up again only after
    blas_library's choice changed (its `generation`). Asked for every product: a dict lookup then."""
    entry = _gemm_found_for.get(dtype)
    if entry is None or entry[0] != blas_library.generation:
        from . import team

        found = blas_library.gemm(dtype)
        if found is not None and not (team.available() and team.gemm_works(np.dtype(dtype), *found[:2])):
            found = None  # a gemm the kernels' call does not match: the numpy passes run instead
        entry = _gemm_found_for[dtype] = (blas_library.generation, found)
    return entry[1]


def team_gemm_context(dtype):
    """What the team's threads call gemm_address(dtype)'s gemm inside: OpenBLAS at one thread per
    call when the gemm is OpenBLAS's; nothing when it is MKL's (sequential as loaded) or none."""
    return _ONE_BLAS_THREAD if gemm_library(dtype) == "openblas" else _NO_CONTEXT


def one_blas_thread():
    """A context in which OpenBLAS runs each call on the thread that makes it (the team's threads each
    call gemm). numpy's OpenBLAS has one process-wide setting: it is set to 1 by the first of any
    nested or concurrent contexts and set back, to what it was before, by the last one out (so a
    user's own setting survives). A no-op without OpenBLAS's thread setter."""
    return _ONE_BLAS_THREAD


class _OneBlasThread:
    def __init__(self):
        self.depth, self.before, self.lock = 0, None, threading.Lock()

    def __enter__(self):
        setter = blas_thread_setter()
        if setter is not None:
            with self.lock:
                if self.depth == 0:
                    self.before = blas_threads_now()
                    if self.before != 1:  # (tune_process leaves it at 1: then nothing to set, or to set back)
                        setter(1)
                self.depth += 1

    def __exit__(self, *exc):
        if self.depth:  # (0 only without OpenBLAS's setter: this context's own entry counts till here)
            with self.lock:
                self.depth -= 1
                if self.depth == 0 and self.before != 1:
                    blas_thread_setter()(self.before)


_ONE_BLAS_THREAD = _OneBlasThread()
_NO_CONTEXT = contextlib.nullcontext()
