"""A differential fuzz of optimizers and lr schedulers against PyTorch: the same parameters and gradients,
then the parameters, the state, state dicts and lrs compared step by step; and the differences it found."""
import warnings

import numpy as np
import pytest

import minigrad
import nn.optim as optim
from nn.optim import lr_scheduler

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
