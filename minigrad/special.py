"""minigrad.special: PyTorch's `torch.special` namespace, functions of tensors with its names.

    >>> import minigrad
    >>> minigrad.special.xlogy(minigrad.tensor([0.0, 2.0]), minigrad.tensor([0.0, 3.0]))
    tensor([0.0000, 2.1972])

Each name is minigrad's op of that function (`expit` is sigmoid, `gammaln` lgamma, `psi` digamma,
`gammainc` igamma, `multigammaln` mvlgamma), differentiable wherever PyTorch's is: the Bessel
functions J, Y and K, `modified_bessel_*`, `spherical_bessel_j0` and the orthogonal polynomials have
no gradient in PyTorch, nor here. Not provided: `airy_ai` (no accurate method without tables of
coefficients), and `out=` arguments. The array code behind the ops is in minigrad/ops/special_array.py
and minigrad/ops/bessel_array.py.
"""
from .ops import digamma, erf, erfc, erfinv, exp2, expm1, log1p, logit, logsumexp, polygamma, sinc
from .ops import round as _round
from .ops import lgamma as gammaln
from .ops import log_softmax as _log_softmax
from .ops import sigmoid as expit
from .ops import softmax as _softmax
from .ops.out import take_out
from .ops.reduction import _softmax_dim
from .tensor import dtype_argument
from .ops.special_ops import (  # noqa: F401
    bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, entr, erfcx, gammainc, gammaincc, hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1,
    i1e, laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, modified_bessel_i0, modified_bessel_i1,
    modified_bessel_k0, modified_bessel_k1, multigammaln, ndtr, ndtri, scaled_modified_bessel_k0,
    scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v, shifted_chebyshev_polynomial_w, spherical_bessel_j0, xlog1py, xlogy, zeta,
)

psi = digamma


def round(input, *, decimals=0):
    """round with decimals always given (PyTorch's special.round: its node RoundBackward1)."""
    return _round(input, decimals=decimals)


def softmax(input, dim=None, *, dtype=None):
    """softmax along `dim` (required here, as in torch.special), optionally computed in `dtype`."""
    _softmax_dim(input, dim, "special_softmax")
    return _softmax(input, dim, dtype=dtype_argument(dtype, "special_softmax"))


def log_softmax(input, dim=None, *, dtype=None):
    """log_softmax along `dim` (required here, as in torch.special), optionally computed in `dtype`."""
    _softmax_dim(input, dim, "special_log_softmax")
    return _log_softmax(input, dim, dtype=dtype_argument(dtype, "special_log_softmax"))


__all__ = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
    "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "scaled_modified_bessel_k0",
    "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0",
    "xlog1py", "xlogy", "zeta",
]

take_out(globals(), "special")  # PyTorch's out= (minigrad/ops/out.py)
