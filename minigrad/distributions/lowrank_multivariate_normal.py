"""`LowRankMultivariateNormal`: the Gaussian N(loc, W W^T + diag(d)) over vectors, W a (D, rank) cov_factor."""
import math

import minigrad

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _half_log_det
from .utils import lazy_property


class LowRankMultivariateNormal(Distribution):
    """The normal distribution over vectors of loc's last dim whose covariance is cov_factor @ cov_factor^T plus
    the positive diagonal cov_diag; the leading dims of the three broadcast to the batch_shape. rsample is
    loc + W eps_W + sqrt(d) eps_d, so gradients reach all three.

    log_prob and entropy go through the Cholesky factor of the full D x D covariance (PyTorch goes through the
    rank x rank capacitance matrix instead: cheaper for D >> rank, the same values)."""

    arg_constraints = {"loc": constraints.real_vector, "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            batch_shape = minigrad.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                                    tuple(cov_diag.shape[:-1]))
        except RuntimeError:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, "
                             f"cov_diag {cov_diag.shape}") from None
        batch_shape = tuple(batch_shape)
        self.loc = loc.expand(batch_shape + (-1,))
        self.cov_factor = cov_factor.expand(batch_shape + (-1, -1))
        self.cov_diag = cov_diag.expand(batch_shape + (-1,))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        return self._expanded(LowRankMultivariateNormal, batch_shape, _instance, "loc", "cov_diag",
                              cov_factor=self.cov_factor.expand(batch_shape + tuple(self.cov_factor.shape[-2:])),
                              _unbroadcasted_cov_factor=self._unbroadcasted_cov_factor,
                              _unbroadcasted_cov_diag=self._unbroadcasted_cov_diag)

    @lazy_property
    def _unbroadcasted_scale_tril(self):
        # made when first needed, so an invalid cov_diag meets validation's ValueError, not cholesky's error
        W, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return minigrad.linalg.cholesky(W @ W.mT + minigrad.diag_embed(d))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + d).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.mT + minigrad.diag_embed(d)).expand(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        return minigrad.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self._batch_shape + self._event_shape + self._event_shape)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_W = minigrad.randn(tuple(shape[:-1]) + (W.shape[-1],), dtype=self.loc.dtype, device=self.loc.device)
        eps_d = minigrad.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return (self.loc + (W @ eps_W.unsqueeze(-1)).squeeze(-1)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        L = self._unbroadcasted_scale_tril
        m = _batch_mahalanobis(L, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - _half_log_det(L)

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + _half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self._batch_shape)
