"""The outer product a b of a column a (M, 1) and a row b (1, N): a matrix product whose sum has one
term, a one-row batch's weight gradient g^T x. numpy's broadcast multiply (M, 1) * (1, N) walks it at
3-4x this loop's time, BLAS's gemm at more. Each entry is the one rounding of a_i b_j either way: the
same bits as numpy's.
"""
import numpy as np

from . import team


def supports(a, b, out):
    """a (M, 1) and b (1, N) numpy float arrays of one dtype; out None or a writeable C-contiguous (M, N).
    (Asked of every one-row weight gradient: the dtypes compared by identity, numpy's own float32 and
    float64; any other declines to numpy's multiply.)"""
    dt = a.dtype
    if not ((dt is _F32 or dt is _F64) and type(a) is np.ndarray and type(b) is np.ndarray and b.dtype is dt
            and a.ndim == 2 and b.ndim == 2 and a.shape[1] == 1 and b.shape[0] == 1):
        return False
    return out is None or (type(out) is np.ndarray and out.dtype is dt and out.flags.c_contiguous
                           and out.flags.writeable and out.shape == (a.shape[0], b.shape[1]))


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def forward(a, b, out=None):
    """a b, into `out` where given."""
    if out is None:
        out = np.empty((a.shape[0], b.shape[1]), dtype=a.dtype)
    column, row = a[:, 0], b[0]
    if out.size >= team.TEAM_MIN_ELEMENTS and _outer_team.on_team():
        _outer_team(out, column, row, _outer_team.threads())
    else:
        _outer(out, column, row)
    return out


@team.kernel
def _outer(out, column, row):  # out_ij = column_i row_j
    M, N = out.shape
    for i in range(M):
        c = column[i]
        for j in range(N):
            out[i, j] = c * row[j]


@team.kernel(parallel=True)
def _outer_team(out, column, row, parts):
    for p in team.prange(parts):
        lo, hi = team.share(out.shape[0], p, parts, 1)
        _outer(out[lo:hi], column[lo:hi], row)
