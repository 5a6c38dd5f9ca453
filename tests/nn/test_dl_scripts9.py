"""Deep-learning scripts of more kinds again (a grouped-query attention decoder with SwiGLU and RMSNorm and its
KV-cached greedy generation, a CRNN for column-wise text recognition, mean-teacher semi-supervised learning, a
Wasserstein autoencoder with an MMD penalty, an Informer-like forecaster with a distilling layer, RotatE / TransE
knowledge-graph embeddings, Bayes-by-backprop, a user-written Optimizer subclass, samplers and collate functions),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial
weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import copy
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- a grouped-query attention decoder: RMSNorm, SwiGLU, k/v heads shared by groups of query heads ------------
def gqa_decoder(torch, d=8, heads=4, kv_heads=2, vocab=11, layers=2, ctx=12, mode="causal"):
    nn, F = torch.nn, torch.nn.functional
    hd = d // heads

    class RMSNorm(nn.Module):
        def __init__(self, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q = nn.Linear(d, d, bias=False)
            self.kv = nn.Linear(d, 2 * kv_heads * hd, bias=False)
            self.o = nn.Linear(d, d, bias=False)

        def forward(self, x, cache=None):
            b, t, _ = x.shape
            q = self.q(x).view(b, t, heads, hd).transpose(1, 2)
            k, v = (z.transpose(1, 2) for z in self.kv(x).view(b, t, 2, kv_heads, hd).unbind(2))
            if cache is not None:
                k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)
            s = k.shape[2]
            if mode == "gqa":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=cache is None, enable_gqa=True)
            else:
                kk, vv = (z.repeat_interleave(heads // kv_heads, dim=1) for z in (k, v))
                if mode == "causal":
                    y = F.scaled_dot_product_attention(q, kk, vv, is_causal=cache is None)
                else:  # a query at position i (of s) sees the keys up to i
                    mask = torch.ones(t, s, dtype=torch.bool).tril(diagonal=s - t)
                    y = F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask)
            return self.o(y.transpose(1, 2).reshape(b, t, d)), (k, v)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.attn, self.norm2 = RMSNorm(), Attention(), RMSNorm()
            self.w1, self.w3 = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
            self.w2 = nn.Linear(2 * d, d, bias=False)

        def forward(self, x, cache=None):
            a, cache = self.attn(self.norm1(x), cache)
            x = x + a
            h = self.norm2(x)
            return x + self.w2(F.silu(self.w1(h)) * self.w3(h)), cache

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.norm, self.head = RMSNorm(), nn.Linear(d, vocab, bias=False)

        def forward(self, idx, caches=None):
            past = 0 if caches is None else caches[0][0].shape[2]
            x = self.tok(idx) + self.pos(torch.arange(past, past + idx.shape[1]))
            new = []
            for i, block in enumerate(self.blocks):
                x, c = block(x, None if caches is None else caches[i])
                new.append(c)
            return self.head(self.norm(x)), new

    return Decoder()


def gqa_train(torch, init, mode):
    F = torch.nn.functional
    model = gqa_decoder(torch, mode=mode)
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    rng = np.random.default_rng(90)
    data = torch.tensor(rng.integers(0, 11, (3, 9)))
    losses = []
    for _ in range(3):
        logits, _ = model(data[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), data[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("mode", ["causal", "mask", "gqa"])
def test_gqa_decoder_swiglu_rmsnorm(torch, mode):
    both(torch, gqa_train, mode=mode)


def gqa_generate(torch, init, mode, ctxmgr):
    model = gqa_decoder(torch, mode=mode)
    init = start(model, init)
    model.eval()
    prompt = torch.tensor(np.random.default_rng(91).integers(0, 11, (2, 3)))
    manager = torch.no_grad if ctxmgr == "no_grad" else torch.inference_mode
    with manager():
        logits, caches = model(prompt)
        idx, steps = prompt, []
        for _ in range(5):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
            logits, caches = model(nxt, caches)
            steps.append(logits[:, -1])
        full, _ = model(idx)  # the cache changes nothing
    assert not full.requires_grad
    return dict(init=init, idx=idx, steps=torch.stack(steps, 1), full=full[:, 2:], cache_k=caches[-1][0],
                same=bool(torch.allclose(torch.stack(steps, 1), full[:, 3:], atol=1e-10)))


@pytest.mark.parametrize("mode,ctxmgr", [("causal", "no_grad"), ("mask", "inference_mode"),
                                         ("gqa", "inference_mode")])
def test_gqa_kv_cached_greedy_generation(torch, mode, ctxmgr):
    theirs, _ = both(torch, gqa_generate, mode=mode, ctxmgr=ctxmgr)
    assert theirs["same"]


# ---- a CRNN: convolutions, height pooled away, a bidirectional GRU over columns, per-column cross entropy -------
def crnn(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class CRNN(nn.Module):
        def __init__(self, classes=5):
            super().__init__()
            self.cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                     nn.MaxPool2d((2, 1)), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d((1, None)))
            self.rnn = nn.GRU(6, 5, batch_first=True, bidirectional=True)
            self.fc = nn.Linear(10, classes)

        def forward(self, x):
            f = self.cnn(x).squeeze(2).permute(0, 2, 1)  # (b, w, c): one step per column
            out, h = self.rnn(f)
            return self.fc(out), h

    model = CRNN()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(92)
    x = torch.tensor(rng.standard_normal((3, 1, 8, 10)))
    y = rng.integers(1, 5, (3, 10))
    y[:, 7:] = -100  # padding columns
    y[1, 5:] = -100
    y = torch.tensor(y)
    losses = []
    for step in range(3):
        logits, h = model(x)
        if step % 2 == 0:
            loss = F.cross_entropy(logits.reshape(-1, 5), y.reshape(-1), ignore_index=-100)
        else:
            loss = nn.CrossEntropyLoss(ignore_index=-100, label_smoothing=0.1)(logits.transpose(1, 2), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        logits, h = model(x)
        best = logits.argmax(-1)
        decoded = [torch.unique_consecutive(row).tolist() for row in best]
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), h=h,
                best=best, decoded=decoded, buffers=list(model.buffers()))


def test_crnn_column_cross_entropy(torch):
    both(torch, crnn)


# ---- mean teacher: an EMA of the student, a consistency loss on softmax outputs with a ramp-up weight ---------
def mean_teacher(torch, init, foreach):
    nn, F = torch.nn, torch.nn.functional
    student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    init = start(student, init)
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.2, momentum=0.5, nesterov=True)
    rng = np.random.default_rng(93)
    xl, yl = torch.tensor(rng.standard_normal((4, 4))), torch.tensor(rng.integers(0, 3, 4))
    xu = torch.tensor(rng.standard_normal((6, 4)))
    losses, alpha, steps = [], 0.9, 4
    for step in range(steps):
        ramp = math.exp(-5 * (1 - min(step / (steps - 1), 1.0)) ** 2)
        noise_s, noise_t = (torch.tensor(rng.standard_normal((6, 4)) * 0.1) for _ in range(2))
        with torch.no_grad():
            target = F.softmax(teacher(xu + noise_t), dim=-1)
        consistency = F.mse_loss(F.softmax(student(xu + noise_s), dim=-1), target)
        loss = F.cross_entropy(student(xl), yl) + 10.0 * ramp * consistency
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            tp, sp = list(teacher.parameters()), list(student.parameters())
            if foreach:
                torch._foreach_mul_(tp, alpha)
                torch._foreach_add_(tp, sp, alpha=1 - alpha)
            else:
                for t, s in zip(tp, sp):
                    t.mul_(alpha).add_(s, alpha=1 - alpha)
        losses.append(loss)
    return dict(init=init, losses=losses, grads=grads(student), student=list(student.parameters()),
                teacher=list(teacher.parameters()), teacher_grads=[p.grad for p in teacher.parameters()])


@pytest.mark.parametrize("foreach", [True, False])
def test_mean_teacher_ema_consistency(torch, foreach):
    both(torch, mean_teacher, foreach=foreach)


# ---- a Wasserstein autoencoder: an MMD penalty between codes and prior draws, kernels from cdist -----------------
def wae_mmd(torch, init, kernel):
    nn, F = torch.nn, torch.nn.functional
    enc = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
    dec = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 5))
    model = nn.ModuleDict(dict(enc=enc, dec=dec))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(94)
    x = torch.tensor(rng.standard_normal((6, 5)))

    def k(a, b):
        d2 = torch.cdist(a, b) ** 2
        if kernel == "rbf":
            return torch.exp(-d2 / (2 * 1.0 ** 2))
        return 2.0 / (2.0 + d2)  # inverse multiquadric

    def mmd(z, p):
        n = z.shape[0]
        off = ~torch.eye(n, dtype=torch.bool)
        kzz = k(z, z).masked_fill(~off, 0.0).sum() / (n * (n - 1))
        kpp = (k(p, p) * off).sum() / (n * (n - 1))
        return kzz + kpp - 2 * k(z, p).mean()

    losses = []
    for _ in range(3):
        z = enc(x)
        prior = torch.tensor(rng.standard_normal((6, 2)))
        penalty = mmd(z, prior)
        loss = F.mse_loss(dec(z), x, reduction="sum") / 6 + 5.0 * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(torch.stack([loss, penalty]))
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("kernel", ["rbf", "imq"])
def test_wasserstein_autoencoder_mmd(torch, kernel):
    both(torch, wae_mmd, kernel=kernel)


# ---- an Informer-like forecaster: full attention, learned positions, a causal conv distilling layer ------------
def informer(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Distil(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.conv, self.norm = nn.Conv1d(d, d, 3, bias=False), nn.BatchNorm1d(d)
            self.act, self.pool = nn.ELU(), nn.MaxPool1d(3, stride=2, padding=1)

        def forward(self, x):  # (b, l, d) -> (b, l/2, d)
            h = self.conv(F.pad(x.transpose(1, 2), (2, 0)))  # left padding only: causal
            return self.pool(self.act(self.norm(h))).transpose(1, 2)

    class Informer(nn.Module):
        def __init__(self, c=3, d=8, length=8, horizon=2):
            super().__init__()
            self.value = nn.Conv1d(c, d, 3, padding=1, padding_mode="circular")
            self.pos = nn.Embedding(length, d)
            self.attn1 = nn.MultiheadAttention(d, 2, batch_first=True)
            self.norm1 = nn.LayerNorm(d)
            self.distil = Distil(d)
            self.attn2 = nn.MultiheadAttention(d, 2, batch_first=True)
            self.norm2 = nn.LayerNorm(d)
            self.head = nn.Linear(d, horizon * c)
            self.horizon, self.c = horizon, c

        def forward(self, x):
            h = self.value(x.transpose(1, 2)).transpose(1, 2) + self.pos(torch.arange(x.shape[1]))
            h = self.norm1(h + self.attn1(h, h, h, need_weights=False)[0])
            h = self.distil(h)
            a, w = self.attn2(h, h, h)
            h = self.norm2(h + a)
            return self.head(h.mean(1)).view(-1, self.horizon, self.c), w

    model = Informer()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    rng = np.random.default_rng(95)
    series = np.cumsum(rng.standard_normal((4, 10, 3)), axis=1)
    x, y = torch.tensor(series[:, :8]), torch.tensor(series[:, 8:])
    losses = []
    for _ in range(3):
        pred, w = model(x)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), w=w,
                buffers=list(model.buffers()))


def test_informer_lite_distilling(torch):
    both(torch, informer)


# ---- knowledge-graph embeddings: RotatE in complex numbers, TransE, margin ranking with sampled negatives -------
def kg_embedding(torch, init, kind):
    nn = torch.nn
    E, R, k = 7, 3, 4

    class KG(nn.Module):
        def __init__(self):
            super().__init__()
            self.ent = nn.Embedding(E, 2 * k if kind == "rotate" else k)
            self.rel = nn.Embedding(R, k)

        def score(self, h, r, t):
            if kind == "rotate":
                hc, tc = (torch.view_as_complex(self.ent(i).view(-1, k, 2)) for i in (h, t))
                phase = self.rel(r)
                rot = torch.polar(torch.ones_like(phase), phase)  # |r| = 1: a rotation
                return -(hc * rot - tc).abs().sum(-1)
            return -torch.norm(self.ent(h) + self.rel(r) - self.ent(t), p=1, dim=-1)

    model = KG()
    init = start(model, init)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    criterion = nn.MarginRankingLoss(margin=1.0)
    rng = np.random.default_rng(96)
    triples = rng.integers(0, [E, R, E], (6, 3))
    h, r, t = (torch.tensor(triples[:, i]) for i in range(3))
    losses = []
    for _ in range(3):
        neg_t = (t + torch.tensor(rng.integers(1, E, 6))) % E  # a corrupted tail, never the true one
        pos, neg = model.score(h, r, t), model.score(h, r, neg_t)
        loss = criterion(pos, neg, torch.ones_like(pos))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():  # the rank of each true tail among all entities
        all_t = torch.arange(E)
        scores = torch.stack([model.score(h[i].repeat(E), r[i].repeat(E), all_t) for i in range(6)])
        ranks = (scores > scores.gather(1, t.unsqueeze(1))).sum(1) + 1
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), ranks=ranks)


@pytest.mark.parametrize("kind", ["rotate", "transe"])
def test_knowledge_graph_margin_ranking(torch, kind):
    both(torch, kg_embedding, kind=kind)


# ---- Bayes by backprop: weight means and rhos, reparametrized draws, a KL to the prior -------------------------
def bayes_by_backprop(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Normal, kl_divergence = torch.distributions.Normal, torch.distributions.kl_divergence
    rng = np.random.default_rng(97)

    class BayesLinear(nn.Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.w_mu = nn.Parameter(torch.tensor(rng.standard_normal((n_out, n_in)) * 0.3))
            self.w_rho = nn.Parameter(torch.full((n_out, n_in), -3.0, dtype=torch.float64))
            self.b_mu = nn.Parameter(torch.zeros(n_out, dtype=torch.float64))
            self.b_rho = nn.Parameter(torch.full((n_out,), -3.0, dtype=torch.float64))

        def forward(self, x, eps):
            w_sigma, b_sigma = F.softplus(self.w_rho), F.softplus(self.b_rho)
            w = self.w_mu + w_sigma * torch.tensor(eps[0])
            b = self.b_mu + b_sigma * torch.tensor(eps[1])
            prior = Normal(torch.zeros_like(w), torch.ones_like(w))
            self.kl = kl_divergence(Normal(self.w_mu, w_sigma), prior).sum() + \
                kl_divergence(Normal(self.b_mu, b_sigma), Normal(0.0, 1.0)).sum()
            return F.linear(x, w, b)

    model = nn.ModuleList([BayesLinear(3, 6), BayesLinear(6, 1)])
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.tensor(rng.standard_normal((8, 3)))
    y = torch.tensor(rng.standard_normal((8, 1)))
    noise = np.random.default_rng(98)

    def forward(x):
        h = x
        for i, layer in enumerate(model):
            shape = layer.w_mu.shape
            h = layer(h, (noise.standard_normal(tuple(shape)), noise.standard_normal(shape[0])))
            if i == 0:
                h = torch.relu(h)
        return h

    losses = []
    for _ in range(3):
        out = forward(x)
        nll = -Normal(out, 0.5).log_prob(y).sum()
        kl = sum(layer.kl for layer in model)
        loss = nll + kl / 8
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(torch.stack([loss, kl]))
    with torch.no_grad():
        draws = torch.stack([forward(x) for _ in range(4)])
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                mean=draws.mean(0), std=draws.std(0))


def test_bayes_by_backprop(torch):
    both(torch, bayes_by_backprop)


# ---- an optimizer the user writes: Lion and a decoupled-decay Adam as Optimizer subclasses, saved and reloaded --
def user_optimizer(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional

    class Lion(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0):
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                b1, b2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    m = state["exp_avg"]
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    p.add_(torch.sign(m * b1 + p.grad * (1 - b1)), alpha=-group["lr"])
                    m.lerp_(p.grad, 1 - b2)
            return loss

    class MyAdamW(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
            if lr < 0:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

        def step(self, closure=None):
            loss = closure() if closure is not None else None
            with torch.no_grad():
                for group in self.param_groups:
                    b1, b2 = group["betas"]
                    for p in filter(lambda q: q.grad is not None, group["params"]):
                        state = self.state[p]
                        if not state:
                            state["step"] = torch.tensor(0.0, dtype=torch.float64)
                            state["exp_avg"], state["exp_avg_sq"] = torch.zeros_like(p), torch.zeros_like(p)
                        state["step"] += 1
                        t = state["step"].item()
                        state["exp_avg"].mul_(b1).add_(p.grad, alpha=1 - b1)
                        state["exp_avg_sq"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                        denom = (state["exp_avg_sq"] / (1 - b2 ** t)).sqrt().add_(group["eps"])
                        p.mul_(1 - group["lr"] * group["weight_decay"])
                        p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / (1 - b1 ** t))
            return loss

    model = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 2))
    init = start(model, init)
    cls = Lion if kind == "lion" else MyAdamW
    groups = [dict(params=model[0].parameters(), lr=3e-3), dict(params=model[2].parameters())]
    opt = cls(groups, lr=1e-2, weight_decay=0.1)
    rng = np.random.default_rng(99)
    x, y = torch.tensor(rng.standard_normal((8, 4))), torch.tensor(rng.standard_normal((8, 2)))

    def closure():
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        return loss

    losses = [opt.step(closure) for _ in range(2)]
    saved = copy.deepcopy(opt.state_dict())
    model_saved = copy.deepcopy(model.state_dict())
    losses += [opt.step(closure) for _ in range(2)]
    after = list(model.parameters())
    model.load_state_dict(model_saved)  # resume from the checkpoint: the same two steps again
    opt2 = cls([dict(params=model[0].parameters(), lr=3e-3), dict(params=model[2].parameters())], lr=1e-2,
               weight_decay=0.1)
    opt2.load_state_dict(copy.deepcopy(saved))
    again = [opt2.step(lambda: (opt2.zero_grad(), F.mse_loss(model(x), y).backward()) and None) for _ in range(2)]
    assert again == [None, None]
    groups = [{k: v for k, v in g.items() if k != "params"} | {"params": g["params"]}
              for g in saved["param_groups"]]
    return dict(init=init, losses=losses, after=[p.detach().clone() for p in after],
                resumed=list(model.parameters()), state=[saved["state"][i] for i in sorted(saved["state"])],
                groups=groups, keys=sorted(saved["state"]), lrs=[g["lr"] for g in opt2.param_groups])


@pytest.mark.parametrize("kind", ["lion", "adamw"])
def test_user_optimizer_subclass_state_dict(torch, kind):
    theirs, _ = both(torch, user_optimizer, kind=kind)
    np.testing.assert_allclose(theirs["after"][0].numpy(), theirs["resumed"][0].detach().numpy())


# ---- samplers and collate functions: numpy-drawn orders, dict and tuple batches, pad_sequence, drop_last -------
def sampler_script(torch, init):
    nn, F = torch.nn, torch.nn.functional
    data = torch.utils.data
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    rng = np.random.default_rng(100)
    lengths = rng.integers(1, 5, 10)
    seqs = [rng.integers(1, 9, n) for n in lengths]
    labels = rng.integers(0, 2, 10)

    class Seqs(data.Dataset):
        def __len__(self):
            return len(seqs)

        def __getitem__(self, i):
            return dict(tokens=torch.tensor(seqs[i]), label=int(labels[i]), length=len(seqs[i]))

    class NumpyOrder(data.Sampler):  # a curriculum: short sequences first, ties in a numpy-drawn order
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __iter__(self):
            tie = np.random.default_rng(101).permutation(self.n)
            return iter(np.lexsort((tie, lengths)).tolist())

    def collate(batch):
        tokens = pad_sequence([b["tokens"] for b in batch], batch_first=True, padding_value=0)
        return tokens, torch.tensor([b["length"] for b in batch]), torch.tensor([b["label"] for b in batch])

    loader = data.DataLoader(Seqs(), batch_size=3, sampler=NumpyOrder(10), collate_fn=collate, drop_last=True)
    model = nn.ModuleDict(dict(emb=nn.Embedding(9, 4, padding_idx=0), fc=nn.Linear(4, 2)))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses, shapes = [], []
    for _ in range(2):
        for tokens, length, label in loader:
            shapes.append(tuple(tokens.shape))
            pooled = model["emb"](tokens).sum(1) / length.unsqueeze(1)
            loss = F.cross_entropy(model["fc"](pooled), label)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss)
    # default collation of dicts and tuples; a batch_sampler from numpy-drawn subsets
    plain = [dict(label=int(labels[i]), length=int(lengths[i])) for i in range(10)]
    default = data.DataLoader(plain, batch_size=4, sampler=[9, 0, 3, 5, 1])
    dict_batches = [{k: v for k, v in b.items() if k != "tokens"} for b in
                    data.DataLoader([dict(a=i, b=(float(i), torch.tensor([i, i + 1]))) for i in range(5)],
                                    batch_size=2)]
    tuple_batches = list(data.DataLoader(data.TensorDataset(torch.arange(6.0), torch.arange(6)), batch_size=4))
    wrs = data.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0, 3.0], num_samples=3, replacement=False)
    srs = data.SubsetRandomSampler([4, 7, 2])
    return dict(init=init, losses=losses, shapes=shapes, n_batches=len(loader), grads=grads(model),
                params=list(model.parameters()), default_len=len(default),
                tail=[b["label"] for b in default], dict_batches=dict_batches, tuple_batches=tuple_batches,
                wrs=sorted(wrs), srs=sorted(srs), lens=(len(wrs), len(srs)))


def test_sampler_collate_curriculum(torch):
    both(torch, sampler_script)
