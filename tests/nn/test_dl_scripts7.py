"""Deep-learning scripts of more kinds still (a selective state-space layer, Swin windowed attention, a ConvNeXt
block, a sparse autoencoder for interpretability, a neural cellular automaton, Transformer-XL recurrence, DPO,
MC-dropout with a deep ensemble, a TabNet-like attentive transformer, hypergradient descent), written once against
a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import math

import numpy as np

from twins import both, grads, start


# ---- a selective state-space layer (Mamba/S4-like): input-dependent step sizes, a sequential scan ----------
def selective_ssm(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class SelectiveSSM(nn.Module):
        def __init__(self, d=4, n=3):
            super().__init__()
            self.in_proj = nn.Linear(d, 2 * d)
            self.to_dt = nn.Linear(d, d)
            self.to_b = nn.Linear(d, n, bias=False)
            self.to_c = nn.Linear(d, n, bias=False)
            a = torch.arange(1, n + 1, dtype=torch.float64).unsqueeze(0)  # one A shared by the d channels
            self.a_log = nn.Parameter(torch.log(a))  # A = -exp(a_log) keeps the state stable
            self.d_skip = nn.Parameter(torch.ones(d))
            self.out_proj = nn.Linear(d, d)

        def forward(self, x):  # x: (batch, length, d)
            u, gate = self.in_proj(x).chunk(2, dim=-1)
            u = F.silu(u)
            dt = F.softplus(self.to_dt(u))                                  # (b, l, d)
            a = -torch.exp(self.a_log)                                      # (1, n), broadcast over d
            decay = torch.exp(torch.einsum("bld,dn->bldn", dt, a))          # discretised A
            drive = torch.einsum("bld,bln,bld->bldn", dt, self.to_b(u), u)  # discretised B times u
            c = self.to_c(u)
            h = torch.zeros(x.size(0), x.size(2), self.a_log.size(1), dtype=x.dtype)
            ys = []
            for t in range(x.size(1)):
                h = decay[:, t] * h + drive[:, t]
                ys.append(torch.einsum("bdn,bn->bd", h, c[:, t]))
            y = torch.stack(ys, dim=1) + u * self.d_skip
            return self.out_proj(y * F.silu(gate))

    def cumulative_decay(dt, a):  # the scan's total decay in closed form: exp(cumsum(dt) * a)
        return torch.exp(torch.cumsum(dt, dim=1).unsqueeze(-1) * a)

    model = SelectiveSSM()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    rng = np.random.default_rng(70)
    x = torch.tensor(rng.standard_normal((2, 5, 4)))
    target = torch.tensor(rng.standard_normal((2, 5, 4)))
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        u = F.silu(model.in_proj(x).chunk(2, dim=-1)[0])
        dt = F.softplus(model.to_dt(u))
        a = -torch.exp(model.a_log)
        closed = cumulative_decay(dt, a)
        stepwise = torch.cumprod(torch.exp(torch.einsum("bld,dn->bldn", dt, a)), dim=1)
    return dict(init=init, losses=losses, closed=closed, stepwise=stepwise, grads=grads(model),
                params=list(model.parameters()))


def test_selective_state_space(torch):
    _, ours = both(torch, selective_ssm)
    np.testing.assert_allclose(ours["closed"].numpy(), ours["stepwise"].numpy(), rtol=1e-10)


# ---- Swin: windowed attention with a relative position bias, shifted windows with an attention mask --------
def swin(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def window_partition(x, w):  # (b, h, w, c) -> (b * windows, w * w, c)
        b, h, wd, c = x.shape
        x = x.view(b, h // w, w, wd // w, w, c).permute(0, 1, 3, 2, 4, 5).contiguous()
        return x.view(-1, w * w, c)

    def window_reverse(windows, w, h, wd):
        b = windows.shape[0] // ((h // w) * (wd // w))
        x = windows.view(b, h // w, wd // w, w, w, -1).permute(0, 1, 3, 2, 4, 5).contiguous()
        return x.view(b, h, wd, -1)

    class WindowAttention(nn.Module):
        def __init__(self, dim, w, heads):
            super().__init__()
            self.w, self.heads, self.scale = w, heads, (dim // heads) ** -0.5
            self.bias_table = nn.Parameter(torch.zeros((2 * w - 1) ** 2, heads))
            nn.init.trunc_normal_(self.bias_table, std=0.02)
            coords = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij")).flatten(1)
            rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
            rel[:, :, 0] += w - 1
            rel[:, :, 1] += w - 1
            rel[:, :, 0] *= 2 * w - 1
            self.register_buffer("rel_index", rel.sum(-1))
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x, mask=None):
            bw, n, c = x.shape
            q, k, v = self.qkv(x).reshape(bw, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
            attn = (q * self.scale) @ k.transpose(-2, -1)
            bias = self.bias_table[self.rel_index.view(-1)].view(n, n, -1).permute(2, 0, 1).contiguous()
            attn = attn + bias.unsqueeze(0)
            if mask is not None:
                nw = mask.shape[0]
                attn = attn.view(bw // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
                attn = attn.view(-1, self.heads, n, n)
            attn = attn.softmax(dim=-1)
            return self.proj((attn @ v).transpose(1, 2).reshape(bw, n, c))

    class SwinBlock(nn.Module):
        def __init__(self, dim=4, size=4, w=2, shift=1, heads=2):
            super().__init__()
            self.size, self.w, self.shift = size, w, shift
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = WindowAttention(dim, w, heads)
            self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
            mask = None
            if shift:
                img = torch.zeros(1, size, size, 1)
                cnt = 0
                for hs in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
                    for ws in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
                        img[:, hs, ws, :] = cnt
                        cnt += 1
                mw = window_partition(img, w).squeeze(-1)
                mask = mw.unsqueeze(1) - mw.unsqueeze(2)
                mask = mask.masked_fill(mask != 0, float(-100.0)).masked_fill(mask == 0, float(0.0))
            self.register_buffer("attn_mask", mask)

        def forward(self, x):  # x: (b, size * size, dim)
            b, _, c = x.shape
            h = self.norm1(x).view(b, self.size, self.size, c)
            if self.shift:
                h = torch.roll(h, shifts=(-self.shift, -self.shift), dims=(1, 2))
            windows = self.attn(window_partition(h, self.w), mask=self.attn_mask)
            h = window_reverse(windows, self.w, self.size, self.size)
            if self.shift:
                h = torch.roll(h, shifts=(self.shift, self.shift), dims=(1, 2))
            x = x + h.reshape(b, -1, c)
            return x + self.mlp(self.norm2(x))

    model = nn.Sequential(SwinBlock(shift=0), SwinBlock(shift=1))
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
    rng = np.random.default_rng(71)
    x = torch.tensor(rng.standard_normal((2, 16, 4)))
    y = torch.tensor([1, 3])
    head = lambda h: h.mean(1)  # noqa: E731 (a pooled "classifier" over the four channels)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(head(model(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        out = model(x)
    mask = model[1].attn_mask
    return dict(init=init, losses=losses, out=out, mask=mask, index=model[1].attn.rel_index,
                grads=grads(model), params=list(model.parameters()))


def test_swin_shifted_windows(torch):
    _, ours = both(torch, swin)
    assert set(np.unique(ours["mask"].numpy())) == {0.0, -100.0}


# ---- ConvNeXt block: 7x7 depthwise conv, LayerNorm channels-last, inverted MLP, layer scale -------------
def convnext(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, dim, layer_scale=1e-1):
            super().__init__()
            self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim)
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.pwconv1 = nn.Linear(dim, 4 * dim)
            self.act = nn.GELU()
            self.pwconv2 = nn.Linear(4 * dim, dim)
            self.gamma = nn.Parameter(layer_scale * torch.ones(dim))
            self.drop_path = nn.Identity()  # stochastic depth off

        def forward(self, x):
            h = self.dwconv(x).permute(0, 2, 3, 1)  # (n, c, h, w) -> (n, h, w, c)
            h = self.gamma * self.pwconv2(self.act(self.pwconv1(self.norm(h))))
            return x + self.drop_path(h.permute(0, 3, 1, 2))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, 4, kernel_size=2, stride=2)
            self.block = Block(4)
            self.head_norm = nn.LayerNorm(4)
            self.head = nn.Linear(4, 3)

        def forward(self, x):
            h = self.block(self.stem(x))
            return self.head(self.head_norm(h.mean([-2, -1])))

    model = Net()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    rng = np.random.default_rng(72)
    x = torch.tensor(rng.standard_normal((3, 1, 8, 8)))
    y = torch.tensor([0, 2, 1])
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss)
    with torch.no_grad():
        out = model(x)
    return dict(init=init, losses=losses, out=out, lr=sched.get_last_lr(), grads=grads(model),
                params=list(model.parameters()))


def test_convnext_block(torch):
    both(torch, convnext)


# ---- a sparse autoencoder on activations: ReLU codes, an L1 penalty, unit-norm decoder columns ------------
def sparse_autoencoder(torch, init, tied):
    nn, F = torch.nn, torch.nn.functional

    class SAE(nn.Module):
        def __init__(self, d=5, features=8):
            super().__init__()
            self.b_pre = nn.Parameter(torch.zeros(d))
            self.encoder = nn.Linear(d, features)
            self.decoder = None if tied else nn.Linear(features, d, bias=False)

        def decoder_weight(self):  # (d, features): one column per feature
            return self.encoder.weight.t() if tied else self.decoder.weight

        def forward(self, x):
            codes = F.relu(self.encoder(x - self.b_pre))
            return codes @ self.decoder_weight().t() + self.b_pre, codes

    model = SAE()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(73)
    acts = torch.tensor(rng.standard_normal((16, 5)))
    l1, losses, dead = 0.05, [], []
    for _ in range(3):
        recon, codes = model(acts)
        loss = (recon - acts).pow(2).sum(-1).mean() + l1 * codes.abs().sum(-1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if not tied:
            with torch.no_grad():
                w = model.decoder.weight
                w.data.copy_(F.normalize(w.data, dim=0))
        dead.append(int((~(codes > 0).any(0)).sum()))
        losses.append(loss)
    with torch.no_grad():
        recon, codes = model(acts)
        norms = model.decoder_weight().norm(dim=0)
        l0 = (codes > 0).float().sum(-1).mean()
    return dict(init=init, losses=losses, dead=dead, recon=recon, codes=codes, norms=norms, l0=l0,
                grads=grads(model), params=list(model.parameters()))


def test_sparse_autoencoder_untied(torch):
    _, ours = both(torch, sparse_autoencoder, tied=False)
    np.testing.assert_allclose(ours["norms"].numpy(), 1.0, rtol=1e-12)


def test_sparse_autoencoder_tied(torch):
    both(torch, sparse_autoencoder, tied=True)


# ---- a neural cellular automaton: Sobel perception, a stochastic update mask, an alive mask -----------------
def cellular_automaton(torch, init):
    nn, F = torch.nn, torch.nn.functional
    channels = 4

    class CA(nn.Module):
        def __init__(self):
            super().__init__()
            sobel = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]) / 8.0
            ident = torch.zeros(3, 3)
            ident[1, 1] = 1.0
            kernels = torch.stack([ident, sobel, sobel.T])  # (3, 3, 3)
            self.register_buffer("kernels", kernels.repeat(channels, 1, 1).unsqueeze(1))  # (3c, 1, 3, 3)
            self.update = nn.Sequential(nn.Conv2d(3 * channels, 8, 1), nn.ReLU(), nn.Conv2d(8, channels, 1, bias=False))
            with torch.no_grad():
                self.update[2].weight.mul_(0.5)

        def alive(self, x):
            return F.max_pool2d(x[:, 3:4], kernel_size=3, stride=1, padding=1) > 0.1

        def forward(self, x, fire):
            pre = self.alive(x)
            perceived = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="circular"), self.kernels, groups=channels)
            x = x + self.update(perceived) * fire
            life = pre & self.alive(x)
            return x * life.to(x.dtype)

    model = CA()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    rng = np.random.default_rng(74)
    seed = torch.zeros(2, channels, 6, 6, dtype=torch.float64)
    seed[:, 3:, 2:4, 2:4] = 1.0
    target = torch.tensor(rng.uniform(0, 1, (2, 3, 6, 6)))
    losses = []
    for _ in range(2):
        x = seed
        for _ in range(3):
            fire = torch.tensor(rng.uniform(size=(2, 1, 6, 6)) < 0.5).to(torch.float64)
            x = model(x, fire)
        loss = F.mse_loss(x[:, :3], target)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.grad.data.div_(p.grad.data.norm() + 1e-8)
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, state=x.detach(), alive=model.alive(x.detach()), grads=grads(model),
                params=list(model.parameters()))


def test_neural_cellular_automaton(torch):
    both(torch, cellular_automaton)


# ---- Transformer-XL: segment recurrence over detached memories, relative positions, a shifted causal mask ---
def transformer_xl(torch, init):
    nn, F = torch.nn, torch.nn.functional
    d, heads, mem_len = 4, 2, 3

    class RelLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d, bias=False)
            self.r_proj = nn.Linear(d, d, bias=False)
            self.u = nn.Parameter(torch.zeros(heads, d // heads))  # content bias
            self.v = nn.Parameter(torch.zeros(heads, d // heads))  # position bias
            self.out = nn.Linear(d, d)
            self.norm = nn.LayerNorm(d)

        def forward(self, h, mem, pos):
            b, q_len, _ = h.shape
            cat = torch.cat([mem, h], dim=1) if mem is not None else h
            k_len = cat.size(1)
            q, k, v = self.qkv(cat).chunk(3, dim=-1)
            q = q[:, -q_len:].view(b, q_len, heads, -1)
            k, v = k.view(b, k_len, heads, -1), v.view(b, k_len, heads, -1)
            r = self.r_proj(pos[-k_len:]).view(k_len, heads, -1)  # distances k_len-1 .. 0
            ac = torch.einsum("bqhd,bkhd->bhqk", q + self.u, k)
            bd = torch.einsum("bqhd,khd->bhqk", q + self.v, r)
            # relative shift: query i, key j reads the embedding of distance (k_len - q_len + i) - j
            rows = torch.arange(q_len).unsqueeze(1) + (k_len - q_len)
            dist = rows - torch.arange(k_len).unsqueeze(0)
            bd = bd.gather(-1, (k_len - 1 - dist).clamp(0, k_len - 1).expand(b, heads, q_len, k_len))
            mask = torch.triu(torch.ones(q_len, k_len, dtype=torch.bool), diagonal=1 + k_len - q_len)
            scores = (ac + bd) / math.sqrt(d // heads)
            attn = scores.masked_fill(mask, float("-inf")).softmax(-1)
            out = torch.einsum("bhqk,bkhd->bqhd", attn, v).reshape(b, q_len, d)
            return self.norm(h + self.out(out))

    class XL(nn.Module):
        def __init__(self, vocab=7):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.layers = nn.ModuleList([RelLayer(), RelLayer()])
            self.head = nn.Linear(d, vocab)
            inv_freq = 1.0 / (10000 ** (torch.arange(0.0, d, 2.0, dtype=torch.float64) / d))
            self.register_buffer("inv_freq", inv_freq)

        def positions(self, k_len):
            seq = torch.arange(k_len - 1, -1, -1.0, dtype=torch.float64)
            angles = torch.outer(seq, self.inv_freq)
            return torch.cat([angles.sin(), angles.cos()], dim=-1)

        def forward(self, tokens, mems):
            h = self.embed(tokens)
            k_len = tokens.size(1) + (0 if mems[0] is None else mems[0].size(1))
            pos = self.positions(k_len)
            new_mems = []
            for layer, mem in zip(self.layers, mems):
                cat = h if mem is None else torch.cat([mem, h], dim=1)
                new_mems.append(cat[:, -mem_len:].detach())
                h = layer(h, mem, pos)
            return self.head(h), new_mems

    model = XL()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(75)
    stream = torch.tensor(rng.integers(0, 7, (2, 13)))
    mems, losses = [None, None], []
    for s in range(0, 12, 3):
        tokens, targets = stream[:, s:s + 3], stream[:, s + 1:s + 4]
        logits, mems = model(tokens, mems)
        loss = F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, mems=mems, grads=grads(model), params=list(model.parameters()),
                mem_grad=[m.requires_grad for m in mems])


def test_transformer_xl_recurrence(torch):
    both(torch, transformer_xl)


# ---- DPO: a policy against a frozen reference, per-token log-probabilities of the labels, a logsigmoid loss --
def dpo(torch, init):
    nn, F = torch.nn, torch.nn.functional
    vocab = 6

    class TinyLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, 5)
            self.rnn = nn.GRU(5, 5, batch_first=True)
            self.head = nn.Linear(5, vocab)

        def forward(self, ids):
            return self.head(self.rnn(self.embed(ids))[0])

    def sequence_logps(model, ids, labels):
        logits = model(ids)[:, :-1]
        labels = labels[:, 1:].clone()
        keep = labels != -100
        labels[labels == -100] = 0
        per_token = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
        return (per_token * keep).sum(-1)

    policy = TinyLM()
    init = start(policy, init)
    reference = TinyLM().double()
    reference.load_state_dict(policy.state_dict())
    reference.requires_grad_(False)
    reference.eval()
    opt = torch.optim.Adam(policy.parameters(), lr=0.02)
    rng = np.random.default_rng(76)
    prompt = rng.integers(0, vocab, (3, 2))
    chosen = np.concatenate([prompt, rng.integers(0, vocab, (3, 3))], 1)
    rejected = np.concatenate([prompt, rng.integers(0, vocab, (3, 3))], 1)
    chosen_labels, rejected_labels = chosen.copy(), rejected.copy()
    chosen_labels[:, :2] = rejected_labels[:, :2] = -100  # no loss on the prompt
    rejected_labels[0, -1] = -100  # a padded answer
    ids = torch.tensor(np.concatenate([chosen, rejected]))
    labels = torch.tensor(np.concatenate([chosen_labels, rejected_labels]))
    beta, losses, margins_seen = 0.1, [], []
    for _ in range(3):
        logps = sequence_logps(policy, ids, labels)
        with torch.no_grad():
            ref_logps = sequence_logps(reference, ids, labels)
        pc, pr = logps.chunk(2)
        rc, rr = ref_logps.chunk(2)
        margins = beta * ((pc - rc) - (pr - rr))
        loss = -F.logsigmoid(margins).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        margins_seen.append(margins)
    with torch.no_grad():
        pc, pr = sequence_logps(policy, ids, labels).chunk(2)
        acc = (beta * ((pc - rc) - (pr - rr)) > 0).float().mean()
    return dict(init=init, losses=losses, margins=margins_seen, acc=acc, ref=ref_logps, ref_grad=[p.grad for p in reference.parameters()],
                grads=grads(policy), params=list(policy.parameters()))


def test_dpo_loss(torch):
    _, ours = both(torch, dpo)
    assert all(g is None for g in ours["ref_grad"])


# ---- uncertainty: MC dropout (masks from numpy) and a deep ensemble, Gaussian negative log-likelihood -------
def uncertainty(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class MaskedDropout(nn.Module):  # dropout whose masks come from numpy, so both libraries draw the same
        def __init__(self, p, rng):
            super().__init__()
            self.p, self.rng = p, rng

        def forward(self, x):
            if not self.training:
                return x
            keep = torch.tensor(self.rng.uniform(size=tuple(x.shape)) >= self.p)
            return x * keep / (1 - self.p)

    class Regressor(nn.Module):
        def __init__(self, rng):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), MaskedDropout(0.2, rng), nn.Linear(8, 2))

        def forward(self, x):
            mean, raw_var = self.body(x).unbind(-1)
            return mean, F.softplus(raw_var) + 1e-4

    rng = np.random.default_rng(77)
    members = nn.ModuleList([Regressor(rng) for _ in range(3)])
    init = start(members, init)
    opt = torch.optim.Adam(members.parameters(), lr=0.01)
    x = torch.tensor(rng.uniform(-2, 2, (12, 1)))
    y = torch.sin(x).squeeze(-1) + 0.1 * torch.tensor(rng.standard_normal(12))
    losses = []
    for _ in range(3):
        members.train()
        loss = sum(F.gaussian_nll_loss(mean, y, var) for mean, var in (m(x) for m in members)) / len(members)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    grid = torch.linspace(-3, 3, 5, dtype=torch.float64).unsqueeze(1)
    with torch.no_grad():
        members[0].train()  # MC dropout: the first member sampled with its dropout on
        samples = torch.stack([members[0](grid)[0] for _ in range(4)])
        mc_mean, mc_var = samples.mean(0), samples.var(0)
        members.eval()
        means, variances = zip(*(m(grid) for m in members))
        means, variances = torch.stack(means), torch.stack(variances)
        mix_mean = means.mean(0)
        mix_var = (variances + means.pow(2)).mean(0) - mix_mean.pow(2)
        nll = F.gaussian_nll_loss(mix_mean, torch.sin(grid).squeeze(-1), mix_var, full=True, reduction="none")
    return dict(init=init, losses=losses, mc_mean=mc_mean, mc_var=mc_var, mix_mean=mix_mean, mix_var=mix_var,
                nll=nll, grads=grads(members), params=list(members.parameters()))


def test_mc_dropout_deep_ensemble(torch):
    both(torch, uncertainty)


# ---- TabNet-like attentive transformer: sparsemax feature masks, ghost batch norm ---------------------------
def tabnet(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def sparsemax(z, dim=-1):  # the Euclidean projection of z onto the simplex
        zs, _ = torch.sort(z, dim=dim, descending=True)
        k = torch.arange(1, z.size(dim) + 1, dtype=z.dtype)
        cums = zs.cumsum(dim)
        support = 1 + k * zs > cums
        k_z = support.sum(dim=dim, keepdim=True)
        tau = (cums.gather(dim, k_z - 1) - 1) / k_z.to(z.dtype)
        return torch.clamp(z - tau, min=0)

    class GhostBN(nn.Module):
        def __init__(self, dim, virtual=4):
            super().__init__()
            self.virtual = virtual
            self.bn = nn.BatchNorm1d(dim, momentum=0.02)

        def forward(self, x):
            chunks = x.chunk(math.ceil(x.size(0) / self.virtual), 0)
            return torch.cat([self.bn(c) for c in chunks], dim=0)

    class TabNetLike(nn.Module):
        def __init__(self, features=5, hidden=4, steps=2, gamma=1.3):
            super().__init__()
            self.steps, self.gamma = steps, gamma
            self.initial_bn = nn.BatchNorm1d(features)
            self.attentive = nn.ModuleList([nn.Sequential(nn.Linear(hidden, features, bias=False), GhostBN(features))
                                            for _ in range(steps)])
            self.transform = nn.ModuleList([nn.Sequential(nn.Linear(features, 2 * hidden, bias=False),
                                                          GhostBN(2 * hidden)) for _ in range(steps + 1)])
            self.head = nn.Linear(hidden, 2)

        def feature(self, i, x):
            return F.glu(self.transform[i](x), dim=-1)

        def forward(self, x):
            x = self.initial_bn(x)
            prior, out, masks, entropy = torch.ones_like(x), 0, [], 0
            a = self.feature(0, x)
            for s in range(self.steps):
                m = sparsemax(self.attentive[s](a) * prior)
                prior = prior * (self.gamma - m)
                entropy = entropy + (-m * torch.log(m + 1e-10)).sum(1).mean() / self.steps
                d = self.feature(s + 1, m * x)
                out = out + F.relu(d)
                a, masks = d, masks + [m]
            return self.head(out), torch.stack(masks), entropy

    model = TabNetLike()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    rng = np.random.default_rng(78)
    x = torch.tensor(rng.standard_normal((10, 5)))
    y = torch.tensor(rng.integers(0, 2, 10))
    losses = []
    for _ in range(3):
        logits, masks, entropy = model(x)
        loss = F.cross_entropy(logits, y) + 1e-3 * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        logits, masks, _ = model(x)
    return dict(init=init, losses=losses, logits=logits, masks=masks, mask_sums=masks.sum(-1),
                buffers=[b.clone() for b in model.buffers()], grads=grads(model), params=list(model.parameters()))


def test_tabnet_sparsemax_ghost_batch_norm(torch):
    _, ours = both(torch, tabnet)
    np.testing.assert_allclose(ours["mask_sums"].numpy(), 1.0, rtol=1e-12)


# ---- hypergradient descent: a learning rate that requires grad, learned through two unrolled inner steps ----
def hypergradient(torch, init):
    nn, F = torch.nn, torch.nn.functional

    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    init = start(model, init)
    log_lr = torch.tensor(math.log(0.1), dtype=torch.float64, requires_grad=True)
    meta_opt = torch.optim.Adam([log_lr], lr=0.05)
    rng = np.random.default_rng(79)
    names = [n for n, _ in model.named_parameters()]
    meta_losses, lrs = [], []
    for _ in range(3):
        xs, ys = torch.tensor(rng.standard_normal((2, 6, 3))), torch.tensor(rng.standard_normal((2, 6, 1)))
        xv, yv = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal((6, 1)))
        params = dict(model.named_parameters())
        for step in range(2):
            out = torch.func.functional_call(model, params, (xs[step],))
            inner = F.mse_loss(out, ys[step])
            gs = torch.autograd.grad(inner, list(params.values()), create_graph=True)
            params = {n: p - log_lr.exp() * g for n, g, p in zip(names, gs, params.values())}
        meta_loss = F.mse_loss(torch.func.functional_call(model, params, (xv,)), yv)
        meta_opt.zero_grad()
        model.zero_grad()
        meta_loss.backward()
        meta_opt.step()
        with torch.no_grad():  # the model itself moves to where the unrolled steps took it
            for p, q in zip(model.parameters(), params.values()):
                p.copy_(q)
        meta_losses.append(meta_loss)
        lrs.append(log_lr.detach().exp().clone())
    return dict(init=init, meta_losses=meta_losses, lrs=lrs, lr_grad=log_lr.grad, grads=grads(model),
                params=list(model.parameters()))


def test_hypergradient_descent(torch):
    _, ours = both(torch, hypergradient)
    assert ours["lr_grad"] is not None
