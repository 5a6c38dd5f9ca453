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
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.train_bench import PRESETS, model_config, run_chunk, spawn  # noqa: E402


def spawn_tree(variant, preset, weights):
    """The minigrad worker of a tree spec 'PATH' or 'VAR=value ... PATH'."""
    *assignments, root = variant.split()
    return spawn("minigrad", preset, weights, Path(root).resolve(), dict(a.split("=", 1) for a in assignments))


def step_times(proc, n):
    """n steps' total times (forward + backward + optimizer), in seconds."""
    return [s[1] + s[2] + s[3] for s in run_chunk(proc, n)["steps"]]


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
        procs = [spawn_tree(t, args.preset, weights) for t in args.trees]
        for p in procs:
            step_times(p, args.warmup)
        times = [[] for _ in procs]
        chunk_medians = [[] for _ in procs]
        done = 0
        while done < args.steps:
            n = min(args.chunk, args.steps - done)
            for i, p in enumerate(procs):
                t = step_times(p, n)
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
