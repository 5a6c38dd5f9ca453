"""A differential fuzz of optimizers and lr schedulers against PyTorch: the same parameters and gradients,
then the parameters, the state, state dicts and lrs compared step by step; and the differences it found."""
import warnings

import numpy as np
import pytest

import minigrad
import nn.optim as optim
from nn.optim import lr_scheduler
from tests.fuzz_settings import fuzz_rng

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _plain(v):
    """A state dict value as plain Python, for comparing PyTorch's with minigrad's."""
    if isinstance(v, (torch.Tensor, minigrad.Tensor)):
        return v.tolist()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, float):
        return round(v, 12)
    return v


# ---- the differences found ---------------------------------------------------------------------------------


@pytest.mark.parametrize("foreach", [None, True, False])
def test_sgd_without_momentum_keeps_no_state(foreach):
    # a group without momentum has no per-parameter state in PyTorch: its state_dict lists only the others
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(3) for _ in range(3)]
    sds = []
    for lib, O in ((torch, torch.optim), (minigrad, optim)):
        ps = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        opt = O.SGD([{"params": ps[:2]}, {"params": ps[2:], "momentum": 0.9}], lr=0.1, foreach=foreach)
        for p, a in zip(ps, arrays):
            p.grad = lib.tensor(a * 2)
        opt.step()
        sds.append(_plain(opt.state_dict()["state"]))
    assert sds[1] == sds[0]


def _both_schedulers(make, steps, ngroups=2):
    out = []
    for lib, O, S in ((torch, torch.optim, torch.optim.lr_scheduler), (minigrad, optim, lr_scheduler)):
        ps = [lib.zeros(2, requires_grad=True) for _ in range(ngroups)]
        opt = O.SGD([{"params": [p], "lr": 0.1 / (i + 1)} for i, p in enumerate(ps)], momentum=0.9)
        sched = make(S, opt)
        for _ in range(steps):
            opt.step()
            sched.step()
        out.append((opt, sched))
    return out


@pytest.mark.parametrize("milestones", [[4], [2, 2, 5], [5, 1, 3]])
def test_multistep_milestones_are_a_counter(milestones):
    (topt, theirs), (mopt, ours) = _both_schedulers(lambda S, o: S.MultiStepLR(o, milestones, gamma=0.5), 7)
    assert dict(ours.state_dict()["milestones"]) == dict(theirs.state_dict()["milestones"])
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())
    # PyTorch's state dict (its Counter) loads, and the schedule goes on as PyTorch's, by step and by epoch
    ps = [minigrad.zeros(2, requires_grad=True) for _ in range(2)]
    opt = optim.SGD([{"params": [p], "lr": 0.1 / (i + 1)} for i, p in enumerate(ps)], momentum=0.9)
    again = lr_scheduler.MultiStepLR(opt, [1], gamma=0.5)
    opt.load_state_dict({"state": {}, "param_groups": _plain(topt.state_dict()["param_groups"])})
    again.load_state_dict(theirs.state_dict())
    for sched, o in ((theirs, topt), (again, opt)):
        o.step()
        sched.step()
    assert again.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.step(6)
        again.step(6)
    assert again.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-15)


@pytest.mark.parametrize("three_phase", [False, True])
def test_one_cycle_schedule_phases_are_pytorchs_dicts(three_phase):
    def make(S, o):
        return S.OneCycleLR(o, max_lr=[0.1, 0.2], total_steps=12, three_phase=three_phase, anneal_strategy="linear")

    (topt, theirs), (mopt, ours) = _both_schedulers(make, 4)
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())
    # PyTorch's state dict loads into minigrad's scheduler, which goes on as PyTorch's
    ps = [minigrad.zeros(2, requires_grad=True) for _ in range(2)]
    opt = optim.SGD([{"params": [p], "lr": 0.1 / (i + 1)} for i, p in enumerate(ps)], momentum=0.9)
    again = lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=12)
    opt.load_state_dict({"state": {}, "param_groups": _plain(topt.state_dict()["param_groups"])})
    again.load_state_dict(theirs.state_dict())
    for _ in range(5):
        for sched, o in ((theirs, topt), (again, opt)):
            o.step()
            sched.step()
        assert again.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        assert opt.param_groups[0]["momentum"] == pytest.approx(topt.param_groups[0]["momentum"], rel=1e-12)


@pytest.mark.parametrize("fractional", [False, True])
def test_warm_restarts_state_dict_as_pytorchs(fractional):
    # its step is its own: `_step_count` stays 0 in PyTorch, alone and inside SequentialLR
    def make(S, o):
        return S.SequentialLR(o, [S.ConstantLR(o, total_iters=2), S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2)],
                              milestones=[3])

    (_, theirs), (_, ours) = _both_schedulers(make, 8)
    assert _plain(ours.state_dict()) == _plain(theirs.state_dict())
    got = []
    for S, lib, O in ((torch.optim.lr_scheduler, torch, torch.optim), (lr_scheduler, minigrad, optim)):
        opt = O.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        sched = S.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(10):
                opt.step()
                sched.step(i * 0.7) if fractional else sched.step()
        got.append((_plain(sched.state_dict()), sched.get_last_lr()))
    assert got[1] == got[0]


@pytest.mark.parametrize("weight_decay,maximize,t0", [(0.0, False, 1e6), (0.1, True, 2.0), (0.1, False, 2.0)])
def test_asgd_foreach_rounds_as_pytorchs(weight_decay, maximize, t0):
    # PyTorch's foreach=True form: p - eta (g + lambd p), its eta from a float32 step tensor
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in [(3,), (), (2, 2)]]
    kw = dict(lr=0.1, lambd=0.1, alpha=0.75, t0=t0, weight_decay=weight_decay, maximize=maximize, foreach=True)
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in arrays]
    mp = [minigrad.tensor(a.copy(), requires_grad=True) for a in arrays]
    topt, mopt = torch.optim.ASGD(tp, **kw), optim.ASGD(mp, **kw)
    for _ in range(8):
        for a, t, m in zip(arrays, tp, mp):
            g = rng.standard_normal(a.shape)
            t.grad, m.grad = torch.tensor(g), minigrad.tensor(g)
        topt.step()
        mopt.step()
        for t, m in zip(tp, mp):
            np.testing.assert_allclose(m.array, t.detach().numpy(), rtol=1e-13, atol=1e-15)
            assert mopt.state[m]["eta"] == topt.state[t]["eta"].item()
            np.testing.assert_allclose(mopt.state[m]["ax"].numpy(), topt.state[t]["ax"].numpy(), rtol=1e-13, atol=1e-15)


# ---- a small seeded fuzz ---------------------------------------------------------------------------------

_OPTIONS = {
    "SGD": [dict(momentum=0.9, nesterov=True), dict(momentum=0.5, dampening=0.1, weight_decay=0.01, maximize=True), {}],
    "Adam": [dict(amsgrad=True, weight_decay=0.1), dict(betas=(0.5, 0.9), maximize=True, decoupled_weight_decay=True)],
    "AdamW": [dict(amsgrad=True), dict(eps=1e-3, weight_decay=0.1)],
    "Adamax": [dict(weight_decay=0.1), dict(betas=(0.5, 0.9), maximize=True)],
    "NAdam": [dict(momentum_decay=0.1, weight_decay=0.1), dict(decoupled_weight_decay=True, weight_decay=0.1)],
    "RAdam": [dict(weight_decay=0.1), dict(decoupled_weight_decay=True, weight_decay=0.1, betas=(0.5, 0.9))],
    "RMSprop": [dict(centered=True, momentum=0.9), dict(alpha=0.5, weight_decay=0.1, maximize=True)],
    "Rprop": [dict(etas=(0.3, 1.5)), dict(step_sizes=(1e-3, 0.05), maximize=True)],
    "Adagrad": [dict(lr_decay=0.1, initial_accumulator_value=0.5), dict(weight_decay=0.1, maximize=True)],
    "Adadelta": [dict(rho=0.5, weight_decay=0.1), dict(lr=0.5, maximize=True)],
    "ASGD": [dict(t0=2.0, lambd=0.1, weight_decay=0.1), dict(alpha=0.5, maximize=True)],
}


@pytest.mark.parametrize("name", sorted(_OPTIONS))
def test_seeded_fuzz_against_pytorch(name):
    """Random shapes (0-d and empty too), a frozen parameter, gradients missing in some steps, two groups with
    their own options, foreach off / on / default: parameters, state and state dicts as PyTorch's, then
    PyTorch's state dict loaded and both resumed."""
    for seed in range(6):
        _fuzz_case(name, seed)


def _fuzz_case(name, seed):
    rng = fuzz_rng(seed)
    dtype = (np.float32, np.float64)[seed % 2]
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    shapes = [(), (0,), (3,), (2, 3), (4, 1, 2)]
    arrays = [rng.standard_normal(shapes[i]).astype(dtype) for i in rng.permutation(5)[:4]]
    frozen = [False, False, False, True]
    options = _OPTIONS[name]
    opts, group2 = dict(options[seed % len(options)], lr=0.01 if name != "Adadelta" else 1.0), options[-1]

    def build(lib, O, params):
        groups = [{"params": params[:2]}, {"params": params[2:], **group2}]
        return getattr(O, name)(groups, foreach=(None, False, True)[seed % 3], **opts)

    tp = [torch.tensor(a.copy(), requires_grad=not f) for a, f in zip(arrays, frozen)]
    mp = [minigrad.tensor(a.copy(), requires_grad=not f) for a, f in zip(arrays, frozen)]
    topt, mopt = build(torch, torch.optim, tp), build(minigrad, optim, mp)

    def step(mopt, mp):
        for a, t, m, f in zip(arrays, tp, mp, frozen):
            if f:
                continue
            if rng.random() < 0.2:
                t.grad = m.grad = None
            else:
                g = rng.standard_normal(a.shape).astype(dtype)
                t.grad, m.grad = torch.tensor(g), minigrad.tensor(g)
        topt.step()
        mopt.step()
        for t, m in zip(tp, mp):
            assert m.array.dtype == t.detach().numpy().dtype
            np.testing.assert_allclose(m.array, t.detach().numpy(), **tol)

    for _ in range(4):
        step(mopt, mp)
    theirs, ours = topt.state_dict(), mopt.state_dict()
    assert list(ours["state"]) == list(theirs["state"])
    for k, s in theirs["state"].items():
        assert list(ours["state"][k]) == list(s)
        for n, v in s.items():
            np.testing.assert_allclose(np.asarray(_plain(ours["state"][k][n]), dtype=np.float64),
                                       np.asarray(_plain(v), dtype=np.float64), **tol)
    assert [list(g) for g in ours["param_groups"]] == [list(g) for g in theirs["param_groups"]]
    assert _plain(ours["param_groups"]) == _plain(theirs["param_groups"])
    # PyTorch's state dict, by numpy, into a fresh optimizer over PyTorch's parameters: both go on alike
    mp2 = [minigrad.tensor(t.detach().numpy().copy(), requires_grad=not f) for t, f in zip(tp, frozen)]
    mopt2 = build(minigrad, optim, mp2)

    def conv(v):
        return minigrad.tensor(v.numpy().copy()) if isinstance(v, torch.Tensor) else v

    mopt2.load_state_dict({"state": {k: {n: conv(v) for n, v in s.items()} for k, s in theirs["state"].items()},
                           "param_groups": theirs["param_groups"]})
    for _ in range(2):
        step(mopt2, mp2)
