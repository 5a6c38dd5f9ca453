"""Learning-rate schedules: PyTorch's LambdaLR / StepLR / MultiStepLR / ExponentialLR / LinearLR /
CosineAnnealingLR / OneCycleLR / ReduceLROnPlateau, nanoGPT's warmup-cosine."""
import math

import pytest

import minigrad
import nn
from nn.optim import SGD, AdamW
from nn.optim.lr_scheduler import (CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR, MultiStepLR, OneCycleLR,
                                   ReduceLROnPlateau, StepLR, WarmupCosineLR, warmup_cosine_lr)


def _optimizer():
    a, b = nn.Parameter(minigrad.ones(2)), nn.Parameter(minigrad.ones(3))
    return SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)


def _torch_optimizer(torch):
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))
    return torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)


def _lrs(scheduler, steps):
    out = [scheduler.get_last_lr()]
    for _ in range(steps):
        scheduler.optimizer.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    return out


@pytest.mark.parametrize("name,args", [
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95**e)),
    ("StepLR", dict(step_size=7, gamma=0.3)),
    ("CosineAnnealingLR", dict(T_max=10, eta_min=0.01)),  # 30 steps: past T_max, PyTorch's curve goes back up
    ("MultiStepLR", dict(milestones=[15, 3, 8, 8], gamma=0.5)),  # unsorted, and 8 twice: gamma**2 there
    ("ExponentialLR", dict(gamma=0.9)),
    ("LinearLR", dict()),  # PyTorch's defaults: 1/3 up to 1 over 5 steps
    ("LinearLR", dict(start_factor=0.9, end_factor=0.05, total_iters=12)),  # down, then flat
])
def test_matches_torch(torch, name, args):
    ours = getattr(nn.optim.lr_scheduler, name)(_optimizer(), **args)
    theirs = getattr(torch.optim.lr_scheduler, name)(_torch_optimizer(torch), **args)
    for a, b in zip(_lrs(ours, 30), _lrs(theirs, 30)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)


def test_warmup_cosine_lr_is_nanogpts_formula():
    lr, warmup, decay, lo = 6e-4, 10, 100, 6e-5
    assert warmup_cosine_lr(0, lr, warmup, decay, lo) == lr * 1 / 11
    assert warmup_cosine_lr(9, lr, warmup, decay, lo) == lr * 10 / 11
    assert warmup_cosine_lr(10, lr, warmup, decay, lo) == pytest.approx(lr)  # cosine starts at the peak
    assert warmup_cosine_lr(55, lr, warmup, decay, lo) == pytest.approx(lo + 0.5 * (lr - lo))  # half way
    assert warmup_cosine_lr(100, lr, warmup, decay, lo) == pytest.approx(lo)
    assert warmup_cosine_lr(101, lr, warmup, decay, lo) == lo
    assert warmup_cosine_lr(10**6, lr, warmup, decay, lo) == lo
    r = (30 - warmup) / (decay - warmup)
    assert warmup_cosine_lr(30, lr, warmup, decay, lo) == lo + 0.5 * (1.0 + math.cos(math.pi * r)) * (lr - lo)
    assert warmup_cosine_lr(5, lr, 5, 5, lo) == lo  # an empty decay span


def test_warmup_cosine_scheduler_drives_the_optimizer():
    opt = _optimizer()
    sched = WarmupCosineLR(opt, warmup_iters=5, lr_decay_iters=20, min_lr=0.01)
    for it in range(30):
        assert opt.param_groups[0]["lr"] == warmup_cosine_lr(it, 0.1, 5, 20, 0.01)
        assert opt.param_groups[1]["lr"] == warmup_cosine_lr(it, 0.5, 5, 20, 0.01)
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="warmup_iters <= lr_decay_iters"):
        WarmupCosineLR(_optimizer(), warmup_iters=10, lr_decay_iters=5)


@pytest.mark.parametrize("make", [
    lambda opt: CosineAnnealingLR(opt, T_max=12, eta_min=0.001),
    lambda opt: MultiStepLR(opt, [2, 9, 9], gamma=0.5),
    lambda opt: ExponentialLR(opt, 0.8),
    lambda opt: LinearLR(opt, 0.2, 0.7, total_iters=10),
    lambda opt: OneCycleLR(opt, [1.0, 2.0], total_steps=24, three_phase=True),
    lambda opt: WarmupCosineLR(opt, 4, 15, min_lr=[0.01, 0.02]),
    lambda opt: StepLR(opt, 3, gamma=0.5),
    lambda opt: LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.9**e]),
])
def test_resume_through_state_dict_and_nn_save(tmp_path, make):
    opt = _optimizer()
    sched = make(opt)
    reference = _lrs(sched, 20)

    opt = _optimizer()
    sched = make(opt)
    first = _lrs(sched, 8)
    nn.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "s.safetensors")
    ckpt = nn.load(tmp_path / "s.safetensors")
    opt2 = _optimizer()
    sched2 = make(opt2)
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert first + _lrs(sched2, 12)[1:] == reference


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        StepLR(object(), 3)
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(AdamW([nn.Parameter(minigrad.ones(1))]), 3, last_epoch=5)


def test_closed_forms():
    """What the chained forms add up to (within rounding): the documented formulas."""
    lrs = _lrs(MultiStepLR(_optimizer(), [2, 5], gamma=0.1), 7)
    assert [lr[0] for lr in lrs] == pytest.approx([0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001, 0.001], rel=1e-12)
    lrs = _lrs(ExponentialLR(_optimizer(), 0.5), 4)
    assert [lr[1] for lr in lrs] == pytest.approx([0.5 * 0.5**t for t in range(5)], rel=1e-12)
    lrs = _lrs(LinearLR(_optimizer(), start_factor=0.5, end_factor=1.0, total_iters=4), 6)
    assert [lr[0] for lr in lrs] == pytest.approx([0.05, 0.0625, 0.075, 0.0875, 0.1, 0.1, 0.1], rel=1e-12)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        LinearLR(_optimizer(), start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        LinearLR(_optimizer(), end_factor=1.5)


def _momentum(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def _one_cycle_run(optimizer, cls, kwargs, steps):
    """(lrs, momentums) of each group after construction and after each of `steps` steps."""
    sched = cls(optimizer, **kwargs)
    out = [(sched.get_last_lr(), [_momentum(g) for g in optimizer.param_groups])]
    for _ in range(steps):
        optimizer.step()
        sched.step()
        out.append((sched.get_last_lr(), [_momentum(g) for g in optimizer.param_groups]))
    return sched, out


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
@pytest.mark.parametrize("kwargs", [
    dict(max_lr=1.0, total_steps=30),
    dict(max_lr=[1.0, 3.0], epochs=6, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear"),
    dict(max_lr=2.0, total_steps=30, pct_start=0.2, three_phase=True, div_factor=10.0, final_div_factor=100.0,
         base_momentum=[0.8, 0.7], max_momentum=0.9),
    dict(max_lr=1.0, total_steps=30, three_phase=True, anneal_strategy="linear", cycle_momentum=False),
], ids=["default", "linear-per-group", "three-phase", "no-momentum"])
def test_one_cycle_matches_torch(torch, optimizer, kwargs):
    """All 30 steps (every phase, up to the last allowed step), the lr and the momentum (SGD's
    `momentum`, AdamW's `betas[0]`), and the group entries it writes."""
    if optimizer == "SGD":
        ours, theirs = _optimizer(), _torch_optimizer(torch)
    else:
        ours = AdamW([{"params": [nn.Parameter(minigrad.ones(2))]}, {"params": [nn.Parameter(minigrad.ones(3))]}])
        theirs = torch.optim.AdamW([{"params": [torch.nn.Parameter(torch.ones(2))]},
                                    {"params": [torch.nn.Parameter(torch.ones(3))]}])
    sched, got = _one_cycle_run(ours, OneCycleLR, kwargs, 30)
    _, want = _one_cycle_run(theirs, torch.optim.lr_scheduler.OneCycleLR, kwargs, 30)
    for step, ((lr, m), (tlr, tm)) in enumerate(zip(got, want)):
        assert lr == pytest.approx(tlr, rel=1e-12, abs=1e-15), f"lr at step {step}"
        assert m == pytest.approx(tm, rel=1e-12), f"momentum at step {step}"
    peak = max(lr[-1] for lr, _ in got)
    assert peak == pytest.approx(max(tlr[-1] for tlr, _ in want)) and peak > 10 * got[0][0][-1]
    keys = ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum")
    for group, tgroup in zip(ours.param_groups, theirs.param_groups):
        written = {k: group[k] for k in keys if k in group}
        assert written == pytest.approx({k: tgroup[k] for k in keys if k in tgroup}, rel=1e-12)
        assert len(written) == (5 if kwargs.get("cycle_momentum", True) else 3)
    with pytest.raises(ValueError, match="Tried to step 31 times"):
        sched.step()


def test_one_cycle_errors():
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        OneCycleLR(_optimizer(), 1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps"):
        OneCycleLR(_optimizer(), 1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        OneCycleLR(_optimizer(), 1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        OneCycleLR(_optimizer(), 1.0, total_steps=10, anneal_strategy="step")
    with pytest.raises(ValueError, match="expected 2 values for max_lr"):
        OneCycleLR(_optimizer(), [1.0], total_steps=10)
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        OneCycleLR(nn.optim.Adagrad([nn.Parameter(minigrad.ones(1))]), 1.0, total_steps=10)
    OneCycleLR(nn.optim.Adagrad([nn.Parameter(minigrad.ones(1))]), 1.0, total_steps=10, cycle_momentum=False)


# ReduceLROnPlateau: a plateau from step 3, cooldown, then a new best, then a long plateau to min_lr
METRICS = [5.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5,
           2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5]


def _plateau_lrs(scheduler, metrics):
    out = [scheduler.get_last_lr()]
    for m in metrics:
        scheduler.optimizer.step()
        scheduler.step(m)
        out.append(scheduler.get_last_lr())
    return out


def test_reduce_on_plateau_by_hand():
    """patience=2: the third bad step in a row reduces; cooldown=2: the two steps after a reduction
    do not count as bad; min_lr floors each group."""
    sched = ReduceLROnPlateau(_optimizer(), factor=0.5, patience=2, cooldown=2, min_lr=[0.02, 0.1])
    lrs = [lr[0] for lr in _plateau_lrs(sched, METRICS[:20])]
    # steps from 1: bad at 4, 5, 6 -> reduced at 6; cooldown 7, 8; bad 9, 10; 11 a new best (2.0);
    # bad 12, 13, 14 -> reduced at 14; cooldown 15, 16; bad 17, 18, 19 -> reduced at 19, to the floor
    expected = [0.1] * 6 + [0.05] * 8 + [0.025] * 5 + [0.02] * 2
    assert lrs == pytest.approx(expected, rel=1e-12)
    assert sched.best == 2.0 and sched.last_epoch == 20 and sched.cooldown_counter == 1
    assert sched.get_last_lr()[1] == 0.1  # 0.5 -> 0.25 -> 0.125 -> the floor 0.1


@pytest.mark.parametrize("kwargs,metrics", [
    (dict(factor=0.5, patience=2, cooldown=2, min_lr=[0.02, 0.1]), METRICS),
    (dict(mode="max", factor=0.3, patience=1, threshold=0.5, threshold_mode="abs", cooldown=1),
     [1.0, 1.2, 1.6, 1.7, 2.0, 2.2, 3.0, 3.1, 2.9, 3.3, 3.6, 3.4] * 2),
    (dict(mode="min", patience=0, threshold=0.1, min_lr=0.009, eps=0.002), [1.0, 0.95, 0.8, 0.75] * 4),
    (dict(mode="max", patience=3, threshold=0.01), [0.5, 0.6, 0.601, 0.605, 0.605, 0.62, 0.61, 0.6, 0.59] * 3),
], ids=["min-rel-cooldown", "max-abs", "eps-skips", "max-rel"])
def test_reduce_on_plateau_matches_torch(torch, kwargs, metrics):
    ours = ReduceLROnPlateau(_optimizer(), **kwargs)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(_torch_optimizer(torch), **kwargs)
    got, want = _plateau_lrs(ours, metrics), _plateau_lrs(theirs, metrics)
    assert len(got) == len(want)
    for step, (a, b) in enumerate(zip(got, want)):
        assert a == pytest.approx(b, rel=1e-12), f"lr after step {step}"
    assert len({tuple(lr) for lr in got}) >= 3  # at least two reductions happened
    if "eps" in kwargs:  # 0.01 -> max(0.001, min_lr 0.009) is a change under eps: skipped
        assert got[-1] == pytest.approx([0.01, 0.009])
    for key in ("best", "num_bad_epochs", "cooldown_counter", "last_epoch"):
        assert getattr(ours, key) == getattr(theirs, key), key


def test_reduce_on_plateau_resumes_and_errors(tmp_path):
    opt = _optimizer()
    reference = _plateau_lrs(ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=2), METRICS)
    opt = _optimizer()
    sched = ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=2)
    first = _plateau_lrs(sched, METRICS[:12])  # stops in a plateau, with bad steps counted
    assert sched.num_bad_epochs == 1
    nn.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "s.safetensors")
    ckpt = nn.load(tmp_path / "s.safetensors")
    opt2 = _optimizer()
    sched2 = ReduceLROnPlateau(opt2, factor=0.5, patience=2, cooldown=2)
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert first + _plateau_lrs(sched2, METRICS[12:])[1:] == reference
    assert sched2.step(minigrad.tensor(0.5)) is None and sched2.best == 0.5  # a 0-d tensor as the metric
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        ReduceLROnPlateau(_optimizer(), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown"):
        ReduceLROnPlateau(_optimizer(), mode="avg")
    with pytest.raises(ValueError, match="threshold mode pct is unknown"):
        ReduceLROnPlateau(_optimizer(), threshold_mode="pct")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        ReduceLROnPlateau(_optimizer(), min_lr=[0.1])
