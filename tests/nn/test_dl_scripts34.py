"""Audio, speech, signal and time-series scripts as people write them (SpecAugment's frequency and time masks over a
log-mel spectrogram whose filterbank is built by hand from FFT bins, a multi-resolution STFT loss, MFCCs by a hand-made
DCT-II with deltas by a replicate-padded conv1d, LPC by an FFT autocorrelation and a Levinson-Durbin recursion, a
soft-DTW divergence by its dynamic program, a temporal fusion transformer's gated residual networks and variable
selection, a seq2seq forecaster under scheduled sampling, a 1-D U-Net denoiser on an SI-SDR loss, a Conv-TasNet-like
separator under permutation-invariant training, SincNet's learned band-pass filters, RevIN around a PatchTST-like
encoder, LSTNet's skip-GRU and highway, DLinear's moving-average decomposition beside Autoformer's FFT
auto-correlation, an x-vector TDNN with statistics pooling and an additive-margin softmax, GCC-PHAT delays with a
Hilbert envelope), written once against a `torch`-like module and run twice: on PyTorch, then on minigrad from
PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64 throughout; random
draws by numpy where the two libraries' streams differ by design)."""
import itertools
import math

import numpy as np

from twins import both, grads, start


def tones(seed, n, length, sr, freqs=(50.0, 120.0, 230.0), noise=0.05):
    """n noisy sums of two sines at random amplitudes and phases: (waves, the index of the louder tone)."""
    rng = np.random.default_rng(seed)
    t = np.arange(length) / sr
    amps = rng.uniform(0.2, 1.0, (n, len(freqs)))
    phase = rng.uniform(0, 2 * np.pi, (n, len(freqs)))
    waves = (amps[:, :, None] * np.sin(2 * np.pi * np.array(freqs)[None, :, None] * t + phase[:, :, None])).sum(1)
    return waves + noise * rng.standard_normal((n, length)), amps.argmax(1)


def bin_filterbank(torch, sr, n_fft, n_mels):
    """Triangular mel filters laid on FFT bins (the Kaldi / HTK recipe): (n_fft // 2 + 1, n_mels)."""
    lo, hi = 0.0, 2595.0 * math.log10(1.0 + (sr / 2) / 700.0)
    hz = 700.0 * (10 ** (torch.linspace(lo, hi, n_mels + 2, dtype=torch.float64) / 2595.0) - 1.0)
    bins = torch.floor((n_fft + 1) * hz / sr).long()
    fb = torch.zeros(n_fft // 2 + 1, n_mels, dtype=torch.float64)
    for m in range(1, n_mels + 1):
        left, centre, right = bins[m - 1].item(), bins[m].item(), bins[m + 1].item()
        for k in range(left, centre):
            fb[k, m - 1] = (k - left) / max(centre - left, 1)
        for k in range(centre, right):
            fb[k, m - 1] = (right - k) / max(right - centre, 1)
    return fb


# ---- SpecAugment: given frequency / time masks over a log-mel (hand filterbank matmul), a small CNN -------------
def specaugment(torch, init):
    nn, F = torch.nn, torch.nn.functional
    sr, n_fft, hop, n_mels = 800, 32, 8, 8
    waves, labels = tones(1, 6, 192, sr)
    rng = np.random.default_rng(11)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hann_window(n_fft, dtype=torch.float64))
            self.register_buffer("fbank", bin_filterbank(torch, sr, n_fft, n_mels))
            self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                          nn.MaxPool2d((2, 2)), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(),
                                          nn.AdaptiveAvgPool2d(1))
            self.head = nn.Linear(6, 3)

        def logmel(self, wave):
            spec = torch.stft(wave, n_fft, hop_length=hop, window=self.window, return_complex=True)
            mel = ((spec.abs() ** 2).transpose(1, 2) @ self.fbank).transpose(1, 2)  # (batch, mels, frames)
            return torch.log(mel + 1e-6)

        def forward(self, feats):
            return self.head(self.features(feats.unsqueeze(1)).flatten(1))

    def spec_augment(x, f_masks, t_masks):
        # x (batch, mels, frames); each mask is (start, width) per example, drawn outside
        b, n_m, n_t = x.shape
        freq = torch.arange(n_m).view(1, n_m, 1)
        time = torch.arange(n_t).view(1, 1, n_t)
        masked = torch.zeros_like(x, dtype=torch.bool)
        for start_, width in f_masks:
            s, w = torch.tensor(start_).view(b, 1, 1), torch.tensor(width).view(b, 1, 1)
            masked |= (freq >= s) & (freq < s + w)
        for start_, width in t_masks:
            s, w = torch.tensor(start_).view(b, 1, 1), torch.tensor(width).view(b, 1, 1)
            masked = masked | ((time >= s) & (time < s + w))
        return x.masked_fill(masked, 0.0), masked

    model = Net()
    init = start(model, init)
    x, y = torch.tensor(waves), torch.tensor(labels)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    losses, masks = [], []
    for _ in range(3):
        with torch.no_grad():
            feats = model.logmel(x)
            feats = (feats - feats.mean(dim=(1, 2), keepdim=True)) / feats.std(dim=(1, 2), keepdim=True)
        n_t = feats.shape[-1]
        f_masks = [(rng.integers(0, n_mels - 2, 6), rng.integers(0, 3, 6)) for _ in range(2)]
        t_masks = [(rng.integers(0, n_t - 4, 6), rng.integers(0, 5, 6))]
        aug, masked = spec_augment(feats, f_masks, t_masks)
        masks.append(masked)
        loss = F.cross_entropy(model(aug), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        feats = model.logmel(x)
        probs = F.softmax(model((feats - feats.mean(dim=(1, 2), keepdim=True))
                                / feats.std(dim=(1, 2), keepdim=True)), dim=-1)
    return dict(init=init, losses=losses, masks=masks, fbank=model.fbank, probs=probs, feats=feats,
                running=model.features[1].running_var, params=list(model.parameters()), grads=grads(model))


def test_specaugment_masks_log_mel_bin_filterbank_cnn(torch):
    both(torch, specaugment)


# ---- a multi-resolution STFT loss (spectral convergence + log-magnitude L1, win_length < n_fft) training a filter --
def multires_stft(torch, init):
    nn, F = torch.nn, torch.nn.functional
    resolutions = [(32, 8, 24), (16, 4, 16), (64, 16, 48)]
    waves, _ = tones(2, 4, 256, 1000)
    x = torch.tensor(waves).unsqueeze(1)
    target_kernel = torch.tensor(np.hanning(7) / np.hanning(7).sum()).view(1, 1, 7)
    target = F.conv1d(x, target_kernel, padding=3).squeeze(1)

    class Filter(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Conv1d(1, 4, 7, padding=3), nn.Tanh(), nn.Conv1d(4, 1, 5, padding=2))

        def forward(self, x):
            return self.net(x).squeeze(1)

    def magnitude(sig, n_fft, hop, win):
        spec = torch.stft(sig, n_fft, hop_length=hop, win_length=win, window=torch.hann_window(win, dtype=torch.float64),
                          return_complex=True)
        re_im = torch.view_as_real(spec)
        return torch.sqrt(torch.clamp(re_im.pow(2).sum(-1), min=1e-7)).transpose(1, 2)

    def stft_loss(pred, ref):
        sc, mag = 0.0, 0.0
        for n_fft, hop, win in resolutions:
            p, r = magnitude(pred, n_fft, hop, win), magnitude(ref, n_fft, hop, win)
            sc = sc + torch.norm(r - p, p="fro") / torch.norm(r, p="fro")
            mag = mag + F.l1_loss(torch.log(r), torch.log(p))
        return sc / len(resolutions), mag / len(resolutions)

    model = Filter()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3, betas=(0.8, 0.99), eps=1e-9)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    history = []
    for _ in range(3):
        sc, mag = stft_loss(model(x), target)
        loss = sc + mag
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        history.append((sc.item(), mag.item()))
    return dict(init=init, history=history, lr=sched.get_last_lr(), out=model(x).detach(),
                params=list(model.parameters()), grads=grads(model))


def test_multi_resolution_stft_loss(torch):
    both(torch, multires_stft)


# ---- MFCCs: pre-emphasis, unfold framing, rfft power, bin filterbank, a hand DCT-II, liftering, deltas, a GRU ----
def mfcc_gru(torch, init):
    nn, F = torch.nn, torch.nn.functional
    sr, win, hop, n_fft, n_mels, n_ceps = 800, 24, 8, 32, 10, 6
    waves, labels = tones(3, 5, 200, sr)

    def dct_matrix(n_in, n_out):  # orthonormal DCT-II rows, (n_out, n_in)
        k = torch.arange(n_out, dtype=torch.float64).unsqueeze(1)
        n = torch.arange(n_in, dtype=torch.float64).unsqueeze(0)
        basis = torch.cos(math.pi / n_in * (n + 0.5) * k) * math.sqrt(2.0 / n_in)
        basis[0] /= math.sqrt(2.0)
        return basis

    def deltas(feat, width=2):  # (batch, coeffs, frames) regression over +-width frames
        kernel = torch.arange(-width, width + 1, dtype=torch.float64)
        kernel = (kernel / (kernel ** 2).sum()).repeat(feat.shape[1], 1, 1)
        return F.conv1d(F.pad(feat, (width, width), mode="replicate"), kernel, groups=feat.shape[1])

    class Front(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("window", torch.hamming_window(win, periodic=False, dtype=torch.float64))
            self.register_buffer("fbank", bin_filterbank(torch, sr, n_fft, n_mels))
            self.register_buffer("dct", dct_matrix(n_mels, n_ceps))
            lifter = 1 + (8 / 2) * torch.sin(math.pi * torch.arange(n_ceps, dtype=torch.float64) / 8)
            self.register_buffer("lifter", lifter)
            self.pre = nn.Parameter(torch.tensor(0.97, dtype=torch.float64))

        def forward(self, wave):
            emph = torch.cat([wave[:, :1], wave[:, 1:] - self.pre * wave[:, :-1]], dim=1)
            frames = emph.unfold(-1, win, hop) * self.window  # (batch, frames, win)
            power = torch.fft.rfft(frames, n=n_fft).abs().pow(2) / n_fft
            logmel = torch.log(power @ self.fbank + torch.finfo(torch.float64).eps)
            ceps = (logmel @ self.dct.T) * self.lifter
            ceps = ceps - ceps.mean(dim=1, keepdim=True)  # cepstral mean normalisation per utterance
            c = ceps.transpose(1, 2)
            d = deltas(c)
            return torch.cat([c, d, deltas(d)], dim=1).transpose(1, 2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.front = Front()
            self.gru = nn.GRU(3 * n_ceps, 8, batch_first=True)
            self.out = nn.Linear(8, 3)

        def forward(self, wave):
            feats = self.front(wave)
            _, h = self.gru(feats)
            return self.out(h[-1]), feats

    model = Net()
    init = start(model, init)
    x, y = torch.tensor(waves), torch.tensor(labels)
    opt = torch.optim.RMSprop(model.parameters(), lr=5e-3, alpha=0.95, centered=True)
    losses = []
    for _ in range(3):
        logits, feats = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, feats=feats.detach(), dct=model.front.dct,
                orth=model.front.dct @ model.front.dct.T, pre=model.front.pre.detach(),
                params=list(model.parameters()), grads=grads(model))


def test_mfcc_hand_dct_replicate_deltas_gru(torch):
    both(torch, mfcc_gru)


# ---- LPC: autocorrelation by rfft / irfft, Levinson-Durbin, the Toeplitz solve, the residual by conv1d -----------
def lpc(torch, init):
    nn, F = torch.nn, torch.nn.functional
    order, n = 4, 128
    rng = np.random.default_rng(4)
    # an AR(2) resonance driven by noise, two channels
    e = rng.standard_normal((2, n))
    sig = np.zeros((2, n))
    for t in range(n):
        sig[:, t] = e[:, t] + (1.3 * sig[:, t - 1] - 0.6 * sig[:, t - 2] if t >= 2 else 0.0)
    x = torch.tensor(sig, requires_grad=True)

    def autocorr(x, lags):
        spec = torch.fft.rfft(x - x.mean(-1, keepdim=True), n=2 * x.shape[-1])
        return torch.fft.irfft(spec.real ** 2 + spec.imag ** 2, n=2 * x.shape[-1])[..., : lags + 1]

    def levinson(r):
        a = torch.ones_like(r[..., :1])
        err = r[..., 0]
        ks = []
        for i in range(1, order + 1):
            acc = (a * r[..., 1: i + 1].flip(-1)).sum(-1)
            k = -acc / err
            padded = torch.cat([a, torch.zeros_like(a[..., :1])], dim=-1)
            a = padded + k.unsqueeze(-1) * padded.flip(-1)
            err = err * (1 - k ** 2)
            ks.append(k)
        return a, err, torch.stack(ks, -1)

    r = autocorr(x, order)
    a, err, refl = levinson(r)
    idx = torch.arange(order)
    toeplitz = r[:, (idx.view(-1, 1) - idx.view(1, -1)).abs()]
    solved = torch.linalg.solve(toeplitz, -r[:, 1:])
    residual = F.conv1d(F.pad(x.unsqueeze(0), (order, 0)), a.flip(-1).unsqueeze(1), groups=2).squeeze(0)
    envelope = err.unsqueeze(-1) / torch.fft.rfft(a, n=32).abs().pow(2)
    loss = residual.pow(2).mean() + 0.1 * envelope.log().mean()
    loss.backward()
    # a predictor learned by gradient towards the same coefficients
    pred = nn.Linear(order, 1, bias=False)
    init = start(pred, init)
    windows = torch.tensor(sig[0]).unfold(0, order + 1, 1)
    opt = torch.optim.LBFGS(pred.parameters(), lr=1, max_iter=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        out = F.mse_loss(pred(windows[:, :order].flip(-1)).squeeze(-1), windows[:, order])
        out.backward()
        return out

    final = opt.step(closure)
    return dict(init=init, r=r, a=a, err=err, refl=refl, solved=solved, residual=residual, envelope=envelope,
                loss=loss, x_grad=x.grad, final=final, weight=pred.weight, stable=bool((refl.abs() < 1).all()))


def test_lpc_fft_autocorrelation_levinson_durbin(torch):
    both(torch, lpc)


# ---- soft-DTW: the (T, U) dynamic program with a smoothed min, a divergence loss, its alignment by autograd.grad ---
def soft_dtw(torch, init):
    nn = torch.nn
    gamma = 0.1
    rng = np.random.default_rng(5)
    t_in, t_out = 5, 6
    inputs = torch.tensor(rng.standard_normal((3, t_in, 2)))
    shift = np.linspace(0, 1, t_out)
    target = torch.tensor(np.sin(2 * np.pi * (shift[None, :] + rng.uniform(0, 0.3, (3, 1))))[..., None])

    def softmin(*values):
        return -gamma * torch.logsumexp(-torch.stack(values, -1) / gamma, dim=-1)

    def sdtw(a, b):
        cost = torch.cdist(a, b).pow(2)
        n, m = cost.shape[1:]
        inf = torch.full(cost.shape[:1], float("inf"), dtype=cost.dtype)
        R = [[inf] * (m + 1) for _ in range(n + 1)]
        R[0][0] = torch.zeros_like(inf)
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                R[i][j] = cost[:, i - 1, j - 1] + softmin(R[i - 1][j - 1], R[i - 1][j], R[i][j - 1])
        return R[n][m], cost

    class Forecaster(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.GRU(2, 6, batch_first=True)
            self.dec = nn.Linear(6, t_out)

        def forward(self, x):
            _, h = self.enc(x)
            return self.dec(h[-1]).unsqueeze(-1)

    model = Forecaster()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    losses = []
    for _ in range(3):
        pred = model(inputs)
        div = sdtw(pred, target)[0] - 0.5 * (sdtw(pred, pred)[0] + sdtw(target, target)[0])
        loss = div.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    pred = model(inputs).detach().requires_grad_()
    value, cost = sdtw(pred, target)
    alignment, = torch.autograd.grad(value.sum(), cost)
    return dict(init=init, losses=losses, value=value.detach(), alignment=alignment,
                params=list(model.parameters()), grads=grads(model))


def test_soft_dtw_divergence_alignment_by_grad(torch):
    both(torch, soft_dtw)


# ---- a temporal fusion transformer's pieces: GRNs with a GLU gate, variable selection, shared-value attention -----
def tft(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_vars, d, steps, horizon, quantiles = 3, 6, 8, 2, (0.1, 0.5, 0.9)
    rng = np.random.default_rng(6)
    series = rng.standard_normal((5, steps, n_vars)).cumsum(1) * 0.3
    static = torch.tensor(rng.standard_normal((5, 2)))
    target = torch.tensor(series[:, -horizon:, 0] + 0.1 * rng.standard_normal((5, horizon)))
    x = torch.tensor(series)

    class GRN(nn.Module):
        def __init__(self, d_in, d_hidden, d_out, d_context=None):
            super().__init__()
            self.skip = nn.Linear(d_in, d_out) if d_in != d_out else nn.Identity()
            self.fc1 = nn.Linear(d_in, d_hidden)
            self.ctx = nn.Linear(d_context, d_hidden, bias=False) if d_context else None
            self.fc2 = nn.Linear(d_hidden, d_hidden)
            self.gate = nn.Linear(d_hidden, 2 * d_out)
            self.norm = nn.LayerNorm(d_out)

        def forward(self, a, c=None):
            h = self.fc1(a)
            if c is not None:
                h = h + self.ctx(c)
            h = self.fc2(F.elu(h))
            return self.norm(self.skip(a) + F.glu(self.gate(h), dim=-1))

    class VariableSelection(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.ModuleList([nn.Linear(1, d) for _ in range(n_vars)])
            self.var_grns = nn.ModuleList([GRN(d, d, d) for _ in range(n_vars)])
            self.flat = GRN(n_vars * d, d, n_vars, d_context=2)

        def forward(self, x, c):
            embedded = [emb(x[..., i: i + 1]) for i, emb in enumerate(self.embed)]
            weights = torch.softmax(self.flat(torch.cat(embedded, -1), c.unsqueeze(1).expand(-1, x.shape[1], -1)), -1)
            processed = torch.stack([g(e) for g, e in zip(self.var_grns, embedded)], dim=-1)  # (b, t, d, vars)
            return (processed * weights.unsqueeze(-2)).sum(-1), weights

    class InterpretableAttention(nn.Module):  # heads with their own queries and keys, one shared value
        def __init__(self, heads=2):
            super().__init__()
            self.q = nn.ModuleList([nn.Linear(d, d // heads) for _ in range(heads)])
            self.k = nn.ModuleList([nn.Linear(d, d // heads) for _ in range(heads)])
            self.v = nn.Linear(d, d)
            self.out = nn.Linear(d, d)

        def forward(self, h):
            t = h.shape[1]
            causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            v = self.v(h)
            attn = []
            for q, k in zip(self.q, self.k):
                scores = q(h) @ k(h).transpose(1, 2) / math.sqrt(q.out_features)
                attn.append(torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1))
            mean_attn = torch.stack(attn).mean(0)
            return self.out(mean_attn @ v), mean_attn

    class TFT(nn.Module):
        def __init__(self):
            super().__init__()
            self.select = VariableSelection()
            self.lstm = nn.LSTM(d, d, batch_first=True)
            self.post_lstm = GRN(d, d, d)
            self.attn = InterpretableAttention()
            self.post_attn = nn.LayerNorm(d)
            self.head = nn.Linear(d, len(quantiles))

        def forward(self, x, c):
            sel, weights = self.select(x, c)
            h, _ = self.lstm(sel)
            h = self.post_lstm(h + sel)
            a, attn = self.attn(h)
            h = self.post_attn(h + a)
            return self.head(h[:, -horizon:]), weights, attn

    def quantile_loss(pred, y):
        q = torch.tensor(quantiles, dtype=torch.float64)
        err = y.unsqueeze(-1) - pred
        return torch.max(q * err, (q - 1) * err).sum(-1).mean()

    model = TFT()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        pred, weights, attn = model(x, static)
        loss = quantile_loss(pred, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, pred=pred.detach(), weights=weights.detach(), attn=attn.detach(),
                importance=weights.detach().mean(dim=(0, 1)), params=list(model.parameters()), grads=grads(model))


def test_tft_gated_residual_variable_selection_quantiles(torch):
    both(torch, tft)


# ---- a seq2seq forecaster under scheduled sampling: teacher-forcing odds decayed by inverse sigmoid, coins by numpy -
def scheduled_sampling(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(7)
    t = np.arange(20)
    data = np.sin(0.4 * t[None, :] + rng.uniform(0, 6, (6, 1))) + 0.05 * rng.standard_normal((6, 20))
    src, tgt = torch.tensor(data[:, :12, None]), torch.tensor(data[:, 12:, None])

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.LSTM(1, 8, num_layers=2, batch_first=True, dropout=0.0)
            self.cells = nn.ModuleList([nn.LSTMCell(1, 8), nn.LSTMCell(8, 8)])
            self.out = nn.Linear(8, 1)

        def forward(self, src, tgt, coins):
            _, (h, c) = self.encoder(src)
            state = [(h[i], c[i]) for i in range(2)]
            step_in, outs = src[:, -1], []
            for k in range(tgt.shape[1]):
                inp = step_in
                for i, cell in enumerate(self.cells):
                    state[i] = cell(inp, state[i])
                    inp = state[i][0]
                y = self.out(inp)
                outs.append(y)
                step_in = tgt[:, k] if coins[k] else y
            return torch.stack(outs, 1)

    model = Seq2Seq()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    losses, ratios = [], []
    for epoch in range(4):
        ratio = 5 / (5 + math.exp(epoch / 5 * 5))
        coins = rng.random(tgt.shape[1]) < ratio
        loss = F.mse_loss(model(src, tgt, coins), tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        ratios.append(ratio)
    model.eval()
    with torch.no_grad():
        free = model(src, tgt, np.zeros(tgt.shape[1], dtype=bool))
    return dict(init=init, losses=losses, ratios=ratios, free=free, mae=F.l1_loss(free, tgt),
                params=list(model.parameters()), grads=grads(model))


def test_seq2seq_scheduled_sampling_inverse_sigmoid(torch):
    both(torch, scheduled_sampling)


def si_sdr(torch, est, ref, eps=1e-8):
    """Scale-invariant SDR in dB over the last dimension (zero-mean signals)."""
    est = est - est.mean(-1, keepdim=True)
    ref = ref - ref.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) / (ref.pow(2).sum(-1, keepdim=True) + eps) * ref
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


# ---- a 1-D U-Net denoiser: strided Conv1d down, ConvTranspose1d up, skips concatenated, negative SI-SDR loss -------
def unet1d(torch, init):
    nn = torch.nn
    clean, _ = tones(8, 4, 128, 1000, noise=0.0)
    rng = np.random.default_rng(8)
    noisy = torch.tensor(clean + 0.3 * rng.standard_normal(clean.shape)).unsqueeze(1)
    clean = torch.tensor(clean)

    def block(c_in, c_out):
        # no biases: each conv feeds a batch norm, directly or through a linear layer, so a bias would get a gradient
        # of rounding noise only, which Adam would blow up to full steps
        return nn.Sequential(nn.Conv1d(c_in, c_out, 5, padding=2, bias=False), nn.BatchNorm1d(c_out),
                             nn.LeakyReLU(0.1))

    class UNet1d(nn.Module):
        def __init__(self, ch=(4, 8, 12)):
            super().__init__()
            self.inc = block(1, ch[0])
            self.down = nn.ModuleList([nn.Sequential(nn.Conv1d(a, b, 4, stride=2, padding=1, bias=False), block(b, b))
                                       for a, b in zip(ch[:-1], ch[1:])])
            self.up = nn.ModuleList([nn.ConvTranspose1d(b, a, 4, stride=2, padding=1, bias=False)
                                     for a, b in zip(ch[:-1], ch[1:])])
            self.fuse = nn.ModuleList([block(2 * a, a) for a in ch[:-1]])
            self.outc = nn.Conv1d(ch[0], 1, 1, bias=False)  # (SI-SDR takes the mean out)

        def forward(self, x):
            skips = [self.inc(x)]
            for down in self.down:
                skips.append(down(skips[-1]))
            h = skips.pop()
            for up, fuse in zip(reversed(self.up), reversed(self.fuse)):
                h = fuse(torch.cat([up(h), skips.pop()], dim=1))
            return x + self.outc(h)  # predicts the residual

    model = UNet1d()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    losses = []
    for _ in range(3):
        est = model(noisy).squeeze(1)
        loss = -si_sdr(torch, est, clean).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        est = model(noisy).squeeze(1)
        gain = si_sdr(torch, est, clean) - si_sdr(torch, noisy.squeeze(1), clean)
    return dict(init=init, losses=losses, est=est, gain=gain, params=list(model.parameters()),
                grads=grads(model), buffers=list(model.buffers()))


def test_unet1d_denoiser_conv_transpose_si_sdr(torch):
    both(torch, unet1d)


# ---- a Conv-TasNet-like separator: learned encoder, gLN / PReLU depthwise TCN masks, decoder, utterance-level PIT --
def conv_tasnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_src, n_filters, kernel, stride = 2, 8, 8, 4
    a, _ = tones(9, 3, 96, 1000, freqs=(60.0,), noise=0.0)
    b, _ = tones(10, 3, 96, 1000, freqs=(210.0,), noise=0.0)
    sources = torch.tensor(np.stack([a, 0.7 * b], 1))  # (batch, sources, time)
    mixture = sources.sum(1, keepdim=True)

    class TCNBlock(nn.Module):
        def __init__(self, dilation):
            super().__init__()
            self.inp = nn.Conv1d(n_filters, 12, 1)
            self.act1, self.norm1 = nn.PReLU(), nn.GroupNorm(1, 12, eps=1e-8)
            self.depthwise = nn.Conv1d(12, 12, 3, padding=dilation, dilation=dilation, groups=12)
            self.act2, self.norm2 = nn.PReLU(), nn.GroupNorm(1, 12, eps=1e-8)
            self.res, self.skip = nn.Conv1d(12, n_filters, 1), nn.Conv1d(12, n_filters, 1)

        def forward(self, x):
            h = self.norm1(self.act1(self.inp(x)))
            h = self.norm2(self.act2(self.depthwise(h)))
            return x + self.res(h), self.skip(h)

    class TasNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Conv1d(1, n_filters, kernel, stride=stride, bias=False)
            self.norm = nn.GroupNorm(1, n_filters)
            self.blocks = nn.ModuleList([TCNBlock(2 ** i) for i in range(3)])
            self.mask = nn.Conv1d(n_filters, n_src * n_filters, 1)
            self.decoder = nn.ConvTranspose1d(n_filters, 1, kernel, stride=stride, bias=False)

        def forward(self, mix):
            w = F.relu(self.encoder(mix))
            h, skip_sum = self.norm(w), 0
            for blk in self.blocks:
                h, skip = blk(h)
                skip_sum = skip_sum + skip
            masks = torch.sigmoid(self.mask(F.prelu(skip_sum, torch.tensor([0.25], dtype=torch.float64))))
            masks = masks.view(mix.shape[0], n_src, n_filters, -1)
            est = self.decoder((w.unsqueeze(1) * masks).flatten(0, 1)).view(mix.shape[0], n_src, -1)
            return F.pad(est, (0, mix.shape[-1] - est.shape[-1]))

    def pit_loss(est, ref):
        perms = list(itertools.permutations(range(n_src)))
        scores = torch.stack([si_sdr(torch, est[:, list(p)], ref).mean(-1) for p in perms], dim=1)
        best, which = scores.max(dim=1)
        return -best.mean(), which

    model = TasNet()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses, chosen = [], []
    for _ in range(3):
        loss, which = pit_loss(model(mixture), sources)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        losses.append(loss.item())
        chosen.append(which)
    with torch.no_grad():
        est = model(mixture)
    return dict(init=init, losses=losses, chosen=chosen, est=est, params=list(model.parameters()),
                grads=grads(model))


def test_conv_tasnet_gln_prelu_permutation_invariant_si_sdr(torch):
    both(torch, conv_tasnet)


# ---- SincNet: band-pass filters from learned low cutoffs and bandwidths (mel-spaced start), a Hamming window -------
def sincnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    sr, n_filters, size = 1000, 4, 15
    waves, labels = tones(12, 6, 160, sr)

    class SincConv(nn.Module):
        def __init__(self):
            super().__init__()
            mel = np.linspace(2595 * np.log10(1 + 30 / 700), 2595 * np.log10(1 + 400 / 700), n_filters + 1)
            hz = 700 * (10 ** (mel / 2595) - 1)
            self.low_hz = nn.Parameter(torch.tensor(hz[:-1]).view(-1, 1))
            self.band_hz = nn.Parameter(torch.tensor(np.diff(hz)).view(-1, 1))
            half = torch.arange(-(size // 2), 0, dtype=torch.float64).view(1, -1) / sr
            self.register_buffer("n", 2 * math.pi * half)
            self.register_buffer("window", torch.hamming_window(size, periodic=False, dtype=torch.float64)[: size // 2])

        def forward(self, x):
            low = 5.0 + self.low_hz.abs()
            high = torch.clamp(low + 5.0 + self.band_hz.abs(), 5.0, sr / 2)
            left = (torch.sin(high @ self.n) - torch.sin(low @ self.n)) / (self.n / 2) * self.window
            centre = 2 * (high - low)
            band = torch.cat([left, centre, left.flip(1)], dim=1) / centre
            return F.conv1d(x, band.view(n_filters, 1, size), padding=size // 2)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.sinc = SincConv()
            self.norm = nn.LayerNorm([n_filters, 160 // 3])
            self.conv = nn.Conv1d(n_filters, 6, 5)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            h = F.max_pool1d(self.sinc(x.unsqueeze(1)).abs(), 3)
            h = F.leaky_relu(self.norm(h), 0.2)
            return self.head(F.leaky_relu(self.conv(h), 0.2).amax(-1))

    model = Net()
    init = start(model, init)
    x, y = torch.tensor(waves), torch.tensor(labels)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.95, eps=1e-8)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, low=model.sinc.low_hz.detach(), band=model.sinc.band_hz.detach(),
                params=list(model.parameters()), grads=grads(model))


def test_sincnet_learned_band_pass_filters(torch):
    both(torch, sincnet)


# ---- RevIN around a PatchTST-like encoder: per-series instance norm, patches by unfold, channel independence ------
def revin_patchtst(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(13)
    lookback, horizon, patch, stride, d = 24, 6, 6, 3, 8
    t = np.arange(lookback + horizon)
    series = (rng.uniform(1, 5, (4, 1, 2)) + rng.uniform(0.5, 2, (4, 1, 2)) * np.sin(0.5 * t[None, :, None])
              + 0.1 * rng.standard_normal((4, lookback + horizon, 2)))
    x, y = torch.tensor(series[:, :lookback]), torch.tensor(series[:, lookback:])

    class RevIN(nn.Module):
        def __init__(self, n, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.weight, self.bias = nn.Parameter(torch.ones(n)), nn.Parameter(torch.zeros(n))

        def forward(self, x, mode):
            if mode == "norm":
                self.mean = x.mean(1, keepdim=True).detach()
                self.stdev = torch.sqrt(x.var(1, keepdim=True, unbiased=False) + self.eps).detach()
                return (x - self.mean) / self.stdev * self.weight + self.bias
            return (x - self.bias) / (self.weight + self.eps * self.eps) * self.stdev + self.mean

    class PatchTST(nn.Module):
        def __init__(self):
            super().__init__()
            self.revin = RevIN(2)
            n_patches = (lookback + stride - patch) // stride + 1
            self.embed = nn.Linear(patch, d)
            self.pos = nn.Parameter(torch.zeros(n_patches, d).uniform_(-0.02, 0.02))
            layer = nn.TransformerEncoderLayer(d, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(n_patches * d, horizon)

        def forward(self, x):
            b, _, c = x.shape
            z = self.revin(x, "norm").permute(0, 2, 1)  # (b, c, t)
            z = F.pad(z, (0, stride), mode="replicate").unfold(-1, patch, stride)  # (b, c, patches, patch)
            z = self.embed(z).reshape(b * c, -1, d) + self.pos
            z = self.encoder(z).reshape(b, c, -1)
            return self.revin(self.head(z).permute(0, 2, 1), "denorm")

    model = PatchTST()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=4, pct_start=0.3)
    losses = []
    for _ in range(4):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = model(x)
    return dict(init=init, losses=losses, pred=pred, mean=model.revin.mean, lr=sched.get_last_lr(),
                params=list(model.parameters()), grads=grads(model))


def test_revin_patchtst_unfold_channel_independent(torch):
    both(torch, revin_patchtst)


# ---- LSTNet: a Conv2d over (time, series), a GRU, a skip-GRU over the period, an autoregressive highway ----------
def lstnet(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(14)
    window, n_series, period, hw = 16, 3, 4, 4
    t = np.arange(60)
    data = np.sin(2 * np.pi * t[:, None] / period + rng.uniform(0, 1, n_series)) + 0.01 * t[:, None]
    data = data + 0.1 * rng.standard_normal(data.shape)
    windows = np.stack([data[i: i + window] for i in range(0, 40, 5)])
    x, y = torch.tensor(windows), torch.tensor(data[np.arange(0, 40, 5) + window])

    class LSTNet(nn.Module):
        def __init__(self, conv=6, rnn=8, skip_hidden=4, k=3):
            super().__init__()
            self.k, self.skip_hidden = k, skip_hidden
            self.conv = nn.Conv2d(1, conv, (k, n_series))
            self.gru = nn.GRU(conv, rnn)
            self.skip_gru = nn.GRU(conv, skip_hidden)
            self.n_skip = (window - k + 1) // period
            self.linear = nn.Linear(rnn + period * skip_hidden, n_series)
            self.highway = nn.Linear(hw, 1)

        def forward(self, x):
            b = x.shape[0]
            c = F.relu(self.conv(x.unsqueeze(1))).squeeze(3)  # (b, conv, t')
            _, r = self.gru(c.permute(2, 0, 1))
            r = r.squeeze(0)
            s = c[:, :, -self.n_skip * period:].contiguous()
            s = s.view(b, c.shape[1], self.n_skip, period).permute(2, 0, 3, 1).contiguous()
            s = s.view(self.n_skip, b * period, c.shape[1])
            _, s = self.skip_gru(s)
            s = s.view(b, period * self.skip_hidden)
            out = self.linear(torch.cat([r, s], 1))
            z = x[:, -hw:, :].permute(0, 2, 1).contiguous().view(-1, hw)
            return out + self.highway(z).view(-1, n_series)

    model = LSTNet()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    losses = []
    for _ in range(3):
        loss = F.l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        pred = model(x)
        rse = torch.sqrt(((pred - y) ** 2).sum()) / torch.sqrt(((y - y.mean()) ** 2).sum())
        corr = ((pred - pred.mean(0)) * (y - y.mean(0))).sum(0) / (pred.std(0) * y.std(0) * (len(y) - 1))
    return dict(init=init, losses=losses, pred=pred, rse=rse, corr=corr, params=list(model.parameters()),
                grads=grads(model))


def test_lstnet_skip_gru_highway(torch):
    both(torch, lstnet)


# ---- DLinear's moving-average decomposition (replicate-padded avg_pool1d) beside Autoformer's FFT auto-correlation -
def dlinear_autocorrelation(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(15)
    lookback, horizon, kernel, top_k = 20, 5, 5, 2
    t = np.arange(lookback + horizon)
    series = 0.05 * t[None, :, None] + np.sin(2 * np.pi * t[None, :, None] / 5) * rng.uniform(0.5, 1.5, (4, 1, 2))
    series = series + 0.05 * rng.standard_normal(series.shape)
    x, y = torch.tensor(series[:, :lookback]), torch.tensor(series[:, lookback:])

    def decompose(x):  # (b, t, c): trend by a centred moving average with the ends repeated
        pad = (kernel - 1) // 2
        front, end = x[:, :1].repeat(1, pad, 1), x[:, -1:].repeat(1, pad, 1)
        trend = F.avg_pool1d(torch.cat([front, x, end], 1).permute(0, 2, 1), kernel, stride=1).permute(0, 2, 1)
        return x - trend, trend

    def auto_correlation(q, k, v):  # (b, t, c): aggregate v rolled by the top-k lags of the FFT correlation
        corr = torch.fft.irfft(torch.fft.rfft(q, dim=1) * torch.conj(torch.fft.rfft(k, dim=1)), n=q.shape[1], dim=1)
        mean_corr = corr.mean(-1)  # (b, lags)
        weights, lags = torch.topk(mean_corr, top_k, dim=-1)
        weights = torch.softmax(weights, dim=-1)
        out = 0
        for i in range(top_k):
            rolled = torch.stack([torch.roll(v[j], -int(lags[j, i]), dims=0) for j in range(v.shape[0])])
            out = out + rolled * weights[:, i].view(-1, 1, 1)
        return out, lags

    class DLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.seasonal = nn.Linear(lookback, horizon)
            self.trend = nn.Linear(lookback, horizon)
            self.q, self.k = nn.Linear(2, 2), nn.Linear(2, 2)
            with torch.no_grad():
                self.seasonal.weight.fill_(1 / lookback)
                self.trend.weight.fill_(1 / lookback)

        def forward(self, x):
            seasonal, trend = decompose(x)
            agg, lags = auto_correlation(self.q(seasonal), self.k(seasonal), seasonal)
            seasonal = seasonal + agg
            out = self.seasonal(seasonal.permute(0, 2, 1)) + self.trend(trend.permute(0, 2, 1))
            return out.permute(0, 2, 1), lags

    model = DLinear()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    losses, all_lags = [], []
    for _ in range(3):
        pred, lags = model(x)
        loss = F.mse_loss(pred, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        all_lags.append(lags)
    seasonal, trend = decompose(x)
    return dict(init=init, losses=losses, lags=all_lags, seasonal=seasonal, trend=trend,
                params=list(model.parameters()), grads=grads(model))


def test_dlinear_decomposition_autoformer_fft_autocorrelation(torch):
    both(torch, dlinear_autocorrelation)


# ---- an x-vector TDNN: dilated Conv1d frames, statistics pooling (mean and std), an additive-margin softmax -------
def xvector(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(16)
    speakers = rng.standard_normal((3, 8))
    labels = np.repeat(np.arange(3), 2)
    feats = torch.tensor(speakers[labels][:, :, None] + 0.8 * rng.standard_normal((6, 8, 20)))
    y = torch.tensor(labels)

    class XVector(nn.Module):
        def __init__(self):
            super().__init__()
            self.frames = nn.Sequential(nn.Conv1d(8, 10, 3, dilation=1), nn.ReLU(), nn.BatchNorm1d(10),
                                        nn.Conv1d(10, 10, 3, dilation=2), nn.ReLU(), nn.BatchNorm1d(10),
                                        nn.Conv1d(10, 12, 1), nn.ReLU(), nn.BatchNorm1d(12))
            self.segment = nn.Linear(24, 6)
            self.classes = nn.Parameter(torch.empty(3, 6))
            nn.init.xavier_normal_(self.classes)

        def forward(self, x):
            h = self.frames(x)
            stats = torch.cat([h.mean(-1), torch.sqrt(h.var(-1, unbiased=False).clamp(min=1e-5))], dim=1)
            return self.segment(stats)

    def am_softmax(emb, target, s=10.0, m=0.3):
        cos = F.normalize(emb, dim=1) @ F.normalize(model.classes, dim=1).T
        margin = F.one_hot(target, 3).to(cos.dtype) * m
        return F.cross_entropy(s * (cos - margin), target), cos

    model = XVector()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    losses = []
    for _ in range(3):
        loss, cos = am_softmax(model(feats), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        emb = F.normalize(model(feats), dim=1)
        scores = emb @ emb.T
        same = torch.tensor(labels[:, None] == labels[None, :])
        off = ~torch.eye(6, dtype=torch.bool)
        margin = scores[same & off].mean() - scores[~same].mean()
    return dict(init=init, losses=losses, scores=scores, margin=margin, params=list(model.parameters()),
                grads=grads(model), running=[model.frames[i].running_mean for i in (2, 5, 8)])


def test_xvector_tdnn_statistics_pooling_am_softmax(torch):
    both(torch, xvector)


# ---- GCC-PHAT delay between two microphones (soft-argmax over lags, a learned pre-filter), a Hilbert envelope ------
def gcc_phat(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(17)
    n, delays = 64, [3, -5, 7]
    src = rng.standard_normal((3, n + 20))
    left = np.stack([s[10: 10 + n] for s in src])
    right = np.stack([s[10 - d: 10 - d + n] for s, d in zip(src, delays)]) + 0.1 * rng.standard_normal((3, n))
    a, b = torch.tensor(left), torch.tensor(right)

    def gcc(x, y, max_lag=10, beta=1.0):
        X, Y = torch.fft.rfft(x, n=2 * n), torch.fft.rfft(y, n=2 * n)
        cross = X * torch.conj(Y)
        cc = torch.fft.irfft(cross / (cross.abs() ** beta + 1e-12), n=2 * n)
        cc = torch.cat([cc[:, -max_lag:], cc[:, : max_lag + 1]], dim=1)  # lags -max_lag..max_lag
        return cc, torch.arange(-max_lag, max_lag + 1, dtype=torch.float64)

    def hilbert_envelope(x):
        spec = torch.fft.fft(x)
        h = torch.zeros(x.shape[-1], dtype=torch.float64)
        h[0], h[1: x.shape[-1] // 2], h[x.shape[-1] // 2] = 1, 2, 1
        analytic = torch.fft.ifft(spec * h)
        phase = torch.angle(analytic)
        return analytic.abs(), torch.diff(phase) / (2 * math.pi)

    pre = nn.Conv1d(1, 1, 5, padding=2, bias=False)
    init = start(pre, init)
    opt = torch.optim.Adam(pre.parameters(), lr=0.05)
    target = -torch.tensor(delays, dtype=torch.float64)
    losses = []
    for _ in range(3):
        fa, fb = pre(a.unsqueeze(1)).squeeze(1), pre(b.unsqueeze(1)).squeeze(1)
        cc, lags = gcc(fa, fb, beta=0.8)
        estimate = (torch.softmax(cc * 20, dim=1) * lags).sum(1)
        loss = F.smooth_l1_loss(estimate, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    cc, lags = gcc(a, b)
    tone = torch.tensor(np.sin(2 * np.pi * 0.1 * np.arange(n)) * (1 + 0.5 * np.sin(2 * np.pi * 0.01 * np.arange(n))),
                        requires_grad=True)
    env, inst_freq = hilbert_envelope(tone)
    env.sum().backward()
    return dict(init=init, losses=losses, hard=lags[cc.argmax(1)], cc=cc, env=env, inst_freq=inst_freq,
                tone_grad=tone.grad, weight=pre.weight, grad=pre.weight.grad)


def test_gcc_phat_soft_argmax_delay_hilbert_envelope(torch):
    both(torch, gcc_phat)
