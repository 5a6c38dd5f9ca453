"""Deep-learning scripts of still more kinds (self-supervised, recommender, tabular, forecasting, RL,
meta-learning, mixture of experts, cross-attention), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and
outputs must agree closely (float64 throughout; random draws by numpy)."""
import copy

import numpy as np
import pytest

import minigrad
from twins import agree, both, grads, numpy_state, start  # noqa: F401


# ---- SimCLR: NT-Xent over a (2N, 2N) similarity matrix ----------------------------------------------------
def simclr(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 8))
    init = start(model, init)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 6))
    views = [torch.tensor(x + 0.1 * rng.standard_normal(x.shape)) for _ in range(2)]
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    temperature, n = 0.5, 5
    losses, accs = [], []
    for step in range(3):
        z = F.normalize(torch.cat([model(v) for v in views], dim=0), dim=1)
        sim = z @ z.T / temperature
        if step % 2:
            sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), -9e15)
        else:
            sim = sim.clone()
            sim.fill_diagonal_(-9e15)
        pos = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        loss = F.cross_entropy(sim, pos)
        # the same loss by hand: -log of the positive's share of each row
        positives = sim[torch.arange(2 * n), pos]
        by_hand = (-positives + torch.logsumexp(sim, dim=-1)).mean()
        opt.zero_grad()
        (loss + 0 * by_hand).backward()
        opt.step()
        accs.append((sim.argmax(dim=1) == pos).float().mean())
        losses.append([loss.item(), by_hand])
    return dict(init=init, losses=losses, accs=accs, params=list(model.parameters()), grads=grads(model),
                buffers=list(model.buffers()))


def test_simclr_nt_xent(torch):
    both(torch, simclr)


# ---- MoCo: a momentum key encoder and a queue buffer --------------------------------------------------------
def moco(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class MoCo(nn.Module):
        def __init__(self, dim=4, K=12, m=0.9, T=0.2):
            super().__init__()
            self.K, self.m, self.T = K, m, T
            self.encoder_q = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, dim))
            self.encoder_k = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, dim))
            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data.copy_(param_q.data)
                param_k.requires_grad = False
            self.register_buffer("queue", torch.zeros(dim, K))
            self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

        @torch.no_grad()
        def _momentum_update_key_encoder(self):
            for param_q, param_k in zip(self.encoder_q.parameters(), self.encoder_k.parameters()):
                param_k.data.mul_(self.m).add_(param_q.data, alpha=1 - self.m)

        @torch.no_grad()
        def _dequeue_and_enqueue(self, keys):
            batch_size = keys.shape[0]
            ptr = int(self.queue_ptr)
            assert self.K % batch_size == 0
            self.queue[:, ptr:ptr + batch_size] = keys.T
            ptr = (ptr + batch_size) % self.K
            self.queue_ptr[0] = ptr

        def forward(self, im_q, im_k):
            q = F.normalize(self.encoder_q(im_q), dim=1)
            with torch.no_grad():
                self._momentum_update_key_encoder()
                k = F.normalize(self.encoder_k(im_k), dim=1)
            l_pos = torch.einsum("nc,nc->n", [q, k]).unsqueeze(-1)
            l_neg = torch.einsum("nc,ck->nk", [q, self.queue.clone().detach()])
            logits = torch.cat([l_pos, l_neg], dim=1) / self.T
            labels = torch.zeros(logits.shape[0], dtype=torch.long)
            self._dequeue_and_enqueue(k)
            return logits, labels

    model = MoCo()
    rng = np.random.default_rng(11)
    if init is None:
        model.queue.copy_(F.normalize(torch.tensor(rng.standard_normal((4, 12))), dim=0).float())
    init = start(model, init)
    rng = np.random.default_rng(12)
    opt = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.3, momentum=0.9)
    losses, ptrs = [], []
    for _ in range(4):
        x = rng.standard_normal((4, 6))
        im_q = torch.tensor(x + 0.1 * rng.standard_normal(x.shape))
        im_k = torch.tensor(x + 0.1 * rng.standard_normal(x.shape))
        logits, labels = model(im_q, im_k)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        ptrs.append(int(model.queue_ptr))
    return dict(init=init, losses=losses, ptrs=ptrs, logits=logits, queue=model.queue.clone(),
                params=list(model.parameters()), flags=[p.requires_grad for p in model.parameters()],
                state=list(model.state_dict().values()))


def test_moco_queue_and_momentum_encoder(torch):
    both(torch, moco)


# ---- BYOL: an online predictor and an EMA target under no_grad --------------------------------------------
def byol(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def mlp(i, h, o):
        return nn.Sequential(nn.Linear(i, h, bias=False), nn.BatchNorm1d(h), nn.ReLU(inplace=True), nn.Linear(h, o))

    class BYOL(nn.Module):
        def __init__(self):
            super().__init__()
            self.online = nn.Sequential(nn.Linear(6, 12), nn.GELU(), mlp(12, 16, 8))
            self.predictor = mlp(8, 16, 8)
            self.target = copy.deepcopy(self.online)
            for p in self.target.parameters():
                p.requires_grad_(False)

        @torch.no_grad()
        def update_target(self, tau):
            for p_t, p_o in zip(self.target.parameters(), self.online.parameters()):
                p_t.mul_(tau).add_((1 - tau) * p_o)
            for b_t, b_o in zip(self.target.buffers(), self.online.buffers()):
                b_t.copy_(b_o)

        def forward(self, v1, v2):
            def regression(p, z):
                return 2 - 2 * F.cosine_similarity(p, z.detach(), dim=-1)
            p1, p2 = self.predictor(self.online(v1)), self.predictor(self.online(v2))
            with torch.no_grad():
                z1, z2 = self.target(v1), self.target(v2)
            return (regression(p1, z2) + regression(p2, z1)).mean()

    model = BYOL()
    init = start(model, init)
    rng = np.random.default_rng(13)
    # (SGD, not Adam: the projector's last bias feeds the predictor's BatchNorm, so its gradient is rounding
    # noise that Adam would scale up to whole steps)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05, momentum=0.9)
    losses, taus = [], []
    for step in range(4):
        x = rng.standard_normal((6, 6))
        v1, v2 = (torch.tensor(x + 0.2 * rng.standard_normal(x.shape)) for _ in range(2))
        loss = model(v1, v2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tau = 1 - (1 - 0.9) * (np.cos(np.pi * step / 4) + 1) / 2
        model.update_target(tau)
        losses.append(loss)
        taus.append(tau)
    model.eval()
    with torch.no_grad():
        emb = model.online(torch.tensor(rng.standard_normal((3, 6))))
    return dict(init=init, losses=losses, emb=emb, state=list(model.state_dict().values()),
                grads=[p.grad for p in model.target.parameters()] + grads(model))


def test_byol_ema_target(torch):
    both(torch, byol)


# ---- matrix factorisation with BPR, negative sampling and top-k recommendations -----------------------------
def recommender(torch, init, sparse):
    nn, F = torch.nn, torch.nn.functional
    n_users, n_items, dim = 7, 11, 4

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.user = nn.Embedding(n_users, dim, sparse=sparse)
            self.item = nn.Embedding(n_items, dim, sparse=sparse)
            self.item_bias = nn.Embedding(n_items, 1, sparse=sparse)
            nn.init.normal_(self.user.weight, std=0.1)
            nn.init.normal_(self.item.weight, std=0.1)
            nn.init.zeros_(self.item_bias.weight)

        def forward(self, u, i):
            return (self.user(u) * self.item(i)).sum(-1) + self.item_bias(i).squeeze(-1)

    model = MF()
    init = start(model, init)
    rng = np.random.default_rng(14)
    seen = [sorted(rng.choice(n_items, 3, replace=False)) for _ in range(n_users)]
    pairs = np.array([(u, i) for u in range(n_users) for i in seen[u]])
    opt = (torch.optim.SparseAdam(model.parameters(), lr=0.05) if sparse
           else torch.optim.Adam(model.parameters(), lr=0.05))
    losses = []
    for _ in range(4):
        batch = pairs[rng.choice(len(pairs), 8, replace=False)]
        neg = rng.integers(0, n_items, 8)
        u, i, j = (torch.from_numpy(a) for a in (batch[:, 0], batch[:, 1], neg))
        pos_s, neg_s = model(u, i), model(u, j)
        loss = -F.logsigmoid(pos_s - neg_s).mean()
        if not sparse:  # weight decay on the looked-up rows only
            loss = loss + 1e-3 * (model.user(u).pow(2).sum() + model.item(i).pow(2).sum()
                                  + model.item(j).pow(2).sum()) / len(u)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        scores = model.user.weight @ model.item.weight.T + model.item_bias.weight.T
        seen_idx = torch.tensor(np.array(seen))
        scores.scatter_(1, seen_idx, float("-inf"))
        top_scores, top_items = torch.topk(scores, k=3, dim=1)
        hits = torch.zeros(n_users, n_items, dtype=torch.bool).scatter_(1, seen_idx, True)
    return dict(init=init, losses=losses, top_scores=top_scores, top_items=top_items, hits=hits,
                params=list(model.parameters()))


@pytest.mark.parametrize("sparse", [False, True])
def test_recommender_bpr_topk(torch, sparse):
    both(torch, recommender, sparse=sparse)


# ---- a tabular model: entity embeddings, BatchNorm, early stopping on a deep-copied state_dict ----------------
def tabular(torch, init):
    nn, F = torch.nn, torch.nn.functional
    cards = [4, 6, 3]

    class TabNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.embs = nn.ModuleList([nn.Embedding(c, min(50, (c + 1) // 2)) for c in cards])
            n_emb = sum(e.embedding_dim for e in self.embs)
            self.emb_drop = nn.Dropout(0.0)
            self.bn_cont = nn.BatchNorm1d(3)
            self.layers = nn.Sequential(nn.Linear(n_emb + 3, 16), nn.ReLU(), nn.BatchNorm1d(16), nn.Dropout(0.0),
                                        nn.Linear(16, 1))

        def forward(self, x_cat, x_cont):
            x = torch.cat([e(x_cat[:, i]) for i, e in enumerate(self.embs)], 1)
            x = torch.cat([self.emb_drop(x), self.bn_cont(x_cont)], 1)
            return self.layers(x).squeeze(1)

    model = TabNet()
    init = start(model, init)
    rng = np.random.default_rng(15)

    def data(n):
        cat = np.stack([rng.integers(0, c, n) for c in cards], 1)
        cont = rng.standard_normal((n, 3))
        y = cont[:, 0] - 0.5 * cat[:, 1] + 0.1 * rng.standard_normal(n)
        return torch.tensor(cat), torch.tensor(cont), torch.tensor(y)

    train, val = data(16), data(8)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-2)
    best, best_state, bad, history = float("inf"), None, 0, []
    for epoch in range(6):
        ran = epoch + 1
        model.train()
        loss = F.mse_loss(model(*train[:2]), train[2])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
        opt.step()
        model.eval()
        with torch.no_grad():
            val_loss = F.l1_loss(model(*val[:2]), val[2]).item()
        history.append((loss.item(), val_loss))
        if val_loss < best - 1e-4:
            best, best_state, bad = val_loss, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= 2:
                break
    last = numpy_state(model)
    model.load_state_dict(best_state)
    model.eval()
    with torch.no_grad():
        pred = model(*val[:2])
    changed = sorted(k for k, v in numpy_state(model).items() if not np.array_equal(v, last[k]))
    return dict(init=init, history=history, ran=ran, pred=pred, changed=changed,
                state=list(model.state_dict().values()))


def test_tabular_embeddings_early_stopping(torch):
    both(torch, tabular)


# ---- time-series forecasting: unfold windows, a Transformer encoder, autoregressive roll-out -----------------
def forecasting(torch, init):
    nn, F = torch.nn, torch.nn.functional
    T_in, horizon = 8, 3

    class Forecaster(nn.Module):
        def __init__(self, d=8):
            super().__init__()
            self.inp = nn.Linear(1, d)
            self.pos = nn.Embedding(T_in, d)
            layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                               norm_first=True, activation="gelu")
            self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
            self.head = nn.Linear(d, 1)

        def forward(self, x):  # (B, T, 1) -> (B,)
            h = self.inp(x) + self.pos(torch.arange(x.size(1)))[None]
            mask = nn.Transformer.generate_square_subsequent_mask(x.size(1), dtype=x.dtype)
            return self.head(self.encoder(h, mask=mask, is_causal=True)[:, -1]).squeeze(-1)

    model = Forecaster()
    init = start(model, init)
    t = np.arange(40, dtype=np.float64)
    series = torch.tensor(np.sin(t / 3) + 0.05 * np.random.default_rng(16).standard_normal(40))
    windows = series.unfold(0, T_in + 1, 2)  # (n, T_in + 1)
    x, y = windows[:, :T_in].unsqueeze(-1), windows[:, -1]
    mean, std = x.mean(), x.std()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=4)
    losses = []
    for _ in range(4):
        pred = model((x - mean) / std) * std + mean
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        ctx = x[-2:]
        outs = []
        for _ in range(horizon):
            nxt = model((ctx - mean) / std) * std + mean
            outs.append(nxt)
            ctx = torch.cat([ctx[:, 1:], nxt[:, None, None]], dim=1)
        forecast = torch.stack(outs, dim=1)
        target = series[-2 - horizon:].unfold(0, horizon, 1)[:2]
        mae = (forecast - target).abs().mean()
        mse = F.mse_loss(forecast, target)
    return dict(init=init, windows=windows, losses=losses, forecast=forecast, mae=mae, mse=mse,
                lr=sched.get_last_lr(), params=list(model.parameters()))


def test_forecasting_unfold_transformer_autoregressive(torch):
    both(torch, forecasting)


# ---- a sequence VAE with KL annealing -----------------------------------------------------------------------
def seq_vae(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self, V=9, d=8, z=3):
            super().__init__()
            self.emb = nn.Embedding(V, d)
            self.enc = nn.GRU(d, d, batch_first=True)
            self.to_mu, self.to_logvar = nn.Linear(d, z), nn.Linear(d, z)
            self.z_to_h = nn.Linear(z, d)
            self.dec = nn.GRU(d, d, batch_first=True)
            self.out = nn.Linear(d, V)

        def forward(self, x, eps):
            _, h = self.enc(self.emb(x))
            mu, logvar = self.to_mu(h[-1]), self.to_logvar(h[-1])
            z = mu + eps * torch.exp(0.5 * logvar)
            out, _ = self.dec(self.emb(x[:, :-1]), torch.tanh(self.z_to_h(z)).unsqueeze(0))
            return self.out(out), mu, logvar

    model = VAE()
    init = start(model, init)
    rng = np.random.default_rng(17)
    x = torch.tensor(rng.integers(0, 9, (5, 7)))
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9, centered=True)
    out = []
    for step in range(4):
        beta = min(1.0, step / 3) * 0.5
        logits, mu, logvar = model(x, torch.tensor(rng.standard_normal((5, 3))))
        rec = F.cross_entropy(logits.transpose(1, 2), x[:, 1:], reduction="sum") / x.size(0)
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / x.size(0)
        q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
        kl_d = torch.distributions.kl_divergence(q, torch.distributions.Normal(0.0, 1.0)).sum(-1).mean()
        loss = rec + beta * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append([rec, kl, kl_d, loss])
    return dict(init=init, out=out, params=list(model.parameters()))


def test_sequence_vae_kl_annealing(torch):
    both(torch, seq_vae)


# ---- an energy model trained by denoising score matching: gradients of gradients -------------------------------
def score_matching(torch, init):
    nn = torch.nn
    energy = nn.Sequential(nn.Linear(2, 16), nn.Softplus(), nn.Linear(16, 16), nn.SiLU(), nn.Linear(16, 1))
    init = start(energy, init)
    rng = np.random.default_rng(18)
    data = torch.tensor(rng.standard_normal((12, 2)) * np.array([1.0, 0.3]))
    opt = torch.optim.Adam(energy.parameters(), lr=1e-2)
    sigma, out = 0.3, []
    for _ in range(3):
        noise = torch.tensor(rng.standard_normal((12, 2)))
        x = (data + sigma * noise).requires_grad_(True)
        score = -torch.autograd.grad(energy(x).sum(), x, create_graph=True)[0]
        dsm = 0.5 * ((score + noise / sigma) ** 2).sum(-1).mean()
        # exact score matching's trace term by a second differentiation, one coordinate at a time
        y = data.clone().requires_grad_()
        s = -torch.autograd.grad(energy(y).sum(), y, create_graph=True)[0]
        trace = sum(torch.autograd.grad(s[:, i].sum(), y, create_graph=True)[0][:, i] for i in range(2))
        esm = (trace + 0.5 * s.pow(2).sum(-1)).mean()
        loss = dsm + 0.1 * esm
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append([dsm, esm, x.grad])
    # Langevin sampling from the learned energy
    x = torch.tensor(rng.standard_normal((4, 2)))
    for _ in range(3):
        x.requires_grad_(True)
        g = torch.autograd.grad(energy(x).sum(), x)[0]
        x = (x - 0.05 * g + 0.1 * torch.tensor(rng.standard_normal((4, 2)))).detach()
    return dict(init=init, out=out, samples=x, params=list(energy.parameters()))


def test_energy_score_matching(torch):
    both(torch, score_matching)


# ---- PPO with GAE: Categorical and Normal policies, clipped ratios and values, minibatch epochs -------------------
def ppo(torch, init, continuous):
    nn, D = torch.nn, torch.distributions
    obs_dim, n_act, T = 4, 3, 12

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(obs_dim, 16), nn.Tanh())
            self.pi = nn.Linear(16, 2 if continuous else n_act)
            self.v = nn.Linear(16, 1)
            self.log_std = nn.Parameter(torch.full((2,), -0.5))

        def dist(self, obs):
            h = self.body(obs)
            if continuous:
                return D.Normal(self.pi(h), self.log_std.exp().expand(obs.size(0), 2))
            return D.Categorical(logits=self.pi(h))

        def value(self, obs):
            return self.v(self.body(obs)).squeeze(-1)

    model = ActorCritic()
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=np.sqrt(2))
            nn.init.constant_(m.bias, 0.0)
    init = start(model, init)
    rng = np.random.default_rng(19 + continuous)
    obs = torch.tensor(rng.standard_normal((T, obs_dim)))
    rewards = torch.tensor(rng.standard_normal(T))
    dones = torch.tensor((rng.random(T) < 0.2).astype(np.float64))
    with torch.no_grad():
        dist = model.dist(obs)
        if continuous:
            actions = torch.tensor(rng.standard_normal((T, 2)))
            old_logp = dist.log_prob(actions).sum(-1)
        else:
            actions = torch.tensor(rng.integers(0, n_act, T))
            old_logp = dist.log_prob(actions)
        values = model.value(obs)
        next_value = torch.tensor(0.3, dtype=torch.float64)
    gamma, lam = 0.99, 0.95
    advantages = torch.zeros_like(rewards)
    last = 0.0
    for t in reversed(range(T)):
        nv = next_value if t == T - 1 else values[t + 1]
        delta = rewards[t] + gamma * nv * (1 - dones[t]) - values[t]
        last = delta + gamma * lam * (1 - dones[t]) * last
        advantages[t] = last
    returns = advantages + values
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, eps=1e-5)
    clip, stats = 0.2, []
    for _ in range(2):
        for idx in np.split(rng.permutation(T), 3):
            idx = torch.from_numpy(idx)
            dist = model.dist(obs[idx])
            logp = dist.log_prob(actions[idx])
            entropy = dist.entropy()
            if continuous:
                logp, entropy = logp.sum(-1), entropy.sum(-1)
            ratio = torch.exp(logp - old_logp[idx])
            adv = advantages[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
            v = model.value(obs[idx])
            v_clipped = values[idx] + torch.clamp(v - values[idx], -clip, clip)
            v_loss = 0.5 * torch.max((v - returns[idx]) ** 2, (v_clipped - returns[idx]) ** 2).mean()
            loss = pg + 0.5 * v_loss - 0.01 * entropy.mean()
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            approx_kl = ((ratio - 1) - (logp - old_logp[idx])).mean()
            clipfrac = ((ratio - 1.0).abs() > clip).float().mean()
            stats.append([pg, v_loss, entropy.mean(), approx_kl, clipfrac])
    return dict(init=init, advantages=advantages, returns=returns, stats=stats, params=list(model.parameters()))


@pytest.mark.parametrize("continuous", [False, True])
def test_ppo_gae(torch, continuous):
    both(torch, ppo, continuous=continuous)


# ---- MAML through functional_call, and Reptile by parameter interpolation -------------------------------------
def maml(torch, init):
    nn, F = torch.nn, torch.nn.functional
    from_func = torch.func
    model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
    init = start(model, init)
    rng = np.random.default_rng(21)

    def task():
        amp, phase = rng.uniform(0.5, 2), rng.uniform(0, np.pi)
        xs = rng.uniform(-3, 3, (10, 1))
        return torch.tensor(xs[:5]), torch.tensor(amp * np.sin(xs[:5] + phase)), \
            torch.tensor(xs[5:]), torch.tensor(amp * np.sin(xs[5:] + phase))

    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    inner_lr, out = 0.1, []
    for _ in range(2):
        meta_opt.zero_grad()
        total = 0.0
        for _ in range(2):
            xs, ys, xq, yq = task()
            params = dict(model.named_parameters())
            for _ in range(2):
                loss = F.mse_loss(from_func.functional_call(model, params, (xs,)), ys)
                gs = torch.autograd.grad(loss, list(params.values()), create_graph=True)
                params = {k: p - inner_lr * g for (k, p), g in zip(params.items(), gs)}
            q_loss = F.mse_loss(from_func.functional_call(model, params, xq), yq)
            (q_loss / 2).backward()
            total += q_loss.item()
        meta_opt.step()
        out.append(total)
    maml_grads = grads(model)
    # Reptile: train a copy on one task, then move the weights part of the way towards it
    for _ in range(2):
        xs, ys, _, _ = task()
        fast = copy.deepcopy(model)
        opt = torch.optim.SGD(fast.parameters(), lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            F.mse_loss(fast(xs), ys).backward()
            opt.step()
        with torch.no_grad():
            for p, q in zip(model.parameters(), fast.parameters()):
                p += 0.5 * (q - p)
    return dict(init=init, out=out, maml_grads=maml_grads, params=list(model.parameters()))


def test_maml_functional_call_and_reptile(torch):
    both(torch, maml)


# ---- a mixture-of-experts layer: top-k gating, index_add_ dispatch, a load-balancing loss ------------------------
def moe(torch, init):
    nn, F = torch.nn, torch.nn.functional
    E, k, d = 4, 2, 6

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(d, E, bias=False)
            self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, 12), nn.ReLU(), nn.Linear(12, d))
                                          for _ in range(E)])

        def forward(self, x):
            B, T, _ = x.shape
            flat = x.reshape(-1, d)
            logits = self.router(flat)
            probs = logits.softmax(dim=-1)
            weights, chosen = torch.topk(probs, k, dim=-1)
            weights = weights / weights.sum(dim=-1, keepdim=True)
            out = torch.zeros_like(flat)
            for e, expert in enumerate(self.experts):
                token, slot = torch.where(chosen == e)
                if token.numel() == 0:
                    continue
                y = expert(flat[token]) * weights[token, slot, None]
                out.index_add_(0, token, y)
            # the same combination by scatter_add over a dense (tokens, experts) weight table
            gate = torch.zeros_like(probs).scatter_add(1, chosen, weights)
            dense = torch.stack([ex(flat) for ex in self.experts], 1)
            out2 = (gate.unsqueeze(-1) * dense).sum(1)
            counts = F.one_hot(chosen, E).sum(dim=(0, 1)).to(x.dtype)
            load = counts / counts.sum()
            aux = E * (load * probs.mean(0)).sum()
            z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
            return out.view(B, T, d), out2.view(B, T, d), aux, z_loss, counts

    model = MoE()
    init = start(model, init)
    rng = np.random.default_rng(22)
    x, target = torch.tensor(rng.standard_normal((2, 5, d))), torch.tensor(rng.standard_normal((2, 5, d)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    out = []
    for _ in range(3):
        y, y2, aux, z_loss, counts = model(x)
        loss = F.smooth_l1_loss(y, target) + 0.01 * aux + 1e-3 * z_loss
        opt.zero_grad()
        loss.backward()
        g = grads(model)
        opt.step()
        out.append([loss, aux, counts, y2])
    return dict(init=init, out=out, y=y, grads=g, params=list(model.parameters()))


def test_mixture_of_experts_topk_dispatch(torch):
    both(torch, moe)


# ---- Perceiver-style cross-attention: latents attend to inputs of other widths ---------------------------------
def perceiver(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Perceiver(nn.Module):
        def __init__(self, n_lat=3, d=8):
            super().__init__()
            self.latents = nn.Parameter(torch.randn(n_lat, d))
            self.cross = nn.MultiheadAttention(d, 2, kdim=5, vdim=4, batch_first=True)
            self.self_attn = nn.MultiheadAttention(d, 2, batch_first=True, bias=False, add_bias_kv=True)
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, 2)

        def forward(self, keys, values, pad):
            lat = self.latents.expand(keys.size(0), -1, -1)
            h, w = self.cross(lat, keys, values, key_padding_mask=pad, need_weights=True,
                              average_attn_weights=False)
            h = self.ln(h + lat)
            h2, w2 = self.self_attn(h, h, h)
            return self.head((h + h2).mean(1)), w, w2

    model = Perceiver()
    init = start(model, init)
    rng = np.random.default_rng(23)
    keys, values = torch.tensor(rng.standard_normal((3, 6, 5))), torch.tensor(rng.standard_normal((3, 6, 4)))
    pad = torch.tensor(np.arange(6)[None, :] >= np.array([[6], [4], [2]]))
    y = torch.tensor(rng.integers(0, 2, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    out = []
    for _ in range(3):
        logits, w, w2 = model(keys, values, pad)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        g = grads(model)
        opt.step()
        out.append([loss, w, w2])
    names = [n for n, _ in model.named_parameters()]
    return dict(init=init, out=out, grads=g, names=names, params=list(model.parameters()))


def test_perceiver_cross_attention(torch):
    both(torch, perceiver)


# ---- what these scripts found: writes and expands as PyTorch ------------------------------------------------------
def _outcome(lib, fn):
    try:
        y = fn(lib)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return "ok", str(y.dtype).split(".")[-1], y.grad_fn is not None and type(y.grad_fn).__name__, y.tolist()


def _mask_seen(lib):  # a recommender masking seen items of an integer score table with -inf
    return lib.zeros(2, 4, dtype=lib.long).scatter_(1, lib.tensor([[0], [3]]), float("-inf"))


def _enqueue_wrong_width(lib):  # MoCo's enqueue of a batch that does not fit the queue's slice
    queue = lib.zeros(4, 12)
    queue[:, 10:14] = lib.ones(3, 4)
    return queue


def _fill_diagonal_nonleaf(lib):
    x = lib.ones(3, 4, requires_grad=True) * 2
    return x.fill_diagonal_(0.5)


def _fill_diagonal_leaf(lib):
    return lib.ones(3, 3, requires_grad=True).fill_diagonal_(0.5)


def _setitem_inf(lib):
    x = lib.zeros(3, dtype=lib.long)
    x[1] = -np.inf
    return x


def _setitem_list(lib):
    x = lib.zeros(3, 2, dtype=lib.long)
    x[0] = [1, 2]
    return x


def _setitem_array(lib):
    x = lib.zeros(3, 2)
    x[1] = np.array([1.0, 2.0])
    return x


@pytest.mark.parametrize("fn", [
    _mask_seen,
    lambda lib: lib.zeros(2, 4, dtype=lib.int32).scatter(1, lib.tensor([[0], [3]]), float("nan")),
    lambda lib: lib.zeros(2, 4, dtype=lib.long).scatter(1, lib.tensor([[0], [3]]), float("inf"), reduce="add"),
    lambda lib: lib.zeros(2, 4, dtype=lib.long).scatter(1, lib.tensor([[0], [3]]), 2.7),
    lambda lib: lib.zeros(3, 3, dtype=lib.long).fill_diagonal_(float("-inf")),
    lambda lib: lib.zeros(3, 3, dtype=lib.long).fill_diagonal_(2.7),
    lambda lib: lib.ones(3, 4).expand(2, 5),
    lambda lib: lib.ones(3).expand(-1, 4),
    _enqueue_wrong_width, _fill_diagonal_nonleaf, _fill_diagonal_leaf, _setitem_inf, _setitem_list, _setitem_array,
])
def test_writes_and_expands_as_pytorch(torch, fn):
    assert _outcome(minigrad, fn) == _outcome(torch, fn)


def test_fill_diagonal_gradient_as_pytorch(torch):
    def script(lib, init):
        a = lib.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
        x = a * 1
        x.fill_diagonal_(-2.0, wrap=True)
        (x * x).sum().backward()
        return dict(init=init, x=x, grad=a.grad, name=type(x.grad_fn).__name__)

    both(torch, script)
