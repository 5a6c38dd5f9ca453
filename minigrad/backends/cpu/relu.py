"""relu on the CPU: one compiled loop each way, one pass each (numpy's maximum(x, 0) checks for NaN as it
goes, and the backward's where(r <= 0, 0, g) makes a mask first, then a pass over three arrays; the
figures: docs/performance.md). The op's numpy results, bit for bit:
forward +0.0 where x < 0, else x (a NaN and a -0.0 kept, as PyTorch's);
backward +0.0 where r <= 0, else g (a NaN r passes g, as PyTorch's).
"""
import numpy as np

from . import floats, team


def supports(x):
    """float32 or float64 numpy arrays."""
    return floats(x)


def forward(x):
    """relu(x)."""
    return team.elementwise(_forward, _forward_team, np.empty(x.shape, dtype=x.dtype), x)


def forward_(x):
    """relu written over x itself (C-contiguous). A loop of its own: the two-array loop called with one
    array twice fails the compiled overlap check and runs unvectorized, ~2.5 times slower."""
    team.elementwise(_forward_inplace, _forward_inplace_team, x)
    return x


def backward(g, r):
    """+0.0 where r <= 0, else g; r the forward's output."""
    g = np.asarray(g, dtype=r.dtype)  # (a 0-d gradient may come as a numpy scalar)
    return team.elementwise(_backward, _backward_team, np.empty(r.shape, dtype=r.dtype), g, r)


@team.kernel
def _forward(out, x):
    for i in range(x.size):
        v = x[i]
        out[i] = 0.0 if v < 0 else v


@team.kernel
def _forward_inplace(x):
    for i in range(x.size):
        v = x[i]
        x[i] = 0.0 if v < 0 else v  # (the forward's values: a NaN fails v < 0 and stays, as does -0.0)


@team.kernel
def _backward(out, g, r):
    for i in range(r.size):
        out[i] = 0.0 if r[i] <= 0 else g[i]


@team.kernel(parallel=True)
def _forward_team(out, x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], x[lo:hi])


@team.kernel(parallel=True)
def _forward_inplace_team(x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward_inplace(x[lo:hi])


@team.kernel(parallel=True)
def _backward_team(out, g, r, parts):
    for p in team.prange(parts):
        lo, hi = team.share(r.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], g[lo:hi], r[lo:hi])
