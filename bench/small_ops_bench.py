"""Small-ops benchmark: an MLP of width 64, where per-op overhead (not arithmetic) dominates; and
each common small op alone.

    python bench/small_ops_bench.py [--steps 300] [--layers 4] [--batch 32]
    python bench/small_ops_bench.py --ops [--repeats 5]      # per-op forward + backward, us per call

--ops: linear, add, mul, matmul, tanh, sigmoid, embedding, cross_entropy, sum, view and cat on
(32, 64) float32 operands that require grad, each called as forward then backward (a gradient of
ones, or of the scalar), one thread per framework, each framework in its own process; the best of
`--repeats` runs of 200 calls is the figure (the machine is shared), with the spread.

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


def op_cases(torch):
    """name -> (forward on the inputs, the inputs): (32, 64) float32 operands requiring grad."""
    F = torch.nn.functional
    torch.manual_seed(0)

    def leaf(*shape):
        return torch.randn(*shape).requires_grad_()

    x, y, w, b, sq = leaf(32, 64), leaf(32, 64), leaf(64, 64), leaf(64), leaf(64, 64)
    table, ids, target = leaf(65, 64), torch.randint(0, 65, (32,)), torch.randint(0, 64, (32,))
    return {
        "linear": (lambda: F.linear(x, w, b), (x, w, b)),
        "add": (lambda: x + y, (x, y)),
        "mul": (lambda: x * y, (x, y)),
        "matmul": (lambda: x @ sq, (x, sq)),
        "tanh": (lambda: torch.tanh(x), (x,)),
        "sigmoid": (lambda: torch.sigmoid(x), (x,)),
        "embedding": (lambda: F.embedding(ids, table), (table,)),
        "cross_entropy": (lambda: F.cross_entropy(x, target), (x,)),
        "sum": (lambda: x.sum(), (x,)),
        "view": (lambda: x.view(64, 32), (x,)),
        "cat": (lambda: torch.cat([x, y], 0), (x, y)),
    }


def ops_worker(framework, repeats, calls=200):
    if framework == "minigrad":
        import minigrad as torch
        import nn

        torch.nn = nn
    else:
        import torch

        torch.set_num_threads(1)
    out = {}
    for name, (fn, leaves) in op_cases(torch).items():
        y = fn()
        g = torch.ones_like(y)

        def call(fn=fn, g=g, leaves=leaves):
            fn().backward(g)
            for t in leaves:
                t.grad = None

        for _ in range(20):
            call()
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(calls):
                call()
            runs.append((time.perf_counter() - t0) / calls)
        out[name] = runs
    print(json.dumps(out), flush=True)


def ops_main(args, frameworks, env):
    env = dict(env, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1")
    res = {}
    for f in frameworks:
        done = subprocess.run([sys.executable, __file__, "--ops-worker", f, "--repeats", str(args.repeats)], env=env,
                              capture_output=True, text=True, timeout=600, check=True)
        res[f] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"per-op forward + backward on (32, 64) float32, us per call, best of {args.repeats} x 200 "
          "(spread: worst/best run), one thread")
    print(f"{'op':<15}" + "".join(f"{f:>10}{'spread':>8}" for f in frameworks) + (f"{'ratio':>7}" if len(res) > 1 else ""))
    for name in res[frameworks[0]]:
        line = f"{name:<15}"
        for f in frameworks:
            runs = res[f][name]
            line += f"{min(runs) * 1e6:>10.1f}{max(runs) / min(runs):>8.2f}"
        if len(res) > 1:
            line += f"{min(res['minigrad'][name]) / min(res['torch'][name]):>7.2f}"
        print(line)
    if len(res) > 1:
        print("ratio: minigrad time / PyTorch time")


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
    ap.add_argument("--ops", action="store_true", help="time each common small op alone instead of the MLP")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--ops-worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.layers, args.batch, args.width)
    if args.ops_worker:
        return ops_worker(args.ops_worker, args.repeats)
    frameworks = ["minigrad"]
    try:
        import torch  # noqa: F401

        frameworks.append("torch")
    except ImportError:
        print("torch is not installed: measuring minigrad alone")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if args.ops:
        return ops_main(args, frameworks, env)
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
