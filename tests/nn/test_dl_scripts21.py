"""Deep-learning scripts of yet more kinds (PointNet with a T-Net and a Chamfer loss, DGCNN edge convolution, AdaIN
and conditional batch norm, evidential classification with a Dirichlet, Fourier features with a Haar loss, a Swin
window attention's relative position bias, ALBERT's shared layer, decoding filters over a KV cache, a child-sum
Tree-LSTM, a self-organizing map), written once against a `torch`-like module and run twice: on PyTorch, then on
minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64
throughout; random draws by numpy)."""
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- PointNet: a shared Conv1d(k=1) MLP, a T-Net's 3x3 transform by bmm, max pooling, a Chamfer reconstruction -----
def pointnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    P = 12

    class TNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv1d(3, 8, 1), nn.ReLU(), nn.Conv1d(8, 16, 1))
            self.fc = nn.Linear(16, 9)

        def forward(self, x):
            feat = torch.max(self.conv(x), 2)[0]
            return self.fc(feat).view(-1, 3, 3) + torch.eye(3, dtype=x.dtype)

    class PointNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.tnet = TNet()
            self.mlp = nn.Sequential(nn.Conv1d(3, 16, 1), nn.BatchNorm1d(16), nn.ReLU(), nn.Conv1d(16, 32, 1))
            self.head = nn.Linear(32, 4)
            self.decoder = nn.Linear(32, P * 3)

        def forward(self, x):  # (N, 3, P)
            A = self.tnet(x)
            x = torch.bmm(x.transpose(2, 1), A).transpose(2, 1)
            feat, where = torch.max(self.mlp(x), 2)
            return self.head(feat), self.decoder(feat).view(-1, P, 3), A, where

    def chamfer(a, b):  # (N, P, 3), (N, Q, 3)
        d = torch.cdist(a, b)
        return d.min(2)[0].mean() + d.min(1)[0].mean()

    model = PointNet()
    init = start(model, init)
    rng = np.random.default_rng(210)
    clouds = torch.tensor(rng.standard_normal((4, P, 3)))
    labels = torch.tensor(rng.integers(0, 4, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    eye = torch.eye(3, dtype=torch.float64)
    losses = []
    for _ in range(2):
        logits, recon, A, where = model(clouds.transpose(1, 2))
        ortho = torch.norm(eye - torch.bmm(A, A.transpose(1, 2)), dim=(1, 2)).mean()
        loss = F.cross_entropy(logits, labels) + 1e-3 * ortho + chamfer(recon, clouds)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append((loss.detach(), ortho.detach()))
    return dict(init=init, losses=losses, where=where, recon=recon.detach(), grads=grads(model),
                params=list(model.parameters()), buffers=list(model.buffers()))


def test_pointnet_tnet_chamfer(torch):
    both(torch, pointnet)


# ---- DGCNN: k nearest neighbours by topk, neighbours by advanced indexing or gather, cat(x_j - x_i, x_i), max ------
def dgcnn(torch, init, lookup):
    nn, F = torch.nn, torch.nn.functional
    K = 3

    def knn(x, k):  # (B, N, C) -> (B, N, k)
        inner = -2 * torch.matmul(x, x.transpose(2, 1))
        xx = (x ** 2).sum(-1, keepdim=True)
        return (-xx - inner - xx.transpose(2, 1)).topk(k=k, dim=-1)[1]

    def edge_features(x, idx):
        B, N, C = x.shape
        k = idx.size(-1)
        if lookup == "index":
            batch_idx = torch.arange(B).view(B, 1, 1)
            neighbours = x[batch_idx, idx]  # (B, N, k, C)
        else:
            neighbours = torch.gather(x.unsqueeze(1).expand(B, N, N, C), 2, idx.unsqueeze(-1).expand(B, N, k, C))
        center = x.unsqueeze(2).expand(-1, -1, k, -1)
        return torch.cat([neighbours - center, center], dim=-1).permute(0, 3, 1, 2)  # (B, 2C, N, k)

    class EdgeConv(nn.Module):
        def __init__(self, c_in, c_out):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(2 * c_in, c_out, 1, bias=False), nn.BatchNorm2d(c_out),
                                     nn.LeakyReLU(0.2))

        def forward(self, x):  # (B, N, C)
            idx = knn(x, K)
            return self.net(edge_features(x, idx)).max(dim=-1)[0].transpose(1, 2), idx

    class DGCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.ec1, self.ec2 = EdgeConv(3, 8), EdgeConv(8, 8)
            self.head = nn.Linear(16, 3)

        def forward(self, pts):
            x1, idx1 = self.ec1(pts)
            x2, idx2 = self.ec2(x1)  # (a dynamic graph: neighbours in feature space)
            return self.head(torch.cat([x1, x2], dim=-1).max(dim=1)[0]), idx1, idx2

    model = DGCNN()
    init = start(model, init)
    rng = np.random.default_rng(211)
    pts = torch.tensor(rng.standard_normal((2, 7, 3)))
    labels = torch.tensor([0, 2])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(2):
        logits, idx1, idx2 = model(pts)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, idx=(idx1, idx2), grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("lookup", ["index", "gather"])
def test_dgcnn_edge_convolution(torch, lookup):
    both(torch, dgcnn, lookup=lookup)


# ---- AdaIN style mixing, InstanceNorm2d against the manual form, a conditional BatchNorm from an Embedding -------
def adain(torch, init):
    nn, F = torch.nn, torch.nn.functional
    C, n_classes = 4, 3

    def mean_std(feat, eps=1e-5):
        mean = feat.mean((2, 3), keepdim=True)
        return mean, (feat.var((2, 3), keepdim=True, unbiased=False) + eps).sqrt()

    def ada_in(content, style):
        c_mean, c_std = mean_std(content)
        s_mean, s_std = mean_std(style)
        return (content - c_mean) / c_std * s_std + s_mean

    class ConditionalBatchNorm2d(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.bn = nn.BatchNorm2d(channels, affine=False)
            self.embed = nn.Embedding(n_classes, 2 * channels)
            self.embed.weight.data[:, :channels].normal_(1, 0.02)
            self.embed.weight.data[:, channels:].zero_()

        def forward(self, x, y):
            gamma, beta = self.embed(y).chunk(2, 1)
            return gamma.view(-1, C, 1, 1) * self.bn(x) + beta.view(-1, C, 1, 1)

    class Stylizer(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Conv2d(3, C, 3, padding=1), nn.ReLU())
            self.cbn = ConditionalBatchNorm2d(C)
            self.decoder = nn.Conv2d(C, 3, 3, padding=1)
            self.inorm = nn.InstanceNorm2d(C, affine=False, track_running_stats=False)

        def forward(self, content, style, y, alpha=0.7):
            fc, fs = self.encoder(content), self.encoder(style)
            t = alpha * ada_in(fc, fs) + (1 - alpha) * fc
            return self.decoder(self.cbn(t, y)), t, fs

    model = Stylizer()
    init = start(model, init)
    rng = np.random.default_rng(212)
    content = torch.tensor(rng.standard_normal((2, 3, 5, 5)))
    style = torch.tensor(rng.standard_normal((2, 3, 5, 5)) * 2 + 0.5)
    y = torch.tensor([2, 0])
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        out, t, fs = model(content, style, y)
        fo = model.encoder(out)
        (o_mean, o_std), (s_mean, s_std) = mean_std(fo), mean_std(fs.detach())
        loss = F.mse_loss(fo, t.detach()) + F.mse_loss(o_mean, s_mean) + F.mse_loss(o_std, s_std)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    manual = (fo - fo.mean((2, 3), keepdim=True)) / (fo.var((2, 3), keepdim=True, unbiased=False) + 1e-5).sqrt()
    normed = model.inorm(fo)
    torch.testing.assert_close(normed, manual)
    model.eval()
    with torch.no_grad():
        evaluated = model(content, style, y)[0]
    return dict(init=init, losses=losses, normed=normed.detach(), evaluated=evaluated, grads=grads(model),
                params=list(model.parameters()), buffers=list(model.buffers()))


def test_adain_instance_norm_conditional_batch_norm(torch):
    both(torch, adain)


# ---- evidential classification: alpha = softplus + 1, the expected MSE, a KL to the uniform Dirichlet annealed ---
def evidential(torch, init):
    nn, F = torch.nn, torch.nn.functional
    K = 3

    def kl_to_uniform(alpha):
        ones = torch.ones((1, K), dtype=alpha.dtype)
        S = alpha.sum(1, keepdim=True)
        first = torch.lgamma(S) - torch.lgamma(alpha).sum(1, keepdim=True) - torch.lgamma(ones.sum(1, keepdim=True))
        second = ((alpha - ones) * (torch.digamma(alpha) - torch.digamma(S))).sum(1, keepdim=True)
        return first + second

    def edl_mse(y, alpha, epoch):
        S = alpha.sum(1, keepdim=True)
        p = alpha / S
        err = ((y - p) ** 2).sum(1, keepdim=True)
        var = (alpha * (S - alpha) / (S * S * (S + 1))).sum(1, keepdim=True)
        anneal = torch.min(torch.tensor(1.0, dtype=torch.float64), torch.tensor(epoch / 4, dtype=torch.float64))
        return (err + var + anneal * kl_to_uniform((alpha - 1) * (1 - y) + 1)).mean()

    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, K))
    init = start(model, init)
    rng = np.random.default_rng(213)
    x = torch.tensor(rng.standard_normal((6, 4)))
    labels = torch.tensor(rng.integers(0, K, 6))
    y = F.one_hot(labels, K).to(torch.float64)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for epoch in range(3):
        alpha = F.softplus(model(x)) + 1
        loss = edl_mse(y, alpha, epoch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    opt.zero_grad()
    alpha = F.softplus(model(x)) + 1
    dist = torch.distributions.Dirichlet(alpha)
    S = alpha.sum(-1)
    log_beta = torch.lgamma(alpha).sum(-1) - torch.lgamma(S)
    manual = log_beta + (S - K) * torch.digamma(S) - ((alpha - 1) * torch.digamma(alpha)).sum(-1)
    entropy = dist.entropy()
    torch.testing.assert_close(entropy, manual)
    torch.testing.assert_close(dist.mean, alpha / S.unsqueeze(-1))
    entropy.sum().backward()
    return dict(init=init, losses=losses, entropy=entropy.detach(), mean=dist.mean.detach(),
                uncertainty=(K / S).detach(), log_prob=dist.log_prob(y * 0.8 + 0.2 / K).detach(),
                grads=grads(model), params=list(model.parameters()))


def test_evidential_dirichlet_classification(torch):
    both(torch, evidential)


# ---- Fourier features: a fixed Gaussian B buffer, sin / cos of 2 pi x B, an MLP fitting a signal, a Haar loss -----
def fourier_features(torch, init):
    nn, F = torch.nn, torch.nn.functional
    m, L = 6, 16

    class FourierNet(nn.Module):
        def __init__(self, B):
            super().__init__()
            self.register_buffer("B", B)
            self.mlp = nn.Sequential(nn.Linear(2 * m, 32), nn.ReLU(), nn.Linear(32, 1))

        def forward(self, x):
            proj = 2 * math.pi * x @ self.B
            return self.mlp(torch.cat([torch.sin(proj), torch.cos(proj)], -1))

    def haar(s, levels=2):
        bands = []
        for _ in range(levels):
            bands.append((s[..., ::2] - s[..., 1::2]) / math.sqrt(2))
            s = (s[..., ::2] + s[..., 1::2]) / math.sqrt(2)
        return [s] + bands

    rng = np.random.default_rng(214)
    model = FourierNet(torch.tensor(rng.normal(0.0, 3.0, (1, m))))
    init = start(model, init)
    x = torch.linspace(0, 1, L, dtype=torch.float64).unsqueeze(1)
    signal = torch.sin(6 * x[:, 0]) + 0.3 * torch.sign(x[:, 0] - 0.5)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        pred = model(x).view(1, -1)
        wave_loss = sum(F.l1_loss(a, b) for a, b in zip(haar(pred), haar(signal.view(1, -1))))
        loss = F.mse_loss(pred, signal.view(1, -1)) + 0.1 * wave_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, bands=[b.detach() for b in haar(pred)], grads=grads(model),
                params=list(model.parameters()), buffer=model.B)


def test_fourier_features_haar_loss(torch):
    both(torch, fourier_features)
