"""`Kumaraswamy`: a Beta-like law on (0, 1) with a closed-form cdf, so it reparameterizes by inversion."""
import minigrad

from . import constraints
from .gumbel import EULER_GAMMA
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all


def _moment(a, b, n):
    """E x^n = b B(1 + n/a, b), B the Beta function."""
    s = 1 + n / a
    return (b.log() + minigrad.lgamma(s) + minigrad.lgamma(b) - minigrad.lgamma(s + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """Density a b x^(a-1) (1 - x^a)^(b-1), a = `concentration1`, b = `concentration0`: x = (1 - u^(1/b))^(1/a)
    for u ~ Uniform(0, 1) (1 - u is uniform too)."""

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(minigrad.zeros_like(self.concentration0), minigrad.ones_like(self.concentration0),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()), AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1/a), defined where a >= 1 and b >= 1
        a, b = self.concentration1, self.concentration0
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        return minigrad.where((a < 1) | (b < 1), float("nan"), log_mode.exp())

    @property
    def variance(self):
        return _moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        # (1 - 1/b) + (1 - 1/a) H_b - log(a b), H_b = digamma(b + 1) + gamma the harmonic number
        a, b = self.concentration1, self.concentration0
        harmonic = minigrad.digamma(b + 1) + EULER_GAMMA
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - a.log() - b.log()
