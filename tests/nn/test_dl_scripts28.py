"""Scripts of the training utilities that training libraries wrap around a model (a deepcopied model EMA with a
warmed-up decay and copied buffers; stochastic depth with given masks; layer-wise learning-rate decay groups;
warm restarts stepped by fractional epochs; OneCycleLR cycling Adam's beta1; a disabled GradScaler with unscale_
and clipping under accumulation; early stopping with a deepcopied best state; a metrics accumulator; channels_last
conversions; a Lightning-like loop with step-interval schedulers), written once against a `torch`-like module and
run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs
must agree closely (float64 throughout; random draws by numpy where the two libraries' streams differ by design)."""
import copy
import math

import numpy as np
import pytest

from twins import both, grads, start


def kind(t):
    return str(t.dtype).split(".")[-1]


def data(seed, n, d, classes):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.integers(0, classes, n)


# ---- a timm-like model EMA: deepcopy, decay warmed up by step count, params lerped, buffers copied -------------
def model_ema(torch, init, update):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 3))
    init = start(model, init)
    ema = copy.deepcopy(model).eval()
    for p in ema.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
    x, y = data(281, 8, 4, 3)
    x, y = torch.tensor(x), torch.tensor(y)
    losses, decays = [], []
    for step in range(4):
        loss = F.cross_entropy(model(x[step % 2 * 4:][:4]), y[step % 2 * 4:][:4])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        decay = min(0.9, (1 + step) / (10 + step))
        decays.append(decay)
        with torch.no_grad():
            e_params, m_params = list(ema.parameters()), list(model.parameters())
            if update == "foreach_lerp":
                torch._foreach_lerp_(e_params, m_params, 1.0 - decay)
            elif update == "lerp":
                for e, m in zip(e_params, m_params):
                    e.lerp_(m, weight=1.0 - decay)
            else:
                for e, m in zip(ema.state_dict().values(), model.state_dict().values()):
                    if e.dtype.is_floating_point:
                        e.mul_(decay).add_(m.detach(), alpha=1.0 - decay)
            for e, m in zip(ema.buffers(), model.buffers()):
                e.copy_(m)
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out, ema_out = model(x), ema(x)
    return dict(init=init, losses=losses, decays=decays, out=out, ema_out=ema_out, ema_state=dict(ema.state_dict()),
                grads=grads(model), ema_grad=[p.grad for p in ema.parameters()],
                flags=[p.requires_grad for p in ema.parameters()] + [ema.training, ema[1].training])


@pytest.mark.parametrize("update", ["foreach_lerp", "lerp", "mul_add"])
def test_deepcopied_model_ema_with_warmup_decay(torch, update):
    both(torch, model_ema, update=update)


# ---- stochastic depth: a DropPath module, identity in eval, given per-sample masks in train -------------------
def drop_path_script(torch, init, scale_by_keep):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(282)
    masks = [torch.tensor(rng.random((6, 1)) < 0.75).double() for _ in range(6)]

    class DropPath(nn.Module):
        def __init__(self, p):
            super().__init__()
            self.p = p
            self.mask = None

        def forward(self, x):
            if self.p == 0.0 or not self.training:
                return x
            keep = 1.0 - self.p
            mask = self.mask.view((x.shape[0],) + (1,) * (x.ndim - 1)).to(x.dtype)
            if keep > 0.0 and scale_by_keep:
                mask = mask.div(keep)
            return x * mask

        def extra_repr(self):
            return f"drop_prob={round(self.p, 3):0.3f}"

    class Block(nn.Module):
        def __init__(self, dim, p):
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.fc = nn.Linear(dim, dim)
            self.drop_path = DropPath(p) if p > 0 else nn.Identity()

        def forward(self, x):
            return x + self.drop_path(F.gelu(self.fc(self.norm(x))))

    rates = [x.item() for x in torch.linspace(0, 0.25, 3)]  # the stochastic-depth decay rule
    model = nn.Sequential(*[Block(5, p) for p in rates], nn.Linear(5, 2))
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.05)
    x, y = data(283, 6, 5, 2)
    x, y = torch.tensor(x), torch.tensor(y)
    losses = []
    for step in range(3):
        for i, block in enumerate(model[:3]):
            if isinstance(block.drop_path, DropPath):
                block.drop_path.mask = masks[2 * step + i - 1]
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(x)
    return dict(init=init, rates=rates, reprs=[repr(b.drop_path) for b in model[:3]], losses=losses, out=out,
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("scale_by_keep", [True, False])
def test_drop_path_stochastic_depth(torch, scale_by_keep):
    both(torch, drop_path_script, scale_by_keep=scale_by_keep)


# ---- layer-wise learning-rate decay: param groups from named_parameters and a depth function ------------------
def layer_decay_script(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(4, 6)
            self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(6), nn.Linear(6, 6)) for _ in range(3)])
            self.norm = nn.LayerNorm(6)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            x = self.embed(x)
            for b in self.blocks:
                x = x + F.silu(b(x))
            return self.head(self.norm(x))

    def depth(name, n_layers):
        if name.startswith("embed"):
            return 0
        if name.startswith("blocks."):
            return int(name.split(".")[1]) + 1
        return n_layers + 1

    model = Net()
    init = start(model, init)
    n_layers, base_lr, decay_rate, wd = len(model.blocks), 0.05, 0.6, 0.05
    scales = [decay_rate ** (n_layers + 1 - i) for i in range(n_layers + 2)]
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        no_decay = p.ndim == 1 or name.endswith(".bias")
        d = depth(name, n_layers)
        key = f"layer_{d}_{'no_decay' if no_decay else 'decay'}"
        g = groups.setdefault(key, dict(params=[], names=[], weight_decay=0.0 if no_decay else wd,
                                         lr_scale=scales[d]))
        g["params"].append(p)
        g["names"].append(name)
    param_groups = list(groups.values())
    opt = torch.optim.AdamW([{k: v for k, v in g.items() if k != "names"} for g in param_groups], lr=base_lr,
                            betas=(0.9, 0.999))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 2))
    x, y = data(284, 6, 4, 3)
    x, y = torch.tensor(x), torch.tensor(y)
    losses, lrs = [], []
    for _ in range(3):
        for g, lr in zip(opt.param_groups, sched.get_last_lr()):
            g["lr"] = lr * g["lr_scale"]  # the scheduler sets the base schedule, the group scales it
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        losses.append(loss.item())
    keys = [sorted(k for k in g if k != "params") for g in opt.param_groups]
    return dict(init=init, names=[g["names"] for g in param_groups], keys=keys, lrs=lrs, losses=losses,
                last=sched.get_last_lr(), grads=grads(model), params=list(model.parameters()),
                state_groups=[{k: v for k, v in g.items() if k != "params"} for g in opt.state_dict()["param_groups"]])


def test_layer_wise_lr_decay_groups(torch):
    both(torch, layer_decay_script)


# ---- schedules stepped inside the epoch: warm restarts by fractional epochs, OneCycle cycling Adam's beta1 ------
def fractional_schedules(torch, init, which):
    nn, F = torch.nn, torch.nn.functional
    S = torch.optim.lr_scheduler
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    init = start(model, init)
    x, y = data(285, 8, 3, 2)
    x, y = torch.tensor(x), torch.tensor(y)
    iters = 4
    if which == "warm_restarts":
        opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
        sched = S.CosineAnnealingWarmRestarts(opt, T_0=1, T_mult=2, eta_min=0.01)
    elif which == "one_cycle_adam":
        opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.99))
        sched = S.OneCycleLR(opt, max_lr=0.1, epochs=2, steps_per_epoch=iters, three_phase=True,
                             cycle_momentum=True, base_momentum=0.8, max_momentum=0.95, anneal_strategy="linear")
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = S.SequentialLR(opt, [S.LinearLR(opt, start_factor=0.01, end_factor=1.0, total_iters=2),
                                     S.CosineAnnealingLR(opt, T_max=5, eta_min=1e-3)], milestones=[2])
    lrs, betas, losses, epochs_seen = [], [], [], []
    for epoch in range(2):
        for i in range(iters):
            xb, yb = x[2 * i:2 * i + 2], y[2 * i:2 * i + 2]
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if which == "warm_restarts":
                sched.step(epoch + (i + 1) / iters)
                epochs_seen.append(sched.last_epoch)
                epochs_seen.append(sched.T_cur)
                epochs_seen.append(sched.T_i)
            else:
                sched.step()
            lrs.append(sched.get_last_lr())
            betas.append(list(opt.param_groups[0].get("betas", (opt.param_groups[0].get("momentum"),))))
            losses.append(loss.item())
    state = {k: v for k, v in sched.state_dict().items() if not callable(v) and k not in ("_schedulers",
                                                                                          "anneal_func")}
    return dict(init=init, lrs=lrs, betas=betas, losses=losses, epochs_seen=epochs_seen, state=sorted(state),
                grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("which", ["warm_restarts", "one_cycle_adam", "warmup_cosine"])
def test_fractional_epoch_and_one_cycle_adam_schedules(torch, which):
    both(torch, fractional_schedules, which=which)


# ---- accumulation with a disabled GradScaler and autocast: unscale_, clip, step, update ---------------------
def disabled_amp_script(torch, init, scaler_kind):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=3, power=1.5)
    if scaler_kind == "cuda":
        scaler = torch.cuda.amp.GradScaler(enabled=False)
    else:
        scaler = torch.amp.GradScaler("cpu", enabled=False)
    x, y = data(286, 8, 4, 3)
    x, y = torch.tensor(x), torch.tensor(y)
    accum, losses, norms, facts = 2, [], [], []
    for step in range(6):
        with torch.autocast("cpu", enabled=False):
            out = model(x[step % 4 * 2:step % 4 * 2 + 2])
            loss = F.cross_entropy(out, y[step % 4 * 2:step % 4 * 2 + 2]) / accum
        scaled = scaler.scale(loss)
        facts.append(scaled is loss)
        scaled.backward()
        if (step + 1) % accum == 0:
            scaler.unscale_(opt)
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5))
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            sched.step()
        losses.append(loss.item())
    facts += [scaler.is_enabled(), scaler.get_scale(), scaler.state_dict(), kind(out)]
    return dict(init=init, losses=losses, norms=norms, facts=facts, lr=sched.get_last_lr(),
                params=list(model.parameters()))


@pytest.mark.parametrize("scaler_kind", ["cuda", "amp"])
def test_disabled_grad_scaler_accumulation_clipping(torch, scaler_kind):
    both(torch, disabled_amp_script, scaler_kind=scaler_kind)


# ---- early stopping on a validation metric; the best state restored from a deepcopied state_dict ------------
def early_stopping_script(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Dropout(0.0), nn.Linear(6, 2))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.8, momentum=0.9)
    x, y = data(287, 10, 3, 2)
    xv, yv = data(288, 6, 3, 2)
    x, y, xv, yv = torch.tensor(x), torch.tensor(y), torch.tensor(xv), torch.tensor(yv)
    best, best_state, best_epoch, bad, patience, min_delta = math.inf, None, -1, 0, 2, 1e-3
    history = []
    for epoch in range(8):
        model.train()
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.inference_mode():
            val = F.cross_entropy(model(xv), yv).item()
        history.append((loss.item(), val))
        if val < best - min_delta:
            best, best_epoch, bad = val, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= patience:
                break
    last = {k: v.clone() for k, v in model.state_dict().items()}
    result = model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        restored = F.cross_entropy(model(xv), yv).item()
    return dict(init=init, history=history, best=best, best_epoch=best_epoch, stopped=epoch, restored=restored,
                missing=list(result.missing_keys), unexpected=list(result.unexpected_keys), last=last,
                state=dict(model.state_dict()), same=[best_state[k] is v for k, v in model.state_dict().items()])


def test_early_stopping_best_state_restore(torch):
    both(torch, early_stopping_script)


# ---- a metrics accumulator: running top-1/top-5, a bincount confusion matrix, precision/recall/F1, mean IoU ------
def metrics_script(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 7))
    init = start(model, init)
    rng = np.random.default_rng(289)
    batches = [(torch.tensor(rng.standard_normal((5, 4))), torch.tensor(rng.integers(0, 7, 5))) for _ in range(3)]

    class Metrics:
        def __init__(self, num_classes, topk=(1, 5)):
            self.n, self.topk = num_classes, topk
            self.reset()

        def reset(self):
            self.correct = {k: 0.0 for k in self.topk}
            self.count = 0
            self.cm = torch.zeros(self.n, self.n, dtype=torch.int64)

        @torch.no_grad()
        def update(self, logits, target):
            _, pred = logits.topk(max(self.topk), dim=1, largest=True, sorted=True)
            pred = pred.t()
            hit = pred.eq(target.view(1, -1).expand_as(pred))
            for k in self.topk:
                self.correct[k] += hit[:k].reshape(-1).float().sum(0, keepdim=True).item()
            self.count += target.numel()
            p = logits.argmax(1)
            self.cm += torch.bincount(self.n * target + p, minlength=self.n ** 2).reshape(self.n, self.n)

        def compute(self):
            cm = self.cm.double()
            tp = cm.diag()
            precision = tp / cm.sum(0).clamp(min=1)
            recall = tp / cm.sum(1).clamp(min=1)
            f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall),
                             torch.zeros_like(tp))
            iou = tp / (cm.sum(0) + cm.sum(1) - tp)
            return dict(top=[100.0 * self.correct[k] / self.count for k in self.topk], precision=precision,
                        recall=recall, f1=f1, macro_f1=f1.mean().item(), iou=iou, miou=iou.nanmean().item(),
                        acc=(tp.sum() / cm.sum()).item(), cm=self.cm)

    metrics = Metrics(7)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for xb, yb in batches:
        logits = model(xb)
        metrics.update(logits, yb)
        loss = torch.nn.functional.cross_entropy(logits, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    first = metrics.compute()
    metrics.reset()
    model.eval()
    for xb, yb in batches:
        metrics.update(model(xb), yb)
    return dict(init=init, first=first, second=metrics.compute(), kinds=[kind(metrics.cm)])


def test_metrics_accumulator_topk_confusion_iou(torch):
    both(torch, metrics_script)


# ---- channels_last: the model and the input converted, results unchanged ------------------------------------
def channels_last_script(torch, init):
    nn, F = torch.nn, torch.nn.functional
    cl = torch.channels_last

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 4, 3, stride=2, groups=2)
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            x = F.relu(self.bn(self.conv1(x)))
            x = F.max_pool2d(x, 2, ceil_mode=True) + 0.0 * x[..., ::2, ::2].contiguous()
            x = self.conv2(x)
            return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))

    model = Net()
    init = start(model, init)
    reference = copy.deepcopy(model)
    returned = model.to(memory_format=cl)
    rng = np.random.default_rng(290)
    x = torch.tensor(rng.standard_normal((3, 2, 6, 6)))
    y = torch.tensor(rng.integers(0, 3, 3))
    xc = x.contiguous(memory_format=cl)
    facts = [returned is model, x.is_contiguous(), xc.is_contiguous(), xc.is_contiguous(memory_format=cl),
             x.is_contiguous(memory_format=cl), model.conv1.weight.is_contiguous(memory_format=cl),
             model.fc.weight.is_contiguous(), reference.conv1.weight.is_contiguous(memory_format=cl),
             x.to(memory_format=cl).is_contiguous(memory_format=cl),
             x.clone(memory_format=torch.contiguous_format).is_contiguous(), list(xc.shape),
             xc.clone().is_contiguous(memory_format=cl), xc.clone().stride(),
             copy.deepcopy(model).conv1.weight.is_contiguous(memory_format=cl)]
    losses = []
    for net, inp in ((model, xc), (reference, x)):
        opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            loss = F.cross_entropy(net(inp), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    diff = max((a - b).abs().max().item() for a, b in zip(model.parameters(), reference.parameters()))
    return dict(init=init, facts=facts, losses=losses, diff_small=diff < 1e-12, out=model(xc),
                params=list(model.parameters()), grads=grads(model))


def test_channels_last_conversions(torch):
    both(torch, channels_last_script)


# ---- a Lightning-like loop: training_step / validation_step / configure_optimizers with "interval": "step" -----
def lightning_script(torch, init):
    nn, F = torch.nn, torch.nn.functional
    S = torch.optim.lr_scheduler

    class LitModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
            self.logged = {}

        def log(self, name, value):
            self.logged.setdefault(name, []).append(value.item() if hasattr(value, "item") else value)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = F.cross_entropy(self(x), y, label_smoothing=0.1)
            self.log("train_loss", loss)
            return {"loss": loss, "n": len(y)}

        def validation_step(self, batch, batch_idx):
            x, y = batch
            logits = self(x)
            self.log("val_loss", F.cross_entropy(logits, y))
            self.log("val_acc", (logits.argmax(-1) == y).double().mean())

        def configure_optimizers(self):
            opt = torch.optim.AdamW(self.parameters(), lr=0.05, weight_decay=0.01)
            sched = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2),
                                        S.PolynomialLR(opt, total_iters=6, power=1.0)])
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step", "frequency": 1}}

    class Trainer:
        def __init__(self, max_epochs):
            self.max_epochs, self.global_step = max_epochs, 0

        def fit(self, module, train, val):
            conf = module.configure_optimizers()
            opt, sched_conf = conf["optimizer"], conf["lr_scheduler"]
            lrs = []
            for _ in range(self.max_epochs):
                module.train()
                for batch_idx, batch in enumerate(train):
                    out = module.training_step(batch, batch_idx)
                    opt.zero_grad()
                    out["loss"].backward()
                    opt.step()
                    self.global_step += 1
                    if sched_conf["interval"] == "step" and self.global_step % sched_conf["frequency"] == 0:
                        sched_conf["scheduler"].step()
                    lrs.append(opt.param_groups[0]["lr"])
                module.eval()
                with torch.no_grad():
                    for batch_idx, batch in enumerate(val):
                        module.validation_step(batch, batch_idx)
            return lrs

    module = LitModel()
    init = start(module, init)
    rng = np.random.default_rng(291)
    train = [(torch.tensor(rng.standard_normal((4, 4))), torch.tensor(rng.integers(0, 3, 4))) for _ in range(3)]
    val = [(torch.tensor(rng.standard_normal((4, 4))), torch.tensor(rng.integers(0, 3, 4)))]
    trainer = Trainer(max_epochs=2)
    lrs = trainer.fit(module, train, val)
    return dict(init=init, lrs=lrs, logged=module.logged, step=trainer.global_step, grads=grads(module),
                params=list(module.parameters()))


def test_lightning_like_loop_step_interval(torch):
    both(torch, lightning_script)


# ---- SWA on a conv net: linear SWALR, a running-mean avg_fn and a multi_avg_fn, update_bn over (x, y) batches ----
def swa_script(torch, init, use_buffers):
    nn, F = torch.nn, torch.nn.functional
    swa_utils = torch.optim.swa_utils
    model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3, momentum=0.3), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 2))
    init = start(model, init)

    def running_mean(avg, p, n):
        return avg + (p - avg) / (n + 1)

    def multi(avgs, params, n):
        for a, p in zip(avgs, params):
            if a.is_floating_point():  # (with use_buffers, num_batches_tracked comes too)
                a.add_((p - a) / (n + 1))
            else:
                a.copy_(p)

    swa = swa_utils.AveragedModel(model, avg_fn=running_mean, use_buffers=use_buffers)
    swa_multi = swa_utils.AveragedModel(model, multi_avg_fn=multi, use_buffers=use_buffers)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    swa_sched = swa_utils.SWALR(opt, swa_lr=0.03, anneal_epochs=3, anneal_strategy="linear")
    rng = np.random.default_rng(292)
    loader = [(torch.tensor(rng.standard_normal((3, 1, 4, 4))), torch.tensor(rng.integers(0, 2, 3)))
              for _ in range(2)]
    swa_start, losses, lrs, counts = 2, [], [], []
    for epoch in range(5):
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        if epoch >= swa_start:
            swa.update_parameters(model)
            swa_multi.update_parameters(model)
            swa_sched.step()
        else:
            sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        counts.append(swa.n_averaged.item())
    before = [b.clone() for b in swa.module.buffers()]
    swa_utils.update_bn(loader, swa)
    swa_utils.update_bn(iter(loader), swa_multi)
    x = torch.cat([xb for xb, _ in loader])
    swa.eval()
    swa_multi.eval()
    with torch.no_grad():
        out, out_multi = swa(x), swa_multi(x)
    return dict(init=init, losses=losses, lrs=lrs, counts=counts, before=before, out=out, out_multi=out_multi,
                bn=[swa.module[1].running_mean, swa.module[1].running_var, swa.module[1].num_batches_tracked,
                    swa_multi.module[1].running_var], momentum=swa.module[1].momentum,
                swa_state=dict(swa.state_dict()), kinds=[kind(swa.n_averaged)], last=swa_sched.get_last_lr())


@pytest.mark.parametrize("use_buffers", [False, True])
def test_swa_linear_swalr_custom_averages_update_bn(torch, use_buffers):
    both(torch, swa_script, use_buffers=use_buffers)


# ---- timm-like mixing modes: batch-flipped partners, clipped cutmix boxes, per-sample lambdas, smoothed one-hots --
def mixing_modes(torch, init, mode):
    nn, F = torch.nn, torch.nn.functional
    classes, smoothing = 3, 0.1
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, classes))
    init = start(model, init)
    rng = np.random.default_rng(293)
    images = torch.tensor(rng.standard_normal((4, 2, 6, 6)))
    labels = torch.tensor(rng.integers(0, classes, 4))

    def smoothed_one_hot(y, lam_or_lams):
        off, on = smoothing / classes, 1.0 - smoothing + smoothing / classes
        y1 = torch.full((y.shape[0], classes), off, dtype=torch.float64).scatter_(1, y.view(-1, 1), on)
        y2 = y1.flip(0)
        lam = lam_or_lams.view(-1, 1) if isinstance(lam_or_lams, torch.Tensor) else lam_or_lams
        return y1 * lam + y2 * (1.0 - lam)

    def clipped_box(lam, cy, cx, h=6, w=6):
        ratio = math.sqrt(1 - lam)
        ch, cw = int(h * ratio), int(w * ratio)
        return (int(np.clip(cy - ch // 2, 0, h)), int(np.clip(cy + ch // 2, 0, h)),
                int(np.clip(cx - cw // 2, 0, w)), int(np.clip(cx + cw // 2, 0, w)))

    opt = torch.optim.AdamW(model.parameters(), lr=0.02)
    losses, targets = [], []
    for lam, cy, cx in [(0.7, 1, 5), (0.45, 3, 3), (0.8, 0, 2)]:
        x = images.clone()
        if mode == "batch_mixup":
            x.mul_(lam).add_(x.flip(0).mul_(1.0 - lam))
            target = smoothed_one_hot(labels, lam)
        elif mode == "cutmix_clipped":
            y0, y1, x0, x1 = clipped_box(lam, cy, cx)
            x[:, :, y0:y1, x0:x1] = x.flip(0)[:, :, y0:y1, x0:x1]
            lam = 1.0 - (y1 - y0) * (x1 - x0) / 36.0  # the area actually pasted
            target = smoothed_one_hot(labels, lam)
        else:  # one lambda per sample, pairs (i, n-1-i) mixed with each other
            lams = torch.tensor(rng.beta(1.0, 1.0, 4))
            x = x * lams.view(-1, 1, 1, 1) + x.flip(0) * (1.0 - lams.view(-1, 1, 1, 1))
            target = smoothed_one_hot(labels, lams)
        out = model(x)
        soft_ce = torch.sum(-target * F.log_softmax(out, dim=-1), dim=-1).mean()
        module_ce = nn.CrossEntropyLoss()(out, target)
        bce = F.binary_cross_entropy_with_logits(out, target.gt(0.5).to(out.dtype))
        loss = soft_ce + 0.5 * bce
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([loss, soft_ce, module_ce, bce])
        targets.append(target)
    return dict(init=init, losses=losses, targets=targets, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("mode", ["batch_mixup", "cutmix_clipped", "elementwise"])
def test_timm_like_mixing_modes_soft_targets(torch, mode):
    both(torch, mixing_modes, mode=mode)


# ---- a fairseq-like recipe: inverse-sqrt warmup, hand-written label-smoothed NLL, update_freq, grads / tokens --
def fairseq_recipe(torch, init):
    nn, F = torch.nn, torch.nn.functional
    vocab, pad, eps = 7, 1, 0.1
    model = nn.Sequential(nn.Embedding(vocab, 6, padding_idx=pad), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, vocab))
    init = start(model, init)
    warmup, base = 3, 0.05
    opt = torch.optim.Adam(model.parameters(), lr=base, betas=(0.9, 0.98), eps=1e-8)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda u: (u + 1) / warmup if u + 1 < warmup else (warmup / (u + 1)) ** 0.5)

    def label_smoothed_nll(lprobs, target):
        target = target.unsqueeze(-1)
        nll = -lprobs.gather(dim=-1, index=target)
        smooth = -lprobs.sum(dim=-1, keepdim=True)
        pad_mask = target.eq(pad)
        nll.masked_fill_(pad_mask, 0.0)
        smooth.masked_fill_(pad_mask, 0.0)
        nll, smooth = nll.sum(), smooth.sum()
        eps_i = eps / (lprobs.size(-1) - 1)
        return (1.0 - eps - eps_i) * nll + eps_i * smooth, nll

    rng = np.random.default_rng(294)
    batches = []
    for _ in range(4):
        src = rng.integers(2, vocab, (2, 5))
        src[0, 3:] = pad
        tgt = np.roll(src, -1, axis=1)
        tgt[:, -1] = pad
        batches.append((torch.tensor(src), torch.tensor(tgt)))
    update_freq, losses, norms, lrs, checks = 2, [], [], [], []
    sample_size = 0
    for i, (src, tgt) in enumerate(batches):
        lprobs = F.log_softmax(model(src), dim=-1, dtype=torch.float64)
        loss, nll = label_smoothed_nll(lprobs.view(-1, vocab), tgt.view(-1))
        ntokens = tgt.ne(pad).sum().item()
        sample_size += ntokens
        loss.backward()
        ref = F.cross_entropy(lprobs.view(-1, vocab), tgt.view(-1), ignore_index=pad, reduction="sum")
        checks.append([nll, ref, ntokens])
        if (i + 1) % update_freq == 0:
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.data.mul_(1.0 / sample_size)
            total = nn.utils.get_total_norm([p.grad for p in model.parameters() if p.grad is not None])
            nn.utils.clip_grads_with_norm_(model.parameters(), 0.5, total)
            norms.append(total)
            opt.step()
            sched.step()
            opt.zero_grad()
            sample_size = 0
        losses.append(loss.item())
        lrs.append(sched.get_last_lr()[0])
    return dict(init=init, losses=losses, norms=norms, lrs=lrs, checks=checks, params=list(model.parameters()))


def test_fairseq_like_label_smoothed_nll_update_freq(torch):
    both(torch, fairseq_recipe)
