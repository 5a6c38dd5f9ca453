"""CPU vs GPU parity of the GPT: logits, loss and every parameter's gradient, float32.

    python bench/gpu_parity.py                       # n_layer 4, n_head 4, n_embd 128, block 128, batch 8
    python bench/gpu_parity.py --atol 1e-4 --dtype float64

The same weights and batch run once on the CPU (numpy) and on the GPU (cupy) twice: with every op's
own code on cupy (`generic`, MINIGRAD_KERNELS=numpy) and with the CUDA backend (`fused`,
minigrad/backends/cuda, MINIGRAD_KERNELS=fast). Prints the largest absolute difference of the logits,
the loss and each gradient (the five worst parameters by name), then PASS or FAIL per mode against
--atol; exits 1 if any mode fails. TF32 is off (exact float32 matmuls).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import minigrad  # noqa: E402
import minigrad.cuda  # noqa: E402
from gpt.model import GPT, GPTConfig  # noqa: E402
from minigrad import backends  # noqa: E402


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def run(cfg, sd, x, y, device, dtype, mode):
    model = GPT(cfg)
    model.load_state_dict({k: minigrad.tensor(v) for k, v in sd.items()})
    if dtype == "float64":
        model.double()
    model.to(device)
    ctx = backends.kernels("fast" if mode == "fused" else "numpy")
    t0 = time.perf_counter()
    with ctx:
        logits, loss = model(minigrad.tensor(x, device=device), minigrad.tensor(y, device=device))
        loss.backward()
    grads = {n: host(p.grad.array) for n, p in model.named_parameters()}
    out = host(logits.array), float(loss.item()), grads
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n_layer", type=int, default=4)
    ap.add_argument("--n_head", type=int, default=4)
    ap.add_argument("--n_embd", type=int, default=128)
    ap.add_argument("--block_size", type=int, default=128)
    ap.add_argument("--vocab_size", type=int, default=65)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--modes", default="generic,fused")
    args = ap.parse_args()

    if not minigrad.cuda.is_available():
        print("FAIL: no CUDA GPU (cupy missing or no device): nothing to compare")
        return 1
    minigrad.cuda.set_tf32(False)
    print(f"GPU: {minigrad.cuda.get_device_name()}, TF32 {'on' if minigrad.cuda.get_tf32() else 'off'}")
    cfg = GPTConfig(block_size=args.block_size, vocab_size=args.vocab_size, n_layer=args.n_layer, n_head=args.n_head,
                    n_embd=args.n_embd, dropout=0.0, bias=True)
    minigrad.manual_seed(0)
    sd = {k: v.array.copy() for k, v in GPT(cfg).state_dict().items()}
    rng = np.random.default_rng(0)
    x = rng.integers(0, args.vocab_size, (args.batch_size, args.block_size))
    y = rng.integers(0, args.vocab_size, (args.batch_size, args.block_size))
    y[0, :7] = -1  # a few ignored targets
    (ref, t_cpu) = run(cfg, sd, x, y, "cpu", args.dtype, "cpu")
    print(f"config {cfg}, batch {args.batch_size}, {args.dtype}; CPU forward+backward {t_cpu:.2f} s, "
          f"loss {ref[1]:.6f}")
    ok_all = True
    for mode in [m for m in args.modes.split(",") if m]:
        try:
            (out, t) = run(cfg, sd, x, y, "cuda", args.dtype, mode)
        except Exception as e:  # report and go on to the next mode
            import traceback

            traceback.print_exc()
            print(f"[{mode}] FAIL: {type(e).__name__}: {e}")
            ok_all = False
            continue
        d_logits = float(np.abs(out[0] - ref[0]).max())
        d_loss = abs(out[1] - ref[1])
        d_grads = {n: float(np.abs(out[2][n] - ref[2][n]).max()) for n in ref[2]}
        worst = sorted(d_grads.items(), key=lambda kv: -kv[1])[:5]
        finite = np.isfinite(out[0]).all() and np.isfinite(out[1]) and all(np.isfinite(g).all() for g in out[2].values())
        ok = finite and max([d_logits, d_loss, *d_grads.values()]) <= args.atol and out[2].keys() == ref[2].keys()
        ok_all &= ok
        print(f"[{mode}] GPU forward+backward {t:.2f} s (first call: includes compiling)")
        print(f"[{mode}]   max |diff| logits {d_logits:.3e}   loss {d_loss:.3e} ({out[1]:.6f})   "
              f"grads {max(d_grads.values()):.3e} over {len(d_grads)} parameters")
        for n, d in worst:
            print(f"[{mode}]     {n:<40} {d:.3e}   (max |grad| {float(np.abs(ref[2][n]).max()):.3e})")
        print(f"[{mode}] {'PASS' if ok else 'FAIL'} (atol {args.atol:g}{'' if finite else ', NON-FINITE values'})")
    print("PASS" if ok_all else "FAIL")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
