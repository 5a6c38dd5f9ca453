"""numpy's floating-point warnings stay inside minigrad: PyTorch computes inf and nan silently, so a
minigrad op under `-W error` gives PyTorch's values (nan and inf included) and no RuntimeWarning, forward
and backward, while the caller's own numpy keeps the error state it had."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import nn.functional as mF

torch = pytest.importorskip("torch")

V = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e38, -1e38, 1.0, -2.0, 1000.0, -1000.0]

CASES = {
    "div_zero_number": lambda L, x, y: x / 0,
    "div_zeros": lambda L, x, y: x / L.zeros_like(y),
    "div": lambda L, x, y: x / y,
    "pow_minus_one": lambda L, x, y: x ** -1,
    "pow_minus_half": lambda L, x, y: x ** -0.5,
    "pow": lambda L, x, y: x ** y,
    "reciprocal": lambda L, x, y: L.reciprocal(x),
    "exp": lambda L, x, y: L.exp(x),
    "mul": lambda L, x, y: x * y,
    "add": lambda L, x, y: x + y,
    "sub": lambda L, x, y: x - y,
    "square": lambda L, x, y: L.square(x),
    "sin": lambda L, x, y: L.sin(x),
    "log": lambda L, x, y: L.log(x),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.5),
    "logaddexp": lambda L, x, y: L.logaddexp(x, y),
    "frac": lambda L, x, y: L.frac(x),
    "sum": lambda L, x, y: (x * y).sum(0),
}


def _grid(dtype):
    v = np.array(V, dtype=dtype)
    return v[:, None] * np.ones((1, len(V)), dtype), np.ones((len(V), 1), dtype) * v[None, :]


def _run(L, fn, arrays, grad):
    xs = [L.tensor(a, requires_grad=grad) for a in arrays]
    out = fn(L, *xs)
    grads = []
    if grad:
        out.backward(L.ones_like(out))
        grads = [x.grad for x in xs]
    return out, grads


def _same(m, t):
    """Same dtype, nan and inf at the same places, values to a few ulps (numpy's libm is not PyTorch's)."""
    a, b = m.detach().numpy(), t.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=4 * np.finfo(a.dtype).eps, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", sorted(CASES))
def test_no_warning_and_torch_values(name, grad, dtype):
    arrays = _grid(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, grads = _run(mg, CASES[name], arrays, grad)
    t_out, t_grads = _run(torch, CASES[name], arrays, grad)
    _same(out, t_out)
    for g, tg in zip(grads, t_grads):
        if tg is None:
            assert g is None
        else:
            _same(g, tg)


def test_backward_of_backward_quiet():
    x = mg.tensor([0.0, 1.0, math.inf], requires_grad=True)
    tx = torch.tensor([0.0, 1.0, math.inf], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (g,) = mg.autograd.grad((1 / x).sum(), x, create_graph=True)
        g.sum().backward()
    (tg,) = torch.autograd.grad((1 / tx).sum(), tx, create_graph=True)
    tg.sum().backward()
    _same(g, tg)
    _same(x.grad, tx.grad)


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "cross_entropy", "mse_loss", "normalize", "sigmoid",
                                  "softplus"])
def test_functional_quiet(name):
    fns = {
        "softmax": lambda F, x: F.softmax(x, -1),
        "log_softmax": lambda F, x: F.log_softmax(x, -1),
        "cross_entropy": lambda F, x: F.cross_entropy(x, x.detach().argmax(-1) * 0),
        "mse_loss": lambda F, x: F.mse_loss(x, x.detach() * 0),
        "normalize": lambda F, x: F.normalize(x),
        "sigmoid": lambda F, x: F.sigmoid(x),
        "softplus": lambda F, x: F.softplus(x),
    }
    a = np.array([[0.0, 1e38, -1e38], [1000.0, -1000.0, 0.0], [0.0, 0.0, 0.0]], np.float32)
    x, tx = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = fns[name](mF, x)
        out.sum().backward()
    t_out = fns[name](torch.nn.functional, tx)
    t_out.sum().backward()
    _same(out, t_out)
    _same(x.grad, tx.grad)


def test_compiled_replay_quiet():
    f = mg.compile(lambda x: (1 / x).exp())
    x = mg.tensor([0.0, -0.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):  # (capture, then replays)
            out = f(x)
    _same(out, (1 / torch.tensor([0.0, -0.0, 1000.0])).exp())


def test_callers_numpy_state_unchanged():
    before = np.geterr()
    a = mg.tensor([0.0, 1e38, math.inf], requires_grad=True)
    (a / 0 * a - a).exp().sum().backward()
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        np.float64(1) / 0
    with np.errstate(divide="raise"):  # the caller's own state, inside and after a minigrad op
        mg.tensor([1.0]) / 0
        assert np.geterr()["divide"] == "raise"
        with pytest.raises(FloatingPointError):
            np.float64(1) / 0
    assert np.geterr() == before


def test_error_inside_an_op_restores_the_state():
    before = np.geterr()
    with pytest.raises(RuntimeError):
        mg.ones(2, 3) / mg.ones(4, 5)
    assert np.geterr() == before
