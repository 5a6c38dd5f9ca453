"""`GeneralizedPareto`: the distribution of exceedances over a high threshold (extreme-value tails)."""
import numbers

import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class GeneralizedPareto(Distribution):
    """Survival function (1 + xi z)^(-1/xi) for z = (x - `loc`) / `scale` and xi = `concentration`; xi = 0 is the
    exponential tail e^-z, xi > 0 a Pareto tail, xi < 0 a bounded one (up to loc - scale / xi)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers_only = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if numbers_only else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration")

    def _safe_concentration(self):
        """(xi == 0, xi with those entries set to 1): the xi = 0 limit takes its own formula, and the other one, not
        selected there, must stay finite so that no nan reaches the gradient."""
        xi = self.concentration
        is_zero = xi.abs() <= 1e-8
        return is_zero, minigrad.where(is_zero, minigrad.ones_like(xi), xi)

    def rsample(self, sample_shape=minigrad.Size()):
        u = minigrad.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, xi = self._safe_concentration()
        power = 1 / xi + 1  # (0 at xi = -1: a flat density, whatever log1p gives at the upper end)
        tail = minigrad.where(power == 0, power, power * (xi * z).log1p())
        # -log scale - (1 + 1/xi) log(1 + xi z), or -log scale - z at xi = 0
        return -self.scale.log() - minigrad.where(is_zero, z, tail)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, xi = self._safe_concentration()
        return minigrad.where(is_zero, -z, -(xi * z).log1p() / xi)  # -log(1 + xi z) / xi, or -z

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        is_zero, xi = self._safe_concentration()
        log_survival = (-value).log1p()
        # loc + scale (e^(-xi log(1 - u)) - 1) / xi, or loc - scale log(1 - u) at xi = 0
        return minigrad.where(is_zero, self.loc - self.scale * log_survival,
                              self.loc + self.scale / xi * (-xi * log_survival).expm1())

    @property
    def mean(self):
        xi = self.concentration
        exists = xi < 1
        safe = minigrad.where(exists, xi, minigrad.full_like(xi, 0.5))
        mean = self.loc + self.scale / (1 - safe)  # loc + scale / (1 - xi), for xi < 1
        return minigrad.where(exists, mean, minigrad.full_like(mean, float("nan")))

    @property
    def variance(self):
        xi = self.concentration
        exists = xi < 0.5
        safe = minigrad.where(exists, xi, minigrad.full_like(xi, 0.25))
        var = self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe))  # scale^2 / ((1 - xi)^2 (1 - 2 xi)), xi < 1/2
        return minigrad.where(exists, var, minigrad.full_like(var, float("nan")))

    def entropy(self):
        # log scale + xi + 1
        return (self.scale.log() + self.concentration + 1).expand(self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        xi = self.concentration
        upper = minigrad.where(xi < 0, self.loc - self.scale / xi, minigrad.full_like(xi, float("inf")))
        return constraints.interval(self.loc, upper)
