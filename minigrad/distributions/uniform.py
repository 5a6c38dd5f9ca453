"""`Uniform`: flat on [low, high)."""
import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Uniform(Distribution):
    """Uniform on the half-open interval [`low`, `high`) (numbers or tensors, broadcast together). rsample is
    low + u (high - low) with u ~ U[0, 1), so gradients reach low and high."""

    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = self.low.size()  # (() for numbers: they broadcast to 0-d tensors)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Uniform, batch_shape, _instance, "low", "high")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return float("nan") * self.high  # every point of the interval is a mode

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5  # (b - a) / sqrt(12)

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12  # (b - a)^2 / 12

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        u = minigrad.rand(shape, dtype=self.low.dtype, device=self.low.device)  # the default generator's U[0, 1)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log p(x) = -log(b - a) inside [a, b), -inf outside
        inside = (self.low <= value).type_as(self.low) * (self.high > value).type_as(self.low)
        return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)  # (x - a) / (b - a), in [0, 1]

    def icdf(self, value):
        return value * (self.high - self.low) + self.low  # a + q (b - a)

    def entropy(self):
        return (self.high - self.low).log()  # log(b - a)
