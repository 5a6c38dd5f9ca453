"""A sweep of common ops, minigrad against PyTorch: the forward call's cost of each, to find outliers.

    python bench/op_sweep.py [--calls 3000] [--repeats 5] [--top 30]

Each op runs on small float32 operands ((8, 32) mostly; `g_` ops on one that requires grad), one
thread, each framework in its own process; the figure is the best of `--repeats` runs of `--calls`
calls, in microseconds a call. Printed: both figures and their ratio, the largest ratios first. A
per-op table of forward + backward for the issue's common ops is bench/small_ops_bench.py --ops.
"""
import argparse
import json
import os
import subprocess
import sys
import timeit

import numpy as np


def cases(m):
    F = m.nn.functional
    rng = np.random.default_rng(0)
    A = m.tensor(rng.standard_normal((8, 32)).astype(np.float32))
    B = m.tensor(rng.standard_normal((8, 32)).astype(np.float32))
    G = m.tensor(rng.standard_normal((8, 32)).astype(np.float32), requires_grad=True)
    row = m.tensor(rng.standard_normal((1, 128)).astype(np.float32))
    ids = m.tensor(rng.integers(0, 32, (8,)))
    v = m.tensor(rng.standard_normal((32,)).astype(np.float32))
    mask = m.tensor(rng.random((8, 32)) > 0.5)
    return {
        "topk(1) of a row": lambda: row.topk(1), "topk(3)": lambda: A.topk(3), "sort": lambda: A.sort(dim=1),
        "argsort": lambda: A.argsort(dim=1), "max(dim)": lambda: A.max(dim=1), "argmax(dim)": lambda: A.argmax(dim=1),
        "softmax": lambda: F.softmax(A, dim=1), "log_softmax": lambda: F.log_softmax(A, dim=1), "cumsum": lambda: A.cumsum(1),
        "mean": lambda: A.mean(), "std": lambda: A.std(), "norm": lambda: A.norm(), "sum(dim)": lambda: A.sum(1),
        "clamp": lambda: A.clamp(-1, 1), "where": lambda: m.where(mask, A, B), "masked_fill": lambda: A.masked_fill(mask, 0.0),
        "gather": lambda: A.gather(1, ids.view(-1, 1)), "index_select": lambda: A.index_select(1, ids),
        "A[:, ids]": lambda: A[:, ids], "A[mask]": lambda: A[mask], "stack": lambda: m.stack([A, B]),
        "cat": lambda: m.cat([A, B], 1), "chunk": lambda: A.chunk(4, 1), "split": lambda: A.split(8, 1), "t": lambda: A.t(),
        "permute": lambda: A.permute(1, 0), "reshape": lambda: A.reshape(4, 64), "flatten": lambda: A.flatten(),
        "expand": lambda: v.expand(8, 32), "repeat": lambda: A.repeat(2, 1), "matmul": lambda: A @ B.t(),
        "bmm": lambda: m.bmm(A.view(1, 8, 32), B.view(1, 32, 8)), "einsum": lambda: m.einsum("ij,kj->ik", A, B),
        "outer": lambda: m.outer(v, v), "exp": lambda: A.exp(), "pow 2": lambda: A ** 2, "relu": lambda: F.relu(A),
        "gelu": lambda: F.gelu(A), "sigmoid": lambda: A.sigmoid(), "tanh": lambda: A.tanh(), "eq": lambda: A == B,
        "(A > 0).sum()": lambda: (A > 0).sum(), "clone": lambda: A.clone(), "float()": lambda: ids.float(),
        "to float64": lambda: A.to(m.float64), "zeros_like": lambda: m.zeros_like(A), "ones": lambda: m.ones(8, 32),
        "arange": lambda: m.arange(32), "rand": lambda: m.rand(8, 32), "randint": lambda: m.randint(0, 10, (8,)),
        "multinomial": lambda: m.multinomial(F.softmax(A, 1), 1), "one_hot": lambda: F.one_hot(ids, 32),
        "item": lambda: A[0, 0].item(), "tolist": lambda: ids.tolist(), "tensor(list)": lambda: m.tensor([1.0, 2.0, 3.0]),
        "mse_loss": lambda: F.mse_loss(A, B), "cross_entropy": lambda: F.cross_entropy(A, ids),
        "nll_loss": lambda: F.nll_loss(A, ids), "l1_loss": lambda: F.l1_loss(A, B), "dropout": lambda: F.dropout(A, 0.2),
        "linear": lambda: F.linear(A, B), "layer_norm": lambda: F.layer_norm(A, (32,)),
        "normalize": lambda: F.normalize(A, dim=1), "cosine_similarity": lambda: F.cosine_similarity(A, B),
        "pad": lambda: F.pad(A, (1, 1)), "tril": lambda: m.tril(A), "flip": lambda: A.flip(1), "roll": lambda: A.roll(1, 1),
        "unique": lambda: ids.unique(), "nonzero": lambda: mask.nonzero(), "allclose": lambda: m.allclose(A, B),
        "g mul": lambda: G * B, "g sum": lambda: G.sum(), "g mean(dim)": lambda: G.mean(1), "g softmax": lambda: F.softmax(G, 1),
        "g view": lambda: G.view(-1), "g [:, 3]": lambda: G[:, 3], "g relu": lambda: F.relu(G), "g exp": lambda: G.exp(),
        "g tanh": lambda: G.tanh(), "g / 3": lambda: G / 3.0, "g matmul": lambda: G @ B.t(), "g t": lambda: G.t(),
        "g cat": lambda: m.cat([G, B], 1), "g stack": lambda: m.stack([G, B]), "g max(dim)": lambda: G.max(1),
        "g gather": lambda: G.gather(1, ids.view(-1, 1)),
    }


def worker(framework, calls, repeats):
    import importlib

    m = importlib.import_module(framework)
    m.set_num_threads(1)
    out = {}
    for name, fn in cases(m).items():
        out[name] = min(timeit.repeat(fn, number=calls, repeat=repeats)) / calls * 1e6
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--top", type=int, default=0, help="print only the largest ratios (0: all)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.calls, args.repeats)
    env = dict(os.environ, OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1")
    us = {}
    for fw in ("minigrad", "torch"):
        done = subprocess.run([sys.executable, __file__, "--worker", fw, "--calls", str(args.calls), "--repeats",
                               str(args.repeats)], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise SystemExit(f"{fw}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
        us[fw] = json.loads(done.stdout.strip().splitlines()[-1])
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True, text=True)
                .stdout.splitlines() if line.startswith("Model name")), "unknown CPU")
    print(f"CPU: {cpu}; one thread; us a call (best of {args.repeats} x {args.calls})")
    print(f"{'op':22s} {'minigrad':>9s} {'torch':>9s} {'ratio':>6s}")
    rows = sorted(us["minigrad"], key=lambda k: -us["minigrad"][k] / us["torch"][k])
    for name in rows[:args.top or None]:
        a, b = us["minigrad"][name], us["torch"][name]
        print(f"{name:22s} {a:9.2f} {b:9.2f} {a / b:6.2f}")


if __name__ == "__main__":
    main()
