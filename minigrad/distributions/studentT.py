"""`StudentT`: a normal whose variance is itself random (heavy tails, `df` degrees of freedom)."""
import math

import minigrad

from . import constraints
from .distribution import Distribution
from .chi2 import Chi2
from .utils import broadcast_all


class StudentT(Distribution):
    """loc + scale T with T = Z / sqrt(V / df), Z ~ N(0, 1), V ~ Chi2(df): rsample is differentiable in all
    three parameters (V by the gamma's implicit reparameterization)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(StudentT, batch_shape, _instance, "df", "loc", "scale", "_chi2")

    @property
    def mean(self):
        return minigrad.where(self.df > 1, self.loc, math.nan)  # undefined for df <= 1

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, undefined for df <= 1
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        m = minigrad.where(self.df > 2, finite, math.inf)
        return minigrad.where(self.df > 1, m, math.nan)

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        z = minigrad.randn(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * (v / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        # log of the normalizer scale sqrt(df pi) Gamma(df / 2) / Gamma((df + 1) / 2)
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + minigrad.lgamma(0.5 * self.df) - minigrad.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        lbeta = minigrad.lgamma(0.5 * self.df) + math.lgamma(0.5) - minigrad.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (minigrad.digamma(0.5 * (self.df + 1)) - minigrad.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
