"""sigmoid on the CPU: one compiled loop each way, where the op's numpy form makes nine passes over
memory forward (its in-place steps, each a call) and three backward. float32 only: float64 keeps the
op's own array code (numpy's exp). The formula is the op's: e = exp(-|x|), r = 1 / (1 + e), then r
for x >= 0 and e r below (no overflow, full relative precision for negative x); exp is
team.exp_nonpositive, which vectorizes (below -87, where it gives 0, the square of exp(-|x| / 2)).
Backward is the op's g (r (1 - r)) in the same order: numpy's bits.
"""
import numpy as np

from . import F32, team


def supports(x):
    """float32 numpy arrays."""
    return type(x) is np.ndarray and (x.dtype is F32 or x.dtype == F32)


def forward(x):
    """sigmoid(x)."""
    return team.elementwise(_forward, _forward_team, np.empty(x.shape, dtype=x.dtype), x)


def silu(x):
    """x sigmoid(x): forward's sigmoid, then the product (float32's, as numpy's multiply) in the same call:
    a small silu's (a generated token's MLP) second call and array saved."""
    return team.elementwise(_silu, _silu_team, np.empty(x.shape, dtype=x.dtype), x)


def backward(g, r):
    """g r (1 - r), r the forward's output."""
    g, r = np.asarray(g, dtype=r.dtype), np.asarray(r)  # (a 0-d gradient may come as a numpy scalar)
    return team.elementwise(_backward, _backward_team, np.empty(r.shape, dtype=r.dtype), g, r)


def prepared_step(x):
    """(forward, backward) in Sigmoid.array_step's form (r saved) on float32 arrays of x's shape (a compiled
    training step's sigmoid), or None where the work goes to the team: `forward` and `backward` above with
    the kernels' compiled functions looked up once (the same bits); arrays unlike the capture's run those."""
    if not supports(x) or x.size == 0 or x.size >= team.TEAM_MIN_ELEMENTS and _forward_team.on_team():
        return None
    shape, dtype = x.shape, x.dtype
    r = np.empty(x.size, dtype=dtype)
    fwd, bwd = _forward.entry(r, r), _backward.entry(r, r, r)

    def step_forward(x):
        flat = team.prepared_flat(x, dtype, shape)
        if flat is None:
            r = forward(x)
        else:
            r = np.empty(shape, dtype=dtype)
            fwd(r.reshape(-1), flat)
        return r, r

    def step_backward(r, g):
        flat = team.prepared_flat(g, dtype, shape)
        if flat is None or type(r) is not np.ndarray or not r.flags.carray:
            return (backward(g, r),)
        out = np.empty(shape, dtype=dtype)
        bwd(out.reshape(-1), flat, r.reshape(-1))
        return (out,)

    return step_forward, step_backward


@team.kernel
def _forward(out, x):  # out = r (x >= 0) or e r,  r = 1 / (1 + e),  e = exp(-|x|)
    one, half, low = np.float32(1.0), np.float32(0.5), np.float32(-87.0)
    below = False
    for i in range(x.size):
        v = x[i]
        e = team.exp_nonpositive(-abs(v))
        r = one / (one + e)
        out[i] = r if v >= 0 else e * r  # (NaN: e is NaN, and so is e r)
        below |= v < low
    if below:
        # below -87, where exp_nonpositive gives 0, exp(-|x|) as the square of exp(-|x| / 2): the result
        # stays a float32 (normal down to -87.3) as numpy's and PyTorch's do. A second pass over the rare
        # such inputs, so the common pass computes one exp, not two.
        for i in range(x.size):
            v = x[i]
            if v < low:
                h = team.exp_nonpositive(-half * abs(v))
                e = h * h
                out[i] = e * (one / (one + e))


@team.kernel
def _silu(out, x):  # out = x sigmoid(x): two loops, so the product is the one of sigmoid's rounded result
    _forward(out, x)
    for i in range(x.size):
        out[i] = x[i] * out[i]


@team.kernel
def _backward(out, g, r):  # out = g (r (1 - r))
    one = np.float32(1.0)
    for i in range(r.size):
        ri = r[i]
        out[i] = g[i] * (ri * (one - ri))


@team.kernel(parallel=True)
def _forward_team(out, x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], x[lo:hi])


@team.kernel(parallel=True)
def _silu_team(out, x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _silu(out[lo:hi], x[lo:hi])


@team.kernel(parallel=True)
def _backward_team(out, g, r, parts):
    for p in team.prange(parts):
        lo, hi = team.share(r.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], g[lo:hi], r[lo:hi])
