"""GELU on the CPU: one compiled loop each way (the numpy form makes ~27 passes over memory).

float32 forward: gelu(x) = x max(1/2 + c P(c^2) / Q(c^2), 0), c = clip(x, +-4 sqrt2): the float32 erf
rational of erf(u), u = x / sqrt2 (minigrad.ops.special_array's coefficients), with the 1/sqrt2 and the outer
1/2 folded into them (u^2 = c^2 / 2: powers of two, exact).
Past the clip the folded constant can round to just below -1/2; the max with 0 keeps gelu(x) from
turning positive there. float64 forward runs the op's own array code (erf in float64).
Backward (either precision): g (Phi(x) + x phi(x)), with Phi(x) = gelu(x) / x from the saved output.
"""
import math

import numpy as np

from ...ops.special_array import ERF32_ALPHA, ERF32_BETA
from . import F32, team

_SQRT1_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# numba freezes these arrays into the compiled (and disk-cached) kernel
_GELU_P32 = np.array(tuple(a * 0.5 * _SQRT1_2 / 2.0 ** (len(ERF32_ALPHA) - 1 - j) for j, a in enumerate(ERF32_ALPHA)), np.float32)
_GELU_Q32 = np.array(tuple(b / 2.0 ** (len(ERF32_BETA) - 1 - j) for j, b in enumerate(ERF32_BETA)), np.float32)
_GELU_CLIP32 = np.float32(4.0 * math.sqrt(2.0))


def supports(x, approximate):
    """float32 numpy arrays, the exact form (the tanh form and float64's erf are the op's own code)."""
    return approximate == "none" and type(x) is np.ndarray and (x.dtype is F32 or x.dtype == F32)


def forward(x, approximate):
    """gelu(x)."""
    return team.elementwise(_forward, _forward_team, np.empty(x.shape, dtype=x.dtype), x)


def backward(x, y, g, approximate):
    """g gelu'(x), from the input x and the output y = gelu(x)."""
    g = g if g.dtype == x.dtype else g.astype(x.dtype)
    dt = x.dtype.type  # constants in the input's precision: float64 ones would make the loop float64
    return team.elementwise(_backward, _backward_team, np.empty(x.shape, dtype=x.dtype), x, y, g, dt(0.5), dt(-0.5),
                            dt(INV_SQRT_2PI))


def prepared_step(x, approximate):
    """(forward, backward) in Gelu.array_step's form on float32 arrays of x's shape (a compiled training step's
    gelu), or None where the work goes to the team: `forward` and `backward` above with the kernels' compiled
    functions looked up once, the same kernels (the same bits); arrays unlike the capture's run those."""
    if not supports(x, approximate) or x.size == 0 or x.size >= team.TEAM_MIN_ELEMENTS and _forward_team.on_team():
        return None
    shape, dtype = x.shape, x.dtype
    y = np.empty(x.size, dtype=dtype)
    half, minus_half, inv = dtype.type(0.5), dtype.type(-0.5), dtype.type(INV_SQRT_2PI)
    fwd, bwd = _forward.entry(y, y), _backward.entry(y, y, y, y, half, minus_half, inv)

    def step_forward(xd):
        flat = team.prepared_flat(xd, dtype, shape)
        if flat is None:
            y = forward(xd, approximate)
        else:
            y = np.empty(shape, dtype=dtype)
            fwd(y.reshape(-1), flat)
        return y, (xd, y)

    def step_backward(saved, g):
        xd, y = saved
        flat_g, flat_x = team.prepared_flat(g, dtype, shape), team.prepared_flat(xd, dtype, shape)
        if flat_g is None or flat_x is None or type(y) is not np.ndarray or not y.flags.carray:
            return (backward(xd, y, g, approximate),)
        out = np.empty(shape, dtype=dtype)
        bwd(out.reshape(-1), flat_x, y.reshape(-1), flat_g, half, minus_half, inv)
        return (out,)

    return step_forward, step_backward


@team.kernel
def _forward(out, x):  # float32: out = x max(1/2 + c P(c^2) / Q(c^2), 0)
    zero, half = np.float32(0.0), np.float32(0.5)
    for i in range(x.size):
        v = x[i]
        c = min(max(v, -_GELU_CLIP32), _GELU_CLIP32)
        z = c * c
        p = _GELU_P32[0]
        for a in _GELU_P32[1:]:
            p = p * z + a
        q = _GELU_Q32[0]
        for b in _GELU_Q32[1:]:
            q = q * z + b
        out[i] = max(c * p / q + half, zero) * v


@team.kernel
def _backward(out, x, y, g, half, minus_half, inv_sqrt_2pi):  # out = g (Phi(x) + x phi(x)), Phi = y / x (1/2 at 0)
    for i in range(x.size):  # one pass: exp_nonpositive vectorizes where numba's exp is a scalar call
        v = x[i]
        Phi = y[i] / v
        Phi = half if v == 0.0 else Phi
        out[i] = g[i] * (Phi + v * team.exp_nonpositive(minus_half * v * v) * inv_sqrt_2pi)


@team.kernel(parallel=True)
def _forward_team(out, x, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _forward(out[lo:hi], x[lo:hi])


@team.kernel(parallel=True)
def _backward_team(out, x, y, g, half, minus_half, inv_sqrt_2pi, parts):
    for p in team.prange(parts):
        lo, hi = team.share(x.size, p, parts, team.GRAIN)
        _backward(out[lo:hi], x[lo:hi], y[lo:hi], g[lo:hi], half, minus_half, inv_sqrt_2pi)
