"""Per-call cost of a few small backwards and optimizer steps, one framework per process, to run
a tree against another side by side (the machine is shared: alternate, repeat, take the best).

    python bench/small_steps_bench.py                       # minigrad from this tree, then PyTorch
    PYTHONPATH=/path/to/other/tree python bench/small_steps_bench.py --framework minigrad

Ops: forward + backward on (32, 64) float32 (a gradient of ones), us per call, best of 15 x 100.
Optimizers: one step over an MLP's 7 parameters (4.5K elements), default settings, best of 5 x 200;
AdamW foreach=True over a baby GPT's parameter shapes (810K elements), best of 5 x 20.
"""
import argparse
import importlib
import os
import subprocess
import sys
import time


BABY_SHAPES = [(65, 128), (64, 128)] + [(128,), (128,), (384, 128), (384,), (128, 128), (128,), (128,), (128,),
                                       (512, 128), (512,), (128, 512), (128,)] * 4 + [(128,), (128,)]


def best_us(f, runs, calls):
    for _ in range(calls):
        f()
    best = 1e9
    for _ in range(runs):
        s = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - s) / calls)
    return best * 1e6


def worker(name):
    torch = importlib.import_module(name)
    F = importlib.import_module(name + ".nn.functional")
    nn = importlib.import_module(name + ".nn")
    torch.set_num_threads(1)
    a, b = torch.randn(32, 64, requires_grad=True), torch.randn(32, 64, requires_grad=True)
    w, t, ones = torch.randn(64, 64, requires_grad=True), torch.randint(0, 64, (32,)), torch.ones(32, 64)
    ops = {"mul": lambda: (a * b).backward(ones), "matmul": lambda: (a @ w).backward(ones),
           "tanh": lambda: torch.tanh(a).backward(ones), "sigmoid": lambda: torch.sigmoid(a).backward(ones),
           "add_broadcast": lambda: (a + w[0]).backward(ones),
           "cross_entropy": lambda: F.cross_entropy(a, t).backward()}
    line = [f"{k} {best_us(f, 15, 100):.1f}" for k, f in ops.items()]
    model = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(), nn.Linear(30, 64), nn.Tanh(), nn.Linear(64, 64),
                          nn.Tanh(), nn.Linear(64, 27))
    ps = list(model.parameters())
    for p in ps:
        p.grad = torch.randn(p.shape)
    opts = {"adamw": lambda: torch.optim.AdamW(ps, lr=1e-3), "sgd_momentum": lambda: torch.optim.SGD(ps, lr=1e-3, momentum=0.9),
            "sgd": lambda: torch.optim.SGD(ps, lr=1e-3)}
    line += [f"{k}.step {best_us(make().step, 5, 200):.1f}" for k, make in opts.items()]
    # foreach=True over a baby GPT's 26 parameters (810K elements): past BLOCK, where a concatenation
    # would copy the model twice a step
    big = [torch.randn(s, requires_grad=True) for s in BABY_SHAPES]
    for p in big:
        p.grad = torch.randn(p.shape)
    line.append(f"adamw_foreach_baby.step {best_us(torch.optim.AdamW(big, lr=1e-3, foreach=True).step, 5, 20):.1f}")
    print(f"{name:8s} us: " + " | ".join(line))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framework", choices=["minigrad", "torch"])
    args = ap.parse_args()
    if args.framework:
        return worker(args.framework)
    env = dict(os.environ, OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1")
    env.setdefault("PYTHONPATH", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cpu = next((ln.split(":", 1)[1].strip() for ln in subprocess.run(["lscpu"], capture_output=True, text=True)
                .stdout.splitlines() if ln.startswith("Model name")), "unknown CPU")
    print(f"CPU: {cpu}; one thread")
    for name in ("minigrad", "torch"):
        subprocess.run([sys.executable, __file__, "--framework", name], env=env, check=True)


if __name__ == "__main__":
    main()
