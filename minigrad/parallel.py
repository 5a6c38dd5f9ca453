"""A thread pool for large numpy jobs: `minigrad.ops.shape`'s concatenate fills its rows on it.

(The fused ops' compiled kernels run on numba's native threads instead: minigrad/backends/cpu/team.py.)

numpy runs an ufunc on one core, but it releases the GIL while it loops, so a large elementwise
job split in as many parts as there are cores runs that many times faster in a thread pool.
Each part is processed in cache-sized blocks, so a kernel made of several ufunc passes reads
its inputs from cache rather than from memory on every pass.

`parallel_for(n, kernel)` calls `kernel(lo, hi)` over ranges covering [0, n); the kernel slices
its own arrays. On cupy (GPU) arrays the whole range runs at once: the GPU is already parallel.

The pool's threads sleep between jobs, and a sleeping thread takes tens of microseconds to start
(more when the machine is busy), while the calling thread starts on its own share at once. Kernels
whose results do not depend on where the range is cut (`grain`) get a split that gives the caller
the items it finishes meanwhile, learnt from the last calls; the others always get the same even
split, so that their per-block partial results, and hence their sums, never change.
"""
import os
import threading
import time

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


class _Worker:
    """One pool thread, handed one job at a time through two locks, one each way.

    Leaner than concurrent.futures' submit/result (a Future, a Condition and a queue per call):
    a baby GPT step makes ~16 parallel_for calls of 50-900 us each, and ran 1-4% faster with this
    (bench/ab_bench.py, whose noise floor here is ~1%)."""

    def __init__(self, name):
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job = self.error = None
        self.started = self.finished = 0  # jobs handed over / completed: the truth; `done` only wakes the caller
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def _loop(self):
        while True:
            self.go.acquire()
            try:
                self.job()
            except BaseException as e:  # handed to the caller, which raises it
                self.error = e
            self.job = None
            self.finished += 1
            try:
                self.done.release()
            except RuntimeError:  # a wake-up is pending already (its caller stopped waiting early): one is enough
                pass

    def start(self, job):
        # a wake-up left over from a job whose caller was interrupted before it consumed it
        self.done.acquire(blocking=False)
        self.job = job
        self.started += 1
        self.go.release()

    def join(self):
        """Wait until the job has finished, then raise its error if it had one. An interrupt
        (Ctrl-C) while waiting is raised only after the wait, so the caller's arrays are never
        written behind its back; calling join again after an interrupted join is safe."""
        interrupt = None
        while self.finished != self.started:
            try:
                self.done.acquire(timeout=1.0)
            except BaseException as e:  # KeyboardInterrupt: finish waiting first
                interrupt = e
        error, self.error = self.error, None
        if interrupt is not None:
            raise interrupt
        if error is not None:
            raise error


_workers = None  # the pool: num_threads() - 1 workers (the calling thread does a share too)
_busy = threading.Lock()  # held while one caller uses the pool; a concurrent caller runs inline


def _pool(n):
    """The pool's workers, at least `n` of them (MINIGRAD_NUM_THREADS may grow between calls)."""
    global _workers
    if _workers is None or len(_workers) < n:
        with _lock:
            workers = list(_workers or [])
            workers += [_Worker(f"minigrad_{i}") for i in range(len(workers), n)]
            _workers = workers
    return _workers


def _forget_pool():  # a forked child has none of the parent's threads, and its locks may be held
    global _workers, _busy, _lock
    _workers, _busy, _lock = None, threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


# The calling thread starts on its share at once; a parked worker starts some tens of microseconds
# later here (a futex wake, then the GIL). For kernels whose results do not depend on where the range
# is cut (`grain`), the caller's share is made larger by the items it gets through meanwhile, from
# running averages of that delay and of the caller's time per item for the kernel.
_start_delay = 0.0  # seconds from handing a worker its job to the job starting
_item_seconds = {}  # cost key -> the calling thread's seconds per item


def _average(old, new):
    """A running average that one outlier (a thread preempted, a core woken from deep sleep after a
    pause) moves by at most 40%: a sample counts as at most 3x the average so far."""
    if not old:
        return new
    return 0.8 * old + 0.2 * min(new, 3.0 * old)


def _cuts(n, threads, grain, key):
    """[0, c1, ..., n]: part 0 (the caller's) and the workers' parts; an even split without `grain`."""
    per_item = _item_seconds.get(key) if grain else None
    if not per_item:
        return [n * i // threads for i in range(threads + 1)]
    share = max(0.0, (n - _start_delay / per_item) / threads)  # each worker's share
    first = n - (threads - 1) * share
    cuts = [0] + [min(n, int(round((first + i * share) / grain)) * grain) for i in range(threads - 1)] + [n]
    return cuts


def parallel_for(n, kernel, block=1 << 15, min_parallel=1 << 16, gpu=False, grain=None, cost_key=None):
    """Run `kernel(lo, hi)` over [0, n) in blocks of about `block` items, split across the cores.

    Ranges are disjoint, so kernels that write only their own slice need no locking. Small jobs
    (under `min_parallel` items), GPU jobs and calls made from inside a worker run inline.

    `grain`: the kernel gives the same results wherever [0, n) is cut, as long as the cuts fall on
    multiples of `grain` (elementwise work, independent items); the split then adapts so that the
    threads finish together (see `_start_delay`). Without it the range is cut evenly, so that
    kernels which reduce over their ranges (column sums per block) always see the same blocks.
    `cost_key` names the work for the time-per-item average (default: the kernel's code).
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
    key = (cost_key or kernel.__code__) if grain else None
    bounds = _cuts(n, threads, grain, key)
    times = [0.0] * (threads + 1)

    def blocks(part):
        lo, hi = bounds[part], bounds[part + 1]
        for start in range(lo, hi, block):
            kernel(start, min(start + block, hi))

    def run(part):
        _local.inside = True
        times[part] = time.perf_counter()
        try:
            blocks(part)
        finally:
            _local.inside = False
            if part == 0:
                times[-1] = time.perf_counter()

    if not _busy.acquire(blocking=False):  # another thread of the user's is using the pool: the
        for part in range(threads):  # same blocks, one after the other on this thread
            blocks(part)
        return
    try:
        workers = _pool(threads - 1)[:threads - 1]
        started = []
        handed = time.perf_counter()
        try:
            for part, w in enumerate(workers, 1):
                w.start(lambda part=part: run(part))
                started.append(w)
            run(0)  # the calling thread does a share too instead of waiting idle
        finally:
            errors = []
            for w in started:  # always wait: the workers write into the caller's arrays
                while True:
                    try:
                        w.join()
                        break
                    except BaseException as e:  # its error, or an interrupt (if before the wait: wait again)
                        errors.append(e)
                        if w.finished == w.started:
                            break
            if errors:
                raise errors[0]
        if grain and started:
            _learn(key, handed, times, bounds)
    finally:
        _busy.release()


def _learn(key, handed, times, bounds):
    """Update the averages behind the split from one parallel call (under `_busy`: one writer)."""
    global _start_delay
    _start_delay = _average(_start_delay, max(0.0, times[1] - handed))
    if bounds[1] > 0:
        _item_seconds[key] = _average(_item_seconds.get(key), (times[-1] - times[0]) / bounds[1])
