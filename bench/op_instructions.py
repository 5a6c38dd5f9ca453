"""Instructions per call of a small op (forward + backward) or per step of the small_models mlp kind,
counted by valgrind: on a shared machine, where timings of a few microseconds move by 2x between runs,
the count moves by well under 1%.

    python bench/op_instructions.py sigmoid cross_entropy      # ops of small_ops_bench.py --ops
    python bench/op_instructions.py mlp                        # small_models_bench.py's mlp step
    python bench/op_instructions.py transformer compiled:transformer   # a small kind, eager and replayed

Each figure is (instructions of N calls - instructions of none) / N, both runs after the same warm-up,
with PYTHONHASHSEED fixed (dict and set layouts otherwise differ from run to run). Needs valgrind.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_KINDS = ("rnn", "gru", "rnn_cells", "gru_cells", "bow", "transformer")  # compile_bench's (issue 30's)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def loop(name, n):
    """Warm up, then run `name` n times."""
    if name == "mlp" or name.split(":")[-1] in SMALL_KINDS:  # (compiled:<kind>: its minigrad.compile replay)
        import minigrad
        import small_models_bench

        torch = small_models_bench.minigrad_as_torch()
        torch.manual_seed(0)
        step = small_models_bench.build(torch, name.split(":")[-1])
        if name.startswith("compiled:"):
            step = minigrad.compile(step)
    else:
        import minigrad
        import nn
        from small_ops_bench import op_cases

        minigrad.nn = nn
        fn, leaves = op_cases(minigrad)[name]
        g = minigrad.ones_like(fn())

        def step():
            fn().backward(g)
            for t in leaves:
                t.grad = None

    for _ in range(50):
        step()
    for _ in range(n):
        step()


def count(name, n):
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
           __file__, "--loop", name, str(n)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))


def main():
    if sys.argv[1:2] == ["--loop"]:
        return loop(sys.argv[2], int(sys.argv[3]))
    for name in sys.argv[1:]:
        n = 300 if name == "mlp" else 100 if name.split(":")[-1] in SMALL_KINDS else 1000
        print(f"{name:<15}{(count(name, n) - count(name, 0)) // n:>10}", flush=True)


if __name__ == "__main__":
    main()
