"""Optimizer hooks, API texts, LBFGS state and scheduler state dicts against PyTorch's."""
import copy
import importlib
import re
import warnings

import numpy as np
import pytest

import minigrad
import nn
from nn.optim import lr_scheduler as mg_sched

torch = pytest.importorskip("torch")
LIBS = [(torch, torch.optim, "torch.optim.optimizer"), (minigrad, nn.optim, "nn.optim.optimizer")]


def _both(fn):
    """fn(lib, optim, optimizer_module) run on PyTorch and on minigrad -> (result or (error type, text)) of each."""
    out = []
    for lib, optim, mod in LIBS:
        try:
            out.append(fn(lib, optim, importlib.import_module(mod)))
        except Exception as e:  # noqa: BLE001 (the error itself is compared)
            out.append((type(e).__name__, re.sub(r"0x[0-9a-f]+", "0x", str(e))))
    return out


def _param(lib, *shape):
    p = lib.nn.Parameter(lib.ones(*shape))
    p.grad = lib.ones(*shape) * 0.5
    return p


def test_step_and_state_dict_hooks_order_and_results():
    def fn(lib, optim, mod):
        log = []
        o = optim.SGD([_param(lib, 2)], lr=0.1)
        h1 = mod.register_optimizer_step_pre_hook(lambda opt, a, k: log.append(("gpre", len(a), sorted(k))))
        h2 = mod.register_optimizer_step_post_hook(lambda opt, a, k: log.append("gpost"))
        try:
            o.register_step_pre_hook(lambda opt, a, k: log.append(("pre", a[0] is opt)))
            h = o.register_step_post_hook(lambda opt, a, k: log.append("post"))
            o.step()
            h.remove()
            o.step()
        finally:
            h1.remove()
            h2.remove()
        o.step()
        o.register_state_dict_pre_hook(lambda opt: log.append("sd_pre"))
        o.register_state_dict_pre_hook(lambda opt: log.append("sd_pre_first"), prepend=True)
        o.register_state_dict_post_hook(lambda opt, sd: {**sd, "extra": 1})
        o.register_load_state_dict_pre_hook(lambda opt, sd: log.append(("ld_pre", sorted(sd))))
        o.register_load_state_dict_pre_hook(
            lambda opt, sd: {**sd, "param_groups": [{**sd["param_groups"][0], "lr": 0.5}]})
        o.register_load_state_dict_post_hook(lambda opt: log.append("ld_post"))
        o.register_load_state_dict_post_hook(lambda opt: log.append("ld_post_first"), prepend=True)
        sd = o.state_dict()
        log.append(sorted(sd))
        o.load_state_dict(sd)
        log.append(o.param_groups[0]["lr"])
        return log

    t, m = _both(fn)
    assert m == t


def test_step_pre_hook_new_arguments_and_bad_return():
    def fn(lib, optim, mod):
        o = optim.SGD([_param(lib, 2)], lr=0.1)
        h = o.register_step_pre_hook(lambda opt, a, k: (a, {"closure": lambda: 7.0}))
        out = o.step()
        h.remove()
        o.register_step_pre_hook(lambda opt, a, k: 5)
        try:
            o.step()
        except RuntimeError as e:
            return out, re.sub(r"0x[0-9a-f]+", "0x", str(e))

    t, m = _both(fn)
    assert m == t


@pytest.mark.parametrize("case", ["groups", "params", "duplicate", "non_tensor", "not_dict", "zero_grad"])
def test_optimizer_api_texts(case):
    def fn(lib, optim, mod):
        if case == "groups":
            optim.SGD([_param(lib, 2)], lr=0.1).load_state_dict(
                optim.SGD([{"params": [_param(lib, 2)]}, {"params": [_param(lib, 2)]}], lr=0.1).state_dict())
        if case == "params":
            optim.SGD([_param(lib, 2)], lr=0.1).load_state_dict(
                optim.SGD([_param(lib, 2), _param(lib, 3)], lr=0.1).state_dict())
        if case == "duplicate":
            p = _param(lib, 2)
            optim.SGD([p], lr=0.1).add_param_group({"params": [p], "lr": 0.2})
        if case == "non_tensor":
            optim.SGD([_param(lib, 2)], lr=0.1).add_param_group({"params": [1.0]})
        if case == "not_dict":
            optim.SGD([_param(lib, 2)], lr=0.1).add_param_group([_param(lib, 2)])
        if case == "zero_grad":
            p = _param(lib, 2)
            optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
            return p.grad.tolist()
        return "no error"

    t, m = _both(fn)
    assert m == t


def test_add_param_group_takes_missing_defaults():
    def fn(lib, optim, mod):
        o = optim.Adam([_param(lib, 2)], lr=0.1, betas=(0.8, 0.9))
        o.add_param_group({"params": [_param(lib, 3)], "lr": 0.2})
        return [(k, v) for k, v in o.param_groups[1].items() if k != "params"]

    t, m = _both(fn)
    assert m == t


def test_step_count_past_float32_exact_range():
    """From 2^24 a float32 step no longer grows (PyTorch's 0-d tensor); the update uses what the tensor holds."""
    def fn(lib, optim, mod):
        p = lib.nn.Parameter(lib.tensor(np.array([1.0, -2.0], np.float32)))
        o = optim.Adam([p], lr=0.1, foreach=False)
        p.grad = lib.tensor(np.array([0.5, 0.25], np.float32))
        o.step()
        sd = o.state_dict()
        sd["state"][0]["step"] = lib.tensor(np.float32(2 ** 24 - 1))
        o.load_state_dict(sd)
        steps = []
        for _ in range(2):
            o.step()
            steps.append(float(o.state[p]["step"]))
        return steps, p.detach().numpy().tolist()

    (t_steps, t_values), (m_steps, m_values) = _both(fn)
    assert m_steps == t_steps
    np.testing.assert_allclose(m_values, t_values, rtol=1e-5)  # (the update's own float32 rounding differs)


def _lbfgs_run(lib, optim, line_search_fn, max_iter, steps):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 5))
    x = lib.nn.Parameter(lib.tensor(np.zeros(5)))
    A, b = lib.tensor(a @ a.T + np.eye(5)), lib.tensor(rng.standard_normal(5))
    o = optim.LBFGS([x], lr=1, max_iter=max_iter, history_size=3, line_search_fn=line_search_fn)

    def closure():
        o.zero_grad()
        loss = ((A @ x) * x).sum() * 0.5 - (b * x).sum() + (x ** 4).sum() * 0.1
        loss.backward()
        return loss

    losses = [float(o.step(closure).detach()) for _ in range(steps)]
    return x.detach().numpy(), losses, o.state_dict()["state"][0]


def _plain(v):
    if isinstance(v, (torch.Tensor, minigrad.Tensor)):
        return np.asarray(v.detach().numpy(), np.float64)
    if isinstance(v, list):
        return [_plain(u) for u in v]
    return v


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("max_iter,steps", [(4, 3), (1, 1), (1, 3)])
def test_lbfgs_state_and_trajectory_vs_torch(line_search_fn, max_iter, steps):
    xt, lt, st = _lbfgs_run(torch, torch.optim, line_search_fn, max_iter, steps)
    xm, lm, sm = _lbfgs_run(minigrad, nn.optim, line_search_fn, max_iter, steps)
    np.testing.assert_allclose(xm, xt, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(lm, lt, rtol=1e-12)
    assert list(sm) == list(st)  # (PyTorch's order: "al" where its first quasi-Newton iteration made it)
    for k, tv in st.items():
        mv = sm[k]
        assert type(mv).__name__.replace("Tensor", "") == type(tv).__name__.replace("Tensor", ""), k
        a, b = _plain(mv), _plain(tv)
        if isinstance(b, list):
            assert len(a) == len(b), k
            for u, w in zip(a, b):
                assert (u is None) == (w is None), k
                if w is not None:
                    np.testing.assert_allclose(u, w, rtol=1e-9, atol=1e-12, err_msg=k)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=k)


class _Mul:
    def __init__(self, f):
        self.f = f

    def __call__(self, epoch):
        return self.f ** epoch


SCHEDULERS = {
    "StepLR": lambda L, o: L.StepLR(o, 3, 0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, [2, 4, 4], 0.5),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, 0.9),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, 5, 0.01),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 3, 2, 0.001),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, [1.0, 0.5], total_steps=20),
    "CyclicLR": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9),
    "LinearLR": lambda L, o: L.LinearLR(o, 0.2, 1.0, 4),
    "ConstantLR": lambda L, o: L.ConstantLR(o, 0.5, 3),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, 5, 2.0),
    "LambdaLR": lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, _Mul(0.8)]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, [_Mul(0.9), lambda e: 0.95]),
    "ReduceLROnPlateau": lambda L, o: L.ReduceLROnPlateau(o, patience=1, cooldown=1),
    "SequentialLR": lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)], [3]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 2), L.ExponentialLR(o, 0.9)]),
}


def _scheduler(lib, name):
    sched = torch.optim.lr_scheduler if lib is torch else mg_sched
    params = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))]
    opt = (torch.optim if lib is torch else nn.optim).SGD(
        [{"params": params[:1]}, {"params": params[1:], "lr": 0.05}], lr=0.1, momentum=0.9)
    return SCHEDULERS[name](sched, opt)


def _advance(s, n, start=0):
    lrs = []
    for i in range(start, start + n):
        s.optimizer.step()
        if isinstance(s, (torch.optim.lr_scheduler.ReduceLROnPlateau, mg_sched.ReduceLROnPlateau)):
            s.step(1.0 - 0.1 * (i % 5 == 3))
        else:
            s.step()
        lrs.append(s.get_last_lr())
    return lrs


def _same(m, t, path="state_dict"):
    """Equal values of the same Python types, dict keys in the same order (functions aside: not saved)."""
    assert type(m) is type(t), (path, m, t)
    if isinstance(t, dict):
        assert list(m) == list(t), path
        for k in t:
            _same(m[k], t[k], f"{path}.{k}")
    elif isinstance(t, (list, tuple)):
        assert len(m) == len(t), path
        for i, (u, v) in enumerate(zip(m, t)):
            _same(u, v, f"{path}[{i}]")
    elif not callable(t):
        assert m == t or (m != m and t != t), (path, m, t)


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("steps", [0, 7])
def test_scheduler_state_dict_vs_torch(name, steps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, m = _scheduler(torch, name), _scheduler(minigrad, name)
        assert _advance(m, steps) == _advance(t, steps)
    assert m.get_last_lr() == t.get_last_lr()
    _same(m.state_dict(), t.state_dict())


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("direction", ["torch_to_minigrad", "minigrad_to_torch"])
def test_scheduler_state_dict_loads_both_ways(name, direction):
    src_lib, dst_lib = (torch, minigrad) if direction == "torch_to_minigrad" else (minigrad, torch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src, dst = _scheduler(src_lib, name), _scheduler(dst_lib, name)
        _advance(src, 4)
        for g, h in zip(src.optimizer.param_groups, dst.optimizer.param_groups):  # (as the optimizer's load would)
            h.update({k: g[k] for k in ("lr", "initial_lr", "momentum") if k in g})
        dst.load_state_dict(copy.deepcopy(src.state_dict()))
        assert _advance(dst, 6, 4) == _advance(src, 6, 4)
    _same(dst.state_dict(), src.state_dict()) if dst_lib is minigrad else _same(src.state_dict(), dst.state_dict())


def test_scheduler_warnings_vs_torch():
    def messages(lib):
        out = []
        for call in ("before_optimizer", "epoch"):
            s = _scheduler(lib, "StepLR")
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                if call == "epoch":
                    s.optimizer.step()
                    s.step(3)
                else:
                    s.step()
            out.append([(x.category.__name__, str(x.message)) for x in w])
        return out

    assert messages(minigrad) == messages(torch)
