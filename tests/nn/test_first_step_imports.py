"""What a process's first step imports (issue 29): numba's start and a cached kernel's first call
leave importlib.metadata (numba's search for its extensions' entry points) and numba.experimental
(jitclass) for a compile or a first use, and what they leave out still works when used."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

STEP = """
import sys
import minigrad, minigrad.nn.functional as F
minigrad.backends.CPU_MIN_ELEMENTS = 0
x = minigrad.randn(4, 5, requires_grad=True)
F.cross_entropy(x, minigrad.tensor([0, 1, 2, 3])).backward()  # through the kernels
from minigrad.backends.cpu import team
assert team.started()
"""


def run_python(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_cached_kernels_run_without_importlib_metadata():
    run_python(STEP)  # compiles the kernels where they are not cached yet (a compile loads the extensions)
    out = run_python(STEP + "print('metadata', 'importlib.metadata' in sys.modules)\n")
    assert "metadata False" in out, out


def test_importlib_metadata_imports_as_before_after_numbas_start():
    code = STEP + (
        "import importlib, importlib.metadata as m\n"
        "assert type(m).__name__ == 'module' and sys.modules['importlib.metadata'] is m\n"
        "assert importlib.metadata is m and callable(m.entry_points)\n"
        "print('ok')\n"
    )
    assert run_python(code).strip().endswith("ok")


def test_numbas_extension_search_still_runs_when_numba_looks():
    # numba's entry points are searched (importing importlib.metadata) when numba asks: before a
    # compile of a user's own function, and by init_all() itself
    code = STEP + (
        "import numba, numba.core.entrypoints as ep\n"
        "numba.njit(lambda a: a + 1)(1)\n"
        "assert ep._already_initialized and 'importlib.metadata' in sys.modules\n"
        "assert ep.importlib_metadata.entry_points is sys.modules['importlib.metadata'].entry_points\n"
        "print('ok')\n"
    )
    assert run_python(code).strip().endswith("ok")


def test_cached_kernels_run_without_numba_experimental():
    run_python(STEP)  # (compiles what the cache lacks: a compile imports numba.experimental)
    out = run_python(STEP + "print('experimental', 'numba.experimental' in sys.modules)\n")
    assert "experimental False" in out, out


@pytest.mark.parametrize("use", ["attribute", "from_import", "compile"])
def test_numba_experimental_imports_on_first_use(use):
    first_use = {
        "attribute": "jitclass = numba.experimental.jitclass\n",
        "from_import": "from numba.experimental import jitclass\n",
        "compile": "numba.njit(lambda a: a + 1)(1)\nfrom numba.experimental import jitclass\n",  # (imports it)
    }[use]
    code = STEP + "import numba\n" + first_use + (
        "real = sys.modules['numba.experimental']\n"
        "assert type(real).__name__ == 'module' and numba.experimental is real\n"
        "assert jitclass is real.jitclass and jitclass.__module__ == 'numba.experimental.jitclass.decorators'\n"
        "Point = jitclass([('x', numba.float64)])(type('Point', (), {'__init__': lambda self, x: None}))\n"
        "assert type(Point).__name__ == 'JitClassType'\n"
        "print('ok')\n"
    )
    assert run_python(code).strip().endswith("ok")
