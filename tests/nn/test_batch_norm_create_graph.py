"""Batch norm's input gradient under create_graph=True is differentiable again even when the incoming gradient
is a constant (a loss linear in the output, as `(y * w).sum()`): the gradient still depends on x through the
batch's statistics, and PyTorch's second derivative says so."""
import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _second(T, fn, x0, w0, weight0):
    x = T.tensor(x0, requires_grad=True)
    weight = T.tensor(weight0, requires_grad=True)
    y = fn(T, x, weight)
    g, gw = T.autograd.grad((y * T.tensor(w0)).sum(), (x, weight), create_graph=True)
    h = T.autograd.grad((g * g).sum() + (g * gw.sum()).sum(), (x, weight), allow_unused=True)
    return [None if t is None else t.detach().numpy() for t in (g, *h)]


CASES = {
    "batch_norm_train": lambda T, x, w: T.nn.functional.batch_norm(x, None, None, w, None, training=True),
    "batch_norm_train_4d": lambda T, x, w: T.nn.functional.batch_norm(x.reshape(2, 3, 2, 1), None, None, w, None,
                                                                    training=True).reshape(4, 3),
    "instance_norm": lambda T, x, w: T.nn.functional.instance_norm(x.reshape(2, 3, 2), weight=w).reshape(4, 3),
    "batch_norm_eval": lambda T, x, w: T.nn.functional.batch_norm(x, T.zeros(3, dtype=T.float64),
                                                                   T.ones(3, dtype=T.float64) * 2, w, None),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_through_a_constant_incoming_gradient_matches_torch(name):
    rng = np.random.default_rng(3)
    x0, w0, weight0 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3)), rng.standard_normal(3) + 1.5
    got = _second(minigrad, CASES[name], x0, w0, weight0)
    want = _second(torch, CASES[name], x0, w0, weight0)
    for a, b in zip(got, want):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)
