"""Gaps against PyTorch closed in nn: F.linear's biases of other shapes than (out_features,)."""
import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F

torch = pytest.importorskip("torch")

INPUTS = [(3,), (2, 3), (4, 2, 3), (2, 2, 2, 3)]
BIASES = [(1, 5), (1, 1, 5), (3, 5), (), (2, 5), (4, 1, 5), (1,), (5, 1), (1, 1, 1, 5)]


def _linear(T, functional, x, w, b, contiguous):
    x = T.tensor(x)
    if not contiguous:
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2) if x.ndim > 1 else x
    b = T.tensor(b, requires_grad=True)
    w = T.tensor(w, requires_grad=True)
    try:
        y = functional.linear(x, w, b)
        y.backward(T.tensor(np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape))))
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e).replace("torch.", "").replace("minigrad.", "")
    return y.detach().numpy(), type(y.grad_fn).__name__, b.grad.numpy(), w.grad.numpy()


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("bias", BIASES)
@pytest.mark.parametrize("input", INPUTS)
def test_linear_bias_shapes_as_torch(input, bias, contiguous):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(input).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal(bias).astype(np.float32)
    m = _linear(minigrad, F, x, w, b, contiguous)
    t = _linear(torch, torch.nn.functional, x, w, b, contiguous)
    if isinstance(t[0], str):
        assert m == t
        return
    assert not isinstance(m[0], str), m
    assert m[1] == t[1]
    for got, want in zip(m[::2] + m[3:], t[::2] + t[3:]):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
