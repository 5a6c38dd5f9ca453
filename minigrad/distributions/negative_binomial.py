"""`NegativeBinomial`: the number of successes before `total_count` failures (over-dispersed counts)."""
import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, softplus


class NegativeBinomial(Distribution):
    """P(k) = Gamma(r + k) / (k! Gamma(r)) p^k (1 - p)^r for k = 0, 1, ..., with r = `total_count` (a positive real,
    not only an integer) and p = `probs` or sigmoid(`logits`) the probability of a success. A draw is Poisson
    with a Gamma(r, (1 - p) / p) rate: the Gamma-Poisson mixture."""

    arg_constraints = {"total_count": constraints.greater_than_eq(0), "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(NegativeBinomial, batch_shape, _instance, "total_count", "probs", "logits")

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return self.total_count * self.logits.exp()  # r p / (1 - p)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / minigrad.sigmoid(-self.logits)  # r p / (1 - p)^2

    def sample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        with minigrad.no_grad():
            rate = minigrad._standard_gamma(self.total_count.expand(shape)) * self.logits.exp().expand(shape)
            return minigrad.poisson(rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        # r log(1 - p) + k log p, with log(1 - p) = -softplus(l) and log p = -softplus(-l)
        log_unnormalized = -r * softplus(self.logits) - value * softplus(-self.logits)
        # log(Gamma(r + k) / (k! Gamma(r))), which is 0 at r = k = 0 (a point mass at 0)
        log_normalization = minigrad.lgamma(r + value) - minigrad.lgamma(1.0 + value) - minigrad.lgamma(r)
        log_normalization = minigrad.where(r + value == 0, 0.0, log_normalization)
        return log_unnormalized + log_normalization
