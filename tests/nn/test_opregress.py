"""linear's fast path takes only a bias of shape (out,): every other bias shape (one element, 0-d, a row, too
long) still gets PyTorch's values, gradients, node names and errors, checked against torch."""
import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F

torch = pytest.importorskip("torch")


def _run(lib, functional, x_shape, bias_shape):
    gen = np.random.default_rng(0)
    x = lib.tensor(gen.standard_normal(x_shape, dtype=np.float32), requires_grad=True)
    w = lib.tensor(gen.standard_normal((4, 3), dtype=np.float32), requires_grad=True)
    b = lib.tensor(gen.standard_normal(bias_shape, dtype=np.float32), requires_grad=True)
    out = functional.linear(x, w, b)
    out.sum().backward()
    return out, [t.grad for t in (x, w, b)]


@pytest.mark.parametrize("x_shape, bias_shape", [
    ((5, 3), (4,)), ((5, 3), (1,)), ((5, 3), ()), ((5, 3), (1, 4)), ((5, 3), (5, 4)), ((2, 5, 3), (1,)),
    ((2, 5, 3), (5, 4)), ((3,), (4,)), ((3,), (1,)),
])
def test_linear_bias_shapes_as_torch(x_shape, bias_shape):
    out, grads = _run(minigrad, F, x_shape, bias_shape)
    ref, ref_grads = _run(torch, torch.nn.functional, x_shape, bias_shape)
    assert out.shape == tuple(ref.shape) and out.dtype.__repr__().split(".")[-1] == str(ref.dtype).split(".")[-1]
    assert type(out.grad_fn).__name__ == type(ref.grad_fn).__name__
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bias_shape", [(5,), (3,), (2, 4)])
def test_linear_bias_that_does_not_fit_as_torch(bias_shape):
    with pytest.raises(Exception) as ours:
        _run(minigrad, F, (5, 3), bias_shape)
    with pytest.raises(Exception) as theirs:
        _run(torch, torch.nn.functional, (5, 3), bias_shape)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dim", [None, (), [], 1, -1, (0, 1), "a", 1.5, [0, 1.5]])
def test_sum_dims_as_torch(dim):
    """normalize_dims takes None before its type check: the other dims still get PyTorch's values and texts."""
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for lib in (minigrad, torch):
        x = lib.tensor(data)
        try:
            out = x.sum() if dim is None else x.sum(dim)
            results.append(("ok", tuple(out.shape), out.numpy().tolist()))
        except Exception as e:
            results.append((type(e).__name__, str(e)))
    assert results[0] == results[1]
