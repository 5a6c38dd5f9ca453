"""Function.apply's recorded path: the edges, needs_input_grad and gradients it gives for arguments that are
not all tensors requiring grad (numbers, tensors without grad, integral tensors), as PyTorch's."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _scale_fn(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y, w):
            ctx.seen = ctx.needs_input_grad
            ctx.k = k
            ctx.save_for_backward(y, w)
            return x * k + y * w

        @staticmethod
        def backward(ctx, g):
            y, w = ctx.saved_tensors
            return g * ctx.k, None, g * w if ctx.needs_input_grad[2] else None, g * y

    return Scale


@pytest.mark.parametrize("y_grad", [False, True])
def test_user_function_with_a_number_argument(y_grad):
    rng = np.random.default_rng(0)
    xs, ys, ws = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3))
    results = []
    for lib in (minigrad, torch):
        x = lib.tensor(xs, requires_grad=True)
        y = lib.tensor(ys, requires_grad=y_grad)
        w = lib.tensor(ws, requires_grad=True)
        out = _scale_fn(lib).apply(x, 2.5, y, w)
        out.sum().backward()
        node = out.grad_fn
        results.append((node.seen, len(node.next_functions), [fn is None for fn, _ in node.next_functions],
                        x.grad.numpy(), None if y.grad is None else y.grad.numpy(), w.grad.numpy()))
    mine, theirs = results
    assert mine[:3] == theirs[:3]
    for a, b in zip(mine[3:], theirs[3:]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_builtin_op_with_an_integral_tensor_argument():
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[0, 4], [1, 1], [3, 2]])
    grads = []
    for lib in (minigrad, torch):
        x = lib.tensor(xs, requires_grad=True)
        out = lib.gather(x, 1, lib.tensor(idx))
        assert out.grad_fn.name() == "GatherBackward0"
        (out * out).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_binary_op_of_a_tensor_without_grad():
    rng = np.random.default_rng(2)
    a_s, b_s = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((3,)).astype(np.float32)
    results = []
    for lib in (minigrad, torch):
        a = lib.tensor(a_s)
        b = lib.tensor(b_s, requires_grad=True)
        out = a * b + b
        out.sum().backward()
        mul = out.grad_fn.next_functions[0][0]
        results.append((out.grad_fn.name(), mul.name(), [fn is None for fn, _ in mul.next_functions], b.grad.numpy()))
    assert results[0][:3] == results[1][:3]
    np.testing.assert_allclose(results[0][3], results[1][3], rtol=1e-6)
