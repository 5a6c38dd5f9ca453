"""`kl_divergence(p, q)`: KL(p || q) = E_p[log p(x) - log q(x)], for the pairs registered with `register_kl`."""
import math

import minigrad

from .bernoulli import Bernoulli
from .categorical import Categorical, OneHotCategorical
from .independent import Independent, _sum_rightmost
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _half_log_det
from .normal import Normal
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


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    # KL = (tr(Sq^-1 Sp) + |Lq^-1 (mu_q - mu_p)|^2 - D) / 2 + log sqrt(det Sq) - log sqrt(det Sp),
    # tr(Sq^-1 Sp) = |Lq^-1 Lp|_F^2
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with" + " " * 26 +  # (PyTorch's text, spaces
                         "different event shapes cannot be computed")  # and all)
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    D = p.event_shape[0]
    batch = tuple(minigrad.broadcast_shapes(tuple(Lp.shape[:-2]), tuple(Lq.shape[:-2])))
    Lp, Lq = Lp.expand(batch + (D, D)), Lq.expand(batch + (D, D))
    trace = minigrad.linalg.solve_triangular(Lq, Lp, upper=False).pow(2).sum((-2, -1))
    m = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return _half_log_det(Lq) - _half_log_det(Lp) + 0.5 * (trace + m - D)
