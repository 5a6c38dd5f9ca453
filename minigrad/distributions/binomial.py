"""`Binomial`: the number of successes in `total_count` independent trials."""
import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, softplus


class Binomial(Distribution):
    """P(k) = C(n, k) p^k (1 - p)^(n - k) for k = 0..n, n = `total_count` (an integer count, or a tensor of
    them), p = `probs` or sigmoid(`logits`), one of them given."""

    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        return self._expanded(Binomial, batch_shape, _instance, "total_count", "probs", "logits")

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

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
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        with minigrad.no_grad():
            return minigrad.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, l = self.total_count, self.logits
        log_binom = minigrad.lgamma(n + 1) - minigrad.lgamma(value + 1) - minigrad.lgamma(n - value + 1)
        # log C(n, k) + k l - n log(1 + e^l)
        return log_binom + value * l - n * softplus(l)

    def entropy(self):
        # -sum_k p(k) log p(k) over the common support 0..n
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = int(self.total_count.max())
        if not self.total_count.min() == n:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = minigrad.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
