"""`Poisson`: counts of events at a constant `rate`."""
import minigrad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Poisson(ExponentialFamily):
    """P(k) = rate^k e^(-rate) / k!, k = 0, 1, 2, ... (draws have no gradient)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = self.rate.size()  # (() for a number: a 0-d tensor)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        with minigrad.no_grad():
            return minigrad.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return minigrad.xlogy(value, rate) - rate - minigrad.lgamma(value + 1)  # k log r - r - log k!
