"""Training-step benchmark on the GPU: minigrad (cupy) vs PyTorch CUDA eager fp32, side by side.

    python bench/train_bench_gpu.py --preset shakespeare_char                 # batch 64
    python bench/train_bench_gpu.py --preset gpt2 --batch_size 8 --steps 10
    python bench/train_bench_gpu.py --preset baby --frameworks minigrad_fused,torch --tf32

Frameworks: `minigrad` (every op's own code on cupy: MINIGRAD_KERNELS=numpy), `minigrad_fused` (the
CUDA backend, minigrad/backends/cuda: MINIGRAD_KERNELS=fast) and `torch` (bench/nanogpt_torch.py, eager, float32). Same weights, same
batches, same TF32 setting (off unless --tf32) for all. As bench/train_bench.py, each framework runs
in its own worker process and the parent alternates them `--chunk` steps at a time.

Timing: the GPU is synchronised before and after each phase (forward, backward, optimizer), so a
step's time is what it takes on the GPU, queue drained. Peak memory: after the timed steps, one
more step is run with peak tracking reset just before it (`torch.cuda.reset_peak_memory_stats` /
`minigrad.cuda.reset_peak_memory_stats`), so it counts weights, gradients, optimizer state and
activations of a steady-state step, the same way for both (minigrad's tracking hook is not
active while steps are timed). Reported per framework: median tokens/s, median ms of forward /
backward / optimizer, peak GPU memory, and the ratios against PyTorch.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.train_bench import PRESETS, batches, model_config, timed_step  # noqa: E402

FRAMEWORKS = ("minigrad", "minigrad_fused", "torch")


def preset(name, batch_size=None):
    p = dict(PRESETS[name])
    if batch_size:
        p["batch_size"] = int(batch_size)
    return p


# ---- workers --------------------------------------------------------------------------------------
class MinigradGPUStep:
    def __init__(self, p, weights, fused, tf32):
        import minigrad
        import minigrad.cuda
        import nn
        from gpt.model import GPT
        self.mg, self.cuda = minigrad, minigrad.cuda
        minigrad.cuda.set_tf32(tf32)
        minigrad.set_kernels("fast" if fused else "numpy")
        minigrad.manual_seed(0)
        self.model = GPT(model_config(p))
        self.model.load_state_dict(nn.load(weights))
        self.model.to("cuda")
        self.opt = self.model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
        self.cuda.synchronize()

    def step(self, x, y):
        mg = self.mg
        return timed_step(lambda: self.model(mg.tensor(x, device="cuda"), mg.tensor(y, device="cuda"))[1], self.opt,
                          self.cuda.synchronize)

    def peak(self, x, y):
        self.cuda.reset_peak_memory_stats()
        self.step(x, y)
        peak = self.cuda.max_memory_allocated()
        self.cuda.stop_peak_tracking()
        return peak


class TorchGPUStep:
    def __init__(self, p, weights, tf32):
        import numpy as np
        import torch

        import nn  # only to read the weights file (numpy arrays)
        from bench.nanogpt_torch import GPT

        self.torch = torch
        torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
        torch.backends.cudnn.allow_tf32 = bool(tf32)
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        torch.manual_seed(0)
        self.model = GPT(model_config(p))
        sd = {k: torch.from_numpy(np.array(v.array)) for k, v in nn.load(weights).items()}
        self.model.load_state_dict(sd)
        self.model.to("cuda")
        self.opt = self.model.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
        torch.cuda.synchronize()

    def step(self, x, y):
        torch = self.torch
        return timed_step(lambda: self.model(torch.from_numpy(x).to("cuda"), torch.from_numpy(y).to("cuda"))[1],
                          self.opt, torch.cuda.synchronize)

    def peak(self, x, y):
        self.torch.cuda.reset_peak_memory_stats()
        self.step(x, y)
        return int(self.torch.cuda.max_memory_allocated())


def worker(framework, p, weights, tf32):
    """Read 'run N' / 'peak' lines from stdin; answer one JSON line each."""
    if framework == "torch":
        stepper = TorchGPUStep(p, weights, tf32)
    else:
        stepper = MinigradGPUStep(p, weights, framework == "minigrad_fused", tf32)
    data = batches(p, 10**9)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "run":
            out = [stepper.step(*next(data)) for _ in range(int(cmd[1]))]
            print(json.dumps({"steps": out}), flush=True)
        elif cmd[0] == "peak":
            print(json.dumps({"peak": stepper.peak(*next(data))}), flush=True)


# ---- parent ---------------------------------------------------------------------------------------
class Worker:
    def __init__(self, framework, args, weights):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, __file__, "--worker", framework, "--preset", args.preset, "--weights", weights]
        if args.batch_size:
            cmd += ["--batch_size", str(args.batch_size)]
        if args.tf32:
            cmd.append("--tf32")
        self.name = framework
        self.error = None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        self._read()

    def _read(self):
        """The worker's next JSON answer (other lines it prints are passed through)."""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.proc.wait()
                raise RuntimeError(f"the {self.name} worker died (exit {self.proc.returncode}; its error is above)")
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    pass
            print(f"[{self.name}] {line.rstrip()}", flush=True)

    def ask(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except Exception:
            self.proc.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="shakespeare_char")
    ap.add_argument("--batch_size", type=int, default=None, help="override the preset's batch size")
    ap.add_argument("--steps", type=int, default=20, help="measured steps per framework (after warm-up)")
    ap.add_argument("--warmup", type=int, default=3, help="unmeasured steps per framework first")
    ap.add_argument("--chunk", type=int, default=5, help="steps run by one framework before switching")
    ap.add_argument("--frameworks", default=",".join(FRAMEWORKS), help="comma-separated, of " + ", ".join(FRAMEWORKS))
    ap.add_argument("--tf32", action="store_true", help="TF32 matmuls in every framework (default: off, fp32)")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--weights", help=argparse.SUPPRESS)
    args = ap.parse_args()
    p = preset(args.preset, args.batch_size)
    if args.worker:
        return worker(args.worker, p, args.weights, args.tf32)

    frameworks = [f for f in args.frameworks.split(",") if f]
    for f in frameworks:
        if f not in FRAMEWORKS:
            ap.error(f"unknown framework {f!r}: choose from {', '.join(FRAMEWORKS)}")

    import minigrad
    import nn
    from gpt.model import GPT

    minigrad.manual_seed(1337)
    model = GPT(model_config(p))
    flops_per_token = model.flops_per_token()
    tokens = p["batch_size"] * p["block_size"]
    results = {f: {"steps": [], "peak": None, "error": None} for f in frameworks}
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.safetensors")
        nn.save(model.state_dict(), weights)
        del model
        workers = {}
        for f in frameworks:  # started one after another: each compiles / initialises CUDA alone
            try:
                t = time.perf_counter()
                workers[f] = Worker(f, args, weights)
                workers[f].ask(f"run {args.warmup}")
                print(f"[{f}] ready and warmed up in {time.perf_counter() - t:.1f} s", flush=True)
            except Exception as e:  # report it and go on with the others
                results[f]["error"] = str(e)
                print(f"[{f}] FAILED to start: {e}", flush=True)
        done = 0
        while done < args.steps and workers:
            n = min(args.chunk, args.steps - done)
            for f, w in list(workers.items()):
                try:
                    results[f]["steps"] += w.ask(f"run {n}")["steps"]
                except Exception as e:
                    results[f]["error"] = str(e)
                    print(f"[{f}] FAILED: {e}", flush=True)
                    del workers[f]
            done += n
        for f, w in workers.items():
            try:
                results[f]["peak"] = w.ask("peak")["peak"]
            except Exception as e:
                results[f]["error"] = str(e)
            w.close()

    print(f"\npreset {args.preset}: {p}, {tokens} tokens/step, {args.steps} steps each, "
          f"TF32 {'on' if args.tf32 else 'off'} (fp32 {'tensor-core TF32' if args.tf32 else 'IEEE'} matmuls)")
    print(f"{'framework':<15} {'tokens/s':>11} {'fwd ms':>9} {'bwd ms':>9} {'opt ms':>8} {'step ms':>9} "
          f"{'TFLOP/s':>8} {'peak GPU MiB':>13}  first loss")
    summary = {}
    for f in frameworks:
        r = results[f]
        steps = r["steps"]
        if not steps:
            print(f"{f:<15} FAILED: {r['error']}")
            summary[f] = {"error": r["error"]}
            continue
        total = [s[1] + s[2] + s[3] for s in steps]
        med = statistics.median(total)
        tok_s = tokens / med
        peak_mib = r["peak"] / 2**20 if r["peak"] is not None else float("nan")
        summary[f] = dict(tokens_per_s=tok_s, step_ms=med * 1e3, fwd_ms=statistics.median(s[1] for s in steps) * 1e3,
                          bwd_ms=statistics.median(s[2] for s in steps) * 1e3,
                          opt_ms=statistics.median(s[3] for s in steps) * 1e3, peak_mib=peak_mib,
                          first_loss=steps[0][0], error=r["error"])
        s = summary[f]
        print(f"{f:<15} {tok_s:>11,.0f} {s['fwd_ms']:>9.1f} {s['bwd_ms']:>9.1f} {s['opt_ms']:>8.1f} {med * 1e3:>9.1f} "
              f"{flops_per_token * tokens / med / 1e12:>8.1f} {peak_mib:>13,.0f}  {steps[0][0]:.4f}")
    base = summary.get("torch")
    if base and "tokens_per_s" in base:
        for f in frameworks:
            s = summary[f]
            if f != "torch" and "tokens_per_s" in s:
                print(f"ratio {f}/PyTorch: tokens/s {s['tokens_per_s'] / base['tokens_per_s']:.2f}, "
                      f"peak GPU memory {s['peak_mib'] / base['peak_mib']:.2f}")
                s["tokens_ratio"] = s["tokens_per_s"] / base["tokens_per_s"]
                s["memory_ratio"] = s["peak_mib"] / base["peak_mib"]
    if args.json:
        Path(args.json).write_text(json.dumps({"preset": args.preset, "config": p, "tf32": args.tf32,
                                               "results": summary}, indent=1))
    failed = [f for f in frameworks if summary[f].get("error") or "tokens_per_s" not in summary[f]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
