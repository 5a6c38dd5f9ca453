"""Small-model scripts of issue 29's kinds as learners write them, in idioms the project's own versions do not use
(makemore's MLP with a hand-written BatchNorm and a hand-written backward, a one-hot bigram in float32, a bigram
sampled by torch.multinomial, nn.RNN and nn.RNNCell char models, nn.GRU with repackage_hidden, an nn.GRUCell loop
updated through `p -= lr * p.grad`, a GRU written from raw weights, an EmbeddingBag classifier on offsets, a
bag-of-words by torch.bincount, a packed LSTM classifier over pad_sequence, nn.TransformerEncoder with tied weights
and a square subsequent mask, a hand-written multi-head attention with a tril buffer, PyTorch's word_language_model
LSTM with its batchify/get_batch/repackage_hidden/annealed `add_(grad, alpha=-lr)`, an nn.LSTMCell word model,
PyTorch's polynomial regression example with smooth_l1_loss, the nn-tutorial cubic through Flatten(0, 1), and a
randperm-minibatched regression), written once against a `torch`-like module and run twice: on PyTorch, then on
minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely (float64
unless said; random draws made by numpy and passed to both runs; torch.randperm and torch.multinomial used only
where their draw cannot change the result)."""
import math

import numpy as np

from twins import both, grads, start

WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn", "abigail", "emily",
         "ella", "liam", "noah", "oliver", "elijah", "james", "lucas", "mason", "ethan", "logan", "jacob"]
CHARS = ["."] + sorted(set("".join(WORDS)))
STOI = {c: i for i, c in enumerate(CHARS)}
V = len(CHARS)


def f64(torch, a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


def ngrams(block):
    """makemore's dataset: every context of `block` letters and the letter after it."""
    xs, ys = [], []
    for w in WORDS:
        context = [0] * block
        for ch in w + ".":
            xs.append(list(context))
            ys.append(STOI[ch])
            context = context[1:] + [STOI[ch]]
    return np.array(xs), np.array(ys)


def text_ids():
    return np.array([STOI[c] for c in ".".join(WORDS)])


# ---- makemore's MLP with a hand-written BatchNorm (bngain, bnbias, running stats under no_grad), the update
# through `p.data += -lr * p.grad`, a step-decay lr by hand, the log10 loss logged by .item() -------------------
def mlp_manual_bn(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(1)
    X, Y = ngrams(3)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.C = nn.Parameter(torch.randn(V, 6))
            self.W1 = nn.Parameter(torch.randn(18, 40) * (5 / 3) / 18 ** 0.5)
            self.bngain = nn.Parameter(torch.ones(1, 40))
            self.bnbias = nn.Parameter(torch.zeros(1, 40))
            self.W2 = nn.Parameter(torch.randn(40, V) * 0.01)
            self.b2 = nn.Parameter(torch.zeros(V))
            self.register_buffer("bnmean_running", torch.zeros(1, 40))
            self.register_buffer("bnstd_running", torch.ones(1, 40))

    m = MLP()
    init = start(m, init)
    parameters = [m.C, m.W1, m.bngain, m.bnbias, m.W2, m.b2]
    for p in parameters:
        p.requires_grad = True
    lossi = []
    for i in range(12):
        ix = torch.tensor(rng.integers(0, X.shape[0], (32,)))
        Xb, Yb = torch.tensor(X)[ix], torch.tensor(Y)[ix]
        emb = m.C[Xb]
        hpreact = emb.view(emb.shape[0], -1) @ m.W1
        bnmeani = hpreact.mean(0, keepdim=True)
        bnstdi = hpreact.std(0, keepdim=True)
        hpreact = m.bngain * (hpreact - bnmeani) / bnstdi + m.bnbias
        with torch.no_grad():
            m.bnmean_running = 0.999 * m.bnmean_running + 0.001 * bnmeani
            m.bnstd_running = 0.999 * m.bnstd_running + 0.001 * bnstdi
        h = torch.tanh(hpreact)
        logits = h @ m.W2 + m.b2
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 8 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        lossi.append(loss.log10().item())
    with torch.no_grad():
        emb = m.C[torch.tensor(X)]
        hpreact = emb.view(emb.shape[0], -1) @ m.W1
        hpreact = m.bngain * (hpreact - m.bnmean_running) / m.bnstd_running + m.bnbias
        split = F.cross_entropy(torch.tanh(hpreact) @ m.W2 + m.b2, torch.tensor(Y))
    return dict(init=init, lossi=lossi, split=split.item(), running=[m.bnmean_running, m.bnstd_running],
                params=parameters, grads=grads(m))


def test_mlp_manual_batchnorm(torch):
    theirs, _ = both(torch, mlp_manual_bn)
    assert all(math.isfinite(x) for x in theirs["lossi"])


# ---- makemore's "becoming a backprop ninja": the backward written by hand (cross_entropy's dlogits, the BatchNorm
# backward in one line, the embedding's gradient by index_add_), checked against autograd's, then an SGD step -----
def mlp_manual_backprop(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(2)
    X, Y = ngrams(3)
    n = 16

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.C = nn.Parameter(torch.randn(V, 5))
            self.W1 = nn.Parameter(torch.randn(15, 24) * 0.3)
            self.b1 = nn.Parameter(torch.randn(24) * 0.1)
            self.W2 = nn.Parameter(torch.randn(24, V) * 0.1)
            self.b2 = nn.Parameter(torch.randn(V) * 0.1)
            self.bngain = nn.Parameter(torch.randn(1, 24) * 0.1 + 1.0)
            self.bnbias = nn.Parameter(torch.randn(1, 24) * 0.1)

    m = MLP()
    init = start(m, init)
    parameters = [m.C, m.W1, m.b1, m.W2, m.b2, m.bngain, m.bnbias]
    losses, diffs = [], []
    for _ in range(4):
        ix = torch.tensor(rng.integers(0, X.shape[0], (n,)))
        Xb, Yb = torch.tensor(X)[ix], torch.tensor(Y)[ix]
        emb = m.C[Xb]
        embcat = emb.view(emb.shape[0], -1)
        hprebn = embcat @ m.W1 + m.b1
        bnmean = hprebn.mean(0, keepdim=True)
        bnvar = hprebn.var(0, keepdim=True, unbiased=True)
        bnvar_inv = (bnvar + 1e-5) ** -0.5
        bnraw = (hprebn - bnmean) * bnvar_inv
        hpreact = m.bngain * bnraw + m.bnbias
        h = torch.tanh(hpreact)
        logits = h @ m.W2 + m.b2
        loss = F.cross_entropy(logits, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            dlogits = F.softmax(logits, 1)
            dlogits[range(n), Yb] -= 1
            dlogits /= n
            dh = dlogits @ m.W2.T
            dW2 = h.T @ dlogits
            db2 = dlogits.sum(0)
            dhpreact = (1.0 - h ** 2) * dh
            dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
            dbnbias = dhpreact.sum(0, keepdim=True)
            dhprebn = m.bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw *
                                                  (dhpreact * bnraw).sum(0))
            dembcat = dhprebn @ m.W1.T
            dW1 = embcat.T @ dhprebn
            db1 = dhprebn.sum(0)
            demb = dembcat.view(emb.shape)
            dC = torch.zeros_like(m.C)
            dC.index_add_(0, Xb.view(-1), demb.view(-1, 5))
            mine = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
            diffs.append(max((g - p.grad).abs().max().item() for g, p in zip(mine, parameters)))
            for p, g in zip(parameters, mine):
                p.data += -0.1 * g
        losses.append(loss.item())
    return dict(init=init, losses=losses, diffs_small=[d < 1e-12 for d in diffs], params=parameters,
                grads=grads(m))


def test_mlp_manual_backprop(torch):
    theirs, _ = both(torch, mlp_manual_backprop)
    assert all(theirs["diffs_small"])


# ---- makemore part 1's neural bigram in float32: `F.one_hot(xs, num_classes=V).float() @ W`, the softmax written
# out, the likelihood gathered by `probs[torch.arange(num), ys]`, `W.grad = None` and `W.data += -lr * W.grad` ----
def bigram_one_hot(torch, init):
    F = torch.nn.functional
    rng = np.random.default_rng(3)
    ids = text_ids()
    xs, ys = torch.tensor(ids[:-1]), torch.tensor(ids[1:])
    num = xs.nelement()
    W = torch.tensor(rng.standard_normal((V, V)).astype(np.float32), requires_grad=True)
    losses = []
    for _ in range(10):
        xenc = F.one_hot(xs, num_classes=V).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        W.grad = None
        loss.backward()
        W.data += -10 * W.grad
        losses.append(loss.item())
    # sampling: the next letter by inverse CDF on a shared uniform draw, and torch.multinomial on the row's argmax
    # alone (a draw that cannot differ)
    out, greedy = [], []
    u = rng.random(12)
    ix = jx = 0
    for t in range(12):
        p = F.softmax(F.one_hot(torch.tensor([ix]), num_classes=V).float() @ W, dim=1)[0]
        ix = int((torch.cumsum(p, 0) < float(u[t])).sum().item())
        ix = min(ix, V - 1)
        out.append(CHARS[ix])
        q = F.softmax(W[jx], dim=0)
        only = torch.where(q == q.max(), q, torch.zeros_like(q))
        jx = torch.multinomial(only, num_samples=1, replacement=True).item()
        greedy.append(jx)
    return dict(init=None, losses=losses, W=W, dtype=str(W.dtype).split(".")[-1], out="".join(out), greedy=greedy)


def test_bigram_one_hot_float32(torch):
    theirs, _ = both(torch, bigram_one_hot, tol=dict(rtol=2e-5, atol=2e-6))
    assert theirs["dtype"] == "float32"
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a char RNN on nn.RNN (batch_first, tanh, 2 layers), the hidden state carried over windows by `h.detach()`,
# clip_grad_norm_, Adam, optimizer.zero_grad(); evaluation under model.eval() and torch.no_grad() ---------------
def char_rnn(torch, init):
    nn = torch.nn
    ids = text_ids()
    B, T = 4, 8

    class CharRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(V, 12)
            self.rnn = nn.RNN(12, 16, num_layers=2, batch_first=True)
            self.fc = nn.Linear(16, V)

        def forward(self, x, h=None):
            out, h = self.rnn(self.embed(x), h)
            return self.fc(out.reshape(-1, out.size(2))), h

    model = CharRNN()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    n = (len(ids) - 1) // B
    data = torch.tensor(ids[:n * B]).view(B, n)
    target = torch.tensor(ids[1:n * B + 1]).view(B, n)
    h = None
    losses, norms = [], []
    for i in range(0, 5 * T, T):
        if h is not None:
            h = h.detach()
        logits, h = model(data[:, i:i + T], h)
        loss = crit(logits, target[:, i:i + T].reshape(-1))
        opt.zero_grad()
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), 0.5))
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        logits, _ = model(data[:, :T])
        val = crit(logits, target[:, :T].reshape(-1)).item()
        acc = (logits.argmax(1) == target[:, :T].reshape(-1)).float().mean()
    return dict(init=init, losses=losses, norms=norms, val=val, acc=acc, h=h, params=list(model.parameters()),
                grads=grads(model))


def test_char_rnn_nn_rnn_detach_clip(torch):
    both(torch, char_rnn)


# ---- makemore's RNN written with nn.RNNCell: a learned start state expanded over the batch, the per-step logits
# stacked by torch.stack(dim=1), cross_entropy over view(-1, V) with ignore_index=-1, AdamW with weight_decay ------
def rnn_cell_names(torch, init):
    nn, F = torch.nn, torch.nn.functional
    T = 6
    xs, ys = [], []
    for w in WORDS[:12]:
        ix = [STOI[c] for c in w[:T - 1]] + [0]
        x = [0] + ix[:-1] + [0] * (T - len(ix))
        y = ix + [-1] * (T - len(ix))
        xs.append(x[:T])
        ys.append(y[:T])
    X, Y = torch.tensor(xs), torch.tensor(ys)

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.start = nn.Parameter(torch.zeros(1, 20))
            self.wte = nn.Embedding(V, 10)
            self.cell = nn.RNNCell(10, 20, nonlinearity="relu")
            self.lm_head = nn.Linear(20, V)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            emb = self.wte(idx)
            hprev = self.start.expand((b, -1))
            hiddens = []
            for i in range(t):
                hprev = self.cell(emb[:, i, :], hprev)
                hiddens.append(hprev)
            logits = self.lm_head(torch.stack(hiddens, 1))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
            return logits, loss

    model = RNN()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
    losses = []
    for _ in range(6):
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, logits=logits, params=list(model.parameters()), grads=grads(model))


def test_rnn_cell_names_stack(torch):
    both(torch, rnn_cell_names)


# ---- a char model on nn.GRU: repackage_hidden recursing through tensors and tuples, SGD with momentum, a StepLR
# by hand through param_groups, the loss summed over a window with `total_loss += loss.item()` --------------------
def char_gru(torch, init):
    nn, F = torch.nn, torch.nn.functional
    ids = text_ids()
    B, T = 3, 7

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    class CharGRU(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(V, 10)
            self.gru = nn.GRU(10, 14)
            self.decoder = nn.Linear(14, V)

        def forward(self, x, hidden):
            output, hidden = self.gru(self.encoder(x), hidden)
            return F.log_softmax(self.decoder(output), dim=-1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return weight.new_zeros(1, bsz, 14)

    model = CharGRU()
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    n = (len(ids) - 1) // B
    data = torch.tensor(ids[:n * B]).view(B, -1).t().contiguous()
    target = torch.tensor(ids[1:n * B + 1]).view(B, -1).t().contiguous()
    hidden = model.init_hidden(B)
    total_loss, lrs = 0.0, []
    for step, i in enumerate(range(0, 6 * T, T)):
        hidden = repackage_hidden(hidden)
        opt.zero_grad()
        output, hidden = model(data[i:i + T], hidden)
        loss = F.nll_loss(output.view(-1, V), target[i:i + T].reshape(-1))
        loss.backward()
        opt.step()
        total_loss += loss.item()
        if step % 2 == 1:
            for g in opt.param_groups:
                g["lr"] *= 0.5
        lrs.append(opt.param_groups[0]["lr"])
    return dict(init=init, total_loss=total_loss, lrs=lrs, hidden=hidden, params=list(model.parameters()),
                grads=grads(model), momentum=[opt.state[p]["momentum_buffer"] for p in model.parameters()])


def test_char_gru_repackage_hidden_momentum(torch):
    both(torch, char_gru)


# ---- an nn.GRUCell loop over one-hot characters, `model.zero_grad()`, the update by hand under no_grad through
# `p -= lr * p.grad`, a linear warmup of lr; sampling a name greedily with torch.multinomial on a one-hot row ----
def gru_cell_loop(torch, init):
    nn, F = torch.nn, torch.nn.functional
    ids = text_ids()[:60]

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(V, 16)
            self.out = nn.Linear(16, V)

    model = Model()
    init = start(model, init)
    x = F.one_hot(torch.tensor(ids[:-1]), V).double()
    y = torch.tensor(ids[1:])
    losses = []
    for it in range(4):
        lr = 0.2 * min(1.0, (it + 1) / 3)
        h = torch.zeros(1, 16, dtype=torch.float64)
        loss = 0
        for t in range(0, 20):
            h = model.cell(x[t:t + 1], h)
            loss = loss + F.cross_entropy(model.out(h), y[t:t + 1])
        loss = loss / 20
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses.append(loss.item())
    name = []
    with torch.no_grad():
        h = torch.zeros(1, 16, dtype=torch.float64)
        ix = 0
        for _ in range(8):
            h = model.cell(F.one_hot(torch.tensor([ix]), V).double(), h)
            probs = F.softmax(model.out(h), dim=1)
            mask = probs == probs.max(dim=1, keepdim=True).values
            ix = torch.multinomial(probs * mask, 1).item()
            name.append(CHARS[ix])
    return dict(init=init, losses=losses, name="".join(name), params=list(model.parameters()), grads=grads(model))


def test_gru_cell_loop_no_grad_update(torch):
    both(torch, gru_cell_loop)


# ---- a GRU from raw weights as the d2l chapter writes it: params as a list of leaf tensors, `requires_grad_()`,
# the gates by `torch.sigmoid((X @ W_xz) + (H @ W_hz) + b_z)`, outputs cat'ed, the gradient clipped by hand through
# `param.grad[:] *= theta / norm`, SGD as `param -= lr * param.grad / batch_size` and `param.grad.zero_()` -------
def gru_scratch(torch, init):
    rng = np.random.default_rng(4)
    ids = text_ids()
    nh, B, T = 12, 3, 6

    def normal(*shape):
        return f64(torch, rng.standard_normal(shape) * 0.1)

    def three():
        return normal(V, nh), normal(nh, nh), torch.zeros(nh, dtype=torch.float64)

    W_xz, W_hz, b_z = three()
    W_xr, W_hr, b_r = three()
    W_xh, W_hh, b_h = three()
    W_hq, b_q = normal(nh, V), torch.zeros(V, dtype=torch.float64)
    params = [W_xz, W_hz, b_z, W_xr, W_hr, b_r, W_xh, W_hh, b_h, W_hq, b_q]
    for param in params:
        param.requires_grad_()

    def gru(inputs, H):
        outputs = []
        for X in inputs:
            Z = torch.sigmoid((X @ W_xz) + (H @ W_hz) + b_z)
            R = torch.sigmoid((X @ W_xr) + (H @ W_hr) + b_r)
            H_tilda = torch.tanh((X @ W_xh) + ((R * H) @ W_hh) + b_h)
            H = Z * H + (1 - Z) * H_tilda
            outputs.append(H @ W_hq + b_q)
        return torch.cat(outputs, dim=0), H

    def grad_clipping(theta):
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > theta:
            for param in params:
                param.grad[:] *= theta / norm
        return norm

    starts = rng.integers(0, len(ids) - T - 1, (4, B))
    losses, norms = [], []
    state = torch.zeros((B, nh), dtype=torch.float64)
    for s in starts:
        X = torch.tensor(np.stack([ids[i:i + T] for i in s]))
        Y = torch.tensor(np.stack([ids[i + 1:i + T + 1] for i in s]))
        state.detach_()
        inputs = torch.nn.functional.one_hot(X.T, V).type(torch.float64)
        y_hat, state = gru(inputs, state)
        loss = torch.nn.functional.cross_entropy(y_hat, Y.T.reshape(-1)).mean()
        loss.backward()
        norms.append(grad_clipping(1.0))
        with torch.no_grad():
            for param in params:
                param -= 1.0 * param.grad / 1
                param.grad.zero_()
        losses.append(loss.item())
    ppl = math.exp(losses[-1])
    return dict(init=None, losses=losses, norms=norms, ppl=ppl, params=params, state=state)


def test_gru_from_raw_weights_clip_by_hand(torch):
    both(torch, gru_scratch)


# ---- the text-classification tutorial's nn.EmbeddingBag on flat ids and offsets (offsets by cumsum of lengths),
# init_weights by uniform_ and zero_, CrossEntropyLoss, clip_grad_norm_(0.1), SGD(lr=5) and a StepLR(1, gamma=0.1),
# accuracy by `(predicted.argmax(1) == label).sum().item()`; evaluation in eval() under no_grad ------------------
def embedding_bag_classifier(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(5)
    vocab, classes = 40, 4
    texts = [rng.integers(0, vocab, rng.integers(2, 9)) for _ in range(24)]
    labels = rng.integers(0, classes, 24)

    class TextClassificationModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab, 16, sparse=False)
            self.fc = nn.Linear(16, classes)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    def collate(batch):
        label_list, text_list, offsets = [], [], [0]
        for text, label in batch:
            label_list.append(int(label))
            processed = torch.tensor(text, dtype=torch.int64)
            text_list.append(processed)
            offsets.append(processed.size(0))
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        return torch.tensor(label_list, dtype=torch.int64), torch.cat(text_list), offsets

    model = TextClassificationModel()
    init = start(model, init)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.1)
    data = list(zip(texts, labels))
    accs, losses = [], []
    for _ in range(2):
        model.train()
        total_acc, total_count = 0, 0
        for b in range(0, 24, 8):
            label, text, offsets = collate(data[b:b + 8])
            optimizer.zero_grad()
            predicted = model(text, offsets)
            loss = criterion(predicted, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            total_acc += (predicted.argmax(1) == label).sum().item()
            total_count += label.size(0)
            losses.append(loss.item())
        scheduler.step()
        accs.append(total_acc / total_count)
    model.eval()
    with torch.no_grad():
        label, text, offsets = collate(data)
        val = criterion(model(text, offsets), label).item()
    return dict(init=init, losses=losses, accs=accs, val=val, lr=scheduler.get_last_lr(),
                params=list(model.parameters()), grads=grads(model))


def test_embedding_bag_offsets_classifier(torch):
    both(torch, embedding_bag_classifier)


# ---- a bag-of-words logistic regression a sentence at a time: the count vector by torch.bincount(minlength=V)
# then `.double()`, `.view(1, -1)`, log_softmax + NLLLoss, optim.SGD; the log probabilities of test sentences -----
def bow_bincount(torch, init):
    nn, F = torch.nn, torch.nn.functional
    data = [("me gusta comer en la cafeteria".split(), "SPANISH"), ("give it to me".split(), "ENGLISH"),
            ("no creo que sea una buena idea".split(), "SPANISH"), ("no it is not a good idea to get lost at sea".split(),
                                                                    "ENGLISH")]
    test = [("yo creo que si".split(), "SPANISH"), ("it is lost on me".split(), "ENGLISH")]
    word_to_ix = {}
    for sent, _ in data + test:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    label_to_ix = {"SPANISH": 0, "ENGLISH": 1}
    n = len(word_to_ix)

    class BoWClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(n, 2)

        def forward(self, bow_vec):
            return F.log_softmax(self.linear(bow_vec), dim=1)

    def make_bow_vector(sentence):
        ids = torch.tensor([word_to_ix[w] for w in sentence])
        return torch.bincount(ids, minlength=n).double().view(1, -1)

    model = BoWClassifier()
    init = start(model, init)
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(20):
        for instance, label in data:
            model.zero_grad()
            log_probs = model(make_bow_vector(instance))
            loss = loss_function(log_probs, torch.LongTensor([label_to_ix[label]]))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    with torch.no_grad():
        tests = [model(make_bow_vector(s)) for s, _ in test]
    creo = next(model.parameters())[:, word_to_ix["creo"]]
    return dict(init=init, losses=losses, tests=tests, creo=creo, params=list(model.parameters()),
                grads=grads(model))


def test_bow_bincount_nll(torch):
    theirs, _ = both(torch, bow_bincount)
    assert [int(t.argmax()) for t in theirs["tests"]] == [0, 1]


# ---- variable-length texts: pad_sequence(batch_first=True), pack_padded_sequence(enforce_sorted=False) into an
# nn.LSTM, the last layer's h_n into a Linear, BCEWithLogitsLoss on float labels, Adam; the padded outputs by
# pad_packed_sequence, the accuracy by torch.round(torch.sigmoid(...)) --------------------------------------------
def packed_lstm_classifier(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(6)
    seqs = [rng.integers(1, 30, rng.integers(2, 9)) for _ in range(10)]
    labels = rng.integers(0, 2, 10).astype(np.float64)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(30, 8, padding_idx=0)
            self.lstm = nn.LSTM(8, 10, batch_first=True, num_layers=1)
            self.fc = nn.Linear(10, 1)

        def forward(self, text, lengths):
            packed = nn.utils.rnn.pack_padded_sequence(self.embedding(text), lengths, batch_first=True,
                                                       enforce_sorted=False)
            packed_out, (hidden, cell) = self.lstm(packed)
            out, out_lengths = nn.utils.rnn.pad_packed_sequence(packed_out, batch_first=True)
            return self.fc(hidden[-1]).squeeze(1), out, out_lengths

    model = Classifier()
    init = start(model, init)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    criterion = nn.BCEWithLogitsLoss()
    text = nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True, padding_value=0)
    lengths = torch.tensor([len(s) for s in seqs])
    y = f64(torch, labels)
    losses, accs = [], []
    for _ in range(5):
        opt.zero_grad()
        preds, out, out_lengths = model(text, lengths)
        loss = criterion(preds, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        accs.append((torch.round(torch.sigmoid(preds)) == y).float().mean().item())
    return dict(init=init, losses=losses, accs=accs, out=out, out_lengths=out_lengths, text=text,
                params=list(model.parameters()), grads=grads(model))


def test_packed_lstm_classifier_pad_sequence(torch):
    both(torch, packed_lstm_classifier)


# ---- a small transformer LM on nn.TransformerEncoder (batch_first, norm_first, dropout 0), sin/cos positions in a
# buffer, the decoder's weight tied to the encoder's, nn.Transformer.generate_square_subsequent_mask, AdamW with a
# cosine lr by hand, clip_grad_norm_; greedy generation with top_k=1 through torch.multinomial ------------------
def transformer_lm(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(7)
    ids = text_ids()
    d, T, B = 16, 8, 4

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, max_len=32):
            super().__init__()
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(1, max_len, d_model)
            pe[0, :, 0::2] = torch.sin(position * div_term)
            pe[0, :, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe)

        def forward(self, x):
            return x + self.pe[:, :x.size(1)]

    class TransformerModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(V, d)
            self.pos = PositionalEncoding(d)
            layer = nn.TransformerEncoderLayer(d, 2, dim_feedforward=32, dropout=0.0, batch_first=True,
                                               norm_first=True)
            self.transformer = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.decoder = nn.Linear(d, V)
            self.decoder.weight = self.encoder.weight

        def forward(self, src):
            mask = nn.Transformer.generate_square_subsequent_mask(src.size(1))
            x = self.pos(self.encoder(src) * math.sqrt(d))
            return self.decoder(self.transformer(x, mask=mask, is_causal=True))

    model = TransformerModel()
    init = start(model, init)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
    losses = []
    steps = 5
    for it in range(steps):
        lr = 3e-3 * 0.5 * (1 + math.cos(math.pi * it / steps))
        for g in opt.param_groups:
            g["lr"] = lr
        ix = rng.integers(0, len(ids) - T - 1, B)
        x = torch.stack([torch.tensor(ids[i:i + T]) for i in ix])
        y = torch.stack([torch.tensor(ids[i + 1:i + T + 1]) for i in ix])
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    idx = torch.zeros((1, 1), dtype=torch.long)
    with torch.no_grad():
        for _ in range(6):
            logits = model(idx[:, -T:])[:, -1, :]
            v, _ = torch.topk(logits, 1)
            logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
    return dict(init=init, losses=losses, idx=idx, tied=model.decoder.weight is model.encoder.weight,
                params=list(model.parameters()), grads=grads(model))


def test_transformer_encoder_tied_causal_generate(torch):
    theirs, _ = both(torch, transformer_lm)
    assert theirs["tied"]


# ---- the nanoGPT lecture's multi-head attention written out: Head with a tril buffer, `wei = q @ k.transpose(-2,
# -1) * k.shape[-1] ** -0.5`, masked_fill(tril[:T, :T] == 0, float('-inf')), heads cat'ed, a proj, LayerNorm and
# a feed-forward with residuals; the loss by F.cross_entropy(logits.view(B * T, C), targets.view(B * T)) ---------
def handwritten_attention(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(8)
    ids = text_ids()
    n_embd, block_size, n_head, B = 16, 8, 4, 4
    head_size = n_embd // n_head

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = F.softmax(wei, dim=-1)
            return wei @ self.value(x)

    class MultiHeadAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head() for _ in range(n_head)])
            self.proj = nn.Linear(n_embd, n_embd)

        def forward(self, x):
            return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa = MultiHeadAttention()
            self.ffwd = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd))
            self.ln1, self.ln2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class LanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(V, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, V)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            x = self.token_embedding_table(idx) + self.position_embedding_table(torch.arange(T))
            logits = self.lm_head(self.ln_f(self.blocks(x)))
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            return logits, F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    model = LanguageModel()
    init = start(model, init)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = torch.tensor(ids, dtype=torch.long)
    losses = []
    for _ in range(4):
        ix = torch.tensor(rng.integers(0, len(data) - block_size, (B,)))
        xb = torch.stack([data[i:i + block_size] for i in ix])
        yb = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    out = {}
    model.eval()
    with torch.no_grad():
        for split, start_at in (("train", 0), ("val", 40)):
            X = torch.stack([data[start_at + i:start_at + i + block_size] for i in range(3)])
            Y = torch.stack([data[start_at + i + 1:start_at + i + block_size + 1] for i in range(3)])
            out[split] = model(X, Y)[1].item()
    model.train()
    return dict(init=init, losses=losses, out=out, params=list(model.parameters()), grads=grads(model))


def test_handwritten_multihead_attention(torch):
    both(torch, handwritten_attention)


# ---- PyTorch's word_language_model: batchify by narrow/view/t().contiguous(), get_batch by bptt slices and
# target.view(-1), RNNModel (Embedding, 2-layer nn.LSTM, Dropout, tied decoder, init_weights by uniform_/zeros_),
# repackage_hidden on the (h, c) tuple, NLLLoss on log_softmax, clip_grad_norm_(0.25), `p.data.add_(p.grad,
# alpha=-lr)`, evaluate in eval() under no_grad with `len(data) * criterion(...).item()`, lr /= 4 when val stalls -
def word_language_model(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(9)
    ntokens, bptt = 25, 5
    train_ids = torch.tensor(rng.integers(0, ntokens, 80))
    val_ids = torch.tensor(rng.integers(0, ntokens, 30))

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)

    def repackage_hidden(h):
        if isinstance(h, torch.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    class RNNModel(nn.Module):
        def __init__(self, ninp=12, nhid=12, nlayers=2, dropout=0.0):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntokens, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntokens)
            self.decoder.weight = self.encoder.weight
            self.nhid, self.nlayers = nhid, nlayers
            self.init_weights()

        def init_weights(self):
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            decoded = self.decoder(self.drop(output)).view(-1, ntokens)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))

    model = RNNModel()
    init = start(model, init)
    criterion = nn.NLLLoss()
    train_data, val_data = batchify(train_ids, 4), batchify(val_ids, 2)

    def evaluate(data_source):
        model.eval()
        total_loss = 0.0
        hidden = model.init_hidden(2)
        with torch.no_grad():
            for i in range(0, data_source.size(0) - 1, bptt):
                data, targets = get_batch(data_source, i)
                output, hidden = model(data, hidden)
                hidden = repackage_hidden(hidden)
                total_loss += len(data) * criterion(output, targets).item()
        return total_loss / (len(data_source) - 1)

    lr, best_val_loss = 20.0, None
    lrs, vals, losses = [], [], []
    for _ in range(2):
        model.train()
        hidden = model.init_hidden(4)
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        val_loss = evaluate(val_data)
        vals.append(val_loss)
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            lr /= 4.0
        lrs.append(lr)
    ppl = math.exp(vals[-1])
    return dict(init=init, losses=losses, vals=vals, lrs=lrs, ppl=ppl, params=list(model.parameters()),
                grads=grads(model))


def test_word_language_model_lstm(torch):
    theirs, _ = both(torch, word_language_model)
    assert len(theirs["params"]) == 10  # the tied weight counted once


# ---- an LSTM word model on nn.LSTMCell: (h, c) carried in a tuple across windows, `h, c = h.detach(), c.detach()`,
# the outputs stacked, a Linear over the stack, CrossEntropyLoss, RMSprop; perplexity by math.exp ---------------
def lstm_cell_words(torch, init):
    nn = torch.nn
    rng = np.random.default_rng(10)
    vocab, T, B = 20, 5, 3
    ids = rng.integers(0, vocab, (B, 4 * T + 1))

    class WordLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, 10)
            self.cell = nn.LSTMCell(10, 12)
            self.out = nn.Linear(12, vocab)

        def forward(self, x, state):
            h, c = state
            outs = []
            for t in range(x.size(1)):
                h, c = self.cell(self.emb(x[:, t]), (h, c))
                outs.append(h)
            return self.out(torch.stack(outs, dim=1)), (h, c)

    model = WordLM()
    init = start(model, init)
    opt = torch.optim.RMSprop(model.parameters(), lr=0.01)
    crit = nn.CrossEntropyLoss()
    h = c = torch.zeros(B, 12, dtype=torch.float64)
    losses = []
    for i in range(0, 4 * T, T):
        h, c = h.detach(), c.detach()
        x = torch.tensor(ids[:, i:i + T])
        y = torch.tensor(ids[:, i + 1:i + T + 1])
        logits, (h, c) = model(x, (h, c))
        loss = crit(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, losses=losses, ppl=[math.exp(x) for x in losses], h=h, c=c,
                params=list(model.parameters()), grads=grads(model))


def test_lstm_cell_word_model(torch):
    both(torch, lstm_cell_words)


# ---- PyTorch's examples/regression: make_features by `torch.cat([x ** i for i in range(1, 5)], 1)`, a fixed
# target polynomial, fc = nn.Linear(4, 1), F.smooth_l1_loss, fc.zero_grad(), `param.data.add_(-0.1 * param.grad)`,
# stopping when the loss is under a threshold; the description built from `.view(-1).tolist()` -----------------
def poly_regression(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(11)
    POLY_DEGREE = 4
    W_target = f64(torch, rng.standard_normal((POLY_DEGREE, 1)) * 5)
    b_target = f64(torch, rng.standard_normal(1) * 5)

    def make_features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE + 1)], 1)

    def f(x):
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        result = "y = "
        for i, w in enumerate(W):
            result += "{:+.2f} x^{} ".format(w, i + 1)
        result += "{:+.2f}".format(b[0])
        return result

    def get_batch(batch_size=32):
        random = f64(torch, rng.standard_normal(batch_size))
        x = make_features(random)
        return x, f(x)

    fc = nn.Linear(W_target.size(0), 1)
    init = start(fc, init)
    losses = []
    for _ in range(1, 40):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        losses.append(loss)
        if loss < 1e-3:
            break
    desc = poly_desc(fc.weight.view(-1).tolist(), fc.bias.tolist())
    return dict(init=init, losses=losses, desc=desc, batches=len(losses), params=list(fc.parameters()),
                grads=grads(fc))


def test_poly_regression_example(torch):
    theirs, _ = both(torch, poly_regression)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- the "learning PyTorch with examples" cubic in nn: `xx = x.unsqueeze(-1).pow(p)` with p a tensor, nn.Sequential
# (Linear(3, 1), Flatten(0, 1)), MSELoss(reduction='sum'), model.zero_grad() and `param -= lr * param.grad` under
# no_grad, then the same fitted on by optim.RMSprop; the result read through model[0] --------------------------
def poly_nn_tutorial(torch, init):
    nn = torch.nn
    x = torch.linspace(-math.pi, math.pi, 200, dtype=torch.float64)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = nn.Sequential(nn.Linear(3, 1), nn.Flatten(0, 1))
    init = start(model, init)
    loss_fn = nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    losses = []
    for t in range(30):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 10 == 9:
            losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    for _ in range(10):
        loss = loss_fn(model(xx), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    linear_layer = model[0]
    coeffs = [linear_layer.bias.item()] + [linear_layer.weight[:, i].item() for i in range(3)]
    return dict(init=init, losses=losses, coeffs=coeffs, xx_dtype=str(xx.dtype).split(".")[-1], params=list(model.parameters()),
                grads=grads(model))


def test_poly_nn_tutorial_flatten(torch):
    theirs, ours = both(torch, poly_nn_tutorial)
    assert theirs["losses"][-1] < theirs["losses"][0]


# ---- a regression on minibatches: training batches in a numpy permutation's order, `for i in range(0, n, bs)`,
# the lr decayed by hand each epoch, a TensorDataset-free loop; the full-data loss then evaluated on torch.randperm
# minibatches (a sum of batch sums: the order cannot change it), the error under model.eval() ------------------
def randperm_regression(torch, init):
    nn, F = torch.nn, torch.nn.functional
    rng = np.random.default_rng(12)
    n, bs = 60, 16
    X = f64(torch, rng.uniform(-1, 1, (n, 2)))
    y = (X[:, :1] * 2 - X[:, 1:] ** 2 + 0.05 * f64(torch, rng.standard_normal((n, 1))))
    model = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5, nesterov=True)
    losses = []
    for _ in range(3):
        perm = torch.tensor(rng.permutation(n))
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            loss = F.mse_loss(model(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        for g in opt.param_groups:
            g["lr"] = g["lr"] * 0.7
    model.eval()
    total = torch.zeros((), dtype=torch.float64)
    with torch.no_grad():
        perm = torch.randperm(n)
        for i in range(0, n, bs):
            idx = perm[i:i + bs]
            total += F.mse_loss(model(X[idx]), y[idx], reduction="sum")
    return dict(init=init, losses=losses, mse=total / n, covered=sorted(perm.tolist()) == list(range(n)),
                params=list(model.parameters()), grads=grads(model))


def test_randperm_minibatch_regression(torch):
    theirs, _ = both(torch, randperm_regression)
    assert theirs["covered"]
