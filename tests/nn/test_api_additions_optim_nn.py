"""PyTorch 2.13 names scripts use: optim.Adafactor and optim.Muon, nn's FractionalMaxPool2d/3d, CrossMapLRN2d,
Container, LinearCrossEntropyLoss (and F.linear_cross_entropy), the distributions submodules; each against torch."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _pair(dtype, seed=0):
    """A small MLP (2-D weights, 1-D biases) in minigrad and its torch twin, same values."""
    rng = np.random.default_rng(seed)
    shapes = [(7, 5), (7,), (3, 7), (3,)]
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    mine = [minigrad.tensor(a.copy(), requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    x, y = rng.standard_normal((16, 5)).astype(dtype), rng.standard_normal((16, 3)).astype(dtype)
    return mine, theirs, x, y


def _loss(lib, params, x, y):
    w1, b1, w2, b2 = params
    h = lib.tanh(lib.tensor(x) @ w1.T + b1)
    return ((h @ w2.T + b2 - lib.tensor(y)) ** 2).mean()


def _run(mine, theirs, x, y, opt, topt, steps=10):
    for _ in range(steps):
        for lib, params, o in ((minigrad, mine, opt), (torch, theirs, topt)):
            o.zero_grad()
            _loss(lib, params, x, y).backward()
            o.step()


ADAFACTOR_CASES = [{}, dict(lr=0.05, weight_decay=0.1), dict(maximize=True, eps=(1e-4, 1e-3), d=2.0),
                   dict(beta2_decay=-0.5, foreach=True)]


@pytest.mark.parametrize("kwargs", ADAFACTOR_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_adafactor_matches_torch(kwargs, dtype):
    mine, theirs, x, y = _pair(dtype)
    opt, topt = minigrad.optim.Adafactor(mine, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    _run(mine, theirs, x, y, opt, topt)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    for p, q in zip(mine, theirs):
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=tol, atol=tol)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"][0].keys() == tsd["param_groups"][0].keys()
    for i in tsd["state"]:
        assert list(sd["state"][i]) == list(tsd["state"][i])
        for name, value in tsd["state"][i].items():
            np.testing.assert_allclose(np.asarray(sd["state"][i][name].array if name != "step" else sd["state"][i][name]),
                                       value.numpy(), rtol=tol * 10, atol=tol)


def test_adafactor_state_dict_round_trip():
    """row_var and col_var are not the parameter's shape: a saved state loads back, and steps on as torch's."""
    mine, theirs, x, y = _pair(np.float64)
    opt, topt = minigrad.optim.Adafactor(mine), torch.optim.Adafactor(theirs)
    _run(mine, theirs, x, y, opt, topt, steps=3)
    again = minigrad.optim.Adafactor(mine)
    again.load_state_dict(opt.state_dict())
    _run(mine, theirs, x, y, again, topt, steps=3)
    for p, q in zip(mine, theirs):
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=1e-12, atol=1e-12)


def _muon_pair(dtype):
    mine, theirs, x, y = _pair(dtype)
    return mine[::2], theirs[::2], mine, theirs, x, y


@pytest.mark.parametrize("kwargs", [{}, dict(lr=0.02, nesterov=False, weight_decay=0.0),
                                    dict(lr=0.01, adjust_lr_fn="match_rms_adamw", momentum=0.9)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_muon_matches_torch(kwargs, dtype):
    """The weights with Muon, the biases with AdamW (as PyTorch's docs pair them). Muon's update is
    orthogonalized in bfloat16 (8 significant bits): a step agrees with torch's to bfloat16's precision."""
    weights, tweights, mine, theirs, x, y = _muon_pair(dtype)

    class Both:  # the two optimizers of the MLP as one
        def __init__(self, *opts):
            self.opts = opts

        def zero_grad(self):
            for o in self.opts:
                o.zero_grad()

        def step(self):
            for o in self.opts:
                o.step()

    opt = Both(minigrad.optim.Muon(weights, **kwargs), minigrad.optim.AdamW(mine[1::2]))
    topt = Both(torch.optim.Muon(tweights, **kwargs), torch.optim.AdamW(theirs[1::2]))
    start = [p.array.copy() for p in weights]
    _run(mine, theirs, x, y, opt, topt)
    lr = kwargs.get("lr", 1e-3)
    for p, q, p0 in zip(weights, tweights, start):
        moved = np.abs(q.detach().numpy() - p0).max()
        assert moved > 10 * lr * 0.01
        np.testing.assert_allclose(p.array, q.detach().numpy(), rtol=0, atol=moved * 0.02)
    sd, tsd = opt.opts[0].state_dict(), topt.opts[0].state_dict()
    assert sd["param_groups"][0].keys() == tsd["param_groups"][0].keys()
    assert {i: list(s) for i, s in sd["state"].items()} == {i: list(s) for i, s in tsd["state"].items()}


def test_bfloat16_round_matches_torch():
    from nn.optim._muon import bfloat16_round

    a = np.random.default_rng(1).standard_normal(1000).astype(np.float32) * 100
    a[:4] = [1 + 2 ** -8, 1 + 3 * 2 ** -8, np.inf, 0.0]  # (two ties: to even, down then up)
    expect = torch.tensor(a).bfloat16().float().numpy()
    np.testing.assert_array_equal(bfloat16_round(a), expect)


def test_optimizer_paths_and_reprs():
    for name in ("Adafactor", "Muon"):
        mine, theirs = getattr(minigrad.optim, name), getattr(torch.optim, name)
        assert mine.__module__.replace("nn.", "torch.", 1) == theirs.__module__
        assert name in minigrad.optim.__all__
        p, q = minigrad.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True)
        assert repr(mine([p])) == repr(theirs([q]))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the two libraries' errors compared)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return None


@pytest.mark.parametrize("name, kwargs", [
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)), ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))), ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-1.0)),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)), ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
])
def test_optimizer_argument_errors(name, kwargs):
    p, q = minigrad.zeros(2, 3, requires_grad=True), torch.zeros(2, 3, requires_grad=True)
    expect = _error(lambda: getattr(torch.optim, name)([q], **kwargs))
    assert expect is not None
    assert _error(lambda: getattr(minigrad.optim, name)([p], **kwargs)) == expect


def test_muon_refuses_non_2d_parameters():
    expect = _error(lambda: torch.optim.Muon([torch.zeros(3, requires_grad=True)]))
    assert expect is not None
    assert _error(lambda: minigrad.optim.Muon([minigrad.zeros(3, requires_grad=True)])) == expect
