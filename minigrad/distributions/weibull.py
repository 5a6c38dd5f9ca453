"""`Weibull`: lifetimes whose hazard grows (or shrinks) as a power of time (survival models)."""
import minigrad

from . import constraints
from .exponential import Exponential
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all


class Weibull(TransformedDistribution):
    """scale E^(1/k) for E ~ Exponential(1) and k the `concentration`: density (k / s) (x / s)^(k-1) e^(-(x/s)^k)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(minigrad.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal), AffineTransform(0, self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale, new.concentration = self.scale.expand(batch_shape), self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        transforms = [PowerTransform(exponent=new.concentration_reciprocal), AffineTransform(0, new.scale)]
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape), transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * minigrad.lgamma(1 + self.concentration_reciprocal).exp()  # s Gamma(1 + 1/k)

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** self.concentration.reciprocal()

    @property
    def variance(self):
        # s^2 (Gamma(1 + 2/k) - Gamma(1 + 1/k)^2)
        return self.scale.pow(2) * (minigrad.lgamma(1 + 2 * self.concentration_reciprocal).exp()
                                    - (2 * minigrad.lgamma(1 + self.concentration_reciprocal)).exp())

    def entropy(self):
        # gamma (1 - 1/k) + log(s / k) + 1
        return (EULER_GAMMA * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)
