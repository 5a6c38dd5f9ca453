"""Generation benchmark: tokens/s for 500 new tokens with the KV cache (the model's
`forward(idx, cache)` and the sampling, replayed by minigrad.compile: generate's default; and the
same step eagerly, compile=False), without it (nanoGPT's way: the whole context recomputed per
token), and PyTorch nanoGPT's generate, on one model.

    python bench/generate_bench.py [--preset baby] [--new 500]
    python bench/generate_bench.py --trees /tmp/before .     # A/B: each tree's own generate, side by side

--trees: each source tree's `model.generate` (its default path, whatever that is in the tree) in a
warm worker process of its own, on the same weights; the parent alternates them, one generation of
`--new` tokens at a time, for `--rounds` rounds, so the machine's ups and downs hit both alike.
Printed: microseconds a token per tree (the best round and the median), the ratio of the best
rounds and the median of the round-by-round ratios ("paired": the steadier figure on a noisy machine).
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.train_bench import PRESETS, model_config  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    ap.add_argument("--new", type=int, default=500, help="new tokens per generation")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trees", nargs="+", help="source trees to compare, each generating in its own process")
    ap.add_argument("--rounds", type=int, default=40, help="with --trees: generations per tree")
    args = ap.parse_args()
    if args.trees:
        return compare_trees(args)

    import minigrad
    from gpt.model import GPT

    minigrad.backends.tune_process()  # as sample.py's
    p = PRESETS[args.preset]
    minigrad.manual_seed(0)
    model = GPT(model_config(p))
    model.eval()
    prompt = minigrad.tensor([[0]])
    rows = {}
    for name, use_cache, compile in (("minigrad, KV cache (replayed: the default)", True, True),
                                     ("minigrad, KV cache, eager (compile=False)", True, False),
                                     ("minigrad, recompute", False, False)):
        # warm-up (and, compiled, the captures: the one-token step and the cache's refill)
        model.generate(prompt, p["block_size"] + 2, use_cache=use_cache, compile=compile)
        best = min(timed(lambda c=use_cache, k=compile: model.generate(prompt, args.new, use_cache=c, compile=k))[0]
                   for _ in range(args.repeats))
        rows[name] = args.new / best
    try:
        import numpy as np
        import torch

        from bench.nanogpt_torch import GPT as TorchGPT, load_from_minigrad

        tmodel = load_from_minigrad(TorchGPT(model_config(p)), model).eval()
        tprompt = torch.zeros((1, 1), dtype=torch.long)
        tmodel.generate(tprompt, 8)
        best = min(timed(lambda: tmodel.generate(tprompt, args.new))[0] for _ in range(args.repeats))
        rows["PyTorch nanoGPT (recompute)"] = args.new / best
        del np
    except ImportError:
        pass
    print(f"preset {args.preset}: {args.new} new tokens from a 1-token prompt (block_size {p['block_size']})")
    for name, tps in rows.items():
        print(f"{name:<44} {tps:>10,.0f} tokens/s")
    cached = rows["minigrad, KV cache (replayed: the default)"]
    print(f"KV cache speed-up over recomputation: {cached / rows['minigrad, recompute']:.1f}x")
    print(f"replayed cached step vs the eager one: {cached / rows['minigrad, KV cache, eager (compile=False)']:.2f}x")
    if "PyTorch nanoGPT (recompute)" in rows:
        print(f"KV cache vs PyTorch nanoGPT generate: {cached / rows['PyTorch nanoGPT (recompute)']:.1f}x")


# a tree's worker: its own minigrad, nn and gpt first on the path; one generation per line read
_WORKER = """
import sys, time
sys.path.insert(0, sys.argv[1])
import minigrad
from gpt.model import GPT
from bench.train_bench import PRESETS, model_config
getattr(minigrad.backends, 'tune_process', lambda: None)()  # (a tree from before it tuned at import)
p = PRESETS[sys.argv[2]]
minigrad.manual_seed(0)
model = GPT(model_config(p))
model.eval()
prompt = minigrad.tensor([[0]])
new = int(sys.argv[3])
model.generate(prompt, p["block_size"] + 2)  # warm-up: every program captured, every kernel loaded
for _ in sys.stdin:
    t = time.perf_counter()
    model.generate(prompt, new)
    print((time.perf_counter() - t) / new * 1e6, flush=True)
"""


def compare_trees(args):
    from pathlib import Path

    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, str(Path(t).resolve()), args.preset, str(args.new)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for t in args.trees]
    times = [[] for _ in workers]
    for r in range(args.rounds):
        order = list(range(len(workers)))
        for j in (order if r % 2 == 0 else order[::-1]):  # (alternating who goes first)
            workers[j].stdin.write("go\n")
            workers[j].stdin.flush()
            times[j].append(float(workers[j].stdout.readline()))
    for w in workers:
        w.stdin.close()
        w.wait()
    print(f"preset {args.preset}: {args.rounds} generations of {args.new} tokens a tree, us a token")
    for tree, ts in zip(args.trees, times):
        paired = statistics.median(b / a for a, b in zip(times[0], ts))
        print(f"{tree:<40} best {min(ts):8.1f}  median {statistics.median(ts):8.1f}   "
              f"x{min(ts) / min(times[0]):.3f}  paired x{paired:.3f}")


if __name__ == "__main__":
    main()
