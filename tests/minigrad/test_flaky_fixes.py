"""Behaviour that made tests depend on the tests run before them, each checked against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad


def _stft_real_said(lib):
    """The warnings one stft(return_complex=False) gives."""
    x = lib.tensor(np.linspace(0, 1, 40))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        lib.stft(x, 16, window=lib.hann_window(16, dtype=lib.float64), return_complex=False)
    return [str(w.message) for w in seen]


def test_stft_return_complex_false_warns_once_a_process_as_pytorch(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())  # (as in a process that has not warned yet)
    first = _stft_real_said(minigrad)
    assert len(first) == 1 and first[0].startswith("stft with return_complex=False is deprecated")
    _stft_real_said(torch)  # (PyTorch's first: said or not, as the tests before had it)
    assert _stft_real_said(minigrad) == _stft_real_said(torch) == []
    for lib in (minigrad, torch):
        always = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        try:
            said = _stft_real_said(lib)
        finally:
            lib.set_warn_always(always)
        assert [m.split(" (Triggered")[0] for m in said] == first, lib.__name__
