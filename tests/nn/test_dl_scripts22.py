"""Scripts of the everyday plumbing around a model (a torch.utils.data pipeline of dict samples, padded batches and
samplers, checkpointing mid-run through torch.save / torch.load, model surgery and freezing, gradient accumulation
with clipping and a sequential warmup schedule, evaluation metrics, inspection hooks, dtypes and numpy round trips,
early stopping on ReduceLROnPlateau, reproducibility switches, a small CLI-style train / evaluate pair), written once
against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy where the two
libraries' streams differ by design)."""
import copy
import io
import random
from dataclasses import dataclass

import numpy as np

from twins import both, grads, start


# ---- a data pipeline: dict samples, pad_sequence collate, samplers, random_split, ConcatDataset --------------------
def data_pipeline(torch, init):
    nn, F = torch.nn, torch.nn.functional
    data = torch.utils.data
    rng = np.random.default_rng(220)
    lengths = rng.integers(1, 5, 10)
    tokens = [rng.integers(1, 9, n) for n in lengths]
    labels = rng.integers(0, 3, 10)

    class Tokens(data.Dataset):
        def __init__(self, lo, hi):
            self.rows = list(range(lo, hi))

        def __len__(self):
            return len(self.rows)

        def __getitem__(self, i):
            r = self.rows[i]
            return {"ids": torch.tensor(tokens[r]), "label": int(labels[r]), "row": r}

    def pad_collate(batch):
        ids = [b["ids"] for b in batch]
        return {"ids": torch.nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=0),
                "lengths": torch.tensor([len(t) for t in ids]),
                "label": torch.tensor([b["label"] for b in batch]),
                "row": [b["row"] for b in batch]}

    class NumpyShuffle(data.Sampler):  # the order both libraries draw: numpy's
        def __init__(self, n, seed):
            self.n, self.seed = n, seed

        def __iter__(self):
            self.seed += 1
            return iter(np.random.default_rng(self.seed).permutation(self.n).tolist())

        def __len__(self):
            return self.n

    full = data.ConcatDataset([Tokens(0, 6), Tokens(6, 10)])
    facts = [len(full), full.cumulative_sizes, full[7]["row"], full[-1]["row"]]

    # generator-driven draws: their order is each library's own, their shape and repeatability are compared
    def drawn(loader):
        return [b["row"] for b in loader]

    g = torch.Generator().manual_seed(5)
    shuffled = data.DataLoader(full, batch_size=3, shuffle=True, drop_last=True, collate_fn=pad_collate, generator=g)
    first = drawn(shuffled)
    g.manual_seed(5)
    again = drawn(shuffled)
    facts += [len(shuffled), [len(b) for b in first], first == again, len(set(sum(first, [])))]
    weighted = data.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0, 1.0], num_samples=7, replacement=True,
                                          generator=torch.Generator().manual_seed(1))
    picks = list(weighted)
    subset = data.SubsetRandomSampler([1, 4, 6, 9], generator=torch.Generator().manual_seed(2))
    train, val = data.random_split(full, [0.7, 0.3], generator=torch.Generator().manual_seed(3))
    facts += [len(picks), sorted(set(picks)) <= [1, 3, 4], sorted(subset), len(subset),
              len(train), len(val), sorted(train.indices + val.indices) == list(range(10)),
              type(picks[0]).__name__]

    class Bag(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(9, 6, padding_idx=0)
            self.out = nn.Linear(6, 3)

        def forward(self, ids, lengths):
            mask = (ids != 0).unsqueeze(-1).to(self.emb.weight.dtype)
            return self.out((self.emb(ids) * mask).sum(1) / lengths.unsqueeze(1))

    model = Bag()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    loader = data.DataLoader(full, batch_size=4, sampler=NumpyShuffle(10, 0), drop_last=True, collate_fn=pad_collate)
    losses, batches = [], []
    for _ in range(2):
        for batch in loader:
            loss = F.cross_entropy(model(batch["ids"], batch["lengths"]), batch["label"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            batches.append((batch["ids"], batch["row"]))
    return dict(init=init, facts=facts, losses=losses, batches=batches, grads=grads(model),
                params=list(model.parameters()))


def test_dict_dataset_padded_loader_samplers(torch):
    both(torch, data_pipeline)


# ---- checkpointing mid-run: save model / optimizer / scheduler / epoch to bytes, load into fresh objects ---------
def resumed(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(221)
    x, y = torch.tensor(rng.standard_normal((6, 4))), torch.tensor(rng.standard_normal((6, 1)))

    def build():
        model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 1)).double()
        opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
        return model, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def epoch(model, opt, sched):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    model, opt, sched = build()
    init = start(model, init)
    straight = [epoch(model, opt, sched) for _ in range(5)]
    final = [p.detach().clone() for p in model.parameters()]

    model, opt, sched = build()
    model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    first = [epoch(model, opt, sched) for _ in range(2)]
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "sched": sched.state_dict(), "epoch": 2},
               buffer)
    buffer.seek(0)
    ckpt = torch.load(buffer, weights_only=True)
    model, opt, sched = build()
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optim"])
    sched.load_state_dict(ckpt["sched"])
    facts = [sorted(ckpt), sorted(ckpt["optim"]), ckpt["sched"]["last_epoch"], opt.state_dict()["state"][0]["step"],
             sched.get_last_lr(), opt.param_groups[0]["lr"]]
    rest = [epoch(model, opt, sched) for _ in range(ckpt["epoch"], 5)]
    return dict(init=init, straight=straight, resumed=first + rest, final=final, facts=facts,
                params=list(model.parameters()))


def test_checkpoint_mid_run_resumes_exactly(torch):
    theirs, ours = both(torch, resumed)
    np.testing.assert_allclose(ours["resumed"], ours["straight"], rtol=1e-12)
    for a, b in zip(ours["params"], ours["final"]):
        np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-12)


# ---- model surgery and freezing: a new head, a frozen backbone, param groups, apply(init_fn), train / eval --------
def surgery(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Dropout(0.5))
            self.head = nn.Linear(6, 2)

        def forward(self, x):
            return self.head(self.backbone(x))

    model = Net()
    init = start(model, init)
    model.head = nn.Linear(6, 3).double()
    model.backbone.requires_grad_(False)
    model.extra = nn.Linear(3, 3, bias=False).double()

    def init_fn(m):
        if isinstance(m, nn.Linear) and m.weight.requires_grad:
            if m.weight.shape[0] == m.weight.shape[1]:
                nn.init.eye_(m.weight)
            else:
                nn.init.constant_(m.weight, 0.1)
                with torch.no_grad():
                    m.weight[1].copy_(torch.linspace(-0.5, 0.5, 6))
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm1d):
            nn.init.ones_(m.weight)

    model.apply(init_fn)
    trainable = list(filter(lambda p: p.requires_grad, model.parameters()))
    opt = torch.optim.SGD([{"params": model.head.parameters(), "lr": 0.1},
                           {"params": model.extra.parameters()}], lr=0.01, momentum=0.5)
    facts = [[n for n, _ in model.named_parameters()], [n for n, p in model.named_parameters() if p.requires_grad],
             [n for n, _ in model.named_modules()], [type(c).__name__ for c in model.children()],
             len(trainable), [g["lr"] for g in opt.param_groups], [len(g["params"]) for g in opt.param_groups]]
    rng = np.random.default_rng(222)
    x, y = torch.tensor(rng.standard_normal((5, 4))), torch.tensor(rng.integers(0, 3, 5))
    model.train()
    model.backbone.eval()  # frozen: its BatchNorm statistics and Dropout stay put
    facts.append([m.training for m in model.modules()])
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model.extra(model(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    frozen_grads = [p.grad for p in model.backbone.parameters()]
    model.train()
    with torch.no_grad():
        train_out = model.backbone[:3](x)  # batch statistics, running ones updated
    model.eval()
    with torch.no_grad():
        eval_out = model(x)
    return dict(init=init, facts=facts, losses=losses, frozen=[g is None for g in frozen_grads],
                grads=grads(model), params=list(model.parameters()), buffers=list(model.buffers()),
                train_out=train_out, eval_out=eval_out)


def test_surgery_freezing_param_groups_apply_init(torch):
    both(torch, surgery)


# ---- gradient accumulation, clipping, zero_grad(set_to_none), a LambdaLR warmup then cosine by SequentialLR -------
def accumulation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(3, 8), nn.GELU(), nn.Linear(8, 2))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    warmup = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: (s + 1) / 3)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=1e-3)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[2])
    rng = np.random.default_rng(223)
    x, y = torch.tensor(rng.standard_normal((12, 3))), torch.tensor(rng.standard_normal((12, 2)))
    accum_steps = 3
    losses, norms, lrs, grad_states = [], [], [], []
    for step in range(5):
        for micro in range(accum_steps):
            sl = slice(4 * micro, 4 * micro + 4)
            loss = F.smooth_l1_loss(model(x[sl]), y[sl]) / accum_steps
            loss.backward()
            losses.append(loss.item())
        if step % 2:
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.05))
        else:
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=float("inf"), norm_type=1))
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        set_to_none = step % 2 == 0
        opt.zero_grad(set_to_none=set_to_none)
        grad_states.append([p.grad is None if set_to_none else float(p.grad.abs().sum()) for p in model.parameters()])
    return dict(init=init, losses=losses, norms=norms, lrs=lrs, grad_states=grad_states,
                params=list(model.parameters()))


def test_gradient_accumulation_clipping_sequential_lr(torch):
    both(torch, accumulation)


# ---- metrics: eval under no_grad, accuracy, a bincount confusion matrix, precision / recall, top-k, softmax -------
def metrics(torch, init):
    nn, F = torch.nn, torch.nn.functional
    C = 6
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Dropout(0.3), nn.Linear(10, C))
    init = start(model, init)
    rng = np.random.default_rng(224)
    xs, ys = rng.standard_normal((4, 8, 5)), rng.integers(0, C, (4, 8))
    model.eval()
    running, seen, correct, top5 = 0.0, 0, 0.0, 0.0
    preds, probs, targets = [], [], []
    with torch.no_grad():
        for xb, yb in zip(xs, ys):
            x, y = torch.tensor(xb), torch.tensor(yb)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            running += loss.item() * x.size(0)
            seen += x.size(0)
            correct += (logits.argmax(1) == y).float().mean().item()
            _, top = logits.topk(5, dim=1)
            top5 += top.eq(y.view(-1, 1)).any(dim=1).float().sum().item()
            preds.append(logits.argmax(dim=1))
            targets.append(y)
            probs.append(F.softmax(logits, dim=1).cpu().numpy())
    pred, y = torch.cat(preds), torch.cat(targets)
    confusion = torch.bincount(y * C + pred, minlength=C * C).view(C, C)
    tp = confusion.diag().float()
    precision = tp / confusion.sum(0).clamp(min=1)
    recall = tp / confusion.sum(1).clamp(min=1)
    f1 = 2 * precision * recall / (precision + recall).clamp(min=1e-12)
    return dict(init=init, avg_loss=running / seen, acc=correct / len(xs), top5=top5 / seen, confusion=confusion,
                precision=precision, recall=recall, f1=f1, probs=np.concatenate(probs), pred=pred,
                grad=[loss.requires_grad, logits.grad_fn is None, type(probs[0]).__name__, probs[0].dtype.name])


def test_eval_metrics_confusion_topk(torch):
    both(torch, metrics)


# ---- hooks: forward hooks collecting activations, full backward hooks, a pre-hook, a tensor hook, removal -------
def hooks(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2, self.fc3 = nn.Linear(4, 6), nn.Linear(6, 5), nn.Linear(5, 2)

        def forward(self, x, features=False):
            h1 = torch.relu(self.fc1(x))
            if h1.requires_grad:
                h1.register_hook(lambda g: g * 0.5)  # damp what flows back into fc1
            h2 = torch.tanh(self.fc2(h1))
            out = self.fc3(h2)
            return (out, {"h1": h1, "h2": h2}) if features else out

    model = Net()
    init = start(model, init)
    acts, grad_norms, names = {}, [], []
    handles = []
    for name, module in model.named_children():
        handles.append(module.register_forward_hook(
            lambda m, inp, out, name=name: acts.__setitem__(name, out.detach().clone())))
        handles.append(module.register_full_backward_hook(
            lambda m, gin, gout, name=name: (names.append(name), grad_norms.append(gout[0].norm().item()))[0]))
    handles.append(model.fc1.register_forward_pre_hook(lambda m, args: (args[0] * 2,)))
    rng = np.random.default_rng(225)
    x = torch.tensor(rng.standard_normal((3, 4)))
    y = torch.tensor([1, 0, 1])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    first = dict(acts=dict(acts), grads=grads(model), names=list(names), norms=list(grad_norms))
    opt.step()
    for h in handles:
        h.remove()
    acts.clear()
    opt.zero_grad()
    out, feats = model(x, features=True)
    F.cross_entropy(out, y).backward()
    return dict(init=init, first=first, after=[len(acts), len(names)], out=out, feats=feats,
                grads=grads(model), params=list(model.parameters()))


def test_inspection_hooks_and_removal(torch):
    both(torch, hooks)


# ---- dtypes and devices on the CPU: double(), .to(dtype), default dtype, numpy round trips, from_numpy sharing ---
def dtypes(torch, init):
    nn, F = torch.nn, torch.nn.functional
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Linear(3, 2)
    init = start(model, init)
    model.float()
    facts = [str(device), device.type, model.weight.dtype == torch.float32]
    model = model.double().to(device)
    a32 = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    i32 = np.array([1, 0], dtype=np.int32)
    x, y = torch.as_tensor(a32), torch.as_tensor(i32)
    facts += [str(x.dtype).split(".")[-1], str(y.dtype).split(".")[-1], x.to(model.weight.dtype).dtype == torch.float64]
    out = model(x.to(model.weight.dtype).to(device))
    loss = F.cross_entropy(out, y.long())
    loss.backward()
    shared = np.zeros(3)
    t = torch.from_numpy(shared)
    t[1] = 5.0
    shared[2] = 7.0
    back = out.detach().numpy()
    facts += [shared.tolist(), t.tolist(), back.dtype.name, torch.from_numpy(back).dtype == torch.float64,
              x.numpy().dtype.name, y.numpy().dtype.name]
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        made = [torch.tensor([1.5]).dtype, torch.zeros(2).dtype, nn.Linear(2, 2).weight.dtype, torch.arange(3.0).dtype,
                torch.tensor([1, 2]).dtype, torch.as_tensor(a32).dtype]
    finally:
        torch.set_default_dtype(old)
    facts += [[str(d).split(".")[-1] for d in made], str(torch.get_default_dtype()).split(".")[-1],
              torch.tensor([1.5]).dtype == torch.float32]
    return dict(init=init, facts=facts, out=out, loss=loss.detach(), grads=grads(model))


def test_dtypes_devices_numpy_round_trips(torch):
    both(torch, dtypes)


# ---- early stopping: the best state by deepcopy, ReduceLROnPlateau on validation losses, reload of the best ------
def early_stopping(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(2, 6), nn.Tanh(), nn.Linear(6, 1))
    init = start(model, init)
    rng = np.random.default_rng(226)
    xt, xv = rng.standard_normal((16, 2)), rng.standard_normal((8, 2))
    x, xval = torch.tensor(xt), torch.tensor(xv)
    y, yval = torch.tensor(np.sin(xt[:, :1] * 3)), torch.tensor(np.cos(xv[:, :1]))  # validation will not improve
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", patience=1, factor=0.5, threshold=1e-2)
    best, best_state, bad, patience = float("inf"), None, 0, 3
    history = []
    for epoch in range(12):
        model.train()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            val = F.mse_loss(model(xval), yval).item()
        sched.step(val)
        history.append((epoch, loss.item(), val, opt.param_groups[0]["lr"], sched.num_bad_epochs))
        if val < best:
            best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(best_state)
    with torch.no_grad():
        reloaded = F.mse_loss(model(xval), yval).item()
    return dict(init=init, history=history, best=best, reloaded=reloaded, stopped=epoch,
                params=list(model.parameters()), same=reloaded == best)


def test_early_stopping_best_state_plateau(torch):
    both(torch, early_stopping)


# ---- reproducibility: seeds, deterministic switches, get_rng_state / set_rng_state, numpy and random seeding ------
def reproducible(torch, init):
    nn, F = torch.nn, torch.nn.functional
    was_det = torch.are_deterministic_algorithms_enabled()
    cudnn = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    try:
        torch.manual_seed(7)
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        flags = [torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
                 torch.backends.cudnn.benchmark]
        state = torch.get_rng_state()
        a = torch.rand(4)
        b = torch.randn(2, 2)
        torch.set_rng_state(state)
        repeat = [torch.equal(a, torch.rand(4)), torch.equal(b, torch.randn(2, 2))]
        torch.manual_seed(7)
        repeat.append(torch.equal(a, torch.rand(4)))
        g = torch.Generator().manual_seed(3)
        gs = g.get_state()
        d1 = torch.randperm(6, generator=g)
        g.set_state(gs)
        repeat.append(torch.equal(d1, torch.randperm(6, generator=g)))
        random.seed(0)
        np.random.seed(0)
        py, npy = random.random(), np.random.rand(2)
    finally:
        torch.use_deterministic_algorithms(was_det)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = cudnn
    model = nn.Linear(3, 1)
    init = start(model, init)
    x = torch.tensor(npy.reshape(2, 1) * np.ones(3))
    loss = F.mse_loss(model(x), torch.full((2, 1), py, dtype=torch.float64))
    loss.backward()
    return dict(init=init, flags=flags, repeat=repeat, loss=loss.detach(), grads=grads(model),
                restored=torch.are_deterministic_algorithms_enabled() == was_det)


def test_reproducibility_switches_and_rng_state(torch):
    both(torch, reproducible)


# ---- a small CLI-style script: a config dataclass, train() / evaluate(), main(), f-strings and printoptions -------
@dataclass
class Config:
    hidden: int = 5
    lr: float = 0.1
    epochs: int = 3
    batch_size: int = 4


def cli(torch, init):
    nn, F = torch.nn, torch.nn.functional
    lines = []

    def train(model, opt, x, y, cfg):
        model.train()
        total = torch.zeros((), dtype=torch.float64)
        for i in range(0, len(x), cfg.batch_size):
            loss = F.binary_cross_entropy_with_logits(model(x[i:i + cfg.batch_size]).squeeze(1), y[i:i + cfg.batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
        return total / (len(x) // cfg.batch_size)

    @torch.no_grad()
    def evaluate(model, x, y):
        model.eval()
        p = torch.sigmoid(model(x).squeeze(1))
        return ((p > 0.5).float() == y).float().mean(), p

    def main(cfg, init):
        model = nn.Sequential(nn.Linear(2, cfg.hidden), nn.ReLU(), nn.Linear(cfg.hidden, 1))
        init = start(model, init)
        opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
        rng = np.random.default_rng(227)
        x = torch.tensor(rng.standard_normal((8, 2)))
        y = (x[:, 0] * x[:, 1] > 0).to(torch.float64)
        for epoch in range(cfg.epochs):
            loss = train(model, opt, x, y, cfg)
            acc, p = evaluate(model, x, y)
            lines.append(f"epoch {epoch}: loss {loss:.4f} acc {acc.item():.2%} first {p[0]:.3f}")
        lines.append(f"{torch.tensor([1.0, 2.5])}")
        lines.append(f"{torch.tensor([[1, 2], [3, 4]])}")
        lines.append(str(torch.tensor([0.123456789, 2.0], dtype=torch.float64)))
        try:
            torch.set_printoptions(precision=3)
            lines.append(str(torch.tensor([0.123456789, 20.5])))
            lines.append(repr(p[:3]))
        finally:
            torch.set_printoptions(profile="default")
        lines.append(str(torch.tensor([0.123456789])))
        return dict(init=init, loss=loss, p=p, params=list(model.parameters()))

    result = {}
    if __name__ != "__main__":  # as `if __name__ == "__main__": main()` runs it, called as a function here
        result = main(Config(), init)
    result["lines"] = [line.replace("minigrad.", "torch.") for line in lines]
    return result


def test_cli_style_train_evaluate_printing(torch):
    both(torch, cli)
