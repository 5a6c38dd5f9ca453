"""Train a GPT: `python train.py [config_file.py ...] [--key=value ...]` (`--help` lists every knob).

With no arguments it trains a small character-level model on the Python documentation that
ships with every Python (offline, a few minutes on 2 CPU cores); then `python sample.py`.
"""
import sys

try:
    import minigrad
except ValueError as e:  # a bad MINIGRAD_KERNELS value: one line, as for any bad argument
    print(f"train.py: error: {e}", file=sys.stderr)
    sys.exit(2)
from gpt.distributed import threads_per_rank
from gpt.trainer import main

if __name__ == "__main__":
    minigrad.backends.tune_process()  # this process is one training run: keep memory, align arrays
    threads_per_rank()  # under mpiexec: the cores shared among this machine's ranks
    sys.exit(main())
