"""Shared test fixtures: the PyTorch reference (skipped cleanly when absent) and ../shared data."""
import zlib
from pathlib import Path

import numpy as np
import pytest

from minigrad import cuda_is_available

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

try:  # hypothesis mixes the literal constants of the project's modules loaded so far into its draws: which are
    # loaded depends on the tests a process ran before (pytest-xdist's scheduling), so a derandomized fuzzer drew
    # differently from run to run. Without them its draws depend on its own code alone.
    from hypothesis.internal.conjecture import providers as _hypothesis_providers

    _NO_CONSTANTS = _hypothesis_providers.Constants()
    _hypothesis_providers._get_local_constants = lambda: _NO_CONSTANTS
except (ImportError, AttributeError):  # (another hypothesis: its draws as they come)
    pass


@pytest.fixture(autouse=True)
def _warnings_once_a_process_as_in_a_fresh_one():
    """minigrad's once-a-process warnings (PyTorch's TORCH_WARN_ONCE: minigrad/_warn_once.py) start unsaid in
    each test, as in a fresh process: whether a test sees one must not depend on the tests its worker ran first."""
    from minigrad import _warn_once

    said = set(_warn_once._said_once)
    _warn_once._said_once.clear()
    yield
    _warn_once._said_once.clear()
    _warn_once._said_once.update(said)


@pytest.fixture
def torch():
    """PyTorch, the reference implementation; tests using it skip when it is not installed."""
    return pytest.importorskip("torch")


@pytest.fixture
def own_rng(request):
    """The test module's RNG restarted from the test's id, for a module whose tests draw from one module-level
    generator (`pytestmark = pytest.mark.usefixtures("own_rng")`): each test's data is then its own, not the
    draws the tests run before it (pytest-xdist's scheduling, -k, a shuffle) left."""
    request.module.RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def shared_data():
    """The read-only ../shared/data folder (Tiny Shakespeare, gpt2.tiktoken); skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(params=["fast", "numpy"])
def kernels(request):
    """Runs a test with the backends (minigrad/backends: compiled CPU kernels when numba is installed)
    and again without them (MINIGRAD_KERNELS=numpy: the ops' own array code)."""
    from minigrad import backends

    with backends.kernels(request.param):
        yield request.param


# ---- devices ---------------------------------------------------------------------------------------
CUDA_AVAILABLE = cuda_is_available()  # cupy imports and sees a GPU; never raises
DEVICES = ["cpu"] + (["cuda"] if CUDA_AVAILABLE else [])


def devices():
    """The devices tests can run on here: ['cpu'], plus 'cuda' with cupy and a GPU."""
    return list(DEVICES)


@pytest.fixture(params=DEVICES)
def device(request):
    """Runs a test once per available device ('cpu', and 'cuda' where cupy sees a GPU)."""
    if request.param == "cuda":
        import minigrad.cuda

        minigrad.cuda.set_tf32(False)  # exact float32 matmuls in tests
    return request.param
