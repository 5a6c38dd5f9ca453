"""A little linear algebra: inverse, det, slogdet/logdet, solve, matrix_power, pinverse, and the
`minigrad.linalg` names for them (with vector_norm, matrix_norm, cross, vecdot). Batched over
leading dims; backward written in tensor ops, so second derivatives work."""
import builtins
from collections import namedtuple

import numpy as np

from ..autograd.function import Function
from ..device import array_module
from .array_op import array_op
from ..tensor import Tensor

slogdet_result = namedtuple("slogdet", ["sign", "logabsdet"])


def _square(name, A):
    if A.array.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A.array.shape[-1] != A.array.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.array.shape[-2]} by {A.array.shape[-1]} matrices")
    if A.array.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._legacy[:-6]}")


def _mT(t):
    return t.transpose(-2, -1)


class Inverse(Function):
    node_name = "LinalgInvExBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        xp = array_module(a.array)
        try:  # laid out column-major, as PyTorch's (LAPACK's) result: inv(A^T)^T
            return xp.swapaxes(xp.ascontiguousarray(xp.linalg.inv(xp.swapaxes(a.array, -1, -2))), -1, -2)
        except np.linalg.LinAlgError:
            raise RuntimeError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
                               "because the input matrix is singular.") from None

    @staticmethod
    def backward(ctx, g):  # d(A^-1) = -A^-1 dA A^-1
        y = ctx._saved_result
        return -(_mT(y) @ g @ _mT(y))


def inverse(input):
    """The inverse of a square matrix (or of each in a batch)."""
    _square("inv", input)
    return Inverse.apply(input)


class Det(Function):
    node_name = "LinalgDetBackward0"
    saves_result = True

    @staticmethod
    def forward(ctx, a):
        ctx.save(A=a)
        return array_module(a.array).asarray(array_module(a.array).linalg.det(a.array))

    @staticmethod
    def backward(ctx, g):  # d det A = det A tr(A^-1 dA): the gradient det A * A^-T
        a, d = ctx.saved_tensors
        return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inverse(a))


def det(input):
    """The determinant of a square matrix (or of each in a batch)."""
    _square("det", input)
    return Det.apply(input)


class Slogdet(Function):
    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save(A=a)
        xp = array_module(a.array)
        sign, logabs = xp.linalg.slogdet(a.array)
        sign = xp.asarray(sign)
        ctx.mark_non_differentiable(sign)
        return sign, xp.asarray(logabs)

    @staticmethod
    def backward(ctx, _, g):  # d log|det A| = tr(A^-1 dA): the gradient A^-T
        (a,) = ctx.saved_tensors
        return g.unsqueeze(-1).unsqueeze(-1) * _mT(inverse(a))


def slogdet(input):
    """(sign, log|det|) of a square matrix, the log computed without overflow."""
    _square("slogdet", input)
    sign, logabs = Slogdet.apply(input)
    return slogdet_result(sign, logabs)


def logdet(input):
    """log det, nan for a negative determinant (as PyTorch)."""
    sign, logabs = slogdet(input)
    from .elementwise import where

    return where(sign < 0, float("nan"), where(sign == 0, float("-inf"), logabs))


def solve(A, B, *, left=True):
    """X with A X = B (X A = B when left=False)."""
    _square("solve", A)
    if left:
        if B.array.ndim == 1 or (B.array.ndim == A.array.ndim - 1 and B.array.shape == A.array.shape[:-1]):  # vectors
            return (inverse(A) @ B.unsqueeze(-1)).squeeze(-1)
        return inverse(A) @ B
    return B @ inverse(A)


def matrix_power(input, n):
    """A^n by repeated squaring (n < 0: of the inverse; n == 0: the identity)."""
    _square("matrix_power", input)
    if n == 0:
        xp = array_module(input.array)
        eye = xp.broadcast_to(xp.eye(input.array.shape[-1], dtype=input.array.dtype), input.array.shape)
        return Tensor(xp.ascontiguousarray(eye))
    base = inverse(input) if n < 0 else input
    n = builtins.abs(n)
    out = None
    while n:
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


def pinverse(input, rcond=1e-15):
    """The Moore-Penrose pseudo-inverse: (A^T A)^-1 A^T for full column rank, via numpy otherwise (no gradient)."""
    m, n = input.array.shape[-2:]
    try:
        if m >= n:
            return inverse(_mT(input) @ input) @ _mT(input)
        return _mT(input) @ inverse(input @ _mT(input))
    except RuntimeError:
        return array_op(lambda a: array_module(a).linalg.pinv(a, rcond=rcond), input)


class _Linalg:
    """`minigrad.linalg`: PyTorch's torch.linalg names for what minigrad has."""

    inv = staticmethod(inverse)
    det = staticmethod(det)
    slogdet = staticmethod(slogdet)
    solve = staticmethod(solve)
    matrix_power = staticmethod(matrix_power)
    pinv = staticmethod(pinverse)

    @staticmethod
    def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
        from .reduction import norm

        return norm(x, ord, dim, keepdim, dtype=dtype)

    @staticmethod
    def norm(x, ord=None, dim=None, keepdim=False, *, dtype=None):
        from .reduction import norm

        if ord is None or (isinstance(ord, str) and ord == "fro"):
            return norm(x, 2, dim, keepdim, dtype=dtype)
        if x.array.ndim >= 2 and dim is None and ord in (1, -1, float("inf"), float("-inf")):
            return _Linalg.matrix_norm(x, ord, keepdim=keepdim)
        return norm(x, ord, dim, keepdim, dtype=dtype)

    @staticmethod
    def matrix_norm(x, ord="fro", dim=(-2, -1), keepdim=False):
        from .elementwise import abs as _abs
        from .reduction import amax, amin, norm

        if ord == "fro":
            return norm(x, 2, dim, keepdim)
        r, c = dim
        if ord in (1, -1):
            s = _abs(x).sum(dim=r, keepdim=True)
            out = (amax if ord == 1 else amin)(s, c % x.array.ndim, keepdim=True)
        elif ord in (float("inf"), float("-inf")):
            s = _abs(x).sum(dim=c, keepdim=True)
            out = (amax if ord > 0 else amin)(s, r % x.array.ndim, keepdim=True)
        else:
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
        return out if keepdim else out.squeeze(builtins.max(r % x.array.ndim, c % x.array.ndim)).squeeze(
            builtins.min(r % x.array.ndim, c % x.array.ndim))

    @staticmethod
    def cross(input, other, *, dim=-1):
        from .composite import cross

        return cross(input, other, dim)

    @staticmethod
    def vecdot(x, y, *, dim=-1):
        return (x * y).sum(dim)

    @staticmethod
    def matmul(input, other):
        return input @ other

    @staticmethod
    def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
        from .movement import diagonal

        return diagonal(A, offset, dim1, dim2)


linalg = _Linalg()
