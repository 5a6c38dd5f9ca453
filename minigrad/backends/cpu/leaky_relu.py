"""leaky_relu on the CPU: one compiled loop each way, one pass each, where the op's numpy form makes two
forward (x slope, then the max) and three backward (the mask, its max with the slope, the product).
PyTorch's formulas, bit for bit: forward x where x > 0, else x slope (a NaN and a -0.0 go through the
product: NaN, -0.0); backward g where x > 0, else g slope, x the input (or the result of an in-place op with
a positive slope: there y > 0 exactly where x > 0).
"""
import numpy as np

from . import floats, team


def supports(x):
    """float32 or float64 numpy arrays."""
    return floats(x)


def forward(x, slope):
    """leaky_relu(x, slope)."""
    return team.elementwise(_forward, _forward_team, np.empty(x.shape, dtype=x.dtype), x, x.dtype.type(slope))


def forward_(x, slope):
    """leaky_relu written over x itself (C-contiguous): a loop of its own, as relu.py's forward_."""
    team.elementwise(_forward_inplace, _forward_inplace_team, x, x.dtype.type(slope))
    return x


def backward(g, x, slope):
    """g where x > 0, else g slope."""
    g = np.asarray(g, dtype=x.dtype)  # (a 0-d gradient may come as a numpy scalar)
    return team.elementwise(_backward, _backward_team, np.empty(x.shape, dtype=x.dtype), g, x, x.dtype.type(slope))


@team.kernel
def _forward(out, x, slope):
    for i in range(x.size):
        v = x[i]
        out[i] = v if v > 0 else v * slope


@team.kernel
def _forward_inplace(x, slope):
    for i in range(x.size):
        v = x[i]
        x[i] = v if v > 0 else v * slope


@team.kernel
def _backward(out, g, x, slope):
    for i in range(x.size):
        v = g[i]
        out[i] = v if x[i] > 0 else v * slope


@team.kernel(parallel=True)
def _forward_team(out, x, slope, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], x[lo:hi], slope)


@team.kernel(parallel=True)
def _forward_inplace_team(x, slope, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward_inplace(x[lo:hi], slope)


@team.kernel(parallel=True)
def _backward_team(out, g, x, slope, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], g[lo:hi], x[lo:hi], slope)
