"""`ContinuousBernoulli`: a density on [0, 1] shaped like a Bernoulli's likelihood, p^x (1 - p)^(1 - x) times the
normalizer C(p) that makes it integrate to 1 (the VAE likelihood for pixels in [0, 1], Loaiza-Ganem & Cunningham 2019)."""
import math
import numbers

import minigrad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits, softplus


class ContinuousBernoulli(ExponentialFamily):
    """Given by `probs` (or `logits`); its batch_shape is the parameter's shape. Near p = 1/2 (within `lims`) the
    closed forms divide 0 by 0, so there the normalizer, mean and variance come from their Taylor series."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # checked before the clamp below, which would make any value pass
            if validate_args is not None and not self.arg_constraints["probs"].check(self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(ContinuousBernoulli, batch_shape, _instance, "probs", "logits", _lims=self._lims)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        # p itself away from 1/2, a safe stand-in near it (whose result where() then discards)
        return minigrad.where(self._outside_unstable_region(), self.probs, minigrad.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        # log C(p) = log|log(1 - p) - log p| - log|1 - 2p|;  near 1/2: log 2 + (4/3 + 104/45 x) x, x = (p - 1/2)^2
        p = self._cut_probs()
        below = minigrad.where(p <= 0.5, p, minigrad.zeros_like(p))
        above = minigrad.where(p >= 0.5, p, minigrad.ones_like(p))
        log_norm = ((-p).log1p() - p.log()).abs().log() - minigrad.where(p <= 0.5, (-2.0 * below).log1p(),
                                                                          (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return minigrad.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        # p / (2p - 1) + 1 / (log(1 - p) - log p);  near 1/2: 1/2 + (1/3 + 16/45 x^2) x, x = p - 1/2
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x
        return minigrad.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self):
        # p (p - 1) / (1 - 2p)^2 + 1 / (log(1 - p) - log p)^2;  near 1/2: 1/12 - (1/15 - 128/945 x) x, x = (p - 1/2)^2
        p = self._cut_probs()
        vars_ = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return minigrad.where(self._outside_unstable_region(), vars_, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=minigrad.Size()):
        u = minigrad.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        with minigrad.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=minigrad.Size()):
        u = minigrad.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log p(x) = x l - log(1 + e^l) + log C(p): the Bernoulli log-likelihood (minus BCE) plus the normalizer
        return value * logits - softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # F(x) = (p^x (1 - p)^(1 - x) + p - 1) / (2p - 1), clipped to 0 below 0 and 1 above 1
        p = self._cut_probs()
        cdfs = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = minigrad.where(self._outside_unstable_region(), cdfs, value)
        return minigrad.where(value <= 0.0, minigrad.zeros_like(value),
                              minigrad.where(value >= 1.0, minigrad.ones_like(value), unbounded))

    def icdf(self, value):
        # F^-1(u) = (log(1 - p + u (2p - 1)) - log(1 - p)) / (log p - log(1 - p)); the uniform's near p = 1/2
        p = self._cut_probs()
        inv = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return minigrad.where(self._outside_unstable_region(), inv, value)

    def entropy(self):
        # H = E[x] (log(1 - p) - log p) - log C(p) - log(1 - p)
        log_p0, log_p1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0
