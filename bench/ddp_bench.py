"""Data-parallel benchmark: tokens/s for 1 and 2 ranks, each step split into compute, communication
and the wait that backward's overlap did not hide; side by side in one run.

    python bench/ddp_bench.py                          # the baby model, 1 rank and 2 ranks
    python bench/ddp_bench.py --preset shakespeare_char --batch 8 --steps 6
    python bench/ddp_bench.py --train                  # train.py itself: 1 process x 2 threads
                                                       # vs mpiexec -n 2 x 1 thread (the issue's bar)

Each configuration runs as its own job (`mpiexec -n N`, one thread per rank, or one process with
N threads), with the same model and per-rank batch. Per step:
  compute   forward + backward + optimizer, the backward under no_sync() (no communication)
  step      the same with the gradient allreduce (each step's batch runs both ways, alternated)
  comm      the same buckets allreduced alone, back to back (what communication costs by itself)
  exposed   step - compute: the communication time the step pays
  hidden    1 - exposed / comm: how much of the allreduce the overlap with backward hid
tokens/s counts every rank's tokens. The machine is shared: read ratios, not absolute figures.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRESETS = {
    "baby": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, vocab_size=65),
    "shakespeare_char": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, vocab_size=65),
}


def worker(args):
    """One rank of a job: time `steps` DDP steps, then the bare allreduce of the same buckets."""
    import numpy as np

    import minigrad
    import minigrad.distributed as dist
    from gpt.model import GPT, GPTConfig
    from nn.parallel import DistributedDataParallel

    p = dict(PRESETS[args.preset])
    if args.batch:
        p["batch_size"] = args.batch
    dist.init_process_group(timeout=600)
    rank, world = dist.get_rank(), dist.get_world_size()
    minigrad.manual_seed(0)
    model = GPT(GPTConfig(block_size=p["block_size"], vocab_size=p["vocab_size"], n_layer=p["n_layer"],
                          n_head=p["n_head"], n_embd=p["n_embd"], dropout=0.0, bias=False))
    ddp = DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb) if world > 1 else None
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
    rng = np.random.default_rng(rank)
    synced, local, opt_s, waits = [], [], [], []
    for step in range(args.warmup + args.steps):
        xy = rng.integers(0, p["vocab_size"], size=(p["batch_size"], p["block_size"] + 1))
        x, y = minigrad.tensor(xy[:, :-1]), minigrad.tensor(xy[:, 1:])
        # the same batch twice: without communication (no_sync), then with; alternated step by step
        # so that the machine's noise hits both alike
        for sync in (False, True):
            dist.barrier()  # the ranks start together: what differs is the communication
            t0 = time.perf_counter()
            if ddp is None:
                _, loss = model(x, y)
                loss.backward()
            elif sync:
                _, loss = ddp(x, y)
                loss.backward()
            else:
                with ddp.no_sync():
                    _, loss = ddp(x, y)
                    loss.backward()
            t1 = time.perf_counter()
            if sync:
                opt.step()
            opt.zero_grad(set_to_none=True)
            if step >= args.warmup:
                (synced if sync else local).append(t1 - t0)
                if sync:
                    opt_s.append(time.perf_counter() - t1)
                    waits.append(ddp.last_sync["wait_s"] if ddp is not None else 0.0)
    comm = 0.0
    if ddp is not None:  # the buckets alone: what the allreduce costs when nothing overlaps it
        times = []
        for _ in range(args.steps):
            dist.barrier()
            t0 = time.perf_counter()
            for w in [dist.all_reduce(minigrad.Tensor._wrap(b.flat), op=dist.ReduceOp.AVG, async_op=True)
                      for b in ddp._buckets]:
                w.wait()
            times.append(time.perf_counter() - t0)
        comm = statistics.median(times)
    med = statistics.median
    compute, step_s = med(local) + med(opt_s), med(synced) + med(opt_s)
    grad_bytes = sum(q.array.nbytes for q in model.parameters())
    result = {"world": world, "step_s": step_s, "compute_s": compute, "exposed_s": max(0.0, step_s - compute),
              "wait_s": med(waits), "comm_s": comm, "grad_bytes": grad_bytes,
              "buckets": len(ddp._buckets) if ddp else 0}
    every = [None] * world
    dist.all_gather_object(every, result)
    if rank == 0:
        # the slowest rank sets the pace; report it
        slow = max(every, key=lambda r: r["step_s"])
        slow["tokens_per_s"] = world * p["batch_size"] * p["block_size"] / slow["step_s"]
        Path(args.out).write_text(json.dumps(slow))
    dist.destroy_process_group()


def run_job(ranks, threads, args, out):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    cmd = ["mpiexec", "-n", str(ranks), sys.executable, __file__, "--worker", "--out", str(out),
           "--preset", args.preset, "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--batch", str(args.batch or 0), "--bucket-cap-mb", str(args.bucket_cap_mb)]
    subprocess.run(cmd, env=env, check=True, cwd=ROOT)
    return json.loads(Path(out).read_text())


def steps_bench(args):
    import tempfile

    jobs = [(1, 1), (2, 1)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (ranks, threads) in enumerate(jobs):
            results.append(run_job(ranks, threads, args, Path(tmp) / f"r{i}.json"))
    print(f"preset {args.preset}, per-rank batch {args.batch or PRESETS[args.preset]['batch_size']}, "
          f"{results[-1]['grad_bytes'] / 2**20:.1f} MiB of gradients in {results[-1]['buckets']} buckets, "
          f"median of {args.steps} steps")
    print(f"{'ranks x threads':>16} {'tokens/s':>10} {'step ms':>8} {'compute':>8} {'comm':>7} {'exposed':>8} "
          f"{'hidden':>7} {'ddp wait':>8} {'vs 1 rank':>9}")
    base = results[0]["tokens_per_s"]
    for (ranks, threads), r in zip(jobs, results):
        hidden = f"{max(0.0, 1 - r['exposed_s'] / r['comm_s']) * 100:.0f}%" if r["comm_s"] else "-"
        print(f"{f'{ranks} x {threads}':>16} {r['tokens_per_s']:>10,.0f} {r['step_s'] * 1e3:>8.1f} "
              f"{r['compute_s'] * 1e3:>8.1f} {r['comm_s'] * 1e3:>7.2f} {r['exposed_s'] * 1e3:>8.2f} "
              f"{hidden:>7} {r['wait_s'] * 1e3:>8.2f} {r['tokens_per_s'] / base:>8.2f}x")
    print("compute: the step without its allreduce (no_sync); comm: the buckets' allreduce alone; exposed: step "
          "- compute;\nhidden = 1 - exposed / comm; ddp wait: backward's wait for its buckets (includes the ranks' skew)")


def train_bench(args):
    """train.py on the shakespeare_char config (data prepared from --input in a temporary folder): 1 process
    with 2 threads vs 2 ranks with 1 thread each (and 1 process with 1 thread), the same tokens per
    iteration (gradient_accumulation_steps=2 in all), the runs alternated `rounds` times."""
    import tempfile

    flags = ["config/train_shakespeare_char.py", f"--max_iters={args.iters}", "--eval_interval=100000",
             "--eval_iters=1", "--log_interval=1", "--progress=False", "--gradient_accumulation_steps=2",
             f"--batch_size={args.batch or 8}", f"--block_size={args.block}", "--dropout=0.0",
             f"--lr_decay_iters={args.iters}", "--peak_flops=1e12"]
    found = {}
    with tempfile.TemporaryDirectory() as tmp:
        flags.append(f"--data_dir={tmp}/data")
        if args.input:
            flags.append(f"--input={args.input}")
        jobs = (("1 process x 2 threads", [sys.executable, "train.py"], 2),
                ("2 ranks x 1 thread", ["mpiexec", "-n", "2", sys.executable, "train.py"], 1),
                ("1 process x 1 thread", [sys.executable, "train.py"], 1))
        for rnd in range(args.rounds):
            for job, (name, cmd, threads) in enumerate(jobs):
                env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_NUM_THREADS=str(threads),
                           OPENBLAS_NUM_THREADS=str(threads))
                out = subprocess.run(cmd + flags + [f"--out_dir={tmp}/{rnd}-{job}"], env=env, cwd=ROOT,
                                     capture_output=True, text=True, check=True).stdout
                toks = [float(m.replace(",", "")) for m in re.findall(r"([\d,]+) tok/s", out)][2:]  # past warm-up
                found.setdefault(name, []).extend(toks)
    base = statistics.median(found["1 process x 2 threads"])
    print(f"train.py config/train_shakespeare_char.py --batch_size={args.batch or 8} --block_size={args.block}, "
          f"{args.iters} iterations x {args.rounds} rounds, median tokens/s past the first two iterations")
    for name, toks in found.items():
        print(f"{name:>24} {statistics.median(toks):>10,.0f} tok/s {statistics.median(toks) / base:>6.2f}x")


GPT2_124M_PARAMS = 124_475_904  # GPT(GPTConfig()) with vocab 50304, weights tied: float32 gradients of ~498 MB
LINKS = {  # (allreduce bus bandwidth in bytes/s: what each rank sends per second in a ring, latency of one ring step)
    "this machine (MPI, shared memory)": (None, 25e-6),  # measured here: --bandwidth; 52 us per 2-rank tiny allreduce
    "InfiniBand HDR 200 Gb/s": (25e9 * 0.8, 5e-6),  # ~80% of the link's rate, as NCCL's tests reach
    "InfiniBand NDR 400 Gb/s": (50e9 * 0.8, 5e-6),
    "NVLink 3 (A100, NVSwitch)": (230e9, 3e-6),
    "NVLink 4 (H100, NVSwitch)": (450e9, 3e-6),
}
RANKS = [8, 16, 64, 256, 1024]


def scaling(args):
    """Efficiency of N ranks = compute / (compute + exposed allreduce). Allreducing B bytes in a
    ring costs 2 (N - 1) / N x B / bandwidth plus 2 (N - 1) steps of latency per bucket; the
    overlap with backward hides `hidden` of it."""
    nbytes = GPT2_124M_PARAMS * 4
    buckets = -(-nbytes // int(args.bucket_cap_mb * 2 ** 20))
    print(f"GPT-2 124M: {nbytes / 1e6:.0f} MB of float32 gradients in {buckets} buckets per sync; compute per "
          f"sync {args.compute:g} s; the overlap hides {args.hidden * 100:.0f}% of the allreduce")
    print(f"{'link':>36} {'GB/s':>6} {'us':>4} " + " ".join(f"{'N=' + str(n):>6}" for n in RANKS))
    for name, (bw, alpha) in LINKS.items():
        bw = bw or args.bandwidth
        effs = []
        for n in RANKS:
            comm = 2 * (n - 1) / n * nbytes / bw + buckets * 2 * (n - 1) * alpha
            effs.append(args.compute / (args.compute + (1 - args.hidden) * comm))
        print(f"{name:>36} {bw / 1e9:>6.1f} {alpha * 1e6:>4.0f} " + " ".join(f"{e * 100:>5.0f}%" for e in effs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="baby", choices=sorted(PRESETS))
    ap.add_argument("--batch", type=int, default=0, help="per-rank batch size (0: the preset's)")
    ap.add_argument("--block", type=int, default=128, help="--train: block_size")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0)
    ap.add_argument("--train", action="store_true", help="time train.py itself (the issue's 0.9x bar)")
    ap.add_argument("--iters", type=int, default=8, help="--train: iterations per run")
    ap.add_argument("--rounds", type=int, default=2, help="--train: alternations of the two runs")
    shared = ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"
    ap.add_argument("--input", default=str(shared) if shared.exists() else "",
                    help="--train: Tiny Shakespeare's text (else data/shakespeare_char must be prepared)")
    ap.add_argument("--scaling", action="store_true", help="print the scaling model (docs/distributed.md)")
    ap.add_argument("--compute", type=float, default=4.65, help="--scaling: compute seconds per gradient sync")
    ap.add_argument("--bandwidth", type=float, default=0.89e9, help="--scaling: this machine's allreduce bytes/s")
    ap.add_argument("--hidden", type=float, default=0.0, help="--scaling: share of the allreduce the overlap hides")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
    elif args.scaling:
        scaling(args)
    elif args.train:
        train_bench(args)
    else:
        steps_bench(args)


if __name__ == "__main__":
    main()
