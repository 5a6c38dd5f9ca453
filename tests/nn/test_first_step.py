"""A process's first step (issue 29): what the kernels' start leaves out, and that what it leaves out
still works when used. numba's ndarray typing rule imports numpy.ma to ask whether an array is a
MaskedArray; the kernels type a plain ndarray themselves, and the thread team starts without a probe
kernel of its own."""
import os
import subprocess
import sys

import numpy as np
import pytest

from minigrad.backends.cpu import team

numba = pytest.importorskip("numba")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


# a training step through the kernels (embedding, linear, tanh, cross_entropy, AdamW), as the first-step bench's
STEP = """
import sys
import numpy as np
import minigrad, minigrad.nn as nn, minigrad.nn.functional as F
{before}
minigrad.backends.CPU_MIN_ELEMENTS = 0
minigrad.manual_seed(0)
model = nn.Sequential(nn.Embedding(27, 10), nn.Flatten(), nn.Linear(30, 64), nn.Tanh(), nn.Linear(64, 27))
opt = minigrad.optim.AdamW(model.parameters(), lr=1e-3)
x, y = minigrad.randint(0, 27, (32, 3)), minigrad.randint(0, 27, (32,))
loss = F.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
from minigrad.backends.cpu import team
print('numba', team.started(), 'compiled', team._said_compiling, 'numpy.ma', 'numpy.ma' in sys.modules)
"""


@pytest.mark.parametrize("before", ["", "minigrad.backends.tune_process()"])
def test_a_step_through_the_kernels_leaves_numpy_ma_unimported(before):
    code = STEP.format(before=before)
    run_python(code)  # (compiles whatever kernel the cache lacks)
    out = run_python(code)
    assert "numba True" in out
    assert "numpy.ma False" in out


def kernel_dispatcher():
    @team.kernel
    def double(out, x):
        for i in range(x.size):
            out[i] = 2 * x[i]

    assert team.available()
    return double, double._plain()


ARRAYS = {
    "float32 C": np.ones((3, 4), np.float32),
    "float64 F": np.asfortranarray(np.ones((3, 4))),
    "strided": np.ones((6, 8), np.float32)[::2, 1::3],
    "0-d": np.array(1.5),
    "int64": np.arange(5),
    "bool": np.zeros(3, bool),
    "complex64": np.zeros(2, np.complex64),
    "empty": np.empty((0, 3), np.float32),
    "object": np.array([object()]),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_kernels_type_plain_arrays_as_numba_does(name):
    from numba.core.typing.typeof import Purpose, typeof

    arr = ARRAYS[name]
    _, dispatcher = kernel_dispatcher()
    assert dispatcher.typeof_pyval(arr) == typeof(arr, Purpose.argument)
    arr.flags.writeable = False
    assert dispatcher.typeof_pyval(arr) == typeof(arr, Purpose.argument)
    assert not dispatcher.typeof_pyval(arr).mutable


def test_kernels_leave_other_values_to_numba():
    # a MaskedArray is still refused as numba refuses it (numpy.ma is imported once someone uses it);
    # a scalar is typed by numba's own rules
    import numpy.ma as ma
    from numba.core.errors import NumbaTypeError
    from numba.core.typing.typeof import Purpose, typeof

    kernel, dispatcher = kernel_dispatcher()
    with pytest.raises(NumbaTypeError, match="MaskedArray"):
        dispatcher.typeof_pyval(ma.masked_array(np.ones(3), mask=[0, 1, 0]))
    assert dispatcher.typeof_pyval(3.0) == typeof(3.0, Purpose.argument)
    out = np.zeros(4, np.float32)
    kernel(out, np.arange(4, dtype=np.float32))  # and the kernel runs on the types it gave
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


def test_the_team_starts_without_a_probe_kernel():
    out = run_python(
        "import sys\n"
        "from minigrad.backends.cpu import team\n"
        "ok = team.has_team()\n"
        "import numba\n"
        "layer = numba.threading_layer() if ok else None\n"
        "print('ok', ok, 'layer', layer, 'launched', team._launched == ok, 'numpy.ma', 'numpy.ma' in sys.modules)\n")
    if "ok False" in out:
        pytest.skip("numba's OpenMP / TBB threading layer does not load here")
    assert "layer omp" in out or "layer tbb" in out
    assert "launched True" in out
    assert "numpy.ma False" in out  # (a probe kernel's first call typed its argument by numba's rule)


def test_first_step_bench_children_write_bytecode(monkeypatch):
    """The bench's warm-up writes the .pyc files its timed processes read, even where the shell says not to write
    bytecode (they would otherwise each compile every source: seconds, not the issue's warm ~0.3 s)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("first_step_bench", os.path.join(ROOT, "bench", "first_step_bench.py"))
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    out = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"], env=bench.env(),
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
    assert bench.env()["MINIGRAD_NUM_THREADS"] == "1"  # (the rest of its environment as before)
