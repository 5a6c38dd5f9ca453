"""`kl_divergence(p, q)`: KL(p || q) = E_p[log p(x) - log q(x)], for the pairs registered with `register_kl`."""
import math

import minigrad

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .one_hot_categorical import OneHotCategorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import EULER_GAMMA, Gumbel
from .half_normal import HalfNormal
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
from .wishart import Wishart, _mvdigamma

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


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    # n_q/2 log(|V_q| / |V_p|) + n_p/2 (tr(V_q^-1 V_p) - d) + mvlgamma(n_q/2) - mvlgamma(n_p/2) + (n_p - n_q)/2 mvdigamma(n_p/2)
    n_p, n_q, d = p.df, q.df, p.event_shape[-1]
    l_p, l_q = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_log_det_ratio = l_q.diagonal(0, -2, -1).log().sum(-1) - l_p.diagonal(0, -2, -1).log().sum(-1)
    trace = minigrad.linalg.solve_triangular(l_q, l_p, upper=False).pow(2).sum((-2, -1))  # |L_q^-1 L_p|_F^2
    return (n_q * half_log_det_ratio + n_p / 2 * (trace - d) + minigrad.mvlgamma(n_q / 2, d)
            - minigrad.mvlgamma(n_p / 2, d) + (n_p - n_q) / 2 * _mvdigamma(n_p / 2, d))


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


# ---- between families: KL(p || q) = -H(p) - E_p[log q(x)], with E_p[.] from p's moments -----------------------------
def _uniform_mean_log(low, high):
    # E[log x] for x ~ Uniform(low, high), low >= 0: (h log h - l log l) / (h - l) - 1
    return (minigrad.xlogy(high, high) - minigrad.xlogy(low, low)) / (high - low) - 1


def _cross_entropy_exponential(q, mean):
    # -E_p[log q(x)] = -log r + r E_p[x]
    return -q.rate.log() + q.rate * mean


def _cross_entropy_gamma(q, mean, mean_log):
    # -E_p[log q(x)] = log Gamma(k) - k log r - (k - 1) E_p[log x] + r E_p[x]
    k, r = q.concentration, q.rate
    return k.lgamma() - k * r.log() - (k - 1) * mean_log + r * mean


def _cross_entropy_normal(q, mean, variance):
    # -E_p[log q(x)] = log(sqrt(2 pi) s) + (Var_p + (E_p[x] - m)^2) / (2 s^2)
    return 0.5 * math.log(2 * math.pi) + q.scale.log() + (variance + (mean - q.loc).pow(2)) / (2 * q.scale.pow(2))


def _cross_entropy_gumbel(q, mean, log_mgf):
    # -E_p[log q(x)] = log s + (E_p[x] - m) / s + e^(m / s) E_p[e^(-x / s)], log_mgf = log E_p[e^(-x / s)]
    return q.scale.log() + (mean - q.loc) / q.scale + (q.loc / q.scale + log_mgf).exp()


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # -H(p) - E_p[x log r - r - log x!], log x! = 0 on {0, 1}
    return -p.entropy() - p.probs * q.rate.log() + q.rate


@register_kl(Beta, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
@register_kl(Gamma, Exponential)
def _kl_to_exponential(p, q):
    return -p.entropy() + _cross_entropy_exponential(q, p.mean)


def _pareto_mean(p):
    # a s / (a - 1), unclamped: the entries where it is infinite are masked, and must not poison the gradients
    return p.alpha * p.scale / (p.alpha - 1)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    # inf where p's mean is (alpha <= 1)
    result = -p.entropy() + _cross_entropy_exponential(q, _pareto_mean(p))
    return minigrad.where(p.alpha <= 1, math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    return minigrad.where(p.low < 0, math.inf, _kl_to_exponential(p, q))


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    # E_p[log x] = psi(a) - psi(a + b)
    mean_log = p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    return -p.entropy() + _cross_entropy_gamma(q, p.mean, mean_log)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    # E_p[log x] = -gamma - log r_p
    return -p.entropy() + _cross_entropy_gamma(q, p.mean, -EULER_GAMMA - p.rate.log())


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    # E_p[log x] = log scale + 1 / alpha; inf where p's mean is (alpha <= 1)
    result = -p.entropy() + _cross_entropy_gamma(q, _pareto_mean(p), p.scale.log() + p.alpha.reciprocal())
    return minigrad.where(p.alpha <= 1, math.inf, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _cross_entropy_gamma(q, p.mean, _uniform_mean_log(p.low, p.high))
    return minigrad.where(p.low < 0, math.inf, result)


@register_kl(Beta, Normal)
@register_kl(ContinuousBernoulli, Normal)
@register_kl(Exponential, Normal)
@register_kl(Gamma, Normal)
@register_kl(Gumbel, Normal)
@register_kl(Laplace, Normal)
@register_kl(Uniform, Normal)
def _kl_to_normal(p, q):
    return -p.entropy() + _cross_entropy_normal(q, p.mean, p.variance)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    # Var_p = s^2 a / ((a - 1)^2 (a - 2)); inf where it is (alpha <= 2)
    variance = p.scale.pow(2) * p.alpha / ((p.alpha - 1).pow(2) * (p.alpha - 2))
    result = -p.entropy() + _cross_entropy_normal(q, _pareto_mean(p), variance)
    return minigrad.where(p.alpha <= 2, math.inf, result)


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    # E_p[e^(-x / s)] = r / (r + 1 / s)
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, -(1 / (p.rate * q.scale)).log1p())


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    # E_p[e^(-x / s)] = (1 + 1 / (r s))^(-k)
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, -p.concentration * (1 / (p.rate * q.scale)).log1p())


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    # E_p[e^(-x / s)] = e^(-m_p / s + s_p^2 / (2 s^2))
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, -p.loc / q.scale + 0.5 * (p.scale / q.scale).pow(2))


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    # E_p[e^(-x / s)] = s (e^(-l / s) - e^(-h / s)) / (h - l)
    mgf = q.scale * ((-p.low / q.scale).exp() - (-p.high / q.scale).exp()) / (p.high - p.low)
    return -p.entropy() + _cross_entropy_gumbel(q, p.mean, mgf.log())


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # -H(p) + log(2 b) + E_p|x - m| / b, E_p|x - m| = s sqrt(2 / pi) e^(-d^2 / (2 s^2)) + d erf(d / (s sqrt 2)), d = m_p - m
    d = p.loc - q.loc
    mean_abs = (p.scale * math.sqrt(2 / math.pi) * (-0.5 * (d / p.scale).pow(2)).exp()
                + d * minigrad.erf(d / (p.scale * math.sqrt(2))))
    return -p.entropy() + (2 * q.scale).log() + mean_abs / q.scale


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    # -H(p) + log B(a, b) - (a - 1) E_p[log x] - (b - 1) E_p[log(1 - x)]; inf unless [l, h] lies in [0, 1]
    a, b = q.concentration1, q.concentration0
    mean_log = _uniform_mean_log(p.low, p.high)
    mean_log1m = _uniform_mean_log(1 - p.high, 1 - p.low)
    result = (-p.entropy() + a.lgamma() + b.lgamma() - (a + b).lgamma() - (a - 1) * mean_log
              - (b - 1) * mean_log1m)
    return minigrad.where((p.high > 1) | (p.low < 0), math.inf, result)


@register_kl(Uniform, ContinuousBernoulli)
@register_kl(Beta, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p, q):
    # -H(p) - E_p[x] l_q - log(1 - p_q) - log C(p_q); for a Uniform, inf unless (0, 1) lies strictly inside it
    result = -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()
    if isinstance(p, Uniform):  # (PyTorch counts a Uniform that ends at 0 or 1 as outside)
        result = minigrad.where((p.high >= 1) | (p.low <= 0), math.inf, result)
    return result


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    # -H(p) - log a - a log s + (a + 1) E_p[log x]; inf where p reaches below the scale s
    result = -p.entropy() - q.alpha.log() - q.alpha * q.scale.log() + (q.alpha + 1) * _uniform_mean_log(p.low, p.high)
    return minigrad.where(p.low < q.scale, math.inf, result)


@register_kl(Beta, Uniform)
@register_kl(ContinuousBernoulli, Uniform)
def _kl_to_uniform(p, q):
    # -H(p) + log(h - l); inf unless [l, h] covers [0, 1] (for a ContinuousBernoulli PyTorch counts an end at 0 or 1
    # as not covering)
    result = -p.entropy() + (q.high - q.low).log()
    if isinstance(p, ContinuousBernoulli):
        return minigrad.where((q.low >= 0) | (q.high <= 1), math.inf, result)
    return minigrad.where((q.low > 0) | (q.high < 1), math.inf, result)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    # the fallback for two exponential families with no pair of their own: none for different families (each family
    # here has its own same-family KL)
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot" + " " * 29 +
                                  "be computed using Bregman divergences")  # (PyTorch's text, spaces and all)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and "
                              f"q type {type(q).__name__}")


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


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
