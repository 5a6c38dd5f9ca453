"""create_graph=True through ops whose gradient depends on their input, reached by a constant incoming gradient
(a loss linear in the op's output, `(y * w).sum()`): the gradient must keep its graph (PyTorch's does), not take
the array path kept for backward without create_graph. var and std took it whenever the incoming gradient did
not require grad, so `grad(grad(...))` found nothing to differentiate."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import minigrad  # noqa: E402

CASES = {
 "var": lambda T, x: x.var(1), "std": lambda T, x: x.std(1), "var_all": lambda T, x: x.var(),
 "max": lambda T, x: x.max(), "amax": lambda T, x: x.amax(1), "max_dim": lambda T, x: x.max(1).values,
 "clamp": lambda T, x: x.clamp(-0.5, 0.5), "gather": lambda T, x: x.gather(1, T.tensor([[0, 1], [2, 0], [1, 1]])),
 "prod": lambda T, x: x.prod(1), "cumprod": lambda T, x: x.cumprod(1), "norm": lambda T, x: x.norm(dim=1),
 "logsumexp": lambda T, x: x.logsumexp(1), "softmax": lambda T, x: x.softmax(1), "log_softmax": lambda T, x: x.log_softmax(1),
 "layer_norm": lambda T, x: T.nn.functional.layer_norm(x, (4,)), "group_norm": lambda T, x: T.nn.functional.group_norm(x, 1),
 "cross_entropy": lambda T, x: T.nn.functional.cross_entropy(x, T.tensor([0, 3, 1]), reduction="none"),
 "mse": lambda T, x: T.nn.functional.mse_loss(x, T.zeros(3, 4, dtype=T.float64), reduction="none"),
 "tanh": lambda T, x: x.tanh(), "sigmoid": lambda T, x: x.sigmoid(), "gelu": lambda T, x: T.nn.functional.gelu(x),
 "silu": lambda T, x: T.nn.functional.silu(x), "exp": lambda T, x: x.exp(), "pow3": lambda T, x: x ** 3,
 "mul_self": lambda T, x: x * x, "matmul_self": lambda T, x: x @ x.T, "sdpa": lambda T, x: T.nn.functional.scaled_dot_product_attention(x[None], x[None], x[None]),
 "softplus": lambda T, x: T.nn.functional.softplus(x), "elu": lambda T, x: T.nn.functional.elu(x), "mish": lambda T, x: T.nn.functional.mish(x),
 "rms_norm": lambda T, x: T.nn.functional.rms_norm(x, (4,)), "normalize": lambda T, x: T.nn.functional.normalize(x, dim=1),
 "cosine": lambda T, x: T.nn.functional.cosine_similarity(x, x.flip(0)),
 "bce_logits": lambda T, x: T.nn.functional.binary_cross_entropy_with_logits(x, T.ones(3, 4, dtype=T.float64), reduction="none"),
 "huber": lambda T, x: T.nn.functional.huber_loss(x, T.zeros(3, 4, dtype=T.float64), reduction="none"),
 "kl": lambda T, x: T.nn.functional.kl_div(x.log_softmax(1), T.full((3, 4), 0.25, dtype=T.float64), reduction="none"),
 "embedding": lambda T, x: T.nn.functional.embedding(T.tensor([0, 2]), x), "conv1d": lambda T, x: T.nn.functional.conv1d(x[None], x[:, :, None].transpose(0,1)[:3,:3]),
 "linear_self": lambda T, x: T.nn.functional.linear(x, x), "sqrt": lambda T, x: (x*x+1).sqrt(),
 "div_self": lambda T, x: x / (x*x + 1), "relu_squared": lambda T, x: T.nn.functional.relu(x) ** 2,
}


def _second(T, f, x0):
    x = T.tensor(x0, requires_grad=True)
    y = f(T, x)
    w = T.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
    g, = T.autograd.grad((y * w).sum(), x, create_graph=True)
    if not g.requires_grad:  # (a gradient that is the incoming one moved about: constant, in PyTorch too)
        return g.numpy(), None
    h, = T.autograd.grad((g * g).sum(), x)
    return g.detach().numpy(), h.numpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_through_a_constant_incoming_gradient_matches_torch(name):
    x0 = np.random.default_rng(0).standard_normal((3, 4))
    for got, want in zip(_second(minigrad, CASES[name], x0), _second(torch, CASES[name], x0)):
        assert (got is None) == (want is None)  # the gradient has a graph exactly where PyTorch's has one
        if got is not None:
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
