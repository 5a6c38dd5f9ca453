"""Use every core for large elementwise work, as PyTorch's CPU kernels do.

numpy runs an ufunc on one core, but it releases the GIL while it loops, so a large elementwise
job split in as many parts as there are cores runs that many times faster in a thread pool.
Each part is processed in cache-sized blocks, so a kernel made of several ufunc passes reads
its inputs from cache rather than from memory on every pass.

`parallel_for(n, kernel)` calls `kernel(lo, hi)` over ranges covering [0, n); the kernel slices
its own arrays. On cupy (GPU) arrays the whole range runs at once: the GPU is already parallel.
"""
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


def _executor():
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=num_threads(), thread_name_prefix="minigrad")
    return _pool


def parallel_for(n, kernel, block=1 << 15, min_parallel=1 << 16, gpu=False):
    """Run `kernel(lo, hi)` over [0, n) in blocks of about `block` items, split across the cores.

    Ranges are disjoint, so kernels that write only their own slice need no locking. Small jobs
    (under `min_parallel` items), GPU jobs and calls made from inside a worker run inline.
    """
    if n <= 0:
        return
    threads = num_threads()
    if gpu or n < min_parallel or threads == 1 or getattr(_local, "inside", False):
        if gpu:
            kernel(0, n)
            return
        for lo in range(0, n, block):
            kernel(lo, min(lo + block, n))
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

    futures = [_executor().submit(run, p) for p in range(1, threads)]
    run(0)  # the calling thread does a share too instead of waiting idle
    for f in futures:
        f.result()
