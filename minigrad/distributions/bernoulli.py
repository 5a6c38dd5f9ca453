"""`Bernoulli`: 1 with probability p, else 0."""
import numbers

import minigrad

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, softplus


class Bernoulli(ExponentialFamily):
    """A coin flip: 1 with probability `probs` (or sigmoid(`logits`)), 0 otherwise; exactly one of them is given.
    Its batch_shape is the parameter's shape."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Bernoulli, batch_shape, _instance, "probs", "logits")

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
        return self.probs

    @property
    def mode(self):
        # 1 when p > 1/2, 0 when p < 1/2, NaN at p = 1/2
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return minigrad.where(self.probs == 0.5, float("nan"), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)  # p (1 - p)

    def sample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        with minigrad.no_grad():
            return minigrad.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log p(x) = x l - log(1 + e^l), with l the logit
        return value * logits - softplus(logits)

    def entropy(self):
        # H = log(1 + e^l) - p l
        return softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        values = minigrad.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
