"""Learning-rate schedules: PyTorch's LambdaLR / StepLR / CosineAnnealingLR, nanoGPT's warmup-cosine."""
import math

import pytest

import minigrad
import nn
from nn.optim import SGD, AdamW
from nn.optim.lr_scheduler import CosineAnnealingLR, LambdaLR, StepLR, WarmupCosineLR, warmup_cosine_lr


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
