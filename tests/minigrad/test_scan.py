"""Scans along a dim (minigrad/ops/scan.py) against PyTorch."""
import numpy as np
import pytest

import minigrad


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_float32_cumsum_has_torchs_bits_forward_and_backward(torch, dim):
    # PyTorch's CPU scan of float32 runs in double, each running sum rounded once: float32 running sums
    # differ from it in the last bits of most elements of a (32, 16, 256) scan
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((32, 16, 256)) * 2).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    a, t = minigrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = a.cumsum(dim), t.cumsum(dim)
    y.backward(minigrad.tensor(g))
    ty.backward(torch.tensor(g))
    assert y.dtype == a.dtype and a.grad.dtype == a.dtype and y.grad_fn.name() == ty.grad_fn.name()
    assert np.array_equal(y.array, ty.detach().numpy())
    assert np.array_equal(a.grad.array, t.grad.numpy())
