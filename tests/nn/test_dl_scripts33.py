"""PyTorch's recipes and utility APIs as scripts use them (warm-starting from another model's renamed state_dict with
strict=False, a general checkpoint of model, optimizer, scheduler, epoch and loss through io.BytesIO resumed to the
same next step, several models in one file, utils.benchmark's Timer / blocked_autorange / Compare, torch.profiler
and torch.autograd.profiler with record_function, SummaryWriter behind try/except ImportError, the module hooks
recipe, two parametrizations chained on one weight, a Tensor subclass made by as_subclass, torch.utils.data recipes
(custom and batch samplers, weighted sampling from a generator, ConcatDataset / ChainDataset, an IterableDataset
with worker_info None, padding collate_fn, dict samples, persistent_workers / prefetch_factor without workers, a
Generator per DataLoader), torch.backends flags around a loop, set_printoptions, the 'meta' device), written once
against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws made by numpy and given to
both runs, where the two libraries' streams differ by design; timings are compared by their structure only)."""
import io

import numpy as np
import pytest

import minigrad
from twins import both, grads, start


def mlp(nn):
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))


# ---- warm-starting: a bigger model loads a smaller one's weights under renamed keys, strict=False ---------------
def warm_start(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self, extra):
            super().__init__()
            self.body = mlp(nn)
            self.head = nn.Linear(2, 2) if extra else None

        def forward(self, x):
            h = self.body(x)
            return h if self.head is None else self.head(torch.relu(h))

    a, b = Net(False), Net(True)
    both_init = start(nn.ModuleDict({"a": a, "b": b}), init)
    rng = np.random.default_rng(1)
    x, y = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.integers(0, 2, 6))
    # the pretrained state's keys come from an older version of the code: "body." was "features."
    old = {k.replace("body.", "features."): v for k, v in a.state_dict().items()}
    first = b.load_state_dict(old, strict=False)
    renamed = {k.replace("features.", "body."): v for k, v in old.items()}
    second = b.load_state_dict(renamed, strict=False)
    opt = torch.optim.SGD(b.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(b(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=both_init, missing=first.missing_keys, unexpected=first.unexpected_keys,
                missing2=second.missing_keys, unexpected2=second.unexpected_keys, repr=repr(second),
                same=all(torch.equal(p, q) for p, q in zip(a.body.state_dict().values(), b.body.state_dict().values())),
                losses=losses, grads=grads(b), params=list(b.parameters()))


def test_warm_start_from_renamed_keys_non_strict(torch):
    both(torch, warm_start)


# ---- a general checkpoint through io.BytesIO: resumed, the next steps are the uninterrupted run's bit for bit ----
def checkpoint_resume(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = mlp(nn)
    init = start(model, init)
    rng = np.random.default_rng(2)
    x, y = torch.tensor(rng.standard_normal((8, 3))), torch.tensor(rng.standard_normal((8, 2)))

    def make(m):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
        return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def step(m, opt, sched):
        loss = F.mse_loss(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    opt, sched = make(model)
    losses = [step(model, opt, sched) for _ in range(3)]
    buf = io.BytesIO()
    torch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "scheduler_state_dict": sched.state_dict(), "loss": losses[-1]}, buf)
    straight = [step(model, opt, sched) for _ in range(2)]
    buf.seek(0)
    ckpt = torch.load(buf)
    fresh = mlp(nn).double()
    opt2, sched2 = make(fresh)
    fresh.load_state_dict(ckpt["model_state_dict"])
    opt2.load_state_dict(ckpt["optimizer_state_dict"])
    sched2.load_state_dict(ckpt["scheduler_state_dict"])
    fresh.train()
    resumed = [step(fresh, opt2, sched2) for _ in range(2)]
    assert resumed == straight  # bit for bit, on each library
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), fresh.parameters()))
    return dict(init=init, epoch=ckpt["epoch"], loss=ckpt["loss"], keys=sorted(ckpt), losses=losses + resumed,
                lr=sched2.get_last_lr(), state=sorted(opt2.state_dict()["state"]),
                step=opt2.state_dict()["state"][0]["step"], params=list(fresh.parameters()))


def test_general_checkpoint_bytesio_resume(torch):
    both(torch, checkpoint_resume)


# ---- several models and their optimizers in one file (a GAN's checkpoint) ------------------------------------------
def several_models(torch, init):
    nn = torch.nn
    g, d = mlp(nn), nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
    init = start(nn.ModuleDict({"g": g, "d": d}), init)
    opt_g, opt_d = torch.optim.Adam(g.parameters(), lr=1e-3), torch.optim.Adam(d.parameters(), lr=2e-3)
    rng = np.random.default_rng(3)
    z, real = torch.tensor(rng.standard_normal((4, 3))), torch.tensor(rng.standard_normal((4, 2)))
    bce = nn.BCEWithLogitsLoss()
    for _ in range(2):
        d_loss = bce(d(real), torch.ones(4, 1, dtype=torch.float64)) + bce(d(g(z).detach()), torch.zeros(4, 1, dtype=torch.float64))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(d(g(z)), torch.ones(4, 1, dtype=torch.float64))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    buf = io.BytesIO()
    torch.save({"modelA_state_dict": g.state_dict(), "modelB_state_dict": d.state_dict(),
                "optimizerA_state_dict": opt_g.state_dict(), "optimizerB_state_dict": opt_d.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=True)
    g2, d2 = mlp(nn).double(), nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1)).double()
    g2.load_state_dict(ck["modelA_state_dict"])
    d2.load_state_dict(ck["modelB_state_dict"])
    o2 = torch.optim.Adam(d2.parameters(), lr=2e-3)
    o2.load_state_dict(ck["optimizerB_state_dict"])
    g2.eval()
    d2.eval()
    return dict(init=init, out=d2(g2(z)), lr=o2.param_groups[0]["lr"], steps=[s["step"] for s in o2.state.values()],
                exp_avg=[s["exp_avg"] for s in o2.state.values()], losses=[d_loss.item(), g_loss.item()])


def test_several_models_in_one_checkpoint(torch):
    both(torch, several_models)
