"""`torch.signal.windows`: window functions of M points, symmetric by default (sym=False: the periodic
window, the first M points of the symmetric one of M + 1, for spectral analysis).

Each is built from minigrad's own ops the way PyTorch builds it (a linspace, then the pointwise formula),
so float32 windows round as PyTorch's do and requires_grad=True gives the same graph.

    >>> from minigrad.signal.windows import hann
    >>> hann(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
import math

from .. import dtypes, strided
from ..factory import arange, empty, linspace, ones, tensor
from ..ops import abs, cos, exp, i0, sin, sqrt
from ..typeinfo import get_default_dtype

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """The dtype to build in, after PyTorch's checks common to every window."""
    dtype = get_default_dtype() if dtype is None else dtypes.get_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _ramp(first, step, M, dtype, device, requires_grad):
    # the M points first, first + step, ..., the argument every window's formula takes
    return linspace(first, first + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """exp(-|n - center| / tau) (the Poisson window); center defaults to the window's middle."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    return exp(-abs(_ramp(-center / tau, 1 / tau, M, dtype, device, requires_grad)))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sin(pi (n + 1/2) / M) (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return sin(_ramp(0.5 * step, step, M, dtype, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """exp(-(n - (M - 1)/2)^2 / (2 std^2))."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = 1 / (std * math.sqrt(2))
    k = _ramp(-(M if not sym and M > 1 else M - 1) / 2.0 * step, step, M, dtype, device, requires_grad)
    return exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """I0(beta sqrt(1 - (2n/(M - 1) - 1)^2)) / I0(beta), I0 the modified Bessel function of order 0."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    beta = tensor(beta, dtype=dtype, device=device)  # (in the window's dtype, so that beta^2 - k^2 >= 0 at the ends)
    step = 2.0 * beta.item() / (M if not sym else M - 1)
    end = min(beta.item(), -beta.item() + (M - 1) * step)
    k = linspace(-beta.item(), end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return i0(sqrt(beta * beta - k ** 2)) / i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """sum_i (-1)^i a_i cos(2 pi i n / (M - 1)): a sum of cosines with coefficients `a`."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    if not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _ramp(0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device, requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device, requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (a_i.unsqueeze(-1) * cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """0.54 - 0.46 cos(2 pi n / (M - 1))."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """1/2 - 1/2 cos(2 pi n / (M - 1)) = sin^2(pi n / (M - 1))."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """1 - |2n / (M - 1) - 1| (the triangular window, zero at both ends)."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    return 1 - abs(_ramp(-1, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad))


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window: general_cosine with his four coefficients."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
