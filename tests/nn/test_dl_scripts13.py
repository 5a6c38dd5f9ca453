"""Deep-learning scripts of more kinds (soft actor-critic with twin critics and soft-updated targets, A2C with n-step
returns, a DDIM-style v-prediction diffusion with classifier-free guidance, a multi-loss zoo under every reduction,
style transfer by Adam on the pixels with a total-variation prior, TRADES adversarial training, a normalization zoo
with FiLM conditioning, learning to rank with ListNet / RankNet / NDCG@k, GraphSAGE with sampled neighbours, an LSTM
forecaster rolled out autoregressively), written once against a `torch`-like module and run twice: on PyTorch, then
on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64
throughout; random draws by numpy)."""
import copy
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- soft actor-critic: tanh-squashed Normal policy, twin critics, soft-updated targets, a learned temperature --
def sac(torch, init):
    nn, F = torch.nn, torch.nn.functional
    dists = torch.distributions
    obs, act, hid, gamma, tau = 3, 2, 8, 0.9, 0.2

    def mlp(i, o):
        return nn.Sequential(nn.Linear(i, hid), nn.ReLU(), nn.Linear(hid, o))

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = mlp(obs, 2 * act)

        def dist(self, s):
            mu, log_std = self.net(s).chunk(2, dim=-1)
            return dists.Normal(mu, log_std.clamp(-5, 2).exp())

        def forward(self, s, eps):
            d = self.dist(s)
            u = d.loc + d.scale * eps  # rsample's reparametrization, with numpy's noise
            # log|d tanh(u)/du| = 2 (log 2 - u - softplus(-2u)), the stable form
            logp = d.log_prob(u).sum(-1) - (2 * (math.log(2.0) - u - F.softplus(-2 * u))).sum(-1)
            return torch.tanh(u), logp

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.q1, self.q2 = mlp(obs + act, 1), mlp(obs + act, 1)

        def forward(self, s, a):
            sa = torch.cat([s, a], dim=-1)
            return self.q1(sa).squeeze(-1), self.q2(sa).squeeze(-1)

    actor, critic = Actor(), Critic()
    init = start(nn.ModuleDict(dict(actor=actor, critic=critic)), init)
    target = copy.deepcopy(critic).requires_grad_(False)
    log_alpha = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    a_opt = torch.optim.Adam(actor.parameters(), lr=3e-3)
    c_opt = torch.optim.Adam(critic.parameters(), lr=3e-3)
    alpha_opt = torch.optim.Adam([log_alpha], lr=3e-2)
    rng = np.random.default_rng(130)
    n = 24
    buf = [rng.standard_normal((n, obs)), np.tanh(rng.standard_normal((n, act))), rng.standard_normal(n),
           rng.standard_normal((n, obs)), (rng.random(n) < 0.2).astype(np.float64)]
    c_losses, a_losses, alphas = [], [], []
    for step in range(4):
        idx = rng.integers(0, n, 6)
        s, a, r, s2, done = (torch.from_numpy(x[idx]) for x in buf)
        with torch.no_grad():
            a2, logp2 = actor(s2, torch.from_numpy(rng.standard_normal((6, act))))
            y = r + gamma * (1 - done) * (torch.min(*target(s2, a2)) - log_alpha.exp() * logp2)
        q1, q2 = critic(s, a)
        c_loss = F.mse_loss(q1, y) + F.mse_loss(q2, y)
        c_opt.zero_grad()
        c_loss.backward()
        c_opt.step()
        for p in critic.parameters():
            p.requires_grad = False
        a_new, logp = actor(s, torch.from_numpy(rng.standard_normal((6, act))))
        a_loss = (log_alpha.exp().detach() * logp - torch.min(*critic(s, a_new))).mean()
        a_opt.zero_grad()
        a_loss.backward()
        a_opt.step()
        for p in critic.parameters():
            p.requires_grad = True
        alpha_loss = -(log_alpha * (logp.detach() - act)).mean()
        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()
        with torch.no_grad():
            if step % 3 == 0:
                for p, tp in zip(critic.parameters(), target.parameters()):
                    tp.mul_(1 - tau).add_(p, alpha=tau)
            elif step % 3 == 1:
                for p, tp in zip(critic.parameters(), target.parameters()):
                    tp.lerp_(p, tau)
            else:
                torch._foreach_lerp_(list(target.parameters()), list(critic.parameters()), tau)
        c_losses.append(c_loss)
        a_losses.append(a_loss)
        alphas.append(log_alpha.exp().item())
    s = torch.from_numpy(buf[0][:4])
    d = actor.dist(s)
    squashed = dists.TransformedDistribution(d, [dists.transforms.TanhTransform(cache_size=1)])
    sample = d.rsample()
    a = torch.tanh(d.mean)
    return dict(init=init, c_losses=c_losses, a_losses=a_losses, alphas=alphas, log_alpha=log_alpha,
                params=list(actor.parameters()) + list(critic.parameters()), targets=list(target.parameters()),
                target_grad=[p.requires_grad for p in target.parameters()], squashed_logp=squashed.log_prob(a),
                sample=(tuple(sample.shape), sample.requires_grad, sample.grad_fn is not None))


def test_soft_actor_critic(torch):
    both(torch, sac)


# ---- A2C: a shared trunk, n-step bootstrapped returns by a reversed loop, entropy bonus, RMSprop, clipping ------
def a2c(torch, init):
    nn = torch.nn
    obs, n_act, steps, gamma = 4, 3, 5, 0.95

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(obs, 16), nn.Tanh())
            self.pi, self.v = nn.Linear(16, n_act), nn.Linear(16, 1)

        def forward(self, s):
            h = self.trunk(s)
            return torch.distributions.Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)

    model = ActorCritic()
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=7e-3, alpha=0.99, eps=1e-5)
    rng = np.random.default_rng(131)
    losses, norms, entropies = [], [], []
    for _ in range(3):
        states = torch.from_numpy(rng.standard_normal((steps + 1, 2, obs)))
        rewards = torch.from_numpy(rng.standard_normal((steps, 2)))
        masks = torch.from_numpy((rng.random((steps, 2)) > 0.15).astype(np.float64))
        dist, values = model(states[:-1])
        actions = torch.from_numpy(rng.integers(0, n_act, (steps, 2)))
        with torch.no_grad():
            ret = model(states[-1])[1]
        returns = torch.zeros_like(rewards)
        for t in reversed(range(steps)):
            ret = rewards[t] + gamma * ret * masks[t]
            returns[t] = ret
        adv = returns - values
        entropy = dist.entropy().mean()
        loss = -(dist.log_prob(actions) * adv.detach()).mean() + 0.5 * adv.pow(2).mean() - 0.01 * entropy
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 0.5))
        opt.step()
        losses.append(loss)
        entropies.append(entropy)
    return dict(init=init, losses=losses, norms=norms, entropies=entropies, params=list(model.parameters()),
                probs=model(states[0])[0].probs)


def test_a2c_n_step(torch):
    both(torch, a2c)


# ---- diffusion: a cosine schedule, v-prediction, classifier-free guidance by label dropout, DDIM sampling -------
def ddim(torch, init):
    nn, F = torch.nn, torch.nn.functional
    T, dim, classes, emb = 20, 2, 3, 8

    def timestep_embedding(t, d):
        half = d // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half)
        args = t[:, None].to(torch.float64) * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.label = nn.Embedding(classes + 1, emb)  # the last row: no label
            self.net = nn.Sequential(nn.Linear(dim + 2 * emb, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(),
                                     nn.Linear(32, dim))

        def forward(self, x, t, y):
            return self.net(torch.cat([x, timestep_embedding(t, emb), self.label(y)], dim=-1))

    s = 0.008
    steps = torch.linspace(0, T, T + 1, dtype=torch.float64)
    f = torch.cos((steps / T + s) / (1 + s) * math.pi / 2) ** 2
    betas = torch.clip(1 - f[1:] / f[:-1], 0.0001, 0.999)
    alphas_cumprod = torch.cumprod(1 - betas, dim=0)
    model = Denoiser()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    rng = np.random.default_rng(132)
    losses = []
    for _ in range(3):
        y = torch.from_numpy(rng.integers(0, classes, 16))
        x0 = torch.from_numpy(rng.standard_normal((16, dim)) * 0.3) + F.one_hot(y, dim + 1)[:, :dim].double()
        y = torch.where(torch.from_numpy(rng.random(16) < 0.2), torch.full_like(y, classes), y)
        t = torch.from_numpy(rng.integers(0, T, 16))
        noise = torch.from_numpy(rng.standard_normal((16, dim)))
        a = alphas_cumprod.gather(0, t).view(-1, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        v = a.sqrt() * noise - (1 - a).sqrt() * x0
        loss = F.mse_loss(model(xt, t, y), v)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    x = torch.from_numpy(rng.standard_normal((4, dim)))
    y = torch.tensor([0, 1, 2, 0])
    traj = []
    with torch.no_grad():
        for i in reversed(range(0, T, 5)):
            t = torch.full((4,), i, dtype=torch.long)
            v = torch.lerp(model(x, t, torch.full_like(y, classes)), model(x, t, y), 2.0)  # guidance scale 2
            a = alphas_cumprod[i]
            a_prev = alphas_cumprod[i - 5] if i >= 5 else torch.tensor(1.0, dtype=torch.float64)
            x0 = a.sqrt() * x - (1 - a).sqrt() * v
            eps = (1 - a).sqrt() * x + a.sqrt() * v
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
            traj.append(x.clone())
    return dict(init=init, losses=losses, params=list(model.parameters()), betas=betas, traj=traj,
                grad=x.requires_grad)


def test_ddim_v_prediction_guidance(torch):
    both(torch, ddim)


# ---- a loss zoo: embedding, ranking, margin, multi-label, Poisson, Gaussian and robust losses, every reduction ---
def loss_zoo(torch, init, reduction):
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 12), nn.Tanh(), nn.Linear(12, 12))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    rng = np.random.default_rng(133)
    x = torch.from_numpy(rng.standard_normal((6, 4)))
    sign = torch.from_numpy(rng.choice([-1.0, 1.0], 6))
    labels = torch.from_numpy((rng.random((6, 4)) < 0.4).astype(np.float64))
    cls = torch.from_numpy(rng.integers(0, 4, 6))
    counts = torch.from_numpy(rng.poisson(2.0, (6, 2)).astype(np.float64))
    target = torch.from_numpy(rng.standard_normal((6, 2)) * 2)
    weight = torch.tensor([1.0, 2.0, 0.5, 1.5], dtype=torch.float64)
    r = dict(reduction=reduction)
    crits = [nn.CosineEmbeddingLoss(margin=0.1, **r), nn.MarginRankingLoss(margin=0.3, **r),
             nn.HingeEmbeddingLoss(margin=1.5, **r), nn.MultiLabelSoftMarginLoss(weight=weight, **r),
             nn.MultiMarginLoss(p=1, margin=0.8, **r), nn.MultiMarginLoss(p=2, weight=weight, **r),
             nn.PoissonNLLLoss(log_input=True, full=True, **r), nn.PoissonNLLLoss(log_input=False, **r),
             nn.GaussianNLLLoss(full=True, eps=1e-4, **r), nn.SmoothL1Loss(beta=0.5, **r), nn.HuberLoss(delta=0.7, **r)]
    history = []
    for _ in range(3):
        out = model(x)
        a, b, logits, rate, var = out[:, :4], out[:, 4:8], out[:, 8:12], out[:, 8:10], out[:, 10:12]
        vals = [crits[0](a, b, sign), crits[1](a[:, 0], b[:, 0], sign), crits[2](a.norm(dim=1), sign),
                crits[3](logits, labels), crits[4](logits, cls), crits[5](logits, cls),
                crits[6](rate, counts), crits[7](rate.exp(), counts), crits[8](rate, target, var.exp()),
                crits[9](rate, target), crits[10](var, target)]
        loss = sum(v.sum() for v in vals)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(vals)
    return dict(init=init, history=history, grads=grads(model), params=list(model.parameters()),
                reprs=[repr(c) for c in crits])


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_loss_zoo(torch, reduction):
    both(torch, loss_zoo, reduction=reduction)


# ---- style transfer by Adam on the pixels: a frozen conv net walked layer by layer, Gram matrices, total variation --
def style_adam(torch, init):
    nn, F = torch.nn, torch.nn.functional
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(4, 6, 3, padding=1),
                        nn.ReLU())
    init = start(net, init)
    net.requires_grad_(False).eval()
    style_layers, content_layer = {1, 4}, 4

    def features(img):
        out = {}
        for i, layer in enumerate(net):
            img = layer(img)
            out[i] = img
        return out

    def gram(f):
        b, c, h, w = f.shape
        f = f.reshape(b, c, h * w)
        return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)

    rng = np.random.default_rng(134)
    content = torch.from_numpy(rng.random((1, 3, 8, 8)))
    style = torch.from_numpy(rng.random((1, 3, 8, 8)))
    with torch.no_grad():
        c_target = features(content)[content_layer]
        s_targets = {i: gram(f) for i, f in features(style).items() if i in style_layers}
    img = content.clone().requires_grad_(True)
    opt = torch.optim.Adam([img], lr=0.05)
    losses = []
    for _ in range(4):
        feats = features(img)
        c_loss = F.mse_loss(feats[content_layer], c_target)
        s_loss = sum(F.mse_loss(gram(feats[i]), s_targets[i]) for i in sorted(style_layers))
        tv = (img[..., 1:, :] - img[..., :-1, :]).abs().mean() + (img[..., 1:] - img[..., :-1]).abs().mean()
        loss = c_loss + 1e3 * s_loss + 0.1 * tv
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            img.clamp_(0, 1)
        losses.append([c_loss, s_loss, tv])
    return dict(init=init, losses=losses, img=img, grad=img.grad, net_grads=[p.grad is None for p in net.parameters()],
                training=net.training, leaf=img.is_leaf)


def test_style_transfer_adam(torch):
    both(torch, style_adam)


# ---- TRADES adversarial training: a PGD inner maximization of the KL under enable_grad, an eps-ball projection ---
def trades(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    rng = np.random.default_rng(135)
    eps, step_size, beta = 0.3, 0.1, 2.0
    losses, advs = [], []

    def attack(x):
        p_clean = F.softmax(model(x), dim=1)
        x_adv = x + 0.01 * torch.from_numpy(rng.standard_normal(tuple(x.shape)))
        for _ in range(3):
            x_adv.requires_grad_(True)
            with torch.enable_grad():
                kl = F.kl_div(F.log_softmax(model(x_adv), dim=1), p_clean, reduction="sum")
                g, = torch.autograd.grad(kl, [x_adv])
            x_adv = x_adv.detach() + step_size * torch.sign(g.detach())
            x_adv = torch.min(torch.max(x_adv, x - eps), x + eps).clamp(-2.0, 2.0)
        return x_adv.detach()

    for _ in range(3):
        x = torch.from_numpy(rng.standard_normal((8, 6)).clip(-2, 2))
        y = torch.from_numpy(rng.integers(0, 3, 8))
        model.eval()
        with torch.no_grad():
            x_adv = attack(x)
        model.train()
        logits = model(x)
        robust = F.kl_div(F.log_softmax(model(x_adv), dim=1), F.softmax(logits, dim=1), reduction="batchmean")
        loss = F.cross_entropy(logits, y) + beta * robust
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        advs.append(x_adv)
    return dict(init=init, losses=losses, advs=advs, grads=grads(model), params=list(model.parameters()),
                within=bool(((advs[-1] - x).abs() <= eps + 1e-12).all()))


def test_trades_adversarial_training(torch):
    both(torch, trades)


# ---- a normalization zoo: GroupNorm, tracked InstanceNorm, LocalResponseNorm, FiLM, up-sampling, pixel shuffles --
def norm_zoo(torch, init, mode):
    nn, F = torch.nn, torch.nn.functional

    class FiLM(nn.Module):
        def __init__(self, classes, channels):
            super().__init__()
            self.embed = nn.Embedding(classes, 2 * channels)

        def forward(self, x, y):
            gamma, beta = self.embed(y)[:, :, None, None].chunk(2, dim=1)
            return (1 + gamma) * x + beta

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.gn = nn.Conv2d(2, 8, 3, padding=1), nn.GroupNorm(4, 8)
            self.unshuffle, self.conv2 = nn.PixelUnshuffle(2), nn.Conv2d(32, 8, 1)
            self.inorm = nn.InstanceNorm2d(8, affine=True, track_running_stats=True, momentum=0.3)
            self.lrn, self.film = nn.LocalResponseNorm(3, alpha=0.1, beta=0.75, k=1.5), FiLM(3, 8)
            self.up = nn.Upsample(scale_factor=2, mode=mode, **({} if mode == "nearest" else dict(align_corners=False)))
            self.conv3, self.shuffle = nn.Conv2d(8, 8, 3, padding=1), nn.PixelShuffle(2)
            self.head = nn.Linear(2, 3)

        def forward(self, x, y):
            h = F.relu(self.gn(self.conv1(x)))
            h = self.inorm(self.conv2(self.unshuffle(h)))
            h = self.film(self.lrn(F.relu(h)), y)
            h = self.shuffle(self.conv3(self.up(h)))  # (B, 2, 16, 16)
            return self.head(h.mean(dim=(2, 3)))

    model = Net()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(136)
    losses = []
    for _ in range(3):
        x, y = torch.from_numpy(rng.standard_normal((3, 2, 8, 8))), torch.from_numpy(rng.integers(0, 3, 3))
        loss = F.cross_entropy(model(x, y), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out = model(x, y)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out,
                running=[model.inorm.running_mean, model.inorm.running_var], tracked=model.inorm.num_batches_tracked,
                reprs=[repr(m) for m in (model.gn, model.inorm, model.lrn, model.up, model.shuffle, model.unshuffle)])


@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_normalization_zoo(torch, mode):
    both(torch, norm_zoo, mode=mode)


# ---- learning to rank: ListNet's softmax cross entropy, RankNet over all pairs by broadcasting, NDCG@k -----------
def ranking(torch, init):
    nn, F = torch.nn, torch.nn.functional
    lists, items, feats, k = 4, 6, 5, 3
    # no output bias: both losses ignore a shift of every score, so its gradient would be rounding noise
    model = nn.Sequential(nn.Linear(feats, 10), nn.ReLU(), nn.Linear(10, 1, bias=False))
    init = start(model, init)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    rng = np.random.default_rng(137)
    x = torch.from_numpy(rng.standard_normal((lists, items, feats)))
    rel = torch.from_numpy(rng.integers(0, 4, (lists, items)).astype(np.float64))

    def ndcg_at_k(scores, rel, k):
        _, order = torch.sort(scores, dim=1, descending=True)
        gains = (2 ** rel.gather(1, order[:, :k]) - 1) / torch.log2(torch.arange(k, dtype=torch.float64) + 2)
        ideal_rel, _ = rel.topk(k, dim=1)
        ideal = ((2 ** ideal_rel - 1) / torch.log2(torch.arange(2, k + 2).double())).sum(1)
        return torch.where(ideal > 0, gains.sum(1) / ideal, torch.zeros_like(ideal))

    losses, ndcgs = [], []
    for _ in range(4):
        scores = model(x).squeeze(-1)
        listnet = -(F.softmax(rel, dim=1) * F.log_softmax(scores, dim=1)).sum(1).mean()
        diff = scores[:, :, None] - scores[:, None, :]
        s_ij = torch.sign(rel[:, :, None] - rel[:, None, :])
        pairs = s_ij != 0
        ranknet = F.binary_cross_entropy_with_logits(diff[pairs], (s_ij[pairs] + 1) / 2)
        loss = listnet + ranknet
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append([listnet, ranknet])
        with torch.no_grad():
            ndcgs.append(ndcg_at_k(model(x).squeeze(-1), rel, k))
    scores = model(x).squeeze(-1).detach()
    return dict(init=init, losses=losses, ndcgs=ndcgs, grads=grads(model), params=list(model.parameters()),
                argsort=torch.argsort(scores, dim=1, descending=True), top=scores.topk(k, dim=1, largest=False),
                npairs=int(pairs.sum()))


def test_learning_to_rank(torch):
    both(torch, ranking)


# ---- GraphSAGE: sampled neighbours from numpy, mean aggregation by sparse.mm and by scatter_reduce, masked loss ---
def graphsage(torch, init, aggregate):
    nn, F = torch.nn, torch.nn.functional
    n, feats, hid, classes, fanout = 12, 5, 8, 3, 3
    rng = np.random.default_rng(138)
    edges = np.unique(rng.integers(0, n, (2, 40)), axis=1)
    edges = edges[:, edges[0] != edges[1]]
    x = torch.from_numpy(rng.standard_normal((n, feats)))
    y = torch.from_numpy(rng.integers(0, classes, n))
    train_mask = torch.from_numpy(rng.random(n) < 0.6)

    def sample(edges):  # at most `fanout` incoming neighbours per node
        keep = []
        for v in range(n):
            incoming = np.flatnonzero(edges[1] == v)
            keep.extend(rng.permutation(incoming)[:fanout])
        return torch.from_numpy(edges[:, np.sort(np.array(keep, dtype=np.int64))])

    def mean_neighbours(h, ei):
        src, dst = ei
        if aggregate == "sparse":
            deg = torch.zeros(n, dtype=torch.float64).index_add_(0, dst, torch.ones(dst.shape[0], dtype=torch.float64))
            vals = 1.0 / deg.clamp(min=1)[dst]
            adj = torch.sparse_coo_tensor(torch.stack([dst, src]), vals, (n, n))
            return torch.sparse.mm(adj, h)
        out = torch.zeros(n, h.shape[1], dtype=h.dtype)
        return out.scatter_reduce(0, dst[:, None].expand(-1, h.shape[1]), h[src], reduce="mean",
                                  include_self=False)

    class SAGE(nn.Module):
        def __init__(self, i, o):
            super().__init__()
            self.self_lin, self.neigh_lin = nn.Linear(i, o), nn.Linear(i, o, bias=False)

        def forward(self, h, ei):
            return self.self_lin(h) + self.neigh_lin(mean_neighbours(h, ei))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2 = SAGE(feats, hid), SAGE(hid, classes)

        def forward(self, h, ei):
            h = F.normalize(F.relu(self.l1(h, ei)), dim=-1)
            return self.l2(F.dropout(h, 0.0, self.training), ei)

    model = Net()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
    losses = []
    for _ in range(3):
        model.train()
        out = model(x, sample(edges))
        loss = F.cross_entropy(out[train_mask], y[train_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        pred = model(x, torch.from_numpy(edges)).argmax(1)
    acc = (pred[~train_mask] == y[~train_mask]).double().mean()
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), pred=pred, acc=acc)


@pytest.mark.parametrize("aggregate", ["sparse", "scatter"])
def test_graphsage(torch, aggregate):
    both(torch, graphsage, aggregate=aggregate)


# ---- an LSTM forecaster: unfold windows, min-max scaling with keepdim, a multi-step head, Huber, a roll-out -------
def lstm_forecast(torch, init):
    nn = torch.nn
    window, horizon, hid = 8, 3, 6

    class Forecaster(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(2, hid, num_layers=2, batch_first=True)
            self.head = nn.Linear(hid, horizon * 2)

        def forward(self, x):
            out, (h, c) = self.lstm(x)
            return self.head(out[:, -1]).view(-1, horizon, 2)

    model = Forecaster()
    init = start(model, init)
    rng = np.random.default_rng(139)
    t = np.arange(60)
    series = torch.from_numpy(np.stack([np.sin(t / 4), np.cos(t / 7)], 1) + 0.1 * rng.standard_normal((60, 2)))
    lo, hi = series.min(dim=0, keepdim=True).values, series.max(dim=0, keepdim=True).values
    scaled = (series - lo) / (hi - lo)
    windows = scaled.unfold(0, window + horizon, 2).transpose(1, 2)  # (N, window + horizon, 2)
    inputs, targets = windows[:, :window], windows[:, window:]
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    crit = nn.HuberLoss(delta=0.1)
    losses = []
    for _ in range(3):
        idx = torch.from_numpy(rng.permutation(len(windows))[:8])
        loss = crit(model(inputs[idx]), targets[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    context = scaled[-window:].unsqueeze(0)
    rolled = []
    with torch.no_grad():
        for _ in range(3):
            step = model(context)[:, :1]
            rolled.append(step)
            context = torch.cat([context[:, 1:], step], dim=1)
    forecast = torch.cat(rolled, dim=1) * (hi - lo) + lo
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), windows=windows,
                forecast=forecast, grad=forecast.requires_grad)


def test_lstm_forecaster(torch):
    both(torch, lstm_forecast)
