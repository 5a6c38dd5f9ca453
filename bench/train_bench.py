"""Training-step benchmark: minigrad vs PyTorch (nanoGPT's model), side by side in one run.

    python bench/train_bench.py --preset baby            # or shakespeare_char, gpt2, tiny (per-op overhead)
    python bench/train_bench.py --preset baby --steps 30 --chunk 5

Each framework runs in its own worker process (BLAS/OpenMP threads that spin after a call would
slow the other down), both with the same weights and the same batches. The parent alternates
them, `--chunk` steps at a time, so machine noise hits both alike. Reported per framework:
median tokens/s, median ms of forward / backward / optimizer, peak RSS of the process, MFU
(FLOPs per token as nanoGPT counts them, against this machine's matmul peak: the best of numpy's,
minigrad's through each BLAS it finds, and PyTorch's), and the ratio minigrad / PyTorch. minigrad's
workers use the BLAS chosen for this machine (minigrad/backends/cpu/blas_library.py; MINIGRAD_BLAS
forces one), printed with the peak.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRESETS = {
    "baby": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, vocab_size=65),
    "shakespeare_char": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, vocab_size=65),
    # per-op overhead: the baby model's graph at width 8 and 4 positions, where the arithmetic costs next to nothing
    "tiny": dict(n_layer=4, n_head=4, n_embd=8, block_size=4, batch_size=1, vocab_size=65),
    "gpt2": dict(n_layer=12, n_head=12, n_embd=768, block_size=1024, batch_size=1, vocab_size=50304),
}


def model_config(p, dropout=0.0):
    from gpt.model import GPTConfig

    return GPTConfig(block_size=p["block_size"], vocab_size=p["vocab_size"], n_layer=p["n_layer"],
                     n_head=p["n_head"], n_embd=p["n_embd"], dropout=dropout, bias=False)


def batches(p, n, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    for _ in range(n):
        x = rng.integers(0, p["vocab_size"], size=(p["batch_size"], p["block_size"] + 1))
        yield x[:, :-1].copy(), x[:, 1:].copy()


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- workers --------------------------------------------------------------------------------
def timed_step(forward, optimizer, sync=None):
    """One training step, `loss = forward()`, backward, `optimizer` step and zero_grad, timed:
    (loss, forward s, backward s, optimizer s). `sync` waits for a GPU's queued work before each
    clock reading (asynchronous devices would otherwise be timed as they queue, not as they run)."""
    sync = sync or (lambda: None)
    sync()
    t0 = time.perf_counter()
    loss = forward()
    sync()
    t1 = time.perf_counter()
    loss.backward()
    sync()
    t2 = time.perf_counter()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    sync()
    t3 = time.perf_counter()
    return loss.item(), t1 - t0, t2 - t1, t3 - t2


class MinigradStep:
    def __init__(self, p, weights):
        import minigrad
        import nn
        from gpt.model import GPT

        self.mg = minigrad
        minigrad.backends.tune_process()  # a worker process of its own: tuned as train.py's
        minigrad.manual_seed(0)
        self.model = GPT(model_config(p))
        sd = nn.load(weights)
        self.model.load_state_dict(sd)
        self.opt = self.model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))

    def step(self, x, y):
        mg = self.mg
        return timed_step(lambda: self.model(mg.tensor(x), mg.tensor(y))[1], self.opt)


class TorchStep:
    def __init__(self, p, weights):
        import numpy as np
        import torch

        from bench.nanogpt_torch import GPT

        self.torch = torch
        torch.manual_seed(0)
        self.model = GPT(model_config(p))
        import nn  # only to read the weights file (numpy arrays); minigrad does no work here

        sd = {k: torch.from_numpy(np.array(v.array)) for k, v in nn.load(weights).items()}
        self.model.load_state_dict(sd)
        self.opt = self.model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))

    def step(self, x, y):
        torch = self.torch
        return timed_step(lambda: self.model(torch.from_numpy(x), torch.from_numpy(y))[1], self.opt)


def worker(framework, preset, weights):
    """Read 'run N' lines from stdin, answer one JSON line of timings per chunk."""
    if framework == "peak":  # a process of its own: its memory and threads stay out of the workers'
        peak, rates = measured_peak_flops(weights.split(","))  # (here: the frameworks compared)
        from minigrad.backends.cpu import blas_library

        blas = blas_library.library()  # chosen (and cached) here, so the workers only read the choice
        print(json.dumps({"peak": peak, "rates": rates, "blas": blas.name if blas else "none"}), flush=True)
        return
    p = PRESETS[preset]
    stepper = (MinigradStep if framework == "minigrad" else TorchStep)(p, weights)
    data = batches(p, 10**9)
    print(json.dumps({"ready": True, "rss": peak_rss_mib()}), flush=True)
    for line in sys.stdin:
        n = int(line.split()[1])
        out = [stepper.step(*next(data)) for _ in range(n)]
        print(json.dumps({"steps": out, "rss": peak_rss_mib()}), flush=True)


# ---- parent ---------------------------------------------------------------------------------
def measured_peak_flops(frameworks):
    """float32 GEMM FLOP/s of this machine (all cores), the MFU denominator: the best of the matrix
    products measured here at 1024^3 (numpy's matmul, minigrad's products through each BLAS library
    it finds, PyTorch's matmul), so that no framework's MFU passes 100%. Returns (best, {name: FLOP/s})."""
    import numpy as np

    from minigrad.backends.cpu import blas_library
    from nn._functional.linear import linear_arrays

    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    out = np.empty_like(a)
    rates = {"numpy": _best_rate(lambda: np.matmul(a, a, out=out))}
    forced = os.environ.get(blas_library.ENV)
    try:
        for name in sorted(blas_library.found()):
            os.environ[blas_library.ENV] = name
            blas_library.forget()
            rates[f"minigrad {name}"] = _best_rate(lambda: linear_arrays(a, a))  # a a^T on the kernels' team
    finally:
        if forced is None:
            os.environ.pop(blas_library.ENV, None)
        else:
            os.environ[blas_library.ENV] = forced
        blas_library.forget()
    if "torch" in frameworks:
        import torch

        t = torch.from_numpy(a)
        rates["torch"] = _best_rate(lambda: torch.matmul(t, t))
    return max(rates.values()), rates


def _best_rate(fn, repeats=10):
    fn()
    return 2 * 1024**3 / min(_timed(fn) for _ in range(repeats))


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def spawn(framework, preset, weights, root=ROOT, env=None):
    """A worker process running this benchmark as source tree `root` has it (bench/ab_bench.py passes
    other checkouts), in this process's environment with `env` on top: `root` first on PYTHONPATH,
    then any PYTHONPATH given in `env`."""
    root = str(root)
    extra = dict(env or {})
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([root] + ([extra["PYTHONPATH"]] if "PYTHONPATH" in extra else []))
    proc = subprocess.Popen([sys.executable, os.path.join(root, "bench", "train_bench.py"), "--worker", framework,
                             "--preset", preset, "--weights", weights],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=root)
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"a benchmark worker ({framework}, {root}) did not start (see its error above)")
    json.loads(line)
    return proc


def run_chunk(proc, n):
    proc.stdin.write(f"run {n}\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError("a benchmark worker died (see its error above)")
    return json.loads(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    ap.add_argument("--steps", type=int, default=20, help="measured steps per framework (after warm-up)")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured steps per framework first")
    ap.add_argument("--chunk", type=int, default=5, help="steps run by one framework before switching")
    ap.add_argument("--only", choices=["minigrad", "torch"], help="run one framework alone")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--weights", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.preset, args.weights)

    p = PRESETS[args.preset]
    frameworks = ["minigrad", "torch"]
    if args.only:
        frameworks = [args.only]
    else:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("torch is not installed: measuring minigrad alone")
            frameworks = ["minigrad"]

    import minigrad
    import nn
    from gpt.model import GPT

    minigrad.manual_seed(1337)
    model = GPT(model_config(p))
    flops_per_token = model.flops_per_token()
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        nn.save(model.state_dict(), weights)
        del model
        found = json.loads(subprocess.run([sys.executable, __file__, "--worker", "peak", "--weights", ",".join(frameworks)],
                                          stdout=subprocess.PIPE, text=True, check=True).stdout)
        peak, rates, blas = found["peak"], found["rates"], found["blas"]
        procs = {f: spawn(f, args.preset, weights) for f in frameworks}
        results = {f: [] for f in frameworks}
        rss = {}
        for f in frameworks:
            run_chunk(procs[f], args.warmup)
        done = 0
        while done < args.steps:
            n = min(args.chunk, args.steps - done)
            for f in frameworks:
                r = run_chunk(procs[f], n)
                results[f] += r["steps"]
                rss[f] = r["rss"]
            done += n
        for proc in procs.values():
            proc.stdin.close()
            proc.wait()

    tokens = p["batch_size"] * p["block_size"]
    print(f"preset {args.preset}: {p}, {tokens} tokens/step, {args.steps} steps each, "
          f"minigrad's BLAS {blas}, "
          f"matmul peak {peak / 1e9:.0f} GFLOP/s (best of {', '.join(f'{k} {v / 1e9:.0f}' for k, v in rates.items())})")
    print(f"{'framework':<10} {'tokens/s':>10} {'fwd ms':>9} {'bwd ms':>9} {'opt ms':>8} {'step ms':>9} "
          f"{'GFLOP/s':>8} {'MFU':>6} {'peak RSS MiB':>13}")
    summary = {}
    for f in frameworks:
        steps = results[f]
        total = [s[1] + s[2] + s[3] for s in steps]
        med = statistics.median(total)
        tok_s = tokens / med
        gflops = flops_per_token * tokens / med / 1e9
        summary[f] = dict(tokens_per_s=tok_s, rss=rss[f])
        print(f"{f:<10} {tok_s:>10,.0f} {statistics.median(s[1] for s in steps) * 1e3:>9.1f} "
              f"{statistics.median(s[2] for s in steps) * 1e3:>9.1f} {statistics.median(s[3] for s in steps) * 1e3:>8.1f} "
              f"{med * 1e3:>9.1f} {gflops:>8.1f} {gflops * 1e9 / peak * 100:>5.1f}% {rss[f]:>13,.0f}")
    if len(frameworks) == 2:
        m, t = summary["minigrad"], summary["torch"]
        print(f"ratio minigrad/PyTorch: tokens/s {m['tokens_per_s'] / t['tokens_per_s']:.2f}, "
              f"peak RSS {m['rss'] / t['rss']:.2f}")
        losses = [results[f][0][0] for f in frameworks]
        print(f"first measured loss: minigrad {losses[0]:.4f}, PyTorch {losses[1]:.4f} (same weights, same batches)")


if __name__ == "__main__":
    main()
