"""minigrad.compile vs eager minigrad vs PyTorch eager vs torch.compile: training steps per second,
capture (compile) time, peak RSS.

    python bench/compile_bench.py                      # baby, a small GPT, a small MLP; 30 steps each
    python bench/compile_bench.py --preset tiny --steps 5 --no-torch-compile
    python bench/compile_bench.py --interleaved        # and eager/compiled alternating in one process
    python bench/compile_bench.py --interleaved --kinds rnn bow   # issue 30's small kinds (and these only)

Each (model, mode) runs in its own worker process, so each peak RSS is its own. A step is the
whole training step (forward, backward, AdamW step, zero_grad) with dropout 0.1, compiled whole
("compiled"), or as PyTorch scripts do, `model = compile(model)` with backward and the optimizer
outside ("module": the forward replayed as one op with its own backward, aot.py); the first call
(minigrad's capture, torch.compile's compile) is timed apart and left out of the steps/s, which is
the median of the timed steps. PyTorch runs nanoGPT's model (bench/nanogpt_torch.py) on the same
config. The CPU is named; the speed-ups are against eager minigrad of the same run. With --interleaved,
issue 30's small models (bench/small_models_bench.py's kinds of the same names: char RNN and GRU loops,
their cells written out, a bag of words, a 2-layer transformer of width 64) are compared too, eager
against compiled whole. "steps peak" is
the arrays' peak (tracemalloc) over three steps after the timed ones: the capture's left out.
"""
import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.train_bench import PRESETS, batches, model_config, peak_rss_mib  # noqa: E402

MLP = dict(width=128, depth=4, batch_size=64, inputs=64, classes=10)
SMALL_KINDS = ("rnn", "gru", "rnn_cells", "gru_cells", "bow", "transformer")  # issue 30's, small_models_bench's
SMALL = dict(n_layer=2, n_head=4, n_embd=64, block_size=64, batch_size=12, vocab_size=65)  # the small GPT


def _cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _gpt_step(preset, compile_model=False):
    import minigrad

    from gpt.model import GPT

    p = SMALL if preset == "small" else PRESETS[preset]
    minigrad.manual_seed(0)
    model = GPT(model_config(p, dropout=0.1))
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    fwd = minigrad.compile(model) if compile_model else model

    def step(x, y):
        _, loss = fwd(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def data(n):
        return [(minigrad.tensor(x), minigrad.tensor(y)) for x, y in batches(p, n)]

    return step, data, p["batch_size"] * p["block_size"]


def _mlp_step(compile_model=False):
    import numpy as np

    import minigrad
    import nn
    import nn.functional as F

    minigrad.manual_seed(0)
    layers = []
    width = MLP["inputs"]
    for _ in range(MLP["depth"] - 1):
        layers += [nn.Linear(width, MLP["width"]), nn.GELU(), nn.Dropout(0.1)]
        width = MLP["width"]
    model = nn.Sequential(*layers, nn.Linear(width, MLP["classes"]))
    opt = nn.optim.AdamW(model.parameters(), lr=1e-3)
    fwd = minigrad.compile(model) if compile_model else model

    def step(x, y):
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def data(n):
        rng = np.random.default_rng(0)
        return [(minigrad.tensor(rng.standard_normal((MLP["batch_size"], MLP["inputs"])).astype(np.float32)),
                 minigrad.tensor(rng.integers(0, MLP["classes"], MLP["batch_size"]))) for _ in range(n)]

    return step, data, MLP["batch_size"]


def _torch_gpt_step(preset, compiled):
    import torch

    from bench.nanogpt_torch import GPT

    p = SMALL if preset == "small" else PRESETS[preset]
    torch.manual_seed(0)
    model = GPT(model_config(p, dropout=0.1))
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))
    fwd = torch.compile(model) if compiled else model

    def step(x, y):
        _, loss = fwd(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def data(n):
        return [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in batches(p, n)]

    return step, data


def _torch_mlp_step(compiled):
    import numpy as np
    import torch

    torch.manual_seed(0)
    layers = []
    width = MLP["inputs"]
    for _ in range(MLP["depth"] - 1):
        layers += [torch.nn.Linear(width, MLP["width"]), torch.nn.GELU(), torch.nn.Dropout(0.1)]
        width = MLP["width"]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, MLP["classes"]))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    fwd = torch.compile(model) if compiled else model

    def step(x, y):
        loss = torch.nn.functional.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def data(n):
        rng = np.random.default_rng(0)
        return [(torch.from_numpy(rng.standard_normal((MLP["batch_size"], MLP["inputs"])).astype(np.float32)),
                 torch.from_numpy(rng.integers(0, MLP["classes"], MLP["batch_size"]))) for _ in range(n)]

    return step, data


def worker(model, mode, steps):
    if mode.startswith("torch"):
        compiled = mode == "torch.compile"
        step, data = _torch_mlp_step(compiled) if model == "mlp" else _torch_gpt_step(model, compiled)
        f = step
    else:
        import minigrad

        minigrad.backends.tune_process()  # a worker process of its own: tuned as train.py's
        module = mode == "module"
        step, data, _ = _mlp_step(module) if model == "mlp" else _gpt_step(model, module)
        f = minigrad.compile(step) if mode == "compiled" else step
    batches_ = data(steps + 1)
    t0 = time.perf_counter()
    f(*batches_[0])  # compiled: the capture
    first = time.perf_counter() - t0
    times = []
    for x, y in batches_[1:]:
        t0 = time.perf_counter()
        f(x, y)
        times.append(time.perf_counter() - t0)
    stats = getattr(f, "stats", None)  # (the module mode's are its compiled model's: not counted)
    rss = peak_rss_mib()  # (the capture's included)
    tracemalloc.start()  # the arrays' peak over a few more steps, the capture's left out (after the timing:
    for x, y in batches_[1:4]:  # tracing each allocation slows it)
        f(x, y)
    steady = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return dict(first_s=first, median_s=statistics.median(times), rss_mib=rss, steady_mib=steady,
                replays=stats.replays if stats else 0)


def interleaved(model, steps, rounds=5):
    """Eager, compiled and module-compiled minigrad in one process on one model (three copies from one
    seed), alternating rounds of `steps` steps: {mode: best s/step}. The ratio of two figures taken
    side by side, minutes apart at most, is the one to trust on a shared machine."""
    import minigrad

    minigrad.backends.tune_process()
    step, data, _ = _mlp_step() if model == "mlp" else _gpt_step(model)
    module_step = (_mlp_step(True) if model == "mlp" else _gpt_step(model, True))[0]
    batches_ = data(steps + 2)
    compiled = minigrad.compile(step)
    modes = (("eager", step), ("compiled", compiled), ("module", module_step))
    for x, y in batches_[:2]:
        for _, f in modes:
            f(x, y)
    best = dict.fromkeys(dict(modes), float("inf"))
    for _ in range(rounds):
        for mode, f in modes:
            t0 = time.perf_counter()
            for x, y in batches_[2:]:
                f(x, y)
            best[mode] = min(best[mode], (time.perf_counter() - t0) / steps)
    return best


def interleaved_small(kind, steps, rounds=5):
    """A small_models_bench kind, eager and compiled (two copies from one seed) alternating in one
    process: {mode: best s/step}."""
    import minigrad

    from bench.small_models_bench import build, minigrad_as_torch

    minigrad.backends.tune_process()
    torch = minigrad_as_torch()
    torch.manual_seed(0)
    eager = build(torch, kind)
    torch.manual_seed(0)
    modes = (("eager", eager), ("compiled", minigrad.compile(build(torch, kind))))
    for _ in range(2):
        for _, f in modes:
            f()
    best = dict.fromkeys(dict(modes), float("inf"))
    for _ in range(rounds):
        for mode, f in modes:
            t0 = time.perf_counter()
            for _ in range(steps):
                f()
            best[mode] = min(best[mode], (time.perf_counter() - t0) / steps)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="baby", choices=sorted(PRESETS))
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--no-torch", action="store_true", help="minigrad alone")
    ap.add_argument("--no-torch-compile", action="store_true", help="skip torch.compile (its compile is slow)")
    ap.add_argument("--interleaved", action="store_true",
                    help="also eager and compiled alternating in one process (best of 5 rounds)")
    ap.add_argument("--kinds", nargs="*", default=None, choices=SMALL_KINDS,
                    help="with --interleaved: the small models compared (default all; alone when given)")
    ap.add_argument("--worker", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], args.steps)))
        return
    if args.interleaved and args.kinds:
        return print_small(args.kinds, args.steps)
    print(f"CPU: {_cpu_name()}; {args.steps} steps per run")
    modes = ["eager", "compiled", "module"] + ([] if args.no_torch else ["torch"]) + \
        ([] if args.no_torch or args.no_torch_compile else ["torch.compile"])
    print(f"{'model':>18} {'mode':>13} {'steps/s':>9} {'first call ms':>14} {'peak RSS MiB':>13} "
          f"{'steps peak MiB':>15} {'vs eager':>9}")
    for model in (args.preset, "small", "mlp"):
        eager = None
        for mode in modes:
            out = subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--worker", model, mode],
                                 capture_output=True, text=True)
            name = {"mlp": f"mlp {MLP['depth']}x{MLP['width']}", "small": "gpt 2x64"}.get(model, model)
            if out.returncode != 0:
                print(f"{name:>18} {mode:>13} failed: {(out.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            rate = 1 / r["median_s"]
            eager = eager or rate
            print(f"{name:>18} {mode:>13} {rate:9.1f} {r['first_s'] * 1e3:14.1f} {r['rss_mib']:13.0f} "
                  f"{r['steady_mib']:15.1f} {rate / eager:8.2f}x")
    if args.interleaved:
        print("eager, compiled (the whole step) and module (compile(model)) alternating in one process, "
              "best of 5 rounds:")
        for model in ("tiny", args.preset, "small", "mlp"):
            best = interleaved(model, args.steps)
            print(f"{model:>18}  eager {best['eager'] * 1e3:8.2f} ms  compiled {best['compiled'] * 1e3:8.2f} ms "
                  f"{best['eager'] / best['compiled']:5.2f}x  module {best['module'] * 1e3:8.2f} ms "
                  f"{best['eager'] / best['module']:5.2f}x")
        print_small(SMALL_KINDS, args.steps)


def print_small(kinds, steps):
    print(f"CPU: {_cpu_name()}; small models, eager and compiled alternating in one process, best of 5 rounds of "
          f"{steps} steps:")
    for kind in kinds:
        best = interleaved_small(kind, steps)
        print(f"{kind:>18}  eager {best['eager'] * 1e3:8.3f} ms  compiled {best['compiled'] * 1e3:8.3f} ms "
              f"{best['eager'] / best['compiled']:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
