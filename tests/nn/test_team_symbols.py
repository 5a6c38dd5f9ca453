"""A team kernel calls the plain kernels named in it through symbols bound to their compiled functions,
not by linking their code (team._call_by_symbol): compiled, and loaded from numba's disk cache in a fresh
process, it gives the plain kernel's bits."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNELS = '''
from minigrad.backends.cpu import team


@team.kernel
def scaled(out, x, lo, hi, s):
    for i in range(lo, hi):
        out[i] = x[i] * s + 0.5
    return hi - lo


@team.kernel(parallel=True)
def scaled_team(out, x, s, parts):
    for p in team.prange(parts):
        lo, hi = team.share(len(x), p, parts, 1)
        scaled(out, x, lo, hi, s)
'''

# prints whether this process compiled the team kernel or loaded it, whether its code holds the plain
# kernel's loop (compiled only), and whether the team's result is the plain kernel's bits
RUN = '''
import numpy as np
from minigrad.backends.cpu import team
import team_symbols_kernels as k

if not team.has_team():
    print("NOTEAM")
    raise SystemExit
x = np.linspace(-3, 3, 1000, dtype=np.float32)
out, ref = np.empty_like(x), np.empty_like(x)
k.scaled_team(out, x, np.float32(1.7), 3)
k.scaled.plain(ref, x, 0, len(x), np.float32(1.7))
d = k.scaled_team._team_compiled
sig = d.signatures[0]
compiled = d._cache_misses[sig] > 0
ir = d.inspect_llvm(sig) if compiled else ""
print("COMPILED", compiled, "BY_SYMBOL", "minigrad.kernel." in ir, "LINKED", "fmul" in ir or "llvm.fma" in ir,
      "SAME", out.tobytes() == ref.tobytes())
'''


def _run(tmp_path):
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]),
                                  NUMBA_CACHE_DIR=str(tmp_path / "cache"), MINIGRAD_NUM_THREADS="2"))
    assert out.returncode == 0, out.stderr[-2000:]
    if "NOTEAM" in out.stdout:
        pytest.skip("numba's thread team does not run here")
    return next(line for line in out.stdout.splitlines() if line.startswith("COMPILED")).split()


def test_a_team_kernel_calls_its_plain_kernel_by_symbol_compiled_and_loaded_from_the_cache(tmp_path):
    (tmp_path / "team_symbols_kernels.py").write_text(KERNELS)
    compiled = _run(tmp_path)
    assert compiled == ["COMPILED", "True", "BY_SYMBOL", "True", "LINKED", "False", "SAME", "True"]
    loaded = _run(tmp_path)  # a fresh process: the team kernel from the disk cache, its callee bound again
    assert loaded[:2] == ["COMPILED", "False"] and loaded[-2:] == ["SAME", "True"]
