"""dropout on the CPU: the mask's comparison and the scaling in one compiled pass forward (the op's
numpy form makes three: compare the random bits, scale, zero what is dropped) and one backward (two).
The random bits are the op's own draw (backends/arrays.py's `mask_bits`: the same streams), and the
arithmetic is the op's, x * scale, then times 1 or 0: numpy's bits, mask and output alike.
"""
import numpy as np

from ..arrays import mask_bits
from . import team


def supports(x, p):
    """float32 or float64 numpy arrays, 0 < p < 1."""
    return type(x) is np.ndarray and x.dtype.kind == "f" and x.dtype.itemsize >= 4 and 0.0 < p < 1.0


def forward(x, p):
    """(y, keep): keep = bits >= round(p 65536) for the op's random bits, y = x * (1 / (1 - p)) * keep."""
    bits, threshold = mask_bits(x.shape, p)
    y, keep = np.empty(x.shape, dtype=x.dtype), np.empty(x.shape, dtype=bool)
    team.elementwise(_forward, _forward_team, y, keep.reshape(-1), x, bits, threshold, x.dtype.type(1.0 / (1.0 - p)))
    return y, keep


def backward(g, keep, scale):
    """g * scale * keep."""
    g = np.asarray(g)
    return team.elementwise(_backward, _backward_team, np.empty(g.shape, dtype=g.dtype), g, keep, g.dtype.type(scale))


def prepared_step(x, p):
    """(forward, backward) on arrays of x's shape and dtype (a compiled training step's dropout, whose
    arrays keep their layout from call to call), or None where the work goes to the team: forward(x) ->
    (y, keep) and backward(keep, g) -> (gx,), `forward` and `backward` above with the kernels' compiled
    functions looked up once. The same draws and kernels: the same bits. An x or g that is not a
    writable numpy array of that dtype (numba's types: a read-only array is another) runs the usual way."""
    if type(x) is not np.ndarray or x.size >= team.TEAM_MIN_ELEMENTS and _forward_team.on_team() or x.size == 0:
        return None
    shape, dtype, n = x.shape, x.dtype, x.size
    scale = dtype.type(1.0 / (1.0 - p))
    y, keep, bits = np.empty(n, dtype=dtype), np.empty(n, dtype=bool), np.empty(n, dtype=np.uint16)  # (the types:
    fwd, bwd = _forward.entry(y, keep, y, bits, 0, scale), _backward.entry(y, y, keep, scale)  # no draw here)

    def step_forward(x):
        flat = team.prepared_flat(x, dtype, shape)
        if flat is None:
            return forward(x, p)
        bits, threshold = mask_bits(shape, p)
        y, keep = np.empty(shape, dtype=dtype), np.empty(shape, dtype=bool)
        fwd(y.reshape(-1), keep.reshape(-1), flat, bits, threshold, scale)
        return y, keep

    def step_backward(keep, g):
        flat = team.prepared_flat(g, dtype, shape)
        if flat is None:
            return (backward(g, keep, 1.0 / (1.0 - p)),)
        out = np.empty(shape, dtype=dtype)
        bwd(out.reshape(-1), flat, keep.reshape(-1), scale)
        return (out,)

    return step_forward, step_backward


@team.kernel
def _forward(out, keep, x, bits, threshold, scale):  # keep = bits >= threshold;  out = (x scale) keep
    one = scale - scale + 1
    zero = one - one
    for i in range(x.size):
        k = bits[i] >= threshold
        keep[i] = k
        out[i] = (x[i] * scale) * (one if k else zero)


@team.kernel
def _backward(out, g, keep, scale):  # out = (g scale) keep
    one = scale - scale + 1
    zero = one - one
    for i in range(g.size):
        out[i] = (g[i] * scale) * (one if keep[i] else zero)


@team.kernel(parallel=True)
def _forward_team(out, keep, x, bits, threshold, scale, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], keep[lo:hi], x[lo:hi], bits[lo:hi], threshold, scale)


@team.kernel(parallel=True)
def _backward_team(out, g, keep, scale, parts):
    for p in team.prange(parts):
        lo, hi = team.share(g.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], g[lo:hi], keep[lo:hi], scale)
