"""Generate text from a trained model: `python sample.py --start="ROMEO:" --num_samples=2`.

Loads the checkpoint train.py wrote in --out_dir and streams tokens as they are generated.
"""
import sys

try:
    import minigrad
except ValueError as e:  # a bad MINIGRAD_KERNELS value: one line, as for any bad argument
    print(f"sample.py: error: {e}", file=sys.stderr)
    sys.exit(2)
from gpt.sampling import main

if __name__ == "__main__":
    minigrad.backends.tune_process()  # this process is one generation run
    sys.exit(main())
