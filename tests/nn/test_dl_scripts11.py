"""Deep-learning scripts of more kinds again (a matrix-factorisation recommender with weighted, padded EmbeddingBags
and sparse embeddings under SparseAdam, multi-task learning with learned uncertainty weights and a param group added
mid-run, mixup / cutmix on soft targets, Performer-style linear attention, a U-Net with interpolated skips and a
dice + weighted BCE loss, schedulers saved to bytes and resumed, a tabular model on a random split, truncated BPTT
with a ReLU RNN and a projected LSTM, distillation with a hint from a frozen BatchNorm teacher, supervised
contrastive learning beside NT-Xent), written once against a `torch`-like module and run twice: on PyTorch, then on
minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64
throughout; random draws by numpy)."""
import io
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- a matrix-factorisation recommender: sparse user / item embeddings, weighted and padded bags of history -------
def recommender(torch, init, mode):
    nn = torch.nn
    users, items, tags, d = 6, 9, 5, 4

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(users, d, sparse=True)
            self.item = nn.Embedding(items, d, sparse=True)
            self.history = nn.EmbeddingBag(items, d, mode=mode, padding_idx=0)
            self.tags = nn.EmbeddingBag(tags, d, mode="sum", include_last_offset=True)
            self.bias = nn.Linear(2 * d, 1)

        def forward(self, u, i, hist, tag_ids, tag_offsets, tag_w):
            taste = self.user(u) + self.history(hist)  # hist: (batch, bag) padded with 0
            profile = self.item(i) + self.tags(tag_ids, tag_offsets, per_sample_weights=tag_w)
            return (taste * profile).sum(-1) + self.bias(torch.cat([taste, profile], -1)).squeeze(-1)

    model = MF()
    init = start(model, init)
    sparse = [model.user.weight, model.item.weight]
    dense = [p for n, p in model.named_parameters() if not n.startswith(("user.", "item."))]
    opt_sparse = torch.optim.SparseAdam(sparse, lr=0.05)
    opt_dense = torch.optim.Adam(dense, lr=0.02)
    rng = np.random.default_rng(110)
    losses, sparse_grads = [], []
    for _ in range(3):
        u = torch.tensor(rng.integers(0, users, 4))
        i = torch.tensor(rng.integers(0, items, 4))
        hist = torch.tensor(rng.integers(0, items, (4, 3)))  # some zeros: padding, left out of the bag
        tag_ids = torch.tensor(rng.integers(0, tags, 7))
        tag_offsets = torch.tensor([0, 2, 2, 5, 7])  # an empty bag among them
        tag_w = torch.tensor(rng.uniform(0.5, 1.5, 7))
        rating = torch.tensor(rng.uniform(1, 5, 4))
        pred = model(u, i, hist, tag_ids, tag_offsets, tag_w)
        loss = torch.nn.functional.mse_loss(pred, rating)
        opt_sparse.zero_grad()
        opt_dense.zero_grad()
        loss.backward()
        sparse_grads.append([p.grad.is_sparse for p in sparse] + [p.grad.coalesce().to_dense() for p in sparse])
        opt_sparse.step()
        opt_dense.step()
        losses.append(loss)
    return dict(init=init, losses=losses, sparse_grads=sparse_grads, dense_grads=[p.grad for p in dense],
                params=list(model.parameters()), steps=[opt_sparse.state[p]["step"] for p in sparse])


@pytest.mark.parametrize("mode", ["mean", "sum", "max"])
def test_matrix_factorisation_sparse_adam_embedding_bags(torch, mode):
    both(torch, recommender, mode=mode)


# ---- multi-task learning: per-task heads, learned log-variance weights, a param group added mid-run -----------
def multitask(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class MultiTask(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU())
            self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 2), "bin": nn.Linear(8, 1)})
            self.log_vars = nn.ParameterDict({"cls": nn.Parameter(torch.zeros(()))})
            self.log_vars |= {k: torch.zeros(()) for k in ("reg", "bin")}  # plain tensors become Parameters

        def forward(self, x):
            h = self.trunk(x)
            return {k: head(h) for k, head in self.heads.items()}

    model = MultiTask()
    init = start(model, init)
    groups = [{"params": model.trunk.parameters(), "lr": 0.01}]
    groups += [{"params": model.heads[k].parameters(), "lr": lr, "name": k}
               for k, lr in (("cls", 0.03), ("reg", 0.02), ("bin", 0.05))]
    opt = torch.optim.Adam(groups, lr=0.01, betas=(0.8, 0.99))
    rng = np.random.default_rng(111)
    x = torch.tensor(rng.standard_normal((10, 5)))
    y = {"cls": torch.tensor(rng.integers(0, 3, 10)), "reg": torch.tensor(rng.standard_normal((10, 2))),
         "bin": torch.tensor(rng.integers(0, 2, (10, 1))).double()}
    criteria = {"cls": nn.CrossEntropyLoss(), "reg": nn.MSELoss(), "bin": nn.BCEWithLogitsLoss()}
    losses, task_losses, lrs = [], [], []
    for step in range(5):
        if step == 2:  # the uncertainty weights start learning once the heads have warmed up
            opt.add_param_group({"params": list(model.log_vars.values()), "lr": 0.1, "name": "weights"})
        out = model(x)
        parts = {k: criteria[k](out[k], y[k]) for k in out}
        s = model.log_vars
        loss = sum(torch.exp(-s[k]) * parts[k] + s[k] for k in parts) + 0.5 * F.softplus(s["reg"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        task_losses.append(torch.stack([parts[k].detach() for k in ("cls", "reg", "bin")]))
        lrs.append([(g.get("name"), g["lr"], len(g["params"])) for g in opt.param_groups])
    state = opt.state_dict()
    return dict(init=init, losses=losses, task_losses=task_losses, lrs=lrs, grads=grads(model),
                params=list(model.parameters()), log_vars=dict(model.log_vars.items()),
                state_keys=sorted(state["state"]), groups=[g["params"] for g in state["param_groups"]],
                steps=[float(v["step"]) for v in state["state"].values()])


def test_multitask_uncertainty_weighting_add_param_group(torch):
    both(torch, multitask)


# ---- mixup and cutmix on soft targets: label smoothing on class indices and on probabilities -------------------
def mixing(torch, init, weighted):
    nn, F = torch.nn, torch.nn.functional
    classes = 4
    model = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                          nn.Linear(12, classes))
    init = start(model, init)
    weight = torch.tensor([1.0, 2.0, 0.5, 1.5], dtype=torch.float64) if weighted else None
    hard = nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(112)
    images = torch.tensor(rng.standard_normal((6, 1, 6, 6)))
    labels = torch.tensor(rng.integers(0, classes, 6))
    losses, soft_losses = [], []
    for step in range(4):
        lam = float(rng.beta(0.4, 0.4))
        perm = torch.tensor(rng.permutation(6))
        x = images.clone()
        if step % 2:  # mixup
            x = lam * x + (1 - lam) * x[perm]
        else:  # cutmix: a box of (about) 1 - lam of the area from the partner image
            side = int(6 * math.sqrt(1 - lam))
            r, c = int(rng.integers(0, 7 - side)), int(rng.integers(0, 7 - side))
            x[:, :, r:r + side, c:c + side] = images[perm][:, :, r:r + side, c:c + side]
            lam = 1 - side * side / 36
        out = model(x)
        loss = lam * hard(out, labels) + (1 - lam) * hard(out, labels[perm])
        onehot = F.one_hot(labels, classes).double()
        target = lam * onehot + (1 - lam) * onehot[perm]
        soft = F.cross_entropy(out, target, weight=weight, label_smoothing=0.1)
        opt.zero_grad()
        (soft if step >= 2 else loss).backward()
        opt.step()
        losses.append(loss)
        soft_losses.append(soft)
    return dict(init=init, losses=losses, soft=soft_losses, params=list(model.parameters()),
                agree=[bool(torch.isclose(a, b)) for a, b in zip(losses, soft_losses)])


@pytest.mark.parametrize("weighted", [False, True])
def test_mixup_cutmix_soft_targets_label_smoothing(torch, weighted):
    theirs, _ = both(torch, mixing, weighted=weighted)
    assert all(theirs["agree"]) != weighted  # (with class weights, the two spellings differ: each is compared)


# ---- Performer-style linear attention: positive random features, causal prefix sums ---------------------------
def performer(torch, init, causal):
    nn, F = torch.nn, torch.nn.functional
    d, heads, m, vocab = 8, 2, 6, 10
    hd = d // heads
    omega = torch.tensor(np.random.default_rng(113).standard_normal((m, hd)))

    def features(x):  # phi(x) = exp(w.x - |x|^2 / 2) / sqrt(m): E[phi(q).phi(k)] = exp(q.k)
        return torch.exp(torch.einsum("bhtd,md->bhtm", x, omega) - x.pow(2).sum(-1, keepdim=True) / 2) / math.sqrt(m)

    class LinearAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (z.view(b, t, heads, hd).transpose(1, 2) for z in self.qkv(x).chunk(3, dim=-1))
            q, k = features(q * hd ** -0.25), features(k * hd ** -0.25)
            if causal:
                kv = torch.einsum("bhtm,bhtd->bhtmd", k, v).cumsum(dim=2)
                num = torch.einsum("bhtm,bhtmd->bhtd", q, kv)
                den = torch.einsum("bhtm,bhtm->bht", q, k.cumsum(dim=2))
            else:
                num = torch.einsum("bhtm,bhmd->bhtd", q, torch.einsum("bhtm,bhtd->bhmd", k, v))
                den = torch.einsum("bhtm,bhm->bht", q, k.sum(dim=2))
            y = num / den.unsqueeze(-1)
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.norm = nn.LayerNorm(d)
            self.attn = LinearAttention()
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.emb(idx)
            return self.head(x + self.attn(self.norm(x)))

    model = Model()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    data = torch.tensor(np.random.default_rng(114).integers(0, vocab, (3, 7)))
    losses = []
    for _ in range(3):
        logits = model(data[:, :-1])
        loss = F.cross_entropy(logits.transpose(1, 2), data[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():  # causal: a token's output ignores the tokens after it
        changed = data.clone()
        changed[:, -1] = (changed[:, -1] + 1) % vocab
        prefix_same = bool(torch.allclose(model(data)[:, :-1], model(changed)[:, :-1]))
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                prefix_same=prefix_same)


@pytest.mark.parametrize("causal", [False, True])
def test_performer_linear_attention(torch, causal):
    theirs, _ = both(torch, performer, causal=causal)
    assert theirs["prefix_same"] == causal


# ---- a U-Net: transposed-convolution and interpolated up-sampling, skip concatenation, dice + weighted BCE -------
def unet(torch, init, up):
    nn, F = torch.nn, torch.nn.functional

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2, self.mid = block(1, 3), block(3, 4), block(4, 4)
            self.up2 = nn.ConvTranspose2d(4, 4, 2, stride=2)
            self.dec2, self.dec1 = block(8, 3), block(6, 3)
            self.out = nn.Conv2d(3, 1, 1)

        def upsample(self, x, like):
            if up == "nearest":
                return F.interpolate(x, size=like.shape[-2:], mode="nearest")
            return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=up == "corners")

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(F.max_pool2d(e1, 2))
            m = self.mid(F.max_pool2d(e2, 2))
            d2 = self.dec2(torch.cat([self.up2(m), e2], dim=1))
            return self.out(self.dec1(torch.cat([self.upsample(d2, e1), e1], dim=1)))

    model = UNet()
    init = start(model, init)
    rng = np.random.default_rng(115)
    x = torch.tensor(rng.standard_normal((2, 1, 8, 8)))
    mask = torch.tensor((rng.uniform(size=(2, 1, 8, 8)) < 0.25).astype(np.float64))
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0]))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def dice_loss(logits, target, eps=1.0):
        p = torch.sigmoid(logits)
        inter = (p * target).sum(dim=(1, 2, 3))
        return 1 - ((2 * inter + eps) / (p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)).mean()

    losses = []
    for _ in range(3):
        logits = model(x)
        loss = bce(logits, mask) + dice_loss(logits, mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        pred = (model(x) > 0).long()
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                buffers=list(model.buffers()), pred=pred)


@pytest.mark.parametrize("up", ["corners", "no_corners", "nearest"])
def test_unet_interpolated_skips_dice_weighted_bce(torch, up):
    both(torch, unet, up=up)


# ---- schedulers and optimizers saved to bytes mid-run and resumed, compared step by step ----------------------
def resumed(torch, init, name):
    nn, S = torch.nn, torch.optim.lr_scheduler
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(116).standard_normal((6, 3)))
    y = torch.tensor(np.random.default_rng(117).standard_normal((6, 1)))

    def make():
        opt = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[2].parameters(), "lr": 0.05}],
                              lr=0.1, momentum=0.9)
        if name == "warm_restarts":
            return opt, S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
        if name == "plateau":
            return opt, S.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=0, threshold=0.05,
                                            threshold_mode="abs", cooldown=1)
        if name == "chained":
            return opt, S.ChainedScheduler([S.LambdaLR(opt, lambda e: 1 / (1 + e)),
                                            S.StepLR(opt, step_size=2, gamma=0.5)])
        warm = S.LinearLR(opt, start_factor=0.25, total_iters=2)
        return opt, S.SequentialLR(opt, [warm, S.CosineAnnealingLR(opt, T_max=5)], milestones=[2])

    opt, sched = make()
    lrs, last, losses, metrics = [], [], [], []
    for step in range(9):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if name == "plateau":
            metric = [0.1, 0.3, 0.32, 0.33, 0.5, 0.52, 0.51, 0.6, 0.58][step]  # "max": higher is better
            sched.step(metric)
        else:
            sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        last.append(sched.get_last_lr())
        losses.append(loss.item())
        if step in (2, 5):  # save both to bytes, rebuild, reload
            buf = io.BytesIO()
            torch.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
            buf.seek(0)
            state = torch.load(buf, weights_only=False)
            opt, sched = make()
            opt.load_state_dict(state["opt"])
            sched.load_state_dict(state["sched"])
            metrics.append(sorted(k for k in state["sched"] if not k.startswith("_")))
    return dict(init=init, lrs=lrs, last=last, losses=losses, params=list(model.parameters()), metrics=metrics)


@pytest.mark.parametrize("name", ["warm_restarts", "plateau", "chained", "sequential"])
def test_schedulers_saved_to_bytes_and_resumed(torch, name):
    both(torch, resumed, name=name)


# ---- a tabular model: an embedding per categorical column, BatchNorm1d, a random split, DataLoader batches ------
def tabular(torch, init):
    nn, F = torch.nn, torch.nn.functional
    D = torch.utils.data
    cards = [4, 3, 5]

    class Tabular(nn.Module):
        def __init__(self):
            super().__init__()
            self.embs = nn.ModuleList([nn.Embedding(c, 2) for c in cards])
            self.bn_num = nn.BatchNorm1d(3)
            # (no bias before the BatchNorm: its exact gradient is 0, and Adam would step on the rounding noise,
            # which differs with the BLAS thread count)
            self.mlp = nn.Sequential(nn.Linear(9, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.3),
                                     nn.Linear(8, 2))

        def forward(self, cat, num):
            h = torch.cat([emb(cat[:, i]) for i, emb in enumerate(self.embs)] + [self.bn_num(num)], dim=1)
            return self.mlp(h)

    model = Tabular()
    init = start(model, init)
    rng = np.random.default_rng(118)
    n = 20
    cat = torch.tensor(np.stack([rng.integers(0, c, n) for c in cards], 1))
    num = torch.tensor(rng.standard_normal((n, 3)))
    y = torch.tensor(rng.integers(0, 2, n))
    ds = D.TensorDataset(cat, num, y)
    # the two libraries' generators draw differently: random_split's split is checked for its properties, and the
    # split trained on is drawn by numpy
    parts = D.random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(3))
    split_ok = [len(p) for p in parts] == [14, 6] and sorted(parts[0].indices + parts[1].indices) == list(range(n))
    perm = rng.permutation(n).tolist()
    train, valid = D.Subset(ds, perm[:14]), D.Subset(ds, perm[14:])
    loader = D.DataLoader(train, batch_size=4, shuffle=False, drop_last=True)
    shapes = [[tuple(t.shape) for t in batch] for batch in loader]
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    drop = model.mlp[3]
    drop.p = 0.0  # (masks are drawn differently by the two libraries: training is compared without them)
    losses = []
    for _ in range(2):
        for c, x, t in loader:
            loss = F.cross_entropy(model(c, x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
    drop.p = 0.3
    h = torch.ones(50, 8)
    dropped = drop(h)
    kept = bool(((dropped == 0) | torch.isclose(dropped, torch.full_like(dropped, 1 / 0.7))).all())
    model.eval()
    with torch.no_grad():
        vc, vx, vy = (torch.stack([valid[i][j] for i in range(len(valid))]) for j in range(3))
        eval_logits = model(vc, vx)
        same_twice = bool(torch.equal(model(vc, vx), eval_logits))
    return dict(init=init, split_ok=split_ok, shapes=shapes, losses=losses, grads=grads(model),
                params=list(model.parameters()), buffers=list(model.buffers()), logits=eval_logits,
                kept=kept, same_twice=same_twice, batches=len(loader))


def test_tabular_embeddings_random_split_loader(torch):
    theirs, _ = both(torch, tabular)
    assert theirs["kept"] and theirs["same_twice"] and theirs["batches"] == 3 and theirs["split_ok"]


# ---- truncated BPTT: a two-layer ReLU RNN or a projected LSTM, hidden state detached between chunks -----------
def tbptt(torch, init, cell):
    nn, F = torch.nn, torch.nn.functional
    vocab, d, h = 7, 5, 6

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            if cell == "rnn":
                self.rnn = nn.RNN(d, h, num_layers=2, nonlinearity="relu", batch_first=True)
            else:
                self.rnn = nn.LSTM(d, h, num_layers=2, proj_size=3, batch_first=True)
            self.head = nn.Linear(h if cell == "rnn" else 3, vocab)

        def forward(self, x, state=None):
            y, state = self.rnn(self.emb(x), state)
            return self.head(y), state

    model = LM()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.tensor(np.random.default_rng(119).integers(0, vocab, (2, 13)))
    state, losses, norms, states = None, [], [], []
    for i in range(0, 12, 4):
        if state is not None:  # keep the values, cut the graph
            state = state.detach() if cell == "rnn" else tuple(s.detach() for s in state)
        logits, state = model(data[:, i:i + 4], state)
        loss = F.cross_entropy(logits.reshape(-1, vocab), data[:, i + 1:i + 5].reshape(-1))
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, foreach=True))
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
        opt.step()
        losses.append(loss)
        states.append(state if cell == "rnn" else list(state))
    return dict(init=init, losses=losses, norms=norms, states=states, grads=grads(model),
                params=list(model.parameters()))


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_truncated_bptt_relu_rnn_projected_lstm(torch, cell):
    both(torch, tbptt, cell=cell)


# ---- distillation with a hint: a frozen BatchNorm teacher in eval under no_grad, temperature KL, feature MSE ----
def hint_distillation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    teacher = nn.Sequential(nn.Linear(6, 10), nn.BatchNorm1d(10), nn.ReLU(), nn.Linear(10, 4))
    student = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 4))
    regressor = nn.Linear(5, 10)  # the student's hidden layer mapped onto the teacher's
    model = nn.ModuleDict(dict(teacher=teacher, student=student, regressor=regressor))
    init = start(model, init)
    rng = np.random.default_rng(120)
    teacher.train()
    with torch.no_grad():  # a forward in train mode moves the teacher's running statistics only
        teacher(torch.tensor(rng.standard_normal((8, 6))))
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(list(student.parameters()) + list(regressor.parameters()), lr=0.02)
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    T, alpha = 3.0, 0.7
    x = torch.tensor(rng.standard_normal((8, 6)))
    y = torch.tensor(rng.integers(0, 4, 8))
    losses = []
    for _ in range(3):
        with torch.no_grad():
            t_hidden = teacher[:3](x)
            t_logits = teacher[3](t_hidden)
        s_hidden = student[:2](x)
        s_logits = student[2](s_hidden)
        soft = kl(F.log_softmax(s_logits / T, dim=-1), F.log_softmax(t_logits / T, dim=-1)) * T * T
        hint = F.mse_loss(regressor(s_hidden), t_hidden)
        loss = alpha * soft + (1 - alpha) * F.cross_entropy(s_logits, y) + 0.1 * hint
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    frozen = all(p.grad is None for p in teacher.parameters()) and not t_logits.requires_grad
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                buffers=list(model.buffers()), frozen=frozen)


def test_hint_distillation_frozen_batchnorm_teacher(torch):
    theirs, _ = both(torch, hint_distillation)
    assert theirs["frozen"]


# ---- supervised contrastive learning: cosine similarities by broadcasting, an eye mask, same-label positives ----
def supcon(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 4))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(121)
    x = torch.tensor(rng.standard_normal((6, 5)))
    labels = torch.tensor([0, 1, 0, 2, 1, 0])
    tau = 0.5
    losses, sims = [], []
    for _ in range(3):
        views = torch.cat([x + 0.1 * torch.tensor(rng.standard_normal((6, 5))) for _ in range(2)])
        z = model(views)
        sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=-1) / tau  # (2N, 2N)
        self_mask = torch.eye(2 * 6, dtype=torch.bool)
        sim = sim.masked_fill(self_mask, float("-inf"))
        lab = labels.repeat(2)
        positive = (lab[:, None] == lab[None, :]) & ~self_mask
        log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
        loss = -(log_prob.masked_fill(~positive, 0.0).sum(1) / positive.sum(1)).mean()
        zn = F.normalize(z, dim=1)  # SimCLR's NT-Xent on the same views: the other view is the one positive
        logits = (zn @ zn.T / tau).masked_fill(self_mask, -1e9)
        nt_xent = F.cross_entropy(logits, torch.arange(12).roll(6))
        opt.zero_grad()
        (loss + nt_xent).backward()
        opt.step()
        losses.append(torch.stack([loss, nt_xent]))
        sims.append(sim.masked_fill(self_mask, 0.0))
    return dict(init=init, losses=losses, sims=sims, grads=grads(model), params=list(model.parameters()),
                buffers=list(model.buffers()))


def test_supervised_contrastive_cosine_broadcast(torch):
    both(torch, supcon)
