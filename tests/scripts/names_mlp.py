"""A character-level name generator: an embedding table and an MLP on raw tensors, trained with
hand-written SGD through .data (torch form, as in the lectures)."""
import sys

import torch
import torch.nn.functional as F

syllables = ["ka", "ri", "mo", "la", "en", "ta", "so", "vi", "an", "el", "jo", "ne", "ru", "sa", "di"]
g = torch.Generator().manual_seed(2147483647)
words = []
for _ in range(400):
    n = int(torch.randint(1, 4, (1,), generator=g).item())
    idx = torch.randint(0, len(syllables), (n,), generator=g).tolist()
    words.append("".join(syllables[i] for i in idx))

chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab = len(itos)
block = 3

X, Y = [], []
for w in words:
    context = [0] * block
    for ch in w + ".":
        X.append(context)
        Y.append(stoi[ch])
        context = context[1:] + [stoi[ch]]
X, Y = torch.tensor(X), torch.tensor(Y)

C = torch.randn((vocab, 10), generator=g)
W1 = torch.randn((block * 10, 64), generator=g) * 0.2
b1 = torch.randn(64, generator=g) * 0.01
W2 = torch.randn((64, vocab), generator=g) * 0.01
b2 = torch.zeros(vocab)
parameters = [C, W1, b1, W2, b2]
for p in parameters:
    p.requires_grad = True
print("parameters", sum(p.nelement() for p in parameters))

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 400
for i in range(steps):
    ix = torch.randint(0, X.shape[0], (32,), generator=g)
    emb = C[X[ix]]
    h = torch.tanh(emb.view(-1, block * 10) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Y[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < steps // 2 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    if i % 100 == 0:
        print(f"{i:5d}/{steps}: {loss.item():.4f}")

with torch.no_grad():
    emb = C[X]
    h = torch.tanh(emb.view(-1, block * 10) @ W1 + b1)
    full = F.cross_entropy(h @ W2 + b2, Y)
print(f"final {full.item():.6f}")

for _ in range(5):
    out, context = [], [0] * block
    while True:
        with torch.no_grad():
            h = torch.tanh(C[torch.tensor([context])].view(1, -1) @ W1 + b1)
            probs = F.softmax(h @ W2 + b2, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        if ix == 0 or len(out) > 20:
            break
        out.append(itos[ix])
    print("".join(out))
