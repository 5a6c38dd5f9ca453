"""One-hot categorical distributions, as torch.distributions.one_hot_categorical."""
import minigrad

from . import constraints
from .categorical import Categorical, _one_hot
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """A Categorical draw written as a one-hot vector of length K (event_shape (K,)); `probs`/`logits` as for
    Categorical."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = tuple(self._categorical.param_shape)[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(OneHotCategorical, batch_shape, _instance, _categorical=self._categorical.expand(batch_shape))

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
        return self._categorical.probs

    @property
    def mode(self):
        return _one_hot(self._categorical.probs.argmax(-1), self.event_shape[-1], self.probs.dtype)

    @property
    def variance(self):
        p = self._categorical.probs
        return p * (1 - p)  # var_i = p_i (1 - p_i)

    def sample(self, sample_shape=minigrad.Size()):
        indices = self._categorical.sample(sample_shape)
        return _one_hot(indices, self.event_shape[-1], self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))  # log p[k] where value = e_k

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = minigrad.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A OneHotCategorical whose rsample passes gradients straight through: the forward value is the one-hot draw,
    the backward is that of the probabilities (Bengio et al. 2013)."""

    has_rsample = True

    def rsample(self, sample_shape=minigrad.Size()):
        probs = self._categorical.probs
        # e_k + (p - p): the draw's value with p's gradient
        return self.sample(sample_shape) + (probs - probs.detach())
