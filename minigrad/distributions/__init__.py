"""minigrad.distributions: probability distributions for sampling and for losses (`torch.distributions`).

`Categorical`, `OneHotCategorical`, `Bernoulli`, `Normal`, `MultivariateNormal`, `Uniform` (and `Independent` over any of them), with sample/rsample, log_prob, entropy,
mean/variance/stddev, cdf/icdf (Normal, Uniform), expand, and `kl_divergence` for like pairs. They are written
with minigrad's recorded ops, so gradients flow from log_prob, entropy, rsample and kl_divergence back to the
parameters; draws come from minigrad's default generator (`minigrad.manual_seed` repeats them).

    >>> from minigrad.distributions import Categorical
    >>> m = Categorical(logits=policy(state))
    >>> action = m.sample()
    >>> loss = -(m.log_prob(action) * reward).sum()   # REINFORCE
"""
from . import constraints  # noqa: F401
from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .distribution import Distribution
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Independent", "MultivariateNormal", "Normal", "OneHotCategorical", "Uniform", "kl_divergence",
           "register_kl"]
