"""Train a GPT: `python train.py [config_file.py ...] [--key=value ...]` (`--help` lists every knob).

With no arguments it trains a small character-level model on the Python documentation that
ships with every Python (offline, a few minutes on 2 CPU cores); then `python sample.py`.
"""
import sys

from gpt.distributed import threads_per_rank

threads_per_rank()  # under mpiexec: the cores shared among this machine's ranks (before numpy loads)
try:
    import minigrad  # noqa: E402,F401 (before numpy: it tunes the process; see minigrad/backends/cpu/blas.py)
except ValueError as e:  # a bad MINIGRAD_KERNELS value: one line, as for any bad argument
    print(f"train.py: error: {e}", file=sys.stderr)
    sys.exit(2)
from gpt.trainer import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
