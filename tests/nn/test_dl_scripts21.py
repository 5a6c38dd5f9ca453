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


# ---- Swin window attention: a relative position bias table indexed by a meshgrid buffer, shifted windows by roll --
def swin(torch, init, shift):
    nn, F = torch.nn, torch.nn.functional
    W, C, heads, S = 2, 8, 2, 4  # window, channels, heads, image side

    class WindowAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.zeros((2 * W - 1) * (2 * W - 1), heads))
            coords = torch.stack(torch.meshgrid(torch.arange(W), torch.arange(W), indexing="ij"))  # (2, W, W)
            flat = torch.flatten(coords, 1)
            rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()  # (W*W, W*W, 2)
            rel[:, :, 0] += W - 1
            rel[:, :, 1] += W - 1
            rel[:, :, 0] *= 2 * W - 1
            self.register_buffer("relative_position_index", rel.sum(-1))
            self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
            nn.init.trunc_normal_(self.table, std=0.02)

        def forward(self, x, mask=None):  # (windows * B, N, C)
            Bw, N, _ = x.shape
            q, k, v = self.qkv(x).reshape(Bw, N, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
            attn = (q * (C // heads) ** -0.5) @ k.transpose(-2, -1)
            bias = self.table[self.relative_position_index.view(-1)].view(N, N, -1).permute(2, 0, 1).contiguous()
            attn = attn + bias.unsqueeze(0)
            if mask is not None:
                nw = mask.shape[0]
                attn = attn.view(Bw // nw, nw, heads, N, N) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.view(-1, heads, N, N)
            return self.proj((attn.softmax(dim=-1) @ v).transpose(1, 2).reshape(Bw, N, C))

    def partition(x):  # (B, S, S, C) -> (B * windows, W*W, C)
        B = x.shape[0]
        x = x.view(B, S // W, W, S // W, W, C).permute(0, 1, 3, 2, 4, 5).contiguous()
        return x.view(-1, W * W, C)

    def reverse(windows, B):
        x = windows.view(B, S // W, S // W, W, W, -1).permute(0, 1, 3, 2, 4, 5).contiguous()
        return x.view(B, S, S, -1)

    def shift_mask():
        img = torch.zeros((1, S, S, 1))
        cnt = 0
        for h in (slice(0, -W), slice(-W, -1), slice(-1, None)):
            for w in (slice(0, -W), slice(-W, -1), slice(-1, None)):
                img[:, h, w, :] = cnt
                cnt += 1
        windows = partition(img.expand(-1, -1, -1, C))[..., 0]  # (windows, W*W)
        mask = windows.unsqueeze(1) - windows.unsqueeze(2)
        return mask.masked_fill(mask != 0, float(-100.0)).masked_fill(mask == 0, float(0.0)).double()

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm, self.attn = nn.LayerNorm(C), WindowAttention()
            self.head = nn.Linear(C, 3)

        def forward(self, x):  # (B, S, S, C)
            B = x.shape[0]
            h = self.norm(x)
            if shift:
                h = torch.roll(h, shifts=(-1, -1), dims=(1, 2))
            h = reverse(self.attn(partition(h), shift_mask() if shift else None), B)
            if shift:
                h = torch.roll(h, shifts=(1, 1), dims=(1, 2))
            x = x + h
            return self.head(x.mean((1, 2))), x

    model = Block()
    init = start(model, init)
    rng = np.random.default_rng(215)
    x = torch.tensor(rng.standard_normal((2, S, S, C)))
    labels = torch.tensor([1, 2])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(2):
        logits, out = model(x)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, out=out.detach(), index=model.attn.relative_position_index,
                mask=shift_mask(), grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("shift", [False, True])
def test_swin_relative_position_bias_shifted_windows(torch, shift):
    both(torch, swin, shift=shift)


# ---- ALBERT: factorised embeddings (V, E) then Linear(E, H), one encoder layer applied N times, an SOP head -------
def albert(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, E, H, T, L = 20, 4, 16, 6, 3

    class Albert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word, self.position, self.token_type = nn.Embedding(V, E), nn.Embedding(T, E), nn.Embedding(2, E)
            self.norm = nn.LayerNorm(E)
            self.proj = nn.Linear(E, H)
            self.layer = nn.TransformerEncoderLayer(H, 2, 32, dropout=0.0, activation="gelu", batch_first=True)
            self.mlm = nn.Sequential(nn.Linear(H, E), nn.GELU(), nn.LayerNorm(E))
            self.mlm_bias = nn.Parameter(torch.zeros(V))
            self.pooler = nn.Linear(H, H)
            self.sop = nn.Linear(H, 2)

        def forward(self, ids, types, pad):
            pos = torch.arange(ids.size(1)).unsqueeze(0)
            h = self.proj(self.norm(self.word(ids) + self.position(pos) + self.token_type(types)))
            for _ in range(L):
                h = self.layer(h, src_key_padding_mask=pad)
            mlm_logits = self.mlm(h) @ self.word.weight.T + self.mlm_bias
            return mlm_logits, self.sop(torch.tanh(self.pooler(h[:, 0])))

    model = Albert()
    init = start(model, init)
    count = sum(p.numel() for p in model.parameters())
    unshared = count + (L - 1) * sum(p.numel() for p in model.layer.parameters())
    rng = np.random.default_rng(216)
    ids = torch.tensor(rng.integers(1, V, (3, T)))
    types = torch.tensor([[0, 0, 0, 1, 1, 1]] * 3)
    pad = torch.tensor([[False] * T, [False] * 5 + [True], [False] * 4 + [True] * 2])
    targets = ids.masked_fill(torch.tensor(rng.random((3, T)) > 0.4) | pad, -100)
    order = torch.tensor([0, 1, 1])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    losses = []
    for _ in range(2):
        mlm_logits, sop_logits = model(ids, types, pad)
        loss = F.cross_entropy(mlm_logits.reshape(-1, V), targets.view(-1)) + F.cross_entropy(sop_logits, order)
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append((loss.detach(), norm))
    return dict(init=init, count=count, unshared=unshared, losses=losses, logits=mlm_logits.detach(),
                grads=grads(model), params=list(model.parameters()))


def test_albert_factorised_embeddings_shared_layer(torch):
    both(torch, albert)


# ---- decoding: top-k, nucleus, temperature, a repetition penalty by gather / scatter_, a KV cache vs recompute ---
def decoding(torch, init, manager):
    nn, F = torch.nn, torch.nn.functional
    V, C, heads, T = 11, 8, 2, 12
    D = C // heads

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, C), nn.Embedding(T, C)
            self.qkv, self.proj, self.head = nn.Linear(C, 3 * C), nn.Linear(C, C), nn.Linear(C, V)

        def forward(self, idx, past=None):
            B, t = idx.shape
            begin = 0 if past is None else past[0].size(2)
            x = self.tok(idx) + self.pos(torch.arange(begin, begin + t))
            q, k, v = (z.view(B, t, heads, D).transpose(1, 2) for z in self.qkv(x).split(C, dim=-1))
            if past is not None:
                k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
            att = q @ k.transpose(-2, -1) / math.sqrt(D)
            allowed = torch.ones(t, k.size(2), dtype=torch.bool).tril(diagonal=begin)
            att = att.masked_fill(~allowed, float("-inf"))
            y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, t, C)
            return self.head(x + self.proj(y)), (k, v)

    def top_k_filter(logits, k):
        v, _ = torch.topk(logits, k)
        return logits.masked_fill(logits < v[:, [-1]], float("-inf"))

    def top_p_filter(logits, p):
        sorted_logits, sorted_idx = torch.sort(logits, descending=True)
        cumulative = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)
        remove = cumulative > p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        return logits.masked_fill(remove.scatter(1, sorted_idx, remove), float("-inf"))

    def penalise(logits, generated, penalty=1.3):
        score = torch.gather(logits, 1, generated)
        logits.scatter_(1, generated, torch.where(score < 0, score * penalty, score / penalty))
        return logits

    def pick(logits, generated, temperature=0.8):
        logits = penalise(logits.clone(), generated) / temperature
        logits = top_p_filter(top_k_filter(logits, 5), 0.9)
        return torch.argmax(logits, dim=-1, keepdim=True), F.softmax(logits, dim=-1)

    model = TinyLM()
    init = start(model, init)
    model.eval()
    prompt = torch.tensor(np.random.default_rng(217).integers(0, V, (2, 3)))
    context = torch.no_grad() if manager == "no_grad" else torch.inference_mode()
    with context:
        full, cached = prompt, prompt
        logits, past = model(prompt)
        probs = []
        for _ in range(5):
            nxt, p = pick(logits[:, -1], cached)
            probs.append(p)
            cached = torch.cat([cached, nxt], dim=1)
            logits, past = model(nxt, past)
            recomputed = model(full)[0][:, -1]
            full = torch.cat([full, pick(recomputed, full)[0]], dim=1)
        last = model(full)[0]
    assert torch.equal(full, cached)
    return dict(init=init, tokens=cached, probs=probs, logits=logits, last=last, past=past)


@pytest.mark.parametrize("manager", ["no_grad", "inference_mode"])
def test_decoding_top_k_top_p_repetition_penalty_kv_cache(torch, manager):
    theirs, _ = both(torch, decoding, manager=manager)
    assert all(((p > 0).sum(-1) <= 5).all() for p in theirs["probs"])


# ---- a child-sum Tree-LSTM over a fixed tree by Python recursion: per-child forget gates, zero leaf states --------
def tree_lstm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, X, H = 9, 5, 6
    tree = (0, [(1, []), (2, [(3, []), (4, [])]), (5, [(6, [(7, [])])])])

    class ChildSumTreeLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, X)
            self.iou_x, self.iou_h = nn.Linear(X, 3 * H), nn.Linear(H, 3 * H, bias=False)
            self.f_x, self.f_h = nn.Linear(X, H), nn.Linear(H, H, bias=False)
            self.out = nn.Linear(H, 3)

        def node(self, x, child_h, child_c):  # (X,), (children, H), (children, H)
            i, o, u = torch.split(self.iou_x(x) + self.iou_h(child_h.sum(0)), H, dim=-1)
            i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)
            f = torch.sigmoid(self.f_h(child_h) + self.f_x(x).unsqueeze(0))
            c = i * u + (f * child_c).sum(0)
            return o * torch.tanh(c), c

        def encode(self, tree, xs, outs):
            index, children = tree
            if not children:
                child_h = child_c = torch.zeros(1, H, dtype=xs.dtype)
            else:
                states = [self.encode(child, xs, outs) for child in children]
                child_h = torch.stack([h for h, _ in states])
                child_c = torch.stack([c for _, c in states])
            h, c = self.node(xs[index], child_h, child_c)
            outs[index] = self.out(h)
            return h, c

        def forward(self, tokens):
            outs = {}
            h, _ = self.encode(tree, self.emb(tokens), outs)
            return torch.stack([outs[i] for i in sorted(outs)]), h

    model = ChildSumTreeLSTM()
    init = start(model, init)
    rng = np.random.default_rng(218)
    tokens = torch.tensor(rng.integers(0, V, 8))
    labels = torch.tensor(rng.integers(0, 3, 8))
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05, weight_decay=1e-4)
    losses = []
    for _ in range(3):
        logits, root = model(tokens)
        loss = F.cross_entropy(logits, labels, reduction="sum")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, losses=losses, root=root.detach(), grads=grads(model), params=list(model.parameters()))


def test_child_sum_tree_lstm(torch):
    both(torch, tree_lstm)


# ---- a self-organizing map without autograd: BMU by argmin of cdist, a Gaussian neighbourhood on a meshgrid -------
def som(torch, init, batch):
    nn = torch.nn
    rows, cols, D, n = 3, 4, 3, 10

    class SOM(nn.Module):
        def __init__(self, weight):
            super().__init__()
            self.weight = nn.Parameter(weight, requires_grad=False)
            gy, gx = torch.meshgrid(torch.arange(rows), torch.arange(cols), indexing="ij")
            self.register_buffer("grid", torch.stack([gy.flatten(), gx.flatten()], 1).to(torch.float64))

        def forward(self, x):  # (B, D) -> best-matching units (B,)
            return torch.argmin(torch.cdist(x, self.weight), dim=1)

    rng = np.random.default_rng(219)
    model = SOM(torch.tensor(rng.random((rows * cols, D))))
    init = start(model, init)
    data = torch.tensor(rng.random((n, D)))
    steps = []
    for t in range(3 if batch else n):
        lr, sigma = 0.5 * (1 - t / n), 1.5 * math.exp(-t / n)
        with torch.no_grad():
            x = data if batch else data[t:t + 1]
            bmu = model(x)
            d2 = ((model.grid.unsqueeze(0) - model.grid[bmu].unsqueeze(1)) ** 2).sum(-1)  # (B, units)
            h = torch.exp(-d2 / (2 * sigma ** 2))
            if batch:
                model.weight.copy_((h.T @ x) / h.sum(0).unsqueeze(1))
            else:
                model.weight.add_(lr * h[0].unsqueeze(1) * (x - model.weight))
        steps.append((bmu, model.weight.clone()))
    quantization = torch.cdist(data, model.weight).min(1)[0].mean()
    return dict(init=init, steps=steps, quantization=quantization, grad=model.weight.grad,
                requires_grad=model.weight.requires_grad)


@pytest.mark.parametrize("batch", [False, True])
def test_self_organizing_map(torch, batch):
    both(torch, som, batch=batch)
