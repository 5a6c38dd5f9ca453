"""softmax over rows on the CPU: each row read into cache once per pass and finished there, forward
and backward, instead of the op's five and four numpy passes with their temporaries (log_softmax.py's
sibling). The exp is team.exp_nonpositive (x - max is never positive), which vectorizes. Rows are
independent: on the team any cut gives the same bits.
"""
import numpy as np

from . import team


class RowsKernel:
    """A rows op's kernels (a plain loop over rows each way, and its form on the thread team) behind the
    registry's protocol: supports, forward, backward (log_softmax.py makes one too)."""

    def __init__(self, rows, rows_team, rows_backward, rows_backward_team):
        self.rows, self.rows_team = rows, rows_team
        self.rows_backward, self.rows_backward_team = rows_backward, rows_backward_team

    @staticmethod
    def supports(x):
        """Rows (N, C), C > 0, of a contiguous numpy float array (floats(x), inlined: asked on every call)."""
        return type(x) is np.ndarray and x.dtype.char in "fd" and x.ndim == 2 and x.shape[1] > 0 \
            and x.flags.c_contiguous

    def forward(self, x):
        """(N, C): the op on each row of x."""
        y = np.empty_like(x)
        if x.size >= team.TEAM_MIN_ELEMENTS and self.rows_team.on_team():
            self.rows_team(y, x, self.rows_team.threads())
        else:
            self.rows(y, x)
        return y

    def backward(self, g, y):
        """(N, C): the gradient of each row from g and forward's output y (g is made contiguous here)."""
        g = np.ascontiguousarray(g, dtype=y.dtype)
        gx = np.empty_like(y)
        if g.size >= team.TEAM_MIN_ELEMENTS and self.rows_backward_team.on_team():
            self.rows_backward_team(gx, g, y, self.rows_backward_team.threads())
        else:
            self.rows_backward(gx, g, y)
        return gx


@team.kernel
def _rows(y, x):  # y_ic = exp(x_ic - m_i) / sum_c exp(x_ic - m_i),  m_i = max_c x_ic
    N, C = x.shape
    for i in range(N):
        m = team.max_of(x[i], C)
        s = m - m
        for c in range(C):
            e = team.exp_nonpositive(x[i, c] - m)
            y[i, c] = e
            s += e
        for c in range(C):
            y[i, c] = y[i, c] / s


@team.kernel
def _rows_backward(gx, g, y):  # gx_ic = y_ic (g_ic - sum_c g_ic y_ic)
    N, C = g.shape
    for i in range(N):
        s = g[i, 0] - g[i, 0]
        for c in range(C):
            s += g[i, c] * y[i, c]
        for c in range(C):
            gx[i, c] = y[i, c] * (g[i, c] - s)


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


_softmax = RowsKernel(_rows, _rows_team, _rows_backward, _rows_backward_team)
supports, forward, backward = _softmax.supports, _softmax.forward, _softmax.backward
