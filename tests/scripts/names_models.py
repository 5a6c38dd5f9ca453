"""Character-level name models behind one training loop: MLP, RNN, GRU, bag-of-words and a small
transformer, fed by a DataLoader and logged to TensorBoard (torch form). argv: model, steps, logdir."""
import sys
import time

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter

kind = sys.argv[1] if len(sys.argv) > 1 else "rnn"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
logdir = sys.argv[3] if len(sys.argv) > 3 else None
torch.manual_seed(1337)

syllables = ["ka", "ri", "mo", "la", "en", "ta", "so", "vi", "an", "el", "jo", "ne", "ru", "sa"]
words = []
for i in range(300):
    n = 1 + i % 3
    words.append("".join(syllables[(i * 7 + j * 5) % len(syllables)] for j in range(n)))


class CharDataset(Dataset):
    def __init__(self, words):
        self.words = words
        self.chars = sorted(set("".join(words)))
        self.stoi = {ch: i + 1 for i, ch in enumerate(self.chars)}
        self.max_len = max(len(w) for w in words)

    def __len__(self):
        return len(self.words)

    def vocab_size(self):
        return len(self.chars) + 1

    def __getitem__(self, i):
        ix = torch.tensor([self.stoi[c] for c in self.words[i]], dtype=torch.long)
        x = torch.zeros(self.max_len + 1, dtype=torch.long)
        y = torch.zeros(self.max_len + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1  # masked out of the loss
        return x, y


class RNN(nn.Module):
    def __init__(self, vocab, block, cell):
        super().__init__()
        self.wte = nn.Embedding(vocab, 32)
        self.rnn = (nn.GRU if cell == "gru" else nn.RNN)(32, 64, batch_first=True)
        self.lm_head = nn.Linear(64, vocab)

    def forward(self, idx):
        out, _ = self.rnn(self.wte(idx))
        return self.lm_head(out)


class BoW(nn.Module):
    def __init__(self, vocab, block):
        super().__init__()
        self.wte = nn.Embedding(vocab, 32)
        self.wpe = nn.Embedding(block, 32)
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, block, block))
        self.mlp = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 32))
        self.lm_head = nn.Linear(32, vocab)

    def forward(self, idx):
        B, T = idx.size()
        x = self.wte(idx) + self.wpe(torch.arange(0, T, dtype=torch.long).unsqueeze(0))
        att = torch.zeros((B, T, T)).masked_fill(self.bias[:, :T, :T] == 0, float("-inf"))
        x = x + F.softmax(att, dim=-1) @ x
        x = x + self.mlp(x)
        return self.lm_head(x)


class Transformer(nn.Module):
    def __init__(self, vocab, block):
        super().__init__()
        self.wte = nn.Embedding(vocab, 32)
        self.wpe = nn.Embedding(block, 32)
        layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.lm_head = nn.Linear(32, vocab)
        self.block = block

    def forward(self, idx):
        T = idx.size(1)
        x = self.wte(idx) + self.wpe(torch.arange(T).unsqueeze(0))
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        return self.lm_head(self.encoder(x, mask=mask, is_causal=True))


class MLP(nn.Module):
    def __init__(self, vocab, block):
        super().__init__()
        self.block, self.vocab = block, vocab
        self.wte = nn.Embedding(vocab + 1, 16)  # the extra token pads the start
        self.mlp = nn.Sequential(nn.Linear(block * 16, 64), nn.Tanh(), nn.Linear(64, vocab))

    def forward(self, idx):
        embs = []
        for _ in range(self.block):
            embs.append(self.wte(idx))
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab
        return self.mlp(torch.cat(embs, -1))


data = CharDataset(words)
block = data.max_len + 1
vocab = data.vocab_size()
model = {"rnn": lambda: RNN(vocab, block, "rnn"), "gru": lambda: RNN(vocab, block, "gru"),
         "bow": lambda: BoW(vocab, block), "transformer": lambda: Transformer(vocab, block),
         "mlp": lambda: MLP(vocab, block)}[kind]()
print(f"model #params: {sum(p.numel() for p in model.parameters())}")
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01, betas=(0.9, 0.99), eps=1e-8)
loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=True,
                    generator=torch.Generator().manual_seed(42))
writer = SummaryWriter(log_dir=logdir) if logdir else None

step, t0 = 0, time.time()
while step < steps:
    for X, Y in loader:
        logits = model(X)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if writer is not None:
            writer.add_scalar("Loss/train", loss.item(), step)
        if step % 20 == 0:
            print(f"step {step} | loss {loss.item():.4f} | {(time.time() - t0) * 1000:.1f}ms")
        step += 1
        if step >= steps:
            break

model.eval()
with torch.no_grad():
    X, Y = next(iter(DataLoader(data, batch_size=len(data))))
    logits = model(X)
    final = F.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1), ignore_index=-1)
if writer is not None:
    writer.add_scalar("Loss/final", final.item(), step)
    writer.flush()
    writer.close()
print(f"final {final.item():.6f}")
