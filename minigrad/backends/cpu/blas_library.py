"""Which BLAS the compiled CPU kernels' matrix products call: numpy's OpenBLAS, or Intel's MKL.

Linear's products and attention's are computed by the kernels' thread team, each thread calling a
single-threaded row-major cblas_?gemm on its share of the result (minigrad/backends/cpu/linear.py, attention.py).
Two libraries can serve them:

- `openblas`: the one numpy loaded (its wheels bundle OpenBLAS, 64-bit integers);
- `mkl`: libmkl_rt from the `mkl` wheel (`pip install minigrad[mkl]`), in sys.prefix/lib, set to its
  sequential layer (one thread per call: the team is the parallelism) and to conditional numerical
  reproducibility (MKL_CBWR=AUTO: the same bits for a share wherever its rows start in memory).

With both there, each is timed once on this machine, single-threaded, at a GPT's per-thread shapes
(~0.2 s in all), and the faster one kept; OpenBLAS keeps ties (within 3%), its bits being numpy's.
The choice is cached in $XDG_CACHE_HOME/minigrad/blas.json (else ~/.cache/minigrad/blas.json),
keyed by the CPU model and the libraries' versions, so a new machine or a new library measures
again; an unreadable or corrupt cache is measured over and rewritten. MINIGRAD_BLAS=openblas or
=mkl forces one (a forced library that is not installed warns and OpenBLAS serves); the kernels ask
at their first product, and again after `forget()`.
"""
import ctypes
import glob
import json
import os
import sys
import threading
import time
import warnings

import numpy as np

ENV = "MINIGRAD_BLAS"
LIBRARIES = ("openblas", "mkl")
TIE = 0.03  # another library must be this much faster to displace OpenBLAS
_NAMES = {np.dtype(np.float32): "sgemm", np.dtype(np.float64): "dgemm"}
# (M, N, K, transposed A, transposed B): a thread's share of a GPT's products at 2 threads, baby to gpt2
SHAPES = ((384, 384, 128, False, True), (256, 1536, 384, False, True), (256, 384, 1536, False, False),
          (768, 384, 512, True, False), (256, 2304, 768, False, True))

_lock = threading.Lock()
_found = None  # {name: Library} of the libraries that load here, once looked for
_chosen = {}  # {MINIGRAD_BLAS value: Library} once decided
generation = 0  # counts forget()s: a user of gemm() may keep its answer while this is unchanged


class Library:
    """One loaded BLAS: `name`, `version`, and `gemm[dtype]` = (address of cblas_?gemm, ilp64)."""

    def __init__(self, name, version, lib, symbols, ilp64):
        self.name, self.version, self.lib, self.ilp64 = name, version, lib, ilp64
        self.gemm = {}
        for dtype, symbol in symbols.items():
            fn = getattr(lib, symbol)
            fn.restype = None
            self.gemm[dtype] = (ctypes.cast(fn, ctypes.c_void_p).value, ilp64)
        self._fns = {dtype: getattr(lib, symbol) for dtype, symbol in symbols.items()}

    def matmul(self, A, B, ta=False, tb=False, out=None):
        """out = op(A) op(B) through this library's cblas_?gemm, on this thread (C-contiguous arrays)."""
        M, K = A.shape[::-1] if ta else A.shape
        N = B.shape[0] if tb else B.shape[1]
        C = np.empty((M, N), dtype=A.dtype) if out is None else out
        I, F = (ctypes.c_int64 if self.ilp64 else ctypes.c_int32), (ctypes.c_float if A.dtype == np.float32 else ctypes.c_double)
        ptr = ctypes.c_void_p
        self._fns[A.dtype](I(101), I(112 if ta else 111), I(112 if tb else 111), I(M), I(N), I(K), F(1.0),
                           ptr(A.ctypes.data), I(A.shape[1]), ptr(B.ctypes.data), I(B.shape[1]), F(0.0),
                           ptr(C.ctypes.data), I(N))
        return C

    def works(self):
        """One small product of each dtype against numpy's (the integer width is read from a name)."""
        for dtype in self.gemm:
            A = np.arange(15, dtype=dtype).reshape(3, 5)
            B = np.arange(20, dtype=dtype).reshape(4, 5)
            if not np.array_equal(self.matmul(A, B, tb=True), A @ B.T):
                return False
        return True


_UNSET = object()
_openblas = _UNSET
_blas_setter = _UNSET
_blas_getter = None
_blas_count = None  # OpenBLAS's own thread-count variable, read in place where its getter reads it
_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_")


def openblas():
    """The OpenBLAS library numpy has loaded (a ctypes CDLL), or None: found among the shared
    libraries mapped into this process (numpy's wheels bundle their own, under a mangled name)."""
    global _openblas
    if _openblas is _UNSET:
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
    global _blas_setter, _blas_getter, _blas_count
    if _blas_setter is _UNSET:
        _blas_setter = None
        lib = openblas()
        if lib is not None:
            fn = lib.openblas_set_num_threads_local
            fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
            _blas_getter = next(getattr(lib, n) for n in _GETTERS if hasattr(lib, n))
            _blas_count = _count_variable(lib)
            _blas_setter = fn
    return _blas_setter


def _count_variable(lib):
    """OpenBLAS's `blas_cpu_number` (a ctypes int on the library's own memory), which its getter
    returns, or None where not exported. The team reads the count around every product, and a ctypes
    call costs several times the read of a variable; read in place, it follows every setter
    (threadpoolctl's too)."""
    try:
        count = ctypes.c_int.in_dll(lib, "blas_cpu_number")
    except ValueError:  # not exported by this build
        return None
    return count if count.value == _blas_getter() else None  # (the getter first: it sets the count up)


def blas_threads_now():
    """OpenBLAS's thread count now (process-wide in numpy's build), or 1 without OpenBLAS."""
    if _blas_count is not None:
        return max(1, _blas_count.value)
    blas_thread_setter()
    return max(1, int(_blas_getter())) if _blas_getter is not None else 1


def openblas_core():
    """The name of the core numpy's OpenBLAS runs its kernels for ("SkylakeX", "Zen", "Haswell", ...),
    or None (no OpenBLAS, or one that does not say)."""
    lib = openblas()
    for name in ("scipy_openblas_get_corename64_", "openblas_get_corename64_", "openblas_get_corename"):
        if lib is not None and hasattr(lib, name):
            fn = getattr(lib, name)
            fn.restype = ctypes.c_char_p
            return fn().decode(errors="replace")
    return None


def _load_openblas():
    lib = openblas()
    if lib is None:
        return None
    # numpy's wheels: scipy-openblas, 64-bit integers and a prefix; other builds: plain names
    for prefix, suffix, ilp64 in (("scipy_cblas_", "64_", True), ("cblas_", "64_", True), ("cblas_", "", False)):
        symbols = {dt: f"{prefix}{name}{suffix}" for dt, name in _NAMES.items()}
        if all(hasattr(lib, s) for s in symbols.values()):
            config = next((getattr(lib, n) for n in ("scipy_openblas_get_config64_", "openblas_get_config64_",
                                                      "openblas_get_config") if hasattr(lib, n)), None)
            version = "?"
            if config is not None:
                config.restype = ctypes.c_char_p
                version = config().decode(errors="replace").split(" DYNAMIC")[0]
            return Library("openblas", version, lib, symbols, ilp64)
    return None


MKL_THREADING_SEQUENTIAL, MKL_INTERFACE_LP64, MKL_CBWR_AUTO = 1, 0, 2


def _load_mkl():
    paths = sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")))
    if not paths:
        return None
    try:
        lib = ctypes.CDLL(paths[0], mode=ctypes.RTLD_LOCAL)
        # before any other MKL call: one thread per call (the team's threads are the parallelism; MKL's
        # own OpenMP threads would fight them), 32-bit integers, results that do not depend on alignment
        if lib.MKL_Set_Threading_Layer(MKL_THREADING_SEQUENTIAL) != MKL_THREADING_SEQUENTIAL:
            return None  # this process's MKL already runs threaded (numpy built on it, say): not for the team
        lib.MKL_Set_Interface_Layer(MKL_INTERFACE_LP64)
        if "MKL_CBWR" not in os.environ:
            lib.MKL_CBWR_Set(MKL_CBWR_AUTO)
        buf = ctypes.create_string_buffer(256)
        lib.MKL_Get_Version_String(buf, len(buf))
        version = buf.value.decode(errors="replace").split("-Product")[0].split(" Product")[0]
        return Library("mkl", version, lib, {dt: f"cblas_{name}" for dt, name in _NAMES.items()}, False)
    except (OSError, AttributeError):  # a broken install: as if none
        return None


def found():
    """{name: Library} of the BLAS libraries that load here and compute a small product right."""
    global _found
    with _lock:
        if _found is None:
            _found = {}
            for load in (_load_openblas, _load_mkl):
                lib = load()
                if lib is not None and lib.works():
                    _found[lib.name] = lib
        return _found


def cache_path():
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "minigrad", "blas.json")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


def cache_key(libraries):
    return " | ".join([cpu_model()] + [f"{lib.name} {lib.version}" for lib in sorted(libraries.values(), key=lambda x: x.name)])


def _read_cache():
    try:
        with open(cache_path()) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):  # none yet, unreadable, or corrupt: measured again and rewritten
        return {}


def _write_cache(data):
    path = cache_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)  # whole or not at all: another process may read it at any time
    except OSError:  # a read-only home: measured again in the next process
        pass


def measure(libraries, repeats=3):
    """{name: seconds} for SHAPES' products in float32 on this thread (its CPU time), best of `repeats`,
    the libraries taking turns."""
    rng = np.random.default_rng(0)
    cases = []
    for M, N, K, ta, tb in SHAPES:
        A = rng.standard_normal((K, M) if ta else (M, K), dtype=np.float32)
        B = rng.standard_normal((N, K) if tb else (K, N), dtype=np.float32)
        cases.append((A, B, ta, tb, np.empty((M, N), np.float32)))
    best = {name: [float("inf")] * len(cases) for name in libraries}
    setter, before = blas_thread_setter(), blas_threads_now()
    if setter is not None:
        setter(1)  # OpenBLAS as the team calls it (MKL is sequential already)
    try:
        for _ in range(repeats + 1):  # the first round warms each library up (and is counted only if best)
            for name, lib in libraries.items():
                for i, (A, B, ta, tb, C) in enumerate(cases):
                    t = time.thread_time()  # this thread's CPU time: a busy machine's waits left out
                    lib.matmul(A, B, ta, tb, out=C)
                    best[name][i] = min(best[name][i], time.thread_time() - t)
    finally:
        if setter is not None:
            setter(before)
    return {name: sum(times) for name, times in best.items()}


def choose(libraries):
    """The name of the library to use among `libraries` (measured, or read from the cache)."""
    if len(libraries) == 1:
        return next(iter(libraries))
    key = cache_key(libraries)
    data = _read_cache()
    entry = data.get(key)
    if isinstance(entry, dict) and entry.get("library") in libraries:
        return entry["library"]
    seconds = measure(libraries)
    flops = 2.0 * sum(M * N * K for M, N, K, _, _ in SHAPES)
    name = min(seconds, key=lambda n: seconds[n] * (1 + TIE if n != "openblas" else 1))
    data[key] = {"library": name, "gflops_one_thread": {n: round(flops / s / 1e9, 1) for n, s in seconds.items()},
                 "measured": time.strftime("%Y-%m-%d %H:%M:%S")}
    _write_cache(data)
    return name


def library():
    """The Library the kernels' products use here (MINIGRAD_BLAS, or the cached / measured choice),
    or None where no BLAS is found."""
    env = os.environ.get(ENV)
    try:
        return _chosen[env]  # asked for every product: a dictionary look-up once decided
    except KeyError:
        pass
    forced = (env or "").strip().lower()
    if forced not in ("", "auto") + LIBRARIES:
        raise ValueError(f"{ENV} must be one of {', '.join(LIBRARIES)} or auto, got {env!r}")
    libraries = found()
    with _lock:
        if forced in ("", "auto"):
            name = choose(libraries) if libraries else None
        elif forced in libraries:
            name = forced
        else:
            name = "openblas" if "openblas" in libraries else None
            warnings.warn(f"{ENV}={env}: that library is not installed here; using {name or 'no BLAS'}"
                          + (" (pip install mkl)" if forced == "mkl" else ""), RuntimeWarning, stacklevel=2)
        _chosen[env] = libraries.get(name)
    return _chosen[env]


def gemm(dtype):
    """(address of the chosen library's row-major cblas_?gemm for `dtype`, ilp64: its integers are
    64-bit, library name), or None: no BLAS here, or a dtype without a gemm."""
    lib = library()
    entry = lib.gemm.get(np.dtype(dtype)) if lib is not None else None
    return None if entry is None else (*entry, lib.name)


def forget():
    """Look again at the next call (after changing MINIGRAD_BLAS, the cache, or the libraries)."""
    global _found, generation
    with _lock:
        _found = None
        _chosen.clear()
        generation += 1
