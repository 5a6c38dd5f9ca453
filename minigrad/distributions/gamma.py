"""`Gamma`: the Gamma(concentration, rate) family on the non-negative reals (Chi2, a Gamma, in chi2.py)."""

import minigrad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Gamma(ExponentialFamily):
    """Gamma with shape `concentration` (alpha) and inverse scale `rate` (beta), density
    beta^alpha x^(alpha-1) e^(-beta x) / Gamma(alpha). rsample is differentiable in both: a draw of Gamma(alpha, 1)
    moves with alpha along its quantile (implicit reparameterization, minigrad._standard_gamma), then is divided
    by beta."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = self.concentration.size()  # (() for numbers: they broadcast to 0-d tensors)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)  # (alpha - 1) / beta, 0 for alpha < 1

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        value = minigrad._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # a draw that underflows to 0 would give log_prob -inf (or nan): kept at the smallest normal number
        value.detach().clamp_(min=minigrad.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = minigrad.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        # alpha log beta + (alpha - 1) log x - beta x - log Gamma(alpha)
        return (minigrad.xlogy(self.concentration, self.rate) + minigrad.xlogy(self.concentration - 1, value)
                - self.rate * value - minigrad.lgamma(self.concentration))

    def entropy(self):
        # alpha - log beta + log Gamma(alpha) + (1 - alpha) digamma(alpha)
        c = self.concentration
        return c - self.rate.log() + minigrad.lgamma(c) + (1.0 - c) * minigrad.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return minigrad.special.gammainc(self.concentration, self.rate * value)
