"""softmax's and log_softmax's backward as one node each (SoftmaxBackwardDataBackward0,
LogSoftmaxBackwardDataBackward0, PyTorch's names), still differentiable: first and second
derivatives against PyTorch, and against the formulas in Tensor ops without it."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

CASES = [((4, 7), -1), ((3, 5, 6), 1), ((2, 3), 0), ((), 0)]


def _pair(shape, seed, dtype=np.float64):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return minigrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", CASES)
def test_first_and_second_derivatives_match_pytorch(name, shape, dim):
    x, tx = _pair(shape, 0)
    w, tw = _pair(shape, 1)
    y = getattr(minigrad, name)(x, dim=dim)
    ty = getattr(torch, name)(tx, dim=dim)
    (gx,) = minigrad.autograd.grad((y * w.detach()).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad((ty * tw.detach()).sum(), tx, create_graph=True)
    np.testing.assert_allclose(gx.array, tgx.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert gx.grad_fn.name() == tgx.grad_fn.name()  # ...BackwardDataBackward0
    # the second derivative, through the backward node: with respect to x and to the incoming gradient
    v, tv = _pair(shape, 2)
    (ggx, ggw) = minigrad.autograd.grad((gx * v.detach()).sum(), (x, w), allow_unused=True)
    (tggx, tggw) = torch.autograd.grad((tgx * tv.detach()).sum(), (tx, tw), allow_unused=True)
    np.testing.assert_allclose(ggx.array, tggx.numpy(), rtol=1e-10, atol=1e-12)
    assert ggw is None and tggw is None  # w entered detached


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_the_backward_nodes_second_derivative_wrt_the_incoming_gradient(name):
    # g enters the backward node as a tensor that requires grad: d(dx)/dg, as PyTorch
    x, tx = _pair((3, 4), 3)
    g, tg = _pair((3, 4), 4)
    (gx,) = minigrad.autograd.grad(getattr(minigrad, name)(x, dim=1), x, grad_outputs=g, create_graph=True)
    (tgx,) = torch.autograd.grad(getattr(torch, name)(tx, dim=1), tx, grad_outputs=tg, create_graph=True)
    v = np.random.default_rng(5).standard_normal((3, 4))
    dg, dx = minigrad.autograd.grad((gx * minigrad.tensor(v)).sum(), (g, x))
    tdg, tdx = torch.autograd.grad((tgx * torch.tensor(v)).sum(), (tg, tx))
    np.testing.assert_allclose(dg.array, tdg.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx.array, tdx.numpy(), rtol=1e-10, atol=1e-12)


def test_float32_backward_keeps_the_formulas_bits():
    # one op on arrays, in the order of the Tensor formula it replaces: the same bits (the op's own array
    # code: a backend's kernel, where one takes the rows, has its own order)
    x, _ = _pair((5, 9), 6, np.float32)
    g = minigrad.tensor(np.random.default_rng(7).standard_normal((5, 9)).astype(np.float32))
    for name in ("softmax", "log_softmax"):
        with minigrad.backends.kernels("numpy"):
            y = getattr(minigrad, name)(x, dim=1)
            (gx,) = minigrad.autograd.grad(y, x, grad_outputs=g)
        ya, ga = y.array, g.array
        if name == "softmax":
            want = ya * (ga - (ga * ya).sum(axis=1, keepdims=True))
        else:
            want = ga - np.exp(ya) * ga.sum(axis=1, keepdims=True)
        assert gx.array.dtype == np.float32 and np.array_equal(gx.array, want)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_without_a_graph_matches_pytorch(name, shape, dim, dtype):
    # a plain backward (nothing recorded) on the array formulas where no kernel takes the rows (a dim
    # other than the last, a 0-d input): PyTorch's gradient and dtype, and nothing recorded on it
    x, tx = _pair(shape, 8, dtype)
    g = np.random.default_rng(9).standard_normal(shape).astype(dtype)
    getattr(minigrad, name)(x, dim=dim).backward(minigrad.tensor(g))
    getattr(torch, name)(tx, dim=dim).backward(torch.tensor(g))
    assert x.grad.dtype == x.dtype and x.grad.shape == x.shape and x.grad.grad_fn is None
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, dim", [((1, 65), -1), ((8, 65), 1), ((3, 5, 6), 1), ((2, 1000), -1), ((), 0)])
def test_without_recording_same_bits_as_recorded_and_close_to_torch(name, shape, dim):
    # under no_grad (a sampling loop) the op skips Function.apply: the same bits as the recorded op, a
    # result of its own (no node, no version shared with the input), values as torch's, F's and torch's spellings
    import minigrad.nn.functional as F

    for dtype in (np.float32, np.float64):
        x, tx = _pair(shape, 3, dtype)
        recorded = getattr(minigrad, name)(x, dim=dim)
        with minigrad.no_grad():
            for got in (getattr(minigrad, name)(x, dim=dim), getattr(F, name)(x, dim=dim)):
                assert got.grad_fn is None and not got.requires_grad and got.dtype == recorded.dtype
                np.testing.assert_array_equal(got.numpy(), recorded.detach().numpy())
                assert not np.shares_memory(got.numpy(), x.detach().numpy())
        with torch.no_grad():
            want = getattr(torch, name)(tx, dim=dim).numpy()
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    # grad enabled but the input needs none: no node either, as PyTorch's
    y = getattr(minigrad, name)(x.detach(), dim=dim)
    assert y.grad_fn is None
