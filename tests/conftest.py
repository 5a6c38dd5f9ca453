"""Shared test fixtures: the PyTorch reference (skipped cleanly when absent) and ../shared data."""
from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def torch():
    """PyTorch, the reference implementation; tests using it skip when it is not installed."""
    return pytest.importorskip("torch")


@pytest.fixture
def shared_data():
    """The read-only ../shared/data folder (Tiny Shakespeare, gpt2.tiktoken); skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA
