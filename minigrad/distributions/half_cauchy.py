"""The half-Cauchy distribution, as torch.distributions.half_cauchy."""
import math

import minigrad

from .cauchy import Cauchy
from .half_normal import _Folded
from .transforms import AbsTransform


class HalfCauchy(_Folded):
    """|X| with X ~ Cauchy(0, `scale`)."""

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return minigrad.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def mode(self):
        return minigrad.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance
