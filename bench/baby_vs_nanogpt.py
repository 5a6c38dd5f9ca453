"""The baby Shakespeare run on nanoGPT's own PyTorch loop, and minigrad side by side with it.

    python bench/baby_vs_nanogpt.py --input=path/to/tinyshakespeare.txt                 # nanoGPT's loop
    python bench/baby_vs_nanogpt.py --input=path/to/tinyshakespeare.txt --lockstep 400  # both, same draws

Without --lockstep: nanoGPT's train.py loop for the baby config (config/train_shakespeare_char_baby.py)
on PyTorch, as nanoGPT runs it: torch.manual_seed(seed), batches from torch.randint, evaluation
every eval_interval over eval_iters batches from the same generator. It prints those evaluations
and, at the end, the validation loss over --accurate batches as well (the 20-batch figure moves by
about 0.015 from one draw of batches to the next). Compare with `python train.py
config/train_shakespeare_char_baby.py --seed=S`.

With --lockstep N: minigrad and PyTorch train from the same initial weights on the same batches
for N steps (forward, backward, clip, AdamW, warmup-cosine rate) and the largest weight difference
is printed every 50 steps: a faithful engine keeps it at float32 rounding level. At the end both
models are evaluated on the same --accurate validation batches.

The data is the char-level Tiny Shakespeare prepared by train.py (--data_dir, prepared here from
--input when missing). PyTorch is needed.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpt.config import TrainConfig  # noqa: E402
from gpt.data import Dataset, prepare_dataset  # noqa: E402
from gpt.model import GPTConfig  # noqa: E402
from nn.optim.lr_scheduler import warmup_cosine_lr  # noqa: E402

BABY = dict(block_size=64, batch_size=12, n_layer=4, n_head=4, n_embd=128, max_iters=2000, lr_decay_iters=2000,
            dropout=0.0, learning_rate=1e-3, min_lr=1e-4, beta2=0.99, warmup_iters=100, eval_interval=250,
            eval_iters=20)


def load_splits(args):
    path = prepare_dataset("shakespeare_char", data_dir=args.data_dir, input=args.input)
    ds = Dataset.load(path)
    return ds, {s: np.memmap(ds.bin_path(s), dtype=np.uint16, mode="r") for s in ("train", "val")}


def lr_at(it, c):
    return warmup_cosine_lr(it, c["learning_rate"], c["warmup_iters"], c["lr_decay_iters"], c["min_lr"])


def nanogpt_run(args, torch, GPT, ds, splits, c):
    torch.manual_seed(args.seed)

    def get_batch(split):  # nanoGPT's get_batch
        data = splits[split]
        ix = torch.randint(len(data) - c["block_size"], (c["batch_size"],))
        x = torch.stack([torch.from_numpy(data[i:i + c["block_size"]].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + c["block_size"]].astype(np.int64)) for i in ix])
        return x, y

    model = GPT(model_config(ds, c))
    opt = model.configure_optimizers(0.1, c["learning_rate"], (0.9, c["beta2"]))

    @torch.no_grad()
    def estimate_loss(n):
        model.eval()
        out = {s: float(np.mean([model(*get_batch(s))[1].item() for _ in range(n)])) for s in ("train", "val")}
        model.train()
        return out

    t0 = time.perf_counter()
    x, y = get_batch("train")
    for it in range(c["max_iters"] + 1):
        for group in opt.param_groups:
            group["lr"] = lr_at(it, c)
        if it % c["eval_interval"] == 0:
            losses = estimate_loss(c["eval_iters"])
            print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}", flush=True)
        if it == c["max_iters"]:
            break
        _, loss = model(x, y)
        x, y = get_batch("train")
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"{c['max_iters']} iterations in {time.perf_counter() - t0:.0f} s")
    losses = estimate_loss(args.accurate)
    print(f"over {args.accurate} batches: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")


def lockstep(args, torch, GPT, load_from_minigrad, ds, splits, c):
    import minigrad
    import nn
    from gpt.model import GPT as MiniGPT
    minigrad.backends.tune_process()  # as train.py's

    minigrad.manual_seed(args.seed)
    model = MiniGPT(model_config(ds, c))
    tmodel = load_from_minigrad(GPT(model_config(ds, c)), model)
    opt = model.configure_optimizers(0.1, c["learning_rate"], (0.9, c["beta2"]))
    topt = tmodel.configure_optimizers(0.1, c["learning_rate"], (0.9, c["beta2"]))
    rng = np.random.default_rng(args.seed)
    data, T = splits["train"], c["block_size"]
    tparams = dict(tmodel.named_parameters())
    for it in range(args.lockstep):
        for group in opt.param_groups + topt.param_groups:
            group["lr"] = lr_at(it, c)
        ix = rng.integers(0, len(data) - T, c["batch_size"])
        window = data[ix[:, None] + np.arange(T + 1)].astype(np.int64)
        x, y = np.ascontiguousarray(window[:, :-1]), np.ascontiguousarray(window[:, 1:])
        _, loss = model(minigrad.tensor(x), minigrad.tensor(y))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        _, tloss = tmodel(torch.from_numpy(x), torch.from_numpy(y))
        tloss.backward()
        torch.nn.utils.clip_grad_norm_(tmodel.parameters(), 1.0)
        topt.step()
        topt.zero_grad(set_to_none=True)
        if it % 50 == 0 or it == args.lockstep - 1:
            diff = max(float(np.abs(p.array - tparams[n].detach().numpy()).max()) for n, p in model.named_parameters())
            print(f"step {it}: loss minigrad {loss.item():.4f}, PyTorch {tloss.item():.4f}; "
                  f"largest weight difference {diff:.1e}", flush=True)
    # both models on the same validation batches: what the runs' final evaluations would agree on
    model.eval()
    tmodel.eval()
    vrng, vdata = np.random.default_rng(args.seed + 1), splits["val"]
    losses = np.zeros((args.accurate, 2))
    with minigrad.no_grad(), torch.no_grad():
        for k in range(args.accurate):
            ix = vrng.integers(0, len(vdata) - T, c["batch_size"])
            window = vdata[ix[:, None] + np.arange(T + 1)].astype(np.int64)
            x, y = np.ascontiguousarray(window[:, :-1]), np.ascontiguousarray(window[:, 1:])
            losses[k] = model(minigrad.tensor(x), minigrad.tensor(y))[1].item(), tmodel(torch.from_numpy(x), torch.from_numpy(y))[1].item()
    print(f"after {args.lockstep} steps, over {args.accurate} validation batches: val loss minigrad {losses[:, 0].mean():.4f}, "
          f"PyTorch {losses[:, 1].mean():.4f}", flush=True)


def model_config(ds, c):
    return GPTConfig(block_size=c["block_size"], vocab_size=ds.vocab_size, n_layer=c["n_layer"], n_head=c["n_head"],
                     n_embd=c["n_embd"], dropout=c["dropout"], bias=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="tinyshakespeare.txt, to prepare the data from when --data_dir lacks it")
    ap.add_argument("--data_dir", default=TrainConfig.data_dir)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--accurate", type=int, default=500, help="batches of the final, more accurate evaluation")
    ap.add_argument("--max_iters", type=int, default=BABY["max_iters"], help="iterations of nanoGPT's loop")
    ap.add_argument("--lockstep", type=int, default=0, metavar="N", help="train both frameworks side by side N steps")
    args = ap.parse_args()
    try:
        import torch

        from bench.nanogpt_torch import GPT, load_from_minigrad
    except ImportError:
        sys.exit("this benchmark needs PyTorch: pip install torch==2.13.0")
    ds, splits = load_splits(args)
    if args.lockstep:
        lockstep(args, torch, GPT, load_from_minigrad, ds, splits, BABY)
    else:
        nanogpt_run(args, torch, GPT, ds, splits, dict(BABY, max_iters=args.max_iters))


if __name__ == "__main__":
    main()
