"""`Dirichlet`: random probability vectors."""
import minigrad

from . import constraints
from .exp_family import ExponentialFamily


class Dirichlet(ExponentialFamily):
    """Density Gamma(a_0) / prod_i Gamma(a_i) prod_i x_i^(a_i - 1) on the simplex, a_0 = sum_i a_i, with
    `concentration` a (its last dim is the event). A draw is independent Gamma(a_i, 1) draws divided by their
    sum; the gammas' implicit reparameterization carries gradients through it to a (PyTorch takes the same
    expected gradient by another estimator)."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, "concentration")

    def rsample(self, sample_shape=minigrad.Size()):
        shape = self._extended_shape(sample_shape)
        gammas = minigrad._standard_gamma(self.concentration.expand(shape))
        finfo = minigrad.finfo(gammas.dtype)
        x = gammas / gammas.sum(-1, keepdim=True)
        x.detach().clamp_(min=finfo.tiny, max=1 - finfo.eps)  # (a log_prob of it stays finite)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (minigrad.xlogy(a - 1.0, value).sum(-1) + minigrad.lgamma(a.sum(-1))
                - minigrad.lgamma(a).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        # (a_i - 1) / (a_0 - K) where every a_i > 1; a vertex (the largest a_i's) where every a_i < 1
        am1 = (self.concentration - 1).clamp(min=0.0)
        mode = am1 / am1.sum(-1, keepdim=True)
        vertex = (self.concentration < 1).all(-1)
        k = self.concentration.shape[-1]
        # (written in place, as PyTorch's: its graph shows the index_put)
        mode[vertex] = (mode[vertex].argmax(-1, keepdim=True) == minigrad.arange(k, device=mode.device)).to(mode.dtype)
        return mode

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        # log B(a) + (a_0 - K) digamma(a_0) - sum_i (a_i - 1) digamma(a_i)
        a = self.concentration
        k = a.size(-1)
        a0 = a.sum(-1)
        return (minigrad.lgamma(a).sum(-1) - minigrad.lgamma(a0) - (k - a0) * minigrad.digamma(a0)
                - ((a - 1.0) * minigrad.digamma(a)).sum(-1))
