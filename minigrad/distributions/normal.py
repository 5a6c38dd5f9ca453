"""`Normal`: the Gaussian N(loc, scale^2)."""
import math

import minigrad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all


class Normal(ExponentialFamily):
    """The normal distribution with mean `loc` and standard deviation `scale` (numbers or tensors, broadcast
    together; their shape is the batch_shape). rsample is loc + scale * eps with eps ~ N(0, 1), so gradients
    reach loc and scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = self.loc.size()  # (() for numbers: they broadcast to 0-d tensors)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Normal, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        eps = minigrad.randn(shape, dtype=self.loc.dtype, device=self.loc.device)  # the default generator's N(0, 1)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log N(x) = -(x - mu)^2 / (2 sigma^2) - log sigma - log sqrt(2 pi)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # F(x) = (1 + erf((x - mu) / (sigma sqrt 2))) / 2
        return 0.5 * (1 + minigrad.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        # F^-1(q) = mu + sigma sqrt(2) erfinv(2q - 1)
        return self.loc + self.scale * minigrad.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        # H = 1/2 + log(sigma sqrt(2 pi))
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
