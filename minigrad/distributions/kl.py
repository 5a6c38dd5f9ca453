"""`kl_divergence(p, q)`: KL(p || q) = E_p[log p(x) - log q(x)], for the pairs registered with `register_kl`."""
import math

import minigrad

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical, OneHotCategorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import EULER_GAMMA, Gumbel
from .independent import Independent, _sum_rightmost
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import softplus

_KL_REGISTRY = {}  # (type of p, type of q) -> function(p, q)


def register_kl(type_p, type_q):
    """Decorator: register `fn(p, q)` as KL(p || q) for p of `type_p` and q of `type_q` (and their subclasses)."""
    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _lookup(type_p, type_q):
    """The registered function for the closest pair of base classes (exact types first), or None."""
    best, best_rank = None, None
    for (p, q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            rank = (type_p.__mro__.index(p), type_q.__mro__.index(q))
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p, q):
    """KL(p || q) per batch entry, as a tensor of the broadcast batch_shape; gradients reach both parameter sets."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and "
                                  f"q type {type(q).__name__}")
    return fn(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    # KL = (r + ((mu_p - mu_q) / sigma_q)^2 - 1 - log r) / 2, with r = (sigma_p / sigma_q)^2
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    # KL = sum_i p_i (log p_i - log q_i); a term is 0 where p_i = 0 and inf where q_i = 0 < p_i
    t = p.probs * (p.logits - q.logits)
    t = minigrad.where((q.probs == 0).expand_as(t), math.inf, t)
    t = minigrad.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # KL = p log(p / q) + (1 - p) log((1 - p) / (1 - q)), with log p = -softplus(-l), log(1 - p) = -softplus(l)
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = minigrad.where(q.probs == 0, math.inf, t1)
    t1 = minigrad.where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = minigrad.where(q.probs == 1, math.inf, t2)
    t2 = minigrad.where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    # KL = log((b_q - a_q) / (b_p - a_p)) when [a_p, b_p) lies inside [a_q, b_q), else inf
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return minigrad.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    # KL of independent coordinates: the base distributions' KL summed over the reinterpreted dims
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


def _kl_gaussian_vectors(p, q, kind):
    # KL = (tr(Sq^-1 Sp) + |Lq^-1 (mu_q - mu_p)|^2 - D) / 2 + log sqrt(det Sq) - log sqrt(det Sp),
    # tr(Sq^-1 Sp) = |Lq^-1 Lp|_F^2; both kinds hold their covariance's Cholesky factor
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {kind} with" + " " * 26 +  # (PyTorch's text, spaces
                         "different event shapes cannot be computed")  # and all)
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    D = p.event_shape[0]
    batch = tuple(minigrad.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2])))
    Lp, Lq = Lp.expand(batch + (D, D)), Lq.expand(batch + (D, D))
    trace = minigrad.linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    m = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return _half_log_det(Lq) - _half_log_det(Lp) + 0.5 * (trace + m - D)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    return _kl_gaussian_vectors(p, q, "Multivariate Normals")


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    return _kl_gaussian_vectors(p, q, "Low Rank Multivariate Normals")


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mixed_rank_multivariatenormal(p, q):
    return _kl_gaussian_vectors(p, q, "(Low Rank) Multivariate Normals")


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    # log B(a_q, b_q) - log B(a_p, b_p) + (a_p - a_q) psi(a_p) + (b_p - b_q) psi(b_p)
    #   + (a_q - a_p + b_q - b_p) psi(a_p + b_p)
    a_p, b_p, a_q, b_q = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    sum_p, sum_q = a_p + b_p, a_q + b_q
    t1 = a_q.lgamma() + b_q.lgamma() + sum_p.lgamma()
    t2 = a_p.lgamma() + b_p.lgamma() + sum_q.lgamma()
    t3 = (a_p - a_q) * a_p.digamma()
    t4 = (b_p - b_q) * b_p.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # n (p log(p / q) + (1 - p) log((1 - p) / (1 - q))), for equal counts only
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return minigrad.where(inf_idxs, math.inf, kl)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # log(((s_p + s_q)^2 + (m_p - m_q)^2) / (4 s_p s_q))
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    # E_p[x] (l_p - l_q) + log C(p_p) + log(1 - p_p) - log C(p_q) - log(1 - p_q), l the logits
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + (-p.probs).log1p()
            - q._cont_bern_log_norm() - (-q.probs).log1p())


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    # -H(p) - E_p[x] l_q - log(1 - p_q) - log C(p_q)
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    # log Gamma(a_0) - log Gamma(b_0) - sum_i (log Gamma(a_i) - log Gamma(b_i)) + sum_i (a_i - b_i)(psi(a_i) - psi(a_0))
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    t1 = a0.lgamma() - b0.lgamma()
    t2 = (a.lgamma() - b.lgamma()).sum(-1)
    t3 = ((a - b) * (a.digamma() - a0.digamma().unsqueeze(-1))).sum(-1)
    return t1 - t2 + t3


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    # r_q / r_p - 1 - log(r_q / r_p)
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    # a_q log(b_p / b_q) + log Gamma(a_q) - log Gamma(a_p) + (a_p - a_q) psi(a_p) + (b_q - b_p) a_p / b_p
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # -H(p) - E_p[k log(1 - q) + log q], with E_p[k] = 1/p - 1: -H(p) - log(1 - q) / p - logit(q)
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    # log(s_q / s_p) + |m_p - m_q| / s_q + (s_p / s_q) e^(-|m_p - m_q| / s_p) - 1
    ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -ratio.log() + diff / q.scale + ratio * (-diff / p.scale).exp() - 1


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    # r_p log(r_p / r_q) - (r_p - r_q)
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # an invertible map leaves KL unchanged: the bases' KL, when both use the same transforms
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    # log(s_q / s_p) + (m_p - m_q) / s_q + gamma (r - 1) + e^((m_q - m_p) / s_q) Gamma(1 + r) - 1, r = s_p / s_q
    r = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    return -r.log() + shift + EULER_GAMMA * (r - 1) + ((1 + r).lgamma() - shift).exp() - 1


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    # a_q log(s_p / s_q) - log(a_q / a_p) + a_q / a_p - 1, inf where p reaches below q's scale
    ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - ratio.log() + ratio - 1
    return minigrad.where(p.scale < q.scale, math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    # -H(p) - E_p[log q(x)] = -H(p) - log r + r E_p[x]
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    # -H(p) + log(sqrt(2 pi) s) + E_p[(x - m)^2] / (2 s^2), with E_p[(x - m)^2] = var_p + (E_p[x] - m)^2
    return (-p.entropy() + 0.5 * math.log(2 * math.pi) + q.scale.log()
            + (p.variance + (p.mean - q.loc).pow(2)) / (2 * q.scale.pow(2)))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # -H(p) + log(b - a); inf unless [a, b) covers [0, 1] (PyTorch counts an end that touches 0 or 1 as not covering)
    result = -p.entropy() + (q.high - q.low).log()
    return minigrad.where((q.low >= 0) | (q.high <= 1), math.inf, result)


def _kl_infinite(p, q):
    # q puts no mass where p does (a support p reaches beyond q's): KL is inf for every batch entry
    return minigrad.full_like(p.mean, math.inf)


for _p, _qs in [(Beta, [Pareto]), (ContinuousBernoulli, [Pareto]), (Exponential, [Beta, ContinuousBernoulli, Pareto, Uniform]),
                (Gamma, [Beta, ContinuousBernoulli, Pareto, Uniform]),
                (Gumbel, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform]),
                (Laplace, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform]),
                (Normal, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform]),
                (Pareto, [Beta, ContinuousBernoulli, Uniform]), (Poisson, [Bernoulli, Binomial])]:
    for _q in _qs:
        register_kl(_p, _q)(_kl_infinite)
