"""minigrad.distributions against torch.distributions (values and gradients in float64, shapes, validation
errors), and torch-free checks: sample statistics, repeatability under manual_seed, gradients through samples,
and a REINFORCE loop that learns a bandit's best arm."""
import math

import numpy as np
import pytest

import minigrad
import minigrad.distributions as D
from minigrad.distributions import Bernoulli, Categorical, Normal, OneHotCategorical, Uniform, kl_divergence


@pytest.fixture(autouse=True)
def _torch_default_checks(torch_validating_args):
    """PyTorch's own argument checks on, as in a fresh process (conftest.py)."""


def _numpy(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


# ---- the package -------------------------------------------------------------------------------------------------
def test_import_forms():
    import minigrad.distributions.kl

    assert minigrad.distributions is D
    assert minigrad.distributions.Categorical is Categorical
    assert minigrad.distributions.kl.kl_divergence is kl_divergence
    assert issubclass(Normal, D.Distribution) and Normal.has_rsample and not Categorical.has_rsample


# ---- values and gradients against PyTorch ------------------------------------------------------------------------
def _f64(lib, values):
    return lib.tensor(values, dtype=lib.float64)


# (name, parameter values, f(lib, *parameters) -> tensor); the same function runs with lib = torch and minigrad
CASES = [
    ("categorical_logits_log_prob", [[[0.1, 0.5, -1.0], [2.0, 0.0, 1.0]]],
     lambda lib, l: lib.distributions.Categorical(logits=l).log_prob(lib.tensor([[2, 0], [1, 1], [0, 2]]))),
    # one value per distribution (log_prob's path without a broadcast), a batch of them and a lone one
    ("categorical_logits_log_prob_one_each", [[[0.1, 0.5, -1.0], [2.0, 0.0, 1.0]]],
     lambda lib, l: lib.distributions.Categorical(logits=l).log_prob(lib.tensor([2, 1]))),
    ("categorical_probs_log_prob_one", [[[0.2, 0.3, 0.1, 0.4]]],
     lambda lib, p: lib.distributions.Categorical(probs=p * 3).log_prob(lib.tensor([3]))),
    ("categorical_probs_log_prob_0d", [[0.2, 0.3, 0.1, 0.4]],
     lambda lib, p: lib.distributions.Categorical(probs=p).log_prob(lib.tensor(1))),
    ("categorical_logits_entropy", [[[0.1, 0.5, -1.0], [2.0, 0.0, 1.0]]],
     lambda lib, l: lib.distributions.Categorical(logits=l).entropy()),
    ("categorical_probs_log_prob", [[0.2, 0.3, 0.1, 0.4]],
     lambda lib, p: lib.distributions.Categorical(probs=p * 3).log_prob(lib.tensor([3, 0, 1]))),
    ("categorical_probs_entropy", [[[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]],
     lambda lib, p: lib.distributions.Categorical(probs=p).entropy()),
    ("categorical_logits_from_probs", [[0.2, 0.3, 0.5]],
     lambda lib, p: lib.distributions.Categorical(probs=p).logits),
    ("categorical_probs_from_logits", [[1.0, -0.5, 0.25]],
     lambda lib, l: lib.distributions.Categorical(logits=l).probs),
    ("onehot_log_prob", [[[0.3, -0.2, 1.1], [0.0, 0.4, -1.0]]],
     lambda lib, l: lib.distributions.OneHotCategorical(logits=l).log_prob(_f64(lib, [[0, 0, 1], [1, 0, 0]]))),
    ("onehot_entropy", [[[0.3, -0.2, 1.1], [0.0, 0.4, -1.0]]],
     lambda lib, l: lib.distributions.OneHotCategorical(logits=l).entropy()),
    ("onehot_variance", [[0.3, -0.2, 1.1]],
     lambda lib, l: lib.distributions.OneHotCategorical(logits=l).variance),
    ("bernoulli_probs_log_prob", [[0.2, 0.7, 0.9]],
     lambda lib, p: lib.distributions.Bernoulli(probs=p).log_prob(_f64(lib, [1.0, 0.0, 1.0]))),
    ("bernoulli_logits_log_prob", [[-1.5, 0.3, 2.0]],
     lambda lib, l: lib.distributions.Bernoulli(logits=l).log_prob(_f64(lib, [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))),
    ("bernoulli_entropy", [[-1.5, 0.3, 2.0]], lambda lib, l: lib.distributions.Bernoulli(logits=l).entropy()),
    ("bernoulli_probs_entropy", [[0.2, 0.7, 0.9]], lambda lib, p: lib.distributions.Bernoulli(probs=p).entropy()),
    ("bernoulli_variance", [[0.2, 0.7, 0.9]], lambda lib, p: lib.distributions.Bernoulli(probs=p).variance),
    ("normal_log_prob", [[0.5, -1.0], [1.5, 0.3]],
     lambda lib, m, s: lib.distributions.Normal(m, s).log_prob(_f64(lib, [[0.0, 0.2], [1.0, -1.1], [3.0, 0.0]]))),
    ("normal_log_prob_number_scale", [[0.5, -1.0]],
     lambda lib, m: lib.distributions.Normal(m, 2.0).log_prob(_f64(lib, [0.0, 0.2]))),
    ("normal_entropy", [[0.5, -1.0], [1.5, 0.3]], lambda lib, m, s: lib.distributions.Normal(m, s).entropy()),
    ("normal_cdf", [[0.5, -1.0], [1.5, 0.3]],
     lambda lib, m, s: lib.distributions.Normal(m, s).cdf(_f64(lib, [0.1, -0.8]))),
    ("normal_icdf", [[0.5, -1.0], [1.5, 0.3], [0.1, 0.95]],
     lambda lib, m, s, q: lib.distributions.Normal(m, s).icdf(q)),
    ("normal_mean_plus_variance", [[0.5, -1.0], [1.5, 0.3]],
     lambda lib, m, s: lib.distributions.Normal(m, s).mean + lib.distributions.Normal(m, s).variance),
    ("normal_stddev", [[0.5, -1.0], [1.5, 0.3]], lambda lib, m, s: lib.distributions.Normal(m, s).stddev),
    ("uniform_log_prob", [[-1.0, 0.5], [2.0, 0.75]],
     lambda lib, a, b: lib.distributions.Uniform(a, b).log_prob(_f64(lib, [0.0, 0.6]))),
    ("uniform_entropy", [[-1.0, 0.5], [2.0, 0.75]], lambda lib, a, b: lib.distributions.Uniform(a, b).entropy()),
    ("uniform_cdf", [[-1.0, 0.5], [2.0, 0.75]],
     lambda lib, a, b: lib.distributions.Uniform(a, b).cdf(_f64(lib, [0.5, 0.6]))),
    ("uniform_icdf", [[-1.0, 0.5], [2.0, 0.75]],
     lambda lib, a, b: lib.distributions.Uniform(a, b).icdf(_f64(lib, [0.25, 0.9]))),
    ("uniform_moments", [[-1.0, 0.5], [2.0, 0.75]],
     lambda lib, a, b: lib.stack([lib.distributions.Uniform(a, b).mean, lib.distributions.Uniform(a, b).variance,
                                  lib.distributions.Uniform(a, b).stddev])),
    ("kl_normal_normal", [[0.5, -1.0], [1.5, 0.3], [0.0, 0.2], [1.0, 0.9]],
     lambda lib, m1, s1, m2, s2: lib.distributions.kl_divergence(lib.distributions.Normal(m1, s1),
                                                                 lib.distributions.Normal(m2, s2))),
    ("kl_categorical_categorical", [[[0.1, 0.5, -1.0], [2.0, 0.0, 1.0]], [[0.3, 0.3, 0.4]]],
     lambda lib, l, p: lib.distributions.kl_divergence(lib.distributions.Categorical(logits=l),
                                                       lib.distributions.Categorical(probs=p))),
    ("kl_bernoulli_bernoulli", [[0.2, 0.7, 0.9], [-1.0, 0.5, 0.1]],
     lambda lib, p, l: lib.distributions.kl_divergence(lib.distributions.Bernoulli(probs=p),
                                                       lib.distributions.Bernoulli(logits=l))),
    ("kl_uniform_uniform", [[0.0, 0.2], [1.0, 0.5], [-1.0, 0.1], [2.0, 0.7]],
     lambda lib, a1, b1, a2, b2: lib.distributions.kl_divergence(lib.distributions.Uniform(a1, b1),
                                                                 lib.distributions.Uniform(a2, b2))),
    ("kl_onehot_onehot", [[0.1, 0.5, -1.0], [2.0, 0.0, 1.0]],
     lambda lib, l1, l2: lib.distributions.kl_divergence(lib.distributions.OneHotCategorical(logits=l1),
                                                         lib.distributions.OneHotCategorical(logits=l2))),
]


@pytest.mark.parametrize("name,params,fn", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(torch, name, params, fn):
    torch.manual_seed(0)
    results = []
    for lib in (torch, minigrad):
        leaves = [lib.tensor(p, dtype=lib.float64, requires_grad=True) for p in params]
        out = fn(lib, *leaves)
        weights = lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).tolist(), dtype=lib.float64)
        (out * weights).sum().backward()  # weighted, so that each entry's gradient counts
        # (a parameter that the result does not use gets no gradient: None in both)
        results.append((tuple(out.shape), _numpy(out), [None if p.grad is None else _numpy(p.grad) for p in leaves],
                        out.grad_fn.name() if name.startswith("categorical") and "log_prob" in name else None))
    (t_shape, t_out, t_grads, t_fn), (m_shape, m_out, m_grads, m_fn) = results
    assert m_shape == t_shape and m_fn == t_fn
    np.testing.assert_allclose(m_out, t_out, rtol=1e-10, atol=1e-12)
    assert [g is None for g in m_grads] == [g is None for g in t_grads]
    assert any(g is not None for g in t_grads)
    for m_grad, t_grad in zip(m_grads, t_grads):
        if t_grad is not None:
            np.testing.assert_allclose(m_grad, t_grad, rtol=1e-9, atol=1e-12)


def test_enumerate_support_matches_torch(torch):
    for lib_m, lib_t in ((Categorical, torch.distributions.Categorical), (Bernoulli, torch.distributions.Bernoulli)):
        for expand in (True, False):
            m = lib_m(logits=minigrad.zeros(2, 3)).enumerate_support(expand)
            t = lib_t(logits=torch.zeros(2, 3)).enumerate_support(expand)
            assert tuple(m.shape) == tuple(t.shape) and m.tolist() == t.tolist()


# ---- shapes ------------------------------------------------------------------------------------------------------
def _builders(lib, batch):
    """The same distributions, built with `lib`, with parameters of batch shape `batch` (+ the event dim)."""
    d = lib.distributions
    return {
        "categorical": d.Categorical(logits=lib.zeros(*batch, 4)),
        "onehot": d.OneHotCategorical(probs=lib.ones(*batch, 4)),
        "onehot_straight_through": d.OneHotCategoricalStraightThrough(probs=lib.ones(*batch, 4)),
        "bernoulli": d.Bernoulli(probs=lib.full(batch, 0.3)),
        "normal": d.Normal(lib.zeros(batch), lib.ones(batch)),
        "normal_numbers": d.Normal(0.0, 1.0),
        "uniform": d.Uniform(lib.zeros(batch), lib.ones(batch)),
    }


@pytest.mark.parametrize("batch", [(), (3,), (2, 3)])
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 4)])
def test_sample_shapes_match_torch(torch, batch, sample_shape):
    mine, theirs = _builders(minigrad, batch), _builders(torch, batch)
    for name in mine:
        if name in ("categorical", "onehot") and batch == ():
            continue
        m, t = mine[name], theirs[name]
        assert tuple(m.batch_shape) == tuple(t.batch_shape), name
        assert tuple(m.event_shape) == tuple(t.event_shape), name
        assert tuple(m.sample(sample_shape).shape) == tuple(t.sample(sample_shape).shape), name
        assert m.sample(minigrad.Size(sample_shape)).dtype.is_floating_point == t.sample().dtype.is_floating_point
        if t.has_rsample:
            assert tuple(m.rsample(sample_shape).shape) == tuple(t.rsample(sample_shape).shape), name
        x = t.sample(sample_shape)
        value = minigrad.tensor(x.tolist(), dtype=minigrad.int64 if name == "categorical" else minigrad.float32)
        assert tuple(m.log_prob(value).shape) == tuple(t.log_prob(x).shape), name
        assert tuple(m.entropy().shape) == tuple(t.entropy().shape), name


def test_expand_matches_torch(torch):
    for name, m in _builders(minigrad, (3,)).items():
        t = _builders(torch, (3,))[name]
        me, te = m.expand((2, 3)), t.expand((2, 3))
        assert type(me) is type(m) and tuple(me.batch_shape) == tuple(te.batch_shape) == (2, 3)
        assert tuple(me.sample((4,)).shape) == tuple(te.sample((4,)).shape)
        np.testing.assert_allclose(_numpy(me.entropy()), te.entropy().tolist(), rtol=1e-6)


# ---- validation --------------------------------------------------------------------------------------------------
ERROR_CASES = [
    ("normal_negative_scale", lambda lib: lib.distributions.Normal(0.0, -1.0)),
    ("categorical_negative_probs", lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.5, -0.1]))),
    ("categorical_nan_logits", lambda lib: lib.distributions.Categorical(logits=lib.tensor([0.5, float("nan")]))),
    ("categorical_neither", lambda lib: lib.distributions.Categorical()),
    ("categorical_both", lambda lib: lib.distributions.Categorical(probs=lib.ones(2), logits=lib.ones(2))),
    ("bernoulli_neither", lambda lib: lib.distributions.Bernoulli()),
    ("bernoulli_probs_above_one", lambda lib: lib.distributions.Bernoulli(1.5)),
    ("uniform_low_above_high", lambda lib: lib.distributions.Uniform(1.0, 0.0)),
    ("categorical_value_out_of_support",
     lambda lib: lib.distributions.Categorical(logits=lib.zeros(3)).log_prob(lib.tensor(3))),
    ("categorical_value_not_broadcastable",
     lambda lib: lib.distributions.Categorical(logits=lib.zeros(2, 3)).log_prob(lib.zeros(3))),
    ("normal_value_not_a_tensor", lambda lib: lib.distributions.Normal(0.0, 1.0).log_prob(1.0)),
    ("bernoulli_value_not_boolean", lambda lib: lib.distributions.Bernoulli(0.5).log_prob(lib.tensor(0.5))),
    ("uniform_value_outside", lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0))),
    ("onehot_value_not_one_hot",
     lambda lib: lib.distributions.OneHotCategorical(logits=lib.zeros(3)).log_prob(lib.tensor([1.0, 1.0, 0.0]))),
    ("onehot_event_shape",
     lambda lib: lib.distributions.OneHotCategorical(logits=lib.zeros(3)).log_prob(lib.tensor([1.0, 0.0]))),
]


@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_validation_errors_match_torch(torch, name, fn, monkeypatch):
    # (torch.compile's first use turns PyTorch's validation off for the whole process: a compile test before
    # this one used it)
    monkeypatch.setattr(torch.distributions.Distribution, "_validate_args", True)
    with pytest.raises(ValueError) as theirs:
        fn(torch)
    with pytest.raises(ValueError) as mine:
        fn(minigrad)
    assert str(mine.value) == str(theirs.value).replace("torch.", "minigrad.")


CONSTRAINT_VALUES = [[0.2, 0.8], [0.5, -0.1], [0.3, 0.3], [float("nan"), 1.0], [1.0, 0.0], [2.0, 1.0], [0.5, 0.5],
                     [float("inf"), -float("inf")]]


@pytest.mark.parametrize("name", ["simplex", "one_hot", "boolean", "real", "real_vector", "positive", "nonnegative",
                                  "unit_interval", "nonnegative_integer", "integer_interval", "half_open_interval"])
def test_validation_asks_a_constraint_of_the_array_what_the_tensor_check_answers(torch, name):
    # distributions validate through constraints.holds, which runs this module's formulas on the array:
    # the same answer as the tensor check (and as PyTorch's constraint), entry by entry
    ours = getattr(D.constraints, name)
    theirs = getattr(torch.distributions.constraints, name)
    if name in ("integer_interval", "half_open_interval"):
        ours, theirs = ours(0, 1), theirs(0, 1)
    assert ours._checks_arrays()
    for rows in (CONSTRAINT_VALUES, [[1.0, 0.0], [0.0, 1.0]]):
        t = minigrad.tensor(rows, requires_grad=name == "simplex")
        want = theirs.check(torch.tensor(rows))
        np.testing.assert_array_equal(ours.check(t.array), want.numpy())
        np.testing.assert_array_equal(ours.check(t).numpy(), want.numpy())
        assert D.constraints.holds(ours, t) == bool(want.all())


def test_validation_asks_a_users_constraint_of_the_tensor():
    class Small(D.constraints.Constraint):
        def check(self, value):  # tensor methods only (no array has .abs() or .clamp())
            return value.abs().clamp(max=2.0) < 1.0

    class Bounded(D.Normal):
        arg_constraints = {"loc": Small(), "scale": D.constraints.positive}

    assert not Small()._checks_arrays()
    assert not D.constraints.independent(Small(), 1)._checks_arrays()
    assert Bounded(minigrad.tensor([0.5]), minigrad.tensor([1.0])).loc.item() == 0.5
    with pytest.raises(ValueError, match="to satisfy the constraint"):
        Bounded(minigrad.tensor([1.5]), minigrad.tensor([1.0]))


def test_validation_can_be_turned_off():
    with pytest.raises(ValueError):
        Normal(0.0, -1.0)
    assert Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    assert Categorical(logits=minigrad.zeros(3), validate_args=False).log_prob(minigrad.tensor(1)).shape == ()
    D.Distribution.set_default_validate_args(False)
    try:
        assert Normal(0.0, -1.0).scale.item() == -1.0
        with pytest.raises(ValueError):
            Normal(0.0, -1.0, validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_kl_of_an_unregistered_pair_raises():
    with pytest.raises(NotImplementedError):
        kl_divergence(Normal(0.0, 1.0), Bernoulli(0.5))


# ---- torch-free checks -------------------------------------------------------------------------------------------
def test_categorical_frequencies():
    minigrad.manual_seed(0)
    p = np.array([0.2, 0.5, 0.3])
    n = 20000
    draws = Categorical(probs=minigrad.tensor(p.tolist())).sample((n,))
    assert draws.shape == (n,) and draws.dtype == minigrad.int64
    freq = np.bincount(np.asarray(draws.tolist()), minlength=3) / n
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / n)), freq


def test_batched_categorical_and_onehot_frequencies():
    minigrad.manual_seed(1)
    probs = minigrad.tensor([[0.9, 0.1], [0.25, 0.75]])
    n = 20000
    means = np.asarray(Categorical(probs=probs).sample((n,)).tolist()).mean(axis=0)  # P(index 1) per row
    expected = np.array([0.1, 0.75])
    assert np.all(np.abs(means - expected) < 4 * np.sqrt(expected * (1 - expected) / n)), means
    onehot = np.asarray(OneHotCategorical(probs=probs).sample((n,)).tolist())
    assert np.all(onehot.sum(-1) == 1)
    assert np.all(np.abs(onehot.mean(0) - probs.tolist()) < 0.02)


def test_normal_bernoulli_uniform_statistics():
    minigrad.manual_seed(2)
    n = 20000
    x = np.asarray(Normal(1.5, 2.0).sample((n,)).tolist())
    assert abs(x.mean() - 1.5) < 4 * 2.0 / math.sqrt(n)
    assert abs(x.std() - 2.0) < 4 * 2.0 / math.sqrt(2 * n)
    b = np.asarray(Bernoulli(probs=minigrad.tensor(0.3)).sample((n,)).tolist())
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 4 * math.sqrt(0.3 * 0.7 / n)
    u = np.asarray(Uniform(-1.0, 3.0).sample((n,)).tolist())
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 4 * (4 / math.sqrt(12)) / math.sqrt(n)


def test_manual_seed_repeats_draws():
    dists = [Categorical(logits=minigrad.zeros(5)), Normal(minigrad.zeros(3), 1.0), Bernoulli(probs=0.5),
             Uniform(0.0, 1.0), OneHotCategorical(logits=minigrad.zeros(4))]
    minigrad.manual_seed(123)
    first = [d.sample((50,)).tolist() for d in dists]
    minigrad.manual_seed(123)
    again = [d.sample((50,)).tolist() for d in dists]
    later = [d.sample((50,)).tolist() for d in dists]
    assert first == again
    assert all(a != b for a, b in zip(first, later))  # the stream moves on


def test_rsample_carries_gradients():
    loc = minigrad.tensor([0.5, -1.0], dtype=minigrad.float64, requires_grad=True)
    scale = minigrad.tensor([2.0, 0.5], dtype=minigrad.float64, requires_grad=True)
    minigrad.manual_seed(3)
    x = Normal(loc, scale).rsample((7,))
    x.sum().backward()
    eps = (_numpy(x) - _numpy(loc)) / _numpy(scale)  # x = loc + scale * eps
    np.testing.assert_allclose(_numpy(loc.grad), [7.0, 7.0])
    np.testing.assert_allclose(_numpy(scale.grad), eps.sum(0))
    assert Normal(loc, scale).sample((7,)).requires_grad is False
    low = minigrad.tensor(0.0, requires_grad=True)
    high = minigrad.tensor(2.0, requires_grad=True)
    u = Uniform(low, high).rsample((100,))
    u.sum().backward()
    assert math.isclose(low.grad.item() + high.grad.item(), 100.0, rel_tol=1e-5)  # d/da + d/db of a + t (b - a)
    assert 0 < high.grad.item() < 100


def test_straight_through_rsample_matches_torch(torch):
    # logits this far apart make the draw certain (row 0 gives e_2, row 1 e_0), so the values can be compared too
    results = []
    for lib in (torch, minigrad):
        logits = lib.tensor([[0.0, -1.0, 40.0], [40.0, 0.5, 0.0]], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.OneHotCategoricalStraightThrough(logits=logits)
        y = d.rsample((2,))
        (y * lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)).sum().backward()
        kl = lib.distributions.kl_divergence(d, lib.distributions.OneHotCategoricalStraightThrough(logits=logits * 0.5))
        results.append((d.has_rsample, tuple(y.shape), y.tolist(), logits.grad.tolist(), kl.tolist(),
                        d.log_prob(y.detach()).tolist()))
    assert results[1][:3] == results[0][:3]
    np.testing.assert_allclose(results[1][3], results[0][3], rtol=1e-12, atol=1e-30)
    np.testing.assert_allclose(results[1][4], results[0][4], rtol=1e-12)
    np.testing.assert_allclose(results[1][5], results[0][5], rtol=1e-12)


def test_normal_icdf_inverts_cdf():
    m = Normal(minigrad.tensor([0.0, 1.0], dtype=minigrad.float64), minigrad.tensor([1.0, 3.0], dtype=minigrad.float64))
    x = minigrad.tensor([[-1.2, 0.4], [0.3, 5.0]], dtype=minigrad.float64)
    np.testing.assert_allclose(_numpy(m.icdf(m.cdf(x))), _numpy(x), rtol=1e-9)
    assert abs(m.cdf(minigrad.tensor([0.0, 1.0], dtype=minigrad.float64)).tolist()[1] - 0.5) < 1e-12


def test_kl_of_a_distribution_with_itself_is_zero():
    pairs = [(Normal(0.3, 1.2), Normal(0.3, 1.2)), (Bernoulli(logits=minigrad.tensor([0.4, -2.0])),) * 2,
             (Categorical(logits=minigrad.tensor([0.1, 0.2, 3.0])),) * 2, (Uniform(0.0, 2.0), Uniform(0.0, 2.0))]
    for p, q in pairs:
        assert np.all(np.abs(_numpy(kl_divergence(p, q))) < 1e-6), type(p)
    assert kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item() == pytest.approx(0.5)
    assert kl_divergence(Uniform(0.0, 2.0), Uniform(0.5, 1.0)).item() == math.inf


def test_reinforce_learns_the_best_arm():
    minigrad.manual_seed(4)
    logits = minigrad.zeros(3, requires_grad=True)
    arm_means = minigrad.tensor([0.2, 0.5, 0.8])
    for _ in range(150):
        m = Categorical(logits=logits)
        actions = m.sample((32,))
        rewards = arm_means[actions] + 0.1 * minigrad.randn(32)
        advantage = rewards - rewards.mean()  # a baseline lowers the variance
        loss = -(m.log_prob(actions) * advantage).mean()
        loss.backward()
        with minigrad.no_grad():
            logits -= 2.0 * logits.grad
        logits.grad = None
    probs = Categorical(logits=logits).probs.tolist()
    assert probs[2] > 0.9, probs


# ---- Independent -------------------------------------------------------------------------------------------------
MU = [[0.5, -1.0, 0.2], [2.0, 0.1, 0.0]]
SD = [[1.0, 0.5, 0.7], [0.3, 2.0, 1.1]]
VALUE = [[0.1, 0.2, 0.0], [0.3, 0.4, -1.0]]


def _independent_case(lib, n):
    # a VAE's diagonal Gaussian: log-likelihood and KL to N(0, I) summed over the event dims, and their gradients
    mu, sd = _f64(lib, MU).requires_grad_(), _f64(lib, SD).requires_grad_()
    Dl = lib.distributions
    q = Dl.Independent(Dl.Normal(mu, sd), n)
    prior = Dl.Independent(Dl.Normal(lib.zeros(2, 3, dtype=lib.float64), lib.ones(2, 3, dtype=lib.float64)), n)
    lp, ent, kl = q.log_prob(_f64(lib, VALUE)), q.entropy(), Dl.kl_divergence(q, prior)
    grads = lib.autograd.grad(lp.sum() - kl.sum() + ent.sum(), [mu, sd])
    shapes = (tuple(q.batch_shape), tuple(q.event_shape), tuple(q.sample((4,)).shape), q.rsample().requires_grad,
              tuple(q.expand((5,) + tuple(q.batch_shape)).log_prob(_f64(lib, VALUE)).shape), repr(q.support), repr(q))
    return [_numpy(t) for t in (lp, ent, kl, q.mean, q.variance) + tuple(grads)], shapes


@pytest.mark.parametrize("n", [0, 1, 2])
def test_independent_matches_torch(torch, n):
    # was missing: Independent(Normal(mu, sd), 1), a VAE's and SAC's usual form, was an AttributeError
    ours, our_shapes = _independent_case(minigrad, n)
    theirs, their_shapes = _independent_case(torch, n)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert our_shapes == tuple(s.replace("torch", "minigrad") if isinstance(s, str) else s for s in their_shapes)


def test_independent_errors_match_torch(torch):
    for lib in (minigrad, torch):
        Dl = lib.distributions
        base = Dl.Normal(lib.zeros(2, 3), lib.ones(2, 3))
        with pytest.raises(ValueError, match=r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape"
                                             r"\), actual 3 vs 2"):
            Dl.Independent(base, 3)
        with pytest.raises(ValueError, match=r"Value is not broadcastable with batch_shape\+event_shape: "
                                             r"\w+.Size\(\[2\]\) vs \w+.Size\(\[2, 3\]\)"):
            Dl.Independent(base, 1).log_prob(lib.zeros(2))
        with pytest.raises(NotImplementedError, match="Enumeration over cartesian product is not implemented"):
            Dl.Independent(Dl.Bernoulli(logits=lib.zeros(2, 3)), 1).enumerate_support()


# ---- MultivariateNormal ------------------------------------------------------------------------------------------
A3 = np.array([[1.0, 0.2, 0.1], [0.3, 0.9, -0.2], [0.0, 0.4, 1.2]])
COV = A3 @ A3.T + 0.1 * np.eye(3)


def _mvn_case(lib, kind):
    mu, cov = _f64(lib, MU).requires_grad_(), _f64(lib, COV).requires_grad_()
    Dl = lib.distributions
    matrix = {"covariance_matrix": cov, "scale_tril": lib.linalg.cholesky(cov), "precision_matrix": lib.linalg.inv(cov)}
    m = Dl.MultivariateNormal(mu, **{kind: matrix[kind]})
    prior = Dl.MultivariateNormal(lib.zeros(3, dtype=lib.float64), lib.eye(3, dtype=lib.float64) * 2)
    value = _f64(lib, VALUE)
    lp, ent, kl = m.log_prob(value), m.entropy(), Dl.kl_divergence(m, prior)
    grads = lib.autograd.grad(lp.sum() + ent.sum() - kl.sum(), [mu, cov])
    values = (lp, ent, kl, m.covariance_matrix, m.scale_tril, m.precision_matrix, m.variance) + tuple(grads)
    shapes = (tuple(m.batch_shape), tuple(m.event_shape), tuple(m.sample((4,)).shape), m.rsample().requires_grad,
              tuple(m.log_prob(value.expand(5, 2, 3)).shape), tuple(m.expand((4, 2)).log_prob(value).shape), repr(m))
    return [_numpy(t) for t in values], shapes


@pytest.mark.parametrize("kind", ["covariance_matrix", "scale_tril", "precision_matrix"])
def test_multivariate_normal_matches_torch(torch, kind):
    # was missing (PPO's MultivariateNormal(action_mean, cov_mat) was an AttributeError)
    ours, our_shapes = _mvn_case(minigrad, kind)
    theirs, their_shapes = _mvn_case(torch, kind)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert our_shapes == tuple(s.replace("torch", "minigrad") if isinstance(s, str) else s for s in their_shapes)


@pytest.mark.parametrize("call", [
    lambda lib, D: D.MultivariateNormal(lib.tensor(0.0), lib.eye(1)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.eye(2), scale_tril=lib.eye(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.ones(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), precision_matrix=lib.ones(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2)),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 2.0], [0.0, 1.0]])),
    lambda lib, D: D.MultivariateNormal(lib.zeros(2), lib.eye(2)).log_prob(lib.zeros(3)),
    lambda lib, D: D.kl_divergence(D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
                                   D.MultivariateNormal(lib.zeros(3), lib.eye(3))),
])
def test_multivariate_normal_errors_match_torch(torch, call):
    msgs = []
    for lib in (torch, minigrad):
        with pytest.raises(ValueError) as e:
            call(lib, lib.distributions)
        msgs.append(str(e.value).replace("torch", "minigrad"))
    assert msgs[0] == msgs[1]


# ---- LowRankMultivariateNormal -------------------------------------------------------------------------------------
def _lowrank_case(lib):
    Dl = lib.distributions
    loc = _f64(lib, MU).requires_grad_()
    W = _f64(lib, A3[:, :2] * 0.7).requires_grad_()
    d = _f64(lib, [0.5, 1.5, 0.8]).requires_grad_()
    m = Dl.LowRankMultivariateNormal(loc, W, d)
    full = Dl.MultivariateNormal(lib.zeros(3, dtype=lib.float64), lib.eye(3, dtype=lib.float64) * 2)
    value = _f64(lib, VALUE)
    lp, ent = m.log_prob(value), m.entropy()
    kls = (Dl.kl_divergence(m, full), Dl.kl_divergence(full, m), Dl.kl_divergence(m, Dl.LowRankMultivariateNormal(
        lib.zeros(3, dtype=lib.float64), lib.ones(3, 1, dtype=lib.float64), lib.ones(3, dtype=lib.float64))))
    grads = lib.autograd.grad(lp.sum() + ent.sum() - sum(k.sum() for k in kls), [loc, W, d])
    values = (lp, ent) + kls + (m.covariance_matrix, m.scale_tril, m.precision_matrix, m.variance, m.stddev) + grads
    shapes = (tuple(m.batch_shape), tuple(m.event_shape), tuple(m.rsample((4,)).shape), m.rsample().requires_grad,
              tuple(m.expand((4, 2)).log_prob(value).shape), repr(m))
    return [_numpy(t) for t in values], shapes


def test_lowrank_multivariate_normal_matches_torch(torch):
    # was missing (a script's LowRankMultivariateNormal(loc, cov_factor, cov_diag) was an AttributeError)
    ours, our_shapes = _lowrank_case(minigrad)
    theirs, their_shapes = _lowrank_case(torch)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert our_shapes == tuple(s.replace("torch", "minigrad") if isinstance(s, str) else s for s in their_shapes)


@pytest.mark.parametrize("call", [
    lambda lib, D: D.LowRankMultivariateNormal(lib.tensor(0.0), lib.zeros(2, 1), lib.ones(2)),
    lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(2), lib.ones(2)),
    lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(3, 1), lib.ones(2)),
    lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(2, 1), lib.ones(3)),
    lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(3, 2), lib.zeros(2, 2, 1), lib.ones(2)),
    lambda lib, D: D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(2, 1), -lib.ones(2)),
    lambda lib, D: D.kl_divergence(D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(2, 1), lib.ones(2)),
                                   D.LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3, 1), lib.ones(3))),
    lambda lib, D: D.kl_divergence(D.MultivariateNormal(lib.zeros(3), lib.eye(3)),
                                   D.LowRankMultivariateNormal(lib.zeros(2), lib.zeros(2, 1), lib.ones(2))),
])
def test_lowrank_multivariate_normal_errors_match_torch(torch, call):
    msgs = []
    for lib in (torch, minigrad):
        with pytest.raises(ValueError) as e:
            call(lib, lib.distributions)
        msgs.append(str(e.value).replace("torch", "minigrad"))
    assert msgs[0] == msgs[1]


def test_lower_cholesky_and_positive_definite_constraints_match_torch(torch):
    mats = [np.eye(2), [[1.0, 2.0], [2.0, 1.0]], [[1.0, 2.0], [0.0, 1.0]], [[2.0, 0.0], [0.5, -1.0]], COV[:2, :2]]
    for name in ("lower_cholesky", "positive_definite"):
        ours, theirs = getattr(D.constraints, name), getattr(torch.distributions.constraints, name)
        assert repr(ours) == repr(theirs)
        batch = np.array(mats)
        assert ours.check(minigrad.tensor(batch)).tolist() == theirs.check(torch.tensor(batch)).tolist()
