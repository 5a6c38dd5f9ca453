"""numpy's floating-point warnings stay inside minigrad beyond single ops (an optimizer's step on inf and
nan gradients), PyTorch's errors for reductions over an empty dim, and x / y's gradient for a huge y."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.optim

torch = pytest.importorskip("torch")

GRAD = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e38, 1e38]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("opt, kw", [("SGD", {}), ("SGD", {"weight_decay": 0.1}), ("SGD", {"momentum": 0.9}),
                                     ("Adam", {}), ("AdamW", {"weight_decay": 0.1}), ("RMSprop", {}),
                                     ("RMSprop", {"momentum": 0.9}), ("Adagrad", {}), ("Adagrad", {"weight_decay": 0.1})])
def test_optimizer_step_on_nonfinite_grads_quiet(opt, kw, dtype):
    def steps(L, optim, param):
        p = param(L.tensor(np.array([1.0, 2, 3, 4, 5, 6, 1e38], dtype)))
        o = getattr(optim, opt)([p], lr=0.1, **kw)
        for _ in range(2):
            p.grad = L.tensor(np.array(GRAD, dtype))
            o.step()
        return p.detach().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = steps(mg, nn.optim, nn.Parameter)
    want = steps(torch, torch.optim, torch.nn.Parameter)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, equal_nan=True)


def test_optimizer_step_restores_the_callers_state():
    p = nn.Parameter(mg.tensor([1.0, 2.0]))
    p.grad = mg.tensor([math.nan, 1.0])
    before = np.geterr()
    with pytest.raises(RuntimeError, match="boom"):
        nn.optim.RMSprop([p]).step(lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    nn.optim.RMSprop([p]).step()
    assert np.geterr() == before


@pytest.mark.parametrize("call", [
    lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1), lambda L, x: L.median(x, -1),
    lambda L, x: L.kthvalue(x, 1, 1), lambda L, x: L.mode(x, 1), lambda L, x: L.argmax(x, 1),
    lambda L, x: L.argmin(x, -1), lambda L, x: L.argmax(x.reshape(0, 2), 0, keepdim=True),
])
def test_reduction_over_an_empty_dim_errors_as_torch(call):
    with pytest.raises(IndexError) as want:
        call(torch, torch.zeros(2, 0))
    with pytest.raises(IndexError) as got:
        call(mg, mg.zeros(2, 0))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_div_grad_of_huge_divisor_with_create_graph(dtype):
    # -g ((a / b) / b), PyTorch's order: (b * b) would overflow float32 where the gradient is finite
    a = np.array([1.0, -3.0, 0.0, 1e38], dtype)
    b = np.array([1e38, -1e38, 1e38, 3e38 if dtype == "float32" else 1e300], dtype)

    def grads(L):
        x, y = L.tensor(a, requires_grad=True), L.tensor(b, requires_grad=True)
        gx, gy = L.autograd.grad((x / y).sum(), (x, y), create_graph=True)
        return gy.detach().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = grads(mg)
    want = grads(torch)
    assert np.isfinite(want).all()
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps, atol=0)
