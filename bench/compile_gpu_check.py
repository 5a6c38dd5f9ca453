"""minigrad.compile on a GPU (a step of bench/gpu_check.sh; this machine's CPU cannot run it):

  1. a fused elementwise chain (cupy ElementwiseKernel) gives eager's bits;
  2. the baby GPT's evaluation forward (no_grad, eval) replays through a CUDA graph: the logits equal
     eager's bit for bit over three calls with new inputs, and the time per call is printed for eager,
     step-by-step replay and graph replay;
  3. a compiled training step (dropout, AdamW) on cuda equals eager over three steps (losses and
     parameters bit for bit) and is refused a graph with its reason.

    PYTHONPATH=. python bench/compile_gpu_check.py      # exit status 0 when every check holds
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import minigrad  # noqa: E402
import minigrad.cuda  # noqa: E402
from bench.train_bench import PRESETS, batches, model_config  # noqa: E402
from minigrad.compiler import cuda_graph, fusion  # noqa: E402

failures = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def _program(f):
    return next(iter((f._compiled if hasattr(f, "_compiled") else f).cache.values()))


def fused_chain():
    import cupy as cp

    def f(x, v, z):
        with minigrad.no_grad():
            return -(x * v + z) / (z * z + 1.5) - x

    c = minigrad.compile(f)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, v, z = (minigrad.tensor(rng.standard_normal(s).astype(np.float32), device="cuda")
                   for s in ((256, 64), (64,), (256, 64)))
        same = bool(cp.array_equal(c(x, v, z).array, f(x, v, z).array))
    fused = [s for s in _program(c).steps if isinstance(s, fusion.Fused)]
    check(same and len(fused) == 2, f"fused chain on cupy: eager's bits, {len(fused)} kernels")


def _timed(fn, n=20):
    import cupy as cp

    fn()
    cp.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    cp.cuda.get_current_stream().synchronize()
    return (time.perf_counter() - t0) / n * 1e3


def eval_graph():
    import cupy as cp

    from gpt.model import GPT

    p = PRESETS["baby"]
    minigrad.manual_seed(0)
    model = GPT(model_config(p)).to("cuda").eval()
    data = [minigrad.tensor(x, device="cuda") for x, _ in batches(p, 4)]

    def forward(x):
        with minigrad.no_grad():
            return model(x)[0]

    graphed = minigrad.compile(forward)
    same = True
    for x in data[:3]:
        same &= bool(cp.array_equal(graphed(x).array, forward(x).array))
    program = _program(graphed)
    check(program.graph is not None and program.graph.graph is not None,
          f"eval forward replays through a CUDA graph (reason if not: {program.graph_reason})")
    check(same, "eval forward through the graph: eager's logits bit for bit")
    cuda_graph.ENABLED = False
    stepwise = minigrad.compile(forward)
    stepwise(data[0])
    cuda_graph.ENABLED = True
    x = data[3]
    print(f"baby eval forward ms/call: eager {_timed(lambda: forward(x)):.2f}, "
          f"replay {_timed(lambda: stepwise(x)):.2f}, CUDA graph {_timed(lambda: graphed(x)):.2f}")


def _train_step(model, opt):
    def step(x, y):  # model and opt in its closure, so the guards see the model
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return step


def train_steps():
    import cupy as cp

    from gpt.model import GPT

    p = PRESETS["baby"]
    runs = []
    for compiled in (False, True):
        minigrad.manual_seed(0)
        model = GPT(model_config(p, dropout=0.1)).to("cuda")
        opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95))

        step = _train_step(model, opt)
        f = minigrad.compile(step) if compiled else step
        losses = [f(minigrad.tensor(x, device="cuda"), minigrad.tensor(y, device="cuda")).array.get()
                  for x, y in batches(p, 3)]
        runs.append((losses, [cp.asnumpy(q.array) for q in model.parameters()], f))
    (le, pe, _), (lc, pc, f) = runs
    check(all(np.array_equal(a, b) for a, b in zip(le, lc)) and all(np.array_equal(a, b) for a, b in zip(pe, pc)),
          "compiled training step on cuda: eager's losses and parameters bit for bit")
    print(f"training step's graph: refused ({_program(f).graph_reason})")


def main():
    if not minigrad.cuda.is_available():
        print("FAIL: no CUDA GPU")
        return 1
    for fn in (fused_chain, eval_graph, train_steps):
        try:
            fn()
        except Exception as e:  # one failing check must not hide the others
            check(False, f"{fn.__name__} raised {type(e).__name__}: {e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
