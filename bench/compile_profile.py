"""Where a replayed training step's time goes: each call in the program's generated code timed alone.

    python bench/compile_profile.py mlp                # compile_bench's MLP step, by kind of call
    python bench/compile_profile.py baby --steps 50 -v # a GPT preset (or "small"), and each call too

The step is compile_bench's (forward, backward, AdamW, zero_grad), compiled whole. Every function the
generated code calls by name (an op's array step or backward, a library call such as optimizer.step)
is wrapped with a timer; each one's figure is the 10th percentile of its calls over the timed steps
(a shared machine's slow calls left out), so the sum is a floor, and what the whole call takes beyond
it is the replay's own lines (slots, accumulations into .grad) and the timers.
"""
import argparse
import collections
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.compile_bench import _cpu_name, _gpt_step, _mlp_step  # noqa: E402

# the names codegen.py binds for the calls a step makes (Linear_array_step4, call30, ...)
TIMED = re.compile(r"(_array_step|_array_backward|_forward|_backward|^call|^step)\d+$")


def low(times):
    return sorted(times)[len(times) // 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", help="mlp, small, or a GPT preset (tiny, baby, ...)")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("-v", action="store_true", help="each call, not only each kind")
    args = ap.parse_args()

    import minigrad

    minigrad.backends.tune_process()
    step, data, _ = _mlp_step() if args.model == "mlp" else _gpt_step(args.model)
    compiled = minigrad.compile(step)
    batches = data(4)
    for x, y in batches[:3]:  # the capture, then two replays
        compiled(x, y)
    (program,) = compiled.cache.values()
    names = program._run_steps.__globals__
    times = collections.defaultdict(list)

    def timed(name, fn):
        def call(*args, **kwargs):
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            times[name].append(time.perf_counter() - t0)
            return out
        return call

    for name, fn in list(names.items()):
        if TIMED.search(name) and callable(fn):
            names[name] = timed(name, fn)
    x, y = batches[3]
    whole = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        compiled(x, y)
        whole.append(time.perf_counter() - t0)
    per_step = {name: low(ts) * len(ts) / args.steps * 1e6 for name, ts in times.items()}
    kinds = collections.defaultdict(float)
    for name, us in per_step.items():
        kinds[re.sub(r"\d+$", "", name)] += us
    print(f"CPU: {_cpu_name()}; {args.model}, {args.steps} replayed steps, us per step")
    for kind, us in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{kind:36s} {us:9.1f}")
    print(f"{'(sum)':36s} {sum(per_step.values()):9.1f}   whole call {low(whole) * 1e6:.1f}")
    if args.v:
        for name, us in sorted(per_step.items(), key=lambda kv: -kv[1]):
            print(f"  {name:34s} {us:9.1f}")


if __name__ == "__main__":
    main()
