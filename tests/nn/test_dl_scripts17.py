"""Deep-learning scripts of still more kinds (a one-head mixture density network split by torch.split / chunk, a
conditional VAE with one_hot labels and kl_divergence of Independent Normals, a policy gradient with a running-mean
baseline on a contextual bandit, an LSTMCell copy model with bmm attention and a coverage vector, a graph
isomorphism network pooled by scatter_add, a temporal convolutional autoencoder, optimizers beyond Adam side by
side, learning-rate schedulers beyond those tested, an ArcFace / CosFace head, a byte-level GRU language model),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial
weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- a mixture density network: one Linear head split into pi / mu / sigma, the NLL two ways --------------------
def mdn_split(torch, init, split):
    nn, F, D = torch.nn, torch.nn.functional, torch.distributions
    k = 3
    net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 3 * k))
    init = start(net, init)
    rng = np.random.default_rng(170)
    x = torch.tensor(rng.uniform(-1, 1, (12, 1)))
    y = torch.tensor(np.sin(3 * rng.uniform(-1, 1, 12)))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    losses, mixture = [], []
    for _ in range(3):
        out = net(x)
        if split:
            logit, mu, s = torch.split(out, k, dim=-1)
            sigma = F.softplus(s) + 1e-3
        else:
            logit, mu, s = out.chunk(3, dim=1)
            sigma = torch.exp(s)
        pi = F.softmax(logit, dim=-1)
        comp = D.Normal(mu, sigma).log_prob(y.unsqueeze(-1))
        nll = -torch.logsumexp(torch.log(pi) + comp, dim=-1).mean()
        mix = D.MixtureSameFamily(D.Categorical(probs=pi), D.Normal(mu, sigma))
        mixture.append(-mix.log_prob(y).mean())
        opt.zero_grad()
        nll.backward()
        opt.step()
        losses.append(nll.detach())
    return dict(init=init, losses=losses, mixture=mixture, grads=grads(net), params=list(net.parameters()))


@pytest.mark.parametrize("split", [True, False])
def test_mdn_single_head_split_mixture_same_family(torch, split):
    theirs, _ = both(torch, mdn_split, split=split)
    np.testing.assert_allclose([m.item() for m in theirs["mixture"]], [v.item() for v in theirs["losses"]])


# ---- a conditional VAE: one_hot labels concatenated, KL of Independent Normals, numpy noise for rsample ----------
def cvae(torch, init):
    nn, F, D = torch.nn, torch.nn.functional, torch.distributions
    n_cls, dx, dz = 3, 6, 2

    class CVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(dx + n_cls, 8)
            self.mu, self.logvar = nn.Linear(8, dz), nn.Linear(8, dz)
            self.dec = nn.Sequential(nn.Linear(dz + n_cls, 8), nn.ReLU(), nn.Linear(8, dx))

        def forward(self, x, c, eps):
            h = F.relu(self.enc(torch.cat([x, c], dim=1)))
            mu, logvar = self.mu(h), self.logvar(h)
            z = mu + torch.exp(0.5 * logvar) * eps
            return torch.sigmoid(self.dec(torch.cat([z, c], dim=1))), mu, logvar

    model = CVAE()
    init = start(model, init)
    rng = np.random.default_rng(171)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, kls = [], []
    for _ in range(3):
        x = torch.tensor(rng.uniform(0, 1, (5, dx)))
        c = F.one_hot(torch.tensor(rng.integers(0, n_cls, 5)), n_cls).to(torch.float64)
        eps = torch.tensor(rng.standard_normal((5, dz)))
        recon, mu, logvar = model(x, c, eps)
        q = D.Independent(D.Normal(mu, torch.exp(0.5 * logvar)), 1)
        p = D.Independent(D.Normal(torch.zeros_like(mu), torch.ones_like(mu)), 1)
        kl = D.kl_divergence(q, p)
        by_hand = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp(), dim=1)
        kls.append((kl, by_hand))
        loss = F.binary_cross_entropy(recon, x, reduction="sum") / 5 + kl.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        z = torch.tensor(rng.standard_normal((3, dz)))
        samples = torch.sigmoid(model.dec(torch.cat([z, torch.eye(n_cls, dtype=torch.float64)], dim=1)))
    return dict(init=init, losses=losses, kls=kls, samples=samples, grads=grads(model),
                params=list(model.parameters()))


def test_conditional_vae_independent_kl(torch):
    theirs, _ = both(torch, cvae)
    for kl, by_hand in theirs["kls"]:
        np.testing.assert_allclose(kl.detach().numpy(), by_hand.detach().numpy())


# ---- a policy gradient on a contextual bandit, advantage against a running-mean baseline buffer ------------------
def bandit_policy_gradient(torch, init):
    nn, D = torch.nn, torch.distributions

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(4, 3)
            self.register_buffer("baseline", torch.zeros((), dtype=torch.float64))

        def forward(self, ctx):
            return D.Categorical(logits=self.net(ctx))

    policy = Policy()
    init = start(policy, init)
    rng = np.random.default_rng(172)
    payoff = torch.tensor(rng.standard_normal((4, 3)))
    opt = torch.optim.Adam(policy.parameters(), lr=5e-2)
    log = []
    for _ in range(4):
        ctx = torch.tensor(rng.standard_normal((6, 4)))
        dist = policy(ctx)
        action = torch.tensor(rng.integers(0, 3, 6))
        reward = (ctx @ payoff).gather(1, action.unsqueeze(1)).squeeze(1)
        advantage = reward - policy.baseline
        loss = -(dist.log_prob(action) * advantage).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            policy.baseline.mul_(0.9).add_(0.1 * reward.mean())
        log.append((loss.item(), dist.entropy(), policy.baseline.clone()))
    return dict(init=init, log=log, state=dict(policy.state_dict()), grads=grads(policy))


def test_contextual_bandit_policy_gradient_baseline(torch):
    both(torch, bandit_policy_gradient)


# ---- a copy model: an LSTMCell decoder over bmm attention, coverage accumulated, padding masked with -inf --------
def lstmcell_copy(torch, init, inplace=False):
    nn, F = torch.nn, torch.nn.functional
    V, H, T = 7, 6, 5

    class Copy(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, H, padding_idx=0)
            self.enc = nn.GRU(H, H, batch_first=True)
            self.cell = nn.LSTMCell(2 * H, H)
            self.cov = nn.Linear(1, H, bias=False)
            self.out = nn.Linear(2 * H, V)

        def forward(self, src, lengths, tgt_in):
            B = src.size(0)
            enc, _ = self.enc(self.emb(src))
            pad = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)
            h = enc.new_zeros(B, H)
            c = enc.new_zeros(B, H)
            ctx = enc.new_zeros(B, H)
            coverage = enc.new_zeros(B, T)
            logits, cov_loss = [], 0
            for t in range(tgt_in.size(1)):
                h, c = self.cell(torch.cat([self.emb(tgt_in[:, t]), ctx], dim=1), (h, c))
                keys = enc + self.cov(coverage.unsqueeze(-1))
                scores = torch.bmm(keys, h.unsqueeze(2)).squeeze(2)
                scores = scores.masked_fill(pad, float("-inf"))
                attn = F.softmax(scores, dim=1)
                cov_loss = cov_loss + torch.minimum(attn, coverage).sum(1)
                if inplace:
                    coverage += attn  # (coverage is saved by cov's input and by minimum: autograd refuses this)
                else:
                    coverage = coverage + attn
                ctx = torch.bmm(attn.unsqueeze(1), enc).squeeze(1)
                logits.append(self.out(torch.cat([h, ctx], dim=1)))
            return torch.stack(logits, dim=1), cov_loss, coverage

    model = Copy()
    init = start(model, init)
    rng = np.random.default_rng(173)
    lengths = torch.tensor([5, 3, 4])
    src = torch.tensor(rng.integers(1, V, (3, T))) * (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    tgt_in = torch.cat([torch.ones(3, 1, dtype=torch.long), src[:, :-1]], dim=1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(2):
        logits, cov_loss, coverage = model(src, lengths, tgt_in)
        logp = F.log_softmax(logits, dim=-1).gather(2, src.unsqueeze(2)).squeeze(2)
        mask = (src != 0).to(logp.dtype)
        loss = -((logp * mask).sum(1) / lengths).mean() + 0.1 * (cov_loss / lengths).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, coverage=coverage, grads=grads(model), params=list(model.parameters()))


def test_lstmcell_bmm_attention_coverage_copy(torch):
    both(torch, lstmcell_copy)


def test_lstmcell_coverage_accumulated_in_place_refused_alike(torch):
    import minigrad

    init, texts = lstmcell_copy(torch, None)["init"], []
    for lib, start_from in ((torch, None), (minigrad, init)):
        with pytest.raises(RuntimeError) as e:
            lstmcell_copy(lib, start_from, inplace=True)
        texts.append(str(e.value).replace("torch.", "minigrad.").split(" Hint")[0])
    assert texts[1] == texts[0]


# ---- a graph isomorphism network: sum aggregation two ways, learnable eps, add pooling by scatter_add -----------
def gin(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n, d = 7, 4
    edges = np.array([[0, 1], [1, 0], [1, 2], [2, 1], [2, 0], [0, 2], [3, 4], [4, 3], [4, 5], [5, 4], [5, 6], [6, 5]])
    batch = torch.tensor([0, 0, 0, 1, 1, 1, 1])

    class GINLayer(nn.Module):
        def __init__(self, d_in, d_out, sparse):
            super().__init__()
            self.eps = nn.Parameter(torch.zeros(1, dtype=torch.float64))
            self.mlp = nn.Sequential(nn.Linear(d_in, d_out, bias=False), nn.BatchNorm1d(d_out), nn.ReLU(), nn.Linear(d_out, d_out))
            self.sparse = sparse

        def forward(self, x, adj, src, dst):
            if self.sparse:
                agg = torch.sparse.mm(adj, x)
            else:
                agg = torch.zeros_like(x).index_add_(0, dst, x[src])
            return self.mlp((1 + self.eps) * x + agg)

    class GIN(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([GINLayer(d, 8, True), GINLayer(8, 8, False)])
            self.head = nn.Linear(8, 2)

        def forward(self, x, adj, src, dst):
            for layer in self.layers:
                x = F.relu(layer(x, adj, src, dst))
            index = batch.unsqueeze(1).expand(-1, x.size(1))
            pooled = torch.zeros(2, x.size(1), dtype=x.dtype).scatter_add(0, index, x)
            return self.head(pooled)

    model = GIN()
    init = start(model, init)
    rng = np.random.default_rng(174)
    src, dst = torch.tensor(edges[:, 0]), torch.tensor(edges[:, 1])
    adj = torch.sparse_coo_tensor(torch.stack([dst, src]), torch.ones(len(edges), dtype=torch.float64), (n, n))
    x = torch.tensor(rng.standard_normal((n, d)))
    y = torch.tensor([0, 1])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x, adj, src, dst), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(x, adj, src, dst)
    return dict(init=init, losses=losses, logits=logits, grads=grads(model), state=dict(model.state_dict()))


def test_gin_sparse_mm_index_add_scatter_add_pool(torch):
    both(torch, gin)


# ---- a temporal convolutional autoencoder: dilated "same" convolutions, transposed ones, padding modes ---------
def tcn_autoencoder(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class TCNAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(2, 4, 3, dilation=2, padding="same")
            self.c2 = nn.Conv1d(4, 4, 3, stride=2)
            self.up = nn.Upsample(scale_factor=2, mode="linear", align_corners=False)
            self.t1 = nn.ConvTranspose1d(4, 4, 3, stride=2, padding=1, output_padding=1)
            self.c3 = nn.Conv1d(4, 2, 3)

        def forward(self, x):
            h = F.relu(self.c1(x))
            h = F.relu(self.c2(F.pad(h, (1, 0), mode="replicate")))
            h = self.up(h)
            h = F.relu(self.t1(h))
            return self.c3(F.pad(h, (1, 1), mode="reflect"))

    model = TCNAE()
    init = start(model, init)
    rng = np.random.default_rng(175)
    x = torch.tensor(rng.standard_normal((3, 2, 16)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        recon = model(x)
        loss = F.mse_loss(recon[..., :16], x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, recon=recon, grads=grads(model), params=list(model.parameters()))


def test_temporal_conv_autoencoder_padding_modes(torch):
    both(torch, tcn_autoencoder)


# ---- optimizers beyond Adam on a small regression, with param groups of different lr and weight_decay ----------
OPTIMIZERS = {
    "adamax": lambda o, g: o.Adamax(g, lr=0.05, betas=(0.8, 0.99)),
    "nadam": lambda o, g: o.NAdam(g, lr=0.05, momentum_decay=3e-3),
    "radam": lambda o, g: o.RAdam(g, lr=0.05, decoupled_weight_decay=True),
    "adadelta": lambda o, g: o.Adadelta(g, lr=1.0, rho=0.8),
    "rprop": lambda o, g: o.Rprop(g, lr=0.02, etas=(0.4, 1.3), step_sizes=(1e-4, 0.5)),
    "asgd": lambda o, g: o.ASGD(g, lr=0.05, t0=3),
    "sgd_nesterov": lambda o, g: o.SGD(g, lr=0.05, momentum=0.8, nesterov=True, dampening=0),
}


def optimizer_side_by_side(torch, init, name):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    init = start(model, init)
    rng = np.random.default_rng(176)
    x = torch.tensor(rng.standard_normal((10, 3)))
    y = torch.tensor(rng.standard_normal((10, 1)))
    groups = [{"params": model[0].parameters(), "weight_decay": 0.01},
              {"params": model[2].parameters(), "lr": 0.02, "weight_decay": 0.0}]
    opt = OPTIMIZERS[name](torch.optim, groups)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    sd = opt.state_dict()
    keys = ([sorted(s) for s in sd["state"].values()], [sorted(g) for g in sd["param_groups"]])
    return dict(init=init, losses=losses, params=list(model.parameters()), keys=keys,
                state=[{k: v for k, v in s.items() if k != "step"} for s in sd["state"].values()])


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizers_beyond_adam_param_groups(torch, name):
    both(torch, optimizer_side_by_side, name=name)


# ---- learning-rate schedulers beyond those tested, get_last_lr every step ----------------------------------------
SCHEDULERS = {
    "one_cycle_cos_three_phase": lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=10, three_phase=True,
                                                           anneal_strategy="cos"),
    "one_cycle_linear": lambda S, o: S.OneCycleLR(o, max_lr=[0.4, 0.2], epochs=2, steps_per_epoch=5,
                                                  anneal_strategy="linear", div_factor=10.0,
                                                  final_div_factor=100.0),
    "cyclic_triangular2": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2",
                                                  cycle_momentum=True, base_momentum=0.8, max_momentum=0.95),
    "cyclic_exp_range": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3,
                                                mode="exp_range", gamma=0.9),
    "polynomial": lambda S, o: S.PolynomialLR(o, total_iters=6, power=2.0),
    "exponential": lambda S, o: S.ExponentialLR(o, gamma=0.8),
    "multistep": lambda S, o: S.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.5),
    "constant": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=4),
    "linear": lambda S, o: S.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=5),
}


def scheduler_run(torch, init, name):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    init = start(model, init)
    rng = np.random.default_rng(177)
    x = torch.tensor(rng.standard_normal((6, 2)))
    y = torch.tensor(rng.standard_normal((6, 1)))
    opt = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[1].parameters(), "lr": 0.05}],
                          lr=0.1, momentum=0.9)
    sched = SCHEDULERS[name](torch.optim.lr_scheduler, opt)
    lrs, momenta = [], []
    for _ in range(9):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()
        lrs.append([float(v) for v in sched.get_last_lr()])
        momenta.append([g["momentum"] for g in opt.param_groups])
    return dict(init=init, lrs=lrs, momenta=momenta, params=list(model.parameters()),
                last_epoch=sched.last_epoch)


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_schedulers_beyond_tested_get_last_lr(torch, name):
    both(torch, scheduler_run, name=name)


# ---- an ArcFace / CosFace head: normalised weights and features, a margin on the target class, scale s ----------
def margin_head(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional
    n_cls, d, s, m = 4, 5, 8.0, 0.3

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Linear(6, d)
            self.weight = nn.Parameter(torch.randn(n_cls, d, dtype=torch.float64))

        def forward(self, x, label):
            cos = F.linear(F.normalize(self.backbone(x)), F.normalize(self.weight, dim=1)).clamp(-1 + 1e-7, 1 - 1e-7)
            if kind == "arc":
                theta = torch.acos(cos)
                target = torch.cos(theta + m)
                onehot = F.one_hot(label, n_cls).to(cos.dtype)
                return s * (onehot * target + (1 - onehot) * cos)
            margin = torch.zeros_like(cos).scatter_(1, label.unsqueeze(1), m)
            return s * (cos - margin)

    model = Head()
    init = start(model, init)
    rng = np.random.default_rng(178)
    x = torch.tensor(rng.standard_normal((8, 6)))
    label = torch.tensor(rng.integers(0, n_cls, 8))
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        logits = model(x, label)
        loss = criterion(logits, label)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, logits=logits, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("kind", ["arc", "cos"])
def test_arcface_cosface_margin_head(torch, kind):
    both(torch, margin_head, kind=kind)


# ---- a byte-level language model: bytes of a string, Embedding(256, d), a GRU, greedy generation under no_grad ---
def byte_lm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    text = "the cat sat on the mat; héllo"

    class ByteLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(256, 8)
            self.gru = nn.GRU(8, 12, batch_first=True)
            self.head = nn.Linear(12, 256)

        def forward(self, idx, h=None):
            out, h = self.gru(self.emb(idx), h)
            return self.head(out), h

    model = ByteLM()
    init = start(model, init)
    data = torch.tensor(list(text.encode()))
    x, y = data[:-1].unsqueeze(0), data[1:].unsqueeze(0)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        logits, _ = model(x)
        loss = F.cross_entropy(logits.view(-1, 256), y.view(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = data[:4].unsqueeze(0)
        logits, h = model(out)
        for _ in range(6):
            probs = F.softmax(logits[:, -1], dim=-1)
            nxt = torch.argmax(probs, dim=-1, keepdim=True)
            out = torch.cat([out, nxt], dim=1)
            logits, h = model(nxt, h)
    generated = bytes(out[0].tolist()).decode("utf-8", errors="replace")
    return dict(init=init, losses=losses, out=out, generated=generated, grads=grads(model),
                params=list(model.parameters()), bpb=math.log2(math.e) * losses[-1])


def test_byte_level_gru_lm_greedy_generation(torch):
    both(torch, byte_lm)
