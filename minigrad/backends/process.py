"""What minigrad may change in its process, only when asked: `tune_process()` and the thread count.

`import minigrad` and every op leave the host program alone: glibc's malloc settings, numpy's
allocator, os.environ and BLAS's thread count are as they were. One thing the import does, in glibc's
own adaptive way and not through its settings: it frees one 960 KiB block (`raise_mmap_threshold`), so
that glibc serves arrays up to that size from its heap, as it does in a process that has imported
PyTorch (`import torch` leaves it at ~0.93 MiB). A program that is one training run
(train.py, sample.py, the benchmarks) makes one call that tunes the process for it:

    tuning = minigrad.backends.tune_process()   # or `with minigrad.backends.tune_process(): ...`
    ...
    tuning.undo()                                # numpy's previous allocator back, malloc's defaults

It does, where each can (and says which in `tuning.applied`):

- malloc: glibc keeps freed memory for the next array (no mmap for large arrays, the heap never
  trimmed): a step frees and allocates the same few hundred sizes, and each fresh mmap costs page
  faults and the kernel zeroing its pages again. The process keeps its peak footprint.
- allocator: numpy's arrays of 64 KiB and more start on a cache line (cpu/array_memory.py), in the
  calling thread's context; `undo()` hands numpy back the handler it had before.
- blas: where the compiled kernels' thread team runs, BLAS calls made outside it run on one thread
  (threadpoolctl): the team shares the large products out itself, and OpenBLAS's idle workers spin
  for ~0.1 s after each call they share, taking a core from the team's kernels that follow.
  (OpenBLAS reads its spin time only when it loads, so it cannot be shortened at run time.)
- vector width: on AVX-512 CPUs the kernels compile for 512-bit vectors (cpu/team.py), through
  NUMBA_CPU_FEATURES, before their first compile (for this process's other numba code too).
- gc: the objects alive when it returns are frozen (`gc.freeze()`): called at a program's start, as
  train.py and sample.py call it, they are the modules imported (numba's among them), which live as
  long as the process, so Python's cyclic collector stops walking them in every full collection.
  (Called later, it would keep whatever cyclic garbage then exists.) The collector is paused while
  numba is imported here: an import makes no cyclic garbage, its collections there walk numba's new
  objects for nothing. `undo()` unfreezes them, unless something was frozen before (Python unfreezes
  all or nothing: another's freeze is left as it was, with these in it).

MINIGRAD_MALLOC_TUNING=0 in the environment leaves malloc and numpy's allocator alone; glibc's own
MALLOC_* variables, or glibc.malloc.* tunables in GLIBC_TUNABLES, leave malloc alone. docs/performance.md has the measurements.

Threads: `set_num_threads(n)` / `get_num_threads()` are minigrad's intra-op threads, as PyTorch's:
the thread team's size and BLAS's thread count (through threadpoolctl). The default is
$MINIGRAD_NUM_THREADS, else $OMP_NUM_THREADS, else the cores this process may use.
"""
import contextlib
import ctypes
import gc
import os
import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_MMAP_MAX = -1, -2, -3, -4
# glibc's documented defaults (mallopt(3)), what undo() sets back: glibc has no getter
_GLIBC_DEFAULTS = ((M_MMAP_MAX, 65536), (M_TRIM_THRESHOLD, 128 * 1024), (M_TOP_PAD, 128 * 1024))
_blas_at_one = None  # the threadpoolctl limiter while a tuning holds BLAS at one thread


class ProcessTuning:
    """What one `tune_process()` changed (`applied`: a set of 'malloc', 'allocator', 'blas',
    'vector_width', 'gc'), and `undo()`. Also a context manager that undoes on exit."""

    def __init__(self):
        self.applied = set()
        self._env_before = None
        self._frozen_before = 0  # objects frozen before (by the program, or an earlier tuning)

    def undo(self):
        """Set back what this tuning changed: numpy's previous allocator handler for arrays made from
        now on (arrays made meanwhile keep theirs), glibc's default malloc settings (its dynamic mmap
        threshold stays off) with the free heap given back, and BLAS's thread count. Compiled kernels
        keep their vector width."""
        global _blas_at_one
        if "allocator" in self.applied:
            from .cpu import array_memory

            array_memory.uninstall()
        if "malloc" in self.applied:
            libc = _libc()
            for param, value in _GLIBC_DEFAULTS:
                libc.mallopt(param, value)
            libc.malloc_trim(0)
        if "blas" in self.applied and _blas_at_one is not None:
            _blas_at_one.restore_original_limits()
            _blas_at_one = None
        if "vector_width" in self.applied:
            if self._env_before is None:
                os.environ.pop("NUMBA_CPU_FEATURES", None)
            else:
                os.environ["NUMBA_CPU_FEATURES"] = self._env_before
        if "gc" in self.applied and not self._frozen_before:
            gc.unfreeze()
        self.applied = set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.undo()

    def __repr__(self):
        return f"ProcessTuning(applied={sorted(self.applied)})"


def tune_process():
    """Tune this process for a training or generation run (the module docstring); returns a
    ProcessTuning whose `undo()` sets it back."""
    tuning = ProcessTuning()
    tuning._frozen_before = gc.get_freeze_count()
    collecting = gc.isenabled()
    gc.disable()
    try:
        _tune(tuning)
    finally:
        gc.freeze()  # what is alive now lives as long as the process: no full collection need walk it again
        tuning.applied.add("gc")
        if collecting:
            gc.enable()
    return tuning


def _tune(tuning):
    global _blas_at_one
    keep_memory = os.environ.get("MINIGRAD_MALLOC_TUNING", "1") == "0"
    if not keep_memory and _tune_malloc():
        tuning.applied.add("malloc")
    from .cpu import team

    if not team.available():  # no numba: no kernels to align arrays for, no team
        return
    before = os.environ.get("NUMBA_CPU_FEATURES")
    if team.full_vector_width():
        tuning.applied.add("vector_width")
        tuning._env_before = before
    if not keep_memory:
        from .cpu import array_memory

        if array_memory.install():
            tuning.applied.add("allocator")
    if team.has_team() and _blas_at_one is None:
        import threadpoolctl

        _blas_at_one = threadpoolctl.threadpool_limits(limits=1, user_api="blas")
        tuning.applied.add("blas")


def _libc():
    return ctypes.CDLL("libc.so.6")


def raise_mmap_threshold(nbytes=960 << 10):
    """Let glibc serve arrays of up to ~`nbytes` from its heap, by freeing one block of that size.

    glibc gives each array above its mmap threshold pages of its own (mmap), and back at free; the
    threshold starts at 128 KiB and adapts upwards to the largest such block freed (mallopt(3)), as does
    the free heap it keeps (twice that). Below it, a model whose step makes and frees arrays of a few
    hundred KiB (a vocabulary's logits) takes fresh pages, each a page fault and the kernel zeroing it,
    for every such array of every step. A PyTorch process does not pay that: `import torch` leaves the
    threshold at ~0.93 MiB. Freeing one 960 KiB block moves it there through glibc's own rule, with no
    setting changed: arrays above it (that the heap's free space cannot hold) still go back to the
    system when freed; freed arrays below it go back when the heap's top is free past twice it (glibc trims only its top, as in a PyTorch
    process). Nothing is done off Linux, with glibc's malloc tuned by the user (_user_tuned_malloc), or with
    MINIGRAD_MALLOC_TUNING=0; it never lowers a threshold already higher."""
    if not sys.platform.startswith("linux") or os.environ.get("MINIGRAD_MALLOC_TUNING") == "0" or _user_tuned_malloc():
        return
    try:
        libc = _libc()
        malloc, free = libc.malloc, libc.free
    except (OSError, AttributeError):
        return
    malloc.restype, malloc.argtypes, free.argtypes = ctypes.c_void_p, (ctypes.c_size_t,), (ctypes.c_void_p,)
    block = malloc(nbytes)
    if block:
        free(block)


def _user_tuned_malloc():
    """Whether the user tuned glibc's malloc: its MALLOC_* variables, or a glibc.malloc.* tunable in
    GLIBC_TUNABLES (glibc's newer way to say the same)."""
    return any(k.startswith("MALLOC_") for k in os.environ) or "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", "")


def _tune_malloc():
    """glibc keeps freed memory for the next array; False (nothing done) off Linux / glibc, or when
    the user tuned glibc's malloc (its MALLOC_* variables, or GLIBC_TUNABLES)."""
    if not sys.platform.startswith("linux") or _user_tuned_malloc():
        return False
    try:
        mallopt = _libc().mallopt
    except (OSError, AttributeError):  # musl or another libc
        return False
    ok = mallopt(M_MMAP_MAX, 0)  # no mmap: large arrays come from the heap too, and are reused
    # never give the heap's top back: -1 is SIZE_MAX once glibc takes it as a size_t (a step can free
    # more than 2 GiB, the largest positive int, at once)
    ok &= mallopt(M_TRIM_THRESHOLD, -1)
    ok &= mallopt(M_TOP_PAD, 64 << 20)  # grow the heap in large steps
    return bool(ok)


def set_num_threads(n):
    """Run minigrad's ops on `n` threads: the thread team's compiled kernels and BLAS (as
    torch.set_num_threads). While a tune_process() holds BLAS at one thread, BLAS stays there."""
    if not isinstance(n, int):  # PyTorch's errors
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError("set_num_threads expects a positive integer")
    from .cpu import team

    team.set_num_threads(n)
    if _blas_at_one is None:
        import threadpoolctl

        threadpoolctl.threadpool_limits(limits=n, user_api="blas")


@contextlib.contextmanager
def num_threads(n):
    """Within: minigrad's ops on `n` threads, as set_num_threads(n); afterwards the team and BLAS as they were
    (a count that came from the environment comes from it again: nothing stays set)."""
    from .cpu import team

    before = team.set_num_threads(n)
    blas = None
    if _blas_at_one is None:
        import threadpoolctl

        blas = threadpoolctl.threadpool_limits(limits=n, user_api="blas")
    try:
        yield
    finally:
        team.set_num_threads(before)
        if blas is not None:
            blas.restore_original_limits()


def blas_held_at_one():
    """Whether a tune_process() holds BLAS at one thread (the team's kernels then share products out)."""
    return _blas_at_one is not None


def get_num_threads():
    """The threads minigrad's ops run on (as torch.get_num_threads)."""
    from .cpu import team

    return team.num_threads()
