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


def test_resuming_without_initial_lr_is_pytorchs_text(torch):
    # a scheduler made with last_epoch >= 0 before the optimizer's state (and its initial_lr) was loaded
    with pytest.raises(KeyError) as want:
        torch.optim.lr_scheduler.StepLR(torch.optim.AdamW([torch.nn.Parameter(torch.ones(1))]), 3, last_epoch=5)
    with pytest.raises(KeyError) as got:
        StepLR(AdamW([nn.Parameter(minigrad.ones(1))]), 3, last_epoch=5)
    assert str(got.value) == str(want.value)


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
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
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


# ---- ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR, SequentialLR,
# ChainedScheduler; step(epoch) by the closed forms ---------------------------------------------------------
import warnings  # noqa: E402

from nn.optim.lr_scheduler import (ChainedScheduler, ConstantLR, CosineAnnealingWarmRestarts,  # noqa: E402
                                   CyclicLR, MultiplicativeLR, PolynomialLR, SequentialLR)

# each builds a schedule from `lib` (nn.optim.lr_scheduler or torch.optim.lr_scheduler) on `opt`
NEW_SCHEDULES = {
    "ConstantLR": lambda lib, opt: lib.ConstantLR(opt),
    "ConstantLR-half": lambda lib, opt: lib.ConstantLR(opt, factor=0.5, total_iters=7),
    "MultiplicativeLR": lambda lib, opt: lib.MultiplicativeLR(opt, lambda e: 0.95),
    "MultiplicativeLR-per-group": lambda lib, opt: lib.MultiplicativeLR(opt, [lambda e: 0.9, lambda e: 1 + 1 / (e + 1)]),
    "PolynomialLR": lambda lib, opt: lib.PolynomialLR(opt),
    "PolynomialLR-square": lambda lib, opt: lib.PolynomialLR(opt, total_iters=12, power=2.0),
    "WarmRestarts": lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=6),
    "WarmRestarts-Tmult": lambda lib, opt: lib.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01),
    "Sequential-warmup-cosine": lambda lib, opt: lib.SequentialLR(
        opt, [lib.LinearLR(opt, start_factor=0.1, total_iters=5), lib.CosineAnnealingLR(opt, T_max=12)], [5]),
    "Sequential-three": lambda lib, opt: lib.SequentialLR(
        opt, [lib.ConstantLR(opt, factor=0.5, total_iters=2), lib.ExponentialLR(opt, 0.8),
              lib.StepLR(opt, 4, gamma=0.5)], milestones=[3, 12]),
    "Sequential-restarts": lambda lib, opt: lib.SequentialLR(
        opt, [lib.PolynomialLR(opt, total_iters=4), lib.MultiStepLR(opt, [2, 6], gamma=0.3),
              lib.CosineAnnealingWarmRestarts(opt, T_0=4)], milestones=[6, 15]),
    "Chained": lambda lib, opt: lib.ChainedScheduler(
        [lib.ConstantLR(opt, factor=0.1, total_iters=2), lib.ExponentialLR(opt, gamma=0.9)]),
    "Chained-three": lambda lib, opt: lib.ChainedScheduler(
        [lib.LinearLR(opt, start_factor=0.2, total_iters=4), lib.MultiStepLR(opt, [5, 9], gamma=0.5),
         lib.CosineAnnealingLR(opt, T_max=10)], optimizer=opt),
}


@pytest.mark.parametrize("name", list(NEW_SCHEDULES))
def test_new_schedules_match_torch(torch, name):
    """40 steps: every phase (warm-up, decay, restarts, milestones, past the end)."""
    make = NEW_SCHEDULES[name]
    ours = make(nn.optim.lr_scheduler, _optimizer())
    theirs = make(torch.optim.lr_scheduler, _torch_optimizer(torch))
    got, want = _lrs(ours, 40), _lrs(theirs, 40)
    for step, (a, b) in enumerate(zip(got, want)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), f"lr at step {step}"
    assert len({round(lr[0], 12) for lr in got}) >= 2  # the lr does change
    for group, tgroup in zip(ours.optimizer.param_groups, theirs.optimizer.param_groups):
        assert group["initial_lr"] == tgroup["initial_lr"]


def test_warm_restarts_fractional_and_interleaved_epochs(torch):
    """step(epoch + i / iters) within epochs, as PyTorch's docs show, then a jump and plain steps."""
    for kwargs in (dict(T_0=3), dict(T_0=2, T_mult=3, eta_min=0.05)):
        ours = CosineAnnealingWarmRestarts(_optimizer(), **kwargs)
        theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(_torch_optimizer(torch), **kwargs)
        epochs = [e + i / 4 for e in range(12) for i in range(4)] + [26, None, None, 7.5, None, 0, None]
        for epoch in epochs:
            ours.step(epoch)
            theirs.step(epoch)
            assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-15), epoch
            assert (ours.last_epoch, ours.T_i) == (theirs.last_epoch, theirs.T_i)
            assert ours.T_cur == pytest.approx(theirs.T_cur, rel=1e-12, abs=1e-15)
    # by hand: T_0=2, T_mult=3 has periods [0, 2), [2, 8), [8, 26): epoch 5 is half way through the second
    sched = CosineAnnealingWarmRestarts(_optimizer(), T_0=2, T_mult=3)
    sched.step(5)
    assert (sched.T_i, sched.T_cur) == (6, 3) and sched.get_last_lr()[0] == pytest.approx(0.05)
    with pytest.raises(ValueError, match="Expected non-negative epoch"):
        sched.step(-1)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        CosineAnnealingWarmRestarts(_optimizer(), T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        CosineAnnealingWarmRestarts(_optimizer(), T_0=2, T_mult=1.5)


def _adamw_pair(torch):
    ours = AdamW([{"params": [nn.Parameter(minigrad.ones(2))]}, {"params": [nn.Parameter(minigrad.ones(3))]}])
    theirs = torch.optim.AdamW([{"params": [torch.nn.Parameter(torch.ones(2))]},
                                {"params": [torch.nn.Parameter(torch.ones(3))]}])
    return ours, theirs


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
@pytest.mark.parametrize("kwargs", [
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4),
    dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.5], step_size_up=3, step_size_down=5, mode="triangular2",
         base_momentum=[0.8, 0.7], max_momentum=0.95),
    dict(base_lr=0.001, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.95),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=6, scale_fn=lambda x: 1 / (1 + x),
         scale_mode="iterations"),
    dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda c: 0.5**c, cycle_momentum=False),
], ids=["triangular", "triangular2-per-group", "exp_range", "scale_fn-iterations", "scale_fn-cycle-no-momentum"])
def test_cyclic_matches_torch(torch, optimizer, kwargs):
    """40 steps (several cycles): the lr and the momentum (SGD's `momentum`, AdamW's `betas[0]`), and
    the group entries it writes."""
    if optimizer == "SGD":
        ours, theirs = _optimizer(), _torch_optimizer(torch)
    else:
        ours, theirs = _adamw_pair(torch)
    _, got = _one_cycle_run(ours, CyclicLR, kwargs, 40)
    _, want = _one_cycle_run(theirs, torch.optim.lr_scheduler.CyclicLR, kwargs, 40)
    for step, ((lr, m), (tlr, tm)) in enumerate(zip(got, want)):
        assert lr == pytest.approx(tlr, rel=1e-12, abs=1e-15), f"lr at step {step}"
        assert m == pytest.approx(tm, rel=1e-12), f"momentum at step {step}"
    lrs = [lr[0] for lr, _ in got]
    assert min(lrs) == pytest.approx(got[0][0][0]) and max(lrs) > 2 * min(lrs)
    keys = ("initial_lr", "max_momentum", "base_momentum")
    for group, tgroup in zip(ours.param_groups, theirs.param_groups):
        assert {k: group[k] for k in keys if k in group} == {k: tgroup[k] for k in keys if k in tgroup}
        assert ("max_momentum" in group) == kwargs.get("cycle_momentum", True)


def test_cyclic_by_hand_and_errors():
    # triangular, up 2 steps and down 2: base, mid, max, mid, base, ...; momentum the other way
    opt = _optimizer()
    sched = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    lrs = [lr[0] for lr in _lrs(sched, 5)]
    assert lrs == pytest.approx([0.1, 0.3, 0.5, 0.3, 0.1, 0.3], rel=1e-12)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.85)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        CyclicLR(_optimizer(), 0.1, 0.5, mode="sawtooth")
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        CyclicLR(nn.optim.Adagrad([nn.Parameter(minigrad.ones(1))]), 0.1, 0.5)
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        CyclicLR(_optimizer(), 0.1, [0.5])


@pytest.mark.parametrize("name", ["ConstantLR-half", "MultiplicativeLR-per-group", "PolynomialLR-square",
                                  "WarmRestarts-Tmult", "Sequential-warmup-cosine", "Sequential-restarts",
                                  "Chained-three"])
def test_new_schedules_resume_through_state_dict_and_nn_save(tmp_path, name):
    make = lambda opt: NEW_SCHEDULES[name](nn.optim.lr_scheduler, opt)  # noqa: E731
    reference = _lrs(make(_optimizer()), 30)
    opt = _optimizer()
    sched = make(opt)
    first = _lrs(sched, 9)
    nn.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "s.safetensors")
    ckpt = nn.load(tmp_path / "s.safetensors")
    opt2 = _optimizer()
    sched2 = make(opt2)
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert first + _lrs(sched2, 21)[1:] == reference


def test_cyclic_resumes_with_its_scale_fn(tmp_path):
    """A lambda scale_fn is left out of the state dict (it cannot be stored); the constructor's stays."""
    make = lambda opt: CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=lambda c: 0.7**c)  # noqa: E731
    reference = _lrs(make(_optimizer()), 20)
    opt = _optimizer()
    sched = make(opt)
    first = _lrs(sched, 7)
    sd = sched.state_dict()
    assert sd["_scale_fn_custom"] is None
    nn.save({"optimizer": opt.state_dict(), "scheduler": sd}, tmp_path / "s.safetensors")
    ckpt = nn.load(tmp_path / "s.safetensors")
    opt2 = _optimizer()
    sched2 = make(opt2)
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert first + _lrs(sched2, 13)[1:] == reference


@pytest.mark.parametrize("name,args,epochs", [
    ("StepLR", dict(step_size=3, gamma=0.5), [7, 2, 9]),
    ("MultiStepLR", dict(milestones=[2, 5, 5], gamma=0.5), [6, 1, 5]),
    ("ExponentialLR", dict(gamma=0.9), [4, 10]),
    ("LinearLR", dict(start_factor=0.2, total_iters=6), [3, 8, 0]),
    ("CosineAnnealingLR", dict(T_max=8, eta_min=0.01), [5, 12, 2]),
    ("ConstantLR", dict(factor=0.25, total_iters=4), [2, 4, 1]),
    ("PolynomialLR", dict(total_iters=6, power=1.5), [3, 9, 2]),
    ("LambdaLR", dict(lr_lambda=lambda e: 1 / (e + 1)), [4, 2]),  # no closed form: get_lr at that step
])
def test_step_with_epoch_uses_the_closed_form(torch, name, args, epochs):
    ours = getattr(nn.optim.lr_scheduler, name)(_optimizer(), **args)
    theirs = getattr(torch.optim.lr_scheduler, name)(_torch_optimizer(torch), **args)
    for epoch in epochs:
        with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)`"):
            ours.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs.step(epoch)
        assert ours.last_epoch == epoch
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-15), epoch
        ours.step()  # and a plain step after the jump
        theirs.step()
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-15), epoch


def test_new_schedules_by_hand_and_errors():
    lrs = _lrs(ConstantLR(_optimizer(), factor=0.5, total_iters=3), 5)
    assert [lr[0] for lr in lrs] == pytest.approx([0.05, 0.05, 0.05, 0.1, 0.1, 0.1], rel=1e-12)
    lrs = _lrs(PolynomialLR(_optimizer(), total_iters=4, power=2.0), 6)
    assert [lr[1] for lr in lrs] == pytest.approx([0.5 * (1 - min(t, 4) / 4) ** 2 for t in range(7)], abs=1e-15)
    lrs = _lrs(MultiplicativeLR(_optimizer(), lambda e: 0.5), 3)
    assert [lr[0] for lr in lrs] == pytest.approx([0.1, 0.05, 0.025, 0.0125], rel=1e-12)
    opt = _optimizer()
    seq = SequentialLR(opt, [ConstantLR(opt, factor=0.1, total_iters=10), ExponentialLR(opt, 0.5)], [2])
    assert [lr[0] for lr in _lrs(seq, 4)] == pytest.approx([0.01, 0.01, 0.1, 0.05, 0.025], rel=1e-12)
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        ConstantLR(_optimizer(), factor=1.5)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        MultiplicativeLR(_optimizer(), [lambda e: 1.0])
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        SequentialLR(opt, [ExponentialLR(opt, 0.5), ExponentialLR(opt, 0.5)], [2, 4])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        SequentialLR(opt, [], [])
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        ChainedScheduler([ExponentialLR(opt, 0.5), ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        SequentialLR(opt, [ExponentialLR(opt, 0.5), ExponentialLR(_optimizer(), 0.5)], [2])
    with pytest.raises(TypeError, match="should have `optimizer` as its attribute"):
        ChainedScheduler([ExponentialLR(opt, 0.5), object()])


class _Halving:
    """A callable-object lr lambda: its attributes go into the state dict (PyTorch's rule)."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** epoch


@pytest.mark.parametrize("name", ["LambdaLR", "MultiplicativeLR"])
def test_lambda_schedules_record_lr_lambdas_as_torch(torch, name, tmp_path):
    import torch.optim.lr_scheduler as tl

    from nn.optim import lr_scheduler as ml

    def make(lib, opt):
        return getattr(lib, name)(opt, [lambda e: 0.9 ** e, _Halving(0.5)])

    ours, theirs = make(ml, _optimizer()), make(tl, _torch_optimizer(torch))
    for s in (ours, theirs):
        s.optimizer.step()
        s.step()
    mine, ref = ours.state_dict(), theirs.state_dict()
    assert mine["lr_lambdas"] == ref["lr_lambdas"] == [None, {"rate": 0.5}]
    assert set(ref) - set(mine) <= {"_is_initial", "_get_lr_called_within_step"}  # (PyTorch's step bookkeeping)
    # loading restores a callable object's attributes, and leaves the functions and the given dict alone
    nn.save({"scheduler": mine}, tmp_path / "s.safetensors")
    loaded = nn.load(tmp_path / "s.safetensors")["scheduler"]
    loaded["lr_lambdas"][1] = {"rate": 0.25}
    again = make(ml, _optimizer())
    given = dict(loaded)
    again.load_state_dict(given)
    assert given == loaded and "lr_lambdas" in given
    assert again.lr_lambdas[1].rate == 0.25 and again.last_epoch == ours.last_epoch
    assert callable(again.lr_lambdas[0]) and again.lr_lambdas[0](2) == pytest.approx(0.81)


@pytest.mark.parametrize("name,args", [
    ("StepLR", dict(step_size=2)), ("LambdaLR", dict(lr_lambda=lambda e: 0.9**e)),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=10, anneal_strategy="linear")),
    ("ReduceLROnPlateau", dict(patience=2)), ("CyclicLR", dict(base_lr=0.01, max_lr=0.1)),
])
def test_state_dict_keys_in_pytorchs_order(name, args):
    # a script that prints or diffs `scheduler.state_dict()` sees PyTorch's keys, in PyTorch's order
    torch = pytest.importorskip("torch")
    import nn.optim.lr_scheduler as ours

    keys = []
    for lib, opt in ((ours, _optimizer()), (torch.optim.lr_scheduler, _torch_optimizer(torch))):
        sched = getattr(lib, name)(opt, **args)
        opt.step()
        sched.step(*([1.0] if name == "ReduceLROnPlateau" else []))
        keys.append(list(sched.state_dict()))
        if name == "OneCycleLR":
            assert sched.state_dict()["_anneal_func_type"] == "linear"
    assert keys[0] == keys[1]
