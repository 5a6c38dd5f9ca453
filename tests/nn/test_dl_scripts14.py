"""Deep-learning scripts of more kinds (a BERT-mini masked LM with AdamW parameter groups and a warmup LambdaLR, a
ViT-tiny patchified by Conv2d and by Tensor.unfold, prototypical networks over numpy episodes, a pix2pix-lite
conditional GAN, EfficientNet-lite blocks with squeeze-and-excite, data pipelines of dict datasets and samplers,
gradient bookkeeping across micro-batches, a Newton-CG step by autograd.functional, noise-robust losses, a masked-
pooling bidirectional-GRU text classifier over packed input), written once against a `torch`-like module and run
twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must
agree closely (float64 throughout; random draws by numpy)."""
import collections

import numpy as np
import pytest

from twins import both, grads, start


# ---- BERT-mini masked LM: token-type and position embeddings, 80/10/10 masking, AdamW groups, warmup LambdaLR ---
def bert_mlm(torch, init):
    nn = torch.nn
    vocab, d, heads, ctx, pad, mask_id, special = 16, 8, 2, 7, 0, 1, 2

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, d, padding_idx=pad)
            self.position_embeddings = nn.Embedding(ctx, d)
            self.token_type_embeddings = nn.Embedding(2, d)
            self.LayerNorm = nn.LayerNorm(d, eps=1e-12)
            self.dropout = nn.Dropout(0.0)

        def forward(self, ids, types):
            pos = torch.arange(ids.shape[1]).unsqueeze(0).expand_as(ids)
            e = self.word_embeddings(ids) + self.position_embeddings(pos) + self.token_type_embeddings(types)
            return self.dropout(self.LayerNorm(e))

    class BertMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()
            layer = nn.TransformerEncoderLayer(d, heads, 2 * d, dropout=0.0, activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.transform = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d, eps=1e-12))
            self.decoder = nn.Linear(d, vocab)

        def forward(self, ids, types, attention_mask):
            h = self.encoder(self.embeddings(ids, types), src_key_padding_mask=attention_mask == 0)
            return self.decoder(self.transform(h))

    model = BertMLM()
    init = start(model, init)
    no_decay = ("bias", "LayerNorm.weight")
    named = list(model.named_parameters())
    groups = [dict(params=[p for n, p in named if not any(k in n for k in no_decay)], weight_decay=0.01),
              dict(params=[p for n, p in named if any(k in n for k in no_decay)], weight_decay=0.0)]
    opt = torch.optim.AdamW(groups, lr=1e-2)
    warmup, total = 2, 6
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else max(0.0, (total - s) / (total - warmup)))
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
    rng = np.random.default_rng(140)
    losses, lrs = [], []
    for _ in range(4):
        lengths = rng.integers(4, ctx + 1, 3)
        ids = np.full((3, ctx), pad)
        types = np.zeros((3, ctx), dtype=np.int64)
        for i, n in enumerate(lengths):
            ids[i, :n] = rng.integers(special, vocab, n)
            types[i, n // 2:n] = 1
        attention = (ids != pad).astype(np.int64)
        chosen = (rng.random(ids.shape) < 0.3) & (attention == 1)
        chosen[0, 0] = True
        labels = np.where(chosen, ids, -100)
        roll = rng.random(ids.shape)
        inputs = np.where(chosen & (roll < 0.8), mask_id, ids)
        inputs = np.where(chosen & (roll >= 0.8) & (roll < 0.9), rng.integers(special, vocab, ids.shape), inputs)
        logits = model(torch.from_numpy(inputs), torch.from_numpy(types), torch.from_numpy(attention))
        loss = loss_fn(logits.view(-1, vocab), torch.from_numpy(labels).view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss)
        lrs.append([g["lr"] for g in opt.param_groups])
    model.eval()
    with torch.no_grad():
        logits = model(torch.from_numpy(inputs), torch.from_numpy(types), torch.from_numpy(attention))
    return dict(init=init, losses=losses, lrs=lrs, last_lr=sched.get_last_lr(), params=list(model.parameters()),
                kept=logits[torch.from_numpy(attention) == 1], sizes=[len(g["params"]) for g in opt.param_groups])


def test_bert_mini_masked_lm(torch):
    both(torch, bert_mlm)


# ---- ViT-tiny: patches by a strided Conv2d or by Tensor.unfold, a cls token, learned positions, MHA blocks -----
def vit_tiny(torch, init, patchify):
    nn, F = torch.nn, torch.nn.functional
    img, p, c, d, heads, classes = 8, 4, 3, 8, 2, 3
    n = (img // p) ** 2

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(d, eps=1e-6), nn.LayerNorm(d, eps=1e-6)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(approximate="tanh"), nn.Linear(2 * d, d))

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_embed = nn.Conv2d(c, d, p, stride=p)
            self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
            self.pos_embed = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
            self.blocks = nn.ModuleList([Block() for _ in range(2)])
            self.norm = nn.LayerNorm(d, eps=1e-6)
            self.head = nn.Linear(d, classes)
            nn.init.trunc_normal_(self.cls_token, std=0.02)

        def patches(self, x):
            if patchify == "conv":
                return self.patch_embed(x).flatten(2).transpose(1, 2)
            u = x.unfold(2, p, p).unfold(3, p, p)  # (b, c, rows, cols, p, p)
            u = u.permute(0, 2, 3, 1, 4, 5).reshape(x.shape[0], n, c * p * p)
            return F.linear(u, self.patch_embed.weight.flatten(1), self.patch_embed.bias)

        def forward(self, x):
            x = self.patches(x)
            x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x)[:, 0])

    model = ViT()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    rng = np.random.default_rng(141)
    losses = []
    for _ in range(3):
        x = torch.from_numpy(rng.standard_normal((4, c, img, img)))
        y = torch.from_numpy(rng.integers(0, classes, 4))
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        h = model.blocks[0].norm1(
            torch.cat([model.cls_token.expand(2, -1, -1), model.patches(x[:2])], 1) + model.pos_embed)
        _, weights = model.blocks[0].attn(h, h, h, average_attn_weights=False)
        out = model(x)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), out=out,
                weights=weights)


@pytest.mark.parametrize("patchify", ["conv", "unfold"])
def test_vit_tiny_cls_token(torch, patchify):
    both(torch, vit_tiny, patchify=patchify)


# ---- prototypical networks: prototypes by the mean of support embeddings, squared distances, numpy episodes -----
def protonet(torch, init, distance):
    nn, F = torch.nn, torch.nn.functional
    n_classes, way, shot, n_query, dim = 6, 3, 2, 3, 5
    # (no bias last: a shift of every embedding leaves the distances, so its exact gradient is 0 and Adam would
    # turn rounding noise into steps)
    encoder = nn.Sequential(nn.Linear(dim, 12), nn.ReLU(), nn.Linear(12, 6, bias=False))
    init = start(encoder, init)
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-2)
    rng = np.random.default_rng(142)
    centers = 2 * rng.standard_normal((n_classes, dim))
    losses, accs = [], []
    for _ in range(4):
        classes = rng.choice(n_classes, way, replace=False)
        points = centers[classes][:, None] + rng.standard_normal((way, shot + n_query, dim))
        support = torch.from_numpy(points[:, :shot].reshape(way * shot, dim))
        query = torch.from_numpy(points[:, shot:].reshape(way * n_query, dim))
        protos = encoder(support).view(way, shot, -1).mean(dim=1)
        q = encoder(query)
        if distance == "cdist":
            dists = torch.cdist(q, protos, p=2) ** 2
        else:
            dists = (q.unsqueeze(1) - protos.unsqueeze(0)).pow(2).sum(dim=-1)
        logp = F.log_softmax(-dists, dim=1)
        y = torch.arange(way).repeat_interleave(n_query)
        loss = F.nll_loss(logp, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        accs.append((logp.argmax(dim=1) == y).float().mean())
    return dict(init=init, losses=losses, accs=accs, dists=dists, params=list(encoder.parameters()))


@pytest.mark.parametrize("distance", ["cdist", "broadcast"])
def test_prototypical_networks(torch, distance):
    both(torch, protonet, distance=distance)


# ---- pix2pix-lite: a U-Net-ish generator, a PatchGAN on (input, output) pairs, L1 + BCE-with-logits ------------
def pix2pix(torch, init):
    nn = torch.nn

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.down1 = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1), nn.LeakyReLU(0.2))
            self.down2 = nn.Sequential(nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.InstanceNorm2d(8, affine=True),
                                       nn.LeakyReLU(0.2, inplace=True))
            self.up1 = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False), nn.InstanceNorm2d(4),
                                     nn.Dropout(p=0.0), nn.ReLU(inplace=True))
            self.up2 = nn.Sequential(nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

        def forward(self, x):
            d1 = self.down1(x)
            return self.up2(torch.cat([self.up1(self.down2(d1)), d1], dim=1))

    D = nn.Sequential(nn.Conv2d(6, 4, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(4, 8, 3, 1, 1, bias=False),
                      nn.InstanceNorm2d(8, affine=True), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, 1, 1))
    G = Generator()
    init = start(nn.ModuleDict(dict(G=G, D=D)), init)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce, l1 = nn.BCEWithLogitsLoss(), nn.L1Loss()
    rng = np.random.default_rng(143)
    d_losses, g_losses = [], []
    for _ in range(3):
        x = torch.from_numpy(rng.uniform(-1, 1, (2, 3, 8, 8)))
        y = torch.from_numpy(np.tanh(rng.standard_normal((2, 3, 8, 8))))
        fake = G(x)
        real_logit, fake_logit = D(torch.cat([x, y], 1)), D(torch.cat([x, fake.detach()], 1))
        d_loss = 0.5 * (bce(real_logit, torch.ones_like(real_logit)) + bce(fake_logit, torch.zeros_like(fake_logit)))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        logit = D(torch.cat([x, fake], 1))
        g_loss = bce(logit, torch.ones_like(logit)) + 10.0 * l1(fake, y)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        d_losses.append(d_loss)
        g_losses.append(g_loss)
    G.eval()
    with torch.no_grad():
        out = G(x)
    return dict(init=init, d_losses=d_losses, g_losses=g_losses, params=list(G.parameters()) + list(D.parameters()),
                out=out)


def test_pix2pix_lite(torch):
    both(torch, pix2pix)


# ---- EfficientNet-lite: MBConv blocks (expand, depthwise, squeeze-and-excite, project), BatchNorm momentum 0.01 --
def efficientnet(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def bn(c):
        return nn.BatchNorm2d(c, momentum=0.01, eps=1e-3)

    class SqueezeExcite(nn.Module):
        def __init__(self, c, r):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.reduce, self.expand = nn.Conv2d(c, r, 1), nn.Conv2d(r, c, 1)

        def forward(self, x):
            return x * torch.sigmoid(self.expand(F.silu(self.reduce(self.pool(x)))))

    class MBConv(nn.Module):
        def __init__(self, cin, cout, stride, ratio=2):
            super().__init__()
            hid = cin * ratio
            self.expand = nn.Sequential(nn.Conv2d(cin, hid, 1, bias=False), bn(hid), nn.SiLU())
            self.depthwise = nn.Sequential(nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False), bn(hid),
                                           nn.SiLU(inplace=True))
            self.se = SqueezeExcite(hid, max(1, cin // 2))
            self.project = nn.Sequential(nn.Conv2d(hid, cout, 1, bias=False), bn(cout))
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            y = self.project(self.se(self.depthwise(self.expand(x))))
            return x + y if self.residual else y

    model = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1, bias=False), bn(4), nn.SiLU(), MBConv(4, 4, 1), MBConv(4, 6, 2),
                          MBConv(6, 6, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    rng = np.random.default_rng(144)
    losses = []
    for _ in range(3):
        x = torch.from_numpy(rng.standard_normal((3, 3, 8, 8)))
        loss = F.cross_entropy(model(x), torch.from_numpy(rng.integers(0, 3, 3)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    model.eval()
    with torch.no_grad():
        out = model(x)
    return dict(init=init, losses=losses, params=list(model.parameters()), buffers=list(model.buffers()), out=out)


def test_efficientnet_lite_blocks(torch):
    both(torch, efficientnet)


# ---- data pipelines: dict items, default collate, BatchSampler, Subset, ConcatDataset, IterableDataset -------
def pipelines(torch, init):
    data = torch.utils.data
    rng = np.random.default_rng(145)
    features = rng.standard_normal((7, 3))
    Pair = collections.namedtuple("Pair", "left right")

    class Items(data.Dataset):
        def __len__(self):
            return 7

        def __getitem__(self, i):
            return dict(x=torch.from_numpy(features[i]), label=i % 3, weight=i / 2, name=f"s{i}",
                        pair=Pair(i, torch.tensor([i, i + 1])))

    class Stream(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            assert info is None
            for i in range(5):
                yield torch.full((2,), float(i)), i

    items = Items()
    loader = list(data.DataLoader(items, batch_size=3))
    sampler = data.BatchSampler(data.SequentialSampler(range(7)), batch_size=3, drop_last=False)
    by_sampler = list(data.DataLoader(items, batch_sampler=sampler))
    sub = data.Subset(items, [4, 0, 2])
    cat = data.ConcatDataset([sub, items])
    stream = list(data.DataLoader(Stream(), batch_size=2))
    collated = data.default_collate([features[0], features[1]])
    converted = data.default_convert(dict(a=features[2], b=[np.int64(3), "s"], c=(features[3],)))
    pairs = data.default_collate([Pair(1.5, np.float64(2.0)), Pair(2.5, np.float64(3.0))])
    return dict(init=None, loader=loader, kinds=[type(b["pair"]).__name__ for b in loader], batches=list(sampler),
                by_sampler=by_sampler, sub=[sub[i]["name"] for i in range(len(sub))], lens=[len(sub), len(cat)],
                cat=[cat[i]["name"] for i in (0, 2, 3, 9)], cumulative=cat.cumulative_sizes, stream=stream,
                collated=collated, converted=converted, pairs=pairs, pair_kind=type(pairs).__name__,
                n_loader=len(data.DataLoader(items, batch_size=3, drop_last=True)))


def test_data_pipelines(torch):
    both(torch, pipelines)


# ---- gradient bookkeeping: micro-batch accumulation, zero_grad flavours, parameter vectors, a frozen sub-module ----
def bookkeeping(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(146)
    accum, norms, losses, none_after, sums = 3, [], [], [], []
    for step in range(4):
        if step == 2:
            model[0].requires_grad_(False)
        for _ in range(accum):
            x, y = torch.from_numpy(rng.standard_normal((2, 4))), torch.from_numpy(rng.standard_normal((2, 2)))
            loss = F.mse_loss(model(x), y) / accum
            loss.backward()
            losses.append(loss.item())
        params = [p for p in model.parameters() if p.grad is not None]
        norms.append(nn.utils.clip_grad_norm_(params, max_norm=0.3))
        sums.append([None if p.grad is None else p.grad.abs().sum() for p in model.parameters()])
        opt.step()
        if step % 2 == 0:
            model.zero_grad(set_to_none=False)
        else:
            opt.zero_grad(set_to_none=True)
        none_after.append([p.grad is None for p in model.parameters()])
    vec = nn.utils.parameters_to_vector(model.parameters())
    nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    return dict(init=init, losses=losses, norms=norms, sums=sums, none_after=none_after, vec=vec,
                params=list(model.parameters()), flags=[p.requires_grad for p in model.parameters()])


def test_gradient_bookkeeping(torch):
    both(torch, bookkeeping)


# ---- a second-order optimiser: Newton steps with conjugate gradient on Hessian-vector products -----------------
def newton_cg(torch, init):
    AF = torch.autograd.functional
    rng = np.random.default_rng(147)
    X, y = torch.from_numpy(rng.standard_normal((10, 4))), torch.from_numpy(rng.standard_normal(10))

    def loss_fn(w):
        return ((X @ w - y) ** 2).mean() + 0.05 * (w ** 4).sum()

    w = torch.from_numpy(0.5 * rng.standard_normal(4))
    losses, steps = [], []
    for _ in range(2):
        wg = w.clone().requires_grad_(True)
        loss = loss_fn(wg)
        g = torch.autograd.grad(loss, wg)[0]
        x, r = torch.zeros_like(g), g.clone()
        p, rs = r.clone(), torch.dot(r, r)
        for _ in range(4):
            Ap = AF.hvp(loss_fn, w, p)[1]
            alpha = rs / torch.dot(p, Ap)
            x, r = x + alpha * p, r - alpha * Ap
            rs_new = torch.dot(r, r)
            p, rs = r + (rs_new / rs) * p, rs_new
        w = w - x
        losses.append(loss.detach())
        steps.append(x)
    v = torch.from_numpy(rng.standard_normal(4))
    u = torch.from_numpy(rng.standard_normal(10))
    value, vh = AF.vhp(loss_fn, w, v)
    out, jv = AF.jvp(lambda a: torch.tanh(X @ a), w, v)
    out2, uj = AF.vjp(lambda a: torch.tanh(X @ a), w, u)
    pair = AF.hvp(lambda a, b: (a * b).sum() + (a ** 3).sum(), (w, v), (v, w))
    return dict(init=None, losses=losses, steps=steps, w=w, value=value, vh=vh, out=out, jv=jv, out2=out2, uj=uj,
                pair=pair, hessian=AF.hessian(loss_fn, w), jacobian=AF.jacobian(lambda a: torch.tanh(X @ a), w))


def test_newton_conjugate_gradient(torch):
    both(torch, newton_cg)


# ---- noise-robust losses: generalized cross entropy and symmetric cross entropy on flipped labels -------------
def robust_losses(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional
    classes = 4

    def gce(logits, y, q=0.7):
        py = F.softmax(logits, dim=1).gather(1, y.unsqueeze(1)).squeeze(1).clamp(min=1e-7)
        return ((1 - py ** q) / q).mean()  # (1 - p_y^q) / q: MAE as q -> 1, CE as q -> 0

    def sce(logits, y, alpha=0.1, beta=1.0):
        p = F.softmax(logits, dim=1).clamp(min=1e-7, max=1.0)
        onehot = F.one_hot(y, classes).to(logits.dtype).clamp(min=1e-4, max=1.0)
        rce = -(p * torch.log(onehot)).sum(dim=1).mean()
        return alpha * F.cross_entropy(logits, y) + beta * rce

    model = nn.Sequential(nn.Linear(3, 10), nn.ReLU(), nn.Linear(10, classes))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    rng = np.random.default_rng(148)
    losses = []
    for _ in range(4):
        x = rng.standard_normal((8, 3))
        clean = np.argmax(x[:, [0, 1, 2, 0]] * [1, 1, 1, -1], axis=1)
        noisy = np.where(rng.random(8) < 0.3, rng.integers(0, classes, 8), clean)
        logits = model(torch.from_numpy(x))
        loss = (gce if kind == "gce" else sce)(logits, torch.from_numpy(noisy))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    auto = F.one_hot(torch.from_numpy(noisy))
    return dict(init=init, losses=losses, params=list(model.parameters()), auto=auto,
                given=F.one_hot(torch.tensor([[0, 2], [1, 1]]), num_classes=-1))


@pytest.mark.parametrize("kind", ["gce", "sce"])
def test_noise_robust_losses(torch, kind):
    both(torch, robust_losses, kind=kind)


# ---- a text classifier: pad_sequence, length masks, masked mean / max / attention pooling, packed BiGRU --------
def masked_pooling(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rnn = nn.utils.rnn
    vocab, d, hid, classes = 12, 6, 5, 3

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d, padding_idx=0)
            self.gru = nn.GRU(d, hid, batch_first=True, bidirectional=True)
            self.score = nn.Linear(2 * hid, 1)
            self.fc = nn.Linear(8 * hid, classes)

        def forward(self, padded, lengths):
            mask = torch.arange(padded.shape[1]).unsqueeze(0) < lengths.unsqueeze(1)
            packed = rnn.pack_padded_sequence(self.emb(padded), lengths, batch_first=True, enforce_sorted=False)
            out, h = self.gru(packed)
            out, _ = rnn.pad_packed_sequence(out, batch_first=True, total_length=padded.shape[1])
            mean = (out * mask.unsqueeze(-1)).sum(dim=1) / lengths.unsqueeze(-1)
            mx = out.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(dim=1)
            a = F.softmax(self.score(out).squeeze(-1).masked_fill(~mask, float("-inf")), dim=1)
            att = (a.unsqueeze(-1) * out).sum(dim=1)
            return self.fc(torch.cat([mean, mx, att, torch.cat([h[0], h[1]], dim=-1)], dim=-1)), mask

    model = Classifier()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(149)
    losses = []
    for _ in range(3):
        lengths = rng.integers(1, 6, 4)
        seqs = [torch.from_numpy(rng.integers(1, vocab, n)) for n in lengths]
        padded = rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
        logits, mask = model(padded, torch.from_numpy(lengths))
        loss = F.cross_entropy(logits, torch.from_numpy(rng.integers(0, classes, 4)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    minus = rnn.pad_sequence(seqs, batch_first=False, padding_value=-1)
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), mask=mask,
                padded=padded, minus=minus)


def test_masked_pooling_bigru_classifier(torch):
    both(torch, masked_pooling)
