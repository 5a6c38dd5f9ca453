"""`MixtureSameFamily`: a mixture of K components of one family (a Gaussian mixture model)."""
import minigrad

from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """Pick a component k from `mixture_distribution` (a Categorical over K), then draw from component k of
    `component_distribution`, whose rightmost batch dim is the K components. log_prob is
    logsumexp_k(log pi_k + log p_k(x)), differentiable in both; there is no rsample (the pick is discrete).

        >>> gmm = MixtureSameFamily(Categorical(logits=w), Independent(Normal(mu, sigma), 1))   # mu: (K, D)
    """

    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of minigrad.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "minigrad.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mdbs), reversed(cdbs)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not compatible with "
                                 f"`component_distribution.batch_shape`({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(cdbs, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = minigrad.Size(batch_shape)
        return self._expanded(
            MixtureSameFamily, batch_shape, _instance,
            _component_distribution=self._component_distribution.expand(batch_shape + (self._num_component,)),
            _mixture_distribution=self._mixture_distribution.expand(batch_shape),
            _num_component=self._num_component, _event_ndims=self._event_ndims)

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # the law of total variance: E[Var(x | k)] + Var(E[x | k])
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        within = (probs * self.component_distribution.variance).sum(dim)
        between = (probs * (self.component_distribution.mean - self._pad(self.mean)).pow(2.0)).sum(dim)
        return within + between

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # (sample, batch, K)
        log_mix = minigrad.log_softmax(self.mixture_distribution.logits, dim=-1)
        return minigrad.logsumexp(log_prob_x + log_mix, dim=-1)

    def sample(self, sample_shape=minigrad.Size()):
        with minigrad.no_grad():
            sample_shape = minigrad.Size(sample_shape)
            k_dim = len(sample_shape) + len(self.batch_shape)
            es = tuple(self.event_shape)
            picks = self.mixture_distribution.sample(sample_shape)  # (sample, batch)
            draws = self.component_distribution.sample(sample_shape)  # (sample, batch, K, event)
            index = picks.reshape(tuple(picks.shape) + (1,) * (len(es) + 1))
            index = index.expand(tuple(picks.shape) + (1,) + es)
            return minigrad.gather(draws, k_dim, index).squeeze(k_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        """The mixture's probs (batch, K) shaped to line up with the components' (batch, K, event)."""
        pad = 0 if len(self.mixture_distribution.batch_shape) == 1 else \
            len(self.batch_shape) - len(self.mixture_distribution.batch_shape)
        xs = tuple(x.shape)
        return x.reshape(xs[:-1] + (1,) * pad + xs[-1:] + (1,) * self._event_ndims)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self.mixture_distribution},\n  {self.component_distribution})"
