"""`MultivariateNormal`: the Gaussian N(loc, Sigma) over vectors, kept as Sigma's Cholesky factor L (Sigma = L L^T)."""
import math

import minigrad

from . import constraints
from .distribution import Distribution
from .utils import lazy_property


def _batch_mahalanobis(L, x):
    """|L^-1 x|^2 along the last dim: x^T Sigma^-1 x with Sigma = L L^T, L broadcast to x's batch dims."""
    D = x.shape[-1]
    L = L.expand(tuple(minigrad.broadcast_shapes(tuple(L.shape[:-2]), tuple(x.shape[:-1]))) + (D, D))
    x = x.expand(tuple(L.shape[:-1]))
    y = minigrad.linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return y.pow(2).sum(-1)


def _half_log_det(L):
    """log sqrt(det Sigma) = sum log diag(L)."""
    return L.diagonal(0, -2, -1).log().sum(-1)


class MultivariateNormal(Distribution):
    """The normal distribution over vectors of loc's last dim, given exactly one of covariance_matrix, precision_matrix
    or scale_tril (its lower Cholesky factor); their leading dims and loc's broadcast to the batch_shape. rsample is
    loc + L eps with eps ~ N(0, I), so gradients reach loc and the matrix."""

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name  # (PyTorch's words)
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = minigrad.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = minigrad.linalg.cholesky(matrix)
        else:  # Sigma = P^-1, from P's own Cholesky factor
            self._unbroadcasted_scale_tril = minigrad.linalg.cholesky(minigrad.cholesky_inverse(
                minigrad.linalg.cholesky(matrix)))

    def expand(self, batch_shape, _instance=None):
        matrix_shape = minigrad.Size(batch_shape) + self.event_shape + self.event_shape
        matrices = {name: self.__dict__[name].expand(matrix_shape)
                    for name in ("covariance_matrix", "precision_matrix", "scale_tril") if name in self.__dict__}
        return self._expanded(MultivariateNormal, batch_shape, _instance, "loc",
                              _unbroadcasted_scale_tril=self._unbroadcasted_scale_tril, **matrices)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return minigrad.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # Sigma_ii = sum_j L_ij^2
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        eps = minigrad.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log N(x) = -(D log 2 pi + (x - mu)^T Sigma^-1 (x - mu)) / 2 - log sqrt(det Sigma)
        L = self._unbroadcasted_scale_tril
        m = _batch_mahalanobis(L, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - _half_log_det(L)

    def entropy(self):
        # H = D (1 + log 2 pi) / 2 + log sqrt(det Sigma)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape)
