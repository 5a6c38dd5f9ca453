"""Train a GPT: `python train.py [config_file.py ...] [--key=value ...]` (`--help` lists every knob).

With no arguments it trains a small character-level model on the Python documentation that
ships with every Python (offline, a few minutes on 2 CPU cores); then `python sample.py`.
"""
import sys

try:
    import minigrad  # noqa: F401 (before numpy: it tunes the process; see minigrad/backends/cpu/blas.py)
except ValueError as e:  # a bad MINIGRAD_KERNELS value: one line, as for any bad argument
    print(f"train.py: error: {e}", file=sys.stderr)
    sys.exit(2)
from gpt.trainer import main

if __name__ == "__main__":
    sys.exit(main())
