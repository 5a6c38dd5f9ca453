"""Deep-learning scripts of more kinds (N-BEATS forecasting over unfolded windows, a WaveNet-style causal dilated
conv stack on mu-law codes, a Kalman filter's likelihood learned by gradient, ShuffleNet / MobileNet blocks with
squeeze-excitation, a Deep & Cross network on tabular data, a modern Hopfield retrieval layer, a SIREN fitted with
its gradient and Laplacian in the loss, Barlow Twins, a masked autoencoder, an RWKV-style time mix), written once
against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- N-BEATS: windows by unfold, a trend block on a linspace power basis, generic blocks, backcast residuals ------
def nbeats(torch, init):
    nn, F = torch.nn, torch.nn.functional
    back, fore, degree, hidden = 8, 4, 2, 16

    class Block(nn.Module):
        def __init__(self, trend):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(back, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
            self.trend = trend
            if trend:
                tb, tf = torch.linspace(0, 1, back), torch.linspace(0, 1, fore)
                self.register_buffer("basis_b", torch.stack([tb ** i for i in range(degree + 1)]))
                self.register_buffer("basis_f", torch.stack([tf ** i for i in range(degree + 1)]))
                self.theta_b = nn.Linear(hidden, degree + 1, bias=False)
                self.theta_f = nn.Linear(hidden, degree + 1, bias=False)
            else:
                self.theta_b, self.theta_f = nn.Linear(hidden, back), nn.Linear(hidden, fore)

        def forward(self, x):
            h = self.fc(x)
            if self.trend:
                return self.theta_b(h) @ self.basis_b, self.theta_f(h) @ self.basis_f
            return self.theta_b(h), self.theta_f(h)

    class NBeats(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(True), Block(False), Block(False)])

        def forward(self, x):
            forecast = 0
            for block in self.blocks:
                b, f = block(x)
                x = x - b
                forecast = forecast + f
            return forecast, x

    model = NBeats()
    init = start(model, init)
    rng = np.random.default_rng(180)
    series = torch.tensor(np.sin(0.3 * np.arange(40)) + 0.1 * rng.standard_normal(40))
    windows = series.unfold(0, back + fore, 2)
    x, y = windows[:, :back], windows[:, back:]
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        forecast, residual = model(x)
        loss = F.l1_loss(forecast, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, windows=windows, losses=losses, residual=residual, grads=grads(model),
                params=list(model.parameters()), buffers=list(model.buffers()))


def test_nbeats_trend_and_generic_blocks(torch):
    theirs, _ = both(torch, nbeats)
    assert tuple(theirs["windows"].shape) == (15, 12)


# ---- WaveNet: mu-law codes by bucketize, causal F.pad + dilated Conv1d, gated units, residual and skip sums ------
def wavenet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Q, R, S, L = 256, 6, 8, 16

    def mu_law(x, mu=Q - 1):
        return torch.sign(x) * torch.log1p(mu * torch.abs(x)) / math.log1p(mu)

    class Layer(nn.Module):
        def __init__(self, dilation):
            super().__init__()
            self.dilation = dilation
            self.conv = nn.Conv1d(R, 2 * R, 2, dilation=dilation)
            self.res, self.skip = nn.Conv1d(R, R, 1), nn.Conv1d(R, S, 1)

        def forward(self, x):
            h = self.conv(F.pad(x, (self.dilation, 0)))
            filt, gate = h.chunk(2, dim=1)
            z = torch.tanh(filt) * torch.sigmoid(gate)
            return x + self.res(z), self.skip(z)

    class WaveNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.causal = nn.Conv1d(Q, R, 2)
            self.layers = nn.ModuleList([Layer(d) for d in (1, 2, 4, 8)])
            self.post = nn.Sequential(nn.ReLU(), nn.Conv1d(S, S, 1), nn.ReLU(), nn.Conv1d(S, Q, 1))

        def forward(self, codes):
            x = F.one_hot(codes, Q).permute(0, 2, 1).to(torch.float64)
            x = self.causal(F.pad(x, (1, 0)))
            skips = 0
            for layer in self.layers:
                x, s = layer(x)
                skips = skips + s
            return self.post(skips)

    model = WaveNet()
    init = start(model, init)
    rng = np.random.default_rng(181)
    audio = torch.tensor(np.clip(0.5 * np.sin(np.linspace(0, 6, 2 * (L + 1))).reshape(2, L + 1)
                                 + 0.05 * rng.standard_normal((2, L + 1)), -1, 1))
    companded = mu_law(audio)
    boundaries = torch.linspace(-1, 1, Q + 1, dtype=torch.float64)[1:-1]
    codes = torch.bucketize(companded, boundaries)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(2):
        logits = model(codes[:, :-1])
        loss = criterion(logits, codes[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, companded=companded, codes=codes, losses=losses, logits=logits, grads=grads(model),
                params=list(model.parameters()))


def test_wavenet_mu_law_causal_dilated_gated_stack(torch):
    theirs, _ = both(torch, wavenet)
    assert 0 < int(theirs["codes"].min()) and int(theirs["codes"].max()) < 255


# ---- a Kalman filter: predict / update in a loop, the innovations' likelihood by cholesky and slogdet ------------
def kalman(torch, init, logdet):
    nn = torch.nn

    class LinearGaussian(nn.Module):
        def __init__(self):
            super().__init__()
            self.A = nn.Parameter(0.9 * torch.eye(2, dtype=torch.float64) + 0.05)
            self.H = nn.Parameter(torch.tensor([[1.0, 0.0], [0.3, 1.0]], dtype=torch.float64))
            self.log_q = nn.Parameter(torch.tensor([-1.0, -2.0], dtype=torch.float64))
            self.log_r = nn.Parameter(torch.tensor(-1.5, dtype=torch.float64))

        def forward(self, ys):
            A, H = self.A, self.H
            Q, R = torch.diag(self.log_q.exp()), self.log_r.exp() * torch.eye(2, dtype=ys.dtype)
            m, P = torch.zeros(2, dtype=ys.dtype), torch.eye(2, dtype=ys.dtype)
            nll, means = 0, []
            for y in ys:
                m, P = A @ m, A @ P @ A.T + Q
                S = H @ P @ H.T + R
                v = y - H @ m
                chol = torch.linalg.cholesky(S)
                alpha = torch.cholesky_solve(v.unsqueeze(-1), chol).squeeze(-1)
                gain = torch.linalg.solve(S, H @ P).T
                m = m + gain @ v
                P = P - gain @ S @ gain.T
                if logdet:
                    log_det = torch.logdet(S)
                else:
                    sign, log_det = torch.linalg.slogdet(S)
                nll = nll + 0.5 * (log_det + v @ alpha + 2 * math.log(2 * math.pi))
                means.append(m)
            return nll, torch.stack(means)

    model = LinearGaussian()
    init = start(model, init)
    rng = np.random.default_rng(182)
    state, ys = np.zeros(2), []
    for _ in range(8):
        state = np.array([[0.95, 0.1], [-0.1, 0.9]]) @ state + 0.3 * rng.standard_normal(2)
        ys.append(state + 0.2 * rng.standard_normal(2))
    ys = torch.tensor(np.array(ys))
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    losses = []
    for _ in range(3):
        nll, means = model(ys)
        opt.zero_grad()
        nll.backward()
        opt.step()
        losses.append(nll.detach())
    return dict(init=init, losses=losses, means=means, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("logdet", [False, True])
def test_kalman_filter_likelihood_learned(torch, logdet):
    both(torch, kalman, logdet=logdet)


# ---- ShuffleNet / MobileNet blocks: grouped and depthwise convs, channel shuffle, squeeze-excitation -------------
def shufflenet(torch, init):
    nn = torch.nn

    def channel_shuffle(x, groups):
        n, c, h, w = x.size()
        return x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous().view(n, c, h, w)

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Sequential(nn.Conv2d(c, c // 4, 1), nn.ReLU(inplace=True), nn.Conv2d(c // 4, c, 1),
                                    nn.Hardsigmoid())

        def forward(self, x):
            return x * self.fc(self.pool(x))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.pw1 = nn.Sequential(nn.Conv2d(c, c, 1, groups=2, bias=False), nn.BatchNorm2d(c), nn.Hardswish())
            self.dw = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.BatchNorm2d(c))
            self.se = SqueezeExcite(c)
            self.pw2 = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))
            self.act = nn.Hardswish()

        def forward(self, x):
            h = channel_shuffle(self.pw1(x), 2)
            return self.act(x + self.pw2(self.se(self.dw(h))))

    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.Hardswish(),
                          Block(8), Block(8), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    init = start(model, init)
    rng = np.random.default_rng(183)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    model.train()
    for _ in range(2):
        x = torch.tensor(rng.standard_normal((4, 3, 8, 8)))
        y = torch.tensor(rng.integers(0, 4, 4))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        out = model(torch.tensor(rng.standard_normal((2, 3, 8, 8))))
    return dict(init=init, losses=losses, out=out, grads=grads(model), state=dict(model.state_dict()))


def test_shufflenet_mobilenet_blocks_train_then_eval(torch):
    both(torch, shufflenet)


# ---- a Deep & Cross network: embeddings and dense features concatenated, cross layers beside a deep tower --------
def deep_cross(torch, init):
    nn = torch.nn
    cards, e, dense = (5, 7, 4), 3, 4
    d = len(cards) * e + dense

    class DCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embs = nn.ModuleList([nn.Embedding(n, e) for n in cards])
            self.ws = nn.ParameterList([nn.Parameter(0.1 * torch.randn(d, 1)) for _ in range(3)])
            self.bs = nn.ParameterList([nn.Parameter(torch.zeros(d)) for _ in range(3)])
            self.deep = nn.Sequential(nn.Linear(d, 16), nn.ReLU(), nn.Linear(16, 8), nn.ReLU())
            self.head = nn.Linear(d + 8, 1)

        def forward(self, cats, xd):
            x0 = torch.cat([emb(cats[:, i]) for i, emb in enumerate(self.embs)] + [xd], dim=1)
            x = x0
            for w, b in zip(self.ws, self.bs):
                x = x0 * (x @ w) + b + x
            return self.head(torch.cat([x, self.deep(x0)], dim=1)).squeeze(1)

    model = DCN()
    init = start(model, init)
    rng = np.random.default_rng(184)
    cats = torch.tensor(np.stack([rng.integers(0, n, 10) for n in cards], axis=1))
    xd = torch.tensor(rng.standard_normal((10, dense)))
    y = torch.tensor((rng.uniform(size=10) < 0.3).astype(np.float64))
    criterion = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([3.0], dtype=torch.float64))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        logits = model(cats, xd)
        loss = criterion(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, probs=torch.sigmoid(logits), grads=grads(model),
                params=list(model.parameters()))


def test_deep_and_cross_network_pos_weight(torch):
    both(torch, deep_cross)


# ---- a modern Hopfield layer: softmax(beta Q K^T) K retrieval iterated, cdist, topk, F.normalize ----------------
def hopfield(torch, init):
    nn, F = torch.nn, torch.nn.functional
    M, d = 5, 6

    class Hopfield(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(4, d)
            self.memory = nn.Parameter(torch.randn(M, d))
            self.log_beta = nn.Parameter(torch.tensor(math.log(4.0)))

        def forward(self, x):
            q = F.normalize(self.query(x), dim=-1)
            K = F.normalize(self.memory, p=2, dim=1)
            for _ in range(3):
                q = torch.softmax(self.log_beta.exp() * q @ K.T, dim=-1) @ K
            return q, K

    model = Hopfield()
    init = start(model, init)
    rng = np.random.default_rng(185)
    x = torch.tensor(rng.standard_normal((7, 4)))
    labels = torch.tensor(rng.integers(0, M, 7))
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    losses, tops = [], []
    for _ in range(3):
        q, K = model(x)
        dist = torch.cdist(q, K)
        top, idx = torch.topk(q @ K.T, 2, dim=-1)
        loss = nn.functional.cross_entropy(-dist * 5, labels) + 0.1 * (1 - top[:, 0]).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        tops.append((top, idx, dist))
    return dict(init=init, losses=losses, tops=tops, grads=grads(model), params=list(model.parameters()))


def test_modern_hopfield_retrieval(torch):
    both(torch, hopfield)


# ---- SIREN: sine layers with omega_0, a meshgrid of coordinates, the gradient and Laplacian in the loss ----------
def siren(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Sine(nn.Module):
        def __init__(self, n_in, n_out, omega, first):
            super().__init__()
            self.omega, self.linear = omega, nn.Linear(n_in, n_out)
            bound = 1 / n_in if first else math.sqrt(6 / n_in) / omega
            with torch.no_grad():
                self.linear.weight.uniform_(-bound, bound)

        def forward(self, x):
            return torch.sin(self.omega * self.linear(x))

    model = nn.Sequential(Sine(2, 16, 30.0, True), Sine(16, 16, 30.0, False), nn.Linear(16, 1))
    init = start(model, init)
    rng = np.random.default_rng(186)
    xs = torch.linspace(-1, 1, 6, dtype=torch.float64)
    gx, gy = torch.meshgrid(xs, xs, indexing="ij")
    coords = torch.stack([gx, gy], dim=-1).view(-1, 2).requires_grad_(True)
    image = torch.tensor(rng.uniform(0, 1, (36, 1)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    losses = []
    for _ in range(2):
        out = model(coords)
        grad = torch.autograd.grad(out.sum(), coords, create_graph=True)[0]
        laplacian = sum(torch.autograd.grad(grad[:, i].sum(), coords, create_graph=True)[0][:, i] for i in range(2))
        loss = F.mse_loss(out, image) + 1e-3 * grad.pow(2).sum(-1).mean() + 1e-6 * laplacian.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, grad=grad, laplacian=laplacian, coords_grad=coords.grad,
                grads=grads(model), params=list(model.parameters()))


def test_siren_gradient_and_laplacian_loss(torch):
    both(torch, siren)


# ---- Barlow Twins: two views, BatchNorm1d(affine=False), the cross-correlation's on- and off-diagonal terms ------
def barlow_twins(torch, init):
    nn = torch.nn
    n = 8

    def off_diagonal(c):
        k = c.shape[0]
        return c.flatten()[:-1].view(k - 1, k + 1)[:, 1:].flatten()

    class BarlowTwins(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
            self.projector = nn.Sequential(nn.Linear(8, 12, bias=False), nn.BatchNorm1d(12), nn.ReLU(),
                                           nn.Linear(12, n, bias=False))
            self.bn = nn.BatchNorm1d(n, affine=False)

        def forward(self, y1, y2):
            z1, z2 = self.projector(self.backbone(y1)), self.projector(self.backbone(y2))
            c = self.bn(z1).T @ self.bn(z2) / y1.shape[0]
            on_diag = torch.diagonal(c).add_(-1).pow_(2).sum()
            off_diag = off_diagonal(c).pow_(2).sum()
            return on_diag + 5e-3 * off_diag, c

    model = BarlowTwins()
    init = start(model, init)
    rng = np.random.default_rng(187)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    losses = []
    for _ in range(3):
        x = rng.standard_normal((10, 6))
        y1 = torch.tensor(x + 0.1 * rng.standard_normal(x.shape))
        y2 = torch.tensor(x * rng.uniform(0.8, 1.2, (10, 1)) + 0.1 * rng.standard_normal(x.shape))
        loss, c = model(y1, y2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, c=c, grads=grads(model), state=dict(model.state_dict()))


def test_barlow_twins_cross_correlation(torch):
    both(torch, barlow_twins)


# ---- a masked autoencoder: patchify, masking by argsort of noise, gather, mask tokens unshuffled, masked loss ----
def mae(torch, init, einsum):
    nn = torch.nn
    p, side, D, Dd = 2, 8, 8, 6
    L, keep = (side // p) ** 2, 6

    def patchify(imgs):
        n, c, h = imgs.shape[0], imgs.shape[1], side // p
        x = imgs.reshape(n, c, h, p, h, p)
        x = torch.einsum("nchpwq->nhwpqc", x) if einsum else x.permute(0, 2, 4, 3, 5, 1)
        return x.reshape(n, h * h, p * p * c)

    class MAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(p * p, D)
            self.pos = nn.Parameter(0.02 * torch.randn(1, L, D))
            self.encoder = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, D), nn.GELU(), nn.Linear(D, D))
            self.to_dec = nn.Linear(D, Dd)
            self.mask_token = nn.Parameter(torch.zeros(1, 1, Dd))
            self.dec_pos = nn.Parameter(0.02 * torch.randn(1, L, Dd))
            self.decoder = nn.Sequential(nn.LayerNorm(Dd), nn.Linear(Dd, p * p))

        def forward(self, imgs, noise):
            n = imgs.shape[0]
            x = self.embed(patchify(imgs)) + self.pos
            ids_shuffle = torch.argsort(noise, dim=1)
            ids_restore = torch.argsort(ids_shuffle, dim=1)
            ids_keep = ids_shuffle[:, :keep]
            x = torch.gather(x, dim=1, index=ids_keep.unsqueeze(-1).expand(-1, -1, D))
            mask = torch.ones([n, L], dtype=x.dtype)
            mask[:, :keep] = 0
            mask = torch.gather(mask, dim=1, index=ids_restore)
            x = self.to_dec(x + self.encoder(x))
            tokens = self.mask_token.repeat(n, L - keep, 1)
            x = torch.cat([x, tokens], dim=1)
            x = torch.gather(x, 1, ids_restore.unsqueeze(-1).repeat(1, 1, Dd)) + self.dec_pos
            return self.decoder(x), mask

    model = MAE()
    init = start(model, init)
    rng = np.random.default_rng(188)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05)
    losses = []
    for _ in range(2):
        imgs = torch.tensor(rng.standard_normal((2, 1, side, side)))
        noise = torch.tensor(rng.uniform(size=(2, L)))
        pred, mask = model(imgs, noise)
        target = patchify(imgs)
        loss = ((pred - target) ** 2).mean(dim=-1)
        loss = (loss * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, pred=pred, mask=mask, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("einsum", [True, False])
def test_masked_autoencoder(torch, einsum):
    theirs, _ = both(torch, mae, einsum=einsum)
    assert theirs["mask"].sum().item() == 2 * 10


# ---- RWKV: token shift by ZeroPad2d, a decayed running numerator / denominator, squared-ReLU channel mix ----------
def rwkv(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, C, T = 11, 8, 6

    class TimeMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = nn.ZeroPad2d((0, 0, 1, -1))
            self.mix_k, self.mix_v, self.mix_r = (nn.Parameter(torch.full((1, 1, C), f)) for f in (0.6, 0.5, 0.4))
            self.time_decay = nn.Parameter(torch.linspace(-1, 1, C))
            self.time_first = nn.Parameter(torch.full((C,), 0.3))
            self.key, self.value = nn.Linear(C, C, bias=False), nn.Linear(C, C, bias=False)
            self.receptance, self.output = nn.Linear(C, C, bias=False), nn.Linear(C, C, bias=False)

        def forward(self, x):
            xx = self.shift(x)
            k = self.key(x * self.mix_k + xx * (1 - self.mix_k))
            v = self.value(x * self.mix_v + xx * (1 - self.mix_v))
            r = torch.sigmoid(self.receptance(x * self.mix_r + xx * (1 - self.mix_r)))
            w = torch.exp(-torch.exp(self.time_decay))
            num, den, out = torch.zeros_like(k[:, 0]), torch.zeros_like(k[:, 0]), []
            for t in range(x.shape[1]):
                now = torch.exp(self.time_first + k[:, t])
                out.append((num + now * v[:, t]) / (den + now))
                num = w * num + torch.exp(k[:, t]) * v[:, t]
                den = w * den + torch.exp(k[:, t])
            return self.output(r * torch.stack(out, dim=1))

    class ChannelMix(nn.Module):
        def __init__(self):
            super().__init__()
            self.shift = nn.ZeroPad2d((0, 0, 1, -1))
            self.mix_k = nn.Parameter(torch.full((1, 1, C), 0.5))
            self.key, self.value = nn.Linear(C, 2 * C, bias=False), nn.Linear(2 * C, C, bias=False)
            self.receptance = nn.Linear(C, C, bias=False)

        def forward(self, x):
            xx = self.shift(x)
            k = torch.square(torch.relu(self.key(x * self.mix_k + xx * (1 - self.mix_k))))
            return torch.sigmoid(self.receptance(x)) * self.value(k)

    class RWKV(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, C)
            self.ln0, self.ln1, self.ln2, self.ln_out = (nn.LayerNorm(C) for _ in range(4))
            self.att, self.ffn = TimeMix(), ChannelMix()
            self.head = nn.Linear(C, V, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, idx):
            x = self.ln0(self.emb(idx))
            x = x + self.att(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
            return self.head(self.ln_out(x))

    model = RWKV()
    init = start(model, init)
    rng = np.random.default_rng(189)
    idx = torch.tensor(rng.integers(0, V, (2, T + 1)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), idx[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    tied = model.head.weight is model.emb.weight
    return dict(init=init, losses=losses, logits=logits, tied=tied, grads=grads(model),
                params=list(model.parameters()))


def test_rwkv_time_mix_tied_head(torch):
    theirs, _ = both(torch, rwkv)
    assert theirs["tied"]
