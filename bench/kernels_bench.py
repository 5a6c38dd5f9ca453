"""The compiled CPU kernels against the numpy passes they replace (and PyTorch's, when installed).

    python bench/kernels_bench.py [--preset baby|shakespeare_char] [--repeats 50]

For each fused op of the GPT step, on that preset's shapes (float32, forward + backward unless
said): minigrad with the compiled kernels (minigrad/backends/cpu, numba), minigrad with
them off (the numpy passes, as on a machine without numba), and PyTorch. One process, the three
timed in turns, repeat after repeat, so machine noise hits them alike; medians in ms. This is the
measured reason numba is a run-time dependency.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRESETS = {"baby": (12, 64, 128, 4), "shakespeare_char": (64, 256, 384, 6)}  # batch, block, n_embd, n_head


def cases(B, T, C, H):
    """name -> (minigrad step, torch step or None): each builds its inputs once and times one call."""
    import minigrad
    import nn
    import nn.functional as F
    minigrad.backends.tune_process()  # as train.py's

    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, T, C)).astype(np.float32)
    h = rng.standard_normal((B, T, 4 * C)).astype(np.float32)
    qkv = rng.standard_normal((B, H, T, C // H)).astype(np.float32)
    w = rng.standard_normal(C).astype(np.float32)
    try:
        import torch

        torch.set_num_threads(2)
    except ImportError:
        torch = None

    def ours_fb(fn, *arrays):
        def step():
            ts = [minigrad.tensor(a, requires_grad=True) for a in arrays]
            y = fn(*ts)
            y.backward(minigrad.ones_like(y))
        return step

    def torch_fb(fn, *arrays):
        if torch is None:
            return None

        def step():
            ts = [torch.tensor(a, requires_grad=True) for a in arrays]
            y = fn(*ts)
            y.backward(torch.ones_like(y))
        return step

    def adam_pair():
        params = [nn.Parameter(minigrad.tensor(rng.standard_normal((4 * C, C)).astype(np.float32)))
                  for _ in range(8)]
        for p in params:
            p.grad = minigrad.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt = nn.optim.AdamW(params, lr=1e-4)
        if torch is None:
            return opt.step, None
        tparams = [torch.nn.Parameter(torch.tensor(p.array)) for p in params]
        for tp, p in zip(tparams, params):
            tp.grad = torch.tensor(p.grad.array)
        topt = torch.optim.AdamW(tparams, lr=1e-4)
        return opt.step, topt.step

    out = {
        f"gelu {list(h.shape)}": (ours_fb(F.gelu, h), torch_fb(lambda a: torch.nn.functional.gelu(a), h)),
        f"layer_norm {list(x.shape)}": (ours_fb(lambda a, b: F.layer_norm(a, (C,), b), x, w),
                                        torch_fb(lambda a, b: torch.nn.functional.layer_norm(a, (C,), b), x, w)),
        f"causal attention {list(qkv.shape)}": (
            ours_fb(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), qkv, qkv, qkv),
            torch_fb(lambda q, k, v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
                     qkv, qkv, qkv)),
        f"AdamW step, 8 x {[4 * C, C]}": adam_pair(),
    }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    from minigrad import backends
    from minigrad.backends.cpu import team

    if not team.available():
        sys.exit("numba is not installed: nothing to compare (pip install numba)")
    print(f"preset {args.preset}: (batch, block, n_embd, n_head) = {PRESETS[args.preset]}, float32, "
          f"forward + backward, median ms of {args.repeats}")
    print(f"{'op':44s} {'compiled':>9s} {'numpy':>9s} {'torch':>9s}  numpy/compiled  compiled/torch")
    for name, (ours, theirs) in cases(*PRESETS[args.preset]).items():
        runs = [("compiled", ours, True), ("numpy", ours, False)] + ([("torch", theirs, True)] if theirs else [])
        times = {label: [] for label, _, _ in runs}
        for _label, fn, flag in runs:  # warm-up (the first compiled call compiles, or loads the cache)
            with backends.kernels("fast" if flag else "numpy"):
                fn()
        for _ in range(args.repeats):
            for label, fn, flag in runs:
                with backends.kernels("fast" if flag else "numpy"):
                    t0 = time.perf_counter()
                    fn()
                    times[label].append(time.perf_counter() - t0)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        torch_ms = med.get("torch")
        print(f"{name:44s} {med['compiled']:9.3f} {med['numpy']:9.3f} "
              f"{torch_ms if torch_ms else float('nan'):9.3f}  {med['numpy'] / med['compiled']:14.2f}  "
              f"{med['compiled'] / torch_ms if torch_ms else float('nan'):14.2f}")


if __name__ == "__main__":
    main()
