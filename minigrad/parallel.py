"""Use every core for large elementwise work, as PyTorch's CPU kernels do.

numpy runs an ufunc on one core, but it releases the GIL while it loops, so a large elementwise
job split in as many parts as there are cores runs that many times faster in a thread pool.
Each part is processed in cache-sized blocks, so a kernel made of several ufunc passes reads
its inputs from cache rather than from memory on every pass.

`parallel_for(n, kernel)` calls `kernel(lo, hi)` over ranges covering [0, n); the kernel slices
its own arrays. On cupy (GPU) arrays the whole range runs at once: the GPU is already parallel.

Kernels may call BLAS (`blas=True`): many small matrix products (attention's per-head products)
run faster one per core than each split over the cores by BLAS's own threads, so during such a
loop OpenBLAS is asked for one thread per call (`openblas_set_num_threads_local`; in the OpenBLAS
that numpy ships it acts on every thread, so it is set before the loop and restored after it).
Without that function (another BLAS), the loop runs on the calling thread.
"""
import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

_pool = None
_lock = threading.Lock()
_local = threading.local()


def num_threads():
    """Worker threads: $MINIGRAD_NUM_THREADS, else the number of cores this process may use."""
    env = os.environ.get("MINIGRAD_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_UNSET = object()
_blas_setter = _UNSET


_GETTERS = ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_")


def blas_thread_setter():
    """OpenBLAS's per-thread `openblas_set_num_threads_local(n)`, or None if unavailable."""
    global _blas_setter, _blas_threads
    if _blas_setter is _UNSET:
        _blas_setter = None
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
            for path in paths:
                lib = ctypes.CDLL(path)
                fn = getattr(lib, "openblas_set_num_threads_local", None)
                getter = next((getattr(lib, n) for n in _GETTERS if hasattr(lib, n)), None)
                if fn is not None and getter is not None:
                    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
                    # what the calling threads go back to after a loop (asked before anything changed it)
                    _blas_threads = max(1, int(getter()))
                    _blas_setter = fn
                    break
        except OSError:  # no /proc (not Linux) or a library that will not load: keep BLAS as it is
            pass
    return _blas_setter


_blas_threads = 1


def _executor():
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=num_threads(), thread_name_prefix="minigrad")
    return _pool


def parallel_for(n, kernel, block=1 << 15, min_parallel=1 << 16, gpu=False, blas=False):
    """Run `kernel(lo, hi)` over [0, n) in blocks of about `block` items, split across the cores.

    Ranges are disjoint, so kernels that write only their own slice need no locking. Small jobs
    (under `min_parallel` items), GPU jobs and calls made from inside a worker run inline. With
    `blas=True` the kernel calls BLAS: it runs in parallel only where BLAS can be held to one
    thread per caller, and otherwise on the calling thread (where BLAS uses the cores itself).
    """
    if n <= 0:
        return
    threads = num_threads()
    setter = blas_thread_setter() if blas else None
    if blas and setter is None:
        threads = 1
    if gpu or n < min_parallel or threads == 1 or getattr(_local, "inside", False):
        if gpu:
            kernel(0, n)
            return
        # a small BLAS job: its products are small too, and BLAS's threads cost more than they give
        small_blas = setter is not None and not getattr(_local, "inside", False)
        if small_blas:
            setter(1)
        try:
            for lo in range(0, n, block):
                kernel(lo, min(lo + block, n))
        finally:
            if small_blas:
                setter(_blas_threads)
        return
    bounds = [n * i // threads for i in range(threads + 1)]

    def run(part):
        _local.inside = True
        try:
            lo, hi = bounds[part], bounds[part + 1]
            for start in range(lo, hi, block):
                kernel(start, min(start + block, hi))
        finally:
            _local.inside = False

    if setter is not None:
        setter(1)
    try:
        futures = [_executor().submit(run, p) for p in range(1, threads)]
        run(0)  # the calling thread does a share too instead of waiting idle
        for f in futures:
            f.result()
    finally:
        if setter is not None:  # back to BLAS's own threads for the big products that follow
            setter(_blas_threads)
