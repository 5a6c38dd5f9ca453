"""A convolution's output from its product's layout: the product gives y^T as (L, N, O) (positions, batch,
channels: the positions as its long side, see nn/_functional/conv.py), the op returns (N, O, L). numpy's
copy of that transposed view walks the destination in order and reads the source O apart, entry by entry,
missing the cache on each read for few channels. Here each row of O channels is read once, contiguous, and
written to O rows of the destination. A copy: the same bits.
"""
import numpy as np

from . import floats, team


def supports(y):
    """float32 or float64 numpy arrays (L, N, O)."""
    return floats(y) and y.ndim == 3


def forward(y):
    """y (L, N, O) -> (N, O, L), C-contiguous."""
    L, N, O = y.shape
    out = np.empty((N, O, L), dtype=y.dtype)
    _batch_first(out, y)
    return out


@team.kernel
def _batch_first(out, y):  # out[n, o, l] = y[l, n, o]
    for n in range(y.shape[1]):
        for l in range(y.shape[0]):
            for o in range(y.shape[2]):
                out[n, o, l] = y[l, n, o]
