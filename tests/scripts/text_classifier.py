"""A padded-batch text classifier the way PyTorch tutorials write one: sentences of different lengths
padded and packed for an LSTM (pack_padded_sequence, enforce_sorted=False), an EmbeddingBag baseline
beside it, a weighted average of the weights (optim.swa_utils), a checkpoint dict saved to memory and
loaded back to resume, and the blitz's spellings on the way (out=, keyword sizes, new_zeros).

    python text_classifier.py EPOCHS        # prints each epoch's loss, then `final <loss>`
"""
import io
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.optim.swa_utils import AveragedModel

torch.manual_seed(0)
epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
vocab, classes, dim = 40, 3, 16

# sentences: a class's words come mostly from its third of the vocabulary
g = torch.Generator().manual_seed(1)
data = []
for i in range(96):
    label = i % classes
    n = int(torch.randint(3, 12, (1,), generator=g))
    words = torch.randint(0, vocab // classes, (n,), generator=g) + label * (vocab // classes) + 1  # 0: padding
    data.append((words, label))


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(vocab + 1, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, dim, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * dim, classes)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(self.emb(padded), lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(torch.cat([h[-2], h[-1]], dim=1))  # both directions' last states


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab + 1, dim, mode="mean", padding_idx=0)
        self.head = nn.Linear(dim, classes)

    def forward(self, flat, offsets):
        return self.head(self.bag(flat, offsets))


def batches(size=16):
    for start in range(0, len(data), size):
        part = data[start:start + size]
        words = [w for w, _ in part]
        lengths = torch.tensor([len(w) for w in words])
        offsets = torch.cumsum(lengths, dim=0) - lengths
        yield (pad_sequence(words, batch_first=True), lengths, torch.cat(words), offsets,
               torch.tensor([y for _, y in part]))


lstm_model, bag_model = LSTMClassifier(), BagClassifier()
params = list(lstm_model.parameters()) + list(bag_model.parameters())
opt = torch.optim.Adam(params, lr=0.02)
averaged = AveragedModel(lstm_model)


def run_epoch(train=True):
    total = torch.zeros(())
    for padded, lengths, flat, offsets, y in batches():
        loss = F.cross_entropy(lstm_model(padded, lengths), y) + F.cross_entropy(bag_model(flat, offsets), y)
        if train:
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.add(total, loss.detach(), out=total)  # the blitz's out=
    return total.item() / 6


for epoch in range(epochs):
    print(f"epoch {epoch} loss {run_epoch():.4f}")
    averaged.update_parameters(lstm_model)

# a checkpoint dict in memory, loaded into fresh models and an optimizer, then one more epoch from there
buf = io.BytesIO()
torch.save({"lstm": lstm_model.state_dict(), "bag": bag_model.state_dict(), "opt": opt.state_dict()}, buf)
buf.seek(0)
state = torch.load(buf)
lstm_model, bag_model = LSTMClassifier(), BagClassifier()
lstm_model.load_state_dict(state["lstm"])
bag_model.load_state_dict(state["bag"])
opt = torch.optim.Adam(list(lstm_model.parameters()) + list(bag_model.parameters()), lr=0.02)
opt.load_state_dict(state["opt"])
print(f"resumed loss {run_epoch():.4f}")

with torch.no_grad():
    probe = next(batches())
    scores = averaged(probe[0], probe[1])
    hits = scores.argmax(dim=1).eq(probe[4]).sum().item()
    assert scores.new_zeros(size=(2,)).shape == (2,) and scores.view(size=(-1,)).numel() == 16 * classes
print(f"averaged model: {hits}/16 right")
assert hits >= 12, "the averaged LSTM did not learn the classes"
print(f"final {run_epoch(train=False):.6f}")
