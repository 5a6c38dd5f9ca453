"""The distribution families beyond test_distributions.py's (Gamma, Beta, Dirichlet, Laplace, Exponential, LogNormal,
Cauchy, StudentT, Poisson, Binomial, Geometric, the relaxed ones, MixtureSameFamily), TransformedDistribution with
the transforms, and their kl_divergence pairs: against torch.distributions (values and gradients in float64,
shapes, reprs, validation errors), and torch-free checks of sample statistics and of the reparameterized
gradients' expectations."""
import math

import numpy as np
import pytest

import minigrad
import minigrad.distributions as D
from minigrad.distributions import transforms as T


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


# (name, parameter values, f(lib, *parameters) -> tensor); the same function runs with lib = torch and minigrad
CASES = [
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
    ("kl_lognormal", LOC + B + B + A,
     lambda lib, a, b, c, d: _d(lib).kl_divergence(_d(lib).LogNormal(a, b), _d(lib).LogNormal(c, d))),
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
        "relaxed_bernoulli": d.RelaxedBernoulli(lib.tensor(0.5), full(0.3)),
        "relaxed_onehot": d.RelaxedOneHotCategorical(lib.tensor(0.5), lib.ones(*batch, 4)),
        "tanh_normal": d.TransformedDistribution(d.Normal(full(0.0), full(1.0)), [t.TanhTransform(cache_size=1)]),
        "mixture": d.MixtureSameFamily(d.Categorical(logits=lib.zeros(*batch, 3)), d.Normal(lib.zeros(*batch, 3), 1.0)),
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
