"""A small CNN on scikit-learn's 8x8 handwritten digits, trained with minigrad on the CPU.

    PYTHONPATH=. python examples/digits_cnn.py            # ~98% test accuracy in well under a minute
    PYTHONPATH=. python examples/digits_cnn.py --epochs 3 # shorter

The data (1,797 images, bundled with scikit-learn: no download) is split 80/20 with a fixed seed;
pixels are scaled to [0, 1]. The model is Conv-BN-ReLU-MaxPool twice and a Linear classifier,
written exactly as one would in PyTorch (bench/digits_cnn_torch.py trains the same model there).
Needs scikit-learn: `pip install -e '.[examples]'`.
"""
import argparse
import sys
import time

import numpy as np

import minigrad
import nn
import nn.functional as F


def load_digits_split(seed=0, test_fraction=0.2):
    """(x_train, y_train, x_test, y_test) as numpy arrays: images (N, 1, 8, 8) float32 in [0, 1], labels int64."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("digits_cnn: this example needs scikit-learn (pip install scikit-learn, or the 'examples' extra)")
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


class DigitsCNN(nn.Module):
    """(N, 1, 8, 8) -> (N, 10) logits: two conv blocks (8x8 -> 4x4 -> 2x2) and a linear layer."""

    def __init__(self, c1=16, c2=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, 3, padding=1), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1), nn.BatchNorm2d(c2), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.flatten = nn.Flatten()
        self.classifier = nn.Linear(c2 * 2 * 2, 10)

    def forward(self, x):
        return self.classifier(self.flatten(self.features(x)))


def accuracy(model, x, y, batch_size=512):
    model.eval()
    correct = 0
    with minigrad.no_grad():
        for i in range(0, len(y), batch_size):
            logits = model(minigrad.tensor(x[i:i + batch_size]))
            correct += int((logits.argmax(dim=1).numpy() == y[i:i + batch_size]).sum())
    model.train()
    return correct / len(y)


def train(epochs=12, batch_size=32, lr=3e-3, weight_decay=1e-4, seed=0, log=print):
    """Train a DigitsCNN; returns (model, test accuracy, per-epoch mean training losses)."""
    x_train, y_train, x_test, y_test = load_digits_split(seed)
    minigrad.manual_seed(seed)
    model = DigitsCNN()
    opt = nn.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * (-(-len(y_train) // batch_size))
    sched = nn.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
    rng = np.random.default_rng(seed)
    losses = []
    for epoch in range(epochs):
        order = rng.permutation(len(y_train))
        total, count = 0.0, 0
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            logits = model(minigrad.tensor(x_train[idx]))
            loss = F.cross_entropy(logits, minigrad.tensor(y_train[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total, count = total + loss.item() * len(idx), count + len(idx)
        losses.append(total / count)
        if log:
            log(f"epoch {epoch + 1:2d}  train loss {losses[-1]:.4f}  test accuracy {accuracy(model, x_test, y_test):.4f}")
    return model, accuracy(model, x_test, y_test), losses


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    if a.epochs < 0 or a.batch_size <= 0 or a.lr <= 0:
        p.error("--epochs must be >= 0, --batch-size and --lr > 0")
    wall, cpu = time.perf_counter(), time.process_time()
    _, acc, _ = train(a.epochs, a.batch_size, a.lr, seed=a.seed)
    print(f"test accuracy {acc:.4f}  ({time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU)")


if __name__ == "__main__":
    main()
