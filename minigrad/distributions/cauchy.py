"""`Cauchy`: the ratio of two centred normals, shifted and scaled; it has no mean."""
import math

import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Cauchy(Distribution):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)). rsample is loc + scale C, C a standard Cauchy draw."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = self.loc.size()  # (() for numbers: they broadcast to 0-d tensors)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return minigrad.full(self._extended_shape(), math.nan, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return minigrad.full(self._extended_shape(), math.inf, dtype=self.loc.dtype, device=self.loc.device)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        eps = minigrad.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - (((value - self.loc) / self.scale) ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return minigrad.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return minigrad.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
