"""The small models learners write, in the styles they write them in (makemore's MLPs with a hand-written
BatchNorm and a WaveNet-like hierarchy, a char-RNN by truncated BPTT, bags of words, polynomial fits, a tied LSTM
language model, a tiny transformer classifier, autoencoders and VAEs, a tiny CNN), each written once against a
`torch`-like module and run twice: on PyTorch, then on minigrad from PyTorch's initial weights. Losses, gradients,
parameters and outputs must agree closely (float64 throughout; random draws given by numpy where the two
libraries' streams differ by design)."""
import math

import numpy as np

from twins import both, grads, start

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail"]


def kind(t):
    """A tensor's dtype by name ('int64'), comparable across the two libraries."""
    return str(t.dtype).split(".")[-1]


def names_dataset(torch, words, block_size):
    """makemore's dataset: every context window of `block_size` characters and the character after it."""
    chars = sorted(set("".join(WORDS)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    return torch.tensor(X), torch.tensor(Y), len(stoi)


def given(torch, tensors, init):
    """Loose tensors a script drew from its generator: recorded on PyTorch, overwritten from PyTorch's on minigrad."""
    if init is None:
        return [t.detach().numpy().copy() for t in tensors]
    with torch.no_grad():
        for t, v in zip(tensors, init):
            t.copy_(torch.tensor(v))
    return init


# ---- makemore part 3: C[X] lookups, kaiming by hand, a hand-written BatchNorm with running stats, lr by an if ----
def makemore_mlp_batchnorm(torch, init):
    F = torch.nn.functional
    Xtr, Ytr, vocab_size = names_dataset(torch, WORDS[:7], 3)
    Xdev, Ydev, _ = names_dataset(torch, WORDS[7:], 3)
    n_embd, n_hidden, block_size = 4, 16, 3
    g = torch.Generator().manual_seed(2147483647)
    C = torch.randn((vocab_size, n_embd), generator=g, dtype=torch.float64)
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g, dtype=torch.float64) * (5 / 3) / (n_embd * block_size) ** 0.5
    b1 = torch.randn(n_hidden, generator=g, dtype=torch.float64) * 0.01
    W2 = torch.randn((n_hidden, vocab_size), generator=g, dtype=torch.float64) * 0.01
    b2 = torch.randn(vocab_size, generator=g, dtype=torch.float64) * 0
    bngain = torch.ones((1, n_hidden), dtype=torch.float64)
    bnbias = torch.zeros((1, n_hidden), dtype=torch.float64)
    bnmean_running = torch.zeros((1, n_hidden), dtype=torch.float64)
    bnstd_running = torch.ones((1, n_hidden), dtype=torch.float64)
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    init = given(torch, parameters, init)
    facts = [sum(p.nelement() for p in parameters), kind(Xtr), list(Xtr.shape), list(C[Xtr].shape), vocab_size]
    for p in parameters:
        p.requires_grad = True
    batches = np.random.default_rng(250).integers(0, Xtr.shape[0], (6, 8))
    lossi, ud = [], []
    for i in range(6):
        ix = torch.tensor(batches[i])
        Xb, Yb = Xtr[ix], Ytr[ix]
        emb = C[Xb]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1 + b1
        bnmeani = hpreact.mean(0, keepdim=True)
        bnstdi = hpreact.std(0, keepdim=True)
        hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
        with torch.no_grad():
            bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
            bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
        h = torch.tanh(hpreact)
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 4 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
        with torch.no_grad():
            ud.append([((lr * p.grad).std() / p.data.std()).log10().item() for p in parameters if p.ndim == 2])

    @torch.no_grad()
    def split_loss(x, y):
        emb = C[x]
        hpreact = emb.view(emb.shape[0], -1) @ W1 + b1
        hpreact = bngain * (hpreact - bnmean_running) / bnstd_running + bnbias
        return F.cross_entropy(torch.tanh(hpreact) @ W2 + b2, y).item()

    with torch.no_grad():  # calibrate the batch norm over the whole training set
        hpreact = C[Xtr].view(Xtr.shape[0], -1) @ W1 + b1
        bnmean, bnstd = hpreact.mean(0, keepdim=True), hpreact.std(0, keepdim=True)
    losses = [split_loss(Xtr, Ytr), split_loss(Xdev, Ydev)]
    # sampling: the probabilities each step, the characters given (torch.multinomial's stream differs by design)
    picks = iter([5, 13, 1, 0])
    out, context, probs_seen = [], [0] * block_size, []
    while True:
        emb = C[torch.tensor([context])]
        hpreact = emb.view(1, -1) @ W1 + b1
        hpreact = bngain * (hpreact - bnmean) / bnstd + bnbias
        probs = F.softmax(torch.tanh(hpreact) @ W2 + b2, dim=1)
        drawn = torch.multinomial(probs, num_samples=1, generator=g)
        facts += [list(drawn.shape), kind(drawn), 0 <= drawn.item() < vocab_size]
        ix = next(picks)
        probs_seen.append(probs)
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    return dict(init=init, facts=facts, lossi=lossi, ud=ud, losses=losses, bn=[bnmean_running, bnstd_running, bnmean, bnstd],
                probs=probs_seen, out=out, params=parameters, grads=[p.grad for p in parameters])


def test_makemore_mlp_hand_batchnorm_kaiming_lr_decay(torch):
    both(torch, makemore_mlp_batchnorm)


# ---- makemore part 5: hand-written layers (Linear, BatchNorm1d over dims (0, 1), FlattenConsecutive, Sequential) -
def makemore_wavenet_hand_layers(torch, init):
    F = torch.nn.functional
    Xtr, Ytr, vocab_size = names_dataset(torch, WORDS, 8)
    g = torch.Generator().manual_seed(42)

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out), generator=g, dtype=torch.float64) / fan_in ** 0.5
            self.bias = torch.zeros(fan_out, dtype=torch.float64) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps, self.momentum, self.training = eps, momentum, True
            self.gamma = torch.ones(dim, dtype=torch.float64)
            self.beta = torch.zeros(dim, dtype=torch.float64)
            self.running_mean = torch.zeros(dim, dtype=torch.float64)
            self.running_var = torch.ones(dim, dtype=torch.float64)

        def __call__(self, x):
            if self.training:
                dim = 0 if x.ndim == 2 else (0, 1)
                xmean = x.mean(dim, keepdim=True)
                xvar = x.var(dim, keepdim=True)
            else:
                xmean, xvar = self.running_mean, self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim), generator=g, dtype=torch.float64)

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            return [p for layer in self.layers for p in layer.parameters()]

    n_embd, n_hidden = 4, 8
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False), BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])
    with torch.no_grad():
        model.layers[-1].weight *= 0.1
    parameters = model.parameters()
    init = given(torch, parameters, init)
    for p in parameters:
        p.requires_grad = True
    batches = np.random.default_rng(251).integers(0, Xtr.shape[0], (5, 16))
    lossi, shapes = [], []
    for i in range(5):
        ix = torch.tensor(batches[i])
        logits = model(Xtr[ix])
        loss = F.cross_entropy(logits, Ytr[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 3 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.item())
    if not shapes:
        shapes = [(layer.__class__.__name__, tuple(layer.out.shape)) for layer in model.layers]
    # lossi viewed as rows and averaged, as the lecture plots it
    smoothed = torch.tensor(lossi[:4]).view(-1, 2).mean(1)
    for layer in model.layers:
        layer.training = False
    with torch.no_grad():
        eval_loss = F.cross_entropy(model(Xtr), Ytr)
        probs = F.softmax(model(Xtr[:3]), dim=1)
    bn = [(layer.running_mean, layer.running_var) for layer in model.layers if isinstance(layer, BatchNorm1d)]
    return dict(init=init, shapes=shapes, lossi=lossi, smoothed=smoothed, eval_loss=eval_loss, probs=probs, bn=bn,
                params=parameters)


def test_makemore_wavenet_hand_written_layers(torch):
    both(torch, makemore_wavenet_hand_layers)


# ---- the same hierarchy as nn.Modules: a FlattenConsecutive module, nn.BatchNorm1d over a transposed (B, C, T) ----
def makemore_wavenet_modules(torch, init):
    nn, F = torch.nn, torch.nn.functional
    Xtr, Ytr, vocab_size = names_dataset(torch, WORDS, 8)

    class FlattenConsecutive(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.n = n

        def forward(self, x):
            B, T, C = x.shape
            return x.reshape(B, T // self.n, C * self.n)

    class BatchNormOverTime(nn.BatchNorm1d):
        def forward(self, x):  # (B, T, C): nn.BatchNorm1d normalises dim 1 of a (B, C, T)
            return super().forward(x.transpose(1, 2)).transpose(1, 2)

    def block(fan_in, n_hidden):
        return [FlattenConsecutive(2), nn.Linear(fan_in * 2, n_hidden, bias=False), BatchNormOverTime(n_hidden),
                nn.Tanh()]

    n_embd, n_hidden = 4, 8
    model = nn.Sequential(nn.Embedding(vocab_size, n_embd), *block(n_embd, n_hidden), *block(n_hidden, n_hidden),
                          *block(n_hidden, n_hidden), nn.Flatten(), nn.Linear(n_hidden, vocab_size))
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="tanh")
    with torch.no_grad():
        model[-1].weight *= 0.1
    init = start(model, init)
    facts = [sum(p.numel() for p in model.parameters()), len(list(model.children())),
             [type(m).__name__ for m in model][:6], nn.init.calculate_gain("tanh")]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[3], gamma=0.1)
    batches = np.random.default_rng(252).integers(0, Xtr.shape[0], (5, 16))
    losses = []
    for i in range(5):
        ix = torch.tensor(batches[i])
        loss = F.cross_entropy(model(Xtr[ix]), Ytr[ix])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        eval_loss = F.cross_entropy(model(Xtr), Ytr).item()
    return dict(init=init, facts=facts, losses=losses, eval_loss=eval_loss, lr=sched.get_last_lr(),
                state=model.state_dict(), grads=grads(model))


def test_makemore_wavenet_as_modules_batchnorm_over_time(torch):
    both(torch, makemore_wavenet_modules)


# ---- makemore part 4: a hand-written backward, every intermediate retain_grad()'ed, checked against autograd ------
def makemore_manual_backprop(torch, init):
    F = torch.nn.functional
    Xtr, Ytr, vocab_size = names_dataset(torch, WORDS, 3)
    n_embd, n_hidden, block_size, n = 3, 8, 3, 12
    g = torch.Generator().manual_seed(2147483647)
    C = torch.randn((vocab_size, n_embd), generator=g, dtype=torch.float64)
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g, dtype=torch.float64) * (5 / 3) / (n_embd * block_size) ** 0.5
    b1 = torch.randn(n_hidden, generator=g, dtype=torch.float64) * 0.1
    W2 = torch.randn((n_hidden, vocab_size), generator=g, dtype=torch.float64) * 0.1
    b2 = torch.randn(vocab_size, generator=g, dtype=torch.float64) * 0.1
    bngain = torch.randn((1, n_hidden), dtype=torch.float64) * 0.1 + 1.0
    bnbias = torch.randn((1, n_hidden), dtype=torch.float64) * 0.1
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    init = given(torch, parameters, init)
    for p in parameters:
        p.requires_grad = True
    ix = torch.tensor(np.random.default_rng(253).integers(0, Xtr.shape[0], n))
    Xb, Yb = Xtr[ix], Ytr[ix]

    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * bndiff2.sum(0, keepdim=True)
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for p in parameters:
        p.grad = None
    inter = [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hpreact, bnraw,
             bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani, embcat, emb]
    for t in inter:
        t.retain_grad()
    loss.backward()

    def cmp(dt, t):
        return [bool((dt == t.grad).all().item()), torch.allclose(dt, t.grad), (dt - t.grad).abs().max().item() < 1e-12]

    # the compact forms of exercises 2 and 3
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h ** 2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnbias = dhpreact.sum(0, keepdim=True)
    dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            dC[Xb[k, j]] += demb[k, j]
    dC2 = torch.zeros_like(C).index_add_(0, Xb.view(-1), demb.view(-1, n_embd))
    checks = [cmp(dlogits, logits)[1:], cmp(dh, h)[1:], cmp(dhpreact, hpreact)[1:], cmp(dhprebn, hprebn)[1:],
              cmp(dembcat, embcat)[1:], cmp(demb, emb)[1:]]
    checks += [torch.allclose(d, p.grad) for d, p in zip([dC, dW1, db1, dW2, db2, dbngain, dbnbias], parameters)]
    checks += [torch.allclose(dC2, C.grad)]
    # exercise 4: the training step by the hand gradients alone
    hand = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
    with torch.no_grad():
        for p, grad in zip(parameters, hand):
            p.data += -0.1 * grad
    kinds = [t.grad.dtype == torch.float64 for t in inter] + [t.is_leaf for t in inter[:3]] + [Xb.is_leaf]
    return dict(init=init, loss=loss, checks=checks, kinds=kinds, inter_grads=[t.grad for t in inter], hand=hand,
                params=parameters)


def test_makemore_manual_backprop_compact_forms_against_retained_grads(torch):
    both(torch, makemore_manual_backprop)


# ---- a char-RNN by truncated BPTT: hidden.detach() between chunks, clipping, nn.RNN / nn.GRU both layouts ---------
TEXT = "hello world, hello there; the world is wide and the hello is loud. "


def char_rnn_tbptt(torch, init, cell, batch_first):
    nn, F = torch.nn, torch.nn.functional
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    V, B, T = len(chars), 3, 5
    n = (data.numel() - 1) // B
    inputs = data[:n * B].view(B, n)
    targets = data[1:n * B + 1].view(B, n)

    class CharRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(V, 6)
            self.rnn = getattr(nn, cell)(6, 7, num_layers=2, batch_first=batch_first)
            self.head = nn.Linear(7, V)

        def forward(self, x, hidden=None):  # x: (B, T) ids
            e = self.embed(x if batch_first else x.t())
            out, hidden = self.rnn(e) if hidden is None else self.rnn(e, hidden)
            if not batch_first:
                out = out.transpose(0, 1)
            return self.head(out), hidden

    model = CharRNN()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    hidden, losses, norms = None, [], []
    for s in range(0, n - T + 1, T):
        x, y = inputs[:, s:s + T], targets[:, s:s + T]
        if hidden is not None:
            hidden = hidden.detach()
        logits, hidden = model(x, hidden)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5))
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
        opt.step()
        losses.append(loss.item())
    facts = [list(hidden.shape), hidden.requires_grad, hidden.grad_fn is None, len(losses)]
    # sampling one character at a time from an h0 of zeros given explicitly; the draws are given
    model.eval()
    h = torch.zeros(2, 1, 7, dtype=torch.float64)
    x = torch.tensor([[stoi["h"]]])
    gen = torch.Generator().manual_seed(7)
    probs_seen, text = [], "h"
    with torch.no_grad():
        for ix in [stoi[c] for c in "ello"]:
            logits, h = model(x, h)
            probs = F.softmax(logits[:, -1] / 0.8, dim=-1)
            drawn = torch.multinomial(probs, 1, generator=gen)
            facts += [list(drawn.shape), kind(drawn)]
            probs_seen.append(probs)
            x = torch.tensor([[ix]])
            text += chars[ix]
    return dict(init=init, facts=facts, losses=losses, norms=norms, probs=probs_seen, text=text, h=h,
                grads=grads(model), params=list(model.parameters()))


def test_char_rnn_truncated_bptt_rnn_batch_first(torch):
    both(torch, char_rnn_tbptt, cell="RNN", batch_first=True)


def test_char_rnn_truncated_bptt_gru_time_first(torch):
    both(torch, char_rnn_tbptt, cell="GRU", batch_first=False)


# ---- bags of words: EmbeddingBag with offsets (mean / sum / max), TF-IDF per_sample_weights, sparse SGD ----------
DOCS = [("good great fun", 1), ("bad awful boring bad", 0), ("great plot good cast", 1), ("boring", 0),
        ("fun fun great", 1), ("awful plot", 0)]


def bag_of_words(torch, init, mode, sparse):
    nn, F = torch.nn, torch.nn.functional
    vocab = {w: i for i, w in enumerate(sorted({w for d, _ in DOCS for w in d.split()}))}
    df = torch.zeros(len(vocab), dtype=torch.float64)
    for d, _ in DOCS:
        for w in set(d.split()):
            df[vocab[w]] += 1
    idf = torch.log(len(DOCS) / df)

    def collate(batch):
        labels, text, offsets = [], [], [0]
        for doc, label in batch:
            ids = torch.tensor([vocab[w] for w in doc.split()], dtype=torch.int64)
            labels.append(label)
            text.append(ids)
            offsets.append(ids.size(0))
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return torch.tensor(labels, dtype=torch.int64), torch.cat(text), offsets

    class TextClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.EmbeddingBag(len(vocab), 5, mode=mode, sparse=sparse)
            self.fc = nn.Linear(5, 2)
            self.embedding.weight.data.uniform_(-0.5, 0.5)
            self.fc.weight.data.uniform_(-0.5, 0.5)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets, weights=None):
            return self.fc(self.embedding(text, offsets, per_sample_weights=weights))

    model = TextClassifier()
    init = start(model, init)
    params = [model.embedding.weight] if sparse else list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.5)
    dense_opt = torch.optim.Adam(model.fc.parameters(), lr=0.05) if sparse else None
    losses, accs = [], []
    for _ in range(3):
        for b in range(0, len(DOCS), 3):
            label, text, offsets = collate(DOCS[b:b + 3])
            weights = idf[text] if mode == "sum" else None
            opt.zero_grad()
            if dense_opt:
                dense_opt.zero_grad()
            logits = model(text, offsets, weights)
            loss = F.cross_entropy(logits, label)
            loss.backward()
            if not sparse:
                nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            opt.step()
            if dense_opt:
                dense_opt.step()
            losses.append(loss.item())
            accs.append((logits.argmax(1) == label).sum().item())
    facts = [model.embedding.weight.grad.is_sparse, list(offsets.shape), kind(offsets)]
    # include_last_offset=True shares the same weights: one more offset, the end of the last bag
    last = nn.EmbeddingBag(len(vocab), 5, mode=mode, include_last_offset=True)
    last.weight = model.embedding.weight
    label, text, offsets = collate(DOCS)
    ends = torch.cat([offsets, torch.tensor([text.numel()])])
    weights = idf[text] if mode == "sum" else None
    with torch.no_grad():
        same_bags = torch.equal(last(text, ends, per_sample_weights=weights), model.embedding(text, offsets, weights))
        pooled = F.embedding_bag(text[:16].view(4, -1), model.embedding.weight, mode=mode) if mode != "sum" else None
    return dict(init=init, facts=facts, losses=losses, accs=accs, same_bags=same_bags, pooled=pooled,
                params=list(model.parameters()))


def test_bag_of_words_embedding_bag_mean_sparse_sgd(torch):
    both(torch, bag_of_words, mode="mean", sparse=True)


def test_bag_of_words_embedding_bag_sum_tfidf_weights(torch):
    both(torch, bag_of_words, mode="sum", sparse=False)


def test_bag_of_words_embedding_bag_max_2d_input(torch):
    both(torch, bag_of_words, mode="max", sparse=False)


# ---- polynomial regression: x.unsqueeze(1) ** torch.arange(4) features, lstsq / normal equations / SGD -----------
def polynomial_regression(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(254)
    true_w = torch.tensor([0.5, -1.2, 0.3, 2.0], dtype=torch.float64)
    x = torch.linspace(-1, 1, 20, dtype=torch.float64)
    X = x.unsqueeze(1) ** torch.arange(4)
    y = X @ true_w + torch.tensor(rng.normal(0, 0.05, 20))
    sol = torch.linalg.lstsq(X, y.unsqueeze(1))
    w_lstsq = sol.solution.squeeze(1)
    w_normal = torch.linalg.solve(X.T @ X, X.T @ y)
    w_pinv = torch.linalg.pinv(X) @ y
    fit = torch.linalg.lstsq(X, y, driver="gelsd")  # y as a vector: the residuals keep a column
    flat = torch.linalg.lstsq(X.float()[:, :1].expand(20, 3), y.float().unsqueeze(1))  # rank 1 in float32
    facts = [kind(X), list(X.shape), kind(torch.arange(4)), list(sol.solution.shape), sol.residuals.numel()]

    def make_features(x):  # the pytorch/examples form: columns x, x^2, ... by cat
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, 4)], 1)

    def poly_desc(W, b):
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    fc = nn.Linear(3, 1)
    init = start(fc, init)
    feats = make_features(x)
    losses = []
    for _ in range(30):
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(feats), y.view(-1, 1))
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.5 * param.grad)
        losses.append(output.item())
    desc = poly_desc(fc.weight.view(-1), fc.bias)
    # the same fit from a raw parameter vector and torch.optim.SGD on the arange-power features
    w = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.3, momentum=0.5)
    for _ in range(20):
        loss = ((X @ w - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return dict(init=init, facts=facts, w_lstsq=w_lstsq, w_normal=w_normal, w_pinv=w_pinv, rank=sol.rank,
                fit=list(fit), flat=[[round(v, 4) for v in flat.solution.flatten().tolist()], flat.rank],
                losses=losses, desc=desc, w=w, last=loss, params=list(fc.parameters()))


def test_polynomial_regression_lstsq_normal_equations_sgd(torch):
    both(torch, polynomial_regression)


# ---- an LSTM word language model: tied weights, dropout off for the check, uniform_(-0.1, 0.1), lr / 4 on plateau --
CORPUS = ("the cat sat on the mat . the dog sat on the log . a cat and a dog met on the mat . "
          "the log was on the mat . a dog sat . ").split()


def lstm_word_lm(torch, init, cell):
    nn = torch.nn
    vocab = {}
    ids = torch.tensor([vocab.setdefault(w, len(vocab)) for w in CORPUS], dtype=torch.long)
    ntokens = len(vocab)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i, bptt=4):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    class RNNModel(nn.Module):
        def __init__(self, ninp=6, nlayers=2, dropout=0.0):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntokens, ninp)
            self.rnn = getattr(nn, cell)(ninp, ninp, nlayers, dropout=dropout)
            self.decoder = nn.Linear(ninp, ntokens)
            self.decoder.weight = self.encoder.weight
            self.nlayers, self.nhid = nlayers, ninp
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, ntokens)
            return torch.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if cell == "LSTM":
                return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
            return weight.new_zeros(self.nlayers, bsz, self.nhid)

    model = RNNModel()
    init = start(model, init)
    facts = [model.decoder.weight is model.encoder.weight, len(list(model.parameters())), len(model.state_dict()),
             "decoder.weight" in model.state_dict()]
    train_data, val_data = batchify(ids[:40], 3), batchify(ids[40:], 2)
    criterion = nn.NLLLoss()

    def evaluate(source, bsz):
        model.eval()
        total_loss, hidden = 0.0, model.init_hidden(bsz)
        with torch.no_grad():
            for i in range(0, source.size(0) - 1, 4):
                data, targets = get_batch(source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(source) - 1)

    lr, best_val_loss, history = 5.0, None, []
    for _ in range(3):
        model.train()
        hidden = model.init_hidden(3)
        for i in range(0, train_data.size(0) - 1, 4):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
        val_loss = evaluate(val_data, 2)
        history.append((round(lr, 6), val_loss, math.exp(val_loss)))
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
    return dict(init=init, facts=facts, history=history, last=loss, hidden=list(hidden) if cell == "LSTM" else hidden,
                grads=grads(model), state=model.state_dict())


def test_word_lm_tied_lstm_lr_quartered_on_plateau(torch):
    both(torch, lstm_word_lm, cell="LSTM")


def test_word_lm_tied_gru_lr_quartered_on_plateau(torch):
    both(torch, lstm_word_lm, cell="GRU")


# ---- a tiny transformer classifier: CLS token, positional nn.Parameter, src_key_padding_mask (bool / float) -------
def transformer_classifier(torch, init, batch_first, float_mask):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(255)
    L, d, V, pad = 6, 8, 11, 0
    lengths = [6, 3, 4, 1, 5]
    ids = torch.tensor(np.stack([np.r_[rng.integers(1, V, n), np.zeros(L - n, dtype=np.int64)] for n in lengths]))
    labels = torch.tensor([1, 0, 2, 1, 0])

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(V, d, padding_idx=pad)
            self.cls_token = nn.Parameter(torch.zeros(1, 1, d))
            self.pos_embed = nn.Parameter(torch.zeros(1, L + 1, d))
            layer = nn.TransformerEncoderLayer(d, nhead=2, dim_feedforward=16, dropout=0.0, activation="gelu",
                                               batch_first=batch_first, norm_first=not batch_first)
            self.encoder = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
            self.head = nn.Linear(d, 3)
            nn.init.trunc_normal_(self.pos_embed, std=0.02)
            nn.init.normal_(self.cls_token, std=0.02)

        def forward(self, ids):
            x = self.embed(ids) * math.sqrt(d)
            x = torch.cat([self.cls_token.expand(ids.shape[0], -1, -1), x], dim=1) + self.pos_embed
            mask = torch.cat([torch.zeros(ids.shape[0], 1, dtype=torch.bool), ids == pad], dim=1)
            if float_mask:
                mask = torch.zeros(mask.shape, dtype=x.dtype).masked_fill(mask, float("-inf"))
            if batch_first:
                x = self.encoder(x, src_key_padding_mask=mask)
            else:
                x = self.encoder(x.transpose(0, 1), src_key_padding_mask=mask).transpose(0, 1)
            return self.head(x[:, 0])

    model = Classifier()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 2))
    losses = []
    for _ in range(3):
        model.train()
        logits = model(ids)
        loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits = model(ids)
        # the padded positions change nothing: the same sentence with more padding classifies alike
        longer = model(F.pad(ids, (0, 2), value=pad)[:, :L]) - logits
    facts = [kind(ids == pad), (logits.argmax(-1) == labels).float().mean().item()]
    return dict(init=init, facts=facts, losses=losses, logits=logits, longer=longer, grads=grads(model),
                params=list(model.parameters()))


def test_transformer_classifier_cls_token_bool_padding_mask(torch):
    both(torch, transformer_classifier, batch_first=True, float_mask=False)


def test_transformer_classifier_time_first_norm_first_float_mask(torch):
    both(torch, transformer_classifier, batch_first=False, float_mask=True)


# ---- an autoencoder and a VAE on flat vectors: reparameterisation with given noise, KL, BCE(reduction="sum") ------
def autoencoder_vae(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(256)
    data = torch.tensor((rng.random((12, 16)) > 0.6).astype(np.float64))
    noise = [torch.tensor(rng.standard_normal((4, 3))) for _ in range(3)]
    masks = [torch.tensor(rng.random((4, 16)) > 0.2) for _ in range(3)]

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 8)
            self.fc21 = nn.Linear(8, 3)
            self.fc22 = nn.Linear(8, 3)
            self.fc3 = nn.Linear(3, 8)
            self.fc4 = nn.Linear(8, 16)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction="sum")
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD, BCE, KLD

    vae = VAE()
    ae = nn.Sequential(nn.Linear(16, 6), nn.ReLU(True), nn.Linear(6, 3), nn.Linear(3, 6), nn.ReLU(True),
                       nn.Linear(6, 16))
    both_models = nn.ModuleDict({"vae": vae, "ae": ae})
    init = start(both_models, init)
    opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
    ae_opt = torch.optim.RMSprop(ae.parameters(), lr=1e-2)
    train_loss, parts, ae_losses = 0.0, [], []
    for step in range(3):
        x = data[step * 4:(step + 1) * 4]
        opt.zero_grad()
        recon, mu, logvar = vae(x, noise[step])
        loss, BCE, KLD = loss_function(recon, x, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        opt.step()
        parts.append((BCE.item(), KLD.item()))
        # a denoising autoencoder: inputs masked by the given mask, logits scored against the clean vector
        ae_opt.zero_grad()
        ae_loss = F.binary_cross_entropy_with_logits(ae(x * masks[step]), x, reduction="sum") / x.size(0)
        ae_loss.backward()
        ae_opt.step()
        ae_losses.append(ae_loss.item())
    vae.eval()
    with torch.no_grad():
        sample = vae.decode(noise[0])
        recon, mu, logvar = vae(data, torch.zeros(12, 3))
        test_loss = loss_function(recon, data, mu, logvar)[0].item() / len(data)
        comparison = torch.cat([data[:2], recon.view(12, 16)[:2]])
    return dict(init=init, train_loss=train_loss / len(data), parts=parts, ae_losses=ae_losses, sample=sample,
                test_loss=test_loss, comparison=comparison, grads=grads(both_models),
                params=list(both_models.parameters()))


def test_autoencoder_and_vae_bce_sum_kl_given_noise(torch):
    both(torch, autoencoder_vae)


# ---- a tiny CNN on 8x8 images: MaxPool2d, Dropout2d, AdaptiveAvgPool2d, log_softmax + nll_loss, Adadelta, StepLR --
def tiny_cnn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(257)
    images = torch.tensor(rng.random((10, 1, 8, 8)))
    targets = torch.tensor(rng.integers(0, 3, 10))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 6, 3, 1, padding=1)
            self.dropout1 = nn.Dropout2d(0.25)
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(6, 3)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = self.dropout1(x)
            x = torch.flatten(self.pool(x), 1)
            x = self.dropout2(x)
            return F.log_softmax(self.fc1(x), dim=1)

    model = Net()
    init = start(model, init)
    # dropout in training mode: whole channels zeroed or scaled by 1 / (1 - p) (which ones differs by design)
    with torch.no_grad():
        feats = F.max_pool2d(F.relu(model.conv2(F.relu(model.conv1(images)))), 2)
        dropped = model.dropout1(feats)
        kept = dropped.abs().sum((2, 3)) > 0
        scaled_ok = torch.allclose(dropped[kept], (feats / 0.75)[kept])
    facts = [list(dropped.shape), scaled_ok, kind(kept)]
    for m in model.modules():  # the check below turns dropout off, as scripts do to compare runs
        if isinstance(m, (nn.Dropout, nn.Dropout2d)):
            m.p = 0.0
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    logs = []
    for epoch in range(1, 4):
        model.train()
        for batch_idx in range(2):
            data, target = images[batch_idx * 5:(batch_idx + 1) * 5], targets[batch_idx * 5:(batch_idx + 1) * 5]
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            logs.append("Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                epoch, batch_idx * len(data), len(images), 100.0 * batch_idx / 2, loss.item()))
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            output = model(images)
            test_loss += F.nll_loss(output, targets, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(targets.view_as(pred)).sum().item()
        logs.append((test_loss / len(images), correct))
        scheduler.step()
    return dict(init=init, facts=facts, logs=logs, lr=scheduler.get_last_lr(), sched=scheduler.state_dict(),
                grads=grads(model), params=list(model.parameters()), state=optimizer.state_dict()["state"][0])


def test_tiny_cnn_dropout2d_adaptive_pool_nll_adadelta_steplr(torch):
    both(torch, tiny_cnn)
