"""Running programs under `mpiexec -n N` for the tests here, which skip cleanly without mpi4py or mpiexec."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).resolve().parent / "workers.py"
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and shutil.which("mpiexec") is not None


def mpi_env(**extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), MINIGRAD_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.pop("MINIGRAD_DIST_TIMEOUT", None)
    env.update(extra)
    return env




def launch(n, *args, timeout=60, env=None, launcher=()):
    """`mpiexec [launcher options] -n n python *args` from the worktree root; the CompletedProcess."""
    cmd = ["mpiexec", *launcher, "-n", str(n), sys.executable, *map(str, args)]
    return subprocess.run(cmd, cwd=ROOT, env=env or mpi_env(), capture_output=True, text=True, timeout=timeout)
