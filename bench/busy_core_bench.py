"""Training steps per second on a machine where another program keeps one core busy, against the
same machine idle: minigrad (the team adapting, or not) and PyTorch, side by side in one run.

    python bench/busy_core_bench.py                 # the small GPT (2 layers, width 64), 2 threads
    python bench/busy_core_bench.py --preset baby --seconds 6

Each row runs in its own process on `--threads` threads (minigrad after tune_process(), as train.py;
"untuned": without it, as a library user's script), for `--seconds` of steps after a warm-up, once
with the machine as it is and once with a busy-loop process started beside it. The busy row over the
idle row is what the other program costs; a team whose threads wait at every kernel for a core pays
several times over.
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.compile_bench import _cpu_name  # noqa: E402

WORKER = """
import json, os, sys, time
sys.path.insert(0, {root!r})
framework, preset, threads, mode, seconds = {args!r}
if framework == "minigrad":
    import minigrad
    minigrad.set_num_threads(threads)
    if mode != "untuned":
        minigrad.backends.tune_process()
    from minigrad.backends.cpu import team
    team.ADAPT = mode != "fixed team"
    from bench.compile_bench import _gpt_step
    step, data, _ = _gpt_step(preset)
else:
    import torch
    torch.set_num_threads(threads)
    from bench.compile_bench import _torch_gpt_step
    step, data = _torch_gpt_step(preset, False)
batches = data(4)
for x, y in batches:
    step(x, y)
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < seconds:
    step(*batches[n % 4])
    n += 1
print("RESULT", json.dumps(n / (time.perf_counter() - t0)))
"""


def run(framework, preset, threads, mode, seconds):
    code = WORKER.format(root=str(ROOT), args=(framework, preset, threads, mode, seconds))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="small", help="small (2 layers, width 64) or a bench/train_bench.py preset")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    cpu = _cpu_name()
    rows = [("minigrad", "tuned"), ("minigrad", "fixed team"), ("minigrad", "untuned"), ("torch", "")]
    print(f"CPU: {cpu}; preset {args.preset}, {args.threads} threads, {args.seconds:g} s of steps per figure")
    print(f"{'':30s} {'idle':>10s} {'one core busy':>14s} {'busy / idle':>12s}")
    for framework, mode in rows:
        try:
            idle = run(framework, args.preset, args.threads, mode, args.seconds)
        except subprocess.CalledProcessError:
            continue  # (no torch here)
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(0.2)
            busy = run(framework, args.preset, args.threads, mode, args.seconds)
        finally:
            hog.kill()
            hog.wait()
        name = f"{framework} {mode}".strip()
        print(f"{name:30s} {idle:8.1f}/s {busy:12.1f}/s {busy / idle:11.2f}x")


if __name__ == "__main__":
    main()
