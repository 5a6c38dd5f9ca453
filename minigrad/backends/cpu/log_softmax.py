"""log_softmax over rows on the CPU: each row read into cache once per pass and finished there,
forward and backward, instead of the op's five and four numpy passes with their temporaries. The exp
is team.exp_nonpositive (x - max and log-probabilities are never positive), which vectorizes. Rows are
independent: on the team any cut gives the same bits.
"""
import numpy as np

from . import team
from .softmax import RowsKernel


@team.kernel
def _rows(y, x):  # y_ic = (x_ic - m_i) - log(sum_c exp(x_ic - m_i)),  m_i = max_c x_ic
    N, C = x.shape
    for i in range(N):
        m = team.max_of(x[i], C)
        s = m - m
        for c in range(C):
            s += team.exp_nonpositive(x[i, c] - m)
        ls = np.log(s)
        for c in range(C):
            y[i, c] = (x[i, c] - m) - ls


@team.kernel
def _rows_backward(gx, g, y):  # gx_ic = g_ic - exp(y_ic) sum_c g_ic
    N, C = g.shape
    for i in range(N):
        s = g[i, 0] - g[i, 0]
        for c in range(C):
            s += g[i, c]
        for c in range(C):
            gx[i, c] = g[i, c] - team.exp_nonpositive(y[i, c]) * s


@team.kernel(parallel=True)
def _rows_team(y, x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.shape[0], p, parts, 1)
        _rows(y[lo:hi], x[lo:hi])


@team.kernel(parallel=True)
def _rows_backward_team(gx, g, y, parts):
    for p in team.prange(parts):
        lo, hi = team.share(g.shape[0], p, parts, 1)
        _rows_backward(gx[lo:hi], g[lo:hi], y[lo:hi])


_log_softmax = RowsKernel(_rows, _rows_team, _rows_backward, _rows_backward_team)
supports, forward, backward = _log_softmax.supports, _log_softmax.forward, _log_softmax.backward
