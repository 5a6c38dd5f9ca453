"""The makemore lecture's manual backpropagation (torch form): an embedding + BatchNorm + tanh MLP's
gradients written out by hand (`dlogprobs[range(n), Yb] = -1.0/n`, `dC[ix] += demb[k, j]`, ...) while
autograd also records, then checked against autograd's; a forward hook that watches the activations;
a gradient penalty through the MLP's layers (create_graph=True). Prints `final <loss>`."""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
vocab_size, block_size, n_embd, n_hidden, n = 27, 3, 10, 64, 32
Xb = torch.randint(0, vocab_size, (n, block_size), generator=g)
Yb = torch.randint(0, vocab_size, (n,), generator=g)
C = torch.randn((vocab_size, n_embd), generator=g)
W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / ((n_embd * block_size) ** 0.5)
b1 = torch.randn(n_hidden, generator=g) * 0.1
W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
b2 = torch.randn(vocab_size, generator=g) * 0.1
bngain = torch.randn((1, n_hidden), generator=g) * 0.1 + 1.0
bnbias = torch.randn((1, n_hidden), generator=g) * 0.1
parameters = [C, W1, b1, W2, b2, bngain, bnbias]
for p in parameters:
    p.requires_grad = True


def cmp(name, dt, t):
    diff = (dt - t.grad).abs().max().item()
    assert torch.allclose(dt, t.grad, atol=1e-6), f"{name}: max diff {diff}"
    return diff


# ---- forward in small steps, each intermediate kept ----
emb = C[Xb]
embcat = emb.view(emb.shape[0], -1)
hprebn = embcat @ W1 + b1
bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
bndiff = hprebn - bnmeani
bndiff2 = bndiff ** 2
bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)
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
for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes, logits, h, hpreact, bnraw,
          bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani, embcat, emb]:
    t.retain_grad()
loss.backward()

# ---- the same gradients by hand (recorded too: the lecture runs this with autograd on) ----
dlogprobs = torch.zeros_like(logprobs)
dlogprobs[range(n), Yb] = -1.0 / n
dprobs = (1.0 / probs) * dlogprobs
dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
dcounts = counts_sum_inv * dprobs
dcounts_sum = (-counts_sum ** -2) * dcounts_sum_inv
dcounts += torch.ones_like(counts) * dcounts_sum
dnorm_logits = counts * dcounts
dlogits = dnorm_logits.clone()
dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
dh = dlogits @ W2.T
dW2 = h.T @ dlogits
db2 = dlogits.sum(0)
dhpreact = (1.0 - h ** 2) * dh
dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
dbnraw = bngain * dhpreact
dbnbias = dhpreact.sum(0, keepdim=True)
dbndiff = bnvar_inv * dbnraw
dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
dbndiff += (2 * bndiff) * dbndiff2
dhprebn = dbndiff.clone()
dbnmeani = (-dbndiff).sum(0)
dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
dembcat = dhprebn @ W1.T
dW1 = embcat.T @ dhprebn
db1 = dhprebn.sum(0)
demb = dembcat.view(emb.shape)
dC = torch.zeros_like(C)
for k in range(Xb.shape[0]):
    for j in range(Xb.shape[1]):
        ix = Xb[k, j]
        dC[ix] += demb[k, j]  # an in-place add into a row of dC, recorded
worst = max(cmp(name, d, t) for name, d, t in [
    ("logprobs", dlogprobs, logprobs), ("probs", dprobs, probs), ("counts", dcounts, counts),
    ("logits", dlogits, logits), ("h", dh, h), ("W2", dW2, W2), ("b2", db2, b2), ("hpreact", dhpreact, hpreact),
    ("bngain", dbngain, bngain), ("bnbias", dbnbias, bnbias), ("bnvar", dbnvar, bnvar), ("hprebn", dhprebn, hprebn),
    ("W1", dW1, W1), ("b1", db1, b1), ("emb", demb, emb), ("C", dC, C)])
print(f"manual gradients: worst difference from autograd {worst:.2e}")

# ---- the same net as modules, trained with a gradient penalty; a hook watches the tanh layer ----
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(vocab_size, n_embd), nn.Flatten(), nn.Linear(n_embd * block_size, n_hidden),
                      nn.Tanh(), nn.Linear(n_hidden, n_hidden), nn.ReLU(), nn.Linear(n_hidden, vocab_size))
saturated = []
handle = model[3].register_forward_hook(lambda m, args, out: saturated.append((out.abs() > 0.97).float().mean().item()))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for _ in range(steps):
    emb = model[1](model[0](Xb)).detach().requires_grad_(True)
    logits = model[6](model[5](model[4](model[3](model[2](emb)))))
    loss = F.cross_entropy(logits, Yb)
    (gemb,) = torch.autograd.grad(loss, emb, create_graph=True)
    penalty = gemb.pow(2).sum()
    opt.zero_grad()
    (loss + 0.1 * penalty).backward()
    opt.step()
handle.remove()
assert len(saturated) == steps and all(0.0 <= s <= 1.0 for s in saturated)
print(f"final {loss.item():.6f}")
