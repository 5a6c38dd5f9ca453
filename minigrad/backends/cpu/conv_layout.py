"""A convolution's output from its product's layout: the product gives y^T as (L, N, O) (positions, batch,
channels: the positions as its long side, see nn/_functional/conv.py), the op returns (N, O, L). numpy's
copy of that transposed view walks the destination in order and reads the source O apart, entry by entry,
missing the cache on each read for few channels. Here each row of O channels is read once, contiguous, and
written to O rows of the destination. A copy: the same bits. But where those O rows lie a multiple of 4 KiB
apart (32 x 32 maps of floats) the writes alias in the cache, and numpy's copy is the faster.

`backward` is the inverse move (the copy's adjoint), the output's gradient (N, O, L) into the product's
layout (L, N, O) for the weight's gradient. numpy's copy reads O rows L apart for each destination row:
a map of 32 x 32 floats puts them 4 KiB apart, where they alias in the cache (22 ms for 128 x 16 x 32 x 32
on a busy machine). Here TILE_L positions are read along each of the O rows, one cache line each, and
written as TILE_L rows of O channels (6 ms); elsewhere numpy's copy is the faster (2.2 ms against 8.6 for
128 x 32 x 16 x 16, whose destination rows lie 16 KiB apart).
"""
import numpy as np

from . import floats, team


def supports(y):
    """float32 or float64 numpy arrays (L, N, O)."""
    return floats(y) and y.ndim == 3


def forward(y):
    """y (L, N, O) -> (N, O, L), C-contiguous."""
    L, N, O = y.shape
    if (L * y.itemsize) % 4096 == 0:
        return np.ascontiguousarray(y.transpose(1, 2, 0))
    out = np.empty((N, O, L), dtype=y.dtype)
    _batch_first(out, y)
    return out


def backward(g):
    """g (N, O, L) -> (L, N, O), C-contiguous."""
    N, O, L = g.shape
    if (L * g.itemsize) % 4096:
        return np.ascontiguousarray(g.transpose(2, 0, 1))
    out = np.empty((L, N, O), dtype=g.dtype)
    _positions_first(out, np.ascontiguousarray(g))
    return out


TILE_L = 16


@team.kernel
def _positions_first(out, g):  # out[l, n, o] = g[n, o, l], TILE_L positions at a time
    N, O, L = g.shape
    for n in range(N):
        for l0 in range(0, L, TILE_L):
            l1 = min(l0 + TILE_L, L)
            for o in range(O):
                for l in range(l0, l1):
                    out[l, n, o] = g[n, o, l]


@team.kernel
def _batch_first(out, y):  # out[n, o, l] = y[l, n, o]
    for n in range(y.shape[1]):
        for l in range(y.shape[0]):
            for o in range(y.shape[2]):
                out[n, o, l] = y[l, n, o]
