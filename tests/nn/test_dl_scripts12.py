"""Deep-learning scripts of more kinds again (a nanoGPT-style char model trained as its train.py does, CBOW word2vec
with negative sampling and a max_norm table, a CNN on tensor-only augmentation reloaded non-strictly from bytes,
attention-based multiple-instance pooling, a hinge-loss GAN with a spectral-normed critic, a weight-tied language
model's parameter bookkeeping, CTC with concatenated and padded targets and tuple lengths, quantile regression with a
pinball loss, deep ensembles through torch.func's vmap, a rotary + ALiBi decoder with non-persistent buffers), written
once against a `torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses,
gradients, parameters and outputs must agree closely (float64 throughout; random draws by numpy)."""
import copy
import inspect
import io
import math

import numpy as np
import pytest

from twins import both, grads, start


# ---- nanoGPT's train.py on a char model: decay groups by dim, fused / foreach AdamW, SDPA, disabled amp ---------
def nanogpt(torch, init, fused):
    nn, F = torch.nn, torch.nn.functional
    vocab, block, d, heads, layers = 11, 8, 16, 2, 2

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.resid_dropout = nn.Dropout(0.0)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(d, dim=2)
            q, k, v = (z.view(B, T, heads, C // heads).transpose(1, 2) for z in (q, k, v))
            backends = [torch.nn.attention.SDPBackend.FLASH_ATTENTION, torch.nn.attention.SDPBackend.MATH]
            with torch.nn.attention.sdpa_kernel(backends):
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(d, bias=False), CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(d, bias=False)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(0.0))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block, d), drop=nn.Dropout(0.0),
                h=nn.ModuleList([Block() for _ in range(layers)]), ln_f=nn.LayerNorm(d, bias=False)))
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * layers))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def get_num_params(self, non_embedding=True):
            n = sum(p.numel() for p in self.parameters())
            return n - self.transformer.wpe.weight.numel() if non_embedding else n

        def forward(self, idx, targets=None):
            t = idx.size(1)
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for blk in self.transformer.h:
                x = blk(x)
            x = self.transformer.ln_f(x)
            if targets is None:
                return self.lm_head(x[:, [-1], :]), None
            logits = self.lm_head(x)
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay = [p for p in param_dict.values() if p.dim() >= 2]
            nodecay = [p for p in param_dict.values() if p.dim() < 2]
            groups = [{"params": decay, "weight_decay": weight_decay}, {"params": nodecay, "weight_decay": 0.0}]
            fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
            extra = dict(fused=True) if fused and fused_available and device_type == "cpu" else dict(foreach=True)
            return torch.optim.AdamW(groups, lr=learning_rate, betas=betas, **extra), len(decay), len(nodecay)

    model = GPT()
    init = start(model, init)
    optimizer, n_decay, n_nodecay = model.configure_optimizers(0.1, 6e-3, (0.9, 0.95), "cpu")
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    ctx = torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False)
    rng = np.random.default_rng(120)
    data = rng.integers(0, vocab, 200)

    def get_batch(split):
        src = data[:150] if split == "train" else data[150:]
        ix = rng.integers(0, len(src) - block, 3)
        x = torch.from_numpy(np.stack([src[i:i + block] for i in ix]).astype(np.int64))
        y = torch.from_numpy(np.stack([src[i + 1:i + 1 + block] for i in ix]).astype(np.int64))
        return x, y

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(2)
            for k in range(2):
                X, Y = get_batch(split)
                with ctx:
                    _, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    def get_lr(it, warmup=2, decay_iters=5, lr=6e-3, min_lr=6e-4):
        if it < warmup:
            return lr * (it + 1) / (warmup + 1)
        ratio = (it - warmup) / (decay_iters - warmup)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * min(ratio, 1.0))) * (lr - min_lr)

    X, Y = get_batch("train")
    evals, losses, norms, lrs = [], [], [], []
    for it in range(5):
        lr = get_lr(it)
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        if it % 2 == 0:
            evals.append(estimate_loss())
        for _ in range(2):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / 2
            X, Y = get_batch("train")
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item() * 2)
        lrs.append(lr)
    model.eval()
    last, none = model(X[:, :4])
    return dict(init=init, groups=[n_decay, n_nodecay], nparams=model.get_num_params(), evals=evals, losses=losses,
                norms=norms, lrs=lrs, params=list(model.parameters()), last=last, none=none is None,
                scale=scaler.get_scale(), enabled=scaler.is_enabled(), tied=model.lm_head.weight is
                model.transformer.wte.weight, steps=[float(optimizer.state[p]["step"]) for p in model.parameters()])


@pytest.mark.parametrize("fused", [True, False])
def test_nanogpt_train_loop(torch, fused):
    both(torch, nanogpt, fused=fused)


# ---- CBOW word2vec with negative sampling: a max_norm input table, bmm against target + negatives ---------------
def cbow(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, D, K, window = 10, 5, 3, 2

    class CBOW(nn.Module):
        def __init__(self):
            super().__init__()
            self.context = nn.Embedding(V, D, max_norm=1.0)
            self.target = nn.Embedding(V, D)

        def forward(self, ctx, words):  # ctx: (B, 2w); words: (B, 1 + K), the true word first
            h = self.context(ctx).mean(1, keepdim=True)  # (B, 1, D)
            scores = torch.bmm(self.target(words), h.transpose(1, 2)).squeeze(-1)  # (B, 1 + K)
            sign = torch.ones_like(scores)
            sign[:, 1:] = -1
            return -F.logsigmoid(sign * scores).sum(1).mean()

    model = CBOW()
    init = start(model, init)
    rng = np.random.default_rng(121)
    corpus = rng.integers(0, V, 40)
    counts = np.bincount(corpus, minlength=V)
    noise = counts ** 0.75 / (counts ** 0.75).sum()
    opt = torch.optim.SGD(model.parameters(), lr=0.3)
    losses, norms = [], []
    for _ in range(3):
        keep = rng.random(len(corpus)) < np.minimum(1.0, np.sqrt(1e-1 / (counts[corpus] / len(corpus))) + 0.3)
        words = corpus[keep]
        centre = np.arange(window, len(words) - window)
        ctx = np.stack([words[centre + o] for o in (-2, -1, 1, 2)], 1)
        negatives = rng.choice(V, size=(len(centre), K), p=noise)
        loss = model(torch.from_numpy(ctx), torch.from_numpy(np.concatenate([words[centre, None], negatives], 1)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        norms.append(model.context.weight.detach().norm(dim=1))
    emb = F.normalize(model.context.weight.detach() + model.target.weight.detach(), dim=1)
    return dict(init=init, losses=losses, norms=norms, grads=grads(model), params=list(model.parameters()),
                nearest=(emb @ emb[4]).topk(3).indices)


def test_cbow_negative_sampling_max_norm(torch):
    both(torch, cbow)


# ---- a CNN on tensor-only augmentation, reloaded non-strictly from bytes ----------------------------------------
def augmented_cnn(torch, init):
    nn, F = torch.nn, torch.nn.functional

    def net(extra=False):
        layers = [nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
                  nn.Dropout2d(0.0), nn.Conv2d(4, 6, 3), nn.ReLU(), nn.AdaptiveMaxPool2d((2, 2)), nn.Flatten(),
                  nn.Linear(24, 3)]
        if extra:
            layers[-1] = nn.Linear(24, 5)
            layers.append(nn.LogSoftmax(dim=1))
            layers.insert(3, nn.BatchNorm2d(4, affine=False))
        return nn.Sequential(*layers)

    model = net()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)
    rng = np.random.default_rng(122)
    images = torch.tensor(rng.standard_normal((6, 1, 8, 8)))
    labels = torch.tensor(rng.integers(0, 3, 6))
    losses, accs = [], []
    for step in range(3):
        x = images.clone()
        flip = torch.from_numpy(rng.random(6) < 0.5)
        x = torch.where(flip[:, None, None, None], torch.flip(x, dims=[3]), x)
        x = torch.roll(x, shifts=(int(rng.integers(-1, 2)), 1), dims=(2, 3))
        if step % 2:  # a random 7x7 crop by slicing a reflect-padded image
            r, c = rng.integers(0, 4, 2)
            x = F.pad(x, (1, 1, 1, 1), mode="reflect")[:, :, r:r + 7, c:c + 7]
        else:  # or by picking one of unfold's windows
            patches = x.unfold(2, 7, 1).unfold(3, 7, 1)  # (N, C, 2, 2, 7, 7)
            x = patches[:, :, int(rng.integers(0, 2)), int(rng.integers(0, 2))]
        out = model(x)
        loss = F.cross_entropy(out, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
        accs.append((out.argmax(dim=1) == labels).float().mean())
    drop = nn.Dropout2d(0.5)(torch.ones(4, 3, 2, 2))
    whole = [bool(((c == 0).all() | (c == 2).all()).item()) for c in drop.flatten(0, 1)]
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf)
    other = net(extra=True).double()
    state.pop("0.bias")
    report = other.load_state_dict(state, strict=False)
    same = net().double()
    full = same.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    model.eval()
    same.eval()
    test = images[:, :, :7, :7]
    return dict(init=init, losses=losses, accs=accs, params=list(model.parameters()), whole=whole,
                buffers=list(model.buffers()), missing=report.missing_keys, unexpected=report.unexpected_keys,
                report=repr(report), full=repr(full), is_tuple=isinstance(report, tuple), eval_out=model(test),
                reloaded=same(test), kept=other[0].weight)


def test_augmented_cnn_state_dict_bytes_non_strict(torch):
    both(torch, augmented_cnn)


# ---- attention-based multiple-instance learning: a gated, masked softmax pool beside MultiheadAttention ---------
def mil(torch, init):
    nn, F = torch.nn, torch.nn.functional
    d, h = 6, 4

    class AttentionMIL(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Sequential(nn.Linear(3, d), nn.ReLU())
            self.V, self.U, self.w = nn.Linear(d, h), nn.Linear(d, h), nn.Linear(h, 1)
            self.query = nn.Parameter(torch.zeros(1, 1, d))
            self.mha = nn.MultiheadAttention(d, 2, batch_first=True)
            self.head = nn.Linear(2 * d, 1)

        def forward(self, bags, mask):  # bags: (B, N, 3); mask: True where an instance is present
            x = self.embed(bags)
            a = self.w(torch.tanh(self.V(x)) * torch.sigmoid(self.U(x))).squeeze(-1)  # gated attention
            a = torch.softmax(a.masked_fill(~mask, float("-inf")), dim=1)
            pooled = torch.bmm(a.unsqueeze(1), x).squeeze(1)
            q = self.query.expand(x.size(0), -1, -1)
            z, w = self.mha(q, x, x, key_padding_mask=~mask, need_weights=True, average_attn_weights=False)
            return self.head(torch.cat([pooled, z.squeeze(1)], -1)).squeeze(-1), a, w

    model = AttentionMIL()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    rng = np.random.default_rng(123)
    sizes = [5, 2, 4, 1]
    bags = torch.tensor(rng.standard_normal((4, 5, 3)))
    mask = torch.arange(5)[None, :] < torch.tensor(sizes)[:, None]
    bags = bags.masked_fill(~mask.unsqueeze(-1), 0.0)
    y = torch.tensor([1.0, 0.0, 1.0, 0.0], dtype=torch.float64)
    losses = []
    for _ in range(3):
        logit, a, w = model(bags, mask)
        loss = F.binary_cross_entropy_with_logits(logit, y, pos_weight=torch.tensor(2.0, dtype=torch.float64))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, a=a, w=w, grads=grads(model), params=list(model.parameters()),
                padded=[float(a[i, s:].detach().sum()) for i, s in enumerate(sizes)], top=a.argmax(1))


def test_attention_multiple_instance_pooling(torch):
    both(torch, mil)


# ---- a hinge-loss GAN: spectral-normed critic, Adam(0, 0.9), the critic frozen during the generator's step ------
def hinge_gan(torch, init):
    nn, F = torch.nn, torch.nn.functional
    SN = torch.nn.utils.spectral_norm
    z_dim = 3
    G = nn.Sequential(nn.Linear(z_dim, 8), nn.LeakyReLU(0.2), nn.Linear(8, 2))
    D = nn.Sequential(SN(nn.Linear(2, 8)), nn.LeakyReLU(0.2), SN(nn.Linear(8, 1), n_power_iterations=2))
    both_nets = nn.ModuleDict({"G": G, "D": D})
    init = start(both_nets, init)
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.9))
    opt_d = torch.optim.Adam(D.parameters(), lr=4e-3, betas=(0.0, 0.9))
    rng = np.random.default_rng(124)
    d_losses, g_losses, frozen = [], [], []
    for _ in range(3):
        real = torch.tensor(rng.standard_normal((6, 2)) * 0.5 + np.array([2.0, -1.0]))
        z = torch.tensor(rng.standard_normal((6, z_dim)))
        fake = G(z)
        d_loss = F.relu(1.0 - D(real)).mean() + F.relu(1.0 + D(fake.detach())).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        for p in D.parameters():
            p.requires_grad_(False)
        g_loss = -D(G(torch.tensor(rng.standard_normal((6, z_dim))))).mean()
        opt_g.zero_grad()
        g_loss.backward()
        frozen.append([p.grad is None for p in D.parameters()])
        opt_g.step()
        for p in D.parameters():
            p.requires_grad_(True)
        d_losses.append(d_loss)
        g_losses.append(g_loss)
    return dict(init=init, d=d_losses, g=g_losses, frozen=frozen, params=list(both_nets.parameters()),
                buffers=list(both_nets.buffers()), names=[n for n, _ in D.named_parameters()],
                sigma=torch.linalg.matrix_norm(D[0].weight.detach(), ord=2))


def test_hinge_gan_spectral_norm_frozen_critic(torch):
    both(torch, hinge_gan)


# ---- a weight-tied language model: the shared parameter counted once, named twice where asked -----------------
def tied_lm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, d = 9, 6

    class TiedLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(V, d)
            self.rnn = nn.GRU(d, d, batch_first=True)
            self.decoder = nn.Linear(d, V)
            self.decoder.weight = self.encoder.weight

        def forward(self, x, h=None):
            out, h = self.rnn(self.encoder(x), h)
            return self.decoder(out), h

    model = TiedLM()
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    rng = np.random.default_rng(125)
    seq = torch.from_numpy(rng.integers(0, V, (2, 7)))
    losses, h = [], None
    for _ in range(3):
        logits, h = model(seq[:, :-1], h)
        h = h.detach()
        loss = F.cross_entropy(logits.transpose(1, 2), seq[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    again = TiedLM().double()
    again.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    return dict(init=init, losses=losses, shared_grad=model.encoder.weight.grad, params=list(model.parameters()),
                names=[n for n, _ in model.named_parameters()],
                all_names=[n for n, _ in model.named_parameters(remove_duplicate=False)],
                count=sum(p.numel() for p in model.parameters()), keys=list(model.state_dict()),
                opt_count=len(opt.param_groups[0]["params"]), states=len(opt.state),
                same=model.decoder.weight is model.encoder.weight, still=again.decoder.weight is again.encoder.weight,
                reloaded=again(seq)[0], modules=[n for n, _ in model.named_modules(remove_duplicate=False)])


def test_tied_language_model_parameter_bookkeeping(torch):
    both(torch, tied_lm)


# ---- CTC: concatenated and padded targets, lengths as tensors and as tuples, an impossible sample zeroed ---------
def ctc_variants(torch, init, reduction, lengths_as):
    nn = torch.nn
    T, N, C = 7, 3, 4

    class Acoustic(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 5, 3, padding=1)
            self.out = nn.Linear(5, C)

        def forward(self, x):  # (N, 2, T) -> (T, N, C) log-probabilities
            return self.out(torch.relu(self.conv(x)).permute(2, 0, 1)).log_softmax(2)

    model = Acoustic()
    init = start(model, init)
    criterion = nn.CTCLoss(blank=0, reduction=reduction, zero_infinity=True)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    rng = np.random.default_rng(126)
    x = torch.tensor(rng.standard_normal((N, 2, T)))
    in_lens, tgt_lens = (7, 5, 2), (3, 2, 3)  # the last needs more frames than it has: an infinite loss
    labels = [rng.integers(1, C, n) for n in tgt_lens]
    flat = torch.from_numpy(np.concatenate(labels))
    padded = torch.zeros(N, max(tgt_lens), dtype=torch.long)
    for i, lab in enumerate(labels):
        padded[i, :len(lab)] = torch.from_numpy(lab)
    lengths = (in_lens, tgt_lens) if lengths_as == "tuple" else (torch.tensor(in_lens), torch.tensor(tgt_lens))
    losses, alt = [], []
    for step in range(3):
        log_probs = model(x)
        loss = criterion(log_probs, flat if step % 2 else padded, *lengths)
        alt.append(criterion(log_probs.detach(), padded if step % 2 else flat, *lengths))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, alt=alt, grads=grads(model), params=list(model.parameters()))


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("lengths_as", ["tensor", "tuple"])
def test_ctc_concatenated_padded_targets_tuple_lengths(torch, reduction, lengths_as):
    both(torch, ctc_variants, reduction=reduction, lengths_as=lengths_as)


# ---- quantile regression: a pinball loss over three quantiles, NaN targets, empirical quantiles of residuals ------
def quantile_regression(torch, init):
    nn = torch.nn
    qs = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    model = nn.Sequential(nn.Linear(2, 8), nn.SiLU(), nn.Linear(8, 3))
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    rng = np.random.default_rng(127)
    x = rng.standard_normal((12, 2))
    y = x[:, :1] * 2 + rng.standard_normal((12, 1)) * (1 + np.abs(x[:, 1:]))
    y[[2, 7]] = np.nan  # missing targets
    x, y = torch.tensor(x), torch.tensor(y)
    losses = []
    for _ in range(4):
        pred = model(x)
        e = y - pred  # (12, 3)
        pinball = torch.where(e >= 0, qs * e, (qs - 1) * e)
        loss = torch.nanmean(pinball)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    with torch.no_grad():
        pred = model(x)
        ok = ~torch.isnan(y[:, 0])
        res = (y - pred[:, 1:2])[ok, 0]
        modes = {m: torch.quantile(res, qs, interpolation=m) for m in ("linear", "lower", "higher", "midpoint",
                                                                       "nearest")}
        nan_q = torch.nanquantile(y - pred, qs, dim=0, keepdim=True)
        med, med_idx = pred.median(dim=0)
        kth = torch.kthvalue(pred[:, 2], 3)
        covered = ((y[:, 0] >= pred[:, 0]) & (y[:, 0] <= pred[:, 2]))[ok].double().mean()
        crossing = torch.where(pred[:, 0] > pred[:, 2], 1, 0).sum()
    return dict(init=init, losses=losses, params=list(model.parameters()), modes=modes, nan_q=nan_q, med=med,
                med_idx=med_idx, median_all=pred.median(), kth=list(kth), covered=covered, crossing=crossing,
                nanmean=torch.nanmean(y, dim=0), nansum=y.nansum())


def test_quantile_regression_pinball(torch):
    both(torch, quantile_regression)


# ---- deep ensembles the torch.func way: stacked state, functional_call under vmap, against a loop -------------
def ensemble(torch, init, per_model_batches, base_device):
    nn, F = torch.nn, torch.nn.functional
    from_func = torch.func
    members = nn.ModuleList([nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2)) for _ in range(4)])
    init = start(members, init)
    params, buffers = from_func.stack_module_state(list(members))
    base = copy.deepcopy(members[0])
    if base_device == "meta":  # (the tutorial's spelling: a skeleton without storage)
        base = base.to("meta")

    def fmodel(p, b, x):
        return from_func.functional_call(base, (p, b), (x,))

    rng = np.random.default_rng(128)
    if per_model_batches:
        x = torch.tensor(rng.standard_normal((4, 5, 3)))
        out = torch.vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, x)
        loop = torch.stack([m(x[i]) for i, m in enumerate(members)])
    else:
        x = torch.tensor(rng.standard_normal((5, 3)))
        out = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
        loop = torch.stack([m(x) for m in members])
    target = torch.tensor(rng.integers(0, 2, 5))
    loss = sum(F.cross_entropy(o, target) for o in out)
    loss.backward()
    sum(F.cross_entropy(o, target) for o in loop).backward()
    stacked = {k: torch.stack([dict(m.named_parameters())[k].grad for m in members]) for k in params}
    probs = out.softmax(-1)
    return dict(init=init, out=out, loop=loop, loss=loss, grads={k: v.grad for k, v in params.items()},
                loop_grads=stacked, keys=list(params), leaf=[v.is_leaf and v.requires_grad for v in params.values()],
                mean=probs.mean(0), disagreement=probs.var(0, unbiased=False).sum(-1),
                entropy=-(probs.mean(0) * probs.mean(0).log()).sum(-1), device=str(base[0].weight.device))


@pytest.mark.parametrize("per_model_batches", [False, True])
def test_deep_ensemble_vmap_functional_call(torch, per_model_batches):
    both(torch, ensemble, per_model_batches=per_model_batches, base_device="cpu")


@pytest.mark.xfail(strict=True, raises=RuntimeError,
                   reason="minigrad has no meta device (tensors without storage): out of scope for a numpy engine")
def test_deep_ensemble_meta_skeleton(torch):
    both(torch, ensemble, per_model_batches=False, base_device="meta")


# ---- a rotary + ALiBi decoder: complex rotations, non-persistent buffers, trained a few steps -------------------
def rotary_decoder(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, T, d, heads = 8, 6, 8, 2
    hd = d // heads

    class RotaryAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d)
            inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))
            angles = torch.outer(torch.arange(T, dtype=torch.float64), inv)
            self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles), persistent=False)
            slopes = torch.tensor([2.0 ** (-8 * (i + 1) / heads) for i in range(heads)], dtype=torch.float64)
            dist = torch.arange(T)[None, :] - torch.arange(T)[:, None]
            bias = slopes[:, None, None] * dist.clamp(max=0)
            causal = torch.ones(T, T, dtype=torch.bool).triu(1)
            self.register_buffer("alibi", bias.masked_fill(causal, float("-inf")), persistent=False)
            self.register_buffer("calls", torch.zeros((), dtype=torch.long))

        def rotate(self, x):  # (B, H, t, hd): pairs of features rotated by position
            xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
            return torch.view_as_real(xc * self.freqs_cis[:x.size(2)]).flatten(-2).type_as(x)

        def forward(self, x):
            B, t, _ = x.shape
            q, k, v = self.qkv(x).view(B, t, 3, heads, hd).permute(2, 0, 3, 1, 4).unbind(0)
            q, k = self.rotate(q), self.rotate(k)
            att = (q @ k.transpose(-2, -1)) / math.sqrt(hd) + self.alibi[:, :t, :t]
            y = F.softmax(att, dim=-1) @ v
            self.calls += 1
            return self.proj(y.transpose(1, 2).reshape(B, t, d))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, d)
            self.attn, self.norm = RotaryAttention(), nn.RMSNorm(d)
            self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d))
            self.out = nn.Linear(d, V)

        def forward(self, idx):
            x = self.emb(idx)
            x = x + self.attn(self.norm(x))
            return self.out(x + self.ff(self.norm(x)))

    model = Decoder()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    rng = np.random.default_rng(129)
    losses = []
    for step in range(3):
        seq = torch.from_numpy(rng.integers(0, V, (2, T if step % 2 else T - 1)))
        logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), seq[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)
    return dict(init=init, losses=losses, params=list(model.parameters()), keys=list(model.state_dict()),
                buffers=[n for n, _ in model.named_buffers()], dtypes=[str(b.dtype).split(".")[-1]
                                                                     for b in model.buffers()],
                freqs=torch.view_as_real(model.attn.freqs_cis), calls=model.attn.calls,
                unit=model.attn.freqs_cis.abs(), grads=grads(model))


def test_rotary_alibi_decoder_non_persistent_buffers(torch):
    theirs, _ = both(torch, rotary_decoder)
    assert "attn.freqs_cis" not in theirs["keys"] and "attn.calls" in theirs["keys"]
