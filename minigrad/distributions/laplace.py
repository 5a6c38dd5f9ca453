"""`Laplace`: the double exponential around `loc`."""
import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Laplace(Distribution):
    """Density exp(-|x - loc| / scale) / (2 scale). rsample inverts the cdf at a uniform draw of (-1, 1)
    (eps - 1 at the low end, so that the log stays finite), differentiable in loc and scale."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = self.loc.size()  # (() for numbers: they broadcast to 0-d tensors)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2**0.5) * self.scale

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        eps = minigrad.finfo(self.loc.dtype).eps
        u = minigrad.rand(shape, dtype=self.loc.dtype, device=self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # 1/2 - sign(x - loc) (e^(-|x - loc| / scale) - 1) / 2
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
