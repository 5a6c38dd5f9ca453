"""layer_norm on the CPU: each row read once into cache and finished there, forward and backward.

Scalars come in the rows' precision (eps, 1/D): float64 ones would make the loops float64. On the
team, rows are independent, so any cut gives the same bits; backward's weight and bias sums are kept
per chunk of CHUNK_ELEMENTS (per block of BLOCK elements on one thread) and added up in order after:
the same bits on any number of threads.
"""
import functools

import numpy as np

from . import floats, team

CHUNK_ELEMENTS = 1 << 14
BLOCK = 1 << 18


def supports(y, mean, rstd, x, w, b, eps):
    """numpy float arrays of one dtype (the op makes the rows contiguous)."""
    return floats(x, y, mean, rstd, w, b)


def forward(y, mean, rstd, x, w, b, eps):
    """Into y (N, D), mean and rstd (N, 1): the layer norm of the rows of x (N, D), contiguous;
    w, b (D,) or None."""
    N, D = x.shape
    eps_, inv_d = _scalars(x.dtype.type, eps, D)
    _run(y, mean, rstd, x, w, b, eps_, inv_d, x[:0, 0] if w is None or b is None else None)


def prepared_forward(dtype, eps, D):
    """`forward` for rows of D entries of `dtype`, its scalars made once: a function (y, mean, rstd, x,
    w, b) -> None, for a replay without backward (a generated token's layer norms: one row each)."""
    eps_, inv_d = _scalars(dtype.type, eps, D)
    none = np.empty(0, dtype)
    return lambda y, mean, rstd, x, w, b: _run(y, mean, rstd, x, w, b, eps_, inv_d, none)


def _run(y, mean, rstd, x, w, b, eps, inv_d, none):
    # (`none`: an empty stand-in for a weight or bias that is not there)
    w, b = none if w is None else w, none if b is None else b
    if x.size >= team.TEAM_MIN_ELEMENTS and _rows_team.on_team():
        _rows_team(y, mean, rstd, x, w, b, eps, inv_d, _rows_team.threads())
    else:
        _rows(y, mean, rstd, x, w, b, eps, inv_d)


@functools.lru_cache(maxsize=32)
def _scalars(dt, eps, D):
    # eps and 1/D in the rows' precision, kept: making the two numpy scalars costs a third of a
    # generated token's layer norm (one row)
    return dt(eps), dt(1.0 / D)


def backward(gx, g, x, mean, rstd, w):
    """Into gx (N, D) (None: not needed) the input's gradient; returns (2, D): the weight's and the
    bias's gradients (as if w and b were there). g, x (N, D) contiguous; w (D,) or None."""
    N, D = g.shape
    inv_d = g.dtype.type(1.0 / D)
    gx_, w_ = x[:0] if gx is None else gx, x[:0, 0] if w is None else w  # stand-ins for what is not there
    if g.size >= team.TEAM_MIN_ELEMENTS and _rows_backward_team.on_team():
        chunk = max(1, CHUNK_ELEMENTS // D)
        partial = np.zeros((-(-N // chunk), 2, D), dtype=g.dtype)
        _rows_backward_team(gx_, partial, g, x, mean, rstd, w_, inv_d, chunk, _rows_backward_team.threads())
        return partial.sum(axis=0)
    block = max(1, BLOCK // D)
    partial = np.zeros((max(1, -(-N // block)), 2, D), dtype=g.dtype)
    for i in range(len(partial)):
        lo, hi = i * block, min(N, (i + 1) * block)
        _rows_backward(gx_[lo:hi], partial[i, 0], partial[i, 1], g[lo:hi], x[lo:hi], mean[lo:hi], rstd[lo:hi], w_,
                       inv_d)
    sums = partial[0]
    for p in partial[1:]:
        sums += p
    return sums


@team.kernel
def _rows(y, mean, rstd, x, w, b, eps, inv_d):  # rows of x (N, D); w, b of size D, or 0 when absent
    N, D = x.shape
    zero = inv_d - inv_d
    for i in range(N):
        s = zero
        for j in range(D):
            s += x[i, j]
        m = s * inv_d
        s = zero
        for j in range(D):
            h = x[i, j] - m
            s += h * h
        r = (inv_d / inv_d) / np.sqrt(s * inv_d + eps)
        mean[i, 0] = m
        rstd[i, 0] = r
        if w.size and b.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r * w[j] + b[j]
        elif w.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r * w[j]
        elif b.size:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r + b[j]
        else:
            for j in range(D):
                y[i, j] = (x[i, j] - m) * r


@team.kernel
def _rows_backward(gx, gw, gb, g, x, mean, rstd, w, inv_d):  # gx of size 0: not needed
    N, D = g.shape
    zero = inv_d - inv_d
    for i in range(N):
        m, r = mean[i, 0], rstd[i, 0]
        c1 = zero  # sum(g w)
        c2 = zero  # sum(g w x_hat)
        for j in range(D):
            gj, hj = g[i, j], (x[i, j] - m) * r
            gw[j] += gj * hj
            gb[j] += gj
            if w.size:
                gj = gj * w[j]
            c1 += gj
            c2 += gj * hj
        if gx.size:
            c1 *= inv_d
            c2 *= inv_d
            if w.size:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] * w[j] - c1 - (x[i, j] - m) * r * c2)
            else:
                for j in range(D):
                    gx[i, j] = r * (g[i, j] - c1 - (x[i, j] - m) * r * c2)


@team.kernel(parallel=True)
def _rows_team(y, mean, rstd, x, w, b, eps, inv_d, parts):
    N = x.shape[0]
    for p in team.prange(parts):
        lo, hi = team.share(N, p, parts, 1)
        _rows(y[lo:hi], mean[lo:hi], rstd[lo:hi], x[lo:hi], w, b, eps, inv_d)


@team.kernel(parallel=True)
def _rows_backward_team(gx, partial, g, x, mean, rstd, w, inv_d, chunk, parts):
    N, n = g.shape[0], partial.shape[0]  # partial (chunks, 2, D): each chunk's gw and gb sums
    for p in team.prange(parts):
        c0, c1 = team.share(n, p, parts, 1)
        for c in range(c0, c1):
            lo, hi = c * chunk, min(N, c * chunk + chunk)
            _rows_backward(gx[lo:hi], partial[c, 0], partial[c, 1], g[lo:hi], x[lo:hi], mean[lo:hi],
                           rstd[lo:hi], w, inv_d)
