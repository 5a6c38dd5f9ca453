"""`Geometric`: the number of failures before the first success."""
import numbers

import minigrad

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits, softplus


class Geometric(Distribution):
    """P(k) = (1 - p)^k p, k = 0, 1, 2, ... with p = `probs` (in (0, 1]) or sigmoid(`logits`)."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = minigrad.Size() if isinstance(given, numbers.Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # the unit interval's 0 has no geometric distribution: p must be positive too
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to be positive but found invalid values:\n"
                                 f"{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Geometric, batch_shape, _instance, "probs", "logits")

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return minigrad.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = minigrad.finfo(self.probs.dtype).tiny
        with minigrad.no_grad():
            # floor(log U / log(1 - p)), U uniform on [tiny, 1) so that the log stays finite
            u = minigrad.rand(shape, dtype=self.probs.dtype, device=self.probs.device) * (1 - tiny) + tiny
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # k log(1 - p) + log p, with 0 * log 0 = 0 at p = 1, k = 0
        probs = minigrad.where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        # (-(1 - p) log(1 - p) - p log p) / p, the binary entropy over p
        return (softplus(self.logits) - self.logits * self.probs) / self.probs
