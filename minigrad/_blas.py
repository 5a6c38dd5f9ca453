"""Keep OpenBLAS's idle threads from spinning long: set before numpy loads OpenBLAS.

After each call, OpenBLAS's worker threads busy-wait for the next one, by default for 2^28 cycles
(about 0.1 s). minigrad runs threads of its own right after matrix products (the blocked
elementwise ops, attention's per-head products, the optimizer's blocks), and on a 2-core machine
a spinning BLAS thread takes a core from them. Measured here: causal attention's forward at the
gpt2 shape took 46 ms right after a GEMM and 24 ms with OpenBLAS's threads asleep; the baby
training step went from 0.84 to 0.90 of PyTorch's tokens/s (bench/train_bench.py, the same run
with and without the variable). 2^12 cycles (~2 us) still bridges back-to-back GEMMs.

OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, when it loads, so this applies only when minigrad
is imported before numpy (train.py and sample.py do so), and never over a value the user set.
Being an environment variable, it is inherited by child processes too. MINIGRAD_BLAS_TUNING=0
leaves it alone.
"""
import os
import sys

THREAD_TIMEOUT = "12"  # log2 of the cycles an idle OpenBLAS thread spins before it sleeps


def tune_blas_threads():
    """Set OPENBLAS_THREAD_TIMEOUT for this process if it can still take effect; returns whether it did."""
    if os.environ.get("MINIGRAD_BLAS_TUNING", "1") == "0" or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return False
    if "numpy" in sys.modules:  # OpenBLAS is loaded and has read its environment already
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = THREAD_TIMEOUT
    return True


applied = tune_blas_threads()
