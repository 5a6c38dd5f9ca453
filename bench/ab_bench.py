"""A/B: the training step of two (or more) minigrad source trees, side by side in one run.

    git worktree add /tmp/before HEAD~1          # or any checkout of another version
    python bench/ab_bench.py /tmp/before .        # --preset baby (default), shakespeare_char, gpt2
    python bench/ab_bench.py . . "MINIGRAD_NUM_THREADS=1 ."   # a variable set for one of them

Each tree runs in its own worker process (bench/train_bench.py's minigrad worker, from that
tree) on the same weights and batches; the parent alternates them `--chunk` steps at a time, so
the machine's ups and downs hit all of them alike. Printed per tree: the median step time, its
ratio to the first tree's, and the median of the chunk-by-chunk ratios ("paired": the steadier
figure on a noisy machine). A change measured this way needs no PyTorch; run a tree against
itself to see the noise floor.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.train_bench import PRESETS, model_config  # noqa: E402


def spawn(variant, preset, weights):
    *assignments, root = variant.split()
    root = str(Path(root).resolve())
    assigned = dict(a.split("=", 1) for a in assignments)
    env = {**os.environ, **assigned}  # the tree first on the path, then any PYTHONPATH given for it
    env["PYTHONPATH"] = root if "PYTHONPATH" not in assigned else root + os.pathsep + assigned["PYTHONPATH"]
    proc = subprocess.Popen([sys.executable, os.path.join(root, "bench", "train_bench.py"), "--worker", "minigrad",
                             "--preset", preset, "--weights", weights],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=root)
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"ab_bench.py: the worker of {variant!r} did not start (see its error above)")
    return proc


def run_chunk(proc, n):
    proc.stdin.write(f"run {n}\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise SystemExit("ab_bench.py: a worker died (see its error above)")
    return [s[1] + s[2] + s[3] for s in json.loads(line)["steps"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", help="source trees: PATH, or 'VAR=value ... PATH' (quoted)")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    ap.add_argument("--steps", type=int, default=200, help="measured steps per tree")
    ap.add_argument("--chunk", type=int, default=4, help="steps one tree runs before the next takes over")
    ap.add_argument("--warmup", type=int, default=3)
    args = ap.parse_args()

    import minigrad
    import nn
    from gpt.model import GPT

    minigrad.manual_seed(1337)
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        nn.save(GPT(model_config(PRESETS[args.preset])).state_dict(), weights)
        procs = [spawn(t, args.preset, weights) for t in args.trees]
        for p in procs:
            run_chunk(p, args.warmup)
        times = [[] for _ in procs]
        chunk_medians = [[] for _ in procs]
        done = 0
        while done < args.steps:
            n = min(args.chunk, args.steps - done)
            for i, p in enumerate(procs):
                t = run_chunk(p, n)
                times[i] += t
                chunk_medians[i].append(statistics.median(t))
            done += n
        for p in procs:
            p.stdin.close()
            p.wait()

    first = statistics.median(times[0])
    print(f"preset {args.preset}, {args.steps} steps per tree in chunks of {args.chunk}")
    for tree, t, c in zip(args.trees, times, chunk_medians):
        paired = statistics.median(a / b for a, b in zip(c, chunk_medians[0]))
        print(f"{tree:50s} {statistics.median(t) * 1e3:9.2f} ms/step   x{statistics.median(t) / first:.3f}   "
              f"paired x{paired:.3f}")


if __name__ == "__main__":
    main()
