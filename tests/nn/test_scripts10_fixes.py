"""Fixes found by the scripts of test_dl_scripts10.py, each checked against PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad


def reentrant_run(lib, requires_grad):
    """checkpoint(use_reentrant=True) over a layer: its output, the gradients backward gives, the warnings."""
    lib.manual_seed(0)
    layer = lib.nn.Linear(3, 2).double()
    layer.load_state_dict({"weight": lib.tensor(np.arange(6.0).reshape(2, 3) / 7),
                           "bias": lib.tensor(np.array([0.5, -1.0]))})
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=requires_grad)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        y = lib.utils.checkpoint.checkpoint(lambda t: layer(t).tanh(), x, use_reentrant=True)
    if y.requires_grad:
        y.pow(2).sum().backward()
    return (y.detach().numpy(), y.requires_grad, [str(w.message) for w in seen],
            [None if t.grad is None else t.grad.numpy() for t in (x, layer.weight, layer.bias)])


@pytest.mark.parametrize("requires_grad", [True, False])
def test_checkpoint_use_reentrant_true_as_pytorch(torch, requires_grad):
    ours, theirs = reentrant_run(minigrad, requires_grad), reentrant_run(torch, requires_grad)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    assert ours[1:3] == theirs[1:3]
    for a, b in zip(ours[3], theirs[3]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12)


def test_checkpoint_use_reentrant_true_refuses_kwargs(torch):
    def error(lib):
        with pytest.raises(ValueError) as e:
            lib.utils.checkpoint.checkpoint(lambda t, k: t * k, lib.ones(2, requires_grad=True), k=2.0,
                                            use_reentrant=True)
        return str(e.value)
    assert error(minigrad) == error(torch)


def test_checkpoint_use_reentrant_true_refuses_autograd_grad(torch):
    def error(lib):
        x = lib.ones(2, requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(lambda t: t * 2, x, use_reentrant=True)
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(y.sum(), x)
        return str(e.value)
    assert error(minigrad) == error(torch)


@pytest.mark.parametrize("result", [5, (1, 2, 3), [(), {}], ((),)], ids=["int", "triple", "list", "single"])
def test_forward_pre_hook_with_kwargs_bad_return_text(torch, result):
    def error(lib):
        layer = lib.nn.Linear(2, 2)
        layer.register_forward_pre_hook(lambda m, a, k: result, with_kwargs=True)
        with pytest.raises(Exception) as e:
            layer(lib.ones(1, 2))
        return type(e.value).__name__, str(e.value)
    assert error(minigrad) == error(torch)


def stft_real(lib):
    x = lib.tensor(np.sin(np.arange(40) * 0.7) + np.linspace(0, 1, 40), requires_grad=True)
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)  # (the warning is given once a process: another test may have had it first)
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            y = lib.stft(x, 16, hop_length=4, window=lib.hann_window(16, dtype=lib.float64), return_complex=False)
    finally:
        lib.set_warn_always(always)
    (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
    return y, x.grad, [str(w.message) for w in seen]


def test_stft_return_complex_false_as_pytorch(torch):
    (y, g, said), (ty, tg, tsaid) = stft_real(minigrad), stft_real(torch)
    assert y.dtype == minigrad.float64 and tuple(y.shape) == tuple(ty.shape)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-10, atol=1e-12)
    assert len(said) == len(tsaid) == 1 and tsaid[0].startswith(said[0])
