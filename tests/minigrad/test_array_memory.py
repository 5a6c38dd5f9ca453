"""numpy's arrays on cache lines once tune_process() installs its allocator (minigrad/backends/cpu/array_memory.py):
which arrays it serves, that its memory behaves as numpy's (zeroed, resized, freed), and the ways
to keep numpy's own allocator. Each case runs in a fresh process: the allocator is process state."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the allocator is Linux's")

# a process's peak resident memory, KiB: ru_maxrss would count the parent's peak from before exec (Linux keeps it
# across execve), and the parent is this test runner, often larger than what a case measures
PEAK = """
def peak_kib():
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM:")).split()[1])
"""

PRELUDE = PEAK + """
import numpy as np
import minigrad, nn
import nn.functional as F
name = np._core.multiarray.get_handler_name
before = np.ones(1 << 16)  # numpy's allocator made it
x, w = minigrad.randn(64, 512), minigrad.randn(256, 512)
tuning = minigrad.backends.tune_process()
y = F.linear(x, w)
"""


def python(code, *argv, **env):
    """What `code` (dedented) prints in a fresh process, split into words."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def run(body, **env):
    """`body` after PRELUDE (the process tuned)."""
    return python(PRELUDE + textwrap.dedent(body), **env)


def test_large_arrays_start_on_a_cache_line_once_the_process_is_tuned():
    out = run("""
        print(name(), name(before), name(F.linear(x, w).array))  # (y itself was made just before)
        sizes = [1 << 16, (1 << 16) + 4, 3 * 40000 + 8, 5 << 20]  # from the threshold up, odd sizes too
        print(all(np.empty(n, np.uint8).ctypes.data % 64 == 0 for n in sizes for _ in range(20)))
        print(all((np.ones(n, np.float32) + 1).ctypes.data % 64 == 0 for n in (20000, 98304, 300001)))
        print(np.empty(10).ctypes.data % 16 == 0)  # small ones: malloc's alignment, as numpy's
    """)
    assert out == ["minigrad_aligned_64", "default_allocator", "minigrad_aligned_64", "True", "True", "True"]


def test_its_memory_behaves_as_numpys():
    out = run("""
        import gc
        z = np.zeros((1 << 21) + 3)  # calloc: zeroed, above and below the threshold
        print(z.ctypes.data % 64 == 0 and not z.any() and not np.zeros(100).any())
        a = np.arange(40000.0)
        a.resize(90000, refcheck=False)  # realloc keeps the data, zero-fills the rest
        print(np.array_equal(a[:40000], np.arange(40000.0)) and not a[40000:].any())
        b = np.ones(3)
        b.resize(50000, refcheck=False)  # from a small block to a large one
        print(b[:3].sum() == 3 and not b[3:].any())
        c = np.arange(30000.0)
        c.resize(10, refcheck=False)  # from a large block (aligned further in) to a small one
        ok = np.array_equal(c, np.arange(10.0))
        c.resize(70000, refcheck=False)  # and back
        print(ok and np.array_equal(c[:10], np.arange(10.0)) and c.ctypes.data % 64 == 0)
        del before  # made by numpy's allocator, freed by it
        for i in range(2000):  # freed by ours, reused, no growth
            t = np.full(1 << 15, float(i))
            assert t[-1] == i
        del t
        gc.collect()
        print(peak_kib() < 2 << 20)  # KiB: well under 2 GiB
        # y, made just after the allocator came in, still holds its product: the same bits as the same product
        # now (same inputs, same thread count), and numpy's to rounding (numpy's BLAS threads differ)
        print(np.array_equal(y.array, F.linear(x, w).array) and np.allclose(y.array, x.array @ w.array.T, atol=1e-4))
    """)
    assert out == ["True"] * 6


def test_it_can_be_kept_off():
    assert run("print(name(), name(F.linear(x, w).array))", MINIGRAD_MALLOC_TUNING="0") == ["default_allocator"] * 2


def test_a_step_is_the_same_bits_either_way():
    """The allocator moves arrays, not values: a training step's loss and gradients are identical."""
    body = """
        from gpt.model import GPT, GPTConfig
        minigrad.manual_seed(0)
        m = GPT(GPTConfig(block_size=16, vocab_size=50, n_layer=2, n_head=2, n_embd=32, dropout=0.0))
        idx = minigrad.tensor(np.arange(64).reshape(4, 16) % 50)
        _, loss = m(idx, idx)
        loss.backward()
        g = np.concatenate([p.grad.array.ravel() for p in m.parameters()])
        print(name(), loss.item().hex(), float(g.astype(np.float64).sum()).hex(), float(np.abs(g).max()).hex())
    """
    on, off = run(body), run(body, MINIGRAD_MALLOC_TUNING="0")
    assert on[0] == "minigrad_aligned_64" and off[0] == "default_allocator"
    assert on[1:] == off[1:]


def test_a_training_run_peaks_at_numpys_memory():
    """Aligning must not fragment the heap: glibc's aligned_alloc (tried first) left small pieces
    between freed blocks, and this run peaked 25% higher than on numpy's allocator."""
    code = PEAK + textwrap.dedent("""
        import sys
        import numpy as np, minigrad
        from minigrad.backends.cpu import array_memory
        if sys.argv[1] == "numpy":
            array_memory.install = lambda: False  # the tuning then keeps numpy's allocator
        minigrad.backends.tune_process()
        from gpt.model import GPT, GPTConfig
        minigrad.manual_seed(0)
        m = GPT(GPTConfig(block_size=128, vocab_size=65, n_layer=4, n_head=4, n_embd=192, dropout=0.0))
        opt = m.configure_optimizers(0.1, 1e-3, (0.9, 0.99))
        rng = np.random.default_rng(0)
        for step in range(12):
            idx = minigrad.tensor(rng.integers(0, 65, (32, 128)))
            _, loss = m(idx, idx)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        print(np._core.multiarray.get_handler_name(), peak_kib())
    """)
    peaks = {}
    for which in ("numpy", "ours"):
        handler, kib = python(code, which)
        assert handler == ("default_allocator" if which == "numpy" else "minigrad_aligned_64")
        peaks[which] = int(kib)
    assert peaks["ours"] <= peaks["numpy"] * 1.05 + 10 * 1024, peaks


def test_a_numba_that_cannot_write_its_cache_still_installs_it():
    code = """
        import numba, numpy as np
        real_cfunc, real_njit = numba.cfunc, numba.njit
        def refuse(real):
            def wrapper(*args, **options):
                if options.get("cache"):
                    raise RuntimeError("cannot cache function: no locator available")
                return real(*args, **options)
            return wrapper
        numba.cfunc, numba.njit = refuse(real_cfunc), refuse(real_njit)
        from minigrad.backends.cpu import array_memory
        print(array_memory.install(), np._core.multiarray.get_handler_name(), np.ones(1 << 15).ctypes.data % 64,
              float(np.ones(1 << 15).sum()))
    """
    assert python(code) == ["True", "minigrad_aligned_64", "0", "32768.0"]
