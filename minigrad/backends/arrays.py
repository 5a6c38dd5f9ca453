"""Where numpy and cupy differ for the ops' plain array code: blocked loops, scratch, row sums.

numpy runs each ufunc over the whole array, so an op written as k passes reads memory k times. The
ops' numpy code instead runs all its passes on one block (rows of a (N, D) array, or a flat range)
before the next block, so that every pass reads from cache. On the GPU (cupy) each pass is one
kernel over the whole array: no blocking. Plain code on one thread: nothing here is compiled.
"""
import functools
import math
import threading

import numpy as np

from ..device import array_module, one_to_one, pick  # noqa: F401 (pick: re-exported, the ops' and nn's one select)
from ..random import generator


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


CHUNK = 1 << 20  # mask elements per random stream (fixed, so masks do not depend on the thread count)


def keep_mask(xp, shape, p):
    """A bool array, True with probability 1 - p, drawn from minigrad's default generator (so
    `minigrad.manual_seed` makes it reproducible).

    On the CPU each element compares 16 random bits with round(p * 65536) (p is used to 1/65536),
    which is twice as fast as drawing float32 uniforms; a large mask is cut in fixed chunks, each
    drawn from its own stream (seeded from the default generator).
    """
    if xp is not np:
        return generator(xp).random(shape, dtype="float32") >= p
    bits, threshold = mask_bits(shape, p)
    return np.greater_equal(bits, threshold).reshape(shape)


def mask_bits(shape, p):
    """(bits, threshold): the flat uint16 draws behind keep_mask's CPU mask of `shape` (kept where bits >=
    threshold = round(p * 65536)), from the same streams, for a backend that compares them itself."""
    n = math.prod(shape)  # (np.prod of a tuple costs 3 us: as much as drawing a small mask's bits)
    gen = generator(np).bit_generator
    threshold = int(round(p * 65536.0))
    if n <= CHUNK:
        return _bits16(gen, n), threshold
    streams = np.random.SeedSequence(int(gen.random_raw())).spawn((n + CHUNK - 1) // CHUNK)
    bits = np.empty(n, dtype=np.uint16)

    def chunks(lo, hi):
        for c in range(lo, hi):
            a, b = c * CHUNK, min((c + 1) * CHUNK, n)
            bits[a:b] = _bits16(np.random.PCG64(streams[c]), b - a)

    for_blocks(len(streams), chunks, 1)
    return bits, threshold


def _bits16(bit_generator, n):
    """n uniform uint16 values (raw generator output, 4 per 64-bit draw)."""
    return bit_generator.random_raw((n + 3) // 4).view(np.uint16)[:n]


# ---- attention's arrays: the gradients laid out as q, k, v; the causal mask -------------------------
def grads_like(q, k, v, batch, dtype):
    """Empty arrays for the gradients of q, k, v. When q, k and v are views that tile one contiguous
    array between them (heads split off a fused qkv projection's output), their gradients are laid
    out the same way in one new array, so that the gradient flows back through the views and the
    split without copies (`Split.backward` sees them side by side). Otherwise, three contiguous arrays."""
    base = q.base
    if (type(base) is np.ndarray and k.base is base and v.base is base and base.dtype == dtype
            and base.flags.c_contiguous and q.shape[:-2] == k.shape[:-2] == v.shape[:-2] == batch
            and q.size + k.size + v.size == base.size  # nothing else in it: no memory wasted on a larger array
            and all(one_to_one(a) for a in (q, k, v))  # no stride-0 (expanded) or self-overlapping view
            and not (_overlap(q, k) or _overlap(k, v) or _overlap(q, v))):  # q = k = v: three separate gradients
        flat = np.empty(base.size, dtype=dtype)
        start = base.__array_interface__["data"][0]
        return [np.ndarray(a.shape, dtype, buffer=flat, offset=a.__array_interface__["data"][0] - start,
                           strides=a.strides) for a in (q, k, v)]
    xp = xp_of(q)
    return [xp.empty(batch + a.shape[-2:], dtype) for a in (q, k, v)]


def _overlap(a, b):
    try:
        return np.shares_memory(a, b, max_work=10_000)
    except np.exceptions.TooHardError:
        return True


def empty_in_order_of(ref, shape, dtype):
    """An empty array of `shape` (as many dims as `ref`) whose memory is ordered like `ref`'s:
    dims with larger strides outer, an expanded (stride-0) dim outermost, as PyTorch orders them."""
    dims, strides = ref.shape, ref.strides
    key = float("inf")
    for d in range(len(dims)):  # the common case first: the dims already in that order
        if dims[d] > 1:
            k = abs(strides[d]) if strides[d] else float("inf")
            if k > key:
                break
            key = k
    else:
        return xp_of(ref).empty(shape, dtype)
    big = [d for d in range(len(dims)) if dims[d] > 1]  # size-1 dims stay where they are
    order = list(range(len(dims)))
    for at, d in zip(big, sorted(big, key=lambda d: -abs(strides[d]) if strides[d] else float("-inf"))):
        order[at] = d
    xp = xp_of(ref)
    if order == sorted(order):
        return xp.empty(shape, dtype)
    inverse = [0] * len(order)  # the argsort of the permutation `order`, without making an array of it
    for i, d in enumerate(order):
        inverse[d] = i
    return xp.empty(tuple(shape[d] for d in order), dtype).transpose(inverse)


def causal_mask(L, S, xp):
    """The (L, S) 'masked out' array of causal attention (keys after the query). Every layer of every
    step asks for the same one, so on the CPU up to 4 MiB of them are made once and shared (read-only)."""
    if xp is np and L * S <= 1 << 22:
        return _shared_causal_mask(L, S)
    return _keys_after(L, S, xp)


def _keys_after(L, S, xp):
    return xp.triu(xp.ones((L, S), dtype=bool), 1)


@functools.lru_cache(maxsize=4)
def _shared_causal_mask(L, S):
    m = _keys_after(L, S, np)
    m.flags.writeable = False
    return m
