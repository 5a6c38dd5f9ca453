"""`Categorical` and `OneHotCategorical`: one of K outcomes, with given probabilities or logits."""
import minigrad

from . import constraints
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, probs_to_logits


class Categorical(Distribution):
    """A draw of an index in 0..K-1 from `probs` (non-negative weights, normalized along the last dim) or
    `logits` (unnormalized log-probabilities); exactly one of them is given. Leading dims are the batch.

        >>> m = Categorical(logits=minigrad.zeros(3))
        >>> m.sample()  # 0, 1 or 2, each with probability 1/3
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)  # p_i = w_i / sum_j w_j
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)  # log p_i = l_i - log sum_j e^l_j
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        param_shape = tuple(batch_shape) + (self._num_events,)  # (its event is a class index: no event dims)
        params = {name: self.__dict__[name].expand(param_shape) for name in ("probs", "logits") if name in self.__dict__}
        return self._expanded(Categorical, batch_shape, _instance, _num_events=self._num_events, **params)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def mean(self):
        return minigrad.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def variance(self):
        return minigrad.full(self._extended_shape(), float("nan"), dtype=self.probs.dtype, device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    def sample(self, sample_shape=minigrad.Size()):
        sample_shape = minigrad.Size(sample_shape)
        with minigrad.no_grad():
            rows = self.probs.reshape(-1, self._num_events)  # one row per batch entry
            draws = minigrad.multinomial(rows, sample_shape.numel(), True).T  # (n, rows), from the default generator
            return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log p[value]: pick the value's entry of the broadcast log-probabilities (gradients reach logits/probs)
        value, log_pmf = value.long().unsqueeze(-1), self.logits
        if value.shape[:-1] != log_pmf.shape[:-1]:  # (one value per distribution, the usual, needs no broadcast)
            value, log_pmf = minigrad.broadcast_tensors(value, log_pmf)
            value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        # H = -sum_i p_i log p_i (a -inf logit, p_i = 0, is clamped to the dtype's lowest value so 0 * log 0 = 0)
        logits = self.logits.clamp(min=minigrad.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = minigrad.arange(self._num_events, dtype=minigrad.int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


def _one_hot(indices, num_classes, dtype):
    """e_k for every index k: (indices[..., None] == 0..num_classes-1) as `dtype`."""
    classes = minigrad.arange(num_classes, device=indices.device)
    return (indices.unsqueeze(-1) == classes).to(dtype)
