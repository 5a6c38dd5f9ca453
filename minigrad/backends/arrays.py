"""Where numpy and cupy differ for the ops' plain array code: blocked loops, scratch, row sums.

numpy runs each ufunc over the whole array, so an op written as k passes reads memory k times. The
ops' numpy code instead runs all its passes on one block (rows of a (N, D) array, or a flat range)
before the next block, so that every pass reads from cache. On the GPU (cupy) each pass is one
kernel over the whole array: no blocking. Plain code on one thread: nothing here is compiled.
"""
import threading

import numpy as np

from ..device import array_module


def xp_of(a):
    """numpy or cupy for array `a` (numpy's fast path first: it is the common case)."""
    return np if type(a) is np.ndarray else array_module(a)


def for_blocks(n, kernel, block, xp=np):
    """Call kernel(lo, hi) over [0, n) in ranges of `block` items on numpy, once on cupy."""
    if n <= 0:
        return
    if xp is not np:
        kernel(0, n)
        return
    for lo in range(0, n, block):
        kernel(lo, min(lo + block, n))


# Elements per block: a few 1 MiB float32 buffers stay in L2/L3.
BLOCK = 1 << 18


def rows_per_block(row_len):
    """How many rows of `row_len` elements make one block."""
    return max(1, BLOCK // max(1, row_len))


def blockwise(kernel, n_scratch, out, *arrays):
    """Run `kernel(out_b, *arrays_b, *scratch_b)` over flat blocks of `out` and the same-sized `arrays`
    (scalars among them, Python's or numpy's, are passed as they are) on numpy, or once over the
    whole arrays on cupy. Returns `out`."""
    xp = xp_of(out)
    flat_out = out.reshape(-1)
    is_array = [hasattr(a, "shape") and not isinstance(a, np.generic) for a in arrays]
    flat = [xp.ascontiguousarray(a).reshape(-1) if arr else a for a, arr in zip(arrays, is_array)]
    if xp is not np:
        kernel(flat_out, *flat, *(xp.empty(flat_out.size, out.dtype) for _ in range(n_scratch)))
        return out
    dt = out.dtype

    def run(lo, hi):
        kernel(flat_out[lo:hi], *(a[lo:hi] if arr else a for a, arr in zip(flat, is_array)),
               *(scratch(i, hi - lo, dt) for i in range(n_scratch)))

    for_blocks(flat_out.size, run, BLOCK)
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


def sum_of_squares(a):
    """sum(a * a) over all of `a`, as a 0-d array: one BLAS dot and no temporary on numpy."""
    flat = a.reshape(-1)
    if type(a) is np.ndarray:
        return np.asarray(np.vdot(flat, flat), dtype=a.dtype)
    return (flat * flat).sum()
