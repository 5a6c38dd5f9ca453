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
