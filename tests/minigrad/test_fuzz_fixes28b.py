"""MINIGRAD_FUZZ_SEED makes a fuzzer's slice repeatable: it seeds hypothesis and the fuzzers' numpy draws."""
import importlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests import fuzz_settings


def _module(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("MINIGRAD_FUZZ_SEED", raising=False)
    else:
        monkeypatch.setenv("MINIGRAD_FUZZ_SEED", value)
    return importlib.reload(fuzz_settings)


def _drawn(module):
    seen = []

    @module.fuzz_settings("MINIGRAD_TEST_UNSET_EXAMPLES", 20)
    @given(st.integers(0, 2**60))
    def inner(n):
        seen.append(n)

    inner()
    return seen


def test_fuzz_seed_repeats_hypothesis_draws(monkeypatch):
    try:
        at41 = _module(monkeypatch, "41")
        first, again = _drawn(at41), _drawn(at41)
        other = _drawn(_module(monkeypatch, "42"))
    finally:
        _module(monkeypatch, None)
    assert first == again
    assert first != other


def test_fuzz_seed_mixes_into_numpy_seeds(monkeypatch):
    try:
        fixed = _module(monkeypatch, None).fuzz_rng(7).integers(0, 2**62, 4)
        at41 = _module(monkeypatch, "41")
        a, b = at41.fuzz_rng(7).integers(0, 2**62, 4), at41.fuzz_rng(7).integers(0, 2**62, 4)
        at42 = _module(monkeypatch, "42").fuzz_rng(7).integers(0, 2**62, 4)
    finally:
        _module(monkeypatch, None)
    np.testing.assert_array_equal(fixed, np.random.default_rng(7).integers(0, 2**62, 4))  # CI's slice as it was
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, fixed) and not np.array_equal(a, at42)
