"""Language-model inference and fine-tuning code written with plain torch (sampling with presence / frequency
penalties and min-p through searchsorted on given uniforms, beam search with a length penalty and finished-beam
bookkeeping, speculative decoding with a draft model and the accept / reject rule, contrastive search over hidden-state
similarities, a StreamingLLM ring cache with attention sinks, rotary embeddings under linear and NTK scaling, packed
documents with a block-diagonal mask, position ids and grouped-query SDPA, a top-2 mixture of experts with capacity
and token dropping, LoRA over int8 per-channel fake-quantized frozen weights, prompt and prefix tuning, ORPO and
KTO preference losses, a pairwise reward model, PPO with a value head and GAE, ALiBi blocks under non-reentrant
checkpointing, weight tying then untying), each written once against a `torch`-like module and run twice: on
PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree
closely (float64 throughout; random draws given by numpy)."""
import copy
import math

import numpy as np

from twins import both, grads, start

VOCAB, D, HEADS = 13, 8, 2


def tiny_lm(torch, vocab=VOCAB, d=D, n_head=HEADS, n_layer=2, ctx=24):
    """A small pre-norm decoder: learned positions, fused qkv, SDPA (causal unless a mask is given), a SiLU MLP and
    a head tied to the embedding; forward(idx, mask, pos) -> (logits, last hidden states)."""
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

        def forward(self, x, mask=None):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, n_head, d // n_head).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.silu(self.fc(self.ln2(x))))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(d)

        def forward(self, idx, mask=None, pos=None):
            pos = torch.arange(idx.size(1)) if pos is None else pos
            x = self.wte(idx) + self.wpe(pos)
            for block in self.blocks:
                x = block(x, mask)
            h = self.ln_f(x)
            return h @ self.wte.weight.t(), h

    return LM()


def ids(seed, *shape, vocab=VOCAB):
    return np.random.default_rng(seed).integers(0, vocab, shape)


# ---- sampling: a short SFT with -100 prompt labels, then presence / frequency penalties from scatter_add_ counts,
# temperature, min-p against the top probability, the draw by searchsorted on the cdf with given uniforms ----------
def penalized_min_p_sampling(torch, init):
    F = torch.nn.functional
    model = tiny_lm(torch)
    init = start(model, init)
    seq = torch.tensor(ids(1, 3, 10))
    labels = seq.clone()
    labels[:, :4] = -100  # the prompt is not learned
    opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.1)
    losses = []
    for _ in range(3):
        logits, _ = model(seq)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), labels[:, 1:].reshape(-1), ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    uniforms = torch.tensor(np.random.default_rng(2).random((6, 3, 1)))
    out = seq[:, :4].clone()
    presence, frequency, temperature, min_p = 0.6, 0.3, 0.8, 0.15
    kept, chosen_probs = [], []
    model.eval()
    with torch.inference_mode():
        for step in range(6):
            logits = model(out)[0][:, -1, :]
            counts = torch.zeros(out.size(0), VOCAB, dtype=logits.dtype).scatter_add_(
                1, out, torch.ones_like(out, dtype=logits.dtype))
            logits = logits - frequency * counts - presence * (counts > 0).to(logits.dtype)
            probs = torch.softmax(logits / temperature, dim=-1)
            top = probs.max(dim=-1, keepdim=True).values
            probs = probs.masked_fill(probs < min_p * top, 0.0)
            probs = probs / probs.sum(-1, keepdim=True)
            kept.append((probs > 0).sum(-1))
            cdf = probs.cumsum(-1)
            nxt = torch.searchsorted(cdf, uniforms[step], right=True).clamp_(max=VOCAB - 1)
            chosen_probs.append(probs.gather(1, nxt))
            out = torch.cat([out, nxt], dim=1)
    return dict(init=init, losses=losses, grads=grads(model), out=out, kept=kept, chosen=torch.cat(chosen_probs, 1))


def test_presence_frequency_penalties_min_p_searchsorted(torch):
    both(torch, penalized_min_p_sampling)


# ---- beam search per prompt with an EOS token: finished hypotheses scored by sum log p / len ** alpha, kept
# best-n in a list, early stopping once no live beam can beat the worst kept one ---------------------------------
def beam_search_length_penalty(torch, init):
    F = torch.nn.functional
    model = tiny_lm(torch)
    init = start(model, init)
    model.eval()
    eos, num_beams, alpha, max_len = 7, 3, 0.8, 8
    prompts = torch.tensor(ids(3, 2, 3))
    results = []
    with torch.no_grad():
        for prompt in prompts:
            beams = prompt.unsqueeze(0).repeat(num_beams, 1)
            scores = torch.tensor([0.0] + [-1e9] * (num_beams - 1), dtype=torch.float64)
            finished = []  # (score, tokens)
            while beams.size(1) < max_len:
                logp = F.log_softmax(model(beams)[0][:, -1], dim=-1)
                cand = (scores.unsqueeze(1) + logp).view(-1)
                top, flat = cand.topk(2 * num_beams)
                src, tok = flat // VOCAB, flat % VOCAB
                keep_idx, keep_scores = [], []
                for s, b, t in zip(top.tolist(), src.tolist(), tok.tolist()):
                    if t == eos:
                        gen_len = beams.size(1) + 1 - prompt.numel()
                        finished.append((s / gen_len ** alpha, beams[b].tolist() + [t]))
                        finished.sort(key=lambda h: -h[0])
                        del finished[num_beams:]
                    else:
                        keep_idx.append((b, t))
                        keep_scores.append(s)
                    if len(keep_idx) == num_beams:
                        break
                b_idx = torch.tensor([b for b, _ in keep_idx])
                t_idx = torch.tensor([t for _, t in keep_idx])
                beams = torch.cat([beams.index_select(0, b_idx), t_idx.unsqueeze(1)], dim=1)
                scores = torch.tensor(keep_scores, dtype=torch.float64)
                best_live = scores.max().item() / (beams.size(1) - prompt.numel()) ** alpha
                if len(finished) == num_beams and finished[-1][0] >= best_live:
                    break
            for s, b in zip(scores.tolist(), beams.tolist()):
                finished.append((s / (len(b) - prompt.numel()) ** alpha, b))
            finished.sort(key=lambda h: -h[0])
            results.append(finished[:num_beams])
    return dict(init=init, scores=[[h[0] for h in r] for r in results], seqs=[[h[1] for h in r] for r in results])


def test_beam_search_length_penalty_finished_hypotheses(torch):
    both(torch, beam_search_length_penalty)


# ---- speculative decoding: a 1-layer draft proposes gamma tokens, the target scores them in one pass, each kept
# while u < p / q, a rejection resampled from max(p - q, 0) renormalized, a bonus token when all are accepted -----
def speculative_decoding(torch, init):
    target, draft = tiny_lm(torch, n_layer=2), tiny_lm(torch, n_layer=1)
    both_models = torch.nn.ModuleDict(dict(target=target, draft=draft))
    init = start(both_models, init)
    both_models.eval()
    rng = np.random.default_rng(4)
    gamma, temp = 3, 0.9
    seq = torch.tensor(ids(5, 1, 3))
    accepted, ratios = [], []

    def probs(model, x):
        return torch.softmax(model(x)[0][0] / temp, dim=-1)

    def draw(p, u):
        return int(torch.searchsorted(p.cumsum(0), torch.tensor([u], dtype=p.dtype)).clamp(max=VOCAB - 1))

    with torch.no_grad():
        for _ in range(4):
            n = seq.size(1)
            proposal, qs = seq, []
            for _ in range(gamma):
                q = probs(draft, proposal)[-1]
                qs.append(q)
                proposal = torch.cat([proposal, torch.tensor([[draw(q, rng.random())]])], dim=1)
            p_all = probs(target, proposal)[n - 1:]  # the target's distributions for positions n .. n + gamma
            n_ok = 0
            for i in range(gamma):
                tok = proposal[0, n + i]
                ratio = (p_all[i, tok] / qs[i][tok]).item()
                ratios.append(ratio)
                if rng.random() < min(1.0, ratio):
                    n_ok += 1
                    continue
                residual = torch.clamp(p_all[i] - qs[i], min=0)
                nxt = draw(residual / residual.sum(), rng.random())
                break
            else:
                nxt = draw(p_all[gamma], rng.random())
            accepted.append(n_ok)
            seq = torch.cat([proposal[:, :n + n_ok], torch.tensor([[nxt]])], dim=1)
    return dict(init=init, seq=seq, accepted=accepted, ratios=ratios)


def test_speculative_decoding_draft_accept_reject(torch):
    both(torch, speculative_decoding)


# ---- contrastive search: top-k candidates scored by (1 - alpha) p - alpha * max cosine similarity of the candidate's
# hidden state with the context's, the candidates run as one batch ----------------------------------------------
def contrastive_search(torch, init):
    F = torch.nn.functional
    model = tiny_lm(torch)
    init = start(model, init)
    model.eval()
    k, alpha = 4, 0.6
    seq = torch.tensor(ids(6, 2, 3))
    penalties = []
    with torch.no_grad():
        for _ in range(5):
            logits, hidden = model(seq)
            p = F.softmax(logits[:, -1], dim=-1)
            top_p, top_i = p.topk(k, dim=-1)  # (b, k)
            b, t = seq.shape
            cand = torch.cat([seq.repeat_interleave(k, dim=0), top_i.reshape(-1, 1)], dim=1)
            _, cand_hidden = model(cand)
            context = F.normalize(hidden, dim=-1).repeat_interleave(k, dim=0)  # (b k, t, d)
            last = F.normalize(cand_hidden[:, -1:], dim=-1)  # (b k, 1, d)
            sim = torch.bmm(context, last.transpose(1, 2)).squeeze(-1).max(dim=-1).values.view(b, k)
            score = (1 - alpha) * top_p - alpha * sim
            best = score.argmax(dim=-1, keepdim=True)
            penalties.append(sim.gather(1, best))
            seq = torch.cat([seq, top_i.gather(1, best)], dim=1)
    return dict(init=init, seq=seq, penalties=torch.cat(penalties, 1))


def test_contrastive_search_degeneration_penalty(torch):
    both(torch, contrastive_search)


# ---- StreamingLLM: a preallocated cache of sink slots plus a ring window written by index_copy_, keys stored before
# rotation and rotated by their place in the cache when read; equals a fresh pass over sinks + the last window ---
def rope(torch, x, pos, base=10000.0, scale=1.0):
    """rotate_half rotary embedding of x (..., t, hd) at positions pos (t,), positions divided by `scale`."""
    hd = x.size(-1)
    inv = 1.0 / base ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.outer(pos.to(torch.float64) / scale, inv)
    cos, sin = torch.cat([ang, ang], -1).cos(), torch.cat([ang, ang], -1).sin()
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


def streaming_sinks(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_sink, window, hd = 2, 4, D // HEADS

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, D)
            self.qkv, self.o = nn.Linear(D, 3 * D, bias=False), nn.Linear(D, VOCAB)

        def split(self, x):
            b, t, _ = x.shape
            return self.qkv(x).view(b, t, 3, HEADS, hd).permute(2, 0, 3, 1, 4)

        def full(self, idx):  # a fresh pass, positions 0 .. t-1
            q, k, v = self.split(self.wte(idx))
            pos = torch.arange(idx.size(1))
            y = F.scaled_dot_product_attention(rope(torch, q, pos), rope(torch, k, pos), v, is_causal=True)
            return self.o(y.transpose(1, 2).flatten(2))[:, -1]

    model = Attn()
    init = start(model, init)
    tokens = torch.tensor(ids(7, 1, 11))
    k_cache = torch.zeros(1, HEADS, n_sink + window, hd, dtype=torch.float64)
    v_cache = torch.zeros_like(k_cache)
    outs, refs = [], []
    with torch.no_grad():
        for t in range(tokens.size(1)):
            q, k, v = model.split(model.wte(tokens[:, t:t + 1]))
            slot = t if t < n_sink else n_sink + (t - n_sink) % window
            k_cache.index_copy_(2, torch.tensor([slot]), k)
            v_cache.index_copy_(2, torch.tensor([slot]), v)
            n = min(t + 1, n_sink + window)
            if t < n_sink + window:
                order = torch.arange(n)
            else:  # the window's oldest slot follows the sinks
                ring = torch.arange(n_sink, n_sink + window)
                order = torch.cat([torch.arange(n_sink), ring.roll(-((t - n_sink + 1) % window))])
            keys = rope(torch, k_cache.index_select(2, order), torch.arange(n))
            vals = v_cache[:, :, order]
            qr = rope(torch, q, torch.tensor([n - 1]))
            y = F.scaled_dot_product_attention(qr, keys, vals)
            outs.append(model.o(y.transpose(1, 2).flatten(2))[:, -1])
            kept = torch.cat([tokens[:, :min(n_sink, t + 1)], tokens[:, max(n_sink, t + 1 - window):t + 1]], dim=1)
            refs.append(model.full(kept))
    return dict(init=init, outs=torch.stack(outs), refs=torch.stack(refs), k_cache=k_cache)


def test_streaming_llm_ring_cache_attention_sinks(torch):
    theirs, _ = both(torch, streaming_sinks)
    np.testing.assert_allclose(theirs["outs"].numpy(), theirs["refs"].numpy(), rtol=1e-10, atol=1e-12)


# ---- rotary scaling: a model trained at length 8, then fine-tuned at length 16 with linear position interpolation
# and, from the same start, with NTK-aware base scaling; the scores depend on relative positions only ------------
def rope_scaling(torch, init, kind):
    nn, F = torch.nn, torch.nn.functional

    class RoPELM(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, D)
            self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.ln = nn.RMSNorm(D)
            self.scale, self.base = 1.0, 10000.0

        def forward(self, idx):
            b, t = idx.shape
            x = self.wte(idx)
            q, k, v = self.qkv(x).view(b, t, 3, HEADS, -1).unbind(2)
            pos = torch.arange(t)
            q, k = (rope(torch, z.transpose(1, 2), pos, self.base, self.scale) for z in (q, k))
            y = F.scaled_dot_product_attention(q, k, v.transpose(1, 2), is_causal=True)
            return self.ln(x + self.o(y.transpose(1, 2).reshape(b, t, D))) @ self.wte.weight.T

    model = RoPELM()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []

    def step(seq):
        logits = model(seq)
        loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), seq[:, 1:])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    for s in range(2):
        step(torch.tensor(ids(10 + s, 2, 8)))
    factor, hd = 2.0, D // HEADS
    if kind == "linear":
        model.scale = factor
    else:
        model.base = model.base * factor ** (hd / (hd - 2))
    for s in range(2):
        step(torch.tensor(ids(20 + s, 2, 16)))
    # shift invariance: q . k at (m, n) equals at (m + 5, n + 5)
    q = torch.tensor(np.random.default_rng(8).standard_normal((1, 1, 1, hd)))
    k = torch.tensor(np.random.default_rng(9).standard_normal((1, 1, 1, hd)))
    dots = [(rope(torch, q, torch.tensor([m]), model.base, model.scale)
             * rope(torch, k, torch.tensor([n]), model.base, model.scale)).sum() for m, n in ((7, 3), (12, 8))]
    return dict(init=init, losses=losses, grads=grads(model), params=list(model.parameters()), dots=dots)


def test_rope_linear_interpolation_and_ntk_scaling(torch):
    for kind in ("linear", "ntk"):
        theirs, _ = both(torch, rope_scaling, kind=kind)
        np.testing.assert_allclose(theirs["dots"][0].item(), theirs["dots"][1].item(), rtol=1e-10)


# ---- packing: three documents per row, a block-diagonal causal bool mask from document ids, position ids reset at
# each document by a cumsum, labels -100 across boundaries, grouped-query SDPA; equals the documents one by one ---
def packed_documents(torch, init):
    nn, F = torch.nn, torch.nn.functional
    kv_heads, n_head, hd = 1, 2, D // 2

    class GQA(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(16, D)
            self.q, self.kv = nn.Linear(D, D), nn.Linear(D, 2 * kv_heads * hd)
            self.o, self.ln = nn.Linear(D, D), nn.LayerNorm(D)

        def forward(self, idx, pos, mask=None):
            b, t = idx.shape
            x = self.wte(idx) + self.wpe(pos)
            q = self.q(x).view(b, t, n_head, hd).transpose(1, 2)
            k, v = self.kv(x).view(b, t, 2, kv_heads, hd).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None, dropout_p=0.0,
                                               enable_gqa=True)
            return self.ln(x + self.o(y.transpose(1, 2).reshape(b, t, D))) @ self.wte.weight.T

    model = GQA()
    init = start(model, init)
    lengths = [[3, 5, 4], [6, 2, 4]]
    rows = [torch.tensor(ids(30 + i, sum(ls))) for i, ls in enumerate(lengths)]
    idx = torch.stack(rows)
    doc = torch.stack([torch.repeat_interleave(torch.arange(3), torch.tensor(ls)) for ls in lengths])
    starts = torch.ones_like(doc, dtype=torch.bool)
    starts[:, 1:] = doc[:, 1:] != doc[:, :-1]
    pos = torch.arange(idx.size(1)).expand_as(idx) - torch.cummax(torch.where(
        starts, torch.arange(idx.size(1)).expand_as(idx), torch.zeros_like(idx)), dim=1).values
    mask = (doc.unsqueeze(2) == doc.unsqueeze(1)) & torch.ones(12, 12, dtype=torch.bool).tril()
    labels = idx.roll(-1, dims=1).masked_fill(starts.roll(-1, dims=1), -100)
    labels[:, -1] = -100
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses, separate = [], []
    for _ in range(3):
        logits = model(idx, pos, mask.unsqueeze(1))
        loss = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="sum") / (labels != -100).sum()
        with torch.no_grad():  # the documents alone, causal, positions from 0
            total = sum(F.cross_entropy(model(d[None, :-1], torch.arange(len(d) - 1))[0], d[1:], reduction="sum")
                        for row, ls in zip(rows, lengths) for d in row.split(ls))
            separate.append(total / (labels != -100).sum())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return dict(init=init, pos=pos, mask=mask, labels=labels, losses=losses, separate=separate, grads=grads(model))


def test_packed_documents_block_diagonal_mask_position_ids_gqa(torch):
    theirs, _ = both(torch, packed_documents)
    np.testing.assert_allclose(np.array(theirs["losses"]), np.array(theirs["separate"]), rtol=1e-10)


# ---- a top-2 mixture of experts with a capacity: slots by cumsum over the one-hot choices, overflow tokens dropped,
# outputs combined by scatter_add_, the Switch load-balancing loss and the router z-loss --------------------------
def moe_capacity(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_exp, top_k, cap_factor = 4, 2, 1.0

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(D, n_exp, bias=False)
            self.w1 = nn.Parameter(torch.randn(n_exp, D, 2 * D) * 0.3)
            self.w2 = nn.Parameter(torch.randn(n_exp, 2 * D, D) * 0.3)

        def forward(self, x):
            n = x.size(0)
            logits = self.router(x)
            probs = logits.softmax(-1)
            gate, choice = probs.topk(top_k, dim=-1)
            gate = gate / gate.sum(-1, keepdim=True)
            capacity = int(cap_factor * n * top_k / n_exp)
            onehot = F.one_hot(choice.t().reshape(-1), n_exp)  # first choices of all tokens, then second ones
            slot = (onehot.cumsum(0) - 1) * onehot
            fits = ((slot < capacity) & (onehot > 0)).any(-1).view(top_k, n).t()
            out = torch.zeros_like(x)
            for e in range(n_exp):
                tok, which = torch.nonzero((choice == e) & fits, as_tuple=True)
                if tok.numel() == 0:
                    continue
                h = F.gelu(x[tok] @ self.w1[e]) @ self.w2[e]
                out.scatter_add_(0, tok.unsqueeze(1).expand(-1, D), h * gate[tok, which].unsqueeze(1))
            frac = F.one_hot(choice[:, 0], n_exp).to(x.dtype).mean(0)
            aux = n_exp * (frac * probs.mean(0)).sum()
            z = torch.logsumexp(logits, dim=-1).pow(2).mean()
            return out, aux, z, fits.sum()

    model = nn.Sequential()
    model.add_module("emb", nn.Embedding(VOCAB, D))
    model.add_module("moe", MoE())
    model.add_module("head", nn.Linear(D, VOCAB))
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.02)
    seq = torch.tensor(ids(40, 16))
    losses, routed = [], []
    for _ in range(3):
        x = model.emb(seq[:-1])
        y, aux, z, n_routed = model.moe(x)
        loss = F.cross_entropy(model.head(x + y), seq[1:]) + 0.01 * aux + 1e-3 * z
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        routed.append(n_routed)
    return dict(init=init, losses=losses, routed=routed, grads=grads(model), params=list(model.parameters()))


def test_moe_top2_capacity_token_dropping_scatter_add_aux_z_loss(torch):
    theirs, _ = both(torch, moe_capacity)
    assert min(int(r) for r in theirs["routed"]) < 2 * 15  # some tokens overflowed


# ---- LoRA over int8 weight-only fake quantization: per-output-channel absmax scales, int8 storage, dequantized in
# forward and frozen; the adapters trained, merged into the dequantized weight and unmerged ----------------------
def qlora_int8(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class QuantLinear(nn.Module):
        def __init__(self, linear, r=2, alpha=4):
            super().__init__()
            w = linear.weight.detach()
            scale = w.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
            self.register_buffer("qweight", torch.clamp(torch.round(w / scale), -128, 127).to(torch.int8))
            self.register_buffer("scale", scale)
            self.bias = nn.Parameter(linear.bias.detach().clone(), requires_grad=False)
            self.lora_A = nn.Parameter(torch.randn(r, w.size(1)) / r)
            self.lora_B = nn.Parameter(torch.zeros(w.size(0), r))
            self.scaling, self.merged = alpha / r, False

        def dequant(self):
            return self.qweight.to(self.scale.dtype) * self.scale

        def forward(self, x):
            if self.merged:
                return F.linear(x, self.merged_weight, self.bias)
            return F.linear(x, self.dequant(), self.bias) + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling

        def merge(self):
            self.merged_weight = self.dequant() + self.lora_B @ self.lora_A * self.scaling
            self.merged = True

        def unmerge(self):
            del self.merged_weight
            self.merged = False

    model = tiny_lm(torch)
    init = start(model, init)
    original = model.blocks[0].qkv.weight.detach().clone()
    for block in model.blocks:
        block.qkv = QuantLinear(block.qkv)
        block.fc = QuantLinear(block.fc)
    model.double()
    for name, p in model.named_parameters():
        p.requires_grad_("lora_" in name)
        if "lora_A" in name:  # the adapters from numpy so both libraries start alike
            p.data.copy_(torch.tensor(np.random.default_rng(len(name)).standard_normal(tuple(p.shape)) * 0.3))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(trainable, lr=0.05)
    seq = torch.tensor(ids(50, 2, 10))
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(seq)[0][:, :-1].flatten(0, 1), seq[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    q = model.blocks[0].qkv
    err = (q.dequant() - original).abs().max() / q.scale.max()  # at most half a step
    with torch.no_grad():
        adapted = model(seq)[0]
        for block in model.blocks:
            block.qkv.merge()
            block.fc.merge()
        merged = model(seq)[0]
        for block in model.blocks:
            block.qkv.unmerge()
            block.fc.unmerge()
        again = model(seq)[0]
    return dict(init=init, losses=losses, grads=[p.grad for p in trainable], qweight=q.qweight, scale=q.scale,
                err=err, adapted=adapted, merged=merged, again=again,
                frozen=[p.grad is None for p in model.parameters() if not p.requires_grad])


def test_lora_over_int8_per_channel_fake_quantized_weights(torch):
    theirs, _ = both(torch, qlora_int8)
    np.testing.assert_allclose(theirs["merged"].numpy(), theirs["adapted"].numpy(), rtol=1e-9, atol=1e-11)


# ---- prompt tuning (trainable virtual-token embeddings before a frozen model's inputs) and prefix tuning (per-layer
# key / value prefixes from an MLP reparametrization, concatenated inside attention); prompt labels -100 ----------
def prompt_prefix_tuning(torch, init):
    nn, F = torch.nn, torch.nn.functional
    n_virtual, n_prefix = 3, 2

    class PrefixLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = tiny_lm(torch)
            self.soft_prompt = nn.Parameter(torch.randn(n_virtual, D) * 0.1)
            self.prefix_emb = nn.Parameter(torch.randn(n_prefix, D) * 0.1)
            self.prefix_mlp = nn.Sequential(nn.Linear(D, D), nn.Tanh(), nn.Linear(D, 2 * 2 * D))

        def forward(self, idx):
            b, t = idx.shape
            x = torch.cat([self.soft_prompt.expand(b, -1, -1), self.base.wte(idx)], dim=1)
            x = x + self.base.wpe(torch.arange(x.size(1)))
            prefix = self.prefix_mlp(self.prefix_emb).view(n_prefix, 2, 2, HEADS, D // HEADS)  # layer, k / v
            n = x.size(1)
            mask = torch.cat([torch.ones(n, n_prefix, dtype=torch.bool), torch.ones(n, n, dtype=torch.bool).tril()], 1)
            for i, block in enumerate(self.base.blocks):
                q, k, v = block.qkv(block.ln1(x)).view(b, n, 3, HEADS, -1).permute(2, 0, 3, 1, 4)
                pk, pv = (prefix[:, i, j].permute(1, 0, 2).expand(b, -1, -1, -1) for j in range(2))
                k, v = torch.cat([pk, k], dim=2), torch.cat([pv, v], dim=2)
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                x = x + block.proj(y.transpose(1, 2).reshape(b, n, D))
                x = x + block.out(F.silu(block.fc(block.ln2(x))))
            return self.base.ln_f(x) @ self.base.wte.weight.T

    model = PrefixLM()
    init = start(model, init)
    model.base.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.03)
    seq = torch.tensor(ids(60, 3, 9))
    labels = torch.cat([torch.full((3, n_virtual), -100), seq], dim=1)
    labels[:, n_virtual:n_virtual + 4] = -100  # the instruction part
    losses = []
    for _ in range(3):
        logits = model(seq)
        loss = F.cross_entropy(logits[:, :-1].transpose(1, 2), labels[:, 1:], ignore_index=-100, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, grads=grads(model), soft=model.soft_prompt,
                frozen=[p.grad is None for p in model.base.parameters()], mlp=list(model.prefix_mlp.parameters()))


def test_prompt_and_prefix_tuning_frozen_base(torch):
    both(torch, prompt_prefix_tuning)


def sequence_logps(torch, logits, labels, mask):
    """Per-sequence sums of the label log-probabilities where mask, and the mask's counts."""
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, labels[:, 1:].unsqueeze(-1)).squeeze(-1)
    m = mask[:, 1:].to(logp.dtype)
    return (logp * m).sum(-1), m.sum(-1)


# ---- ORPO (an SFT loss plus -logsigmoid of the log-odds ratio of average log-probabilities, log1p(-exp)) and KTO
# (desirable / undesirable examples against a frozen reference, a detached KL estimate from mismatched pairs) -----
def orpo_kto(torch, init):
    F = torch.nn.functional
    policy = tiny_lm(torch)
    init = start(policy, init)
    reference = copy.deepcopy(policy).requires_grad_(False).eval()
    prompt_len, lam, beta = 3, 0.2, 0.3
    chosen, rejected = torch.tensor(ids(70, 3, 8)), torch.tensor(ids(71, 3, 8))
    pad = torch.tensor([[1] * 8, [1] * 6 + [0] * 2, [1] * 7 + [0]], dtype=torch.bool)
    resp_mask = pad.clone()
    resp_mask[:, :prompt_len] = False
    opt = torch.optim.AdamW(policy.parameters(), lr=0.02)
    orpo_losses, kto_losses, ratios = [], [], []
    for _ in range(2):  # ORPO
        logits = policy(torch.cat([chosen, rejected]))[0]
        lp, n = sequence_logps(torch, logits, torch.cat([chosen, rejected]), torch.cat([resp_mask, resp_mask]))
        avg = lp / n
        log_odds = avg - torch.log1p(-torch.exp(avg))
        ratio = F.logsigmoid(log_odds[:3] - log_odds[3:])
        nll = -lp[:3].sum() / n[:3].sum()
        loss = nll - lam * ratio.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        orpo_losses.append(loss.item())
        ratios.append(ratio.detach())
    desirable = torch.tensor([True, False, True])
    for _ in range(2):  # KTO on the chosen rows as given, the KL estimate from prompts paired with other completions
        mismatched = torch.cat([chosen[:, :prompt_len], rejected.roll(1, 0)[:, prompt_len:]], dim=1)
        lp, _ = sequence_logps(torch, policy(chosen)[0], chosen, resp_mask)
        kl_lp, _ = sequence_logps(torch, policy(mismatched)[0], mismatched, resp_mask)
        with torch.no_grad():
            ref_lp, _ = sequence_logps(torch, reference(chosen)[0], chosen, resp_mask)
            ref_kl_lp, _ = sequence_logps(torch, reference(mismatched)[0], mismatched, resp_mask)
        kl = (kl_lp - ref_kl_lp).mean().clamp(min=0).detach()
        logratio = lp - ref_lp
        loss = torch.where(desirable, 1 - torch.sigmoid(beta * (logratio - kl)),
                           1 - torch.sigmoid(beta * (kl - logratio))).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        kto_losses.append(loss.item())
    return dict(init=init, orpo=orpo_losses, kto=kto_losses, ratios=ratios, grads=grads(policy),
                params=list(policy.parameters()), ref=list(reference.parameters()))


def test_orpo_odds_ratio_and_kto_losses(torch):
    both(torch, orpo_kto)


# ---- a reward model: the LM's trunk with a scalar head read at each sequence's last real token (right padding),
# the pairwise -logsigmoid(r_chosen - r_rejected - margin) loss with a centering penalty, accuracy -------------
def reward_model(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class RewardModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = tiny_lm(torch)
            self.v_head = nn.Linear(D, 1, bias=False)

        def forward(self, idx, attention_mask):
            _, h = self.trunk(idx)
            last = attention_mask.sum(dim=1) - 1
            return self.v_head(h[torch.arange(idx.size(0)), last]).squeeze(-1)

    model = RewardModel()
    init = start(model, init)
    n = 4
    chosen, rejected = torch.tensor(ids(80, n, 9)), torch.tensor(ids(81, n, 9))
    lens_c, lens_r = np.array([9, 7, 8, 5]), np.array([6, 9, 4, 8])
    mask_c = torch.tensor(np.arange(9)[None] < lens_c[:, None]).long()
    mask_r = torch.tensor(np.arange(9)[None] < lens_r[:, None]).long()
    chosen, rejected = chosen * mask_c, rejected * mask_r  # pad id 0 on the right
    margin = torch.tensor([0.5, 0.0, 1.0, 0.2], dtype=torch.float64)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=1.0, end_factor=0.5, total_iters=3)
    losses, accs = [], []
    for _ in range(3):
        r = model(torch.cat([chosen, rejected]), torch.cat([mask_c, mask_r]))
        rc, rr = r.chunk(2)
        loss = -F.logsigmoid(rc - rr - margin).mean() + 0.01 * (rc + rr).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        accs.append((rc > rr).float().mean().item())
    return dict(init=init, losses=losses, accs=accs, grads=grads(model), params=list(model.parameters()))


def test_pairwise_reward_model_last_token_right_padding(torch):
    both(torch, reward_model)


# ---- PPO for language models: a policy with a value head, a frozen reference, per-token rewards of -kl_coef * the
# log-ratio plus the score on the last token, GAE backwards, whitened advantages, clipped policy and value losses --
def ppo_value_head_gae(torch, init):
    nn = torch.nn

    class PolicyWithValue(nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = tiny_lm(torch)
            self.value = nn.Sequential(nn.Linear(D, D), nn.Tanh(), nn.Linear(D, 1))

        def forward(self, idx):
            logits, h = self.lm(idx)
            return logits, self.value(h).squeeze(-1)

    model = PolicyWithValue()
    init = start(model, init)
    ref = copy.deepcopy(model.lm).requires_grad_(False)
    prompt_len, gamma, lam, clip, vclip, kl_coef = 3, 0.99, 0.95, 0.2, 0.2, 0.05
    seq = torch.tensor(ids(90, 4, 8))
    scores = torch.tensor(np.random.default_rng(91).standard_normal(4))
    resp = slice(prompt_len - 1, seq.size(1) - 1)  # positions predicting response tokens

    def token_logps(logits):
        return torch.log_softmax(logits[:, :-1], -1).gather(-1, seq[:, 1:, None]).squeeze(-1)[:, resp]

    with torch.no_grad():
        logits, values = model(seq)
        old_logp, old_values = token_logps(logits), values[:, resp]
        ref_logp = token_logps(ref(seq)[0])
        rewards = -kl_coef * (old_logp - ref_logp)
        rewards[:, -1] += scores
        T = rewards.size(1)
        adv, last = torch.zeros_like(rewards), torch.zeros(4, dtype=torch.float64)
        for t in reversed(range(T)):
            next_v = old_values[:, t + 1] if t + 1 < T else torch.zeros(4, dtype=torch.float64)
            delta = rewards[:, t] + gamma * next_v - old_values[:, t]
            last = delta + gamma * lam * last
            adv[:, t] = last
        returns = adv + old_values
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    opt = torch.optim.Adam(model.parameters(), lr=0.01, eps=1e-5)
    stats = []
    for _epoch in range(2):
        for mb in (torch.tensor([0, 2]), torch.tensor([1, 3])):
            logits, values = model(seq[mb])
            logp = torch.log_softmax(logits[:, :-1], -1).gather(-1, seq[mb, 1:, None]).squeeze(-1)[:, resp]
            ratio = torch.exp(logp - old_logp[mb])
            pg = torch.max(-adv[mb] * ratio, -adv[mb] * ratio.clamp(1 - clip, 1 + clip)).mean()
            v = values[:, resp]
            v_clipped = old_values[mb] + (v - old_values[mb]).clamp(-vclip, vclip)
            vf = 0.5 * torch.max((v - returns[mb]) ** 2, (v_clipped - returns[mb]) ** 2).mean()
            loss = pg + 0.1 * vf
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            opt.step()
            clipfrac = ((ratio - 1).abs() > clip).double().mean()
            stats.append(torch.stack([loss.detach(), pg.detach(), vf.detach(), clipfrac]))
    return dict(init=init, rewards=rewards, adv=adv, returns=returns, stats=torch.stack(stats), grads=grads(model),
                params=list(model.parameters()))


def test_ppo_value_head_gae_clipped_objective_kl_reward(torch):
    both(torch, ppo_value_head_gae)


# ---- ALiBi: per-head slopes times relative distances as a float mask with -inf above the diagonal, a block stack
# run under torch.utils.checkpoint(use_reentrant=False) in training; equal to the same stack run plainly -------
def alibi_checkpointed(torch, init):
    nn, F = torch.nn, torch.nn.functional
    checkpoint = torch.utils.checkpoint.checkpoint
    n_head, t = 4, 10

    def slopes(n):
        start_ = 2 ** (-8 / n)
        return torch.tensor([start_ ** (i + 1) for i in range(n)], dtype=torch.float64)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.qkv, self.o = nn.LayerNorm(D), nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.mlp = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

        def forward(self, x, bias):
            b, n, _ = x.shape
            q, k, v = self.qkv(self.ln(x)).view(b, n, 3, n_head, -1).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
            x = x + self.o(y.transpose(1, 2).reshape(b, n, D))
            return x + self.mlp(x)

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, D)
            self.blocks = nn.ModuleList([Block() for _ in range(3)])
            self.gradient_checkpointing = True
            rel = torch.arange(t)[None, :] - torch.arange(t)[:, None]
            bias = slopes(n_head)[:, None, None] * rel.to(torch.float64)
            self.register_buffer("alibi", bias.masked_fill(rel > 0, float("-inf")), persistent=False)

        def forward(self, idx):
            x = self.wte(idx)
            bias = self.alibi[:, :idx.size(1), :idx.size(1)]
            for block in self.blocks:
                if self.gradient_checkpointing and self.training:
                    x = checkpoint(block, x, bias, use_reentrant=False)
                else:
                    x = block(x, bias)
            return x @ self.wte.weight.T

    model = Stack()
    init = start(model, init)
    seq = torch.tensor(ids(100, 2, t))
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    losses, plain_grads = [], []
    for step in range(3):
        model.gradient_checkpointing = step != 1
        loss = F.cross_entropy(model(seq)[:, :-1].flatten(0, 1), seq[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        losses.append(loss.item())
        if step == 0:  # the same gradients without checkpointing
            ckpt = grads(model)
            model.gradient_checkpointing = False
            opt.zero_grad()
            F.cross_entropy(model(seq)[:, :-1].flatten(0, 1), seq[:, 1:].flatten()).backward()
            plain_grads = grads(model)
            for p, g in zip(model.parameters(), ckpt):
                p.grad = g
        opt.step()
    model.eval()
    with torch.no_grad():
        logits = model(seq[:, :7])
    return dict(init=init, losses=losses, ckpt=ckpt, plain=plain_grads, logits=logits, alibi=model.alibi)


def test_alibi_stack_non_reentrant_checkpoint(torch):
    theirs, ours = both(torch, alibi_checkpointed)
    for a, b in zip(ours["ckpt"], ours["plain"]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


# ---- weight tying then untying: one Parameter shared by the embedding and the head (listed once by parameters(),
# both keys in state_dict), trained; then the head given its own copy and a fresh optimizer, the two drifting apart --
def tie_then_untie(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D)
            self.body = nn.Sequential(nn.Linear(D, D), nn.ReLU(), nn.LayerNorm(D))
            self.lm_head = nn.Linear(D, VOCAB, bias=False)
            self.lm_head.weight = self.embed.weight

        def forward(self, idx):
            return self.lm_head(self.body(self.embed(idx)))

    model = LM()
    init = start(model, init)
    seq = torch.tensor(ids(110, 3, 7))
    facts = [len(list(model.parameters())), list(model.state_dict()), model.lm_head.weight is model.embed.weight]
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    losses = []

    def train(steps):
        for _ in range(steps):
            loss = F.cross_entropy(model(seq[:, :-1]).transpose(1, 2), seq[:, 1:])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())

    train(2)
    tied_grad = model.embed.weight.grad.clone()
    model.lm_head.weight = nn.Parameter(model.embed.weight.detach().clone())
    facts += [len(list(model.parameters())), model.lm_head.weight is model.embed.weight]
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    train(2)
    drift = (model.lm_head.weight - model.embed.weight).abs().max()
    return dict(init=init, facts=facts, losses=losses, tied_grad=tied_grad, drift=drift, grads=grads(model),
                head=model.lm_head.weight, embed=model.embed.weight)


def test_weight_tying_then_untying(torch):
    theirs, _ = both(torch, tie_then_untie)
    assert theirs["facts"][0] == 5 and theirs["facts"][3] == 6 and theirs["drift"].item() > 0


# ---- greedy decoding into a static cache (preallocated to max_len, written by slice assignment, read under a
# length mask, SDPA with an explicit scale), banned n-grams found by unfold and bad words by isin --------------------
def static_cache_no_repeat_ngram(torch, init):
    nn, F = torch.nn, torch.nn.functional
    max_len, ngram, hd = 12, 2, D // HEADS
    bad_words = torch.tensor([4, 11])

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(max_len, D)
            self.qkv, self.o, self.ln = nn.Linear(D, 3 * D), nn.Linear(D, D), nn.LayerNorm(D)

        def forward(self, idx, start_pos, cache):
            b, t = idx.shape
            x = self.wte(idx) + self.wpe(torch.arange(start_pos, start_pos + t))
            q, k, v = self.qkv(x).view(b, t, 3, HEADS, hd).permute(2, 0, 3, 1, 4)
            cache[0][:, :, start_pos:start_pos + t] = k
            cache[1][:, :, start_pos:start_pos + t] = v
            key_pos = torch.arange(max_len)
            mask = key_pos[None, :] <= (start_pos + torch.arange(t))[:, None]
            y = F.scaled_dot_product_attention(q, cache[0], cache[1], attn_mask=mask, scale=0.5 / math.sqrt(hd))
            return self.ln(x + self.o(y.transpose(1, 2).reshape(b, t, D))) @ self.wte.weight.T

    model = Decoder()
    init = start(model, init)
    model.eval()
    seq = torch.tensor(ids(120, 2, 4))
    cache = [torch.zeros(2, HEADS, max_len, hd, dtype=torch.float64) for _ in range(2)]
    banned_counts = []
    with torch.no_grad():
        logits = model(seq, 0, cache)[:, -1]
        while seq.size(1) < max_len:
            grams = seq.unfold(1, ngram, 1)  # (b, n - 1, 2)
            prefix_hit = (grams[:, :, :-1] == seq[:, None, -(ngram - 1):]).all(-1)
            banned = torch.zeros_like(logits, dtype=torch.bool)
            for row in range(seq.size(0)):
                banned[row, grams[row, prefix_hit[row], -1]] = True
            banned |= torch.isin(torch.arange(VOCAB), bad_words)
            banned_counts.append(banned.sum(-1))
            nxt = logits.masked_fill(banned, float("-inf")).argmax(-1, keepdim=True)
            logits = model(nxt, seq.size(1), cache)[:, -1]
            seq = torch.cat([seq, nxt], dim=1)
        full_cache = [torch.zeros_like(c) for c in cache]
        recomputed = model(seq, 0, full_cache)[:, -1]
    return dict(init=init, seq=seq, banned=banned_counts, logits=logits, recomputed=recomputed, cache=cache)


def test_static_cache_slice_writes_no_repeat_ngram_bad_words(torch):
    theirs, _ = both(torch, static_cache_no_repeat_ngram)
    np.testing.assert_allclose(theirs["logits"].numpy(), theirs["recomputed"].numpy(), rtol=1e-10, atol=1e-12)
    grams = theirs["seq"].unfold(1, 2, 1).tolist()
    assert all(len(set(map(tuple, g))) == len(g) for g in grams)


# ---- quantization-aware fine-tuning: a per-channel int8 fake quantizer registered as a parametrization (rounding
# passed straight through by x + (q - x).detach()), trained, then removed leaving the quantized weight --------------
def qat_parametrize(torch, init):
    nn, F = torch.nn, torch.nn.functional
    parametrize = torch.nn.utils.parametrize

    class FakeQuant(nn.Module):
        def forward(self, w):
            scale = w.detach().abs().amax(dim=1, keepdim=True) / 127
            q = torch.clamp(torch.round(w / scale), -127, 127) * scale
            return w + (q - w).detach()

    model = tiny_lm(torch)
    init = start(model, init)
    for block in model.blocks:
        for layer in (block.qkv, block.proj, block.fc, block.out):
            parametrize.register_parametrization(layer, "weight", FakeQuant())
    names = [n for n, _ in model.named_parameters()]
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    seq = torch.tensor(ids(130, 2, 9))
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(model(seq)[0][:, :-1].flatten(0, 1), seq[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for block in model.blocks:
        for layer in (block.qkv, block.proj, block.fc, block.out):
            parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
    w = model.blocks[0].fc.weight
    levels = (w / (w.abs().amax(dim=1, keepdim=True) / 127)).detach()
    with torch.no_grad():
        out = model(seq)[0]
    return dict(init=init, names=names, losses=losses, grads=grads(model), levels=levels, out=out,
                keys=list(model.state_dict()))


def test_qat_int8_parametrization_straight_through_removed(torch):
    theirs, _ = both(torch, qat_parametrize)
    levels = theirs["levels"].numpy()
    np.testing.assert_allclose(levels, np.round(levels), atol=1e-9)
