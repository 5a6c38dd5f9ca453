"""Tensor.register_post_accumulate_grad_hook: runs after backward adds into a leaf's .grad (as PyTorch's)."""
import numpy as np
import pytest

import minigrad as mg


def test_hook_sees_the_accumulated_grad_once_per_backward():
    w = mg.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    seen = []
    h = w.register_post_accumulate_grad_hook(lambda p: seen.append((p is w, p.grad.numpy().copy())))
    (w * w).sum().backward()  # w reaches the loss by two edges: summed first, accumulated once
    (w * 3).sum().backward()
    assert [s[0] for s in seen] == [True, True]
    np.testing.assert_allclose(seen[0][1], [2.0, 4.0, 6.0])
    np.testing.assert_allclose(seen[1][1], [5.0, 7.0, 9.0])  # after the second accumulation
    h.remove()
    w.sum().backward()
    assert len(seen) == 2


def test_hook_runs_in_backward_order_before_backward_returns():
    a = mg.tensor(np.ones(2), requires_grad=True)
    b = mg.tensor(np.ones(2), requires_grad=True)
    order = []
    a.register_post_accumulate_grad_hook(lambda p: order.append("a"))
    b.register_post_accumulate_grad_hook(lambda p: order.append("b"))
    ((a * 2).exp() * b).sum().backward()
    assert sorted(order) == ["a", "b"]


def test_not_run_by_autograd_grad_which_accumulates_nothing():
    w = mg.tensor(np.ones(2), requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(seen.append)
    (g,) = mg.autograd.grad((w * 2).sum(), [w])
    np.testing.assert_allclose(g.numpy(), 2.0)
    assert seen == [] and w.grad is None


def test_errors_match_torch():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        mg.zeros(2).register_post_accumulate_grad_hook(lambda p: None)
    w = mg.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)
