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


def _penalty_grads(L, fn, arrays):
    """A gradient penalty through `fn`: d/d inputs of |d (fn(*xs) ** 2).sum() / d xs|^2, the first gradients' graph kept."""
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    gs = L.autograd.grad((fn(L, *xs) ** 2).sum(), xs, create_graph=True)
    sum((g ** 2).sum() for g in gs).backward()
    return [g.detach().numpy() for g in gs] + [x.grad.numpy() for x in xs]


def _layer_norm(L, x, w=None, b=None):
    return L.nn.functional.layer_norm(x ** 3, x.shape[-2:] if w is None else w.shape, w, b)


def _attention(kw):
    def fn(L, q, k, v, *mask):
        return L.nn.functional.scaled_dot_product_attention(q * q, k, v, *mask, **kw)
    return fn


def _manual_causal_attention(L, q, k, v):  # (PyTorch's CPU kernel for is_causal refuses create_graph)
    L_, S = q.shape[-2], k.shape[-2]
    s = (q * q) @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    s = s.masked_fill(~L.ones(L_, S, dtype=L.bool).tril(), float("-inf"))
    return s.softmax(-1) @ v


R = np.random.default_rng(7)
Q, K, V = R.standard_normal((2, 2, 3, 4)), R.standard_normal((2, 2, 5, 4)), R.standard_normal((2, 2, 5, 3))
MASK = R.standard_normal((3, 5))
H_EMB = R.standard_normal((2, 3, 4))


@pytest.mark.parametrize("case", ["layer_norm", "layer_norm_affine", "layer_norm_2d_shape", "attention",
                                  "attention_broadcast_2d", "attention_float_mask", "attention_bool_mask",
                                  "attention_scale"])
def test_penalty_through_layer_norm_and_attention_like_torch(torch, case):
    # were: "... is not differentiable twice" (their backward runs on arrays, with no recorded form)
    fn, arrays = {
        "layer_norm": (_layer_norm, [R.standard_normal((4, 6))]),
        "layer_norm_affine": (_layer_norm, [R.standard_normal((3, 2, 5)), R.standard_normal(5), R.standard_normal(5)]),
        "layer_norm_2d_shape": (_layer_norm, [R.standard_normal((3, 2, 5))]),
        "attention": (_attention({}), [Q, K, V]),
        "attention_broadcast_2d": (_attention({}), [Q[0, 0], K[:1], V[0, :1]]),
        "attention_float_mask": (_attention({}), [Q, K, V, MASK]),
        "attention_bool_mask": (lambda L, q, k, v: _attention({})(L, q, k, v, L.tensor(MASK > -0.5)), [Q, K, V]),
        "attention_scale": (_attention({"scale": 0.3}), [Q, K, V]),
    }[case]
    for a, b in zip(_penalty_grads(minigrad, fn, arrays), _penalty_grads(torch, fn, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("gqa", [False, True])
def test_penalty_through_causal_attention_like_the_manual_form(torch, gqa):
    k, v = (K[:, :1, :3], V[:, :1, :3]) if gqa else (K[:, :, :3], V[:, :, :3])
    got = _penalty_grads(minigrad, _attention({"is_causal": True, "enable_gqa": gqa}), [Q, k, v])

    def manual(L, q, k, v):
        return _manual_causal_attention(L, q, k.expand(-1, 2, -1, -1), v.expand(-1, 2, -1, -1))
    for a, b in zip(got, _penalty_grads(torch, manual, [Q, k, v])):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_weight_gradient_differentiates_again_like_torch(torch, padding_idx):
    # an incoming gradient that requires grad through EmbeddingBackward0 refused create_graph
    def run(L):
        w = L.tensor(np.arange(40.0).reshape(10, 4) / 40, requires_grad=True)
        h = L.tensor(H_EMB, requires_grad=True)
        out = L.nn.functional.embedding(L.tensor([[1, 3, 3], [7, 0, 3]]), w, padding_idx=padding_idx)
        (gw,) = L.autograd.grad((out * h).sum(), w, create_graph=True)
        (gw ** 2).sum().backward()
        return gw.detach().numpy(), h.grad.numpy()
    for a, b in zip(run(minigrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _piecewise_graph(L, case):
    """The first gradient of a piecewise-linear activation under create_graph: its node, its edges, and the
    gradient of its sum (zero slope in x, but x reached: zeros, not an error)."""
    F_ = L.nn.functional
    fn = {"relu": F_.relu, "tensor_relu": lambda x: x.relu(), "threshold": lambda x: F_.threshold(x, 0.1, 20.0),
          "leaky_relu": lambda x: F_.leaky_relu(x, 0.2), "hardtanh": F_.hardtanh, "relu6": F_.relu6}[case]
    x = L.tensor([-1.5, -0.2, 0.1, 0.3, 2.0, 7.0, float("nan")], requires_grad=True)
    (g,) = L.autograd.grad(fn(x).sum(), x, create_graph=True)
    edges = [type(f).__name__ for f, _ in g.grad_fn.next_functions]
    (g2,) = L.autograd.grad((g * L.arange(7.0)).sum(), x)
    (gg,) = L.autograd.grad(fn(x).pow(3).sum(), x, create_graph=True)
    (gg2,) = L.autograd.grad(gg.sum(), x)
    return type(g.grad_fn).__name__, edges, g.detach().numpy(), g2.numpy(), gg.detach().numpy(), gg2.numpy()


@pytest.mark.parametrize("case", ["relu", "tensor_relu", "threshold", "leaky_relu", "hardtanh", "relu6"])
def test_piecewise_activation_backward_is_one_node_like_torch(torch, case):
    ours, theirs = _piecewise_graph(minigrad, case), _piecewise_graph(torch, case)
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2:], theirs[2:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _nodes(t):
    """The number of distinct nodes in the graph of `t`."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None and fn not in seen:
            seen.add(fn)
            stack.extend(n for n, _ in fn.next_functions)
    return len(seen)


def _pinn_like(L, act):
    """A PINN's derivatives through an MLP (u_x, u_xx by create_graph, then a residual's backward to the
    weights): the derivatives, the weights' gradients, and the graph sizes of u_xx and of the loss."""
    nn_ = L.nn
    rng = np.random.default_rng(3)
    model = nn_.Sequential(nn_.Linear(2, 5), act(), nn_.Linear(5, 4), act(), nn_.Linear(4, 1)).double()
    with L.no_grad():
        for p in model.parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape)) * 0.7))
    x = L.tensor(rng.standard_normal((6, 1)), requires_grad=True)
    t = L.tensor(rng.standard_normal((6, 1)), requires_grad=True)
    u = model(L.cat([x, t], 1))
    (u_x,) = L.autograd.grad(u, x, grad_outputs=L.ones_like(u), create_graph=True)
    (u_xx,) = L.autograd.grad(u_x, x, grad_outputs=L.ones_like(u_x), create_graph=True)
    loss = (u * u_x - 0.1 * u_xx).pow(2).mean()
    (u_xxx,) = L.autograd.grad(u_xx.sum(), x, retain_graph=True)  # (third order, no graph of it)
    loss.backward()
    values = [u_x, u_xx, u_xxx, x.grad, t.grad] + [p.grad for p in model.parameters()]
    return [v.detach().numpy() for v in values], (_nodes(u_xx), _nodes(loss))


@pytest.mark.parametrize("act", ["Tanh", "Sigmoid"])
def test_pinn_derivatives_through_tanh_and_sigmoid_like_torch(torch, act):
    """Third-order derivatives through tanh/sigmoid MLPs as torch's; and, as tanh_backward's own double
    backward is tanh_backward again, the graphs create_graph records are no larger than PyTorch's."""
    ours, our_sizes = _pinn_like(minigrad, lambda: getattr(nn, act)())
    theirs, their_sizes = _pinn_like(torch, lambda: getattr(torch.nn, act)())
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert our_sizes[0] <= their_sizes[0] and our_sizes[1] <= their_sizes[1], (our_sizes, their_sizes)


def _full_sum_gradient(L, keepdim):
    """The gradient of a full sum under create_graph, for a grad_output that requires grad: the names of
    its graph's nodes down to the leaf, its value, and the gradient of its square's sum w.r.t. that grad_output."""
    x = L.tensor(X, requires_grad=True)
    v = L.tensor(np.full((1, 1) if keepdim else (), 1.5), requires_grad=True)
    out = x.sum(dim=None, keepdim=True) if keepdim else x.sum()
    (g,) = L.autograd.grad(out, x, grad_outputs=v, create_graph=True)
    names, fn = [], g.grad_fn
    while fn is not None:
        names.append(fn.name().split("::")[-1])
        fn = fn.next_functions[0][0] if fn.next_functions else None
    (gv,) = L.autograd.grad(g.pow(2).sum(), v)
    return names, g.detach().numpy(), gv.numpy()


@pytest.mark.parametrize("keepdim", [False, True])
def test_full_sum_gradient_expands_without_a_view_like_torch(torch, keepdim):
    """A full reduction's 0-d gradient is expanded as it is, as PyTorch's sum_backward does: one
    ExpandBackward0 node over the grad_output, no view node before it."""
    ours, theirs = _full_sum_gradient(minigrad, keepdim), _full_sum_gradient(torch, keepdim)
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_array_equal(a, b)
