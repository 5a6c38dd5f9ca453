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
