"""`TransformedDistribution`: the distribution of y = f(x) for x from a base distribution and f a chain of
invertible transforms, with log p(y) = log p(x) - log|det df/dx| (change of variables)."""
import minigrad

from . import constraints
from .distribution import Distribution
from .independent import Independent, _sum_rightmost
from .transforms import ComposeTransform, Transform


class TransformedDistribution(Distribution):
    """`transforms` (one Transform or a list) applied in order to draws of `base_distribution`. A transform that
    couples more dims than the base's event (a softmax over a batch of Normals) makes those batch dims event
    dims.

        >>> squashed = TransformedDistribution(Normal(mu, std), [TanhTransform(cache_size=1)])   # SAC's policy
        >>> action = squashed.rsample()
        >>> logp = squashed.log_prob(action)    # the cache gives back the pre-tanh draw, no atanh
    """

    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least {chain.domain.event_dim}, "
                             f"but got {minigrad.Size(base_shape)}.")
        shape = tuple(chain.forward_shape(base_shape))
        # a transform's parameters may broadcast the base up: expand it to the shape the inverse sees
        expanded = tuple(chain.inverse_shape(shape))
        if expanded != base_shape:
            base_distribution = base_distribution.expand(expanded[:len(expanded) - base_event_dim])
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = max(chain.codomain.event_dim,
                        base_event_dim + chain.codomain.event_dim - chain.domain.event_dim)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = tuple(batch_shape) + tuple(self.event_shape)
        for t in reversed(self.transforms):
            shape = tuple(t.inverse_shape(shape))
        base_batch = shape[:len(shape) - len(self.base_dist.event_shape)]
        return self._expanded(TransformedDistribution, batch_shape, _instance,
                              base_dist=self.base_dist.expand(base_batch), transforms=self.transforms)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=minigrad.Size()):
        with minigrad.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=minigrad.Size()):
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # walk back from y to the base's x, subtracting each step's log|det|, summed over the dims that are
        # event dims at that step but not the transform's own
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y), event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """F_Y(y) = F_X(x) through increasing transforms, 1 - F_X(x) through a decreasing chain."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in self.transforms[::-1]:
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self._monotonize_cdf(value)
        value = self.base_dist.icdf(value)
        for t in self.transforms:
            value = t(value)
        return value
