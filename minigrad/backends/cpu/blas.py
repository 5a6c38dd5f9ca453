"""BLAS on the CPU: OpenBLAS's idle threads, its thread count, and the address of its gemm.

- `tune_blas_threads` (run when minigrad is imported): after each call, OpenBLAS's worker threads
  busy-wait for the next one, by default for 2^28 cycles (about 0.1 s), and a spinning BLAS thread
  takes a core from the thread team's kernels that follow a product. 2^12 cycles (~2 us) still
  bridges back-to-back products. OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, when it loads, so
  this applies only when minigrad is imported before numpy (train.py and sample.py do so), and never
  over a value the user set. Being an environment variable, it is inherited by child processes.
  MINIGRAD_BLAS_TUNING=0 leaves it alone.
- `one_blas_thread()`: a context in which BLAS runs each call on the thread that makes it (the team's
  threads each call gemm on their share).
- `gemm_address(dtype)`: the address of cblas_?gemm, which compiled kernels call (team.gemm), from
  the library `blas_library` chose (numpy's OpenBLAS, or MKL where installed and faster).
- `gemm_found(dtype)`: both at once, (address, ilp64, library name) or None.
- `team_gemm_context(dtype)`: the context the team's gemm calls run in: `one_blas_thread()` for
  OpenBLAS's gemm; none for MKL's, which is loaded sequential (setting OpenBLAS's count and back
  costs about 20 us a product in a training step, for nothing there).

numpy is imported only by the functions that need it: this module runs before numpy loads.
"""
import contextlib
import ctypes
import os
import sys
import threading

THREAD_TIMEOUT = "12"  # log2 of the cycles an idle OpenBLAS thread spins before it sleeps


def tune_blas_threads():
    """Set OPENBLAS_THREAD_TIMEOUT for this process if it can still take effect; returns whether it did."""
    if os.environ.get("MINIGRAD_BLAS_TUNING", "1") == "0" or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return False
    if "numpy" in sys.modules:  # OpenBLAS is loaded and has read its environment already
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = THREAD_TIMEOUT
    return True


applied = tune_blas_threads()

_UNSET = object()
_openblas = _UNSET
_blas_setter = _UNSET
_blas_getter = None
_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_")


def openblas():
    """The OpenBLAS library numpy has loaded (a ctypes CDLL), or None: found among the shared
    libraries mapped into this process (numpy's wheels bundle their own, under a mangled name)."""
    global _openblas
    if _openblas is _UNSET:
        import numpy  # noqa: F401 (loads OpenBLAS)

        _openblas = None
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
            for path in paths:
                lib = ctypes.CDLL(path)
                if hasattr(lib, "openblas_set_num_threads_local") and any(hasattr(lib, n) for n in _GETTERS):
                    _openblas = lib
                    break
        except OSError:  # no /proc (not Linux) or a library that will not load
            pass
    return _openblas


def blas_thread_setter():
    """OpenBLAS's `openblas_set_num_threads_local(n)`, or None if unavailable (in the OpenBLAS that
    numpy ships it sets the count for the whole process, not only the calling thread)."""
    global _blas_setter, _blas_getter
    if _blas_setter is _UNSET:
        _blas_setter = None
        lib = openblas()
        if lib is not None:
            fn = lib.openblas_set_num_threads_local
            fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
            _blas_getter = next(getattr(lib, n) for n in _GETTERS if hasattr(lib, n))
            _blas_setter = fn
    return _blas_setter


def blas_threads_now():
    """OpenBLAS's thread count now (process-wide in numpy's build), or 1 without OpenBLAS."""
    blas_thread_setter()
    return max(1, int(_blas_getter())) if _blas_getter is not None else 1


_gemm_found_for = {}  # {dtype: (blas_library.generation when found, (address, ilp64, library) or None)}
_blas_library_module = None


def _blas_library():  # imported on first use: this module runs before numpy loads
    global _blas_library_module
    if _blas_library_module is None:
        from . import blas_library

        _blas_library_module = blas_library
    return _blas_library_module


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
    blas_library = _blas_library()
    if entry is None or entry[0] != blas_library.generation:
        import numpy as np

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
                    setter(1)
                self.depth += 1

    def __exit__(self, *exc):
        setter = blas_thread_setter()
        if setter is not None:
            with self.lock:
                self.depth -= 1
                if self.depth == 0:
                    setter(self.before)


_ONE_BLAS_THREAD = _OneBlasThread()
_NO_CONTEXT = contextlib.nullcontext()
