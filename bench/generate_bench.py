"""Generation benchmark: tokens/s for 500 new tokens with the KV cache (the model's
`forward(idx, cache)` and the sampling, replayed by minigrad.compile: generate's default; and the
same step eagerly, compile=False), without it (nanoGPT's way: the whole context recomputed per
token), and PyTorch nanoGPT's generate, on one model.

    python bench/generate_bench.py [--preset baby] [--new 500]
"""
import argparse
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
    args = ap.parse_args()

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


if __name__ == "__main__":
    main()
