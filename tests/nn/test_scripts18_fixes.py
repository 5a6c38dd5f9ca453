"""Focused tests for what the scripts of test_dl_scripts18.py found in minigrad."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_hardsigmoid_backward_scales_by_pytorchs_float32_one_sixth(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(18)
    xs, gs = rng.uniform(-4, 4, 200), rng.standard_normal(200)
    x = torch.tensor(xs).to(getattr(torch, dtype)).requires_grad_()
    torch.nn.functional.hardsigmoid(x).backward(torch.tensor(gs).to(x.dtype))
    ours = minigrad.tensor(xs).to(getattr(minigrad, dtype)).requires_grad_()
    F.hardsigmoid(ours).backward(minigrad.tensor(gs).to(ours.dtype))
    assert str(ours.grad.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(ours.grad.to(minigrad.float64).numpy(), x.grad.double().numpy())


def test_hardsigmoid_create_graph_gradient_matches_pytorch():
    torch = pytest.importorskip("torch")
    xs, gs = np.array([-3.5, -1.0, 0.25, 2.0, 3.0]), np.array([0.3, -1.2, 2.0, 0.7, 1.1])
    x = torch.tensor(xs, requires_grad=True)
    g = torch.tensor(gs, requires_grad=True)
    (theirs,) = torch.autograd.grad(torch.nn.functional.hardsigmoid(x), x, g, create_graph=True)
    mx, mg = minigrad.tensor(xs, requires_grad=True), minigrad.tensor(gs, requires_grad=True)
    (ours,) = minigrad.autograd.grad(F.hardsigmoid(mx), mx, mg, create_graph=True)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
