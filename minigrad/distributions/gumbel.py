"""`Gumbel`: the law of the maximum of many draws (extreme values; the Gumbel-max trick)."""
import math
import numbers

import minigrad

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all

EULER_GAMMA = 0.57721566490153286061


class Gumbel(TransformedDistribution):
    """loc - scale log(-log u) for u uniform on (0, 1): density exp(-(z + e^-z)) / scale with z = (x - loc) / scale.
    The uniform's ends are kept at (tiny, 1 - eps) so that both logs stay finite."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = minigrad.finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base = Uniform(minigrad.full_like(self.loc, finfo.tiny), minigrad.full_like(self.loc, 1 - finfo.eps),
                           validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(0, -minigrad.ones_like(self.scale)), ExpTransform().inv,
                      AffineTransform(loc, -self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        # written out rather than walked back through the transforms, which lose precision in the tails
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()  # -z - e^-z - log scale

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)
