"""Per-call cost of minigrad.compile around small work: compiled against eager, in one process, taking turns.

    python bench/compile_call_bench.py                   # every case
    python bench/compile_call_bench.py gru trivial       # some
    PYTHONPATH=/path/to/other/tree python bench/compile_call_bench.py   # another tree, to compare

Cases: `trivial`, a compiled `lambda x: x` (the guard and the replay alone) and `lambda x: x + 1`; the
module form `model = minigrad.compile(model)` with the loss, backward and an SGD step outside the call:
`mlp` (Linear(32, 64), ReLU, Linear(64, 10) on a batch of 16, cross_entropy), `gru` (nn.GRUCell(32, 64)
unrolled over 10 steps on a batch of 8, us per cell call) and `encoder` (a 2-layer nn.TransformerEncoder,
width 32, on (4, 8, 32)). Each round runs the compiled and the eager form (who goes first alternating);
printed: us per call of each one's best round, the best rounds' ratio and the median of the rounds'
ratios (the machine may be shared: the best round is the steadiest figure). Whole training steps
compiled: `bench/small_models_bench.py --interleaved --frameworks minigrad+compile minigrad torch`.
"""
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MINIGRAD_NUM_THREADS", "1")

import minigrad  # noqa: E402
import nn  # noqa: E402
import nn.functional as F  # noqa: E402


def trivial(body):
    def case():
        x = minigrad.randn(4, 4)
        compiled = minigrad.compile(body)
        compiled(x)
        return (lambda: compiled(x)), (lambda: body(x)), 1
    return case


def module_case(build, inputs, calls_per_step):
    """A step: the model's forward (compiled, or not), the loss, zero_grad, backward, SGD's step."""
    def case():
        steps = []
        for compiled in (True, False):
            minigrad.manual_seed(0)
            model, loss_of = build()
            m = minigrad.compile(model) if compiled else model
            opt = nn.optim.SGD(model.parameters(), lr=0.01)
            args = inputs()

            def step(m=m, loss_of=loss_of, opt=opt, args=args):
                loss = loss_of(m, *args)
                opt.zero_grad()
                loss.backward()
                opt.step()
            step()
            step()
            steps.append(step)
        return steps[0], steps[1], calls_per_step
    return case


def mlp():
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    return model, lambda m, x, y: F.cross_entropy(m(x), y)


def gru():
    def loss_of(m, xs, h):
        for x in xs:
            h = m(x, h)
        return h.pow(2).mean()
    return nn.GRUCell(32, 64), loss_of


def encoder():
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False), lambda m, x: m(x).pow(2).mean()


CASES = {
    "trivial": trivial(lambda x: x),
    "trivial_add": trivial(lambda x: x + 1),
    "mlp": module_case(mlp, lambda: (minigrad.randn(16, 32), minigrad.randint(0, 10, (16,))), 1),
    "gru": module_case(gru, lambda: ([minigrad.randn(8, 32) for _ in range(10)], minigrad.zeros(8, 64)), 10),
    "encoder": module_case(encoder, lambda: (minigrad.randn(4, 8, 32),), 1),
}


def run(name, rounds=15, calls=200):
    compiled, eager, per = CASES[name]()
    steps = max(1, calls // per)
    best = {"compiled": float("inf"), "eager": float("inf")}
    ratios = []
    for r in range(rounds):
        took = {}
        for label, fn in (("compiled", compiled), ("eager", eager))[::1 if r % 2 == 0 else -1]:
            start = time.perf_counter()
            for _ in range(steps):
                fn()
            took[label] = (time.perf_counter() - start) / (steps * per) * 1e6
            best[label] = min(best[label], took[label])
        ratios.append(took["compiled"] / took["eager"])
    ratios.sort()
    print(f"{name:12s} compiled {best['compiled']:9.2f} us a call   eager {best['eager']:9.2f} us a call   "
          f"ratio {best['compiled'] / best['eager']:.3f} (paired {ratios[len(ratios) // 2]:.3f})", flush=True)


if __name__ == "__main__":
    warnings.simplefilter("ignore")  # (a capture's RecompileWarning lines)
    for name in sys.argv[1:] or CASES:
        if name not in CASES:
            sys.exit(f"unknown case {name!r}: one of {', '.join(CASES)}")
        run(name)
