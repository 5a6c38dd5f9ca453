"""A cached kernel's load skips numba's "numba:llvm_lock" events (a start and an end around each of
the hundred-odd calls into LLVM that linking it makes); numba's own compiles still send them."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# loads (or, the first time, compiles) gelu's kernels, then compiles a function of its own; prints the
# llvm_lock events each sent and whether numba's callbacks are back on llvmlite's lock
CODE = """
import minigrad
import nn.functional as F
from minigrad.backends.cpu import team

assert team.available()
import llvmlite.binding as ll
import numba
from numba.core import event

before = list(ll.ffi.lib._lock._cblist)
count = [0]


class Count(event.Listener):
    def on_start(self, e):
        count[0] += 1

    def on_end(self, e):
        pass


event.register("numba:llvm_lock", Count())
x = minigrad.randn(64, 64, requires_grad=True)
F.gelu(x).sum().backward()
kernels = count[0]


@numba.njit
def own(a):
    return a + 1


own(1)
print("EVENTS", kernels, count[0] - kernels, ll.ffi.lib._lock._cblist == before)
"""


def run():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(line for line in out.stdout.splitlines() if line.startswith("EVENTS "))
    kernels, own, restored = line.split()[1:]
    return int(kernels), int(own), restored == "True"


def test_a_cached_kernel_loads_without_numbas_lock_events():
    run()  # (compiles gelu's kernels where they are not cached yet: numba's compile sends its events)
    kernels, own, restored = run()
    assert kernels == 0
    assert own > 0  # a compile of the process's own function: numba's events as before
    assert restored
