"""PyTorch 2.13 names scripts use: optim.Adafactor and optim.Muon, nn's FractionalMaxPool2d/3d, CrossMapLRN2d,
Container, LinearCrossEntropyLoss (and F.linear_cross_entropy), the distributions submodules; each against torch."""

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
            mine_value = sd["state"][i][name]
            assert isinstance(mine_value, minigrad.Tensor) and mine_value.dtype.name == str(value.dtype)[6:], name
            np.testing.assert_allclose(mine_value.array, value.numpy(), rtol=tol * 10, atol=tol)


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


# ---- nn ---------------------------------------------------------------------------------------------------
def test_new_nn_names_resolve_with_torch_module_paths():
    for name in ("FractionalMaxPool2d", "FractionalMaxPool3d", "CrossMapLRN2d", "Container", "LinearCrossEntropyLoss"):
        assert getattr(nn, name).__module__.replace("nn.", "torch.nn.", 1) == getattr(torch.nn, name).__module__
        assert name in nn.__all__
    assert minigrad.nn.attention.__name__ == "nn.attention" and minigrad.nn.common_types.__name__ == "nn.common_types"
    assert "linear_cross_entropy" in F.__all__


@pytest.mark.parametrize("n, kwargs", [(2, dict(kernel_size=2, output_ratio=0.5)), (2, dict(kernel_size=(2, 3), output_size=4)),
                                       (3, dict(kernel_size=2, output_size=(2, 3, 2), return_indices=True))])
def test_fractional_max_pool_modules_match_torch(n, kwargs):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3) + (7,) * n)
    samples = rng.random((2, 3, n))
    name = f"FractionalMaxPool{n}d"
    mine = getattr(nn, name)(**kwargs, _random_samples=minigrad.tensor(samples))
    theirs = getattr(torch.nn, name)(**kwargs, _random_samples=torch.tensor(samples))
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    out, tout = mine(minigrad.tensor(x)), theirs(torch.tensor(x))
    if kwargs.get("return_indices"):
        np.testing.assert_array_equal(out[1].numpy(), tout[1].numpy())
        out, tout = out[0], tout[0]
    np.testing.assert_array_equal(out.numpy(), tout.numpy())


@pytest.mark.parametrize("n, kwargs", [(2, dict(kernel_size=2)), (2, dict(kernel_size=2, output_size=2, output_ratio=0.5)),
                                       (2, dict(kernel_size=2, output_ratio=1.5)), (3, dict(kernel_size=0, output_size=2)),
                                       (3, dict(kernel_size=2, output_ratio=(0.5, 0.5, 1.0)))])
def test_fractional_max_pool_module_errors(n, kwargs):
    name = f"FractionalMaxPool{n}d"
    expect = _error(lambda: getattr(torch.nn, name)(**kwargs))
    assert expect is not None
    assert _error(lambda: getattr(nn, name)(**kwargs)) == expect


@pytest.mark.parametrize("size, C", [(3, 7), (5, 8), (2, 4), (4, 3)])
def test_cross_map_lrn2d_matches_torch(size, C):
    rng = np.random.default_rng(size)
    x, g = rng.standard_normal((2, C, 3, 4)), rng.standard_normal((2, C, 3, 4))
    mine, theirs = nn.CrossMapLRN2d(size, alpha=0.3, beta=0.8, k=2), torch.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.8, k=2)
    assert repr(mine) == repr(theirs)
    xm, xt = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = mine(xm), theirs(xt)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    out.backward(minigrad.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    expect = _error(lambda: theirs(torch.zeros(2, 3, 4)))
    assert _error(lambda: mine(minigrad.zeros(2, 3, 4))) == expect


def test_container_warns_and_registers():
    with pytest.warns(FutureWarning) as record:
        c = nn.Container(a=nn.Linear(2, 3))
    with pytest.warns(FutureWarning) as trecord:
        tc = torch.nn.Container(a=torch.nn.Linear(2, 3))
    assert str(record[0].message) == str(trecord[0].message)
    assert repr(c) == repr(tc) and list(c.state_dict()) == list(tc.state_dict())


LCE_CASES = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(ignore_index=1), dict(label_smoothing=0.2),
             dict(weight=True), dict(weight=True, ignore_index=0, reduction="mean"), dict(bias=True, label_smoothing=0.1)]


@pytest.mark.parametrize("kwargs", LCE_CASES)
@pytest.mark.parametrize("unbatched", [False, True])
def test_linear_cross_entropy_matches_torch(kwargs, unbatched):
    kwargs = dict(kwargs)
    rng = np.random.default_rng(0)
    N, D, C = 6, 5, 4
    x, w, b = rng.standard_normal((N, D)), rng.standard_normal((C, D)), rng.standard_normal(C)
    target = rng.integers(0, C, N)
    if unbatched:
        x, target = x[0], target[0]
    cw = rng.random(C) + 0.5
    results = []
    for lib in (minigrad, torch):
        xs, ws, bs = (lib.tensor(a.copy(), requires_grad=True) for a in (x, w, b))
        extra = dict(kwargs)
        if extra.pop("bias", False):
            extra["linear_bias"] = bs
        if extra.pop("weight", False):
            extra["weight"] = lib.tensor(cw)
        ns = minigrad.nn.functional if lib is minigrad else torch.nn.functional
        loss = ns.linear_cross_entropy(xs, ws, lib.tensor(target), **extra)
        loss.backward(lib.ones_like(loss))
        results.append([loss.detach().numpy(), xs.grad.numpy(), ws.grad.numpy(),
                        bs.grad.numpy() if bs.grad is not None else None])
    for a, b_ in zip(*results):
        if b_ is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b_, rtol=1e-12, atol=1e-14)


def test_linear_cross_entropy_probabilities_and_k_dim():
    rng = np.random.default_rng(1)
    x, w, bias = rng.standard_normal((3, 5)), rng.standard_normal((4, 2, 5)), rng.standard_normal((4, 2))
    probs = rng.random((3, 4, 2))
    ids = rng.integers(0, 4, (3, 2))
    for target in (probs, ids):
        out = [ns.linear_cross_entropy(lib.tensor(x), lib.tensor(w), lib.tensor(target), linear_bias=lib.tensor(bias)).item()
               for lib, ns in ((minigrad, F), (torch, torch.nn.functional))]
        np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


@pytest.mark.parametrize("args", [
    ((3, 4, 5), (4, 5), (3,), {}), ((3, 5), (5,), (3,), {}), ((3, 5), (4, 6), (3,), {}),
    ((3, 5), (4, 5), (3,), dict(linear_bias=(3,))), ((5,), (4, 2, 5), (), {}),
    ((3, 5), (4, 5), (3, 4), dict(ignore_index=0)),
])
def test_linear_cross_entropy_errors(args):
    xs, ws, ts, kw = args
    def call(lib, ns):
        extra = {k: lib.zeros(v) for k, v in kw.items() if k == "linear_bias"}
        extra.update({k: v for k, v in kw.items() if k != "linear_bias"})
        target = lib.zeros(ts) if len(ts) == 2 else lib.zeros(ts, dtype=lib.int64)
        return lambda: ns.linear_cross_entropy(lib.zeros(xs), lib.zeros(ws), target, **extra)
    expect = _error(call(torch, torch.nn.functional))
    assert expect is not None
    assert _error(call(minigrad, F)) == expect


@pytest.mark.parametrize("kwargs", [dict(), dict(bias=True, reduction="sum", ignore_index=2, label_smoothing=0.1),
                                    dict(out_features=(2,), bias=True)])
def test_linear_cross_entropy_loss_module(kwargs):
    minigrad.manual_seed(0)
    mine, theirs = nn.LinearCrossEntropyLoss(5, 3, **kwargs).double(), torch.nn.LinearCrossEntropyLoss(5, 3, **kwargs).double()
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    with torch.no_grad():
        for p, q in zip(mine.parameters(), theirs.parameters()):
            q.copy_(torch.tensor(p.detach().numpy()))
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5))
    t = rng.integers(0, 3, (4, 2) if kwargs.get("out_features") else 4)
    loss, tloss = mine(minigrad.tensor(x), minigrad.tensor(t)), theirs(torch.tensor(x), torch.tensor(t))
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-12)
    loss.backward()
    tloss.backward()
    for p, q in zip(mine.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-14)
    for bad in (dict(weight=torch.ones(2)), dict(label_smoothing=1.5)):
        expect = _error(lambda bad=bad: torch.nn.LinearCrossEntropyLoss(5, 3, **bad))
        mine_bad = {k: minigrad.ones(2) if k == "weight" else v for k, v in bad.items()}
        assert _error(lambda mine_bad=mine_bad: nn.LinearCrossEntropyLoss(5, 3, **mine_bad)) == expect


# ---- distributions ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("module, names", [("chi2", ["Chi2"]), ("half_cauchy", ["HalfCauchy"]),
                                           ("one_hot_categorical", ["OneHotCategorical", "OneHotCategoricalStraightThrough"])])
def test_distribution_submodules_hold_their_classes(module, names):
    import importlib

    mine = getattr(minigrad.distributions, module)
    assert mine is importlib.import_module(f"minigrad.distributions.{module}")
    theirs = getattr(torch.distributions, module)
    for name in names:
        cls = getattr(mine, name)
        assert cls is getattr(minigrad.distributions, name)
        assert cls.__module__.replace("minigrad.", "torch.") == getattr(theirs, name).__module__


def test_identity_transform():
    mine, theirs = minigrad.distributions.identity_transform, torch.distributions.identity_transform
    assert repr(mine) == repr(theirs) and type(mine).__name__ == type(theirs).__name__
    x = np.array([0.5, -2.0])
    np.testing.assert_array_equal(mine(minigrad.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy())
