"""minigrad.optim.swa_utils (AveragedModel, SWALR, update_bn, the EMA / SWA averaging functions) and
lr_scheduler._LRScheduler against PyTorch: training loops from the same weights, learning rates, state dicts."""
import numpy as np
import pytest

import minigrad
import minigrad.nn as nn
import minigrad.optim as optim
from minigrad.optim.lr_scheduler import LRScheduler, _LRScheduler
from minigrad.optim.swa_utils import (
    SWALR, AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn, get_swa_avg_fn, update_bn,
)

RNG = np.random.default_rng(11)


def make(mod):
    return mod.Sequential(mod.Linear(3, 5), mod.BatchNorm1d(5), mod.ReLU(), mod.Linear(5, 2))


def twins(torch):
    """(ours, theirs): the same float64 model in both libraries."""
    theirs = make(torch.nn).double()
    ours = make(nn).double()
    ours.load_state_dict({k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def assert_same_state(ours, theirs, rtol=1e-12):
    sd_o, sd_t = ours.state_dict(), theirs.state_dict()
    assert list(sd_o) == list(sd_t)
    for k in sd_t:
        np.testing.assert_allclose(sd_o[k].numpy(), sd_t[k].detach().numpy(), rtol=rtol, atol=1e-12, err_msg=k)


BATCHES = [(RNG.standard_normal((8, 3)), RNG.standard_normal((8, 2))) for _ in range(4)]


def train(lib, model, averaged, optimizer, schedulers, epochs=6, swa_start=2):
    """A tutorial's SWA loop: SGD steps, averaging from `swa_start` on, SWALR after it; -> the lrs seen."""
    lrs = []
    loss_fn = lib.nn.MSELoss()
    for epoch in range(epochs):
        for x, y in BATCHES:
            optimizer.zero_grad()
            loss_fn(model(lib.tensor(x)), lib.tensor(y)).backward()
            optimizer.step()
        if epoch >= swa_start:
            averaged.update_parameters(model)
            schedulers[1].step()
        else:
            schedulers[0].step()
        lrs.append([g["lr"] for g in optimizer.param_groups])
    return lrs


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "ema_buffers"])
def test_averaged_model_training_loop_vs_torch(torch, kind):
    ours, theirs = twins(torch)
    results = []
    for lib, model, swa_utils in ((minigrad, ours, minigrad.optim.swa_utils), (torch, theirs, torch.optim.swa_utils)):
        kw = {"swa": {}, "ema_multi": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.9)},
              "ema": {"avg_fn": swa_utils.get_ema_avg_fn(0.8)},
              "ema_buffers": {"multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.7), "use_buffers": True}}[kind]
        averaged = swa_utils.AveragedModel(model, **kw)
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        schedulers = (lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5),
                      swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2))
        results.append((train(lib, model, averaged, opt, schedulers), averaged))
    (lrs_o, avg_o), (lrs_t, avg_t) = results
    np.testing.assert_allclose(lrs_o, lrs_t, rtol=1e-12)
    assert int(avg_o.n_averaged) == int(avg_t.n_averaged) == 4
    assert_same_state(ours, theirs, rtol=1e-9)
    assert_same_state(avg_o, avg_t, rtol=1e-9)
    # update_bn: the BatchNorm statistics of the averaged weights, from one pass over a loader
    loader_o = [(minigrad.tensor(x), minigrad.tensor(y)) for x, y in BATCHES]
    loader_t = [(torch.tensor(x), torch.tensor(y)) for x, y in BATCHES]
    avg_o.eval()
    avg_t.eval()
    update_bn(loader_o, avg_o)
    torch.optim.swa_utils.update_bn(loader_t, avg_t)
    assert not avg_o.training and avg_o.module[1].momentum == 0.1
    assert_same_state(avg_o, avg_t, rtol=1e-9)
    x = BATCHES[0][0]
    np.testing.assert_allclose(avg_o(minigrad.tensor(x)).detach().numpy(), avg_t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-9, atol=1e-12)


def test_averaged_model_basics(torch):
    model = nn.Linear(2, 2)
    averaged = AveragedModel(model)
    assert averaged.module is not model and averaged.n_averaged.dtype == minigrad.int64
    assert list(averaged.state_dict()) == list(torch.optim.swa_utils.AveragedModel(torch.nn.Linear(2, 2)).state_dict())
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        AveragedModel(model, avg_fn=get_swa_avg_fn(), multi_avg_fn=get_ema_multi_avg_fn())
    for fn in (get_ema_avg_fn, get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please provide a value in \[0,1\]"):
            fn(1.5)
    # the first update copies, the next ones average equally
    for value in (1.0, 3.0, 8.0):
        with minigrad.no_grad():
            model.weight.fill_(value)
        averaged.update_parameters(model)
    np.testing.assert_allclose(averaged.module.weight.detach().numpy(), 4.0)
    assert not averaged.module.weight.grad and averaged(minigrad.ones(1, 2)).shape == (1, 2)


def test_integer_buffers_are_averaged_as_torch(torch):
    results = []
    for lib, swa_utils in ((minigrad, minigrad.optim.swa_utils), (torch, torch.optim.swa_utils)):
        model = lib.nn.BatchNorm1d(2)
        for kw in ({"use_buffers": True}, {"use_buffers": True, "multi_avg_fn": swa_utils.get_ema_multi_avg_fn(0.5)}):
            averaged = swa_utils.AveragedModel(model, **kw)
            for steps in (3, 10, 4):
                with lib.no_grad():
                    model.num_batches_tracked.fill_(steps)
                    model.running_mean.fill_(steps / 2)
                averaged.update_parameters(model)
            results.append([int(averaged.module.num_batches_tracked), float(averaged.module.running_mean[0])])
    assert results[:2] == results[2:]


# ---- SWALR ----------------------------------------------------------------------------------------------------
def lr_sequence(lib, swa_utils, steps=8, **kw):
    params = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))]
    opt = lib.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}], lr=1.0)
    scheduler = swa_utils.SWALR(opt, **kw)
    out = [scheduler.get_last_lr()]
    for _ in range(steps):
        opt.step()
        scheduler.step()
        out.append(scheduler.get_last_lr())
    return out, scheduler


@pytest.mark.parametrize("kw", [
    {"swa_lr": 0.05}, {"swa_lr": [0.1, 0.01], "anneal_strategy": "linear", "anneal_epochs": 3},
    {"swa_lr": 0.2, "anneal_epochs": 0}, {"swa_lr": 0.5, "anneal_epochs": 1, "anneal_strategy": "cos"},
])
def test_swalr_vs_torch(torch, kw):
    ours, sched_o = lr_sequence(minigrad, minigrad.optim.swa_utils, **kw)
    theirs, sched_t = lr_sequence(torch, torch.optim.swa_utils, **kw)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    state_o, state_t = sched_o.state_dict(), sched_t.state_dict()
    assert "anneal_func" not in state_o and state_o["_anneal_strategy"] == state_t["_anneal_strategy"]
    assert state_o["anneal_epochs"] == state_t["anneal_epochs"] and state_o["last_epoch"] == state_t["last_epoch"]
    # a scheduler built otherwise takes the state's annealing function with the state
    _, sched = lr_sequence(minigrad, minigrad.optim.swa_utils, steps=0, swa_lr=1.0, anneal_strategy="linear")
    sched.load_state_dict(state_o)
    cos = state_o["_anneal_strategy"] == "cos"
    assert sched.anneal_func is (SWALR._cosine_anneal if cos else SWALR._linear_anneal)


def test_swalr_errors_vs_torch(torch):
    for lib, swa_utils in ((torch, torch.optim.swa_utils), (minigrad, minigrad.optim.swa_utils)):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
            swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
            swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups. swa_lr "
                                             "has 2 values, param_groups has 1."):
            swa_utils.SWALR(opt, [0.1, 0.2])


def test_lr_scheduler_old_name():
    assert issubclass(_LRScheduler, LRScheduler) and _LRScheduler.__name__ == "_LRScheduler"

    class Halving(_LRScheduler):  # a tutorial's custom schedule, written against the old name
        def get_lr(self):
            return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

    opt = optim.SGD([nn.Parameter(minigrad.zeros(1))], lr=1.0)
    scheduler = Halving(opt)
    scheduler.step()
    scheduler.step()
    assert scheduler.get_last_lr() == [0.25]
