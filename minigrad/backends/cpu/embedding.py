"""The embedding's gradient on the CPU: one compiled loop over the rows in order (repeated ids summed),
instead of a one-hot product or a sort (and no BLAS threads to wake)."""
import numpy as np

from . import floats, team


def supports(g, idx, n):
    """numpy float gradients, integer ids."""
    return floats(g) and idx.dtype.kind in "iu"


def backward(g, idx, n):
    """zeros((n, C)) with row g[i] added at idx[i] (ids checked by the op: in [0, n))."""
    out = np.zeros((n, g.shape[1]), dtype=g.dtype)
    add_rows(out, idx, g)
    return out


def add_rows(out, idx, g):
    """out[idx[i]] += g[i] in place, in the order of i (so with np.add.at's bits); a negative id counts
    from the end, as an index does (indexing's backward uses it too, and index_add with its ids checked)."""
    _scatter_add_rows(out, idx, np.ascontiguousarray(g))


@team.kernel
def _scatter_add_rows(out, idx, g):  # out[idx[i]] += g[i], in the order of i
    n = out.shape[0]
    for i in range(idx.size):
        r = idx[i]
        if r < 0:
            r += n
        if r < 0 or r >= n:  # the ops check the ids first: never write outside `out`
            raise IndexError("add_rows: an index is out of range")
        for c in range(g.shape[1]):
            out[r, c] += g[i, c]
