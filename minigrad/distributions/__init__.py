"""minigrad.distributions: probability distributions for sampling and for losses (`torch.distributions`).

Discrete: `Categorical`, `OneHotCategorical` (and `OneHotCategoricalStraightThrough`), `Bernoulli`, `Binomial`, `Multinomial`, `Geometric`, `Poisson`,
`NegativeBinomial`. Continuous:
`Normal`, `MultivariateNormal`, `LowRankMultivariateNormal`, `Uniform`, `Laplace`, `Cauchy`, `StudentT`, `Exponential`, `Gamma`, `Chi2`, `Beta`,
`Dirichlet`, `ContinuousBernoulli` (these and Bernoulli, Poisson subclass `ExponentialFamily`), `VonMises`,
`FisherSnedecor`, `GeneralizedPareto`, `Wishart` (random
positive definite matrices), `LKJCholesky` (Cholesky factors of random correlation matrices), and through `TransformedDistribution` (with the transforms of `transforms`): `LogNormal`, `HalfNormal`,
`HalfCauchy`, `Gumbel`, `Weibull`, `Pareto`, `InverseGamma`, `Kumaraswamy`, `LogisticNormal`, `RelaxedBernoulli`, `RelaxedOneHotCategorical`. Built from others: `Independent`, `MixtureSameFamily`. Each has
sample/rsample, log_prob, entropy, mean/mode/variance/stddev, cdf/icdf where PyTorch's has them, expand, and
`kl_divergence` for the pairs PyTorch registers. They are written
with minigrad's recorded ops, so gradients flow from log_prob, entropy, rsample and kl_divergence back to the
parameters; draws come from minigrad's default generator (`minigrad.manual_seed` repeats them).

    >>> from minigrad.distributions import Categorical
    >>> m = Categorical(logits=policy(state))
    >>> action = m.sample()
    >>> loss = -(m.log_prob(action) * reward).sum()   # REINFORCE
"""
from . import constraints, transforms  # noqa: F401
from .constraint_registry import biject_to, transform_to
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .chi2 import Chi2
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .lkj_cholesky import LKJCholesky
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform, AffineTransform, CatTransform, ComposeTransform, CorrCholeskyTransform, CumulativeDistributionTransform,
    ExpTransform, IndependentTransform, LowerCholeskyTransform, PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
    SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform, StickBreakingTransform, TanhTransform, Transform,
    identity_transform,
)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform",
    "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel",
    "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
    "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT", "TanhTransform", "TransformedDistribution", "Transform",
    "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "kl_divergence", "register_kl", "transform_to",
]
