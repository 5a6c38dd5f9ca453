"""OpenBLAS's idle-thread spin (minigrad._blas): set when minigrad is imported before numpy, never
over the user's own setting, and never once numpy (and OpenBLAS) is loaded, where it could not
take effect."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_THREAD_TIMEOUT", "MINIGRAD_BLAS_TUNING")}
    full.update(env, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, cwd=ROOT, check=True)
    return out.stdout.split()


SHOW = "import os, minigrad; print(minigrad._blas.applied, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"


def test_set_before_numpy_loads():
    assert _run(SHOW) == ["True", "12"]


def test_not_set_after_numpy_loaded_nor_over_the_users_value_nor_when_off():
    assert _run("import numpy; " + SHOW) == ["False", "None"]
    assert _run(SHOW, OPENBLAS_THREAD_TIMEOUT="20") == ["False", "20"]
    assert _run(SHOW, MINIGRAD_BLAS_TUNING="0") == ["False", "None"]
