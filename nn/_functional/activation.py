"""gelu, relu, softmax and log_softmax, each one backward node on raw arrays.

The elementwise math runs block by block, the blocks spread over the cores (see
`_common.for_blocks`): every pass of a block stays in cache. Constants are Python floats, so
float32 stays float32.
"""
import math

import numpy as np

import minigrad
from minigrad import backends

from . import erf as _erf
from . import reference
from ._common import (
    Function, Tensor, blockwise, check_tensor, once_differentiable, xp_of,
)

SQRT1_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
K_TANH = math.sqrt(2.0 / math.pi)
A_TANH = 0.044715


# float32 gelu(x) = x (1/2 + c P(c^2) / Q(c^2)),  c = clip(x, +-4 sqrt2): erf.py's float32 rational for
# erf(u), u = x / sqrt2, with the 1/sqrt2 and the outer 1/2 folded into its coefficients (u^2 = c^2 / 2,
# powers of two, exact), which saves two of the 29 passes over each block. Past the clip the folded
# constant can round to just below -1/2; the max with 0 keeps gelu(x) from turning positive there.
_GELU_CLIP = 4.0 * math.sqrt(2.0)
_GELU_P = tuple(a * 0.5 * SQRT1_2 / 2.0 ** (len(_erf._ALPHA) - 1 - j) for j, a in enumerate(_erf._ALPHA))
_GELU_Q = tuple(b / 2.0 ** (len(_erf._BETA) - 1 - j) for j, b in enumerate(_erf._BETA))


def _horner(q, z, coeffs):  # q = coeffs[0] z^n + ... + coeffs[n]
    np.multiply(z, coeffs[0], out=q)
    for a in coeffs[1:-1]:
        q += a
        q *= z
    q += coeffs[-1]


def _gelu_fwd(o, x, s1, s2):  # gelu(x) = x/2 (1 + erf(x/sqrt2))
    if type(x) is np.ndarray and x.dtype != np.float64:  # the folded float32 form above
        x.clip(-_GELU_CLIP, _GELU_CLIP, out=o)  # the method: half the call overhead of np.clip
        np.multiply(o, o, out=s1)
        _horner(s2, s1, _GELU_P)
        o *= s2
        _horner(s2, s1, _GELU_Q)
        o /= s2
        o += 0.5
        np.maximum(o, 0.0, out=o)
        o *= x
        return
    xp = xp_of(x)
    xp.multiply(x, SQRT1_2, out=o)
    _erf.erf(o, out=o)
    o += 1.0
    o *= x
    o *= 0.5


def _gelu_bwd_from_out(o, x, y, g, s1):  # gelu'(x) = Phi(x) + x phi(x), with Phi(x) = y / x from the output
    xp = xp_of(x)
    xp.multiply(x, x, out=s1)
    s1 *= -0.5
    xp.exp(s1, out=s1)
    s1 *= x
    s1 *= INV_SQRT_2PI  # x phi(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        xp.divide(y, x, out=o)  # Phi(x): no second erf
    xp.copyto(o, 0.5, where=x == 0.0)  # 0/0 at x = 0, where Phi = 1/2
    o += s1
    o *= g


def _gelu_tanh_fwd(o, x, s1):  # gelu(x) ~ x/2 (1 + tanh(k (x + a x^3)))
    xp = xp_of(x)
    xp.multiply(x, x, out=o)
    o *= A_TANH
    o += 1.0
    o *= x
    o *= K_TANH
    xp.tanh(o, out=o)
    o += 1.0
    o *= x
    o *= 0.5


def _gelu_tanh_bwd(o, x, g, s1, s2):  # d/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3a x^2),  t = tanh(k (x + a x^3))
    xp = xp_of(x)
    xp.multiply(x, x, out=s1)
    xp.multiply(s1, A_TANH, out=o)
    o += 1.0
    o *= x
    o *= K_TANH
    xp.tanh(o, out=o)  # t
    s1 *= 3.0 * A_TANH
    s1 += 1.0
    s1 *= x
    s1 *= 0.5 * K_TANH  # x/2 k (1 + 3a x^2)
    xp.multiply(o, o, out=s2)
    xp.subtract(1.0, s2, out=s2)  # 1 - t^2
    s1 *= s2
    o += 1.0
    o *= 0.5
    o += s1
    o *= g


def gelu_arrays(x, approximate="none"):
    """GELU's forward on an array (any shape), exact or tanh form (a backend's where one takes x)."""
    fast = backends.lookup("gelu", x)
    y = None if fast is None else fast.forward(x, approximate)
    if y is not None:
        return y
    out = xp_of(x).empty(x.shape, dtype=x.dtype)
    if approximate == "tanh":
        return blockwise(_gelu_tanh_fwd, 1, out, x)
    return blockwise(_gelu_fwd, 2, out, x)


class Gelu(Function):
    """gelu(x) = x Phi(x), Phi the standard normal CDF; the reference is nn/_functional/reference.py's gelu."""

    node_name = "GeluBackward0"
    # The output is saved too: the next layer keeps that same array alive anyway (no extra memory),
    # and backward then gets Phi(x) = gelu(x) / x with one division instead of a second erf.
    saves_result = True

    @staticmethod
    def forward(ctx, x, approximate):
        ctx.save(self=x)
        ctx.approximate = approximate
        return gelu_arrays(x.data, approximate)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g (Phi(x) + x phi(x))
        xd = ctx._saved_self.data
        y = None if ctx.approximate == "tanh" else ctx._saved_result.data  # (the tanh form keeps no output)
        fast = backends.lookup("gelu", xd, g.data)
        gx = None if fast is None else fast.backward(xd, y, g.data, ctx.approximate)
        if gx is not None:
            return Tensor(gx), None
        gx = xp_of(xd).empty(xd.shape, dtype=xd.dtype)
        if ctx.approximate == "tanh":
            blockwise(_gelu_tanh_bwd, 2, gx, xd, g.data)
        else:
            blockwise(_gelu_bwd_from_out, 1, gx, xd, y, g.data)
        return Tensor(gx), None


class GeluTanh(Gelu):
    """The tanh form's backward needs only the input."""

    node_name = "GeluBackward0"
    saves_result = False


def gelu(input, approximate="none"):
    check_tensor(input, "input", "gelu")
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate!r}")
    _float_only(input, "gelu")
    return (GeluTanh if approximate == "tanh" else Gelu).apply(input, approximate)


class Relu(Function):
    node_name = "ReluBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, x):  # relu(x) = max(x, 0)
        return xp_of(x.data).maximum(x.data, 0.0)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # d relu = [y > 0] g
        y = ctx._saved_result.data
        xp = xp_of(y)
        return Tensor(xp.multiply(g.data, y > 0.0))


def relu(input, inplace=False):
    check_tensor(input, "input", "relu")
    _float_only(input, "relu")
    return Relu.apply(input)


# ---- softmax / log_softmax: minigrad's own ops (one SoftmaxBackward0 / LogSoftmaxBackward0 node) ----
def _softmax_args(input, dim, dtype, name):
    check_tensor(input, "input", name)
    if dtype is not None:
        input = input.to(dtype)
    elif input.data.dtype.kind != "f":
        input = input.float()
    nd = input.data.ndim
    if dim is None:  # PyTorch's legacy implicit choice
        dim = 0 if nd in (0, 1, 3) else 1
    n = max(nd, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return input, dim % n


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_args(input, dim, dtype, "softmax")
    return _rows_of(reference.softmax if backends.get_kernels() == "reference" else minigrad.softmax, input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_args(input, dim, dtype, "log_softmax")
    fn = reference.log_softmax if backends.get_kernels() == "reference" else minigrad.log_softmax
    return _rows_of(fn, input, dim)


def _rows_of(fn, input, dim):  # fn(input, dim), a 0-d input as one element
    if input.data.ndim == 0:
        return fn(input.reshape(1), 0).reshape(())
    return fn(input, dim)


def _float_only(t, name):
    if t.data.dtype.kind != "f":
        raise RuntimeError(f"{name}: expected a floating point tensor, got {t.dtype}")
