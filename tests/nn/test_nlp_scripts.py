"""NLP scripts of the kinds courses and blog posts teach, written once against a `torch`-like module and
run twice: on PyTorch, then on minigrad from PyTorch's initial weights (copied across as numpy arrays).
Logits, losses, gradients, chosen tokens and beams must agree closely (float64 throughout). Random draws
are made the same on both sides: probabilities are compared, then sampled with a shared numpy uniform."""
import math

import numpy as np
import pytest

import minigrad
from twins import SCRIPT_TOL as TOL, agree, both, grads, numpy_state, start  # noqa: F401


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


# ---- a small nanoGPT-style model --------------------------------------------------------------------------
def gpt_model(torch, V=11, C=16, H=2, L=2, T=12, rotary=False):
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)
            self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

        def forward(self, x, past=None):
            B, t, _ = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q = q.view(B, t, H, C // H).transpose(1, 2)
            k = k.view(B, t, H, C // H).transpose(1, 2)
            v = v.view(B, t, H, C // H).transpose(1, 2)
            if past is not None:
                pk, pv = past
                k = torch.cat((pk, k), dim=-2)
                v = torch.cat((pv, v), dim=-2)
            present = (k, v)
            s = k.size(-2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, s - t:s, :s] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, t, C)
            return self.c_proj(y), present

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(C)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(C)
            self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(approximate="tanh"), nn.Linear(4 * C, C))

        def forward(self, x, past=None):
            a, present = self.attn(self.ln_1(x), past)
            x = x + a
            return x + self.mlp(self.ln_2(x)), present

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(V, C), wpe=nn.Embedding(T, C),
                h=nn.ModuleList([Block() for _ in range(L)]), ln_f=nn.LayerNorm(C)))
            self.lm_head = nn.Linear(C, V, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None, past=None):
            b, t = idx.size()
            p0 = 0 if past is None else past[0][0].size(-2)
            pos = torch.arange(p0, p0 + t, dtype=torch.long)
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            presents = []
            for i, block in enumerate(self.transformer.h):
                x, present = block(x, None if past is None else past[i])
                presents.append(present)
            logits = self.lm_head(self.transformer.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss, tuple(presents)

    return GPT()


def sample_from(torch, probs, u):
    """One draw per row of `probs` from the shared uniforms `u` (B,): the inverse-CDF form of multinomial."""
    cdf = probs.cumsum(-1)
    idx = torch.searchsorted(cdf, torch.tensor(u, dtype=cdf.dtype).view(-1, 1))
    return idx.clamp(max=probs.size(-1) - 1)


def top_p_filter(torch, logits, top_p):
    sorted_logits, sorted_indices = torch.sort(logits, descending=True)
    cumulative_probs = torch.cumsum(torch.nn.functional.softmax(sorted_logits, dim=-1), dim=-1)
    sorted_indices_to_remove = cumulative_probs > top_p
    sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
    sorted_indices_to_remove[..., 0] = 0
    indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove)
    return logits.masked_fill(indices_to_remove, -float("Inf"))


def gpt_train_and_decode(torch, init):
    F = torch.nn.functional
    V, T = 11, 12
    model = gpt_model(torch, V=V, T=T)
    init = start(model, init)
    rng = np.random.default_rng(3)
    text = "hello world, hello minigrad; the quick brown fox. " * 3
    chars = sorted(list(set(text)))[:V]
    stoi = {ch: i for i, ch in enumerate(chars)}
    encode = lambda s: [stoi.get(c, 0) for c in s]  # noqa: E731
    data = torch.tensor(encode(text), dtype=torch.long)
    uniq, counts = torch.unique(data, return_counts=True)
    ix = rng.integers(0, len(data) - 8, (4,))
    x = torch.stack([data[i:i + 8] for i in ix])
    y = torch.stack([data[i + 1:i + 9] for i in ix])
    y[0, -2:] = -1
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    losses, norms = [], []
    for _ in range(3):
        logits, loss, _ = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True))
        opt.step()
        losses.append(loss.item())
    g = grads(model)
    ppl = torch.exp(loss.detach())
    model.eval()

    @torch.no_grad()
    def generate(idx, steps, temperature=1.0, top_k=None, top_p=None, penalty=None, greedy=False):
        out, probs_seen = idx, []
        for _ in range(steps):
            cond = out if out.size(1) <= T else out[:, -T:]
            logits, _, _ = model(cond)
            logits = logits[:, -1, :] / temperature
            if penalty is not None:
                score = torch.gather(logits, 1, out)
                score = torch.where(score < 0, score * penalty, score / penalty)
                logits = logits.scatter_(1, out, score)
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            if top_p is not None:
                logits = top_p_filter(torch, logits, top_p)
            probs = F.softmax(logits, dim=-1)
            probs_seen.append(probs)
            if greedy:
                nxt = torch.argmax(probs, dim=-1, keepdim=True)
            else:
                nxt = sample_from(torch, probs, rng_u.random(idx.size(0)))
            out = torch.cat((out, nxt), dim=1)
        return out, probs_seen

    start_ids = x[:2, :3]
    rng_u = np.random.default_rng(7)
    runs = {}
    runs["greedy"] = generate(start_ids, 5, greedy=True)
    runs["temp"] = generate(start_ids, 5, temperature=0.7)
    runs["topk"] = generate(start_ids, 5, top_k=3)
    runs["topp"] = generate(start_ids, 5, top_p=0.8)
    with torch.inference_mode():
        runs["penalty"] = generate(start_ids, 12, penalty=1.3, top_k=5)

    # a KV cache as a tuple of tensors grown by cat(dim=-2): the same logits as the full forward
    with torch.no_grad():
        seq = runs["greedy"][0]
        full, _, _ = model(seq)
        past, cached = None, []
        for t in range(seq.size(1)):
            logits, _, past = model(seq[:, t:t + 1], past=past)
            cached.append(logits[:, -1])
        cached = torch.stack(cached, dim=1)
    return dict(init=init, uniq=uniq, counts=counts, x=x, losses=losses, norms=norms, grads=g, ppl=ppl,
                runs=runs, full=full, cached=cached, requires=[full.requires_grad, runs["penalty"][0].is_inference()])


def test_gpt_train_sample_topk_topp_penalty_kv_cache(torch):
    theirs, ours = both(torch, gpt_train_and_decode)
    np.testing.assert_allclose(ours["cached"].numpy(), ours["full"].numpy(), rtol=1e-9, atol=1e-10)


# ---- beam search over a KV-cached GPT ---------------------------------------------------------------------
def beam_search(torch, init, beams=3, steps=6, alpha=0.7, EOS=2):
    F = torch.nn.functional
    V = 11
    model = gpt_model(torch, V=V, T=12)
    init = start(model, init)
    model.eval()
    with torch.no_grad():
        prompt = torch.tensor([[4, 7, 1]])
        logits, _, past = model(prompt)
        logp = F.log_softmax(logits[:, -1], dim=-1)
        scores, first = torch.topk(logp, beams, dim=-1)
        scores = scores.view(-1)
        seqs = torch.cat([prompt.repeat(beams, 1), first.view(-1, 1)], dim=1)
        past = tuple((k.expand(beams, -1, -1, -1), v.expand(beams, -1, -1, -1)) for k, v in past)
        done = seqs[:, -1] == EOS
        history = []
        for _ in range(steps - 1):
            logits, _, past = model(seqs[:, -1:], past=past)
            logp = F.log_softmax(logits[:, -1], dim=-1)
            # a finished beam only extends with EOS at no cost
            logp = logp.masked_fill(done[:, None], -float("inf"))
            logp[:, EOS] = torch.where(done, torch.zeros_like(scores), logp[:, EOS])
            cand = (scores[:, None] + logp).view(-1)
            scores, flat = torch.topk(cand, beams)
            beam_idx = torch.div(flat, V, rounding_mode="floor")
            token = flat % V
            assert torch.equal(beam_idx, flat // V)
            seqs = torch.cat([seqs.index_select(0, beam_idx), token[:, None]], dim=1)
            past = tuple((k.index_select(0, beam_idx), v.index_select(0, beam_idx)) for k, v in past)
            done = done[beam_idx] | (token == EOS)
            history.append((beam_idx, token, scores.clone()))
            if done.all():
                break
        lengths = (seqs[:, 3:] != EOS).sum(-1) + 1
        normed = scores / lengths.double() ** alpha
        best = seqs[normed.argmax()]
    return dict(init=init, seqs=seqs, scores=scores, history=history, lengths=lengths, normed=normed,
                best=best, done=done, any_done=bool(done.any()))


def test_beam_search_with_cache_reordering(torch):
    both(torch, beam_search)


# ---- rotary embeddings, ALiBi, preallocated cache, SDPA --------------------------------------------------
def positions(torch, init):
    F = torch.nn.functional
    B, H, T, D = 2, 2, 6, 8
    rng = np.random.default_rng(5)
    q = torch.tensor(rng.standard_normal((B, T, H, D)), requires_grad=True)
    k = torch.tensor(rng.standard_normal((B, T, H, D)), requires_grad=True)
    v = torch.tensor(rng.standard_normal((B, H, T, D)), requires_grad=True)

    # Llama's complex form
    freqs = 1.0 / (10000.0 ** (torch.arange(0, D, 2)[: D // 2].double() / D))
    t = torch.arange(T, dtype=torch.float64)
    freqs = torch.outer(t, freqs)
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)

    def rope_complex(x):
        xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
        fc = freqs_cis.view(1, T, 1, D // 2)
        return torch.view_as_real(xc * fc).flatten(3)

    # the real form on interleaved pairs
    cos, sin = freqs.cos()[None, :, None, :], freqs.sin()[None, :, None, :]

    def rope_real(x):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    qc, kc = rope_complex(q), rope_complex(k)
    qr, kr = rope_real(q), rope_real(k)
    qh, kh = qr.transpose(1, 2), kr.transpose(1, 2)

    # three causal masks: nanoGPT's tril buffer, a triu bool mask, and SDPA's is_causal
    att = (qh @ kh.transpose(-2, -1)) / math.sqrt(D)
    tril = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    y1 = F.softmax(att.masked_fill(tril[:, :, :T, :T] == 0, float("-inf")), dim=-1) @ v
    upper = torch.triu(torch.ones(T, T), diagonal=1).bool()
    y2 = F.softmax(att.masked_fill(upper, float("-inf")), dim=-1) @ v
    y3 = F.scaled_dot_product_attention(qh, kh, v, is_causal=True)
    y4 = F.scaled_dot_product_attention(qh, kh, v, attn_mask=~upper)

    # ALiBi: a per-head slope times the distance, added before the mask
    slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)], dtype=torch.float64)
    pos = torch.arange(T)
    dist = (pos[None, :] - pos[:, None]).double()
    alibi = slopes[:, None, None] * dist[None]
    y5 = F.scaled_dot_product_attention(qh, kh, v, attn_mask=alibi.masked_fill(upper, float("-inf")))
    loss = (y1 * y1).sum() + y3.sum() + (y5 ** 2).mean()
    loss.backward()

    # a preallocated cache written one step at a time by slice assignment
    cache_k = torch.zeros(B, H, T, D, dtype=torch.float64)
    cache_v = torch.zeros(B, H, T, D, dtype=torch.float64)
    steps = []
    with torch.no_grad():
        for p in range(T):
            cache_k[:, :, p:p + 1] = kh[:, :, p:p + 1]
            cache_v[:, :, p:p + 1] = v[:, :, p:p + 1]
            s = qh[:, :, p:p + 1] @ cache_k[:, :, :p + 1].transpose(-2, -1) / math.sqrt(D)
            steps.append(F.softmax(s, dim=-1) @ cache_v[:, :, :p + 1])
    steps = torch.cat(steps, dim=2)
    return dict(init=None, freqs_cis=freqs_cis, qc=qc, qr=qr, kc=kc, y1=y1, y2=y2, y3=y3, y4=y4, y5=y5,
                steps=steps, grads=[q.grad, k.grad, v.grad])


def test_rotary_alibi_masks_and_preallocated_cache(torch):
    theirs, ours = both(torch, positions)
    for y in ("qr", "y2", "y3", "y4", "steps"):
        target = "qc" if y == "qr" else "y1"
        np.testing.assert_allclose(ours[y].detach().numpy(), ours[target].detach().numpy(), rtol=1e-9, atol=1e-12)


# ---- padded batches: pad_sequence, length masks, shifted labels, padding_idx -----------------------------
def padded_lm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, C = 9, 8

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, C, padding_idx=0)
            self.rnn = nn.LSTM(C, C, num_layers=2, batch_first=True)
            self.head = nn.Linear(C, V)

        def forward(self, x, state=None):
            h, state = self.rnn(self.emb(x), state)
            return self.head(h), state

    model = LSTMLM()
    init = start(model, init)
    seqs = [torch.tensor(s) for s in ([3, 4, 5, 6, 7], [5, 2], [8, 8, 3, 1])]
    x = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=0)
    lengths = torch.tensor([len(s) for s in seqs])
    mask = torch.arange(x.size(1))[None, :] < lengths[:, None]
    labels = x.masked_fill(~mask, -100)
    logits, _ = model(x)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), ignore_index=-100)
    smooth = F.cross_entropy(logits[:, :-1].reshape(-1, V), labels[:, 1:].reshape(-1), label_smoothing=0.1)
    per_tok = F.cross_entropy(logits[:, :-1].transpose(1, 2), labels[:, 1:], reduction="none")
    ppl = torch.exp(loss)
    (loss + smooth).backward()
    emb_grad = model.emb.weight.grad.clone()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=2.0)
    clipped = grads(model)

    # greedy decoding one token at a time, carrying the LSTM state
    model.eval()
    with torch.no_grad():
        tok, state, out = x[:, :1], None, []
        for _ in range(6):
            step, state = model(tok, state)
            tok = step[:, -1].argmax(-1, keepdim=True)
            out.append(tok)
        out = torch.cat(out, 1)
    return dict(init=init, x=x, mask=mask, labels=labels, loss=loss, smooth=smooth, per_tok=per_tok, ppl=ppl,
                emb_grad=emb_grad, pad_row=emb_grad[0].abs().sum().item(), norm=norm, clipped=clipped, out=out,
                state=list(state))


def test_padded_lstm_lm_shifted_labels_and_decoding(torch):
    theirs, ours = both(torch, padded_lm)
    assert ours["pad_row"] == 0.0


# ---- word2vec skip-gram with negative sampling -----------------------------------------------------------
def skipgram(torch, init):
    nn, F = torch.nn, torch.nn.functional
    V, D, K = 12, 6, 4

    class SkipGram(nn.Module):
        def __init__(self):
            super().__init__()
            self.in_embed = nn.Embedding(V, D)
            self.out_embed = nn.Embedding(V, D)

        def forward(self, center, context, negatives):
            c = self.in_embed(center).unsqueeze(2)                       # B, D, 1
            pos = torch.bmm(self.out_embed(context).unsqueeze(1), c).squeeze()  # B
            neg = torch.bmm(self.out_embed(negatives).neg(), c).squeeze(2)     # B, K
            return -(F.logsigmoid(pos) + F.logsigmoid(neg).sum(1)).mean()

    model = SkipGram()
    init = start(model, init)
    rng = np.random.default_rng(11)
    corpus = torch.tensor(rng.integers(0, V, 60), dtype=torch.long)
    _, counts = torch.unique(corpus, return_counts=True)
    freq = counts.double() / counts.sum()
    noise = freq ** 0.75
    noise = noise / noise.sum()
    centers, contexts = corpus[1:-1].repeat(2), torch.cat([corpus[:-2], corpus[2:]])
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(3):
        u = rng.random((centers.size(0), K))
        negatives = torch.searchsorted(noise.cumsum(0), torch.tensor(u)).clamp(max=V - 1)
        loss = model(centers, contexts, negatives)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    drawn = torch.multinomial(noise, K, replacement=True)
    emb = model.in_embed.weight.detach()
    sims = F.cosine_similarity(emb[3].unsqueeze(0), emb, dim=1)
    top, nearest = sims.topk(4)
    all_sims = F.cosine_similarity(emb[:, None, :], emb[None, :, :], dim=-1)
    normed = F.normalize(emb, dim=1)
    return dict(init=init, counts=counts, noise=noise, losses=losses, top=top, nearest=nearest,
                all_sims=all_sims, gram=normed @ normed.T, drawn=[drawn.shape, drawn.dtype is torch.long],
                params=list(model.parameters()))


def test_skipgram_negative_sampling_and_neighbours(torch):
    both(torch, skipgram)


# ---- what these scripts found: each as PyTorch behaves -----------------------------------------------------
def outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 (the error's type and text are what is compared)
        return type(e).__name__, str(e)
    return "ok", repr(out.tolist())  # (NaN equal to NaN)


def same(torch, make):
    assert outcome(lambda: make(minigrad)) == outcome(lambda: make(torch))


@pytest.mark.parametrize("case", [
    lambda l: l.searchsorted(l.tensor([3., 1, 2]), l.tensor([2.5, 0.5, 9]), sorter=l.tensor([1, 2, 0])),
    lambda l: l.searchsorted(l.tensor([[3., 1, 2], [2, 3, 1]]), l.tensor([[2.5, 0], [1.5, 4]]), right=True,
                             sorter=l.tensor([[1, 2, 0], [2, 0, 1]])),
    lambda l: l.searchsorted(l.tensor([[1., 2, 3]]), l.tensor([[2.0], [1.0]])),
    lambda l: l.searchsorted(l.tensor([[1., 2, 3], [1, 2, 3]]), l.tensor([2.])),
    lambda l: l.searchsorted(l.tensor(3.), l.tensor([2.5])),
    lambda l: l.searchsorted(l.tensor([3., 1, 2]), l.tensor([2.5]), sorter=l.tensor([1, 2])),
    lambda l: l.searchsorted(l.tensor([3., 1, 2]), l.tensor([2.5]), sorter=l.tensor([1., 2, 0])),
    lambda l: l.searchsorted(l.tensor([3., 1, 2]), l.tensor([2.5]), sorter=l.tensor([1, 2, 5])),
    lambda l: l.searchsorted(l.tensor([1., 2]), l.tensor([2.]), side="left", right=True),
    lambda l: l.searchsorted(l.tensor([1., 2]), l.tensor([2.]), side="mid"),
])
def test_searchsorted_sorter_and_errors_as_pytorch(torch, case):
    same(torch, lambda l: case(l))


@pytest.mark.parametrize("case", [
    lambda l: l.multinomial(l.tensor([1., 2]), 0),
    lambda l: l.multinomial(l.ones(2, 2, 2), 1),
    lambda l: l.ones(3, 2).index_select(0, l.tensor([3])),
    lambda l: l.nn.functional.cosine_similarity(l.ones(2, 3), l.ones(2, 4)),
])
def test_sampling_and_lookup_errors_as_pytorch(torch, case):
    same(torch, case)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e30, 2.0 ** 31, 2 ** 63, 300, 300.0,
                                   -1, -1.0, -255, -256, 2.5, 1e5, 1e300])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8", "float16", "float32", "bool"])
@pytest.mark.parametrize("fill", ["masked_fill", "masked_fill_", "fill_", "full"])
def test_fill_values_convert_into_the_dtype_as_pytorch(torch, fill, dtype, value):
    def make(lib):
        x = lib.ones(2, dtype=getattr(lib, dtype))
        if fill == "full":
            return lib.full((2,), value, dtype=getattr(lib, dtype))
        if fill == "fill_":
            return x.fill_(value)
        return getattr(x, fill)(lib.tensor([True, False]), value)
    with np.errstate(invalid="ignore"):
        same(torch, make)


@pytest.mark.parametrize("shapes, kw", [
    (((1, 2, 3, 4),) * 3 + ((3, 3),), {}),
    (((2, 3, 4),) * 3 + ((3, 3),), {}),
    (((3, 4),) * 3 + ((3, 3),), {}),
    (((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5), (3, 3)), {}),
    (((2, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), (3, 3)), {}),
    (((1, 4, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), (3, 3)), dict(enable_gqa=True)),
    (((1, 2, 3, 4),) * 3 + ((3, 3),), dict(dropout_p=0.5)),
    (((1, 2, 2, 4), (1, 2, 3, 4), (1, 2, 3, 4), (1, 1, 2, 3)), {}),
])
def test_sdpa_with_a_mask_and_is_causal_as_pytorch(torch, shapes, kw):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]

    def make(lib):
        q, k, v, m = (lib.tensor(a) for a in arrays)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True, **kw)
        return out if kw.get("dropout_p") else out.round(decimals=10)
    same(torch, make)
