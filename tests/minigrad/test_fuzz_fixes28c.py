"""Differences the fuzzers found at seeds 41-44, each reduced to a small case and compared with PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.optim as optim

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_foreach_step_counts_after_a_parameter_stepped_alone(name):
    # foreach keeps the group's steps in one buffer; a parameter stepped alone (the other had no gradient)
    # counts its own step there, so the next step of both must not count them as one
    steps = []
    for lib, O in ((torch, torch.optim), (minigrad, optim)):
        ps = [lib.zeros(()).requires_grad_(), lib.zeros(2).requires_grad_()]
        opt = getattr(O, name)(ps, lr=0.01, foreach=True)
        for has_grad in [(1, 1), (1, 0), (1, 0), (1, 1)]:
            for p, h in zip(ps, has_grad):
                p.grad = lib.ones(p.shape) if h else None
            opt.step()
        steps.append(([float(opt.state[p]["step"]) for p in ps], [opt.state[p]["exp_avg"].tolist() for p in ps]))
    assert steps[1][0] == steps[0][0] == [4.0, 2.0]
    np.testing.assert_allclose(np.concatenate([np.ravel(v) for v in steps[1][1]]),
                               np.concatenate([np.ravel(v) for v in steps[0][1]]), rtol=1e-6)
