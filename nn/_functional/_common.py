"""Helpers shared by the fused functional ops: array modules, blocked (and threaded) loops, scratch.

numpy runs each ufunc on one core and over the whole array, so a fused op written as k passes
reads memory k times. The fused ops instead run all their passes on one block (rows of a (N, D)
array, or a flat range) before the next block, and spread the blocks over the cores with
`minigrad.parallel.parallel_for` (numpy releases the GIL inside ufunc loops). No BLAS call is
made inside those threads (BLAS has threads of its own). On the GPU (cupy) each pass is one
kernel over the whole array: no blocking.
"""
import contextlib
import os
import threading

import numpy as np

from minigrad import Tensor
from minigrad.autograd.function import Function, once_differentiable  # noqa: F401 (re-exported)
from minigrad.device import array_module


try:  # the engine's thread pool for elementwise work (falls back to a plain loop without it)
    from minigrad.parallel import num_threads
    from minigrad.parallel import parallel_for as _parallel_for
except ImportError:  # pragma: no cover
    _parallel_for = None

    def num_threads():
        return 1


class KernelSwitch:
    """Turns one family of fused kernels (cpu_kernels, cuda_kernels) on or off for this process.

    Starts on unless the environment variable `env` is 0, false, off or no. `set(flag)` switches;
    `with switch.enabled(flag):` switches for a block (tests and benchmarks run both ways)."""

    def __init__(self, env):
        self.on = os.environ.get(env, "1").strip().lower() not in ("0", "false", "off", "no")

    def set(self, flag):
        self.on = bool(flag)

    @contextlib.contextmanager
    def enabled(self, flag=True):
        before = self.on
        self.on = bool(flag)
        try:
            yield
        finally:
            self.on = before


def xp_of(a):
    """numpy or cupy for array `a` (numpy's fast path first: it is the common case)."""
    return np if type(a) is np.ndarray else array_module(a)


def for_blocks(n, kernel, block, xp=np, blas=False, grain=None, cost_key=None):
    """Call kernel(lo, hi) over [0, n) in ranges of `block` items: threaded on numpy, once on cupy.

    Each range is written by exactly one call, so kernels that write only their own slice need no
    locking; results that combine ranges (column sums) must be reduced in a fixed order after.
    `blas=True`: the kernel makes BLAS calls; `grain`: its results do not depend on where the
    ranges are cut, at multiples of `grain` (see minigrad.parallel).
    """
    if n <= 0:
        return
    if xp is not np:
        kernel(0, n)
    elif _parallel_for is not None and n > block:
        _parallel_for(n, kernel, block=block, min_parallel=block + 1, blas=blas, grain=grain, cost_key=cost_key)
    else:
        for lo in range(0, n, block):
            kernel(lo, min(lo + block, n))


# Elements per block: a few 1 MiB float32 buffers per thread stay in L2/L3, and each ufunc call is
# long enough (~100 us) that the threads are not throttled by handing the GIL back and forth
# (measured on (64, 256, 384) float32: 32K-element blocks gave no gain from a second thread).
BLOCK = 1 << 18


# Elements from which a compiled kernel's work goes to the thread team (cpu_kernels.threads): starting
# the team costs ~7 us, more than a generated token's or a small layer's whole work (a baby GPT's
# layer norm, 98K elements: ~20 us).
TEAM_MIN_ELEMENTS = 1 << 16


def rows_per_block(row_len):
    """How many rows of `row_len` elements make one block."""
    return max(1, BLOCK // max(1, row_len))


def blockwise(kernel, n_scratch, out, *arrays, team=None):
    """Run `kernel(out_b, *arrays_b, *scratch_b)` over flat blocks of `out` and the same-sized `arrays`
    (scalars among them, Python's or numpy's, are passed as they are), on all cores (numpy), or once
    over the whole arrays (cupy). `team`: the same work as one compiled kernel that shares it out over
    the kernels' thread team (cpu_kernels), given the number of threads as its last argument, run
    instead where the team is. Returns `out`."""
    xp = xp_of(out)
    flat_out = out.reshape(-1)
    is_array = [hasattr(a, "shape") and not isinstance(a, np.generic) for a in arrays]
    flat = [xp.ascontiguousarray(a).reshape(-1) if arr else a for a, arr in zip(arrays, is_array)]
    if xp is not np:
        kernel(flat_out, *flat, *(xp.empty(flat_out.size, out.dtype) for _ in range(n_scratch)))
        return out
    dt = out.dtype
    n = flat_out.size
    if team is not None and n >= TEAM_MIN_ELEMENTS and team.on_team():
        team(flat_out, *flat, team.threads())
        return out
    if n <= BLOCK:  # one block (a generated token's activations): no loop machinery
        kernel(flat_out, *flat, *(scratch(i, n, dt) for i in range(n_scratch)))
        return out

    def run(lo, hi):
        kernel(flat_out[lo:hi], *(a[lo:hi] if arr else a for a, arr in zip(flat, is_array)),
               *(scratch(i, hi - lo, dt) for i in range(n_scratch)))

    # elementwise: any cut gives the same values; 256 elements keeps every cut where a vectorized
    # loop would start a full vector anyway (the same elements take the same code path)
    for_blocks(n, run, BLOCK, grain=256, cost_key=kernel)
    return out


_tls = threading.local()


def scratch(i, n, dtype):
    """This thread's scratch buffer number `i`, at least `n` elements of `dtype` (reused across calls)."""
    key = (i, np.dtype(dtype).str)
    d = _tls.__dict__
    buf = d.get(key)
    if buf is None or buf.size < n:
        buf = d[key] = np.empty(max(n, BLOCK), dtype=dtype)
    return buf[:n]


def scratch_like(i, shape, dtype, xp=np):
    """A scratch array of `shape`: this thread's reusable buffer `i` on numpy, a new array on cupy."""
    if xp is not np:
        return xp.empty(shape, dtype=dtype)
    n = 1
    for d in shape:
        n *= d
    return scratch(i, n, dtype).reshape(shape)


def sum_to(a, shape):
    """Reduce a broadcast array `a` back to `shape` (summing the broadcast dims)."""
    if a.shape == tuple(shape):
        return a
    lead = a.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and a.shape[i + lead] != 1)
    return a.sum(axis=dims).reshape(shape) if dims else a.reshape(shape)


def wrap(a):
    """An array as a Tensor (a backward's return values must be Tensors), None stays None."""
    return None if a is None else Tensor(a)


def check_tensor(x, name, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(x).__name__}")


def row_sum(a, xp=np):
    """Sums along the last axis, keeping it (size 1). einsum's contiguous sum-of-products loop is ~2x
    numpy's sum(axis=-1) on short rows, and unlike a GEMV (a @ ones) it does not call into BLAS,
    whose own threads would compete with the block threads."""
    if xp is np:
        return np.einsum("...j->...", a)[..., None]
    return a.sum(axis=-1, keepdims=True)


def row_dot(a, b, xp=np):
    """sum(a * b) along the last axis, keeping it (size 1): one pass and no temporary on numpy (einsum)."""
    if xp is np:
        return np.einsum("...j,...j->...", a, b)[..., None]
    return (a * b).sum(axis=-1, keepdims=True)


def col_sum(a, xp=np):
    """Sums of the columns of a 2-D block, shape (cols,)."""
    return a.sum(axis=0)
