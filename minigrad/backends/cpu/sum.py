"""A sum over middle axes on the CPU: a C-contiguous array seen as (A, R, C), summed over R. numpy runs
one short inner loop (C elements) per (a, r), a call's fixed cost each: a bias's gradient over a batch of
sequences, (B*T, C).sum(0), pays it B*T times. One compiled loop instead, adding the rows in numpy's order
(from 0, each row in turn, along C): numpy's bits."""
import numpy as np

from . import floats, team


def supports(a):
    """float32 or float64 numpy arrays, already (A, R, C)."""
    return floats(a) and a.ndim == 3


def forward(a):
    """a.sum(axis=1) of an (A, R, C) array."""
    out = np.empty((a.shape[0], a.shape[2]), dtype=a.dtype)
    _sum_middle(out, a)
    return out


@team.kernel
def _sum_middle(out, a):  # out[i, c] = 0 + a[i, 0, c] + a[i, 1, c] + ..., the rows added in order
    for i in range(a.shape[0]):
        for c in range(a.shape[2]):
            out[i, c] = 0.0  # (numpy's start: the sum of -0.0s is +0.0)
        for r in range(a.shape[1]):
            for c in range(a.shape[2]):
                out[i, c] += a[i, r, c]
