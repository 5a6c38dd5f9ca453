"""The engine looks for a node's hooks only where the node says it has some (`Node._hooked`): hooks registered
while backward runs, on nodes it has not reached yet, and a user Function's backward that leaves grad mode
changed, behave as in PyTorch."""
import pytest

import minigrad


def _hooks_added_during_backward(lib):
    x = lib.tensor([0.5, 2.0], requires_grad=True)
    a = x * 2
    b = a.sin()
    seen = []

    def pre(grads):  # on b's node, which runs first: hooks of every kind on a's node and a's tensor
        a.grad_fn.register_prehook(lambda go: seen.append("node pre"))
        a.grad_fn.register_hook(lambda gi, go: seen.append("node post"))
        a.register_hook(lambda g: seen.append("tensor") or g * 3)
        return None

    b.grad_fn.register_prehook(pre)
    b.sum().backward()
    return seen, x.grad.tolist()


def test_hooks_registered_during_backward_on_nodes_not_reached_yet_run(torch):
    seen, grad = _hooks_added_during_backward(minigrad)
    torch_seen, torch_grad = _hooks_added_during_backward(torch)
    assert seen == torch_seen == ["tensor", "node pre", "node post"]
    assert grad == pytest.approx(torch_grad, rel=1e-6)


def test_a_plain_node_after_a_user_function_that_changed_grad_mode_runs_in_the_backward_mode(torch):
    def run(lib):
        class LeavesGradOn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t * 1

            @staticmethod
            def backward(ctx, g):
                lib.set_grad_enabled(True)  # left changed: the engine restores the mode for the next node
                return g

        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y = (x * x).exp()  # ExpBackward0, then MulBackward0: plain nodes after the user Function's
        LeavesGradOn.apply(y).sum().backward()
        return x.grad.tolist(), x.grad.requires_grad, x.grad.grad_fn is None, lib.is_grad_enabled()

    grad, *flags = run(minigrad)
    torch_grad, *torch_flags = run(torch)
    assert flags == torch_flags == [False, True, True]  # no graph on the gradient; the caller's mode back after
    assert grad == pytest.approx(torch_grad, rel=1e-6)
