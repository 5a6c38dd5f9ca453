"""Whether two source trees train a small GPT to the same bits: run a few AdamW steps in each and
compare the loss, every gradient and every parameter bytewise.

    python bench/same_bits.py /path/to/before .          # exit status 0: identical
    python bench/same_bits.py /path/to/before . --dropout 0.2

Each tree runs in its own process (twice, so that numba's disk cache is warm: a team kernel compiled
fresh in a process may round differently from the same kernel loaded from the cache).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

WORKER = r"""
import sys
import numpy as np
import minigrad, nn
from gpt.model import GPT, GPTConfig
minigrad.manual_seed(0)
cfg = GPTConfig(block_size=64, vocab_size=65, n_layer=2, n_head=4, n_embd=128, dropout=float(sys.argv[2]), bias=True)
model = GPT(cfg)
opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
rng = np.random.default_rng(0)
out = {}
for step in range(int(sys.argv[3])):
    x = rng.integers(0, 65, (12, 64))
    y = rng.integers(0, 65, (12, 64))
    _, loss = model(minigrad.tensor(x), minigrad.tensor(y))
    opt.zero_grad()
    loss.backward()
    out[f"loss{step}"] = loss.array.copy()
    for n, p in model.named_parameters():
        out[f"grad{step}.{n}"] = p.grad.array.copy()
    opt.step()
for n, p in model.named_parameters():
    out[f"param.{n}"] = p.array.copy()
np.savez(sys.argv[1], **out)
"""


def run(tree, path, dropout, steps):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    subprocess.run([sys.executable, "-c", WORKER, path, str(dropout), str(steps)], cwd=tree, env=env, check=True)
    return dict(np.load(path))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs=2)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for i, tree in enumerate(args.trees):
            run(tree, os.path.join(tmp, f"warm{i}.npz"), args.dropout, 1)  # fills numba's disk cache
            results.append(run(tree, os.path.join(tmp, f"{i}.npz"), args.dropout, args.steps))
    a, b = results
    if a.keys() != b.keys():
        print("different arrays:", sorted(set(a) ^ set(b)))
        return 1
    bad = [k for k in a if a[k].dtype != b[k].dtype or a[k].tobytes() != b[k].tobytes()]
    for k in bad:
        print(f"{k}: differs, max |a - b| = {np.max(np.abs(a[k].astype(float) - b[k].astype(float))):.3g}")
    print(f"{len(a) - len(bad)} of {len(a)} arrays identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
