"""Focused tests for what the scripts of test_dl_scripts19.py found in minigrad."""
import numpy as np
import pytest

import minigrad


def _stft(lib, n, pad_mode, shape=(2,), n_fft=16):
    x = lib.tensor(np.random.default_rng(n).standard_normal(shape + (n,)), requires_grad=True)
    try:
        spec = lib.stft(x, n_fft, hop_length=4, window=lib.hann_window(n_fft, dtype=lib.float64), pad_mode=pad_mode,
                        return_complex=True)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    spec.abs().sum().backward()
    return spec.detach(), x.grad


@pytest.mark.parametrize("shape", [(2,), ()])
@pytest.mark.parametrize("pad_mode", ["constant", "reflect", "replicate", "circular"])
def test_stft_pad_modes_as_pytorch(torch, pad_mode, shape):
    (ours, our_grad), (theirs, their_grad) = _stft(minigrad, 20, pad_mode, shape), _stft(torch, 20, pad_mode, shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n, pad_mode, shape", [
    (8, "reflect", (2,)), (7, "reflect", ()), (7, "circular", (3,)), (5, "circular", ()), (9, "foo", (2,)),
])
def test_stft_too_short_for_its_padding_or_an_unknown_mode(torch, n, pad_mode, shape):
    ours, theirs = _stft(minigrad, n, pad_mode, shape), _stft(torch, n, pad_mode, shape)
    assert isinstance(theirs[0], str)
    assert ours == theirs
