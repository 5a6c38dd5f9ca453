"""`InverseGamma`: 1/X for X ~ Gamma (the conjugate prior of a Normal's variance)."""
import math

import minigrad

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform
from .utils import broadcast_all


class InverseGamma(TransformedDistribution):
    """Density rate^c / Gamma(c) x^(-c-1) e^(-rate/x) on x > 0, for c the `concentration`."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        concentration, rate = broadcast_all(concentration, rate)
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-minigrad.ones_like(rate)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        c = self.concentration
        return minigrad.where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        return minigrad.where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), math.inf)

    def entropy(self):
        # c + log rate + log Gamma(c) - (1 + c) digamma(c)
        c = self.concentration
        return c + self.rate.log() + minigrad.lgamma(c) - (1 + c) * minigrad.digamma(c)
