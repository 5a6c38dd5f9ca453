"""Small-ops benchmark: an MLP of width 64, where per-op overhead (not arithmetic) dominates.

    python bench/small_ops_bench.py [--steps 300] [--layers 4] [--batch 32]

One training step = forward through `layers` Linear(64, 64) + ReLU, an MSE loss, backward, and
an SGD step with momentum. Each framework runs in its own process, alternately, a chunk of
steps at a time; the median time per step and the ratio minigrad / PyTorch are printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def minigrad_stepper(layers, batch, width):
    import minigrad
    import nn
    minigrad.backends.tune_process()  # as train.py's

    minigrad.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*mods)
    opt = nn.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = minigrad.randn(batch, width)
    y = minigrad.randn(batch, width)

    def step():
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def torch_stepper(layers, batch, width):
    import torch

    torch.manual_seed(0)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*mods)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn(batch, width)
    y = torch.randn(batch, width)

    def step():
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def worker(framework, layers, batch, width):
    step = (minigrad_stepper if framework == "minigrad" else torch_stepper)(layers, batch, width)
    for _ in range(20):
        step()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        n = int(line.split()[1])
        times = []
        for _ in range(n):
            t = time.perf_counter()
            step()
            times.append(time.perf_counter() - t)
        print(json.dumps(times), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.layers, args.batch, args.width)
    frameworks = ["minigrad"]
    try:
        import torch  # noqa: F401

        frameworks.append("torch")
    except ImportError:
        print("torch is not installed: measuring minigrad alone")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = {}
    for f in frameworks:
        cmd = [sys.executable, __file__, "--worker", f, "--layers", str(args.layers), "--batch", str(args.batch),
               "--width", str(args.width)]
        procs[f] = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        procs[f].stdout.readline()
    times = {f: [] for f in frameworks}
    done = 0
    while done < args.steps:
        n = min(args.chunk, args.steps - done)
        for f in frameworks:
            procs[f].stdin.write(f"run {n}\n")
            procs[f].stdin.flush()
            times[f] += json.loads(procs[f].stdout.readline())
        done += n
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print(f"MLP {args.layers} x Linear({args.width}, {args.width}) + ReLU, batch {args.batch}, SGD momentum; "
          f"{args.steps} steps each")
    med = {f: statistics.median(t) for f, t in times.items()}
    for f in frameworks:
        print(f"{f:<10} {med[f] * 1e6:>9.1f} us/step")
    if "torch" in med:
        print(f"ratio minigrad/PyTorch time per step: {med['minigrad'] / med['torch']:.2f}")


if __name__ == "__main__":
    main()
