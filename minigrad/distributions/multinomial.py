"""`Multinomial`: the counts of each of K outcomes in `total_count` independent Categorical draws."""
import minigrad

from . import constraints
from .binomial import Binomial
from .categorical import Categorical, _one_hot
from .distribution import Distribution
from .utils import broadcast_all


class Multinomial(Distribution):
    """P(x) = n! / prod_i x_i! prod_i p_i^x_i for counts x summing to n = `total_count` (one int for the whole
    batch), p = `probs` (non-negative weights, normalized along the last dim) or softmax(`logits`). The event is
    the vector of K counts."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape)[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Multinomial, batch_shape, _instance, total_count=self.total_count,
                              _categorical=self._categorical.expand(batch_shape))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)  # each count is Binomial(n, p_i)

    def sample(self, sample_shape=minigrad.Size()):
        # n Categorical draws, counted: the sum of their one-hot vectors
        with minigrad.no_grad():
            draws = self._categorical.sample(minigrad.Size((self.total_count,) + tuple(sample_shape)))
            return _one_hot(draws, self._categorical._num_events, self.probs.dtype).sum(0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a count of 0 on an impossible outcome (logit -inf) contributes 0 * log 0 = 0
        logits = minigrad.where((value == 0) & (logits == float("-inf")), minigrad.zeros_like(logits), logits)
        # log n! - sum_i log x_i! + sum_i x_i log p_i
        return minigrad.lgamma(value.sum(-1) + 1) - minigrad.lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        # H = n H(p) - log n! + sum_i E[log x_i!], each x_i ~ Binomial(n, p_i), the expectation over x = 1..n
        n = minigrad.tensor(float(self.total_count))  # (log n! in the default dtype, as PyTorch's: float32 there)
        binomial = Binomial(self.total_count, self.probs, validate_args=False)
        counts = binomial.enumerate_support(expand=False)[1:]
        expected_log_factorials = (binomial.log_prob(counts).exp() * minigrad.lgamma(counts + 1)).sum((0, -1))
        return n * self._categorical.entropy() - minigrad.lgamma(n + 1) + expected_log_factorials
