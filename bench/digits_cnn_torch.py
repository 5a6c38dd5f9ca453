"""examples/digits_cnn.py's CNN trained in minigrad and in PyTorch side by side: accuracy, wall and CPU time.

    PYTHONPATH=. python bench/digits_cnn_torch.py [--epochs 12] [--threads 2]

Both start from the same weights (minigrad's init copied into PyTorch), see the same batches in the
same order and use the same optimizer (AdamW) and cosine schedule; the CPU time counts every thread
of the process. Needs scikit-learn and torch (a benchmark-time reference only).
"""
import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np

import minigrad

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "digits_cnn.py"


def load_example():
    spec = importlib.util.spec_from_file_location("digits_cnn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def torch_model(torch, ours):
    """The same architecture in PyTorch, holding a copy of `ours`'s weights (same parameter names)."""
    tnn = torch.nn
    c1, c2 = ours.features[0].out_channels, ours.features[4].out_channels

    class DigitsCNN(tnn.Module):
        def __init__(self):
            super().__init__()
            self.features = tnn.Sequential(
                tnn.Conv2d(1, c1, 3, padding=1), tnn.BatchNorm2d(c1), tnn.ReLU(), tnn.MaxPool2d(2),
                tnn.Conv2d(c1, c2, 3, padding=1), tnn.BatchNorm2d(c2), tnn.ReLU(), tnn.MaxPool2d(2),
            )
            self.flatten = tnn.Flatten()
            self.classifier = tnn.Linear(c2 * 2 * 2, 10)

        def forward(self, x):
            return self.classifier(self.flatten(self.features(x)))

    m = DigitsCNN()
    m.load_state_dict({k: torch.tensor(np.array(v.array)) for k, v in ours.state_dict().items()})
    return m


def train_torch(torch, ex, model, epochs, batch_size, lr, weight_decay, seed):
    """The example's train() loop, in PyTorch."""
    F = torch.nn.functional
    x_train, y_train, x_test, y_test = ex.load_digits_split(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * (-(-len(y_train) // batch_size))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
    rng = np.random.default_rng(seed)
    for _ in range(epochs):
        order = rng.permutation(len(y_train))
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            loss = F.cross_entropy(model(torch.from_numpy(x_train[idx])), torch.from_numpy(y_train[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    model.eval()
    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    return float((pred == y_test).mean())


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=12)
    # 1 by default: minigrad runs this model's small products on one thread too (and on a busy machine
    # two of PyTorch's threads spin, many times slower)
    p.add_argument("--threads", type=int, default=1, help="PyTorch's intra-op threads")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    import torch

    torch.set_num_threads(a.threads)
    ex = load_example()
    batch_size, lr, wd = 32, 3e-3, 1e-4
    ex.load_digits_split(a.seed)  # scikit-learn's import and the data's first load, outside both timings
    (_, acc, _), wall, cpu = timed(lambda: ex.train(a.epochs, batch_size, lr, wd, a.seed, log=None))
    minigrad.manual_seed(a.seed)
    tm = torch_model(torch, ex.DigitsCNN())  # the same initial weights minigrad's run started from
    tacc, twall, tcpu = timed(lambda: train_torch(torch, ex, tm, a.epochs, batch_size, lr, wd, a.seed))
    print(f"{'':10s} {'test acc':>9s} {'wall s':>8s} {'CPU s':>8s}")
    print(f"{'minigrad':10s} {acc:9.4f} {wall:8.1f} {cpu:8.1f}")
    print(f"{'PyTorch':10s} {tacc:9.4f} {twall:8.1f} {tcpu:8.1f}")
    print(f"minigrad / PyTorch: {wall / twall:.2f}x wall, {cpu / tcpu:.2f}x CPU ({a.epochs} epochs)")


if __name__ == "__main__":
    main()
