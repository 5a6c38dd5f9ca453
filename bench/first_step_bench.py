"""The first step: how long a user waits before training is under way, warm caches.

    python bench/first_step_bench.py                  # a small MLP script (minigrad and PyTorch), and train.py
    python bench/first_step_bench.py --repeats 5 --skip-train

"first step" = import + build + first step - one steady step (issue 29's measure). Each figure is
the best of `--repeats` fresh processes (the fastest process, its parts shown), after one process
not counted that warms the caches (numba's kernels, the prepared dataset, the OS's file cache, the .pyc files:
written even where PYTHONDONTWRITEBYTECODE is set).

- small script: an embedding + tanh MLP (names_mlp's shape: 27 symbols, 3 of context, 64 hidden),
  AdamW, cross_entropy, batch 32; timed inside the process from before its framework's import.
  Run with one thread, as bench/small_models_bench.py does.
- train.py: a tiny model on the default dataset; the time from starting `python train.py` until
  its "iter 1" line (the interpreter's start, the step-0 evaluation and the first iteration
  included), less the fastest of the later iterations' own "time ... ms".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, time
t0 = time.perf_counter()
import {module} as torch
import {module}.nn as nn
import {module}.nn.functional as F
{size}
t1 = time.perf_counter()
torch.set_num_threads(1)
torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(), nn.Linear(30, 64), nn.Tanh(), nn.Linear(64, 27))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randint(0, 27, (32, 3)), torch.randint(0, 27, (32,))
t2 = time.perf_counter()


def step():
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


step()
t3 = time.perf_counter()
steady = 1e9
for _ in range(20):
    a = time.perf_counter()
    step()
    steady = min(steady, time.perf_counter() - a)
print("RESULT", json.dumps({{"import": t1 - t0, "build": t2 - t1, "first": t3 - t2, "steady": steady,
                            "latency": t3 - t0 - steady}}))
"""

TRAIN_FLAGS = ["--n_layer=1", "--n_head=2", "--n_embd=32", "--block_size=16", "--batch_size=4", "--eval_iters=1",
               "--max_iters=6", "--eval_interval=1000", "--log_interval=1", "--progress=False",
               "--overwrite=True"]


def env():
    """The children's environment. Bytecode is one of the warm caches: with PYTHONDONTWRITEBYTECODE set (as some CI
    shells set it) the warm-up would write no .pyc, and every process timed would compile minigrad's sources again."""
    out = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    return out


def small_script(module, cpu_min_elements=0):
    size = f"torch.backends.CPU_MIN_ELEMENTS = {cpu_min_elements}" if module == "minigrad" else ""
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(module=module, size=size)], cwd=ROOT, env=env(),
                         capture_output=True, text=True, check=True)
    line = next(line for line in out.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def train_py(out_dir):
    start = time.perf_counter()
    p = subprocess.Popen([sys.executable, "train.py", f"--out_dir={out_dir}", *TRAIN_FLAGS], cwd=ROOT, env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first, times = None, []
    for line in p.stdout:
        m = re.match(r"iter (\d+)/\d+: .* time ([\d.,]+) ms", line)
        if m:
            if m.group(1) == "1":
                first = time.perf_counter() - start
            else:
                times.append(float(m.group(2).replace(",", "")) / 1e3)
    if p.wait() != 0 or first is None:
        raise SystemExit(f"train.py failed (exit {p.returncode})")
    steady = min(times)
    return {"to_iter_1": first, "steady": steady, "latency": first - steady}


def best(runs):
    return min(runs, key=lambda r: r["latency"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-train", action="store_true", help="only the small script")
    ap.add_argument("--skip-torch", action="store_true", help="not PyTorch's small script")
    ap.add_argument("--cpu-min-elements", type=int, default=0,
                    help="minigrad.backends.CPU_MIN_ELEMENTS for the small script (16384: small work starts no numba)")
    args = ap.parse_args()
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True,
                text=True).stdout.splitlines() if line.startswith("Model name")), "unknown CPU")
    print(f"CPU: {cpu}; best of {args.repeats} fresh processes, warm caches; seconds")
    frameworks = ["minigrad"] + ([] if args.skip_torch else ["torch"])
    for module in frameworks:
        small_script(module, args.cpu_min_elements)  # warms the caches
        r = best([small_script(module, args.cpu_min_elements) for _ in range(args.repeats)])
        print(f"small MLP script, {module:8s}: import {r['import']:.3f}  build {r['build']:.3f}  "
              f"first step {r['first']:.3f}  steady step {r['steady'] * 1e3:.2f} ms  -> first step {r['latency']:.3f}")
    if not args.skip_train:
        with tempfile.TemporaryDirectory() as tmp:
            train_py(tmp)
            r = best([train_py(tmp) for _ in range(args.repeats)])
        print(f"python train.py (tiny):   start to iter 1 {r['to_iter_1']:.3f}  steady step {r['steady'] * 1e3:.2f} ms"
              f"  -> first step {r['latency']:.3f}")
        print("  (train.py: " + " ".join(TRAIN_FLAGS) + ")")
    print(json.dumps({"cpu": cpu}))


if __name__ == "__main__":
    main()
