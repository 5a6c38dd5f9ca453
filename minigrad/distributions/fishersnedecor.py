"""`FisherSnedecor`: the F distribution, the ratio of two scaled chi-squared variables (variance-ratio tests)."""
import minigrad

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all


def _nan_unless(condition, x):
    """x where the moment exists, nan elsewhere (with no gradient to x there, as PyTorch's masked fill)."""
    return minigrad.where(condition, x, minigrad.full_like(x, float("nan")))


class FisherSnedecor(Distribution):
    """F(`df1`, `df2`): (X1 / df1) / (X2 / df2) for X_i ~ Chi2(df_i), drawn as the ratio of Gamma(df_i / 2, df_i)
    variables (so rsample is differentiable through both)."""

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        super().__init__(self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(FisherSnedecor, batch_shape, _instance, "df1", "df2",
                              _gamma1=self._gamma1.expand(batch_shape), _gamma2=self._gamma2.expand(batch_shape))

    @property
    def mean(self):
        d2 = _nan_unless(self.df2 > 2, self.df2)  # defined for df2 > 2
        return d2 / (d2 - 2)

    @property
    def mode(self):
        d1, d2 = self.df1, self.df2
        return _nan_unless(d1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2))  # an interior peak for df1 > 2

    @property
    def variance(self):
        d1, d2 = self.df1, _nan_unless(self.df2 > 4, self.df2)  # defined for df2 > 4
        # 2 d2^2 (d1 + d2 - 2) / (d1 (d2 - 2)^2 (d2 - 4))
        return 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = minigrad.finfo(x2.dtype).tiny
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)  # (neither 0 / 0 nor an underflow to 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.df1 * 0.5, self.df2 * 0.5
        # log B(a, b)^-1 + a log d1 + b log d2 + (a - 1) log x - (a + b) log(d2 + d1 x)
        log_beta = minigrad.lgamma(a) + minigrad.lgamma(b) - minigrad.lgamma(a + b)
        return (a * self.df1.log() + b * self.df2.log() + (a - 1) * value.log()
                - (a + b) * (self.df2 + self.df1 * value).log() - log_beta)
