"""gelu, relu, softmax and log_softmax, each one backward node on raw arrays.

The elementwise math runs block by block, the blocks spread over the cores (see
`_common.for_blocks`): every pass of a block stays in cache. Constants are Python floats, so
float32 stays float32.
"""
import math

import numpy as np

from . import erf as _erf
from . import cpu_kernels, cuda_kernels
from ._common import (
    Function, Tensor, blockwise, check_tensor, for_blocks, once_differentiable, row_sum, rows_per_block, scratch, xp_of,
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


# The same float32 forward compiled (cpu_kernels): one vectorized loop instead of 27 passes. numba
# freezes these arrays into the compiled (and disk-cached) kernel, and its cache is refreshed when
# this file changes, not erf.py: after editing erf.py's coefficients, clear nn/_functional/__pycache__.
_GELU_P32 = np.array(_GELU_P, np.float32)
_GELU_Q32 = np.array(_GELU_Q, np.float32)
_GELU_CLIP32 = np.float32(_GELU_CLIP)


@cpu_kernels.kernel
def _gelu_fwd_compiled(out, x):  # float32: out = x max(1/2 + c P(c^2) / Q(c^2), 0)
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


@cpu_kernels.kernel
def _gelu_bwd_compiled(out, x, y, g, half, minus_half, inv_sqrt_2pi):  # out = g (Phi(x) + x phi(x)), Phi = y / x (1/2 at 0)
    for i in range(x.size):  # one pass: exp_nonpositive vectorizes where numba's exp is a scalar call
        v = x[i]
        Phi = y[i] / v
        Phi = half if v == 0.0 else Phi
        out[i] = g[i] * (Phi + v * cpu_kernels.exp_nonpositive(minus_half * v * v) * inv_sqrt_2pi)


# The same two on the kernels' thread team (cpu_kernels): each thread runs the loop above on its share.
@cpu_kernels.kernel(parallel=True)
def _gelu_fwd_team(out, x, parts):
    for p in cpu_kernels.prange(parts):
        lo, hi = cpu_kernels.share(x.size, p, parts, cpu_kernels.GRAIN)
        _gelu_fwd_compiled(out[lo:hi], x[lo:hi])


@cpu_kernels.kernel(parallel=True)
def _gelu_bwd_team(out, x, y, g, half, minus_half, inv_sqrt_2pi, parts):
    for p in cpu_kernels.prange(parts):
        lo, hi = cpu_kernels.share(x.size, p, parts, cpu_kernels.GRAIN)
        _gelu_bwd_compiled(out[lo:hi], x[lo:hi], y[lo:hi], g[lo:hi], half, minus_half, inv_sqrt_2pi)


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
    """GELU's forward on an array (any shape), exact or tanh form; the fused kernel on the GPU."""
    if cuda_kernels.use(x):  # docs/gpu.md
        return cuda_kernels.gelu_forward(x, approximate)
    out = xp_of(x).empty(x.shape, dtype=x.dtype)
    if approximate == "tanh":
        return blockwise(_gelu_tanh_fwd, 1, out, x)
    if x.dtype == np.float32 and cpu_kernels.use(x):
        return blockwise(_gelu_fwd_compiled, 0, out, x, team=_gelu_fwd_team)
    return blockwise(_gelu_fwd, 2, out, x)


class Gelu(Function):
    node_name = "GeluBackward0"
    # The output is saved too: the next layer keeps that same array alive anyway (no extra memory),
    # and backward then gets Phi(x) = gelu(x) / x with one division instead of a second erf.
    saves_result = True

    @staticmethod
    def forward(ctx, x, approximate):
        if cuda_kernels.use(x.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.Gelu.forward(ctx, x, approximate)
        ctx.save(self=x)
        ctx.approximate = approximate
        return gelu_arrays(x.data, approximate)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        if cuda_kernels.use(g.data):
            return cuda_kernels.Gelu.backward(ctx, g)
        xd = ctx._saved_self.data
        gx = xp_of(xd).empty(xd.shape, dtype=xd.dtype)
        if ctx.approximate == "tanh":
            blockwise(_gelu_tanh_bwd, 2, gx, xd, g.data)
        elif cpu_kernels.use(xd) and cpu_kernels.use(g.data):
            dt = xd.dtype.type  # constants in the input's precision: float64 ones would make the loop float64
            blockwise(_gelu_bwd_compiled, 0, gx, xd, ctx._saved_result.data, g.data, dt(0.5), dt(-0.5),
                      dt(INV_SQRT_2PI), team=_gelu_bwd_team)
        else:
            blockwise(_gelu_bwd_from_out, 1, gx, xd, ctx._saved_result.data, g.data)
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


# ---- softmax / log_softmax ---------------------------------------------------------------------
def _last_dim_rows(a, dim):
    """`a` as (rows, n) with `dim` last (a view when dim is already the last axis), and how to undo it."""
    xp = xp_of(a)
    if dim == a.ndim - 1:
        return xp.ascontiguousarray(a).reshape(-1, a.shape[-1]), None
    moved = xp.moveaxis(a, dim, -1)
    return xp.ascontiguousarray(moved).reshape(-1, a.shape[dim]), moved.shape


def _rows_like(a2, moved, shape):
    """(result in its final layout, its (rows, n) view to compute into)."""
    full = xp_of(a2).empty(shape if moved is None else moved, dtype=a2.dtype)
    return full, full.reshape(a2.shape)


def _back(full, dim, moved):
    return full if moved is None else xp_of(full).moveaxis(full, -1, dim)


def _for_rows(a2, kernel):
    """kernel(lo, hi) over row ranges of the (rows, n) array a2, in cache-sized blocks on all cores."""
    for_blocks(a2.shape[0], kernel, rows_per_block(a2.shape[1]), xp_of(a2))


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):  # y = exp(x - max) / sum exp(x - max)
        if cuda_kernels.use(x.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.Softmax.forward(ctx, x, dim)
        xd = x.data
        xp = xp_of(xd)
        x2, moved = _last_dim_rows(xd, dim)
        y_full, y = _rows_like(x2, moved, xd.shape)

        def rows(lo, hi):
            xb, yb = x2[lo:hi], y[lo:hi]
            xp.subtract(xb, xb.max(axis=1, keepdims=True), out=yb)
            xp.exp(yb, out=yb)
            yb /= row_sum(yb, xp)

        _for_rows(x2, rows)
        y = _back(y_full, dim, moved)
        ctx.dim = dim
        ctx.save(result=y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = y (g - sum(g y))
        if cuda_kernels.use(g.data):
            return cuda_kernels.Softmax.backward(ctx, g)
        y = ctx._saved_result.data
        y2, moved = _last_dim_rows(y, ctx.dim)
        g2, _ = _last_dim_rows(g.data, ctx.dim)
        xp = xp_of(y2)
        gx_full, gx = _rows_like(y2, moved, y.shape)

        def rows(lo, hi):
            o, yb, gb = gx[lo:hi], y2[lo:hi], g2[lo:hi]
            xp.multiply(gb, yb, out=o)
            xp.subtract(gb, row_sum(o, xp), out=o)
            o *= yb

        _for_rows(y2, rows)
        return Tensor(_back(gx_full, ctx.dim, moved)), None


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, x, dim):  # y = x - max - log sum exp(x - max)
        if cuda_kernels.use(x.data):  # the fused GPU kernel (docs/gpu.md)
            return cuda_kernels.LogSoftmax.forward(ctx, x, dim)
        xd = x.data
        xp = xp_of(xd)
        x2, moved = _last_dim_rows(xd, dim)
        y_full, y = _rows_like(x2, moved, xd.shape)

        def rows(lo, hi):
            xb, yb = x2[lo:hi], y[lo:hi]
            xp.subtract(xb, xb.max(axis=1, keepdims=True), out=yb)
            e = xp.exp(yb, out=scratch(0, yb.size, yb.dtype).reshape(yb.shape)) if xp is np else xp.exp(yb)
            yb -= xp.log(row_sum(e, xp))

        _for_rows(x2, rows)
        y = _back(y_full, dim, moved)
        ctx.dim = dim
        ctx.save(result=y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, g):  # gx = g - exp(y) sum(g)
        if cuda_kernels.use(g.data):
            return cuda_kernels.LogSoftmax.backward(ctx, g)
        y = ctx._saved_result.data
        y2, moved = _last_dim_rows(y, ctx.dim)
        g2, _ = _last_dim_rows(g.data, ctx.dim)
        xp = xp_of(y2)
        gx_full, gx = _rows_like(y2, moved, y.shape)

        def rows(lo, hi):
            o, gb = gx[lo:hi], g2[lo:hi]
            xp.exp(y2[lo:hi], out=o)
            o *= row_sum(gb, xp)
            xp.subtract(gb, o, out=o)

        _for_rows(y2, rows)
        return Tensor(_back(gx_full, ctx.dim, moved)), None


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
    if input.data.ndim == 0:
        return Softmax.apply(input.reshape(1), 0).reshape(())
    return Softmax.apply(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_args(input, dim, dtype, "log_softmax")
    if input.data.ndim == 0:
        return LogSoftmax.apply(input.reshape(1), 0).reshape(())
    return LogSoftmax.apply(input, dim)


def _float_only(t, name):
    if t.data.dtype.kind != "f":
        raise RuntimeError(f"{name}: expected a floating point tensor, got {t.dtype}")
