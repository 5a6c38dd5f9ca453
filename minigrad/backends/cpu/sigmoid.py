"""sigmoid on the CPU: one compiled pass each way, where the op's numpy form makes eight passes
forward (each a call, the cost at a small model's sizes) and three backward.

Forward, as the op's array code: e = exp(-|x|) <= 1 never overflows; r = 1 / (1 + e) is the result
for x >= 0, and e r = e / (1 + e) for x < 0 (full relative precision where the result is tiny). The
exp is team.exp_nonpositive, which vectorizes; where it flushes to 0 (float32, x < -87) the result is
exp(x) itself, taken from the C library in a second loop that runs only then. Backward: g r (1 - r)
from the saved output r.
"""
import numpy as np

from . import floats, team


def supports(x):
    """A numpy float32 or float64 array."""
    return floats(x)


def forward(x):
    """1 / (1 + exp(-x))."""
    one = x.dtype.type(1)  # (an int 1 would make the arithmetic float64)
    return team.elementwise(_forward, _forward_team, np.empty(x.shape, dtype=x.dtype), x, one)


def backward(g, r):
    """g r (1 - r), r = sigmoid(x) forward's output."""
    g = np.asarray(g, dtype=r.dtype)  # (a numpy scalar, or another float dtype, as an array of r's)
    if g.shape != r.shape:
        g = np.broadcast_to(g, r.shape)
    return team.elementwise(_backward, _backward_team, np.empty(r.shape, dtype=r.dtype), g, r, r.dtype.type(1))


@team.kernel
def _forward(out, x, one):  # e = exp(-|x|);  out = 1 / (1 + e) for x >= 0, e / (1 + e) below (NaN: NaN)
    zero = one - one
    flushed = False
    for i in range(x.size):
        v = x[i]
        e = team.exp_nonpositive(-abs(v))
        r = one / (one + e)
        out[i] = r if v >= 0 else e * r
        flushed |= e == zero
    if flushed:  # float32 exp_nonpositive is 0 below -87, where e / (1 + e) is exp(x): a denormal or a tiny normal
        for i in range(x.size):
            if out[i] == zero and x[i] < zero:
                out[i] = np.exp(x[i])


@team.kernel
def _backward(out, g, r, one):  # out = g r (1 - r)
    for i in range(r.size):
        out[i] = g[i] * (r[i] * (one - r[i]))


@team.kernel(parallel=True)
def _forward_team(out, x, one, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], x[lo:hi], one)


@team.kernel(parallel=True)
def _backward_team(out, g, r, one, parts):
    for p in team.prange(parts):
        lo, hi = team.share(r.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], g[lo:hi], r[lo:hi], one)
