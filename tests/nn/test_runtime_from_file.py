"""numba's runtime (NRT) functions are read compiled from a file beside the kernels' cache, not
compiled from LLVM IR in every process (team._initialize_runtime); a step gives the same bits."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a training step through the kernels in a fresh interpreter; prints whether numba built its runtime
# from IR, and the step's loss and parameters' bits. "numba" as argv[1]: numba's own initialize.
RUN = """
import sys
import numpy as np
from numba.core.runtime import nrtdynmod
import minigrad, nn
import nn.functional as F
from minigrad.backends.cpu import team

built = []
create = nrtdynmod.create_nrt_module
nrtdynmod.create_nrt_module = lambda ctx: built.append(1) or create(ctx)
if sys.argv[1] == "numba":
    from numba.core.runtime import rtsys
    team._initialize_runtime = lambda context, directory: rtsys.initialize(context)
minigrad.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.LayerNorm(256), nn.Linear(256, 64))
opt = nn.optim.AdamW(model.parameters(), lr=1e-3)
x, y = minigrad.randn(128, 64), minigrad.randint(0, 64, (128,))
loss = F.cross_entropy(model(x), y)
loss.backward()
opt.step()
bits = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()]).view(np.uint32)
print("BUILT", len(built), "LOSS", np.float32(loss.item()).view(np.uint32), "SUM", int(bits.sum(dtype=np.uint64)))
"""


def _run(how, **env):
    """RUN in a fresh interpreter (`env`: more environment, e.g. a NUMBA_CACHE_DIR of its own)."""
    out = subprocess.run([sys.executable, "-c", RUN, how], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT, MINIGRAD_NUM_THREADS="1", **env))
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(line for line in out.stdout.splitlines() if line.startswith("BUILT"))
    _, built, *result = line.split()
    return int(built), result


def test_the_runtime_is_built_once_then_read_and_a_step_gives_the_same_bits():
    _run("file")  # (writes the file where it is not there yet)
    built, result = _run("file")
    assert built == 0  # read from the file: numba did not build its runtime from IR
    built_by_numba, result_by_numba = _run("numba")
    assert built_by_numba == 1
    assert result == result_by_numba
