"""Deep-learning scripts of more kinds, written once against a `torch`-like module and run twice: on
PyTorch, then on minigrad from PyTorch's initial weights (copied across as numpy arrays). Losses,
gradients, parameters and decoded outputs must agree closely (float64 throughout)."""
import math

import numpy as np
import pytest

import minigrad
from twins import SCRIPT_TOL as TOL, agree, both, numpy_state, start  # noqa: F401


def grads(model):
    return [p.grad.clone() if p.grad is not None else np.zeros(()) for p in model.parameters()]


# ---- nn.Transformer translation: masks, padding, greedy decoding ------------------------------------------
def translation(torch, init):
    nn = torch.nn
    PAD, BOS, EOS, V = 0, 1, 2, 12

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(V, 16, padding_idx=PAD)
            self.tgt_emb = nn.Embedding(V, 16, padding_idx=PAD)
            self.tf = nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                     dim_feedforward=32, dropout=0.0, batch_first=True)
            self.out = nn.Linear(16, V)

        def forward(self, src, tgt):
            tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(1), dtype=torch.float64)
            h = self.tf(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=tgt_mask,
                        src_key_padding_mask=src == PAD, tgt_key_padding_mask=tgt == PAD,
                        memory_key_padding_mask=src == PAD)
            return self.out(h)

    model = Seq2Seq()
    init = start(model, init)
    rng = np.random.default_rng(1)
    src = rng.integers(3, V, (4, 6))
    src[1, 4:] = PAD
    src[3, 3:] = PAD
    tgt = np.concatenate([np.full((4, 1), BOS), src[:, ::-1].copy(), np.full((4, 1), PAD)], axis=1)
    tgt[np.arange(4), (src != PAD).sum(1) + 1] = EOS
    src, tgt = torch.tensor(src), torch.tensor(tgt.copy())
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.9, 0.98), eps=1e-9)
    crit = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)
    losses, norms = [], []
    for _ in range(3):
        logits = model(src, tgt[:, :-1])
        loss = crit(logits.reshape(-1, V), tgt[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        memory = model.tf.encoder(model.src_emb(src), src_key_padding_mask=src == PAD)
        ys = torch.full((4, 1), BOS, dtype=torch.long)
        for _ in range(5):
            mask = nn.Transformer.generate_square_subsequent_mask(ys.size(1), dtype=torch.float64)
            h = model.tf.decoder(model.tgt_emb(ys), memory, tgt_mask=mask, tgt_is_causal=True,
                                 memory_key_padding_mask=src == PAD)
            nxt = model.out(h[:, -1]).argmax(dim=-1, keepdim=True)
            ys = torch.cat([ys, nxt], dim=1)
        last = model.out(h[:, -1]).log_softmax(-1)
    return dict(init=init, losses=losses, norms=norms, params=list(model.parameters()), ys=ys, last=last)


def test_transformer_translation(torch):
    both(torch, translation)


# ---- a bidirectional LSTM classifier over packed, unsorted batches -----------------------------------------
def bilstm(torch, init):
    nn = torch.nn
    from_rnn = nn.utils.rnn

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8, padding_idx=0)
            self.lstm = nn.LSTM(8, 6, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(12, 3)

        def forward(self, x, lengths):
            packed = from_rnn.pack_padded_sequence(self.emb(x), lengths, batch_first=True, enforce_sorted=False)
            out, (h, c) = self.lstm(packed)
            padded, lens = from_rnn.pad_packed_sequence(out, batch_first=True, total_length=x.size(1) + 2)
            feats = torch.cat([h[-2], h[-1]], dim=1)
            mask = (torch.arange(padded.size(1))[None, :] < lens[:, None]).unsqueeze(-1)
            mean = (padded * mask).sum(1) / lens[:, None].to(padded.dtype)
            return self.fc(feats) + mean.sum(-1, keepdim=True), padded, lens

    model = Classifier()
    init = start(model, init)
    rng = np.random.default_rng(2)
    lengths = np.array([3, 7, 1, 5, 7])
    x = rng.integers(1, 20, (5, 7))
    for i, n in enumerate(lengths):
        x[i, n:] = 0
    x, y = torch.tensor(x), torch.tensor(rng.integers(0, 3, 5))
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, nesterov=True)
    losses = []
    for _ in range(3):
        logits, padded, lens = model(x, torch.tensor(lengths))
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        g = grads(model)
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, grads=g, padded=padded, lens=lens, params=list(model.parameters()))


def test_bilstm_packed_classifier(torch):
    both(torch, bilstm)


# ---- a Siamese embedding net under metric-learning losses -------------------------------------------------
def siamese(torch, init):
    nn, F = torch.nn, torch.nn.functional
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
    init = start(net, init)
    rng = np.random.default_rng(3)
    a, p, n = (torch.tensor(rng.standard_normal((8, 6))) for _ in range(3))
    same = torch.tensor(rng.choice([-1.0, 1.0], 8))
    cos_dist = lambda u, v: 1.0 - F.cosine_similarity(u, v)  # noqa: E731
    losses_fns = [nn.TripletMarginLoss(margin=0.5, p=2, swap=True),
                  nn.TripletMarginWithDistanceLoss(distance_function=cos_dist, margin=0.3),
                  nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1.0), swap=True)]
    cos = nn.CosineEmbeddingLoss(margin=0.2, reduction="sum")
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2, weight_decay=0.1, amsgrad=True)
    out = []
    for _ in range(3):
        ea, ep, en = net(a), net(p), net(n)
        terms = [fn(ea, ep, en) for fn in losses_fns] + [cos(ea, ep, same)]
        d = F.pairwise_distance(ea, ep, keepdim=False)
        label = (same > 0).to(d.dtype)  # contrastive loss by hand: pull pairs together, push others past 1
        terms.append((label * d.pow(2) + (1 - label) * torch.clamp(1.0 - d, min=0.0).pow(2)).mean() / 2)
        loss = sum(terms)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(torch.stack(terms))
    return dict(init=init, terms=out, params=list(net.parameters()))


def test_siamese_metric_losses(torch):
    both(torch, siamese)


# ---- graph networks by index_add_ / scatter_reduce_ message passing -----------------------------------------
def graph(torch, init):
    nn, F = torch.nn, torch.nn.functional
    src = torch.tensor([0, 1, 1, 2, 3, 3, 4, 5, 5, 0])
    dst = torch.tensor([1, 0, 2, 1, 4, 2, 3, 0, 4, 5])
    N = 6

    class GNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gcn = nn.Linear(5, 8)
            self.gin = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8))
            self.eps = nn.Parameter(torch.zeros(1))
            self.sage_self, self.sage_nb = nn.Linear(8, 4), nn.Linear(8, 4, bias=False)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            deg = torch.zeros(N, dtype=x.dtype).index_add_(0, dst, torch.ones(dst.numel(), dtype=x.dtype)) + 1
            norm = (deg[src] * deg[dst]).rsqrt()
            h = self.gcn(x)
            agg = torch.zeros_like(h).index_add_(0, dst, h[src] * norm[:, None]) + h / deg[:, None]
            h = F.relu(agg)
            summed = torch.zeros_like(h).index_add(0, dst, h[src])
            h = self.gin((1 + self.eps) * h + summed)
            mean = torch.zeros_like(h).scatter_reduce_(0, dst[:, None].expand(-1, h.size(1)), h[src],
                                                       reduce="mean", include_self=False)
            top = h.new_full(h.shape, -5.0).scatter_reduce(0, dst[:, None].expand(-1, h.size(1)), h[src],
                                                           reduce="amax", include_self=False)
            h = F.elu(self.sage_self(h) + self.sage_nb(mean + top))
            h = F.normalize(h, dim=-1)
            return self.head(h)

    model = GNN()
    init = start(model, init)
    rng = np.random.default_rng(4)
    x = torch.tensor(rng.standard_normal((N, 5)))
    y = torch.tensor([0, 1, 1, 0, 1, 0])
    train_mask = torch.tensor([True, True, False, True, False, True])
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.5, centered=True)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x)[train_mask], y[train_mask])
        opt.zero_grad()
        loss.backward()
        g = grads(model)
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, grads=g, params=list(model.parameters()))


def test_graph_message_passing(torch):
    both(torch, graph)


# ---- a DDPM training step and sampler with a tiny conv UNet -------------------------------------------------
def ddpm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    T = 10

    def timestep_embedding(t, dim):
        half = dim // 2  # sinusoids at geometrically spaced frequencies, as in "Attention is all you need"
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float64) / half)
        args = t[:, None].to(torch.float64) * freqs[None]
        return torch.cat([torch.sin(args), torch.cos(args)], dim=-1)

    class Block(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(cin, cout, 3, padding=1), nn.Conv2d(cout, cout, 3, padding=1)
            self.norm = nn.GroupNorm(2, cout)
            self.temb = nn.Linear(8, cout)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, emb):
            h = F.silu(self.norm(self.conv1(x)))
            h = h + self.temb(emb)[:, :, None, None]
            return self.conv2(h) + self.skip(x)

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.t_mlp = nn.Sequential(nn.Linear(8, 8), nn.SiLU(), nn.Linear(8, 8))
            self.down = Block(1, 4)
            self.mid = Block(4, 4)
            self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
            self.dec = Block(8, 4)
            self.out = nn.Conv2d(4, 1, 1)

        def forward(self, x, t):
            emb = self.t_mlp(timestep_embedding(t, 8))
            d = self.down(x, emb)
            m = self.mid(F.avg_pool2d(d, 2), emb)
            u = torch.cat([self.up(m) + F.interpolate(m, scale_factor=2, mode="nearest"), d], dim=1)
            return self.out(self.dec(u, emb))

    model = UNet()
    init = start(model, init)
    betas = torch.linspace(1e-4, 0.2, T, dtype=torch.float64)
    alphas = 1.0 - betas
    abar = torch.cumprod(alphas, dim=0)
    rng = np.random.default_rng(5)
    x0 = torch.tensor(rng.standard_normal((3, 1, 8, 8)))
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    losses = []
    for _ in range(2):
        t = torch.tensor(rng.integers(0, T, 3))
        noise = torch.tensor(rng.standard_normal((3, 1, 8, 8)))
        a = abar.gather(0, t).view(-1, 1, 1, 1)
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        loss = F.mse_loss(model(xt, t), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    x = torch.tensor(rng.standard_normal((2, 1, 8, 8)))
    with torch.inference_mode():
        for i in reversed(range(T)):
            t = torch.full((2,), i, dtype=torch.long)
            eps = model(x, t)
            mean = (x - betas[i] / (1 - abar[i]).sqrt() * eps) / alphas[i].sqrt()
            z = torch.tensor(rng.standard_normal((2, 1, 8, 8))) if i > 0 else torch.zeros_like(x)
            x = mean + betas[i].sqrt() * z
    return dict(init=init, losses=losses, abar=abar, sample=x.clamp(-3, 3), params=list(model.parameters()))


def test_ddpm_step_and_sampler(torch):
    both(torch, ddpm)


# ---- a NeRF-like positional-encoding MLP with volume rendering ----------------------------------------------
def nerf(torch, init):
    nn, F = torch.nn, torch.nn.functional
    L = 4

    def encode(x):
        freqs = 2.0 ** torch.arange(L, dtype=x.dtype) * math.pi
        xb = x[..., None] * freqs  # (..., 3, L)
        return torch.cat([x, torch.sin(xb).flatten(-2), torch.cos(xb).flatten(-2)], dim=-1)

    mlp = nn.Sequential(nn.Linear(3 + 6 * L, 32), nn.ReLU(), nn.Linear(32, 32), nn.Softplus(beta=2.0),
                        nn.Linear(32, 4))
    init = start(mlp, init)
    rng = np.random.default_rng(6)
    origins = torch.tensor(rng.standard_normal((5, 3)) * 0.1)
    dirs = F.normalize(torch.tensor(rng.standard_normal((5, 3))), dim=-1)
    near, far, S = 0.5, 2.0, 12
    t = torch.linspace(near, far, S, dtype=torch.float64).expand(5, S).clone()
    t = t + torch.tensor(rng.uniform(0, (far - near) / S, (5, S)))  # stratified samples
    target = torch.tensor(rng.uniform(0, 1, (5, 3)))
    opt = torch.optim.Adam(mlp.parameters(), lr=5e-3)
    out = []
    for _ in range(3):
        pts = origins[:, None] + dirs[:, None] * t[..., None]
        raw = mlp(encode(pts))
        rgb, sigma = torch.sigmoid(raw[..., :3]), F.relu(raw[..., 3])
        delta = torch.cat([t[:, 1:] - t[:, :-1], torch.full((5, 1), 1e10, dtype=t.dtype)], dim=-1)
        alpha = 1.0 - torch.exp(-sigma * delta)
        trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha + 1e-10], dim=-1), -1)[:, :-1]
        weights = alpha * trans
        # the same transmittance by an exclusive cumulative sum of optical depth
        depth_sum = torch.cumsum(sigma * delta, dim=-1) - sigma * delta
        color = (weights[..., None] * rgb).sum(-2)
        depth = (weights * t).sum(-1) / weights.sum(-1).clamp_min(1e-8)
        loss = F.mse_loss(color, target) + 1e-3 * torch.exp(-depth_sum).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out.append(torch.stack([loss, depth.sum(), weights.sum()]))
    return dict(init=init, out=out, params=list(mlp.parameters()))


def test_nerf_volume_rendering(torch):
    both(torch, nerf)


# ---- a speech front end: stft, a mel filterbank by matmul, istft ---------------------------------------------
def speech(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_fft, hop, n_mels, sr = 32, 8, 6, 800

    def mel_filterbank():
        hz_to_mel = lambda f: 2595.0 * np.log10(1.0 + f / 700.0)  # noqa: E731
        mels = np.linspace(hz_to_mel(0.0), hz_to_mel(sr / 2), n_mels + 2)
        hz = 700.0 * (10 ** (mels / 2595.0) - 1.0)
        bins = np.linspace(0, sr / 2, n_fft // 2 + 1)
        fb = np.zeros((n_fft // 2 + 1, n_mels))
        for m in range(n_mels):
            lo, mid, hi = hz[m], hz[m + 1], hz[m + 2]
            fb[:, m] = np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0, None)
        return torch.tensor(fb)

    fb = mel_filterbank()
    window = torch.hann_window(n_fft, dtype=torch.float64)
    model = nn.Sequential(nn.Conv1d(n_mels, 8, 3, padding=1), nn.BatchNorm1d(8), nn.ReLU(),
                          nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(8, 3))
    init = start(model, init)
    rng = np.random.default_rng(7)
    wave = torch.tensor(rng.standard_normal((4, 160)), requires_grad=True)
    y = torch.tensor([0, 2, 1, 2])
    spec = torch.stft(wave, n_fft, hop_length=hop, window=window, center=True, pad_mode="reflect",
                      onesided=True, return_complex=True)
    power = spec.abs().pow(2)  # (batch, freq, frames)
    logmel = torch.log(torch.matmul(power.transpose(1, 2), fb).transpose(1, 2) + 1e-6)
    loss = F.cross_entropy(model(logmel), y)
    loss.backward()
    back = torch.istft(spec.detach(), n_fft, hop_length=hop, window=window, center=True, length=160)
    half = torch.stft(wave.detach(), 16, hop_length=4, window=torch.hann_window(16, periodic=False,
                      dtype=torch.float64), center=False, onesided=False, return_complex=True)
    return dict(init=init, loss=loss, wave_grad=wave.grad, grads=grads(model), back=back,
                running=model[1].running_var, half_re=half.real, half_im=half.imag)


def test_speech_stft_mel_istft(torch):
    both(torch, speech)


# ---- a text CNN over pretrained embeddings --------------------------------------------------------------
def text_cnn(torch, init, freeze):
    nn, F = torch.nn, torch.nn.functional
    vectors = torch.tensor(np.random.default_rng(8).standard_normal((30, 10)))

    class TextCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding.from_pretrained(vectors, freeze=freeze, padding_idx=0)
            self.convs = nn.ModuleList(nn.Conv1d(10, 4, k) for k in (2, 3, 4))
            self.fc = nn.Linear(12, 2)

        def forward(self, x):
            e = self.emb(x).transpose(1, 2)  # (batch, dim, time)
            pooled = [F.max_pool1d(F.relu(c(e)), c(e).size(2)).squeeze(2) for c in self.convs]
            return self.fc(F.dropout(torch.cat(pooled, 1), 0.5, training=False))

    model = TextCNN()
    init = start(model, init)
    rng = np.random.default_rng(9)
    x, y = torch.tensor(rng.integers(0, 30, (6, 9))), torch.tensor(rng.integers(0, 2, 6))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adagrad(trainable, lr=0.1)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, n=len(trainable), emb=model.emb.weight,
                emb_grad=model.emb.weight.grad if model.emb.weight.grad is not None else np.zeros(()),
                params=list(model.parameters()))


@pytest.mark.parametrize("freeze", [True, False])
def test_text_cnn_pretrained_embeddings(torch, freeze):
    both(torch, text_cnn, freeze=freeze)


# ---- custom autograd.Functions: the ctx's whole vocabulary ---------------------------------------------------
def functions(torch):
    Function, once_differentiable = torch.autograd.Function, torch.autograd.function.once_differentiable
    seen = {}

    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort(dim=-1)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            (i,) = ctx.saved_tensors
            return torch.zeros_like(gv).scatter(-1, i, gv)

    class Pair(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.set_materialize_grads(False)
            return x * 2, y * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen["none"] = (ga is None, gb is None)
            return (None if ga is None else ga * 2), (None if gb is None else gb * 3)

    class Exp(Function):  # saves its output
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Relu_(Function):
        @staticmethod
        def forward(ctx, x):
            x.clamp_(min=0)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (x > 0).to(g.dtype)

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, w, k):
            ctx.k = k
            ctx.save_for_backward(x, w)
            return x * w * k

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            seen.setdefault("needs", []).append(ctx.needs_input_grad)
            return (g * w * ctx.k if ctx.needs_input_grad[0] else None,
                    (g * x * ctx.k).sum(0) if ctx.needs_input_grad[1] else None, None)

    rng = np.random.default_rng(10)
    x = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    v, i = SortWithIndex.apply(x)
    (v * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    out = dict(index_requires_grad=i.requires_grad, sort_grad=x.grad.clone())
    a, b = Pair.apply(x, x * 1)
    a.sum().backward()
    out.update(pair_grad=x.grad.clone(), none=seen["none"])
    (g,) = torch.autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    out["exp_grad2"] = torch.autograd.grad(g.sum(), x)[0]
    z = x.detach().clone().requires_grad_()
    r = Relu_.apply(z * 1.0)
    r.pow(2).sum().backward()
    out.update(relu_grad=z.grad, relu_node=type(r.grad_fn).__name__)
    (h,) = torch.autograd.grad(Relu_.apply(z * 1.0).sum(), z, create_graph=True)  # constant incoming grad
    out["once_constant"] = h.requires_grad
    (h,) = torch.autograd.grad(Relu_.apply(z * 1.0).pow(2).sum(), z, create_graph=True)
    out["once_requires_grad"] = h.requires_grad
    with pytest.raises(RuntimeError) as err:
        h.sum().backward()
    out["once_error"] = str(err.value)
    w = torch.tensor(rng.standard_normal(4), requires_grad=True)
    Scale.apply(x.detach(), w, 2.5).sum().backward()
    Scale.apply(x, w.detach(), 2.5).sum().backward()
    out.update(scale_w=w.grad, scale_x=x.grad, needs=seen["needs"])
    with pytest.raises(RuntimeError) as err:
        Relu_.apply(torch.ones(3, requires_grad=True))
    out["dirty_leaf_error"] = str(err.value)
    return out


def test_custom_functions(torch):
    theirs, ours = functions(torch), functions(minigrad)
    assert list(ours) == list(theirs)
    for k, t in theirs.items():
        agree(ours[k], t, k)


# ---- feature extraction and gradient surgery by hooks ------------------------------------------------------
def hooks(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(48, 5), nn.Tanh(), nn.Linear(5, 2))
    init = start(model, init)
    feats, log = {}, []

    def keep(name):
        def hook(module, args, kwargs, output):
            feats[name] = output.detach().clone()
            log.append(("forward", name, len(args), sorted(kwargs)))
        return hook

    def double_input(module, args):
        log.append(("pre", type(module).__name__))
        return (args[0] * 2,)

    def halve_grad_input(module, grad_input, grad_output):
        log.append(("backward", [None if g is None else tuple(g.shape) for g in grad_input]))
        return tuple(None if g is None else g * 0.5 for g in grad_input)

    def triple_grad_output(module, grad_output):
        log.append(("backward pre", type(module).__name__))
        return (grad_output[0] * 3,)

    handles = [m.register_forward_hook(keep(n), with_kwargs=True) for n, m in model.named_children()]
    handles += [model[3].register_forward_pre_hook(double_input),
                model[4].register_full_backward_hook(halve_grad_input),
                model[5].register_full_backward_pre_hook(triple_grad_output)]
    x = torch.tensor(np.random.default_rng(11).standard_normal((2, 1, 6, 6)), requires_grad=True)
    clip = x.register_hook(lambda g: g.clamp(-0.01, 0.01))
    y = model(x)
    seen = []
    y.register_hook(lambda g: seen.append(g.clone()))
    y.pow(2).sum().backward()
    out = dict(init=init, y=y, x_grad=x.grad.clone(), grads=grads(model), feats=[feats[k] for k in sorted(feats)],
               log=list(log), seen=seen)
    for h in handles + [clip]:
        h.remove()
    x.grad = None
    model.zero_grad()
    log.clear()
    model(x).pow(2).sum().backward()  # the handles removed: plain gradients, nothing logged
    return dict(out, log_after=list(log), x_grad_after=x.grad, grads_after=grads(model))


def test_hooks_feature_extraction(torch):
    both(torch, hooks)


# ---- gradient accumulation under autocast with a GradScaler ------------------------------------------------
def accumulate(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 3))
    init = start(model, init)  # (float64 is not autocast's to lower: PyTorch runs it as float64 too)
    rng = np.random.default_rng(12)
    x, y = torch.tensor(rng.standard_normal((4, 4, 6))), torch.tensor(rng.integers(0, 3, (4, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2)
    seen, losses, scales = [], [], []
    for step in range(3):
        for k in range(4):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                out = model(x[k])
                seen.append((torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu")).split(".")[-1],
                             str(out.dtype).split(".")[-1]))
                loss = F.cross_entropy(out, y[k]) / 4
            scaler.scale(loss).backward()
            losses.append(loss.item())
        if step == 1:
            model[0].weight.grad[0, 0] = float("inf")  # this step is skipped and the scale backs off
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        scales.append(scaler.get_scale())
    state = scaler.state_dict()
    again = torch.amp.GradScaler("cpu")
    again.load_state_dict(state)
    return dict(init=init, seen=seen, losses=losses, scales=scales, state=sorted(state.values()),
                again=sorted(again.state_dict().values()), params=list(model.parameters()))


def test_autocast_gradient_accumulation(torch):
    both(torch, accumulate)


# ---- training through parametrizations ----------------------------------------------------------------------
def parametrized(torch, init):
    nn, P = torch.nn, torch.nn.utils.parametrizations
    model = nn.Sequential(nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 4), nn.Linear(4, 3))
    P.weight_norm(model[0], name="weight", dim=0)
    P.orthogonal(model[2])
    P.spectral_norm(model[3], n_power_iterations=2)
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(13).standard_normal((6, 5)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    w = model[2].weight
    model.eval()
    return dict(init=init, keys=list(model.state_dict()), names=[n for n, _ in model.named_parameters()],
                losses=losses, params=list(model.parameters()), gram=w @ w.T, sn=model[3].weight, eval=model(x))


def test_parametrizations_training(torch):
    both(torch, parametrized)


# ---- model.apply(init_fn), state_dict round trips, save/load through BytesIO --------------------------------
def initialize(torch, init):
    import io

    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4)
            self.rnn, self.fc = nn.GRU(4, 5), nn.Linear(5, 3)
            self.register_buffer("steps", torch.zeros((), dtype=torch.long))
            self.register_buffer("scratch", torch.ones(2), persistent=False)

    def init_fn(m):
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02, a=-0.04, b=0.04)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            nn.init.constant_(m.bias, 0.1)
        elif isinstance(m, nn.GRU):
            for n, p in m.named_parameters():
                if "weight_hh" in n:
                    nn.init.orthogonal_(p, gain=nn.init.calculate_gain("tanh"))
                elif "weight_ih" in n:
                    nn.init.xavier_uniform_(p, gain=nn.init.calculate_gain("sigmoid"))
                else:
                    nn.init.ones_(p)

    net = Net()
    net.apply(init_fn)
    whh = net.rnn.weight_hh_l0.detach().numpy()
    facts = [bool(np.abs(net.fc.weight.detach().numpy()).max() <= 0.04),
             bool(np.allclose(whh.T @ whh, (5 / 3) ** 2 * np.eye(5))),
             bool(np.allclose(net.conv.bias.detach().numpy(), 0.1))]
    gains = [nn.init.calculate_gain(*a) for a in [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                                   ("leaky_relu",), ("leaky_relu", 0.2), ("selu",)]]
    kept = net.state_dict(prefix="model.", keep_vars=True)
    state = net.state_dict()
    partial = {k: v for k, v in state.items() if not k.startswith("fc.")}
    partial["extra.weight"] = torch.zeros(1)
    report = net.load_state_dict(partial, strict=False)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(partial)
    buf = io.BytesIO()
    torch.save({"model": net.state_dict(), "step": 3, "meta": {"lr": 0.1}}, buf)
    buf.seek(0)
    ckpt = torch.load(buf, weights_only=True)
    net2 = Net()
    loaded = net2.load_state_dict(ckpt["model"])
    same = all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(state.values(), net2.state_dict().values()))
    return dict(init=None, facts=facts, gains=gains, modules=[n for n, _ in net.named_modules()],
                buffers=[n for n, _ in net.named_buffers()], kept=[(k, type(v).__name__) for k, v in kept.items()],
                keys=list(state), report=repr(report), error=str(err.value), extra=(ckpt["step"], ckpt["meta"]["lr"]),
                loaded=repr(loaded), same=same)


def test_init_and_state_dict_round_trips(torch):
    theirs, ours = initialize(torch, None), initialize(minigrad, None)
    for k in theirs:
        assert ours[k] == theirs[k], k


# ---- parameter groups under chained, cyclic and plateau schedules, resumed from state dicts ---------------------
SCHEDULES = {
    "sequential": ("SGD", lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1, total_iters=3),
                                                           S.ExponentialLR(o, gamma=0.9)], milestones=[3])),
    "chained": ("SGD", lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=2),
                                                         S.ExponentialLR(o, gamma=0.8)])),
    "one_cycle": ("SGD", lambda S, o: S.OneCycleLR(o, max_lr=[0.5, 0.2, 1.0], total_steps=8, pct_start=0.25,
                                                   three_phase=True)),
    "cyclic": ("SGD", lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2, 0.3], step_size_up=2,
                                              mode="triangular2")),
    "cyclic_exp_range": ("SGD", lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3,
                                                        mode="exp_range", gamma=0.9)),
    "warm_restarts": ("AdamW", lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-3)),
    "plateau": ("Adam", lambda S, o: S.ReduceLROnPlateau(o, factor=0.5, patience=1, threshold=0.5, cooldown=1,
                                                         min_lr=[0.001, 0.002, 0.003])),
    "lambda": ("SGD", lambda S, o: S.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (1 + e), lambda e: 1.0])),
}


def scheduled(torch, init, name):
    nn, S = torch.nn, torch.optim.lr_scheduler
    kind, make = SCHEDULES[name]
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    init = start(model, init)
    x = torch.tensor(np.random.default_rng(14).standard_normal((8, 3)))

    def optimizer():
        groups = [{"params": model[0].parameters(), "lr": 0.1, "weight_decay": 0.01}, {"params": [model[2].weight], "lr": 0.05}]
        extra = dict(momentum=0.9) if kind == "SGD" else {}
        o = getattr(torch.optim, kind)(groups, lr=0.02, **extra)
        o.add_param_group({"params": [model[2].bias], "lr": 0.3, "weight_decay": 0.0})
        return o

    opt = optimizer()
    sched = make(S, opt)
    lrs, losses = [], []
    for step in range(8):
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step(1.0 if step < 2 else 2.0) if name == "plateau" else sched.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        losses.append(loss.item())
        if step == 3 and name != "lambda":  # (LambdaLR's state holds no lambdas: nothing to resume them from)
            state, opt_state = sched.state_dict(), opt.state_dict()
            opt = optimizer()
            sched = make(S, opt)
            sched.load_state_dict(state)
            opt.load_state_dict(opt_state)
    return dict(init=init, lrs=lrs, losses=losses, last=sched.get_last_lr(), params=list(model.parameters()))


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_param_groups_and_schedules(torch, name):
    both(torch, scheduled, name=name)


# ---- torch.utils.data: splits, samplers, concatenation, collation ---------------------------------------------
def loading(torch, init):
    import collections

    D = torch.utils.data
    Point = collections.namedtuple("Point", "x label")

    class Squares(D.Dataset):
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            return {"x": torch.tensor([float(i), float(i * i)]), "y": i % 3, "name": f"s{i}", "p": Point(np.float64(i), i)}

    class Stream(D.IterableDataset):
        def __iter__(self):
            info = D.get_worker_info()  # None in the main process (num_workers=0)
            return iter(range(0 if info is None else info.id, 5))

    name = lambda t: str(t.dtype).split(".")[-1]  # noqa: E731
    ds = Squares(10)
    a, b, c = D.random_split(ds, [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(0))
    cat = D.ConcatDataset([D.Subset(ds, [1, 3, 5]), Squares(2)])
    first = next(iter(D.DataLoader(ds, batch_size=4)))
    mixed = D.default_collate([(1, 2.5, True, "a", np.array([1, 2])), (3, 4.5, False, "b", np.array([3, 4]))])

    def collate(batch):
        return torch.stack([s["x"] for s in batch]).sum(0), len(batch)

    return dict(
        init=None, split=[len(a), len(b), len(c), sorted(a.indices + b.indices + c.indices)],
        concat=[len(cat), cat[3]["name"], cat[2]["name"], cat.cumulative_sizes],
        batches=[list(D.BatchSampler(D.SequentialSampler(range(7)), 3, drop_last=False)),
                 list(D.BatchSampler(range(7), batch_size=3, drop_last=True))],
        weighted=list(D.WeightedRandomSampler([0.0, 0.0, 1.0, 0.0], num_samples=5)),
        first=[sorted(first), name(first["x"]), first["x"].tolist(), first["y"].tolist(), name(first["y"]),
               first["name"], type(first["p"]).__name__, name(first["p"].x), first["p"].label.tolist()],
        sizes=[tuple(s["x"].shape) for s in D.DataLoader(ds, batch_size=4)],
        mixed=[(type(v).__name__, name(v) if hasattr(v, "dtype") else "", v.tolist() if hasattr(v, "tolist") else v)
               for v in mixed],
        stream=[t.tolist() for t in D.DataLoader(Stream(), batch_size=2, num_workers=0)],
        collated=[(s.tolist(), n) for s, n in D.DataLoader(ds, batch_size=3, collate_fn=collate, drop_last=True)],
        sampled=[s["y"].tolist() for s in D.DataLoader(ds, batch_sampler=[[0, 1], [5, 2, 9]])])


def test_data_utilities(torch):
    theirs, ours = loading(torch, None), loading(minigrad, None)
    for k in theirs:
        assert ours[k] == theirs[k], k


# ---- bad input met in these scripts: PyTorch's texts ------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda t: t.istft(t.zeros(9, 5, dtype=t.float64), 16, window=t.hann_window(16, dtype=t.float64)),
    lambda t: t.nn.GroupNorm(3, 4),
], ids=["istft_of_a_real_spectrum", "group_norm_groups"])
def test_errors_as_pytorch(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(type(theirs.value)) as ours:
        call(minigrad)
    assert str(ours.value) == str(theirs.value)
