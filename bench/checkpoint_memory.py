"""Gradient checkpointing's trade, measured: peak array memory and time of one training step
(forward + backward), without and with checkpointing.

    python bench/checkpoint_memory.py                      # a deep MLP from minigrad ops (CPU)
    python bench/checkpoint_memory.py --model gpt          # the GPT: 8 layers, n_embd 256, block 256, batch 8
    python bench/checkpoint_memory.py --model gpt --device cuda

Peak memory is measured above what was in use before the step (the model's parameters), so it
is what the step itself needs: activations kept for backward, gradients, temporaries. numpy
memory is measured with tracemalloc and cupy memory with its memory pool
(`minigrad.memory.track_peak`); time is the median of --steps steps run without tracking.
The bar for the GPT: peak with checkpointing <= 50% of without, time <= 1.5x.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import minigrad  # noqa: E402
from minigrad.memory import format_bytes, track_peak  # noqa: E402
from minigrad.utils.checkpoint import checkpoint  # noqa: E402


# ---- a deep MLP from minigrad ops -----------------------------------------------------------
class DeepMLP:
    """Residual blocks h + W2 dropout(silu(W1 h + b1)) + b2 with a 4x hidden width, from raw ops."""

    def __init__(self, layers, width, dropout, device):
        self.dropout, self.device = dropout, device
        s = width ** -0.5
        self.blocks = []
        for _ in range(layers):
            w1 = (minigrad.randn(width, 4 * width, device=device) * s).requires_grad_()
            b1 = minigrad.zeros(4 * width, device=device, requires_grad=True)
            w2 = (minigrad.randn(4 * width, width, device=device) * (0.5 * s)).requires_grad_()
            b2 = minigrad.zeros(width, device=device, requires_grad=True)
            self.blocks.append((w1, b1, w2, b2))
        self.grad_checkpoint = False

    def parameters(self):
        return [p for b in self.blocks for p in b]

    def block(self, h, w1, b1, w2, b2):
        a = h @ w1 + b1
        a = a * a.sigmoid()  # SiLU
        if self.dropout:
            a = a * (minigrad.rand(*a.shape, device=self.device) >= self.dropout) / (1 - self.dropout)
        return h + a @ w2 + b2

    def loss(self, x, y):
        h = x
        for params in self.blocks:
            h = checkpoint(self.block, h, *params, use_reentrant=False) if self.grad_checkpoint else self.block(h, *params)
        return ((h - y) ** 2).mean()


def mlp_setup(args):
    model = DeepMLP(args.layers, args.width, args.dropout, args.device)
    x = minigrad.randn(args.batch, args.width, device=args.device)
    y = minigrad.randn(args.batch, args.width, device=args.device)

    def step(ck):
        model.grad_checkpoint = ck
        return model.loss(x, y)

    desc = (f"deep MLP from minigrad ops: {args.layers} residual blocks, width {args.width} (hidden "
            f"{4 * args.width}), batch {args.batch}, dropout {args.dropout}")
    return model.parameters(), step, desc


def gpt_setup(args):
    from gpt.model import GPT, GPTConfig

    config = GPTConfig(block_size=args.block_size, vocab_size=args.vocab_size, n_layer=args.n_layer,
                       n_head=args.n_head, n_embd=args.n_embd, dropout=args.dropout, bias=True)
    model = GPT(config)
    if args.device != "cpu":
        model.to(args.device)
    model.train()
    idx = minigrad.randint(0, args.vocab_size, (args.batch_size, args.block_size), device=args.device)
    targets = minigrad.randint(0, args.vocab_size, (args.batch_size, args.block_size), device=args.device)

    def step(ck):
        model.config.grad_checkpoint = ck
        _, loss = model(idx, targets)
        return loss

    desc = (f"GPT: {args.n_layer} layers, n_head {args.n_head}, n_embd {args.n_embd}, block {args.block_size}, "
            f"batch {args.batch_size}, vocab {args.vocab_size}, dropout {args.dropout}")
    return [p for p in model.parameters() if p.requires_grad], step, desc


# ---- measuring ------------------------------------------------------------------------------
def sync(device):
    if device != "cpu":
        import cupy

        cupy.cuda.Device().synchronize()


def train_step(step, params, ck, seed):
    for p in params:
        p.grad = None  # zero_grad(set_to_none=True): the gradients are part of the step's memory
    minigrad.manual_seed(seed)  # the same dropout masks with and without checkpointing
    loss = step(ck)
    loss.backward()
    return loss


def measure(step, params, ck, args):
    train_step(step, params, ck, 1)  # warm-up (caches, memory pool)
    times = []
    for i in range(args.steps):
        sync(args.device)
        t0 = time.perf_counter()
        train_step(step, params, ck, 2 + i)
        sync(args.device)
        times.append(time.perf_counter() - t0)
    for p in params:
        p.grad = None
    with track_peak(device="cuda" if args.device != "cpu" else "cpu") as m:
        loss = train_step(step, params, ck, 1)
        sync(args.device)
    grads = [minigrad.tensor(p.grad).cpu().numpy() if p.grad is not None else None for p in params]
    return m.peak_bytes, statistics.median(times), float(loss.item()), grads


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=["mlp", "gpt"], default="mlp")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--steps", type=int, default=3, help="timed steps (median) per variant")
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    g = p.add_argument_group("mlp")
    g.add_argument("--layers", type=int, default=12)
    g.add_argument("--width", type=int, default=256)
    g.add_argument("--batch", type=int, default=512)
    g.add_argument("--dropout", type=float, default=None, help="default: 0.1 for mlp, 0.0 for gpt")
    g = p.add_argument_group("gpt")
    g.add_argument("--n_layer", type=int, default=8)
    g.add_argument("--n_head", type=int, default=8)
    g.add_argument("--n_embd", type=int, default=256)
    g.add_argument("--block_size", type=int, default=256)
    g.add_argument("--batch_size", type=int, default=8)
    g.add_argument("--vocab_size", type=int, default=65, help="65: character-level Tiny Shakespeare")
    args = p.parse_args(argv)
    if args.dropout is None:
        args.dropout = 0.1 if args.model == "mlp" else 0.0

    minigrad.manual_seed(args.seed)
    params, step, desc = (mlp_setup if args.model == "mlp" else gpt_setup)(args)
    peak0, t0, loss0, g0 = measure(step, params, False, args)
    peak1, t1, loss1, g1 = measure(step, params, True, args)
    identical = loss0 == loss1 and all(
        (a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b)) for a, b in zip(g0, g1)
    )
    result = {
        "model": args.model, "device": args.device, "config": desc,
        "peak_bytes": peak0, "peak_bytes_checkpoint": peak1, "peak_ratio": peak1 / peak0 if peak0 else float("nan"),
        "step_s": t0, "step_s_checkpoint": t1, "time_ratio": t1 / t0 if t0 else float("nan"),
        "gradients_identical": identical,
    }
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{desc}, on {args.device}")
    print(f"{'':20}{'peak memory':>14}{'step time':>12}")
    print(f"{'without checkpoint':20}{format_bytes(peak0):>14}{t0:>11.3f}s")
    print(f"{'with checkpoint':20}{format_bytes(peak1):>14}{t1:>11.3f}s")
    print(f"{'ratio':20}{result['peak_ratio']:>14.2f}{result['time_ratio']:>11.2f}x")
    print(f"gradients identical: {identical}")
    if args.model == "gpt":
        ok = result["peak_ratio"] <= 0.5 and result["time_ratio"] <= 1.5
        print(f"bar (peak <= 0.50x, time <= 1.50x): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
