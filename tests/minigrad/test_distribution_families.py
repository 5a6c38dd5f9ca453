"""The distribution families beyond test_distributions.py's (Gamma, Beta, Dirichlet, Laplace, Exponential, LogNormal,
Cauchy, StudentT, Gumbel, Weibull, Pareto, Poisson, Binomial, NegativeBinomial, Geometric, ContinuousBernoulli, the relaxed ones, MixtureSameFamily), TransformedDistribution with
the transforms, and their kl_divergence pairs: against torch.distributions (values and gradients in float64,
shapes, reprs, validation errors), and torch-free checks of sample statistics and of the reparameterized
gradients' expectations."""
import math

import numpy as np
import pytest

import minigrad
import minigrad.distributions as D
from minigrad.distributions import transforms as T


@pytest.fixture(autouse=True)
def _torch_default_checks(torch_validating_args):
    """PyTorch's own argument checks on, as in a fresh process (conftest.py)."""


def _numpy(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


A = [[0.7, 2.5, 9.0]]  # positive parameters
B = [[1.3, 0.4, 2.0]]
X_POS = [0.3, 1.7, 6.0]
X_UNIT = [0.2, 0.65, 0.9]
LOC = [[0.5, -1.0, 0.0]]


def _d(lib):
    return lib.distributions


def _tanh_normal(lib, m, s):
    return _d(lib).TransformedDistribution(_d(lib).Normal(m, s), [_d(lib).transforms.TanhTransform()])


def _affine_exp(lib, m, s):
    t = _d(lib).transforms
    return _d(lib).TransformedDistribution(_d(lib).Normal(m, s), [t.AffineTransform(1.0, 2.0), t.ExpTransform()])


def _mixture(lib, w, m, s):
    d = _d(lib)
    return d.MixtureSameFamily(d.Categorical(logits=w), d.Normal(m, s))


def _mixture2d(lib, w, m, s):
    d = _d(lib)
    return d.MixtureSameFamily(d.Categorical(logits=w), d.Independent(d.Normal(m, s), 1))


def _through(lib, transform, x, inverse=True, ladj=True):
    """A transform's y = f(x), f^-1(y) and log|det df/dx|, flattened into one vector (the cache off, so that
    the inverse is computed)."""
    y = transform(x)
    parts = [y.reshape(-1)]
    if inverse:
        parts.append(transform.inv(y).reshape(-1))
    if ladj:
        parts.append(transform.log_abs_det_jacobian(x, y).reshape(-1))
    return lib.cat(parts)


def _t(lib):
    return lib.distributions.transforms


def _c(lib):
    return lib.distributions.constraints


def _kl(lib, p_name, p_params, q_name, q_params):
    d = _d(lib)
    return d.kl_divergence(getattr(d, p_name)(*p_params), getattr(d, q_name)(*q_params))


X_MAT = [[[0.3, -1.2, 0.5], [0.7, 0.1, -0.4], [1.5, -0.2, 0.9]], [[-0.3, 0.2, 0.0], [0.4, -0.8, 0.6], [0.2, 0.5, -1.0]]]
X_VEC = [[0.3, -1.2, 0.5], [0.7, 0.1, -0.4]]

def _corr_tril():
    """Two 3 x 3 correlation Cholesky factors: rows of unit length with positive diagonals."""
    rng = np.random.default_rng(3)
    z = rng.standard_normal((2, 3, 3))
    c = z @ z.transpose(0, 2, 1) + 3 * np.eye(3)
    d = 1 / np.sqrt(np.diagonal(c, axis1=1, axis2=2))
    return np.linalg.cholesky(c * d[:, :, None] * d[:, None, :]).tolist()


CORR_TRIL = _corr_tril()
SPD = [[[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]], [[1.0, 0.5, 0.0], [0.5, 2.0, 0.4], [0.0, 0.4, 0.7]]]
SPD_X = [[[3.0, -0.4, 0.2], [-0.4, 2.0, 0.6], [0.2, 0.6, 4.0]], [[5.0, 1.0, 0.3], [1.0, 2.5, -0.2], [0.3, -0.2, 1.2]]]


def _wishart_stats(lib, d, x):
    """log_prob of a symmetrized value, mean, mode (finite: df > p + 1), variance and entropy, in one vector."""
    x = (x + x.mT) / 2
    return lib.cat([d.log_prob(x).reshape(-1), d.mean.reshape(-1), d.mode.reshape(-1), d.variance.reshape(-1),
                    d.entropy().reshape(-1)])


# (name, parameter values, f(lib, *parameters) -> tensor); the same function runs with lib = torch and minigrad
CASES = [
    ("softmax_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).SoftmaxTransform(), x, ladj=False)),
    ("stick_breaking_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).StickBreakingTransform(), x)),
    ("independent_transform", [X_VEC],
     lambda lib, x: _through(lib, _t(lib).IndependentTransform(_t(lib).SigmoidTransform(), 1), x)),
    ("reshape_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).ReshapeTransform((3,), (3, 1)), x)),
    ("cat_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).CatTransform(
        [_t(lib).ExpTransform(), _t(lib).AffineTransform(1.0, -2.0)], dim=-1, lengths=[1, 2]), x)),
    ("cat_transform_batch_dim", [X_VEC], lambda lib, x: _through(lib, _t(lib).CatTransform(
        [_t(lib).ExpTransform(), _t(lib).SigmoidTransform()], dim=0), x)),
    ("cat_transform_event_dims", [X_VEC], lambda lib, x: lib.cat([_through(lib, _t(lib).CatTransform(
        [_t(lib).IndependentTransform(_t(lib).ExpTransform(), 1), _t(lib).IndependentTransform(_t(lib).SigmoidTransform(), 1)],
        dim=d, lengths=[1, 1] if d == 0 else [1, 2]), x) for d in (0, -1)])),
    ("stack_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).StackTransform(
        [_t(lib).ExpTransform(), _t(lib).SigmoidTransform(), _t(lib).TanhTransform()], dim=1), x)),
    ("cumulative_distribution_transform", LOC + B, lambda lib, m, s: _through(
        lib, _t(lib).CumulativeDistributionTransform(_d(lib).Normal(m, s)), _f64(lib, [0.2, -3.0, 1.0]))),
    ("lower_cholesky_transform", [X_MAT], lambda lib, x: _through(lib, _t(lib).LowerCholeskyTransform(), x, ladj=False)),
    ("positive_definite_transform", [X_MAT],
     lambda lib, x: _through(lib, _t(lib).PositiveDefiniteTransform(), x, ladj=False)),
    ("corr_cholesky_transform", [X_VEC], lambda lib, x: _through(lib, _t(lib).CorrCholeskyTransform(), x)),
    ("corr_cholesky_transform_4x4", [[0.3, -1.2, 0.5, 0.7, 0.1, -0.4]],
     lambda lib, x: _through(lib, _t(lib).CorrCholeskyTransform(), x)),
    ("biject_to_interval_and_simplex", [X_VEC], lambda lib, x: lib.cat([
        _through(lib, _d(lib).biject_to(_c(lib).interval(-1.0, 3.0)), x),
        _through(lib, _d(lib).biject_to(_c(lib).simplex), x),
        _through(lib, _d(lib).biject_to(_c(lib).independent(_c(lib).positive, 1)), x),
        _through(lib, _d(lib).biject_to(_c(lib).less_than(2.0)), x)])),
    ("transform_to_simplex_and_cholesky", [X_MAT], lambda lib, x: lib.cat([
        _through(lib, _d(lib).transform_to(_c(lib).simplex), x, ladj=False),
        _through(lib, _d(lib).transform_to(_c(lib).lower_cholesky), x, ladj=False),
        _through(lib, _d(lib).transform_to(_c(lib).positive_definite), x, ladj=False)])),
    ("gamma_log_prob", A + B, lambda lib, a, b: _d(lib).Gamma(a, b).log_prob(_f64(lib, X_POS))),
    ("gamma_entropy", A + B, lambda lib, a, b: _d(lib).Gamma(a, b).entropy()),
    ("gamma_moments", A + B, lambda lib, a, b: lib.stack([_d(lib).Gamma(a, b).mean, _d(lib).Gamma(a, b).mode,
                                                          _d(lib).Gamma(a, b).variance, _d(lib).Gamma(a, b).stddev])),
    ("gamma_cdf", B, lambda lib, b: _d(lib).Gamma(_f64(lib, A[0]), b).cdf(_f64(lib, X_POS))),  # (no d/d alpha)
    ("chi2_log_prob", A, lambda lib, k: _d(lib).Chi2(k).log_prob(_f64(lib, X_POS))),
    ("exponential_log_prob", B, lambda lib, r: _d(lib).Exponential(r).log_prob(_f64(lib, [[0.0], [1.5]]))),
    ("exponential_all", B, lambda lib, r: lib.stack([
        _d(lib).Exponential(r).entropy(), _d(lib).Exponential(r).cdf(_f64(lib, X_POS)),
        _d(lib).Exponential(r).icdf(_f64(lib, X_UNIT)), _d(lib).Exponential(r).mean, _d(lib).Exponential(r).mode,
        _d(lib).Exponential(r).variance, _d(lib).Exponential(r).stddev])),
    ("laplace_all", LOC + B, lambda lib, m, s: lib.stack([
        _d(lib).Laplace(m, s).log_prob(_f64(lib, [0.2, -3.0, 0.0])), _d(lib).Laplace(m, s).entropy(),
        _d(lib).Laplace(m, s).cdf(_f64(lib, [0.2, -3.0, 1.0])), _d(lib).Laplace(m, s).icdf(_f64(lib, X_UNIT)),
        _d(lib).Laplace(m, s).mean, _d(lib).Laplace(m, s).variance, _d(lib).Laplace(m, s).stddev])),
    ("beta_log_prob", A + B, lambda lib, a, b: _d(lib).Beta(a, b).log_prob(_f64(lib, X_UNIT))),
    ("beta_entropy", A + B, lambda lib, a, b: _d(lib).Beta(a, b).entropy()),
    ("beta_moments", A + B, lambda lib, a, b: lib.stack([_d(lib).Beta(a, b).mean, _d(lib).Beta(a, b).variance])),
    ("beta_mode", [[2.5, 3.0]] + [[1.5, 4.0]], lambda lib, a, b: _d(lib).Beta(a, b).mode),
    ("beta_concentrations", A + B, lambda lib, a, b: _d(lib).Beta(a, b).concentration1
     + 2 * _d(lib).Beta(a, b).concentration0),
    ("dirichlet_log_prob", [[[0.7, 2.5, 3.0], [1.2, 0.5, 4.0]]],
     lambda lib, c: _d(lib).Dirichlet(c).log_prob(_f64(lib, [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]))),
    ("dirichlet_entropy", [[[0.7, 2.5, 3.0], [1.2, 0.5, 4.0]]], lambda lib, c: _d(lib).Dirichlet(c).entropy()),
    ("dirichlet_moments", [[[0.7, 2.5, 3.0], [1.2, 0.5, 4.0]]],
     lambda lib, c: lib.stack([_d(lib).Dirichlet(c).mean, _d(lib).Dirichlet(c).variance])),
    ("dirichlet_mode", [[[1.7, 2.5, 3.0], [0.2, 0.5, 0.4]]], lambda lib, c: _d(lib).Dirichlet(c).mode),
    ("lognormal_all", LOC + B, lambda lib, m, s: lib.stack([
        _d(lib).LogNormal(m, s).log_prob(_f64(lib, X_POS)), _d(lib).LogNormal(m, s).entropy(),
        _d(lib).LogNormal(m, s).cdf(_f64(lib, X_POS)), _d(lib).LogNormal(m, s).icdf(_f64(lib, X_UNIT)),
        _d(lib).LogNormal(m, s).mean, _d(lib).LogNormal(m, s).mode, _d(lib).LogNormal(m, s).variance])),
    ("cauchy_all", LOC + B, lambda lib, m, s: lib.stack([
        _d(lib).Cauchy(m, s).log_prob(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).Cauchy(m, s).entropy(),
        _d(lib).Cauchy(m, s).cdf(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).Cauchy(m, s).icdf(_f64(lib, X_UNIT)),
        _d(lib).Cauchy(m, s).mode])),
    ("studentt_all", [[0.7, 2.5, 9.0]] + LOC + B, lambda lib, df, m, s: lib.stack([
        _d(lib).StudentT(df, m, s).log_prob(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).StudentT(df, m, s).entropy(),
        _d(lib).StudentT(df, m, s).mode])),
    ("studentt_moments", [[1.5, 2.5, 9.0]] + LOC + B, lambda lib, df, m, s: lib.stack([
        _d(lib).StudentT(df, m, s).mean, _d(lib).StudentT(df, m, s).variance])),
    ("poisson_log_prob", B, lambda lib, r: _d(lib).Poisson(r).log_prob(_f64(lib, [[0.0, 3.0, 1.0], [2.0, 0.0, 5.0]]))),
    ("poisson_moments", B, lambda lib, r: lib.stack([_d(lib).Poisson(r).mean, _d(lib).Poisson(r).mode,
                                                     _d(lib).Poisson(r).variance])),
    ("binomial_probs_log_prob", [[0.2, 0.5, 0.9]],
     lambda lib, p: _d(lib).Binomial(_f64(lib, [5.0, 10.0, 3.0]), p).log_prob(_f64(lib, [0.0, 4.0, 3.0]))),
    ("binomial_logits_all", [[-1.0, 0.0, 2.0]], lambda lib, lg: lib.stack([
        _d(lib).Binomial(6, logits=lg).log_prob(_f64(lib, [0.0, 4.0, 6.0])), _d(lib).Binomial(6, logits=lg).entropy(),
        _d(lib).Binomial(6, logits=lg).mean, _d(lib).Binomial(6, logits=lg).mode,
        _d(lib).Binomial(6, logits=lg).variance])),
    ("negative_binomial_probs", A + [[0.2, 0.5, 0.9]], lambda lib, r, p: lib.stack([
        _d(lib).NegativeBinomial(r, p).log_prob(_f64(lib, [0.0, 4.0, 13.0])), _d(lib).NegativeBinomial(r, p).mean,
        _d(lib).NegativeBinomial(r, p).variance, _d(lib).NegativeBinomial(r, p).mode])),
    ("negative_binomial_logits", [[-1.0, 0.0, 2.0]], lambda lib, lg: lib.stack([
        _d(lib).NegativeBinomial(_f64(lib, [0.0, 3.0, 2.5]), logits=lg).log_prob(_f64(lib, [0.0, 4.0, 7.0])),
        _d(lib).NegativeBinomial(_f64(lib, [0.0, 3.0, 2.5]), logits=lg).mean])),
    ("geometric_all", [[0.2, 0.5, 0.9]], lambda lib, p: lib.stack([
        _d(lib).Geometric(p).log_prob(_f64(lib, [0.0, 4.0, 2.0])), _d(lib).Geometric(p).entropy(),
        _d(lib).Geometric(p).mean, _d(lib).Geometric(p).variance])),
    ("geometric_logits_log_prob", [[-1.0, 0.0, 2.0]],
     lambda lib, lg: _d(lib).Geometric(logits=lg).log_prob(_f64(lib, [0.0, 4.0, 2.0]))),
    ("relaxed_bernoulli_log_prob", [[0.5]] + [[-1.0, 0.3, 2.0]],
     lambda lib, t, lg: _d(lib).RelaxedBernoulli(t, logits=lg).log_prob(_f64(lib, X_UNIT))),
    ("relaxed_onehot_log_prob", [[0.7]] + [[[-1.0, 0.3, 2.0], [0.5, 0.5, 0.0]]],
     lambda lib, t, lg: _d(lib).RelaxedOneHotCategorical(t, logits=lg).log_prob(
         _f64(lib, [[0.2, 0.5, 0.3], [0.05, 0.9, 0.05]]))),
    ("tanh_normal_log_prob", LOC + B,
     lambda lib, m, s: _tanh_normal(lib, m, s).log_prob(_f64(lib, [0.2, -0.99, 0.5]))),
    ("affine_exp_log_prob", LOC + B, lambda lib, m, s: _affine_exp(lib, m, s).log_prob(_f64(lib, X_POS))),
    ("affine_exp_cdf_icdf", LOC + B, lambda lib, m, s: lib.stack([
        _affine_exp(lib, m, s).cdf(_f64(lib, X_POS)), _affine_exp(lib, m, s).icdf(_f64(lib, X_UNIT))])),
    ("decreasing_affine_cdf", LOC + B, lambda lib, m, s: _d(lib).TransformedDistribution(
        _d(lib).Normal(m, s), _d(lib).transforms.AffineTransform(0.5, -2.0)).cdf(_f64(lib, [0.1, 2.0, -1.0]))),
    ("sigmoid_normal_log_prob", LOC + B, lambda lib, m, s: _d(lib).TransformedDistribution(
        _d(lib).Normal(m, s), _d(lib).transforms.SigmoidTransform()).log_prob(_f64(lib, X_UNIT))),
    ("affine_tensor_event_dim", [[[0.5, -1.0], [0.0, 1.0]]] + [[2.0, -0.5]], lambda lib, m, sc: _d(lib).TransformedDistribution(
        _d(lib).Independent(_d(lib).Normal(m, 1.0), 1), _d(lib).transforms.AffineTransform(0.3, sc, event_dim=1))
     .log_prob(_f64(lib, [[0.2, 0.1], [1.0, -2.0]]))),
    ("mixture_log_prob", [[0.3, -0.2, 1.0]] + LOC + B,
     lambda lib, w, m, s: _mixture(lib, w, m, s).log_prob(_f64(lib, [[0.1], [-2.0], [1.5]]))),
    ("mixture_moments_cdf", [[0.3, -0.2, 1.0]] + LOC + B, lambda lib, w, m, s: lib.stack([
        _mixture(lib, w, m, s).mean, _mixture(lib, w, m, s).variance, _mixture(lib, w, m, s).cdf(_f64(lib, 0.3))])),
    ("mixture_2d_log_prob", [[[0.3, -0.2], [1.0, 0.0]]] + [[[[0.5, -1.0], [0.0, 2.0]], [[1.0, 1.0], [0.2, 0.1]]]]
     + [[[[1.3, 0.4], [2.0, 1.0]], [[0.5, 0.6], [0.7, 0.8]]]],
     lambda lib, w, m, s: _mixture2d(lib, w, m, s).log_prob(_f64(lib, [[[0.1, 0.2]], [[1.0, -1.0]]]))),
    ("mixture_2d_moments", [[[0.3, -0.2], [1.0, 0.0]]] + [[[[0.5, -1.0], [0.0, 2.0]], [[1.0, 1.0], [0.2, 0.1]]]]
     + [[[[1.3, 0.4], [2.0, 1.0]], [[0.5, 0.6], [0.7, 0.8]]]],
     lambda lib, w, m, s: lib.stack([_mixture2d(lib, w, m, s).mean, _mixture2d(lib, w, m, s).variance])),
    ("halfnormal_all", B, lambda lib, s: lib.stack([
        _d(lib).HalfNormal(s).log_prob(_f64(lib, X_POS)), _d(lib).HalfNormal(s).entropy(),
        _d(lib).HalfNormal(s).cdf(_f64(lib, X_POS)), _d(lib).HalfNormal(s).icdf(_f64(lib, X_UNIT)),
        _d(lib).HalfNormal(s).mean, _d(lib).HalfNormal(s).variance])),
    ("halfcauchy_all", B, lambda lib, s: lib.stack([
        _d(lib).HalfCauchy(s).log_prob(_f64(lib, X_POS)), _d(lib).HalfCauchy(s).entropy(),
        _d(lib).HalfCauchy(s).cdf(_f64(lib, X_POS)), _d(lib).HalfCauchy(s).icdf(_f64(lib, X_UNIT))])),
    # ContinuousBernoulli: 0.4995 lies in the band around 1/2 where its Taylor series stand in for the closed forms
    ("continuous_bernoulli_all", [[0.2, 0.4995, 0.9]], lambda lib, p: lib.stack([
        _d(lib).ContinuousBernoulli(p).log_prob(_f64(lib, X_UNIT)), _d(lib).ContinuousBernoulli(p).entropy(),
        _d(lib).ContinuousBernoulli(p).mean, _d(lib).ContinuousBernoulli(p).variance,
        _d(lib).ContinuousBernoulli(p).stddev, _d(lib).ContinuousBernoulli(p).cdf(_f64(lib, [0.2, 0.0, 1.0])),
        _d(lib).ContinuousBernoulli(p).icdf(_f64(lib, X_UNIT))])),
    ("continuous_bernoulli_logits", [[-3.0, 0.001, 2.0]], lambda lib, lg: lib.stack([
        _d(lib).ContinuousBernoulli(logits=lg).log_prob(_f64(lib, [0.0, 0.65, 1.0])),
        _d(lib).ContinuousBernoulli(logits=lg).entropy(), _d(lib).ContinuousBernoulli(logits=lg).mean])),
    ("gumbel_all", LOC + B, lambda lib, m, s: lib.stack([
        _d(lib).Gumbel(m, s).log_prob(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).Gumbel(m, s).entropy(),
        _d(lib).Gumbel(m, s).cdf(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).Gumbel(m, s).icdf(_f64(lib, X_UNIT)),
        _d(lib).Gumbel(m, s).mean, _d(lib).Gumbel(m, s).mode, _d(lib).Gumbel(m, s).variance,
        _d(lib).Gumbel(m, s).stddev])),
    ("weibull_all", B + A, lambda lib, s, k: lib.stack([
        _d(lib).Weibull(s, k).log_prob(_f64(lib, X_POS)), _d(lib).Weibull(s, k).entropy(),
        _d(lib).Weibull(s, k).cdf(_f64(lib, X_POS)), _d(lib).Weibull(s, k).icdf(_f64(lib, X_UNIT)),
        _d(lib).Weibull(s, k).mean, _d(lib).Weibull(s, k).variance])),
    ("weibull_mode", B + [[1.5, 2.5, 9.0]], lambda lib, s, k: _d(lib).Weibull(s, k).mode),
    ("pareto_all", [[0.2, 0.4, 1.0]] + [[2.5, 3.5, 9.0]], lambda lib, s, a: lib.stack([
        _d(lib).Pareto(s, a).log_prob(_f64(lib, X_POS)), _d(lib).Pareto(s, a).entropy(),
        _d(lib).Pareto(s, a).cdf(_f64(lib, X_POS)), _d(lib).Pareto(s, a).icdf(_f64(lib, X_UNIT)),
        _d(lib).Pareto(s, a).mean, _d(lib).Pareto(s, a).mode, _d(lib).Pareto(s, a).variance])),
    ("inverse_gamma_all", [[0.7, 2.5, 9.0]] + B, lambda lib, c, r: lib.stack([
        _d(lib).InverseGamma(c, r).log_prob(_f64(lib, X_POS)), _d(lib).InverseGamma(c, r).entropy(),
        _d(lib).InverseGamma(c, r).mean, _d(lib).InverseGamma(c, r).mode, _d(lib).InverseGamma(c, r).variance])),
    ("inverse_gamma_cdf", B, lambda lib, r: _d(lib).InverseGamma(_f64(lib, [0.7, 2.5, 9.0]), r).cdf(_f64(lib, X_POS))),
    ("kumaraswamy_all", A + B, lambda lib, a, b: lib.stack([
        _d(lib).Kumaraswamy(a, b).log_prob(_f64(lib, X_UNIT)), _d(lib).Kumaraswamy(a, b).entropy(),
        _d(lib).Kumaraswamy(a, b).mean, _d(lib).Kumaraswamy(a, b).variance,
        _d(lib).Kumaraswamy(a, b).cdf(_f64(lib, X_UNIT)), _d(lib).Kumaraswamy(a, b).icdf(_f64(lib, X_UNIT))])),
    ("logistic_normal_log_prob", [[[0.5, -1.0], [0.0, 0.3]]] + [[[1.3, 0.4], [2.0, 0.7]]],
     lambda lib, m, s: _d(lib).LogisticNormal(m, s).log_prob(_f64(lib, [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]]))),
    ("multinomial_probs_all", [[[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]]], lambda lib, p: lib.stack([
        _d(lib).Multinomial(4, probs=p).log_prob(_f64(lib, [[1.0, 1.0, 2.0], [0.0, 0.0, 4.0]])),
        _d(lib).Multinomial(4, probs=p).entropy()])),
    ("multinomial_moments", [[[0.2, 0.3, 0.5], [0.1, 0.0, 0.9]]], lambda lib, p: lib.stack([
        _d(lib).Multinomial(4, probs=p).mean, _d(lib).Multinomial(4, probs=p).variance])),
    ("multinomial_logits_all", [[-1.0, 0.3, 2.0]], lambda lib, lg: lib.cat([
        _d(lib).Multinomial(3, logits=lg).log_prob(_f64(lib, [[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]])),
        _d(lib).Multinomial(3, logits=lg).entropy().reshape(1)])),
    ("multinomial_impossible_outcome", [[-1.0, 2.0]], lambda lib, lg: _d(lib).Multinomial(
        3, logits=lib.cat([lg, _f64(lib, [float("-inf")])])).log_prob(_f64(lib, [1.0, 2.0, 0.0]))),
    ("von_mises_all", LOC + [[0.7, 2.5, 9.0]], lambda lib, m, k: lib.stack([  # (kappa on both sides of 3.75)
        _d(lib).VonMises(m, k).log_prob(_f64(lib, [0.2, -3.0, 4.0])), _d(lib).VonMises(m, k).mean,
        _d(lib).VonMises(m, k).mode, _d(lib).VonMises(m, k).variance])),
    ("fisher_snedecor_all", [[0.7, 2.5, 9.0]] + [[1.5, 4.5, 12.0]], lambda lib, a, b: lib.stack([
        _d(lib).FisherSnedecor(a, b).log_prob(_f64(lib, X_POS)), _d(lib).FisherSnedecor(a, b).mean,
        _d(lib).FisherSnedecor(a, b).mode, _d(lib).FisherSnedecor(a, b).variance])),  # (nan where undefined)
    # (GeneralizedPareto's log_prob, cdf and log_survival_function: PyTorch 2.13's fail in float64, see
    # test_generalized_pareto_densities_match_torch_in_float32)
    ("generalized_pareto_all", LOC + B + [[-0.4, 0.0, 0.6]], lambda lib, m, s, k: lib.stack([
        _d(lib).GeneralizedPareto(m, s, k).icdf(_f64(lib, X_UNIT)), _d(lib).GeneralizedPareto(m, s, k).entropy(),
        _d(lib).GeneralizedPareto(m, s, k).mean, _d(lib).GeneralizedPareto(m, s, k).mode,
        _d(lib).GeneralizedPareto(m, s, k).variance])),  # (the variance is nan for xi >= 1/2)
    # kl_divergence pairs
    ("kl_gamma", A + B + B + A, lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Gamma(a, b), _d(lib).Gamma(c, d))),
    ("kl_beta", A + B + B + A, lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Beta(a, b), _d(lib).Beta(c, d))),
    ("kl_dirichlet", [[[0.7, 2.5, 3.0]], [[1.2, 0.5, 4.0]]],
     lambda lib, a, b: _d(lib).kl_divergence(_d(lib).Dirichlet(a), _d(lib).Dirichlet(b))),
    ("kl_laplace", LOC + B + B + A,
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Laplace(a, b), _d(lib).Laplace(c, d))),
    ("kl_exponential", A + B, lambda lib, a, b: _d(lib).kl_divergence(_d(lib).Exponential(a), _d(lib).Exponential(b))),
    ("kl_poisson", A + B, lambda lib, a, b: _d(lib).kl_divergence(_d(lib).Poisson(a), _d(lib).Poisson(b))),
    ("kl_cauchy", LOC + B + B + A,
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Cauchy(a, b), _d(lib).Cauchy(c, d))),
    ("kl_geometric", [[0.2, 0.5, 0.9]] + [[0.6, 0.1, 0.3]],
     lambda lib, p, q: _d(lib).kl_divergence(_d(lib).Geometric(p), _d(lib).Geometric(q))),
    ("kl_binomial", [[0.2, 0.5, 0.9]] + [[0.6, 0.1, 0.3]],
     lambda lib, p, q: _d(lib).kl_divergence(_d(lib).Binomial(4, p), _d(lib).Binomial(4, q))),
    ("kl_continuous_bernoulli", [[0.2, 0.4995, 0.9]] + [[-1.0, 0.3, 2.0]], lambda lib, p, lg: _d(lib).kl_divergence(
        _d(lib).ContinuousBernoulli(p), _d(lib).ContinuousBernoulli(logits=lg))),
    ("kl_beta_continuous_bernoulli", A + B + [[0.2, 0.5, 0.9]], lambda lib, a, b, p: _d(lib).kl_divergence(
        _d(lib).Beta(a, b), _d(lib).ContinuousBernoulli(p))),
    ("kl_gumbel", LOC + B + B + A,
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Gumbel(a, b), _d(lib).Gumbel(c, d))),
    ("kl_pareto", [[0.5, 2.0, 1.0]] + A + [[1.0, 1.0, 0.3]] + B,  # (the first entry is inf: p reaches below q's scale)
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).Pareto(a, b), _d(lib).Pareto(c, d))),
    ("kl_halfnormal", B + A,  # (through the TransformedDistribution pair: the same AbsTransform on both)
     lambda lib, a, b: _d(lib).kl_divergence(_d(lib).HalfNormal(a), _d(lib).HalfNormal(b))),
    ("kl_continuous_bernoulli_exponential", [[0.2, 0.4995, 0.9]] + B, lambda lib, p, r: _d(lib).kl_divergence(
        _d(lib).ContinuousBernoulli(p), _d(lib).Exponential(r))),
    ("kl_continuous_bernoulli_normal", [[0.2, 0.4995, 0.9]] + LOC + B, lambda lib, p, m, s: _d(lib).kl_divergence(
        _d(lib).ContinuousBernoulli(p), _d(lib).Normal(m, s))),
    ("kl_continuous_bernoulli_uniform", [[0.2, 0.4995, 0.9]] + [[-0.5, 0.0, -1.0]] + [[1.5, 2.0, 1.0]],
     lambda lib, p, a, b: _d(lib).kl_divergence(_d(lib).ContinuousBernoulli(p), _d(lib).Uniform(a, b))),
    ("kl_lognormal", LOC + B + B + A,
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).LogNormal(a, b), _d(lib).LogNormal(c, d))),
    # kl_divergence between families ("kl_<p>_<q>": p's parameters, then q's)
    ("kl_bernoulli_poisson", [[0.2, 0.5, 0.9]] + B, lambda lib, p, r: _kl(lib, "Bernoulli", [p], "Poisson", [r])),
    ("kl_beta_exponential", A + B + B, lambda lib, a, b, r: _kl(lib, "Beta", [a, b], "Exponential", [r])),
    ("kl_beta_gamma", A + B + B + A, lambda lib, a, b, c, r: _kl(lib, "Beta", [a, b], "Gamma", [c, r])),
    ("kl_beta_normal", A + B + LOC + B, lambda lib, a, b, m, s: _kl(lib, "Beta", [a, b], "Normal", [m, s])),
    ("kl_beta_uniform", A + B + [[-0.5, 0.0, 0.1]] + [[1.5, 1.0, 1.0]],  # (the last is inf: [0.1, 1) misses 0)
     lambda lib, a, b, lo, hi: _kl(lib, "Beta", [a, b], "Uniform", [lo, hi])),
    ("kl_exponential_gamma", A + B + A, lambda lib, r, c, s: _kl(lib, "Exponential", [r], "Gamma", [c, s])),
    ("kl_exponential_gumbel", A + LOC + B, lambda lib, r, m, s: _kl(lib, "Exponential", [r], "Gumbel", [m, s])),
    ("kl_exponential_normal", A + LOC + B, lambda lib, r, m, s: _kl(lib, "Exponential", [r], "Normal", [m, s])),
    ("kl_gamma_exponential", A + B + A, lambda lib, c, r, s: _kl(lib, "Gamma", [c, r], "Exponential", [s])),
    ("kl_gamma_gumbel", A + B + LOC + B, lambda lib, c, r, m, s: _kl(lib, "Gamma", [c, r], "Gumbel", [m, s])),
    ("kl_gamma_normal", A + B + LOC + B, lambda lib, c, r, m, s: _kl(lib, "Gamma", [c, r], "Normal", [m, s])),
    ("kl_gumbel_normal", LOC + B + B + A, lambda lib, a, b, m, s: _kl(lib, "Gumbel", [a, b], "Normal", [m, s])),
    ("kl_laplace_normal", LOC + B + B + A, lambda lib, a, b, m, s: _kl(lib, "Laplace", [a, b], "Normal", [m, s])),
    ("kl_normal_gumbel", LOC + B + B + A, lambda lib, a, b, m, s: _kl(lib, "Normal", [a, b], "Gumbel", [m, s])),
    ("kl_normal_laplace", LOC + B + B + A, lambda lib, a, b, m, s: _kl(lib, "Normal", [a, b], "Laplace", [m, s])),
    ("kl_pareto_exponential", [[0.2, 0.4, 1.0]] + [[2.5, 0.5, 9.0]] + B,  # (the middle is inf: alpha <= 1)
     lambda lib, s, a, r: _kl(lib, "Pareto", [s, a], "Exponential", [r])),
    ("kl_pareto_gamma", [[0.2, 0.4, 1.0]] + [[2.5, 0.5, 9.0]] + A + B,
     lambda lib, s, a, c, r: _kl(lib, "Pareto", [s, a], "Gamma", [c, r])),
    ("kl_pareto_normal", [[0.2, 0.4, 1.0]] + [[2.5, 1.5, 9.0]] + LOC + B,  # (the middle is inf: alpha <= 2)
     lambda lib, s, a, m, sc: _kl(lib, "Pareto", [s, a], "Normal", [m, sc])),
    ("kl_uniform_beta", [[0.0, 0.3, -0.1]] + [[0.5, 1.0, 0.8]] + A + B,  # (the last is inf: below 0)
     lambda lib, lo, hi, a, b: _kl(lib, "Uniform", [lo, hi], "Beta", [a, b])),
    ("kl_uniform_continuous_bernoulli", [[0.0, 0.3, 0.1]] + [[0.5, 0.9, 0.8]] + [[0.2, 0.4995, 0.9]],
     lambda lib, lo, hi, p: _kl(lib, "Uniform", [lo, hi], "ContinuousBernoulli", [p])),
    ("kl_uniform_exponential", [[0.0, 0.3, -0.1]] + [[0.5, 1.0, 0.8]] + B,
     lambda lib, lo, hi, r: _kl(lib, "Uniform", [lo, hi], "Exponential", [r])),
    ("kl_uniform_gamma", [[0.0, 0.3, -0.1]] + [[0.5, 1.0, 0.8]] + A + B,
     lambda lib, lo, hi, c, r: _kl(lib, "Uniform", [lo, hi], "Gamma", [c, r])),
    ("kl_uniform_gumbel", [[-1.0, 0.3, 2.0]] + [[0.5, 1.0, 4.0]] + LOC + B,
     lambda lib, lo, hi, m, s: _kl(lib, "Uniform", [lo, hi], "Gumbel", [m, s])),
    ("kl_uniform_normal", [[-1.0, 0.3, 2.0]] + [[0.5, 1.0, 4.0]] + LOC + B,
     lambda lib, lo, hi, m, s: _kl(lib, "Uniform", [lo, hi], "Normal", [m, s])),
    ("kl_uniform_pareto", [[0.5, 0.3, 2.0]] + [[0.7, 1.0, 4.0]] + [[0.2, 0.4, 1.0]] + B,  # (the middle is inf)
     lambda lib, lo, hi, s, a: _kl(lib, "Uniform", [lo, hi], "Pareto", [s, a])),
    ("kl_chi2_exponential_and_back", A + B, lambda lib, k, r: lib.stack([  # (Chi2 dispatches as the Gamma it is)
        _kl(lib, "Chi2", [k], "Exponential", [r]), _kl(lib, "Exponential", [r], "Chi2", [k]),
        _kl(lib, "Chi2", [k], "Normal", [r, k]), _kl(lib, "Chi2", [k], "Gamma", [r, k])])),
    ("lkj_cholesky", [CORR_TRIL, [[0.5], [2.0]]],
     lambda lib, x, c: _d(lib).LKJCholesky(3, c.squeeze(-1)).log_prob(x)),
    ("wishart_covariance", [[4.0, 6.5], SPD, SPD_X], lambda lib, df, v, x: _wishart_stats(
        lib, _d(lib).Wishart(df, covariance_matrix=(v + v.mT) / 2), x)),
    ("wishart_precision", [[4.0, 6.5], SPD, SPD_X], lambda lib, df, v, x: _wishart_stats(
        lib, _d(lib).Wishart(df, precision_matrix=(v + v.mT) / 2), x)),
    ("wishart_scale_tril_number_df", [SPD[0], SPD_X[0]], lambda lib, v, x: _wishart_stats(  # (one matrix: PyTorch's
        lib, _d(lib).Wishart(5.0, scale_tril=lib.linalg.cholesky((v + v.mT) / 2)), x)),  # mean needs df's batch)
]


@pytest.mark.parametrize("name,params,fn", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(torch, name, params, fn):
    results = []
    for lib in (torch, minigrad):
        leaves = [lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in params]
        out = fn(lib, *leaves)
        weights = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).tolist(), dtype=lib.float64)
        (out * weights).sum().backward()
        results.append((tuple(out.shape), _numpy(out), [None if p.grad is None else _numpy(p.grad) for p in leaves]))
    (t_shape, t_out, t_grads), (m_shape, m_out, m_grads) = results
    assert m_shape == t_shape
    np.testing.assert_allclose(m_out, t_out, rtol=1e-9, atol=1e-12)
    assert [g is None for g in m_grads] == [g is None for g in t_grads]
    for m_grad, t_grad in zip(m_grads, t_grads):
        if t_grad is not None:
            np.testing.assert_allclose(m_grad, t_grad, rtol=1e-8, atol=1e-12)


# ---- shapes, reprs, constraints ------------------------------------------------------------------------------
def _builders(lib, batch):
    """The same distributions, built with `lib`, with parameters of batch shape `batch` (+ an event dim)."""
    d, t = lib.distributions, lib.distributions.transforms
    full = (lambda v: lib.full(batch, v)) if batch else (lambda v: v)
    return {
        "gamma": d.Gamma(full(2.0), full(1.5)),
        "chi2": d.Chi2(full(3.0)),
        "exponential": d.Exponential(full(2.0)),
        "laplace": d.Laplace(full(0.0), full(1.0)),
        "beta": d.Beta(full(2.0), full(3.0)),
        "dirichlet": d.Dirichlet(lib.ones(*batch, 4)),
        "lognormal": d.LogNormal(full(0.0), full(1.0)),
        "cauchy": d.Cauchy(full(0.0), full(1.0)),
        "studentt": d.StudentT(full(3.0)),
        "poisson": d.Poisson(full(2.0)),
        "binomial": d.Binomial(5, full(0.3)) if batch else d.Binomial(5, lib.tensor(0.3)),
        "geometric": d.Geometric(full(0.3)),
        "negative_binomial": d.NegativeBinomial(full(3.0), full(0.4)),
        "continuous_bernoulli": d.ContinuousBernoulli(full(0.3)),
        "relaxed_bernoulli": d.RelaxedBernoulli(lib.tensor(0.5), full(0.3)),
        "relaxed_onehot": d.RelaxedOneHotCategorical(lib.tensor(0.5), lib.ones(*batch, 4)),
        "halfnormal": d.HalfNormal(full(2.0)),
        "gumbel": d.Gumbel(full(0.5), full(2.0)),
        "weibull": d.Weibull(full(2.0), full(1.5)),
        "pareto": d.Pareto(full(1.0), full(3.0)),
        "halfcauchy": d.HalfCauchy(full(2.0)),
        "inverse_gamma": d.InverseGamma(full(2.0), full(1.5)),
        "kumaraswamy": d.Kumaraswamy(full(2.0), full(1.5)),
        "logistic_normal": d.LogisticNormal(lib.zeros(*batch, 3), lib.ones(*batch, 3)),
        "tanh_normal": d.TransformedDistribution(d.Normal(full(0.0), full(1.0)), [t.TanhTransform(cache_size=1)]),
        "mixture": d.MixtureSameFamily(d.Categorical(logits=lib.zeros(*batch, 3)), d.Normal(lib.zeros(*batch, 3), 1.0)),
        "multinomial": d.Multinomial(4, probs=lib.ones(*batch, 3)),
        "von_mises": d.VonMises(full(0.5), full(2.0)),
        "fisher_snedecor": d.FisherSnedecor(full(3.0), full(5.0)),
        "generalized_pareto": d.GeneralizedPareto(full(0.5), full(2.0), full(0.3)),
        "generalized_pareto_bounded": d.GeneralizedPareto(full(0.5), full(2.0), full(-0.3)),
        "lkj_cholesky": d.LKJCholesky(3, full(1.5)),
        "wishart": d.Wishart(full(5.0), covariance_matrix=2 * lib.eye(3).expand(*batch, 3, 3)),
    }


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 4)])
def test_shapes_dtypes_and_supports_match_torch(torch, batch, sample_shape):
    mine, theirs = _builders(minigrad, batch), _builders(torch, batch)
    for name in mine:
        m, t = mine[name], theirs[name]
        assert tuple(m.batch_shape) == tuple(t.batch_shape), name
        assert tuple(m.event_shape) == tuple(t.event_shape), name
        assert m.has_rsample == t.has_rsample, name
        assert repr(m.support) == repr(t.support), name
        assert {k: repr(v) for k, v in m.arg_constraints.items()} == \
            {k: repr(v) for k, v in t.arg_constraints.items()}, name
        x = m.sample(sample_shape)
        assert tuple(x.shape) == tuple(t.sample(sample_shape).shape), name
        assert str(x.dtype).split(".")[-1] == str(t.sample().dtype).split(".")[-1], name
        assert not x.requires_grad
        if t.has_rsample:
            assert tuple(m.rsample(sample_shape).shape) == tuple(t.rsample(sample_shape).shape), name
        value = t.sample(sample_shape)
        lp_t = t.log_prob(value)
        lp_m = m.log_prob(minigrad.tensor(value.tolist(), dtype=minigrad.float32))
        assert tuple(lp_m.shape) == tuple(lp_t.shape), name
        np.testing.assert_allclose(_numpy(lp_m), lp_t.tolist(), rtol=2e-5, atol=2e-5, err_msg=name)


def test_reprs_match_torch(torch):
    for name, m in _builders(minigrad, (3,)).items():
        assert repr(m) == repr(_builders(torch, (3,))[name]).replace("torch.", "minigrad."), name
    for name, m in _builders(minigrad, ()).items():
        assert repr(m) == repr(_builders(torch, ())[name]).replace("torch.", "minigrad."), name
    t = torch.distributions.transforms
    for mt, tt in [(T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)]),
                    t.ComposeTransform([t.ExpTransform(), t.AffineTransform(0.0, 2.0)])),
                   (T.TanhTransform().inv, t.TanhTransform().inv), (T.SigmoidTransform(), t.SigmoidTransform())]:
        assert repr(mt) == repr(tt)


def test_expand_matches_torch(torch):
    for name, m in _builders(minigrad, (3,)).items():
        t = _builders(torch, (3,))[name]
        me, te = m.expand((2, 3)), t.expand((2, 3))
        assert type(me) is type(m) and tuple(me.batch_shape) == tuple(te.batch_shape) == (2, 3), name
        assert tuple(me.event_shape) == tuple(te.event_shape), name
        assert tuple(me.sample((4,)).shape) == tuple(te.sample((4,)).shape), name
        value = te.sample()
        np.testing.assert_allclose(_numpy(me.log_prob(minigrad.tensor(value.tolist()))), te.log_prob(value).tolist(),
                                   rtol=2e-5, atol=2e-5, err_msg=name)


# ---- validation --------------------------------------------------------------------------------------------------
ERROR_CASES = [
    ("gamma_negative_rate", lambda lib: lib.distributions.Gamma(1.0, -1.0)),
    ("beta_negative", lambda lib: lib.distributions.Beta(lib.tensor([1.0, -2.0]), 1.0)),
    ("dirichlet_zero_dim", lambda lib: lib.distributions.Dirichlet(lib.tensor(1.0))),
    ("dirichlet_negative", lambda lib: lib.distributions.Dirichlet(lib.tensor([1.0, -2.0]))),
    ("dirichlet_value_not_simplex",
     lambda lib: lib.distributions.Dirichlet(lib.ones(3)).log_prob(lib.tensor([0.5, 0.4, 0.4]))),
    ("exponential_value_negative", lambda lib: lib.distributions.Exponential(1.0).log_prob(lib.tensor(-1.0))),
    ("laplace_zero_scale", lambda lib: lib.distributions.Laplace(0.0, 0.0)),
    ("beta_value_outside", lambda lib: lib.distributions.Beta(2.0, 2.0).log_prob(lib.tensor(1.5))),
    ("poisson_value_fraction", lambda lib: lib.distributions.Poisson(lib.tensor(2.0)).log_prob(lib.tensor(1.5))),
    ("binomial_neither", lambda lib: lib.distributions.Binomial(3)),
    ("binomial_value_above_count",
     lambda lib: lib.distributions.Binomial(3, lib.tensor(0.5)).log_prob(lib.tensor(4.0))),
    ("negative_binomial_neither", lambda lib: lib.distributions.NegativeBinomial(3.0)),
    ("negative_binomial_probs_one", lambda lib: lib.distributions.NegativeBinomial(3.0, lib.tensor([0.5, 1.0]))),
    ("negative_binomial_negative_count", lambda lib: lib.distributions.NegativeBinomial(-1.0, lib.tensor(0.5))),
    ("negative_binomial_value_fraction",
     lambda lib: lib.distributions.NegativeBinomial(3.0, lib.tensor(0.5)).log_prob(lib.tensor(1.5))),
    ("geometric_zero_probs", lambda lib: lib.distributions.Geometric(lib.tensor([0.5, 0.0]))),
    ("continuous_bernoulli_probs_above_one",  # checked before the clamp, and only when validate_args is given
     lambda lib: lib.distributions.ContinuousBernoulli(lib.tensor([0.5, 1.5]), validate_args=False)),
    ("continuous_bernoulli_value_outside",
     lambda lib: lib.distributions.ContinuousBernoulli(logits=lib.tensor(0.5)).log_prob(lib.tensor(1.5))),
    ("studentt_negative_df", lambda lib: lib.distributions.StudentT(-1.0)),
    ("lognormal_value_negative", lambda lib: lib.distributions.LogNormal(0.0, 1.0).log_prob(lib.tensor(-1.0))),
    ("gumbel_zero_scale", lambda lib: lib.distributions.Gumbel(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 0.0]))),
    ("weibull_negative_concentration", lambda lib: lib.distributions.Weibull(1.0, -2.0)),
    ("weibull_value_negative", lambda lib: lib.distributions.Weibull(1.0, 2.0).log_prob(lib.tensor(-1.0))),
    ("pareto_negative_alpha", lambda lib: lib.distributions.Pareto(1.0, lib.tensor([2.0, -1.0]))),
    ("pareto_value_below_scale", lambda lib: lib.distributions.Pareto(2.0, 3.0).log_prob(lib.tensor(1.0))),
    ("halfnormal_value_negative", lambda lib: lib.distributions.HalfNormal(1.0).log_prob(lib.tensor(-1.0))),
    ("halfcauchy_negative_scale", lambda lib: lib.distributions.HalfCauchy(lib.tensor([1.0, -1.0]))),
    ("tanh_value_outside", lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0), lib.distributions.transforms.TanhTransform()).log_prob(lib.tensor(2.0))),
    ("transforms_not_transforms",
     lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), [1])),
    ("transforms_wrong_type", lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), 1)),
    ("cache_size_two", lambda lib: lib.distributions.transforms.TanhTransform(cache_size=2)),
    ("mixture_not_categorical",
     lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Normal(0.0, 1.0),
                                                     lib.distributions.Normal(lib.zeros(3), 1.0))),
    ("mixture_count_mismatch",
     lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(logits=lib.zeros(2)),
                                                     lib.distributions.Normal(lib.zeros(3), 1.0))),
    ("mixture_batch_mismatch",
     lambda lib: lib.distributions.MixtureSameFamily(lib.distributions.Categorical(logits=lib.zeros(4, 3)),
                                                     lib.distributions.Normal(lib.zeros(2, 3), 1.0))),
    ("reshape_numel_mismatch", lambda lib: lib.distributions.transforms.ReshapeTransform((4,), (3,))),
    ("reshape_wrong_shape", lambda lib: lib.distributions.transforms.ReshapeTransform((4,), (2, 2)).forward_shape((3,))),
    ("corr_cholesky_count", lambda lib: lib.distributions.transforms.CorrCholeskyTransform().forward_shape((4,))),
    ("corr_cholesky_not_square", lambda lib: lib.distributions.transforms.CorrCholeskyTransform().inverse_shape((2, 3))),
    ("stick_breaking_scalar", lambda lib: lib.distributions.transforms.StickBreakingTransform().forward_shape(())),
    ("independent_transform_too_few_dims", lambda lib: lib.distributions.transforms.IndependentTransform(
        lib.distributions.transforms.ExpTransform(), 2)(lib.ones(3))),
    ("inverse_gamma_negative_rate", lambda lib: lib.distributions.InverseGamma(1.0, lib.tensor([1.0, -1.0]))),
    ("kumaraswamy_zero_concentration", lambda lib: lib.distributions.Kumaraswamy(0.0, 1.0)),
    ("kumaraswamy_value_outside", lambda lib: lib.distributions.Kumaraswamy(2.0, 2.0).log_prob(lib.tensor(1.5))),
    ("logistic_normal_value_not_simplex", lambda lib: lib.distributions.LogisticNormal(lib.zeros(2), lib.ones(2))
     .log_prob(lib.tensor([0.5, 0.4, 0.4]))),
    ("multinomial_value_wrong_total",
     lambda lib: lib.distributions.Multinomial(3, probs=lib.ones(3)).log_prob(lib.tensor([1.0, 1.0, 2.0]))),
    ("multinomial_negative_probs", lambda lib: lib.distributions.Multinomial(3, probs=lib.tensor([1.0, -0.5]))),
    ("von_mises_zero_concentration", lambda lib: lib.distributions.VonMises(0.0, lib.tensor([1.0, 0.0]))),
    ("fisher_snedecor_negative_df2", lambda lib: lib.distributions.FisherSnedecor(1.0, lib.tensor([2.0, -1.0]))),
    ("fisher_snedecor_value_negative",
     lambda lib: lib.distributions.FisherSnedecor(1.0, 2.0).log_prob(lib.tensor([1.0, -1.0]))),
    ("generalized_pareto_zero_scale", lambda lib: lib.distributions.GeneralizedPareto(0.0, 0.0, 0.5)),
    ("generalized_pareto_value_above_bound",
     lambda lib: lib.distributions.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(lib.tensor([1.0, 3.0]))),
    ("lkj_cholesky_dim_one", lambda lib: lib.distributions.LKJCholesky(1, 1.0)),
    ("lkj_cholesky_value_not_corr_cholesky",
     lambda lib: lib.distributions.LKJCholesky(2, 1.0).log_prob(lib.tensor([[1.0, 0.0], [0.5, 0.5]]))),
    ("wishart_vector_matrix", lambda lib: lib.distributions.Wishart(3.0, covariance_matrix=lib.ones(3))),
    ("wishart_df_too_small", lambda lib: lib.distributions.Wishart(lib.tensor([4.0, 1.5]), lib.eye(3))),
    ("wishart_df_number_too_small", lambda lib: lib.distributions.Wishart(2, scale_tril=lib.eye(3))),
    ("wishart_not_positive_definite",
     lambda lib: lib.distributions.Wishart(4.0, covariance_matrix=lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("wishart_value_not_positive_definite", lambda lib: lib.distributions.Wishart(4.0, lib.eye(2))
     .log_prob(lib.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    ("mixture_value_nan", lambda lib: lib.distributions.MixtureSameFamily(
        lib.distributions.Categorical(logits=lib.zeros(3)), lib.distributions.Normal(lib.zeros(3), 1.0))
     .log_prob(lib.tensor(float("nan")))),
]


@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_validation_errors_match_torch(torch, name, fn, monkeypatch):
    monkeypatch.setattr(torch.distributions.Distribution, "_validate_args", True)  # (see test_distributions.py)
    with pytest.raises(ValueError) as theirs:
        fn(torch)
    with pytest.raises(ValueError) as mine:
        fn(minigrad)
    assert str(mine.value) == str(theirs.value).replace("torch.", "minigrad.")


def test_generalized_pareto_densities_match_torch_in_float32(torch):
    # (xi = -1 is the flat density; 0 the exponential limit)
    values = []
    for lib in (torch, minigrad):
        m, s, k = (lib.tensor(v, requires_grad=True) for v in ([0.5, -1.0, 0.0, 0.0], [1.3, 0.4, 2.0, 0.5],
                                                               [-0.4, 0.0, 0.6, -1.0]))
        d = lib.distributions.GeneralizedPareto(m, s, k)
        x = lib.tensor([1.0, 0.0, 4.0, 0.2])
        out = lib.stack([d.log_prob(x), d.cdf(x), d.log_survival_function(x)])
        (out * lib.tensor([[1.0], [2.0], [3.0]])).sum().backward()
        values.append([_numpy(t) for t in (out, m.grad, s.grad, k.grad)])
    for theirs, mine in zip(*values):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)


def test_multinomial_refuses_a_tensor_total_count(torch):
    for lib in (torch, minigrad):
        with pytest.raises(NotImplementedError, match="^inhomogeneous total_count is not supported$"):
            lib.distributions.Multinomial(lib.tensor(3), probs=lib.ones(3))


def test_kl_of_binomials_with_a_larger_q_count_raises(torch):
    for lib in (torch, minigrad):
        d = lib.distributions
        with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
            d.kl_divergence(d.Binomial(2, lib.tensor(0.5)), d.Binomial(3, lib.tensor(0.5)))


def test_kl_between_families_with_disjoint_supports_is_inf(torch):
    def families(lib):
        d, v = lib.distributions, lib.tensor([0.5, 2.0])
        return {"beta": d.Beta(v, v), "cb": d.ContinuousBernoulli(v / 4), "exponential": d.Exponential(v),
                "gamma": d.Gamma(v, v), "gumbel": d.Gumbel(v, v), "laplace": d.Laplace(v, v), "normal": d.Normal(v, v),
                "pareto": d.Pareto(v, v), "uniform": d.Uniform(v, v + 1), "poisson": d.Poisson(v),
                "bernoulli": d.Bernoulli(v / 4), "binomial": d.Binomial(3, v / 4)}
    pairs = [("beta", "pareto"), ("cb", "pareto"), ("poisson", "bernoulli"), ("poisson", "binomial")]
    pairs += [(p, q) for p in ("exponential", "gamma", "pareto") for q in ("beta", "cb", "pareto", "uniform") if p != q]
    pairs += [(p, q) for p in ("gumbel", "laplace", "normal")
              for q in ("beta", "cb", "exponential", "gamma", "pareto", "uniform")]
    mine, theirs = families(minigrad), families(torch)
    for p, q in pairs:
        expected = torch.distributions.kl_divergence(theirs[p], theirs[q])
        assert _numpy(D.kl_divergence(mine[p], mine[q])).tolist() == expected.tolist() == [math.inf] * 2, (p, q)


def test_kl_dispatch_matches_torch(torch):
    # every ordered pair: the same value (the same registered pair chosen, subclasses such as Chi2 and HalfNormal
    # included), or the same refusal
    def families(lib):
        d, v = lib.distributions, lib.tensor([0.5, 2.5], dtype=lib.float64)
        return {"bernoulli": d.Bernoulli(v / 4), "beta": d.Beta(v, v + 1), "chi2": d.Chi2(v), "exponential": d.Exponential(v),
                "gamma": d.Gamma(v, v), "gumbel": d.Gumbel(v, v), "halfnormal": d.HalfNormal(v), "laplace": d.Laplace(v, v),
                "lognormal": d.LogNormal(v, v), "normal": d.Normal(v, v), "pareto": d.Pareto(v, v + 2),
                "poisson": d.Poisson(v), "uniform": d.Uniform(v - 1, v + 1), "cb": d.ContinuousBernoulli(v / 4),
                "geometric": d.Geometric(v / 4), "cauchy": d.Cauchy(v, v)}
    mine, theirs = families(minigrad), families(torch)
    for p in mine:
        for q in mine:
            try:
                expected = torch.distributions.kl_divergence(theirs[p], theirs[q]).tolist()
            except NotImplementedError as e:
                with pytest.raises(NotImplementedError) as err:
                    D.kl_divergence(mine[p], mine[q])
                assert str(err.value) == str(e), (p, q)
            else:
                np.testing.assert_allclose(_numpy(D.kl_divergence(mine[p], mine[q])), expected, rtol=1e-9, atol=1e-12,
                                           err_msg=(p, q))
    for name in ("bernoulli", "beta", "chi2", "exponential", "gamma", "normal", "poisson", "cb", "gumbel", "cauchy"):
        assert isinstance(mine[name], D.ExponentialFamily) == isinstance(theirs[name], torch.distributions.ExponentialFamily)


# ---- transforms ----------------------------------------------------------------------------------------------------
def test_tanh_cache_gives_back_the_pre_tanh_draw():
    # SAC: a draw far out in the tail has tanh(x) == 1 in float32, so atanh cannot recover x; the cache can
    x = minigrad.tensor([12.0, -0.3])
    cached, plain = T.TanhTransform(cache_size=1), T.TanhTransform()
    y = cached(x)
    assert cached.inv(y) is x
    assert math.isinf(plain.inv(plain(x))[0].item())
    base = D.Normal(minigrad.tensor([12.0, 0.0]), minigrad.tensor([1.0, 1.0]))
    squashed = D.TransformedDistribution(base, [T.TanhTransform(cache_size=1)])
    a = squashed.rsample()
    assert np.isfinite(_numpy(squashed.log_prob(a))).all()
    assert T.TanhTransform().with_cache(1)._cache_size == 1


def test_transform_inverse_and_composition(torch):
    t = torch.distributions.transforms
    x = [-1.5, 0.2, 2.0]
    for mt, tt in [(T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.SigmoidTransform()]),
                    t.ComposeTransform([t.AffineTransform(0.5, 2.0), t.SigmoidTransform()])),
                   (T.ExpTransform().inv, t.ExpTransform().inv), (T.SoftplusTransform(), t.SoftplusTransform()),
                   (T.PowerTransform(minigrad.tensor(3.0)), t.PowerTransform(torch.tensor(3.0)))]:
        xm = minigrad.tensor([abs(v) for v in x], dtype=minigrad.float64)
        xt = torch.tensor([abs(v) for v in x], dtype=torch.float64)
        ym, yt = mt(xm), tt(xt)
        np.testing.assert_allclose(_numpy(ym), yt.tolist(), rtol=1e-12)
        np.testing.assert_allclose(_numpy(mt.inv(ym)), tt.inv(yt).tolist(), rtol=1e-9)
        np.testing.assert_allclose(_numpy(mt.log_abs_det_jacobian(xm, ym)), tt.log_abs_det_jacobian(xt, yt).tolist(),
                                   rtol=1e-9)
        assert repr(mt.domain) == repr(tt.domain) and repr(mt.codomain) == repr(tt.codomain)
        assert mt.inv.inv is mt
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()


TRANSFORM_ATTRIBUTES = [
    lambda lib: _t(lib).SoftmaxTransform(), lambda lib: _t(lib).StickBreakingTransform(),
    lambda lib: _t(lib).IndependentTransform(_t(lib).ExpTransform(), 2), lambda lib: _t(lib).ReshapeTransform((6,), (2, 3)),
    lambda lib: _t(lib).CatTransform([_t(lib).ExpTransform(), _t(lib).StickBreakingTransform()], -1, [1, 2]),
    lambda lib: _t(lib).StackTransform([_t(lib).ExpTransform(), _t(lib).SigmoidTransform()], dim=-1),
    lambda lib: _t(lib).CumulativeDistributionTransform(_d(lib).Gamma(2.0, 1.0)),
    lambda lib: _t(lib).LowerCholeskyTransform(), lambda lib: _t(lib).PositiveDefiniteTransform(),
    lambda lib: _t(lib).CorrCholeskyTransform(),
]


@pytest.mark.parametrize("make", TRANSFORM_ATTRIBUTES)
def test_transform_attributes_match_torch(torch, make):
    mine, theirs = make(minigrad), make(torch)
    assert repr(mine) == repr(theirs)
    assert repr(mine.domain) == repr(theirs.domain) and repr(mine.codomain) == repr(theirs.codomain)
    assert mine.domain.event_dim == theirs.domain.event_dim and mine.codomain.event_dim == theirs.codomain.event_dim
    assert mine.bijective == theirs.bijective and mine.inv.inv is mine
    for shape in [(6,), (4, 6), (3, 3), (2, 3), (1, 2)]:
        for m_fn, t_fn in [(mine.forward_shape, theirs.forward_shape), (mine.inverse_shape, theirs.inverse_shape)]:
            try:
                expected = tuple(t_fn(shape))
            except ValueError as e:
                with pytest.raises(ValueError) as err:
                    m_fn(shape)
                assert str(err.value) == str(e).replace("torch.", "minigrad.")
            else:
                assert tuple(m_fn(shape)) == expected
    if make is TRANSFORM_ATTRIBUTES[-1]:  # the codomain constraint holds on what the transform makes
        y = mine(minigrad.tensor(X_VEC, dtype=minigrad.float64))
        assert mine.codomain.check(y).tolist() == theirs.codomain.check(torch.tensor(y.tolist())).tolist() == [True] * 2


def test_constraint_registry_matches_torch(torch):
    def table(lib):
        c = _c(lib)
        return [c.real, c.real_vector, c.positive, c.nonnegative, c.greater_than(2.0), c.greater_than_eq(-1.0),
                c.less_than(1.0), c.unit_interval, c.interval(-1.0, 3.0), c.half_open_interval(0.0, 2.0), c.simplex,
                c.lower_cholesky, c.positive_definite, c.positive_semidefinite, c.symmetric, c.square,
                c.multinomial(3), c.corr_cholesky, c.independent(c.unit_interval, 2),
                c.cat([c.positive, c.real], 0, [2, 1]), c.stack([c.positive, c.real, c.unit_interval], -1), c.boolean,
                c.nonnegative_integer]
    x = [[0.3, -1.2, 0.5], [0.7, 0.1, -0.4], [1.5, -0.2, 0.9]]
    for mc, tc in zip(table(minigrad), table(torch)):
        for registry in ("biject_to", "transform_to"):
            try:
                tt = getattr(torch.distributions, registry)(tc)
            except NotImplementedError as e:
                with pytest.raises(NotImplementedError) as err:
                    getattr(D, registry)(mc)
                assert str(err.value) == str(e)
                continue
            mt = getattr(D, registry)(mc)
            assert repr(mt) == repr(tt) and repr(mt.codomain) == repr(tt.codomain), (mc, registry)
            if repr(tc) in ("CorrCholesky()",):
                continue
            ym, yt = mt(minigrad.tensor(x, dtype=minigrad.float64)), tt(torch.tensor(x, dtype=torch.float64))
            np.testing.assert_allclose(_numpy(ym), yt.tolist(), rtol=1e-12, err_msg=repr(tc))
            assert bool(mc.check(ym).all()) and bool(tc.check(yt).all())
    t = torch.distributions.transforms
    for mt, tt in [(T.CatTransform([T.ExpTransform()]), t.CatTransform([t.ExpTransform()])),
                   (T.StackTransform([T.ExpTransform()]), t.StackTransform([t.ExpTransform()]))]:
        for shape in [(3,), ()]:
            with pytest.raises(AssertionError) as theirs:
                tt(torch.ones(shape))
            with pytest.raises(AssertionError) as mine:
                mt(minigrad.ones(shape))
            assert str(mine.value) == str(theirs.value)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint subclass or instance"):
        D.biject_to.register(3, lambda c: T.ExpTransform())


def test_matrix_and_count_constraints_match_torch(torch):
    mats = [[[2.0, 1.0], [1.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]  # PD, PSD only, neither
    counts = [[1.0, 2.0, 0.0], [3.0, 1.0, 0.0], [-1.0, 2.0, 0.0]]
    cases = [(mats, ("square", "symmetric", "positive_semidefinite", "positive_definite")),
             ([[[1.0, 2.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]], ("symmetric", "positive_semidefinite")),
             ([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], ("square", "symmetric", "positive_semidefinite")), (counts, ())]
    for values, names in cases:
        for name in names:
            mc, tc = getattr(D.constraints, name), getattr(torch.distributions.constraints, name)
            assert repr(mc) == repr(tc) and mc.event_dim == tc.event_dim and mc.is_discrete == tc.is_discrete
            assert _numpy(mc.check(minigrad.tensor(values))).tolist() == tc.check(torch.tensor(values)).tolist(), name
    mc, tc = D.constraints.multinomial(3), torch.distributions.constraints.multinomial(3)
    assert repr(mc) == repr(tc) and mc.event_dim == tc.event_dim and mc.is_discrete == tc.is_discrete
    assert _numpy(mc.check(minigrad.tensor(counts))).tolist() == tc.check(torch.tensor(counts)).tolist()


# ---- sampling: the generator and the distribution --------------------------------------------------------------
def _sigmoid_normal_variance():
    """Var sigmoid(z) for z ~ N(0, 1) (the two-part LogisticNormal's), by quadrature on a fine grid."""
    z = np.linspace(-12, 12, 200001)
    weight = np.exp(-z * z / 2) / math.sqrt(2 * math.pi) * (z[1] - z[0])
    return float((weight / (1 + np.exp(-z)) ** 2).sum()) - 0.25


def _stats(d, n=40000):
    x = _numpy(d.sample((n,)))
    return x.mean(0), x.var(0)


@pytest.mark.parametrize("name,make,mean,var", [
    ("gamma", lambda: D.Gamma(minigrad.tensor([0.3, 2.0, 9.0]), 2.0), [0.15, 1.0, 4.5], [0.075, 0.5, 2.25]),
    ("beta", lambda: D.Beta(minigrad.tensor([0.5, 2.0]), minigrad.tensor([0.5, 5.0])),
     [0.5, 2 / 7], [0.125, 10 / (49 * 8)]),
    ("dirichlet", lambda: D.Dirichlet(minigrad.tensor([1.0, 2.0, 3.0])), [1 / 6, 2 / 6, 3 / 6],
     [1 * 5 / (36 * 7), 2 * 4 / (36 * 7), 3 * 3 / (36 * 7)]),
    ("exponential", lambda: D.Exponential(minigrad.tensor([0.5, 4.0])), [2.0, 0.25], [4.0, 1 / 16]),
    ("laplace", lambda: D.Laplace(1.0, 2.0), 1.0, 8.0),
    ("lognormal", lambda: D.LogNormal(0.0, 0.5), math.exp(0.125), math.expm1(0.25) * math.exp(0.25)),
    ("halfnormal", lambda: D.HalfNormal(2.0), 2 * math.sqrt(2 / math.pi), 4 * (1 - 2 / math.pi)),
    ("studentt", lambda: D.StudentT(5.0, 1.0, 2.0), 1.0, 4 * 5 / 3),
    ("gumbel", lambda: D.Gumbel(1.0, 2.0), 1.0 + 2.0 * 0.5772156649, (math.pi * 2.0) ** 2 / 6),
    ("weibull", lambda: D.Weibull(2.0, minigrad.tensor([1.0, 3.0])), [2.0, 2.0 * math.gamma(4 / 3)],
     [4.0, 4.0 * (math.gamma(5 / 3) - math.gamma(4 / 3) ** 2)]),
    ("pareto", lambda: D.Pareto(2.0, 6.0), 6.0 * 2.0 / 5.0, 4.0 * 6.0 / (25.0 * 4.0)),
    ("poisson", lambda: D.Poisson(minigrad.tensor([0.5, 7.0])), [0.5, 7.0], [0.5, 7.0]),
    ("inverse_gamma", lambda: D.InverseGamma(minigrad.tensor([5.0, 9.0]), 2.0), [0.5, 0.25], [1 / 12, 1 / 112]),
    ("kumaraswamy", lambda: D.Kumaraswamy(2.0, 3.0), 3 * math.gamma(1.5) * math.gamma(3) / math.gamma(4.5),
     3 * math.gamma(2) * math.gamma(3) / math.gamma(5) - (3 * math.gamma(1.5) * math.gamma(3) / math.gamma(4.5)) ** 2),
    ("logistic_normal", lambda: D.LogisticNormal(minigrad.zeros(1), minigrad.ones(1)), [0.5, 0.5],
     [_sigmoid_normal_variance()] * 2),
    ("binomial", lambda: D.Binomial(10, minigrad.tensor([0.1, 0.5])), [1.0, 5.0], [0.9, 2.5]),
    ("negative_binomial", lambda: D.NegativeBinomial(minigrad.tensor([2.0, 0.5]), minigrad.tensor([0.4, 0.8])),
     [4 / 3, 2.0], [4 / 3 / 0.6, 2.0 / 0.2]),
    ("geometric", lambda: D.Geometric(minigrad.tensor([0.2, 0.7])), [4.0, 3 / 7], [20.0, 0.3 / 0.49]),
    ("multinomial", lambda: D.Multinomial(5, probs=minigrad.tensor([0.1, 0.3, 0.6])), [0.5, 1.5, 3.0],
     [0.45, 1.05, 1.2]),
    ("fisher_snedecor", lambda: D.FisherSnedecor(minigrad.tensor([4.0, 10.0]), 20.0), [20 / 18] * 2,
     [2 * 400 * 22 / (4 * 18 ** 2 * 16), 2 * 400 * 28 / (10 * 18 ** 2 * 16)]),
    ("generalized_pareto", lambda: D.GeneralizedPareto(1.0, 2.0, minigrad.tensor([-0.5, 0.0, 0.2])),
     [1 + 2 / 1.5, 3.0, 1 + 2 / 0.8], [4 / (1.5 ** 2 * 2), 4.0, 4 / (0.8 ** 2 * 0.6)]),
    ("mixture", lambda: D.MixtureSameFamily(D.Categorical(probs=minigrad.tensor([0.25, 0.75])),
                                            D.Normal(minigrad.tensor([-2.0, 2.0]), 1.0)), 1.0, 1 + 3.0),
])
def test_sample_moments(name, make, mean, var):
    minigrad.manual_seed(11)
    m, v = _stats(make())
    mean, var = np.asarray(mean), np.asarray(var)
    n = 40000
    np.testing.assert_allclose(m, mean, atol=5 * np.sqrt(var / n).max() + 1e-12)
    np.testing.assert_allclose(v, var, rtol=0.08)


def test_lkj_and_wishart_draws():
    # LKJ(eta) in dim d: each correlation is 2 Beta(a, a) - 1 with a = eta - 1 + d / 2, variance 1 / (2 a + 1)
    minigrad.manual_seed(5)
    eta, dim, n = 2.0, 4, 20000
    L = _numpy(D.LKJCholesky(dim, eta).sample((n,)))
    assert np.allclose(np.linalg.norm(L, axis=-1), 1, atol=1e-5) and (np.diagonal(L, axis1=-2, axis2=-1) > 0).all()
    assert np.allclose(np.triu(L, 1), 0)
    c = L @ L.transpose(0, 2, 1)
    off = c[:, np.tril_indices(dim, -1)[0], np.tril_indices(dim, -1)[1]]
    np.testing.assert_allclose(off.mean(0), 0, atol=0.03)
    np.testing.assert_allclose((off ** 2).mean(0), 1 / (2 * (eta - 1 + dim / 2) + 1), rtol=0.08)
    # Wishart: E X = df V, Var X_ij = df (V_ij^2 + V_ii V_jj)
    V = minigrad.tensor(SPD[0], dtype=minigrad.float64)
    w = D.Wishart(minigrad.tensor(6.0, dtype=minigrad.float64), covariance_matrix=V)
    x = _numpy(w.sample((n,)))
    assert x.dtype == np.float64 and (np.linalg.eigvalsh(x) > 0).all()
    var = _numpy(w.variance)
    np.testing.assert_allclose(x.mean(0), _numpy(w.mean), atol=5 * np.sqrt(var / n).max())
    np.testing.assert_allclose(x.var(0), var, rtol=0.1)


def test_wishart_needs_exactly_one_matrix(torch):
    for lib in (torch, minigrad):
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
            lib.distributions.Wishart(4.0, lib.eye(2), scale_tril=lib.eye(2))


def test_von_mises_draws_have_the_circular_moments():
    # E cos(x - loc) = I1(kappa) / I0(kappa) and E sin(x - loc) = 0, the expectations by quadrature of the density
    loc, kappa = np.array([1.0, 3.0, -2.0]), np.array([0.5, 4.0, 30.0])
    t = np.linspace(-math.pi, math.pi, 200001)[:, None]
    weight = np.exp(kappa * (np.cos(t) - 1))
    minigrad.manual_seed(3)
    x = _numpy(D.VonMises(minigrad.tensor(loc.tolist()), minigrad.tensor(kappa.tolist())).sample((40000,)))
    assert (x >= -math.pi).all() and (x < math.pi).all()  # wrapped onto the circle
    np.testing.assert_allclose(np.cos(x - loc).mean(0), (np.cos(t) * weight).sum(0) / weight.sum(0), atol=0.015)
    np.testing.assert_allclose(np.sin(x - loc).mean(0), 0.0, atol=0.015)


def test_kumaraswamy_mode_is_where_the_density_peaks():
    # (PyTorch 2.13's Kumaraswamy.mode is nan for every concentration0 != 1: its formula swaps a and b)
    a, b = np.array([1.5, 2.5, 9.0, 0.5]), np.array([1.3, 1.4, 2.0, 2.0])
    x = np.linspace(1e-4, 1 - 1e-4, 100001)[:, None]
    density = a * b * x ** (a - 1) * (1 - x ** a) ** (b - 1)
    mode = _numpy(D.Kumaraswamy(minigrad.tensor(a.tolist()), minigrad.tensor(b.tolist())).mode)
    np.testing.assert_allclose(mode[:3], x[density.argmax(0), 0][:3], atol=2e-5)
    assert np.isnan(mode[3])  # a < 1: the density has no interior peak


def test_cauchy_and_relaxed_quantiles():
    minigrad.manual_seed(12)
    x = _numpy(D.Cauchy(1.0, 2.0).sample((40000,)))
    np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.1)
    r = _numpy(D.RelaxedBernoulli(minigrad.tensor(0.1), probs=minigrad.tensor(0.3)).sample((20000,)))
    assert ((r > 0) & (r < 1)).all() and abs((r > 0.5).mean() - 0.3) < 0.02  # P(sigmoid(.) > 1/2) = p
    c = _numpy(D.RelaxedOneHotCategorical(minigrad.tensor(0.1), probs=minigrad.tensor([0.2, 0.8])).sample((20000,)))
    np.testing.assert_allclose(c.sum(-1), 1.0, rtol=1e-5)
    assert abs((c.argmax(-1) == 1).mean() - 0.8) < 0.02  # the Gumbel-max pick


def test_manual_seed_repeats_draws():
    dists = list(_builders(minigrad, (3,)).values())
    minigrad.manual_seed(5)
    first = [d.sample((20,)).tolist() for d in dists]
    minigrad.manual_seed(5)
    assert [d.sample((20,)).tolist() for d in dists] == first
    assert [d.sample((20,)).tolist() for d in dists] != first


# ---- reparameterized gradients ---------------------------------------------------------------------------------
def test_standard_gamma_grad_matches_torch(torch):
    alpha = [0.05, 0.3, 1.0, 2.5, 10.0, 100.0]
    a = minigrad.tensor(alpha, dtype=minigrad.float64, requires_grad=True)
    minigrad.manual_seed(1)
    x = minigrad._standard_gamma(a.expand(50, 6))
    x.sum().backward()
    theirs = torch._standard_gamma_grad(torch.tensor(alpha, dtype=torch.float64).expand(50, 6),
                                        torch.tensor(x.tolist(), dtype=torch.float64))
    # (PyTorch's is an approximation good to ~5e-5 relative; ours a float64 difference, closer to the truth)
    np.testing.assert_allclose(_numpy(a.grad), theirs.sum(0).tolist(), rtol=2e-4)


def test_rsample_gradients_have_the_expected_mean():
    # E[d x / d theta] = d E[x] / d theta, so the mean gradient of the draws is the mean's derivative
    minigrad.manual_seed(4)
    n = 40000
    c = minigrad.tensor([0.5, 3.0], dtype=minigrad.float64, requires_grad=True)
    r = minigrad.tensor([2.0, 0.5], dtype=minigrad.float64, requires_grad=True)
    D.Gamma(c, r).rsample((n,)).mean(0).sum().backward()  # E x = c / r
    np.testing.assert_allclose(_numpy(c.grad), 1 / _numpy(r), rtol=0.03)
    np.testing.assert_allclose(_numpy(r.grad), -_numpy(c) / _numpy(r) ** 2, rtol=0.03)
    a = minigrad.tensor(2.0, dtype=minigrad.float64, requires_grad=True)
    b = minigrad.tensor(3.0, dtype=minigrad.float64, requires_grad=True)
    D.Beta(a, b).rsample((n,)).pow(2).mean().backward()  # E x^2 = a (a + 1) / ((a + b)(a + b + 1))
    s = 5.0
    np.testing.assert_allclose(a.grad.item(), (2 * 2 + 1) / (s * (s + 1)) - 6 * (2 * s + 1) / (s * (s + 1)) ** 2,
                               rtol=0.05)
    np.testing.assert_allclose(b.grad.item(), -6 * (2 * s + 1) / (s * (s + 1)) ** 2, rtol=0.05)
    k = minigrad.tensor([1.0, 2.0, 3.0], dtype=minigrad.float64, requires_grad=True)
    w = minigrad.tensor([1.0, -1.0, 0.5], dtype=minigrad.float64)
    (D.Dirichlet(k).rsample((n,)) * w).sum(-1).mean().backward()  # E x_i = k_i / k_0
    kk, ww = np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0, 0.5])
    np.testing.assert_allclose(_numpy(k.grad), ww / 6 - (ww * kk).sum() / 36, atol=0.004)
    s_ = minigrad.tensor(1.5, dtype=minigrad.float64, requires_grad=True)
    D.Laplace(0.0, s_).rsample((n,)).abs().mean().backward()  # E|x| = scale
    assert abs(s_.grad.item() - 1.0) < 0.03
