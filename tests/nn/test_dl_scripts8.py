"""Deep-learning scripts of more kinds again (an early-exit classifier with mixture-of-depths routing, a Glow-style
flow, a neural process, cosine triplet mining, a conformer block, two-tower retrieval with logQ correction, a graph
VAE, a heat-equation PINN, partial-convolution inpainting, label-noise-robust co-teaching), written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients,
parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np

from twins import both, grads, start


# ---- early exits: a loss over every exit weighted by a schedule, confidence routing at inference ---------------
def early_exit(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class EarlyExitNet(nn.Module):
        def __init__(self, d=6, classes=3, depth=3):
            super().__init__()
            self.stem = nn.Linear(4, d)
            self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(d, d), nn.Tanh()) for _ in range(depth)])
            self.routers = nn.ModuleList([nn.Linear(d, 1) for _ in range(depth)])
            self.exits = nn.ModuleList([nn.Linear(d, classes) for _ in range(depth)])

        def forward(self, x):
            h, logits = self.stem(x), []
            for block, router, head in zip(self.blocks, self.routers, self.exits):
                gate = torch.sigmoid(router(h))                    # mixture of depths: a sample skips the
                keep = gate.squeeze(-1) >= gate.median()          # block unless its router ranks it high
                h = torch.where(keep.unsqueeze(-1), h + gate * block(h), h)
                logits.append(head(h))
            return logits

    model = EarlyExitNet()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(80)
    x = torch.tensor(rng.standard_normal((8, 4)))
    y = torch.tensor(rng.integers(0, 3, 8))
    base = torch.linspace(0.2, 1.0, 3, dtype=torch.float64)
    losses = []
    for step in range(4):
        ramp = min(1.0, (step + 1) / 3)  # early exits' weight grows over training
        w = torch.cat([base[:-1] * ramp, base[-1:]])
        per_exit = torch.stack([F.cross_entropy(logits, y) for logits in model(x)])
        loss = (w * per_exit).sum() / w.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        outs = model(x)
        pred = outs[-1].argmax(-1)
        exit_at = torch.full((8,), len(outs) - 1, dtype=torch.long)
        done = torch.zeros(8, dtype=torch.bool)
        for i, logits in enumerate(outs[:-1]):
            confidence, cls = F.softmax(logits, dim=-1).max(dim=-1)
            take = (confidence > 0.5) & ~done
            pred = torch.where(take, cls, pred)
            exit_at = torch.where(take, torch.full_like(exit_at, i), exit_at)
            done |= take
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), pred=pred,
                exit_at=exit_at, done=done)


def test_early_exit_mixture_of_depths(torch):
    both(torch, early_exit)


# ---- Glow: actnorm with data-dependent init, an invertible 1x1 conv (plain and LU), squeeze, coupling -------
def glow(torch, init, lu):
    nn, F = torch.nn, torch.nn.functional

    def squeeze(x):  # (b, c, h, w) -> (b, 4c, h/2, w/2)
        b, c, h, w = x.shape
        x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
        return x.reshape(b, c * 4, h // 2, w // 2)

    def unsqueeze(x):
        b, c, h, w = x.shape
        x = x.view(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3)
        return x.reshape(b, c // 4, h * 2, w * 2)

    class ActNorm(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
            self.log_scale = nn.Parameter(torch.zeros(1, c, 1, 1))
            self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

        def forward(self, x):
            if self.initialized.item() == 0:  # the first batch comes out with zero mean, unit variance
                with torch.no_grad():
                    self.loc.data.copy_(-x.mean(dim=(0, 2, 3), keepdim=True))
                    self.log_scale.data.copy_(-torch.log(x.std(dim=(0, 2, 3), keepdim=True) + 1e-6))
                    self.initialized.fill_(1)
            return (x + self.loc) * torch.exp(self.log_scale), x.shape[2] * x.shape[3] * self.log_scale.sum()

        def inverse(self, y):
            return y * torch.exp(-self.log_scale) - self.loc

    class InvConv(nn.Module):
        def __init__(self, c):
            super().__init__()
            w = torch.linalg.qr(torch.tensor(np.random.default_rng(c).standard_normal((c, c))))[0]
            if lu:
                LU, pivots = torch.linalg.lu_factor(w)
                p, lower, upper = torch.lu_unpack(LU, pivots)
                s = torch.diagonal(upper)
                self.register_buffer("p", p)
                self.register_buffer("sign_s", torch.sign(s))
                self.register_buffer("eye", torch.eye(c, dtype=w.dtype))
                self.lower = nn.Parameter(torch.tril(lower, -1))
                self.upper = nn.Parameter(torch.triu(upper, 1))
                self.log_s = nn.Parameter(torch.log(torch.abs(s)))
            else:
                self.weight = nn.Parameter(w)

        def matrix(self):
            if not lu:
                return self.weight, torch.linalg.slogdet(self.weight)[1]
            lower = torch.tril(self.lower, -1) + self.eye
            upper = torch.triu(self.upper, 1) + torch.diag(self.sign_s * torch.exp(self.log_s))
            return self.p @ lower @ upper, self.log_s.sum()

        def forward(self, x):
            w, logdet = self.matrix()
            return F.conv2d(x, w.view(*w.shape, 1, 1)), x.shape[2] * x.shape[3] * logdet

        def inverse(self, y):
            w = torch.linalg.inv(self.matrix()[0])
            return F.conv2d(y, w.view(*w.shape, 1, 1))

    class Coupling(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(c // 2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, c, 3, padding=1))

        def forward(self, x):
            xa, xb = x.chunk(2, dim=1)
            shift, raw = self.net(xa).chunk(2, dim=1)
            scale = torch.sigmoid(raw + 2.0)
            return torch.cat([xa, (xb + shift) * scale], dim=1), torch.log(scale).sum(dim=(1, 2, 3))

        def inverse(self, y):
            ya, yb = y.chunk(2, dim=1)
            shift, raw = self.net(ya).chunk(2, dim=1)
            return torch.cat([ya, yb / torch.sigmoid(raw + 2.0) - shift], dim=1)

    class Glow(nn.Module):
        def __init__(self, c=4):
            super().__init__()
            self.steps = nn.ModuleList([nn.ModuleList([ActNorm(c), InvConv(c), Coupling(c)]) for _ in range(2)])

        def forward(self, x):
            z, logdet = squeeze(x), torch.zeros(x.shape[0], dtype=x.dtype)
            for step in self.steps:
                for layer in step:
                    z, ld = layer(z)
                    logdet = logdet + ld
            return z, logdet

        def inverse(self, z):
            for step in reversed(self.steps):
                for layer in reversed(step):
                    z = layer.inverse(z)
            return unsqueeze(z)

    model = Glow()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(81)
    x = torch.tensor(rng.standard_normal((3, 1, 4, 4)) * 0.5 + 0.2)
    dims = x[0].numel()
    losses = []
    for _ in range(3):
        z, logdet = model(x)
        log_pz = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi)).sum(dim=(1, 2, 3))
        loss = -(log_pz + logdet).mean() / (dims * math.log(2.0))  # bits per dimension
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        z, logdet = model(x)
        back = model.inverse(z)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), z=z,
                logdet=logdet, back=back, error=(back - x).abs().max().item() < 1e-9)


def test_glow_actnorm_invconv(torch):
    both(torch, glow, lu=False)


def test_glow_lu_invconv(torch):
    both(torch, glow, lu=True)


# ---- a neural process: a latent path with Normal posteriors, reparametrized noise, a KL to the context's ------
def neural_process(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Normal, kl_divergence = torch.distributions.Normal, torch.distributions.kl_divergence

    class NeuralProcess(nn.Module):
        def __init__(self, h=8, z=3):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(2, h), nn.ReLU(), nn.Linear(h, h))
            self.latent = nn.Linear(h, 2 * z)
            self.decoder = nn.Sequential(nn.Linear(1 + z, h), nn.ReLU(), nn.Linear(h, 2))

        def posterior(self, x, y):  # the mean of the points' codes: order does not matter
            r = self.encoder(torch.cat([x, y], dim=-1)).mean(dim=1)
            mu, raw = self.latent(r).chunk(2, dim=-1)
            return Normal(mu, 0.1 + 0.9 * torch.sigmoid(raw))

        def decode(self, x, z):
            z = z.unsqueeze(1).expand(-1, x.shape[1], -1)
            mu, raw = self.decoder(torch.cat([x, z], dim=-1)).chunk(2, dim=-1)
            return Normal(mu, 0.1 + 0.9 * F.softplus(raw))

    model = NeuralProcess()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(82)
    xs = rng.uniform(-2, 2, (4, 9, 1))
    ys = np.sin(xs * rng.uniform(0.5, 1.5, (4, 1, 1))) + 0.05 * rng.standard_normal(xs.shape)
    x, y = torch.tensor(xs), torch.tensor(ys)
    xc, yc = x[:, :4], y[:, :4]
    losses, kls = [], []
    for _ in range(3):
        q_target, q_context = model.posterior(x, y), model.posterior(xc, yc)
        eps = torch.tensor(rng.standard_normal(tuple(q_target.loc.shape)))
        z = q_target.loc + q_target.scale * eps  # rsample's reparametrization, with numpy's noise
        nll = -model.decode(x, z).log_prob(y).sum(dim=(1, 2)).mean()
        kl = kl_divergence(q_target, q_context).sum(-1).mean()
        loss = nll + kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        kls.append(kl)
    q = model.posterior(xc, yc)
    sample = q.rsample((5,))
    return dict(init=init, losses=losses, kls=kls, grads=grads(model), params=list(model.parameters()),
                shape=tuple(sample.shape), needs_grad=sample.requires_grad, entropy=q.entropy(),
                log_prob=q.log_prob(q.mean), stddev=q.stddev)


def test_neural_process(torch):
    both(torch, neural_process)


# ---- metric learning: a cosine-distance triplet loss, batch-hard mining with cdist and a masked topk ---------
def triplet_mining(torch, init):
    nn, F = torch.nn, torch.nn.functional

    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.TripletMarginWithDistanceLoss(
        distance_function=lambda a, b: 1.0 - F.cosine_similarity(a, b), margin=0.3)
    rng = np.random.default_rng(83)
    labels = torch.tensor(np.repeat(np.arange(3), 4))
    x = torch.tensor(rng.standard_normal((12, 5)) + labels.numpy()[:, None])
    n = len(labels)
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    positive = same & ~torch.eye(n, dtype=torch.bool)
    losses, picks = [], []
    for _ in range(3):
        e = model(x)
        with torch.no_grad():
            d = torch.cdist(e, e)
            hardest_positive = d.masked_fill(~positive, float("-inf")).argmax(dim=1)
            close_negatives = d.masked_fill(same, float("inf")).topk(2, dim=1, largest=False).indices
            choice = torch.tensor(rng.integers(0, 2, n))  # one of the two closest negatives
            hard_negative = close_negatives.gather(1, choice.unsqueeze(1)).squeeze(1)
        loss = criterion(e, e[hardest_positive], e[hard_negative])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        picks.append((hardest_positive, hard_negative))
    with torch.no_grad():
        e = F.normalize(model(x), dim=1)
        d = torch.cdist(e, e).fill_diagonal_(float("inf"))
        nearest = d.argmin(dim=1)
        recall_at_1 = (labels[nearest] == labels).double().mean()
    per_triplet = nn.TripletMarginWithDistanceLoss(reduction="none", swap=True)(e, e[nearest], e.flip(0))
    return dict(init=init, losses=losses, picks=picks, grads=grads(model), params=list(model.parameters()),
                recall=recall_at_1, per_triplet=per_triplet)


def test_triplet_cosine_hard_mining(torch):
    both(torch, triplet_mining)


# ---- a conformer block: macaron feed-forward halves, relative sinusoidal attention, a GLU depthwise conv -------
def conformer(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def sinusoids(length, d):  # rows for the relative distances length-1 ... -(length-1)
        pos = torch.arange(length - 1, -length, -1, dtype=torch.float64).unsqueeze(1)
        freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
        table = torch.zeros(2 * length - 1, d, dtype=torch.float64)
        table[:, 0::2] = torch.sin(pos * freq)
        table[:, 1::2] = torch.cos(pos * freq)
        return table

    class FeedForward(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.net = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.SiLU(), nn.Dropout(0.0),
                                     nn.Linear(2 * d, d))

        def forward(self, x):
            return self.net(x)

    class RelativeAttention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads, self.dk = heads, d // heads
            self.norm = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.pos = nn.Linear(d, d, bias=False)
            self.u = nn.Parameter(torch.zeros(heads, self.dk))
            self.v = nn.Parameter(torch.zeros(heads, self.dk))
            self.out = nn.Linear(d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm(x)).view(b, t, 3, self.heads, self.dk).unbind(2)
            r = self.pos(sinusoids(t, d)).view(2 * t - 1, self.heads, self.dk)
            rel = torch.arange(t).unsqueeze(1) - torch.arange(t).unsqueeze(0)   # i - j
            r = r[(t - 1) - rel]                                               # (t, t, heads, dk)
            content = torch.einsum("bihd,bjhd->bhij", q + self.u, k)
            position = torch.einsum("bihd,ijhd->bhij", q + self.v, r)
            attn = ((content + position) / math.sqrt(self.dk)).softmax(dim=-1)
            return self.out(torch.einsum("bhij,bjhd->bihd", attn, v).reshape(b, t, d))

    class ConvModule(nn.Module):
        def __init__(self, d, kernel=3):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.pointwise_in = nn.Conv1d(d, 2 * d, 1)
            self.depthwise = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d, bias=False)  # BatchNorm recentres
            self.bn = nn.BatchNorm1d(d)
            self.pointwise_out = nn.Conv1d(d, d, 1)

        def forward(self, x):
            y = self.norm(x).transpose(1, 2)
            y = F.glu(self.pointwise_in(y), dim=1)
            y = F.silu(self.bn(self.depthwise(y)))
            return self.pointwise_out(y).transpose(1, 2)

    class ConformerBlock(nn.Module):
        def __init__(self, d=8, heads=2):
            super().__init__()
            self.ff1, self.ff2 = FeedForward(d), FeedForward(d)
            self.attn = RelativeAttention(d, heads)
            self.conv = ConvModule(d)
            self.norm = nn.LayerNorm(d)

        def forward(self, x):
            x = x + 0.5 * self.ff1(x)
            x = x + self.attn(x)
            x = x + self.conv(x)
            x = x + 0.5 * self.ff2(x)
            return self.norm(x)

    model = ConformerBlock()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01)
    rng = np.random.default_rng(84)
    x = torch.tensor(rng.standard_normal((2, 5, 8)))
    target = torch.tensor(rng.standard_normal((2, 5, 8)))
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out = model(x)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out,
                running=[model.conv.bn.running_mean, model.conv.bn.running_var],
                batches=model.conv.bn.num_batches_tracked)


def test_conformer_block(torch):
    both(torch, conformer)


# ---- two-tower retrieval: in-batch negatives with a logQ correction, recall@k of a topk over the catalogue ----
def two_tower(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Tower(nn.Module):
        def __init__(self, count, d=6):
            super().__init__()
            self.embed = nn.Embedding(count, d)
            self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

        def forward(self, ids):
            return F.normalize(self.mlp(self.embed(ids)), dim=-1)

    class TwoTower(nn.Module):
        def __init__(self, users=10, items=15):
            super().__init__()
            self.users, self.items = Tower(users), Tower(items)

    model = TwoTower()
    init = start(model, init)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    rng = np.random.default_rng(85)
    popularity = rng.dirichlet(np.ones(15) * 0.5)
    liked = rng.choice(15, size=10, p=popularity)                    # each user's one relevant item
    log_q = torch.log(torch.tensor(popularity))                      # the chance a batch holds the item
    temperature = 0.2
    losses = []
    for _ in range(4):
        u = torch.tensor(rng.choice(10, size=6, replace=False))
        i = torch.tensor(liked)[u]
        logits = model.users(u) @ model.items(i).T / temperature - log_q[i].unsqueeze(0)
        # a popular item appears as the same column twice: count only the first as the positive
        loss = F.cross_entropy(logits, torch.arange(len(u)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        scores = model.users(torch.arange(10)) @ model.items(torch.arange(15)).T
        top = torch.topk(scores, k=3, dim=1)
        hits = (top.indices == torch.tensor(liked).unsqueeze(1)).any(dim=1)
        recall = hits.float().mean()
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                top=top.values, indices=top.indices, recall=recall)


def test_two_tower_logq_retrieval(torch):
    both(torch, two_tower)


# ---- a graph VAE: a GCN encoder, an inner-product decoder, weighted BCE over positives and sampled negatives --
def graph_vae(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class GraphVAE(nn.Module):
        def __init__(self, features=4, hidden=6, latent=3):
            super().__init__()
            self.hidden = nn.Linear(features, hidden)
            self.mu = nn.Linear(hidden, latent)
            self.log_std = nn.Linear(hidden, latent)

        def forward(self, x, a_hat, eps):
            h = F.relu(a_hat @ self.hidden(x))
            mu, log_std = a_hat @ self.mu(h), a_hat @ self.log_std(h)
            return mu + eps * torch.exp(log_std), mu, log_std

    model = GraphVAE()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    rng = np.random.default_rng(86)
    n = 7
    upper = np.triu(rng.random((n, n)) < 0.3, 1)
    adj = torch.tensor((upper | upper.T).astype(np.float64))
    a = adj + torch.eye(n, dtype=torch.float64)
    d = a.sum(1).pow(-0.5)
    a_hat = d.unsqueeze(1) * a * d.unsqueeze(0)
    x = torch.tensor(rng.standard_normal((n, 4)))
    pairs = torch.triu_indices(n, n, offset=1)
    is_edge = adj[pairs[0], pairs[1]] > 0
    pos = pairs[:, is_edge]
    non_edges = pairs[:, ~is_edge]
    pos_weight = torch.tensor([float(non_edges.shape[1]) / pos.shape[1]], dtype=torch.float64)
    losses = []
    for _ in range(4):
        neg = non_edges[:, torch.tensor(rng.choice(non_edges.shape[1], size=pos.shape[1]))]
        z, mu, log_std = model(x, a_hat, torch.tensor(rng.standard_normal((n, 3))))
        edges = torch.cat([pos, neg], dim=1)
        logits = (z[edges[0]] * z[edges[1]]).sum(-1)
        labels = torch.cat([torch.ones(pos.shape[1]), torch.zeros(neg.shape[1])]).to(logits.dtype)
        recon = F.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight)
        kl = -0.5 / n * torch.mean(torch.sum(1 + 2 * log_std - mu ** 2 - torch.exp(log_std) ** 2, dim=1))
        loss = recon + kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        _, mu, _ = model(x, a_hat, torch.zeros(n, 3, dtype=torch.float64))
        probs = torch.sigmoid(mu @ mu.T)[pairs[0], pairs[1]]
        accuracy = ((probs > 0.5) == is_edge).float().mean()
        full = nn.BCEWithLogitsLoss(pos_weight=pos_weight)((mu @ mu.T)[pairs[0], pairs[1]], is_edge.double())
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), probs=probs,
                accuracy=accuracy, full=full)


def test_graph_vae_link_prediction(torch):
    both(torch, graph_vae)


# ---- a PINN for u_t = alpha u_xx: derivatives by autograd.grad with create_graph, LBFGS with strong Wolfe -----
def pinn(torch, init):
    nn = torch.nn

    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    init = start(model, init)
    opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=4, history_size=5, line_search_fn="strong_wolfe")
    rng = np.random.default_rng(87)
    alpha = 0.1
    x = torch.tensor(rng.random((12, 1)), requires_grad=True)
    t = torch.tensor(rng.random((12, 1)), requires_grad=True)
    x0 = torch.tensor(rng.random((6, 1)))
    tb = torch.tensor(rng.random((4, 1)))

    def residual():
        u = model(torch.cat([x, t], dim=1))
        u_x, u_t = torch.autograd.grad(u, (x, t), grad_outputs=torch.ones_like(u), create_graph=True)
        u_xx = torch.autograd.grad(u_x.sum(), x, create_graph=True)[0]
        return u_t - alpha * u_xx

    def closure():
        opt.zero_grad()
        initial = model(torch.cat([x0, torch.zeros_like(x0)], dim=1)) - torch.sin(math.pi * x0)
        edges = model(torch.cat([torch.cat([torch.zeros_like(tb), torch.ones_like(tb)]), tb.repeat(2, 1)], dim=1))
        loss = residual().pow(2).mean() + initial.pow(2).mean() + edges.pow(2).mean()
        loss.backward()
        return loss

    losses = [opt.step(closure) for _ in range(2)]
    state = opt.state[opt._params[0]]
    return dict(init=init, losses=losses, params=list(model.parameters()), residual=residual().detach(),
                evals=state["func_evals"], iters=state["n_iter"], x_grad=x.grad)


def test_pinn_heat_equation_lbfgs(torch):
    both(torch, pinn, tol=dict(rtol=1e-7, atol=1e-9))


# ---- inpainting with partial convolutions: the mask's coverage by a ones kernel renormalizes each window ------
def inpainting(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class PartialConv2d(nn.Conv2d):
        def forward(self, x, mask):
            with torch.no_grad():
                ones = torch.ones(1, 1, *self.kernel_size, dtype=x.dtype)
                coverage = F.conv2d(mask, ones, stride=self.stride, padding=self.padding)
                new_mask = torch.clamp(coverage, 0, 1)
                ratio = self.kernel_size[0] * self.kernel_size[1] / coverage.clamp(min=1e-8) * new_mask
            raw = F.conv2d(x * mask, self.weight, None, self.stride, self.padding)
            return (raw * ratio + self.bias.view(1, -1, 1, 1)) * new_mask, new_mask

    class Inpainter(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = PartialConv2d(3, 6, 3, padding=1)
            self.down = PartialConv2d(6, 6, 3, stride=2, padding=1)
            self.dec = PartialConv2d(12, 3, 3, padding=1)

        def forward(self, x, mask):
            h1, m1 = self.enc(x, mask)
            h1 = F.relu(h1)
            h2, m2 = self.down(h1, m1)
            up, up_mask = F.interpolate(F.relu(h2), scale_factor=2), F.interpolate(m2, scale_factor=2)
            out, _ = self.dec(torch.cat([h1, up], dim=1), torch.max(m1, up_mask))
            return out

    model = Inpainter()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(88)
    gt = torch.tensor(rng.random((2, 3, 6, 6)))
    holes = np.ones((2, 1, 6, 6))
    holes[0, :, 1:4, 2:5] = 0
    holes[1, :, 3:6, 0:3] = 0
    mask = torch.tensor(holes)
    losses = []
    for _ in range(3):
        out = model(gt * mask, mask)
        hole = F.l1_loss((1 - mask) * out, (1 - mask) * gt)
        valid = F.l1_loss(mask * out, mask * gt)
        loss = 6.0 * hole + valid
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        out = model(gt * mask, mask)
        composite = mask * gt + (1 - mask) * out
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()),
                composite=composite)


def test_partial_convolution_inpainting(torch):
    both(torch, inpainting)


# ---- label noise: symmetric cross entropy, mixup of hidden features, co-teaching's small-loss exchange --------
def label_noise(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Beta = torch.distributions.Beta

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
            self.head = nn.Linear(8, 3)

    def symmetric_ce(logits, y, a=0.5, b=1.0):
        ce = F.cross_entropy(logits, y, reduction="none")
        p = F.softmax(logits, dim=1).clamp(min=1e-7, max=1.0)
        one_hot = torch.clamp(F.one_hot(y, 3).to(logits.dtype), min=1e-4, max=1.0)
        rce = -(p * torch.log(one_hot)).sum(dim=1)
        return a * ce + b * rce

    nets = nn.ModuleList([Net(), Net()])
    init = start(nets, init)
    opts = [torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9) for net in nets]
    rng = np.random.default_rng(89)
    x = torch.tensor(rng.standard_normal((10, 4)))
    clean = torch.tensor(np.argmax(rng.standard_normal((10, 3)), axis=1))
    flip = torch.tensor(rng.random(10) < 0.3)
    y = torch.where(flip, (clean + 1) % 3, clean)
    beta = Beta(torch.tensor(0.4, dtype=torch.float64), torch.tensor(0.4, dtype=torch.float64))
    keep = 7
    losses, kept, densities = [], [], []
    for _ in range(3):
        lam = rng.beta(0.4, 0.4)
        densities.append(beta.log_prob(torch.tensor(lam)))
        perm = torch.tensor(rng.permutation(10))
        per_net = []
        for net in nets:
            h = net.features(x)
            logits = net.head(lam * h + (1 - lam) * h[perm])
            per_net.append(lam * symmetric_ce(logits, y) + (1 - lam) * symmetric_ce(logits, y[perm]))
        small = [torch.argsort(loss.detach())[:keep] for loss in per_net]  # likely clean: the small losses
        for net_losses, opt, chosen in zip(per_net, opts, reversed(small)):  # each trains on the other's pick
            opt.zero_grad()
            net_losses[chosen].mean().backward()
            opt.step()
        losses.append([loss.mean() for loss in per_net])
        kept.append(small)
    with torch.no_grad():
        agree = (nets[0].head(nets[0].features(x)).argmax(1) == clean).double().mean()
    return dict(init=init, losses=losses, kept=kept, densities=densities, grads=grads(nets),
                params=list(nets.parameters()), agree=agree, mean=beta.mean, var=beta.variance)


def test_label_noise_coteaching(torch):
    both(torch, label_noise)
