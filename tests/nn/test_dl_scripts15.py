"""Deep-learning scripts of more kinds (an S4D-style diagonal state-space layer convolved through rfft, a Universal
Transformer sharing one encoder layer across steps, a PixelCNN-lite of type A / B masked convolutions, a discrete
latent model by hand-written straight-through Gumbel-softmax, a CLIP / SigLIP-lite with a clamped learnable
temperature, a conditional WGAN critic with one-sided and R1 gradient penalties, a Siamese change detector, EMA and
SWA weight averaging with a BatchNorm pass, model surgery, label propagation over a normalised graph Laplacian),
written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial
weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy;
draws each library makes its own way are compared by their properties)."""
import math
from collections import OrderedDict

import numpy as np
import pytest

from twins import both, grads, start


# ---- an S4D-style layer: complex diagonal state matrix, a kernel by exp of complex numbers, FFT convolution ------
def s4d(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(150)
    h, n, L = 3, 4, 10

    class S4D(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_dt = nn.Parameter(torch.tensor(rng.uniform(math.log(1e-2), math.log(1e-1), h)))
            self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(h, n // 2, dtype=torch.float64)))
            self.A_imag = nn.Parameter(math.pi * torch.arange(n // 2, dtype=torch.float64).repeat(h, 1))
            c = torch.complex(torch.tensor(rng.standard_normal((h, n // 2))),
                              torch.tensor(rng.standard_normal((h, n // 2))))
            self.C = nn.Parameter(torch.view_as_real(c * 0.5))
            self.D = nn.Parameter(torch.tensor(rng.standard_normal(h)))

        def kernel(self, length):
            dt = torch.exp(self.log_dt)
            C = torch.view_as_complex(self.C)
            A = torch.complex(-torch.exp(self.log_A_real), self.A_imag)
            dtA = A * dt.unsqueeze(-1)
            powers = dtA.unsqueeze(-1) * torch.arange(length, dtype=torch.float64)  # (h, n/2, L)
            C = C * (torch.exp(dtA) - 1.0) / A  # zero-order hold
            return 2 * torch.einsum("hn,hnl->hl", C, torch.exp(powers)).real

        def forward(self, u):  # (B, h, L)
            length = u.shape[-1]
            k_f = torch.fft.rfft(self.kernel(length), n=2 * length)
            u_f = torch.fft.rfft(u, n=2 * length)
            y = torch.fft.irfft(u_f * k_f, n=2 * length)[..., :length]
            return F.gelu(y + u * self.D.unsqueeze(-1))

    model = nn.Sequential(S4D(), nn.Flatten(), nn.Linear(h * L, 2))
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x = torch.tensor(rng.standard_normal((4, h, L)))
    y = torch.tensor(rng.standard_normal((4, 2)))
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    k = model[0].kernel(L)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), kernel=k,
                dtype=str(torch.view_as_complex(model[0].C).dtype).split(".")[-1])


def test_s4d_fft_convolution(torch):
    both(torch, s4d)


# ---- a Universal Transformer: one encoder layer applied T times, a timestep embedding added before each step ---
def universal_transformer(torch, init, norm_first):
    nn, F = torch.nn, torch.nn.functional
    d, vocab, T, t = 8, 7, 3, 5

    class UT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.step = nn.Embedding(T, d)
            self.layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=16, dropout=0.0, batch_first=True,
                                                    norm_first=norm_first, activation="gelu")
            self.head = nn.Linear(d, vocab)
            pos = torch.arange(t, dtype=torch.float64).unsqueeze(1)
            freq = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(1e4) / d))
            pe = torch.zeros(t, d, dtype=torch.float64)
            pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
            self.register_buffer("pe", pe, persistent=False)

        def forward(self, idx, pad):
            x = self.tok(idx) * math.sqrt(d)
            for s in range(T):  # the same weights at every step
                x = self.layer(x + self.pe + self.step.weight[s], src_key_padding_mask=pad)
            return self.head(x)

    model = UT()
    init = start(model, init)
    model.pe = model.pe.double()
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    rng = np.random.default_rng(151)
    idx = torch.tensor(rng.integers(1, vocab, (3, t)))
    pad = torch.tensor([[False] * t, [False] * 3 + [True] * 2, [False] * 4 + [True]])
    target = idx.flip(1).masked_fill(pad, -100)
    losses = []
    for _ in range(3):
        logits = model(idx, pad)
        loss = F.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out = model(idx, pad)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out,
                shared=sum(p.numel() for p in model.layer.parameters()))


@pytest.mark.parametrize("norm_first", [False, True])
def test_universal_transformer_shared_layer(torch, norm_first):
    both(torch, universal_transformer, norm_first=norm_first)


# ---- a PixelCNN-lite: masked convolutions (type A then B), per-pixel cross entropy over 8 levels, sampling ------
def pixelcnn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    levels, side = 8, 5

    class MaskedConv2d(nn.Conv2d):
        def __init__(self, kind, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.register_buffer("mask", torch.ones_like(self.weight))
            _, _, kh, kw = self.weight.shape
            self.mask[:, :, kh // 2, kw // 2 + (kind == "B"):] = 0
            self.mask[:, :, kh // 2 + 1:] = 0

        def forward(self, x):
            return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)

    model = nn.Sequential(MaskedConv2d("A", 1, 6, 5, padding=2), nn.ReLU(),
                          MaskedConv2d("B", 6, 6, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(6, levels, 1))
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(152)
    img = torch.tensor(rng.integers(0, levels, (3, side, side)))
    losses = []
    for _ in range(3):
        logits = model(img.unsqueeze(1).double() / (levels - 1))
        loss = F.cross_entropy(logits, img)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    # the receptive field: the logits at (2, 2) see only the pixels before it in raster order
    x = (img[:1].unsqueeze(1).double() / (levels - 1)).requires_grad_()
    model(x)[0, :, 2, 2].sum().backward()
    seen = x.grad[0, 0] != 0
    with torch.no_grad():
        sample = torch.zeros(2, 1, side, side, dtype=torch.float64)
        for i in range(2):
            for j in range(side):
                logits = model(sample / (levels - 1))
                sample[:, 0, i, j] = logits[:, :, i, j].argmax(1).double()
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), seen=seen,
                sample=sample, masks=[model[0].mask.sum(), model[2].mask.sum()])


def test_pixelcnn_masked_convolutions(torch):
    theirs, _ = both(torch, pixelcnn)
    assert not theirs["seen"][2, 2:].any() and not theirs["seen"][3:].any()


# ---- a discrete latent model: straight-through Gumbel-softmax written by hand, a KL to the uniform prior ------
def gumbel_latents(torch, init):
    nn, F = torch.nn, torch.nn.functional
    latents, K, d = 3, 4, 6

    def gumbel_hard(logits, u, tau):
        g = -torch.log(-torch.log(u))
        y_soft = F.softmax((logits + g) / tau, dim=-1)
        index = y_soft.max(-1, keepdim=True)[1]
        y_hard = torch.zeros_like(logits).scatter_(-1, index, 1.0)
        return y_hard - y_soft.detach() + y_soft

    enc = nn.Sequential(nn.Linear(d, 12), nn.Tanh(), nn.Linear(12, latents * K))
    dec = nn.Sequential(nn.Linear(latents * K, 12), nn.Tanh(), nn.Linear(12, d))
    model = nn.ModuleDict(dict(enc=enc, dec=dec))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(153)
    x = torch.tensor(rng.standard_normal((5, d)))
    losses, codes = [], []
    for step in range(3):
        tau = max(0.5, math.exp(-0.3 * step))
        logits = enc(x).view(-1, latents, K)
        z = gumbel_hard(logits, torch.tensor(rng.uniform(1e-6, 1.0, (5, latents, K))), tau)
        q = F.softmax(logits, dim=-1)
        kl = (q * (torch.log(q + 1e-10) + math.log(K))).sum((1, 2)).mean()
        loss = F.mse_loss(dec(z.flatten(1)), x) + 0.1 * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        codes.append(z.argmax(-1))
    # the library's own sampler draws its own noise: compared by what it must be
    logits = torch.tensor(rng.standard_normal((4, K)), requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5, hard=True)
    onehot = bool(((y == 0) | (y == 1)).all()) and bool((y.sum(-1) == 1).all())
    (y * torch.tensor(rng.standard_normal((4, K)))).sum().backward()
    rows_zero = torch.allclose(logits.grad.sum(-1), torch.zeros(4, dtype=torch.float64), atol=1e-12)
    soft = F.gumbel_softmax(logits, tau=2.0, dim=0)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), codes=codes,
                props=[onehot, rows_zero, bool(logits.grad.abs().sum() > 0), type(y.grad_fn).__name__,
                       str(y.dtype).split(".")[-1], bool((soft > 0).all()), tuple(soft.shape)],
                soft_sums=soft.sum(0))


def test_gumbel_softmax_discrete_latents(torch):
    theirs, _ = both(torch, gumbel_latents)
    assert theirs["props"][:3] == [True, True, True]


# ---- CLIP / SigLIP-lite: two towers, a temperature clamped through .data, symmetric CE beside a sigmoid loss ----
def clip_siglip(torch, init):
    nn, F = torch.nn, torch.nn.functional
    vocab, dim, b = 9, 5, 4

    class TextTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, 6, padding_idx=0)
            self.proj = nn.Linear(6, dim, bias=False)

        def forward(self, tokens):
            keep = (tokens != 0).unsqueeze(-1).double()
            return self.proj((self.emb(tokens) * keep).sum(1) / keep.sum(1))

    class Clip(nn.Module):
        def __init__(self):
            super().__init__()
            self.image = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.GELU(approximate="tanh"),
                                       nn.Linear(8, dim))
            self.text = TextTower()
            self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.01)))
            self.logit_bias = nn.Parameter(torch.tensor(-2.0))

        def forward(self, images, tokens):
            i = F.normalize(self.image(images), dim=-1)
            t = F.normalize(self.text(tokens), p=2.0, dim=1, eps=1e-12)
            return i @ t.T

    model = Clip()
    init = start(model, init)
    opt = torch.optim.SGD([{"params": [model.logit_scale], "lr": 1e-4},
                           {"params": [p for n, p in model.named_parameters() if n != "logit_scale"]}],
                          lr=0.1, momentum=0.9)
    rng = np.random.default_rng(154)
    images = torch.tensor(rng.standard_normal((b, 3, 2, 2)))
    tokens = torch.tensor(rng.integers(0, vocab, (b, 4)))
    tokens[:, 0] = 1 + torch.arange(b)
    labels = torch.arange(b)
    signs = 2 * torch.eye(b, dtype=torch.float64) - 1
    losses, scales = [], []
    for _ in range(4):
        sim = model(images, tokens)
        logits = sim * model.logit_scale.exp()
        clip_loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        sig_loss = -F.logsigmoid(signs * (logits + model.logit_bias)).sum() / b
        loss = clip_loss + 0.5 * sig_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.logit_scale.data.clamp_(max=math.log(20.0))
        losses.append([clip_loss, sig_loss])
        scales.append(model.logit_scale.item())
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), scales=scales,
                top1=model(images, tokens).argmax(1))


def test_clip_siglip_clamped_temperature(torch):
    _, ours = both(torch, clip_siglip)
    assert ours["scales"][0] == pytest.approx(math.log(20.0))  # the clamp's bound was reached


# ---- a conditional WGAN critic: one-sided (LP) penalty on interpolates, R1 on the real points, a projection ----
def wgan_lp_r1(torch, init):
    nn = torch.nn
    classes, d, nz, b = 3, 4, 2, 5

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(d, 8), nn.ELU(), nn.Linear(8, 8), nn.Softplus(beta=2.0))
            self.out = nn.Linear(8, 1)
            self.embed = nn.Embedding(classes, 8)

        def forward(self, x, y):
            h = self.body(x)
            return self.out(h).squeeze(1) + (self.embed(y) * h).sum(1)  # projection conditioning

    critic = Critic()
    gen = nn.Sequential(nn.Linear(nz + classes, 8), nn.SiLU(), nn.Linear(8, d))
    model = nn.ModuleList([critic, gen])
    init = start(model, init)
    opt_c = torch.optim.Adam(critic.parameters(), lr=2e-3, betas=(0.5, 0.9))
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-3, betas=(0.5, 0.9))
    rng = np.random.default_rng(155)

    def fake_batch(y):
        z = torch.tensor(rng.standard_normal((b, nz)))
        return gen(torch.cat([z, torch.nn.functional.one_hot(y, classes).double()], 1))

    losses = []
    for _ in range(2):
        real = torch.tensor(rng.standard_normal((b, d)) + 1.0)
        y = torch.tensor(rng.integers(0, classes, b))
        fake = fake_batch(y).detach()
        alpha = torch.tensor(rng.uniform(size=(b, 1)))
        interp = alpha * real + (1 - alpha) * fake
        interp.requires_grad_(True)
        real.requires_grad_(True)
        d_interp = critic(interp, y)
        g, = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp),
                                 create_graph=True, retain_graph=True)
        lp = (g.norm(2, dim=1) - 1).clamp(min=0).pow(2).mean()
        gp = ((g.norm(2, dim=1) - 1) ** 2).mean()
        d_real = critic(real, y)
        unused = torch.zeros(1, dtype=torch.float64, requires_grad=True)
        g_real, g_none = torch.autograd.grad([d_real.sum()], [real, unused], create_graph=True, allow_unused=True)
        r1 = g_real.pow(2).sum(1).mean()
        loss_c = critic(fake, y).mean() - d_real.mean() + 10 * lp + 0.5 * r1
        opt_c.zero_grad()
        loss_c.backward()
        opt_c.step()
        loss_g = -critic(fake_batch(y), y).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
        losses.append([loss_c, lp, gp, r1, loss_g, g_none is None])
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()))


def test_conditional_wgan_lp_r1_penalties(torch):
    both(torch, wgan_lp_r1)


# ---- a Siamese change detector: shared encoder, PairwiseDistance / CosineSimilarity / Bilinear, an Unflatten map
def siamese(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class ChangeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(),
                                         nn.Flatten(start_dim=1, end_dim=-1), nn.Linear(3 * 16, 6), nn.Identity())
            self.dist = nn.PairwiseDistance(p=2.0, eps=1e-6, keepdim=True)
            self.cos = nn.CosineSimilarity(dim=1, eps=1e-8)
            self.bilinear = nn.Bilinear(6, 6, 3)
            self.head = nn.Sequential(nn.Linear(5, 1), nn.Identity(54, unused="argument"))
            self.decoder = nn.Sequential(nn.Linear(6, 16), nn.Unflatten(1, (1, 4, 4)))

        def forward(self, a, b):
            fa, fb = self.encoder(a), self.encoder(b)
            dist, cos = self.dist(fa, fb), self.cos(fa, fb)
            feats = torch.cat([dist, cos.unsqueeze(1), self.bilinear(fa, fb)], dim=1)
            return self.head(feats).squeeze(1), self.decoder((fa - fb).abs()), dist.squeeze(1)

    model = ChangeNet()
    init = start(model, init)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.05)
    rng = np.random.default_rng(156)
    a = torch.tensor(rng.standard_normal((4, 1, 4, 4)))
    change = torch.tensor((rng.uniform(size=(4, 1, 4, 4)) < 0.3) * 1.0)
    change[:2] = 0
    b = a + change * 1.5
    changed = (change.flatten(1).sum(1) > 0).double()
    losses = []
    for _ in range(3):
        logit, cmap, dist = model(a, b)
        contrastive = (1 - changed) * dist.pow(2) + changed * F.relu(1.0 - dist).pow(2)
        loss = (F.binary_cross_entropy_with_logits(logit, changed)
                + F.binary_cross_entropy_with_logits(cmap, change) + contrastive.mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    logit, cmap, dist = model(a, b)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), logit=logit,
                cmap=cmap, dist=dist, keys=list(model.state_dict()), n=len(list(model.modules())))


def test_siamese_change_detector(torch):
    both(torch, siamese)


# ---- weight averaging: EMA through multi_avg_fn, SWA through avg_fn, update_bn over a DataLoader --------------
def averaging(torch, init, use_buffers):
    nn, F = torch.nn, torch.nn.functional
    swa_utils = torch.optim.swa_utils
    model = nn.Sequential(nn.Linear(3, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))
    init = start(model, init)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9), use_buffers=use_buffers)
    swa = swa_utils.AveragedModel(model, avg_fn=lambda avg, p, n: avg + (p - avg) / (n + 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    rng = np.random.default_rng(157)
    x = torch.tensor(rng.standard_normal((8, 3)))
    y = torch.tensor(rng.standard_normal((8, 2)))
    losses = []
    for _ in range(4):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update_parameters(model)
        swa.update_parameters(model)
        losses.append(loss)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x), batch_size=3)
    swa_utils.update_bn(loader, swa)
    if not use_buffers:
        swa_utils.update_bn(loader, ema)
    ema.eval()
    swa.eval()
    with torch.no_grad():
        outs = [ema(x), swa(x)]
    return dict(init=init, losses=losses, grads=grads(model), outs=outs,
                ema=list(ema.state_dict().values()), swa=list(swa.state_dict().values()),
                keys=list(ema.state_dict()), n=[ema.n_averaged, swa.n_averaged])


@pytest.mark.parametrize("use_buffers", [False, True])
def test_ema_swa_update_bn(torch, use_buffers):
    both(torch, averaging, use_buffers=use_buffers)


# ---- model surgery: swapped activations, frozen by name, renamed keys loaded non-strictly, custom init -------
def surgery(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 1), nn.ReLU())
            self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16, 6), nn.ReLU(), nn.Linear(6, 3))

        def forward(self, x):
            return self.classifier(self.features(x))

    props = []

    def init_weights(m):
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            nn.init.zeros_(m.bias)
            props.append(nn.init._calculate_fan_in_and_fan_out(m.weight))
        elif isinstance(m, nn.Linear) and m.out_features == 6:
            nn.init.orthogonal_(m.weight, gain=nn.init.calculate_gain("relu"))
            w = m.weight.detach()
            props.append(bool(torch.allclose(w @ w.T, 2.0 * torch.eye(6, dtype=w.dtype), atol=1e-10)))
        elif isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.5, a=-0.4, b=0.4)
            props.append(bool(m.weight.abs().max() <= 0.4))

    model = Net().double()
    model.apply(init_weights)
    init = start(model, init)
    for name, m in list(model.named_modules()):
        if isinstance(m, nn.ReLU):
            parent, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent), child, nn.LeakyReLU(0.1))
    for name, p in model.named_parameters():
        p.requires_grad_(not name.startswith("features.0."))
    model.register_buffer("scratch", torch.zeros(2))
    had = "scratch" in model.state_dict()
    del model.scratch
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    rng = np.random.default_rng(158)
    x = torch.tensor(rng.standard_normal((3, 2, 4, 4)))
    y = torch.tensor([0, 2, 1])
    losses = []
    for _ in range(2):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)

    class Renamed(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Conv2d(2, 4, 3), nn.LeakyReLU(0.1), nn.Conv2d(4, 4, 1),
                                          nn.LeakyReLU(0.1))
            self.head = nn.Linear(16, 3)

        def forward(self, x):
            return self.head(self.backbone(x).flatten(1))

    state = OrderedDict((k.replace("features.", "backbone."), v) for k, v in model.state_dict().items())
    state["backbone.extra"] = torch.ones(1)
    del state["backbone.2.bias"]
    moved = Renamed().double()
    moved.backbone[2].bias.data.fill_(0.25)
    with torch.no_grad():
        moved.head.weight.copy_(torch.tensor(rng.standard_normal((3, 16))))
        moved.head.bias.zero_()
    result = moved.load_state_dict(state, strict=False)
    summary = [type(m).__name__ for m in model.modules()]
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), props=props,
                had=had, keys=list(model.state_dict()), missing=result.missing_keys,
                unexpected=result.unexpected_keys, moved=list(moved.parameters()), summary=summary,
                frozen=[n for n, p in model.named_parameters() if not p.requires_grad])


def test_model_surgery_and_custom_init(torch):
    theirs, _ = both(torch, surgery)
    assert theirs["props"] == [(18, 36), (4, 4), True, True]


# ---- label propagation: a normalised adjacency, the Laplacian's spectrum, propagation and its powers -------------
def label_propagation(torch, init):
    rng = np.random.default_rng(159)
    n = 7
    upper = np.triu(rng.uniform(0.1, 1.0, (n, n)) * (rng.uniform(size=(n, n)) < 0.6), 1)
    w = torch.tensor(upper + upper.T + np.eye(n), requires_grad=True)
    deg = w.sum(1)
    d_inv_sqrt = deg.rsqrt()
    a_norm = torch.diag_embed(d_inv_sqrt) @ w @ torch.diag_embed(d_inv_sqrt)
    lap = torch.eye(n, dtype=torch.float64) - a_norm
    evals, evecs = torch.linalg.eigh(lap)
    signs = evecs.gather(0, evecs.abs().argmax(0, keepdim=True)).sign()
    evecs = evecs * signs
    fiedler = evals[1]
    fiedler.backward()
    labels = torch.full((n,), -1)
    labels[0], labels[3] = 0, 1
    y0 = torch.zeros(n, 2, dtype=torch.float64)
    y0[labels >= 0] = torch.nn.functional.one_hot(labels[labels >= 0], 2).double()
    a = a_norm.detach()
    f, alpha = y0.clone(), 0.8
    for _ in range(10):
        f = alpha * a @ f + (1 - alpha) * y0
    closed = (1 - alpha) * torch.linalg.solve(torch.eye(n, dtype=torch.float64) - alpha * a, y0)
    return dict(init=None, evals=evals, evecs=evecs, grad=w.grad, power=torch.linalg.matrix_power(a, 3),
                power0=torch.linalg.matrix_power(a, 0), f=f, pred=f.argmax(1), closed=closed,
                trace=torch.trace(lap), dtype=str(evals.dtype).split(".")[-1])


def test_label_propagation_laplacian(torch):
    theirs, _ = both(torch, label_propagation)
    np.testing.assert_allclose(theirs["evals"][0].item(), 0.0, atol=1e-12)
