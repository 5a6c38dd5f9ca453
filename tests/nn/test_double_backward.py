"""create_graph=True through the fused ops whose backward runs on arrays: their `double_backward`
(the same gradient as recorded ops) against PyTorch's second derivatives and gradgradcheck; ops with no
recorded form refuse (tests/nn/test_functional.py)."""
import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(5)
X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
W0, B0 = np.arange(6.0).reshape(2, 3) / 7 - 0.3, np.array([0.1, -0.2])


def _second_order(L, case):
    """d/dx of (|d out / dx|^2 + sum x) for `out` one of the cases, with the first gradient's graph kept."""
    F_ = L.nn.functional
    x = L.tensor(X, requires_grad=True)
    extra = []
    if case == "gelu":
        out = F_.gelu(x).sum()
    elif case == "gelu_tanh":
        out = F_.gelu(x, approximate="tanh").sum()
    elif case == "mse":
        out = F_.mse_loss(x, L.tensor(np.ones((2, 3))))
    elif case == "mse_sum_broadcast":
        out = F_.mse_loss(x * x, L.tensor(np.ones((2, 3))), reduction="sum")
    else:  # through nn.Linear (AddmmBackward0): tanh after it, or relu(h) * h
        lin = L.nn.Linear(3, 2).double()
        with L.no_grad():
            lin.weight.copy_(L.tensor(W0))
            lin.bias.copy_(L.tensor(B0))
        h = lin(x)
        out = (L.tanh(h) if case == "linear_tanh" else F_.relu(h) * h).sum()
        extra = [lin]
    (g,) = L.autograd.grad(out, x, create_graph=True)
    assert g.requires_grad
    (g.pow(2).sum() + x.sum()).backward()
    return [g.detach().numpy(), x.grad.numpy()] + [m.weight.grad.numpy() for m in extra]


@pytest.mark.parametrize("case", ["gelu", "gelu_tanh", "mse", "mse_sum_broadcast", "linear_tanh", "linear_relu"])
def test_second_derivatives_like_torch(torch, case):
    for a, b in zip(_second_order(minigrad, case), _second_order(torch, case)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _ce_second_order(L, kw, shape):
    x = L.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
    t = L.tensor(np.array([0, 3, 1, 4])[:shape[0]] if len(shape) > 1 else np.array(2))
    if kw.pop("weighted", False):
        kw["weight"] = L.tensor(np.linspace(0.5, 2, 5))
    out = L.nn.functional.cross_entropy(x * x, t, **kw)
    if out.ndim:
        out = (out * L.tensor(np.arange(1.0, 1 + out.numel()).reshape(out.shape))).sum()
    (g,) = L.autograd.grad(out, x, create_graph=True)
    g.pow(2).sum().backward()
    return [g.detach().numpy(), x.grad.numpy()]


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum"}, {"reduction": "none"}, {"label_smoothing": 0.2},
                                {"weighted": True, "ignore_index": 3},
                                {"weighted": True, "label_smoothing": 0.1, "reduction": "none"}])
@pytest.mark.parametrize("shape", [(4, 5), (5,)])
def test_cross_entropy_second_derivatives_like_torch(torch, kw, shape):
    for a, b in zip(_ce_second_order(minigrad, dict(kw), shape), _ce_second_order(torch, dict(kw), shape)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_gradgradcheck_of_the_fused_ops():
    x = minigrad.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    w = minigrad.tensor(RNG.standard_normal((2, 4)), requires_grad=True)
    b = minigrad.tensor(RNG.standard_normal(2), requires_grad=True)
    t = minigrad.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    ids = minigrad.tensor([1, 0, 3])
    for fn, inputs in ((F.linear, (x, w, b)), (F.gelu, (x,)), (lambda x: F.gelu(x, approximate="tanh"), (x,)),
                       (F.relu, (x,)), (F.mse_loss, (x, t)),
                       (lambda x: F.cross_entropy(x, ids, label_smoothing=0.1), (x,))):
        assert gradcheck(fn, inputs)
        assert gradgradcheck(fn, inputs)


def test_a_module_gradient_penalty_trains():
    # a WGAN-GP-style penalty: |d critic(x) / dx| pushed towards 1, through Linear, LeakyReLU, GELU
    minigrad.manual_seed(0)
    critic = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 1))
    opt = nn.optim.Adam(critic.parameters(), lr=1e-2)
    x = minigrad.randn(32, 4, requires_grad=True)
    penalties = []
    for _ in range(30):
        (g,) = minigrad.autograd.grad(critic(x).sum(), x, create_graph=True)
        penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
        opt.zero_grad()
        penalty.backward()
        opt.step()
        penalties.append(penalty.item())
    assert penalties[-1] < 0.1 * penalties[0]
