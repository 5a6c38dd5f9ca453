"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal) and the older hook-based
nn.utils.weight_norm / spectral_norm against PyTorch: values and gradients from the same weights (and, for
spectral norm, the same power-iteration vectors), state dict keys, reprs, removal and errors."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import minigrad
import nn
from nn.utils import parametrizations, parametrize

RNG = np.random.default_rng(2)


def load_from(torch, ours, theirs):
    """Copy theirs' state dict into ours; the keys must be the same."""
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in state.items()})


def compare(torch, ours, theirs, x, rtol=1e-10):
    """One forward and backward of sum(out * g) through both: outputs and every parameter's gradient agree."""
    y, ty = ours(minigrad.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=rtol, atol=1e-12)
    g = RNG.standard_normal(tuple(ty.shape))
    (y * minigrad.tensor(g)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    grads_o, grads_t = dict(ours.named_parameters()), dict(theirs.named_parameters())
    assert list(grads_o) == list(grads_t)
    for name, p in grads_t.items():
        np.testing.assert_allclose(grads_o[name].grad.numpy(), p.grad.numpy(), rtol=rtol, atol=1e-12, err_msg=name)


def symmetric(mod):
    class Symmetric(mod.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric


def scaled(mod):
    class Scaled(mod.Module):
        def forward(self, X):
            return 2.0 * X

    return Scaled


def linear(mod, n=4):
    return mod.Linear(n, n).double()


# ---- parametrize ------------------------------------------------------------------------------------------------
def test_register_parametrization_vs_torch(torch):
    ours, theirs = linear(nn), linear(torch.nn)
    parametrize.register_parametrization(ours, "weight", symmetric(nn)())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", symmetric(torch.nn)())
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    assert repr(ours).replace("Symmetric", "S") == repr(theirs).replace("Symmetric", "S")
    load_from(torch, ours, theirs)
    np.testing.assert_array_equal(ours.weight.detach().numpy(), ours.weight.detach().numpy().T)
    compare(torch, ours, theirs, RNG.standard_normal((3, 4)))
    assert ours.weight.grad_fn is not None and parametrize.is_parametrized(ours)
    assert parametrize.is_parametrized(ours, "weight") and not parametrize.is_parametrized(ours, "bias")
    assert parametrize.type_before_parametrizations(ours) is nn.Linear
    assert isinstance(ours, nn.Linear) and not parametrize.is_parametrized(nn.Linear(2, 2))


def test_assignment_goes_through_right_inverse_and_chains(torch):
    results = []
    for lib, mod, P in ((minigrad, nn, parametrize), (torch, torch.nn, torch.nn.utils.parametrize)):
        m = linear(mod)
        P.register_parametrization(m, "weight", symmetric(mod)())
        original = m.parametrizations.weight.original
        value = lib.tensor(RNG.standard_normal((4, 4)) if lib is minigrad else results[0][0])
        m.weight = value  # original = value.triu(), the same Parameter object
        assert m.parametrizations.weight.original is original
        P.register_parametrization(m, "weight", scaled(mod)())  # one more, applied after: 2 * symmetric
        results.append((value.numpy(), m.weight.detach().numpy(), list(m.state_dict())))
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    assert results[0][2] == results[1][2]


def test_cached_computes_once(torch):
    m = linear(nn)
    calls = []

    class Counting(nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0

    parametrize.register_parametrization(m, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a, b = m.weight, m.weight
        assert a is b
    assert m.weight is not a and len(calls) == 2


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_vs_torch(torch, leave):
    theirs = linear(torch.nn)
    ours = linear(nn)
    load_from(torch, ours, theirs)
    weight = ours.weight
    parametrize.register_parametrization(ours, "weight", symmetric(nn)())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", symmetric(torch.nn)())
    parametrize.remove_parametrizations(ours, "weight", leave_parametrized=leave)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight", leave_parametrized=leave)
    assert type(ours) is nn.Linear and not hasattr(ours, "parametrizations")
    assert ours.weight is weight  # (the same Parameter, as PyTorch keeps it)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)


def test_parametrize_errors_vs_torch(torch):
    def shape_changing(mod):
        class First(mod.Module):
            def forward(self, X):
                return X[0]

        return First

    for mod, P in ((torch.nn, torch.nn.utils.parametrize), (nn, parametrize)):
        m = mod.Linear(3, 3)
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            P.register_parametrization(m, "weight", shape_changing(mod)())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with "
                                             "name 'nope'"):
            P.register_parametrization(m, "nope", scaled(mod)())
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", shape_changing(mod)(), unsafe=True)
        assert tuple(m.weight.shape) == (3,)
        P.register_parametrization(m, "bias", scaled(mod)())
        with pytest.raises(RuntimeError, match="parametrization Scaled does not implement right_inverse"):
            m.bias = m.bias.detach()


def test_parametrized_module_copies_but_does_not_pickle():
    m = parametrizations.spectral_norm(nn.Linear(3, 2))
    twin = copy.deepcopy(m)
    assert type(twin) is type(m) and twin.parametrizations.weight.original is not m.parametrizations.weight.original
    x = minigrad.randn(2, 3)
    m.eval()
    twin.eval()
    np.testing.assert_array_equal(twin(x).detach().numpy(), m(x).detach().numpy())
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through "
                                           "state_dict()"):
        pickle.dumps(m)


# ---- weight_norm ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,dim,shape", [
    (lambda mod: mod.Linear(3, 4), 0, (2, 3)),
    (lambda mod: mod.Linear(3, 4), 1, (2, 3)),
    (lambda mod: mod.Linear(3, 4), None, (2, 3)),
    (lambda mod: mod.Conv1d(2, 3, 3), 0, (2, 2, 6)),
    (lambda mod: mod.Conv1d(2, 3, 3), -2, (2, 2, 6)),
    (lambda mod: mod.Conv2d(2, 3, 2), 2, (1, 2, 4, 4)),
])
def test_weight_norm_vs_torch(torch, make, dim, shape):
    theirs = torch.nn.utils.parametrizations.weight_norm(make(torch.nn).double(), dim=dim)
    ours = parametrizations.weight_norm(make(nn).double(), dim=dim)
    assert repr(ours) == repr(theirs)
    load_from(torch, ours, theirs)
    g = ours.parametrizations.weight.original0
    assert tuple(g.shape) == tuple(theirs.parametrizations.weight.original0.shape)
    compare(torch, ours, theirs, RNG.standard_normal(shape))
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    parametrize.remove_parametrizations(ours, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)


def test_weight_norm_loads_the_older_state_dict(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4))
    state = {k: v.detach().numpy().copy() for k, v in old.state_dict().items()}
    assert sorted(state) == ["bias", "weight_g", "weight_v"]
    ours = parametrizations.weight_norm(nn.Linear(3, 4))
    assert not ours.load_state_dict(state).missing_keys
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(minigrad.tensor(x)).detach().numpy(), old(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


# ---- spectral_norm ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,shape", [
    (lambda mod: mod.Linear(5, 4), (3, 5)),
    (lambda mod: mod.Conv2d(2, 3, 3), (2, 2, 5, 5)),
    (lambda mod: mod.ConvTranspose1d(3, 2, 3), (2, 3, 4)),  # (dim 1 by default)
])
def test_spectral_norm_training_steps_vs_torch(torch, make, shape):
    theirs = torch.nn.utils.parametrizations.spectral_norm(make(torch.nn).double(), n_power_iterations=2)
    ours = parametrizations.spectral_norm(make(nn).double(), n_power_iterations=2)
    assert ours.parametrizations.weight[0].dim == theirs.parametrizations.weight[0].dim
    assert repr(ours) == repr(theirs)
    load_from(torch, ours, theirs)  # (u and v included: the same power iteration from here on)
    opt_o = nn.optim.SGD(ours.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(3):  # each training-mode call takes 2 power-iteration steps
        opt_o.zero_grad()
        opt_t.zero_grad()
        compare(torch, ours, theirs, RNG.standard_normal(shape))
        opt_o.step()
        opt_t.step()
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), rtol=1e-10, atol=1e-12)
    # eval mode: the vectors stay
    ours.eval()
    theirs.eval()
    u = ours.parametrizations.weight[0]._u.numpy().copy()
    compare(torch, ours, theirs, RNG.standard_normal(shape))
    np.testing.assert_array_equal(ours.parametrizations.weight[0]._u.numpy(), u)


def test_spectral_norm_details_vs_torch(torch):
    w = RNG.standard_normal(6)
    for lib, P in ((torch, torch.nn.utils.parametrizations), (minigrad, parametrizations)):
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.tensor(w))
        P.spectral_norm(m)  # a 1-d weight is divided by its norm
        np.testing.assert_allclose(m.weight.detach().numpy(), w / np.linalg.norm(w), rtol=1e-12)
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            P.spectral_norm(lib.nn.Linear(2, 2), name="nope")
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\] but "
                                             r"got 2\)"):
            P.spectral_norm(lib.nn.Linear(2, 2), dim=2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but got "
                                             "n_power_iterations=0"):
            P.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)
    # each read in training runs a power-iteration step: sigma converges to the largest singular value
    minigrad.manual_seed(0)
    m = parametrizations.spectral_norm(nn.Linear(8, 6).double())
    for _ in range(200):
        _ = m.weight  # (a read in training is a power-iteration step)
    m.eval()
    np.testing.assert_allclose(np.linalg.norm(m.weight.detach().numpy(), 2), 1.0, rtol=1e-9)


# ---- the older, hook-based weight_norm and spectral_norm --------------------------------------------------------
def test_old_weight_norm_vs_torch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 2).double(), dim=1)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        ours = nn.utils.weight_norm(nn.Conv1d(2, 3, 2).double(), dim=1)
    assert repr(ours) == repr(theirs)
    load_from(torch, ours, theirs)
    compare(torch, ours, theirs, RNG.standard_normal((2, 2, 5)))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"):
        nn.utils.weight_norm(ours, dim=1)
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(ours)


def test_old_spectral_norm_vs_torch(torch):
    theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3).double(), n_power_iterations=3)
    ours = nn.utils.spectral_norm(nn.Linear(4, 3).double(), n_power_iterations=3)
    load_from(torch, ours, theirs)  # bias, weight_orig, weight_u, weight_v
    for _ in range(2):
        compare(torch, ours, theirs, RNG.standard_normal((2, 4)))
    np.testing.assert_allclose(ours.weight_u.numpy(), theirs.weight_u.numpy(), rtol=1e-10)
    ours.eval()
    theirs.eval()
    v = ours.weight_v.numpy().copy()
    compare(torch, ours, theirs, RNG.standard_normal((2, 4)))
    np.testing.assert_array_equal(ours.weight_v.numpy(), v)
    assert ours.state_dict()._metadata[""]["spectral_norm"] == theirs.state_dict()._metadata[""]["spectral_norm"]
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(ours)


@pytest.mark.parametrize("old", [False, True])
@pytest.mark.parametrize("dim", [2, -3])
def test_weight_norm_dim_out_of_range_raises_as_torch(torch, old, dim):
    # (it was taken: a norm over some other dims)
    def call(N):
        fn = N.utils.weight_norm if old else N.utils.parametrizations.weight_norm
        return fn(N.Linear(3, 2), dim=dim)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the older one's deprecation)
        with pytest.raises(IndexError) as theirs:
            call(torch.nn)
        with pytest.raises(IndexError) as ours:
            call(nn)
    assert str(ours.value) == str(theirs.value)


# ---- orthogonal -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("out_features,in_features,orthogonal_map", [
    (4, 4, None), (5, 3, None), (3, 5, None), (4, 4, "cayley"), (4, 4, "householder"), (5, 3, "matrix_exp"),
    (3, 5, "cayley"),
])
def test_orthogonal_vs_torch(torch, out_features, in_features, orthogonal_map):
    # the parametrizations tutorial's orthogonal(): the weight made orthogonal from its value at registration,
    # PyTorch's state dict keys and repr, then training steps with the same values and gradients
    theirs = torch.nn.Linear(in_features, out_features).double()
    ours = nn.Linear(in_features, out_features).double()
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map)
    parametrizations.orthogonal(ours, orthogonal_map=orthogonal_map)
    assert repr(ours) == repr(theirs)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-10, atol=1e-12)
    load_from(torch, ours, theirs)  # (the base of a non-square weight has random columns past the weight's)
    opt_o = nn.optim.SGD(ours.parameters(), lr=0.2)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.2)
    for _ in range(3):  # steps take the original off -I, where each map's own terms show
        opt_o.zero_grad()
        opt_t.zero_grad()
        compare(torch, ours, theirs, RNG.standard_normal((2, in_features)), rtol=1e-9)
        opt_o.step()
        opt_t.step()
    w = ours.weight.detach().numpy()
    gram = w.T @ w if out_features >= in_features else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(w.shape)), atol=1e-12)


def test_orthogonal_keeps_an_orthogonal_weight_and_refuses_as_torch(torch):
    q = np.linalg.qr(RNG.standard_normal((4, 4)))[0]
    for lib, P in ((torch, torch.nn.utils.parametrizations), (minigrad, parametrizations)):
        layer = lib.nn.Linear(4, 4).double()
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(q))
        P.orthogonal(layer)
        np.testing.assert_allclose(layer.weight.detach().numpy(), q, atol=1e-12)
    errors = []
    for lib, P in ((torch, torch.nn.utils.parametrizations), (minigrad, parametrizations)):
        found = []
        for kw in ({"orthogonal_map": "foo"}, {"name": "bias"}, {"name": "foo"}):
            with pytest.raises(ValueError) as e:
                P.orthogonal(lib.nn.Linear(3, 3), **kw)
            found.append(str(e.value))
        errors.append(found)
    assert errors[0] == errors[1]
