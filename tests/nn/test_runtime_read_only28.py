"""numba's runtime functions, compiled once, are kept where numba's cache keeps minigrad's kernels: with the
package read-only (a site-packages owned by root, a read-only container with NUMBA_CACHE_DIR set), a second
run still reads them rather than compiling them from LLVM IR; a damaged file is rebuilt, never run."""
import glob
import os
import shutil
import struct
import subprocess
import sys

import pytest

from tests.nn.test_review27b import _damage_machine_code

pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a kernel's first call in a fresh interpreter; prints how often numba built its runtime from IR, and the result
RUN = """
from numba.core.runtime import nrtdynmod
import minigrad

built = []
create = nrtdynmod.create_nrt_module
nrtdynmod.create_nrt_module = lambda ctx: built.append(1) or create(ctx)
minigrad.manual_seed(0)
total = minigrad.sigmoid(minigrad.randn(64, 64)).sum().item()
print("BUILT", len(built), total)
"""


def _set_writable(top, writable):
    for path, _, files in os.walk(top):
        for name in files:
            os.chmod(os.path.join(path, name), 0o644 if writable else 0o444)
        os.chmod(path, 0o755 if writable else 0o555)


@pytest.fixture
def read_only_install(tmp_path):
    """minigrad copied (without cached files) into a read-only directory, and a writable NUMBA_CACHE_DIR."""
    install, cache = tmp_path / "site-packages", tmp_path / "numba-cache"
    shutil.copytree(os.path.join(ROOT, "minigrad"), install / "minigrad",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    cache.mkdir()
    _set_writable(install, False)
    try:
        yield str(install), str(cache)
    finally:
        _set_writable(install, True)


def _run(install, cache):
    env = dict(os.environ, PYTHONPATH=install, NUMBA_CACHE_DIR=cache, MINIGRAD_NUM_THREADS="1")
    env.pop("MINIGRAD_KERNELS", None)
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=600, cwd=cache, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    _, built, result = next(line for line in out.stdout.splitlines() if line.startswith("BUILT")).split()
    return int(built), result


def test_a_read_only_install_reads_the_runtime_from_numbas_cache_directory(read_only_install):
    install, cache = read_only_install
    built, result = _run(install, cache)
    assert built == 1  # (the first run compiles it, and writes it beside the kernels)
    files = glob.glob(os.path.join(cache, "*", "nrt-*.nbo"))
    assert len(files) == 1 and glob.glob(os.path.join(os.path.dirname(files[0]), "sigmoid*.nbi"))
    assert not glob.glob(os.path.join(install, "**", "nrt-*.nbo"), recursive=True)
    assert _run(install, cache) == (0, result)  # read from the file: not built from IR


def test_a_damaged_runtime_file_in_numbas_cache_directory_is_rebuilt_not_run(read_only_install):
    if not struct.pack("=H", 1) == b"\x01\x00":
        pytest.skip("the damage is written for little-endian ELF objects")
    install, cache = read_only_install
    _, result = _run(install, cache)
    files = glob.glob(os.path.join(cache, "*", "nrt-*.nbo"))
    assert len(files) == 1
    try:
        _damage_machine_code(files[0])
    except ValueError:  # (not an ELF object: another platform's)
        pytest.skip("the runtime's object code is not ELF here")
    assert _run(install, cache) == (1, result)  # (before the check: the process died on the trap)
    assert _run(install, cache) == (0, result)  # (and written again, whole)
