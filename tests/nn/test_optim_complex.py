"""Optimizers on complex parameters: PyTorch steps them through view_as_real (each part its own state);
minigrad's trajectories match its own, on the array path (whole and in blocks) and the reference kernels."""
import numpy as np
import pytest

import nn
import nn.optim as optim
from minigrad import Tensor, backends

rng = np.random.default_rng(0)
W0 = rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))
GRADS = [rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7)) for _ in range(4)]

CASES = [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True, foreach=True)),
    ("RMSprop", {}), ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1)),
    ("Adagrad", dict(lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict(weight_decay=0.1)), ("Adamax", dict(weight_decay=0.1, maximize=True)),
    ("NAdam", {}), ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("Rprop", {}), ("Rprop", dict(maximize=True)), ("ASGD", dict(weight_decay=0.1)),
    ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("AdamW", dict(maximize=True)),
]


def _run(t, nn_, optim_, name, kwargs, steps=8):
    p = nn_.Parameter(t.tensor(W0))
    opt = getattr(optim_, name)([p], **kwargs)
    for i in range(steps):
        p.grad = t.tensor(GRADS[i % 4] * (1 + i))
        opt.step()
    return p.detach().numpy()


@pytest.mark.parametrize("kernels", ["numpy", "reference"])
@pytest.mark.parametrize("block", [1 << 17, 16])
@pytest.mark.parametrize("name, kwargs", CASES)
def test_complex_parameter_steps_as_pytorchs(torch, monkeypatch, name, kwargs, block, kernels):
    import minigrad

    monkeypatch.setattr(optim.optimizer, "BLOCK", block)  # 16: the blocked path, a partial last block
    theirs = _run(torch, torch.nn, torch.optim, name, kwargs)
    with backends.kernels(kernels):
        ours = _run(minigrad, nn, optim, name, kwargs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_complex_state_dtypes_as_pytorchs(torch):
    """State tensors are complex like the parameter (Rprop's step sizes and Adagrad's sums start at
    lr + lr i and v + v i, as PyTorch's)."""
    import minigrad

    for name, key in [("Rprop", "step_size"), ("Adagrad", "sum")]:
        states = []
        for t, nn_, optim_ in [(torch, torch.nn, torch.optim), (minigrad, nn, optim)]:
            p = nn_.Parameter(t.tensor(W0.astype(np.complex64)))
            opt = getattr(optim_, name)([p], lr=0.5)
            p.grad = t.tensor(GRADS[0].astype(np.complex64))
            opt.step()
            states.append(opt.state[p][key])
        assert str(states[1].dtype).split(".")[1] == str(states[0].dtype).split(".")[1]
        np.testing.assert_allclose(states[1].numpy(), states[0].numpy(), rtol=1e-6)
    assert isinstance(states[1], Tensor)
